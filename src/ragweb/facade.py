"""The browser facade: the one module ``web/app.js`` calls, JSON strings in and out.

The page holds one in-memory `Engine` (its SQLite database lives in the tab): `init(data, crc)`
creates it, empty or restored from the bytes that `dump()` gave and app.js stored in
IndexedDB with their CRC-32 (`dump_crc`). It takes no more files past `MAX_INDEX_BYTES`.
Every other function returns a JSON string and never raises: bad arguments and
engine errors come back as ``{"error": "message"}``. The public shapes (reference §5):

- ``index_text(filename, content)`` -> ``{"success": true, "chunks": 5, "filename": "doc.txt"}``
- ``query(q, top_k=5)`` -> ``{"query": q, "results": [{"path", "startLine", "endLine", "score", "text"}]}``
- ``clear()`` -> ``{"success": true}``
- ``stats()`` -> ``{"totalDocs", "totalChunks", "avgChunkLen", "files"}``
- ``pack(q, budget)`` -> the packed-context JSON (reference §4)
- ``remove(filename)`` -> ``{"success": true, "removed": bool, "filename": ...}``

Calls for the page itself: dropped files go through the CLI's selection rules with
``check_dir``/``check_path`` (before reading), ``ignore_reset``/``ignore_add`` (the
.gitignore/.ragignore files of a dropped folder), ``config_add`` (a dropped folder's own
``rag.yaml``: its file selection applies under it; ``config_misnamed`` notes a ``Rag.yaml``
that is not read) and ``index_bytes`` (decoding, binary
skip; a big file in steps, ``index_step``, so the page repaints between them);
``search_ui`` adds headings and highlight ranges to hits; ``render_pack`` and
``runtime_prompt`` render a packed context for copying.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import time
import traceback
import zlib

from ragweb.config import default_config, is_misnamed_config, never_indexed
from ragweb.errors import RagError

DEFAULT_TOP_K = 5
"""ragQuery's default number of results (reference §5)."""

MAX_TOP_K = 1000
"""Largest accepted topK."""

MAX_INDEX_BYTES = 400 * 2**20
"""The size of database from which the tab takes no more files (`IndexFullError`).

At its peaks (a save, a restore) the tab's WebAssembly memory holds the database about
three times over, and Pyodide 314 copies data between Python and the page wrongly once
that memory passes 2 GiB (app.js stops everything then). 400 MiB keeps the peaks near
1.3 GB; it is about four times the Python documentation (1,046 files, 62 M characters).
"""


REREAD_MAX_BYTES = 200 * 2**20
"""The largest restored index that `init` re-reads when an older version built it.

The re-read is one transaction over every document, and in the tab's memory it peaks near
six times the database (1.83 GB measured for a 308 MB index, which its save then took past
2 GiB). A larger index is used as it was built (queries read it with its own settings);
the page says how to have it read anew.
"""


class IndexFullError(RagError):
    """The index has reached `MAX_INDEX_BYTES`: it takes no more files until some are removed."""

    code = "full"

_engine = None
_config: dict | None = None
_globs: tuple | None = None  # (includes GlobSet, excludes GlobSet) of _config
_ignores: list[tuple[str, list]] = []  # (folder, rules) of the ignore files of the current drop
_ignores_at: dict[str, list[int]] = {}  # folder -> the indexes in _ignores of its ignore files
_folder_configs: list[tuple[str, dict, tuple]] = []  # (folder, index section, its globs) of the drop's rag.yaml files
_reread = None  # the steps of a re-read that init(..., stepwise=True) started (`reread_step`)
_reread_total = 0  # ... and its number of documents
_dump_crc: int | None = None  # CRC-32 of the bytes the last `dump` gave
_job = None  # a big dropped file being indexed in steps (`index_bytes(..., stepwise=True)`, `_IndexJob`)
_job_end: dict | None = None  # why that file's job ended before `index_step` finished it


# --------------------------------------------------------------------------- helpers

def _json(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _error(message: str, **extra) -> str:
    return _json({"error": message, **extra})


def _guard(fn):
    """Run ``fn``; turn any exception into ``{"error": ...}`` (RagError messages as they are)."""
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RagError as exc:
            code = getattr(exc, "code", None)
            return _error(str(exc), code=code) if code else _error(str(exc))
        except MemoryError:
            return _error("out of memory: the index is too large for this tab")
        except Exception as exc:  # noqa: BLE001 - the page must never get a Python exception
            traceback.print_exc()
            return _error(f"internal error: {type(exc).__name__}: {exc}")
    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def _need_engine():
    if _engine is None:
        raise RagError("not ready: the engine has not been initialised yet (await window.ragReady)")
    if _reread is not None:
        raise RagError("not ready: the stored index is being re-read by this version (await window.ragReady)")
    return _engine


def _null(value):
    """JavaScript's null arrives as Pyodide's ``jsnull``; treat it like None (undefined)."""
    return None if type(value).__name__ == "JsNull" else value


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _as_int(value, name: str, default: int, lo: int, hi: int) -> int:
    value = _null(value)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not _is_int(value):
        raise RagError(f"{name} must be an integer, got {_describe(value)}")
    if not lo <= value <= hi:  # (from 1e21 on, JavaScript writes a number with an exponent)
        shown = value
        if abs(value) >= 1e21:
            shown = repr(float(value)) if abs(value) < 1e308 else f"a number of {len(str(abs(value)))} digits"
        raise RagError(f"{name} must be between {lo} and {hi}, got {shown}")
    return value


def _describe(value) -> str:
    if _null(value) is None:
        return "nothing"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    if isinstance(value, bool):  # (as JavaScript writes them)
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):  # (as JavaScript writes them)
        return f"the number {'NaN' if value != value else 'Infinity' if value > 0 else '-Infinity'}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def _need_str(value, name: str, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise RagError(f"{name} must be a string, got {_describe(value)}")
    if not allow_empty and not value.strip():
        raise RagError(f"{name} must not be empty")
    return value


_LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")


MAX_PATH_CHARS = 4096  # a file name's length at most (Linux's PATH_MAX) ...
MAX_NAME_UNITS = 255  # ... and each of its parts' in UTF-16 units (NTFS's and HFS+'s limit; in UTF-8
                      # bytes, Linux's, 99 Chinese characters are 297: such names are Windows's every day)
MAX_QUESTION_CHARS = 100_000  # a question's length at most: it is answered on the page's thread


def _question(q) -> str:
    """A question given to ragQuery or ragPack: text, not empty, not over `MAX_QUESTION_CHARS`."""
    q = _need_str(q, "query")
    if len(q) > MAX_QUESTION_CHARS:
        raise RagError(f"query is too long: {len(q):,} characters > {MAX_QUESTION_CHARS:,} (a question is "
                       "answered on the page's thread; ask with the words that matter)")
    return q


def _cut(text: str) -> str:
    """A file name ``text`` as an error message quotes it: whole, or its first and last
    `SHOWN_CHARS` / 2 characters with "..." between (a name's end, "guide.md" or the "/" of a
    folder, is often what the message is about)."""
    from ragweb.config import SHOWN_CHARS
    half = SHOWN_CHARS // 2
    return text if len(text) <= SHOWN_CHARS else text[:half] + "..." + text[-half:]


def _quoted(text: str) -> str:
    """``repr(text)``, cut as `_cut` cuts it."""
    from ragweb.config import SHOWN_CHARS
    half = SHOWN_CHARS // 2
    return repr(text) if len(text) <= SHOWN_CHARS else repr(text[:half]) + "..." + repr(text[-half:])


def _clean_path(filename: str, folder: bool = False) -> str:
    """Normalise a page-side file name into the relative path stored in the index (with
    ``folder``, a folder's: "" is the top)."""
    if len(filename) > MAX_PATH_CHARS:  # (a text given as the name: its every question would carry it)
        raise RagError(f"the file name is {len(filename):,} characters long, more than {MAX_PATH_CHARS:,}: "
                       "is it the file's text? ragIndex(filename, content) takes the name first")
    bad = _LONE_SURROGATE_RE.search(filename)
    if bad:  # a JavaScript string may hold one; it cannot be stored or cited
        shown = _cut(filename).encode("utf-8", "backslashreplace").decode()
        raise RagError(f"the file name \"{shown}\" is not "
                       f"valid Unicode: it holds a lone surrogate (U+{ord(bad.group()):04X}) at "
                       f"position {bad.start()}")
    from ragweb.files import NAME_BREAK_RE
    if NAME_BREAK_RE.search(filename):  # (as `rag index`: a citation path:Ls-e is one line)
        raise RagError(f"the file name {_quoted(filename)} holds a line break or another control character")
    parts: list[str] = []
    for part in filename.split("/"):  # (a backslash is a character of a name, as in `rag index`)
        if part == "..":
            if not parts:
                raise RagError(f"the file name {_quoted(filename)} climbs out of the index's folder (..): "
                               "give a path inside it, as docs/guide.md")
            parts.pop()
        elif part not in ("", "."):
            if len(part.encode("utf-16-le", "surrogatepass")) > 2 * MAX_NAME_UNITS:
                raise RagError(f"the file name {filename[:60]!r}... has a part of more than {MAX_NAME_UNITS} "
                               "characters, which no file system holds")
            parts.append(part)
    if not folder and (not parts or filename.endswith("/")):
        raise RagError(f"the file name {_quoted(filename)} names no file (a folder, or nothing): "
                       "give a file's name, as notes.md or docs/guide.md")
    return "/".join(parts)


def _config_now() -> dict:
    global _config
    if _config is None:
        _config = default_config()
    return _config


# --------------------------------------------------------------------------- lifecycle

@_guard
def init(data=None, stepwise=False, crc=None) -> str:
    """Create the engine: empty, or restored from ``data`` (bytes of `dump`).

    Returns ``{"success": true, "restored": bool, "reread": n, "totalDocs": n, "totalChunks": n}``
    (``reread``: documents of a restored index built with other analysis settings -- by an
    older version -- indexed again from their stored texts, `Engine.reread`; the caller
    should save the index then; ``"rereadSkipped": true`` instead when the index is over
    `REREAD_MAX_BYTES`: it is used as it was built; ``"newerVersion": true`` for one a
    newer version built, used as it was built and not re-read, which would undo that
    version's reading), or
    ``{"error": ..., "code": "format"}`` when the bytes are unreadable or of an unknown
    format, or ``{"error": ..., "code": "copy"}`` when ``crc`` (the CRC-32 the page saved
    with them) does not match them: they were garbled on their way in (the engine is then
    left empty, in memory).

    With ``stepwise`` such a re-read is only started: the result has ``"rereadPending": n``
    (documents to read, ``reread`` is 0) and the caller runs `reread_step` until it reports
    ``finished``; every other call is "not ready" until then.
    """
    global _engine, _config, _globs, _reread, _reread_total
    from ragweb.engine import NEWER_VERSION, Engine
    from ragweb.errors import IndexCorruptError

    _config = default_config()
    _globs = None
    # (the ignore files and rag.yaml files of a drop under way stay: another tab's save, loaded
    # while the drop's folders are read, took them, and the files they leave out were indexed;
    # each drop starts with `ignore_reset`)
    _stop_reread()
    _stop_job()
    restored = False
    data = _null(data)
    crc = _as_int(crc, "crc", None, 0, 2**32 - 1)
    if data is not None:
        raw = _to_bytes(data)
        if crc is not None and zlib.crc32(raw) != crc:
            _engine = Engine.memory(_config)
            return _error("the stored index did not reach the engine intact (its checksum differs); "
                          "reload the page to try again; if it says this again, the stored "
                          "copy itself is damaged", code="copy")
        try:
            _engine = Engine.from_bytes(raw, _config)
            restored = True
        except IndexCorruptError as exc:
            _engine = Engine.memory(_config)
            # (the error's remedy is the CLI's, `rag index --rebuild`; the page has its own)
            why = re.split(r"; (?:rebuild it with|clear it and|upgrade ragweb)", str(exc))[0]
            why = re.sub(r"^stored index ", "it ", why)
            return _error(f"the stored index cannot be read ({why}); to start again, clear it with "
                          "\"Clear stored index\" and add the files again", code="format")
    else:
        _engine = Engine.memory(_config)
    # an index saved by an older version reads its files differently: read them again (not
    # one a newer version saved: read again, it would be read the older way, and saved so)
    newer = restored and _engine.settings_change() == NEWER_VERSION
    pending = restored and _engine.settings_changed and not newer
    too_big = pending and _engine.db_bytes() > REREAD_MAX_BYTES
    pending = pending and not too_big
    stepwise = bool(_null(stepwise))
    reread = _engine.reread() if pending and not stepwise else 0
    st = _engine.stats()
    out = {"success": True, "restored": restored, "reread": reread,
           "totalDocs": st["totalDocs"], "totalChunks": st["totalChunks"]}
    if too_big:
        out["rereadSkipped"] = True
    if newer:
        out["newerVersion"] = True
    if pending and stepwise:
        _reread = _engine.reread_steps()
        out["rereadPending"] = _reread_total = next(_reread)[1]
    return _json(out)


def _stop_reread() -> None:
    """Abandon a re-read in progress (its transaction rolls back)."""
    global _reread
    steps, _reread = _reread, None
    if steps is not None:
        steps.close()


@_guard
def reread_step(max_ms=40) -> str:
    """Go on with the re-read `init` started stepwise, for about ``max_ms`` milliseconds
    (at least one document). Returns ``{"done": n, "total": n, "finished": bool}``; when
    finished, the re-read index is committed and the API is ready (the caller should save
    it). An error rolls the re-read back: the index stays as it was restored, read with
    the settings it was built with, and the API is ready."""
    global _reread
    if _reread is None:
        raise RagError("no re-read is in progress")
    limit = _as_int(max_ms, "max_ms", 40, 1, 60_000) / 1000
    start = time.perf_counter()
    try:
        while True:
            done, total = next(_reread)
            if time.perf_counter() - start >= limit:
                return _json({"done": done, "total": total, "finished": False})
    except StopIteration:
        _reread = None
        return _json({"done": _reread_total, "total": _reread_total, "finished": True})
    except BaseException:
        _reread = None  # the generator's transaction has rolled back
        raise


def _to_bytes(data) -> bytes:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    # a JsProxy of a Uint8Array / ArrayBuffer: to_bytes copies it into wasm memory once
    # (bytes(to_py()) made two copies of what may be hundreds of MB)
    to_bytes = getattr(data, "to_bytes", None)
    if to_bytes is not None:
        return bytes(to_bytes())
    to_py = getattr(data, "to_py", None)
    if to_py is not None:
        return bytes(to_py())
    raise RagError(f"stored data must be bytes, got {_describe(data)}")


VACUUM_FREE_RATIO = 0.25
"""Before saving, rebuild the database when this share of its pages is free (removed files)."""


def dump(smallest: bool = False) -> bytes:
    """The whole index as bytes (SQLite serialize), for IndexedDB. Raises if not ready.

    SQLite keeps the pages of removed documents as free pages, so a database whose files
    were removed would be saved at its old size: compact it first when that is worth it,
    and always with ``smallest`` (the page asks for it after the storage quota refused a
    save: then each removal must count, `Engine.to_bytes`).
    """
    global _dump_crc
    data = _need_engine().to_bytes(vacuum_ratio=VACUUM_FREE_RATIO, smallest=smallest)
    _dump_crc = zlib.crc32(data)
    return data


@_guard
def dump_crc() -> str:
    """``{"crc": n}``: the CRC-32 of the bytes the last `dump` gave. The page compares it with
    its copy of them before it stores that copy, and saves it with them for `init`."""
    if _dump_crc is None:
        raise RagError("nothing has been dumped yet")
    return _json({"crc": _dump_crc})


@_guard
def index_size() -> str:
    """``{"bytes": n, "max": MAX_INDEX_BYTES}``: the index's size as `_need_room` counts it."""
    eng = _need_engine()
    eng.flush()
    return _json({"bytes": eng.db_bytes(), "max": MAX_INDEX_BYTES})


def _need_room(eng) -> None:
    """Raise `IndexFullError` when the index has reached `MAX_INDEX_BYTES`."""
    size = eng.db_bytes()
    if size >= MAX_INDEX_BYTES:
        raise IndexFullError(
            f"the index is full: it holds {size / 2**20:.0f} MB, and this page keeps at most "
            f"{MAX_INDEX_BYTES / 2**20:.0f} MB in a browser tab (the tab's memory must hold it "
            "about three times over); remove files or clear the index to add more, or index a "
            "folder this large with the `rag` CLI")


class TooLargeError(RagError):
    """A text given to `index_text` is larger than ``index.max_file_bytes``."""

    code = "too_large"


def _need_size(path: str, text: str) -> None:
    """Raise `TooLargeError` when ``text`` is larger, in UTF-8, than the limit a dropped file
    has (``index.max_file_bytes``): indexing runs on the page's main thread, and its memory
    grows with the text many times over (56 M characters took 37 s and 1.3 GB)."""
    limit = _config_now()["index"]["max_file_bytes"]
    if len(text) * 4 <= limit:  # no character takes more than four bytes
        return
    size = len(text) if len(text) > limit else len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise TooLargeError(
            f"{path} is too large: {'at least ' if len(text) > limit else ''}{size} bytes of UTF-8 > "
            f"max_file_bytes {limit} (the limit on one file, as for a dropped one); "
            "split it into several documents")


# --------------------------------------------------------------------------- the public API

@_guard
def index_text(filename, content) -> str:
    """ragIndex: add or replace one document from its text.

    A text that is the one indexed at ``filename`` (compared as the index stores it: line
    ends as ``\n``, `ingest.normalize`) is not indexed again, and nothing changes: the result
    has ``"unchanged": true`` and ``"chunks"``, those the file holds. A text given here has no
    time (0), so the time recorded for the file (a drop's) is kept."""
    path = _clean_path(_need_str(filename, "filename"))
    text = _need_str(content, "content", allow_empty=True)
    eng = _need_engine()
    _need_size(path, text)
    # (the later text wins over a drop's copy being indexed in steps, even an unchanged one)
    why = "replaced by ragIndex while it was being indexed"
    if _unchanged(eng, path, text, 0.0) is not None:  # (time 0: compared by text only, never touched)
        _stop_job(why, path)
        return _json({"success": True, "chunks": eng.file_chunks(path), "filename": path, "unchanged": True})
    _need_room(eng)
    chunks = eng.add_document(path, text)
    _stop_job(why, path)
    return _json({"success": True, "chunks": chunks, "filename": path})


@_guard
def query(q, top_k=None) -> str:
    """ragQuery: the top hits, ``{"query", "results": [{path, startLine, endLine, score, text}]}``."""
    q = _question(q)
    k = _as_int(top_k, "topK", DEFAULT_TOP_K, 1, MAX_TOP_K)
    hits = _need_engine().search(q, top_k=k)
    return _json({"query": q, "results": [_hit_json(h) for h in hits]})


def _hit_json(hit) -> dict:
    # (`rag query --json` prints this JSON with two more keys, ``heading`` and ``terms``)
    return hit.to_json()


PACK_OPTIONS = {"lean": bool, "compact": bool, "path": str, "topK": int}


def _pack_options(options) -> dict:
    """The options object of ``ragPack`` (a JSON string, or None) as checked keyword values."""
    options = _null(options)
    if options is None:
        return {}
    try:
        opts = json.loads(options) if isinstance(options, str) else None
    except ValueError:
        opts = None
    if not isinstance(opts, dict):
        raise RagError(f"options must be an object like {{lean: true}}, got {_describe(options)}")
    unknown = sorted(set(opts) - set(PACK_OPTIONS))
    if unknown:
        raise RagError(f"options: unknown key {unknown[0]!r} (known: {', '.join(PACK_OPTIONS)})")
    out = {}
    for key, value in opts.items():
        if value is None:
            continue
        if key == "topK":
            out["top_k"] = _as_int(value, "options.topK", None, 1, MAX_TOP_K)
        elif not isinstance(value, PACK_OPTIONS[key]):
            kind = "true or false" if PACK_OPTIONS[key] is bool else "a string"
            raise RagError(f"options.{key} must be {kind}, got {_describe(value)}")
        elif key == "path":
            out["path_glob"] = _need_str(value, "options.path")
        else:
            out[key] = value
    return out


@_guard
def pack(q, budget=None, options=None) -> str:
    """ragPack: the packed context for a question inside ``budget`` tokens (reference §4).

    ``options`` (a JSON object, optional): ``lean`` (true: far fewer tokens, `rag pack
    --lean`), ``compact`` (false: whole chunks only, `--no-compact`), ``path`` (a glob the
    paths must match, `--path`), ``topK`` (candidates searched, `--top-k`).
    """
    q = _question(q)
    default_budget = _config_now()["pack"]["token_budget"]
    b = _as_int(budget, "budget", default_budget, 1, 10_000_000)
    return _json(_need_engine().pack(q, budget=b, **_pack_options(options)))


@_guard
def clear() -> str:
    """ragClear: remove every document."""
    _need_engine().clear()
    _stop_job("cleared while it was being indexed")
    return _json({"success": True})


@_guard
def remove(filename) -> str:
    """ragRemove: remove one document; ``removed`` is false when it was not indexed.

    A folder's path (no file is indexed under that name, some under it: ``docs`` or
    ``docs/``) removes every file under it: ``{"success": true, "removed": true, "filename":
    "docs", "folder": true, "count": 2, "paths": [...]}``."""
    name = _need_str(filename, "filename")
    path = _clean_path(name, folder=True)
    if not path:
        raise RagError(f"the file name {_quoted(name)} names the top of the index, no file or folder in it: "
                       "ragClear() removes every file")
    engine = _need_engine()
    removed = False
    if not name.endswith("/"):  # (a name that ends in "/" names a folder only)
        removed = bool(engine.remove_document(path))
        if _job is not None and _job.doc.path == path:
            removed = True  # (it was on its way in: it is not indexed now)
            _stop_job("removed by ragRemove while it was being indexed", path)
        if removed:
            return _json({"success": True, "removed": True, "filename": path})
    under = [p for p in engine.stats()["files"] if p.startswith(f"{path}/")]
    for p in under:
        engine.remove_document(p)
    if _job is not None and _job.doc.path.startswith(f"{path}/"):
        under.append(_job.doc.path)  # (on its way in, as above)
        _stop_job("removed by ragRemove while it was being indexed")
    if not under:
        return _json({"success": True, "removed": False, "filename": path})
    return _json({"success": True, "removed": True, "filename": path, "folder": True,
                  "count": len(under), "paths": sorted(under)})


@_guard
def stats() -> str:
    """ragStats: ``{"totalDocs", "totalChunks", "avgChunkLen", "files"}``."""
    st = _need_engine().stats()
    return _json({"totalDocs": st["totalDocs"], "totalChunks": st["totalChunks"],
                  "avgChunkLen": st["avgChunkLen"], "files": list(st["files"])})


# --------------------------------------------------------------------------- page helpers

@_guard
def check_path(path, size=None) -> str:
    """Whether the page should read a dropped file: ``{"ok": true}`` or ``{"skip": reason}``.

    Applies the CLI's rules before the bytes are read: include/exclude globs, the ignore
    files given to `ignore_add`, and the size limit. A file left out only for the case of
    its suffix (``Guide.MD``, which ``**/*.md`` takes in lower case) also has ``"caseOnly"``:
    the glob that would take it (``"**/*.MD"``), as `rag index` notes it. One that `rag index`
    passes over without counting it (a dropped folder's ``rag.yaml``, its ``.gitignore``:
    `_passed_over`) has ``"quiet": true``.
    """
    path = _clean_path(_need_str(path, "path"))
    reason = _skip_reason(path, size)
    if not reason:
        return _json({"ok": True, "path": path})
    out = {"skip": reason, "path": path}
    glob = _case_only(path) if reason == "not included" else None
    if glob:
        out["caseOnly"] = glob
    if _passed_over(path, reason):
        out["quiet"] = True
    return _json(out)


SELECTION_SKIPS = ("not included", "excluded", "ignored")
"""`_skip_reason`'s reasons given by the globs and the ignore files (not by a file's size)."""


def _passed_over(path: str, reason: str) -> bool:
    """Whether `rag index` of a dropped folder passes over the file ``path`` (left out for
    ``reason``) without counting it among the files the globs or ignore files leave out:
    rag's and git's own files (`never_indexed`: the folder's ``rag.yaml``, read as its config,
    anything in its ``.rag/`` or ``.git/``), and a hidden file (``.gitignore``) that no include
    takes or that is ignored. A loose file (``rag.yaml``, ``.env``) is a document given, counted:
    no folder walk passes over it."""
    if reason not in SELECTION_SKIPS or "/" not in path:
        return False
    root, rel, _, _ = _selection(path)
    if root is None:
        rel = path.split("/", 1)[1]  # (relative to the dropped folder)
    if never_indexed(rel):
        return True
    return reason != "excluded" and path.rsplit("/", 1)[-1].startswith(".")


def _case_only(path: str) -> str | None:
    """`files.case_only_glob` of a dropped path, by its folder's includes (the CLI notes such
    files, hidden ones aside)."""
    from ragweb.files import case_only_glob

    _, rel, _, (includes, _) = _selection(path)
    return None if rel.rsplit("/", 1)[-1].startswith(".") else case_only_glob(includes, rel)


@_guard
def ignore_reset() -> str:
    """Forget the ignore files and ``rag.yaml`` files of the previous drop."""
    _ignores.clear()
    _ignores_at.clear()
    _folder_configs.clear()
    return _json({"success": True})


SELECTION_KEYS = ("includes", "excludes", "gitignore", "max_file_bytes")
"""The ``index`` keys of a dropped folder's ``rag.yaml`` that the page applies under it."""


@_guard
def config_add(folder, text, name="rag.yaml") -> str:
    """Apply the config file ``name`` (``rag.yaml`` or ``.rag/config.yaml``) of a dropped
    folder (its bytes, or its text) to what is under it, as `rag index FOLDER` would read it: its file selection
    (`SELECTION_KEYS`: globs relative to the folder, the size limit, ignore files on or
    off) decides which of the folder's files are indexed.

    The page keeps one index and one analysis for every file, so the file's other keys are
    not used; they come back in ``unused``, each one the file sets to a value other than
    its default. Returns ``{"success": true, "folder", "applied": [keys], "unused": [keys]}``,
    or ``{"error": ...}`` naming the file, line and key of what is invalid (the caller
    should then leave the folder out, as the CLI indexes nothing).
    """
    from ragweb.config import parse_config
    from ragweb.files import GlobSet

    base = _clean_path(_need_str(folder, "folder", allow_empty=True), folder=True)
    label = f"{base}/{_need_str(name, 'name')}" if base else _need_str(name, "name")
    cfg = parse_config(text if isinstance(text, str) else _to_bytes(text), label)  # (bytes: as the CLI reads them)
    defaults = default_config()
    changed = [(section, key) for section, keys in cfg.items() for key, value in keys.items()
               if value != defaults[section][key]]
    index = cfg["index"]
    _folder_configs[:] = [c for c in _folder_configs if c[0] != base]
    _folder_configs.append((base, index, (GlobSet(index["includes"]), GlobSet(index["excludes"]))))
    _folder_configs.sort(key=lambda c: -len(c[0]))  # the innermost folder's file decides
    return _json({"success": True, "folder": base,
                  "applied": [f"index.{k}" for s, k in changed if s == "index" and k in SELECTION_KEYS],
                  "unused": [f"{s}.{k}" for s, k in changed if not (s == "index" and k in SELECTION_KEYS)]})


@_guard
def config_misnamed(folder, names_json) -> str:
    """``{"note": ...}`` when a dropped folder without a config file holds one surely meant
    as its config (``Rag.yaml``, ``rag.yml``: `config.misnamed_config_note`), else
    ``{"note": null}``. ``names_json``: a JSON list of the folder's entries' names."""
    from ragweb.config import misnamed_config_note

    base = _clean_path(_need_str(folder, "folder", allow_empty=True), folder=True)
    try:
        names = json.loads(_need_str(names_json, "names_json"))
    except ValueError:
        names = None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise RagError("names_json must be a JSON list of names")
    return _json({"note": misnamed_config_note(names, base)})


@_guard
def roots_add(names_json) -> str:
    """Record the folders a drop, a pick or the sample indexes files under (a JSON list of
    their names): their names do not weigh in ranking, as `rag index` of such a folder
    stores paths without it (`Engine.weighed_path`). ``{"success": true, "added": n}``: the
    names that were new (a change of the index, to be saved)."""
    try:
        names = json.loads(_need_str(names_json, "names_json"))
    except ValueError:
        names = None
    if not isinstance(names, list) or not all(isinstance(n, str) and n and "/" not in n for n in names):
        raise RagError("names_json must be a JSON list of folder names")
    return _json({"success": True, "added": _need_engine().add_roots(names)})


def _selection(path: str) -> tuple[str | None, str, dict, tuple]:
    """``(root, path relative to it, index settings, (includes, excludes))``: a dropped
    folder's ``rag.yaml`` for a path under it (`config_add`), else the page's (root None)."""
    for base, index, globs in _folder_configs:
        if not base:
            return base, path, index, globs
        if path.startswith(base + "/"):
            return base, path[len(base) + 1:], index, globs
    return None, path, _config_now()["index"], _glob_sets()


@_guard
def ignore_add(folder, data, name=".gitignore") -> str:
    """Apply a ``.gitignore``/``.ragignore`` found in ``folder`` (a dropped path) to what is
    under it, with git's rules, as the CLI does (``index.gitignore``); also a dropped
    repository's ``.git/info/exclude`` (``name``), given before the folder's own ignore files,
    which win over it as in git. ``data`` is the file's
    bytes, read as the CLI reads the file ``name`` (`files.ignore_file_text`), or its text.
    ``{"rules": N}``, with a ``note`` when the file cannot be read as rules (none applied)."""
    from ragweb.files import ignore_file_text, parse_ignore

    base = _clean_path(_need_str(folder, "folder", allow_empty=True), folder=True)
    name = _need_str(name, "name")
    if isinstance(data, str):
        text = data
    else:
        try:
            text = ignore_file_text(_to_bytes(data), name)
        except ValueError as e:
            where = f"{base}/{name}" if base else name
            return _json({"success": True, "rules": 0, "note": f"{where} not read: {e}"})
    rules = parse_ignore(text)
    _ignores_at.setdefault(base, []).append(len(_ignores))
    _ignores.append((base, rules))
    return _json({"success": True, "rules": len(rules)})


def _ignored(path: str, is_dir: bool) -> bool:
    """Whether the ignore files of the current drop exclude ``path`` (the CLI's rules)."""
    from ragweb.files import is_ignored
    if not _ignores or not _selection(path)[2]["gitignore"]:
        return False
    # only the ignore files of the folders above ``path`` can speak of it: looked up by
    # folder, in the order they were added (testing each of the drop's ignore files for
    # every path was quadratic)
    at = sorted(i for base in ("", *_folders(path)) for i in _ignores_at.get(base, ()))
    return bool(at) and is_ignored([_ignores[i] for i in at], path, is_dir)


def _glob_sets():
    global _globs
    if _globs is None:
        from ragweb.files import GlobSet
        cfg = _config_now()["index"]
        _globs = (GlobSet(cfg["includes"]), GlobSet(cfg["excludes"]))
    return _globs


@_guard
def check_dir(path) -> str:
    """Whether the page should walk into a dropped folder: ``{"ok": true}``, or
    ``{"skip": "excluded"}`` when the excludes cover it (the CLI does not enter it either). A
    dropped folder whose own ``rag.yaml`` is applied (`config_add`) is entered whatever its name:
    its globs are relative to it, as `rag index FOLDER` reads them."""
    path = _clean_path(_need_str(path, "path"), folder=True)
    if any(base == path for base, _, _ in _folder_configs):  # (a dropped folder with a rag.yaml:
        return _json({"ok": True, "path": path})              # its globs are relative to it)
    root, rel, _, (_, excludes) = _selection(path)
    if excludes.covers_dir(rel) or (root is not None and never_indexed(rel + "/")):  # .rag/
        return _json({"skip": "excluded", "path": path})
    if _ignored(path, is_dir=True):
        return _json({"skip": "ignored", "path": path})
    return _json({"ok": True, "path": path})


def _folders(path: str) -> list[str]:
    """The folders ``path`` is in, outermost first (``a/b/c.md``: ``a``, ``a/b``)."""
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _skip_reason(path: str, size) -> str | None:
    """Why the CLI would not index ``path`` (a folder of it is pruned, or the file is
    excluded, not included, ignored or too large), or None."""
    root, rel, index, (includes, excludes) = _selection(path)
    if (any(excludes.covers_dir(d) for d in _folders(rel)) or excludes.matches_file(rel)
            or (root is not None and never_indexed(rel))  # its rag.yaml is not text to index
            or is_misnamed_config(rel.rsplit("/", 1)[-1])):  # (nor a Rag.yaml, which no glob names)
        return "excluded"
    if not includes.matches_file(rel):
        return "not included"
    folders = _folders(path)
    if any(_ignored(d, is_dir=True) for d in folders) or _ignored(path, is_dir=False):
        return "ignored"
    limit = index["max_file_bytes"]
    if _is_int(size) and size > limit:
        return f"too large ({size} bytes > max_file_bytes {limit})"
    return None


STEP_MIN_CHARS = 200_000
"""A dropped file of at least this many characters is indexed in steps when the caller asks
(`index_bytes` with ``stepwise``): in one call, a 5 MB file held the page for three seconds."""


class _IndexJob:
    """A dropped file being indexed in steps: laid out (`ingest.prepare`) when it starts, its
    chunks' terms counted a few at a time (`ingest.count_terms`, which touches no engine
    state, so queries, saves and other files may run between steps), and stored in the
    index in the last step."""

    def __init__(self, eng, path: str, text: str, mtime: float):
        from ragweb import ingest

        self.engine, self.mtime = eng, mtime
        self.doc = ingest.prepare(path, text, eng.settings)
        self.total = len(self.doc.chunks)
        self.steps = ingest.count_terms(self.doc, eng.analyzer)

    def run(self, limit: float) -> dict:
        """Count terms for about ``limit`` seconds; store the document once all are counted."""
        start = time.perf_counter()
        done = 0
        for done, _ in self.steps:
            if time.perf_counter() - start >= limit:
                return {"pending": True, "filename": self.doc.path, "done": done, "total": self.total}
        if self.engine is not _engine:
            raise RagError("the engine was replaced while the file was being indexed")
        _need_room(self.engine)
        chunks = self.engine.add_prepared(self.doc, mtime=self.mtime)
        return {"success": True, "chunks": chunks, "filename": self.doc.path}


def _stop_job(why: str | None = None, path: str | None = None) -> None:
    """Abandon the file being indexed in steps (only if it is ``path``, when given); with
    ``why``, the next `index_step` reports it as ``{"superseded": why, "filename"}``."""
    global _job, _job_end
    if path is not None and (_job is None or _job.doc.path != path):
        return
    _job_end = {"superseded": why, "filename": _job.doc.path} if why and _job is not None else None
    _job = None


def _mtime(value) -> float:
    """A file's modification time as given (seconds since 1970), or 0 (unknown) for anything
    that is not a finite number (NaN would reach SQLite as NULL)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return 0.0
    try:
        value = float(value)
    except OverflowError:
        return 0.0
    return value if math.isfinite(value) else 0.0


@_guard
def index_bytes(path, data, mtime=None, stepwise=False) -> str:
    """Index one dropped file from its bytes, with the CLI's rules.

    Returns ragIndex's shape on success, or ``{"skipped": reason, "filename": path}`` for an
    excluded, too large, binary or minified file, with ``"warn": true`` when `rag index` warns
    of it (a damaged ``.gz``, a text in no encoding it reads: `_warned`). A file whose text is
    the one indexed at its path (a folder dropped again) is not indexed again: the result has
    ``"unchanged": true`` (``"chunks"``: those it holds), and ``"touched": true`` when only its time was
    new (then recorded, as `rag index` does). With ``stepwise``, a file of at least
    `STEP_MIN_CHARS` characters is only started: the result is ``{"pending": true,
    "filename", "done": 0, "total": chunks}``, and the caller runs `index_step` until it gives
    the result (a file started before and not finished is abandoned).
    """
    global _job
    from ragweb import files

    path = _clean_path(_need_str(path, "path"))
    raw = _to_bytes(data)
    reason = _skip_reason(path, len(raw))
    if reason is None:
        decoded = files.decode_file(path, raw, _selection(path)[2]["max_file_bytes"])
        text, reason = decoded.text, decoded.skipped
        if reason and _warned(reason):
            return _json({"skipped": reason, "filename": path, "warn": True})
    if reason:
        return _json({"skipped": reason, "filename": path})
    mt = _mtime(_null(mtime))
    eng = _need_engine()
    _stop_job()
    same = _unchanged(eng, path, text, mt)
    if same is not None:
        return _json({"success": True, "chunks": eng.file_chunks(path), "filename": path, "unchanged": True,
                      "touched": same})
    _need_room(eng)
    if _null(stepwise) and len(text) >= STEP_MIN_CHARS:
        _job = _IndexJob(eng, path, text, mt)
        return _json({"pending": True, "filename": path, "done": 0, "total": _job.total})
    chunks = eng.add_document(path, text, mtime=mt)
    return _json({"success": True, "chunks": chunks, "filename": path})


def _unchanged(eng, path: str, text: str, mtime: float) -> bool | None:
    """None when ``text`` is not the text indexed at ``path``; else whether its time ``mtime``
    (known: not 0) was new, and is now recorded."""
    from ragweb.ingest import normalize

    stored = eng.file_text(path)
    if stored is None:
        return None
    text, data = normalize(path, text)
    if text != stored:
        return None
    if not mtime or eng.file_mtime(path) == mtime:
        return False
    eng.touch_file(path, mtime, len(data))
    return True


def _warned(reason: str) -> bool:
    """Whether `rag index` warns of a file that `files.decode_file` skipped for ``reason``, as
    a problem (a damaged ``.gz``, a text in no encoding it reads), rather than only counting it
    (binary, too large, minified, a packed context: `indexer._index_one`)."""
    from ragweb.files import PACKED_REASON

    return not (reason in ("binary", PACKED_REASON) or reason.startswith(("too large", "minified")))


@_guard
def index_step(max_ms=40) -> str:
    """Go on indexing the file `index_bytes` started stepwise, for about ``max_ms``
    milliseconds (at least one chunk): ``{"pending": true, "filename", "done", "total"}``
    (chunks counted, of all), then index_bytes's result once the file is stored, or
    ``{"superseded": why, "filename"}`` when a call since (`index_text` or `remove` of the
    same path, `clear`) made it moot. An error ends the job; the index is as it was before
    the file."""
    global _job, _job_end
    if _job is None:
        if _job_end is not None:  # a later call replaced, removed or cleared it
            end, _job_end = _job_end, None
            return _json(end)
        raise RagError("no file is being indexed in steps")
    limit = _as_int(max_ms, "max_ms", 40, 1, 60_000) / 1000
    try:
        out = _job.run(limit)
    except BaseException:
        _job = None
        raise
    if not out.get("pending"):
        _job = None
    return _json(out)


@_guard
def index_cancel() -> str:
    """Abandon the file being indexed in steps, if any (nothing of it was stored):
    ``{"success": true, "cancelled": bool}``."""
    was = _job is not None
    _stop_job()
    return _json({"success": True, "cancelled": was})


@_guard
def search_ui(q, top_k=None) -> str:
    """Hits for the page to show: ragQuery's fields (``path``, ``text`` and ``heading`` as
    `formats.shown` shows them) plus ``heading`` and ``marks`` ([start, end] offsets into
    ``text`` of the words that matched the question), and ``indexEmpty`` (no text is
    indexed: no question can have results)."""
    q = _question(q)
    k = _as_int(top_k, "topK", 10, 1, MAX_TOP_K)
    eng = _need_engine()
    out = []
    from ragweb.formats import shown

    for h in eng.search(q, top_k=k):
        item = _hit_json(h)
        # (shown: a name's or a line's control and bidi characters made visible, one for one,
        # so the marks still fall on their words)
        item["path"], item["text"], item["heading"] = shown(h.path), shown(h.text), shown(h.heading or "")
        item["marks"] = _marks(eng.analyzer, h.text, set(h.terms))
        out.append(item)
    return _json({"query": q, "results": out, "indexEmpty": not eng.n_chunks})


_ASTRAL_RE = re.compile("[\U00010000-\U0010ffff]")


def _marks(analyzer, text: str, terms: set[str]) -> list[list[int]]:
    """[start, end) of each word of ``text`` that yields a matched term, in UTF-16 code
    units (JavaScript string offsets: a character beyond U+FFFF counts twice)."""
    if not terms:
        return []
    from ragweb.analysis import SHOWN_WORD_RE, short_term_spans

    marks = []
    for m in SHOWN_WORD_RE.finditer(text):
        if terms.intersection(analyzer.word_terms(m.group())):
            marks.append([m.start(), m.end()])
    if analyzer.short_terms:  # ("-g", "0.2.5", "$@": terms that are no word)
        spans = [[s, e] for s, e in short_term_spans(text, analyzer.parameters) if text[s:e] in terms]
        if spans:
            marks = sorted(m for m in marks + spans if not any(s <= m[0] and m[1] <= e and m != [s, e]
                                                                for s, e in spans))
    astral = [m.start() for m in _ASTRAL_RE.finditer(text)]
    if astral and marks:
        marks = [[s + bisect.bisect_left(astral, s), e + bisect.bisect_left(astral, e)] for s, e in marks]
    return marks


@_guard
def render_pack(packed_json, fmt="json") -> str:
    """``{"text": ..., "warning": str | null}``: a packed context JSON string rendered as
    json, markdown, xml or text (the `rag pack --format` renderings)."""
    from ragweb import formats

    fmt = _need_str(fmt, "format")
    if fmt not in formats.FORMATS:
        raise RagError(f"unknown format {fmt!r}; choose one of: {', '.join(formats.FORMATS)}")
    packed = json.loads(_need_str(packed_json, "packed context"))
    return _json({"text": formats.render(packed, fmt), "warning": formats.evidence_warning(packed)})


@_guard
def runtime_prompt(packed_json) -> str:
    """``{"prompt": text}``: the runtime (answering) prompt for a packed context JSON string."""
    from ragweb import prompts

    packed = json.loads(_need_str(packed_json, "packed context"))
    return _json({"prompt": prompts.runtime_prompt(packed)})

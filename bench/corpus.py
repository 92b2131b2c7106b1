"""The benchmark corpus: the running interpreter's standard library sources.

Shared by the native benchmark (`bench_native.py`) and the browser benchmark, so both
index the same files, the same chunk texts and ask the same questions.

- `stdlib_files()`: the `.py` files under ``sysconfig.get_paths()['stdlib']``, without
  ``site-packages``, test folders (``test``, ``tests``, ``idle_test``) and ``__pycache__``.
- `documents(files)`: ``(relative path, text)`` as ragweb stores them (newlines normalised).
- `chunk_texts(files)`: ``(relative path, chunk text)`` cut with ragweb's own chunking at
  the default settings, exactly the text `Engine.add_document` analyses for each chunk.
- `make_queries(files, n, seed)`: a fixed, seeded list of code-search questions built from
  the corpus's own function and class names ("parse headers", "json decode error").
- `synthetic_docs(n, words, seed)`: random-word documents for the ingest scaling test.
"""

from __future__ import annotations

import os
import random
import re
import sysconfig
from pathlib import Path

EXCLUDED_DIRS = frozenset({"site-packages", "dist-packages", "test", "tests", "idle_test",
                           "__pycache__"})
QUERY_SEED = 20240611
SYNTHETIC_SEED = 42


def stdlib_root() -> Path:
    """The standard library directory of the running interpreter."""
    return Path(sysconfig.get_paths()["stdlib"]).resolve()


def stdlib_files(root: str | os.PathLike | None = None) -> list[Path]:
    """The stdlib `.py` files (no site-packages, test folders or caches), sorted by path."""
    root = Path(root) if root is not None else stdlib_root()
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in EXCLUDED_DIRS)
        for name in filenames:
            if name.endswith(".py"):
                out.append(Path(dirpath) / name)
    out.sort(key=lambda p: p.relative_to(root).as_posix())
    return out


def rel_path(path: Path, root: Path | None = None) -> str:
    """``path`` relative to the stdlib root, with ``/`` separators (the indexed path)."""
    root = root or stdlib_root()
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()


def read_text(path: Path) -> str:
    """The file's text as ragweb stores it (UTF-8, newlines normalised to ``\\n``)."""
    text = Path(path).read_bytes().decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def documents(files: list[Path]) -> list[tuple[str, str]]:
    """``(relative path, text)`` of each file."""
    root = stdlib_root()
    return [(rel_path(p, root), read_text(p)) for p in files]


def corpus_bytes(files: list[Path]) -> int:
    return sum(p.stat().st_size for p in files)


def chunk_texts(files: list[Path]) -> list[tuple[str, str]]:
    """``(relative path, chunk text)`` of every chunk of ``files`` (`chunk_texts_of`)."""
    return chunk_texts_of(documents(files))


def chunk_texts_of(docs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(path, text)`` of every chunk of the ``(path, text)`` documents, cut by ragweb's
    chunking at the defaults.

    The text is what `Engine.add_document` analyses for a chunk: its whole lines (or its
    piece of one over-long line) of the file's view (an HTML page's markup blanked), with
    the heading above it (`Chunk.context`) prepended (only prose files have headings).
    """
    from ragweb.chunking import chunk_lines, is_markdown, split_lines
    from ragweb.config import DEFAULTS
    from ragweb.markup import is_html, mask_html

    size, overlap = DEFAULTS["index"]["chunk_tokens"], DEFAULTS["index"]["chunk_overlap"]
    out: list[tuple[str, str]] = []
    for path, text in docs:
        page = is_html(path)
        view = mask_html(text) if page else text
        lines = split_lines(view)
        for ch in chunk_lines(view, size, overlap, page or is_markdown(path)):
            body = "\n".join(lines[ch.start - 1:ch.end])
            if ch.col_start is not None:
                body = body[ch.col_start:ch.col_end]
            if ch.context:
                body = ch.context + "\n" + body
            out.append((path, body))
    return out


# --- queries ------------------------------------------------------------------------------
_DEF_RE = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)
_PART_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
_SKIP = frozenset("""
the and for with from into that this not are has have get set self cls new old all any
init main test run args kwargs func obj val var tmp foo bar baz spam eggs
""".split())
_PREFIXES = ["", "", "", "", "how to ", "where is ", "find ", "function to "]
_SUFFIXES = ["", "", "", "", " error", " example", " implementation"]


def _parts(name: str) -> list[str]:
    return [p.lower() for p in _PART_RE.findall(name)]


def make_queries(files: list[Path], n: int = 200, seed: int = QUERY_SEED) -> list[str]:
    """``n`` distinct code-search questions drawn (seeded) from the corpus's identifiers.

    Three shapes: the words of one function/class name ("parse headers", "json decode
    error"), the module plus words of a name in it ("socket create connection"), and
    words of two names from the same file ("timeout connect"); some get a natural-language
    prefix or suffix ("how to ...", "... error").
    """
    rng = random.Random(seed)
    root = stdlib_root()
    per_file: list[tuple[str, list[list[str]]]] = []
    for p in files:
        names = sorted(set(_DEF_RE.findall(read_text(p))))
        words = []
        for name in names:
            parts = [w for w in _parts(name) if len(w) >= 3 and w not in _SKIP]
            if parts:
                words.append(parts)
        if words:
            module = Path(rel_path(p, root)).with_suffix("").parts
            mod = next((m for m in reversed(module) if m not in ("__init__", "__main__")), "")
            per_file.append((mod.strip("_").lower(), words))
    # Draw a name uniformly over all names (big modules get more questions, as in use).
    flat = [(i, parts) for i, (_, words) in enumerate(per_file) for parts in words]
    out: list[str] = []
    seen: set[str] = set()
    attempts = 0
    while len(out) < n and attempts < n * 100:
        attempts += 1
        i, parts = rng.choice(flat)
        mod, words = per_file[i]
        shape = rng.random()
        if shape < 0.45:
            ws = parts[:3]
        elif shape < 0.75:
            ws = [mod] + parts[:2]
        else:
            ws = [rng.choice(parts), rng.choice(rng.choice(words))]
        ws = [w for k, w in enumerate(ws) if w and w not in ws[:k]]
        if len(ws) < 2:
            continue
        prefix = rng.choice(_PREFIXES)
        if prefix and prefix.split()[-1] in ws:
            prefix = ""
        q = prefix + " ".join(ws) + rng.choice(_SUFFIXES)
        if q not in seen:
            seen.add(q)
            out.append(q)
    return out


# --- synthetic documents for the ingest scaling test --------------------------------------
def synthetic_vocab(size: int = 5000, seed: int = SYNTHETIC_SEED) -> list[str]:
    """``size`` distinct pronounceable lowercase words (seeded)."""
    rng = random.Random(seed)
    cons, vows = "bcdfghjklmnprstvwz", "aeiou"
    words: set[str] = set()
    while len(words) < size:
        syl = rng.randint(2, 4)
        words.add("".join(rng.choice(cons) + rng.choice(vows) for _ in range(syl)))
    return sorted(words)


def synthetic_docs(n: int, words: int = 30, seed: int = SYNTHETIC_SEED,
                   vocab: list[str] | None = None) -> list[str]:
    """``n`` texts of ``words`` random vocabulary words each (seeded)."""
    vocab = vocab or synthetic_vocab()
    rng = random.Random(seed)
    return [" ".join(rng.choices(vocab, k=words)) for _ in range(n)]


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo ('?' where unknown)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "?"

"""The CLI (native CPython) and the page (Pyodide) give the same results for the same files."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
QUERIES = [
    "how are headers parsed",
    "parseHeaders",
    "parse_headers obsolete line folding",
    "retry backoff with full jitter",
    "Retry-After header date",
    "rate limit burst token bucket",
    "PIGEONPOST_PROXY environment variable",
    "CORS error in the browser client",
    "MalformedHeader missing colon",
    "which methods are idempotent",
]


def rag(*args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "ragweb", *args], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def native_index(sample_copy):
    rag("index", str(sample_copy))
    return sample_copy


def comparable(results):
    return [(r["path"], r["startLine"], r["endLine"], round(r["score"], 4), r["text"]) for r in results]


def test_cli_and_browser_agree_on_query(app, native_index):
    app.index_sample()
    for q in QUERIES:
        native = json.loads(rag("query", "-d", str(native_index), "-q", q, "--json", "-k", "5"))
        browser = app.query(q, 5)
        assert comparable(browser["results"]) == comparable(native["results"]), q
        assert browser["results"], q


def test_cli_and_browser_agree_on_stats(app, native_index, sample_docs):
    app.index_sample()
    st = app.stats()
    assert st["files"] == [p for p, _ in sample_docs]
    from ragweb.engine import Engine
    from ragweb.indexer import index_path
    engine = Engine.open(index_path(native_index), create=False)
    try:
        native = engine.stats()
    finally:
        engine.close()
    assert st == native


def test_cli_and_browser_agree_on_pack(app, native_index):
    app.index_sample()
    for q, budget in [("how are headers parsed", 300), ("retry backoff with full jitter", 800),
                      ("rate limit burst token bucket", 2000)]:
        native = json.loads(rag("pack", "-d", str(native_index), "-q", q, "-b", str(budget)))
        browser = app.pack(q, budget)
        assert browser["used_tokens"] == native["used_tokens"], q
        assert [(s["path"], s["range"], s["text"]) for s in browser["snippets"]] == \
            [(s["path"], s["range"], s["text"]) for s in native["snippets"]], q


def make_tree(root: Path) -> None:
    """A folder exercising every selection rule: includes, excludes, .gitignore/.ragignore
    (anchored, negated, directory rules), binary and UTF-16 files."""
    files = {
        "README.md": "# Tree\nA tree for selection rules.\n",
        "notes.txt": "plain notes\n",
        "app.py": "def main():\n    return 0\n",
        ".gitignore": "generated/\n*.tmp.md\n!keep.tmp.md\n/root-only.md\n",
        "generated/out.md": "generated output\n",
        "x.tmp.md": "temporary\n",
        "keep.tmp.md": "kept although it matches *.tmp.md\n",
        "root-only.md": "ignored at the root only\n",
        "sub/root-only.md": "not ignored here\n",
        "sub/.ragignore": "private.md\n",
        "sub/private.md": "private\n",
        "sub/public.md": "public\n",
        "node_modules/pkg/index.js": "module.exports = 1;\n",
        "lib/app.min.js": "var a=1;\n",
        "lib/app.js": "export const a = 1;\n",
        "build/x.md": "build output\n",
        "docs/deep/er/guide.md": "# Guide\ndeep file\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (root / "blob.txt").write_bytes(bytes(range(256)) * 4)
    (root / "utf16.txt").write_bytes("\ufeffUTF-16 text with a BOM\n".encode("utf-16-le"))


def test_cli_and_browser_select_the_same_files(app, tmp_path):
    root = tmp_path / "tree"
    make_tree(root)
    native_root = tmp_path / "native"
    make_tree(native_root)
    rag("index", str(native_root))
    from ragweb.engine import Engine
    from ragweb.indexer import index_path
    engine = Engine.open(index_path(native_root), create=False)
    try:
        native = engine.stats()
    finally:
        engine.close()
    app.page.set_input_files("#pick-folder", str(root))
    app.wait("JSON.parse(ragStats()).totalDocs > 0")
    app.page.evaluate("window.ragweb.idle()")
    browser = app.stats()
    assert [f.removeprefix("tree/") for f in browser["files"]] == native["files"]
    assert browser["totalChunks"] == native["totalChunks"]
    assert "keep.tmp.md" in native["files"] and "sub/root-only.md" in native["files"]

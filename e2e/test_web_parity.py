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


FOLDER_DOCS = {  # (a question word in the folder's name lifted every hit by the same boost,
                 # which changed MMR's balance and so the top 5; "releases/" weighed all as a change log)
    "n0.md": "# Note 0\n\nrequest server header call hour expiry refresh token token header server metric minute.\n",
    "n1.md": "# Note 1\n\nhour metric new returns token token metric returns refresh metric request returns expiry "
             "secret minute token refresh refresh retry returns.\n",
    "n2.md": "# Note 2\n\nrequest call client expiry hour token.\n",
    "n3.md": "# Note 3\n\nreturns request hour secret metric server request request limit limit refresh new logging.\n",
    "n4.md": "# Note 4\n\nretry refresh logging client hour client expiry request expiry request new call.\n",
    "n5.md": "# About\n\nThe acme service.\n",
}


@pytest.mark.parametrize("folder", ["acme", "releases"])
def test_a_dropped_folders_name_weighs_as_rag_index_of_that_folder_does(app, tmp_path, folder):
    root = tmp_path / folder
    root.mkdir()
    for name, text in FOLDER_DOCS.items():
        (root / name).write_text(text)
    rag("index", str(root))
    app.page.set_input_files("#pick-folder", str(root))
    app.wait("JSON.parse(ragStats()).totalDocs === 6")
    app.page.evaluate("window.ragweb.idle()")
    for q in ("acme token refresh", "refresh token expiry"):
        native = json.loads(rag("query", "-d", str(root), "-q", q, "--json", "-k", "5"))
        browser = app.query(q, 5)
        assert [(r["path"].removeprefix(f"{folder}/"), r["score"]) for r in browser["results"]] == \
            [(r["path"], r["score"]) for r in native["results"]], q
        native = json.loads(rag("pack", "-d", str(root), "-q", q, "-b", "60"))
        browser = app.pack(q, 60)
        assert [(s["path"].removeprefix(f"{folder}/"), s["range"]) for s in browser["snippets"]] == \
            [(s["path"], s["range"]) for s in native["snippets"]], q
        assert (browser["evidence"], browser["evidence_score"]) == (native["evidence"], native["evidence_score"]), q


def test_files_written_together_rank_as_rag_index_ranks_them(app, tmp_path):
    # A file a microsecond newer than another outranked it in `rag pack` (recency read its
    # time to the nanosecond), while the page, whose file times are whole milliseconds, ranked
    # them by path: both now count a file's age in whole days
    root = tmp_path / "copies"
    root.mkdir()
    for name, word, when in (("a.md", "alpha", "1796272226.100000100"), ("b.md", "gamma", "1796272226.100000900")):
        (root / name).write_text(f"# Retry\n\nRetries back off with jitter {word}.\n")
        subprocess.run(["touch", "-d", f"@{when}", str(root / name)], check=True)
    rag("index", str(root))
    app.page.set_input_files("#pick-folder", str(root))
    app.wait("JSON.parse(ragStats()).totalDocs === 2")
    app.page.evaluate("window.ragweb.idle()")
    for flags, options in (((), None), (("--no-compact",), {"compact": False})):
        native = json.loads(rag("pack", "-d", str(root), "-q", "retry jitter", *flags))
        browser = app.call("(q, o) => ragPack(q, 4000, o)", "retry jitter", options)
        assert [(s["path"].removeprefix("copies/"), s["score"]) for s in browser["snippets"]] == \
            [(s["path"], s["score"]) for s in native["snippets"]] == [("a.md", 0.4763), ("b.md", 0.4763)], flags

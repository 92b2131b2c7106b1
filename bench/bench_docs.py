#!/usr/bin/env python3
"""Speed on a big documentation folder, natively and in the page.

The folder is the Python docs' HTML build as Debian ships it (``python3-doc``:
``/usr/share/doc/python3.11/html``, 1,048 files, 66 MB: pages, their ``_sources`` twins,
indexes, scripts), selected as ``rag index`` selects (default includes and excludes,
binary, size and minified checks). The questions are those of the ``pydoc-folder`` and
``pydoc-guide-folder`` evaluation sets (`eval_docs_qa.py`).

Measured, in one run:
- ragweb natively: building the index in memory (``Engine.add_document`` + flush), then
  ``search`` (top 10; with numpy loaded, and without, as in the page) and
  ``pack`` (budget 1,400; normal and lean) per question; and a cold ``rag index`` of the
  folder as a user runs it (worker processes read and chunk the files), and in one process;
- the peer: ``bm25s`` (pip) indexing the same chunk texts (each chunk's text as ragweb
  analyses it: an HTML page's view, headings above prepended) with the same analyser,
  and retrieving the top 10 per question;
- with ``--browser``: the same files through ``ragIndex`` in headless Chromium (Pyodide),
  the IndexedDB save, the restore after a reload, ``ragQuery`` and ``ragPack``.

    .venv/bin/python bench/bench_docs.py [--browser] [--docs DIR]

Results: a table on stdout and ``bench/out/docs.json``. Benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ragweb_path  # noqa: E402

SRC = ragweb_path.use_src()

import corpus  # noqa: E402
import eval_docs_qa as ed  # noqa: E402
from bench_browser import pct  # noqa: E402

QUESTION_SETS = ("pydoc-folder", "pydoc-guide-folder")
BUDGET = 1400
TOP_K = 10


def timed(fn, items) -> list[float]:
    out = []
    for x in items:
        t = time.perf_counter()
        fn(x)
        out.append((time.perf_counter() - t) * 1000)
    return out


def documents(root: Path) -> list[tuple[str, str]]:
    """(path, text) of every file `rag index` would index under ``root``."""
    from ragweb.config import default_config
    from ragweb.files import iter_files, read_text_file

    cfg = default_config()["index"]
    out = []
    for entry in iter_files(root, cfg["includes"], cfg["excludes"], cfg["gitignore"], []):
        res = read_text_file(entry.abspath, cfg["max_file_bytes"])
        if res.text is not None:
            out.append((entry.path, res.text))
    return out


def native(docs, questions) -> dict:
    from ragweb import accel
    from ragweb.engine import Engine

    t0 = time.perf_counter()
    eng = Engine.memory()
    for path, text in docs:
        eng.add_document(path, text)
    eng.flush()
    build = time.perf_counter() - t0
    import numpy  # noqa: F401  (loaded: a long-lived process with numpy, as the bm25s peer has)
    search = timed(lambda q: eng.search(q, top_k=TOP_K), questions)
    accel.ENABLED = False  # the pure-Python scoring the page runs (same results)
    pure = timed(lambda q: eng.search(q, top_k=TOP_K), questions)
    accel.ENABLED = True
    pack = timed(lambda q: eng.pack(q, BUDGET), questions)
    lean = timed(lambda q: eng.pack(q, BUDGET, lean=True), questions)
    return {"build_s": build, "chunks": eng.n_chunks, "db_mb": len(eng.to_bytes()) / 1e6,
            "numpy": accel.numpy() is not None,
            "search_p50_ms": pct(search, 50), "search_p90_ms": pct(search, 90),
            "search_pure_p50_ms": pct(pure, 50), "search_pure_p90_ms": pct(pure, 90),
            "pack_p50_ms": pct(pack, 50), "pack_p90_ms": pct(pack, 90), "pack_max_ms": max(pack),
            "lean_p50_ms": pct(lean, 50), "lean_p90_ms": pct(lean, 90)}


def peer_bm25s(texts, questions) -> dict:
    import bm25s

    from ragweb.analysis import Analyzer

    an = Analyzer()
    t0 = time.perf_counter()
    tokens = [[t for t, n in an.term_counts(x).items() for _ in range(n)] for x in texts]
    ret = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    ret.index(tokens, show_progress=False)
    build = time.perf_counter() - t0
    times = timed(lambda q: ret.retrieve([an.query_terms(q) or ["the"]], k=TOP_K, show_progress=False),
                  questions)
    return {"build_s": build, "search_p50_ms": pct(times, 50), "search_p90_ms": pct(times, 90)}


BATCH_JS = """(docs) => { let n = 0; const t = performance.now();
  for (const [p, x] of docs) { const r = JSON.parse(ragIndex(p, x)); if (!r.success) throw new Error(p + ': ' + r.error); n += r.chunks; }
  return [n, performance.now() - t]; }"""
TIMES_JS = """(args) => { const [qs, fn] = args; const out = [];
  for (const q of qs) { const t = performance.now();
    const r = fn === 'query' ? ragQuery(q, %d) : ragPack(q, %d, fn === 'lean' ? {lean: true} : {});
    if (JSON.parse(r).error) throw new Error(r); out.push(performance.now() - t); } return out; }""" % (TOP_K, BUDGET)


def browser(docs, questions) -> dict:
    import bench_browser as bb
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="ragweb-bench-docs-") as tmp:
        site = bb.build_bench_site(Path(tmp) / "site")
        server, base = bb.serve(site)
        try:
            with sync_playwright() as p:
                ctx = p.chromium.launch_persistent_context(str(Path(tmp) / "profile"),
                                                           executable_path=bb.CHROMIUM, args=bb.ARGS)
                bb.offline(ctx, base)
                page = ctx.pages[0]
                page.set_default_timeout(1_800_000)
                page.goto(base + "/")
                bb.ready_time(page)
                page.evaluate("ragClear()")
                add_ms, chunks, batch, size = 0.0, 0, [], 0
                for i, doc in enumerate(docs):  # in batches: one evaluate call per ~4 MB
                    batch.append(doc)
                    size += len(doc[1])
                    if size > 4_000_000 or i == len(docs) - 1:
                        n, ms = page.evaluate(BATCH_JS, batch)
                        chunks, add_ms, batch, size = chunks + n, add_ms + ms, [], 0
                t0 = time.perf_counter()
                page.evaluate("ragStats()")  # flushes the engine's write buffer
                add_ms += (time.perf_counter() - t0) * 1000
                saved = json.loads(page.evaluate("ragFlush()"))
                page.reload()
                info = bb.ready_time(page)
                assert info["restored"], info
                out = {"index_s": add_ms / 1000, "chunks": chunks, "save_s": saved["ms"] / 1000,
                       "saved_mb": saved["bytes"] / 1e6, "restore_s": info["restoreMs"] / 1000,
                       "ready_with_restore_s": info["readyMs"] / 1000}
                for fn in ("query", "pack", "lean"):
                    t = page.evaluate(TIMES_JS, [questions, fn])
                    out[f"{fn}_p50_ms"], out[f"{fn}_p90_ms"] = pct(t, 50), pct(t, 90)
                ctx.close()
        finally:
            server.shutdown()
    return out


def cli_index(docs_dir: Path) -> dict:
    """Cold ``rag index`` of a folder that links to ``docs_dir`` (the command a user runs),
    with worker processes (the default) and in one process (``index.workers: 1``)."""
    import shutil
    import subprocess
    rag = Path(sys.executable).with_name("rag")
    cmd = [str(rag)] if rag.exists() else [sys.executable, "-m", "ragweb"]
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        root.mkdir()
        (root / docs_dir.name).symlink_to(docs_dir.resolve())
        single = Path(tmp) / "one-process.yaml"
        single.write_text("index:\n  workers: 1\n")
        for key, extra in (("workers_s", []), ("one_process_s", ["--config", str(single)])):
            shutil.rmtree(root / ".rag", ignore_errors=True)
            t = time.perf_counter()
            r = subprocess.run(cmd + ["index", str(root)] + extra, capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": str(SRC)})  # (the code measured in-process)
            out[key] = time.perf_counter() - t
            if r.returncode != 0:
                raise SystemExit(f"rag index failed: {r.stderr[-2000:]}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=Path, default=ed.PYDOC, help=f"the docs folder (default {ed.PYDOC})")
    ap.add_argument("--browser", action="store_true", help="also through the page in headless Chromium")
    ap.add_argument("--out", type=Path, default=HERE / "out" / "docs.json")
    args = ap.parse_args()
    if not args.docs.is_dir():
        raise SystemExit(f"no docs at {args.docs}: `apt-get install python3-doc` ships them (make eval does)")
    docs = documents(args.docs)
    questions = [c["question"] for s in QUESTION_SETS for c in ed.load_cases(ed.SETS[s][1], s)[0]]
    mchars = sum(len(t) for _, t in docs) / 1e6
    print(f"docs: {args.docs}, {len(docs)} files, {mchars:.1f} M characters; {len(questions)} questions", flush=True)
    res = {"docs": str(args.docs), "files": len(docs), "mchars": mchars, "questions": len(questions)}
    res["ragweb"] = native(docs, questions)
    res["bm25s"] = peer_bm25s([t for _, t in corpus.chunk_texts_of(docs)], questions)
    res["cli"] = cli_index(args.docs)
    if args.browser:
        res["browser"] = browser(docs, questions)
    r, b = res["ragweb"], res["bm25s"]
    print(f"\n{'':34} {'ragweb':>10} {'bm25s':>10} {'ratio':>7}")
    print(f"{'index build (s)':34} {r['build_s']:>10.2f} {b['build_s']:>10.2f} {r['build_s'] / b['build_s']:>6.2f}x")
    c = res["cli"]
    print(f"{'rag index, cold, whole process (s)':34} {c['workers_s']:>10.2f} {'':>10} {c['workers_s'] / b['build_s']:>6.2f}x"
          f"   (one process: {c['one_process_s']:.2f} s = {c['one_process_s'] / b['build_s']:.2f}x)")
    print(f"{'search top 10, p50 (ms)':34} {r['search_p50_ms']:>10.1f} {b['search_p50_ms']:>10.1f} "
          f"{r['search_p50_ms'] / b['search_p50_ms']:>6.2f}x")
    print(f"{'search top 10, p90 (ms)':34} {r['search_p90_ms']:>10.1f} {b['search_p90_ms']:>10.1f}")
    print(f"{'search, no numpy, p50 / p90 (ms)':34} {r['search_pure_p50_ms']:>6.1f} / {r['search_pure_p90_ms']:.1f}")
    print(f"{'pack 1,400 p50 / p90 / max (ms)':34} {r['pack_p50_ms']:>6.1f} / {r['pack_p90_ms']:.1f} / {r['pack_max_ms']:.0f}")
    print(f"{'pack --lean p50 / p90 (ms)':34} {r['lean_p50_ms']:>6.1f} / {r['lean_p90_ms']:.1f}")
    print(f"{'chunks, index size':34} {r['chunks']:>10} {r['db_mb']:>9.1f} MB")
    if args.browser:
        w = res["browser"]
        print(f"\npage: ragIndex {w['index_s']:.2f} s ({w['index_s'] / r['build_s']:.2f}x native), "
              f"IndexedDB save {w['save_s']:.2f} s ({w['saved_mb']:.0f} MB), restore {w['restore_s']:.2f} s "
              f"(ragReady {w['ready_with_restore_s']:.2f} s)")
        print(f"page: ragQuery p50 {w['query_p50_ms']:.1f} ms (p90 {w['query_p90_ms']:.1f}), ragPack p50 "
              f"{w['pack_p50_ms']:.1f} ms (p90 {w['pack_p90_ms']:.1f}), lean p50 {w['lean_p50_ms']:.1f} ms")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
    print(f"\nwritten: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

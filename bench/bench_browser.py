#!/usr/bin/env python3
"""Browser benchmark: ragweb on Pyodide in headless Chromium, with MiniSearch in the same run.

Measures (issue 3, item 8), against these targets:
- time to ``window.ragReady``, cold (new browser, empty profile and cache) and warm (reload): <= 3 s cold
- indexing the stdlib corpus (`corpus.py`, ~734 files / 12 MB) through ``ragIndex``:
  <= 2x the native ``rag index`` time on the same files, in one process as the page is
  (``index.workers: 1``; the time with worker processes, as ``rag index`` runs by default,
  is printed beside it)
- ``ragQuery`` p50 over the seeded code-search questions: <= 5 ms
- restore after reload (IndexedDB -> in-memory SQLite, after Pyodide has booted): <= 1 s
- MiniSearch (npm ``minisearch``, pinned in package.json) indexing the same chunk texts
  and answering the same questions, in the same page.

    .venv/bin/python bench/bench_browser.py            # full run
    .venv/bin/python bench/bench_browser.py --quick    # 1/4 of the files, 1 cold boot

Results: a table on stdout and ``bench/out/browser.json``. Benchmarks are not tests.
Needs ``npm install`` (Pyodide, MiniSearch) and Debian's ``/usr/bin/chromium``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import ragweb_path  # noqa: E402

SRC = ragweb_path.use_src()

import corpus  # noqa: E402

CHROMIUM = os.environ.get("RAGWEB_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]
TOP_K = 10
TARGETS = {"ready_cold_s": 3.0, "index_ratio": 2.0, "query_p50_ms": 5.0, "restore_s": 1.0}
MINISEARCH_UMD = REPO / "node_modules" / "minisearch" / "dist" / "umd" / "index.js"

INDEX_JS = """async (docs) => {
    const t0 = performance.now();
    let chunks = 0;
    for (const [path, text] of docs) {
        const r = JSON.parse(ragIndex(path, text));
        if (!r.success) throw new Error(`${path}: ${r.error}`);
        chunks += r.chunks;
    }
    const added = performance.now() - t0;
    const stats = JSON.parse(ragStats());          // flushes the engine's write buffer
    const total = performance.now() - t0;
    const f0 = performance.now();
    const saved = JSON.parse(await ragFlush());
    return {add_ms: added, total_ms: total, chunks, stats_chunks: stats.totalChunks,
            save_ms: performance.now() - f0, saved};
}"""

QUERY_JS = """(queries) => {
    const times = [], hits = [];
    for (const q of queries) {
        const t = performance.now();
        const r = JSON.parse(ragQuery(q, %d));
        times.push(performance.now() - t);
        hits.push(r.results ? r.results.length : -1);
    }
    return {times, hits};
}""" % TOP_K

DROP_JS = """async (docs) => {
    ragClear();
    const dt = new DataTransfer();
    for (const [path, text] of docs) dt.items.add(new File([text], path));
    const t0 = performance.now();
    document.querySelector('[data-testid="dropzone"]').dispatchEvent(
        new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
    await window.ragweb.idle();
    const ms = performance.now() - t0;
    return {ms, docs: JSON.parse(ragStats()).totalDocs};
}"""

MINISEARCH_JS = """(args) => {
    const [chunks, queries] = args;
    const docs = chunks.map(([path, text], id) => ({id, path, text}));
    const t0 = performance.now();
    const ms = new MiniSearch({fields: ['text', 'path'], storeFields: []});
    ms.addAll(docs);
    const build = performance.now() - t0;
    const times = [], hits = [];
    for (const q of queries) {
        const t = performance.now();
        const r = ms.search(q).slice(0, %d);
        times.push(performance.now() - t);
        hits.push(r.length);
    }
    return {build_ms: build, times, hits, terms: ms.termCount};
}""" % TOP_K


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))] if s else float("nan")


def build_bench_site(out: Path) -> Path:
    from ragweb import webbuild
    site = webbuild.build_site(out)
    if not MINISEARCH_UMD.is_file():
        raise SystemExit("MiniSearch is missing: run `npm install` (package.json pins it)")
    shutil.copy2(MINISEARCH_UMD, site / "minisearch.js")
    return site


def serve(site: Path):
    from ragweb import webbuild
    server = webbuild.make_server(site, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def offline(context, base):
    context.route("**/*", lambda r: r.continue_() if r.request.url.startswith(base + "/") else r.abort())


def ready_time(page) -> dict:
    """Boot info of window.ragReady plus the time from navigation start to its resolution."""
    # (not wait_for_function: the page's CSP forbids the eval it uses)
    while not page.evaluate("typeof window.ragReady !== 'undefined'"):
        time.sleep(0.01)
    return page.evaluate("window.ragReady.then(info => ({...info, readyMs: performance.now()}))")


def native_index_time(files: list[Path], reps: int, workers: int = 1) -> dict:
    """`rag index` (the CLI, a fresh process) on a copy of the same files, with
    ``index.workers`` = ``workers`` (1: one process, as the page); median and every run."""
    root = corpus.stdlib_root()
    walls, inner = [], []
    for _ in range(reps):
        with tempfile.TemporaryDirectory(prefix="ragweb-bench-") as tmp:
            for p in files:
                dest = Path(tmp) / "tree" / p.relative_to(root)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, dest)
            config = Path(tmp) / "rag.yaml"  # (outside the tree: not indexed)
            config.write_text(f"index:\n  workers: {workers}\n")
            env = {**os.environ, "PYTHONPATH": str(SRC)}
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "ragweb", "index", str(Path(tmp) / "tree"),
                                   "--config", str(config)], env=env, capture_output=True, text=True)
            walls.append(time.perf_counter() - t)
            if proc.returncode != 0:
                raise SystemExit(f"rag index failed: {proc.stderr}")
            # "...; 7614 chunks written, 7614 in index; 3.21 s"
            inner.append(float(proc.stdout.strip().rsplit(";", 1)[-1].split()[0]))
    return {"wall_s": statistics.median(walls), "reported_s": statistics.median(inner),
            "wall_s_all": [round(w, 3) for w in walls], "reported_s_all": inner}


def machine() -> dict:
    cpu = corpus.cpu_model()
    chromium = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.strip()
    from ragweb import webbuild
    return {"nproc": os.cpu_count(), "cpu": cpu, "platform": platform.platform(),
            "python": platform.python_version(), "chromium": chromium,
            "pyodide": webbuild.PYODIDE_VERSION,
            "minisearch": json.loads((REPO / "node_modules/minisearch/package.json").read_text())["version"]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1/4 of the files, fewer runs")
    ap.add_argument("--cold", type=int, default=3, help="cold boots to time (default 3)")
    ap.add_argument("--warm", type=int, default=3, help="warm reloads to time (default 3)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--native-reps", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "out" / "browser.json"))
    args = ap.parse_args(argv)
    if args.quick:
        args.cold, args.warm, args.native_reps = 1, 1, 1

    from playwright.sync_api import sync_playwright

    files = corpus.stdlib_files()
    if args.quick:
        files = files[::4]
    docs = corpus.documents(files)
    chunks = corpus.chunk_texts(files)
    queries = corpus.make_queries(files, args.queries)
    mb = corpus.corpus_bytes(files) / 1e6
    print(f"corpus: {len(files)} files, {mb:.1f} MB, {len(chunks)} chunks, {len(queries)} queries", flush=True)

    print("native `rag index` ...", flush=True)
    native = native_index_time(files, args.native_reps)
    native_workers = native_index_time(files, args.native_reps, workers=0)

    result: dict = {"machine": machine(), "quick": args.quick,
                    "corpus": {"files": len(files), "mb": round(mb, 3), "chunks": len(chunks),
                               "queries": len(queries)},
                    "native_rag_index": native, "native_rag_index_workers": native_workers,
                    "targets": TARGETS}
    with tempfile.TemporaryDirectory(prefix="ragweb-bench-site-") as tmp:
        site = build_bench_site(Path(tmp) / "site")
        server, base = serve(site)
        launch = {"executable_path": CHROMIUM, "args": ARGS}
        try:
            with sync_playwright() as p:
                # Cold: a new browser with a new profile and an empty cache each time.
                cold = []
                for i in range(args.cold):
                    browser = p.chromium.launch(**launch)
                    ctx = browser.new_context()
                    offline(ctx, base)
                    page = ctx.new_page()
                    page.goto(base + "/")
                    cold.append(ready_time(page))
                    browser.close()
                    print(f"  cold boot {i + 1}: {cold[-1]['readyMs'] / 1000:.2f} s", flush=True)

                # One persistent profile for the rest: warm reloads, indexing, queries, restore.
                profile = Path(tmp) / "profile"
                ctx = p.chromium.launch_persistent_context(str(profile), **launch)
                offline(ctx, base)
                page = ctx.pages[0]
                page.set_default_timeout(600_000)
                page.goto(base + "/")
                ready_time(page)
                warm = []
                for i in range(args.warm):
                    page.reload()
                    warm.append(ready_time(page))
                    print(f"  warm boot {i + 1}: {warm[-1]['readyMs'] / 1000:.2f} s", flush=True)

                print("ragIndex of the corpus ...", flush=True)
                page.evaluate("ragClear()")
                idx = page.evaluate(INDEX_JS, docs)
                print(f"  {idx['total_ms'] / 1000:.2f} s ({idx['chunks']} chunks); "
                      f"save to IndexedDB {idx['save_ms'] / 1000:.2f} s", flush=True)
                page.evaluate(QUERY_JS, queries[:10])       # warm-up (first-use imports)
                q = page.evaluate(QUERY_JS, queries)

                restore = []
                for i in range(max(1, args.warm)):
                    page.reload()
                    info = ready_time(page)
                    assert info["restored"], info
                    restore.append(info)
                    print(f"  restore {i + 1}: {info['restoreMs'] / 1000:.2f} s "
                          f"(ready {info['readyMs'] / 1000:.2f} s)", flush=True)
                q_after = page.evaluate(QUERY_JS, queries)

                print("drop of the corpus on the page ...", flush=True)
                drop = page.evaluate(DROP_JS, docs)
                print(f"  {drop['ms'] / 1000:.2f} s ({drop['docs']} files)", flush=True)

                page.add_script_tag(url=base + "/minisearch.js")
                mini = page.evaluate(MINISEARCH_JS, [chunks, queries])
                ctx.close()
        finally:
            server.shutdown()

    med = statistics.median
    browser_index_s = idx["total_ms"] / 1000
    result["ragweb"] = {
        "ready_cold_s": med(c["readyMs"] for c in cold) / 1000,
        "ready_cold_s_all": [round(c["readyMs"] / 1000, 3) for c in cold],
        "boot_cold_s_all": [round(c["bootMs"] / 1000, 3) for c in cold],
        # the page's own boot phases, medians of the cold boots (ms; `phases` of ragReady):
        # Pyodide's start (from navigation), the wheels, importing ragweb, the IndexedDB read
        "cold_phases_ms": {k: med(c["phases"][k] for c in cold if k in c.get("phases", {}))
                           for k in ("pyodide", "wheels", "import", "storeRead")
                           if any(k in c.get("phases", {}) for c in cold)},
        "ready_warm_s": med(w["readyMs"] for w in warm) / 1000 if warm else None,
        "ready_warm_s_all": [round(w["readyMs"] / 1000, 3) for w in warm],
        "index_s": browser_index_s,
        "index_add_s": idx["add_ms"] / 1000,
        "chunks": idx["stats_chunks"],
        "index_ratio_vs_native": browser_index_s / native["reported_s"],
        "save_s": idx["save_ms"] / 1000,
        "saved_mb": idx["saved"].get("bytes", 0) / 1e6,
        "query_p50_ms": pct(q["times"], 50),
        "query_p95_ms": pct(q["times"], 95),
        "query_p50_ms_after_restore": pct(q_after["times"], 50),
        "hits_mean": sum(q["hits"]) / len(q["hits"]),
        "restore_s": med(r["restoreMs"] for r in restore) / 1000,
        "restore_s_all": [round(r["restoreMs"] / 1000, 3) for r in restore],
        "store_read_s": med(r["storeReadMs"] for r in restore) / 1000,
        "ready_with_restore_s": med(r["readyMs"] for r in restore) / 1000,
        "drop_index_s": drop["ms"] / 1000,
    }
    result["minisearch"] = {
        "index_s": mini["build_ms"] / 1000,
        "query_p50_ms": pct(mini["times"], 50),
        "query_p95_ms": pct(mini["times"], 95),
        "hits_mean": sum(mini["hits"]) / len(mini["hits"]),
        "terms": mini["terms"],
    }
    r = result["ragweb"]
    checks = {
        "ready_cold_s": r["ready_cold_s"] <= TARGETS["ready_cold_s"],
        "index_ratio": r["index_ratio_vs_native"] <= TARGETS["index_ratio"],
        "query_p50_ms": r["query_p50_ms"] <= TARGETS["query_p50_ms"],
        "restore_s": r["restore_s"] <= TARGETS["restore_s"],
    }
    result["meets_targets"] = checks

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")

    ok = lambda k: "ok" if checks[k] else "MISSED"  # noqa: E731
    print()
    print(f"machine: {result['machine']['cpu']}, {result['machine']['nproc']} cores; "
          f"{result['machine']['chromium']}; Pyodide {result['machine']['pyodide']}")
    print(f"corpus: {len(files)} files, {mb:.1f} MB, {r['chunks']} chunks; {len(queries)} queries, top {TOP_K}")
    print(f"{'measure':44} {'value':>10}  target")
    print(f"{'ragReady cold (median of %d)' % len(cold):44} {r['ready_cold_s']:>9.2f}s  <= 3 s {ok('ready_cold_s')}")
    if r["cold_phases_ms"]:
        ph = r["cold_phases_ms"]
        print(f"{'  of it: Pyodide / wheels / import ragweb':44} " + " / ".join(
            f"{ph[k] / 1000:.2f}" for k in ("pyodide", "wheels", "import") if k in ph) + " s")
    if warm:
        print(f"{'ragReady warm (reload, median of %d)' % len(warm):44} {r['ready_warm_s']:>9.2f}s")
    print(f"{'native `rag index`, one process (reported / wall)':44} {native['reported_s']:>9.2f}s  "
          f"({native['wall_s']:.2f} s wall; with workers {native_workers['reported_s']:.2f} s)")
    print(f"{'ragIndex of the corpus (+ engine flush)':44} {r['index_s']:>9.2f}s  "
          f"<= 2x native: {r['index_ratio_vs_native']:.2f}x {ok('index_ratio')}")
    print(f"{'  the same files dropped on the page (UI)':44} {r['drop_index_s']:>9.2f}s")
    print(f"{'save to IndexedDB (%.1f MB)' % r['saved_mb']:44} {r['save_s']:>9.2f}s")
    print(f"{'ragQuery p50 / p95':44} {r['query_p50_ms']:>8.2f}ms  / {r['query_p95_ms']:.2f} ms; "
          f"<= 5 ms {ok('query_p50_ms')}")
    print(f"{'restore after reload (median)':44} {r['restore_s']:>9.2f}s  <= 1 s {ok('restore_s')}")
    print(f"{'  IndexedDB read (during the boot)':44} {r['store_read_s']:>9.2f}s")
    print(f"{'  ragReady incl. restore':44} {r['ready_with_restore_s']:>9.2f}s")
    m = result["minisearch"]
    print(f"{'MiniSearch addAll (same chunks)':44} {m['index_s']:>9.2f}s")
    print(f"{'MiniSearch search p50 / p95':44} {m['query_p50_ms']:>8.2f}ms  / {m['query_p95_ms']:.2f} ms")
    print(f"\nwritten: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

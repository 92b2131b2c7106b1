#!/usr/bin/env python3
"""Native benchmark: ragweb against a bare dict index, rank_bm25 and bm25s (issue 2, item 14).

Corpus: the running interpreter's standard library (`corpus.py`), ~734 files / 12 MB;
200 seeded code-search questions. Every system gets the same chunk texts (ragweb's own
chunking) and the same analyzer (`ragweb.analysis.Analyzer`: Snowball with a memo), and
its analysis time is counted in its build time. Each run of each system is its own
subprocess, so peak RSS is per system; medians over ``--reps`` runs.

    .venv/bin/python bench/bench_native.py            # full run (< 5 min on 2 cores)
    .venv/bin/python bench/bench_native.py --quick    # 1/4 of the files, 1 run
    .venv/bin/python bench/bench_native.py --profile  # cProfile of ragweb's index/query

Results: a table on stdout and ``bench/out/native.json``. Benchmarks are not tests.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import platform
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
from ragweb.config import DEFAULTS  # noqa: E402

K1, B = DEFAULTS["index"]["k1"], DEFAULTS["index"]["b"]
TOP_K = 10
PACK_BUDGET = 4000

# name -> (label, data it needs, extra args)
SYSTEMS = {
    "baseline": ("interpreter + corpus loaded (no index)", "chunks", {}),
    "floor": ("floor: dict index, Snowball+memo", "chunks", {"stem": True}),
    "floor_plain": ("floor: dict index, no stemming", "chunks", {"stem": False}),
    "floor_nogc": ("floor, cyclic GC paused in build", "chunks", {"stem": True, "gc_off": True}),
    "rank_bm25": ("rank_bm25 BM25Okapi (Snowball)", "chunks", {}),
    "bm25s": ("bm25s (numpy, Snowball)", "chunks", {}),
    "ragweb_mem": ("ragweb Engine.memory()", "docs", {"copies": 1}),
    "ragweb_mem_pure": ("ragweb Engine.memory(), no numpy", "docs", {"copies": 1, "pure": True}),
    "ragweb_file": ("ragweb Engine.open(file), 1 txn", "docs", {}),
    "ragweb_mem_2x": ("ragweb Engine.memory(), 2x corpus", "docs", {"copies": 2}),
}


# ======================================================================================
# workers: each runs in its own subprocess and prints one JSON line
# ======================================================================================
def _pct(values: list[float], p: float) -> float:
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[k]


def _time_queries(fn, queries) -> tuple[list[float], list]:
    times, results = [], []
    for q in queries:
        t = time.perf_counter()
        r = fn(q)
        times.append((time.perf_counter() - t) * 1000)
        results.append(r)
    return times, results


def _qstats(prefix: str, times: list[float]) -> dict:
    return {f"{prefix}_p50_ms": _pct(times, 50), f"{prefix}_p95_ms": _pct(times, 95)}


def worker_baseline(data, queries, **_):
    return {"build_s": 0.0, "n_docs": len(data)}


def worker_floor(data, queries, stem=True, gc_off=False, **_):
    """The floor: term -> [(doc, tf)] lists in plain dicts; BM25 with heapq.nlargest."""
    import heapq
    import math
    from operator import itemgetter

    from ragweb.analysis import Analyzer

    if gc_off:
        gc.disable()
    t0 = time.perf_counter()
    an = Analyzer(stemming=stem)
    post: dict[str, list[tuple[int, int]]] = {}
    lens: list[int] = []
    for d, text in enumerate(data):
        counts = an.term_counts(text)
        lens.append(sum(counts.values()))
        for t, tf in counts.items():
            p = post.get(t)
            if p is None:
                post[t] = [(d, tf)]
            else:
                p.append((d, tf))
    n = len(lens)
    avgdl = sum(lens) / n
    norm = [K1 * (1 - B + B * ln / avgdl) for ln in lens]
    build = time.perf_counter() - t0
    gc.enable()

    def query(q):
        scores: dict[int, float] = {}
        get = scores.get
        for t in an.query_terms(q):
            plist = post.get(t)
            if not plist:
                continue
            w = math.log((n - len(plist) + 0.5) / (len(plist) + 0.5) + 1.0) * (K1 + 1)
            for d, tf in plist:
                scores[d] = get(d, 0.0) + w * tf / (tf + norm[d])
        return [d for d, _ in heapq.nlargest(TOP_K, scores.items(), key=itemgetter(1))]

    times, res = _time_queries(query, queries)
    return {"build_s": build, **_qstats("query", times), "top": res[:50], "n_terms": len(post)}


def _tokenize_all(data, an):
    # Bag of words with repeats from the same analysis as the floor (BM25 needs only tf).
    return [[t for t, n in an.term_counts(text).items() for _ in range(n)] for text in data]


def worker_rank_bm25(data, queries, **_):
    import numpy as np
    from rank_bm25 import BM25Okapi

    from ragweb.analysis import Analyzer

    t0 = time.perf_counter()
    an = Analyzer()
    bm = BM25Okapi(_tokenize_all(data, an), k1=K1, b=B)
    build = time.perf_counter() - t0

    def query(q):
        s = bm.get_scores(an.query_terms(q))
        top = np.argpartition(-s, TOP_K)[:TOP_K]
        return [int(i) for i in top[np.argsort(-s[top], kind="stable")]]

    times, res = _time_queries(query, queries)
    return {"build_s": build, **_qstats("query", times), "top": res[:50]}


def worker_bm25s(data, queries, **_):
    import bm25s

    from ragweb.analysis import Analyzer

    t0 = time.perf_counter()
    an = Analyzer()
    ret = bm25s.BM25(k1=K1, b=B, method="lucene")
    ret.index(_tokenize_all(data, an), show_progress=False)
    build = time.perf_counter() - t0

    def query(q):
        docs, _ = ret.retrieve([an.query_terms(q)], k=TOP_K, show_progress=False)
        return [int(i) for i in docs[0]]

    times, res = _time_queries(query, queries)
    return {"build_s": build, **_qstats("query", times), "top": res[:50]}


def _ragweb_queries(eng, queries) -> dict:
    st, hits = _time_queries(lambda q: eng.search(q, top_k=TOP_K), queries)
    pt, packs = _time_queries(lambda q: eng.pack(q, PACK_BUDGET), queries)
    return {**_qstats("query", st), **_qstats("pack", pt),
            "hits_mean": statistics.mean(len(h) for h in hits),
            "pack_used_tokens_mean": statistics.mean(p["used_tokens"] for p in packs)}


def worker_ragweb_mem(data, queries, copies=1, pure=False, **_):
    from ragweb import accel
    from ragweb.engine import Engine

    accel.ENABLED = not pure  # numpy (when installed) only speeds up scoring: same results

    t0 = time.perf_counter()
    eng = Engine.memory()
    for k in range(copies):
        prefix = f"copy{k}/" if copies > 1 else ""
        for path, text in data:
            eng.add_document(prefix + path, text)
    eng.flush()
    build = time.perf_counter() - t0
    out = {"build_s": build, "n_chunks": eng.n_chunks}
    if copies == 1:
        out.update(_ragweb_queries(eng, queries))
    return out


def worker_ragweb_file(data, queries, **_):
    from ragweb.engine import Engine

    with tempfile.TemporaryDirectory(prefix="ragbench-") as tmp:
        db = Path(tmp) / "index.db"
        t0 = time.perf_counter()
        eng = Engine.open(db)
        with eng.transaction():
            for path, text in data:
                eng.add_document(path, text)
        build = time.perf_counter() - t0
        out = {"build_s": build, "n_chunks": eng.n_chunks, "db_mb": db.stat().st_size / 1e6}
        out.update(_ragweb_queries(eng, queries))
        eng.close()
    return out


def worker_scale(data, queries, n=10000, **_):
    """Ingest n synthetic 30-word documents, then replace all of them (same ids)."""
    from ragweb.engine import Engine

    vocab = corpus.synthetic_vocab()
    first = corpus.synthetic_docs(n, vocab=vocab, seed=corpus.SYNTHETIC_SEED)
    second = corpus.synthetic_docs(n, vocab=vocab, seed=corpus.SYNTHETIC_SEED + 1)
    eng = Engine.memory()
    t0 = time.perf_counter()
    for i, text in enumerate(first):
        eng.add_document(f"doc{i}", text)
    eng.flush()
    ingest = time.perf_counter() - t0
    t0 = time.perf_counter()
    for i, text in enumerate(second):
        eng.add_document(f"doc{i}", text)
    eng.flush()
    reingest = time.perf_counter() - t0
    assert eng.n_chunks == n, (eng.n_chunks, n)
    return {"build_s": ingest, "reingest_s": reingest, "n": n}


WORKERS = {"baseline": worker_baseline, "floor": worker_floor,
           "rank_bm25": worker_rank_bm25, "bm25s": worker_bm25s, "ragweb_mem": worker_ragweb_mem,
           "ragweb_mem_pure": worker_ragweb_mem,
           "ragweb_file": worker_ragweb_file, "ragweb_mem_2x": worker_ragweb_mem,
           "scale": worker_scale}


def worker_main(args) -> None:
    data = pickle.loads(Path(args.data).read_bytes()) if args.data else None
    queries = json.loads(Path(args.queries).read_text()) if args.queries else []
    kwargs = json.loads(args.kwargs or "{}")
    result = WORKERS[args.worker](data, queries, **kwargs)
    print(json.dumps(result))


# ======================================================================================
# parent: runs workers and the CLI, prints the table, writes JSON
# ======================================================================================
def run_child(cmd, cwd=None, env=None) -> dict:
    """Run ``cmd``; wall time, exit code, peak RSS (MB) of that process, stdout/stderr."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {"wall_s": wall, "rc": p.returncode, "rss_mb": ru.ru_maxrss / 1024,
                "cpu_s": ru.ru_utime + ru.ru_stime,
                "stdout": out.read().decode("utf-8", "replace"),
                "stderr": err.read().decode("utf-8", "replace")}


def run_worker(name, data_file, queries_file, kwargs) -> dict:
    worker = "floor" if name.startswith("floor") else name
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", worker,
           "--queries", str(queries_file), "--kwargs", json.dumps(kwargs)]
    if data_file:
        cmd += ["--data", str(data_file)]
    r = run_child(cmd)
    if r["rc"] != 0:
        raise RuntimeError(f"worker {name} failed:\n{r['stderr'][-3000:]}")
    res = json.loads(r["stdout"].strip().splitlines()[-1])
    res["rss_mb"] = r["rss_mb"]
    # CPU time / wall time of the worker: ~1.0 when it had a core to itself (numpy's
    # threads can push it above 1); well below 1 means other processes took the CPU.
    res["cpu_share"] = r["cpu_s"] / r["wall_s"]
    return res


def median_of(runs: list[dict]) -> dict:
    """Median of every numeric field over the runs (other fields from the first run)."""
    out = dict(runs[0])
    for k, v in runs[0].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = statistics.median(r[k] for r in runs)
    out["runs"] = len(runs)
    out["build_s_all"] = [round(r.get("build_s", 0.0), 4) for r in runs]
    return out


def machine_info() -> dict:
    cpu = corpus.cpu_model()
    try:
        import Stemmer  # noqa: F401  (PyStemmer: snowballstemmer silently uses it)
        pystemmer = True
    except ImportError:
        pystemmer = False

    def ver(pkg):
        try:
            return metadata.version(pkg)
        except metadata.PackageNotFoundError:
            return None

    return {"nproc": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)), "cpu": cpu,
            "python": sys.version.split()[0], "implementation": platform.python_implementation(),
            "platform": platform.platform(), "sqlite": sqlite3.sqlite_version,
            "snowballstemmer": ver("snowballstemmer"), "pystemmer": pystemmer,
            "rank_bm25": ver("rank_bm25") or ver("rank-bm25"), "bm25s": ver("bm25s"),
            "numpy": ver("numpy")}


def overlap(a: list[list[int]], b: list[list[int]]) -> float:
    """Mean overlap@10 of two lists of top-10 results (a sanity check of equal scoring)."""
    if not a or not b:
        return float("nan")
    return statistics.mean(len(set(x) & set(y)) / max(len(x), 1) for x, y in zip(a, b))


# --- whole-process CLI ------------------------------------------------------------------
def rag_command() -> list[str]:
    script = Path(sys.executable).parent / "rag"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ragweb"]


def copy_corpus(files: list[Path], dest: Path) -> None:
    root = corpus.stdlib_root()
    for p in files:
        target = dest / p.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(p, target)


def bench_cli(files, queries, tmp: Path, reps: int, n_query: int) -> dict:
    if not (REPO / "src" / "ragweb" / "cli.py").exists():
        return {"skipped": "CLI not available (src/ragweb/cli.py missing)"}
    rag = rag_command()
    one = tmp / "cli1x"
    two = tmp / "cli2x"
    copy_corpus(files, one)
    copy_corpus(files, two / "a")
    copy_corpus(files, two / "b")
    out: dict = {"command": rag}

    def checked(r, what):
        if r["rc"] != 0:
            raise RuntimeError(f"{what} exited {r['rc']}: {r['stderr'][-2000:]}")
        return r

    def cold(root, *args):
        shutil.rmtree(root / ".rag", ignore_errors=True)
        return checked(run_child(rag + ["index", str(root), *args]), f"rag index {root}")

    single = tmp / "one-process.yaml"  # index.workers 1: the files read in the writing process
    single.write_text("index:\n  workers: 1\n")
    try:
        c1, c2, c1s = [], [], []
        for _ in range(reps):  # interleaved, like the in-process runs
            c2.append(cold(two))
            c1.append(cold(one))
            c1s.append(cold(one, "--config", str(single)))
        out["index_cold_single_s"] = statistics.median(r["wall_s"] for r in c1s)
        out["index_cold_s"] = statistics.median(r["wall_s"] for r in c1)
        out["index_cold_all"] = [round(r["wall_s"], 3) for r in c1]
        out["index_cold_rss_mb"] = statistics.median(r["rss_mb"] for r in c1)
        out["index_cold_stdout"] = c1[-1]["stdout"][-600:]
        warm = [checked(run_child(rag + ["index", str(one)]), "rag index (unchanged)") for _ in range(reps)]
        out["index_unchanged_s"] = statistics.median(r["wall_s"] for r in warm)
        out["index_unchanged_stdout"] = warm[-1]["stdout"][-400:]
        qs = queries[:n_query]
        qr = [checked(run_child(rag + ["query", "-d", str(one), "-q", q, "--no-auto-index"]), "rag query")
              for q in qs]
        out["query_s"] = statistics.median(r["wall_s"] for r in qr)
        out["query_p95_s"] = _pct([r["wall_s"] for r in qr], 95)
        out["query_rss_mb"] = statistics.median(r["rss_mb"] for r in qr)
        pr = [checked(run_child(rag + ["pack", "-d", str(one), "-q", q]), "rag pack") for q in qs]
        out["pack_s"] = statistics.median(r["wall_s"] for r in pr)
        out["index_cold_2x_s"] = statistics.median(r["wall_s"] for r in c2)
        out["index_cold_2x_all"] = [round(r["wall_s"], 3) for r in c2]
        out["ratio_2x"] = out["index_cold_2x_s"] / out["index_cold_s"]
        noop = run_child([sys.executable, "-c", "pass"])
        out["python_startup_s"] = noop["wall_s"]
    except RuntimeError as e:
        out["error"] = str(e)
    return out


# --- report -----------------------------------------------------------------------------
def fmt(v, nd=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def print_report(res: dict) -> None:
    m = res["machine"]
    c = res["corpus"]
    print(f"\nmachine: {m['nproc']} CPUs ({m['affinity']} usable), {m['cpu']}, "
          f"{m['implementation']} {m['python']}, SQLite {m['sqlite']}")
    print(f"stemmer: snowballstemmer {m['snowballstemmer']} "
          f"({'PyStemmer C code' if m['pystemmer'] else 'pure Python; PyStemmer not installed'}); "
          f"rank_bm25 {m['rank_bm25']}, bm25s {m['bm25s']}, numpy {m['numpy']}")
    print(f"corpus: {c['files']} files, {c['mb']:.1f} MB, {c['chunks']} chunks "
          f"(chunking {c['chunking_s']:.2f} s), {c['queries']} queries; "
          f"medians of {res['reps']} runs, one subprocess per run")
    shares = [r["cpu_share"] for r in list(res["systems"].values()) + res["scaling"]]
    low = min(shares)
    print(f"CPU share of the benchmark processes (cpu/wall; 1.0 = undisturbed): lowest median "
          f"{low:.2f}; load average at start {res['loadavg_start'][0]:.2f}"
          + ("\n  << other processes took CPU during this run: timings are inflated" if low < 0.9 else "")
          + "\n")
    sysres = res["systems"]
    floor = sysres["floor"]["build_s"]
    hdr = (f"{'system':<38} {'build s':>8} {'x floor':>8} {'q p50 ms':>9} {'q p95 ms':>9} "
           f"{'pack p50':>9} {'pack p95':>9} {'RSS MB':>7}")
    print(hdr)
    print("-" * len(hdr))
    for name, r in sysres.items():
        label = SYSTEMS[name][0]
        ratio = r["build_s"] / floor if name != "baseline" else None
        print(f"{label:<38} {fmt(r['build_s']):>8} {fmt(ratio):>8} {fmt(r.get('query_p50_ms')):>9} "
              f"{fmt(r.get('query_p95_ms')):>9} {fmt(r.get('pack_p50_ms')):>9} "
              f"{fmt(r.get('pack_p95_ms')):>9} {fmt(r['rss_mb'], 0):>7}")
    ov = res.get("overlap_vs_floor", {})
    if ov:
        print("top-10 overlap with the floor (same scoring => ~1.0): "
              + ", ".join(f"{k} {v:.2f}" for k, v in ov.items()))
    mem = sysres.get("ragweb_mem", {})
    if "ragweb_mem_2x" in sysres and mem:
        print(f"ragweb in-process 2x corpus: {sysres['ragweb_mem_2x']['build_s']:.2f} s = "
              f"{sysres['ragweb_mem_2x']['build_s'] / mem['build_s']:.2f}x the 1x build")

    cli = res["cli"]
    print("\nwhole process (`rag`):")
    if "skipped" in cli:
        print(f"  skipped: {cli['skipped']}")
    elif "error" in cli and "index_cold_s" not in cli:
        print(f"  failed: {cli['error']}")
    else:
        for key, label in [("index_cold_s", "rag index, cold"),
                           ("index_cold_single_s", "rag index, cold, one process"),
                           ("index_unchanged_s", "rag index, unchanged"),
                           ("query_s", "rag query --no-auto-index (median)"), ("pack_s", "rag pack (median)"),
                           ("index_cold_2x_s", "rag index, cold, 2x corpus"),
                           ("python_startup_s", "python -c pass")]:
            if key in cli:
                print(f"  {label:<36} {cli[key]:.3f} s")
        said = cli.get("index_cold_stdout", "").strip().splitlines()
        if said:
            print(f"  rag index said: {said[-1]}")
        if "index_cold_rss_mb" in cli:
            print(f"  rag index peak RSS {cli['index_cold_rss_mb']:.0f} MB, rag query peak RSS "
                  f"{cli.get('query_rss_mb', 0):.0f} MB")
        if "error" in cli:
            print(f"  error: {cli['error']}")

    sc = res["scaling"]
    print("\ningest scaling: Engine.memory(), one add_document per 30-word synthetic doc, then flush")
    print(f"  {'docs':>6} {'ingest s':>9} {'x prev':>7} {'replace s':>10} {'x prev':>7} {'us/doc':>7}")
    prev = None
    for r in sc:
        print(f"  {r['n']:>6} {r['build_s']:>9.2f} {fmt(r['build_s'] / prev['build_s'] if prev else None):>7} "
              f"{r['reingest_s']:>10.2f} {fmt(r['reingest_s'] / prev['reingest_s'] if prev else None):>7} "
              f"{r['build_s'] / r['n'] * 1e6:>7.1f}")
        prev = r

    print("\ntargets:")
    for t in res["targets"]:
        status = "skip" if t["ok"] is None else ("PASS" if t["ok"] else "FAIL")
        print(f"  [{status}] {t['what']}: {t['value']}")


def targets(res: dict) -> list[dict]:
    s, cli, sc = res["systems"], res["cli"], res["scaling"]
    floor = s["floor"]["build_s"]
    out = []

    def add(what, ok, value):
        out.append({"what": what, "ok": ok, "value": value})

    if "index_cold_s" in cli:
        # (the floor is one process: so is the figure the target judges; with worker
        # processes, as `rag index` runs by default, it is printed beside)
        r = cli["index_cold_single_s"] / floor
        add("cold `rag index` (one process) <= 1.5x floor", r <= 1.5,
            f"{cli['index_cold_single_s']:.2f} s = {r:.2f}x; with workers {cli['index_cold_s']:.2f} s = "
            f"{cli['index_cold_s'] / floor:.2f}x")
    else:
        add("cold `rag index` <= 1.5x floor", None, "CLI not measured")
    r = s["ragweb_file"]["build_s"] / floor
    add("(in-process) Engine.open build <= 1.5x floor", r <= 1.5,
        f"{s['ragweb_file']['build_s']:.2f} s = {r:.2f}x")
    if "index_unchanged_s" in cli:
        add("re-index unchanged <= 0.5 s", cli["index_unchanged_s"] <= 0.5, f"{cli['index_unchanged_s']:.2f} s")
    else:
        add("re-index unchanged <= 0.5 s", None, "CLI not measured")
    for name in ("ragweb_mem", "ragweb_file"):
        v = s[name]["query_p50_ms"]
        add(f"{name} search top-10 p50 <= 2 ms", v <= 2.0, f"{v:.2f} ms")
        v = s[name]["pack_p50_ms"]
        add(f"{name} pack p50 <= 20 ms", v <= 20.0, f"{v:.2f} ms")
    if "query_s" in cli:
        add("whole-process `rag query` <= 0.3 s", cli["query_s"] <= 0.3, f"{cli['query_s']:.3f} s")
    else:
        add("whole-process `rag query` <= 0.3 s", None, "CLI not measured")
    if "ratio_2x" in cli:
        add("2x corpus `rag index` <= 2.1x", cli["ratio_2x"] <= 2.1, f"{cli['ratio_2x']:.2f}x")
    if "ragweb_mem_2x" in s:
        r = s["ragweb_mem_2x"]["build_s"] / s["ragweb_mem"]["build_s"]
        add("(in-process) 2x corpus build <= 2.1x", r <= 2.1, f"{r:.2f}x")
    if sc:
        big = sc[-1]
        if big["n"] >= 40000:
            add("ingest 40k 30-word docs <= 1.5 s", big["build_s"] <= 1.5, f"{big['build_s']:.2f} s")
        worst = max(b["build_s"] / a["build_s"] for a, b in zip(sc, sc[1:]))
        add("ingest ~2x per doubling (<= 2.2x)", worst <= 2.2, f"worst {worst:.2f}x")
        worst = max(b["reingest_s"] / a["reingest_s"] for a, b in zip(sc, sc[1:]))
        add("re-ingest (replace) ~2x per doubling (<= 2.2x)", worst <= 2.2, f"worst {worst:.2f}x")
    return out


# --- profile ------------------------------------------------------------------------------
def profile(files, queries, top: int) -> None:
    import cProfile
    import pstats

    from ragweb.engine import Engine

    docs = corpus.documents(files)

    def show(title, prof):
        print(f"\n=== {title} ===")
        st = pstats.Stats(prof)
        st.sort_stats("tottime").print_stats(top)

    prof = cProfile.Profile()
    eng = Engine.memory()
    t0 = time.perf_counter()
    prof.enable()
    for path, text in docs:
        eng.add_document(path, text)
    eng.flush()
    prof.disable()
    print(f"index (profiled): {time.perf_counter() - t0:.2f} s, {eng.n_chunks} chunks")
    show("index: Engine.memory() add_document x files + flush", prof)
    for name, fn in [("search top-10", lambda q: eng.search(q, top_k=TOP_K)),
                     ("pack 4000", lambda q: eng.pack(q, PACK_BUDGET))]:
        prof = cProfile.Profile()
        prof.enable()
        for q in queries:
            fn(q)
        prof.disable()
        show(f"{name} x {len(queries)} queries", prof)
    # The cyclic GC's share of the unprofiled build (see docs/performance.md).
    for label, disable in (("gc on", False), ("gc off", True)):
        gc.collect()
        if disable:
            gc.disable()
        t0 = time.perf_counter()
        e = Engine.memory()
        for path, text in docs:
            e.add_document(path, text)
        e.flush()
        print(f"unprofiled build (fresh engine and memo), {label}: {time.perf_counter() - t0:.2f} s")
        gc.enable()
        e.close()


# --- main ---------------------------------------------------------------------------------
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1/4 of the files, 50 queries, 1 run")
    ap.add_argument("--reps", type=int, default=None, help="runs per measurement (default 3, quick 1)")
    ap.add_argument("--out", default=str(HERE / "out" / "native.json"), help="JSON results file")
    ap.add_argument("--no-cli", action="store_true", help="skip the whole-process `rag` part")
    ap.add_argument("--profile", action="store_true", help="cProfile ragweb's index and query paths")
    ap.add_argument("--top", type=int, default=25, help="rows per profile")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--queries", help=argparse.SUPPRESS)
    ap.add_argument("--kwargs", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker_main(args)

    t_start = time.perf_counter()
    reps = args.reps or (1 if args.quick else 3)
    files = corpus.stdlib_files()
    if args.quick:
        files = files[::4]
    n_queries = 50 if args.quick else 200
    queries = corpus.make_queries(files, n_queries)
    if args.profile:
        return profile(files, queries, args.top)

    t0 = time.perf_counter()
    chunks = corpus.chunk_texts(files)
    chunking_s = time.perf_counter() - t0
    docs = corpus.documents(files)
    res: dict = {"machine": machine_info(), "reps": reps, "quick": args.quick,
                 "loadavg_start": os.getloadavg(),
                 "corpus": {"root": str(corpus.stdlib_root()), "files": len(files),
                            "mb": corpus.corpus_bytes(files) / 1e6, "chunks": len(chunks),
                            "chunking_s": chunking_s, "queries": len(queries),
                            "query_sample": queries[:10]},
                 "systems": {}}
    with tempfile.TemporaryDirectory(prefix="ragbench-") as tmpdir:
        tmp = Path(tmpdir)
        data_files = {"chunks": tmp / "chunks.pkl", "docs": tmp / "docs.pkl"}
        data_files["chunks"].write_bytes(pickle.dumps([t for _, t in chunks]))
        data_files["docs"].write_bytes(pickle.dumps(docs))
        qfile = tmp / "queries.json"
        qfile.write_text(json.dumps(queries))
        # Runs are interleaved (run 1 of every system, then run 2, ...) so a burst of load
        # from other processes spreads over the systems instead of hitting one.
        runs: dict[str, list[dict]] = {name: [] for name in SYSTEMS}
        for rep in range(reps):
            for name, (label, need, kwargs) in SYSTEMS.items():
                if name == "baseline" and rep:
                    continue
                r = run_worker(name, data_files[need], qfile, kwargs)
                runs[name].append(r)
                print(f"  run {rep + 1}/{reps} {label}: build {r['build_s']:.2f} s", file=sys.stderr)
        for name in SYSTEMS:
            res["systems"][name] = median_of(runs[name])
        floor_top = res["systems"]["floor"].get("top")
        res["overlap_vs_floor"] = {k: overlap(floor_top, res["systems"][k].get("top"))
                                   for k in ("rank_bm25", "bm25s")}
        for r in res["systems"].values():
            r.pop("top", None)

        sizes = [2500, 5000, 10000] if args.quick else [10000, 20000, 40000]
        scale_runs: dict[int, list[dict]] = {n: [] for n in sizes}
        for rep in range(reps):
            for n in sizes:
                r = run_worker("scale", None, qfile, {"n": n})
                scale_runs[n].append(r)
                print(f"  run {rep + 1}/{reps} scale {n}: ingest {r['build_s']:.2f} s, "
                      f"replace {r['reingest_s']:.2f} s", file=sys.stderr)
        res["scaling"] = [median_of(scale_runs[n]) for n in sizes]

        if args.no_cli:
            res["cli"] = {"skipped": "--no-cli"}
        else:
            res["cli"] = bench_cli(files, queries, tmp, reps, 3 if args.quick else 10)
    res["loadavg_end"] = os.getloadavg()
    res["targets"] = targets(res)
    res["total_s"] = time.perf_counter() - t_start
    print_report(res)
    print(f"\ntotal {res['total_s']:.0f} s")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

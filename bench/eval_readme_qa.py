#!/usr/bin/env python3
"""readme-qa: required-evidence recall of `rag pack --batch`, next to the shared BM25 baseline.

    .venv/bin/python bench/eval_readme_qa.py [--budget 1400] [--split all|development|holdout]
                                             [--eval-dir ../shared/eval/readme-qa] [--in-process]
                                             [--keep DIR] [--json FILE] [--one-index]
                                             [--cases] [--cv] [--set readme-dev|readme-blind]

For each README of ``eval/readme-qa`` (each indexed on its own, as the data set's README
says) this makes a temporary root holding the fixture as ``README.md``, runs ``rag index``
on it, then ``rag pack --batch`` over that source's questions (JSON lines with ``id`` and
``question``) at the budget, once per system:

- ``ragweb``               the default (passage compaction on)
- ``ragweb --lean``        fewer tokens
- ``ragweb --no-compact``  whole chunks only (the reference packing)

and, in the same run, ``baseline_bm25.py --out`` from the shared folder as a subprocess.
Recall is computed by the data set's own ``score.py`` (imported, not re-implemented), so it
is exactly the scorer's number: RESULTS maps case id -> ``{"texts": [snippet texts],
"tokens": N}`` with N = sum of ``ceil(len(text) / 4)`` over the snippets (the peer's counter,
reference §3; the script checks it equals ragweb's own ``used_tokens``).

Refusals: a pack refuses when its ``evidence`` is ``"none"``; the table also shows the
counts for "not sufficient" (``"weak"`` or ``"none"``), which is when the CLI and the
page show a warning. The baseline has no such signal.

``--one-index`` indexes all 7 READMEs together in ONE root, as ``NAME/README.md`` (the
multi-document setting: the closest proxy for a big documentation corpus), and asks every
selected question against that one index; the baseline row is then the shared baseline's
own chunking and BM25 (imported from ``baseline_bm25.py``) over all READMEs' chunks
together, top 8 within the budget, the same loop as its per-README run.

``--set readme-dev`` asks this repository's second README set instead
(``bench/readme-dev-qa``: 88 questions, 75 answerable, over 11 other READMEs this machine
already has -- npm's bundled packages, the repo's ``node_modules``, the venv's Python
packages, whose long description is their README), written blind by helpers in readme-qa's
style from its development cases only. It is all development (there is no holdout), scored
by the shared ``score.py`` next to the shared baseline's ``run`` on the same files; a case
whose quote is not in the installed file (another version) is skipped and reported.

``--set readme-blind`` asks a third README set (``bench/readme-blind-qa``: 9 more READMEs,
copied into ``fixtures/`` with their licences in ``NOTICE.md``), written blind by helpers
the same way. All of it is holdout: it is for checking that a change which helps the
development sets generalises, run once at the end of a round, never tuned on.

``--split development`` asks only the development questions (for tuning: the holdout split
is meant to be run once). ``--cases`` prints one line per development case (recall, tokens,
evidence); holdout cases are never listed, only their totals. ``--in-process`` uses ``Engine`` directly instead of the CLI (same
engine, no subprocess per system). Nothing here is a test: it prints measurements.

``--cv`` (development only, in-process) compares the candidate settings of `CV_CANDIDATES`
(module constants of ``ragweb.compact`` / ``ragweb.pack``, set in this process and restored
after each candidate) by leave-one-source-out cross-validation over the development
sources: for each held-out source, the candidate with the best mean of per-source recall on
the other sources is chosen (ties: the earlier candidate) and its recall on the held-out
source recorded; the estimate is the mean of those. It prints, per candidate, the recall of
each development source, their mean and standard deviation, mean tokens, the lean
recall and tokens, refusals, and the development recall with all READMEs in one index.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_EVAL = REPO.parent / "shared" / "eval" / "readme-qa"
SYSTEMS = [("ragweb", []), ("ragweb --lean", ["--lean"]), ("ragweb --no-compact", ["--no-compact"])]


def shared_module(eval_dir: Path, name: str):
    """A module of the data set's folder, imported from there (`score`, `baseline_bm25`)."""
    sys.path.insert(0, str(eval_dir))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.pop(0)


def load_scorer(eval_dir: Path):
    """The data set's score.py as a module (its `score`, `recall`, `normalize`, `load_dataset`)."""
    return shared_module(eval_dir, "score")


def peer_tokens(texts: list[str]) -> int:
    """The peer's counter: ceil(chars / 4) per packed text, summed."""
    return sum(math.ceil(len(t) / 4) for t in texts)


def baseline_over(eval_dir: Path, docs: list[tuple[str, str, str]], cases: list[dict], budget: int) -> dict:
    """RESULTS (with "paths") of the shared baseline's chunking and BM25 over many documents
    in one index: ``docs`` are (path, title line, text); each chunk is indexed as its title
    line + text, and the top 8 are taken in rank order while they fit the budget, as the
    baseline does for one README."""
    bb = shared_module(eval_dir, "baseline_bm25")  # its `chunk` and `BM25`
    chunks = [(f"{title}\n{t}", t, n, path) for path, title, text in docs for t, n in bb.chunk(text)]
    bm25 = bb.BM25([c[0] for c in chunks])
    results = {}
    for case in cases:
        texts, used, paths = [], 0, []
        for i in bm25.search(case["question"], 8):
            if used + chunks[i][2] <= budget:
                used += chunks[i][2]
                texts.append(chunks[i][1])
                paths.append(chunks[i][3])
        results[case["id"]] = {"texts": texts, "tokens": used, "paths": paths}
    return results


def run_baseline_one_index(eval_dir: Path, dataset: dict, cases: list[dict], budget: int) -> tuple[dict, float]:
    """RESULTS of the shared baseline's chunking and BM25 over ALL READMEs in one index."""
    t0 = time.perf_counter()
    docs = [(f"{src['name']}/README.md", f"{src['name']} README",
             (eval_dir / src["file"]).read_text(encoding="utf-8")) for src in dataset["sources"]]
    return baseline_over(eval_dir, docs, cases, budget), time.perf_counter() - t0


def run_baseline(eval_dir: Path, work: Path, dataset: dict | None = None) -> tuple[dict, float]:
    """RESULTS of the shared plain-BM25 baseline (run as a subprocess) and its seconds; for
    another data set (``dataset``), its `run` imported and called on that one."""
    out = work / "baseline_results.json"
    t0 = time.perf_counter()
    if dataset is not None:
        return shared_module(eval_dir, "baseline_bm25").run(dataset), time.perf_counter() - t0
    subprocess.run([sys.executable, "baseline_bm25.py", "--out", str(out)], cwd=eval_dir,
                   check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text(encoding="utf-8")), time.perf_counter() - t0


LOCAL_SETS = {"readme-dev": REPO / "bench" / "readme-dev-qa", "readme-blind": REPO / "bench" / "readme-blind-qa"}


def local_dataset(folder: Path, normalize) -> tuple[dict, list[str]]:
    """A readme-qa-shaped data set from ``folder``: its ``sources.json`` (each source a
    ``file``, absolute or relative to the repository, or the ``dist`` of an installed Python
    package, whose long description is its README) and the cases of its ``cases-*.json``.
    Each case keeps its own ``split`` (default development). Returns (data set, problems);
    a case with a quote missing from the installed file (another version) is dropped and
    reported."""
    from importlib import metadata
    meta = json.loads((folder / "sources.json").read_text(encoding="utf-8"))
    sources, problems = [], []
    for src in meta["sources"]:
        if "dist" in src:
            try:
                dist = metadata.distribution(src["dist"])
                path = next(Path(dist.locate_file(f)) for f in dist.files or () if f.name == "METADATA")
            except (metadata.PackageNotFoundError, StopIteration):
                problems.append(f"{src['name']}: Python package {src['dist']} is not installed")
                continue
        else:
            path = REPO / src["file"]
        if not path.is_file():
            problems.append(f"{src['name']}: {path} is missing")
            continue
        sources.append({"name": src["name"], "file": str(path.resolve()), "split": src.get("split", "development")})
    texts = {s["name"]: normalize(Path(s["file"]).read_text(encoding="utf-8")) for s in sources}
    cases = []
    for f in sorted(folder.glob("cases-*.json")):
        for c in json.loads(f.read_text(encoding="utf-8")):
            if c["source"] not in texts:
                continue
            missing = [e["quote"] for e in c["evidence"] if normalize(e["quote"]) not in texts[c["source"]]]
            if missing:
                problems.append(f"{c['id']}: quote not in the installed file: {missing[0][:60]!r}")
                continue
            cases.append({**c, "split": c.get("split", "development")})
    return {"about": meta.get("about", ""), "sources": sources, "cases": cases}, problems


def rag(*args: str) -> subprocess.CompletedProcess:
    """Run the real `rag` command line (this interpreter's ragweb)."""
    return subprocess.run([sys.executable, "-m", "ragweb", *args], check=True,
                          capture_output=True, text=True)


def prepare_one_root(dataset: dict, cases: list[dict], eval_dir: Path, work: Path,
                     in_process: bool) -> dict:
    """{"all": (root dir or Engine, questions file, cases)}: every README in one index."""
    docs = [(f"{src['name']}/README.md", (eval_dir / src["file"]).read_text(encoding="utf-8"))
            for src in dataset["sources"]]
    if in_process:
        from ragweb.engine import Engine
        engine = Engine.memory()
        for path, text in docs:
            engine.add_document(path, text)
        return {"all": (engine, None, cases)}
    root = work / "one-index"
    for path, text in docs:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    rag("index", str(root))
    qfile = work / "all.questions.jsonl"
    qfile.write_text("".join(json.dumps({"id": c["id"], "question": c["question"]}) + "\n"
                             for c in cases), encoding="utf-8")
    return {"all": (root, qfile, cases)}


def prepare_roots(dataset: dict, cases: list[dict], eval_dir: Path, work: Path,
                  in_process: bool) -> dict:
    """source name -> (root dir or Engine, questions file, [cases]); indexes each README."""
    out = {}
    for src in dataset["sources"]:
        mine = [c for c in cases if c["source"] == src["name"]]
        if not mine:
            continue
        text = (eval_dir / src["file"]).read_text(encoding="utf-8")
        if in_process:
            from ragweb.engine import Engine
            engine = Engine.memory()
            engine.add_document("README.md", text)
            out[src["name"]] = (engine, None, mine)
            continue
        root = work / src["name"]
        root.mkdir(parents=True, exist_ok=True)
        (root / "README.md").write_text(text, encoding="utf-8")
        rag("index", str(root))
        qfile = work / f"{src['name']}.questions.jsonl"
        qfile.write_text("".join(json.dumps({"id": c["id"], "question": c["question"]}) + "\n"
                                 for c in mine), encoding="utf-8")
        out[src["name"]] = (root, qfile, mine)
    return out


def run_system(roots: dict, flags: list[str], budget: int, work: Path, in_process: bool,
               name: str) -> tuple[dict, dict, float]:
    """(RESULTS, {case id: packed dict}, seconds) for one system over every source."""
    results, packs = {}, {}
    t0 = time.perf_counter()
    for src, (root, qfile, mine) in roots.items():
        if in_process:
            lean = "--lean" in flags
            compact = False if "--no-compact" in flags else None
            for c in mine:
                packs[c["id"]] = {"id": c["id"], **root.pack(c["question"], budget, compact=compact,
                                                             lean=True if lean else None)}
            continue
        out = work / f"{src}.{name.replace(' ', '').replace('-', '')}.jsonl"
        rag("pack", "--batch", str(qfile), "-b", str(budget), "-d", str(root), "-o", str(out), *flags)
        for line in out.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            packs[rec["id"]] = rec
    seconds = time.perf_counter() - t0
    for cid, p in packs.items():
        if "error" in p:
            raise SystemExit(f"{name}: case {cid} failed: {p['error']}")
        texts = [s["text"] for s in p["snippets"]]
        tokens = peer_tokens(texts)
        if tokens != p["used_tokens"] or tokens > budget:
            raise SystemExit(f"{name}: case {cid}: used_tokens {p['used_tokens']} but the texts "
                             f"count {tokens} (budget {budget})")
        results[cid] = {"texts": texts, "tokens": tokens}
    return results, packs, seconds


def evidence_auc(answerable: list[float], unanswerable: list[float]) -> float | None:
    """The chance that an answerable question's ``evidence_score`` is above an unanswerable
    one's (ties count half): 1.0 separates them at some threshold, 0.5 is a coin, below 0.5
    ranks the unanswerable ones higher. None without both kinds."""
    if not answerable or not unanswerable:
        return None
    wins = sum((a > u) + 0.5 * (a == u) for a in answerable for u in unanswerable)
    return wins / (len(answerable) * len(unanswerable))


def refusals(cases: list[dict], packs: dict | None) -> dict:
    """Counts of unanswerable / answerable cases whose evidence is none, or not sufficient,
    and how well the evidence score separates the two kinds (``auc``, `evidence_auc`)."""
    if packs is None:
        return {}
    un = [c for c in cases if not c["answerable"]]
    an = [c for c in cases if c["answerable"]]
    ev = {cid: p.get("evidence") for cid, p in packs.items()}
    score = {cid: p.get("evidence_score", 0.0) for cid, p in packs.items()}
    return {"U": len(un), "A": len(an),
            "U_none": sum(ev[c["id"]] == "none" for c in un),
            "A_none": sum(ev[c["id"]] == "none" for c in an),
            "U_notsuff": sum(ev[c["id"]] != "sufficient" for c in un),
            "A_notsuff": sum(ev[c["id"]] != "sufficient" for c in an),
            "auc": evidence_auc([score[c["id"]] for c in an], [score[c["id"]] for c in un])}


def auc_cell(rf: dict, width: int) -> str:
    """`refusals`' ``auc`` as a table cell."""
    return f"{rf['auc']:>{width}.2f}" if rf and rf.get("auc") is not None else f"{'-':>{width}}"


# name -> {"compact.CONST" | "pack.CONST": value}; the first is the current default.
CV_CANDIDATES: list[tuple[str, dict]] = [
    ("current", {}),
    ("heading bonus 0", {"compact.HEADING_BONUS": 0.0}),
    ("parent heading 0", {"compact.PARENT_HEADING_BONUS": 0.0}),
    ("both heading 0", {"compact.HEADING_BONUS": 0.0, "compact.PARENT_HEADING_BONUS": 0.0}),
    ("neighbour 0", {"compact.NEIGHBOUR_BONUS": 0.0}),
    ("rank bonus 0", {"compact.RANK_BONUS": 0.0}),
    ("section bonus 0", {"compact.SECTION_BONUS": 0.0}),
    ("file prior 0", {"compact.FILE_PRIOR_POWER": 0.0}),
    ("local idf 0", {"compact.LOCAL_IDF": 0.0}),
    ("length norm 0", {"compact.LENGTH_NORM": 0.0}),
    ("content chars 0", {"compact.CONTENT_CHARS": 0}),
    ("kinds uniform", {"compact.KIND_WEIGHT": {"code": 1.0, "toc": 1.0, "row": 1.0, "heading": 1.0, "text": 1.0}}),
    ("no prefix", {"analysis.PREFIX_MATCH": 0.0}),
    ("no abbrev", {"analysis.ABBREV_MATCH": 0.0}),
    ("no related words", {"analysis.PREFIX_MATCH": 0.0, "analysis.ABBREV_MATCH": 0.0, "analysis.NUMBER_WORDS": {}}),
    ("min relative 0", {"compact.MIN_RELATIVE": 0.0}),
    ("min relative 0.1", {"compact.MIN_RELATIVE": 0.1}),
    ("min relative 0.25", {"compact.MIN_RELATIVE": 0.25}),
    ("context share 0.5", {"pack.CONTEXT_SHARE": 0.5}),
    ("context share 0.75", {"pack.CONTEXT_SHARE": 0.75}),
    ("no context fill", {"compact.CONTEXT_DISTANCE": 0}),
    ("context dist 1", {"compact.CONTEXT_DISTANCE": 1}),
    ("context dist 6", {"compact.CONTEXT_DISTANCE": 6}),
    ("context decay 0.8", {"compact.CONTEXT_DECAY": 0.8}),
    ("expand lines 0", {"pack.EXPAND_LINES": 0}),
    ("hybrid top 1 whole", {"pack.WHOLE_TOP": 1}),
    ("hybrid top 2 whole", {"pack.WHOLE_TOP": 2}),
    ("hybrid 1 + ctx share 0.5", {"pack.WHOLE_TOP": 1, "pack.CONTEXT_SHARE": 0.5}),
    ("min rel 0.2", {"compact.MIN_RELATIVE": 0.2}),
    ("min rel 0.25 + ctx 6", {"compact.MIN_RELATIVE": 0.25, "compact.CONTEXT_DISTANCE": 6}),
    ("min rel 0.25 + ctx 0.8", {"compact.MIN_RELATIVE": 0.25, "pack.CONTEXT_SHARE": 0.8}),
    ("pruned (no-op knobs)", {"compact.PARENT_HEADING_BONUS": 0.0, "compact.CONTENT_CHARS": 0,
                              "pack.EXPAND_LINES": 0}),
    ("simple (no bonuses)", {"compact.HEADING_BONUS": 0.0, "compact.PARENT_HEADING_BONUS": 0.0,
                             "compact.NEIGHBOUR_BONUS": 0.0, "compact.RANK_BONUS": 0.0,
                             "compact.SECTION_BONUS": 0.0}),
]


def apply_settings(settings: dict) -> dict:
    """Set module constants ("compact.NAME" / "pack.NAME" / "engine.NAME" / "search.NAME" -> value); returns
    the old values."""
    from ragweb import analysis, compact, engine, pack, search
    mods = {"compact": compact, "pack": pack, "engine": engine, "analysis": analysis, "search": search}
    old = {}
    for key, value in settings.items():
        mod, name = key.split(".", 1)
        if not hasattr(mods[mod], name):
            raise SystemExit(f"--cv: unknown setting {key}")
        old[key] = getattr(mods[mod], name)
        setattr(mods[mod], name, value)
    return old


def loso(per_source: list[dict[str, float]], sources: list[str]) -> tuple[float, list[tuple[str, int]]]:
    """Leave-one-source-out estimate: for each source, the candidate (index) with the best mean
    recall over the other sources (ties: the earlier one), and that candidate's recall on it."""
    picks, total = [], 0.0
    for held in sources:
        rest = [s for s in sources if s != held]
        best = max(range(len(per_source)),
                   key=lambda i: (sum(per_source[i][s] for s in rest) / len(rest), -i))
        picks.append((held, best))
        total += per_source[best][held]
    return total / len(sources), picks


def run_cv(scorer, dataset: dict, eval_dir: Path, budget: int, work: Path) -> None:
    """The --cv table (development only): see the module docstring."""
    cases = [c for c in dataset["cases"] if c["split"] == "development"]
    roots = prepare_roots(dataset, cases, eval_dir, work, True)
    one = prepare_one_root(dataset, cases, eval_dir, work, True)
    sources = list(roots)
    rows = []
    for name, settings in CV_CANDIDATES:
        old = apply_settings(settings)
        try:
            res, packs, _ = run_system(roots, [], budget, work, True, name)
            lean, _, _ = run_system(roots, ["--lean"], budget, work, True, name + " lean")
            res1, _, _ = run_system(one, [], budget, work, True, name + " one")
        finally:
            apply_settings(old)
        sm, sl, s1 = (scorer.score(dataset, r)["development"] for r in (res, lean, res1))
        full = scorer.score(dataset, res)
        rec = {s: full["source:" + s]["recall"] for s in sources}
        vals = list(rec.values())
        mean = sum(vals) / len(vals)
        sd = (sum((v - mean) ** 2 for v in vals) / len(vals)) ** 0.5
        rows.append((name, rec, mean, sd, sm, sl, s1, refusals(cases, packs)))
    print(f"readme-qa --cv: development only, budget {budget}; recall per source (%), macro mean, "
          f"sd across sources, pooled dev recall, mean tokens, lean recall @ tokens, "
          f"refusals U none/A none, one-index dev recall")
    print(f"{'candidate':<22}" + "".join(f"{s[:9]:>10}" for s in sources)
          + f"{'mean':>7}{'sd':>6}{'dev':>7}{'tok':>6}{'lean':>7}{'@tok':>6}{'U/A':>8}{'one-idx':>9}")
    for name, rec, mean, sd, sm, sl, s1, rf in rows:
        print(f"{name[:21]:<22}" + "".join(f"{100 * rec[s]:>10.1f}" for s in sources)
              + f"{100 * mean:>7.1f}{100 * sd:>6.1f}{100 * sm['recall']:>7.1f}{sm['mean_tokens']:>6.0f}"
              + f"{100 * sl['recall']:>7.1f}{sl['mean_tokens']:>6.0f}"
              + f"{str(rf['U_none']) + '/' + str(rf['A_none']):>8}{100 * s1['recall']:>9.1f}")
    print("\nleave-one-source-out estimate (choosing among a family of candidates on the other sources):")
    families = [("current only", [0]),
                ("current + simpler", [i for i, r in enumerate(rows) if not r[0].startswith("hybrid")]),
                ("current + hybrid", [i for i, r in enumerate(rows) if i == 0 or r[0].startswith("hybrid")]),
                ("all candidates", list(range(len(rows))))]
    for fam, idx in families:
        est, picks = loso([rows[i][1] for i in idx], sources)
        print(f"  {fam:<20} {100 * est:5.1f}%  (picks: {', '.join(f'{h}->{rows[idx[i]][0]}' for h, i in picks)})")


def print_cases(scorer, cases: list[dict], rows: list) -> None:
    """One line per development case and system: recall, tokens, evidence (holdout: never)."""
    print("\nper development case: recall/tokens[/evidence score] per system (holdout cases are not listed)")
    print(f"{'case':<28}" + "".join(f"{name[:22]:>24}" for name, *_ in rows))
    for c in cases:
        if c["split"] != "development":
            continue
        line = f"{c['id'][:27]:<28}"
        for _, results, packs, _ in rows:
            r = results.get(c["id"], {"texts": [], "tokens": 0})
            rec = (scorer.recall(r["texts"], [e["quote"] for e in c["evidence"]])
                   if c["answerable"] else None)
            cell = f"{'U' if rec is None else f'{rec:.2f}'}/{r['tokens']}"
            if packs is not None:
                p = packs[c["id"]]
                cell += f"/{p['evidence'][0]}{p['evidence_score']:.2f}"
            line += f"{cell:>24}"
        print(line)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, default=1400)
    ap.add_argument("--split", choices=("all", "development", "holdout"), default="all")
    ap.add_argument("--eval-dir", type=Path, default=DEFAULT_EVAL)
    ap.add_argument("--set", choices=sorted(LOCAL_SETS),
                    help="ask this repository's own README set instead (bench/readme-dev-qa: development "
                         "only), scored by the shared scorer next to the shared baseline")
    ap.add_argument("--in-process", action="store_true", help="use Engine directly, not the rag CLI")
    ap.add_argument("--keep", type=Path, help="work in this directory and keep its files")
    ap.add_argument("--json", type=Path, help="also write the summary as JSON")
    ap.add_argument("--one-index", action="store_true",
                    help="index all READMEs together in one root (NAME/README.md) and ask every question there")
    ap.add_argument("--cases", action="store_true", help="also print one line per development case")
    ap.add_argument("--cv", action="store_true",
                    help="leave-one-source-out comparison of candidate settings (development only)")
    args = ap.parse_args()

    eval_dir = args.eval_dir.resolve()
    scorer = load_scorer(eval_dir)
    if args.set:
        dataset, problems = local_dataset(LOCAL_SETS[args.set], scorer.normalize)
        for p in problems:
            print(f"skipped: {p}")
    else:
        dataset = scorer.load_dataset(eval_dir / "dataset.json")
    cases = [c for c in dataset["cases"] if args.split == "all" or c["split"] == args.split]
    splits = ["development", "holdout"] if args.split == "all" else [args.split]
    scored_cases = {c["id"] for c in cases}
    if args.cv:
        if args.split != "development" or args.one_index:
            raise SystemExit("--cv runs on the development split only: pass --split development")
        with tempfile.TemporaryDirectory(prefix="ragweb-readme-qa-") as tmp_cv:
            run_cv(scorer, dataset, eval_dir, args.budget, Path(tmp_cv))
        return 0

    tmp = None
    if args.keep:
        work = args.keep.resolve()
        work.mkdir(parents=True, exist_ok=True)
    else:
        tmp = tempfile.TemporaryDirectory(prefix="ragweb-readme-qa-")
        work = Path(tmp.name)
    try:
        rows = []
        if args.one_index:
            base, base_s = run_baseline_one_index(eval_dir, dataset, cases, args.budget)
        else:
            base, base_s = run_baseline(eval_dir, work, dataset if args.set else None)
        base = {k: v for k, v in base.items() if k in scored_cases}
        rows.append(("baseline_bm25 (shared)", base, None, base_s))
        t0 = time.perf_counter()
        prepare = prepare_one_root if args.one_index else prepare_roots
        roots = prepare(dataset, cases, eval_dir, work, args.in_process)
        index_s = time.perf_counter() - t0
        for name, flags in SYSTEMS:
            results, packs, secs = run_system(roots, flags, args.budget, work, args.in_process, name)
            rows.append((name, results, packs, secs))
    finally:
        if tmp is not None:
            tmp.cleanup()

    summary = []
    n_sources = len(dataset["sources"])
    print(f"{args.set or 'readme-qa'} at budget {args.budget} tokens (ceil(chars/4)); {len(cases)} questions "
          f"({sum(c['answerable'] for c in cases)} answerable); "
          f"{'in-process Engine' if args.in_process else 'rag index + rag pack --batch'}; "
          f"{f'all {n_sources} READMEs in ONE index' if args.one_index else 'each README indexed on its own'}; "
          f"Python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    head = f"{'system':<24}" + "".join(f"{s + ' recall':>20}" for s in splits)
    head += (f"{'all recall':>12}{'mean tokens':>13}{'U refused':>11}{'A refused':>11}{'U !suff':>9}{'A !suff':>9}"
             f"{'ev. AUC':>8}{'seconds':>9}")
    print(head)
    for name, results, packs, secs in rows:
        sm = scorer.score(dataset, results)
        full = scorer.score(dataset, results, include_mismatched=True)
        rf = refusals(cases, packs)
        line = f"{name:<24}"
        for s in splits:
            g = sm.get(s)
            line += f"{100 * g['recall']:>11.1f}% ({g['complete']:>2}/{g['n']:>2})" if g else f"{'-':>20}"
        g = sm["all"] if args.split == "all" else sm[args.split]
        toks = [r["tokens"] for r in results.values()]
        line += f"{100 * full['all']['recall']:>11.1f}%" if args.split == "all" else f"{'-':>12}"
        line += f"{g['mean_tokens']:>13.0f}"
        if rf:
            line += (f"{rf['U_none']:>5}/{rf['U']:<5}{rf['A_none']:>5}/{rf['A']:<5}"
                     f"{rf['U_notsuff']:>4}/{rf['U']:<4}{rf['A_notsuff']:>4}/{rf['A']:<4}")
        else:
            line += f"{'-':>11}{'-':>11}{'-':>9}{'-':>9}"
        line += auc_cell(rf, 8) + f"{secs:>9.2f}"
        print(line)
        summary.append({"system": name, "summary": sm, "summary_incl_flagged": full, "refusals": rf,
                        "mean_tokens_all_cases": sum(toks) / len(toks) if toks else None,
                        "seconds": secs})
    print(f"\nrecall: mean over answerable cases, as score.py computes it (its default skips the 2 ky "
          f"cases whose quote is missing from the fixture; 'all recall' counts them, as upstream did).")
    print("mean tokens: over the scored answerable cases (score.py's mean_tokens). U refused / A refused: "
          "evidence == 'none'; !suff: evidence != 'sufficient' (the CLI warns).")
    if args.cases:
        print_cases(scorer, cases, rows)
    n_indexed = len(dataset["sources"]) if args.one_index else len(roots)
    print(f"ragweb indexing: {index_s:.2f} s for {n_indexed} READMEs{' (one index)' if args.one_index else ''}; seconds = wall time of each "
          f"system's {'calls' if args.in_process else 'rag pack --batch runs'} (including process start).")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

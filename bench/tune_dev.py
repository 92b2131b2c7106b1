#!/usr/bin/env python3
"""Compare settings of ragweb's packing on every DEVELOPMENT split at once (never holdout).

Each candidate is a name and module constants or config values to set for its run:

    .venv/bin/python bench/tune_dev.py '[["now", {}],
        ["rank1", {"compact.RANK_BONUS": 1.0}],
        ["lam.8", {"cfg.retrieve.mmr_lambda": 0.8}]]' [--html]

Keys: ``compact.NAME``, ``pack.NAME``, ``engine.NAME``, ``search.NAME``, ``analysis.NAME``
(module constants, `eval_readme_qa.apply_settings`) and ``cfg.SECTION.KEY`` (the engines'
config). Sets, development split only, in-process engines, budget 1,400:

- ``rq``: readme-qa, each README in its own index; ``one``: all its READMEs in one index;
- ``rd``: bench/readme-dev-qa, each README alone;
- ``npm``, ``node``, ``cmake``, ``code``: the docs sets of `eval_docs_qa.py` (Debian's docs);
- with ``--html`` also ``npm-html``, ``node-html``, ``pydoc-html``, ``pydoc-rst`` and ``pg``
  (PostgreSQL's manual, 1,173 pages; in the objective since 2026-12-01, so objectives from
  before that date are not comparable with later ones);
- only when named in ``--sets``: ``mixed``, the four manuals in one index (2,434 files; the
  development side of a big corpus, where one manual's questions meet the others' words),
  ``node-folder`` / ``pydoc-folder``, whole folders where each page has twins (its
  Markdown or reST source next to its HTML build), and ``django`` (Django's whole docs
  folder, written 2026-12-01 after every weight was set; its holdout split is the check
  that nothing was fitted to it), and ``apache`` (the Apache httpd manual's English pages,
  written 2026-12-01 the same way, after every weight was set), and ``rust`` (five Rust
  manuals' mdBook builds in one index, written 2026-12-01 after every weight was set).

Per set: recall with compaction / with ``--lean``; then mean tokens of rq and rd (normal /
lean), refused unanswerable (U) and refused answerable (A) questions per set, and the mean
over the sets of the evidence score's AUC (`eval_readme_qa.evidence_auc`: how often an
answerable question's score is above an unanswerable one's; not in the objective). The
objective is the mean normal recall + 0.5 x the mean lean recall - 0.002 x the wrong
refusals: one number to rank candidates by, not a verdict (a quote of one small set is
worth several points of it; read the per-set figures). The holdout splits, readme-blind and
the folder sets stay out of it, so they can still tell whether a change generalises.

Every candidate after the first gets a second line (`compare`): its objective's difference
from the first candidate's, with a 95% interval from a paired bootstrap over the questions,
and how many questions it packs more or less of. On these sets the interval is about
±0.01 wide; a difference inside it is noise (each earlier "win" of +0.006 to +0.009 that
lost on the holdout splits was inside it).

``--sets rq,npm`` runs only those sets. ``--embed URL`` gives every engine an embedder on an
OpenAI-compatible server (``python tests/minilm.py --port 11435`` serves all-MiniLM-L6-v2;
URL ``http://127.0.0.1:11435/v1``), so lean packs use ``pack.semantic_weight``;
``--embed-chunks`` also embeds every chunk (for ``cfg.retrieve.hybrid_enabled``; slow with
the numpy model).
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ragweb_path  # noqa: E402

ragweb_path.use_src()

import eval_docs_qa as ed  # noqa: E402
import eval_readme_qa as er  # noqa: E402

DOC_SETS = ("npm", "node", "cmake", "code")
HTML_SETS = ("npm-html", "node-html", "pydoc-html", "pydoc-rst", "pg")
FOLDER_SETS = ("node-folder", "pydoc-folder", "django", "apache", "rust")  # (pydoc-guide-folder has no development split)
BUDGET = 1400


def doc_engine(name: str):
    from ragweb.engine import Engine

    docs = ed.mixed_root(name) if name in ed.MIXED_SETS else ed.SETS[name][1]
    cases = [c for c in ed.load_cases(docs, name)[0] if c["split"] == "development"]
    eng = Engine.memory()
    for rel in ed.doc_files(docs, name):
        eng.add_document(rel, ed.doc_text(docs / rel))
    eng.flush()
    return eng, cases


class Suite:
    """The development sets, indexed once; `evaluate` runs one candidate over all of them."""

    def __init__(self, html: bool, work: Path, only: set | None = None):
        self.scorer = er.load_scorer(er.DEFAULT_EVAL)
        self.work = work
        self.ds = self.scorer.load_dataset(er.DEFAULT_EVAL / "dataset.json")
        self.dev = [c for c in self.ds["cases"] if c["split"] == "development"]
        self.roots = er.prepare_roots(self.ds, self.dev, er.DEFAULT_EVAL, work, True)
        self.one = er.prepare_one_root(self.ds, self.dev, er.DEFAULT_EVAL, work, True)
        self.ds2, problems = er.local_dataset(er.LOCAL_SETS["readme-dev"], self.scorer.normalize)
        for p in problems:  # (bm25s's README is a source: `make bench` installs it; rd differs without it)
            print(f"rd: left out: {p}", file=sys.stderr)
        self.dev2 = self.ds2["cases"]
        self.roots2 = er.prepare_roots(self.ds2, self.dev2, er.DEFAULT_EVAL, work, True)
        # a set named in --sets runs with or without --html
        names = [n for n in DOC_SETS + HTML_SETS if (only is None and (html or n in DOC_SETS))
                 or (only is not None and n in only)]
        names += [n for n in ed.MIXED_SETS if only is not None and n in only]  # (opt-in: slow to index)
        names += [n for n in FOLDER_SETS if only is not None and n in only]  # (opt-in)
        self.only = only
        missing = [n for n in names if n not in ed.MIXED_SETS and not ed.SETS[n][1].is_dir()]
        if missing:
            raise SystemExit(f"no docs for {missing}: `make eval` installs them (apt)")
        self.docs = {name: doc_engine(name) for name in names}

    def engines(self):
        return ([e for e, _ in self.docs.values()] + [self.one["all"][0]]
                + [r[0] for r in self.roots.values()] + [r[0] for r in self.roots2.values()])

    def readme(self, roots, ds, cases) -> tuple:
        args = (BUDGET, self.work, True, "x")
        res, packs, _ = er.run_system(roots, [], *args)
        lres, _, _ = er.run_system(roots, ["--lean"], *args)
        a = self.scorer.score(ds, res)["development"]
        lean = self.scorer.score(ds, lres)["development"]
        rf = er.refusals(cases, packs)
        scored = [c for c in cases if c["answerable"] and not c.get("evidence_missing_from_fixture")]
        per_case = tuple([self.scorer.recall(r[c["id"]]["texts"], [e["quote"] for e in c["evidence"]])
                          for c in scored] for r in (res, lres))
        return (a["recall"], lean["recall"], a["mean_tokens"], lean["mean_tokens"], rf["U_none"], rf["A_none"],
                rf["auc"], per_case)

    def evaluate(self, settings: dict) -> dict:
        cfg = {k: v for k, v in settings.items() if k.startswith("cfg.")}
        engines = self.engines()
        saved = [copy.deepcopy(e.config) for e in engines]
        for e in engines:
            for key, value in cfg.items():
                _, section, name = key.split(".")
                e.config[section][name] = value
        old = er.apply_settings({k: v for k, v in settings.items() if not k.startswith("cfg.")})
        out = {}
        try:
            for key, (roots, ds, cases) in (("rq", (self.roots, self.ds, self.dev)),
                                            ("one", (self.one, self.ds, self.dev)),
                                            ("rd", (self.roots2, self.ds2, self.dev2))):
                if self.only is None or key in self.only:
                    out[key] = self.readme(roots, ds, cases)
            for name, (eng, cases) in self.docs.items():
                r, packs = ed.run(eng, cases, [], BUDGET, None)
                lr, _ = ed.run(eng, cases, ["--lean"], BUDGET, None)
                loose = name in ed.LOOSE_SETS
                g = ed.summarize(self.scorer, cases, r, "development", loose)
                gl = ed.summarize(self.scorer, cases, lr, "development", loose)
                rf = er.refusals(cases, packs)
                out[name] = (g["recall"], gl["recall"], g["tokens"], gl["tokens"], rf["U_none"], rf["A_none"],
                             rf["auc"], (g["per_case"], gl["per_case"]))
        finally:
            er.apply_settings(old)
            for e, c in zip(engines, saved):
                e.config = c
        return out


def objective(out: dict) -> float:
    normal = sum(v[0] for v in out.values()) / len(out)
    lean = sum(v[1] for v in out.values()) / len(out)
    return normal + 0.5 * lean - 0.002 * sum(v[5] for v in out.values())


def compare(base: dict, out: dict, rounds: int = 2000, seed: int = 0) -> str:
    """How far ``out``'s objective is from ``base``'s beyond chance: a paired bootstrap over
    the questions (each set's answerable cases drawn again with replacement, the same draw
    for both candidates; the wrong-refusal term as measured), and how many questions each
    candidate packs more of. A development set of 30 questions moves 1-3 points per
    quote, so a difference whose interval spans 0 is not one to adopt."""
    import random

    sets = [k for k in base if k in out]
    # per set: (normal, lean) recall differences per question
    diffs = {k: [(a - b, la - lb) for a, b, la, lb in zip(out[k][7][0], base[k][7][0], out[k][7][1], base[k][7][1])]
             for k in sets}
    refusal = -0.002 * sum(out[k][5] - base[k][5] for k in sets)

    def delta(rows_of: dict) -> float:
        normal = sum(sum(d for d, _ in rows) / len(rows) for rows in rows_of.values()) / len(rows_of)
        lean = sum(sum(d for _, d in rows) / len(rows) for rows in rows_of.values()) / len(rows_of)
        return normal + 0.5 * lean + refusal

    rng = random.Random(seed)
    draws = sorted(delta({k: [rows[rng.randrange(len(rows))] for _ in rows] for k, rows in diffs.items()})
                   for _ in range(rounds))
    low, high = draws[int(0.025 * rounds)], draws[int(0.975 * rounds) - 1]
    above = sum(d > 0 for d in draws) / rounds
    better = sum(1 for rows in diffs.values() for d, ld in rows if d + 0.5 * ld > 0)
    worse = sum(1 for rows in diffs.values() for d, ld in rows if d + 0.5 * ld < 0)
    return (f"  vs the first candidate: objective {delta(diffs):+.4f}, 95% interval [{low:+.4f}, {high:+.4f}], "
            f"above 0 in {100 * above:.0f}% of draws; questions packed better / worse: {better} / {worse}")


def line(name: str, out: dict, seconds: float) -> str:
    sets = " ".join(f"{k} {100 * v[0]:.1f}/{100 * v[1]:.1f}" for k, v in out.items())
    tokens = " ".join(f"{out[k][2]:.0f}/{out[k][3]:.0f}" for k in ("rq", "rd") if k in out)
    aucs = [v[6] for v in out.values() if v[6] is not None]
    auc = f" | ev. AUC {sum(aucs) / len(aucs):.3f}" if aucs else ""
    return (f"{name:<20} obj {objective(out):.4f} | {sets} | tok {tokens} | U "
            + ",".join(str(v[4]) for v in out.values()) + " A "
            + ",".join(str(v[5]) for v in out.values()) + auc + f" ({seconds:.0f} s)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("candidates", nargs="?", default='[["now", {}]]',
                    help='JSON: [["name", {"compact.NAME": value, "cfg.retrieve.top_k": 20}], ...]')
    ap.add_argument("--html", action="store_true", help="also the HTML and reST docs sets")
    ap.add_argument("--sets", help="only these sets, comma-separated (rq,one,rd,npm,...)")
    ap.add_argument("--embed", metavar="URL",
                    help="give every engine an embedder: an OpenAI-compatible server at URL "
                         "(tests/minilm.py serves all-MiniLM-L6-v2); chunks get vectors too with --embed-chunks")
    ap.add_argument("--embed-chunks", action="store_true")
    ap.add_argument("--embed-dim", type=int, default=384, help="the --embed model's dimension")
    args = ap.parse_args()
    known = {"rq", "one", "rd", *DOC_SETS, *HTML_SETS, *ed.MIXED_SETS, *FOLDER_SETS}
    unknown = set(args.sets.split(",")) - known if args.sets else set()
    if unknown:
        ap.error(f"unknown set(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}")
    candidates = json.loads(args.candidates)
    with tempfile.TemporaryDirectory(prefix="ragweb-tune-") as tmp:
        suite = Suite(args.html, Path(tmp), set(args.sets.split(",")) if args.sets else None)
        if args.embed:
            from ragweb import embeddings
            for e in suite.engines():
                e.config["embedding"].update(enabled=True, provider="openai", base_url=args.embed,
                                             model="all-MiniLM-L6-v2", dimension=args.embed_dim, batch_size=64)
                e.embedder = embeddings.Embedder(e.config)
                if args.embed_chunks:
                    embeddings.embed_missing(e, e.embedder)
        first = None
        for name, settings in candidates:
            t0 = time.perf_counter()
            out = suite.evaluate(settings)
            print(line(name, out, time.perf_counter() - t0), flush=True)
            if first is None:
                first = out
            else:
                print(compare(first, out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""docs-qa: required-evidence recall of packing over real multi-file documentation sets.

    .venv/bin/python bench/eval_docs_qa.py [--set npm|node|cmake|code|npm-html|node-html|pydoc-html|pydoc-rst|pydoc-guide|pg|django|apache|rust|node-folder|pydoc-folder|pydoc-guide-folder|mixed]
                                           [--docs DIR] [--budget 1400]
                                           [--split all|development|holdout] [--cases] [--cli]

readme-qa (``eval_readme_qa.py``) asks each question of one README. This asks questions of
a whole documentation set in ONE index. The sets, installed by Debian packages and read
from there (never copied into this repository):

- ``npm``: the npm CLI's docs, ``/usr/lib/node_modules/npm/docs/content`` (91 Markdown
  files, 0.8 MB: command pages whose "Configuration" sections repeat the same options,
  guides on config, scripts, workspaces, package.json; npm's, Artistic License 2.0);
  questions in ``bench/npm-docs-qa``;
- ``node``: the Node.js v20 API docs, ``/usr/share/doc/nodejs/api/*.md`` (64 files,
  3.5 MB, files up to 260 KB; MIT-style licence); questions in ``bench/node-docs-qa``;
- ``cmake``: CMake 3.25's reStructuredText docs from ``cmake-data``,
  ``/usr/share/cmake-3.25/Help`` (1,962 ``.rst`` and ``.txt`` files, 9.2 MB; BSD-3-Clause);
  questions in ``bench/cmake-docs-qa``;
- ``npm-html``, ``node-html``: the npm and Node questions asked of the same pages as
  Debian also ships them, built as HTML (``docs/output/**/*.html``, ``api/*.html``; each
  Markdown page's twin). The quotes are Markdown, so these two sets match them on letters
  and digits only (`loose`), in each system's packed text as a reader sees it (an HTML
  page's markup dropped: ragweb packs that text already, the baseline packs raw HTML);
- ``pydoc-html``: the Python 3.11 library reference as Sphinx builds it, from Debian's
  ``python3-doc``, ``/usr/share/doc/python3.11/html/library/*.html`` (317 pages, 28 MB:
  API entries are ``<dt>`` signatures with ``<dd>`` descriptions; PSF licence); questions
  in ``bench/pydoc-qa``, quotes as a reader sees the page, matched `loose`ly as above;
  ``pydoc-rst``: the same questions of the same pages' reStructuredText sources that
  Sphinx ships beside them (``_sources/library/*.rst.txt``), matched as the scorer does;
- ``pydoc-guide``: questions about the same build's other manuals -- the tutorial, the FAQ,
  the HOWTOs and the language reference (``tutorial``, ``faq``, ``howto``, ``reference``:
  57 pages) -- in ``bench/pydoc-guide-qa``, written blind like the others and all holdout
  (never tuned on), quotes matched `loose`ly; ``pydoc-guide-folder`` asks them of the whole
  ``html`` folder (below);
- ``node-folder``, ``pydoc-folder``: the Node and the Python (library) questions asked of
  the whole folder as Debian ships it, every file `rag index` takes with the default config:
  Node's ``api`` folder holds each page twice, as Markdown and as HTML (plus JSON: 134
  files), the Python docs' ``html`` folder every manual's pages, their reST sources under
  ``_sources`` and the scripts under ``_static`` (1,000+ files). Pointing the tool at a
  docs folder as it is is what users do; duplicates and build files are part of it. Quotes
  are matched `loose`ly, and a case's file counts as hit when any of its `twin`s is packed;
- ``mixed``: the npm, Node, CMake and Python library docs (the first four sets' files)
  in ONE index, each set asked its own questions, matched `loose`ly: a corpus of unrelated
  manuals, where one manual's questions meet the others' words (a question about
  ``setTimeout`` and "30 days" now also matches Python's ``datetime`` page);
- ``pg``: PostgreSQL 15's manual as Debian's ``postgresql-doc-15`` installs it,
  ``/usr/share/doc/postgresql-doc-15/html`` (1,173 HTML pages built by DocBook, 18 MB: the
  SQL command reference, server administration, data types and functions, client
  programs; PostgreSQL Licence); questions in ``bench/pg-docs-qa``, matched `loose`ly, each
  case's split its own (drawn at random within each file, so development and holdout
  cover the same chapters);
- ``django``: Django 3.2's docs as Debian's ``python-django-doc`` installs them,
  ``/usr/share/doc/python-django-doc/html``, the whole folder as ``rag index`` takes it (692
  Sphinx pages -- reference, topic guides, how-tos, some 300 release notes that mention
  every feature again -- and the highlighted source under ``_modules``; BSD licence);
  questions in ``bench/django-docs-qa``, matched `loose`ly, each case's split its own;
- ``apache``: the Apache HTTP Server 2.4 manual as Debian's ``apache2-doc`` installs it, its
  English pages, ``/usr/share/doc/apache2-doc/manual/en``, the whole folder as ``rag index``
  takes it (244 HTML pages: the module and directive reference, guides, programs, FAQ;
  Apache licence); questions in ``bench/apache-docs-qa``, written after every weight was
  set, matched `loose`ly, each case's split its own;
- ``code``: not docs but a program: the running interpreter's standard library (the 734
  ``.py`` files the native benchmark indexes), with questions about the behaviour of some
  modules in ``bench/code-qa`` (each case names its split).

The questions (``cases-*.json``) were written by helpers who read the docs but not
ragweb's code or output: answerable cases name the file their short evidence quotes come
from; unanswerable ones have none. Each set's split into development and holdout files
(`SETS`) was fixed before any measurement; tune on development, run holdout once at the
end of a round of work.

Scoring is the shared readme-qa scorer's (``score.recall``: whitespace-collapsed quote
contained in a packed text), imported from ``../shared/eval/readme-qa``. Besides recall the
table shows mean tokens (ceil(chars/4)), refusals of unanswerable / answerable questions
(``evidence == "none"``), and "file hit": the share of answerable cases whose pack holds any
text of the file the answer is in (retrieval found the right page). The baseline row is
the shared ``baseline_bm25.py``'s chunking and BM25 over every file's chunks, top 8 within
the budget (as ``eval_readme_qa.py --one-index`` does). Quotes missing from the installed
docs (another version) are reported and those cases skipped.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402
from eval_readme_qa import (DEFAULT_EVAL, SYSTEMS, baseline_over, load_scorer, peer_tokens,  # noqa: E402
                            auc_cell, rag, refusals)

REPO = Path(__file__).resolve().parent.parent
# set name -> (folder of case files, where Debian installs the docs, case file -> split, file globs)
SETS = {
    "npm": (REPO / "bench" / "npm-docs-qa", Path("/usr/lib/node_modules/npm/docs/content"),
            {"cases-guides.json": "development", "cases-commands-a.json": "development",
             "cases-commands-b.json": "holdout"}, ("*.md",)),
    "node": (REPO / "bench" / "node-docs-qa", Path("/usr/share/doc/nodejs/api"),
             {"cases-runtime.json": "development", "cases-network.json": "development",
              "cases-tooling.json": "holdout"}, ("*.md",)),
    "cmake": (REPO / "bench" / "cmake-docs-qa", Path("/usr/share/cmake-3.25/Help"),
              {"cases-dev.json": "development", "cases-dev-small.json": "development",
               "cases-holdout.json": "holdout"}, ("*.rst", "*.txt")),
    # the split is each case's own "split"; the files are the benchmark's stdlib corpus
    "code": (REPO / "bench" / "code-qa", corpus.stdlib_root(), {"cases.json": None}, None),
}
# The same questions over the same pages built as HTML (each Markdown page's .html twin):
# set -> (its Markdown set, the HTML folder). Quotes are written in Markdown, so these sets
# match them on letters and digits only (`loose`), in every system's packed text read as
# a reader sees it (`html_text`).
HTML_SETS = {
    "npm-html": ("npm", Path("/usr/lib/node_modules/npm/docs/output")),
    "node-html": ("node", Path("/usr/share/doc/nodejs/api")),
}
for _name, (_md, _folder) in HTML_SETS.items():
    SETS[_name] = (SETS[_md][0], _folder, SETS[_md][2], ("*.html",))
# Sphinx's build of the Python library reference: HTML pages, and their reST sources
PYDOC = Path("/usr/share/doc/python3.11/html")
_PYDOC_SPLITS = {"cases-dev.json": "development", "cases-holdout.json": "holdout"}
SETS["pydoc-html"] = (REPO / "bench" / "pydoc-qa", PYDOC, _PYDOC_SPLITS, ("library/*.html",))
SETS["pydoc-rst"] = (REPO / "bench" / "pydoc-qa", PYDOC / "_sources", _PYDOC_SPLITS, ("library/*.rst.txt",))
# the same build's other manuals (tutorial, FAQ, HOWTOs, language reference): all holdout
SETS["pydoc-guide"] = (REPO / "bench" / "pydoc-guide-qa", PYDOC,
                       {"cases-a.json": "holdout", "cases-b.json": "holdout"},
                       ("tutorial/*.html", "faq/*.html", "howto/*.html", "reference/*.html"))
# PostgreSQL 15's manual as DocBook builds it (Debian's postgresql-doc-15): 1,173 HTML pages,
# 18 MB, the biggest manual here; each case names its split (`split_cases` fixed them)
SETS["pg"] = (REPO / "bench" / "pg-docs-qa", Path("/usr/share/doc/postgresql-doc-15/html"),
              {"cases-sql.json": None, "cases-admin.json": None, "cases-lang.json": None}, ("*.html",))
# Whole folders as Debian ships them, every file `rag index` would take with the default
# config (Node's api folder: each page as Markdown and as HTML, plus JSON; the Python docs'
# html folder: every page, its reST source under _sources, the scripts under _static):
# set -> (the set whose questions it asks, the folder). A case's answer file counts as hit
# when any of its twins is packed (`twin`).
FOLDER_SETS = {
    "node-folder": ("node", Path("/usr/share/doc/nodejs/api")),
    "pydoc-folder": ("pydoc-html", PYDOC),
    "pydoc-guide-folder": ("pydoc-guide", PYDOC),
}
for _name, (_base, _folder) in FOLDER_SETS.items():
    SETS[_name] = (SETS[_base][0], _folder, SETS[_base][2], "folder")
# Django 3.2's docs as Debian's python-django-doc installs them, the whole html folder as
# `rag index` takes it (692 Sphinx pages: the reference, topic guides, how-tos, 300 release
# notes, the highlighted source under _modules); questions of its own, each case its split
SETS["django"] = (REPO / "bench" / "django-docs-qa", Path("/usr/share/doc/python-django-doc/html"),
                  {"cases-ref.json": None, "cases-topics.json": None}, "folder")
# Apache httpd 2.4's manual as Debian's apache2-doc installs it, the English pages as `rag
# index` takes them (module reference, guides, programs); questions of its own, each case its split
SETS["apache"] = (REPO / "bench" / "apache-docs-qa", Path("/usr/share/doc/apache2-doc/manual/en"),
                  {"cases-mod.json": None, "cases-guides.json": None}, "folder")
# The Rust manuals as Debian's rust-doc (1.63) installs them, five mdBook builds side by side
# under /usr/share/doc/rust-doc/html (the book, the reference, the edition guide, the
# embedded book, the rustc book: 743 HTML pages, 37 MB, each manual's print.html holding all
# of its pages again), each folder as `rag index` takes it, in ONE index; the API docs
# beside them (std, core, alloc: 31,000 pages) are left out. Questions on the book and the
# reference, each case its split
RUST_MANUALS = ("book", "reference", "edition-guide", "embedded-book", "rustc")
SETS["rust"] = (REPO / "bench" / "rust-docs-qa", Path("/usr/share/doc/rust-doc/html"),
                {"cases-book.json": None, "cases-reference.json": None}, ("folders", RUST_MANUALS))
# Several sets in ONE index (each set's folder under its name, through symbolic links in a
# temporary folder, `mixed_root`), each asked its own questions: a corpus of unrelated
# manuals, where one manual's questions meet the others' words.
MIXED_SETS = {"mixed": ("npm", "node", "cmake", "pydoc-html")}
for _name in MIXED_SETS:
    SETS[_name] = (None, None, {}, "mixed")
# sets whose quotes are matched `loose`ly in what a reader sees; how a case's "file" names
# the set's own file
LOOSE_SETS = set(HTML_SETS) | set(FOLDER_SETS) | set(MIXED_SETS) | {"pydoc-html", "pydoc-guide", "pg", "django", "apache",
                                                                    "rust"}
FILE_OF = {**{name: (lambda f: f[:-3] + ".html") for name in HTML_SETS},
           "pydoc-rst": lambda f: f[:-5] + ".rst.txt"}
_TAG = re.compile(r"<!--.*?-->|<(script|style)\b.*?</\1\s*>|<[^>]*>", re.S | re.I)


def html_text(text: str) -> str:
    """A packed text as a reader sees it: an HTML page's markup dropped, references decoded."""
    return html.unescape(_TAG.sub(" ", text))


def seen_text(text: str, path: str) -> str:
    """A packed text of ``path`` as a reader sees it: an HTML page's markup dropped
    (`html_text`); any other file's text as it is (a ``<name>`` placeholder is text there)."""
    return html_text(text) if path.lower().endswith((".html", ".htm", ".xhtml")) else text


def loose(text: str) -> str:
    """Letters and digits only, lowercased; first Markdown link targets (``](url)``,
    ``][ref]``) and list markers (``1.``, ``-``) are dropped: HTML shows neither."""
    text = re.sub(r"\]\([^)]*\)|\]\[[^\]]*\]", "]", text)
    text = re.sub(r"(?m)^[ \t]*(?:\d{1,9}[.)]|[-*+])[ \t]+", "", text)
    return re.sub(r"[^0-9a-z]+", "", text.lower())


def loose_recall(texts: list[str], quotes: list[str]) -> float:
    """The share of ``quotes`` found in ``texts``, compared `loose`ly."""
    hay = loose("\n".join(texts))
    return sum(loose(q) in hay for q in quotes) / len(quotes) if quotes else 1.0
DEFAULT_DOCS = SETS["npm"][1]


def doc_files(docs: Path, which: str) -> list[str]:
    """The set's documentation files under ``docs``, relative, sorted."""
    if SETS[which][3] is None:  # the code set: the stdlib .py files the benchmarks index
        return [corpus.rel_path(p, docs) for p in corpus.stdlib_files(docs)]
    if which in MIXED_SETS:
        return [f"{m}/{rel}" for m in MIXED_SETS[which] for rel in doc_files(docs / m, m)]
    kind = SETS[which][3]
    if kind == "folder" or isinstance(kind, tuple) and kind[0] == "folders":
        # what `rag index` takes (not binary, too large or minified), of the folder or of
        # each of its named subfolders
        from ragweb.config import default_config
        from ragweb.files import iter_files, read_text_file
        ix = default_config()["index"]
        subs = kind[1] if isinstance(kind, tuple) else ("",)
        return [f"{sub}/{e.path}" if sub else e.path for sub in subs
                for e in iter_files(docs / sub, ix["includes"], ix["excludes"])
                if read_text_file(e.abspath, ix["max_file_bytes"]).text is not None]
    if which in HTML_SETS:  # the pages that have a Markdown twin (not npm's aliases or Node's all.html)
        md_set = HTML_SETS[which][0]
        return [rel[:-3] + ".html" for rel in doc_files(SETS[md_set][1], md_set)
                if (docs / (rel[:-3] + ".html")).is_file()]
    return sorted({str(p.relative_to(docs)) for pat in SETS[which][3] for p in docs.rglob(pat)})


def load_cases(docs: Path, which: str = "npm", normalize=None) -> tuple[list[dict], list[str]]:
    """(cases with a "split", problems): answerable cases whose quotes are all in their file
    (compared as the scorer compares them: ``normalize``, default the shared scorer's)."""
    normalize = normalize or load_scorer(DEFAULT_EVAL).normalize
    cases, problems = [], []
    if which in MIXED_SETS:  # each member's cases, their ids and files under its name
        for m in MIXED_SETS[which]:
            mine, bad = load_cases(docs / m, m, normalize)
            cases += [{**c, "id": f"{m}:{c['id']}", "file": c["file"] and f"{m}/{c['file']}"} for c in mine]
            problems += bad
        return cases, problems
    cases_dir, _, splits, _ = SETS[which]
    norm_file = normalize
    if which in LOOSE_SETS:  # the page as a reader sees it, the quote as it is
        norm_file, normalize = (lambda t: loose(html_text(t))), loose
    for name, split in splits.items():
        path = cases_dir / name
        if not path.exists():
            problems.append(f"missing {path}")
            continue
        for c in json.loads(path.read_text(encoding="utf-8")):
            c = {**c, "split": split or c["split"]}
            if c["answerable"] and which in FILE_OF:
                c["file"] = FILE_OF[which](c["file"])
            if c["answerable"]:
                f = docs / c["file"]
                text = norm_file(f.read_text(encoding="utf-8")) if f.exists() else ""
                bad = [e["quote"] for e in c["evidence"] if normalize(e["quote"]) not in text]
                if bad:
                    problems.append(f"{c['id']}: not in {c['file']}: {bad[0][:60]!r}")
                    continue
            cases.append(c)
    return cases, problems


def run(engine_or_root, cases: list[dict], flags: list[str], budget: int, work: Path | None) -> tuple[dict, dict]:
    """(RESULTS with "paths", {id: pack}) for one system, in-process or through `rag pack --batch`."""
    packs = {}
    if work is None:
        lean = "--lean" in flags
        compact = False if "--no-compact" in flags else None
        for c in cases:
            packs[c["id"]] = engine_or_root.pack(c["question"], budget, compact=compact,
                                                 lean=True if lean else None)
    else:
        qfile = work / "questions.jsonl"
        qfile.write_text("".join(json.dumps({"id": c["id"], "question": c["question"]}) + "\n"
                                 for c in cases), encoding="utf-8")
        out = work / "packs.jsonl"
        rag("pack", "--batch", str(qfile), "-b", str(budget), "-d", str(engine_or_root), "-o", str(out), *flags)
        for line in out.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            packs[rec["id"]] = rec
    results = {}
    for cid, p in packs.items():
        texts = [s["text"] for s in p["snippets"]]
        if peer_tokens(texts) != p["used_tokens"] or p["used_tokens"] > budget:
            raise SystemExit(f"case {cid}: used_tokens {p['used_tokens']} disagrees with its texts")
        results[cid] = {"texts": texts, "tokens": p["used_tokens"],
                        "paths": [s["path"] for s in p["snippets"]],
                        # an HTML page's snippet is its visible text already
                        "seen": [s["text"] if s.get("visible") else seen_text(s["text"], s["path"])
                                 for s in p["snippets"]]}
    return results, packs


def mixed_root(which: str) -> Path:
    """A folder holding a link to each member set's folder, under the member's name."""
    root = Path(tempfile.gettempdir()) / f"ragweb-{which}-docs"
    root.mkdir(exist_ok=True)
    for m in MIXED_SETS[which]:
        link = root / m
        if not link.is_symlink():
            link.symlink_to(SETS[m][1], target_is_directory=True)
    return root


def doc_text(path: Path) -> str:
    """A documentation file's text as `rag index` reads it (decoded as it decodes, a BOM dropped)."""
    from ragweb.config import DEFAULTS
    from ragweb.files import read_text_file
    text = read_text_file(path, max(path.stat().st_size, DEFAULTS["index"]["max_file_bytes"])).text
    if text is None:
        raise SystemExit(f"{path}: not a text file rag index would read")
    return text


def twin(path: str) -> str:
    """A page's name without its format: ``events.md`` and ``events.html``, and a Sphinx
    page and its source (``library/os.html``, ``_sources/library/os.rst.txt``), are one."""
    path = path.removeprefix("_sources/")
    for suffix in (".rst.txt", ".html", ".md", ".txt", ".rst"):
        if path.endswith(suffix):
            return path[: -len(suffix)]
    return path


def summarize(scorer, cases: list[dict], results: dict, split: str, html_set: bool = False) -> dict:
    mine = [c for c in cases if c["answerable"] and (split == "all" or c["split"] == split)]
    if not mine:
        return {}
    def recall(r: dict, quotes: list[str]) -> float:
        if html_set:
            return loose_recall(r.get("seen") or [seen_text(t, p) for t, p in zip(r["texts"], r["paths"])], quotes)
        return scorer.recall(r["texts"], quotes)

    rec = [recall(results[c["id"]], [e["quote"] for e in c["evidence"]]) for c in mine]
    hit = [twin(c["file"]) in {twin(p) for p in results[c["id"]]["paths"]} for c in mine]
    return {"n": len(mine), "recall": sum(rec) / len(rec), "per_case": rec, "complete": sum(r == 1 for r in rec),
            "file_hit": sum(hit) / len(hit),
            "tokens": sum(results[c["id"]]["tokens"] for c in mine) / len(mine)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", choices=sorted(SETS), default="npm",
                    help="which question set (default npm; npm-html and node-html: the same over the HTML pages)")
    ap.add_argument("--docs", type=Path, default=None, help="the docs folder (default: where Debian installs them)")
    ap.add_argument("--budget", type=int, default=1400)
    ap.add_argument("--split", choices=("all", "development", "holdout"), default="development")
    ap.add_argument("--eval-dir", type=Path, default=DEFAULT_EVAL, help="the shared readme-qa folder (scorer, baseline)")
    ap.add_argument("--cases", action="store_true", help="one line per development case")
    ap.add_argument("--cli", action="store_true", help="use `rag index` + `rag pack --batch` instead of Engine")
    args = ap.parse_args()
    args.docs = args.docs or (mixed_root(args.set) if args.set in MIXED_SETS else SETS[args.set][1])
    if not args.docs.is_dir():
        raise SystemExit(f"no docs at {args.docs}: install Debian's nodejs (npm, node), cmake-data (cmake), "
                         "python3-doc (pydoc-*), postgresql-doc-15 (pg), python-django-doc (django), "
                         "apache2-doc (apache) or rust-doc (rust), which ship these docs, or pass --docs")
    scorer = load_scorer(args.eval_dir.resolve())
    cases, problems = load_cases(args.docs, args.set, scorer.normalize)
    for p in problems:
        print(f"skipped: {p}")
    cases = [c for c in cases if args.split == "all" or c["split"] == args.split]
    files = doc_files(args.docs, args.set)

    t0 = time.perf_counter()
    docs = [(rel, rel, doc_text(args.docs / rel)) for rel in files]
    rows = [("baseline_bm25 (shared)", baseline_over(args.eval_dir, docs, cases, args.budget), None)]
    base_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="ragweb-docs-qa-") as tmp:
        t0 = time.perf_counter()
        if args.cli:
            root = Path(tmp) / "docs"
            for rel in files:
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_bytes((args.docs / rel).read_bytes())
            rag("index", str(root))
            target, work = root, Path(tmp)
        else:
            from ragweb.engine import Engine
            target, work = Engine.memory(), None
            for rel in files:
                target.add_document(rel, doc_text(args.docs / rel))
            target.flush()
        index_s = time.perf_counter() - t0
        for name, flags in SYSTEMS:
            t0 = time.perf_counter()
            results, packs = run(target, cases, flags, args.budget, work)
            rows.append((name, results, packs, time.perf_counter() - t0))

    splits = ["development", "holdout"] if args.split == "all" else [args.split]
    n_ans = sum(c["answerable"] for c in cases)
    print(f"docs-qa ({args.set} docs, {len(files)} files in one index) at budget {args.budget}; "
          f"{len(cases)} questions ({n_ans} answerable); "
          f"{'rag index + rag pack --batch' if args.cli else 'in-process Engine'}")
    print(f"{'system':<24}" + "".join(f"{s[:5] + ' recall':>22}{'file hit':>10}" for s in splits)
          + f"{'tokens':>8}{'U refused':>11}{'A refused':>11}{'ev. AUC':>8}{'seconds':>9}")
    for row in rows:
        name, results, packs = row[:3]
        secs = row[3] if len(row) > 3 else base_s
        line = f"{name:<24}"
        for s in splits:
            g = summarize(scorer, cases, results, s, args.set in LOOSE_SETS)
            line += (f"{100 * g['recall']:>12.1f}% ({g['complete']:>2}/{g['n']:>2}){100 * g['file_hit']:>9.0f}%"
                     if g else f"{'-':>22}{'-':>10}")
        g = summarize(scorer, cases, results, "all", args.set in LOOSE_SETS)
        line += f"{g['tokens']:>8.0f}"
        rf = refusals(cases, packs)
        line += (f"{rf['U_none']:>5}/{rf['U']:<5}{rf['A_none']:>5}/{rf['A']:<5}" if rf else f"{'-':>11}{'-':>11}")
        line += auc_cell(rf, 8) + f"{secs:>9.2f}"
        print(line)
    print(f"ragweb indexing: {index_s:.2f} s. file hit: the answer's file is among the packed snippets' paths.")
    if args.set in MIXED_SETS:  # each member's share, development / holdout recall
        for m in MIXED_SETS[args.set]:
            mine = [c for c in cases if c["id"].startswith(m + ":")]
            cells = []
            for name, results, *_ in rows:
                parts = [summarize(scorer, mine, results, sp, True) for sp in splits]
                cells.append(f"{name.split(' ')[0] if name.startswith('baseline') else name}: "
                             + " / ".join(f"{100 * g['recall']:.1f}" if g else "-" for g in parts))
            print(f"  {m:<11} " + " | ".join(cells))
    if args.cases:
        print(f"\nper development case: recall/tokens, then the files packed (first 3)")
        for c in cases:
            if c["split"] != "development":
                continue
            cells = []
            for name, results, packs, *_ in rows:
                r = results[c["id"]]
                quotes = [e['quote'] for e in c['evidence']]
                rec = ("U" if not c["answerable"] else
                       f"{loose_recall(r.get('seen') or r['texts'], quotes):.2f}" if args.set in LOOSE_SETS else
                       f"{scorer.recall(r['texts'], quotes):.2f}")
                ev = f"/{packs[c['id']]['evidence'][0]}" if packs else ""
                cells.append(f"{rec}/{r['tokens']}{ev}")
            top = []
            for p in rows[1][1][c["id"]]["paths"]:
                if p not in top:
                    top.append(p)
            mark = "" if not c["answerable"] else (" *" if c["file"] in top else " MISS")
            print(f"{c['id'][:30]:<31}{'  '.join(f'{x:>14}' for x in cells)}  [{c['file'] or '-'}]{mark} "
                  f"{', '.join(top[:3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

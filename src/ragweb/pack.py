"""Packing: the best evidence for a question inside a hard token budget (reference §3-4).

`pack_context` is what `Engine.pack`, `rag pack` (and `--batch`) and `ragPack` call.

1. Candidates come from `Engine.search` (BM25 + path boost, MMR; ``top_k`` is the pool).
2. Whole chunks (``compact=False``, or when every candidate fits the budget whole):
   utility = score / tokens; chunks are taken greedily by utility while the budget
   allows; chunks of one file that touch or overlap merge into one snippet (no repeated
   lines); snippets are ordered by score. Each ``text`` is exactly the lines of ``range``.
3. Compaction (the default, config ``pack.compact``): when the candidates do not all fit
   whole, the regions of the best `COMPACT_CHUNKS` candidates (grown to whole paragraphs)
   -- and, not in lean mode, the whole of the best file (the one with the most BM25 mass
   among the candidates) when it has at most `WHOLE_FILE_LINES` lines: the answer often
   sits in a chunk of the right page that ranks below the pool -- are cut into units
   (sentences, list items, headings, table rows, code lines), which are scored against
   the question (`ragweb.compact`; each unit's score also weighs its
   file's share of the candidates' BM25 relevance, so in an index of many files the file
   that best covers the question leads -- but never less than (its best candidate's score /
   the best score) ** `HIT_PRIOR_POWER`: the page of the best chunk is not outweighed by a
   page of many weaker ones) and selected:

   - units by score while they fit the whole budget, never those below
     `compact.MIN_RELATIVE` of the best unit (a pack with one clear answer stays small;
     in a big corpus the budget is spent on units that match the question);
   - then **context fill**, up to `CONTEXT_SHARE` of the budget in all: what is left goes
     to the context of the selected units -- the sentences around a selected sentence,
     the first sentences under a selected heading, in the same section, nearest and
     best-anchored first (`compact.context_fill`) -- so a small file's pack carries the
     lines that explain its best matches instead of stopping far below the budget;
   - then (within the same share; lean: within its budget) what is still left goes to the rest
     of the best chunk's units in document order, so a short question with one clear
     match ("what does `npm cit` do?") gets the passage around that match, not one line.

   Context is capped below the budget because it is a guess (it does not match the
   question): on the development questions the share of the budget that matching units
   use decides recall in big corpora, while context only helps small packs.

   **Gaps are marked by snippet boundaries**: selected units with only whitespace between
   them (at most `compact.JOIN_BREAKS` line breaks of it: a longer blank stretch, such as a
   page's blanked markup, is not paid for) form one run, and each run is one snippet, so
   every snippet is one exact span of its file and two snippets never share text:

   - ``range`` ``Ls-e`` covers exactly the lines of the run;
   - ``text`` is exactly the file text of that span. When the run starts or ends inside a
     line (a sentence of a long paragraph line) the snippet also has ``"cols": [c0, c1]``:
     the text starts at column ``c0`` (0-based) of line ``s`` and ends before column ``c1``
     of line ``e``; without ``cols`` it is the whole lines. So ``text`` can always be
     checked against the file: it is ``"\n".join(lines[s-1:e])[c0 : len - (len(line e) - c1)]``;
   - for an HTML page the snippet has ``"visible": true`` and ``text`` is the visible text
     of that same span (`ragweb.markup`: its shown lines with the markup dropped, `readable`:
     a run of empty lines as one), here and in every other kind of snippet; units are cut and scored in the page's view, and
     their costs are those of the visible text, so the budget stays exact;
   - snippets of one file are in document order (units keep their order); files are in
     order of their best unit's score; ``why`` names the units and matched terms
     (``(context)`` for a run of context units only).

   **Whole pages** (`whole_pages`, also in lean mode): among the best `WHOLE_PAGE_TOP`
   candidates, each whose file is short as a whole (at most `WHOLE_PAGE_TOKENS`: a reference
   page about one property or command, even when the chunker cut it at a heading) is
   packed whole, in rank order, into at most
   `WHOLE_PAGE_SHARE` of the budget; units overlapping them are dropped and the rest is
   compacted as above. Cut into sentences, such a page loses the lines that say what it
   is about (on a development set of CMake's one-property pages: 72% -> 83% recall).

   **Hybrid** (`WHOLE_TOP`, 0 = off, the default): the best ``WHOLE_TOP`` candidates are
   first packed whole (in rank order, while they fit the budget), units that
   overlap their lines are dropped, and the rest of the budget is compacted as above. Off
   because leave-one-source-out cross-validation on the development READMEs
   (``bench/eval_readme_qa.py --cv``) measured it below plain compaction.

   ``lean`` (config ``pack.lean``) trades recall for tokens: sharper term weights
   (`compact.LEAN_IDF_POWER`), a higher score floor (`compact.LEAN_MIN_RELATIVE`) and at
   most `LEAN_BUDGET_SHARE` of the budget (context fill included); lean always compacts,
   even when everything would fit whole (with ``compact=False`` it packs whole chunks
   into that share).
4. Evidence (`assess_evidence`): ``"evidence"`` is ``"sufficient"``, ``"weak"`` or
   ``"none"`` and ``"evidence_score"`` (0..1) the share of the question's information
   (IDF-weighted terms, see `evidence_file_weights`) that the packed text of the
   best-covering file contains. Each file is judged with its own statistics blended in
   (`EVIDENCE_FILE_IDF`), so a word on every page of a file (its subject, its product
   name) does not make the file look like an answer; question terms in the file's path
   count as found. An empty pack is ``"none"`` with score 0. A lean pack, which holds
   less of the question's wording by design, has lower thresholds.

``used_tokens`` is the budget counter (`ragweb.tokens.count_tokens`) summed over the
snippet texts, and never exceeds ``budget_tokens``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ragweb import compact as cp
from ragweb.analysis import related_terms
from ragweb.markup import readable, visible
from ragweb.search import bm25_idf, changelog_path, license_path, license_title, license_weight
from ragweb.tokens import count_tokens

COMPACT_CHUNKS = 20        # at most this many of the best candidates are compacted (>= 1)
CONTEXT_SHARE = 0.6        # a compacted pack's context fills stop at this share of the budget (0..1]
LEAN_BUDGET_SHARE = 0.32   # lean mode fills at most this share of the budget: 448 of 1,400 (0..1]
TOP_CHUNK_FILL = True      # a compacted pack's leftover budget goes to the rest of the best chunk (lean: of its smaller budget)
WHOLE_PAGE_TOP = 5         # among the best this many candidates, each whole short file goes whole (0: off) ...
WHOLE_PAGE_TOKENS = 400    # ... when it has at most this many tokens ...
WHOLE_PAGE_SHARE = 0.5     # ... while they fit this share of the (lean) budget (0..1]
WHOLE_TOP = 0              # hybrid: the best this many candidates go whole (if they fit) before compacting the rest (>= 0)
EXPAND_LINES = 12          # a compacted region grows by up to this many lines to paragraph ends
HIT_PRIOR_POWER = 6.0      # a file's prior is at least (its best candidate's score / the best's) ** this (0: mass only)
WHOLE_FILE_LINES = 2000    # the best file's units all compete when it has at most this many lines (0: off)
WHOLE_FILE_CHARS = 1_000_000  # ... and characters (2,000 lines of 2,000 characters took a pack 2.3 s)
EVIDENCE_FILE_IDF = 0.5    # evidence: share of a term's weight from its IDF among the file's own chunks (0..1)
EVIDENCE_MIN_CHUNKS = 8    # ... a file counts as at least this many chunks (a tiny file cannot tell) (>= 1)
SUFFICIENT = 0.6           # evidence_score at or above this: "sufficient" (0..1)
WEAK = 0.45                # evidence_score at or above this: "weak"; below: "none" (0..1)
LEAN_SUFFICIENT = 0.56     # the same for a lean pack, which holds less of the question's wording by
LEAN_WEAK = 0.42           # design (dev sets: 6 of 19 wrong refusals fewer, the same refusals)
COMPOUND_PACK = 1.0        # match strength in packing of two question words written as one ("backoff"; 0: off)
CHANGELOG_ITEMS = True     # each paragraph and list item of a change log is a section of its own: no neighbour or section bonus from other items
SEMANTIC_NORMAL = 0.0      # share of pack.semantic_weight a normal (not lean) pack uses (0..1)


@dataclass
class Snippet:
    """A packed span of one file: lines start..end, its text and why it was chosen.

    ``col_start``/``col_end`` are set when the span starts/ends inside a line: the text
    starts at column ``col_start`` of line ``start`` and ends before ``col_end`` of line ``end``.
    """

    path: str
    start: int
    end: int
    score: float
    text: str
    file_id: int
    why: str = ""
    terms: list[str] = field(default_factory=list)
    col_start: int | None = None
    col_end: int | None = None
    visible: bool = False  # an HTML page's: text is the visible text of the range (`ragweb.markup`)

    def __post_init__(self):
        self.set_text(self.text)

    def set_text(self, text: str) -> None:
        """Set the text: an HTML page's as `readable` gives it."""
        self.text = readable(text) if self.visible else text

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)

    def to_json(self) -> dict:
        out = {"path": self.path, "range": f"L{self.start}-{self.end}", "why": self.why,
               "text": self.text, "score": round(self.score, 4)}
        if self.col_start is not None:
            out["cols"] = [self.col_start, self.col_end]
        if self.visible:
            out["visible"] = True
        return out


def _merge(group: list[Snippet], lines: list[str]) -> list[Snippet]:
    """Merge snippets of one file whose line ranges overlap or touch."""
    group = sorted(group, key=lambda s: (s.start, s.end))
    out: list[Snippet] = []
    grown: list[Snippet] = []  # the merged snippets that took in another: their text is made once, at the end
    for s in group:
        if s.col_start is not None:  # a piece of one long line stays as it is
            out.append(s)
            continue
        if out and out[-1].col_start is None and s.start <= out[-1].end + 1:
            last = out[-1]
            if not grown or grown[-1] is not last:
                grown.append(last)
            last.end = max(last.end, s.end)
            last.score = max(last.score, s.score)
            last.terms = sorted(set(last.terms) | set(s.terms))
        else:
            out.append(Snippet(s.path, s.start, s.end, s.score, s.text, s.file_id, s.why,
                               list(s.terms), s.col_start, s.col_end, s.visible))
    for last in grown:
        last.set_text("\n".join(lines[last.start - 1:last.end]))
    return out


def _whole(h, why: str) -> Snippet:
    """A hit as a whole-chunk snippet."""
    return Snippet(h.path, h.start_line, h.end_line, h.score, h.text, h.file_id, why,
                   list(h.terms), h.col_start, h.col_end, h.visible)


def _fill_whole(hits, limit: int, lines_of, why: str, stop_at_miss: bool) -> list[Snippet]:
    """Take ``hits`` in order as whole chunks while the merged snippets fit ``limit``
    tokens; a hit that does not fit is skipped, or ends the fill with ``stop_at_miss``."""
    chosen: dict[int, list[Snippet]] = {}  # file id -> its chunks taken (files in the order first taken)
    merged: dict[int, list[Snippet]] = {}  # ... and their merged snippets
    used = 0
    for h in hits:  # (only the hit's own file is merged again: its snippets are all that can change)
        group = chosen.get(h.file_id, []) + [_whole(h, why.format(score=h.score))]
        trial = _merge(group, lines_of[h.file_id])
        cost = sum(s.tokens for s in trial) - sum(s.tokens for s in merged.get(h.file_id, ()))
        if used + cost <= limit:
            chosen[h.file_id], merged[h.file_id] = group, trial
            used += cost
        elif stop_at_miss:
            break
    return _by_score([s for group in merged.values() for s in group])


def score_why(engine) -> str:
    """A whole chunk's ``why``, to format with its score: the fused rank score's (at most
    1 / (rrf_k + 1)) in hybrid search, else BM25's."""
    return "fused score: {score:.4f}" if engine.search_mode() == "hybrid" else "BM25 score: {score:.2f}"


def select_whole(hits, budget: int, engine) -> list[Snippet]:
    """Greedy by utility (score / tokens) over whole chunks, merging same-file neighbours."""
    lines_of = packed_lines(engine, hits)
    order = sorted(hits, key=lambda h: (-(h.score / max(count_tokens(h.text), 1)), -h.score, h.path, h.start_line))
    return _fill_whole(order, budget, lines_of, score_why(engine), stop_at_miss=False)


def merge_all(snippets: list[Snippet], lines_of: dict[int, list[str]]) -> list[Snippet]:
    by_file: dict[int, list[Snippet]] = {}
    for s in snippets:
        by_file.setdefault(s.file_id, []).append(s)
    return _by_score([s for fid, group in by_file.items() for s in _merge(group, lines_of[fid])])


def _by_score(snippets: list[Snippet]) -> list[Snippet]:
    """``snippets`` best first (then by path and line)."""
    return sorted(snippets, key=lambda s: (-s.score, s.path, s.start))


def _line_priors(hits, n_lines: int, best: float) -> list[float]:
    """For each line of a file (0-based), the best score / ``best`` of the line hits
    covering it (0 where none does)."""
    out = [0.0] * n_lines
    for h in hits:
        if h.col_start is None:
            r = h.score / best
            for i in range(h.start_line - 1, min(h.end_line, n_lines)):
                if r > out[i]:
                    out[i] = r
    return out


def _whole_file(lines: list[str], max_line: int) -> list[tuple[int, int]]:
    """The whole file as regions: every run of lines between over-long lines (those are
    indexed as pieces, and compacted piece by piece)."""
    out: list[tuple[int, int]] = []
    start = None
    for i, line in enumerate(lines, 1):
        if len(line) > max_line:
            if start is not None:
                out.append((start, i - 1))
            start = None
        elif start is None:
            start = i
    if start is not None:
        out.append((start, len(lines)))
    return out


def _regions(hits, lines: list[str], max_line: int) -> list[tuple[int, int]]:
    """Union of the line hits' ranges, each grown to paragraph boundaries (blank lines),
    but never into a line longer than ``max_line`` characters (those are indexed as
    pieces, and compacted piece by piece)."""
    spans = sorted((h.start_line, h.end_line) for h in hits if h.col_start is None)
    out: list[list[int]] = []
    n = len(lines)

    def grows(i: int) -> bool:  # 0-based line i may join the region
        return bool(lines[i].strip()) and len(lines[i]) <= max_line

    for s, e in spans:
        k = 0
        while s > 1 and k < EXPAND_LINES and grows(s - 2):
            s -= 1
            k += 1
        k = 0
        while e < n and k < EXPAND_LINES and grows(e):
            e += 1
            k += 1
        if out and s <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def lean_budget(budget: int) -> int:
    """The budget lean mode fills at most: `LEAN_BUDGET_SHARE` of the given one."""
    return max(1, int(budget * LEAN_BUDGET_SHARE))


class _PackedLines(dict):
    """file id -> the lines a pack of its text is cut from (`Engine.file_visible`: the stored
    lines, or an HTML page's visible lines), read when first asked for: a pack cuts whole
    chunks and pages from few of its candidates' files."""

    def __init__(self, engine, paths: dict[int, str]):
        super().__init__()
        self._engine, self._paths = engine, paths

    def __missing__(self, file_id: int) -> list[str]:
        eng = self._engine
        lines = self[file_id] = eng.file_visible(file_id, self._paths[file_id], eng.file_lines([file_id])[file_id])
        return lines


def packed_lines(engine, hits) -> dict[int, list[str]]:
    """file id -> the lines a pack of its text is cut from, for the files of ``hits``."""
    return _PackedLines(engine, {h.file_id: h.path for h in hits})


def compact_hits(engine, query: str, hits, budget: int, lean: bool) -> list[Snippet]:
    """Units of the best hits' regions, scored and selected within ``budget`` (module doc)."""
    top = hits[:COMPACT_CHUNKS]
    qterms = engine.analyzer.query_terms(query)
    if not top or not qterms:
        return []
    lines_of = engine.file_lines(h.file_id for h in top)
    # units are cut and scored in each file's view (an HTML page's markup blanked, same
    # columns); snippets are cut from the stored lines, so citations show the file as it is
    view_of = {h.file_id: engine.file_view(h.file_id, h.path, lines_of[h.file_id]) for h in top}
    shown_of = {h.file_id: engine.file_shown(h.file_id, h.path, lines_of[h.file_id]) for h in top
                if engine.reads_shown(h.path)}
    max_line = engine.settings["chunk_tokens"] * 4  # longer lines were indexed as pieces
    best = max(h.score for h in top) or 1.0
    by_file: dict[int, list] = {}
    for h in top:
        by_file.setdefault(h.file_id, []).append(h)
    # a file's share of the candidates' relevance: the sum of its chunks' scores
    mass = {fid: sum(h.score for h in group) for fid, group in by_file.items()}
    top_mass = max(mass.values()) or 1.0
    # ... but a file with one candidate nearly as good as the best is not one stray match:
    # the answer may be on a page that the best page's many near-misses outweigh in mass
    file_prior = {fid: max(mass[fid] / top_mass,
                           (max(h.score for h in group) / best) ** HIT_PRIOR_POWER if HIT_PRIOR_POWER else 0.0)
                  for fid, group in by_file.items()}
    # the best file is read whole when it is prose and not too long (not in lean mode); a
    # program's matching functions are in the pool already, the rest of it is noise
    best_fid = max(by_file, key=mass.__getitem__)  # ties: the file of the better first hit
    best_lines = lines_of[best_fid]
    read_whole = best_fid if (not lean and len(best_lines) <= WHOLE_FILE_LINES
                              and sum(map(len, best_lines)) <= WHOLE_FILE_CHARS
                              and engine.is_prose(by_file[best_fid][0].path)) else None
    units: list[cp.Unit] = []
    paths = {}
    logs: set[int] = set()  # the files that are change logs (`search.changelog_path`)
    region = 0
    for fid, group in by_file.items():
        lines = view_of[fid]
        paths[fid] = group[0].path
        if changelog_path(engine.weighed_path(paths[fid])):
            logs.add(fid)
        md = engine.is_prose(group[0].path)
        ol = engine.file_outline(fid, lines, md, paths[fid])
        regions = [(cp.split_units(lines, s, e, md, cp.file_context(lines, s, md, ol), ol), None)
                   for s, e in (_whole_file(lines, max_line) if fid == read_whole else
                                _regions(group, lines, max_line))]
        regions += [(cp.piece_units(lines[h.start_line - 1], h.start_line, h.col_start, h.col_end,
                                    tuple(t for _, t in cp.file_context(lines, h.start_line, md, ol)[1])), h)
                    for h in group if h.col_start is not None]
        line_prior = _line_priors(group, len(lines), best)
        for region_units, piece in regions:
            region += 1
            for u in region_units:
                u.file, u.region = fid, region
                u.prior = piece.score / best if piece is not None else max(line_prior[u.start - 1:u.end])
                u.file_prior = file_prior[fid]
                u.items = CHANGELOG_ITEMS and fid in logs
                units.append(u)
    # each file's units in document order (an over-long line's pieces were added after its
    # regions): selection costs a run of neighbours in this list as `join_runs` joins them
    file_order = {fid: i for i, fid in enumerate(by_file)}
    units.sort(key=lambda u: (file_order[u.file], u.key))
    limit = lean_budget(budget) if lean else budget
    out_lines = packed_lines(engine, top)
    why = score_why(engine)
    whole = (top_whole(top, WHOLE_TOP, limit, out_lines, why) if not lean else []) or whole_pages(top, limit, out_lines, why)
    if whole:  # units overlapping a whole chunk's lines are not offered again
        spans = [(s.file_id, s.start, s.end) for s in whole]
        units = [u for u in units if not any(f == u.file and s <= u.end and u.start <= e for f, s, e in spans)]
        limit -= sum(s.tokens for s in whole)
        if not units or limit <= 0:
            return whole
    vocab = cp.prepare_units(units, engine.analyzer, {fid: (lines_of[fid], shown) for fid, shown in shown_of.items()})
    synonyms = engine.analyzer.synonyms(engine.config["pack"].get("synonyms", []))
    related = related_terms(qterms, vocab, synonyms=synonyms)
    if COMPOUND_PACK:
        for joined, first in engine.analyzer.compound_terms(query).items():
            if joined in vocab and first in qterms:  # ("back off": a unit saying "backoff" says "back off")
                rel = related.setdefault(first, {})
                rel[joined] = max(rel.get(joined, 0.0), COMPOUND_PACK)
    idf = engine.idf_of(sorted(set(qterms) | {t for rel in related.values() for t in rel}))
    idf = cp.blend_local_idf(idf, units)
    weights = cp.query_weights(idf, qterms, related, cp.LEAN_IDF_POWER if lean else 1.0)
    if not weights:
        return whole
    cp.score_units(units, weights, engine.analyzer, related)
    semantic = engine.config["pack"]["semantic_weight"] * (1.0 if lean else SEMANTIC_NORMAL)
    if engine.embedder is not None and semantic > 0:
        # prose files only: on programs this model's similarity misled (code set: lean -12 points);
        # a README's code examples gain from it
        from ragweb import embeddings
        prose_files = {fid for fid, path in paths.items() if engine.is_prose(path)}
        prose = [u for u in units if u.file in prose_files]
        if prose:
            cp.add_semantic(prose, embeddings.passage_similarities(engine.embedder, query, [u.text for u in prose]),
                            semantic)
    changelog_w = engine.config["retrieve"]["changelog_weight"]
    if changelog_w != 1.0 and logs:  # (as search weighs their chunks)
        for u in units:
            if u.file in logs:
                u.score *= changelog_w
    weigh_licenses(units, {fid: engine.weighed_path(path) for fid, path in paths.items()},
                   license_weight(engine.analyzer, qterms, engine.config["retrieve"]["license_weight"]))
    chosen = cp.select_units(units, limit, view_of, cp.LEAN_MIN_RELATIVE if lean else cp.MIN_RELATIVE,
                             context=True, fill_top=TOP_CHUNK_FILL,
                             context_budget=limit if lean else int(budget * CONTEXT_SHARE),
                             shown_of=shown_of)
    snippets = []
    file_rank: dict[int, float] = {}
    for fid in sorted({u.file for u in chosen}):
        lines, shown = view_of[fid], shown_of.get(fid)
        for r in cp.join_runs(lines, [u for u in chosen if u.file == fid]):
            score = max(u.score for u in r.units)
            terms = sorted(set().union(*(u.terms for u in r.units)))
            partial = r.col_start != 0 or r.col_end != len(lines[r.end - 1])
            why = (f"compacted: {len(r.units)} unit{'s' if len(r.units) > 1 else ''}, "
                   f"best score {score:.2f}, terms: {', '.join(terms) or '(context)'}")
            text = r.text if shown is None else visible(cp.span_text(shown, r.start, r.col_start, r.end, r.col_end))
            snippets.append(Snippet(paths[fid], r.start, r.end, score, text, fid, why, terms,
                                    r.col_start if partial else None, r.col_end if partial else None,
                                    shown is not None))
            file_rank[fid] = max(file_rank.get(fid, 0.0), score)
    snippets.sort(key=lambda s: (-file_rank[s.file_id], s.path, s.start, s.col_start or 0))
    return whole + snippets


def weigh_licenses(units: list[cp.Unit], paths: dict[int, str], weight: float) -> None:
    """Scale the score of each unit of a license text by ``weight`` (``retrieve.license_weight``,
    as search does its chunks): a unit of a file named as one (`search.license_path`) or in a
    section titled as one (`search.license_title`: a manual's GNU FDL appendix, whose
    "Document" and "copy" match a question about here documents sentence by sentence)."""
    if weight == 1.0:
        return
    for u in units:
        if (license_path(paths[u.file]) or any(map(license_title, u.headings))
                or (u.kind == "heading" and license_title(u.text))):
            u.score *= weight


def whole_pages(hits, limit: int, lines_of: dict[int, list[str]], why: str) -> list[Snippet]:
    """The files of the best `WHOLE_PAGE_TOP` candidates that are short as a whole (at most
    `WHOLE_PAGE_TOKENS`: a page about one property, one command), each as one snippet of
    all its lines, in rank order while they fit `WHOLE_PAGE_SHARE` of ``limit`` tokens.
    Such a page is the answer with its context; cut into sentences it loses the lines that
    say what it is about. The page counts whole even when the chunker cut it at a heading."""
    pages: list[Snippet] = []
    room = int(limit * WHOLE_PAGE_SHARE)
    seen: set[int] = set()
    for h in hits[:WHOLE_PAGE_TOP]:
        if h.file_id in seen or h.col_start is not None:  # a piece of an over-long line: not short
            continue
        seen.add(h.file_id)
        lines = lines_of[h.file_id]
        start = next((i for i, line in enumerate(lines, 1) if line.strip()), 0)
        if not start:
            continue
        end = next(i for i in range(len(lines), 0, -1) if lines[i - 1].strip())
        # (its text keeps every character of these lines but some line breaks: a page
        # longer than that is not read into one)
        if cp.tokens_of_length(sum(map(len, lines[start - 1:end]))) > min(WHOLE_PAGE_TOKENS, room):
            continue
        page = Snippet(h.path, start, end, h.score, "\n".join(lines[start - 1:end]), h.file_id,
                       why.format(score=h.score) + " (whole page)", list(h.terms), visible=h.visible)
        tokens = page.tokens  # (of its readable text)
        if tokens <= WHOLE_PAGE_TOKENS and tokens <= room:
            room -= tokens
            pages.append(page)
    return pages


def top_whole(hits, n: int, limit: int, lines_of: dict[int, list[str]], why: str) -> list[Snippet]:
    """The best ``n`` hits as whole chunks (merged per file), in rank order, stopping at
    the first that does not fit ``limit`` tokens together with those before it."""
    return _fill_whole(hits[:n], limit, lines_of, why + " (whole)", stop_at_miss=True)


def file_term_df(engine, file_ids, terms) -> dict[int, tuple[int, dict[str, int]]]:
    """file id -> (its number of chunks, {term: how many of its chunks contain it}) for the
    given terms, from the terms' postings (read only for these few terms)."""
    file_ids = sorted(set(file_ids))
    chunk_file = engine.file_chunk_ids(file_ids) if file_ids else {}
    n_of = {fid: 0 for fid in file_ids}
    for fid in chunk_file.values():
        n_of[fid] += 1
    out = {fid: (n_of[fid], {}) for fid in file_ids}
    if not terms or not chunk_file:
        return out
    mine = chunk_file.keys()
    for term, ids in engine.term_chunk_ids(terms).items():
        for cid in mine & ids:  # live chunks of these files only (removed chunks have no row)
            df = out[chunk_file[cid]][1]
            df[term] = df.get(term, 0) + 1
    return out


def evidence_file_weights(engine, query: str, qterms: list[str], idf: dict[str, float],
                          n_chunks: int, df: dict[str, int]) -> dict[str, float]:
    """`compact.evidence_weights` for one file: each term's IDF in the index blended with its
    IDF among the file's own chunks (`EVIDENCE_FILE_IDF`; the file counts as at least
    `EVIDENCE_MIN_CHUNKS` chunks), and a term the file does not contain weighs as unseen
    (as a possible unknown name only when no chunk of the index contains it)."""
    lam = EVIDENCE_FILE_IDF
    n_f = max(n_chunks, EVIDENCE_MIN_CHUNKS)
    local = {t: idf.get(t, 0.0) ** (1.0 - lam) * bm25_idf(n_f, d) ** lam for t, d in df.items() if d > 0}
    n_eff = math.exp((1.0 - lam) * math.log(max(engine.n_chunks, 1)) + lam * math.log(n_f))
    known = {t for t, w in idf.items() if w > 0}
    return cp.evidence_weights(query, qterms, local, max(1, round(n_eff)), engine.analyzer, known)


def assess_evidence(engine, query: str, snippets: list[Snippet], lean: bool = False) -> tuple[str, float]:
    """("sufficient" | "weak" | "none", score 0..1) for the packed snippets.

    The score is the share of the question's information that the packed text of one
    file holds (the best file: terms scattered over unrelated files do not add up). Each
    question term weighs its IDF (`evidence_file_weights`): in the index, blended with its
    IDF among that file's own chunks -- a word on every page of a file (its subject, its
    product name) says little about whether the file answers this question -- and a term
    the file does not contain weighs as unseen: little for an everyday word, much for a
    name, number or identifier that the whole index never mentions
    (`compact.evidence_weights`). Question terms in the file's path count as found (the
    question names the file or its folder), and so does a question term the text says by
    another word of its group in the user's ``pack.synonyms`` (`declared_synonyms`: "k8s"
    said as "kubernetes"). The asker's own values (a pasted log line's
    timestamp, a traceback's line numbers: `compact.without_values`) are not weighed. The
    levels are the thresholds `SUFFICIENT` and `WEAK` (``lean``: `LEAN_SUFFICIENT` and
    `LEAN_WEAK`).
    """
    query = cp.without_values(query)
    qterms = engine.analyzer.query_terms(query)
    if not qterms or not snippets:
        return "none", 0.0
    idf = engine.idf_of(qterms)
    declared = declared_synonyms(engine)
    texts: dict[int, list[str]] = {}
    paths: dict[int, str] = {}
    for s in snippets:
        texts.setdefault(s.file_id, []).append(s.text)
        paths[s.file_id] = s.path
    stats = file_term_df(engine, texts, qterms)
    score = 0.0
    for fid, parts in texts.items():
        n_f, df_f = stats[fid]
        weights = evidence_file_weights(engine, query, qterms, idf, n_f, df_f)
        total = sum(weights.values())
        found = cp.text_terms(engine.analyzer, engine.weighed_path(paths[fid]), weights)
        for text in parts:
            found |= cp.text_terms(engine.analyzer, text, weights)
        others = {o: 1.0 for t in weights.keys() - found for o in declared.get(t, ())}
        if others:  # (a question word the text says in the user's other word for it)
            said = set().union(*(cp.text_terms(engine.analyzer, text, others) for text in parts))
            found |= {t for t in weights.keys() - found if declared.get(t, frozenset()) & said}
        if total > 0:
            score = max(score, sum(weights[t] for t in found) / total)
    score = round(score, 4)
    if score >= (LEAN_SUFFICIENT if lean else SUFFICIENT):
        return "sufficient", score
    if score >= (LEAN_WEAK if lean else WEAK):
        return "weak", score
    return "none", score


def declared_synonyms(engine) -> dict[str, frozenset]:
    """Term -> the other terms of its groups in ``pack.synonyms``, the words the user declares
    the same thing, for the evidence signal (`assess_evidence`). The built-in groups
    (`analysis.SYNONYMS`: "delete", "remove") are related words, not the same: compaction
    weighs them at a third, and the evidence leaves them out."""
    groups = engine.config["pack"].get("synonyms") or []
    return engine.analyzer.group_terms(groups) if groups else {}


RECENCY_HALF_LIFE_DAYS = 30.0  # pack.recency_boost: a file this much older than the newest gets half


def apply_recency(hits, boost: float):
    """Scale scores by ``1 + boost · r`` and re-sort, where r = 0.5 ** (age / half-life) and
    age is how much older the hit's file is than the newest file among the hits, in whole
    days. Files written together (a checkout, a copy) get the same factor, so only real age
    counts: a file a microsecond newer than its copy does not outrank it, and ties still
    break on the path, natively and on the page, whose file times are whole milliseconds. A
    file whose time is not known (0: a text given to the page's ``ragIndex``, a dropped file
    without one) is not taken as old: it gets the newest's factor."""
    if not boost or len(hits) < 2:
        return hits
    newest = max((h.mtime for h in hits if h.mtime != 0), default=0.0)
    for h in hits:
        days = (newest - h.mtime) // 86400.0 if h.mtime != 0 else 0.0
        h.score *= 1.0 + boost * 0.5 ** (days / RECENCY_HALF_LIFE_DAYS)
    return sorted(hits, key=lambda h: (-h.score, h.path, h.start_line))


def pack_context(engine, query: str, budget: int | None = None, top_k: int | None = None,
                 path_glob: str | None = None, compact: bool | None = None,
                 lean: bool | None = None) -> dict:
    """Search, then pack within ``budget``; returns the reference §4 dict plus evidence."""
    pc = engine.config["pack"]
    budget = pc["token_budget"] if budget is None else budget
    engine.check_options(budget=budget)
    compact = pc.get("compact", True) if compact is None else bool(compact)
    lean = pc.get("lean", False) if lean is None else bool(lean)
    # (whole chunks keep a passage that repeats most of a better one: the rest of it may be
    # what the better one lacks, and a whole chunk cannot be cut; compaction says each
    # sentence once by itself)
    hits = apply_recency(engine.search(query, top_k=top_k, path_glob=path_glob, repeats=compact),
                         pc["recency_boost"])
    if compact and engine.analyzer.query_terms(query) and (lean or sum(count_tokens(h.text) for h in hits) > budget):
        snippets = compact_hits(engine, query, hits, budget, lean)
    else:
        snippets = select_whole(hits, lean_budget(budget) if lean else budget, engine)
    used = sum(s.tokens for s in snippets)
    limit = lean_budget(budget) if lean else budget
    while used > limit:  # a safety net: selection counts exactly (a fuzz hunt found two ways it did not),
        weakest = min(range(len(snippets)), key=lambda i: snippets[i].score)  # (the weakest goes)
        used -= snippets.pop(weakest).tokens
    for s in snippets:
        s.visible = engine.reads_shown(s.path)
    level, score = assess_evidence(engine, query, snippets, lean)
    return {"query": query, "budget_tokens": budget, "used_tokens": used,
            "evidence": level, "evidence_score": score,
            "snippets": [s.to_json() for s in snippets]}

"""Passage compaction: the parts of the top chunks that answer the question (reference §3).

A 500-token chunk usually holds one or two sentences that matter to a question. When the
ranked chunks do not fit the budget whole, `ragweb.pack` cuts the regions they cover into
*units* (`split_units`), scores them (`score_units`) and packs the best (`select_units`):

- a Markdown heading line, a table row, a short group of code lines (between blank lines,
  up to `CODE_GROUP_TOKENS`) or else one code line, with the lines it continues in when it
  ends in a backslash (up to `CONTINUED_TOKENS`: a shell command and its options); in a
  program the same for every line except comments and docstrings (`chunking.code_outline`),
  which are paragraphs;
- a list item of up to `ITEM_WHOLE_TOKENS` (an option and its "Default:" answer together),
  a paragraph of up to `PARAGRAPH_WHOLE_TOKENS`;
- a sentence of a longer paragraph or list item: a paragraph wrapped over several lines
  gives sentences that span lines, a long one-line paragraph gives sentences within the line.
  A Markdown hard break (a line ending in ``\\``) also ends a unit.
- a sentence that a short display of code interrupts ("set" / ``RemoveIPC=no`` / "in
  logind.conf.", an HTML page's ``<pre>``) is one unit with the code (`_join_interrupted`).
- a page's line that holds a heading after text, or text after a heading's end tag
  (`chunking.Outline.inline`: DocBook's one-page manuals), or a ``<pre>`` between text
  (`Outline.mixed`) is cut at their columns; a page's blank line inside a sentence or
  between a list item's mark and its text (`Outline.soft`) ends no paragraph.

Every unit is an exact span of the stored text: ``(start, col_start) .. (end, col_end)``
with 1-based lines and 0-based, end-exclusive columns. A unit that starts at the first
non-blank character of its line starts at column 0 (its indentation is kept) and one that
reaches the last non-blank character of its line ends at the line end, so units are whole
lines wherever the text allows. Units never overlap and every non-blank character of a
region except code-fence lines and Markdown link reference definitions (``[label]: url``,
which the rendered page does not show) is in exactly one unit.

Scoring. Each question term ``t`` weighs ``w(t)``: its IDF in the index blended with its
IDF among the units being compacted (`blend_local_idf`, `LOCAL_IDF`: in an index of many
files a term every candidate unit of one file contains -- the file's subject -- cannot
rank those units, however rare it is elsewhere), see `query_weights`. A unit *matches*
``t`` with strength 1 when it contains the term, or with a smaller strength when it
contains a related form (`analysis.related_terms`: "10" for "ten", "timeout" for "time", "max"
for "maximum"). Its score is

    (direct + (heading + neighbour) * content) * (1 + RANK_BONUS * prior)
        * (1 + SECTION_BONUS * section ** 2) * file ** FILE_PRIOR_POWER

- ``direct``: the matched weight, times `KIND_WEIGHT` of its kind (code lines and table of
  contents entries count less), divided by the square root of a length norm (`LENGTH_NORM`:
  a long sentence matches more terms by chance);
- ``heading``: `HEADING_BONUS` times the weight of question terms in its section heading
  that it does not contain itself, plus `PARENT_HEADING_BONUS` for the parent headings
  (the "Type:" line under ``#### retries`` is about retries);
- ``neighbour``: `NEIGHBOUR_BONUS` times the best ``direct`` of the units just before and
  after it in the same section (a sentence continuing a matching one);
- ``content``: `KIND_WEIGHT` again, capped by how much text it holds (`CONTENT_CHARS`),
  so a bare ``}`` inherits nothing from its heading;
- ``prior``: the BM25 score of the best chunk containing it over the best chunk's;
- ``section``: the share of the question's weight that its section (heading to heading,
  within the compacted region) matches as a whole: sentences of a section that covers the
  question beat stray sentences matching one of its words. In a change log (`Unit.items`)
  each paragraph and list item is a section: a version's items are unrelated, and together
  they hold every word of the question (bash's CHANGES packed its "$*" and "$@" fixes, and
  their neighbours, ahead of the manual's Special Parameters);
- ``file``: the unit's ``file_prior``, set by the caller (the pack: its file's share of
  the candidates' BM25 relevance, 1 for the best file, or more when its best candidate is
  nearly the best: `pack.HIT_PRIOR_POWER`).

Selection (`select_units`): units in order of score while they fit the budget, counted
exactly (touching units form one run, counted once); a sentence already taken from
another place (generated docs repeat an option's description on every page; a folder may
hold a page's Markdown source and its HTML build) is not taken again (`DEDUP_CHARS`,
compared by `same_text_key`; code lines are, so that examples keep their imports), nor is
one that is part of a unit another file packed or made of such units' sentences
(`DEDUP_CONTAINED`, `DEDUP_COVERED`: twins cut a paragraph at other places), unless it
joins a taken passage -- and then still not when another file packed it and it is long
(`DEDUP_JOIN_CHARS`) or the unit it joins is such a repeat too. A unit taken by score
brings the term it is under when that is a definition's (an HTML page's ``<dt>``: a function's
signature, an option, `${#parameter}`; a Sphinx entry: `HEAD_CARRY_LEVEL`), at most
`HEAD_CARRY_UNITS` units above it and `HEAD_CARRY_TOKENS` long: a description is no answer
without the name it describes. Units scoring below `MIN_RELATIVE`
of the best unit are not taken, so a pack with one clear answer stays small and a pack
for a vague question spends more. With ``context``, what the budget has left then goes to
the context of the selected units (`context_fill`): their neighbours in the same section,
up to `CONTEXT_DISTANCE` units away, ranked by their anchor's score x `CONTEXT_DECAY` ** d.
Lean mode weighs terms by IDF ** `LEAN_IDF_POWER` (the rarest question terms decide) and
takes only units above `LEAN_MIN_RELATIVE` of the best.

Evidence weights (`evidence_weights`) for the answerability signal live here too, since
they read the question the same way.

Everything is pure Python and about linear in the size of the compacted regions.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import math
import re
from dataclasses import dataclass, field

from ragweb.analysis import is_cjk_char
from ragweb.chunking import ITEM_RE, Outline, code_outline, outline
from ragweb.markup import FILL, mask_directives, term_text, visible
from ragweb.search import bm25_idf
from ragweb.tokens import CHARS_PER_TOKEN, count_tokens

# --- tunables: what each one means, its default, and its range ------------------------------
HEADING_BONUS = 0.5          # x weight of question terms in the unit's own section heading (>= 0)
PARENT_HEADING_BONUS = 0.25  # x weight of question terms in the headings above that (>= 0)
NEIGHBOUR_BONUS = 0.5        # x best `direct` of the adjacent units of the same section (>= 0)
RANK_BONUS = 0.5             # score x (1 + this x chunk score / best chunk score) (>= 0)
LENGTH_NORM = 0.5            # 0: no length normalisation of `direct`, 1: full (0..1)
KIND_WEIGHT = {"code": 0.6, "toc": 0.2, "row": 1.0, "heading": 1.0, "text": 1.0}  # (0..1]
CONTENT_CHARS = 15           # units with fewer word characters get proportionally less bonus
CODE_PROSE = True            # in a program, comment and docstring lines are cut into sentences like paragraphs
CODE_GROUP_TOKENS = 30       # code lines between blank lines up to this many tokens: one unit
CONTINUED_TOKENS = 120       # a longer group's line ending in "\\" and the lines it continues in, up to this many: one unit
ITEM_WHOLE_TOKENS = 150      # a list item up to this many tokens is one unit, a longer one is sentences (0: always sentences)
PARAGRAPH_WHOLE_TOKENS = 20  # any paragraph up to this many tokens is one unit (0: always sentences)
JOIN_BREAKS = 3              # units with only whitespace of at most this many line breaks between them join (`joins`)
DEDUP_CHARS = 20             # a non-code unit of at least this many characters whose text is packed already is skipped (0: off)
DEDUP_CONTAINED = True       # ... also when its text (not a heading's) is part of a unit packed from another file (a twin page packed it whole)
DEDUP_COVERED = True         # ... or made of such units and their sentences, but for fewer than DEDUP_CHARS characters and a fifth of it (a twin cut the paragraph otherwise)
DEDUP_JOIN_CHARS = 40        # a repeat next to a taken unit is taken (it completes a passage) unless its text has this many characters or the unit it joins is a repeat too (0: length aside)
DEDUP_ROLES = True           # ... comparing a reST role (:func:`~a.b`) as its build shows it (b)
MIN_RELATIVE = 0.15          # take no unit scoring below this share of the best unit (0..1)
LEAN_MIN_RELATIVE = 0.27     # the same in lean mode (0..1)
LEAN_IDF_POWER = 1.5         # lean mode weighs question terms by IDF ** this (>= 1: rare terms count more)
HEADING_CONTEXT = False      # also pack the heading line of each selected unit's section, if it fits
HEAD_CARRY_UNITS = 8         # a unit taken by score at most this many units below its section's heading carries it (0: off) ...
HEAD_CARRY_TOKENS = 60       # ... when the heading costs at most this many tokens
HEAD_CARRY_LEVEL = 6         # ... and is of at least this level (6: an HTML page's <dt> term, 7+: a Sphinx entry; 1: any heading)
SECTION_BONUS = 1.0          # score x (1 + this x (share of the question its section matches) ** 2) (>= 0)
FILE_PRIOR_POWER = 0.3       # score x the unit's `file_prior` ** this (the pack: its file's BM25 mass / the best file's) (>= 0)
LOCAL_IDF = 0.5              # term weight: IDF in the index ** (1 - this) x IDF among the compacted units ** this (0..1)
CONTEXT_DECAY = 0.5          # context fill: a neighbour d units away ranks at its anchor's score x this ** d (0..1)
CONTEXT_DISTANCE = 3         # context fill: at most this many units away from a selected unit (>= 0)
UNSEEN_WEIGHT = 0.1          # evidence: a question term the judged file lacks, x an unseen term's IDF
UNSEEN_ENTITY_WEIGHT = 3.0   # ... when it is a name, number or identifier (`entity_words`) the whole index lacks

# A sentence ends at . ! or ? (plus closing quotes/brackets/emphasis, and in an HTML page's
# view the blanked markup of closing tags: "here.</code> Next") followed by whitespace; so it
# does at the full stops of other scripts: the Devanagari danda "।" "॥", the Arabic question
# mark "؟", the Urdu "۔", the Ethiopic "።", the Armenian "։"; and at the full-width "。" "！" "？"
# of CJK text (and its closing brackets) with no whitespace after it, as none follows there.
_SENT_END_RE = re.compile(r"[.!?\u0589\u061f\u06d4\u0964\u0965\u1362][\"')\]*_`%s]*(?=\s)"
                          r"|[\u3002\uff01\uff1f][\"')\]*_`\u300d\u300f\uff09\u3015\u3011\u300b\u3009%s]*" % (FILL, FILL))
# A list item that is only a link to a heading of the page: a table of contents entry.
_ITEM_START = frozenset("-*+0123456789")
_TOC_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[[^\]]*\]\(#[^)]*\)\s*$")
_WORD_RE = re.compile(r"\w+")
# A Markdown link reference definition, "[label]: destination" (CommonMark 4.7).
_LINK_DEF_RE = re.compile(r" {0,3}\[[^\]]+\]:[ \t]*\S")
_CODE_SPAN_RE = re.compile(r"`([^`]+)`")
# An address in a question (IPv4 or IPv6, a network's "/24" too): the asker's own value
_ADDRESS_RE = re.compile(r"(?<![\w:])(?<!\w\.)(?:\d{1,3}(?:\.\d{1,3}){3}|(?=[0-9A-Fa-f:]*\d)[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7})"
                         r"(?:/\d{1,3})?(?!\w|[.:]\w)")
_ABBREV = frozenset("e.g i.e etc vs cf approx no fig al resp incl".split())
# what closes or continues a sentence and starts none: after a stop and blanks, it is the
# markup of a page's view (a quoted literal, Texinfo's "the &lsquo;<samp>.</samp>&rsquo;
# matches", reads "the ‘ .        ’ matches"), not a new sentence (not "»", which opens a
# quotation in German: "Gut. »Neu«")
_NOT_SENTENCE_START = frozenset(",;:)]}\u2019\u201d")


@dataclass
class Unit:
    """One span of a file: lines ``start``..``end`` (1-based), columns ``col_start`` in the
    first line to ``col_end`` (exclusive) in the last line, and what kind of text it is."""

    start: int
    col_start: int
    end: int
    col_end: int
    text: str
    kind: str                     # heading | code | row | text
    headings: tuple = ()          # the section headings above it, innermost last
    file: int = 0                 # which file (a key of the caller's lines), set by the caller
    region: int = 0               # which compacted region of the file, set by the caller
    head: int = -1                # index of its section's heading unit in the scored list, or -1
    items: bool = False           # a change log's unit: each paragraph and list item of the file is a section (`score_units`), set by the caller
    level: int = 0                # a heading's level (`chunking.Outline.heads`; 6 an HTML page's <dt> term, 7+ a Sphinx entry), else 0
    section: int = 0              # which section (heading to heading, per file and region), set by `score_units`
    file_prior: float = 1.0       # its file's share of the candidates' relevance (0..1], set by the caller
    terms: frozenset = frozenset()
    match: dict = field(default_factory=dict)  # query term -> match strength (1, or a related form's)
    all_terms: set | None = None  # every search term of the text (set by `prepare_units`)
    content: int = 0              # word characters in the text
    score: float = 0.0
    direct: float = 0.0           # weight of the query terms it contains
    prior: float = 0.0            # relevance of the best chunk containing it (0..1)
    parts: dict = field(default_factory=dict)

    @property
    def key(self) -> tuple[int, int]:
        return (self.start, self.col_start)


def span_text(lines: list[str], start: int, col_start: int, end: int, col_end: int) -> str:
    """The exact text from (start, col_start) to (end, col_end) of ``lines`` (1-based lines)."""
    if start == end:
        return lines[start - 1][col_start:col_end]
    parts = [lines[start - 1][col_start:]]
    parts.extend(lines[start:end - 1])
    parts.append(lines[end - 1][:col_end])
    return "\n".join(parts)


def file_context(lines: list[str], upto: int, markdown: bool,
                 ol: Outline | None = None) -> tuple[bool, tuple]:
    """(inside a code fence?, heading stack of (level, text)) just before 1-based line
    ``upto``. ``ol``: the file's `outline` (computed when None)."""
    if not markdown:
        return False, ()
    ol = outline(lines, markdown) if ol is None else ol
    i = upto - 1
    stack: list[tuple[int, str]] = []
    for t in sorted(t for t in ol.heads if t < i):
        for level, text in [h[2:] for h in ol.inline[t]] if t in ol.inline else [ol.heads[t][:2]]:
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, text))
    return i in ol.code or ol.fence.get(i) is False, tuple(stack)


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) spans of the sentences of ``text`` (stripped of surrounding whitespace)."""
    spans = []
    pos = 0
    n = len(text)
    for m in _SENT_END_RE.finditer(text):
        end = m.end()
        # not after an abbreviation or a single letter ("e.g.", "U.S."; another script's full
        # stop ends a sentence after any word: "对。", "किताब।", whose last letter follows a mark)
        j = m.start()
        k = j
        while k > 0 and (text[k - 1].isalnum() or text[k - 1] == "."):
            k -= 1
        word = text[k:j].lower()
        if (word in _ABBREV or len(word) == 1) and text[j] in ".!?":
            continue
        nxt = end
        while nxt < n and text[nxt].isspace():
            nxt += 1
        first = nxt
        while first < n and (text[first] == FILL or text[first].isspace()):
            first += 1  # (the next sentence's first letter after its opening tags)
        if first < n and (text[first].islower() or text[first] in _NOT_SENTENCE_START):
            continue
        spans.append((pos, end))
        pos = nxt
    if pos < n:
        spans.append((pos, n))
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
    return out


def _hard_breaks(block: list[tuple[int, str, int]]) -> list[list[tuple[int, str, int]]]:
    """Split a paragraph at Markdown hard line breaks (a line ending in a backslash)."""
    parts, cur = [], []
    for item in block:
        cur.append(item)
        if item[1].endswith("\\"):
            parts.append(cur)
            cur = []
    if cur:
        parts.append(cur)
    return parts


def _continued_lines(code: list[tuple[int, str, int]]) -> list[list[tuple[int, str, int]]]:
    """``code`` lines (line number, text, column) in runs that are one logical line each: a
    line ending in a backslash continues in the next (a shell command over three lines). A
    run longer than `CONTINUED_TOKENS` (a C macro of forty lines) stays lines."""
    runs: list[list[tuple[int, str, int]]] = []
    cur: list[tuple[int, str, int]] = []
    for item in code:
        cur.append(item)
        if not item[1].rstrip().endswith("\\"):
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    out = []
    for run in runs:
        if len(run) > 1 and sum(len(t) + 1 for _, t, _ in run) - 1 > CONTINUED_TOKENS * CHARS_PER_TOKEN:
            out.extend([item] for item in run)
        else:
            out.append(run)
    return out


def split_units(lines: list[str], first: int, last: int, markdown: bool,
                context: tuple[bool, tuple] | None = None, ol: Outline | None = None) -> list[Unit]:
    """The units of lines ``first``..``last`` (1-based, inclusive), in document order.

    ``ol`` is the file's `outline` and ``context`` `file_context(lines, first, markdown, ol)`
    (each computed when None). A heading is one unit with its adornment lines.
    """
    if ol is None:
        ol = outline(lines, markdown) if markdown else code_outline(lines)
    _, stack = context if context is not None else file_context(lines, first, markdown, ol)
    stack = list(stack)
    units: list[Unit] = []
    para: list[tuple[int, str, int]] = []  # (line number, its text in the paragraph, the column it starts at)

    def heads() -> tuple:
        return tuple(h for _, h in stack)

    code: list[tuple[int, str, int]] = []  # (line number, its code, the column it starts at)

    def heading(level: int, text: str, s: int, a: int, e: int, b: int, shown: str):
        """A heading unit (lines ``s``..``e``, columns ``a``..``b``), which opens its section."""
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        units.append(Unit(s, a, e, b, shown, "heading", heads()[:-1], level=level))

    def flush_para():
        nonlocal para
        if not para:
            return
        h = heads()
        for piece in _hard_breaks(para):
            _paragraph_units(piece, units, h)
        para = []

    def flush_code():
        # a short group of code lines (between blank lines) is one unit, a long one is lines
        nonlocal code
        if not code:
            return
        h = heads()
        if len(code) > 1 and sum(len(t) + 1 for _, t, _ in code) - 1 <= CODE_GROUP_TOKENS * CHARS_PER_TOKEN:
            (s, _, a), (e, last_line, b) = code[0], code[-1]
            units.append(Unit(s, a, e, b + len(last_line), "\n".join(t for _, t, _ in code), "code", h))
        else:
            # (a line ending in "\\" goes on in the next: a command and its continuation
            # lines are one unit, not a command packed without its last options)
            for piece in _continued_lines(code):
                (s, _, a), (e, last_line, b) = piece[0], piece[-1]
                units.append(Unit(s, a, e, b + len(last_line), "\n".join(t for _, t, _ in piece), "code", h))
        code = []

    prose = ol.prose_lines() if not markdown and CODE_PROSE else {}
    ln = first
    while ln <= last:
        line = lines[ln - 1]
        stripped = line.strip()
        i = ln - 1
        ln += 1
        if not markdown:
            if not stripped:
                flush_code()
                flush_para()
            elif kind := prose.get(i):  # comments and docstrings read as paragraphs
                flush_code()
                if para and prose.get(para[-1][0] - 1) != kind:
                    flush_para()  # a docstring and the comment after it are two paragraphs
                para.append((i + 1, line, 0))
            else:
                flush_para()
                code.append((i + 1, line, 0))
            continue
        if i in ol.fence:
            flush_para()
            flush_code()
            continue
        if i in ol.mixed:  # a page's line of text and code: its <pre> elements' columns are code
            at = 0  # (and its headings' columns headings: a minified page)
            parts = sorted([(a, b, None) for a, b in ol.mixed[i]]
                           + [(a, b, (level, text)) for a, b, level, text in ol.inline.get(i, ())])
            for a, b, head in parts + [(len(line), len(line), None)]:
                if line[at:a].strip():
                    flush_code()
                    para.append((i + 1, line[at:a], at))
                if head is not None:
                    flush_para()
                    flush_code()
                    heading(*head, i + 1, a, i + 1, b, line[a:b])
                elif line[a:b].strip():
                    flush_para()
                    code.append((i + 1, line[a:b], a))
                at = b
            continue
        if i in ol.code:
            flush_para()  # (in Markdown a fence line did already; an HTML <pre> has none)
            if stripped:
                code.append((i + 1, line, 0))
            else:
                flush_code()
            continue
        flush_code()  # (an HTML <pre> ends without a fence line)
        if not stripped:
            if i in ol.soft and para:  # (a page's blank line inside a sentence or list item)
                para.append((i + 1, line, 0))
            else:
                flush_para()
            continue
        if i in ol.inline:  # a page's line that holds a heading and text: cut at its columns
            at = 0
            for a, b, level, text in ol.inline[i]:
                if line[at:a].strip():
                    para.append((i + 1, line[at:a], at))
                flush_para()
                heading(level, text, i + 1, a, i + 1, b, line[a:b])
                at = b
            if line[at:].strip():
                para.append((i + 1, line[at:], at))
            continue
        title = i if i in ol.heads else ol.adorn.get(i, -1)
        if title >= i:  # a heading starts here: one unit with its adornment lines in the region
            flush_para()
            level, text, _, end = ol.heads[title]
            end = min(end, last - 1)
            width = len(lines[end])
            heading(level, text, i + 1, 0, end + 1, width, span_text(lines, i + 1, 0, end + 1, width))
            ln = end + 2
            continue
        if title >= 0:  # the underline of a title above the region
            flush_para()
            units.append(Unit(i + 1, 0, i + 1, len(line), line, "text", heads()))
            continue
        if stripped.startswith("|"):
            flush_para()
            units.append(Unit(i + 1, 0, i + 1, len(line), line, "row", heads()))
            continue
        if not para and stripped[0] == "[" and _LINK_DEF_RE.match(line):
            continue  # a link reference definition (it cannot interrupt a paragraph): not shown
        if ITEM_RE.match(line) or i in ol.breaks:
            flush_para()
        para.append((i + 1, line, 0))
    flush_para()
    flush_code()
    return _join_interrupted(lines, units)


INTERRUPT_CHARS = 120  # a display of code of at most this many characters can sit inside a sentence


def _join_interrupted(lines: list[str], units: list[Unit]) -> list[Unit]:
    """Units with each sentence that a short code display interrupts made one unit.

    "it is recommended to set" / ``RemoveIPC=no`` / "in logind.conf.": a text unit that
    does not end a sentence, at most `INTERRUPT_CHARS` of code, and a text unit that starts
    in lower case are one sentence; apart, no part of it says anything.
    """
    out: list[Unit] = []
    i, n = 0, len(units)
    while i < n:
        a = units[i]
        i += 1
        out.append(a)
        if a.kind != "text" or i >= n or units[i].kind != "code":
            continue
        j, size = i, 0
        while j < n and units[j].kind == "code" and size <= INTERRUPT_CHARS:
            size += len(visible(units[j].text).strip())
            j += 1
        if size <= INTERRUPT_CHARS and j < n and units[j].kind == "text" and units[j].headings == a.headings:
            b = units[j]
            tail, head = visible(a.text).rstrip(), visible(b.text).lstrip()
            if (tail and tail[-1] not in ".!?" and head[:1].islower()
                    and all(gap_is_blank(lines, u, v) for u, v in zip(units[i - 1:j], units[i:j + 1]))):
                out[-1] = Unit(a.start, a.col_start, b.end, b.col_end,
                               span_text(lines, a.start, a.col_start, b.end, b.col_end), "text", a.headings)
                i = j + 1
    return out


def _paragraph_units(block: list[tuple[int, str, int]], out: list[Unit], heads: tuple):
    """The units of one paragraph (lines joined with newlines; each (line number, text, the
    column the text starts at): a part of a line beside a page's heading starts past it): itself
    when it is short (`PARAGRAPH_WHOLE_TOKENS`, or `ITEM_WHOLE_TOKENS` for a list item), else
    its sentences."""
    flat = "\n".join(line for _, line, _ in block)
    # a short list item is one unit: an option's description and its "Default:" sentence
    # (API docs) answer together; so is a paragraph too short to be worth cutting
    size = len(flat) / CHARS_PER_TOKEN
    whole = size <= PARAGRAPH_WHOLE_TOKENS or (size <= ITEM_WHOLE_TOKENS and ITEM_RE.match(block[0][1]))
    starts = []
    pos = 0
    for _, line, _ in block:
        starts.append(pos)
        pos += len(line) + 1
    # where each line's text begins and ends (a unit starting in a line's indent starts
    # the line; one ending in its trailing blanks ends it; a part of a line after a heading
    # starts at its text)
    lead = [len(line) - len(line.lstrip()) if not at else -1 for _, line, at in block]
    tail = [len(line.rstrip()) for _, line, _ in block]

    def locate(offset: int) -> tuple[int, int]:
        # the line holding ``offset`` (an offset at a line end stays on that line)
        i = max(bisect.bisect_right(starts, offset) - 1, 0)
        return i, offset - starts[i]

    spans = []
    for a, b in [(0, len(flat.rstrip()))] if whole else _sentence_spans(flat):
        if b - a > LONG_SPAN_CHARS and "\n" in flat[a:b]:
            spans.extend(_line_spans(flat, a, b))
        else:
            spans.append((a, b))
    for a, b in spans:
        i, ca = locate(a)
        j, cb = locate(b)
        la, lb = block[i][1], block[j][1]
        if ca <= lead[i]:
            ca = 0
        if cb >= tail[j]:
            cb = len(lb)
        text = span_text([la] if i == j else [line for _, line, _ in block[i:j + 1]],
                         1, ca, j - i + 1, cb)
        out.append(Unit(block[i][0], block[i][2] + ca, block[j][0], block[j][2] + cb, text, "text", heads))


def _line_spans(flat: str, a: int, b: int) -> list[tuple[int, int]]:
    """The lines of ``flat[a:b]`` as spans, without their blanks at either end."""
    out = []
    while a < b:
        e = flat.find("\n", a, b)
        e = b if e < 0 else e
        line = flat[a:e]
        if line.strip():
            out.append((a + len(line) - len(line.lstrip()), a + len(line.rstrip())))
        a = e + 1
    return out


# A "sentence" longer than this that runs over lines is a run of lines with no sentence end
# (a list of names, a poem, a log excerpt): each of its lines is a unit, as one unit it fits
# no budget and nothing of it was packed. (At 400 or 800 characters the dev sets lost
# quotes; at 1,600 they are the same.)
LONG_SPAN_CHARS = 1600
PIECE_UNIT_CHARS = 400  # units of an over-long line's piece are cut to at most this many characters


def piece_units(line: str, line_no: int, col_start: int, col_end: int, heads: tuple = ()) -> list[Unit]:
    """Units of one piece (``col_start``..``col_end``) of an over-long line, such as minified
    JSON: its sentences, each cut at whitespace into parts of at most `PIECE_UNIT_CHARS`."""
    out: list[Unit] = []
    piece = line[col_start:col_end]
    for a, b in _sentence_spans(piece):
        while a < b:
            cut = b
            if b - a > PIECE_UNIT_CHARS:
                cut = piece.rfind(" ", a + PIECE_UNIT_CHARS // 2, a + PIECE_UNIT_CHARS)
                cut = cut if cut > a else a + PIECE_UNIT_CHARS
            lo, hi = a, cut
            while hi > lo and piece[hi - 1].isspace():
                hi -= 1
            if hi > lo:
                out.append(Unit(line_no, col_start + lo, line_no, col_start + hi, piece[lo:hi], "text", heads))
            a = cut
            while a < b and piece[a].isspace():
                a += 1
    return out


def joins(gap: str) -> bool:
    """True when two units with ``gap`` between them join into one passage: it is
    whitespace of at most `JOIN_BREAKS` line breaks (more is a page's blanked markup, or a
    break in the text: two snippets then, the blank lines not paid for)."""
    return not gap.strip() and gap.count("\n") <= JOIN_BREAKS


def gap_is_blank(lines: list[str], a: Unit, b: Unit) -> bool:
    """True when unit ``a`` and the later unit ``b`` join (`joins`)."""
    return joins(span_text(lines, a.end, a.col_end, b.start, b.col_start))


@dataclass
class Run:
    """Consecutive selected units of one file joined into one exact span."""

    start: int
    col_start: int
    end: int
    col_end: int
    text: str
    units: list

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)


def join_runs(lines: list[str], units: list[Unit]) -> list[Run]:
    """Join units (any order) of one file into runs; units separated by whitespace only merge."""
    out: list[Run] = []
    for u in sorted(units, key=lambda u: u.key):
        if out:
            last = out[-1]
            lu = last.units[-1]
            if (u.start, u.col_start) < (lu.end, lu.col_end):  # overlap: cannot happen for units of one split
                continue
            if gap_is_blank(lines, lu, u):
                last.end, last.col_end = u.end, u.col_end
                last.text = span_text(lines, last.start, last.col_start, last.end, last.col_end)
                last.units.append(u)
                continue
        out.append(Run(u.start, u.col_start, u.end, u.col_end, u.text, [u]))
    return out


def prepare_units(units: list[Unit], analyzer, pages: dict | None = None) -> set:
    """Set each unit's ``all_terms`` and ``content``; return the union of their terms.
    ``pages``: an HTML page's (stored lines, shown lines) by file, whose units' words are
    read as the page's chunks' were (`markup.term_text`: the view blanks a tag or a
    character reference inside a word, "<b>Kuber</b>netes", "Ger&auml;t", into a space)."""
    vocab: set = set()
    span_terms = analyzer.span_terms
    for u in units:
        page = pages.get(u.file) if pages else None
        if page is None:
            u.all_terms, u.content = span_terms(mask_directives(u.text))
        else:
            raw, shown = (span_text(lines, u.start, u.col_start, u.end, u.col_end) for lines in page)
            u.all_terms, u.content = span_terms(term_text(raw, shown))
        vocab |= u.all_terms
    return vocab


def term_matcher(weights: dict[str, float], related: dict[str, dict[str, float]] | None = None):
    """A function of a text's terms (a set, `Analyzer.span_terms`) to its match: query term
    -> match strength, 1 for the term itself, else the best strength of its
    `analysis.related_terms` found in the text."""
    wanted = list(weights)
    # related form -> [(query term, strength)]: a text's related forms are found from its own
    # terms (a question word such as "inter" may start thousands of a word list's words, and
    # looking each up in every unit was quadratic)
    forms: dict[str, list[tuple[str, float]]] = {}
    order = [q for q in (related or {}) if q in weights]  # (matches are added in this order, as sums follow it)
    for q in order:
        for t, m in related[q].items():
            forms.setdefault(t, []).append((q, m))
    rel_any = frozenset(forms)

    def match(counts) -> dict[str, float]:
        out = {t: 1.0 for t in wanted if t in counts}  # few question terms: look each up
        # (related forms looked for only in a text that holds one: this runs for every unit)
        if forms and len(out) < len(wanted) and not rel_any.isdisjoint(counts):
            best: dict[str, float] = {}
            for t in rel_any.intersection(counts):
                for q, m in forms[t]:
                    if q not in out and m > best.get(q, 0.0):
                        best[q] = m
            for q in order:
                if q in best:
                    out[q] = best[q]
        return out
    return match


def score_units(units: list[Unit], weights: dict[str, float], analyzer,
                related: dict[str, dict[str, float]] | None = None) -> None:
    """Set ``match``, ``terms``, ``direct``, ``score`` and ``parts`` of each unit (module doc).

    ``units`` are in document order per file and region (attributes ``file``, ``region``;
    both default to 0) and may carry ``prior`` (0..1).
    """
    if any(u.all_terms is None for u in units):
        prepare_units(units, analyzer)
    head_cache: dict[str, dict] = {}
    match = term_matcher(weights, related)

    def head_terms(text: str) -> dict:
        t = head_cache.get(text)
        if t is None:
            t = head_cache[text] = match(analyzer.span_terms(text)[0])
        return t

    for u in units:
        u.match = match(u.all_terms)
        u.terms = frozenset(u.match)
    avg = sum(len(u.text) for u in units) / len(units) if units else 1.0
    content_w = []
    for u in units:
        kind = u.kind
        if kind == "text" and u.text.lstrip()[:1] in _ITEM_START and _TOC_RE.match(u.text):
            kind = "toc"
        kw = KIND_WEIGHT.get(kind, 1.0)
        if u.match:
            norm = 1.0 - LENGTH_NORM + LENGTH_NORM * max(len(u.text), 1) / avg
            u.direct = kw * sum(weights[t] * m for t, m in u.match.items()) / math.sqrt(norm)
        else:
            u.direct = 0.0
        content_w.append(kw * min(1.0, u.content / CONTENT_CHARS) if CONTENT_CHARS else kw)
    # sections: units from one heading to the next, within one file and region
    section = []
    prev = None
    head = -1
    for i, u in enumerate(units):
        new = (prev is None or u.kind == "heading" or u.file != prev.file or u.region != prev.region
               or (u.items and (u.start > prev.end + 1 or ITEM_RE.match(u.text) is not None)))
        if new:
            head = i if u.kind == "heading" else -1
        section.append((section[-1] + 1 if section else 0) if new else section[-1])
        u.section = section[-1]
        u.head = head if head != i else -1
        prev = u
    n = len(units)
    plain_hb: dict[tuple, float] = {}  # heading bonus of a unit that matches nothing itself

    def heading_bonus(headings: tuple, match: dict) -> float:
        inner = head_terms(headings[-1])
        hb = HEADING_BONUS * sum(weights[t] * m for t, m in inner.items() if t not in match)
        if len(headings) > 1:
            outer: dict[str, float] = {}
            for h in headings[:-1]:
                for t, m in head_terms(h).items():
                    if t not in match and t not in inner and m > outer.get(t, 0.0):
                        outer[t] = m
            hb += PARENT_HEADING_BONUS * sum(weights[t] * m for t, m in outer.items())
        return hb

    for i, u in enumerate(units):
        hb = 0.0
        if u.headings:
            if u.match:
                hb = heading_bonus(u.headings, u.match)
            else:
                hb = plain_hb.get(u.headings)
                if hb is None:
                    hb = plain_hb[u.headings] = heading_bonus(u.headings, u.match)
        nb = 0.0
        sec = section[i]
        if i > 0 and section[i - 1] == sec and units[i - 1].kind != "heading":
            nb = units[i - 1].direct
        if i + 1 < n and section[i + 1] == sec and units[i + 1].kind != "heading" and units[i + 1].direct > nb:
            nb = units[i + 1].direct
        nb *= NEIGHBOUR_BONUS
        u.parts = {"terms": u.direct, "heading": hb, "neighbour": nb, "prior": u.prior}
        u.score = (u.direct + (hb + nb) * content_w[i]) * (1.0 + RANK_BONUS * u.prior)
    # a section that matches much of the question as a whole lifts every unit of it
    total = sum(weights.values()) or 1.0
    cover: dict[int, dict] = {}
    for u in units:
        m = cover.setdefault(u.section, {})
        for t, x in u.match.items():
            if x > m.get(t, 0.0):
                m[t] = x
    share = {sid: sum(weights[t] * x for t, x in m.items()) / total for sid, m in cover.items()}
    for u in units:
        u.parts["section"] = share[u.section]
        u.parts["file"] = u.file_prior
        u.score *= (1.0 + SECTION_BONUS * share[u.section] ** 2) * u.file_prior ** FILE_PRIOR_POWER


def link_lengths(units: list[Unit], lines_of: dict) -> list[int | None]:
    """For each unit, the length of the whitespace-only gap to the next unit of the list
    (same file), or None when other text lies between them (they cannot join)."""
    out: list[int | None] = []
    for u, v in zip(units, units[1:]):
        if u.file != v.file or (v.start, v.col_start) < (u.end, u.col_end):
            out.append(None)
            continue
        lines = lines_of[u.file]
        if v.start == u.end + 1 and v.col_start == 0 and u.col_end == len(lines[u.end - 1]):
            out.append(1)  # the next line: only the newline between them
            continue
        gap = span_text(lines, u.end, u.col_end, v.start, v.col_start)
        out.append(len(gap) if joins(gap) else None)
    out.append(None)
    return out


def visible_length(shown: list[str], start: int, col_start: int, end: int, col_end: int) -> int:
    """How many characters `markup.visible` keeps of a span of shown lines."""
    return len(visible(span_text(shown, start, col_start, end, col_end)))


def tokens_of_length(n_chars: int) -> int:
    """`count_tokens` of a text of ``n_chars`` characters."""
    return -(-n_chars // CHARS_PER_TOKEN)


SEMANTIC_POWER = 2.0  # `add_semantic`: how steeply the lift falls from the most similar unit


def add_semantic(units: list[Unit], sims: list[float], weight: float) -> None:
    """Lift units whose embedding is close to the question's (paraphrase that shares no
    word with it): each unit more similar than the units' mean gains ``weight`` x the best
    unit score x ((similarity - mean) / (best similarity - mean)) ** SEMANTIC_POWER."""
    if not units:
        return
    mean = sum(sims) / len(sims)
    span = max(sims) - mean
    best = max(u.score for u in units)
    if span <= 0 or best <= 0:
        return
    for u, s in zip(units, sims):
        u.parts["semantic"] = s
        if s > mean:
            u.score += weight * best * ((s - mean) / span) ** SEMANTIC_POWER


def select_units(units: list[Unit], budget: int, lines_of: dict,
                 min_relative: float = MIN_RELATIVE, context: bool = False,
                 fill_top: bool = False, context_budget: int | None = None,
                 shown_of: dict | None = None) -> list[Unit]:
    """The best units (by score, ties in document order) that fit ``budget`` tokens.

    ``units`` are in document order per file and carry a ``file`` attribute (a key of
    ``lines_of``) and scores. The cost is exact: selected units with only whitespace
    between them form one run, whose text (units and the whitespace) is counted once,
    as `join_runs` and the pack will count it. Units scoring 0 or below ``min_relative``
    times the best score are never taken by score; with ``context``, what the budget has
    left after them goes to their context (`context_fill`). With ``fill_top``, what is still
    left then goes to the rest of the best chunk's units (``prior`` 1), in document order:
    a short question with one clear match gets the passage around it, not one line.
    Both fills stop at ``context_budget`` tokens in all (default: ``budget``): units that
    match the question may use the whole budget, context only tops up a small pack.
    ``shown_of`` maps the files whose packed text is not their lines but the visible text
    of their shown lines (HTML pages, `ragweb.markup`) to those lines: their units and gaps
    cost what that text holds.
    """
    best = max((u.score for u in units), default=0.0)
    if best <= 0:
        return []
    floor = max(min_relative * best, 1e-12)
    link = link_lengths(units, lines_of)
    lens = [len(u.text) for u in units]
    if shown_of:
        for i, u in enumerate(units):
            shown = shown_of.get(u.file)
            if shown is not None:
                lens[i] = visible_length(shown, u.start, u.col_start, u.end, u.col_end)
        for i, u in enumerate(units):
            shown = shown_of.get(u.file)
            if shown is not None and link[i] is not None:
                # (what joining adds to the two units' visible text: the gap's own visible
                # text is not it, a gap of blanks alone being an empty line there)
                v = units[i + 1]
                link[i] = max(0, visible_length(shown, u.start, u.col_start, v.end, v.col_end) - lens[i] - lens[i + 1])
    run_end: dict[int, int] = {}     # first unit index of a run -> last unit index
    run_start: dict[int, int] = {}   # last unit index -> first
    run_len: dict[int, int] = {}     # first unit index -> characters
    order = sorted((i for i, u in enumerate(units) if u.score >= floor),
                   key=lambda i: (-units[i].score, units[i].file, units[i].key))
    chosen: list[int] = []
    taken: set[int] = set()
    texts: set[str] = set()  # the chosen units' `same_text_key`s
    packed: dict = {}  # file -> its chosen units' keys joined by "|" (no key holds one)
    pieces: dict = {}  # file -> its chosen units' keys and their sentences' keys
    keys: dict[int, str | None] = {}
    used = 0

    def key(i: int) -> str | None:
        """Unit ``i``'s `same_text_key`, or None when it is not compared (code, or short)."""
        if i not in keys:
            keys[i] = (same_text_key(units[i].text) if DEDUP_CHARS and lens[i] >= DEDUP_CHARS
                       and units[i].kind != "code" else None)
        return keys[i]

    def elsewhere(i: int, text: str) -> bool:
        """Whether another file packed unit ``i``'s text (`DEDUP_CONTAINED`, `DEDUP_COVERED`)."""
        if not DEDUP_CONTAINED or units[i].kind == "heading":
            return False
        f = units[i].file
        if any(text in ks for g, ks in packed.items() if g != f):
            return True
        if not DEDUP_COVERED:
            return False
        left = uncovered(text, [k for g, ks in pieces.items() if g != f for k in ks])
        return left < DEDUP_CHARS and left * 5 <= len(text)  # (what is left: markup, "linkgit", a list marker)

    def add(i: int) -> bool:
        """Take unit ``i`` if it is not taken yet and fits; True when it is taken (or when
        the same text is taken already, from another place: it is not packed twice)."""
        nonlocal used
        if i in taken:
            return True
        first, last, length, delta = i, i, lens[i], 0
        if i > 0 and link[i - 1] is not None and (i - 1) in run_start:
            first = run_start[i - 1]
            delta -= tokens_of_length(run_len[first])
            length += run_len[first] + link[i - 1]
        if link[i] is not None and (i + 1) in run_end:
            last = run_end[i + 1]
            delta -= tokens_of_length(run_len[i + 1])
            length += run_len[i + 1] + link[i]
        text = key(i)
        # (a heading titles its section: "### SESSION_COOKIE_AGE" is not a repeat of
        # "Defaults to SESSION_COOKIE_AGE." on another page)
        twin = text is not None and elsewhere(i, text)
        if twin or (text is not None and text in texts):
            # next to a taken unit a repeat completes a passage (a page that says a
            # sentence twice; "Defaults to 30 seconds." closing two options' pages): taken,
            # unless another file said it and it is long or the passage it joins is a
            # repeat too (a page's twin in another format, cut into other units)
            joined = [j for j, on in ((i - 1, first != i), (i + 1, last != i)) if on]
            if not joined or (twin and ((DEDUP_JOIN_CHARS and len(text) >= DEDUP_JOIN_CHARS)
                                        or any(key(j) is not None and elsewhere(j, key(j)) for j in joined))):
                return True
        delta += tokens_of_length(length)
        if used + delta > cap:
            return False
        used += delta
        if first != i:
            del run_end[first], run_start[i - 1]
        if last != i:
            del run_start[last], run_end[i + 1], run_len[i + 1]
        run_end[first], run_start[last], run_len[first] = last, first, length
        chosen.append(i)
        taken.add(i)
        if text is not None:
            texts.add(text)
            packed[units[i].file] = packed.get(units[i].file, "") + "|" + text
            if DEDUP_COVERED:
                mine = pieces.setdefault(units[i].file, [])
                mine.append(text)
                spans = _sentence_spans(units[i].text)
                if len(spans) > 1:
                    mine.extend(k for a, b in spans if len(k := same_text_key(units[i].text[a:b])) >= DEDUP_CHARS)
        return True

    cap = budget
    for i in order:
        if add(i) and i in taken:
            h = units[i].head
            if (HEAD_CARRY_UNITS and 0 <= h and i - h <= HEAD_CARRY_UNITS and units[h].level >= HEAD_CARRY_LEVEL
                    and tokens_of_length(lens[h]) <= HEAD_CARRY_TOKENS):
                add(h)
    cap = budget if context_budget is None else min(budget, context_budget)
    if context and used < cap:
        context_fill(units, list(chosen), add)
    if context and fill_top and used < cap:
        # what is still left goes to the rest of the best chunk, in document order
        for i, u in enumerate(units):
            if u.prior >= 1.0 and not add(i):
                break
    if HEADING_CONTEXT:
        for i in list(chosen):
            if units[i].head >= 0:
                add(units[i].head)
    return [units[i] for i in chosen]


def uncovered(text: str, keys: list[str]) -> int:
    """How many characters of ``text`` (a `same_text_key`) no occurrence of one of ``keys``
    covers (keys shorter than `DEDUP_CHARS` cover nothing: a word or two recurs anywhere)."""
    spans = []
    for k in keys:
        if len(k) >= DEDUP_CHARS:
            j = text.find(k)
            while j >= 0:
                spans.append((j, j + len(k)))
                j = text.find(k, j + 1)
    covered, end = 0, 0
    for a, b in sorted(spans):
        if b > end:
            covered += b - max(a, end)
            end = b
    return len(text) - covered


_LINK_TARGET_RE = re.compile(r"\]\([^)]*\)|\]\[[^\]]*\]")
# a reST interpreted-text role, :meth:`~a.B.c` or :py:func:`title <target>`, and what
# Sphinx shows of it: c, title (a ! only turns the link off)
_ROLE_RE = re.compile(r"(?<![\w`]):(?:[a-z][\w+.-]{0,40}:){1,3}`([!~]?)([^`<]*)(?:<[^`>]*>)?`")
_NOT_ALNUM_RE = re.compile(r"[\W_]+")


def same_text_key(text: str) -> str:
    """What two units that say the same thing have in common: letters and digits only,
    lowercased, Markdown link targets dropped, reST roles as Sphinx shows them
    (`DEDUP_ROLES`). A page's Markdown or reST source and its HTML build (Node's docs ship
    both; so do Sphinx builds, with ``_sources``) give the same key."""
    if "]" in text:
        text = _LINK_TARGET_RE.sub("]", text)
    if DEDUP_ROLES and ":`" in text:
        text = _ROLE_RE.sub(_role_shown, text)
    return _NOT_ALNUM_RE.sub("", text.lower())


def _role_shown(m: re.Match) -> str:
    shown = m.group(2).strip()
    return shown.rpartition(".")[2] if m.group(1) == "~" else shown


def context_fill(units: list[Unit], anchors: list[int], add) -> None:
    """Offer ``add`` the context of the ``anchors`` (indices of selected units): the units
    next to them in the same section -- the first sentences under a selected heading, the
    sentences before and after a selected one -- up to `CONTEXT_DISTANCE` units away, best
    first: a neighbour ``d`` units away ranks at its anchor's score x `CONTEXT_DECAY` ** d.
    A direction stops at the first unit that does not fit."""
    n = len(units)
    heap: list = []

    def push(i: int, step: int, dist: int, rank: float) -> None:
        j = i + step
        if dist <= CONTEXT_DISTANCE and 0 <= j < n:
            u, v = units[i], units[j]
            if v.file == u.file and v.region == u.region and v.section == u.section:
                heapq.heappush(heap, (-rank, v.file, v.key, j, step, dist))

    for i in anchors:
        for step in (-1, 1):
            push(i, step, 1, units[i].score * CONTEXT_DECAY)
    while heap:
        neg, _, _, j, step, dist = heapq.heappop(heap)
        if add(j):
            push(j, step, dist + 1, -neg * CONTEXT_DECAY)


def blend_local_idf(idf: dict[str, float], units: list[Unit], share: float | None = None) -> dict[str, float]:
    """Each term's IDF blended with its IDF among ``units`` (the text being compacted, with
    `prepare_units` done): ``idf ** (1 - share) * local ** share``. A term that most of the
    candidate units contain (the subject of the file they come from, in a corpus of many
    files) cannot tell them apart, however rare it is in the whole index. ``share``
    defaults to `LOCAL_IDF`."""
    share = LOCAL_IDF if share is None else share
    if share <= 0 or not units:
        return dict(idf)
    n = len(units)
    df = dict.fromkeys(idf, 0)
    keys = df.keys()
    for u in units:
        for t in keys & u.all_terms:
            df[t] += 1
    out = {}
    for t, w in idf.items():
        local = bm25_idf(n, df[t])
        out[t] = (w ** (1.0 - share)) * (local ** share) if w > 0 else w
    return out


def query_weights(idf: dict[str, float], qterms: list[str],
                  related: dict[str, dict[str, float]] | None = None,
                  power: float = 1.0) -> dict[str, float]:
    """Weight of each query term for unit scoring: its IDF to the ``power``; a term absent
    from the index takes the highest IDF of its related terms; terms with neither drop out.
    A power above 1 sharpens the weights: rare terms dominate (lean mode, `LEAN_IDF_POWER`)."""
    out = {}
    for t in qterms:
        w = idf.get(t, 0.0)
        if w <= 0 and related and t in related:
            w = max((idf.get(r, 0.0) for r in related[t]), default=0.0)
        if w > 0:
            out[t] = w ** power
    return out


# What a pasted log line or traceback carries that is the asker's, not the documents': a
# date or timestamp ("2024-05-02 10:14:07.123", "2024-05-02T10:14:07Z"), a time of day, a
# traceback frame's line number ('File "x.py", line 679, in f'), a process id in brackets
# ("postgres[48213]"), a memory address ("at 0x7f3a2c1d9e80").
_VALUE_RE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
    r"|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
    r"|(?<=\bline )\d+(?=, in \S)"
    r"|(?<=\[)\d+(?=\])"
    r"|\b0x[0-9a-fA-F]{6,}\b")


def without_values(question: str) -> str:
    """``question`` with the asker's own values (`_VALUE_RE`) blanked, for the evidence
    signal: read as words they are numbers no page holds, which would weigh as unknown
    names and call a pasted log line unanswered though its message is found."""
    if not any(c.isdigit() for c in question):
        return question
    return _VALUE_RE.sub(lambda m: " " * len(m.group()), question)


@functools.lru_cache(maxsize=64)  # (a pack weighs the evidence of each of its files with it)
def entity_words(question: str) -> tuple[str, ...]:
    """Words of a question that name something: with a digit ("c7g", "2026"), in capitals
    ("SLA"), with an inner capital ("GraphQL"), capitalised but not first in a sentence
    ("Redis") -- but not words written as code (in backticks, with an underscore, inside
    code punctuation: "set(MyFlag ON)", "-DOUT_DIR=...") or in an address ("203.0.113.0/24",
    "2001:db8::1"): in a question those are mostly the asker's own names and values, which
    no documentation mentions."""
    out = []
    code = sorted(m.span() for rx in (_CODE_SPAN_RE, _ADDRESS_RE) for m in rx.finditer(question))
    reach = list(itertools.accumulate((b for _, b in code), max))  # the furthest end so far
    code_starts = [a for a, _ in code]
    for m in _WORD_RE.finditer(question):
        w = m.group()
        i = bisect.bisect_right(code_starts, m.start()) - 1  # (any span starting at or before it covers it?)
        if _in_code(question, m.start(), m.end(), w) or (i >= 0 and m.start() < reach[i]):
            continue
        j = m.start() - 1  # the last character before the word that is not a blank
        while j >= 0 and question[j].isspace():
            j -= 1
        starts_sentence = j < 0 or question[j] in ".?!:"
        if (any(c.isdigit() for c in w) or (len(w) > 1 and w.isupper())
                or any(c.isupper() for c in w[1:]) or (w[0].isupper() and not starts_sentence)):
            out.append(w)
    return tuple(out)


def _in_code(text: str, a: int, b: int, word: str) -> bool:
    """Whether the word at ``text[a:b]`` is written as code: an identifier with an
    underscore, or a word right inside code punctuation ("set(MyFlag", "${OUT}", "-DX=1")."""
    if "_" in word:
        return True
    before = text[a - 1] if a > 0 else " "
    after = text[b] if b < len(text) else " "
    return before in "({$=<[/" or after in ")}=>(]/" or text[max(0, a - 2):a] == "-D"


def evidence_weights(question: str, qterms: list[str], idf: dict[str, float], n_chunks: int,
                     analyzer, known: set | None = None) -> dict[str, float]:
    """Weight of each question term for the evidence signal: its IDF in ``idf``; a term
    absent from ``idf`` gets the IDF of an unseen term times `UNSEEN_WEIGHT`, or times
    `UNSEEN_ENTITY_WEIGHT` when it comes from an `entity_words` word and is not in
    ``known`` (the terms the whole index contains; None: every absent term is unknown).
    A name or number the index never mentions is strong evidence that the question is not
    answered here; one the index mentions elsewhere, or an everyday word, is not: questions
    carry incidental names ("on node 16", "in our Docker build"). An identifier made of
    known parts ("HAVE_ZLIB", "WITH_TESTS": the user's own names, in a question about how
    a tool treats them) is not an unknown name either, though its whole form is new; its
    parts count one by one. One with a part the index does not know ("Argon2id") is."""
    unseen = bm25_idf(max(n_chunks, 1), 0)  # the IDF of a term no chunk contains
    ent = set()
    for w in entity_words(question):
        forms = [analyzer.word_terms(form) for form in (w, w.lower())]  # the whole word's term first, then its parts
        if known is not None and any(ts and ts[0] in known for ts in forms):
            continue  # a name the index knows ("PyTorch" for "Pytorch") is known, parts and all
        # (the lowercase form only tells whether the name is known: it has lost the parts,
        # "decodecomplete" of "decodeComplete", which the index may well hold)
        ts = forms[0] or forms[1]
        if not ts:
            continue
        ent.update(ts[1:])
        if len(ts) == 1 or known is None or not all(p in known for p in ts[1:]):
            ent.add(ts[0])
    out = {}
    for t in qterms:
        if idf.get(t, 0.0) > 0:
            out[t] = idf[t]
        else:
            out[t] = unseen * (UNSEEN_ENTITY_WEIGHT if t in ent and (known is None or t not in known)
                               else UNSEEN_WEIGHT)
    return out


def text_terms(analyzer, text: str, weights: dict[str, float]) -> set:
    """The terms of ``weights`` that occur in ``text`` (a one-character CJK word also inside
    a run of them, where the text's terms are bigrams)."""
    found = set(analyzer.term_counts(text)) & weights.keys()
    found.update(t for t in weights.keys() - found if is_cjk_char(t) and t in text)
    return found

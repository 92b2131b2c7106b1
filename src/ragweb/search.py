"""Scoring as small pure functions named after the formula term (reference §3).

BM25 as in Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
Beyond" (2009), with the Lucene-style non-negative IDF; MMR as in Carbonell & Goldstein,
"The Use of MMR, Diversity-Based Reranking" (SIGIR 1998), with Jaccard similarity.
"""

from __future__ import annotations

import heapq
import math
import re

SHINGLE_WORDS = 4  # words per shingle (`shingles`)
REPEAT_SHARE = 0.8  # a hit whose shingles are this much in a picked one's text repeats it
REPEAT_TERMS = 0.5  # ... which needs the picked one to hold this share of the hit's terms (`mmr_select`)


# Release notes and change logs: a folder of them (Django's releases/, CMake's release/,
# Python's whatsnew/, git's RelNotes/), or a file named as one (CHANGELOG.md, changelog.Debian.gz,
# PostgreSQL's release-15-4.html; NEWS, CHANGES and HISTORY only in capitals, as GNU names
# them: a page about a History API is no change log).
_CHANGELOG_DIR_RE = re.compile(r"(?:^|/)(?:releases?|rel(?:ease)?[-_]?notes|whatsnew|change[-_]?logs?)/", re.I)
_CHANGELOG_FILE_RE = re.compile(
    r"(?:^|/)(?:(?i:change[-_]?logs?|rel(?:ease)?[-_]?notes|whatsnew|release-\d)[^/]*"
    r"|(?:NEWS|CHANGES|HISTORY)(?:\.[^/]*)?)$")


def changelog_path(path: str) -> bool:
    """Whether ``path`` is release notes or a change log: it names what changed when, not
    how things work now, and it mentions nearly everything (`Engine.search` weighs its
    chunks by ``retrieve.changelog_weight``)."""
    return bool(_CHANGELOG_DIR_RE.search(path) or _CHANGELOG_FILE_RE.search(path))


# License texts: a file named as one (LICENSE, LICENCE.md, COPYING.LESSER, LICENSE-MIT,
# Debian's copyright), or a section titled as one (a manual's "Appendix C GNU Free
# Documentation License", "GNU General Public License", "Apache License, Version 2.0", "PSF
# LICENSE AGREEMENT"). Their words -- document, copy, modify, work, distribute -- match
# questions about the software, and they say nothing about it. A section titled "License"
# alone, or a package.json's `license` field, is no license text.
_LICENSE_FILE_RE = re.compile(r"(?:^|/)(?i:licen[cs]es?|copying|copyright|unlicense)"
                              r"(?:[-_.](?:[A-Z0-9][A-Z0-9.]*|md|txt|rst|html?|markdown))*$")
_LICENSE_TITLE_RE = re.compile(
    r"\b(?:GNU|[AL]?GPL|[Gg]eneral [Pp]ublic|[Ff]ree [Dd]ocumentation|Apache|MIT|BSD|Mozilla|Artistic|"
    r"Creative Commons|Eclipse|PSF|Python Software Foundation)\b.{0,40}\b(?i:licen[cs]e)\b"
    r"|(?i:\blicen[cs]e agreement\b|\bhow to use this license\b|\bhow to apply these terms\b)")


def license_path(path: str) -> bool:
    """Whether ``path`` names a license text (`Engine.search` weighs its chunks by
    ``retrieve.license_weight``)."""
    return bool(_LICENSE_FILE_RE.search(path))


# A question with one of these words asks about the license ("What license is widget
# under?"): its texts are then the answer, weighed as any text (`license_weight`).
LICENSE_WORDS = "license licence licensed licenced licensing copyright copyleft GPL LGPL AGPL GFDL SPDX"


def license_weight(analyzer, qterms, weight: float) -> float:
    """The weight of license texts (``retrieve.license_weight``) for a question of terms
    ``qterms``: 1 when it asks about the license (`LICENSE_WORDS`), else ``weight``."""
    if weight == 1.0 or not set(qterms) & set(analyzer.query_terms(LICENSE_WORDS)):
        return weight
    return 1.0


def license_title(heading: str) -> bool:
    """Whether a section ``heading`` titles a license text (a manual's appendix holding the
    GNU FDL): its chunks weigh as `license_path`'s do."""
    return bool(heading) and bool(_LICENSE_TITLE_RE.search(heading))


# A page that gathers other pages whole: mdBook's print.html (every chapter of a book on
# one page), Sphinx's singlehtml build, MkDocs' print-site page. Each of its passages is on
# its own page too, which a citation should name.
_AGGREGATE_RE = re.compile(r"(?:^|/)(?:print\.html?|(?:singlehtml|print_page)/[^/]*)$", re.I)


def aggregate_path(path: str) -> bool:
    """Whether ``path`` is a page that gathers other pages whole (`Engine.search` weighs its
    chunks by ``retrieve.aggregate_weight``)."""
    return bool(_AGGREGATE_RE.search(path))


def bm25_idf(n_docs: int, df: int) -> float:
    """IDF(t) = ln((N - df + 0.5) / (df + 0.5) + 1); never negative."""
    return math.log((n_docs - df + 0.5) / (df + 0.5) + 1.0)


def bm25_term(idf: float, tf: int, doc_len: int, avgdl: float, k1: float, b: float) -> float:
    """One term's BM25 contribution: IDF · tf·(k1+1) / (tf + k1·(1 − b + b·|c|/avgdl))."""
    return idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * doc_len / avgdl))


def jaccard(a: frozenset, b: frozenset) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    if not a and not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


_WORD_RE = re.compile(r"[^\W_]+")


def shingles(text: str, n: int = SHINGLE_WORDS) -> frozenset:
    """The runs of ``n`` consecutive words of ``text`` (tuples of letters and digits, lowercased): two
    texts that say the same -- a page's Markdown or reStructuredText source and its HTML
    build -- share them whatever their markup."""
    words = _WORD_RE.findall(text.lower())
    if len(words) <= n:
        return frozenset([tuple(words)]) if words else frozenset()
    return frozenset(zip(*(words[i:] for i in range(n))))


def contained(a: frozenset, b: frozenset) -> float:
    """The share of ``a``'s shingles that ``b`` has too (0 for an empty ``a``)."""
    return len(a & b) / len(a) if a else 0.0


def mmr_select(scores: list[float], sets, k: int, lam: float,
               dedup: float, repeats=None, repeat_terms: float = 0.0) -> list[int]:
    """Indices of up to ``k`` items picked by MMR: λ·rel − (1−λ)·max_sim.

    ``scores`` are in descending order, ``sets[i]`` is item i's frozenset (any indexable
    will do: only the items looked at are read); relevance is normalised to [0, 1] by the
    maximum; candidates whose Jaccard with a picked one is >= ``dedup`` are dropped, and
    so are those of which ``repeats(i, j)`` says they repeat a picked item ``j``. That
    question is asked only of the picked items whose set holds ``repeat_terms`` of item
    i's (a repeat of a text shares its words; the overlap is counted for Jaccard anyway).
    Among equal values the earlier item wins, so the result is deterministic.

    Evaluated lazily: an item's MMR value can only fall as items are picked, so a
    stale value is an upper bound and similarities are computed only for items that
    reach the top of the heap, and for each only until its value falls below the next
    one's bound (the result is the same as the eager loop's). `Engine.search`'s pool is
    4 x ``k``, so its cost still grows about as ``k`` squared: each pick lowers most of
    the pool's values a little, and they are looked at again.
    """
    if not scores or k <= 0:
        return []
    top = scores[0] or 1.0
    heap = [(-lam * s / top, i, 0, 0.0) for i, s in enumerate(scores)]  # (-value, i, n_seen, max_sim)
    heapq.heapify(heap)
    picked: list[int] = []
    picked_sets = []  # sets[j] of each picked j (`sets` may make them on demand)
    suspects: dict[int, list[int]] = {}  # i -> the picked items i may repeat
    while heap and len(picked) < k:
        neg, i, seen, max_sim = heapq.heappop(heap)
        n = len(picked)
        if seen < n:
            mine = sets[i]
            need = repeat_terms * len(mine)
            rel = lam * scores[i] / top
            bar = heap[0][:2] if heap else None  # the next item's bound, and that item
            drop = False
            while seen < n:
                theirs = picked_sets[seen]  # (`jaccard` inlined: its overlap count serves the repeat check too)
                inter = len(mine & theirs)
                union = len(mine) + len(theirs) - inter
                sim = inter / union if union else 0.0
                if sim >= dedup:
                    drop = True
                    break
                if repeats is not None and inter >= need:
                    suspects.setdefault(i, []).append(picked[seen])
                seen += 1
                if sim > max_sim:
                    max_sim = sim
                    if bar is not None and (-(rel - (1.0 - lam) * max_sim), i) > bar:
                        break  # below the next one: the rest of the picks when it is on top again
            if drop:
                continue
            value = rel - (1.0 - lam) * max_sim
            entry = (-value, i, seen, max_sim)
            if heap and entry > heap[0]:
                heapq.heappush(heap, entry)
                continue
        if repeats is not None and any(repeats(i, j) for j in suspects.get(i, ())):
            continue
        picked.append(i)
        picked_sets.append(sets[i])
    return picked

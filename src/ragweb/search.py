"""Scoring as small pure functions named after the formula term (reference §3).

BM25 as in Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
Beyond" (2009), with the Lucene-style non-negative IDF; MMR as in Carbonell & Goldstein,
"The Use of MMR, Diversity-Based Reranking" (SIGIR 1998), with Jaccard similarity.
"""

from __future__ import annotations

import math


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


def mmr_select(scores: list[float], sets: list[frozenset], k: int, lam: float,
               dedup: float) -> list[int]:
    """Indices of up to ``k`` items picked by MMR: λ·rel − (1−λ)·max_sim.

    ``scores`` are in descending order; relevance is normalised to [0, 1] by the
    maximum; candidates whose Jaccard with a picked one is >= ``dedup`` are dropped.
    Ties keep the input order, so the result is deterministic.
    """
    if not scores:
        return []
    top = scores[0] or 1.0
    rel = [s / top for s in scores]
    max_sim = [0.0] * len(scores)
    alive = list(range(len(scores)))
    picked: list[int] = []
    while alive and len(picked) < k:
        best_i, best_v = -1, -math.inf
        for i in alive:
            v = lam * rel[i] - (1.0 - lam) * max_sim[i]
            if v > best_v:
                best_i, best_v = i, v
        picked.append(best_i)
        chosen = sets[best_i]
        still = []
        for i in alive:
            if i == best_i:
                continue
            sim = jaccard(sets[i], chosen)
            if sim >= dedup:
                continue
            if sim > max_sim[i]:
                max_sim[i] = sim
            still.append(i)
        alive = still
    return picked

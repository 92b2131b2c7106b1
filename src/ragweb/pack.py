"""Packing: the best evidence for a question inside a hard token budget (reference §3-4).

Candidates come from `Engine.search`. Utility is score / tokens; chunks are taken greedily
by utility while the budget allows; chunks of one file that touch or overlap are merged
into one snippet (no repeated lines); snippets are ordered by score. `used_tokens` is the
budget counter (`ragweb.tokens.count_tokens`) summed over the snippet texts, and never
exceeds `budget_tokens`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ragweb.errors import UsageError
from ragweb.tokens import count_tokens


@dataclass
class Snippet:
    """A packed span of one file: lines start..end, its text and why it was chosen."""

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

    @property
    def tokens(self) -> int:
        return count_tokens(self.text)

    def to_json(self) -> dict:
        return {"path": self.path, "range": f"L{self.start}-{self.end}", "why": self.why,
                "text": self.text, "score": round(self.score, 4)}


def _merge(group: list[Snippet], lines: list[str]) -> list[Snippet]:
    """Merge snippets of one file whose line ranges overlap or touch."""
    group = sorted(group, key=lambda s: (s.start, s.end))
    out: list[Snippet] = []
    for s in group:
        if s.col_start is not None:  # a piece of one long line stays as it is
            out.append(s)
            continue
        if out and out[-1].col_start is None and s.start <= out[-1].end + 1:
            last = out[-1]
            last.end = max(last.end, s.end)
            last.score = max(last.score, s.score)
            last.terms = sorted(set(last.terms) | set(s.terms))
            last.text = "\n".join(lines[last.start - 1:last.end])
        else:
            out.append(Snippet(s.path, s.start, s.end, s.score, s.text, s.file_id, s.why,
                               list(s.terms), s.col_start, s.col_end))
    return out


def select_whole(hits, budget: int, engine) -> list[Snippet]:
    """Greedy by utility (score / tokens) over whole chunks, merging same-file neighbours."""
    lines_of = engine.file_lines(h.file_id for h in hits)
    chosen: list[Snippet] = []
    order = sorted(hits, key=lambda h: (-(h.score / max(count_tokens(h.text), 1)), -h.score, h.path, h.start_line))
    for h in order:
        trial = chosen + [Snippet(h.path, h.start_line, h.end_line, h.score, h.text, h.file_id,
                                  f"BM25 score: {h.score:.2f}", list(h.terms), h.col_start, h.col_end)]
        merged = merge_all(trial, lines_of)
        if sum(s.tokens for s in merged) <= budget:
            chosen = trial
    return merge_all(chosen, lines_of)


def merge_all(snippets: list[Snippet], lines_of: dict[int, list[str]]) -> list[Snippet]:
    by_file: dict[int, list[Snippet]] = {}
    for s in snippets:
        by_file.setdefault(s.file_id, []).append(s)
    out = []
    for fid, group in by_file.items():
        out.extend(_merge(group, lines_of[fid]))
    out.sort(key=lambda s: (-s.score, s.path, s.start))
    return out


def pack_context(engine, query: str, budget: int | None = None, top_k: int | None = None,
                 path_glob: str | None = None, compact: bool | None = None,
                 lean: bool | None = None) -> dict:
    """Search, then pack within ``budget``; returns the reference §4 dict."""
    pc = engine.config["pack"]
    budget = pc["token_budget"] if budget is None else budget
    if not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0:
        raise UsageError(f"the token budget must be a positive whole number, got {budget!r}")
    hits = engine.search(query, top_k=top_k, path_glob=path_glob)
    snippets = select_whole(hits, budget, engine)
    used = sum(s.tokens for s in snippets)
    assert used <= budget
    return {"query": query, "budget_tokens": budget, "used_tokens": used,
            "snippets": [s.to_json() for s in snippets]}

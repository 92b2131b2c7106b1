"""Line-based chunking with overlap (reference §3).

A chunk is whole lines, at most ``chunk_tokens`` tokens (the budget counter); consecutive
chunks overlap by about ``chunk_overlap`` tokens. In Markdown a heading starts a new chunk
(no overlap across it) once the current chunk is a quarter full, so sections stay whole.
A single line longer than ``chunk_tokens`` is split into pieces; a piece records the
character span it covers within its line (``col_start``/``col_end``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragweb.tokens import count_tokens

_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^ {0,3}(```|~~~)")
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt")


@dataclass(frozen=True)
class Chunk:
    """Lines ``start``..``end`` (1-based, inclusive); ``heading`` is the nearest heading above.

    ``col_start``/``col_end`` are set only for a piece of one over-long line: the
    character span of the piece within that line. ``context`` is the nearest heading when
    it lies above the chunk (a continuation of a section): the index adds it to the chunk's
    terms so a passage matches what its section is about. (Indexing the whole heading
    trail, title to subsection, was measured on readme-qa and did not help.)
    """

    start: int
    end: int
    heading: str
    col_start: int | None = None
    col_end: int | None = None
    context: str = ""   # the heading above the chunk when the chunk does not start with it


def is_markdown(path: str) -> bool:
    return path.lower().endswith(MARKDOWN_SUFFIXES)


def split_lines(text: str) -> list[str]:
    """The lines of stored text (newlines are already normalised to ``\\n``)."""
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


def line_headings(lines: list[str], markdown: bool) -> tuple[list[str], set[int], list[int]]:
    """For each line: the nearest Markdown heading at or above it ('' if none); the 0-based
    indices of the heading lines; and for each line the index of that nearest heading's
    line (-1 if none)."""
    out: list[str] = []
    where: list[int] = []
    starts: set[int] = set()
    current, at = "", -1
    in_fence = False
    for i, line in enumerate(lines):
        if markdown:
            if _FENCE_RE.match(line):
                in_fence = not in_fence
            elif not in_fence and line.startswith(("#", " #", "  #", "   #")):
                m = _HEADING_RE.match(line)
                if m:
                    current, at = m.group(2), i
                    starts.add(i)
        out.append(current)
        where.append(at)
    return out, starts, where


def chunk_lines(text: str, chunk_tokens: int = 512, chunk_overlap: int = 50,
                markdown: bool = False) -> list[Chunk]:
    """Cut ``text`` into chunks of whole lines; see the module docstring."""
    lines = split_lines(text)
    if not text.strip():
        return []
    headings, heading_starts, heading_at = line_headings(lines, markdown)

    def context(i: int) -> str:
        return headings[i] if 0 <= heading_at[i] < i else ""

    costs = [count_tokens(line) + 1 for line in lines]  # +1 for the newline
    overlap = min(chunk_overlap, chunk_tokens // 2)
    chunks: list[Chunk] = []
    n = len(lines)
    i = 0
    while i < n:
        if costs[i] > chunk_tokens:
            chunks.extend(_split_long_line(lines[i], i, headings[i], chunk_tokens, context(i)))
            i += 1
            continue
        j = i
        used = 0
        while j < n and costs[j] <= chunk_tokens and used + costs[j] <= chunk_tokens:
            if j > i and j in heading_starts and used >= chunk_tokens // 4:
                break
            used += costs[j]
            j += 1
        # lines i..j-1 form the chunk; skip chunks of blank lines only
        if any(lines[k].strip() for k in range(i, j)):
            chunks.append(Chunk(i + 1, j, headings[i], context=context(i)))
        if j >= n:
            break
        if j in heading_starts or costs[j] > chunk_tokens or overlap == 0:
            i = j
            continue
        # step back over about `overlap` tokens, but always move forward
        k = j
        back = 0
        while k - 1 > i and back + costs[k - 1] <= overlap:
            k -= 1
            back += costs[k]
        i = k
    return chunks


def _split_long_line(line: str, index: int, heading: str, chunk_tokens: int,
                     context: str) -> list[Chunk]:
    """Pieces of one over-long line, cut at whitespace where possible."""
    width = chunk_tokens * 4
    pieces: list[Chunk] = []
    pos = 0
    while pos < len(line):
        end = min(pos + width, len(line))
        if end < len(line):
            cut = line.rfind(" ", pos + width // 2, end)
            if cut > pos:
                end = cut + 1
        if line[pos:end].strip():
            pieces.append(Chunk(index + 1, index + 1, heading, pos, end, context))
        pos = end
    return pieces

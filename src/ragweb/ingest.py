"""A document made ready for the index: its text normalised and hashed, an HTML page's
shown text, its chunks and (optionally) their terms.

`prepare` is pure -- it reads nothing but its arguments and the index's analysis settings --
so `rag index` can run it in worker processes while the one process that writes the index
stores what they made (`Engine.add_prepared`), in the files' order. `Engine.add_document`
is `prepare` and `Engine.add_prepared` in one process (the browser has one).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ragweb import store
from ragweb.analysis import Analyzer
from ragweb.chunking import PageLines, chunk_lines, indented_is_literal, is_asciidoc, is_markdown, split_lines
from ragweb.errors import UsageError
from ragweb.files import is_more_prose, plain_name
from ragweb.markup import FILL, is_html, is_info, is_man, is_pod, mask_directives, read_page, term_text


def reads_shown(path: str, settings: dict) -> bool:
    """True when ``path`` is a document an index of these analysis ``settings`` reads
    through its shown text and view (`ragweb.markup`): an HTML page, or (since
    `engine.MARKUP_VERSION` 18) a POD document, (19) a man page, (20) an Info file."""
    markup = settings.get("markup", 0)
    if is_html(path):
        return markup >= 1
    return ((markup >= 18 and is_pod(path)) or (markup >= 19 and is_man(path))
            or (markup >= 20 and is_info(path)))


def is_prose(path: str, settings: dict) -> bool:
    """True for a file read as prose (Markdown-like text, a document read as shown:
    `reads_shown`); False for a program."""
    return (is_markdown(path) or reads_shown(path, settings)
            or (settings.get("markup", 0) >= 16
                and is_more_prose(plain_name(path), affixed=settings.get("markup", 0) >= 23)))


@dataclass
class Prepared:
    """What `prepare` made of one document. ``chunks``: per chunk (start line, end line,
    start column, end column, start offset, end offset, heading); ``bodies``: the text each
    chunk's terms come from (its headings above, its span of the view); ``counts``: instead,
    those terms already counted (term -> frequency, in the order the terms first appear,
    which is the order new terms get their ids in)."""

    path: str
    text: str
    size: int
    sha256: str
    shown: bytes | None                  # an HTML page's shown text, `store.pack_shown`
    chunks: list[tuple]
    bodies: list[str] | None = None
    counts: list[dict[str, int]] | None = None


def normalize(path: str, text: str) -> tuple[str, bytes]:
    """``text`` with its line ends as ``\\n`` and its UTF-8 bytes (lone surrogates, possible
    from JavaScript strings, and NUL characters replaced by U+FFFD: SQLite's text functions
    stop at a NUL, so a hit's text was cut there)."""
    if not isinstance(path, str) or not path:
        raise UsageError("a document needs a non-empty path")
    if not isinstance(text, str):
        raise UsageError(f"the content of {path!r} must be text")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\0" in text:
        text = text.replace("\0", "\ufffd")
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # one U+FFFD for each (not one per byte of its UTF-8 form)
        text = _SURROGATE_RE.sub("\ufffd", text)
        data = text.encode("utf-8")
    return text, data


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def prepare(path: str, text: str, settings: dict, size: int | None = None, sha256: str | None = None,
            analyzer: Analyzer | None = None) -> Prepared:
    """Make ``text`` ready to be stored under ``path`` by an index of these analysis
    ``settings``. With ``analyzer`` (one of the same settings) the chunks' terms are counted
    here (`Prepared.counts`), else their texts are kept for the engine to count."""
    text, data = normalize(path, text)
    if size is None:
        size = len(data)
    if sha256 is None:
        sha256 = hashlib.sha256(data).hexdigest()
    # terms and chunk boundaries come from what a reader sees: an HTML page's view
    shown, code = read_page(path, text) if reads_shown(path, settings) else (None, None)
    prose = is_prose(path, settings)
    if shown is not None:
        view = shown.replace(FILL, " ")
    elif prose and settings.get("markup", 0) >= 7:
        view = mask_directives(text)  # (an index of an older version keeps reading them as it did)
    else:
        view = text
    lines = split_lines(text)
    starts = [0] * len(lines)  # character offset of each line in text
    pos = 0
    for i, line in enumerate(lines):
        starts[i] = pos
        pos += len(line) + 1
    chunks, bodies = [], []
    page = None
    if shown is not None and settings.get("markup", 0) >= 13:
        page = PageLines(lines, split_lines(shown), code)
    # (AsciiDoc is known from the stored text: the view has no preprocessor lines left)
    asciidoc = prose and page is None and settings.get("markup", 0) >= 22 and is_asciidoc(path, text)
    literal = prose and page is None and settings.get("markup", 0) >= 23 and indented_is_literal(path)
    for ch in chunk_lines(view, settings["chunk_tokens"], settings["chunk_overlap"], prose, page, asciidoc, literal):
        first = starts[ch.start - 1]
        if ch.col_start is not None:
            span = (first + ch.col_start, first + ch.col_end)
        else:
            span = (first, starts[ch.end - 1] + len(lines[ch.end - 1]))
        # (a page's words as shown, `markup.term_text`: the view blanks a tag or a character
        # reference inside a word, "<b>Kuber</b>netes", "Ger&auml;t", into a space)
        body = view[span[0]:span[1]] if page is None else term_text(text[span[0]:span[1]], shown[span[0]:span[1]])
        if ch.context:  # the headings above say what the chunk is about
            body = ch.context + "\n" + body
        bodies.append(body)
        chunks.append((ch.start, ch.end, ch.col_start, ch.col_end, span[0], span[1], ch.heading))
    blob = None if shown is None else store.pack_shown(shown)
    doc = Prepared(path, text, size, sha256, blob, chunks, bodies=bodies)
    if analyzer is not None:
        for _ in count_terms(doc, analyzer):
            pass
    return doc


def count_terms(doc: Prepared, analyzer: Analyzer):
    """Count the terms of ``doc``'s chunks with ``analyzer`` (`Prepared.counts`, replacing
    its ``bodies``), a chunk at a time: a generator yielding (chunks counted, chunks), for a
    caller that must stay responsive (the page, on one big file). Reads and changes nothing
    but ``doc``, so other work may run between its steps."""
    bodies, total = doc.bodies, len(doc.chunks)
    counts = []
    for body in bodies:
        counts.append(analyzer.term_counts(body))
        yield len(counts), total
    doc.counts, doc.bodies = counts, None

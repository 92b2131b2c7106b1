"""Line-based chunking with overlap (reference §3).

A chunk is whole lines, at most ``chunk_tokens`` tokens (the budget counter); consecutive
chunks overlap by about ``chunk_overlap`` tokens. In Markdown a heading starts a new chunk
(no overlap across it) once the current chunk is a quarter full, so sections stay whole.
A single line longer than ``chunk_tokens`` is split into pieces; a piece records the
character span it covers within its line (``col_start``/``col_end``).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field, replace

from ragweb.files import PROSE_SUFFIXES, plain_name
from ragweb.markup import FILL, INLINE_TAGS, is_directive, pre_cols, title_end, visible
from ragweb.tokens import CHARS_PER_TOKEN, count_tokens

# (greedy to the line end, then `_title`: a lazy title before optional closing marks would
# backtrack over every space of a long line -- an HTML view's heading is mostly spaces)
_HEADING_RE = re.compile(r" {0,3}(#{1,6})[ \t]+(.*)")
# a heading with no title, or a section number only: its title may be the line below it
_BARE_TITLE_RE = re.compile(r"(?:(?:[0-9]{1,3}|[A-Z])(?:\.[0-9]{1,3})*\.|[0-9]{1,3}(?:\.[0-9]{1,3})*)?$")
_JOIN_TITLE_CHARS = 100
# an AsciiDoc section title: "== Title" (optionally closed by "=" marks), at the line start
_ADOC_HEADING_RE = re.compile(r"(={1,6})[ \t]+(\S.*)")
# a reStructuredText (Sphinx) object description: ".. function:: name(args)", one API entry
_ENTRY_RE = re.compile(
    r"([ \t]*)\.\. (?:[a-z]+:)?(?:function|method|class|attribute|data|exception|decorator|"
    r"decoratormethod|classmethod|staticmethod|property|describe|object|option|cmdoption|envvar|"
    r"macro|member|type|var|variable|struct|enum|command|genex)::[ \t]+(\S.*)")
ENTRY_LEVEL = 7  # an entry ranks below every section title (levels 1-6), a nested one lower still
# front matter (Jekyll, Hugo, Docusaurus, MkDocs...): "---" or "+++" on the first line, closed
# by the same ("..." also closes YAML) within FRONT_MATTER_LINES; its "title" is the page title
FRONT_MATTER_LINES = 100
_FRONT_TITLE_RE = re.compile(r"title[ \t]*[:=][ \t]*(['\"]?)(.*?)\1[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# a line of one punctuation character repeated: a setext / reStructuredText heading adornment
# (not "`": a line of backticks is always a code fence)
_ADORN_RE = re.compile(r"^ {0,3}([=\-~^\"'#*+:._])\1{2,}[ \t]*$")
_ADORN_CHARS = frozenset("=-~^\"'#*+:._")
_ADORN_START = _ADORN_CHARS | {" "}
ITEM_RE = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
# an AsciiDoc inline anchor closing a section title, "OPTIONS[[OPTIONS]]" (git's manual pages)
# or "== Setup [[setup,Set-up]]": a link target, not shown
_TITLE_ANCHOR_RE = re.compile(r"[ \t]*\[\[[A-Za-z_:][\w:.-]*(?:,[^\[\]\n]*)?\]\][ \t]*$")
# the tag a page's heading mark stands for, after the tags before it on its line
# (`markup._MARKUP_RE`'s "head"): <h1>-<h6>, <title> (1) or a definition term <dt> (6)
_HEAD_TAG_END_RE = re.compile(r"<(?:h([1-6])\b|title\b|(dt)\b)[^<>\n]*>[ \t]*$", re.I)  # ... ending its line
# a page's heading that does not start its line, marked where its tag starts (`PageLines.inline`)
_INNER_MARK_RE = re.compile(r"(?<= )#{1,6} ")
_H_TAG_RE = re.compile(r"<(?:h([1-6])\b|(dt)\b)", re.I)
_HEAD_TAG_RE = re.compile(r"(?:[ \t]*</?[A-Za-z][^<>\n]*>)*?[ \t]*<(?:h([1-6])\b|title\b|(dt)\b)", re.I)
ADOC_SUFFIXES = (".adoc", ".asciidoc")
# Markdown's own names: only there is an indented "  # Title" a heading (CommonMark's up to three
# spaces); in plain text and reStructuredText it is a comment in an example (`indented_is_literal`)
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx", ".rmd", ".qmd")
# What a ".txt" file is known to be AsciiDoc by (git's docs): syntax only AsciiDoc writes, a
# preprocessor line ("ifdef::git-log[]", "include::a.txt[]"), a block macro ("image::a.png[]"),
# an anchor line ("[[OPTIONS]]"), a block style line ("[source,sh]", "[NOTE]", "[verse]"),
# git's "linkgit:git-log[1]" or its howtos' mail header "Content-type: text/asciidoc". Not
# what other text writes too: "::" closing a line (a definition term, and reStructuredText's
# "Example::"), ":name: value" (a reST field), a line of "----" (a Markdown rule or setext
# underline), a "= Title" line. A plain text file is read as Markdown, where a "----" line
# under text is a title's underline and one after a blank a rule: reading its "----" lines as
# AsciiDoc's listing blocks would make the text between two rules code, its headings gone.
# One search of the text: cheap.
_ADOC_SIGN_RE = re.compile(
    r"^(?:(?:ifn?def|ifeval|endif|include|image)::[^\s\[]*\[[^\n]*\]|\[\[[A-Za-z_:][\w:.-]*(?:,[^\]\n]*)?\]\]"
    r"|\[(?:source|listing|literal|verse|quote|horizontal|NOTE|TIP|IMPORTANT|WARNING|CAUTION)\b[^\]\n]*\])[ \t]*$"
    r"|^Content-type: text/asciidoc\b|\blinkgit:[\w.-]+\[", re.M)
# an AsciiDoc delimited block whose lines are not AsciiDoc (their "# comment" no heading, their
# "$ git commit" between two "----" no title): listing "----", literal "....", passthrough "++++",
# comment "////" (4 or more, closed by the same line)
_ADOC_BLOCK_RE = re.compile(r"(?:-{4,}|\.{4,}|\+{4,}|/{4,})[ \t]*$")
_ADOC_UNDERLINE = "=-~^+"  # AsciiDoc's two-line titles' underline characters (levels 0-4)


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
    """True for a Markdown file's path (or a gzip-compressed one's: ``README.md.gz``)."""
    return plain_name(path).lower().endswith(PROSE_SUFFIXES)


def is_asciidoc(path: str, text: str | list[str]) -> bool:
    """True for an AsciiDoc file: ``path`` names one (``.adoc``, ``.asciidoc``), or a ``.txt``
    file whose ``text`` (or lines) writes syntax only AsciiDoc writes (`_ADOC_SIGN_RE`: git's docs)."""
    name = plain_name(path).lower()
    if name.endswith(ADOC_SUFFIXES):
        return True
    if not name.endswith(".txt"):
        return False
    return _ADOC_SIGN_RE.search(text if isinstance(text, str) else "\n".join(text)) is not None


def indented_is_literal(path: str) -> bool:
    """True when an indented ``#`` line of the prose file ``path`` is no heading: a file not
    named as Markdown (`MARKDOWN_SUFFIXES`), as a plain-text README's example is indented
    ("/etc/postfix/access.cidr:" / "   # Rules are evaluated in order." / "   192.168.0.1 permit")
    and reStructuredText has no "#" titles (a literal block's "  # comment")."""
    return not plain_name(path).lower().endswith(MARKDOWN_SUFFIXES)


def split_lines(text: str) -> list[str]:
    """The lines of stored text (newlines are already normalised to ``\\n``)."""
    if text.endswith("\n"):
        text = text[:-1]
    return text.split("\n")


@dataclass
class Outline:
    """The heading and code-fence structure of a text file's lines (0-based line indices).

    Headings are Markdown ATX headings (``## Title``), AsciiDoc section titles
    (``== Title``) and underlined titles: Markdown setext
    (a line of ``=`` or ``-`` under the title) and reStructuredText sections (any
    punctuation adornment at least as long as the title, optionally also above it). An
    ATX or AsciiDoc heading's level is its number of ``#`` or ``=``; an adornment style's level is its order of
    first appearance in the file, as reStructuredText defines it (``=`` before ``-`` gives
    Markdown's 1 and 2). An ATX heading with no title or a section number only ("# 2.")
    followed by one line standing alone is titled by that line: an HTML page's heading whose
    text goes on below its tag (`ragweb.markup`). A front matter block's ``title`` (`front_matter_title`) is a heading
    of level 0, above every other: the page's title, which such pages do not repeat."""

    heads: dict = field(default_factory=dict)   # title line -> (level, text, first line, last line)
    # an HTML page's line holding a heading after text (DocBook's "...</p><h3>Title</h3><p>Text")
    # or text after a heading's end tag: line -> [(first column, end column, level, title)] of
    # its headings, in order (its `heads` entry is its last heading)
    inline: dict = field(default_factory=dict)
    adorn: dict = field(default_factory=dict)   # an adornment line -> its title line
    fence: dict = field(default_factory=dict)   # a code fence delimiter line -> opens (True) or closes
    code: set = field(default_factory=set)      # lines inside a code fence
    # a page's code line that holds text too ("commit:</p><pre>$ git revert HEAD</pre><p>This"):
    # line -> the [start, end) columns its <pre> elements cover (from the end of a <pre> tag that
    # starts on the line: the tag is no code); also a line of code after such a tag
    mixed: dict = field(default_factory=dict)
    # a page's blank lines that end no paragraph: whitespace inside a sentence (man2html writes
    # "If" / "<I>parameter</I>" / "" / "is unset or null"), and the lines of tags between a list
    # item's mark and its text (AsciiDoc's "<li>" / "<p>" / "Text")
    soft: set = field(default_factory=set)
    # a page's lines that start a paragraph though no blank line comes before them: a block
    # starts there, and the block that ends on the line above ends with no stop ("Stability: 2 -
    # Stable</div><p></p>" / "<p>Node-API is ...": not one sentence)
    breaks: set = field(default_factory=set)
    prose: list = field(default_factory=list)   # in a program: (first, last, "#" or '"') spans of comments and docstrings
    _prose_lines: dict | None = field(default=None, repr=False, compare=False)

    def prose_at(self, i: int) -> str | None:
        """'"' (docstring), "#" (comment) or None for line ``i`` of a program."""
        return self.prose_lines().get(i)

    def prose_lines(self) -> dict[int, str]:
        """Line -> '"' or "#" for every comment and docstring line of a program (computed
        once per outline: compaction asks about every line of a file it reads)."""
        if self._prose_lines is None:
            self._prose_lines = {i: kind for a, b, kind in self.prose for i in range(a, b + 1)}
        return self._prose_lines


def _underline(lines: list[str], i: int, asciidoc: bool = False) -> tuple[str, bool] | None:
    """(adornment style, overlined?) when line ``i`` is the title of an underlined heading.
    In AsciiDoc (``asciidoc``) a two-line title's underline is one of `_ADOC_UNDERLINE`, as
    long as the title give or take two characters (asciidoc's rule: a "----" line under a
    longer or shorter line opens a listing block), never overlined, never a preprocessor line
    ("ifdef::git-log[]"), and the title may follow its anchor or attribute line
    ("[[OPTIONS]]" / "OPTIONS" / "-------") or a preprocessor line."""
    if i + 1 >= len(lines) or lines[i + 1][:4].lstrip(" ")[:1] not in _ADORN_CHARS:
        return None
    title = lines[i]
    st = title.strip()
    if not st or title.startswith(("    ", "\t")) or st[0] == "|" or (st[0] == "[" and st[-1] == "]"):
        return None  # (an AsciiDoc block attribute such as "[source,java]" above a "----" block)
    m = _ADORN_RE.match(lines[i + 1])
    if not m or _ADORN_RE.match(title) or ITEM_RE.match(title) or _HEADING_RE.match(title):
        return None
    ch, width = m.group(1), len(lines[i + 1].strip())
    if asciidoc:
        if (ch not in _ADOC_UNDERLINE or abs(width - len(st)) > 2 or st[0] == "." or lines[i + 1][:1] == " "
                or is_directive(title)):  # (an instruction to the build, blank in the terms' view)
            return None
        before = lines[i - 1].strip() if i else ""  # (a preprocessor line is blank in the terms' view)
        if not before or (before[0] == "[" and before[-1] == "]") or is_directive(before):
            return ch, False
        return None
    if ch not in "=-" and width < len(st):  # reStructuredText: at least as long as the title
        return None
    if ch == "~" and i + 2 < len(lines) and lines[i + 2].strip():
        return None  # a tilde code fence opening after a short line, not an underline
    if i == 0 or not lines[i - 1].strip():
        return ch, False
    over = _ADORN_RE.match(lines[i - 1])
    if over and over.group(1) == ch and len(lines[i - 1].strip()) >= len(st):
        return ch, True
    return None  # the last line of a paragraph: not a title


def _title(text: str, mark: str) -> str:
    """A heading's title: ``text`` without trailing blanks nor a closing run of ``mark``
    characters that follows a blank ("## Usage ##" -> "Usage"; "# C#" stays "C#"), on one line."""
    text = text.rstrip(" \t")
    bare = text.rstrip(mark)
    if bare != text and (not bare or bare[-1] in " \t"):
        text = bare
    return _one_line(text)


def _without_anchor(title: str) -> str:
    """An AsciiDoc title without the inline anchor that closes it (`_TITLE_ANCHOR_RE`), unless
    the anchor is all it holds. Only AsciiDoc's (`is_asciidoc`): elsewhere "[[...]]" is text,
    a Markdown wiki link ("See also [[Home]]")."""
    bare = _TITLE_ANCHOR_RE.sub("", title)
    return bare if bare.strip() else title


MAX_TITLE_CHARS = 300  # a title longer than this is cut (at a word): each chunk keeps its heading


def _one_line(text: str) -> str:
    """``text`` with every run of blanks one space (an HTML page's view blanks its tags), at
    most `MAX_TITLE_CHARS` long."""
    text = " ".join(text.split())
    if len(text) > MAX_TITLE_CHARS:
        cut = text.rfind(" ", 0, MAX_TITLE_CHARS)
        text = text[:cut if cut > 0 else MAX_TITLE_CHARS] + " ..."
    return text


@dataclass(frozen=True)
class PageLines:
    """What `outline` reads of an HTML page besides its view (`ragweb.markup`): its stored
    lines (a heading's text ends at its end tag: on a page written on one line, the rest of
    the line is the rest of the page), its shown lines (a title is their visible text:
    "<code>json</code>.dumps" reads "json.dumps", not the view's "json .dumps"), and the lines
    of its ``<pre>`` elements (code, as in a Markdown fence: a psql table's "-----" or a
    shell's "# comment" there is not a heading; the page has no Markdown fences)."""

    raw: list[str]
    shown: list[str]
    pre: frozenset

    def title(self, i: int, at: int) -> str:
        """The title that goes on at column ``at`` of line ``i``."""
        return _one_line(visible(self.shown[i][at:title_end(self.raw[i], at)]))

    def level(self, i: int, at: int, marks: int) -> int:
        """The level of the heading marked at column ``at`` of line ``i`` with ``marks``
        ``#``: its tag's (a term's 6), which a bare tag may have had no room to mark (man2html's
        "<DT>${word}" holds "### " only, a bare "<h4>" too), else ``marks``."""
        m = _HEAD_TAG_RE.match(self.raw[i], at)
        if m is None and i > 0:  # marked on the line below its tag, in the tags there
            m = _HEAD_TAG_END_RE.search(self.raw[i - 1])  # ("<dt>" / "<code>xxdiff": 5 fit)
        if m is None:
            return marks
        return 6 if m.group(2) else int(m.group(1) or 1)

    def inline(self, i: int, view: str) -> list[tuple[int, int, int, str]]:
        """(first column, end column, level, title) of each heading that does not start line
        ``i`` (its view ``view``): `markup.show_html` marks one as "## " where its tag starts
        ("<h2"), or after text as " ## ", the space there; a "#" of the text is no tag's."""
        raw = self.raw[i]
        marks = [(m.start(), m.end(), tag) for m in _INNER_MARK_RE.finditer(view)
                 if (tag := _H_TAG_RE.match(raw, m.start()) or _H_TAG_RE.match(raw, m.start() - 1))]
        out = []
        for k, (at, text_at, tag) in enumerate(marks):
            # (an unclosed one ends where the next starts: a line of many stays linear)
            end = title_end(raw, text_at, marks[k + 1][0] if k + 1 < len(marks) else None)
            title = _one_line(visible(self.shown[i][text_at:end]))
            if title:
                out.append((at, end, 6 if tag.group(2) else int(tag.group(1)), title))
        return out

    def ends(self, i: int, at: int) -> bool:
        """Whether the heading that starts at column ``at`` of line ``i`` ends on that line
        (its text, empty or a bare number, does not go on on the next)."""
        return title_end(self.raw[i], at) < len(self.raw[i])


def front_matter_title(lines: list[str]) -> tuple[int, int, str] | None:
    """(title line, closing line, title) of the front matter block that opens ``lines``
    (0-based), when it has a ``title`` entry."""
    mark = lines[0].rstrip() if lines else ""
    if mark not in ("---", "+++"):
        return None
    title = None
    for j in range(1, min(len(lines), FRONT_MATTER_LINES)):
        line = lines[j]
        if line.rstrip() == mark or (mark == "---" and line.rstrip() == "..."):
            return (title[0], j, title[1]) if title else None
        if title is None and line[:5].lower() == "title":
            m = _FRONT_TITLE_RE.match(line)
            if m and m.group(2).strip():
                title = (j, m.group(2).strip())
    return None


def _adoc_blocks(lines: list[str]) -> dict[int, int]:
    """Opening line -> closing line of each AsciiDoc delimited block of ``lines`` whose lines
    are not AsciiDoc (`_ADOC_BLOCK_RE`), for every such line that the same line closes further
    down; what lies inside or is a title's underline is `outline`'s to say."""
    seen: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        if line[:1] in "-.+/" and _ADOC_BLOCK_RE.match(line):
            seen.setdefault(line.rstrip(" \t"), []).append(i)
    return {a: b for at in seen.values() for a, b in zip(at, at[1:])}


def outline(lines: list[str], markdown: bool, page: PageLines | None = None,
            asciidoc: bool = False, literal: bool = False) -> Outline:
    """The `Outline` of ``lines``; empty for a file that is not Markdown-like (code). For an
    HTML page ``lines`` are its view, and ``page`` the rest that is read (`PageLines`). An
    AsciiDoc file's (``asciidoc``, `is_asciidoc`) listing, literal, passthrough and comment
    blocks are code, as a Markdown fence's lines, its titles AsciiDoc's (`_underline`), and
    an indented line is none (a literal paragraph's "  # comment"); nor is an indented
    ``#`` line of a file that is not Markdown (``literal``, `indented_is_literal`)."""
    out = Outline()
    if not markdown:
        return out
    blocks = _adoc_blocks(lines) if asciidoc and page is None else {}
    close = -1
    pre = frozenset() if page is None else page.pre
    if pre:
        pre = _pre_text(lines, page, out)
    out.code |= pre
    styles: dict[tuple[str, bool], int] = {}
    in_fence = False
    adorn = out.adorn
    last = len(lines) - 1
    skip = -1
    front = front_matter_title(lines)
    if front is not None:
        at, skip, title = front
        out.heads[at] = (0, title, 0, at)  # (it starts the page: chunk headings see it from line 1)
    for i, line in enumerate(lines):
        if i <= skip:
            continue  # front matter: data, not text (no setext titles nor fences in it)
        if close >= i:
            if close == i:
                out.fence[i] = False
            else:
                out.code.add(i)
            continue
        if in_fence:
            if _FENCE_RE.match(line):
                out.fence[i] = False
                in_fence = False
            else:
                out.code.add(i)
            continue
        if adorn and i in adorn or i in pre:
            continue
        if blocks and i in blocks:
            out.fence[i] = True
            close = blocks[i]
            continue
        # cheap test first: only a line followed by a punctuation line can be a title
        style = None
        if i < last and lines[i + 1][:1] in _ADORN_START and i + 1 not in pre:
            nxt = lines[i + 1].lstrip(" ")
            if nxt[1:3] == nxt[:1] * 2:
                style = _underline(lines, i, asciidoc)
        if style is not None:
            level = styles.setdefault(style, len(styles) + 1)
            first = i - 1 if style[1] else i
            title = _one_line(lines[i])  # (one line first: bounded)
            out.heads[i] = (level, _without_anchor(title) if asciidoc else title, first, i + 1)
            out.adorn[i + 1] = i
            if style[1]:
                out.adorn[i - 1] = i
            continue
        c = line[:1]
        if c == " ":
            c = line.lstrip(" ")[:1]
        if (c == "`" or c == "~") and page is None and _FENCE_RE.match(line):
            out.fence[i] = True
            in_fence = True
        elif (c == "#" and not ((asciidoc or literal) and line[:1] == " ")) or c == "=":
            # (AsciiDoc: an indented line is a literal paragraph, "  # Add a submodule" no title)
            m = (_HEADING_RE if c == "#" else _ADOC_HEADING_RE).match(line)
            if m:
                title = _title(m.group(2), c) if page is None else page.title(i, m.start(2))
                if c == "=" and asciidoc:  # (Markdown's "[[wiki link]]" is text: kept)
                    title = _without_anchor(title)
                if (c == "#" and i < last and _BARE_TITLE_RE.match(title) and lines[i + 1].strip()
                        and (i + 1 == last or not lines[i + 2].strip()) and i + 1 not in pre
                        and (page is None or not page.ends(i, m.start(1)))):
                    nxt = lines[i + 1]
                    first = nxt.lstrip(" ")[:1]
                    if first not in "#`~|" and not ITEM_RE.match(nxt) and len(nxt.strip()) <= _JOIN_TITLE_CHARS:
                        # an HTML heading whose text goes on the next line ("<h1>" / "git-cat(1)" /
                        # "</h1>"; "<h1><span>2. </span>" / "Enabling ...": the view keeps lines)
                        nxt = nxt if page is None else page.title(i + 1, 0)
                        level = len(m.group(1)) if page is None else page.level(i, m.start(1), len(m.group(1)))
                        out.heads[i] = (level, _one_line(title + " " + nxt), i, i + 1)
                        out.adorn[i + 1] = i
                        continue
                if page is not None and not title:
                    continue  # (a page's heading or term whose text is further down: no title to give)
                level = len(m.group(1)) if page is None else page.level(i, m.start(1), len(m.group(1)))
                out.heads[i] = (level, title, i, i)
                if page is not None:
                    end = title_end(page.raw[i], m.start(2))
                    if line[end:].strip():  # text after its end tag: the heading is its part of the line
                        out.inline[i] = [(0, end, level, title)]
        elif c == ".":
            m = _ENTRY_RE.match(line)
            if m:
                out.heads[i] = (ENTRY_LEVEL + len(m.group(1).expandtabs()), _one_line(m.group(2)), i, i)
    if page is not None:
        _inline_heads(lines, page, out)
        _soft_blanks(lines, page, out)
        _block_breaks(lines, page, out)
    return out


_BLOCKS = "p|div|dd|blockquote|section|details|table|ul|ol|dl"
_BLOCK_END_RE = re.compile(rf"</(?:{_BLOCKS})\s*>[ \t]*$", re.I)
_BLOCK_START_RE = re.compile(rf"[ \t]*<(?:{_BLOCKS})\b", re.I)
# the end of a sentence: a stop, a colon or semicolon (the next block goes on with it), and
# what may close it
_STOP_END_RE = re.compile(r"[.!?:;\u2026\u3002\uff01\uff1f][\"')\]*_`\u201d\u2019\u00bb]*$")


def _block_breaks(lines: list[str], page: PageLines, out: Outline) -> None:
    """Add to ``out.breaks`` the lines of a page's view that start a paragraph after a block
    with no stop at its end on the line above (`Outline.breaks`): that line ends with a block's
    end tag, this one starts with a block's start tag, both show text, neither is code or a
    heading. (Every block on its own line as a paragraph cost npm's pages 3.5 points: a short
    block that ends a sentence stays in its paragraph, whose sentences are units anyway.)"""
    raw = page.raw
    for i in range(1, len(lines)):
        above = lines[i - 1].rstrip()
        if (not above or not lines[i].strip() or i in out.code or i - 1 in out.code or i in out.heads
                or i - 1 in out.heads or _STOP_END_RE.search(above)):
            continue
        if _BLOCK_END_RE.search(raw[i - 1][-200:]) and _BLOCK_START_RE.match(raw[i]):
            out.breaks.add(i)


# a page's line that a blank line inside a sentence follows: it ends with text or an inline
# tag; the line after such a blank starts with text or an inline tag
_INLINE_END_RE = re.compile(rf"(?:[^\s>]|</?(?:{INLINE_TAGS})\b[^<>]*>)\s*$", re.I)
_INLINE_START_RE = re.compile(rf"\s*(?:[^\s<]|</?(?:{INLINE_TAGS})\b)", re.I)
_INLINE_TAGS_LINE_RE = re.compile(rf"[ \t]*(?:</?(?:{INLINE_TAGS})\b[^<>\n]*>[ \t]*)+$", re.I)
SOFT_LINES = 3  # lines of inline tags at most after a blank line inside a sentence; of tags, between an item's mark and its text


def _soft_blanks(lines: list[str], page: PageLines, out: Outline) -> None:
    """Add to ``out.soft`` the blank lines of a page's view that end no paragraph: an empty
    line of the source between two lines of one sentence (`_INLINE_END_RE`, `_INLINE_START_RE`),
    with up to `SOFT_LINES` lines of inline tags after it; and up to `SOFT_LINES` lines of tags
    between a list item's mark, alone on its line, and the text it marks."""
    raw, n = page.raw, len(lines)
    # (the few lines it can be: blank in the source, or a lone item mark)
    for i in [i for i, (v, r) in enumerate(zip(lines, raw)) if not r or r.isspace() or v[:1] == "-"]:
        if not 0 < i < n - 1:
            continue
        line = lines[i]
        if line and not line.isspace():
            if line[:1] == "-" and not line[1:].strip() and i not in out.code:  # an item's mark, its text below
                j = i + 1
                while j < n and j - i <= SOFT_LINES and not lines[j].strip():
                    j += 1
                if (i + 1 < j < n and j - i <= SOFT_LINES and j not in out.code and j not in out.heads
                        and not ITEM_RE.match(lines[j])):
                    out.soft.update(range(i + 1, j))
            continue
        if raw[i].strip() or not lines[i - 1].strip() or i - 1 in out.code:
            continue
        j = i + 1  # (over lines of inline tags only: man2html's "</FONT>" closing a ".SM" word)
        while j < n and j - i <= SOFT_LINES and not lines[j].strip() and _INLINE_TAGS_LINE_RE.match(raw[j]):
            j += 1
        if (j < n and lines[j].strip() and j not in out.code and j not in out.heads and not ITEM_RE.match(lines[j])
                and _INLINE_END_RE.search(raw[i - 1][-200:]) and _INLINE_START_RE.match(raw[i + 1])):
            out.soft.update(range(i, j))


def _pre_text(lines: list[str], page: PageLines, out: Outline) -> frozenset:
    """A page's code lines without those where a ``<pre>`` element that shows nothing there
    starts or ends ("</pre></div><h2>Description</h2>", "<p>Run:</p><pre>"); a line that
    shows both text and code goes in `Outline.mixed`, and so does one whose code follows the
    ``<pre>`` tag that starts it (makeinfo's '<pre class="example">  gnutls_init (&session);'),
    its code from the tag's end."""
    drop = set()
    for i, spans in pre_cols("\n".join(page.raw)).items():
        view = lines[i] if i < len(lines) else ""
        if i not in page.pre:
            continue
        raw, a, b = page.raw[i], *spans[0]
        tag = a if raw[a + 1:a + 4].lower() == "pre" else raw.rfind("</", a, b)
        if page.shown[i][tag + 1:tag + 2] == raw[tag + 1:tag + 2]:
            continue  # (a tag shown as written: a man page's or POD document's text "<pre>")
        # (a <pre> that starts on the line: its code starts after its tag, which is no code:
        # makeinfo's '<pre class="example">' counted 21 characters in its example's size)
        spans = [(_after_pre_tag(raw, a, b), b) for a, b in spans]
        at, outside = 0, False
        for a, b in spans:
            outside = outside or bool(view[at:a].strip())
            at = b
        if not (outside or view[at:].strip()):
            if spans[0][0] > 0 and view[spans[0][0]:spans[0][1]].strip():
                out.mixed[i] = spans  # code only, after the tag that starts it
            continue
        if any(view[a:b].strip(" #") for a, b in spans):  # (a heading's marks may sit in "</pre>")
            out.mixed[i] = spans
        else:
            drop.add(i)
    return page.pre - drop if drop else page.pre


def _after_pre_tag(raw: str, a: int, b: int) -> int:
    """Where the code of the ``<pre>`` element that covers columns ``a``..``b`` of the stored
    line ``raw`` starts: after its start tag, when that tag is at ``a`` (else ``a``)."""
    if raw[a:a + 4].lower() != "<pre":
        return a
    end = raw.find(">", a, b)
    return end + 1 if end >= 0 else a


def _inline_heads(lines: list[str], page: PageLines, out: Outline) -> None:
    """Add to ``out`` the headings of a page marked after text on their line (`PageLines.inline`):
    each line's in `Outline.inline`, its last one its `Outline.heads` entry. A line of text and
    code (`Outline.mixed`: a minified page with a <pre>) has them too, outside its <pre> elements."""
    for i, line in enumerate(lines):
        if " #" not in line or (i in out.code and i not in out.mixed) or i in out.adorn:
            continue
        head = out.heads.get(i)
        if head is not None and head[3] != i:
            continue  # (a title joined with the line below: whole lines)
        inner = page.inline(i, line)
        if i in out.mixed:  # (a heading that reaches into a <pre> is none)
            inner = [h for h in inner if not any(a < h[1] and h[0] < b for a, b in out.mixed[i])]
        if inner:
            out.inline[i] = out.inline.get(i, []) + inner
            level, _, _, title = inner[-1]
            out.heads[i] = (level, title, i if head is None else head[2], i)


_NOT_COMMENT = ("#!", "#include", "#define", "#if", "#endif", "#else", "#pragma", "#import")


def code_outline(lines: list[str]) -> Outline:
    """The `Outline` of a program: the spans of its comments ("#": whole-line ``#``, ``//``
    and ``--`` comments, ``/* ... */`` blocks) and of its triple-quoted strings -- docstrings
    ('"') -- in ``prose``, so compaction cuts them into sentences as it does paragraphs.
    Found with ``str.find`` over the whole text (C speed; no per-line Python loop)."""
    out = Outline()
    text = "\n".join(lines)
    spans: list[tuple[int, int, str]] = []
    at, line = 0, 0

    def line_of(offset: int) -> int:  # offsets only grow within each scan below
        nonlocal at, line
        line += text.count("\n", at, offset)
        at = offset
        return line

    def first_on_line(pos: int) -> bool:  # (looking back over blanks only: a long line has many "/*")
        i = pos - 1
        while i >= 0 and text[i] in " \t":
            i -= 1
        return i < 0 or text[i] == "\n"

    def blocks(openers: tuple[str, ...], closer_of, kind: str, line_start: bool) -> None:
        pos = 0
        ahead = {o: text.find(o) for o in openers}  # the next place of each opener
        while True:
            for o, p in ahead.items():
                if 0 <= p < pos:
                    ahead[o] = text.find(o, pos)
            found = [(p, o) for o, p in ahead.items() if p >= 0]
            if not found:
                return
            start, opener = min(found)
            if line_start and not first_on_line(start):  # "/*" in a string, such as a glob
                pos = start + len(opener)
                continue
            end = text.find(closer_of(opener), start + len(opener))
            if end < 0:
                return
            spans.append((line_of(start), line_of(end), kind))
            pos = end + len(closer_of(opener))

    blocks(('"""', "'''"), lambda o: o, '"', False)  # paired in order, like the quotes themselves
    at, line = 0, 0
    blocks(("/*",), lambda o: "*/", "#", True)
    for token in ("#", "//", "-- "):
        at, line = 0, 0
        pos = text.find(token)
        while pos >= 0:
            if first_on_line(pos) and not text.startswith(_NOT_COMMENT, pos):
                i = line_of(pos)
                spans.append((i, i, "#"))
            nxt = text.find("\n", pos)
            pos = text.find(token, nxt) if nxt >= 0 else -1
    spans.sort()
    merged: list[tuple[int, int, str]] = []
    for a, b, kind in spans:  # a docstring wins over comments inside it; adjacent comments join
        if merged and a <= merged[-1][1] + (merged[-1][2] == kind == "#"):
            last = merged[-1]
            if last[2] == kind or a <= last[1]:
                merged[-1] = (last[0], max(last[1], b), last[2])
                continue
        merged.append((a, b, kind))
    out.prose = merged
    return out


def line_headings(lines: list[str], markdown: bool, page: PageLines | None = None, asciidoc: bool = False,
                  literal: bool = False) -> tuple[list[str], set[int], list[int]]:
    """For each line: the nearest heading at or above it ('' if none); the 0-based indices
    of the lines where headings start (an overline, or the title); and for each line the
    index of that nearest heading's start line (-1 if none). (``page``, ``asciidoc``,
    ``literal``: `outline`'s.)"""
    return _line_headings(outline(lines, markdown, page, asciidoc, literal).heads, len(lines))


def _line_headings(heads: dict, n: int) -> tuple[list[str], set[int], list[int]]:
    """`line_headings` of an outline's ``heads``, for ``n`` lines."""
    # (an overline, or a front matter's opening mark, starts the heading of a later line)
    title_at = {h[2]: h[1] for h in heads.values()}
    starts = set(title_at)
    out: list[str] = []
    where: list[int] = []
    current, at = "", -1
    for i in range(n):
        if i in starts:
            current, at = title_at[i], i
        out.append(current)
        where.append(at)
    return out, starts, where


def chunk_lines(text: str, chunk_tokens: int = 512, chunk_overlap: int = 50,
                markdown: bool = False, page: PageLines | None = None, asciidoc: bool = False,
                literal: bool = False) -> list[Chunk]:
    """Cut ``text`` into chunks of whole lines; see the module docstring. (An HTML page's
    ``text`` is its view, and ``page`` the rest `outline` reads; ``asciidoc``, ``literal``:
    `outline`'s.)"""
    lines = split_lines(text)
    if not text.strip():
        return []
    if len(text) // CHARS_PER_TOKEN + 2 * len(lines) <= chunk_tokens // 4:
        # a small text (the bound exceeds its summed line costs) is one chunk: no heading
        # can split it, as a heading starts a new chunk only once a quarter is full
        title = line_headings(lines, markdown, page, asciidoc, literal)[0][0] if markdown else ""
        return [Chunk(1, len(lines), title)]
    ol = outline(lines, markdown, page, asciidoc, literal)
    headings, heading_starts, heading_at = _line_headings(ol.heads, len(lines))

    def context(i: int) -> str:
        return headings[i] if 0 <= heading_at[i] < i else ""

    costs = [count_tokens(line) + 1 for line in lines]  # +1 for the newline
    overlap = min(chunk_overlap, chunk_tokens // 2)
    chunks: list[Chunk] = []
    n = len(lines)
    i = 0
    while i < n:
        if costs[i] > chunk_tokens:
            # (a page's line is cut at a space it shows: a space of the view may be a
            # character reference's or a tag's, and the cited columns would cut the file there)
            pieces = _split_long_line(lines[i], i, headings[i], chunk_tokens, context(i),
                                      None if page is None else page.shown[i])
            if i in ol.inline:  # (a page on one line: each piece headed by its own section, not the line's last)
                above = headings[i - 1] if i > 0 else ""
                heads = ol.inline[i]  # (in the order of their columns: found by halves, a line of many stays linear)
                starts = [a for a, _, _, _ in heads]
                for k, piece in enumerate(pieces):
                    before = bisect.bisect_left(starts, piece.col_end or len(lines[i]))
                    pieces[k] = replace(piece, heading=heads[before - 1][3] if before else above)
            chunks.extend(pieces)
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
                     context: str, spaces: str | None = None) -> list[Chunk]:
    """Pieces of one over-long line, cut at a space where possible (a space of ``spaces``,
    the same line as shown, when given)."""
    width = chunk_tokens * 4
    pieces: list[Chunk] = []
    pos = 0
    spaces = line if spaces is None else spaces
    while pos < len(line):
        end = min(pos + width, len(line))
        if end < len(line):
            cut = spaces.rfind(" ", pos + width // 2, end)
            if cut > pos:
                end = cut + 1
                while end < len(line) and spaces[end] == FILL:
                    end += 1  # (a space a page shows for "&nbsp;" or between blocks ends the markup it is the first column of)
        if line[pos:end].strip():
            pieces.append(Chunk(index + 1, index + 1, heading, pos, end, context))
        pos = end
    if len(pieces) == 1 and (pieces[0].col_start, pieces[0].col_end) == (0, len(line)):
        # (a line over the budget only by its newline fits the width: it is a whole line, not
        # a piece, so its hit is widened by -c like any other)
        return [Chunk(index + 1, index + 1, heading, context=context)]
    return pieces

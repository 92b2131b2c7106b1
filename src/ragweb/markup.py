"""HTML read as text: what a reader sees, every character kept in place; a POD document,
a man page and an Info file read the same way (`show_pod`, `show_man`, `show_info`); and
the lines of AsciiDoc that are instructions to its build (`mask_directives`).

An HTML page is read through two strings as long as its text, line for line and column
for column, so every offset, line and column is the stored file's own:

- `show_html`: each character of markup -- tags, comments, ``<script>``, ``<style>`` and
  ``<template>`` elements, controls (``<button>``, ``<select>``: a code block's "copy", a
  version menu; closed within 2,000 characters), a heading's permalink (a link within the page whose text is
  one sign, Sphinx's "¶", Node's "#"), Sphinx's "[source]" and "[docs]" links between an API
  entry and its highlighted source, and navigation (``<nav>``, ``role="navigation"``: the site
  menu and table of contents every page repeats; ``role="menu"`` or ``"menubar"``, a picker
  of themes or versions such as mdBook's; a GNU manual's "Next: ..., Previous: ...,
  Up: ..." above each node, Texinfo's ``<div class="header">`` with links to those nodes;
  Texinfo's table of contents, ``id="SEC_Contents"``, and its printed indexes, ``<table
  class="index-cp">``, whose "process group:   Definitions" lines match questions as text;
  texi2html's panel of buttons around each section, "[ << ] [ >> ] [Top] [Contents]", and
  its contents lists, ``<ul class="toc">``; an index of gtk-doc's API or of a DocBook book,
  ``<div class="index">``, "aarch64_sha1, variable in sha-aarch64", and gtk-doc's bar of
  links atop each page, ``<table class="navigation">``)
  -- becomes `FILL`; a character reference
  becomes the character it names followed by `FILL`; a block tag between two words leaves
  one space; some tags leave a mark the Markdown reading understands: a heading tag that
  starts a line's text becomes ``#`` marks (``<section><h2>`` -> ``## ``), so pages have
  sections (a heading whose text starts on the next line, "<h1>" / "  <span>Title", is marked
  there when that line's indentation and tags leave room, else on the tag's line, and
  `chunking.outline` takes the line below as its title; one after text on its line, as
  DocBook writes most, is marked `` ## `` where its tag starts, and
  `chunking.PageLines.inline` finds it); a definition list's term (``<dt>``, first on its line or alone on it, as
  Sphinx writes an API entry's signature; its text on the next line is marked the same way,
  on the tag's line when the six marks fit there, as AsciiDoc's ``<dt class="hdlist1">``
  that heads each option of git's pages) becomes ``###### ``, so each entry is a section
  under the page's headings; and a list item tag that starts a line's text becomes ``- ``,
  so short items stay whole.
- `mask_html`, the *view*: the same with `FILL` as a space. Terms, chunks and compaction
  units come from the view, so a page is found by its words, not by ``class``, ``href``
  or its CSS.

The indentation of a line outside ``<pre>`` is the source's layout, not text: it is `FILL`
as well (`_fill_indentation`), so a pack does not pay for it (a tenth of PostgreSQL's pages).

A packed snippet of a page is the *visible text* of its range: `visible` of the shown
text (the `FILL` characters dropped), so an LLM reads the words and not the markup, and
the text stays exactly determined by the cited lines of the stored file. The lines of a
``<pre>`` element (`pre_lines`) are read as code, like a Markdown code fence.
"""

from __future__ import annotations

import bisect
import functools
import html
import re

from ragweb.files import HTML_SUFFIXES, document_kind, plain_name

FILL = "\x01"  # a character of markup in the shown text (dropped from the visible text)

# A tag never spans a "<" ([^<>]) but in a quoted value of at most 1,000 characters: so a stray
# "<" without its ">" costs a scan to the next "<", not to the end of the page (which made
# many of them quadratic).
_MARKUP_RE = re.compile(
    r"(?P<head>^(?:[ \t]*</?[A-Za-z][^<>\n]*>)*?[ \t]*"        # a heading, or a term of a definition list
    r"<(?:h(?P<level>[1-6])\b|title\b|(?P<dt>dt)\b(?![^<>\n]*\bfield-))[^<>\n]*>"  # (not a field list's)
    r"(?:[ \t]*\n[ \t]*)?"                                        # (its text may start on the next line)
    r"(?:<[A-Za-z][^<>\n]*>)*)"                                 # (with the tags opening its text: room for its mark)
    r"|(?P<item>^(?:[ \t]*</?[A-Za-z][^<>\n]*>)*?[ \t]*<li\b[^<>\n]*>)"  # a list item (both first on their line)
    r"|(?P<inner><h(?P<inlevel>[1-6])\b[^<>\n]*>(?:</?(?!h[1-6]\b)[A-Za-z][^<>\n]*>)*(?=[ \t]*[^\s<]))"  # a heading
    # that does not start its line, with its text on it: after text (DocBook's "...</p></div><div>
    # <h3>Title</h3><p>Text", often several on a line), a style element or a doctype
    r"|<!--.*?(?:-->|\Z)"                                       # a comment (an unclosed one runs to the end)
    r"|<(?P<raw>script|style|template)\b.*?(?:</(?P=raw)\s*>|\Z)"  # elements whose content is not text
    r"|<(?P<ui>button|select)\b[^<>]*+>(?:(?!<(?P=ui)\b).){0,2000}?(?:</(?P=ui)\s*>|(?=<(?P=ui)\b))"  # controls:
    # "copy", "Hide", a version menu; one ends at its end tag or where the next one starts, as
    # a browser reads them (a page of unclosed <button>s scanned 2,000 characters from each)
    r"|<a\b(?=[^<>]*\bhref=[\"']#)[^<>]*+>[ \t]*(?:&(?:para|sect|#182|#[xX][bB]6);|[^\w\s<])[ \t]*</a\s*>"  # a permalink: "¶", "#"
    # (an attribute looked for ahead, then the tag scanned once: "[^<>]*\bhref=...[^<>]*>" scanned
    # the rest of the tag from each href="#", quadratic in a tag of thousands of them)
    r"|<[!?/]?[A-Za-z][^<>]*>"                                  # any other tag, doctype or processing instruction
    r"|<[A-Za-z](?:[^<>\"']|\"[^\"]{0,1000}\"|'[^']{0,1000}')*>"  # (one with a "<" or ">" in a quoted value:
    # Apache's <img alt="<-">; tried only where the form above fails, and each value is bounded)
    r"|(?P<ref>&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;))",  # a character reference
    # (a numeric one without its ";" too, as browsers read it: Django's "&#xf17c/&#xf179")
    re.S | re.I | re.M,
)
_BLOCK_TAG_RE = re.compile(
    r"</?(?:address|article|aside|blockquote|br|caption|dd|details|div|dl|dt|fieldset|figcaption|figure"
    r"|footer|form|h[1-6]|header|hr|li|main|ol|option|p|pre|section|summary|table|tbody|td|tfoot|th"
    r"|thead|title|tr|ul)\b", re.I)
_NOT_TEXT = {ord(c): " " for c in "\n\r\t\v\f\x1c\x1d\x1e\x1f\x85\xa0\u2028\u2029" + FILL}


_NOT_NEWLINE_RE = re.compile(r"[^\n]")


def _blank(s: str) -> str:
    """``s`` as `FILL`, its line breaks kept."""
    return FILL * len(s) if "\n" not in s else _NOT_NEWLINE_RE.sub(FILL, s)


def is_html(path: str) -> bool:
    """True for a path that names an HTML page (or a gzip-compressed one: ``index.html.gz``)."""
    return plain_name(path).lower().endswith(HTML_SUFFIXES)


def _mark(m: re.Match, room: int) -> str:
    """The mark of a heading, term or list item in ``room`` characters of its tags: ``#``
    by level (a term ranks below every heading: it names an entry of its section) or
    ``-``. A bare "<h5>" has room for "### " only: its level is then 3 (rare: a heading
    tag usually has attributes or tags after it)."""
    if m.lastgroup == "item":
        mark = "-"
    else:
        mark = "#" * min(6 if m.group("dt") else int(m.group("level") or 1), room - 1)
    return mark + " " + FILL * (room - len(mark) - 1)


_FILLS = [FILL * n for n in range(256)]  # (most tags are short: their fill is made once)


# a <sup> before a number, after a digit (`_after_digit`): an exponent (not "10<sup>th</sup>",
# nor a footnote's mark)
_EXPONENT_RE = re.compile(r"<sup\b[^<>\n]*>[-\u2212]?[0-9]", re.I)


def _after_digit(text: str, at: int, tags: int = 3) -> bool:
    """Whether a digit comes just before ``at``, over at most ``tags`` tags on its line
    ("2<small><sup>31", SQLite's limits page)."""
    for _ in range(tags):
        if at == 0 or text[at - 1] != ">":
            break
        start = text.rfind("<", 0, at - 1)
        if start < 0 or "\n" in text[start:at]:
            break
        at = start
    return at > 0 and text[at - 1].isdigit()


def _shown(m: re.Match) -> str:
    kind = m.lastgroup  # None for a comment or a tag without a mark
    s = m.group()
    if kind is None or kind == "raw" or kind == "ui":  # most matches: checked first, in as few steps
        if "\n" in s:
            return _blank(s)
        n = len(s)
        if n > 4 and s[1] in "sS" and _EXPONENT_RE.match(m.string, m.start(), m.end() + 2) \
                and _after_digit(m.string, m.start()):
            return "^" + (_FILLS[n - 1] if n <= 256 else FILL * (n - 1))  # ("2<sup>31</sup>" reads "2^31", not "231")
        # a block's tag between two words keeps them apart ("<h2>Title</h2><p>Text" reads
        # "Title Text"); an inline tag ("<b>", "<code>") and a tag at a line end do not
        text, b = m.string, m.end()
        # (a block tag before inline ones -- "<p><code>ninja", "See Also</h2><a>ALTER" --
        # leaves the space too)
        nxt = text[b] if b < len(text) else "\n"
        if (nxt != "\n" and _BLOCK_TAG_RE.match(s)
                and (nxt != "<" or (not _BLOCK_TAG_RE.match(text, b) and _text_after(text, b)))):
            a = m.start()
            if a > 0 and _text_before(text, a):
                return " " + (_FILLS[n - 1] if n <= 256 else FILL * (n - 1))
        return _FILLS[n] if n < 256 else FILL * n
    n = len(s)
    if kind == "ref":
        # the named character (one line: a reference to a line break reads as a space)
        char = html.unescape(s).translate(_NOT_TEXT)
        return char + FILL * (n - len(char)) if len(char) < n else s
    if "\n" in s:
        if kind == "head":  # a heading or term whose text starts on the next line ("<h1>\n  Title")
            cut = s.rindex("\n") + 1
            if n - cut >= (3 if m.group("dt") else 2 + int(m.group("level") or 1)):
                return _blank(s[:cut]) + _mark(m, n - cut)
            # no room there: marked on the tag's line (`chunking.outline` joins them); a term
            # only where its six marks fit, as AsciiDoc's <dt class="hdlist1"> (git's options),
            # and its text follows (not a blank line, its end tag or the page's end: a bare mark)
            cut = s.index("\n")
            if (cut >= 2 and not m.group("dt")) or (cut >= 7 and m.string[m.end():m.end() + 1] not in ("", "\n", "<")):
                return _mark(m, cut) + _blank(s[cut:])
        return _blank(s)
    if kind == "inner":  # (after text, a space before its marks parts it from that text)
        space = 1 if _text_before(m.string, m.start()) else 0
        marks = min(int(m.group("inlevel")), n - 1 - space)
        return " " * space + "#" * marks + " " + FILL * (n - marks - 1 - space)
    return _mark(m, n)  # a heading, a term or a list item


def _text_after(text: str, at: int, tags: int = 8) -> bool:
    """Whether words follow the block tag that ends at ``at`` on its line, with no other block
    tag first: then that tag is the last between two blocks and leaves their space
    ("files).</p><p><code>ninja" reads "files). ninja"; "</p><p>Text": only the ``<p>``)."""
    n = len(text)
    for _ in range(tags):
        c = text[at]
        if c != "<":
            return c != "\n"
        if at + 1 < n and not (text[at + 1].isalpha() or text[at + 1] in "/!?"):
            return True  # a lone "<" is text
        if _BLOCK_TAG_RE.match(text, at):
            return False
        end = text.find(">", at)
        if end < 0 or "\n" in text[at:end]:
            return False
        at = end + 1
        if at >= n:
            return False
    return False


def _text_before(text: str, at: int, tags: int = 8, reach: int = 400, raw_reach: int = 20_000) -> bool:
    """Whether a word ends right before ``at`` on its line, markup between them skipped
    ("<dd><p>Text" starts its line's text; "Title</h2><p>Text" does not; neither does
    "<style>p{}</style><h1>Title": a comment, script or style is markup as a whole). Looks
    back over at most ``tags`` tags of at most ``reach`` characters each (a comment, script
    or style element: ``raw_reach``), so a page stays linear; beyond that it says yes."""
    i = at
    for _ in range(tags):
        c = text[i - 1] if i > 0 else "\n"
        if c != ">":
            return not c.isspace()
        j = text.rfind("<", max(0, i - reach), i - 1)
        if j < 0:
            return True
        if i >= 3 and text.startswith("-->", i - 3):  # a comment: back to its start
            j = text.rfind("<!--", max(0, i - raw_reach), i - 3)
        else:
            m = _RAW_END_RE.match(text, j)
            if m:  # the end of a script or style: back to its start tag
                lo = max(0, j - raw_reach)
                k = text[lo:j].lower().rfind("<" + m.group(1).lower())
                j = lo + k if k >= 0 else -1
        if j < 0:
            return True
        i = j
    return True


_RAW_END_RE = re.compile(r"</(script|style|template)\s*>", re.I)


_NAV_START_RE = re.compile(r"<(nav)\b[^<>]*+>|<([A-Za-z][\w-]*)\b(?=[^<>]*\brole\s*=\s*[\"']?(?:navigation|menu|menubar)\b)[^<>]*+>"
                           r"|<(div)\b(?=[^<>]*\bclass\s*=\s*[\"']?(?:nav-panel|header)[\"'\s>])[^<>]*+>"
                           # Sphinx's "[source]" after a signature, "[docs]" in highlighted source
                           r"|<(span|a)\b(?=[^<>]*\bclass\s*=\s*[\"']?viewcode-(?:link|back)\b)[^<>]*+>"
                           # Texinfo's table of contents (its id; a "contents" class is Doxygen's
                           # whole page) and printed indexes (6: "index-cp"; 7: "cp-entries-printindex")
                           r"|<(div)\b(?=[^<>]*\bid\s*=\s*[\"']?SEC_Contents[\"'\s>])[^<>]*+>"
                           r"|<(table)\b(?=[^<>]*\bclass\s*=\s*[\"']?(?:index-[a-z]{2,3}"
                           r"|[a-z]{2,3}-(?:entries|letters-header|letters-footer)-printindex)[\"'\s>])[^<>]*+>"
                           # texi2html's panel of buttons ("[ << ] [ >> ] [Top] [Contents] [Index] [ ? ]")
                           # above and below each section: a table laid out so, whose links are
                           # titled "Cover (top) of document" ... (`_PANEL_LINK_RE`), and its contents
                           r"|<(table)\b(?=[^<>]*\bcellspacing\s*=\s*[\"']?1\b)[^<>]*+>"
                           r"|<(ul)\b(?=[^<>]*\bclass\s*=\s*[\"']?toc[\"'\s>])[^<>]*+>"
                           # an API index of gtk-doc ("aarch64_sha1, variable in sha-aarch64") or a
                           # DocBook book's index (PostgreSQL's "$libdir, Dynamic Loading"): a
                           # <div class="index"> holding their entries (`_INDEX_ENTRY_RE`), and
                           # gtk-doc's bar of links atop each page ("Top | Description", "A | B | C")
                           r"|<(div)\b(?=[^<>]*\bclass\s*=\s*[\"']?index[\"'\s>])[^<>]*+>"
                           r"|<(table)\b(?=[^<>]*\bclass\s*=\s*[\"']?navigation[\"'\s>])[^<>]*+>", re.I)
_PANEL_LINK_RE = re.compile(r"\btitle\s*=\s*[\"']?(?:Cover \(top\) of document|Table of contents)[\"']", re.I)
# an index's entries: gtk-doc's letter anchors (<a name="idxA">), DocBook's index divisions and terms
_INDEX_ENTRY_RE = re.compile(r"<a\b[^<>]*\bname\s*=\s*[\"']?idx|\bclass\s*=\s*[\"']?index(?:div|term)\b", re.I)
# (each attribute is looked for ahead and the tag then scanned once, possessively: with the
# attribute inside the scan, an unclosed tag of thousands of role="menu" was quadratic)
# Texinfo's node header ("Next: ..., Previous: ..., Up: ... [Contents][Index]" above each
# section of a GNU manual): a <div class="header"> (Texinfo 6) or "nav-panel" (7) whose links
# go to the neighbouring nodes. (Only with such links: "header" is a common class name.)
_NODE_LINK_RE = re.compile(r"\brel\s*=\s*[\"']?(?:next|prev|up)\b", re.I)


def _nav_starts(text: str) -> list[int]:
    """Where a navigation element's start tag may begin: each "<nav", and the "<" of each
    tag holding "navigation", "menu", "nav-panel", 'class="header"' or "viewcode-" (`_NAV_START_RE`
    decides). Found with str.find in the lowercased text (matching every tag against the
    pattern was slow), or, when lowercasing changes the length (a few letters lowercase to
    two), with a regex."""
    low = text.lower()
    if len(low) != len(text):
        hints = [m.start() for m in re.finditer(r'<nav|navigation|menu|nav-panel|class="header"|viewcode-'
                                                r'|SEC_Contents|class="index|printindex|cellspacing="1"|class="toc"',
                                                text, re.I)]
    else:
        hints = []
        for word in ("<nav", "navigation", "menu", "nav-panel", "class=\"header\"", "viewcode-",
                     "sec_contents", "class=\"index", "printindex", "cellspacing=\"1\"", "class=\"toc\""):
            i = low.find(word)
            while i >= 0:
                hints.append(i)
                i = low.find(word, i + 1)
    # "navigation" names the tag it is in: the last "<" before it, with no ">" between. Hints
    # come in order, and each looks back only to the one before (the last "<" before that,
    # and whether a ">" followed it, are carried): looking back to the "<" from each hint
    # was quadratic on a <pre> of many "menu" words.
    out = set()
    lt, closed, prev = -1, False, 0
    for i in sorted(hints):
        k = text.rfind("<", prev, i)
        if k >= 0:
            lt, closed = k, text.find(">", k, i) >= 0
        elif lt >= 0 and not closed:
            closed = text.find(">", prev, i) >= 0
        prev = i
        if text[i] != "<":
            if lt < 0 or closed:
                continue
            i = lt
        out.add(i)
    return sorted(out)


def _without_navigation(text: str) -> str:
    """``text`` with each navigation element (``<nav>``, ``role="navigation"``: site menus,
    tables of contents; ``role="menu"``/``"menubar"``: a theme or version picker; Texinfo's
    node header, table of contents and printed indexes; Sphinx's viewcode links) as `FILL`, nested
    elements of the same name included."""
    out, pos = [], 0
    ends: dict[str, dict[int, int]] = {}  # element name -> {start of a start tag: end of its element}
    links = None  # where _NODE_LINK_RE matches
    for at in _nav_starts(text):
        if at < pos:
            continue  # inside a navigation element already blanked
        m = _NAV_START_RE.match(text, at)
        if m is None:
            continue
        name = next(g for g in m.groups() if g).lower()
        if m.group().endswith("/>"):  # ("<nav/>" opens a nav, as HTML5 reads it: paired by a forward scan)
            end = _end_from(text, name, m.end())
        else:
            if name not in ends:
                ends[name] = _element_ends(text, name)
            end = ends[name].get(m.start(), len(text))
        if m.group(3):
            if links is None:
                links = [t.start() for t in _NODE_LINK_RE.finditer(text)]
            i = bisect.bisect_left(links, m.end())
            if i == len(links) or links[i] >= end:
                continue  # a page header, not a node's links
        if m.group(7) and _PANEL_LINK_RE.search(text, m.end(), end) is None:
            continue  # a table laid out so, not texi2html's buttons
        if m.group(9) and _INDEX_ENTRY_RE.search(text, m.end(), end) is None:
            continue  # a class of that name, not an index
        out.append(text[pos:m.start()])
        out.append(_blank(text[m.start():end]))
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


@functools.lru_cache(maxsize=32)
def _tags_of(name: str) -> re.Pattern:
    """The start and end tags of the element ``name``: group 1 "/" for an end tag, group 2
    "/" for a self-closing one."""
    return re.compile(rf"<(/?){re.escape(name)}\b[^<>]*?(/?)>", re.I)


def _end_from(text: str, name: str, at: int) -> int:
    """Where the element ``name`` whose start tag ends at ``at`` ends (its nested elements of
    that name paired with their ends), or the end of the text."""
    depth = 1
    for t in _tags_of(name).finditer(text, at):
        if t.group(1):
            depth -= 1
        elif not t.group(2):
            depth += 1
        if depth == 0:
            return t.end()
    return len(text)


def _element_ends(text: str, name: str) -> dict[int, int]:
    """Where each element ``name`` of ``text`` ends: {start of its start tag: end of its end
    tag}, nested elements of the name paired as a stack pairs them (one pass over the page;
    looking for each element's end from its start was quadratic on nested or unclosed ones).
    An element never closed is missing: it runs to the end of the text."""
    out, stack = {}, []
    for t in _tags_of(name).finditer(text):
        if t.group(1):
            if stack:
                out[stack.pop()] = t.end()
        elif not t.group(2):
            stack.append(t.start())
    return out


_PRE_RE = re.compile(r"<pre\b[^<>]*>.*?(?:</pre\s*>|\Z)", re.S | re.I)


def pre_lines(text: str) -> frozenset[int]:
    """The 0-based lines of ``text`` that a ``<pre>`` element covers (preformatted code)."""
    out: set[int] = set()
    line, at = 0, 0
    for m in _PRE_RE.finditer(text):
        line += text.count("\n", at, m.start())  # counted once: matches come in order
        at = m.start()
        out.update(range(line, line + m.group().count("\n") + 1))
    return frozenset(out)


def pre_cols(text: str) -> dict[int, list[tuple[int, int]]]:
    """For each 0-based line of ``text`` that a ``<pre>`` element starts or ends on: the
    [start, end) columns of it that ``<pre>`` elements cover, in order (DocBook writes
    "commit:</p><pre>$ git revert HEAD</pre><p>This will" on one line: code between text)."""
    out: dict[int, list[tuple[int, int]]] = {}
    line, at, first = 0, 0, 0  # the line of offset `at`, and the offset that line starts at
    for m in _PRE_RE.finditer(text):  # (in order: each newline is looked at once)
        s, e = m.span()
        if text.count("\n", at, s):
            line += text.count("\n", at, s)
            first = text.rfind("\n", at, s) + 1
        last = text.rfind("\n", s, e)
        if last < 0:
            out.setdefault(line, []).append((s - first, e - first))
        else:
            out.setdefault(line, []).append((s - first, text.find("\n", s) - first))
            line += text.count("\n", s, e)
            first = last + 1
            out.setdefault(line, []).append((0, e - first))
        at = e
    return out


# markup that does not part the words on either side of it, as a browser shows them: a
# character reference ("Ger&auml;t") and an inline formatting tag ("<b>Kuber</b>netes");
# any other tag (<label>, <img>, <input>, <legend>) or hidden element does
INLINE_TAGS = ("a|abbr|b|bdi|bdo|cite|code|data|del|dfn|em|font|i|ins|kbd|mark|q|s|samp|small|span|"
                "strong|sub|sup|time|tt|u|var|wbr")
_JOINING_RE = re.compile(rf"(?:&#?[0-9A-Za-z]+;?|</?(?:{INLINE_TAGS})\b[^<>]*>)+", re.I)
_FILL_RUN_RE = re.compile(FILL + "+")


def term_text(raw: str, shown: str) -> str:
    """The words of a span of a page as its terms are read (``raw``: the span of the stored
    text, ``shown``: the same span of `show_html`'s): the shown text with its markup as a
    space, except a character reference or inline formatting tags inside a word, which
    join it ("<b>Kuber</b>netes", "Ger&auml;t", "<code>pg_dump</code>all" are one word each,
    as shown; the view, with all markup as spaces, split them)."""
    def gap(m: re.Match) -> str:
        a, b = m.span()
        at = a - 1 if a > 0 and raw[a - 1] == "&" else a  # (a reference: its character, then fill)
        return "" if _JOINING_RE.fullmatch(raw, at, b) else " "
    return _FILL_RUN_RE.sub(gap, shown)


_TITLE_END_RE = re.compile(r"</(?:h[1-6]|title|dt)\s*>|<dd\b", re.I)


def title_end(line: str, at: int, end: int | None = None) -> int:
    """Where the text of a heading or term that goes on at column ``at`` of a stored line
    ends: at its end tag (or a ``<dd>``), else at the line's end, or at ``end``. (On a page
    written on one line, the rest of the line is the rest of the page.)"""
    end = len(line) if end is None else end
    m = _TITLE_END_RE.search(line, at, end)
    return m.start() if m else end


_INDENT_RE = re.compile(r"^[ \t]+", re.M)


def show_html(text: str) -> str:
    """``text`` with its markup as `FILL` (module doc): same length, same line breaks."""
    return _fill_indentation(_MARKUP_RE.sub(_shown, _without_navigation(text)), text)


def _fill_indentation(shown: str, text: str) -> str:
    """``shown`` with the indentation of each line outside a ``<pre>`` element as `FILL`:
    it is the page source's layout, which a browser does not show (a pack would pay for it)."""
    pres = [(m.start(), m.end()) for m in _PRE_RE.finditer(text)]
    out, at, k = [], 0, 0
    for m in _INDENT_RE.finditer(shown):
        a, b = m.span()
        while k < len(pres) and pres[k][1] <= a:
            k += 1
        if k < len(pres) and pres[k][0] <= a:
            continue  # a line of preformatted text keeps its indentation
        out.append(shown[at:a])
        out.append(FILL * (b - a))
        at = b
    if not out:
        return shown
    out.append(shown[at:])
    return "".join(out)


def mask_html(text: str) -> str:
    """The view of ``text``: `show_html` with the markup as spaces."""
    return show_html(text).replace(FILL, " ")


_BLANK_LINE_RE = re.compile(r"^[ \t]+$", re.M)


def visible(shown: str) -> str:
    """The visible text of (a span of) shown text: the markup dropped, and a line left with
    blanks only (the indentation of a line of tags) empty. Line by line, so the visible
    text of a span is the visible text of its lines, joined."""
    return _BLANK_LINE_RE.sub("", shown.replace(FILL, ""))


_BLANK_RUN_RE = re.compile(r"\n{3,}")


def readable(text: str) -> str:
    """Visible text as a pack or a hit gives it: a run of empty lines (where a page's head,
    menus and lines of tags were) one empty line, none at either end. The words and their
    order are the visible text's; only its line count differs."""
    return _BLANK_RUN_RE.sub("\n\n", text).strip("\n")


_DIRECTIVE_RE = re.compile(r"^[ \t]*(?:ifdef|ifndef|ifeval|endif|include)::[^\n]*\[[^\n]*\][ \t]*$", re.M)


def is_directive(line: str) -> bool:
    """True for a line that is one of AsciiDoc's preprocessor lines (`mask_directives`)."""
    return "::" in line and _DIRECTIVE_RE.match(line) is not None


def mask_directives(text: str) -> str:
    """``text`` with AsciiDoc's preprocessor lines blanked, same length (``ifdef::git-pull[]``,
    ``endif::[]``, ``include::fetch-options.txt[]``): they tell the build what to take, and
    the names in them are not what the page says -- git's ``fetch-options.txt`` names
    ``git-pull`` in forty such lines. Prose files' terms are read from this (the `Engine`,
    compaction); their snippets are the stored lines, directives and all."""
    if "::" not in text:
        return text
    return _DIRECTIVE_RE.sub(lambda m: " " * len(m.group()), text)


# ---------------------------------------------------------------------------- POD

def is_pod(path: str) -> bool:
    """True for a path that names a Perl POD document (``perlfunc.pod``, ``x.pod.gz``)."""
    return plain_name(path).lower().endswith(".pod")


_POD_COMMAND_RE = re.compile(r"=([A-Za-z]\w*)[ \t]*")
_POD_BULLET_RE = re.compile(r"[*+-](?:[ \t]+|$)")
_POD_NUMBER_RE = re.compile(r"\d+\.?(?:[ \t]|$)")
_POD_CODES = frozenset("IBCLEFSXZ")
_POD_ESCAPES = {"lt": "<", "gt": ">", "verbar": "|", "sol": "/"}
_POD_SILENT = frozenset({"pod", "cut", "over", "back", "encoding", "for", "begin", "end"})


def _pod_escape(name: str) -> str | None:
    """The character ``E<name>`` stands for (``lt``, ``sol``, a number, an HTML entity
    name), or None."""
    if name in _POD_ESCAPES:
        return _POD_ESCAPES[name]
    try:
        if name[:2].lower() == "0x":
            code = int(name[2:], 16)
        elif name[:1] == "0" and len(name) > 1:
            code = int(name[1:], 8)
        elif name.isdigit():
            code = int(name)
        else:
            char = html.unescape(f"&{name};")
            return char if char != f"&{name};" else None
        return chr(code) if 0 < code < 0x110000 else None
    except ValueError:
        return None


_POD_TOKEN_RE = re.compile(r"[IBCLEFSXZ]<|[>|]")


def _pod_codes(s: str) -> str:
    """``s``, an ordinary POD paragraph, with its formatting codes read: ``C<x>``,
    ``B<< x >>`` and the like show their text only, ``L<text|target>`` its text,
    ``E<lt>`` its character (then `FILL`), and ``X<index entry>``, ``Z<>`` nothing.
    Same length, same line breaks; an unclosed code stays as written. One pass over the
    openers, ">" and "|" (`_POD_TOKEN_RE`)."""
    if "<" not in s:
        return s
    n = len(s)
    edits: list[tuple[int, int, str]] = []  # (start, end, shown): made as codes close
    stack: list[list] = []  # [letter, angles, start, content start, pipe]
    skip = 0  # (the ">" of a closer of many, "C<< x >>", seen already)
    for m in _POD_TOKEN_RE.finditer(s):
        i = m.start()
        if i < skip:
            continue
        c = s[i]
        if c == "|":
            if stack and stack[-1][0] == "L" and stack[-1][4] is None:
                stack[-1][4] = i
            continue
        if c != ">":  # an opener: "C<", or "C<< " of a code whose text may hold ">"
            k = i + 1
            while k < n and s[k] == "<":
                k += 1
            w = k
            while w < n and s[w] in " \t\n":
                w += 1
            if k - i > 2 and w > k:
                stack.append([c, k - i - 1, i, w, None])
                skip = w
            else:
                stack.append([c, 1, i, i + 2, None])
            continue
        if not stack:
            continue
        k = i
        while k < n and s[k] == ">":
            k += 1
        w = i
        while w > 0 and s[w - 1] in " \t\n":
            w -= 1
        pos = i
        while pos < k and stack:
            angles = stack[-1][1]
            if angles == 1:
                close, end = pos, pos + 1
            elif pos == i and stack[-1][3] <= w < i and k - pos >= angles:  # " >>" ends "C<< " (a space of its text)
                close, end = w, pos + angles
            else:
                break
            letter, _, start, body, pipe = stack.pop()
            cut = pipe if letter == "L" and pipe is not None else close
            first = start if letter in "XZE" else cut  # (codes inside what it hides: hidden with it)
            while edits and edits[-1][0] >= first:
                edits.pop()
            if letter in "XZ":
                edits.append((start, end, _blank(s[start:end])))
            elif letter == "E" and (char := _pod_escape(s[body:close].strip())) is not None:
                edits.append((start, end, char + _blank(s[start + 1:end])))
            else:
                # (a link to a section of this page, "L</Signals>", shows the section's name)
                opener = body + 1 if letter == "L" and pipe is None and s[body:body + 1] == "/" else body
                edits.append((start, opener, _blank(s[start:opener])))
                edits.append((cut, end, _blank(s[cut:end])))
            pos = end
        skip = pos
    if not edits:
        return s
    edits.sort()
    out, at = [], 0
    for a, b, shown in edits:
        if a < at:
            continue  # (never: codes nest; kept so that the text keeps its length whatever comes)
        out.append(s[at:a])
        out.append(shown)
        at = b
    out.append(s[at:])
    return "".join(out)


def _read_pod(text: str) -> tuple[str, frozenset[int]]:
    """(shown text, 0-based code lines) of a POD document (`show_pod`)."""
    lines = text.split("\n")
    out: list[str] = []
    code: set[int] = set()
    in_pod, hidden = True, False  # (a .pod file is POD from its start; `hidden`: in "=begin html")
    i, n = 0, len(lines)
    while i < n:
        if not lines[i].strip():
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < n and lines[j].strip():
            j += 1
        para = "\n".join(lines[i:j])
        m = _POD_COMMAND_RE.match(para)
        if m:
            name = m.group(1)
            in_pod = name != "cut"
            if name == "begin":
                hidden = para[m.end():].split()[:1] not in (["text"], [":text"])
            elif name == "end":
                hidden = False
            if name in _POD_SILENT or hidden:
                para = _blank(para)
            elif name[:4] == "head" and name[4:] in ("1", "2", "3", "4", "5", "6"):
                room = m.end()
                mark = "#" * min(int(name[4]), room - 1) + " "
                para = mark + FILL * (room - len(mark)) + _pod_codes(para[room:])
            elif name == "item":
                rest = para[m.end():]
                b = _POD_BULLET_RE.match(rest)
                if b and not rest[b.end():].strip():
                    para = _blank(para)  # a bare bullet: its text is the next paragraph
                elif b:
                    room = m.end() + b.end()
                    para = "- " + FILL * (room - 2) + _pod_codes(para[room:])
                elif _POD_NUMBER_RE.match(rest) or not rest.strip():
                    para = FILL * m.end() + _pod_codes(rest)  # ("1. text" reads as a list item)
                else:  # an entry ("=item wantarray"): a section, as an HTML page's <dt>
                    room = m.end()
                    mark = "#" * min(6, room - 1) + " "
                    para = mark + FILL * (room - len(mark)) + _pod_codes(rest)
            else:  # a command of another tool: its text only
                para = FILL * m.end() + _pod_codes(para[m.end():])
        elif hidden:
            para = _blank(para)
        elif not in_pod or lines[i][:1] in " \t":  # code after "=cut", or a verbatim paragraph
            code.update(range(i, j))
        else:
            para = _pod_codes(para)
        out.append(para)
        i = j
    return "\n".join(out), frozenset(code)


def show_pod(text: str) -> str:
    """``text``, a POD document, with its markup as `FILL` (same length, same line breaks),
    as `show_html` shows a page: a ``=head2`` command becomes ``## ``, an ``=item`` entry
    ``##### `` (a section, as an HTML ``<dt>``), a bulleted ``=item *`` ``- ``; the other
    commands (``=over``, ``=back``, ``=cut``, ``=for``, ``=begin html`` ... ``=end``) and
    index entries (``X<...>``) show nothing; formatting codes show their text
    (`_pod_codes`); verbatim paragraphs (indented: code) are shown as written."""
    return _read_pod(text)[0]


def pod_code_lines(text: str) -> frozenset[int]:
    """The 0-based lines of a POD document that are code: its verbatim paragraphs, and
    what follows a ``=cut``."""
    return _read_pod(text)[1]


def reads_shown(path: str) -> bool:
    """True for a document read through its shown text: an HTML page, a POD document, a
    man page or an Info file."""
    return is_html(path) or is_pod(path) or is_man(path) or is_info(path)


def show_page(path: str, text: str) -> str:
    """The shown text of the document ``path``: `show_pod`, `show_man`, `show_info` or
    `show_html`."""
    return read_page(path, text)[0] if not is_html(path) else show_html(text)


def read_page(path: str, text: str) -> tuple[str, frozenset[int]]:
    """`show_page` and `code_lines` of the document ``path``, read once."""
    if is_pod(path):
        return _read_pod(text)
    if is_man(path) and not is_html(path):
        # (a name such as syslog.1, a rotated log, is no man page: its backslashes are no escapes)
        return _read_man(text) if is_roff(text) else (text, frozenset())
    if is_info(path):
        return show_info(text), frozenset()
    return show_html(text), pre_lines(text)


def code_lines(path: str, text: str) -> frozenset[int]:
    """The 0-based lines of the document ``path`` that are code: `pod_code_lines`,
    `man_code_lines` or `pre_lines` (none in an Info file)."""
    return read_page(path, text)[1] if not is_html(path) else pre_lines(text)


# ---------------------------------------------------------------------------- man pages (roff)

def is_man(path: str) -> bool:
    """True for a path that names a man page (roff source: ``open.2``, ``printf.3.gz``,
    ``Foo::Bar.3pm.gz``)."""
    return document_kind(path[path.rfind("/") + 1:]) == "man page"


# the characters of roff's special character escapes (``\(em``, ``\[aq]``) a man page uses most
_ROFF_CHARS = {"em": "\u2014", "en": "\u2013", "bu": "\u2022", "aq": "'", "dq": '"', "lq": "\u201c", "rq": "\u201d",
               "oq": "\u2018", "cq": "\u2019", "co": "\u00a9", "rg": "\u00ae", "tm": "\u2122", "mu": "\u00d7",
               "di": "\u00f7", "+-": "\u00b1", "ti": "~", "ha": "^", "rs": "\\", "sl": "/", "hy": "-", "mi": "-",
               "ga": "`", "dg": "\u2020", "de": "\u00b0", "->": "\u2192", "<-": "\u2190", "<=": "\u2264",
               ">=": "\u2265", "!=": "\u2260", "==": "\u2261", "aa": "\u00b4", "sq": "\u25a1", "lA": "\u21d0",
               "rA": "\u21d2", "fo": "\u2039", "fc": "\u203a", "Fo": "\u00ab", "Fc": "\u00bb", "ba": "|",
               "br": "|", "ul": "_", "ru": "_", "pl": "+", "eq": "=", "sc": "\u00a7", "ps": "\u00b6"}
_ROFF_ESCAPE_RE = re.compile(
    r"\\(?:\((?P<two>[^\n]{2})|\[(?P<long>[^\]\n]*)\]"        # a special character: \(em, \[aq]
    r"|[*nfgkmFMY](?:\([^\n]{2}|\[[^\]\n]*\]|[^\n])"            # a string, register, font, colour: hidden
    r"|s(?:[-+]?\d\d?|\([-+]?\d\d|\[[^\]\n]*\])"                 # a size change: hidden
    r"|[hvwloXZbDHLNRSx](?P<q>[^\n])[^\n]*?(?P=q)"              # a motion or drawing: \h'1n', hidden
    r"|[\"#][^\n]*"                                               # a comment, to the end of the line
    r"|(?P<one>[^\n])|$)", re.M)
_ROFF_ONE = {"-": "-", "e": "\\", "E": "\\", "\\": "\\", "'": "\u00b4", "`": "`", ".": ".", " ": " ", "~": " ",
             "0": " ", "t": "\t"}
_ROFF_HIDDEN_ONE = frozenset("&|^)%:cdurpaz{}!?")


# a line that only roff starts with: a comment, a title (.TH, mdoc's .Dd), a section, an
# included page (.so), a definition; one of them opens every man page, near its top
_ROFF_SIGN_RE = re.compile(r"""^[.'][ \t]*(?:\\"|(?:TH|Dd|Dt|SH|Sh|so|de|ds|nr|ig|if|ie)(?=[ \t\n]|$))""", re.M)


def is_roff(text: str) -> bool:
    """Whether ``text`` reads as roff, a man page's source (`show_man`), rather than another
    file a man page's name was given (a rotated log, ``syslog.1``): a line of it starts as
    only roff's do (`_ROFF_SIGN_RE`)."""
    return _ROFF_SIGN_RE.search(text) is not None


def _roff_escape(m: re.Match) -> str:
    s = m.group()
    if m.group("two") is not None or m.group("long") is not None:
        name = m.group("two") if m.group("two") is not None else m.group("long")
        char = _ROFF_CHARS.get(name)
        if char is None and name[:1] == "u" and len(name) in (5, 6):  # \[u00E9]
            try:
                char = chr(int(name[1:], 16))
            except ValueError:
                char = None
        return FILL * len(s) if char is None else char + FILL * (len(s) - 1)
    one = m.group("one")
    if one is not None:
        if one in _ROFF_ONE:
            return _ROFF_ONE[one] + FILL
        return FILL * 2 if one in _ROFF_HIDDEN_ONE else one + FILL
    return FILL * len(s)  # hidden: fonts, strings, sizes, motions, comments, a line's last "\"


def _roff_text(s: str) -> str:
    """A line (or part of one) of roff text with its escapes read: ``\\fB`` hidden, ``\\-`` a
    "-", ``\\(em`` "—", ``\\e`` a backslash, a comment hidden. Same length."""
    return _ROFF_ESCAPE_RE.sub(_roff_escape, s) if "\\" in s else s


_ROFF_REQUEST_RE = re.compile(r"[.'][ \t]*(?P<name>[^ \t\n\\]*)[ \t]*")
_ROFF_ARG_RE = re.compile(r'"(?:[^"\n]|"")*"?|(?:\\[^\n]|[^ \t\n\\])+|\\$')
_ROFF_FONTS = frozenset({"B", "I", "SM", "SB", "R"})
_ROFF_ALTERNATING = frozenset({"BR", "BI", "IB", "IR", "RB", "RI"})
_ROFF_CODE_START = {"nf": "fi", "EX": "EE", "Vb": "Ve", "TS": "TE", "CS": "CE"}  # (Vb: pod2man's; CS: Tcl's)
# requests and macros that lay the page out, define things or index it: they show nothing
# (any other macro shows its arguments: Tcl's pages define ".AP Tcl_Interp *interp in")
_ROFF_HIDDEN = frozenset(
    "PP LP P HP TP TQ RS RE PD UR UE MT ME YS IX Sp Vb Ve TS TE PS PE EX EE CS CE BS BE SO SE AS"
    " sp br nf fi ne in ti ll ad na nh hy hc hw ce ft fam ps vs ta tc tr so mso ds as nr rr rm rn"
    " if ie el ev mk rt fl ns rs ss cs bd pl pn po lt pc ec eo cc c2 lf cu ul uf it em wh ch dt"
    " tm sy nm nn ab ig de de1 am".split())
_ROFF_BULLETS = frozenset({"\\(bu", "\\[bu]", "*", "-", "o", "\\(em", "\\[em]", "\\-", "+", "\u2022"})


def _roff_args(rest: str, joined: bool) -> str:
    """The arguments of a font macro (``.BR open ()``) as shown: quotes hidden (``""`` in
    one is a quote), escapes read, and the space between them hidden when the macro joins
    them (``.BR``, ``.IR``: "open()")."""
    out, at = [], 0
    for m in _ROFF_ARG_RE.finditer(rest):
        gap = rest[at:m.start()]
        out.append(FILL * len(gap) if joined else gap)
        arg = m.group()
        if arg[:1] == '"':
            end = len(arg) - 1 if len(arg) > 1 and arg.endswith('"') and not arg.endswith('""') or arg == '""' else len(arg)
            inner = _roff_text(arg[1:end]).replace('""', '"' + FILL)
            out.append(FILL + inner + FILL * (len(arg) - end))
        else:
            out.append(_roff_text(arg))
        at = m.end()
    out.append(rest[at:])
    return "".join(out)


def _read_man(text: str) -> tuple[str, frozenset[int]]:
    """(shown text, 0-based code lines) of a man page (`show_man`)."""
    lines = text.split("\n")
    out: list[str] = []
    code: set[int] = set()
    code_end = None  # the request that ends the code block we are in ("fi", "EE")
    definition = False  # inside ".de name" ... "..": a macro's definition, hidden
    tag = False  # the line after ".TP": the item's tag
    joined = None  # a font macro's arguments go on on this line (the last ended with "\")
    for i, line in enumerate(lines):
        m = _ROFF_REQUEST_RE.match(line) if line[:1] in ".'" else None
        if definition:
            definition = line.strip() != ".."
            out.append(FILL * len(line))
            continue
        if joined is not None:
            out.append(_roff_args(line, joined))
            if code_end is not None:
                code.add(i)
            joined = None if not _continued(line) else joined
            continue
        if m is None:
            shown = _roff_text(line)
            if tag and shown[:1] == FILL and len(shown) > 2 and shown[1] == FILL and shown[2:].strip(FILL + " "):
                shown = "- " + shown[2:]  # (a tag that opens with a font escape: "\fBO_CREAT\fP")
            if code_end is not None:
                code.add(i)
            tag = False
            out.append(shown)
            continue
        name, rest, room = m.group("name"), line[m.end():], m.end()
        if name in ("de", "de1", "am", "ig"):
            definition = True
            out.append(FILL * len(line))
            continue
        if code_end is not None and name == code_end:
            code_end = None
        elif name in _ROFF_CODE_START:
            code_end = _ROFF_CODE_START[name]
        elif code_end is not None and name not in _ROFF_FONTS and name not in _ROFF_ALTERNATING:
            code.add(i)
        if name in ("SH", "SS") and rest.strip():
            level = 2 if name == "SH" else 3
            mark = "#" * min(level, room - 1) + " "
            out.append(mark + FILL * (room - len(mark)) + _roff_args(rest, False))
        elif name == "TH" and rest.strip():
            out.append(_man_title(line, room))
        elif name in _ROFF_FONTS or name in _ROFF_ALTERNATING:
            shown = _roff_args(rest, name in _ROFF_ALTERNATING)
            if _continued(rest):
                joined = name in _ROFF_ALTERNATING
            if code_end is not None:
                code.add(i)
            if tag and room >= 3 and shown.strip(FILL + " \t"):
                out.append("- " + FILL * (room - 2) + shown)  # the tag of a ".TP" item
            else:
                out.append(FILL * room + shown)
        elif name == "IP" and rest.strip():
            arg = _ROFF_ARG_RE.match(rest)
            tag_text = arg.group().strip('"') if arg else ""
            if tag_text in _ROFF_BULLETS or not arg:
                out.append("- " + FILL * (len(line) - 2) if room >= 3 else FILL * len(line))
            else:
                shown = _roff_args(rest[:arg.end()], False)
                out.append("- " + FILL * (room - 2) + shown + FILL * (len(rest) - arg.end()))
        elif name == "bP":  # a bulleted paragraph (ncurses' pages)
            out.append("- " + FILL * (len(line) - 2) if room >= 3 else FILL * len(line))
        elif name in _ROFF_HIDDEN or not name or name[0] in "\\\"" or not rest.strip():
            out.append(FILL * len(line))  # layout (".PP", ".RS", ".in +4n", ".sp"), comments, index entries
        else:  # a macro of the page's own ("AP", "QW", "OP"): its arguments, as a font macro's
            out.append(FILL * room + _roff_args(rest, False))
        tag = name in ("TP", "TQ")
    return "\n".join(out), frozenset(code)


def _continued(line: str) -> bool:
    """Whether a line ends with an escaped line break (an odd run of backslashes)."""
    n = len(line) - len(line.rstrip("\\"))
    return n % 2 == 1


def _man_title(line: str, room: int) -> str:
    """A ``.TH open 2 2023-02-05 ...`` line as shown: ``# open(2)``, the rest hidden."""
    args = [(m.start() + room, m.end() + room, m.group()) for m in _ROFF_ARG_RE.finditer(line[room:])]
    out = ["# " + FILL * (room - 2)]
    at = room
    if args:
        a, b, arg = args[0]
        q = 1 if arg[:1] == '"' else 0
        out.append(FILL * (a - at) + FILL * q + _roff_text(arg[q:len(arg) - q]) + FILL * q)
        at = b
        if len(args) > 1:
            a, b, arg = args[1]
            q = 1 if arg[:1] == '"' else 0
            if b < len(line) and a - at >= 1:  # "open(2)": the spaces around the section hold its parentheses
                out.append("(" + FILL * (a - at - 1) + FILL * q + _roff_text(arg[q:len(arg) - q]) + FILL * q + ")")
                at = b + 1
    out.append(FILL * (len(line) - at))
    return "".join(out)


def show_man(text: str) -> str:
    """``text``, a man page's roff source, with its markup as `FILL` (same length, same line
    breaks), as `show_html` shows a page: ``.TH open 2 ...`` becomes ``# open(2)``, ``.SH``
    ``## `` and ``.SS`` ``### ``; a font macro shows its words (``.BR open ()``: "open()"), a
    ``.TP`` item's tag and an ``.IP`` item start ``- ``; escapes are read (``\\fB`` hidden, ``\\-``
    "-", ``\\(em`` "—"); comments, layout requests (``.PP``, ``.RS``, ``.in``) and macro
    definitions show nothing. The lines of ``.nf``/``.fi`` and ``.EX``/``.EE`` blocks are code
    (`man_code_lines`)."""
    return _read_man(text)[0]


def man_code_lines(text: str) -> frozenset[int]:
    """The 0-based lines of a man page that are code: its ``.nf``, ``.EX`` and table blocks."""
    return _read_man(text)[1]


# ---------------------------------------------------------------------------- Info files

_INFO_HIDDEN_BLOCKS = ("Tag Table:", "End Tag Table", "Indirect:", "Local Variables:")


def is_info(path: str) -> bool:
    """True for a path that names a GNU Info file (``coreutils.info.gz``, ``find.info-1.gz``)."""
    return document_kind(path[path.rfind("/") + 1:]) == "Info file"


def show_info(text: str) -> str:
    """``text``, an Info file, with what is not the manual's text as `FILL` (same length,
    same line breaks): each node's separator (``^_``) and header line ("File: coreutils.info,
    Node: sort invocation, Next: ..., Up: ...", the navigation every node repeats), and the
    tag table, indirect table and local variables that close a file. Its titles, underlined
    with ``*``, ``=`` or ``-``, are read as sections as in reStructuredText."""
    if "\x1f" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    hide = False  # inside a block that is an index of offsets, not text
    for i, line in enumerate(lines):
        if line.startswith("\x1f"):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            hide = nxt.startswith(_INFO_HIDDEN_BLOCKS)
            out.append(FILL * len(line))
        elif hide or (line.startswith("File: ") and "Node: " in line and i > 0 and lines[i - 1].startswith("\x1f")):
            out.append(FILL * len(line))
        else:
            out.append(line)
    return "\n".join(out)

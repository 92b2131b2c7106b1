"""Renderings of a packed context: json, markdown, xml, text.

The non-JSON forms put a `[path:range]` header above each snippet (`cited_range`: with its
columns when it is a part of a line), ready to paste into an
LLM (Markdown's path in a code span, its text fenced), and end with a line `used/budget tokens` (XML: a `<tokens>` element, last in the
document). A warning line is added when the packed
evidence is not sufficient to answer (see `ragweb.pack`). Markdown and text are for reading:
they show control characters as visible symbols (`shown`); JSON keeps the exact text, and
XML replaces only what XML cannot hold.
"""

from __future__ import annotations

import json
import re

FORMATS = ("json", "markdown", "xml", "text")


SMALL_BUDGET = 200  # tokens: a pack this small may leave out the evidence the index holds


def evidence_warning(packed: dict) -> str | None:
    """A one-line warning when the context may not answer the question, else None."""
    level = packed.get("evidence")
    if level in (None, "sufficient"):
        return None
    budget = packed.get("budget_tokens")
    small = (f"; at {budget} tokens the budget may be too small to hold it"
             if isinstance(budget, int) and budget < SMALL_BUDGET else "")
    if level == "none":
        return f"warning: the packed context holds no evidence for this question{small}"
    return f"warning: the evidence packed is weak; the context may not answer the question{small}"


_NOT_XML_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_chars(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold, even escaped (a C file's form
    feed, other control characters), replaced by U+FFFD."""
    return _NOT_XML_RE.sub("\ufffd", text)


_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _control_picture(m: re.Match) -> str:
    c = ord(m.group())
    return chr(0x2400 + c) if c < 0x20 else "\u2421" if c == 0x7f else "\ufffd"


def shown(text: str) -> str:
    """``text`` for a terminal or a rendered page: each control character but tab and newline
    (a file's escape sequences, which could clear the screen or hide lines from the reader
    while the copy still holds them) as its visible symbol (ESC as U+241B, DEL as U+2421; C1
    controls as U+FFFD), and so each bidi embedding, override and isolate (U+202A-U+202E,
    U+2066-U+2069: they reorder what is shown, so that `a.md:L1-2` or a line of code reads
    as what it is not) as U+FFFD. One character for one, so lines and lengths stay as they were."""
    return _CONTROL_RE.sub(_control_picture, text)


def code_span(text: str) -> str:
    """``text`` as a Markdown code span, so that ``__init__.py`` or ``<b>.md`` shows as written."""
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def cited_range(lines: str, cols: list | None = None) -> str:
    """A range (``L3-7``) as a citation shows it: for a snippet or hit that starts or ends
    inside a line (a piece of a one-line page or JSON file, a sentence of a long paragraph
    line) its ``cols`` too, ``L1-1 cols 120-480`` (as the JSON's ``"cols": [120, 480]``: from
    column 120 of the first line to before column 480 of the last), so that the citation
    says which part of the lines it quotes."""
    return lines + (f" cols {cols[0]}-{cols[1]}" if cols else "")


def fenced_snippet(s: dict, cite) -> str:
    """A snippet as its citation line, ``cite(path)`` and range, above its text between
    fences longer than any backtick run in it, so that no file can close the fence and write
    what reads as the surrounding document's own words."""
    text = shown(s["text"])
    ticks = fence(text)
    # (U+2028 and U+2029 break a line: a name of an index built before they were refused)
    path = shown(s["path"]).replace("\u2028", "\ufffd").replace("\u2029", "\ufffd")
    return f"[{cite(path)}:{cited_range(s['range'], s.get('cols'))}]\n{ticks}\n{text}\n{ticks}"


def fence(text: str) -> str:
    """A Markdown code fence that ``text`` cannot close: more backticks than its longest run."""
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return ticks


def render(packed: dict, fmt: str) -> str:
    """``packed`` (reference §4 dict) as ``fmt``; raises ValueError for an unknown format."""
    if fmt == "json":
        return json.dumps(packed, ensure_ascii=False, indent=2)
    footer = f"{packed['used_tokens']}/{packed['budget_tokens']} tokens"
    warning = evidence_warning(packed)
    out: list[str] = []
    if fmt == "markdown":
        out.append(f"# Context for: {shown(' '.join(packed['query'].split()))}\n")  # (one line: a heading)
        if warning:
            out.append(f"> {warning}\n")
        for s in packed["snippets"]:
            out += [fenced_snippet(s, code_span), ""]
        out.append(footer)
    elif fmt == "xml":  # one well-formed document: the footer is its last element
        from xml.sax.saxutils import escape, quoteattr  # (it imports urllib.request: 20 ms a `rag` run)

        def text(value: str) -> str:
            return escape(xml_chars(value))

        def attr(value: str) -> str:
            return quoteattr(xml_chars(value))
        out.append(f"<context query={attr(packed['query'])}>")
        if warning:
            out.append(f"<warning>{text(warning)}</warning>")
        for s in packed["snippets"]:
            cols = f" cols={attr('{}-{}'.format(*s['cols']))}" if s.get("cols") else ""
            out.append(f"<snippet path={attr(s['path'])} range={attr(s['range'])}{cols}>"
                       f"\n[{text(s['path'])}:{cited_range(s['range'], s.get('cols'))}]\n{text(s['text'])}\n</snippet>")
        out.append(f"<tokens>{footer}</tokens>")
        out.append("</context>")
    elif fmt == "text":
        if warning:
            out += [warning, ""]
        for s in packed["snippets"]:  # (fenced: a file's own "[x.md:L1-9]" lines cannot pass for a snippet)
            out += [fenced_snippet(s, str), ""]
        out.append(footer)
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    return "\n".join(out)

"""Renderings of a packed context: json, markdown, xml, text.

The non-JSON forms put a `[path:range]` header above each snippet, ready to paste into an
LLM, and end with a line `used/budget tokens` (XML: a `<tokens>` element, last in the
document). A warning line is added when the packed
evidence is not sufficient to answer (see `ragweb.pack`).
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
        out.append(f"# Context for: {' '.join(packed['query'].split())}\n")  # (one line: a heading)
        if warning:
            out.append(f"> {warning}\n")
        for s in packed["snippets"]:
            ticks = fence(s["text"])
            out += [f"[{s['path']}:{s['range']}]", ticks, s["text"], ticks, ""]
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
            out.append(f"<snippet path={attr(s['path'])} range={attr(s['range'])}>"
                       f"\n[{text(s['path'])}:{s['range']}]\n{text(s['text'])}\n</snippet>")
        out.append(f"<tokens>{footer}</tokens>")
        out.append("</context>")
    elif fmt == "text":
        if warning:
            out += [warning, ""]
        for s in packed["snippets"]:
            out += [f"[{s['path']}:{s['range']}]", s["text"], ""]
        out.append(footer)
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    return "\n".join(out)

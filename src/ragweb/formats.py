"""Renderings of a packed context: json, markdown, xml, text.

The non-JSON forms put a `[path:range]` header above each snippet, ready to paste into an
LLM, and end with a line `used/budget tokens`. A warning line is added when the packed
evidence is not sufficient to answer (see `ragweb.pack`).
"""

from __future__ import annotations

import json

FORMATS = ("json", "markdown", "xml", "text")


def evidence_warning(packed: dict) -> str | None:
    """A one-line warning when the context may not answer the question, else None."""
    level = packed.get("evidence")
    if level in (None, "sufficient"):
        return None
    if level == "none":
        return "warning: no evidence for this question was found in the index"
    return "warning: the evidence found is weak; the context may not answer the question"


def _fence(text: str) -> str:
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
        out.append(f"# Context for: {packed['query']}\n")
        if warning:
            out.append(f"> {warning}\n")
        for s in packed["snippets"]:
            fence = _fence(s["text"])
            out += [f"[{s['path']}:{s['range']}]", fence, s["text"], fence, ""]
        out.append(footer)
    elif fmt == "xml":
        from xml.sax.saxutils import escape, quoteattr  # (it imports urllib.request: 20 ms a `rag` run)
        out.append(f"<context query={quoteattr(packed['query'])}>")
        if warning:
            out.append(f"<warning>{escape(warning)}</warning>")
        for s in packed["snippets"]:
            out.append(f"<snippet path={quoteattr(s['path'])} range={quoteattr(s['range'])}>"
                       f"\n[{escape(s['path'])}:{s['range']}]\n{escape(s['text'])}\n</snippet>")
        out.append("</context>")
        out.append(footer)
    elif fmt == "text":
        if warning:
            out += [warning, ""]
        for s in packed["snippets"]:
            out += [f"[{s['path']}:{s['range']}]", s["text"], ""]
        out.append(footer)
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    return "\n".join(out)

"""HTML read as text: the markup blanked out, every character kept in place.

An HTML page is indexed and compacted through its *view* (`mask_html`): the same text
with tags, comments, ``<script>``/``<style>``/``<template>`` elements and character
references replaced by spaces, so terms come from what a reader sees (not from ``class``,
``href`` or CSS), while every offset, line and column is the stored file's own. Snippets
are still cut from the stored text, so a citation shows the file's exact lines, markup
included. Two kinds of tags leave a mark the Markdown reading understands: a heading tag
that starts a line's text becomes ``#`` marks (``<section><h2>`` -> ``## ``), so pages have
sections, and a list item tag that starts a line's text becomes ``- ``, so short items
stay whole.
"""

from __future__ import annotations

import re

HTML_SUFFIXES = (".html", ".htm", ".xhtml")

_MARKUP_RE = re.compile(
    r"(?P<head>^(?:[ \t]*</?[A-Za-z][^>\n]*>)*?[ \t]*<(?:h(?P<level>[1-6])|title)\b[^>\n]*>)"  # a heading
    r"|(?P<item>^(?:[ \t]*</?[A-Za-z][^>\n]*>)*?[ \t]*<li\b[^>\n]*>)"  # a list item (both first on their line)
    r"|<!--.*?(?:-->|\Z)"                                       # a comment (an unclosed one runs to the end)
    r"|<(?P<raw>script|style|template)\b.*?(?:</(?P=raw)\s*>|\Z)"  # elements whose content is not text
    r"|<[!?/]?[A-Za-z][^>]*>"                                   # any other tag, doctype or processing instruction
    r"|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);",   # a character reference
    re.S | re.I | re.M,
)


def is_html(path: str) -> bool:
    """True for a path that names an HTML page."""
    return path.lower().endswith(HTML_SUFFIXES)


def _blank(m: re.Match) -> str:
    s = m.group()
    if m.group("head") is not None or m.group("item") is not None:
        mark = "#" * int(m.group("level") or 1) if m.group("head") is not None else "-"
        # the tag is on one line (``[^>]`` may cross lines: keep those line breaks)
        if "\n" not in s and len(mark) < len(s):
            return (mark + " ").ljust(len(s))
    if "\n" not in s:
        return " " * len(s)
    return "".join("\n" if c == "\n" else " " for c in s)


def mask_html(text: str) -> str:
    """``text`` with its HTML markup replaced by spaces: same length, same line breaks."""
    return _MARKUP_RE.sub(_blank, text)

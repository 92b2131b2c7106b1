"""Prompts rendered from a packed context (`rag runprompt`), for pasting into any LLM."""

from __future__ import annotations


def _snippets(packed: dict) -> str:
    blocks = []
    for s in packed.get("snippets", []):
        blocks.append(f"[{s['path']}:{s['range']}]\n{s['text']}")
    return "\n\n".join(blocks) if blocks else "(no snippets were found)"


def runtime_prompt(packed: dict, question: str | None = None) -> str:
    """An answering prompt: the question, the cited snippets, and the rules for answering."""
    q = question or packed.get("query", "")
    return f"""You are answering a question using only the context below.

Question: {q}

Context (each snippet starts with its citation [path:range]):

{_snippets(packed)}

Instructions:
- Answer only from the context above; do not use outside knowledge.
- Cite every claim with the citation of the snippet it comes from, as [path:range].
- If the context is not enough to answer, say so plainly and say what is missing.
- Be concise.
"""


def builder_prompt(packed: dict, question: str | None = None) -> str:
    """A compression prompt: condense the snippets into a cited brief for later answering."""
    q = question or packed.get("query", "")
    return f"""Condense the context below into a compact brief for answering this question:

Question: {q}

Context (each snippet starts with its citation [path:range]):

{_snippets(packed)}

Write the brief in four parts, citing [path:range] for every item:
1. Key concepts: the terms and ideas the question depends on.
2. Structure: how the relevant pieces (files, functions, sections) fit together.
3. Details: the exact facts, values, signatures and steps that answer the question.
4. Gaps: what the question needs that the context does not contain.
Keep only what is relevant to the question; do not add facts that are not in the context.
"""

"""The one token counter used for every budget: ``ceil(len(text) / 4)``.

This is the counter the readme-qa peer used (reference §3); it is cheap, deterministic and
the same natively and in the browser. Budgets are hard limits in this counter.
"""

CHARS_PER_TOKEN = 4


def count_tokens(text: str) -> int:
    """Tokens of ``text`` for budgeting: ceil(characters / 4)."""
    return -(-len(text) // CHARS_PER_TOKEN)

from ragweb.prompts import builder_prompt, runtime_prompt

PACKED = {"query": "how do retries work", "snippets": [
    {"path": "docs/retry.md", "range": "L3-9", "text": "Retries back off exponentially."}]}


def test_runtime_prompt_has_question_citations_and_rules():
    p = runtime_prompt(PACKED)
    assert "how do retries work" in p and "[docs/retry.md:L3-9]" in p
    assert "Retries back off exponentially." in p
    assert "only from the context" in p and "[path:range]" in p and "not enough" in p


def test_builder_prompt_asks_for_the_four_parts():
    p = builder_prompt(PACKED, "override?")
    assert "override?" in p and "how do retries work" not in p
    for part in ("Key concepts", "Structure", "Details", "Gaps"):
        assert part in p


def test_empty_context_is_said():
    assert "(no snippets were found)" in runtime_prompt({"query": "q", "snippets": []})

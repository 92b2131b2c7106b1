import json

import pytest

from ragweb.formats import FORMATS, evidence_warning, render

PACKED = {"query": "how <b>", "budget_tokens": 100, "used_tokens": 12, "evidence": "weak",
          "evidence_score": 0.5,
          "snippets": [{"path": "a&b.md", "range": "L2-3", "why": "w", "text": "```js\nx < y\n```"}]}


def test_json_is_the_dict():
    assert json.loads(render(PACKED, "json")) == PACKED


@pytest.mark.parametrize("fmt", ["markdown", "xml", "text"])
def test_text_forms_cite_and_end_with_token_line(fmt):
    out = render(PACKED, fmt)
    assert out.splitlines()[-1] == "12/100 tokens"
    assert "a&b.md:L2-3" in out or "a&amp;b.md:L2-3" in out
    assert "weak" in out


def test_markdown_fence_is_longer_than_any_in_the_text():
    out = render(PACKED, "markdown")
    assert "````\n```js" in out


def test_xml_escapes():
    out = render(PACKED, "xml")
    assert "x &lt; y" in out and 'query="how &lt;b&gt;"' in out


def test_warning_only_when_not_sufficient():
    assert evidence_warning({**PACKED, "evidence": "sufficient"}) is None
    assert "no evidence" in evidence_warning({**PACKED, "evidence": "none"})


def test_unknown_format():
    with pytest.raises(ValueError, match=", ".join(FORMATS)):
        render(PACKED, "html")

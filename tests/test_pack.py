"""Packing: exact citations, hard budgets, compaction, lean mode and the evidence signal."""

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from ragweb import pack as pack_mod
from ragweb.chunking import split_lines
from ragweb.config import default_config
from ragweb.engine import Engine
from ragweb.errors import UsageError
from ragweb.tokens import count_tokens

from conftest import sample_documents

KEYS = {"query", "budget_tokens", "used_tokens", "snippets", "evidence", "evidence_score"}

# A longer Markdown document (many chunks, long paragraph lines, lists, code, a table).
SECTIONS = []
for i in range(24):
    SECTIONS.append(
        f"## Section {i}: topic{i}\n\n"
        f"This paragraph introduces topic{i} with words about widgets and gadgets. "
        f"It explains how option{i} changes the behaviour of the frobnicator when it is enabled. "
        f"A third sentence mentions nothing special, only filler text for the paragraph number {i}.\n\n"
        f"- item {i}a describes the default value of option{i}\n"
        f"- item {i}b describes what happens on error{i}\n\n"
        f"```js\nconst x{i} = frob({{option{i}: true}});\n\nif (x{i}.failed) {{\n  retry(x{i});\n}}\n```\n\n"
        f"| option{i} | default |\n|---|---|\n| on | {i} |\n")
LONG_DOC = "# Frobnicator\n\n" + "\n".join(SECTIONS)


@pytest.fixture(scope="module")
def sample_engine():
    eng = Engine.memory()
    for path, text in sample_documents():
        eng.add_document(path, text)
    eng.add_document("docs/long.md", LONG_DOC)
    eng.flush()
    return eng


def claimed_text(lines, snippet):
    """The file text a snippet claims: whole lines of its range, or the cols span."""
    m = re.fullmatch(r"L(\d+)-(\d+)", snippet["range"])
    start, end = int(m.group(1)), int(m.group(2))
    assert 1 <= start <= end <= len(lines)
    whole = "\n".join(lines[start - 1:end])
    if "cols" not in snippet:
        return whole, (start, 0, end, len(lines[end - 1]))
    c0, c1 = snippet["cols"]
    assert 0 <= c0 <= len(lines[start - 1]) and 0 <= c1 <= len(lines[end - 1])
    tail = len(lines[end - 1]) - c1
    return whole[c0:len(whole) - tail], (start, c0, end, c1)


def check_pack(eng, packed, budget):
    assert KEYS <= packed.keys()
    assert packed["budget_tokens"] == budget
    assert packed["used_tokens"] == sum(count_tokens(s["text"]) for s in packed["snippets"])
    assert packed["used_tokens"] <= budget
    assert packed["evidence"] in ("sufficient", "weak", "none")
    assert 0.0 <= packed["evidence_score"] <= 1.0
    spans = {}
    for s in packed["snippets"]:
        assert {"path", "range", "why", "text"} <= s.keys()
        lines = split_lines(eng.file_text(s["path"]))
        if s.get("visible"):  # an HTML page's or POD document's: the visible text of those lines of its shown text
            from ragweb.markup import readable, show_page, visible
            shown, span = claimed_text(split_lines(show_page(s["path"], eng.file_text(s["path"]))), s)
            text = readable(visible(shown))
        else:
            text, span = claimed_text(lines, s)
        assert s["text"] == text
        assert s["text"].strip()
        spans.setdefault(s["path"], []).append(span)
    for path, group in spans.items():  # no text is packed twice
        group.sort()
        for a, b in zip(group, group[1:]):
            assert (a[2], a[3]) <= (b[0], b[1])


QUESTION_WORDS = ["retry", "backoff", "header", "parse", "timeout", "jitter", "proxy", "rate", "limit",
                  "option", "default", "error", "widgets", "frobnicator", "topic7", "option12", "gadget",
                  "how", "what", "does", "the", "zebra", "Redis", "2026"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.sampled_from(QUESTION_WORDS), min_size=1, max_size=6), st.integers(1, 3000),
       st.sampled_from([None, True, False]), st.sampled_from([None, True, False]))
def test_every_snippet_is_exactly_the_text_it_cites_and_the_budget_holds(
        sample_engine, words, budget, compact, lean):
    q = " ".join(words)
    if not sample_engine.analyzer.query_terms(q):
        return
    packed = sample_engine.pack(q, budget, compact=compact, lean=lean)
    check_pack(sample_engine, packed, budget)


def test_compacted_snippets_are_in_document_order_within_a_file(sample_engine):
    packed = sample_engine.pack("option7 default value error7 topic7", 120)
    check_pack(sample_engine, packed, 120)
    long_ones = [s for s in packed["snippets"] if s["path"] == "docs/long.md"]
    assert len(long_ones) >= 2
    starts = [(int(s["range"][1:].split("-")[0]), s.get("cols", [0])[0]) for s in long_ones]
    assert starts == sorted(starts)
    assert any("option7" in s["text"] for s in long_ones)


def test_compaction_packs_more_of_the_answer_than_whole_chunks(sample_engine):
    q = "what is the default value of option19 and what happens on error19"
    whole = sample_engine.pack(q, 80, compact=False)  # the section's chunk (~125 tokens) does not fit
    compacted = sample_engine.pack(q, 80)
    assert not any("error19" in s["text"] for s in whole["snippets"])
    assert any("item 19b describes what happens on error19" in s["text"] for s in compacted["snippets"])
    assert any("cols" in s or s["why"].startswith("compacted") for s in compacted["snippets"])


def test_sentences_of_a_long_line_carry_columns(sample_engine):
    packed = sample_engine.pack("how option5 changes the frobnicator behaviour", 60)
    check_pack(sample_engine, packed, 60)
    hit = [s for s in packed["snippets"] if "option5 changes" in s["text"]]
    assert hit and "cols" in hit[0]
    assert "It explains how option5" in hit[0]["text"]
    assert "A third sentence" not in hit[0]["text"]  # the span ends inside the line


def test_a_readme_without_a_suffix_is_packed_as_prose(monkeypatch):
    """A README (no suffix) was read as a program: compaction kept whole lines, so a small
    budget packed a long line of other sentences or nothing. An index of the version before
    (markup 15) reads it as it was built."""
    import ragweb.engine as engine_mod
    text = ("Tool\n====\n\n" + "The tool reads files and writes reports for you. " * 8
            + "To install the walrus, run make install as root. " + "It prints a summary at the end. " * 8 + "\n")
    packs, now = {}, engine_mod.MARKUP_VERSION
    for version in (now, 15):
        monkeypatch.setattr(engine_mod, "MARKUP_VERSION", version)
        eng = Engine.memory()
        eng.add_document("README", text)
        eng.add_document("src/README", text)  # (a README in a folder too)
        eng.flush()
        assert eng.settings["markup"] == version
        packs[version] = eng.pack("how do I install the walrus?", 40)
        check_pack(eng, packs[version], 40)
    assert packs[now]["snippets"] and all("cols" in s for s in packs[now]["snippets"])  # sentences of the line
    assert "To install the walrus, run make install as root." in packs[now]["snippets"][0]["text"]
    assert all("cols" not in s for s in packs[15]["snippets"])


def test_chunks_that_fit_whole_stay_whole(sample_engine):
    q = "exponential backoff jitter"
    whole = sample_engine.pack(q, 100_000, compact=False)
    default = sample_engine.pack(q, 100_000)
    assert default["snippets"] == whole["snippets"]
    assert all("cols" not in s for s in default["snippets"])


def test_no_compact_gives_whole_lines_only(sample_engine):
    packed = sample_engine.pack("retry backoff jitter header", 400, compact=False)
    check_pack(sample_engine, packed, 400)
    assert packed["snippets"] and all("cols" not in s for s in packed["snippets"])
    assert not any(s["why"].startswith("compacted") for s in packed["snippets"])


def test_lean_uses_fewer_tokens(sample_engine):
    q = "how does the retry policy use exponential backoff and jitter"
    default = sample_engine.pack(q, 1400)
    lean = sample_engine.pack(q, 1400, lean=True)
    check_pack(sample_engine, lean, 1400)
    assert 0 < lean["used_tokens"] < default["used_tokens"]


def test_a_how_question_keeps_the_lines_that_answer_it():
    # the bundled sample as the page indexes it: its retry docstring states the backoff
    # formula; a floor that keeps only the strongest units (MIN_RELATIVE 0.2 was tried)
    # drops it and packs the README intro only
    eng = Engine.memory()
    for path, text in sample_documents():
        eng.add_document(path, text)
    packed = eng.pack("how does the retry policy use exponential backoff and jitter", 1400)
    check_pack(eng, packed, 1400)
    text = "\n".join(s["text"] for s in packed["snippets"])
    assert "min(max_delay, base_delay * 2 ** (n - 2))" in text


def test_the_best_candidates_page_is_not_outweighed_by_a_page_of_many_weaker_ones():
    # twenty sections of one page say the same as the best chunk, on another page, nearly says
    rnd = random.Random(1)

    def filler(n):
        return " ".join(f"w{rnd.randrange(10**6)}" for _ in range(n))

    eng = Engine.memory()
    eng.add_document("triggers.md", "# Triggers\n\n" + "\n\n".join(
        f"## Part {i}\n\n{filler(60)}. Each statement trigger fires on insert or update." for i in range(40)) + "\n")
    eng.add_document("merge.md", "# Notes\n\n" + filler(300)
                     + ".\n\nIn a merge, a statement trigger fires on insert and on update.\n")
    q = "does the statement trigger fire on insert or update"
    hits = eng.search(q, top_k=20)
    assert hits[0].path == "merge.md" and sum(h.path == "triggers.md" for h in hits) > 10
    p = eng.pack(q, 20)
    assert [s["path"] for s in p["snippets"]] == ["merge.md"]
    assert p["snippets"][0]["text"] == "In a merge, a statement trigger fires on insert and on update."


def test_a_license_sections_sentences_weigh_less_in_a_pack():
    # the manual's license appendix holds the question's words more often than its answer
    from test_engine import LICENSED_MANUAL, licensed_manual_config
    for weight, packed_license in ((1.0, True), (None, False)):
        eng = Engine.memory(licensed_manual_config(weight))
        eng.add_document("manual.md", LICENSED_MANUAL)
        p = eng.pack("how does a here document work", 30)
        check_pack(eng, p, 30)
        text = "\n".join(s["text"] for s in p["snippets"])
        assert ("the Document" in text) == packed_license
        assert ("A here document works" in text) != packed_license


def test_a_change_logs_items_are_sections_of_their_own():
    # bash's CHANGES: a version's items together hold every question word, so each item got
    # its section's bonus and its neighbours' -- "b." and "d." were packed around "c." and
    # the manual's definition of $* was left out
    items = ["a.  Fixed a bug that caused the shell to crash when a here document was empty.",
             "b.  The read builtin has a number of new options for reading input.",
             "c.  Fixed a bug in the handling of $* and $@ when IFS is unset.",
             "d.  The history list is now saved when the shell exits from a signal.",
             "e.  Changed the prompt expansion code to quote the results of expanding the prompt."]
    log = ("This document details the changes between this version, shell-5.0, and the previous version.\n\n"
           + "\n\n".join(items) + "\n")
    manual = ("# Special Parameters\n\nThe shell treats several parameters specially.\n\n"
              "## $*\n\nExpands to the positional parameters, starting from one, joined into one word by "
              "the first character of IFS.\n\n## $@\n\nExpands to the positional parameters, starting from one, "
              "each a separate word.\n")
    eng = Engine.memory()
    eng.add_document("CHANGES", log)
    eng.add_document("doc/params.md", manual)
    p = eng.pack("What is the difference between $* and $@?", 80)
    check_pack(eng, p, 80)
    by_path = {s["path"]: s["text"] for s in p["snippets"]}
    assert by_path["CHANGES"] == items[2]
    assert "joined into one word" in by_path["doc/params.md"] and "each a separate word" in by_path["doc/params.md"]


def test_a_readmes_license_section_is_packed_for_a_question_about_its_license():
    # (its sentences weighed 0.3 in the pack, the FAQ's "use" took the budget)
    readme = ("# Widget\n\nWidget is a small tool that turns your notes into reports.\n\n## Installation\n\n"
              "Run pip install widget to install it. Widget needs Python 3.9 or later.\n\n## Usage\n\n"
              "Call widget report NOTES to write a report of the notes under NOTES.\n\n## MIT License\n\n"
              "Copyright (c) 2024 Jane Doe. Widget is released under the MIT License: see the LICENSE file.\n")
    eng = Engine.memory()
    eng.add_document("README.md", readme)
    eng.add_document("docs/usage.md", "# Usage\n\nThe report command writes a report. The widget tool is licensed "
                                      "to users who install it from PyPI; see the package page.\n")
    eng.add_document("docs/faq.md", "# FAQ\n\n## Can I use widget at work?\n\nYes. Many teams use widget at work "
                                    "for their weekly reports.\n\n## Is widget free?\n\nWidget costs nothing.\n")
    p = eng.pack("Which license does widget use?", 60)
    check_pack(eng, p, 60)
    assert any("released under the MIT License" in s["text"] for s in p["snippets"])


def test_config_keys_pack_lean_and_pack_compact():
    docs = dict(sample_documents())
    q = "how does the retry policy use exponential backoff and jitter"

    def engine(**pack_settings):
        cfg = default_config()
        cfg["pack"].update(pack_settings)
        eng = Engine.memory(cfg)
        for p, t in docs.items():
            eng.add_document(p, t)
        return eng

    base, lean_cfg, whole_cfg = engine(), engine(lean=True), engine(compact=False)
    assert lean_cfg.pack(q, 1400) == base.pack(q, 1400, lean=True)
    assert whole_cfg.pack(q, 300) == base.pack(q, 300, compact=False)
    assert whole_cfg.pack(q, 300, compact=True) == base.pack(q, 300)


def test_budget_of_one(sample_engine):
    packed = sample_engine.pack("retry backoff", 1)
    check_pack(sample_engine, packed, 1)
    assert packed["used_tokens"] <= 1


def test_budget_smaller_than_any_unit_packs_nothing():
    eng = Engine.memory()
    eng.add_document("a.md", "# " + "alpha " * 40 + "\n\n" + ("alpha beta gamma delta " * 30 + "\n\n") * 6)
    packed = eng.pack("alpha beta", 5)
    assert packed["snippets"] == [] and packed["used_tokens"] == 0
    assert packed["evidence"] == "none" and packed["evidence_score"] == 0.0


def test_empty_index():
    packed = Engine.memory().pack("anything at all", 500)
    assert packed["snippets"] == [] and packed["used_tokens"] == 0
    assert packed["evidence"] == "none"


def test_question_matching_nothing_is_evidence_none(sample_engine):
    packed = sample_engine.pack("zebra giraffe okapi", 500)
    assert packed["snippets"] == [] and packed["evidence"] == "none" and packed["evidence_score"] == 0.0


def test_answerable_question_is_sufficient(sample_engine):
    packed = sample_engine.pack("How many attempts does the retry policy make by default?", 1400)
    assert packed["evidence"] == "sufficient", packed["evidence_score"]
    assert any("max_attempts" in s["text"] for s in packed["snippets"])


def test_question_about_something_never_mentioned_is_not_answerable(sample_engine):
    packed = sample_engine.pack("How do I store pigeonpost retries in Redis on AWS Lambda?", 1400)
    assert packed["evidence"] == "none", packed["evidence_score"]
    weaker = sample_engine.pack("Does pigeonpost retry with exponential backoff and Redis?", 1400)
    assert packed["evidence_score"] < weaker["evidence_score"]


def test_evidence_levels_follow_the_thresholds(sample_engine, monkeypatch):
    q = "retry backoff in Redis"
    score = sample_engine.pack(q, 1400)["evidence_score"]
    assert 0 < score < 1
    monkeypatch.setattr(pack_mod, "SUFFICIENT", score)
    monkeypatch.setattr(pack_mod, "WEAK", score / 2)
    assert sample_engine.pack(q, 1400)["evidence"] == "sufficient"
    monkeypatch.setattr(pack_mod, "SUFFICIENT", score + 0.01)
    assert sample_engine.pack(q, 1400)["evidence"] == "weak"
    monkeypatch.setattr(pack_mod, "WEAK", score + 0.005)
    assert sample_engine.pack(q, 1400)["evidence"] == "none"


def test_a_lean_pack_has_its_own_evidence_thresholds(sample_engine, monkeypatch):
    q = "retry backoff in Redis"
    score = sample_engine.pack(q, 1400, lean=True)["evidence_score"]
    assert 0 < score < 1
    monkeypatch.setattr(pack_mod, "SUFFICIENT", score + 0.1)  # not what a lean pack is judged by
    monkeypatch.setattr(pack_mod, "WEAK", score + 0.05)
    monkeypatch.setattr(pack_mod, "LEAN_SUFFICIENT", score + 0.01)
    monkeypatch.setattr(pack_mod, "LEAN_WEAK", score - 0.01)
    assert sample_engine.pack(q, 1400, lean=True)["evidence"] == "weak"
    monkeypatch.setattr(pack_mod, "LEAN_SUFFICIENT", score)
    assert sample_engine.pack(q, 1400, lean=True)["evidence"] == "sufficient"
    monkeypatch.setattr(pack_mod, "LEAN_WEAK", score + 0.005)
    monkeypatch.setattr(pack_mod, "LEAN_SUFFICIENT", score + 0.01)
    assert sample_engine.pack(q, 1400, lean=True)["evidence"] == "none"
    whole = sample_engine.pack(q, 1400, lean=True, compact=False)["evidence_score"]  # lean whole chunks too
    monkeypatch.setattr(pack_mod, "SUFFICIENT", whole - 0.05)
    monkeypatch.setattr(pack_mod, "WEAK", whole - 0.1)
    monkeypatch.setattr(pack_mod, "LEAN_SUFFICIENT", whole + 0.01)
    monkeypatch.setattr(pack_mod, "LEAN_WEAK", whole + 0.005)
    assert sample_engine.pack(q, 1400, lean=True, compact=False)["evidence"] == "none"
    assert sample_engine.pack(q, 1400, compact=False)["evidence"] == "sufficient"


@pytest.mark.parametrize("bad", [0, -5, 1.5, "100", True])
def test_bad_budget_is_a_usage_error(sample_engine, bad):
    with pytest.raises(UsageError, match="token budget"):
        sample_engine.pack("retry", bad)


def test_default_budget_comes_from_config(sample_engine):
    assert sample_engine.pack("retry backoff")["budget_tokens"] == default_config()["pack"]["token_budget"]


def test_path_glob_limits_the_files(sample_engine):
    packed = sample_engine.pack("retry backoff header", 300, path_glob="docs/**")
    assert packed["snippets"] and all(s["path"].startswith("docs/") for s in packed["snippets"])


def test_lean_compacts_even_when_everything_fits(sample_engine):
    q = "exponential backoff jitter"
    lean = sample_engine.pack(q, 100_000, lean=True)
    check_pack(sample_engine, lean, 100_000)
    whole = sample_engine.pack(q, 100_000)
    assert 0 < lean["used_tokens"] < whole["used_tokens"]
    # short pages may go whole (`whole_pages`, lean mode too); everything else is compacted
    assert any(s["why"].startswith("compacted") for s in lean["snippets"])
    assert all(s["why"].startswith("compacted") or s["why"].endswith("(whole page)") for s in lean["snippets"])


def test_lean_without_compaction_packs_whole_chunks_in_a_share_of_the_budget(sample_engine):
    packed = sample_engine.pack("retry backoff jitter header", 1000, lean=True, compact=False)
    check_pack(sample_engine, packed, 1000)
    assert packed["snippets"] and packed["used_tokens"] <= pack_mod.lean_budget(1000) < 1000
    assert not any(s["why"].startswith("compacted") for s in packed["snippets"])


def test_evidence_counts_terms_of_one_file_not_scattered_ones():
    eng = Engine.memory()
    eng.add_document("a.md", "# A\n\nThe frobnicator supports quux mode.\n")
    eng.add_document("b.md", "# B\n\nThe widget has a zorblax setting.\n")
    eng.add_document("c.md", "# C\n\nThe frobnicator zorblax quux setting.\n")
    for i in range(6):
        eng.add_document(f"pad{i}.md", f"# Pad {i}\n\nUnrelated filler text number {i}.\n")
    together = eng.pack("frobnicator quux zorblax", 1000)
    assert any(s["path"] == "c.md" for s in together["snippets"])
    eng.remove_document("c.md")
    scattered = eng.pack("frobnicator quux zorblax", 1000)
    assert {s["path"] for s in scattered["snippets"]} >= {"a.md", "b.md"}
    assert scattered["evidence_score"] < together["evidence_score"] == 1.0


# --- context fill, share of the budget, file prior, per-file evidence ---------------------
API_DOC = "# lib\n\n" + "\n\n".join(
    f"### method{i}(options)\n\nReturns the widget number {i}. It never blocks the caller. "
    f"Filler words about widgets and gadgets follow here for method{i}, and more of them.\n\n"
    f"```js\nconst w{i} = method{i}({{}});\n```" for i in range(40)) + "\n"


@pytest.fixture(scope="module")
def api_engine():
    eng = Engine.memory()
    eng.add_document("api.md", API_DOC)
    for i in range(4):
        eng.add_document(f"pad{i}.md", f"# Pad {i}\n\nUnrelated text number {i} about nothing.\n")
    eng.flush()
    return eng


def test_context_fill_packs_the_sentences_around_the_best_units(api_engine, monkeypatch):
    q = "method17"
    assert sum(count_tokens(h.text) for h in api_engine.search(q)) > 400  # compaction happens
    monkeypatch.setattr(pack_mod.cp, "MIN_RELATIVE", 0.999)  # by score: the best unit only
    monkeypatch.setattr(pack_mod, "TOP_CHUNK_FILL", False)  # context fill alone
    packed = api_engine.pack(q, 400)
    check_pack(api_engine, packed, 400)
    text = "\n".join(s["text"] for s in packed["snippets"])
    assert "### method17(options)" in text
    assert "Returns the widget number 17." in text and "It never blocks the caller." in text
    assert "method16" not in text and "method18" not in text  # never outside the section
    monkeypatch.setattr(pack_mod.cp, "CONTEXT_DISTANCE", 0)
    bare = api_engine.pack(q, 400)
    check_pack(api_engine, bare, 400)
    assert len(bare["snippets"]) == 1 and "It never blocks the caller." not in bare["snippets"][0]["text"]
    assert bare["used_tokens"] < packed["used_tokens"]


def test_leftover_budget_goes_to_the_rest_of_the_best_chunk(api_engine, monkeypatch):
    q = "method17"
    monkeypatch.setattr(pack_mod.cp, "MIN_RELATIVE", 0.999)
    best = api_engine.search(q)[0]
    assert "method17" in best.text and "method16" in best.text  # the chunk spans sections
    packed = api_engine.pack(q, 400)
    check_pack(api_engine, packed, 400)
    text = "\n".join(s["text"] for s in packed["snippets"])
    assert "### method17(options)" in text and "method16" in text  # the rest of the chunk
    lines = set()
    for s in packed["snippets"]:
        a, b = map(int, s["range"][1:].split("-"))
        lines.update(range(a, b + 1))
    assert lines <= set(range(best.start_line, best.end_line + 1))  # and nothing outside it
    lean = api_engine.pack(q, 1400, lean=True)  # lean mode fills too, within its own budget
    check_pack(api_engine, lean, 1400)
    assert "method16" in "\n".join(s["text"] for s in lean["snippets"])
    assert lean["used_tokens"] <= pack_mod.lean_budget(1400)
    monkeypatch.setattr(pack_mod, "TOP_CHUNK_FILL", False)
    assert api_engine.pack(q, 400)["used_tokens"] < packed["used_tokens"]
    unfilled = api_engine.pack(q, 1400, lean=True)
    assert "method16" not in "\n".join(s["text"] for s in unfilled["snippets"])
    def covered(p):
        lines = set()
        for s in p["snippets"]:
            a, b = map(int, s["range"][1:].split("-"))
            lines.update((s["path"], n) for n in range(a, b + 1))
        return lines

    assert covered(unfilled) < covered(lean)  # the fill only adds


@pytest.mark.parametrize("budget", [60, 200, 400, 1400])
@pytest.mark.parametrize("lean", [False, True])
def test_a_compacted_pack_fills_at_most_its_share_of_the_budget(api_engine, budget, lean):
    q = "widget number gadgets blocks method3 method30"
    packed = api_engine.pack(q, budget, lean=lean)
    check_pack(api_engine, packed, budget)
    assert packed["snippets"] and all(s["why"].startswith("compacted") for s in packed["snippets"])
    if lean:
        assert packed["used_tokens"] <= int(budget * pack_mod.LEAN_BUDGET_SHARE)
    elif packed["used_tokens"] > int(budget * pack_mod.CONTEXT_SHARE):
        # past the context share only units that match the question are packed
        assert not any(s["why"].endswith("(context)") for s in packed["snippets"])


def test_matching_units_may_fill_the_whole_budget_context_only_its_share():
    rng = random.Random(7)

    def filler(n):  # made-up words: every file has its own vocabulary
        return " ".join("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3))
                        for _ in range(n)).capitalize() + "."

    eng = Engine.memory()
    # many distinct files, each with a few long sentences that match among many that do not
    for i in range(40):
        paras = [filler(14) for _ in range(20)]
        for k in range(3):
            paras.insert(rng.randrange(len(paras)), f"The zanzibar quokka rule q{i}x{k} says {filler(25)}")
        eng.add_document(f"doc{i}.md", f"# Doc {i}\n\n" + "\n\n".join(paras) + "\n")
    eng.flush()
    big = eng.pack("zanzibar quokka rule", 1400)
    check_pack(eng, big, 1400)
    assert big["used_tokens"] > 1300  # matching units use the whole budget, past the context share
    assert all("zanzibar" in s["text"] for s in big["snippets"])
    # one clear match: the pack is it and its context, within the context share
    one = eng.pack("zanzibar quokka rule q7x1", 1400)
    check_pack(eng, one, 1400)
    assert "The zanzibar quokka rule q7x1 says" in one["snippets"][0]["text"]
    assert one["used_tokens"] <= int(1400 * pack_mod.CONTEXT_SHARE)


def test_the_file_that_covers_the_question_leads(monkeypatch):
    # (the mass prior alone: with `HIT_PRIOR_POWER` the best chunk's page has a prior of 1
    # too, test_the_best_candidates_page_is_not_outweighed_by_a_page_of_many_weaker_ones)
    monkeypatch.setattr(pack_mod, "HIT_PRIOR_POWER", 0.0)
    eng = Engine.memory()
    guide = "# Frobnicator guide\n\n" + "\n\n".join(
        f"## Part {i}\n\nThe frobnicator quux mode number {i} is covered in this part with many words of "
        f"filler text that make the chunk long enough to matter, and more filler words here." for i in range(30))
    eng.add_document("guide.md", guide + "\n\nThe quux frobnicator answer is alpha.\n")
    eng.add_document("note.md", "# Note\n\nThe quux frobnicator answer is omega.\n")
    for i in range(5):
        eng.add_document(f"pad{i}.md", f"# Pad {i}\n\nUnrelated filler {i} text.\n")
    q = "quux frobnicator answer"
    assert eng.search(q)[0].path == "note.md"  # its one short chunk is the best single chunk
    packed = eng.pack(q, 14)  # room for one answer sentence
    check_pack(eng, packed, 14)
    assert [s["text"] for s in packed["snippets"]] == ["The quux frobnicator answer is alpha."]
    monkeypatch.setattr(pack_mod.cp, "FILE_PRIOR_POWER", 0.0)
    assert [s["text"] for s in eng.pack(q, 14)["snippets"]] == ["The quux frobnicator answer is omega."]


def _brute_force_df(eng, path, terms):
    """(chunks, {term: df}) of one file from the chunks' own term-id sets (not the postings)."""
    from ragweb import store
    fid = eng.conn.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()[0]
    ids = dict(eng.conn.execute("SELECT id, term FROM terms"))
    rows = eng.conn.execute("SELECT terms FROM chunks WHERE file_id=?", (fid,)).fetchall()
    df = {}
    for (blob,) in rows:
        for tid in store.blob_to_ints(blob):
            if ids.get(tid) in terms:
                df[ids[tid]] = df.get(ids[tid], 0) + 1
    return fid, (len(rows), df)


def test_file_term_df_counts_live_chunks_of_each_file():
    eng = Engine.memory()
    for path, text in sample_documents():
        eng.add_document(path, text)
    eng.add_document("docs/long.md", LONG_DOC)
    for i in range(120):
        eng.add_document(f"pad/{i}.md", f"# Pad {i}\n\nFiller about retry number {i}.\n")
    eng.flush()
    eng.add_document("docs/long.md", LONG_DOC.replace("widgets", "sprockets"))  # the old chunks die
    eng.flush()
    assert eng.n_dead > 0  # their postings are still stored (not merged away): they must not count
    terms = eng.analyzer.query_terms("widgets sprockets option7 retry backoff frobnicator topic3")
    paths = [p for (p,) in eng.conn.execute("SELECT path FROM files")]
    expected = dict(_brute_force_df(eng, p, set(terms)) for p in paths)
    got = pack_mod.file_term_df(eng, list(expected), terms)
    assert got == expected
    long_id = eng.conn.execute("SELECT id FROM files WHERE path='docs/long.md'").fetchone()[0]
    assert "widget" not in got[long_id][1] and got[long_id][1]["sprocket"] == got[long_id][0] > 0


def _subject_engine():
    eng = Engine.memory()
    eng.add_document("zorp.md", "# Zorp\n\n" + "\n\n".join(
        f"## Topic {i}\n\nZorp handles case {i} with the gizmo{i} option and some longer filler text "
        f"so that every section becomes its own chunk of the index, more words here." * 3 for i in range(12)))
    for i in range(12):
        eng.add_document(f"other{i}.md", f"# Other {i}\n\nA page about widgets, number {i}, and gizmo{i}.\n")
    return eng


def test_a_files_own_subject_is_weak_evidence(monkeypatch):
    eng = _subject_engine()
    q = "What is the pricing for a zorp enterprise license?"  # only the file's subject word is there
    packed = eng.pack(q, 1400)
    assert packed["evidence"] == "none", packed["evidence_score"]
    monkeypatch.setattr(pack_mod, "EVIDENCE_FILE_IDF", 0.0)
    assert eng.pack(q, 1400)["evidence_score"] > packed["evidence_score"]
    # the same file still answers a question about one of its own topics
    monkeypatch.undo()
    answered = eng.pack("How does zorp handle case 7 with the gizmo7 option?", 1400)
    assert answered["evidence"] == "sufficient", answered["evidence_score"]


def test_question_terms_in_the_path_count_as_found():
    eng = Engine.memory()
    eng.add_document("docs/quux/setup.md", "# Setup\n\nInstall the widget with the installer script.\n")
    eng.add_document("docs/other/setup.md", "# Setup\n\nInstall the gadget with the installer script.\n")
    for i in range(6):
        eng.add_document(f"pad{i}.md", f"# Pad {i}\n\nUnrelated filler {i} text about quux.\n")
    named = eng.pack("How do I install the quux widget?", 1400)
    unnamed = eng.pack("How do I install the quux gadget?", 1400)
    assert {s["path"] for s in named["snippets"]} >= {"docs/quux/setup.md"}
    assert named["evidence_score"] == 1.0
    assert unnamed["evidence_score"] < 1.0


def test_recency_boost_prefers_recent_files():
    from ragweb.config import default_config
    from ragweb.engine import Engine

    def top_path(boost):
        cfg = default_config()
        cfg["pack"]["recency_boost"] = boost
        eng = Engine.memory(cfg)
        eng.add_document("a.md", "kestrel migration notes alpha beta gamma", mtime=1000.0)   # older by a year
        eng.add_document("b.md", "kestrel migration notes delta epsilon zeta", mtime=1000.0 + 365 * 86400)  # newer
        packed = eng.pack("kestrel migration", budget=15, compact=False)
        return [s["path"] for s in packed["snippets"]]

    assert top_path(0.0) == ["a.md"]   # equal scores: the path breaks the tie
    assert top_path(1.0) == ["b.md"]   # the newer file wins with the boost


def test_recency_ignores_files_written_together():
    from ragweb.pack import apply_recency
    from ragweb.engine import Hit
    hits = [Hit("a.md", 1, 1, 2.0, "", mtime=1000.0), Hit("b.md", 1, 1, 1.99, "", mtime=1001.0)]
    assert [h.path for h in apply_recency(hits, 0.1)] == ["a.md", "b.md"]


def test_recency_gives_files_written_together_the_same_factor():
    """A copy written a microsecond after its original outranked it, though their scores
    were equal (ties break on the path), and the page, whose file times are whole
    milliseconds, ranked them the other way: ages count in whole days."""
    from ragweb.pack import apply_recency
    from ragweb.engine import Hit
    hits = [Hit("a.md", 1, 1, 0.4763, "", mtime=1796272226.1000001),
            Hit("b.md", 1, 1, 0.4763, "", mtime=1796272226.1000009)]
    out = apply_recency(hits, 0.1)
    assert [h.path for h in out] == ["a.md", "b.md"] and out[0].score == out[1].score
    page = [Hit("a.md", 1, 1, 0.4763, "", mtime=1796272226.1), Hit("b.md", 1, 1, 0.4763, "", mtime=1796272226.1)]
    assert [(h.path, h.score) for h in apply_recency(page, 0.1)] == [(h.path, h.score) for h in out]
    hits = [Hit("a.md", 1, 1, 2.0, "", mtime=1000.0), Hit("b.md", 1, 1, 2.0, "", mtime=1000.0 + 2 * 86400)]
    assert [h.path for h in apply_recency(hits, 0.1)] == ["b.md", "a.md"]  # (days apart still count)


def test_recency_does_not_take_a_file_of_unknown_time_as_old():
    """A text given to ragIndex (time 0: not known) lost to any dropped file of this year by
    the boost, as if written in 1970: the page's packs ranked a text by how it arrived."""
    from ragweb.pack import apply_recency
    from ragweb.engine import Hit
    now = 1_764_000_000.0
    hits = [Hit("given.md", 1, 1, 2.0, "", mtime=0.0), Hit("dropped.md", 1, 1, 1.95, "", mtime=now)]
    assert [h.path for h in apply_recency(hits, 0.1)] == ["given.md", "dropped.md"]
    hits = [Hit("old.md", 1, 1, 2.0, "", mtime=now - 3650 * 86400), Hit("new.md", 1, 1, 1.95, "", mtime=now)]
    assert [h.path for h in apply_recency(hits, 0.1)] == ["new.md", "old.md"]  # (a known age still counts)


# --- hybrid: the best chunks whole, the rest compacted (pack.WHOLE_TOP) --------------------
@pytest.mark.parametrize("whole_top", [1, 2])
@pytest.mark.parametrize("budget", [30, 300, 700, 1400])
@pytest.mark.parametrize("q", ["option7 default value error7 topic7", "widgets gadgets retry", "frobnicator"])
def test_hybrid_packs_the_best_chunks_whole_and_compacts_the_rest(sample_engine, monkeypatch, whole_top, budget, q):
    monkeypatch.setattr(pack_mod, "WHOLE_TOP", whole_top)
    hits = sample_engine.search(q)
    assert sum(count_tokens(h.text) for h in hits) > budget  # compaction happens
    packed = sample_engine.pack(q, budget)
    check_pack(sample_engine, packed, budget)  # exact spans, the budget, no text twice
    whole = [s for s in packed["snippets"] if s["why"].endswith("(whole)")]
    if count_tokens(hits[0].text) > budget:
        assert not whole  # the best chunk does not fit: everything is compacted
        return
    first = packed["snippets"][0]
    assert first["why"].endswith("(whole)") and hits[0].text in first["text"]
    assert len(packed["snippets"]) > len(whole)  # the rest of the budget went to compacted units


def test_hybrid_off_by_default_is_the_compacted_pack(sample_engine, monkeypatch):
    q = "option7 default value error7 topic7"
    plain = sample_engine.pack(q, 300)
    assert all(s["why"].startswith("compacted") for s in plain["snippets"])
    monkeypatch.setattr(pack_mod, "WHOLE_TOP", 1)
    hybrid = sample_engine.pack(q, 300)
    assert hybrid["snippets"][0]["why"].endswith("(whole)") and hybrid != plain


def test_an_over_long_line_is_compacted_piece_by_piece():
    """Minified text (one huge line, indexed as pieces) still packs exact, in-budget spans."""
    import json as _json
    import random
    rng = random.Random(3)
    words = ["alpha", "beta", "gamma", "delta", "socket", "timeout", "parser", "header"]
    line = _json.dumps([{"k": rng.choice(words), "v": " ".join(rng.choice(words) for _ in range(20))}
                        for _ in range(2000)])
    eng = Engine.memory()
    eng.add_document("big.json", line)
    eng.add_document("notes.md", "# Notes\n\nThe socket timeout is set by the parser.\n")
    packed = eng.pack("socket timeout parser", 300)
    check_pack(eng, packed, 300)
    pieces = [s for s in packed["snippets"] if s["path"] == "big.json"]
    assert pieces and all("cols" in s for s in pieces)
    assert all(len(s["text"]) < 2000 for s in pieces)


def test_the_best_file_is_read_whole_for_units_outside_the_candidate_chunks(monkeypatch):
    def pad(tag, n=150):  # distinct filler words over several lines
        words = [f"{tag}x{j}" for j in range(n)]
        return "\n".join(" ".join(words[k:k + 15]) for k in range(0, n, 15))

    eng = Engine.memory()
    parts = [f"## Part {i}\n\nThe frobnicator widget number {i} turns the frobnicator widget gears "
             f"with frobnicator widget force.\n\n" + pad(f"w{i}") for i in range(30)]
    parts.insert(17, "## Ceiling\n\n" + pad("c") + "\n\nThe ceiling of every frobnicator is 42 turns "
                 "a minute, its hard limit.\n\n" + pad("d"))
    eng.add_document("guide.md", "# Guide\n\n" + "\n\n".join(parts) + "\n")
    for i in range(200):  # "limit" is a common word of the index, so its chunk ranks low
        eng.add_document(f"notes/n{i}.md", f"# Note {i}\n\nNote {i} mentions a limit of kind k{i}.\n")
    eng.flush()
    q = "what is the frobnicator limit"
    hits = eng.search(q, top_k=3)
    assert not any("hard limit" in h.text for h in hits)  # not among the candidate chunks
    packed = eng.pack(q, 300, top_k=3)
    check_pack(eng, packed, 300)
    assert any("its hard limit" in s["text"] for s in packed["snippets"])
    monkeypatch.setattr(pack_mod, "WHOLE_FILE_LINES", 0)  # off: only the candidates' regions
    assert not any("its hard limit" in s["text"] for s in eng.pack(q, 300, top_k=3)["snippets"])
    monkeypatch.setattr(pack_mod, "WHOLE_FILE_LINES", 100)  # a longer file is not read whole
    assert not any("its hard limit" in s["text"] for s in eng.pack(q, 300, top_k=3)["snippets"])


def _property_pages(n=40):
    rng = random.Random(3)
    eng = Engine.memory()
    for i in range(n):  # one short page per property; made-up words keep the pages distinct
        words = " ".join("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3))
                         for _ in range(40))
        eng.add_document(f"prop/PROP_{i}.rst", f"PROP_{i}\n-------\n\nThe test property number {i} sets "
                         f"how the test runner treats a test of kind k{i}. When it is set the runner "
                         f"skips the test after a timeout of {i} seconds. {words.capitalize()}.\n")
    eng.flush()
    return eng


def test_the_best_whole_short_pages_are_packed_whole(monkeypatch):
    eng = _property_pages()
    q = "which test property makes the runner skip a test of kind k7 after a timeout"
    hits = eng.search(q)
    assert sum(count_tokens(h.text) for h in hits) > 1400  # the candidates do not fit: compaction
    page = "\n".join(eng.file_lines([hits[0].file_id])[hits[0].file_id])
    for lean in (False, True):
        packed = eng.pack(q, 1400, lean=lean)
        check_pack(eng, packed, 1400)
        first = packed["snippets"][0]
        assert first["path"] == "prop/PROP_7.rst" and first["why"].endswith("(whole page)")
        assert first["text"] == page  # the whole page, its title included
        share = pack_mod.lean_budget(1400) if lean else 1400
        assert sum(count_tokens(s["text"]) for s in packed["snippets"] if s["why"].endswith("(whole page)")) \
            <= int(share * pack_mod.WHOLE_PAGE_SHARE)
        assert any(s["why"].startswith("compacted") for s in packed["snippets"])  # the rest is compacted
    monkeypatch.setattr(pack_mod, "WHOLE_PAGE_TOP", 0)  # off: every page is cut into units
    packed = eng.pack(q, 1400)
    assert all(s["why"].startswith("compacted") for s in packed["snippets"])


def test_packing_never_reads_a_stale_file_after_replace_remove_or_clear():
    eng = Engine.memory()
    eng.add_document("a.md", "# A\n\nThe quokka colour is green.\n")
    eng.flush()
    assert "green" in eng.pack("quokka colour", 100)["snippets"][0]["text"]
    eng.add_document("a.md", "# A\n\nThe quokka colour is purple.\n")  # replaced
    eng.flush()
    assert "purple" in eng.pack("quokka colour", 100)["snippets"][0]["text"]
    eng.remove_document("a.md")
    eng.add_document("b.md", "# B\n\nThe quokka colour is orange.\n")  # SQLite may reuse the id
    eng.flush()
    assert "orange" in eng.pack("quokka colour", 100)["snippets"][0]["text"]
    eng.clear()
    eng.add_document("c.md", "# C\n\nThe quokka colour is teal.\n")
    eng.flush()
    packed = eng.pack("quokka colour", 100)
    check_pack(eng, packed, 100)
    assert "teal" in packed["snippets"][0]["text"]


def test_a_short_page_the_chunker_cut_at_a_heading_still_goes_whole():
    eng = _property_pages()
    rng = random.Random(5)
    filler = " ".join("".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(3))
                      for _ in range(90))
    page = (f"DEPENDS\n-------\n\nThe results of the listed tests are not considered. {filler.capitalize()}.\n\n"
            "Examples\n~~~~~~~~\n\n  set_tests_properties(t2 PROPERTIES DEPENDS t1)\n")
    eng.add_document("prop/DEPENDS.rst", page)
    eng.flush()
    q = "set_tests_properties DEPENDS t2 t1 example"
    hits = eng.search(q)
    mine = [h for h in hits if h.path == "prop/DEPENDS.rst"]
    assert len(mine) == 2 and mine[0].start_line > 1  # the chunker cut the page; the example ranks first
    packed = eng.pack(q, 1400)
    check_pack(eng, packed, 1400)
    whole = [s for s in packed["snippets"] if s["why"].endswith("(whole page)")]
    assert [s["path"] for s in whole][:1] == ["prop/DEPENDS.rst"]
    assert whole[0]["text"] == page.rstrip("\n") and whole[0]["range"] == f"L1-{page.count(chr(10))}"


@pytest.mark.parametrize("path", ["guide.adoc", "guide.asciidoc", "notes.org", "guide.md"])
def test_prose_formats_are_cut_into_sentences(path):
    eng = Engine.memory()
    filler = " ".join(f"Sentence {i} talks about unrelated weather." for i in range(20))  # one line < 2,048 chars
    eng.add_document(path, f"{filler} The quokka feeder opens at dawn. {filler}\n")
    eng.add_document("other.md", f"{filler}\n")
    eng.flush()
    packed = eng.pack("when does the quokka feeder open", 40)
    check_pack(eng, packed, 40)
    first = packed["snippets"][0]
    assert "The quokka feeder opens at dawn." in first["text"] and "cols" in first  # sentences of one line
    assert eng.is_prose(path) and not eng.is_prose("main.py")


def test_a_sentence_worded_with_a_synonym_of_the_question_is_packed(monkeypatch):
    from ragweb import analysis
    eng = Engine.memory()
    lines = [f"Entry {i} holds key{i}." for i in range(60)]
    lines.insert(37, "Call `store.purge()` with no arguments to erase every single entry that the store "
                     "holds at once, expired or not.")
    eng.add_document("store.md", "# Store\n\n" + "\n\n".join(lines) + "\n")
    eng.flush()
    q = "How do I delete all entries?"
    packed = eng.pack(q, 40)
    check_pack(eng, packed, 40)
    assert "purge" in " ".join(s["text"] for s in packed["snippets"])  # "delete" found "erase"
    monkeypatch.setattr(analysis, "SYNONYM_MATCH", 0.0)  # off: the question's words alone
    packed = eng.pack(q, 40)
    assert "purge" not in " ".join(s["text"] for s in packed["snippets"])


def test_synonyms_of_your_own_from_the_config():
    config = default_config()
    eng = Engine.memory(config)
    lines = [f"Node {i} of the cluster runs pod{i}." for i in range(60)]
    lines.insert(37, "The orchestrator joins every node to the kubernetes control plane when it boots.")
    eng.add_document("ops.md", "# Ops\n\n" + "\n\n".join(lines) + "\n")
    eng.flush()
    q = "k8s node"
    assert "orchestrator" not in " ".join(s["text"] for s in eng.pack(q, 40)["snippets"])
    config["pack"]["synonyms"] = ["k8s kubernetes"]
    packed = eng.pack(q, 40)
    check_pack(eng, packed, 40)
    assert "orchestrator" in " ".join(s["text"] for s in packed["snippets"])


def test_a_pack_that_says_the_question_word_by_its_own_synonym_has_evidence():
    """With `pack.synonyms: ['k8s kubernetes']` a pack for "how do I deploy k8s" held the
    kubernetes sentence, yet said "evidence": "none" (and `rag pack` warned it held no
    evidence): a name the index never mentions weighs much, and the group was not read."""
    config = default_config()
    eng = Engine.memory(config)
    lines = [f"Node {i} of the fleet runs job{i}." for i in range(60)]
    lines.insert(37, "Deploy the kubernetes release with helm upgrade --install, one chart per service.")
    eng.add_document("ops.md", "# Ops\n\n" + "\n\n".join(lines) + "\n")
    eng.flush()
    q = "how do I deploy k8s"
    assert eng.pack(q, 200)["evidence"] == "none"  # (k8s is nowhere: rightly none)
    config["pack"]["synonyms"] = ["k8s kubernetes"]
    packed = eng.pack(q, 200)
    assert "helm upgrade" in " ".join(s["text"] for s in packed["snippets"])
    assert packed["evidence"] == "sufficient", packed["evidence_score"]
    assert eng.pack("how do I deploy k8s with ArgoCD", 200)["evidence"] == "none"  # (a name still nowhere)

def test_a_path_glob_that_matches_no_indexed_file_or_is_empty_is_an_error(sample_engine):
    for glob, says in (("nowhere/**", "no indexed file matches the path glob nowhere/**"),
                       ("", "is empty"), ("  ", "is empty"), ("!docs", "starts with '!'")):
        with pytest.raises(UsageError, match=re.escape(says)):
            sample_engine.pack("retry backoff", 300, path_glob=glob)
    assert sample_engine.files_matching("docs/**") and sample_engine.pack("retry backoff", 300, path_glob="docs/**")["snippets"]


def test_a_path_glob_that_misses_names_the_nearest_indexed_path_and_why(sample_engine):
    # (the error ragPack's `path` option gives, as `rag query --path` does)
    for glob, says in (("Docs/Configuration.md", ", such as docs/configuration.md (paths are case-sensitive)"),
                       ("docs\\configuration.md", ", such as docs/configuration.md (with '/' between folders)"),
                       ("/configuration.md", "'**/configuration.md' takes one at any depth"),
                       ("docs/configuraton.md", ", such as docs/configuration.md")):
        with pytest.raises(UsageError, match=re.escape(says)):
            sample_engine.pack("retry backoff", 300, path_glob=glob)
    assert Engine.memory().path_glob_hint("x/**") == ""


def test_a_pasted_log_lines_timestamp_and_process_id_do_not_count_against_the_evidence():
    eng = Engine.memory()
    eng.add_document("timeouts.md", "# Statement timeouts\n\nThe server logs ERROR: canceling statement due to "
                     "statement timeout (its times in UTC) when a statement ran longer than "
                     "statement_timeout allows.\n")
    for i in range(8):
        eng.add_document(f"pad{i}.md", f"# Pad {i}\n\nUnrelated filler text number {i} about backups.\n")
    line = "2024-05-02 10:14:07.123 UTC [48213] ERROR: canceling statement due to statement timeout"
    packed = eng.pack(line, 1000)
    assert packed["snippets"][0]["path"] == "timeouts.md"
    assert packed["evidence"] == "sufficient", packed["evidence_score"]
    # the same line about a thing the index never mentions is still not answered
    assert eng.pack(line.replace("statement timeout", "Zorblax quota"), 1000)["evidence"] != "sufficient"


def test_a_long_run_of_lines_with_no_sentence_end_is_packed_a_line_at_a_time():
    # (a THANKS list, a poem: one "sentence" of 400 lines fit no budget, and nothing was packed)
    names = ["Ivan Carolson", "Maria Petrov", "Olga Smirnova", "Pavel Ivanov", "Nadia Popov"]
    lines = [f"{names[i % 5]} {names[i % 5].split()[0].lower()} at example" for i in range(400)]
    lines[250] = "Zebulon Quixote zq at example"
    eng = Engine.memory()
    eng.add_document("THANKS.txt", "\n".join(lines) + "\n")
    for i in range(5):
        eng.add_document(f"pad{i}.md", f"# Pad {i}\n\nUnrelated filler text number {i} about backups.\n")
    for lean in (False, True):
        packed = eng.pack("Zebulon Quixote", 400, lean=lean)
        check_pack(eng, packed, 400)
        assert any("Zebulon Quixote" in s["text"] for s in packed["snippets"]), (lean, packed["snippets"])
        assert packed["evidence"] == "sufficient"


def _page_docs():
    """An HTML page of one-line paragraphs and a Markdown file with a line over 4 x
    chunk_tokens: where compaction's cost of joining units was not what the pack counts."""
    paras = [f"<p>The client timeout default is {i} seconds. Retry number {i} backs off. Other text {i} "
             f"about the proxy.</p>" for i in range(12)]
    long = "The index is rebuilt if the parser changes!! " + " ".join(
        f"Filler sentence number {i} says nothing useful." for i in range(45))
    return {"page.html": "<html><body><h1>Client</h1>\n" + "\n".join(paras) + "\n</body></html>\n",
            "one.html": "<p>Retry number 0 backs off. Retry number 1 backs off. Retry number 2 backs off.</p>\n",
            "notes.md": "About the parser\n" + long + "\nThe end.\n"}


@pytest.mark.parametrize("question, lean", [("client timeout default", False), ("retry backs off", False),
                                            ("the index parser", False), ("retry backs off", True)])
def test_compaction_costs_what_the_pack_counts_at_every_budget(question, lean):
    # An HTML gap of blanks cost nothing (its visible text is an empty line) though the joined
    # snippet holds it, and an over-long line's pieces were costed apart from the line before
    # them: the selection ran over, and the pack's hard limit dropped its last snippet -- at
    # some budgets the best, or every one ("0/19 tokens", "no evidence"); lean ran over its share.
    eng = Engine.memory()
    for path, text in _page_docs().items():
        eng.add_document(path, text)
    eng.flush()
    hits = eng.search(question, top_k=20)
    for budget in range(1, 260):
        limit = pack_mod.lean_budget(budget) if lean else budget
        snippets = pack_mod.compact_hits(eng, question, hits, budget, lean)
        assert sum(s.tokens for s in snippets) <= limit, (budget, [(s.path, s.start, s.col_start, s.tokens) for s in snippets])
        packed = eng.pack(question, budget, lean=lean)
        check_pack(eng, packed, budget)
        assert packed["used_tokens"] <= limit

"""Passage compaction: units, exact spans, joining, selection within a budget, evidence weights."""

import pytest
from hypothesis import given, settings, strategies as st

from ragweb import analysis
from ragweb import compact as cp
from ragweb.analysis import Analyzer
from ragweb.chunking import outline, split_lines
from ragweb.markup import show_html, visible
from ragweb.tokens import count_tokens

DOC = """# Tool

Intro line one. It has two sentences.

## Options

### retries

Type: `number`\\
Default: `10`

The maximum amount of times to retry. Must be an integer, e.g. 3 or more. See the notes.

- First item of a list
- Second item that wraps
  over two lines. It ends here.

```js
const a = 1;
const b = 2;

// a comment before the call
run(a, b);
```

| key | value |
|---|---|
"""


@pytest.fixture(autouse=True)
def sentences_of_short_paragraphs(monkeypatch):
    """These tests cut tiny paragraphs into sentences; the whole-paragraph rule has its own test."""
    monkeypatch.setattr(cp, "PARAGRAPH_WHOLE_TOKENS", 0)


def offset(lines, line, col):
    """Character offset of (1-based line, col) in "\\n".join(lines)."""
    return sum(len(x) + 1 for x in lines[:line - 1]) + col


def exact(lines, u):
    whole = "\n".join(lines)
    return whole[offset(lines, u.start, u.col_start):offset(lines, u.end, u.col_end)]


def units_of(text, markdown=True):
    lines = split_lines(text)
    return lines, cp.split_units(lines, 1, len(lines), markdown)


def test_every_unit_is_the_exact_text_of_its_span():
    lines, units = units_of(DOC)
    assert units
    for u in units:
        assert u.text == exact(lines, u) == cp.span_text(lines, u.start, u.col_start, u.end, u.col_end)
        assert u.text.strip()


def test_units_are_in_document_order_and_do_not_overlap():
    lines, units = units_of(DOC)
    for a, b in zip(units, units[1:]):
        assert (a.end, a.col_end) <= (b.start, b.col_start)


def test_kinds_headings_code_rows_and_sentences():
    lines, units = units_of(DOC)
    kinds = {u.text: u.kind for u in units}
    assert kinds["## Options"] == "heading"
    assert kinds["| key | value |"] == "row"
    assert kinds["Intro line one."] == "text"
    assert kinds["It has two sentences."] == "text"
    # a short group of code lines between blank lines is one unit
    assert kinds["const a = 1;\nconst b = 2;"] == "code"
    assert kinds["// a comment before the call\nrun(a, b);"] == "code"


def pre_units(text, code):
    """Units of ``text`` with lines ``code`` (0-based) read as code, as an HTML page's <pre>."""
    lines = split_lines(text)
    ol = outline(lines, True)
    ol.code |= set(code)
    return lines, cp.split_units(lines, 1, len(lines), True, ol=ol)


def test_code_of_a_pre_element_stays_in_document_order_and_section():
    # a <pre> ends without a fence line: its code is one unit before the text after it
    lines, units = pre_units("## A\n\nFor example:\n$ pg_ctl stop\nThe server stops.\n\n## B\n\nLater.\n", [3])
    assert [(u.text, u.kind, u.headings) for u in units[1:4]] == [
        ("For example:", "text", ("A",)), ("$ pg_ctl stop", "code", ("A",)),
        ("The server stops.", "text", ("A",))]


def test_a_command_continued_over_lines_is_one_unit_of_a_long_code_group():
    # gnutls's manual: "$ certtool --load-ca-certificate ca.pem \\" / "--load-certificate ..." /
    # "--to-p12 ..." in a <pre> too long for one unit was three, and a pack held the command
    # without its last line; a C macro's forty continued lines stay lines
    cmd = ["$ certtool --load-ca-certificate ca.pem \\", "  --load-certificate cert.pem --load-privkey key.pem \\",
           "  --to-p12 --outder --outfile key.p12", "$ ls"]
    macro = ["#define LONG(x) \\"] + [f"  step_{i}(x); \\" for i in range(40)] + ["  done(x)"]
    lines, units = pre_units("Run:\n" + "\n".join(cmd + macro) + "\n", range(1, 1 + len(cmd) + len(macro)))
    code = [u for u in units if u.kind == "code"]
    assert code[0].text == "\n".join(cmd[:3]) and (code[0].start, code[0].end) == (2, 4)
    assert code[0].col_end == len(cmd[2])
    assert code[1].text == "$ ls" and code[2].text == macro[0] and len(code) == 2 + len(macro)


def test_a_sentence_ending_inside_markup_ends_in_an_html_view():
    shown = show_html("<p>It ends <code>here.</code> Second one <b>starts.</b></p><p>Third.</p>"
                      "<p>Use <code>x.</code> <b>then</b> this.</p>")
    _, units = units_of(shown)
    assert [visible(u.text) for u in units] == [
        "It ends here.", "Second one starts.", "Third.", "Use x. then this."]


def test_a_sentence_interrupted_by_a_short_code_display_is_one_unit():
    # "... to set" / RemoveIPC=no / "in logind.conf.": no part of it says anything alone
    lines, units = pre_units("Alternatively, it is recommended to set\n\nRemoveIPC=no\n\n"
                             "in /etc/systemd/logind.conf or another file. Then restart it.\n", [2])
    assert [u.text for u in units] == [
        "Alternatively, it is recommended to set\n\nRemoveIPC=no\n\nin /etc/systemd/logind.conf or another file.",
        "Then restart it."]
    assert units[0].kind == "text" and units[0].text == exact(lines, units[0])
    # a finished sentence, a capital after the code, or a long display: separate units
    for text, code in (("Set this.\n\nX=1\n\nin lower case anyway.\n", [2]),
                       ("We set\n\nX=1\n\nThen more.\n", [2]),
                       ("We set\n\n" + "".join(f"key{i} = value{i}\n" for i in range(12)) + "\nin a file.\n",
                        range(2, 14))):
        _, units = pre_units(text, code)
        assert len(units) >= 3 and units[0].text.split()[-1] in ("this.", "set")


def test_link_reference_definitions_are_not_units():
    # the rendered page shows none of them; they would match every API name they list
    text = ("Call [`dns.lookup()`][] to resolve a name.\n\n"
            "[`dns.lookup()`]: #dnslookuphostname-options-callback\n"
            "  [docs]: https://example.com/docs \"Docs\"\n"
            "[not a definition] because no colon follows.\n"
            "[x]: within a paragraph, text.\n")
    _, units = units_of(text)
    texts = [u.text for u in units]
    assert texts[0] == "Call [`dns.lookup()`][] to resolve a name."
    # (one unit or two sentences: what matters is that it is all there, as text)
    assert "\n".join(texts[1:]) == "[not a definition] because no colon follows.\n[x]: within a paragraph, text."
    assert not any("#dnslookup" in t or "example.com" in t for t in texts)
    _, units = units_of(text, markdown=False)  # a program's lines are all code
    assert len(units) == 5


def test_sentences_split_inside_a_line_with_columns():
    lines, units = units_of(DOC)
    first, second = [u for u in units if u.start == 3]
    assert (first.col_start, first.col_end) == (0, len("Intro line one."))
    assert second.col_start == len("Intro line one. ") and second.col_end == len(lines[2])


def test_abbreviation_and_lowercase_do_not_end_a_sentence():
    lines, units = units_of(DOC)
    texts = [u.text for u in units]
    assert "Must be an integer, e.g. 3 or more." in texts


@pytest.mark.parametrize("sentences", [
    ["数据库的备份每天凌晨三点自动运行。", "你知道吗？", "「对。」", "好！", "然后我们回家"],  # no space after them
    ["バックアップは毎晩実行されます。", "本当ですか？"],
    ["डेटाबेस का बैकअप हर रात चलता है।", "उसे किताब।", "यह ठीक है॥", "और"],  # a danda after any word
    ["هل يعمل النسخ الاحتياطي؟", "نعم"],
    ["یہ ٹھیک ہے۔", "ہاں"],
    ["ሰላም ነው።", "እንዴት"],
    ["Բարեւ ձեզ։", "Ինչպես"],
])
def test_sentences_end_at_the_full_stops_of_other_scripts(sentences):
    """Only ". ! ?" ended a sentence: a Chinese or Hindi paragraph was one unit, and a small
    budget packed nothing of it."""
    sep = "" if sentences[0][0] in "数バ" else " "
    lines, units = units_of("# Doc\n\n" + sep.join(sentences) + "\nsecond line" + sep + sentences[0] + "\n")
    assert [u.text for u in units[1:]] == sentences[:-1] + [sentences[-1] + "\nsecond line" + sep + sentences[0]]
    assert all(u.text == exact(lines, u) for u in units)


def test_a_small_budget_packs_the_answer_sentence_of_a_chinese_or_hindi_page():
    from ragweb.engine import Engine
    from test_pack import check_pack
    zh = ["今天天气很好，我们去公园散步。", "他喜欢读书和写字，也喜欢画画。", "这个城市有很多历史建筑和博物馆。"]
    hi = ["आज मौसम अच्छा है और हम पार्क में टहलते हैं।", "उसे पढ़ना और लिखना पसंद है।", "इस शहर में कई ऐतिहासिक इमारतें हैं।"]
    for pool, sep, answer, question in (
            (zh, "", "数据库的备份每天凌晨三点自动运行。", "数据库备份什么时候运行"),
            (hi, " ", "डेटाबेस का बैकअप हर रात तीन बजे चलता है।", "डेटाबेस बैकअप कब चलता है")):
        sentences = [pool[i % 3] for i in range(40)]
        sentences[23] = answer
        eng = Engine.memory()
        eng.add_document("doc.md", "# Doc\n\n" + sep.join(sentences) + "\n")
        eng.flush()
        packed = eng.pack(question, 60)
        check_pack(eng, packed, 60)
        assert any(answer in s["text"] for s in packed["snippets"]), packed["snippets"]


def test_hard_line_break_splits_and_list_items_are_separate():
    lines, units = units_of(DOC)
    texts = [u.text for u in units]
    assert "Type: `number`\\" in texts and "Default: `10`" in texts
    assert "- First item of a list" in texts
    wrapped = next(u for u in units if u.text.startswith("- Second item"))
    assert wrapped.text == "- Second item that wraps\n  over two lines. It ends here."
    assert wrapped.end == wrapped.start + 1


def test_a_short_list_item_is_one_unit_and_a_long_one_is_sentences(monkeypatch):
    item = "- `scheduling` {string} How to pick a free socket. **Default:** `'lifo'`."
    lines, units = units_of(item + "\n")
    assert [u.text for u in units] == [item]
    monkeypatch.setattr(cp, "ITEM_WHOLE_TOKENS", 10)
    lines, units = units_of(item + "\n")
    assert [u.text for u in units] == ["- `scheduling` {string} How to pick a free socket.",
                                       "**Default:** `'lifo'`."]
    # a paragraph that is not a list item is sentences unless it is very short
    lines, units = units_of(item[2:] + "\n")
    assert len(units) == 2
    monkeypatch.setattr(cp, "PARAGRAPH_WHOLE_TOKENS", 20)
    lines, units = units_of(item[2:] + "\n")
    assert [u.text for u in units] == [item[2:]]


def test_headings_above_a_unit_are_recorded():
    lines, units = units_of(DOC)
    u = next(u for u in units if u.text.startswith("The maximum amount"))
    assert u.headings == ("Tool", "Options", "retries")


def test_region_starting_inside_a_code_fence_knows_it():
    lines = split_lines(DOC)
    inside = next(i for i, x in enumerate(lines, 1) if x == "const b = 2;")
    ctx = cp.file_context(lines, inside, True)
    assert ctx[0] is True and [h for _, h in ctx[1]] == ["Tool", "Options", "retries"]
    units = cp.split_units(lines, inside, inside, True, ctx)
    assert [(u.kind, u.text) for u in units] == [("code", "const b = 2;")]


def test_non_markdown_lines_are_code_units():
    lines, units = units_of("def f():\n    return 1\n\n" + "x = 1  # " + "long " * 60 + "\n", markdown=False)
    assert [u.kind for u in units] == ["code", "code"]
    assert units[0].text == "def f():\n    return 1"


def test_join_runs_merges_only_across_whitespace():
    lines, units = units_of(DOC)
    for u in units:
        u.file = 0
    a, b = [u for u in units if u.start == 3]
    item1 = next(u for u in units if u.text == "- First item of a list")
    runs = cp.join_runs(lines, [b, a, item1])
    assert [r.text for r in runs] == ["Intro line one. It has two sentences.", "- First item of a list"]
    assert runs[0].col_start == 0 and runs[0].col_end == len(lines[2])


def test_join_runs_spans_blank_lines_between_paragraphs():
    lines, units = units_of("First para.\n\nSecond para.\n")
    runs = cp.join_runs(lines, units)
    assert len(runs) == 1 and runs[0].text == "First para.\n\nSecond para." and runs[0].end == 3


def test_a_long_blank_stretch_parts_runs_and_selection_does_not_pay_for_it():
    # a page's blanked markup (an HTML view) or a break in the text: two passages
    far = "First para.\n" + "   \n" * (cp.JOIN_BREAKS - 1) + "Second para.\n"
    farther = "First para.\n" + "   \n" * cp.JOIN_BREAKS + "Second para.\n"
    lines, units = units_of(far)
    assert len(cp.join_runs(lines, units)) == 1
    lines, units = units_of(farther)
    assert [r.text for r in cp.join_runs(lines, units)] == ["First para.", "Second para."]
    for u in units:
        u.file, u.score = 0, 1.0
    assert cp.link_lengths(units, {0: lines}) == [None, None]
    chosen = cp.select_units(units, count_tokens("First para.") + count_tokens("Second para."), {0: lines})
    assert len(chosen) == 2  # each costs its own text: no blank lines between them are paid for


def _scored(text, question, markdown=True):
    an = Analyzer()
    lines, units = units_of(text, markdown)
    for u in units:
        u.file = 0
    qterms = an.query_terms(question)
    vocab = set()
    for u in units:
        vocab.update(an.term_counts(u.text))
    related = analysis.related_terms(qterms, vocab)
    weights = {t: 1.0 for t in qterms}
    cp.score_units(units, weights, an, related)
    return lines, units, weights


def test_the_unit_with_the_answer_scores_best():
    lines, units, _ = _scored(DOC, "what is the maximum number of retries")
    best = max(units, key=lambda u: u.score)
    assert best.text.startswith("The maximum amount")


def test_neighbour_and_heading_bonus_lift_the_default_line():
    lines, units, _ = _scored(DOC, "retries maximum amount")
    default = next(u for u in units if u.text == "Default: `10`")
    unrelated = next(u for u in units if u.text == "- First item of a list")
    assert default.direct == 0 and default.score > unrelated.score


def test_select_units_respects_the_budget_exactly():
    lines, units, weights = _scored(DOC, "maximum retries list items code run comment")
    for budget in (1, 3, 10, 25, 60, 1000):
        chosen = cp.select_units(units, budget, {0: lines}, 0.0)
        cost = sum(r.tokens for r in cp.join_runs(lines, chosen))
        assert cost <= budget


def test_select_units_takes_nothing_when_no_unit_fits():
    lines, units, weights = _scored(DOC, "maximum retries")
    smallest = min(count_tokens(u.text) for u in units if u.score > 0)
    assert cp.select_units(units, smallest - 1, {0: lines}, 0.0) == [] or smallest == 1


def test_select_units_nothing_when_nothing_matches():
    lines, units, weights = _scored(DOC, "zebra")
    assert cp.select_units(units, 1000, {0: lines}, 0.0) == []


def test_min_relative_drops_weak_units():
    lines, units, weights = _scored(DOC, "maximum retries list")
    everything = cp.select_units(units, 10_000, {0: lines}, 0.0)
    strong = cp.select_units(units, 10_000, {0: lines}, 0.9)
    assert 0 < len(strong) < len(everything)
    best = max(u.score for u in units)
    assert all(u.score >= 0.9 * best for u in strong)


def _pages_units(pages: dict, question: str) -> list:
    """The units of several Markdown pages (file id -> lines), scored for ``question``."""
    an = Analyzer()
    units = []
    for fid, lines in pages.items():
        for u in cp.split_units(lines, 1, len(lines), True):
            u.file = fid
            units.append(u)
    cp.score_units(units, {t: 1.0 for t in an.query_terms(question)}, an, {})
    return units


def test_the_same_sentence_is_not_packed_twice():
    # two pages repeat an option's description (as generated docs do); a third sentence matches less
    repeated = "The retries option sets how many times a failed request is retried."
    pages = {0: ["# a", "", repeated, "", "Unrelated text here."],
             1: ["# b", "", repeated, "", "Retries wait between attempts."]}
    units = _pages_units(pages, "how many retries for a failed request")
    chosen = cp.select_units(units, 1000, pages, 0.0)
    texts = [u.text for u in chosen]
    assert texts.count(repeated) == 1 and "Retries wait between attempts." in texts
    # where it joins a passage that is taken already, a repeat this long is still not taken
    # (`DEDUP_JOIN_CHARS`; a short one is, below)
    for u in units:
        u.score = 0.0
    by = {(u.file, u.text): u for u in units}
    by[1, "Retries wait between attempts."].score = 3.0
    by[0, repeated].score = 2.0
    by[1, repeated].score = 1.0
    chosen = cp.select_units(units, 1000, pages, 0.0)
    assert sorted((u.file, u.text) for u in chosen) == sorted([(0, repeated), (1, "Retries wait between attempts.")])


def test_a_sentence_of_a_paragraph_packed_from_a_twin_page_is_not_packed_again():
    # a page's source packs a short paragraph whole; its HTML build cuts the same text into
    # sentences (AsciiDoc and HTML side by side, as git's docs ship): those sentences are in
    # the pack already
    para = "- Prune entries older than the time. Skip the reachable ones."  # a list item: one unit
    pages = {0: ["# a", "", para, "", "Other words."],
             1: ["# b", "", "Prune entries older than the time.", "",
                 "Skip the reachable ones.", "", "Entries older than the time are pruned by gc."]}
    units = _pages_units(pages, "prune old reachable entries time")
    scores = {para: 3.0, "Prune entries older than the time.": 2.0, "Skip the reachable ones.": 1.5}
    for u in units:
        u.score = scores.get(u.text, min(u.score, 1.0))
    chosen = {(u.file, u.text) for u in cp.select_units(units, 1000, pages, 0.0)}
    assert (0, para) in chosen and (1, "Entries older than the time are pruned by gc.") in chosen
    assert (1, "Prune entries older than the time.") not in chosen
    assert (1, "Skip the reachable ones.") not in chosen
    cp.DEDUP_CONTAINED, old = False, cp.DEDUP_CONTAINED
    try:
        chosen = {(u.file, u.text) for u in cp.select_units(units, 1000, pages, 0.0)}
    finally:
        cp.DEDUP_CONTAINED = old
    assert (1, "Prune entries older than the time.") in chosen


def test_a_unit_made_of_sentences_packed_from_a_twin_page_is_not_packed_again():
    # the other way round: the HTML build's sentences are packed first, then its source's
    # list item holding both (git's docs: the .txt keeps an item whole, the .html cuts it)
    item = "- Prune entries older than the time. Skip the reachable `ones`."
    pages = {0: ["# a", "", "Prune entries older than the time.", "", "Skip the reachable ones.", "",
                 "Other words."],
             1: ["# b", "", item, "", "Entries older than the time are pruned by gc."]}
    units = _pages_units(pages, "prune old reachable entries time")
    scores = {"Prune entries older than the time.": 3.0, "Skip the reachable ones.": 2.5, item: 2.0}
    for u in units:
        u.score = scores.get(u.text, min(u.score, 1.0))
    chosen = {(u.file, u.text) for u in cp.select_units(units, 1000, pages, 0.0)}
    assert (0, "Prune entries older than the time.") in chosen and (0, "Skip the reachable ones.") in chosen
    assert (1, item) not in chosen and (1, "Entries older than the time are pruned by gc.") in chosen
    # an item that says more than the packed sentences is packed
    longer = item + " Then count the loose objects that are left."
    pages[1][2] = longer
    units = _pages_units(pages, "prune old reachable entries time")
    for u in units:
        u.score = scores.get(u.text, 2.0 if u.text == longer else min(u.score, 1.0))
    assert (1, longer) in {(u.file, u.text) for u in cp.select_units(units, 1000, pages, 0.0)}


def test_a_twin_pages_passage_is_not_packed_again_next_to_its_own_taken_sentence():
    # a page's HTML build and its source say the same paragraph; the source's second
    # sentence is taken first, then the build's first: the source's first sentence, a
    # long repeat next to a taken unit of its page, is not taken again to complete it
    one = "Rebasing interactively means that you have a chance to edit the commits which are rebased."
    two = "You can reorder the commits, and you can remove them (weeding out bad patches)."
    pages = {0: ["# a", "", one, "", "Unrelated text here."], 1: ["# b", "", one, two]}
    units = _pages_units(pages, "rebase commits interactively reorder")
    scores = {(1, two): 3.0, (0, one): 2.0, (1, one): 1.0}
    for u in units:
        u.score = scores.get((u.file, u.text), 0.0)
    chosen = {(u.file, u.text) for u in cp.select_units(units, 1000, pages, 0.0)}
    assert chosen == {(0, one), (1, two)}


def test_a_short_repeat_completes_a_passage_unless_that_passage_is_a_repeat_too():
    # "Defaults to 30 seconds." closes two options' pages: next to the other page's own
    # sentence it is taken again; next to a sentence that a twin page packed, it is not
    read, other, short = ("The read timeout is how long a reply may take to arrive here.",
                          "The connect timeout is how long a connection may take to open.", "Defaults to 30 seconds.")
    pages = {0: ["# a", "", read, short], 1: ["# b", "", read, short], 2: ["# c", "", other, short]}
    units = _pages_units(pages, "read connect timeout default seconds")
    scores = {(0, read): 3.0, (1, short): 2.9, (0, short): 2.8, (2, other): 2.7, (1, read): 2.0, (2, short): 1.0}
    for u in units:
        u.score = scores.get((u.file, u.text), 0.0)
    assert len(units) == 9 and all(u.score for u in units if u.kind == "text")
    chosen = {(u.file, u.text) for u in cp.select_units(units, 1000, pages, 0.0)}
    assert chosen == {(0, read), (0, short), (1, short), (2, other), (2, short)}


def test_same_text_key_reads_rest_roles_as_sphinx_shows_them():
    rst = ("If :func:`gather` is *cancelled*, :exc:`CancelledError` is raised by "
           ":meth:`~asyncio.Task.cancel`; see :ref:`the guide <asyncio-dev>` and :py:class:`!Future`.")
    html = ("If gather() is cancelled, CancelledError is raised by cancel(); "
            "see the guide and Future.")
    assert cp.same_text_key(rst) == cp.same_text_key(html)
    # without ~ the whole target is shown; plain text with colons is left alone
    assert cp.same_text_key(":class:`asyncio.Task`") == cp.same_text_key("asyncio.Task")
    assert cp.same_text_key("ratio 3:`4`") == "ratio34"


def test_a_heading_named_in_a_sentence_packed_from_another_page_is_still_packed():
    # the settings page titles the answer "### SESSION_COOKIE_AGE"; the sessions page's
    # "Defaults to SESSION_COOKIE_AGE." holds its letters, but is no twin of the heading
    pages = {0: ["# Sessions", "", "Defaults to SESSION_COOKIE_AGE."],
             1: ["# Settings", "", "### SESSION_COOKIE_AGE", "", "Default: 1209600 (2 weeks, in seconds)"]}
    units = _pages_units(pages, "default SESSION_COOKIE_AGE")
    scores = {"Defaults to SESSION_COOKIE_AGE.": 3.0, "### SESSION_COOKIE_AGE": 2.0,
              "Default: 1209600 (2 weeks, in seconds)": 1.5}
    for u in units:
        u.score = scores.get(u.text, 0.0)
    chosen = {u.text for u in cp.select_units(units, 1000, pages, 0.0)}
    assert set(scores) <= chosen


def test_entity_words():
    q = "What SLA does Redis give on AWS c7g in 2026, and does `onIdle` or GraphQL help? Python too."
    assert list(cp.entity_words(q)) == ["SLA", "Redis", "AWS", "c7g", "2026", "GraphQL"]
    # the asker's own names, written as code, are not names the docs should know
    q = "I did set(MyFlag ON) and ${MYFLAG} is empty; -DOUT_DIR=/tmp and HAVE_ZLIB too, unlike Redis."
    assert list(cp.entity_words(q)) == ["Redis"]
    # ... nor are the asker's addresses and networks (a version or a port is a number the docs may state)
    q = "Why does Require not ip 203.0.113.0/24 or 2001:db8::/32 block 192.168.1.10? Fixed in 2.4.58 on port 8080?"
    assert list(cp.entity_words(q)) == ["Require", "2", "4", "58", "8080"]


def test_evidence_weights_rank_unknown_names_over_seen_terms_over_absent_words():
    an = Analyzer()
    q = "does the queue support redis persistence with Redis"
    qterms = an.query_terms(q)
    w = cp.evidence_weights(q, qterms, {"queue": 0.1, "support": 1.0}, 50, an)
    assert w["redi"] > w["support"] > w["persist"] > w["queue"]
    # a name some other file of the index mentions is incidental, not a sign of no answer
    known = cp.evidence_weights(q, qterms, {"queue": 0.1, "support": 1.0}, 50, an, known={"redi"})
    assert known["redi"] == known["persist"] == w["persist"]


def test_an_identifier_of_known_parts_is_not_an_unknown_name():
    an = Analyzer()
    q = "why is HAVE_ZLIB commented out while Argon2id works"
    qterms = an.query_terms(q)
    assert {"have_zlib", "zlib", "argon2id"} <= set(qterms)
    idf = {"zlib": 2.0, "comment": 1.0}
    w = cp.evidence_weights(q, qterms, idf, 50, an, known=set(idf))
    # the user's own name built of words the index knows weighs as an everyday absent word
    assert w["have_zlib"] == w["work"] < w["zlib"]
    # a name none of whose parts the index knows stays a strong sign of no answer
    assert w["argon2id"] > 10 * w["have_zlib"]
    # ... and so does one with a part the index does not know ("id" is known, "argon" not)
    w = cp.evidence_weights(q, qterms, idf, 50, an, known=set(idf) | {"id"})
    assert w["argon2id"] > 10 * w["have_zlib"]
    # a name the index knows whole ("Pytorch") is known, even where the question splits it
    q = "can we run this without PyTorch"
    qterms = an.query_terms(q)
    assert {"pytorch", "torch"} <= set(qterms)
    w = cp.evidence_weights(q, qterms, {"pytorch": 2.0, "run": 1.0}, 50, an, known={"pytorch", "run"})
    assert w["torch"] == w["without"] < w["run"]

    # a camelCase name the index knows by its parts is not unknown: its lowercase form, which
    # has lost the parts, says only whether the whole name is known
    q = "what does decodeComplete return so quickly"
    qterms = an.query_terms(q)
    idf = {"decod": 2.0, "complet": 2.0, "return": 1.0}
    w = cp.evidence_weights(q, qterms, idf, 50, an, known=set(idf))
    assert w["decodecomplet"] == w["quick"] < w["return"]


def test_the_askers_own_values_are_blanked_for_the_evidence():
    line = ('2024-05-02 10:14:07.123 UTC [48213] ERROR: canceling statement due to statement timeout; '
            'File "app.py", line 679, in run; object at 0x7f3a2c1d9e80; took 12:03:44')
    out = cp.without_values(line)
    assert len(out) == len(line)
    assert out.split() == ["UTC", "[", "]", "ERROR:", "canceling", "statement", "due", "to", "statement",
                           "timeout;", "File", '"app.py",', "line", ",", "in", "run;", "object", "at", ";",
                           "took"]
    # the documents' own numbers stay: versions, ports, options, years, a line number in prose
    kept = "Fixed in 2.4.58 on port 8080 with -j4 since 2024, see line 12 of the guide"
    assert cp.without_values(kept) == kept


# --- properties -------------------------------------------------------------------------
LINE = st.one_of(
    st.just(""), st.just("```"), st.just("```js"), st.just("# Title"), st.just("### sub heading"),
    st.just("| a | b |"), st.just("- item one. Item two!"), st.just("  - nested e.g. this"),
    st.just("\\"), st.just("    indented code"),
    st.just("====="), st.just("---"), st.just("~~~~~~~~~~~~"), st.just("^^^^^^^^^^^^^^^^"), st.just("Sub"),
    st.just("你好。我们走！「对。」然后？"), st.just("यह है। वह॥ ठीक؟ نعم"),
    st.text(st.sampled_from(list("ab c.!?`\\-*#|\t")), max_size=60),
    st.lists(st.sampled_from(["word", "Next.", "end?", "i.e.", "x", "  ", "U.S.", "42.", "`c`."]),
             max_size=15).map(" ".join),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=30), st.booleans(), st.data())
def test_units_are_exact_ordered_and_disjoint_for_any_text(raw, markdown, data):
    lines = raw
    first = data.draw(st.integers(1, len(lines)))
    last = data.draw(st.integers(first, len(lines)))
    ol = outline(lines, markdown) if markdown else None
    if ol is not None and data.draw(st.booleans()):  # some lines in an HTML <pre>: code without fences
        ol.code |= {i for i in data.draw(st.sets(st.integers(0, len(lines) - 1))) if i not in ol.fence}
    units = cp.split_units(lines, first, last, markdown, ol=ol)
    prev = (first, 0)
    for u in units:
        assert first <= u.start <= u.end <= last
        assert u.text == exact(lines, u) and u.text.strip()
        assert (u.start, u.col_start) >= prev
        prev = (u.end, u.col_end)
    # every non-blank character of the region outside fence lines is in some unit
    covered = sum(len("".join(u.text.split())) for u in units)
    fences = (ol or outline(lines, markdown)).fence
    region = [x for i, x in enumerate(lines[first - 1:last], first - 1) if i not in fences]
    assert covered == len("".join("".join(region).split()))


@settings(max_examples=150, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=30), st.integers(1, 200),
       st.lists(st.sampled_from(["word", "item", "title", "code", "next", "end"]), min_size=1, max_size=4),
       st.sampled_from([0.0, 0.5, 0.99]), st.booleans())
def test_selection_cost_is_exact_and_within_budget(lines, budget, words, floor, context):
    an = Analyzer()
    units = cp.split_units(lines, 1, len(lines), True)
    for u in units:
        u.file = 0
    qterms = an.query_terms(" ".join(words))
    weights = {t: 1.0 for t in qterms}
    cp.score_units(units, weights, an, {})
    chosen = cp.select_units(units, budget, {0: lines}, floor, context=context)
    assert len({id(u) for u in chosen}) == len(chosen)  # no unit twice
    runs = cp.join_runs(lines, chosen)
    assert sum(r.tokens for r in runs) <= budget
    assert sum(len(r.units) for r in runs) == len(chosen)  # no unit dropped as overlapping
    for r in runs:
        assert r.text == cp.span_text(lines, r.start, r.col_start, r.end, r.col_end)
    for a, b in zip(runs, runs[1:]):  # runs are disjoint and in document order
        assert (a.end, a.col_end) <= (b.start, b.col_start)
    best = max((u.score for u in units), default=0.0)
    by_score = [u for u in chosen if u.score >= floor * best and u.score > 0]
    if not context:
        assert len(by_score) == len(chosen)
    index = {id(u): i for i, u in enumerate(units)}
    anchors = [index[id(u)] for u in by_score]
    for u in chosen:  # context: near a unit taken by score, in its section
        i = index[id(u)]
        assert any(abs(i - a) <= cp.CONTEXT_DISTANCE and units[a].section == u.section for a in anchors)


def test_query_weights_power_sharpens_and_related_terms_stand_in():
    idf = {"rare": 4.0, "common": 1.0, "max": 2.0}
    flat = cp.query_weights(idf, ["rare", "common", "maximum", "unknown"], {"maximum": {"max": 0.5}})
    assert flat == {"rare": 4.0, "common": 1.0, "maximum": 2.0}
    sharp = cp.query_weights(idf, ["rare", "common"], None, 1.5)
    assert sharp["rare"] / sharp["common"] == 8.0


def test_heading_context_adds_the_section_heading_of_a_selected_unit(monkeypatch):
    lines, units, weights = _scored(DOC, "maximum amount")
    best = max(units, key=lambda u: u.score)
    assert best.text.startswith("The maximum amount")
    floor = 0.99  # only the best unit passes
    without = cp.select_units(units, 1000, {0: lines}, floor)
    monkeypatch.setattr(cp, "HEADING_CONTEXT", True)
    with_heading = cp.select_units(units, 1000, {0: lines}, floor)
    assert [u.text for u in without] == [best.text]
    assert sorted(u.text for u in with_heading) == sorted([best.text, "### retries"])
    tight = cp.select_units(units, count_tokens(best.text), {0: lines}, floor)
    assert [u.text for u in tight] == [best.text]  # the heading only comes when it fits


# --- context fill, section coverage, file prior, local IDF ------------------------------
API_DOC = """# lib

## API

### AbortError(message)

Abort retrying and reject the promise. No callback functions will be called.

Another sentence here. And one more after it. A fourth one closes the paragraph.

### other(thing)

Unrelated words about something else entirely.
"""


def _api_units(question, weights=None):
    an = Analyzer()
    lines, units = units_of(API_DOC)
    qterms = an.query_terms(question)
    cp.score_units(units, weights or {t: 1.0 for t in qterms}, an, {})
    return lines, units


def test_context_fill_brings_the_sentences_under_a_selected_heading():
    lines, units = _api_units("aborterror")
    best = max(units, key=lambda u: u.score)
    assert best.text == "### AbortError(message)"
    plain = cp.select_units(units, 1000, {0: lines}, 0.99)
    assert [u.text for u in plain] == [best.text]
    filled = cp.select_units(units, 1000, {0: lines}, 0.99, context=True)
    texts = [u.text for u in filled]
    assert texts[0] == best.text  # the units chosen by score come first
    assert "Abort retrying and reject the promise." in texts
    assert "No callback functions will be called." in texts
    # never past CONTEXT_DISTANCE units, never into the next section
    assert len(filled) == 1 + cp.CONTEXT_DISTANCE
    assert "### other(thing)" not in texts and "Unrelated words about something else entirely." not in texts
    runs = cp.join_runs(lines, filled)
    assert len(runs) == 1 and runs[0].text.startswith("### AbortError(message)\n\nAbort retrying")


def test_context_fill_goes_both_ways_nearest_first_and_only_with_leftover_budget():
    lines, units = _api_units("another sentence")
    best = max(units, key=lambda u: u.score)
    assert best.text == "Another sentence here."
    filled = cp.select_units(units, 1000, {0: lines}, 0.99, context=True)
    texts = {u.text for u in filled}
    # before it (the previous paragraph and the heading are in the same section) and after it
    assert {"And one more after it.", "No callback functions will be called."} <= texts
    # a budget that only fits the best unit: no context at all
    tight = cp.select_units(units, count_tokens(best.text), {0: lines}, 0.99, context=True)
    assert [u.text for u in tight] == [best.text]
    # a budget for one more unit: the adjacent one (the nearest context) is the one taken
    one_more = cp.select_units(units, count_tokens(best.text + " And one more after it."), {0: lines},
                               0.99, context=True)
    assert [u.text for u in one_more] == [best.text, "And one more after it."]


def test_context_budget_caps_the_fill_but_not_the_units_chosen_by_score():
    lines, units = _api_units("another sentence")
    best = max(units, key=lambda u: u.score)
    full = cp.select_units(units, 1000, {0: lines}, 0.99, context=True)
    assert len(full) > 1
    # a context budget of the best unit alone: the unit chosen by score, no context
    capped = cp.select_units(units, 1000, {0: lines}, 0.99, context=True,
                             context_budget=count_tokens(best.text))
    assert [u.text for u in capped] == [best.text]
    # room for one more: the nearest context unit, as with a small budget
    one_more = cp.select_units(units, 1000, {0: lines}, 0.99, context=True,
                               context_budget=count_tokens(best.text + " And one more after it."))
    assert [u.text for u in one_more] == [best.text, "And one more after it."]
    # the units chosen by score may use the whole budget even past the context budget
    every = cp.select_units(units, 1000, {0: lines}, 0.0, context=True, context_budget=1)
    assert {u.text for u in every} == {u.text for u in units if u.score > 0}


def test_context_distance_zero_disables_the_fill(monkeypatch):
    lines, units = _api_units("aborterror")
    monkeypatch.setattr(cp, "CONTEXT_DISTANCE", 0)
    assert len(cp.select_units(units, 1000, {0: lines}, 0.99, context=True)) == 1


SECTIONS_DOC = """# doc

## First

The alpha setting is described here. Filler text sits between. More filler follows it.
It also covers beta in detail.

## Second

The alpha setting is mentioned here. Filler text sits between. More filler follows it.
Nothing else of interest.
"""


def test_a_section_covering_more_of_the_question_ranks_its_units_higher(monkeypatch):
    an = Analyzer()
    q = "alpha beta"
    weights = {t: 1.0 for t in an.query_terms(q)}

    def alpha_scores():
        lines, units = units_of(SECTIONS_DOC)
        cp.score_units(units, weights, an, {})
        return [u.score for u in units if u.text.startswith("The alpha setting is")]

    first, second = alpha_scores()
    assert first > second
    monkeypatch.setattr(cp, "SECTION_BONUS", 0.0)
    first, second = alpha_scores()
    assert first == second


def test_file_prior_scales_scores():
    an = Analyzer()
    weights = {t: 1.0 for t in an.query_terms("alpha")}
    lines, units = units_of(SECTIONS_DOC)
    cp.score_units(units, weights, an, {})
    full = {u.key: u.score for u in units}
    lines, units = units_of(SECTIONS_DOC)
    for u in units:
        u.file_prior = 0.25
    cp.score_units(units, weights, an, {})
    for u in units:
        assert u.score == pytest.approx(full[u.key] * 0.25 ** cp.FILE_PRIOR_POWER)


def test_local_idf_lowers_a_term_every_candidate_unit_contains():
    an = Analyzer()
    lines, units = units_of("Zorp one. Zorp two. Zorp three with quux. Zorp four.\n")
    cp.prepare_units(units, an)
    idf = {"zorp": 3.0, "quux": 3.0}
    assert cp.blend_local_idf(idf, units, 0.0) == idf
    local = cp.blend_local_idf(idf, units, 1.0)
    assert local["zorp"] < local["quux"]
    half = cp.blend_local_idf(idf, units, 0.5)
    assert half["zorp"] == pytest.approx((3.0 * local["zorp"]) ** 0.5)
    assert local["zorp"] < half["zorp"] < 3.0


def test_local_idf_lets_the_rarer_word_among_the_candidates_decide():
    # "zorp" is rare in the index but in every candidate sentence (the subject of the file
    # they come from); "blorb" is commoner in the index but only in the one answer here.
    an = Analyzer()
    text = "".join(f"Zorp does thing number {i} its own way. " for i in range(12)) + "The blorb applies here.\n"
    lines, units = units_of(text)
    cp.prepare_units(units, an)
    qterms = an.query_terms("zorp blorb")
    idf = {"zorp": 4.0, "blorb": 1.5}

    def best_text(share):
        weights = cp.query_weights(cp.blend_local_idf(idf, units, share), qterms)
        cp.score_units(units, weights, an, {})
        return max(units, key=lambda u: (u.score, -u.start)).text

    assert best_text(0.0).startswith("Zorp does thing")
    assert best_text(0.5) == "The blorb applies here."


RST_DOC = """==========
The Manual
==========

Intro text about the tool.

Installing
----------

Run the installer. It asks for a folder.

Options
^^^^^^^

The retries option sets how often it retries.

Uninstalling
------------

Remove the folder.
"""


def test_underlined_headings_are_heading_units_with_their_adornments():
    lines, units = units_of(RST_DOC)
    heads = [u for u in units if u.kind == "heading"]
    assert [u.text for u in heads] == ["==========\nThe Manual\n==========", "Installing\n----------",
                                      "Options\n^^^^^^^", "Uninstalling\n------------"]
    retries = next(u for u in units if u.text.startswith("The retries option"))
    assert retries.headings == ("The Manual", "Installing", "Options")  # levels by first appearance
    remove = next(u for u in units if u.text == "Remove the folder.")
    assert remove.headings == ("The Manual", "Uninstalling")


def test_a_region_starting_at_an_underline_keeps_the_line_in_a_unit():
    lines = split_lines(RST_DOC)
    under = lines.index("----------") + 1  # 1-based line of the first underline
    units = cp.split_units(lines, under, under + 2, True)
    assert [u.text for u in units] == ["----------", "Run the installer.", "It asks for a folder."]
    assert units[1].headings == ("The Manual", "Installing")


def test_markdown_setext_headings_and_what_is_not_a_heading():
    doc = ("Title\n=====\n\nSome text.\n\nSection\n---\n\nA paragraph of\nmore text\n---\n\n"
           "Ex:\n~~~\ncode here\n~~~\n\nA line\n***\n")
    lines, units = units_of(doc)
    assert [u.text for u in units if u.kind == "heading"] == ["Title\n=====", "Section\n---"]
    # an underline right under a paragraph line, a tilde fence and a thematic break stay what they are
    assert next(u for u in units if u.text == "code here").kind == "code"
    assert next(u for u in units if u.text.startswith("A paragraph")).headings == ("Title", "Section")


PY_SRC = '''def backoff(attempt):
    """Return the delay before a retry.

    The delay doubles with every attempt. A random jitter of up to
    one second is added, so clients do not retry together.
    """
    # Cap the exponent: 2 ** 10 seconds is already
    # longer than anyone waits. Larger values overflow.
    exp = min(attempt, 10)
    return 2 ** exp + random.random()
'''


def test_comments_and_docstrings_of_a_program_are_cut_into_sentences():
    lines, units = units_of(PY_SRC, markdown=False)
    texts = {u.text: u.kind for u in units}
    # a sentence of a docstring that wraps over two lines is one prose unit
    assert texts["    The delay doubles with every attempt."] == "text"  # whole lines keep their indent
    assert texts["A random jitter of up to\n    one second is added, so clients do not retry together."] == "text"
    # the same for a comment block, "#" of the next line included (the span is exact)
    assert texts["    # Cap the exponent: 2 ** 10 seconds is already\n    # longer than anyone waits."] == "text"
    assert texts['    """'] == "text"  # the docstring's end is not joined to the comment after it
    # code stays code
    assert texts["    exp = min(attempt, 10)\n    return 2 ** exp + random.random()"] == "code"
    assert texts["def backoff(attempt):"] == "code"


def test_a_stop_quoted_in_markup_ends_no_sentence_in_an_html_view():
    # Texinfo's HTML (bash's manual) quotes a literal as &lsquo;<samp>.</samp>&rsquo;; the view
    # compaction reads has its markup as spaces, "the ‘ .        ’ matches", and a closing
    # quote, bracket or comma starts no sentence
    from ragweb.markup import mask_html
    page = ("<p>In the pattern &lsquo;<samp>xxx.txt</samp>&rsquo;, the &lsquo;<samp>.</samp>&rsquo; matches\n"
            "any character. A character (&lsquo;<samp>^$|[]()\\.*+?</samp>&rsquo;) has to be quoted.</p>")
    _, units = units_of(mask_html(page))
    assert [" ".join(visible(u.text).split()) for u in units] == [
        "In the pattern ‘ xxx.txt ’ , the ‘ . ’ matches any character.",
        "A character (‘ ^$|[]()\\.*+? ’ ) has to be quoted."]

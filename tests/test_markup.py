"""HTML pages: read through their view (markup blanked, offsets kept), cited from the stored text."""

import re

import pytest
from hypothesis import given, settings, strategies as st

from ragweb.chunking import PageLines, outline, split_lines
from ragweb.config import default_config
from ragweb.analysis import Analyzer
from ragweb.engine import Engine
from ragweb.tokens import count_tokens
from ragweb.markup import (FILL, code_lines, is_html, is_info, is_man, is_pod, mask_html, pre_lines, readable,
                           reads_shown, show_html, show_info, show_man, show_page, show_pod, visible)
from ragweb import compact as cp

PAGE = """<!DOCTYPE html>
<html><head><title>Widget guide</title>
<style>
.frobnicate { color: red; }
</style>
<script>var quokkaTracker = 1;</script>
</head><body>
<!-- a comment about zeppelins -->
<section><h2 id="retries">Retries<a class="mark" href="#retries">#</a></h2>
<p>The widget retries a failed upload
three times. It waits &lt;5&gt; seconds&nbsp;between tries.</p>
<ul>
<li><code>backoff</code> {number} How long to wait. <strong>Default:</strong> <code>2</code>.</li>
<li><code>jitter</code> {boolean} Randomise the wait.</li>
</ul>
</section>
</body></html>
"""


def test_the_shown_text_and_the_view_keep_every_offset_and_line():
    shown, view = show_html(PAGE), mask_html(PAGE)
    assert len(shown) == len(view) == len(PAGE)
    assert shown.count("\n") == view.count("\n") == PAGE.count("\n")
    assert view == shown.replace(FILL, " ")
    for a, b in zip(PAGE, shown):  # the page's own text, markup, a mark or a named character
        assert a == b or b in FILL + "#- <>"


def test_the_visible_text_is_what_a_reader_sees():
    text = visible(show_html(PAGE))
    assert "It waits <5> seconds between tries." in text
    assert "- backoff {number} How long to wait. Default: 2." in text
    assert "## Retries\n" in text and text.startswith("\n# Widget guide")  # (its permalink "#" is markup)
    for markup in ("<p>", "<code>", "class=", "frobnicate", "quokkaTracker", "zeppelins", "&lt;", "&nbsp;"):
        assert markup not in text


def test_the_view_holds_what_a_reader_sees():
    words = set(mask_html(PAGE).split())
    assert {"Retries", "widget", "retries", "three", "times.", "seconds", "backoff", "Default:"} <= words
    for hidden in ("frobnicate", "quokkaTracker", "zeppelins", "class", "href", "section", "&"):
        assert not any(hidden in w for w in words), hidden
    assert not {"lt", "gt", "nbsp", "amp"} & words


def test_a_bare_short_heading_tag_keeps_a_mark_and_tags_after_it_make_room():
    lines = split_lines(mask_html("<h5>Bare</h5>\n<h5><code>roomy()</code></h5>\n"))
    assert lines[0].split() == ["###", "Bare"]  # "<h5>" holds "### " at most
    assert lines[1].split() == ["#####", "roomy()"]


def test_a_heading_whose_text_starts_on_the_line_below_its_tag_is_one_heading():
    # pretty-printed and generated pages (npm's, git's, SQLite's) break a heading after its tag
    page = ("<h1 id='folders'>\n    <span>Folders</span>\n</h1>\n<p>Where npm puts things.</p>\n"
            "<h1>\ngit-cat-file(1) Manual Page\n</h1>\n<p>Show objects.</p>\n"
            "<h2 id='fk_enable'><span>2. </span>\n  Enabling Foreign Key Support\n</h2>\n<p>Run a pragma.</p>\n")
    view = split_lines(mask_html(page))
    assert view[1].split() == ["#", "Folders"]  # room in the next line's tags: marked there
    assert view[4].split() == ["#"] and view[5] == "git-cat-file(1) Manual Page"  # no room: on the tag's line
    heads = outline(view, True).heads
    assert [h[:2] for h in heads.values()] == [(1, "Folders"), (1, "git-cat-file(1) Manual Page"),
                                               (2, "2. Enabling Foreign Key Support")]
    units = cp.split_units(view, 1, len(view), True)
    assert [u.text.split() for u in units if u.kind == "heading"][-1] == ["##", "2.", "Enabling", "Foreign",
                                                                           "Key", "Support"]
    assert next(u for u in units if "pragma" in u.text).headings == ("git-cat-file(1) Manual Page",
                                                                    "2. Enabling Foreign Key Support")


def test_a_term_whose_text_starts_on_the_line_below_its_tag_is_a_section_too():
    # AsciiDoc's HTML writes every option and configuration variable of git's manual pages as
    # <dt class="hdlist1"> / plain text / </dt>: no tag before the text to hold the mark, so
    # it goes on the tag's line; unmarked, each entry was part of the one above, and a hit
    # on stash.showIncludeUntracked was headed by git-config's last marked term, "xxdiff"
    page = ('<h2 id="_options">OPTIONS</h2>\n<div class="dlist"><dl>\n<dt class="hdlist1">\n'
            '<code>xxdiff</code>\n</dt>\n<dd>\n<p>\nUse xxdiff.\n</p>\n</dd>\n<dt class="hdlist1">\n'
            'stash.showIncludeUntracked\n</dt>\n<dd>\n<p>\nShow untracked files too.\n</p>\n</dd>\n'
            '<dt>\n--soft\n</dt>\n<dd>\n<p>Keep the index.</p>\n</dd>\n</dl></div>\n')
    lines, shown = split_lines(page), split_lines(show_html(page))
    view = split_lines(mask_html(page))
    heads = outline(view, True, PageLines(lines, shown, frozenset())).heads
    assert [title for _, title, _, _ in heads.values()] == [
        "OPTIONS", "xxdiff", "stash.showIncludeUntracked"]  # (a bare "<dt>" has no room for "######": unmarked)
    units = cp.split_units(view, 1, len(view), True, ol=outline(view, True, PageLines(lines, shown, frozenset())))
    assert next(u for u in units if "untracked" in u.text).headings[-1] == "stash.showIncludeUntracked"
    assert "###### \nstash.showIncludeUntracked\n" in visible("\n".join(shown))  # (as a heading's: "# " / "Title")


def test_a_term_tag_with_no_text_on_the_next_line_leaves_no_empty_mark():
    # marked on its tag's line, a <dt class="hdlist1"> followed by a blank line, by its end
    # tag (an empty term) or by the end of the page made no section, but left a bare
    # "###### " line in the snippets and packs of the text around it
    for after in ("\n\n--soft zebra\n</dt>\n<dd><p>x</p></dd>\n", "\n</dt>\n<dd><p>zebra x</p></dd>\n", "\n"):
        page = f'<h2>OPTIONS</h2>\n<p>zebra intro</p>\n<dl>\n<dt class="hdlist1">{after}'
        assert "#" not in visible(show_html(page)).replace("## OPTIONS", ""), after
        eng = Engine.memory()
        eng.add_document("git-reset.html", page)
        eng.flush()
        assert "######" not in eng.pack("zebra", 200)["snippets"][0]["text"], after


def test_controls_are_not_text_unless_left_open():
    page = ('<pre><code>x = 1\n</code><button class="copy-button">copy</button></pre>\n'
            '<p>Pick <select><option>Search Changelog</option></select> a page.</p>\n'
            '<p>An unclosed <button>stays text.</p>\n')
    text = visible(show_html(page))
    assert "copy" not in text and "Changelog" not in text and "Pick  a page." in text
    assert "stays text." in text  # (no closing tag: not cut to the end of the page)


def test_sphinx_viewcode_links_are_not_text():
    page = ('<dl><dt class="sig">ModelAdmin.get_urls()<a class="reference internal" href="../_modules/a.html#M">'
            '<span class="viewcode-link"><span class="pre">[source]</span></span></a></dt>\n'
            '<dd><p>Returns the <span class="pre">URLs</span> [source] of this admin.</p></dd></dl>\n'
            '<pre><span class="k">def</span> <span class="nf">get_urls</span>():<a class="viewcode-back" '
            'href="../ref/a.html#M">[docs]</a>\n</pre>\n')
    lines = split_lines(visible(show_html(page)))
    assert lines[0] == "###### ModelAdmin.get_urls()"
    assert "Returns the URLs [source] of this admin." in lines[1]  # only the links are markup
    assert lines[2] == "def get_urls():"


def test_headings_and_list_items_get_markdown_marks():
    lines = split_lines(mask_html(PAGE))
    heading = next(line for line in lines if "Retries" in line)
    assert heading.startswith("## ") and heading.split()[1] == "Retries"
    assert lines[1].startswith("# ")  # <title> after other tags on its line
    items = [line for line in lines if "backoff" in line or "jitter" in line]
    assert all(line.startswith("- ") for line in items)


@given(st.text(alphabet="<>/!-&;#ab \n\"'=hlit1", max_size=80))
def test_any_text_keeps_its_length_and_lines(text):
    shown = show_html(text)
    assert len(shown) == len(text) and shown.count("\n") == text.count("\n")
    assert len(mask_html(text)) == len(text)


def test_an_unclosed_comment_or_script_blanks_the_rest():
    assert mask_html("ok <!-- never closed\nstill hidden").split() == ["ok"]
    assert mask_html("ok <script>\nhidden").split() == ["ok"]


def test_is_html():
    assert is_html("a/b.html") and is_html("X.HTM") and is_html("c.xhtml")
    assert not is_html("a.md") and not is_html("html.txt")


def _engine():
    eng = Engine.memory()
    eng.add_document("guide/widget.html", PAGE + "\n")  # ends with an empty line
    eng.add_document("notes.md", "# Notes\n\nThe class attribute of a section is set in the stylesheet.\n")
    eng.flush()
    return eng


def test_an_html_page_is_found_by_its_text_not_its_markup():
    eng = _engine()
    assert [h.path for h in eng.search("how many times does the widget retry an upload")][:1] == ["guide/widget.html"]
    for markup_word in ("frobnicate color red", "quokkaTracker", "zeppelins", "class section href"):
        assert all(h.path != "guide/widget.html" for h in eng.search(markup_word)), markup_word
    hit = eng.search("widget retries upload")[0]
    shown = split_lines(show_html(eng.file_text(hit.path)))
    assert hit.visible and hit.to_json()["visible"] is True
    assert hit.text == readable(visible("\n".join(shown[hit.start_line - 1:hit.end_line])))  # what a reader sees
    assert "\n\n\n" not in hit.text and not hit.text.startswith("\n")  # (the page head: no empty lines)
    assert "The widget retries a failed upload" in hit.text and "<p>" not in hit.text
    wide = eng.widen(hit, 2)
    assert wide.visible and "<" not in wide.text.replace("<5>", "")
    assert "visible" not in eng.search("stylesheet class attribute")[0].to_json()  # notes.md: as stored


def check_html_pack(eng, packed, budget):
    """Every snippet of a page is the visible text of the range it cites (its shown lines
    with the markup dropped), the tokens are those of that text, the budget holds."""
    assert packed["used_tokens"] == sum(count_tokens(s["text"]) for s in packed["snippets"]) <= budget
    for s in packed["snippets"]:
        page = reads_shown(s["path"])
        assert s.get("visible") is (True if page else None)
        text = eng.file_text(s["path"])
        lines = split_lines(show_page(s["path"], text) if page else text)
        a, b = map(int, s["range"][1:].split("-"))
        span = "\n".join(lines[a - 1:b])
        if "cols" in s:
            span = span[s["cols"][0]:len(span) - (len(lines[b - 1]) - s["cols"][1])]
        assert s["text"] == (readable(visible(span)) if page else span)
        assert s["text"].strip()


def test_a_packed_html_page_is_its_visible_text_at_the_cited_lines():
    eng = _engine()
    for budget in (20, 40, 60, 1000):
        packed = eng.pack("what is the default backoff wait for widget retries", budget)
        assert packed["snippets"]
        check_html_pack(eng, packed, budget)
    text = "\n".join(s["text"] for s in packed["snippets"])
    assert "Default: 2" in text and "<code>" not in text
    assert "\n\n\n" not in text and not text.startswith("\n")  # the head's lines of tags: not paid for
    assert packed["evidence"] == "sufficient"


def _sections(n=12):
    parts = ["<html><head><title>Big guide</title><style>p { margin: 0 }</style></head><body>"]
    for i in range(n):
        parts.append(f'<section><h2 id="s{i}">Topic {i} of the guide<a href="#s{i}">#</a></h2>')
        parts.append(f"<p>The <code>opt{i}</code> option sets how the widget handles case {i}.\n"
                     f"It is ignored when <em>quiet</em> is set &amp; the run is a dry run.</p>")
        parts.append("<ul>" + "".join(f"<li><code>k{i}_{j}</code> {{string}} Value {j} of topic {i}."
                                      f" <strong>Default:</strong> <code>{j}</code>.</li>\n" for j in range(4)))
        parts.append("</ul></section>")
    return "\n".join(parts) + "\n</body></html>\n"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["widget", "option", "opt3", "default", "topic", "k5_2", "quiet",
                                 "dry", "run", "case", "value", "guide"]), min_size=1, max_size=5),
       st.integers(5, 2500), st.booleans(), st.booleans())
def test_html_packs_cite_exactly_and_keep_the_budget(words, budget, compact, lean):
    eng = Engine.memory()
    eng.add_document("big.html", _sections())
    eng.add_document("minified.html", _sections(6).replace("\n", " "))  # one long line: indexed in pieces
    eng.add_document("notes.md", "# Notes\n\nThe widget option topic is covered in the guide.\n")
    eng.flush()
    packed = eng.pack(" ".join(words), budget, compact=compact, lean=lean)
    check_html_pack(eng, packed, budget)




def old_index() -> Engine:
    """An index as a version before HTML views wrote it (no ``markup`` analysis setting),
    holding a page read as text, a Markdown file and a skipped file."""
    eng = Engine.memory()
    old = dict(eng.settings)
    old.pop("markup")
    eng._set_meta("analysis", old)
    eng._load_state()
    eng.add_document("a.html", PAGE, mtime=5.0)
    eng.add_document("notes.md", "# Notes\n\nThe widget retries uploads.\n", mtime=6.0)
    eng.mark_skipped("blob.bin", 7.0, 3, "binary")
    eng.flush()
    return eng


def test_an_index_built_before_html_views_reads_pages_as_text():
    eng = old_index()
    assert eng.settings_changed and not eng.reads_shown("a.html")
    assert eng.search("frobnicate")  # the old reading: markup is text


def test_reread_indexes_stored_documents_again_with_the_current_settings():
    eng = old_index()
    before = eng.file_states()
    assert eng.settings_changed and eng.search("frobnicate")
    assert eng.reread() == 2
    assert not eng.settings_changed and eng.settings["markup"] >= 1 and eng.reads_shown("a.html")
    assert not eng.search("frobnicate")  # markup is no longer text
    hit = eng.search("widget retries upload")[0]
    assert eng.file_states() == before  # same files, same mtimes, sizes and hashes
    assert eng.skipped_states() == {"blob.bin": (7.0, 3, "binary")}
    assert {h.path for h in eng.search("widget")} == {"a.html", "notes.md"} and hit.text
    # what a reread index saves reads back as current
    again = Engine.from_bytes(eng.to_bytes())
    assert not again.settings_changed and not again.search("frobnicate")


def test_reread_steps_report_progress_and_commit_only_at_the_end():
    eng = old_index()
    steps = eng.reread_steps()
    assert next(steps) == (0, 2)
    assert next(steps) == (1, 2)
    assert next(steps) == (2, 2)
    assert eng.settings_changed is False  # the new reading is in place, not yet committed
    steps.close()  # abandoned before the end: the old index, as it was read, comes back
    assert eng.settings_changed and not eng.reads_shown("a.html") and eng.search("frobnicate")
    assert eng.skipped_states() == {"blob.bin": (7.0, 3, "binary")}
    assert [progress for progress in eng.reread_steps()] == [(0, 2), (1, 2), (2, 2)]
    assert not eng.settings_changed and not eng.search("frobnicate")
    assert eng.skipped_states() == {"blob.bin": (7.0, 3, "binary")}


def test_visible_text_leaves_a_line_of_tags_empty_line_by_line():
    page = "<div>\n    <nav><a href='/'>Home</a></nav>\n    <div class='x'>\n    <p>Body text.</p>\n</div>\n"
    shown = show_html(page)
    assert visible(shown) == "\n\n\nBody text.\n\n"  # (the source's indentation is layout)
    assert visible(shown) == "\n".join(visible(line) for line in shown.split("\n"))


def test_indentation_is_layout_except_in_preformatted_text():
    page = ("<div>\n    <p>Some text\n    continues here.</p>\n  <pre>\n  code indented\n    more</pre>\n"
            "    after <PRE>x\n    y</PRE>\n\tend\n</div>")
    shown = show_html(page)
    assert len(shown) == len(page) and shown.count("\n") == page.count("\n")
    assert visible(shown) == "\nSome text\ncontinues here.\n\n  code indented\n    more\nafter x\n    y\nend\n"


def test_the_view_has_the_stored_lines_even_when_the_last_is_empty():
    eng = _engine()
    hit = eng.search("widget retries upload")[0]
    lines = eng.file_lines([hit.file_id])[hit.file_id]
    assert lines[-1] == ""
    view = eng.file_view(hit.file_id, hit.path, lines)
    assert [len(v) for v in view] == [len(line) for line in lines]


def test_navigation_elements_are_not_text_nested_ones_included():
    page = ("<nav><ul><li><a href='/a'>Alpha menu</a></li></ul></nav>\n"
            "<div role=\"navigation\" id=\"side\"><div class=\"x\"><div>Beta menu</div></div>\n"
            "<div>Gamma menu</div></div>\n<p>Delta body text.</p>\n"
            "<details role=navigation><summary>Contents</summary><details>Epsilon</details></details>\n"
            "<p>Zeta body.</p>\n")
    shown = show_html(page)
    assert len(shown) == len(page) and shown.count("\n") == page.count("\n")
    assert visible(shown).split() == ["Delta", "body", "text.", "Zeta", "body."]
    assert visible(show_html("<nav>never closed\n<p>lost</p>")).split() == []
    # a self-closing start tag still opens the element (as before; it is paired on its own)
    assert visible(show_html("<p>intro</p><nav/><ul><li>menu</li></ul></nav><p>body text</p>")).split() == [
        "intro", "body", "text"]
    # many unclosed page headers and node headers: each paired with its own end
    headers = '<div class="header"><a rel="next">Next</a></div>\n' + '<div class="header"><p>Release notes</p>\n' * 3
    assert visible(show_html(headers + "<p>Body.</p>")).split() == ["Release", "notes"] * 3 + ["Body."]


@pytest.mark.parametrize("before", ["", "\u0130stanbul: ", "\u212a "])  # lowercasing changes the length / not
def test_navigation_is_found_in_any_case_and_only_in_tags(before):
    page = (f"<p>{before}Site navigation, roles and a < b navigation.</p>\n"
            "<DIV ROLE='NAVIGATION'><div>Alpha menu</div></DIV><NaV class=n>Beta menu</nAv>\n"
            "<div class=\"navigation\">Gamma kept</div><p>role=navigation in text</p>\n")
    words = visible(show_html(page)).split()
    assert "Alpha" not in words and "Beta" not in words
    assert {"navigation.", "Gamma", "role=navigation"} <= set(words)


def test_an_aria_menu_is_navigation_and_its_items_leave_no_empty_list_items():
    # mdBook's theme picker atop every page of the Rust book: five "- " lines of nothing
    page = ('<ul id="theme-list" class="theme-popup" aria-label="Themes" role="menu">\n'
            '<li role="none"><button role="menuitem" class="theme" id="light">Light (default)</button></li>\n'
            '<li role="none"><button role="menuitem" class="theme" id="rust">Rust</button></li>\n</ul>\n'
            "<div role='menubar'><a href='/v1'>Version one</a></div>\n"
            '<h1>What Is Ownership?</h1>\n<ul><li>Each value has an owner.</li></ul>\n'
            '<p>The main menu of the editor and its menuitem entries are text.</p>\n')
    lines = [line for line in split_lines(visible(show_html(page))) if line.strip()]
    assert lines == ["# What Is Ownership?", "- Each value has an owner.",
                     "The main menu of the editor and its menuitem entries are text."]


def test_preformatted_lines_are_code_in_compaction():
    page = ("<h2>Example</h2>\n<p>Open the gate with a call.</p>\n"
            "<pre><code class=\"js\"><span class=\"k\">const</span> gate = open();\n"
            "gate.swing(90);\n</code></pre>\n<p>It closes by itself.</p>\n")
    assert pre_lines(page) == {2, 3, 4}
    assert pre_lines("<PRE>a\nb") == {0, 1}  # an unclosed one runs to the end
    eng = Engine.memory()
    eng.add_document("gate.html", page)
    eng.flush()
    hit = eng.search("gate swing open")[0]
    lines = eng.file_lines([hit.file_id])[hit.file_id]
    view = eng.file_view(hit.file_id, hit.path, lines)
    ol = eng.file_outline(hit.file_id, view, True, hit.path)
    units = cp.split_units(view, 1, len(view), True, None, ol)
    kinds = {" ".join(u.text.split()): u.kind for u in units}
    assert kinds["const gate = open(); gate.swing(90);"] == "code"  # one short group of code lines
    assert kinds["Open the gate with a call."] == "text"


def test_block_tags_keep_words_apart_and_inline_tags_do_not():
    assert visible(show_html("<h2>Retry policy</h2><p>Retries <b>back</b> off.</p>")) == "## Retry policy Retries back off."
    # a line's text starts at its first word, however many block tags open it
    assert visible(show_html("<dl><dd><div><p>Simple cache.</p>\n<p>More.</p></div></dd>")) == "Simple cache.\nMore."
    assert visible(show_html("<ul><li>a</li><li>b</li></ul>")) == "- a b"
    assert visible(show_html("use <code>npm pack</code>.\n<p>x</p>\n")) == "use npm pack.\nx\n"
    # a comment, script or style before the first block tag is markup, not a word before it
    page = "<html><head><style>.x{}</style></head><body><h2>Retry policy</h2><p>Retries back off.</p>"
    assert visible(show_html(page)) == "## Retry policy Retries back off."  # (its heading: marked)
    assert visible(show_html("<!-- <b>c</b> --><p>Start</p><p>Next</p>")) == "Start Next"
    assert visible(show_html("<SCRIPT>var a = 1</SCRIPT><div>Go</div>")) == "Go"
    assert visible(show_html("Word<script>x</script><p>Next")) == "Word Next"
    # the second block opening with inline tags (DocBook, AsciiDoc): one space, from its last block tag
    assert visible(show_html("<p>build files).</p><p><code class=\"literal\">ninja -h</code> prints</p>")) == (
        "build files). ninja -h prints")
    assert visible(show_html("a</td><td><span><b>b</b></span></td>")) == "a b"
    assert visible(show_html("end</p>\n<p><code>x</code></p>")) == "end\nx"


_PIECES = ["<p>", "</p>", "<h2>", "</h2>", "<h5 id='x'>", "<li>", "</li>", "<ul>", "<pre><code>", "</code></pre>",
           "<nav>", "</nav>", "<div role=navigation>", "</div>", "<!-- c -->", "<script>x=1</script>", "&lt;",
           "&amp;", "&#10;", "&bogus;", "<b>", "</b>", "\n", "\n\n", " ", "retry", "backoff", "Default:", "10.",
           "The widget", "waits.", "<br>", "<a href='#t'>", "</a>", "<", ">", "x" * 60]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=120), st.integers(1, 400), st.booleans(), st.booleans())
def test_any_html_indexes_searches_and_packs_within_the_budget(pieces, budget, compact, lean):
    page = "".join(pieces)
    eng = Engine.memory()
    eng.add_document("p.html", page)
    eng.add_document("q.md", "The widget retries with backoff.\n")
    eng.flush()
    for h in eng.search("widget retry backoff default"):
        assert h.visible == (h.path == "p.html")
    packed = eng.pack("widget retry backoff default", budget, compact=compact, lean=lean)
    check_html_pack(eng, packed, budget)


def test_stray_angle_brackets_stay_text():
    # "a<b" without a ">" before the next "<" is not a tag: it is what a reader sees. (A tag
    # may not span a "<", which also keeps many such brackets linear, not quadratic.)
    text = "if a<b and c<d then " * 5000 + "<p>done</p>"
    assert visible(show_html(text)) == "if a<b and c<d then " * 5000 + "done"
    assert visible(show_html("x <nav and <pre then <h2 tail")) == "x <nav and <pre then <h2 tail"


def test_a_quoted_angle_bracket_stays_in_its_tag_and_an_entity_permalink_is_markup():
    # Apache's manual: an arrow image's alt text, and "&para;" links after each heading
    page = ('<div class="up"><a href="./index.html"><img title="<-" alt="<-" src="left.gif"></a></div>\n'
            '<h2><a name="Listen" id="Listen">Listen</a> Directive <a title="Permanent link" href="#listen" '
            'class="permalink">&para;</a></h2>\n<p>Say x <b>&gt;</b> 2 <a href="#n">&amp;</a> more.</p>\n')
    lines = [line.rstrip() for line in split_lines(visible(show_html(page)))]
    assert lines == ["", "## Listen Directive", "Say x > 2 & more."]  # (a link "&" is no permalink)
    text = 'a <img alt="' + "<" * 1200 + '"> b'  # (a quoted value is bounded: past that, text)
    assert visible(show_html(text)) == text


def test_a_texinfo_node_header_is_navigation_and_another_header_is_text():
    page = ('<p>Bash is quite portable.</p>\n<hr>\n<div class="header">\n<p>\nNext: <a href="#Defs" accesskey="n" '
            'rel="next">Definitions</a>, Previous: <a href="#What" rel="prev">What is Bash?</a>, Up: <a href="#Intro" '
            'rel="up">Introduction</a> &nbsp; [<a href="#SEC_Contents" rel="contents">Contents</a>]</p>\n</div>\n'
            '<h3 class="section">1.2 What is a shell?</h3>\n<div class="header"><p>Release notes</p></div>\n')
    lines = [line for line in split_lines(visible(show_html(page))) if line.strip()]
    assert lines == ["Bash is quite portable.", "### 1.2 What is a shell?", "Release notes"]


def test_texinfos_table_of_contents_and_printed_index_are_navigation():
    # bashref.html's contents (300 lines) and its five printed indexes (1,200 lines of "PS1:
    # Bourne Shell Variables") were packed as text ("process group:   Definitions")
    page = ('<p>Bash is quite portable.</p>\n<div class="Contents_element" id="SEC_Contents">\n'
            '<h2 class="contents-heading">Table of Contents</h2>\n<div class="contents">\n<ul class="toc-numbered-mark">\n'
            '  <li><a id="toc-Introduction-1" href="#Introduction">1 Introduction</a></li>\n</ul>\n</div>\n</div>\n'
            '<h3 class="appendixsec">D.5 Concept Index</h3>\n<table class="index-cp" border="0">\n'
            '<tr><td></td><td valign="top"><a href="#index-process-group">process group</a>:</td><td>&nbsp;</td>'
            '<td valign="top"><a href="#Definitions">Definitions</a></td></tr>\n</table>\n'
            '<table class="cp-entries-printindex" border="0">\n<tr><td><a href="#x">PS1</a>:</td></tr>\n</table>\n'
            '<div class="contents"><p>Doxygen writes its whole page in this class.</p></div>\n'
            '<table class="index-table"><tr><td>A table of its own.</td></tr></table>\n')
    lines = [line.strip() for line in split_lines(visible(show_html(page))) if line.strip()]
    assert lines == ["Bash is quite portable.", "### D.5 Concept Index", "Doxygen writes its whole page in this class.",
                     "A table of its own."]


def test_texi2htmls_button_panels_and_contents_are_navigation():
    # gettext's manual (texi2html 1.78) has a panel of buttons above and below each section,
    # packed as "[ << ] [ >> ] [Top] [Contents] [Index] [ ? ]", and a contents page of
    # <ul class="toc"> lists of every section's title; a table laid out alike is text
    page = ('<table cellpadding="1" cellspacing="1" border="0">\n'
            '<tr><td valign="middle" align="left">[<a href="gettext_5.html#SEC34" title="Beginning of this chapter or '
            'previous chapter"> &lt;&lt; </a>]</td>\n<td valign="middle" align="left"> &nbsp; </td>\n'
            '<td valign="middle" align="left">[<a href="gettext_toc.html#SEC_Top" title="Cover (top) of document">Top</a>]'
            '</td>\n<td valign="middle" align="left">[<a href="gettext_toc.html#SEC_Contents" title="Table of contents">'
            'Contents</a>]</td>\n</tr></table>\n<h1 class="chapter"> 6. Creating a New PO File </h1>\n'
            '<p>The translator creates a file called LANG.po.</p>\n<h1>Table of Contents</h1>\n<div class="contents">\n'
            '<ul class="toc">\n  <li><a name="TOC1" href="gettext_1.html#SEC1">1. Introduction</a>\n  <ul class="toc">\n'
            '    <li><a name="TOC2" href="gettext_1.html#SEC2">1.1 The Purpose of GNU gettext</a></li>\n  </ul></li>\n'
            '</ul>\n</div>\n<table cellpadding="1" cellspacing="1"><tr><td>A table of its own.</td></tr></table>\n')
    lines = [line.strip() for line in split_lines(visible(show_html(page))) if line.strip()]
    assert lines == ["#  6. Creating a New PO File", "The translator creates a file called LANG.po.",
                     "# Table of Contents", "A table of its own."]


def test_api_indexes_of_gtk_doc_and_docbook_are_navigation():
    # gnutls's api-index-full.html (gtk-doc: 536 KB of "aarch64_sha1, variable in sha-aarch64")
    # and PostgreSQL's bookindex.html (DocBook: "$libdir, Dynamic Loading") were packed as text
    gtkdoc = ('<table class="navigation" id="top" summary="Navigation header"><tr valign="middle">\n'
              '<td class="shortcuts"><a class="shortcut" href="#idxA">A</a>\n <span class="dim">|</span>\n'
              '<a class="shortcut" href="#idxZ">Z</a></td>\n</tr></table>\n<div class="index">\n'
              '<div class="titlepage"><div><div><h1 class="title">\n<a name="api-index-full"></a>API Index</h1>'
              '</div></div></div>\n<a name="idx"></a><a name="idxA"></a><h3 class="title">A</h3>\n<dt>\n'
              'aarch64_sha1, variable in sha-aarch64\n</dt>\n<dd></dd>\n</div>\n'
              '<div class="footer">\n<hr>Generated by GTK-Doc V1.33.1</div>\n')
    lines = [line.strip() for line in split_lines(visible(show_html(gtkdoc))) if line.strip()]
    assert lines == []  # (its footer too: `test_generators_footers_and_groffs_list_of_sections_are_navigation`)
    docbook = ('<div class="index" id="BOOKINDEX"><div class="titlepage"><div><div><h1 class="title">Index</h1></div>'
               '</div></div><div class="index"><p class="indexdiv-quicklinks"><a href="#indexdiv-Symbols">Symbols</a>\n'
               '      |\n      <a href="#indexdiv-A">A</a></p><div class="indexdiv" id="indexdiv-Symbols"><h3>Symbols'
               '</h3><dl><dt id="ientry-id75657">$libdir, <a class="indexterm" href="xfunc-c.html#XFUNC-C-DYNLOAD">'
               'Dynamic Loading</a></dt></dl></div></div></div><p>Text after it.</p>\n')
    lines = [line.strip() for line in split_lines(visible(show_html(docbook))) if line.strip()]
    assert lines == ["Text after it."]
    other = '<div class="index"><p>A landing page whose main text is in this class.</p></div>\n'
    assert visible(show_html(other)).strip() == "A landing page whose main text is in this class."


def test_generators_footers_and_groffs_list_of_sections_are_navigation():
    # each of gettext's texi2html pages closed with "This document was generated by Bruno Haible
    # on July, 26 2020 using texi2html 1.78a.", each gtk-doc page with "Generated by GTK-Doc",
    # and groff's HTML man pages open with a list of links to their sections
    texi = ('<p>The translator creates a file called LANG.po.</p>\n<p>\n <font size="-1">\n  This document was '
            'generated by <em>Bruno Haible</em> on <em>July, 26 2020</em> using <a href="https://www.nongnu.org/'
            'texi2html/"><em>texi2html 1.78a</em></a>.\n </font>\n <br>\n\n</p>\n'
            '<p><font size="-1">Small print of its own.</font></p>\n')
    lines = [line.strip() for line in split_lines(visible(show_html(texi))) if line.strip()]
    assert lines == ["The translator creates a file called LANG.po.", "Small print of its own."]
    gtkdoc = '<p>Frees the key.</p>\n<div class="footer">\n<hr>Generated by GTK-Doc V1.33.1</div>\n'
    assert [line for line in split_lines(visible(show_html(gtkdoc))) if line.strip()] == ["Frees the key."]
    groff = ('<!-- Creator     : groff version 1.22.4 -->\n<html>\n<head>\n'
             '<meta name="generator" content="groff -Thtml, see www.gnu.org">\n<title>MSGMERGE</title>\n</head>\n'
             '<body>\n\n<h1 align="center">MSGMERGE</h1>\n\n<a href="#NAME">NAME</a><br>\n'
             '<a href="#SYNOPSIS">SYNOPSIS</a><br>\n<a href="#REPORTING BUGS">REPORTING BUGS</a><br>\n\n<hr>\n\n\n'
             '<h2>NAME\n<a name="NAME"></a>\n</h2>\n\n\n<p style="margin-left:11%; margin-top: 1em">msgmerge -\n'
             'merge message catalog and template</p>\n<a href="#NAME">Back to NAME</a><br>\n')
    lines = [line.strip() for line in split_lines(visible(show_html(groff))) if line.strip()]
    assert lines == ["# MSGMERGE", "# MSGMERGE", "## NAME", "msgmerge -", "merge message catalog and template",
                     "Back to NAME"]
    # (only groff's: another page's lines of links are its text)
    other = groff.replace("groff -Thtml", "another tool").replace("groff version", "another")
    assert "REPORTING BUGS" in visible(show_html(other))


SPHINX = """<h1>shelf — Keep things<a class="headerlink" href="#x">¶</a></h1>
<p>The module defines the following functions:</p>
<dl class="py function">
<dt class="sig sig-object py" id="shelf.stack">
<span class="sig-prename">shelf.</span><span class="sig-name descname">stack</span>(<em>items</em>)</dt>
<dd><p>Put the boxes on top of each other, the heaviest at the bottom.</p>
<dl class="field-list simple">
<dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><p>items – what to put away.</p></dd>
</dl>
<p>Nothing is dropped when a box is empty.</p>
</dd></dl>
<dl class="py function">
<dt class="sig sig-object py" id="shelf.sort">
<span class="sig-prename">shelf.</span><span class="sig-name descname">sort</span>(<em>items</em>)</dt>
<dd><p>Put the boxes in a row, the lightest first.</p>
<p>An empty box is dropped.</p>
</dd></dl>
<dl><dt>Glossary term</dt>
<dd>A word the docs define.</dd></dl>
"""


def test_definition_terms_are_headings_below_the_pages_own():
    shown = show_html(SPHINX)
    assert len(shown) == len(SPHINX) and shown.count("\n") == SPHINX.count("\n")
    heads = [visible(line).strip() for line in shown.split("\n") if visible(line).startswith("#")]
    # a Sphinx signature starts on the line after its <dt>; a field list's term is no heading
    assert heads == ["# shelf — Keep things", "###### shelf.stack(items)", "###### shelf.sort(items)",
                     "###### Glossary term"]


def test_a_definitions_text_answers_under_its_term():
    eng = Engine.memory()
    eng.add_document("library/shelf.html", SPHINX)
    eng.flush()
    # both entries say what happens to an empty box: the one named by the question leads
    for name, answer, other in (("stack", "Nothing is dropped", "An empty box is dropped"),
                                ("sort", "An empty box is dropped", "Nothing is dropped")):
        packed = eng.pack(f"what does {name} do with an empty box", 30)
        text = " ".join(s["text"] for s in packed["snippets"])
        assert answer in text and other not in text, (name, text)
        check_html_pack(eng, packed, 30)


def test_a_definitions_sentence_carries_its_term():
    # an API entry's description sentence answers, its signature says what it describes:
    # the sentence taken by score brings the <dt> (gnutls's and bash's manuals: a function's
    # description, `${#parameter}`'s "The length in characters", packed without their names)
    eng = Engine.memory()
    eng.add_document("library/shelf.html", SPHINX)
    eng.flush()
    packed = eng.pack("is anything dropped when a box is empty", 40)
    texts = [s["text"] for s in packed["snippets"]]
    assert texts == ["###### shelf.stack(items)", "Parameters:\nitems – what to put away.\n\nNothing is dropped when a box is empty.",
                     "###### shelf.sort(items)", "An empty box is dropped."], texts
    check_html_pack(eng, packed, 40)


def test_a_page_and_its_html_build_in_one_index_are_not_packed_twice():
    # Node's api folder ships every page as Markdown and as HTML; Sphinx builds keep the
    # sources beside the pages. The same sentence from both is one sentence in a pack.
    answer = ("By default, a maximum of `10` listeners can be registered for any single "
              "event, see [`emitter.setMaxListeners(n)`][].")
    other = "Listeners registered with `once()` are removed after they run the first time."
    # the rest of each file differs, so that retrieval keeps both files' chunks
    fa = [f"Paragraph {i} describes sockets, streams and buffers {i * 7} in detail." for i in range(40)]
    fb = [f"Section {i} explains timers, promises and workers {i * 3} at length." for i in range(40)]
    md = "\n\n".join(["# Events", answer, *fa[:5], other, *fa[5:]]) + "\n"
    page = ("<html><body><h1>Events</h1>\n<p>By default, a maximum of <code>10</code> listeners can be "
            "registered for any single event, see <a href='#x'><code>emitter.setMaxListeners(n)</code></a>.</p>\n"
            + "\n".join(f"<p>{p}</p>" for p in fb[:8])
            + "\n<p>Listeners registered with <code>once()</code> are removed after they run the first time.</p>\n"
            + "\n".join(f"<p>{p}</p>" for p in fb[8:]) + "\n</body></html>\n")
    eng = Engine.memory()
    eng.add_document("events.md", md)
    eng.add_document("events.html", page)
    eng.flush()
    packed = eng.pack("what is the maximum number of listeners for one event, and what about once", 300)
    said = cp.same_text_key("\n".join(s["text"] for s in packed["snippets"]))
    assert said.count(cp.same_text_key(answer)) == 1, packed["snippets"]  # once, from either file
    assert said.count(cp.same_text_key(other)) == 1, packed["snippets"]
    assert cp.same_text_key("See [the `docs`](https://x.y/z) and [more][ref].") == "seethedocsandmore"


def _shown_rows(eng):
    return eng.conn.execute("SELECT file FROM shown ORDER BY file").fetchall()


def _fresh_reads(eng, q):
    """(path, range, text) of the hits and the pack of ``q``, read by a new engine over the same database."""
    again = Engine(eng.conn, eng.config)
    hits = [(h.path, h.range, h.text) for h in again.search(q)]
    packed = again.pack(q, 300)
    return hits, [(s["path"], s["range"], s["text"]) for s in packed["snippets"]]


def test_a_pages_shown_text_is_kept_when_indexed_and_hits_read_the_same_without_it():
    from ragweb import store
    eng = _engine()
    (fid,) = eng.conn.execute("SELECT id FROM files WHERE path = 'guide/widget.html'").fetchone()
    assert store.get_shown(eng.conn, fid) == show_html(eng.file_text("guide/widget.html"))
    assert len(_shown_rows(eng)) == 1  # pages only: notes.md has none
    kept = _fresh_reads(eng, "widget retries upload")
    assert kept[0] and kept[1]
    saved = Engine.from_bytes(eng.to_bytes())  # the page's IndexedDB copy keeps it too
    assert store.get_shown(saved.conn, fid) is not None and _fresh_reads(saved, "widget retries upload") == kept
    store.drop_shown(eng.conn)  # an index written before pages were kept: read them again
    assert store.get_shown(eng.conn, fid) is None and _fresh_reads(eng, "widget retries upload") == kept


def test_a_kept_shown_text_for_other_text_or_damaged_is_not_used():
    from ragweb import store
    eng = _engine()
    (fid,) = eng.conn.execute("SELECT id FROM files WHERE path = 'guide/widget.html'").fetchone()
    kept = _fresh_reads(eng, "widget retries upload")
    eng.conn.execute("UPDATE shown SET sha256 = 'other'")  # a page of that id since, by an older ragweb
    assert store.get_shown(eng.conn, fid) is None and _fresh_reads(eng, "widget retries upload") == kept
    eng.conn.execute("UPDATE shown SET sha256 = (SELECT sha256 FROM files WHERE id = ?), data = x'00ff'", (fid,))
    assert store.get_shown(eng.conn, fid) is None and _fresh_reads(eng, "widget retries upload") == kept


def test_removing_or_replacing_a_page_forgets_its_kept_shown_text():
    from ragweb import store
    eng = _engine()
    eng.add_document("guide/widget.html", PAGE.replace("three times", "five times"))
    (fid,) = eng.conn.execute("SELECT id FROM files WHERE path = 'guide/widget.html'").fetchone()
    assert _shown_rows(eng) == [(fid,)] and "five times" in store.get_shown(eng.conn, fid)
    assert eng.remove_document("guide/widget.html") and _shown_rows(eng) == []
    eng.add_document("guide/widget.html", PAGE)
    eng.reset()
    assert store.get_shown(eng.conn, fid) is None
    assert not eng.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'shown'").fetchone()


def test_asciidoc_preprocessor_lines_are_not_words():
    """git's fetch-options.txt names git-pull in ifdef/endif lines: a question about `git
    pull` must not find it by them; its snippets still show the file's lines as they are."""
    from ragweb.markup import mask_directives

    text = "ifdef::git-pull[]\n--rebase::\n\tReplay the commits.\nendif::git-pull[]\ninclude::merge-opts.txt[]\n"
    masked = mask_directives(text)
    assert len(masked) == len(text) and masked.split("\n")[1:3] == text.split("\n")[1:3]
    assert "git" not in masked and "merge" not in masked
    assert mask_directives("Write ifdef::x[] inline, or a::b[c] on its own line.\n").startswith("Write ifdef")
    eng = Engine.memory()
    eng.add_document("fetch-options.txt", "ifdef::git-pull[]\n--all::\n\tFetch every remote.\nendif::git-pull[]\n")
    eng.add_document("git-pull.txt", "git-pull(1)\n===========\n\nFetch from a remote and integrate with a local branch.\n")
    eng.add_document("notes.md", "Our ifdef::git-pull[] lines are markup.\n")  # not alone on its line: text
    eng.flush()
    assert [h.path for h in eng.search("git pull")] == ["git-pull.txt", "notes.md"]
    hit = eng.search("every remote")[0]  # shown as stored
    assert (hit.path, hit.text) == ("fetch-options.txt", "ifdef::git-pull[]\n--all::\n\tFetch every remote.\nendif::git-pull[]")
    # compaction reads the same words: the directive lines add nothing to a unit's terms
    unit = cp.Unit(1, 0, 2, 11, "ifdef::git-pull[]\n--verbose::", "text")
    cp.prepare_units([unit], Analyzer())
    assert unit.all_terms == {"verbos"}


def chunk_headings(path: str, page: str, chunk_tokens: int = 512) -> list[str]:
    cfg = default_config()
    cfg["index"]["chunk_tokens"] = chunk_tokens
    cfg["index"]["chunk_overlap"] = 4
    eng = Engine.memory(cfg)
    eng.add_document(path, page)
    return [h for (h,) in eng.conn.execute("SELECT heading FROM chunks ORDER BY id")]


def test_each_piece_of_a_page_on_one_line_is_headed_by_its_own_section():
    # (a minified page of many sections: once headings after text were sections, every piece
    # was headed by the line's last heading, "Logging", the install steps too)
    def section(title, word):
        return f"<h2>{title}</h2><p>" + f"The {word} step is explained here with care. " * 120 + "</p>"
    page = ("<html><head><title>Guide</title></head><body><h1>Guide</h1><p>Intro.</p>"
            + section("Install", "install") + section("Retry", "retry") + section("Logging", "logging") + "</body></html>")
    eng = Engine.memory()
    eng.add_document("guide.html", page)
    rows = eng.conn.execute("SELECT heading, col_start, col_end FROM chunks ORDER BY id").fetchall()
    assert len(rows) > 6 and [h for h, _, _ in rows] == sorted((h for h, _, _ in rows), key=["Guide", "Install",
                                                                                                 "Retry", "Logging"].index)
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"<h[1-6]>([^<]*)<", page)]
    for heading, a, b in rows:  # (a piece is headed by the last section that starts before its end)
        assert heading == [title for at, title in starts if at < b][-1]
    assert {h for h, _, _ in rows} >= {"Install", "Retry", "Logging"}


def test_a_page_on_one_line_heads_its_chunks_with_the_title_not_the_rest_of_the_line():
    # minified HTML (rustdoc writes every page so): the heading tag starts the line, and the
    # rest of the line was taken as its title, then stored with every piece of the line
    body = " ".join(f"Sentence {i} explains how the scheduler retries a failed job." for i in range(600))
    page = f"<html><head><title>Jobs</title></head><body><h2>Retries</h2><p>{body}</p></body></html>"
    headings = chunk_headings("min.html", page)
    assert len(headings) > 10 and set(headings) == {"Retries"}  # (the section the line's text is in)
    # and a Markdown heading of a whole page's length is cut, at a word
    md = "# " + body + "\n\nmore text\n"
    (heading,) = set(chunk_headings("a.md", md, 64))
    assert heading.endswith(" ...") and len(heading) <= 304 and body.startswith(heading[:-4])


def test_lines_of_pre_are_code_not_headings_and_a_page_has_no_markdown_fences():
    page = ("<html><body><h2>Querying</h2>\n<p>Count the widgets the scheduler refreshed.</p>\n<pre>\n"
            "SELECT count(*) AS widget_count FROM widgets;\nwidget_count\n------------\n 42\n"
            "# install the tool first\n$ make install\n</pre>\n"
            "<p>The counter is refreshed by the scheduler every minute.</p>\n" * 3 +
            "<h2>Release notes</h2>\n<p>Release 2.0<br>\n~~~~~~~~~~~<br>\nNew gizmo.</p>\n"
            "<h2>Removing gizmo</h2>\n<p>Delete the binary to uninstall gizmo.</p>\n" + "<p>Filler text.</p>\n" * 20 +
            "</body></html>\n")
    headings = chunk_headings("q.html", page, 32)
    assert set(headings) <= {"Querying", "Release notes", "Release 2.0", "Removing gizmo"}, set(headings)
    assert "Removing gizmo" in headings  # (a "~~~" line did not open a fence that hid it)
    lines = split_lines(mask_html(page))
    shown = split_lines(show_html(page))
    ol = outline(lines, True, PageLines(split_lines(page), shown, pre_lines(page)))
    assert not ol.fence and pre_lines(page) <= ol.code


def test_a_title_is_its_shown_text_up_to_its_end_tag():
    page = ("<dl><dt><code>json</code>.dumps(<em>obj</em>, indent=None)</dt><dd>Serialize obj to JSON.</dd></dl>\n"
            "<dl><dt><code>--track-origins</code>=&lt;yes|no&gt;</dt><dd>Track origins.</dd></dl>\n")
    lines, shown = split_lines(mask_html(page)), split_lines(show_html(page))
    heads = outline(lines, True, PageLines(split_lines(page), shown, frozenset())).heads
    assert [h[1] for h in heads.values()] == ["json.dumps(obj, indent=None)", "--track-origins=<yes|no>"]


def test_an_empty_or_numbered_heading_closed_on_its_line_does_not_take_the_next_paragraph():
    page = ("<h1>Guide</h1>\n<h3></h3>\n<p>Body about frobnication.</p>\n\n"
            "<h3>2.</h3>\n<p>Numbered, closed.</p>\n\n<h2><span>3. </span>\nStill joined\n</h2>\n\n<p>x</p>\n")
    lines, shown = split_lines(mask_html(page)), split_lines(show_html(page))
    ol = outline(lines, True, PageLines(split_lines(page), shown, frozenset()))
    assert [h[1] for h in ol.heads.values()] == ["Guide", "2.", "3. Still joined"]
    assert not any("frobnication" in lines[i] or "Numbered" in lines[i] for i in ol.adorn)


def test_blocks_keep_their_space_when_inline_tags_follow_a_closing_one():
    page = ('<div><h2>See Also</h2><span class="simplelist"><a href="alter.html"><span>ALTER WIDGET</span></a></span></div>'
            '<p>Stored in the catalog.</p><a href="x.html">Next page</a><ul><li>one</li></ul><span>Footnote</span>'
            '<table><tr><td>cell</td></tr></table><em>Emphasis</em> and <b>Kuber</b>netes')
    text = visible(show_html(page))
    for words in ("See Also ALTER WIDGET", "catalog. Next page", "one Footnote", "cell Emphasis", "Kubernetes"):
        assert words in text, (words, text)


def test_numeric_character_references_without_their_semicolon_are_read():
    shown = show_html("<p>Icons &#xf17c/&#xf179 and &#60;b&#62 and &amp; &copy and AT&T</p>")
    assert visible(shown) == "Icons \uf17c/\uf179 and <b> and & &copy and AT&T"


def test_navigation_after_many_menu_words_in_text_is_still_found():
    # each "menu" in text looked back to the last "<" before it: quadratic on a long <pre>
    page = "<pre>\n" + "menu item navigation entry\n" * 2000 + "</pre>\n<div role='navigation'>Home Next</div>\n<p>Body</p>"
    text = visible(show_html(page))
    assert "Home Next" not in text and "Body" in text and text.count("menu item") == 2000


def test_words_split_by_a_tag_or_a_character_reference_are_found_as_shown():
    page = ("<html><body><h1>Notes</h1>\n<p>Das Ger&auml;t von M&uuml;ller is a na&iuml;ve approach.</p>\n"
            "<p>Deploy it on <b>Kuber</b>netes, back it up with <code>pg_dump</code>all.</p>\n"
            + "<p>Other words fill the page here.</p>\n" * 40 + "</body></html>\n")
    eng = Engine.memory()
    eng.add_document("notes.html", page)
    eng.add_document("plain.md", "# Plain\n\nNothing about it.\n")
    # and other tags, or hidden elements, part words, as shown (review: all markup joined them)
    eng.add_document("form.html", "<fieldset><legend>options</legend><label>verbose</label>"
                                  "<noscript>Enable JavaScript</noscript><img src=x>Caption</fieldset>\n")
    for q in ("Gerät", "Müller", "naïve", "kubernetes", "pg_dumpall"):
        hits = eng.search(q)
        assert [h.path for h in hits] == ["notes.html"], q
    for q in ("options", "verbose", "javascript", "caption"):
        assert [h.path for h in eng.search(q)] == ["form.html"], q
    packed = eng.pack("pg_dumpall kubernetes", budget=60)
    assert "Kubernetes" in packed["snippets"][0]["text"] and packed["evidence"] == "sufficient"


def test_a_long_line_of_a_page_is_cut_at_a_space_it_shows():
    # cut at a space of the view, a piece could end inside "&gt;": its columns cut the file there
    line = " ".join(f"a&gt;b{i} &amp;&amp; c&lt;d&nbsp;e</p><p>f" for i in range(300))
    page = f"<h2>Ops</h2>\n<p>{line}</p>\n"
    eng = Engine.memory()
    eng.add_document("ops.html", page)
    rows = eng.conn.execute("SELECT col_start, col_end, start_line, heading FROM chunks ORDER BY id").fetchall()
    raw = page.split("\n")
    pieces = [(a, b) for a, b, line, _ in rows if a is not None]
    assert len(pieces) > 3
    for a, b in pieces[:-1]:  # each cut falls after a space the page shows, or after the markup it starts
        assert raw[1][b - 6:b] == "&nbsp;" or raw[1][b - 1] == " " or raw[1][b - 3:b] == "<p>", raw[1][b - 8:b + 4]
    assert pieces[-1][1] == len(raw[1])
    assert all(h == "Ops" for *_, h in rows)


def test_a_control_ends_at_its_end_tag_or_where_the_next_one_starts():
    from ragweb.markup import mask_html
    shown = mask_html('<p>Intro <button>Copy<button class="x">Hide</button> text after.</p>'
                      '<select><option>v1</option><select></select>')
    assert "Intro" in shown and "text after." in shown
    assert "Copy" not in shown and "Hide" not in shown and "v1" not in shown


# ---------------------------------------------------------------------------- POD

PERLFUNC = """=head1 NAME

perlfunc - Perl builtin functions

=head2 Alphabetical Listing of Perl Functions

=over

=item wait
X<wait>

=for Pod::Functions wait for any child process to die

Behaves like L<wait(2)|http://man.he.net/man2/wait> on your system: it waits for a child
process to terminate and returns the pid of the deceased process, or C<-1>.

  # These examples are subject to system-specific variation.
  my $kid = wait;

=item wantarray
X<wantarray> X<context>

Returns true if the context of the currently executing subroutine or
L<C<eval>|/eval EXPR> is looking for a list value.  Returns false if the
context is looking for a scalar.  Returns the undefined value if the context is
looking for no value (void context). See also E<lt>B<< $a <=> $b >>E<gt>.

    return unless defined wantarray; # don't bother doing more

=item *

A bullet whose text is the next paragraph.

=item * A bullet with its text.

=back

=begin html

<p>Only for the HTML build.</p>

=end html

=cut

sub not_pod { 1 }
"""


def test_pod_formatting_codes_and_commands_are_markup():
    shown = show_pod(PERLFUNC)
    assert len(shown) == len(PERLFUNC) and shown.count("\n") == PERLFUNC.count("\n")
    text = readable(visible(shown))
    for markup in ("C<", "L<", "X<", "E<", "B<<", "=item", "=over", "=for", "=back", "=begin", "=cut", "Pod::Functions",
                   "man.he.net", "Only for the HTML build"):
        assert markup not in text, markup
    assert "or -1." in text and "L<C<eval>|/eval EXPR>" not in text and "subroutine or\neval is looking" in text
    assert "See also <$a <=> $b>." in text  # (E<lt> is "<"; B<< ... >> holds a ">")
    heads = [line for line in text.split("\n") if line.startswith("#")]
    assert heads == ["# NAME", "## Alphabetical Listing of Perl Functions", "##### wait", "##### wantarray"]
    assert "\n- A bullet with its text." in text and "- \n" not in text
    # verbatim paragraphs are code, shown as written ("# These examples" is no heading), as is all after =cut
    assert "  # These examples are subject to system-specific variation." in text
    lines = PERLFUNC.split("\n")
    code = code_lines("perlfunc.pod", PERLFUNC)
    assert {lines[i].strip() for i in code} == {"# These examples are subject to system-specific variation.",
                                                  "my $kid = wait;", "return unless defined wantarray; # don't bother doing more",
                                                  "sub not_pod { 1 }"}
    assert is_pod("pod/perlfunc.pod.gz") and reads_shown("a.POD") and not is_pod("Foo.pm")


@pytest.mark.parametrize("pod, shows", [
    ("C<foo>s and I<C<< $x >>>", "foos and $x"),
    ("L<perlipc> L<the docs|perlipc/Signals> L<WNOHANG|POSIX/C<WNOHANG>>", "perlipc the docs WNOHANG"),
    ("X<C<foo>>bar Z<>baz", "bar baz"),
    ("E<lt>E<gt>E<sol>E<verbar>E<0x41>E<65>E<eacute>E<nosuch>", "<>/|AAénosuch"),
    ("C<< $a->b >> and C<<< a >> b >>>", "$a->b and a >> b"),
    ("shift (C<< << >> and C<< >> >>) defined", "shift (<< and >>) defined"),  # (perltoc.pod)
    ("a > b | c and unclosed C<code", "a > b | c and unclosed C<code"),
    ("C<\n$x> wraps", "\n$x wraps"),
    # (a link to a section of the page itself shows the section's name, not "/Prebuilt methods")
    ("see L</Prebuilt methods>) and L</\"Signals\">", "see Prebuilt methods) and \"Signals\""),
])
def test_pod_formatting_codes_show_their_text(pod, shows):
    shown = show_pod(pod)
    assert len(shown) == len(pod) and shown.count("\n") == pod.count("\n")
    assert visible(shown) == shows


def test_a_pod_document_is_searched_and_packed_as_shown_under_its_entries():
    cfg = default_config()
    cfg["index"]["chunk_tokens"], cfg["index"]["chunk_overlap"] = 64, 4
    eng = Engine.memory(cfg)
    eng.add_document("pod/perlfunc.pod", PERLFUNC + "\nFiller about other things.\n" * 40)
    eng.add_document("notes.md", "# Notes\n\nThe wantarray builtin is handy.\n")
    eng.flush()
    hits = {h.path: h for h in eng.search("what does wantarray return in void context")}
    hit = hits["pod/perlfunc.pod"]
    assert hit.visible and hit.heading == "wantarray" and "X<" not in hit.text and "L<" not in hit.text
    assert eng.search("These examples are subject to variation")[0].heading == "wait"  # (not the comment)
    packed = eng.pack("what does wantarray return in void context", 60)
    text = " ".join(s["text"] for s in packed["snippets"] if s["path"].endswith(".pod"))
    assert "Returns the undefined value if the context is" in text and "C<" not in text
    check_html_pack(eng, packed, 60)


_POD_PIECES = ["=head1 ", "=head2 ", "=item ", "=item * ", "=over", "=back", "=cut", "=pod", "=for html ", "=begin html",
               "=end html", "C<", "B<< ", " >>", ">>", "L<", "|", "/", "X<", "E<", "lt", "gt", "Z<>", ">", "<", "\n", "\n\n",
               "    ", " ", "retry", "backoff", "Default:", "The widget", "waits.", "x" * 60]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_POD_PIECES), max_size=120), st.integers(1, 400), st.booleans())
def test_any_pod_indexes_searches_and_packs_within_the_budget(pieces, budget, compact):
    check_shown_page("p.pod", "".join(pieces), show_pod, budget, compact)


def check_shown_page(path: str, page: str, show, budget: int, compact: bool) -> None:
    """A page read as shown (``show``: POD, a man page) keeps its length and lines, its hits
    are marked visible, and a pack of it holds what the budget allows (`check_html_pack`)."""
    shown = show(page)
    assert len(shown) == len(page) and shown.count("\n") == page.count("\n")
    eng = Engine.memory()
    eng.add_document(path, page)
    eng.add_document("q.md", "The widget retries with backoff.\n")
    eng.flush()
    for h in eng.search("widget retry backoff default"):
        assert h.visible == (h.path == path)
    check_html_pack(eng, eng.pack("widget retry backoff default", budget, compact=compact), budget)


# ---------------------------------------------------------------------------- man pages

OPEN_2 = r""".\" Copyright (C) 1992 Drew Eckhardt
.\" SPDX-License-Identifier: Linux-man-pages-copyleft
.TH open 2 2023-02-05 "Linux man-pages 6.03"
.SH NAME
open, openat, creat \- open and possibly create a file
.SH SYNOPSIS
.nf
.B #include <fcntl.h>
.PP
.BI "int open(const char *" pathname ", int " flags );
.BI "int openat(int " dirfd ", const char *" pathname ", int " flags \
", mode_t " mode );
.fi
.SH DESCRIPTION
The
.BR open ()
system call opens the file specified by
.IR pathname .
If the specified file does not exist,
it may optionally (if
.B O_CREAT
is specified in
.IR flags )
be created by
.BR open ().
.SS File creation flags
.TP
.B O_EXCL
Ensure that this call creates the file:
if this flag is specified in conjunction with
.BR O_CREAT ,
and
.I pathname
already exists, then
.BR open ()
fails with the error
.BR EEXIST .
.TP
\fBO_TRUNC\fP
If the file already exists it is truncated to length 0 \(em its \[aq]size\[aq] is \e0.
.IP \(bu 3
A bullet's text.
.PP
.EX
int fd = open("x", O_CREAT | O_EXCL, 0644);  /* \fIfails\fP if x exists */
.EE
.de Sp
.if t .sp .5v
..
"""


def test_man_page_markup_is_hidden_and_its_words_shown():
    shown = show_man(OPEN_2)
    assert len(shown) == len(OPEN_2) and shown.count("\n") == OPEN_2.count("\n")
    text = readable(visible(shown))
    for markup in ("\\f", ".BR", ".TP", ".SH", ".PP", ".nf", ".EX", "\\-", "\\(", "\\[", "Copyright", ".if", '"int'):
        assert markup not in text, markup
    heads = [line for line in text.split("\n") if line.startswith(("# ", "##"))]  # (not "#include")
    assert heads == ["# open(2)", "## NAME", "## SYNOPSIS", "## DESCRIPTION", "### File creation flags"]
    assert "open, openat, creat - open and possibly create a file" in text
    assert "int open(const char *pathname, int flags);" in text  # (.BI joins its arguments)
    assert "int openat(int dirfd, const char *pathname, int flags\n, mode_t mode);" in text  # (a "\" goes on)
    assert "The\nopen()\nsystem call opens the file specified by\npathname.\n" in text
    assert "\n- O_EXCL\nEnsure that this call creates the file:" in text and "\n- O_TRUNC\n" in text
    assert "truncated to length 0 \u2014 its 'size' is \\0." in text and "\n- \nA bullet's text." in text
    # the lines of .nf/.fi and .EX/.EE blocks are code
    lines = OPEN_2.split("\n")
    assert [lines[i][:12] for i in sorted(code_lines("man2/open.2.gz", OPEN_2))] == [
        ".B #include ", ".PP", '.BI "int ope', '.BI "int ope', '", mode_t " ', 'int fd = ope']
    assert is_man("man3/Foo::Bar.3pm.gz") and is_man("open.2") and reads_shown("printf.3.gz")
    assert not is_man("notes.md") and not is_man("v1.2.0") and not is_pod("open.2")


def test_a_man_pages_own_macros_show_their_arguments_and_requests_nothing():
    # Tcl's pages define .AP (an argument) and .QW (a quoted word); pod2man's a preamble
    page = (".de AP\n.ie !\"\\$4\"\" .TP \\$3\n..\n.if n .ad l\n.ds Aq \\(aq\n.TH Tcl_Eval 3tcl 8.1 Tcl\n.SH ARGUMENTS\n"
            ".AS Tcl_Interp **termPtr\n.AP Tcl_Interp *interp in\nInterpreter in which to execute the script.\n"
            ".SH DESCRIPTION\nThe result is \n.QW ok\non success.\n.CS\nset x [eval $script]\n.CE\n.bP\nA bullet.\n")
    shown = show_man(page)
    assert len(shown) == len(page) and shown.count("\n") == page.count("\n")
    assert readable(visible(shown)) == (
        "# Tcl_Eval(3tcl)\n## ARGUMENTS\n\nTcl_Interp *interp in\nInterpreter in which to execute the script.\n"
        "## DESCRIPTION\nThe result is \nok\non success.\n\nset x [eval $script]\n\n- \nA bullet.")
    lines = page.split("\n")
    assert [lines[i] for i in sorted(code_lines("Tcl_Eval.3tcl.gz", page))] == ["set x [eval $script]"]


def test_a_man_page_is_searched_and_packed_as_shown_under_its_sections():
    cfg = default_config()
    cfg["index"]["chunk_tokens"], cfg["index"]["chunk_overlap"] = 64, 4
    eng = Engine.memory(cfg)
    eng.add_document("man2/open.2.gz", OPEN_2)
    eng.add_document("notes.md", "# Notes\n\nThe open call is handy.\n")
    eng.flush()
    hit = next(h for h in eng.search("open fails if the file already exists O_EXCL") if h.path.endswith(".gz"))
    assert hit.visible and hit.heading == "File creation flags" and ".BR" not in hit.text
    packed = eng.pack("which flag makes open fail when the file already exists", 80)
    text = " ".join(s["text"] for s in packed["snippets"] if s["path"].endswith(".gz"))
    assert "O_EXCL" in text and "fails with the error" in text and ".B" not in text and "\\f" not in text
    check_html_pack(eng, packed, 80)



def test_a_file_named_as_a_man_page_that_is_no_roff_is_shown_as_it_is():
    # (a rotated log, app.log.1, that a glob such as "**/*.log*" takes, was read as roff: a pack
    # of it said "C:wlderle.txt" for C:\new\folder\file.txt, and a line's first word after a "."
    # was hidden as a request)
    log = ("2026-01-01 ERROR path C:\\new\\folder\\file.txt not found\n.hidden config line starts with a dot\n"
           "2026-01-01 INFO retry done\n")
    for name in ("logs/app.log.1", "logs/syslog.1"):  # (the first is no man page's name: `files.document_kind`)
        eng = Engine.memory()
        eng.add_document(name, log)
        eng.add_document("man2/open.2.gz", OPEN_2)
        eng.flush()
        hit = eng.search("path not found folder")[0]
        assert hit.path == name and hit.text == log.rstrip("\n")
        packed = eng.pack("path not found folder config line", 200)
        assert packed["snippets"][0]["text"] == log.rstrip("\n")
        check_html_pack(eng, packed, 200)
    # a man page still is roff, whatever its first request
    for first in (".\\\" comment\n", "'\\\" t\n", ".TH x 1\n", ".Dd May 1, 2024\n", ".so man2/open.2\n", ".de X\n..\n"):
        assert FILL in show_page("x.1", first + ".B bold\n"), first
    assert show_page("x.1", ".hidden word\n\\fBnot roff\n") == ".hidden word\n\\fBnot roff\n"


_MAN_PIECES = [".TH x 1 2024 ", ".SH ", ".SS ", ".TP", ".IP ", ".B ", ".BR ", ".I ", ".PP", ".nf", ".fi", ".EX", ".EE",
               ".de X", "..", '"', "\\fB", "\\fP", "\\-", "\\(em", "\\[aq]", "\\e", "\\", "\\\"", "\n", "\n", " ",
               "retry", "backoff", "Default:", "The widget", "waits.", "x" * 60]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_MAN_PIECES), max_size=120), st.integers(1, 400), st.booleans())
def test_any_man_page_indexes_searches_and_packs_within_the_budget(pieces, budget, compact):
    page = ".\\\" a man page\n" + "".join(pieces)  # (read as roff whatever its pieces: `markup.is_roff`)
    check_shown_page("p.1", page, show_man, budget, compact)


# ---------------------------------------------------------------------------- Info files

COREUTILS_INFO = ("This is coreutils.info, produced by makeinfo version 6.7 from\ncoreutils.texi.\n\n"
                  "\x1f\nFile: coreutils.info,  Node: Top,  Next: sort invocation,  Up: (dir)\n\nGNU Coreutils\n"
                  "*************\n\nThis manual documents the core utilities.\n\n"
                  "\x1f\nFile: coreutils.info,  Node: sort invocation,  Next: shuf invocation,  Prev: Top,  Up: Top\n\n"
                  "7.1 'sort': Sort text files\n===========================\n\n"
                  "'sort' sorts, merges, or compares all the lines from the given files.\n\n"
                  "'-n'\n'--numeric-sort'\n     Sort numerically.\n\n'-r'\n'--reverse'\n"
                  "     Reverse the result of comparison, so that lines with greater key\n"
                  "     values appear earlier in the output instead of later.\n\n"
                  + "     Filler about other options of sort.\n" * 60 +
                  "\n\x1f\nTag Table:\nNode: Top\x7f120\nNode: sort invocation\x7f300\n\x1f\nEnd Tag Table\n\n"
                  "\x1f\nLocal Variables:\ncoding: utf-8\nEnd:\n")


def test_info_node_headers_and_tables_are_hidden_and_titles_are_sections():
    shown = show_info(COREUTILS_INFO)
    assert len(shown) == len(COREUTILS_INFO) and shown.count("\n") == COREUTILS_INFO.count("\n")
    text = readable(visible(shown))
    for markup in ("\x1f", "File: coreutils.info", "Node:", "Tag Table", "\x7f", "Local Variables", "coding: utf-8"):
        assert markup not in text, markup
    assert "'-r'\n'--reverse'\n     Reverse the result of comparison" in text
    assert is_info("info/coreutils.info.gz") and is_info("find.info-1.gz") and reads_shown("x.info")
    assert not is_info("information.md") and not is_info("info/dir")
    cfg = default_config()
    cfg["index"]["chunk_tokens"], cfg["index"]["chunk_overlap"] = 64, 4
    eng = Engine.memory(cfg)
    eng.add_document("info/coreutils.info.gz", COREUTILS_INFO)
    eng.flush()
    hit = eng.search("sort lines in reverse order")[0]
    assert hit.visible and hit.heading == "7.1 'sort': Sort text files" and "Node:" not in hit.text
    packed = eng.pack("how do I sort lines in reverse order", 60)
    assert "Reverse the result of comparison" in " ".join(s["text"] for s in packed["snippets"])
    check_html_pack(eng, packed, 60)


def test_an_exponent_reads_as_one_not_as_digits_run_together():
    """SQLite's "2<sup>31</sup>-1" read "231-1", a wrong number, and indexed the term 231."""
    page = "<p>At most 2<small><sup>31</sup></small>-1 rows, 10<sup class=x>-3</sup> s, the 10<sup>th</sup> try, a<sup>1</sup>.</p>\n"
    shown = show_html(page)
    assert len(shown) == len(page)
    assert readable(visible(shown)) == "At most 2^31-1 rows, 10^-3 s, the 10th try, a1."
    terms = Analyzer(stemming=False).terms(mask_html(page))
    assert "231" not in terms and "31" in terms


def test_a_tagged_paragraphs_indent_is_layout_not_text():
    """Tcl's pages write ".TP 20": the item's indent read as the text "20", a line of its own
    above every flag."""
    page = ".TH Tcl_CancelEval 3tcl 8.6 Tcl\n.SH FLAGS\n.TP 20\n\\fBTCL_CANCEL_UNWIND\\fR\nUnwinds the stack.\n.TQ\n\\fBOTHER\\fR\n"
    shown = show_man(page)
    assert len(shown) == len(page)
    assert readable(visible(shown)) == "# Tcl_CancelEval(3tcl)\n## FLAGS\n\n- TCL_CANCEL_UNWIND\nUnwinds the stack.\n\n- OTHER"


def test_a_bare_heading_or_term_tag_with_no_room_for_its_marks_keeps_its_level():
    # man2html's pages (Debian's bash.html) write each entry as a bare "<DT>${word}": its four
    # characters hold "### " only, and the entry read as a sibling of the <H3> section it is in
    page = ("<H2>EXPANSION</H2>\n<H3>Parameter Expansion</H3>\n<DL COMPACT>\n"
            "<DT>${<I>parameter</I>:-<I>word</I>}<DD>\nUse Default Values.\n</DL>\n"
            "<h4>Bare four</h4>\n<p>Text.</p>\n<h5><code>roomy()</code></h5>\n<h4>\nFour below\n</h4>\n"
            "<dl><dt>\n<code>xxdiff</code>\n</dt><dd>Use xxdiff.</dd></dl>\n")
    lines = split_lines(page)
    view = split_lines(mask_html(page))
    shown = split_lines(show_html(page))
    heads = outline(view, True, PageLines(lines, shown, frozenset())).heads
    assert [(level, title) for level, title, _, _ in heads.values()] == [
        (2, "EXPANSION"), (3, "Parameter Expansion"), (6, "${parameter:-word}"), (4, "Bare four"),
        (5, "roomy()"), (4, "Four below"), (6, "xxdiff")]  # ("<code>" holds "##### " only)


def _page_units(page: str, path: str = "manual.html"):
    """(engine, outline, [(kind, visible text, (start, col, end, col))]) of a page read as a pack reads it."""
    eng = Engine.memory()
    eng.add_document(path, page)
    eng.flush()
    fid = eng.conn.execute("SELECT id FROM files WHERE path = ?", (path,)).fetchone()[0]
    lines = eng.file_lines([fid])[fid]
    view = eng.file_view(fid, path, lines)
    shown = eng.file_shown(fid, path, lines)
    ol = eng.file_outline(fid, view, True, path)
    units = cp.split_units(view, 1, len(view), True, None, ol)
    for u in units:  # each unit is its exact span of the view
        assert u.text == cp.span_text(view, u.start, u.col_start, u.end, u.col_end)
    for u, v in zip(units, units[1:]):  # in order, never overlapping
        assert (u.end, u.col_end) <= (v.start, v.col_start)
    return eng, ol, [(u.kind, " ".join(visible(cp.span_text(shown, u.start, u.col_start, u.end, u.col_end)).split()),
                      (u.start, u.col_start, u.end, u.col_end)) for u in units]


# DocBook's one-page builds (git's user-manual.html) start most sections after the text of the
# one before, on its line
DOCBOOK = ('<html><head><title>Git User Manual</title></head><body><div class="book"><div class="titlepage"><div>'
           '<div><h1 class="title"><a name="id-1"></a>Git User Manual</h1></div></div><hr></div><div class="chapter">'
           '<div class="titlepage"><div><div><h2 class="title"><a name="undo"></a>Chapter 1. Undoing</h2></div></div>'
           '</div><div class="section"><div class="titlepage"><div><div><h3 class="title"><a name="revert"></a>Fixing a '
           'mistake with a new commit</h3></div></div></div><p>Creating a new commit that reverts a change is easy;\n'
           'just pass the command a reference to the bad\ncommit; for example, to revert the most recent commit:</p><pre '
           'class="screen">$ git revert HEAD</pre><p>This will create a new commit which undoes the change.  You\n'
           'will be given a chance to edit the message.</p></div><div class="section"><div class="titlepage"><div><div>'
           '<h3 class="title"><a name="rewrite"></a>Fixing a mistake by rewriting history</h3></div></div></div><p>If '
           'the problematic commit is the most recent commit, you may just\ndestroy it using <code class="literal">git '
           'reset</code>.</p><p>Alternatively, run</p><pre class="screen">$ git commit --amend</pre><p>which replaces '
           'the old commit.</p></div></div></div></body></html>\n')


def test_a_heading_after_text_on_its_line_is_a_section_and_its_title_alone_a_heading_unit():
    # git's user manual: 116 of its 122 headings followed text on their line and were no
    # sections ("... resolving a merge. Fixing a mistake by rewriting history If the problematic
    # commit is ..." one sentence), and a heading that started its line took the rest of the
    # line, the first words of its section, into its heading unit
    eng, ol, units = _page_units(DOCBOOK)
    headings = [text for kind, text, _ in units if kind == "heading"]
    assert headings == ["# Git User Manual", "# Git User Manual", "## Chapter 1. Undoing",
                        "### Fixing a mistake with a new commit", "### Fixing a mistake by rewriting history"]
    assert [h[2:] for i in sorted(ol.heads) for h in ol.inline.get(i, [(0, 0, *ol.heads[i][:2])])] == [
        (1, "Git User Manual"), (1, "Git User Manual"), (2, "Chapter 1. Undoing"),
        (3, "Fixing a mistake with a new commit"), (3, "Fixing a mistake by rewriting history")]
    texts = [text for kind, text, _ in units if kind == "text"]
    assert "If the problematic commit is the most recent commit, you may just destroy it using git reset." in texts
    assert "This will create a new commit which undoes the change." in texts
    view = eng.file_view(1, "manual.html", eng.file_lines([1])[1])
    rewrite = next(u for u in cp.split_units(view, 1, len(view), True, None, ol) if "may just" in u.text)
    assert rewrite.headings == ("Git User Manual", "Chapter 1. Undoing", "Fixing a mistake by rewriting history")
    # a chunk is headed by the last heading of the line it starts on (a heading starts a chunk)
    assert [h for (h,) in eng.conn.execute("SELECT heading FROM chunks ORDER BY id")] == [
        "Fixing a mistake with a new commit", "Fixing a mistake by rewriting history"]
    packed = eng.pack("how do I rewrite history to fix a mistake in the most recent commit", 60)
    check_html_pack(eng, packed, 60)
    assert "If the problematic commit" in packed["snippets"][0]["text"]


def test_code_inside_a_line_of_text_is_a_code_unit_between_its_sentences():
    # DocBook writes "...commit:</p><pre>$ git revert HEAD</pre><p>This will ..." on one line:
    # the line was one code unit, code and the sentences around it together
    _, ol, units = _page_units(DOCBOOK)
    assert ("code", "$ git revert HEAD") in [(kind, text) for kind, text, _ in units]
    assert ("text", "Creating a new commit that reverts a change is easy; just pass the command a reference to the "
                    "bad commit; for example, to revert the most recent commit:") in [(k, t) for k, t, _ in units]
    # a sentence the code interrupts ("run" / "$ git commit --amend" / "which ...") is one unit
    assert ("text", "Alternatively, run $ git commit --amend which replaces the old commit.") in \
        [(k, t) for k, t, _ in units]
    # a line where a <pre> ends or starts and shows nothing is no code line: its heading is one
    page = ("<p>Run:</p>\n<pre>\nmake\n</pre><div><h2>Description</h2><p>\nIt builds the widget.\n</p>\n"
            "<p>Then:</p><pre>\nmake install\n</pre>\n")
    _, ol, units = _page_units(page, "b.html")
    assert [(k, t) for k, t, _ in units] == [("text", "Run:"), ("code", "make"), ("heading", "## Description"),
                                             ("text", "It builds the widget."), ("text", "Then:"),
                                             ("code", "make install")]
    assert not ol.mixed


def test_a_blank_line_of_the_source_inside_a_sentence_does_not_cut_it():
    # man2html (Debian's bash.html) writes an empty line after each ".I" / ".B" line, inside
    # sentences: "If parameter | is unset or null, the expansion of word | is substituted."
    # were three units, none of them saying anything alone
    page = ("<DL COMPACT>\n<DT>${<I>parameter</I><B>:-</B><I>word</I>}<DD>\n<B>Use Default Values</B>.  If\n"
            "<I>parameter</I>\n\nis unset or null, the expansion of\n<I>word</I>\n\nis substituted.  Otherwise, the "
            "value of\n<I>parameter</I>\n\nis substituted.\n<P>\n\nA new paragraph.\n<P>\n<B>Bold</B>\n\n"
            "<P>Blocks apart.  See\n<FONT SIZE=-1><B>HISTORY EXPANSION</B>\n\n</FONT>\nbelow, then quote it.\n</DL>\n")
    _, ol, units = _page_units(page, "bash.html")
    assert [(k, t) for k, t, _ in units] == [
        ("heading", "### ${parameter:-word}"), ("text", "Use Default Values."),
        ("text", "If parameter is unset or null, the expansion of word is substituted."),
        ("text", "Otherwise, the value of parameter is substituted."), ("text", "A new paragraph."),
        ("text", "Bold"), ("text", "Blocks apart."), ("text", "See HISTORY EXPANSION below, then quote it.")]
    assert ol.soft == {4, 7, 10, 20, 21}  # (not the blank lines after a <P>, nor before one)


def test_a_list_items_text_below_its_mark_and_a_line_of_tags_is_the_item():
    # AsciiDoc's HTML writes "<li>" and "<p>" on lines of their own: the item read as "- "
    # alone, an empty line, then its text as a paragraph of its own
    page = ('<div class="colist arabic"><ol>\n<li>\n<p>\nDelete the remote-tracking branches "todo" and "html".\n'
            "</p>\n</li>\n<li>\n<p>\nDelete the \"test\" branch\n    even if it is not merged.\n</p>\n</li>\n</ol></div>\n"
            "<ul>\n<li>\n</li>\n</ul>\n<h2>Next</h2>\n")
    _, ol, units = _page_units(page, "git-branch.html")
    assert [(k, t) for k, t, _ in units] == [
        ("text", '- Delete the remote-tracking branches "todo" and "html".'),
        ("text", '- Delete the "test" branch even if it is not merged.'), ("text", "-"), ("heading", "## Next")]
    assert ol.soft == {2, 7}


def test_a_page_of_thousands_of_sections_on_one_line_is_chunked_in_linear_time():
    # (each piece of the line looked through every heading of the line for its own: a
    # minified page of 128,000 sections took 30 s, not 5)
    import time
    config = default_config()
    config["index"]["chunk_tokens"] = 64

    def indexed(sections):
        """(the page, its engine, the CPU seconds its indexing took: this process's time,
        which a loaded machine stretches far less than the wall clock's, 12 s for 0.8 here)"""
        page = ("<html><body>" + "".join(f"<p>Text {i} of it.</p><h2>Head {i}</h2>" for i in range(sections))
                + "</body></html>")
        eng = Engine.memory(config)
        started = time.process_time()
        eng.add_document("minified.html", page)
        return page, eng, time.process_time() - started
    _, _, quarter = indexed(10_000)
    page, eng, whole = indexed(40_000)
    # four times the sections, about four times the time (quadratic: 12 times, 8 s for 40,000)
    assert whole < 8 * max(quarter, 0.05), (quarter, whole)
    rows = eng.conn.execute("SELECT heading, col_end FROM chunks ORDER BY id").fetchall()
    assert len(rows) > 1000
    marks = [m.start() + 1 for m in re.finditer("<h2>", page)]  # (its "## " is where "h2>" is: the "<" shows a space)
    for heading, end in rows[::97]:
        assert heading == f"Head {sum(at < end for at in marks) - 1}"


def test_a_minified_page_with_a_pre_has_its_sections():
    # (a page on one line with a <pre> in it -- Docusaurus, a minifier -- was one code line:
    # its headings after text were no sections, so no piece had one, nor a packed sentence)
    def section(title, word):
        return (f"<h2>{title}</h2><p>" + f"The {word} step is explained here with care. " * 60
                + f"</p><pre>$ tool {word}\n  --verbose</pre><p>Then the {word} step is done.</p>")
    page = ("<html><head><title>Guide</title></head><body><h1>Guide</h1><p>Intro.</p>"
            + section("Install", "install") + section("Retry", "retry") + section("Logging", "logging")
            + "</body></html>").replace("\n", " ")
    eng = Engine.memory()
    eng.add_document("guide.html", page)
    rows = eng.conn.execute("SELECT heading, col_end FROM chunks ORDER BY id").fetchall()
    marks = [(m.start() + 1, m.group(1)) for m in re.finditer(r"<h2>([^<]*)<", page)]
    assert len(rows) > 3 and {h for h, _ in rows} >= {"Install", "Retry", "Logging"}
    for heading, end in rows:
        assert heading == ([title for at, title in marks if at < end] or ["Guide"])[-1]
    packed = eng.pack("when is the retry step done", 60)
    check_html_pack(eng, packed, 60)
    view = eng.file_view(1, "guide.html", split_lines(eng.file_text("guide.html")))
    units = cp.split_units(view, 1, 1, True, ol=eng.file_outline(1, view, True, "guide.html"))
    done = [u for u in units if u.text.strip() == "Then the retry step is done."]
    assert done and done[0].headings == ("Guide", "Retry")  # (the packed sentence's section)


def test_a_term_after_text_on_its_line_is_a_section_as_one_that_starts_its_line():
    # PostgreSQL's pages write a command's first parameter on the line of its section's
    # heading ("</div><div><h2>Parameters</h2><dl><dt><span>TEMPORARY"): the first term was
    # no section, its description read under "Parameters" and not under its name, while every
    # later term, whose line starts with tags ("</p></dd><dt>"), was one
    page = ('<div class="refsect1"><h2>Description</h2><p>Creates a table.</p></div><div class="refsect1"><h2>'
            'Parameters</h2><div class="variablelist"><dl class="variablelist"><dt id="SQL-CREATETABLE-TEMPORARY">'
            '<span class="term"><code class="literal">TEMPORARY</code> or <code class="literal">TEMP</code></span>'
            '</dt><dd><p>\nIf specified, the table is created as a temporary table.\n</p></dd><dt><span class="term">'
            '<code class="literal">IF NOT EXISTS</code></span></dt><dd><p>\nDo not throw an error.\n</p></dd>'
            '<dd>A</dd><dt>x</dt><dd>Bare.</dd></dl></div></div>\n')
    eng, ol, units = _page_units(page, "sql-createtable.html")
    assert [(kind, text) for kind, text, _ in units] == [
        ("heading", "## Description"), ("text", "Creates a table."), ("heading", "## Parameters"),
        ("heading", "###### TEMPORARY or TEMP"), ("text", "If specified, the table is created as a temporary table."),
        ("heading", "###### IF NOT EXISTS"), ("text", "Do not throw an error. A"), ("heading", "## x"),
        ("text", "Bare.")]
    view = eng.file_view(1, "sql-createtable.html", eng.file_lines([1])[1])
    temp = next(u for u in cp.split_units(view, 1, len(view), True, None, ol) if "temporary table" in u.text)
    assert temp.headings == ("Parameters", "TEMPORARY or TEMP")
    bare = next(u for u in cp.split_units(view, 1, len(view), True, None, ol) if "Bare" in u.text)
    assert bare.headings == ("Parameters", "x")  # (a bare "<dt>" marks "## " only: its level is still 6)
    packed = eng.pack("what does TEMPORARY do when creating a table", 40)
    check_html_pack(eng, packed, 40)
    # a DocBook page's table of contents, whose entries are terms after text, is navigation
    toc = ('<h2>Chapter 19. Server Setup</h2><div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc">'
           '<dt><span class="sect1"><a href="postgres-user.html">19.1. The PostgreSQL User Account</a></span></dt>'
           '</dl></div><p>This chapter discusses how to set up the server.</p>\n')
    assert " ".join(visible(show_html(toc)).split()) == "## Chapter 19. Server Setup This chapter discusses how to set up the server."
    # (Node's picker of a page's sections is a <div class="toc"> of a list: left as it was)
    picker = '<div class="toc"><ul id="toc-picker">\n<li><a href="#child-process">Child process</a></li>\n</ul></div>\n'
    assert "Child process" in visible(show_html(picker))


def test_a_pre_tag_before_the_first_line_of_code_is_not_counted_as_code():
    # makeinfo writes '<pre class="example">' on the example's first line: its 21 blanked
    # characters counted as code, so gnutls's two-line call (113 characters) passed the 120 of
    # a code group and was cut into lines, its flag packed without the call it goes with
    page = ('<p>as in the following example:\n</p>\n<div class="example">\n<pre class="example">  '
            'gnutls_certificate_set_verify_flags (x509cred,\n' + " " * 30 + 'GNUTLS_VERIFY_ALLOW_SIGN_RSA_MD5);\n'
            '</pre></div>\n\n<p>This will signal the verifier algorithm to enable <code>RSA-MD5</code>.\n</p>\n')
    eng, ol, units = _page_units(page, "gnutls.html")
    assert [(kind, text) for kind, text, _ in units] == [
        ("text", "as in the following example:"),
        ("code", "gnutls_certificate_set_verify_flags (x509cred, GNUTLS_VERIFY_ALLOW_SIGN_RSA_MD5);"),
        ("text", "This will signal the verifier algorithm to enable RSA-MD5.")]
    assert units[1][2] == (4, 21, 5, 64)  # (the unit starts at the code, after its tag)
    for budget in (20, 40, 60):  # (its snippet is the visible text of the range it cites)
        packed = eng.pack("what does gnutls_certificate_set_verify_flags do with x509cred", budget)
        check_html_pack(eng, packed, budget)
    assert "  gnutls_certificate_set_verify_flags (x509cred,\n" in packed["snippets"][0]["text"]


def test_a_block_without_a_stop_ends_its_paragraph_at_the_next_block_on_the_line_below():
    # Node's and npm's pages write each <p> on a line of its own: a block with no stop at its end
    # ("Stability: 2 - Stable", "Strict assertion mode", a <p> of code) ran into the next block's
    # first sentence, one unit "Strict assertion mode An alias of assert.ok()."; a block that
    # ends with a stop stays in the paragraph (its sentences are units already), and so does a
    # line that a block does not end or the next one does not start
    page = ('<h2>assert</h2>\n<p></p><div class="api_stability"><a href="d.html">Stability: 2</a> - Stable</div><p></p>\n'
            '<p>Node-API is an API for building native addons.</p>\n<p><strong>Strict assertion mode</strong></p>\n'
            '<p>An alias of <code>assert.ok()</code>.</p>\n<p>It is short.</p>\n<p>So is this.</p>\n'
            '<p>A sentence that goes on\n<code>over lines</code></p>\n<p>as in the following example:</p>\n'
            '<p>Text.</p>\n')
    _, _, units = _page_units(page, "assert.html")
    assert [(kind, text) for kind, text, _ in units] == [
        ("heading", "## assert"), ("text", "Stability: 2 - Stable"),
        ("text", "Node-API is an API for building native addons."), ("text", "Strict assertion mode"),
        ("text", "An alias of assert.ok()."), ("text", "It is short."), ("text", "So is this."),
        ("text", "A sentence that goes on over lines"), ("text", "as in the following example: Text.")]



def test_many_unclosed_elements_that_may_be_navigation_are_read_in_linear_time():
    # (each <font size="-1">, <div class="index">, <div class="footer"> that is not closed runs
    # to the page's end, and was looked through to the end for a generator's line or an index
    # entry: 8,000 of them on a 260 KB page took 35 s)
    import time
    for tag in ('<font size="-1">', '<div class="index">', '<div class="footer">', '<div class="toc">',
                '<table cellspacing="1">'):
        page = "<html><body>" + (tag + "small print here ") * 6000 + "\n"
        started = time.perf_counter()
        text = visible(show_html(page))
        assert time.perf_counter() - started < 2, tag  # (quadratic: 8 to 20 s each)
        assert text.count("small print here") == 6000
    # the one that is navigation is still found after them
    page = ('<font size="-1">Mine.</font> ' * 3000 + '<font size="-1">This document was generated by Bruno Haible '
            'using texi2html 1.78a.</font>\n<p>Body</p>\n')
    text = visible(show_html(page))
    assert text.count("Mine.") == 3000 and "texi2html" not in text and "Body" in text

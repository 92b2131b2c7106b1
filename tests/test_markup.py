"""HTML pages: read through their view (markup blanked, offsets kept), cited from the stored text."""

from hypothesis import given, strategies as st

from ragweb.chunking import split_lines
from ragweb.engine import Engine
from ragweb.markup import is_html, mask_html

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


def test_the_view_keeps_every_offset_and_line():
    view = mask_html(PAGE)
    assert len(view) == len(PAGE) and view.count("\n") == PAGE.count("\n")
    for a, b in zip(PAGE, view):
        assert a == b or b in " #-"  # markup became blanks, or a heading or list mark


def test_the_view_holds_what_a_reader_sees():
    words = set(mask_html(PAGE).split())
    assert {"Retries", "widget", "retries", "three", "times.", "seconds", "backoff", "Default:"} <= words
    for hidden in ("frobnicate", "quokkaTracker", "zeppelins", "class", "href", "section", "&", "<"):
        assert not any(hidden in w for w in words), hidden
    assert "5" in words and not {"lt", "gt", "nbsp"} & words


def test_headings_and_list_items_get_markdown_marks():
    lines = split_lines(mask_html(PAGE))
    heading = next(line for line in lines if "Retries" in line)
    assert heading.startswith("## ") and heading.split()[1] == "Retries"
    assert lines[1].startswith("# ")  # <title> after other tags on its line
    items = [line for line in lines if "backoff" in line or "jitter" in line]
    assert all(line.startswith("- ") for line in items)


@given(st.text(alphabet="<>/!-&;#ab \n\"'=hlit1", max_size=80))
def test_any_text_keeps_its_length_and_lines(text):
    view = mask_html(text)
    assert len(view) == len(text) and view.count("\n") == text.count("\n")


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
    assert hit.text in PAGE  # a hit is the stored text, markup included


def test_a_packed_html_page_cites_its_stored_lines():
    eng = _engine()
    packed = eng.pack("what is the default backoff wait for widget retries", 60)
    assert packed["snippets"] and packed["used_tokens"] <= 60
    lines = split_lines(eng.file_text("guide/widget.html"))
    for s in packed["snippets"]:
        a, b = map(int, s["range"][1:].split("-"))
        span = "\n".join(lines[a - 1:b])
        if "cols" in s:
            span = span[s["cols"][0]:len(span) - (len(lines[b - 1]) - s["cols"][1])]
        assert s["text"] == span
    assert any("<code>2</code>" in s["text"] for s in packed["snippets"])
    assert packed["evidence"] == "sufficient"


def test_an_index_built_before_html_views_reads_pages_as_text():
    eng = Engine.memory()
    old = dict(eng.settings)
    old.pop("markup")
    eng._set_meta("analysis", old)  # what an index written before this setting holds
    eng._load_state()
    assert eng.settings_changed and not eng.reads_html("a.html")
    eng.add_document("a.html", PAGE)
    eng.flush()
    assert eng.search("frobnicate")  # the old reading: markup is text


def test_the_view_has_the_stored_lines_even_when_the_last_is_empty():
    eng = _engine()
    hit = eng.search("widget retries upload")[0]
    lines = eng.file_lines([hit.file_id])[hit.file_id]
    assert lines[-1] == ""
    view = eng.file_view(hit.file_id, hit.path, lines)
    assert [len(v) for v in view] == [len(line) for line in lines]

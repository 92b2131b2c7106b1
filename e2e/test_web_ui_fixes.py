"""UI fixes: a question asked while the engine loads, a pack on show for an earlier question,
bidi controls in the pack's views and the file list, search as you type, the status line of a
drop, contrast, the advice for a folder left out, the banner after a reload mid-drop, wording."""

import json
import re

import pytest
from playwright.sync_api import expect

from test_web_a11y import DROP_FOLDER_JS, INVALID_CONFIG

LIGHTHOUSE = "# Lighthouse\n\nThe lighthouse keeper sounds the fog horn every night.\n"


def _held_boot(browser, base_url, offline, hold_wheels):
    """A page whose engine waits (its wheels held) until `release()` is called."""
    ctx = browser.new_context(base_url=base_url)
    offline.install(ctx)
    page = ctx.new_page()
    page.set_default_timeout(60_000)
    let_go = hold_wheels(page)
    page.goto("./")
    page.wait_for_selector("#search")

    def release():
        let_go()
        page.evaluate("window.ragReady")
        page.evaluate("window.ragweb.idle()")
    return ctx, page, release


@pytest.mark.parametrize("how", ["drop", "sample"])
def test_a_pack_asked_for_while_loading_waits_for_the_files_given_meanwhile(browser, base_url, offline, how, hold_wheels):
    """A Pack clicked while the engine loaded ran before the files dropped meanwhile were
    indexed: "0 snippets ... no evidence", while the search found them."""
    ctx, page, release = _held_boot(browser, base_url, offline, hold_wheels)
    try:
        assert "not ready" in page.evaluate("ragStats()")
        if how == "drop":
            page.evaluate("""(text) => {
                const dt = new DataTransfer();
                dt.items.add(new File([text], 'lighthouse.md'));
                document.querySelector('[data-testid="dropzone"]').dispatchEvent(
                    new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
            }""", LIGHTHOUSE)
            question, path = "fog horn", "lighthouse.md"
        else:
            page.get_by_test_id("try-sample").click()
            question, path = "retry backoff", None
        page.get_by_test_id("search").fill(question)
        page.get_by_test_id("pack-run").click()
        assert "not ready" in page.evaluate("ragStats()")  # (still loading)
        release()
        packed = json.loads(page.get_by_test_id("pack-output").inner_text())
        assert packed["query"] == question and packed["snippets"], packed
        if path:
            assert [s["path"] for s in packed["snippets"]] == [path]
        else:
            assert all(s["path"].startswith("sample/") for s in packed["snippets"])
        assert page.get_by_test_id("copy-prompt").is_enabled()
    finally:
        ctx.close()


def test_clear_all_is_disabled_until_the_engine_is_ready(browser, base_url, offline, hold_wheels):
    """Clear all pressed while the engine loaded did nothing, without a word: it is disabled
    (and looks it) until the index it clears is loaded."""
    ctx, page, release = _held_boot(browser, base_url, offline, hold_wheels)
    try:
        button = page.get_by_test_id("clear-all")
        expect(button).to_be_disabled()
        assert page.evaluate("getComputedStyle(document.getElementById('clear-all')).opacity") == "0.5"
        release()
        expect(button).to_be_enabled()
        assert json.loads(page.evaluate("ragIndex('a.md', 'A gannet dives.')"))["success"]
        page.once("dialog", lambda d: d.accept())
        button.click()
        assert json.loads(page.evaluate("ragStats()"))["totalDocs"] == 0
    finally:
        ctx.close()


def test_a_pack_names_its_question_and_says_when_the_question_changed(app):
    app.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    app.index_sample()
    page = app.page
    box = page.get_by_test_id("search")
    box.fill("retry backoff")
    page.get_by_test_id("pack-run").click()
    info = page.locator("#pack-info")
    expect(info).to_contain_text("for “retry backoff”, ")
    assert "earlier question" not in info.inner_text()
    box.fill("how are headers parsed")  # (an input event, as typing makes)
    expect(info).to_contain_text("for the earlier question “retry backoff”")
    expect(info).to_contain_text("The question above has changed since: press Pack to pack it.")
    page.get_by_test_id("copy-prompt").click()
    expect(info).to_contain_text("Copied the prompt for the earlier question “retry backoff” (")
    box.fill("retry backoff")  # back to the pack's question
    expect(info).to_have_text(re.compile(r"^\d+ snippets? for “retry backoff”, \d+ of \d+ tokens"))
    page.get_by_test_id("copy-json").click()
    expect(info).to_have_text("Copied the packed context (JSON) for “retry backoff”.")


def test_bidi_controls_are_not_shown_raw_in_any_view_and_names_show_alike(app):
    name = "notes\u202edm.txt"
    app.index(name, "The zeppelin hangar opens at dawn.\n")
    page = app.page
    page.get_by_test_id("search").fill("zeppelin hangar")
    page.get_by_test_id("search").press("Enter")
    page.locator('[data-testid="result"]').first.wait_for()
    cite = page.locator(".result .cite").first.inner_text()
    expect(page.locator("#files .path")).to_have_text(["notes\ufffddm.txt"])
    assert cite.startswith("notes\ufffddm.txt:L1-"), cite  # (as the file list shows it)
    page.get_by_test_id("pack-run").click()
    for fmt in ("json", "xml", "markdown", "text"):
        page.select_option("#pack-format", fmt)
        shown = page.get_by_test_id("pack-output").inner_text()
        assert "zeppelin" in shown and "\ufffd" in shown, fmt
        assert not re.search("[\u202a-\u202e\u2066-\u2069]", shown), fmt
    # what Copy copies stays exact (a JSON view is data: its name as it is)
    page.select_option("#pack-format", "json")
    page.get_by_test_id("copy-json").click()
    app.wait("window.__ragLastCopied !== undefined")
    copied = json.loads(page.evaluate("window.__ragLastCopied"))
    assert copied["snippets"][0]["path"] == name


def test_a_hit_that_is_part_of_a_line_is_cited_with_its_columns(app):
    """A piece of a page written on one line was cited as the whole line, `page.html:L1-1`
    (as `rag query` cites it: `formats.cited_range`)."""
    sections = "".join(f"<h2>Part {i}</h2><p>{'A shearwater glides low over the swell. ' * 60}</p>"
                       for i in range(12))
    app.index("page.html", f"<html><body><h1>Seabirds</h1>{sections}<h2>Petrels</h2>"
                           "<p>The storm petrel patters on the water.</p></body></html>")
    page = app.page
    hit = app.query("storm petrel patters")["results"][0]
    assert hit["path"] == "page.html" and hit["cols"][0] > 0, hit
    page.get_by_test_id("search").fill("storm petrel patters")
    page.get_by_test_id("search").press("Enter")
    expect(page.locator(".result .cite").first).to_have_text(
        f"page.html:L1-1 cols {hit['cols'][0]}-{hit['cols'][1]}")


def test_search_as_you_type_keeps_results_and_stays_silent_on_partial_words(app):
    app.index("a.md", "# A\nretry policy with backoff\n")
    page = app.page
    box = page.get_by_test_id("search")
    info = page.locator("#search-info")
    box.fill("backoff")
    expect(page.locator('[data-testid="result"]')).to_have_count(1)
    expect(info).to_have_text("1 result")  # (the live region: no changing timing in it)
    expect(page.locator("#search-time")).to_contain_text(" ms")
    box.fill("how do r")  # typed so far: no word to search for yet
    page.wait_for_timeout(500)
    expect(page.locator('[data-testid="result"]')).to_have_count(1)
    assert info.inner_text() == "1 result"
    box.press("Enter")  # asked for: now it says why
    expect(info).to_contain_text("has no indexable words")
    expect(page.locator('[data-testid="result"]')).to_have_count(0)


def test_the_status_line_says_a_drop_has_started(app):
    page = app.page
    page.evaluate("""() => {
        window.__said = [];
        new MutationObserver(() => window.__said.push(document.getElementById('status').textContent))
            .observe(document.getElementById('status'), {childList: true, characterData: true, subtree: true});
    }""")
    app.drop_files({"a.md": "# A\nOtters.\n", "b.md": "# B\nOtters.\n", "c.md": "# C\nOtters.\n"})
    said = page.evaluate("window.__said")
    assert "Indexing 3 files…" in said, said
    assert said[-1].startswith("Indexed 3 files"), said


def _contrast(page, fg_sel, fg_prop, bg_sel, bg_prop):
    return page.evaluate("""([a, ap, b, bp]) => {
        const rgb = (sel, prop) => getComputedStyle(document.querySelector(sel))[prop].match(/\\d+(\\.\\d+)?/g).map(Number);
        const lum = ([r, g, bl]) => [r, g, bl].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
            .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
        const [x, y] = [lum(rgb(a, ap)), lum(rgb(b, bp))].sort((p, q) => q - p);
        return (x + 0.05) / (y + 0.05);
    }""", [fg_sel, fg_prop, bg_sel, bg_prop])


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_buttons_and_form_controls_have_enough_contrast(app, scheme):
    page = app.page
    page.emulate_media(color_scheme=scheme)
    try:
        for sel in ("#pack-run", "#try-sample", "#search-form button[type=submit]"):
            assert _contrast(page, sel, "color", sel, "backgroundColor") >= 4.5, (scheme, sel)
        for sel in ("#search", "#topk", "#budget", "#pack-mode", "#clear-all", "#choose-files"):
            ratio = _contrast(page, sel, "borderTopColor", ".panel", "backgroundColor")
            assert ratio >= 3, (scheme, sel, ratio)
    finally:
        page.emulate_media(color_scheme="light")


def test_a_folder_left_out_for_its_invalid_config_is_told_to_fix_it(app):
    app.page.evaluate(DROP_FOLDER_JS, {"proj": {"rag.yaml": INVALID_CONFIG, "guide.md": "# Guide\nEgret.\n"}})
    status = app.page.locator("#status").inner_text()
    assert status == ("Nothing was indexed: left out the folder proj/ (its rag.yaml is invalid; see the message "
                      "below) (fix its rag.yaml and drop it again)."), status


def test_the_banner_after_a_reload_mid_drop_counts_the_files_not_kept(launch_persistent, boot_page):
    """The save on the way out did not land: 1,111 files were indexed then and none is
    restored, and 873 were not indexed yet: the banner said "873 of its files were not
    indexed" where 1,984 of the drop's 2,000 files are not in the index."""
    ctx = launch_persistent()
    page = ctx.pages[0] if ctx.pages else ctx.new_page()
    boot_page(page)
    page.evaluate("""() => localStorage.setItem('ragweb:exit-note:exit:gone', JSON.stringify({
        savedAt: Date.now(), base: null, queued: 0, left: 873, reading: false, total: 2000,
        files: 1111, exitKey: 'exit:gone', generation: 'gone'}))""")
    boot_page(page)
    text = page.locator("#banner-text").inner_text()
    assert "(1,111 files were indexed then; 0 are restored here)" in text, text
    assert ("A drop was cut short when the page was closed or reloaded, and the files it had indexed were "
            "not all kept: 1,984 of its 2,000 files are not in the index here; drop them again to add them.") in text
    assert "873 of its files" not in text


def test_smaller_wording_and_keyboard_fixes(app):
    page = app.page
    # the drop zone's name holds its visible text
    zone = page.locator("#dropzone")
    expect(zone).to_have_accessible_name(re.compile(r"^Drop files or whole folders here\b"))
    # an empty question in Pack: said in the page's words
    page.get_by_test_id("pack-run").click()
    expect(page.locator("#pack-info")).to_have_text("Type a question above first: Pack packs the best evidence for it.")
    # the stats line without jargon
    app.index("a.md", "# A\nThe otter swims in the river by the old mill.\n")
    expect(page.get_by_test_id("stats")).to_contain_text(re.compile(r"^1 file, 1 chunk \(about \d+ searchable words each\)"))
    # top 0 is shown as the 1 it is read as
    page.get_by_test_id("search").fill("otter")
    page.fill("#topk", "0")
    page.dispatch_event("#topk", "change")
    expect(page.locator("#topk")).to_have_value("1")
    page.fill("#topk", "10")
    # a snippet (which Chromium puts in the tab order when it scrolls) is named by its citation
    snippet = page.locator(".result .snippet").first
    expect(snippet).to_have_accessible_name(page.locator(".result .cite").first.inner_text())
    # Escape closes the banner
    page.evaluate(DROP_FOLDER_JS, {"bad": {"rag.yaml": INVALID_CONFIG}})
    expect(page.locator("#banner")).to_be_visible()
    page.locator("#banner-close").focus()
    page.keyboard.press("Escape")
    expect(page.locator("#banner")).to_be_hidden()
    assert page.evaluate("document.activeElement.id") == "dropzone"


def _drag_mouse(page, start, end, steps=10):
    """A real drag with the mouse, from point `start` to point `end`."""
    page.mouse.move(*start)
    page.mouse.down()
    for i in range(1, steps + 1):
        page.mouse.move(start[0] + (end[0] - start[0]) * i / steps, start[1] + (end[1] - start[1]) * i / steps)
    page.mouse.up()


def test_text_dragged_into_the_question_box_is_dropped_there_and_a_file_outside_the_zone_is_not(app):
    # (the page refused every drop outside the drop zone, so that a file let go beside it would
    # not open in the tab: a word dragged from a result, or another window, into the question
    # box was refused too)
    app.index("a.md", LIGHTHOUSE)
    page = app.page
    page.get_by_test_id("search").fill("lighthouse")
    page.get_by_test_id("search").press("Enter")
    expect(page.locator(".result .snippet mark").first).to_have_text("Lighthouse")
    # (the box emptied without an input event, in the call that selects the word: an emptied
    # box searches for nothing 150 ms later and takes the results away, which on a loaded
    # machine came before the next call, or the drag)
    word = page.evaluate("""() => {
        document.getElementById('search').value = '';
        const text = document.querySelector('.result .snippet').lastChild;  // "... keeper sounds ..."
        const at = text.textContent.indexOf('keeper');
        const range = document.createRange();
        range.setStart(text, at);
        range.setEnd(text, at + 'keeper'.length);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        const box = range.getBoundingClientRect();
        return [box.x + box.width / 2, box.y + box.height / 2];
    }""")
    box = page.get_by_test_id("search").bounding_box()
    _drag_mouse(page, word, (box["x"] + 40, box["y"] + box["height"] / 2))
    expect(page.get_by_test_id("search")).to_have_value("keeper")
    # a file let go on the question box is still refused there (the browser would open it in the tab)
    refused = page.evaluate("""() => {
        const dt = new DataTransfer();
        dt.items.add(new File(['x'], 'a.txt'));
        const ev = new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true});
        document.getElementById('search').dispatchEvent(ev);
        return ev.defaultPrevented;
    }""")
    assert refused
    expect(page.get_by_test_id("search")).to_have_value("keeper")


def test_pack_with_nothing_indexed_says_so_and_gives_nothing_to_copy(app):
    # (it packed an empty context, "0 snippets ... (warning: the packed context holds no
    # evidence for this question)", and Copy prompt copied a prompt with no snippets, where
    # the search beside it said that nothing is indexed yet)
    page = app.page
    page.get_by_test_id("search").fill("how does the retry back off?")
    page.get_by_test_id("pack-run").click()
    expect(page.locator("#pack-info")).to_have_text(
        "Nothing is indexed yet: add files above or try the sample project, then press Pack.")
    expect(page.get_by_test_id("pack-output")).to_have_text("")
    expect(page.get_by_test_id("copy-prompt")).to_be_disabled()
    expect(page.get_by_test_id("copy-json")).to_be_disabled()
    app.index("a.md", LIGHTHOUSE)
    page.get_by_test_id("search").fill("lighthouse keeper")
    page.get_by_test_id("pack-run").click()
    expect(page.locator("#pack-info")).to_contain_text("1 snippet for “lighthouse keeper”")
    expect(page.get_by_test_id("copy-prompt")).to_be_enabled()


def test_files_dropped_beside_the_drop_zone_are_indexed_not_silently_ignored(app):
    # (a drop anywhere but the zone, on the results or the pack panel, was refused so that the
    # browser would not open the file, and nothing more: the files were not indexed and
    # nothing was said)
    for target in ("#results", "#pack", "#search"):
        name = f"note-{target[1:]}.md"
        app.page.evaluate("""async ([target, name]) => {
            const dt = new DataTransfer();
            dt.items.add(new File(['# Note\\nThe lighthouse keeper.\\n'], name));
            const ev = new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true});
            document.querySelector(target).dispatchEvent(ev);
            if (!ev.defaultPrevented) throw new Error('the browser would open the file');
            await window.ragweb.idle();
        }""", [target, name])
        assert name in app.stats()["files"], target
        expect(app.page.locator("#status")).to_have_text("Indexed 1 file (1 chunk).")


DRAG_LINK_JS = """(target) => ['dragover', 'drop'].map((type) => {
    const dt = new DataTransfer();
    dt.setData('text/uri-list', 'https://example.com/elsewhere');
    dt.setData('text/plain', 'https://example.com/elsewhere');
    const ev = new DragEvent(type, {dataTransfer: dt, bubbles: true, cancelable: true});
    document.querySelector(target).dispatchEvent(ev);
    return ev.defaultPrevented;
})"""


def test_a_link_let_go_on_the_budget_slider_is_not_left_to_the_browser(app):
    # (since text dragged into the question box is dropped there, every <input> but a file
    # picker was left to the browser: the budget slider takes no text, and a link let go on
    # it would open in the tab, as one let go anywhere else on the page does not)
    assert app.page.evaluate(DRAG_LINK_JS, "#budget-range") == [True, True]
    assert app.page.evaluate(DRAG_LINK_JS, "#results") == [True, True]
    # the fields that take text still take it
    for field in ("#search", "#topk", "#budget"):
        assert app.page.evaluate(DRAG_LINK_JS, field) == [False, False], field


def test_text_let_go_on_the_drop_zone_is_said_to_be_no_file_not_an_empty_folder(app):
    # (a word or a link dragged onto the zone went through the indexing of a drop, and the
    # status said of a drop in which no file was found: "an empty folder, or only hidden files")
    app.page.evaluate("""async () => {
        const dt = new DataTransfer();
        dt.setData('text/plain', 'lighthouse keeper');
        const ev = new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true});
        document.querySelector('[data-testid="dropzone"]').dispatchEvent(ev);
        await window.ragweb.idle();
    }""")
    expect(app.page.locator("#status")).to_have_text(
        "Nothing was indexed: the drop held no file or folder (text or a link is not indexed: drop files "
        "or folders here, or choose them with the buttons).")

"""Accessibility of the page: live regions, names and roles, focus after removals and dialogs,
a confirmation before Clear all, reflow at 320 CSS px, right-to-left text, keyboard packing."""

import json
import re

from playwright.sync_api import expect

# A dropped folder (FileSystemEntry objects, as webkitGetAsEntry gives them): {name: text or {...}}.
DROP_FOLDER_JS = """async (tree) => {
    const entry = (name, c) => typeof c === 'string'
        ? { isFile: true, isDirectory: false, name, file(ok) { ok(new File([c], name)); } }
        : { isFile: false, isDirectory: true, name, createReader() {
              const kids = Object.entries(c).map(([n, v]) => entry(n, v));
              let pos = 0;
              return { readEntries(ok) { const b = kids.slice(pos); pos = kids.length; setTimeout(() => ok(b)); } };
          } };
    const items = Object.entries(tree).map(([n, c]) => ({ kind: 'file', webkitGetAsEntry: () => entry(n, c) }));
    const ev = new Event('drop', {bubbles: true, cancelable: true});
    Object.defineProperty(ev, 'dataTransfer', {value: {items, files: []}});
    document.querySelector('[data-testid="dropzone"]').dispatchEvent(ev);
    await window.ragweb.idle();
}"""

INVALID_CONFIG = "index:\n  excludes: drafts\n"  # (a string where a list is needed: line 2)


def active_id(page):
    return page.evaluate("document.activeElement === document.body ? 'BODY' : document.activeElement.id")


def active_name(page):
    return page.evaluate("document.activeElement.getAttribute('aria-label') || document.activeElement.id")


def test_messages_are_polite_status_regions_and_the_results_are_not_live(app):
    page = app.page
    for sel in ("#status", "#search-info", "#pack-info"):
        expect(page.locator(sel)).to_have_role("status")
    # The results list re-announced thousands of characters at each keystroke.
    assert page.evaluate("""() => {
        const el = document.getElementById('results');
        return [el.closest('[aria-live]'), el.closest('[role=status], [role=log], [role=alert]')];
    }""") == [None, None]


def test_the_progress_text_is_not_live_and_the_bar_has_a_name(app):
    page = app.page
    assert page.evaluate("""() => document.getElementById('progress-text')
        .closest('[aria-live], [role=status], [role=log], [role=alert]')""") is None
    expect(page.locator("#progress-bar")).to_have_accessible_name("Indexing progress")


def test_removing_a_file_keeps_the_focus_on_the_list_and_says_so(app):
    page = app.page
    for name in ("a.md", "b.md", "c.md"):
        app.index(name, f"# {name}\nA note about herons.\n")
    expect(page.locator("#files .path")).to_have_text(["a.md", "b.md", "c.md"])
    page.get_by_role("button", name="Remove b.md").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text("Removed b.md.")
    assert active_name(page) == "Remove c.md"        # the button now at its place
    page.wait_for_timeout(400)                        # (the list's debounced refresh keeps it)
    assert active_name(page) == "Remove c.md"
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text("Removed c.md.")
    assert active_name(page) == "Remove a.md"        # the last went: the one before
    page.keyboard.press("Enter")
    expect(page.locator("#files li")).to_have_count(0)
    assert active_id(page) == "choose-files"
    assert app.stats()["files"] == []


def test_clear_all_asks_first_and_ragclear_does_not(app):
    page = app.page
    app.index("a.md", "# A\nKingfisher.\n")
    app.index("b.md", "# B\nKingfisher.\n")
    expect(page.locator("#files li")).to_have_count(2)
    asked = []

    def answer(accept):
        def handle(dialog):
            asked.append((dialog.type, dialog.message))
            dialog.accept() if accept else dialog.dismiss()
        return handle

    page.once("dialog", answer(False))
    page.get_by_test_id("clear-all").click()
    assert asked and asked[0][0] == "confirm" and "2 files" in asked[0][1]
    assert app.stats()["totalDocs"] == 2                # cancelled: nothing changed
    expect(page.locator("#files li")).to_have_count(2)
    page.once("dialog", answer(True))
    page.get_by_test_id("clear-all").click()
    assert len(asked) == 2
    assert app.stats()["totalDocs"] == 0
    expect(page.locator("#files li")).to_have_count(0)
    app.index("a.md", "# A\nKingfisher.\n")
    handler = answer(False)
    page.on("dialog", handler)
    try:
        assert app.call("() => ragClear()") == {"success": True}   # the API does not ask
    finally:
        page.remove_listener("dialog", handler)
    assert len(asked) == 2 and app.stats()["totalDocs"] == 0


def test_a_folder_config_error_is_read_once_and_closing_the_banner_keeps_the_focus(app):
    page = app.page
    page.evaluate(DROP_FOLDER_JS, {"bad": {"rag.yaml": INVALID_CONFIG, "guide.md": "# Guide\nEgret.\n"}})
    expect(page.locator("#banner")).to_be_visible()
    banner = page.locator("#banner-text").inner_text()
    assert banner.startswith("A folder was left out: bad/rag.yaml line 2")
    status = page.locator("#status").inner_text()
    assert "bad/" in status and "line 2" not in status and "index.excludes" not in status, status
    page.locator("#banner-close").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#banner")).to_be_hidden()
    assert active_id(page) == "dropzone"


def test_a_banner_about_the_last_drop_goes_when_the_next_one_starts(app):
    page = app.page
    page.evaluate(DROP_FOLDER_JS, {"bad": {"rag.yaml": INVALID_CONFIG, "guide.md": "# Guide\nEgret.\n"}})
    expect(page.locator("#banner")).to_be_visible()
    page.evaluate(DROP_FOLDER_JS, {"good.md": "# Good\nEgret.\n"})
    assert app.stats()["files"] == ["good.md"]
    expect(page.locator("#banner")).to_be_hidden()


def test_the_drop_zone_is_a_named_button_holding_no_other_buttons(app):
    page = app.page
    zone = page.get_by_role("button", name="Drop files or whole folders here, or press Enter to choose files")
    expect(zone).to_have_id("dropzone")
    expect(zone).to_have_accessible_description(re.compile(r"^Text and code files are indexed"))
    # (a button inside a button is not reachable by every screen reader)
    assert page.locator("[role=button] button, button button").count() == 0
    assert 'button "Choose files"' in page.locator("#drop-area").aria_snapshot()
    # (screen readers in browse mode click a button rather than press Enter on it)
    page.evaluate("""() => { window.__opened = 0; document.getElementById('pick-files').addEventListener(
        'click', (e) => { window.__opened += 1; e.preventDefault(); }, { once: true }); }""")
    zone.click()
    assert page.evaluate("window.__opened") == 1


def test_the_top_k_box_is_named_by_its_visible_label(app):
    expect(app.page.locator("#topk")).to_have_accessible_name(re.compile(r"^top\b"))


def test_the_packed_context_is_a_region_named_packed_context(app):
    page = app.page
    app.index_sample()
    page.get_by_test_id("search").fill("retry backoff")
    page.get_by_test_id("pack-run").click()
    out = page.get_by_test_id("pack-output")
    expect(out).to_have_role("region")
    expect(out).to_have_accessible_name("Packed context")
    assert page.get_by_test_id("pack").aria_snapshot().count('region "Packed context"') == 1


def test_the_page_reflows_at_320_px_with_long_file_names(app):
    page = app.page
    size = page.viewport_size
    long = "x" * 200
    width = "document.documentElement.scrollWidth"
    page.set_viewport_size({"width": 320, "height": 640})
    try:
        assert page.evaluate(width) <= 320, "empty page"
        app.index(f"{long}.md", "# Long\nThe osprey dives for fish.\n")
        app.index(f"{long}2.md", "# Other\nA cormorant.\n")
        expect(page.locator("#files li")).to_have_count(2)
        page.get_by_test_id("search").fill("osprey dives")
        page.get_by_test_id("pack-run").click()
        app.index(f"{long}.md", "# Long\nThe osprey dives again.\n")  # the pack quoted it: a note names it
        expect(page.locator("#pack-info")).to_contain_text(long)
        page.get_by_role("button", name=f"Remove {long}2.md").click()
        expect(page.locator("#status")).to_contain_text(long)
        assert page.evaluate(width) <= 320, "status and pack notes"
        app.index("heading.md", "# " + "H" * 290 + "\n\nThe heron waits.\n")  # (a heading of one long word)
        page.get_by_test_id("search").fill("heron")
        page.get_by_test_id("search").press("Enter")
        expect(page.locator(".result .heading")).to_contain_text("H" * 50)
        assert page.evaluate(width) <= 320, "a result's heading"
        page.evaluate(DROP_FOLDER_JS, {long: {"rag.yaml": INVALID_CONFIG, "a.md": "# A\nTern.\n"}})
        expect(page.locator("#banner-text")).to_contain_text(long)
        assert page.evaluate(width) <= 320, "banner"
        expect(page.locator("#banner-clear")).to_be_hidden()  # (only the unreadable-storage banner offers it)
        inside = page.evaluate("""() => {
            const b = document.getElementById('banner').getBoundingClientRect();
            const x = document.getElementById('banner-close').getBoundingClientRect();
            return x.left >= b.left && x.right <= b.right;
        }""")
        assert inside, "the banner's × is outside it"
    finally:
        page.set_viewport_size(size)


def test_right_to_left_text_keeps_its_order(app):
    page = app.page
    app.index("ملاحظات.md", "# ملاحظات\nالنص العربي عن الطيور (birds) هنا.\n")
    expect(page.locator("#files .path")).to_have_text(["ملاحظات.md"])  # (the list is refreshed debounced)
    page.get_by_test_id("search").fill("birds")
    page.get_by_test_id("search").press("Enter")
    page.locator(".snippet").first.wait_for()
    page.get_by_test_id("pack-run").click()
    bidi = page.evaluate("""() => ['.snippet', '#pack-output', '#files .path'].map(
        (s) => getComputedStyle(document.querySelector(s)).unicodeBidi)""")
    assert bidi == ["plaintext"] * 3


def test_enter_in_the_budget_packs(app):
    page = app.page
    app.index_sample()
    page.get_by_test_id("search").fill("how does the retry policy back off")
    page.get_by_test_id("budget").fill("300")
    page.get_by_test_id("budget").press("Enter")
    packed = json.loads(page.get_by_test_id("pack-output").inner_text())
    assert packed["budget_tokens"] == 300 and packed["snippets"]


def test_copying_without_the_clipboard_api_keeps_the_focus_on_the_button(app):
    # (a page served over plain http on a LAN address has no navigator.clipboard: the copy
    # went through a hidden text area, focused to be selected and then removed, and the
    # focus dropped to <body>)
    app.index("a.md", "# A\nThe lighthouse keeper sounds the fog horn every night.\n")
    page = app.page
    page.get_by_test_id("search").fill("lighthouse keeper")
    page.get_by_test_id("pack-run").click()
    page.evaluate("Object.defineProperty(navigator, 'clipboard', {value: undefined, configurable: true})")
    try:
        for button, said in (("copy-prompt", "Copied the prompt for"), ("copy-json", "Copied the packed context")):
            page.get_by_test_id(button).focus()
            page.keyboard.press("Enter")
            expect(page.locator("#pack-info")).to_contain_text(said)
            assert page.evaluate("document.activeElement.dataset.testid") == button
        assert "lighthouse keeper" in page.evaluate("window.__ragLastCopied")
    finally:
        page.evaluate("delete navigator.clipboard")

"""File text and names are shown as text, never as HTML: a payload runs nothing."""

from playwright.sync_api import expect

NAME = '<img src=x onerror="window.__pwned=1">.md'
TEXT = ("# Payload <b>bold</b>\n"
        "This file mentions the keyword xylophone.\n"
        "<script>window.__pwned=1</script>\n"
        '<img src=x onerror="window.__pwned=1"> and <svg onload="window.__pwned=1"></svg>\n'
        "javascript:window.__pwned=1 &amp; &lt;tag&gt;\n")


def assert_inert(app):
    page = app.page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    # No element came from the payload: only our own markup exists in the dynamic areas.
    for sel in ("#results", "#files", "#pack-output", "#progress", "#banner", "#status"):
        assert page.locator(f"{sel} img, {sel} script, {sel} svg, {sel} b").count() == 0, sel


def test_payload_in_name_and_text_renders_as_text(app):
    out = app.index(NAME, TEXT)
    assert out["success"] and out["filename"] == NAME
    box = app.page.get_by_test_id("search")
    box.fill("xylophone")
    box.press("Enter")
    result = app.page.get_by_test_id("result").first
    result.wait_for()
    assert result.locator(".cite").inner_text().startswith(NAME + ":L1-")
    snippet = result.locator(".snippet").inner_text()
    assert "<script>window.__pwned=1</script>" in snippet
    assert '<img src=x onerror="window.__pwned=1">' in snippet
    assert "&amp; &lt;tag&gt;" in snippet
    assert result.locator("mark").all_inner_texts() == ["xylophone"]
    expect(app.page.locator("#files .path")).to_have_text([NAME])
    app.page.get_by_test_id("pack-run").click()
    assert "<script>window.__pwned=1</script>" in app.page.get_by_test_id("pack-output").inner_text()
    app.page.wait_for_timeout(300)  # give any injected handler the chance to run
    assert_inert(app)


def test_payload_dropped_as_a_file(app):
    app.page.evaluate("""async ([name, text]) => {
        const dt = new DataTransfer();
        dt.items.add(new File([text], name));
        document.querySelector('[data-testid="dropzone"]').dispatchEvent(
            new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
        await window.ragweb.idle();
    }""", [NAME, TEXT])
    assert app.stats()["files"] == [NAME]
    app.page.get_by_test_id("search").fill("xylophone <script>")
    app.page.get_by_test_id("search").press("Enter")
    app.page.get_by_test_id("result").first.wait_for()
    app.page.wait_for_timeout(300)
    assert_inert(app)


def test_content_security_policy_blocks_inline_script(app):
    csp = app.page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    assert "script-src 'self' 'wasm-unsafe-eval'" in csp and "unsafe-inline" not in csp
    # Even markup injected on purpose cannot run its handlers.
    app.page.evaluate("""() => {
        const div = document.createElement('div');
        div.innerHTML = '<img src="x" onerror="window.__pwned=1">';
        document.body.append(div);
    }""")
    app.page.wait_for_timeout(300)
    assert app.page.evaluate("typeof window.__pwned") == "undefined"
    app.page.evaluate("document.body.lastElementChild.remove()")


def test_names_that_hide_or_reorder_text_are_shown_with_escapes(app):
    """A name with U+202E reversed the status line around it, and names that differ by a
    zero-width space looked alike in the file list."""
    app.drop_files({"\u202eA.png": "x"})
    status = app.page.locator("#status").inner_text()
    assert "\u202e" not in status and "\\u202eA.png" in status, status
    app.drop_files({"notes.md": "plain notes\n", "no\u200btes.md": "other notes\n"})
    expect(app.page.locator("#files .path")).to_have_text(["notes.md", "no\\u200btes.md"])  # (the list's order: the page's)
    expect(app.page.get_by_role("button", name="Remove no\\u200btes.md")).to_have_count(1)
    assert sorted(app.stats()["files"]) == ["notes.md", "no\u200btes.md"]  # (the API: the names as they are)
    # the pack's note that a file it quoted changed, and an error quoting the question
    app.drop_files({"report\u202etxt.md": "zeppelin hangar report\n"})
    box = app.page.get_by_test_id("search")
    box.fill("zeppelin hangar")
    app.page.get_by_test_id("pack-run").click()
    expect(app.page.locator("#pack-info")).to_contain_text("snippet")
    app.drop_files({"report\u202etxt.md": "zeppelin hangar report, again\n"})
    info = app.page.locator("#pack-info").inner_text()
    assert info == "The packed context quoted report\\u202etxt.md, which has changed since; pack again.", info
    box.fill("the \u202eof")
    app.page.get_by_test_id("pack-run").click()
    expect(app.page.locator("#pack-info")).to_contain_text("no indexable words")
    for sel in ("#pack-info", "#search-info"):
        box.press("Enter")
        assert "\u202e" not in app.page.locator(sel).inner_text(), sel

"""The page itself: "try it" sample, search results, pack panel, copy prompt, stats, file list."""

import json
import re

import pytest
from playwright.sync_api import expect

CITE = re.compile(r"^(?P<path>\S.*):L(?P<start>\d+)-(?P<end>\d+)$")


def results(app):
    return app.page.locator('[data-testid="result"]')


def test_try_sample_indexes_and_shows_results(app, sample_docs):
    app.page.get_by_test_id("try-sample").click()
    app.page.evaluate("window.ragweb.idle()")
    assert app.stats()["files"] == [f"sample/{p}" for p, _ in sample_docs]
    assert app.page.get_by_test_id("search").input_value()          # a question is filled in
    results(app).first.wait_for()
    assert results(app).count() > 0
    stats = app.page.get_by_test_id("stats").inner_text()
    assert stats.startswith(f"{len(sample_docs)} files")
    assert re.search(r"; index \d+(\.\d)? [KM]B of the 400 MB a tab holds$", stats), stats
    assert app.offline.blocked == []


def test_the_sample_project_leaves_the_users_own_files_of_its_names_alone(app, sample_docs):
    mine = {"README.md": "# My project\nThe zeppelin hangar readme.\n",
            "docs/configuration.md": "The zeppelin hangar port is 8443.\n"}
    assert {p for p, _ in sample_docs} >= set(mine)  # (the sample has files of these names)
    for path, text in mine.items():
        assert app.index(path, text)["success"]
    app.page.get_by_test_id("try-sample").click()
    app.page.evaluate("window.ragweb.idle()")
    assert app.stats()["files"] == sorted([*mine, *(f"sample/{p}" for p, _ in sample_docs)])
    assert {r["path"] for r in app.query("zeppelin hangar")["results"]} == set(mine)
    status = app.page.locator("#status").inner_text()
    assert status.startswith(f"Indexed the sample project (sample/): {len(sample_docs)} files. Try a question"), status
    # again: the same files, unchanged (not indexed again), and said so
    app.page.get_by_test_id("try-sample").click()
    app.page.evaluate("window.ragweb.idle()")
    assert app.page.locator("#status").inner_text().startswith(
        f"Nothing new: the sample project (sample/) is indexed already, its {len(sample_docs)} files unchanged. "
        "Try a question")


def test_search_results_show_citation_score_and_highlight(app, sample_docs):
    app.index_sample()
    box = app.page.get_by_test_id("search")
    box.fill("parse_headers obsolete line folding")
    box.press("Enter")
    results(app).first.wait_for()
    docs = dict(sample_docs)
    first = results(app).first
    cite = first.locator(".cite").inner_text()
    m = CITE.match(cite)
    assert m, cite
    assert m["path"] in docs
    assert re.match(r"^score \d+\.\d{3}$", first.locator(".score").inner_text())
    # The snippet text is exactly the cited lines, and matched words are <mark>ed.
    lines = docs[m["path"]].split("\n")[int(m["start"]) - 1:int(m["end"])]
    snippet = first.locator(".snippet").inner_text()
    assert snippet.strip() == "\n".join(lines).strip()
    marks = [t.lower() for t in first.locator("mark").all_inner_texts()]
    assert marks and all(re.search(r"pars|header|obsolet|line|fold", t) for t in marks)
    # The result count follows the top-k box.
    app.page.fill("#topk", "2")
    app.page.dispatch_event("#topk", "change")
    assert results(app).count() == 2


def test_search_as_you_type_and_empty_question_message(app):
    app.index("a.md", "# A\nretry policy with backoff\n")
    box = app.page.get_by_test_id("search")
    box.fill("backoff")
    results(app).first.wait_for()
    box.fill("the and of")
    box.press("Enter")
    app.wait("document.getElementById('results').children.length === 0")
    assert "no indexable words" in app.page.locator("#search-info").inner_text()
    box.fill("quantum chromodynamics")
    box.press("Enter")
    expect(app.page.locator("#search-info")).to_contain_text("0 results: ")
    expect(app.page.locator("#search-info")).to_contain_text(": no indexed file has these words")
    app.call("() => ragClear()")
    box.press("Enter")
    expect(app.page.locator("#search-info")).to_contain_text(": nothing is indexed yet; add files above")


def test_pack_panel_and_copy_prompt(app):
    app.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    app.index_sample()
    app.page.get_by_test_id("search").fill("how does the retry policy back off")
    app.page.get_by_test_id("budget").fill("400")
    app.page.get_by_test_id("pack-run").click()
    packed = json.loads(app.page.get_by_test_id("pack-output").inner_text())
    assert packed["budget_tokens"] == 400 and 0 < packed["used_tokens"] <= 400
    assert packed["snippets"]
    assert app.page.get_by_test_id("pack").locator("#pack-info").inner_text().count("tokens")
    copy = app.page.get_by_test_id("copy-prompt")
    assert copy.is_enabled()
    copy.click()
    app.wait("window.__ragLastCopied !== undefined")
    prompt = app.page.evaluate("window.__ragLastCopied")
    assert "how does the retry policy back off" in prompt
    first = packed["snippets"][0]
    assert f"[{first['path']}:{first['range']}]" in prompt
    assert app.page.evaluate("navigator.clipboard.readText()") == prompt
    assert "Copied the prompt" in app.page.locator("#pack-info").inner_text()
    # Other views of the same packed context: cited headers ready to paste.
    app.page.select_option("#pack-format", "markdown")
    text = app.page.get_by_test_id("pack-output").inner_text()
    assert f"[`{first['path']}`:{first['range']}]" in text and f"/400 tokens" in text
    app.page.get_by_test_id("copy-json").click()
    assert app.page.evaluate("window.__ragLastCopied") == text


def test_pack_modes(app):
    app.index_sample()
    app.page.get_by_test_id("search").fill("how does the retry policy back off")
    app.page.get_by_test_id("budget").fill("600")
    app.page.get_by_test_id("pack-run").click()
    used = {"compact": json.loads(app.page.get_by_test_id("pack-output").inner_text())["used_tokens"]}
    for mode in ("lean", "whole"):  # changing the mode packs again
        app.page.select_option("#pack-mode", mode)
        out = json.loads(app.page.get_by_test_id("pack-output").inner_text())
        assert out == app.call("(q, o) => ragPack(q, 600, o)", out["query"],
                               {"lean": True} if mode == "lean" else {"compact": False})
        used[mode] = out["used_tokens"]
    assert 0 < used["lean"] <= 192 < used["compact"]


def test_pack_budget_controls_are_linked(app):
    app.page.get_by_test_id("budget").fill("1200")
    app.page.dispatch_event("#budget", "input")
    assert app.page.input_value("#budget-range") == "1200"


def test_file_list_remove_and_clear_all(app):
    app.index("alpha.md", "alpha text about otters\n")
    app.index("beta.md", "beta text about otters\n")
    expect(app.page.locator("#files .path")).to_have_text(["alpha.md", "beta.md"])
    app.page.get_by_role("button", name="Remove alpha.md").click()
    assert app.stats()["files"] == ["beta.md"]
    expect(app.page.locator("#files .path")).to_have_text(["beta.md"])
    expect(app.page.get_by_test_id("stats")).to_contain_text("1 file,")
    app.page.once("dialog", lambda d: d.accept())  # (Clear all asks first)
    app.page.get_by_test_id("clear-all").click()
    assert app.stats()["totalDocs"] == 0
    expect(app.page.locator("#files li")).to_have_count(0)


def test_numbers_typed_in_exponent_form_are_read_as_numbers_and_clear_all_drops_the_pack(app):
    app.index_sample()
    page = app.page
    page.get_by_test_id("search").fill("retry backoff jitter")
    page.fill("#topk", "2e0")  # parseInt read "2e0" as 2 but "1e1" as 1
    page.fill("#topk", "1e1")
    page.dispatch_event("#search", "input")
    app.wait("document.querySelectorAll('#results > li').length === 10")
    page.get_by_test_id("budget").fill("3e2")
    page.get_by_test_id("pack-run").click()
    assert json.loads(page.get_by_test_id("pack-output").inner_text())["budget_tokens"] == 300
    page.get_by_test_id("budget").fill("250.5")
    page.get_by_test_id("pack-run").click()
    assert "budget must be an integer" in page.locator("#pack-info").inner_text()
    assert page.get_by_test_id("copy-prompt").is_disabled()
    page.get_by_test_id("budget").fill("300")
    page.get_by_test_id("pack-run").click()
    assert page.get_by_test_id("copy-prompt").is_enabled()
    page.once("dialog", lambda d: d.accept())  # (Clear all asks first)
    page.get_by_test_id("clear-all").click()  # the pack quoted files that are gone
    assert page.get_by_test_id("pack-output").inner_text() == ""
    assert page.get_by_test_id("copy-prompt").is_disabled() and page.get_by_test_id("copy-json").is_disabled()


def test_a_pack_quoting_a_file_that_changes_or_goes_is_dropped(app):
    page = app.page
    for change in ("remove button", "ragIndex", "unrelated ragIndex"):
        app.call("(f, c) => ragIndex(f, c)", "gone.md", "# Secret\nThe quokka password is hunter2.")
        app.call("(f, c) => ragIndex(f, c)", "other.md", "# Other\nThe walrus.")
        page.get_by_test_id("search").fill("quokka password")
        page.get_by_test_id("pack-run").click()
        assert "hunter2" in page.get_by_test_id("pack-output").inner_text()
        if change == "remove button":
            page.locator("#files li", has_text="gone.md").get_by_test_id("remove").click()
        elif change == "ragIndex":
            app.call("(f, c) => ragIndex(f, c)", "gone.md", "# Secret\nRotated.")
        else:
            app.call("(f, c) => ragIndex(f, c)", "other.md", "# Other\nThe walrus again.")
            assert "hunter2" in page.get_by_test_id("pack-output").inner_text()  # (it quotes no other.md)
            assert page.get_by_test_id("copy-prompt").is_enabled()
            continue
        assert page.get_by_test_id("pack-output").inner_text() == "", change
        assert page.get_by_test_id("copy-prompt").is_disabled() and page.get_by_test_id("copy-json").is_disabled()
        assert page.locator("#pack-info").inner_text() == (
            "The packed context quoted gone.md, which has changed since; pack again.")


def test_files_can_be_chosen_with_the_keyboard(app):
    page = app.page
    # Which file input a key opens. (The click is cancelled, so no dialog opens: whether
    # Chromium shows one on the shared page depends on the tests before; the page's part is
    # to click the input.)
    page.evaluate("""() => {
        window.__opened = [];
        for (const id of ['pick-files', 'pick-folder']) {
            document.getElementById(id).addEventListener('click', (e) => {
                window.__opened.push(id); e.preventDefault(); }, { once: true });
        }
    }""")
    page.focus("#try-sample")
    active = "document.activeElement.id"
    for expected, key in (("choose-folder", "Enter"), ("choose-files", " ")):
        page.keyboard.press("Shift+Tab")  # (in the tab order: buttons, not labels round hidden inputs)
        assert page.evaluate(active) == expected
        page.keyboard.press(key)
    assert page.evaluate("window.__opened") == ["pick-folder", "pick-files"]
    page.evaluate("""() => document.getElementById('pick-files').addEventListener('click', (e) => {
        window.__opened.push('pick-files'); e.preventDefault(); }, { once: true })""")
    page.focus("#dropzone")
    page.keyboard.press("Enter")
    assert page.evaluate("window.__opened") == ["pick-folder", "pick-files", "pick-files"]


def test_results_shown_follow_changes_made_through_the_api(app):
    app.index("alpha.md", "alpha text about otters\n")
    app.index("beta.md", "beta text about otters\n")
    app.page.get_by_test_id("search").fill("otters")
    app.page.dispatch_event("#search", "input")
    results = app.page.locator("#results > li")
    expect(results).to_have_count(2)
    app.call("(f) => ragRemove(f)", "alpha.md")  # a script's change, not the page's buttons
    expect(results).to_have_count(1)
    expect(results.first).to_contain_text("beta.md")
    app.call("() => ragClear()")
    expect(results).to_have_count(0)


def test_storage_usage_is_shown(app):
    app.wait("document.getElementById('storage').textContent.includes('used of')")


def test_no_console_errors_during_use(app):
    app.index_sample()
    app.page.get_by_test_id("search").fill("rate limiter token bucket")
    app.page.get_by_test_id("search").press("Enter")
    results(app).first.wait_for()
    app.page.get_by_test_id("pack-run").click()
    errors = [c for c in app.console if c[0] in ("error", "pageerror")]
    assert errors == []


@pytest.mark.parametrize("status, body, why", [(404, "gone", "HTTP 404"),
                                               (200, "not a zip", "not a readable wheel")])
def test_a_wheel_the_server_cannot_give_is_named_and_ragready_rejects(launch_persistent, site_dir,
                                                                      status, body, why):
    """The wheels are fetched while Pyodide starts; one that fails (missing, or not a wheel)
    stops the boot with its name and why, in the page and in ragReady's rejection."""
    ctx = launch_persistent()
    wheel = next(p.name for p in (site_dir / "wheels").glob("snowballstemmer-*.whl"))
    ctx.route(f"**/wheels/{wheel}", lambda route: route.fulfill(status=status, body=body))
    page = ctx.new_page()
    page.goto("./")
    reason = page.evaluate("window.ragReady.then(() => 'resolved', (e) => String(e && e.message))")
    assert reason == f"could not load the Python wheel {wheel}: {why}"
    expect(page.locator("body")).to_contain_text(f"The engine failed to load: could not load the Python wheel {wheel}")
    # every call says why, ragFlush too (not "still loading", which will never end)
    for call in ("Promise.resolve(ragStats())", "ragFlush()"):
        assert json.loads(page.evaluate(call))["error"] == f"not ready: {reason}", call


def test_the_page_opened_as_a_file_says_to_serve_its_folder(browser, site_dir):
    """A built site opened from disk (a double-click on index.html) said only "The engine
    failed to load: Failed to fetch": the browser refuses file:// fetches."""
    ctx = browser.new_context()
    try:
        page = ctx.new_page()
        page.goto((site_dir / "index.html").as_uri())
        reason = page.evaluate("window.ragReady.then(() => 'resolved', (e) => String(e && e.message))")
        assert reason.startswith("this page was opened as a file (file://)"), reason
        expect(page.locator("#status")).to_have_text(re.compile(
            r"^The engine failed to load: this page was opened as a file \(file://\).*\(rag web, .*127\.0\.0\.1:8000"))
    finally:
        ctx.close()


def test_a_top_or_budget_box_that_holds_no_number_shows_the_number_used(app):
    """A box left empty, or holding what is no number ("e", "-": the browser lets them be
    typed), was read as the default (10 results, 4000 tokens) while it went on showing
    itself, unlike a number out of range, which is shown as the number read."""
    app.index_sample()
    page = app.page
    page.get_by_test_id("search").fill("retry backoff")
    page.locator("#topk").focus()
    page.keyboard.press("Control+A")
    page.keyboard.type("e")
    page.keyboard.press("Enter")
    expect(results(app)).to_have_count(10)
    expect(page.locator("#topk")).to_have_value("10")
    for typed in ("", "-"):
        page.get_by_test_id("budget").focus()
        page.keyboard.press("Control+A")
        page.keyboard.press("Backspace")
        if typed:
            page.keyboard.type(typed)
        page.keyboard.press("Enter")
        expect(page.locator("#pack-info")).to_contain_text(" of 4000 tokens")
        expect(page.get_by_test_id("budget")).to_have_value("4000")
        assert page.input_value("#budget-range") == "4000"


def test_the_top_box_is_not_rewritten_while_it_is_being_typed_in(app):
    """Emptying the top box to type another number: a search run meanwhile (a live update, here
    a ragIndex) wrote 10 back into it under the cursor. It is left as typed until the edit is
    done, and shown as read then."""
    app.index_sample()
    page = app.page
    page.get_by_test_id("search").fill("retry backoff")
    expect(results(app)).to_have_count(10)
    box = page.locator("#topk")
    box.focus()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    app.index("retry.md", "# Retry\nRetry with backoff: retry backoff retry.\n")  # (the results are redone)
    expect(page.locator(".result .cite").first).to_have_text(re.compile(r"^retry\.md:"))
    expect(box).to_have_value("")
    assert page.evaluate("document.activeElement.id") == "topk"
    page.keyboard.type("3")
    page.keyboard.press("Tab")
    expect(results(app)).to_have_count(3)
    expect(box).to_have_value("3")
    # an edit left with the box empty: shown as the 10 it is read as
    box.focus()
    page.keyboard.press("Control+A")
    page.keyboard.press("Backspace")
    page.keyboard.press("Tab")
    expect(box).to_have_value("10")
    expect(results(app)).to_have_count(10)

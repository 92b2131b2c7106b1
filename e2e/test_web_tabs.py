"""IndexedDB persistence across tabs: tabs that share the stored index, a closed tab's
changes taken by the tabs open or opened next, and the conflicts told (split from
test_web_persistence.py so that the two test processes share the browser tests evenly)."""

import json
import re
import time

from playwright.sync_api import expect

from idb import READ_KEYS_JS, STORE_READ_FLAG_JS, WRITE_RECORD_JS, packed, saved_tab


def test_two_tabs_share_the_index_and_never_overwrite_each_other(launch_persistent, boot_page, make_app,
                                                                 wait_for):
    ctx = launch_persistent()
    page_a, page_b = ctx.pages[0], ctx.new_page()
    boot_page(page_a)
    boot_page(page_b)
    a, b = make_app(page_a), make_app(page_b)

    # A saves: B, with no changes of its own, loads A's index.
    a.index("from-a.md", "# A\nabout narwhals\n")
    assert a.flush()["saved"] is True
    wait_for(page_b, "JSON.parse(ragStats()).files.includes('from-a.md')")
    assert [h["path"] for h in b.query("narwhals")["results"]] == ["from-a.md"]

    # B saves on top of that: A follows.
    b.index("from-b.md", "# B\nabout belugas\n")
    assert b.flush()["saved"] is True
    wait_for(page_a, "JSON.parse(ragStats()).files.includes('from-b.md')")

    # Both change at once: the first save wins, the other tab refuses to overwrite it. (The
    # saves made at once for the API's changes have had their share of the tabs' time, as a
    # script's on a big index may: each change waits for the debounce, so neither tab has
    # heard of the other's when it makes its own.)
    for app in (a, b):
        app.defer_saves()
    page_a.evaluate("ragIndex('only-a.md', 'about orcas')")
    page_b.evaluate("ragIndex('only-b.md', 'about dolphins')")
    assert a.flush()["saved"] is True
    wait_for(page_b, "window.ragweb.storage().conflict")
    res = b.flush()
    assert "another tab" in res["error"]
    assert page_b.locator("#banner").is_visible() and "another tab" in page_b.locator("#banner").inner_text()
    # What is stored is A's index, whole.
    page_c = ctx.new_page()
    boot_page(page_c)
    files = make_app(page_c).stats()["files"]
    assert "only-a.md" in files and "only-b.md" not in files and "from-b.md" in files


# The keys in the page's object store (the index, and saves of closed tabs not settled yet).
def test_a_tab_that_loads_while_another_saves_catches_up(launch_persistent, boot_page, make_app, wait_for,
                                                           hold_wheels):
    """B reads the stored index at once and is ready seconds later; A saves in between. B
    missed A's announcement (it came before B was ready) and kept the older index, and a
    change made in B then replaced A's save on B's way out."""
    ctx, page_a, a = saved_tab(launch_persistent, boot_page, make_app, "old.md", "# Old\nabout walruses\n")
    page_b = ctx.new_page()
    page_b.add_init_script(STORE_READ_FLAG_JS)
    release = hold_wheels(page_b)  # B's wheels wait until A has saved, so B cannot be ready before
    page_b.goto("./")
    wait_for(page_b, "window.__storeRead === true")
    a.index("new.md", "# New\nabout narwhals\n")
    assert a.flush()["saved"] is True
    assert "not ready" in page_b.evaluate("ragStats()")  # (A saved between B's read and B's start)
    release()
    page_b.evaluate("window.ragReady")
    wait_for(page_b, "JSON.parse(ragStats()).files.includes('new.md')")
    b = make_app(page_b)
    assert [h["path"] for h in b.query("narwhals")["results"]] == ["new.md"]
    # B's change goes on top of A's, even made straight before a reload
    b.index("b.md", "# B\nabout belugas\n")
    page_b.reload()
    page_b.evaluate("window.ragReady")
    assert b.stats()["files"] == ["b.md", "new.md", "old.md"]
    wait_for(page_a, "JSON.parse(ragStats()).files.includes('b.md')")


def test_tabs_closed_with_changes_keep_one_and_say_the_other_was_not_kept(launch_persistent, boot_page,
                                                                          make_app, wait_for):
    """Two tabs change the index and close at once: each writes on its way out, and the
    second write silently replaced the first."""
    ctx, page_a, a = saved_tab(launch_persistent, boot_page, make_app, "base.md", "# Base\nabout walruses\n")
    page_b = ctx.new_page()
    boot_page(page_b)
    b = make_app(page_b)
    assert b.stats()["files"] == ["base.md"]
    for app in (a, b):  # (both changes left to the saves on the way out)
        app.defer_saves()
    a.index("a.md", "# A\nabout narwhals\n")
    b.index("b.md", "# B\nabout belugas\n")
    page_c = ctx.new_page()
    page_a.close(run_before_unload=True)
    page_b.close(run_before_unload=True)
    boot_page(page_c)
    c = make_app(page_c)
    if c.stats()["files"] == ["base.md"]:
        # Neither save on the way out landed: a browser does not promise that it will, and on
        # a loaded machine it often does not (the exit notes' own test is in test_web_big_drops).
        # Then both are said to be lost, not kept silently.
        expect(page_c.locator("#banner")).to_contain_text("did not reach the browser's storage")
    else:
        assert c.stats()["files"] in (["a.md", "base.md"], ["b.md", "base.md"])
        expect(page_c.locator("#banner")).to_contain_text(re.compile("were not kept|did not reach the browser's storage"))
    # the kept one is stored as the index, the other dropped: nothing is left to settle
    wait_for(page_c, "!window.ragweb.storage().dirty && !window.ragweb.storage().saving")
    assert page_c.evaluate(READ_KEYS_JS) == ["current"]
    kept = c.stats()["files"]
    page_c.reload()
    page_c.evaluate("window.ragReady")
    assert c.stats()["files"] == kept
    expect(page_c.locator("#banner")).to_be_hidden()


def test_an_open_tab_takes_the_changes_of_a_tab_that_closed(launch_persistent, boot_page, make_app, wait_for):
    ctx = launch_persistent()
    page_a, page_b = ctx.pages[0], ctx.new_page()
    boot_page(page_a)
    boot_page(page_b)
    a = make_app(page_a)
    a.index("a.md", "# A\nabout narwhals\n")
    page_a.close(run_before_unload=True)  # within the save's debounce: written on the way out
    wait_for(page_b, "JSON.parse(ragStats()).files.includes('a.md')")
    expect(page_b.locator("#status")).to_contain_text("Updated from another tab")
    assert page_b.evaluate(READ_KEYS_JS) == ["current"]
    page_c = ctx.new_page()
    boot_page(page_c)
    assert make_app(page_c).stats()["files"] == ["a.md"]
    expect(page_c.locator("#banner")).to_be_hidden()


def _closed_with_changes(launch_persistent, boot_page, make_app):
    """A profile whose stored index is base.md, and a tab that closed with a.md added within
    the save's debounce (no other tab open): (context, a page of the site that is not the app)."""
    ctx, page_a, _ = saved_tab(launch_persistent, boot_page, make_app, "base.md", "# Base\nabout walruses\n")
    holder = ctx.new_page()  # (keeps the browser open)
    holder.goto("./manifest.json")
    # the change and the page's going in one turn: the save's debounce cannot come between
    page_a.evaluate("""() => { ragIndex('a.md', '# A\\nabout narwhals\\n');
                               window.dispatchEvent(new PageTransitionEvent('pagehide')); }""")
    page_a.close(run_before_unload=True)
    assert [k for k in holder.evaluate(READ_KEYS_JS) if k != "current"][0].startswith("exitp:")  # (a key an earlier version of the page does not read)
    return ctx, holder


def _stats(page):
    return json.loads(page.evaluate("ragStats()"))


def _settled_quietly(page, wait_for, files):
    """The tab has saved what it had to, shows ``files``, and no conflict or banner."""
    wait_for(page, "!window.ragweb.storage().dirty && !window.ragweb.storage().saving")
    time.sleep(0.5)  # (a late message from another tab would show now)
    assert _stats(page)["files"] == files
    assert page.evaluate("window.ragweb.storage().conflict") is None
    expect(page.locator("#banner")).to_be_hidden()


def test_two_tabs_opened_together_take_a_closed_tabs_changes_without_a_conflict(
        launch_persistent, boot_page, make_app, wait_for):
    """A browser restoring two tabs: both took the closed tab's save as their own change,
    and the second to store it showed a conflict though nobody had changed anything."""
    ctx, holder = _closed_with_changes(launch_persistent, boot_page, make_app)
    pages = [ctx.new_page(), ctx.new_page()]
    for page in pages:
        page.goto("./")
    for page in pages:
        page.evaluate("window.ragReady")
    for page in pages:
        _settled_quietly(page, wait_for, ["a.md", "base.md"])
    assert holder.evaluate(READ_KEYS_JS) == ["current"]


# Holds a readwrite transaction on the page's object store open (from another page of the
# same origin) until window.__releaseStore() is awaited: the pages' reads and writes of the
# store made meanwhile wait, and then run in the order they were made.
HOLD_STORE_JS = """() => new Promise((ok, ko) => {
    const rq = indexedDB.open('ragweb', 1);
    rq.onerror = () => ko(rq.error);
    rq.onsuccess = () => {
        const db = rq.result;
        const tx = db.transaction('index', 'readwrite');
        const store = tx.objectStore('index');
        let held = true;
        const done = new Promise((closed) => { tx.oncomplete = () => { db.close(); closed(true); }; });
        window.__releaseStore = () => { held = false; return done; };
        const spin = () => { if (held) store.get('(held)').onsuccess = spin; };
        spin();
        ok(true);
    };
})"""


def test_two_tabs_opened_together_take_a_closed_tabs_changes_without_a_conflict_when_the_store_is_slow(
        launch_persistent, boot_page, make_app, wait_for, hold_wheels):
    """B took the closed tab's save at its boot, and A stored it while B still loaded; once
    ready B read the store again to catch up, and its own store of the same changes began
    before that read answered (a slow store: held here). B took the save under way for
    changes of its own, and showed a conflict though nobody had changed anything."""
    ctx, holder = _closed_with_changes(launch_persistent, boot_page, make_app)
    page_b = ctx.new_page()
    page_b.add_init_script(STORE_READ_FLAG_JS)
    release = hold_wheels(page_b)  # B has read the store (the closed tab's save in it), not started
    page_b.goto("./")
    wait_for(page_b, "window.__storeRead === true")
    page_a = ctx.new_page()
    boot_page(page_a)
    wait_for(page_a, "!window.ragweb.storage().dirty && !window.ragweb.storage().saving")
    assert holder.evaluate(READ_KEYS_JS) == ["current"]  # (A stored it while B loaded)
    holder.evaluate(HOLD_STORE_JS)
    release()
    page_b.evaluate("window.ragReady")
    # B's read to catch up waits for the store; its save (300 ms after it was ready) begins
    wait_for(page_b, "window.ragweb.storage().saving")
    holder.evaluate("window.__releaseStore()")
    for page in (page_a, page_b):
        _settled_quietly(page, wait_for, ["a.md", "base.md"])
    assert holder.evaluate(READ_KEYS_JS) == ["current"]


def test_a_tab_told_of_a_closed_tab_while_loading_takes_its_changes_once(
        launch_persistent, boot_page, make_app, wait_for):
    """The closing tab's message came while this tab loaded (after it had read the store):
    once ready it found the same save waiting, took it for another change, and showed a conflict."""
    ctx, holder = _closed_with_changes(launch_persistent, boot_page, make_app)
    page = ctx.new_page()
    page.goto("./")
    holder.evaluate("new BroadcastChannel('ragweb-index').postMessage({type: 'exit', key: 'exit:late'})")
    page.evaluate("window.ragReady")
    _settled_quietly(page, wait_for, ["a.md", "base.md"])


def test_a_tab_that_took_a_closed_tabs_changes_and_closed_at_once_keeps_them_quietly(
        launch_persistent, boot_page, make_app, wait_for):
    """It closed before storing them: its own closing save held them, yet the next tab said
    the first tab's changes "were not kept"."""
    ctx, holder = _closed_with_changes(launch_persistent, boot_page, make_app)
    page_b = ctx.new_page()
    boot_page(page_b)
    assert _stats(page_b)["files"] == ["a.md", "base.md"]
    page_b.close(run_before_unload=True)
    page_c = ctx.new_page()
    boot_page(page_c)
    _settled_quietly(page_c, wait_for, ["a.md", "base.md"])
    assert holder.evaluate(READ_KEYS_JS) == ["current"]


def test_of_two_closed_tabs_the_first_to_save_wins(launch_persistent, boot_page, make_app, wait_for):
    """A closes with a change; B, with one of its own, is told of the conflict and reloaded
    as its banner asks: B's later save on the way out beat A's. (A's change is saved as its
    call ends; B's waits for the debounce, made first, so B cannot have loaded A's save before
    it: see apiChanged. That A's own save on the way out lands is not what this tests: a
    browser does not promise it, and test_web_persistence drops it on purpose.)"""
    ctx, page_a, a = saved_tab(launch_persistent, boot_page, make_app, "base.md", "# Base\nabout walruses\n")
    page_b = ctx.new_page()
    boot_page(page_b)
    b = make_app(page_b)
    b.defer_saves()
    b.index("b.md", "# B\nabout belugas\n")
    a.index("a.md", "# A\nabout narwhals\n")
    assert a.flush()["saved"] is True
    page_a.close(run_before_unload=True)
    wait_for(page_b, "window.ragweb.storage().conflict")
    page_b.reload()
    page_b.evaluate("window.ragReady")
    assert b.stats()["files"] == ["a.md", "base.md"]
    expect(page_b.locator("#banner")).to_contain_text("were not kept")


# Holds the page's main thread, as a dump of a big index does for seconds, until the test's
# route answers its synchronous request (`_hold_page`): what the page began before it (a save's
# write, made just after its dump) happens after it, and the messages of other tabs that come
# meanwhile wait.
HOLD_PAGE_JS = """const hold = new XMLHttpRequest();
        hold.open('GET', './__hold_page__', false);
        try { hold.send(); } catch (e) { /* released */ }"""


def _hold_page(page):
    """Route the page's HOLD_PAGE_JS request: (held, release); ``held()`` is true once it waits."""
    routes = []
    page.route("**/__hold_page__", lambda route: routes.append(route))
    return (lambda: bool(routes)), (lambda: routes[0].fulfill(status=204))


def test_a_tab_that_took_a_closed_tabs_changes_and_gave_way_to_another_save_says_they_were_not_kept(
        launch_persistent, boot_page, make_app, wait_for, hold_wheels):
    """Three tabs. B began to save a change of its own (its dump holding the page); meanwhile
    A closed with a change (its save on the way out), and C, loading, read the store and took
    A's save. B's write, made on the index A's save was made on but without it, then landed
    first. C gave way to it with no word ("Updated from another tab"), and C's next save
    deleted A's save: no tab ever said that A's change was not kept."""
    ctx, page_a, a = saved_tab(launch_persistent, boot_page, make_app, "base.md", "# Base\nabout walruses\n")
    page_b = ctx.new_page()
    boot_page(page_b)
    b = make_app(page_b)
    assert b.stats()["files"] == ["base.md"]
    held, release_b = _hold_page(page_b)
    page_b.evaluate("""() => { setTimeout(() => {
        ragIndex('b.md', '# B\\nabout belugas\\n');
        ragFlush();  // (its dump is made now; its write after the hold)
        %s
    }); }""" % HOLD_PAGE_JS)
    while not held():
        page_a.wait_for_timeout(20)
    page_a.evaluate("""() => { ragIndex('a.md', '# A\\nabout narwhals\\n');
                               window.dispatchEvent(new PageTransitionEvent('pagehide')); }""")
    page_a.close(run_before_unload=True)
    page_c = ctx.new_page()
    page_c.add_init_script(STORE_READ_FLAG_JS)
    release_c = hold_wheels(page_c)  # C has read the store (A's save in it, on top of it), not started
    page_c.goto("./")
    wait_for(page_c, "window.__storeRead === true")
    assert any(k.startswith("exitp:") for k in page_c.evaluate(READ_KEYS_JS))  # (A's save)
    release_b()
    wait_for(page_b, "!window.ragweb.storage().dirty && !window.ragweb.storage().saving")
    assert b.stats()["files"] == ["b.md", "base.md"]
    release_c()
    page_c.evaluate("window.ragReady")
    c = make_app(page_c)
    wait_for(page_c, "JSON.parse(ragStats()).files.includes('b.md')")
    # (it had taken A's save at its boot, and gave way to B's after: not lost at its boot)
    expect(page_c.locator("#status")).to_contain_text("Updated from another tab")
    assert c.stats()["files"] == ["b.md", "base.md"]
    expect(page_c.locator("#banner")).to_contain_text("were not kept")
    # and what is stored holds nothing of A's save left to settle
    c.index("c.md", "# C\nabout orcas\n")
    assert c.flush()["saved"] is True
    assert page_c.evaluate(READ_KEYS_JS) == ["current"]


def test_two_tabs_reading_an_older_index_again_are_no_conflict(launch_persistent, boot_page, make_app,
                                                               wait_for, older_index):
    """A browser restoring two tabs: each re-reads the older index and saves it. The second
    to save showed "another tab saved ... this tab's changes were not saved", though its
    user had changed nothing, and then saved nothing until reloaded."""
    eng = older_index
    for i in range(100):
        eng.add_document(f"bulk/{i}.md", f"# Part {i}\n\n" + f"Filler words about part {i}.\n" * 40)
    ctx = launch_persistent()
    page_a = ctx.pages[0]
    boot_page(page_a)
    page_a.evaluate(WRITE_RECORD_JS, {"version": 1, "bytes": packed(eng.to_bytes()), "savedAt": 0})
    page_b = ctx.new_page()
    page_a.evaluate("location.reload()")
    page_b.goto("./")
    for page in (page_a, page_b):
        wait_for(page, "window.ragReady")
        assert page.evaluate("window.ragReady")["reread"] == 102
    for page in (page_a, page_b):
        wait_for(page, "!window.ragweb.storage().dirty && !window.ragweb.storage().saving")
    time.sleep(1)  # (a late message from the other tab would show now)
    for page in (page_a, page_b):
        assert page.evaluate("window.ragweb.storage().conflict") is None
        expect(page.locator("#banner")).to_be_hidden()
        assert make_app(page).query("zebrafish")["results"] == []
    # and a change in either is saved as usual
    assert make_app(page_b).index("new.md", "about puffins")["success"]
    assert make_app(page_b).flush()["saved"] is True
    wait_for(page_a, "JSON.parse(ragStats()).files.includes('new.md')")

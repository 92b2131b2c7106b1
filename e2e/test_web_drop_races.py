"""A drop against what happens while it runs: a ragIndex or ragRemove made meanwhile wins
(while the drop's folders are read, before it reaches the file, while it reads that file), a
folder or ignore or config file that cannot be read is named and the rest is indexed, a
failure part way does not leave the page saying it is under way, and a reload while a
dropped folder is read (or a pick's config file, or the sample being fetched) says the drop was
cut short.

The drops are FileSystemEntry objects as the browser hands them out, some of whose reads are
held at a gate until the test opens it (`window.__waiting` lists the reads held now), so every
step waits on the page's own state, not on timing."""

from playwright.sync_api import expect

# Drop `tree` ({name: text or {…}}) as folder entries and return at once. `gates`: {path: how}
# for reads to hold until `window.__release(path)` ('read': the folder's first readEntries;
# 'file': entry.file(); 'bytes': the File's arrayBuffer()) or to fail ('fail': readEntries
# or entry.file() fails as for a folder or file gone since the drop; 'fail-later': a folder's
# readEntries fails after its first batch of 100 entries); 'throw': the entry
# itself throws when asked what it is.
GATED_DROP_JS = """({tree, gates = {}}) => {
    const held = window.__held = window.__held || {};
    window.__waiting = window.__waiting || [];
    window.__release = (path) => held[path] && held[path].open();
    for (const path of Object.keys(gates)) {
        let open;
        held[path] = {promise: new Promise((ok) => { open = ok; }), open};
    }
    const hold = (path) => { window.__waiting.push(path); return held[path].promise; };
    const gone = () => new DOMException('A requested file or directory could not be found at the time an operation was processed.', 'NotFoundError');
    const isDir = (c) => typeof c === 'object' && !Array.isArray(c);
    const entry = (name, c, path) => {
        if (gates[path] === 'throw') {
            return {name, get isFile() { throw new DOMException('The entry is no longer valid.', 'InvalidStateError'); },
                    get isDirectory() { return false; }};
        }
        return isDir(c) ? {
            isFile: false, isDirectory: true, name,
            createReader() {
                const kids = Object.entries(c).map(([n, k]) => entry(n, k, `${path}/${n}`));
                let pos = 0;
                return { readEntries(ok, ko) {
                    if (gates[path] === 'fail' || (gates[path] === 'fail-later' && pos > 0)) {
                        setTimeout(() => ko(gone()));
                        return;
                    }
                    const batch = kids.slice(pos, pos + 100);
                    const first = pos === 0;
                    pos += batch.length;
                    if (first && gates[path] === 'read') hold(path).then(() => ok(batch));
                    else setTimeout(() => ok(batch));
                } };
            },
        } : {
            isFile: true, isDirectory: false, name,
            file(ok, ko) {
                if (gates[path] === 'fail') { setTimeout(() => ko(gone())); return; }
                const f = new File([c], name);
                if (gates[path] === 'bytes') {
                    const read = f.arrayBuffer.bind(f);
                    f.arrayBuffer = () => hold(path).then(read);
                }
                if (gates[path] === 'file') hold(path).then(() => ok(f));
                else setTimeout(() => ok(f));
            },
        };
    };
    const items = Object.entries(tree).map(([n, c]) => {
        const e = entry(n, c, n);
        return { kind: 'file', webkitGetAsEntry: () => e, getAsFile: () => null };
    });
    const ev = new Event('drop', {bubbles: true, cancelable: true});
    Object.defineProperty(ev, 'dataTransfer', {value: {items, files: []}});
    document.querySelector('[data-testid="dropzone"]').dispatchEvent(ev);
}"""

NOT_FOUND = "A requested file or directory could not be found at the time an operation was processed."


def note(i: int, tag: str = "fulmar") -> str:
    return f"# Note {i}\nA {tag} over ledge {i}.\n"


def status(page) -> str:
    return page.locator("#status").inner_text()


def banner(page) -> str:
    return page.locator("#banner-text").inner_text() if page.locator("#banner").is_visible() else ""


def busy(page) -> bool:
    return page.evaluate("document.getElementById('progress').classList.contains('busy')")


def drop(app, tree, gates=None):
    app.page.evaluate("window.__waiting = []")
    app.page.evaluate(GATED_DROP_JS, {"tree": tree, "gates": gates or {}})


def held(app, path):
    """Wait until the drop is held at the read of `path`."""
    app.wait(f"window.__waiting.includes({path!r})", timeout=60)


def release(app, path):
    app.page.evaluate("(p) => window.__release(p)", path)


def texts(app, path):
    """The texts of `path`'s chunks, or [] when it is not indexed."""
    return [r["text"] for r in app.query("ledge copy kittiwake fulmar", 100)["results"] if r["path"] == path]


# ---------------------------------------------------------------- 1. a later call wins over a drop


API_TEXT = "# API copy\nThe newest copy text, given through the API about a kittiwake on a ledge.\n"


def test_a_file_given_or_removed_through_the_api_while_the_drop_is_read_stays_as_the_api_left_it(app):
    assert app.index("proj/old.md", "# Earlier\nAn earlier copy text about a ledge.\n")["success"]
    drop(app, {"proj": {"new.md": note(1), "old.md": note(2), "sub": {f"s{i}.md": note(10 + i) for i in range(3)}}},
         {"proj/sub": "read"})
    held(app, "proj/sub")  # (the drop's folders are still being read)
    assert app.index("proj/new.md", API_TEXT) == {"success": True, "chunks": 1, "filename": "proj/new.md"}
    assert app.call("() => ragRemove('proj/old.md')") == {"success": True, "removed": True, "filename": "proj/old.md"}
    release(app, "proj/sub")
    app.page.evaluate("window.ragweb.idle()")
    assert app.stats()["files"] == ["proj/new.md", "proj/sub/s0.md", "proj/sub/s1.md", "proj/sub/s2.md"]
    assert texts(app, "proj/new.md") == [API_TEXT.strip()]
    # (nor is the file the API gave counted as an earlier drop's that this one replaced)
    assert status(app.page) == (
        "Indexed 3 files (3 chunks). Left out 2 files that a later call changed: proj/new.md (replaced by "
        "ragIndex after it was dropped), proj/old.md (removed by ragRemove after it was dropped).")
    # a drop made after the call wins over it in turn
    drop(app, {"proj": {"new.md": note(1)}})
    app.page.evaluate("window.ragweb.idle()")
    assert texts(app, "proj/new.md") == [note(1).strip()]


def test_a_file_given_or_removed_through_the_api_before_the_drop_reaches_it_stays_as_the_api_left_it(app):
    assert app.index("proj/d.md", "# Earlier\nAn earlier copy text about a ledge.\n")["success"]
    drop(app, {"proj": {"a.md": note(1), "b.md": note(2), "c.md": note(3), "d.md": note(4)}}, {"proj/b.md": "bytes"})
    held(app, "proj/b.md")  # (indexing: a.md is in, c.md and d.md are not reached yet)
    assert app.stats()["files"] == ["proj/a.md", "proj/d.md"]
    assert app.index("proj/c.md", API_TEXT)["success"]
    assert app.call("() => ragRemove('proj/d.md')")["removed"] is True
    release(app, "proj/b.md")
    app.page.evaluate("window.ragweb.idle()")
    assert app.stats()["files"] == ["proj/a.md", "proj/b.md", "proj/c.md"]
    assert texts(app, "proj/c.md") == [API_TEXT.strip()]
    # (d.md was an earlier drop's file: not any more once ragRemove took it out)
    assert status(app.page) == (
        "Indexed 2 files (2 chunks). Left out 2 files that a later call changed: proj/c.md (replaced by "
        "ragIndex after it was dropped), proj/d.md (removed by ragRemove after it was dropped).")


def test_a_file_given_or_removed_through_the_api_while_the_drop_reads_it_stays_as_the_api_left_it(app):
    assert app.index("proj/b.md", "# Earlier\nAn earlier copy text about a ledge.\n")["success"]
    drop(app, {"proj": {"a.md": note(1), "b.md": note(2), "c.md": note(3)}}, {"proj/a.md": "file", "proj/b.md": "bytes"})
    held(app, "proj/a.md")  # entry.file() of a.md under way
    assert app.index("proj/a.md", API_TEXT)["success"]
    release(app, "proj/a.md")
    held(app, "proj/b.md")  # b.md's bytes being read
    assert app.call("() => ragRemove('proj/b.md')")["removed"] is True
    release(app, "proj/b.md")
    app.page.evaluate("window.ragweb.idle()")
    assert app.stats()["files"] == ["proj/a.md", "proj/c.md"]
    assert texts(app, "proj/a.md") == [API_TEXT.strip()]
    assert status(app.page) == (
        "Indexed 1 file (1 chunk). Left out 2 files that a later call changed: proj/a.md (replaced by "
        "ragIndex after it was dropped), proj/b.md (removed by ragRemove after it was dropped).")


# ---------------------------------------------------------------- 2. what cannot be read


def test_an_unreadable_folder_or_ignore_or_config_file_is_named_and_the_rest_of_the_drop_is_indexed(app):
    page = app.page
    drop(app, {
        "proj": {".gitignore": "top.md\n", "a": {f"n{i}.md": note(i) for i in range(3)},
                 "gone": {"lost.md": note(9)}, "top.md": note(5)},
        "cfg": {"rag.yaml": "index:\n  excludes: ['drafts/**']\n", "x.md": note(7)},
        "dot": {".rag": {"config.yaml": "index:\n  includes: ['**/*.rst']\n"}, "y.md": note(8)},
    }, {"proj/gone": "fail", "proj/.gitignore": "fail", "cfg/rag.yaml": "fail", "dot/.rag": "fail"})
    page.evaluate("window.ragweb.idle()")
    # (as `rag index`: the folder's rules without the ignore file that cannot be read; a
    # config file that cannot be read keeps its folder out, a .rag/ folder leaves the defaults)
    assert app.stats()["files"] == ["dot/y.md", "proj/a/n0.md", "proj/a/n1.md", "proj/a/n2.md", "proj/top.md"]
    assert status(page) == "Indexed 5 files (5 chunks). Some of the drop could not be read (see the message below)."
    assert banner(page).split("\n") == [
        f"A folder was left out: cannot read cfg/rag.yaml: {NOT_FOUND}",
        f"Some of the drop could not be read: proj/.gitignore: unreadable ignore file: {NOT_FOUND}; "
        f"proj/gone/: unreadable directory: {NOT_FOUND}; dot/.rag/: unreadable directory: {NOT_FOUND}",
    ]
    assert not busy(page)
    assert page.locator("#progress-text").inner_text().startswith("Indexed 5 of 5 files, ")
    assert page.evaluate("document.getElementById('progress-bar').getAttribute('value')") == "5"


def test_a_folder_read_only_in_part_keeps_what_was_read_and_is_named(app):
    page = app.page
    drop(app, {"big": {f"n{i:03}.md": note(i) for i in range(150)}, "b.md": note(200)}, {"big": "fail-later"})
    page.evaluate("window.ragweb.idle()")
    files = app.stats()["files"]
    assert files == ["b.md"] + [f"big/n{i:03}.md" for i in range(100)]
    assert status(page) == "Indexed 101 files (101 chunks). Some of the drop could not be read (see the message below)."
    assert banner(page) == f"Some of the drop could not be read: big/: directory read only in part: {NOT_FOUND}"


def test_a_picked_folders_unreadable_ignore_or_config_file_is_named_and_the_rest_is_indexed(app):
    page = app.page
    page.evaluate("""async (gone) => {
        const file = (path, text, unreadable) => {
            const f = new File([text], path.split('/').pop());
            Object.defineProperty(f, 'webkitRelativePath', {value: path});
            if (unreadable) f.arrayBuffer = () => Promise.reject(new DOMException(gone, 'NotReadableError'));
            return f;
        };
        await window.ragweb.indexFiles([
            file('pick/.gitignore', 'b.md\\n', true), file('pick/a.md', '# A\\nA ledge.\\n'),
            file('pick/b.md', '# B\\nA ledge.\\n'),
            file('conf/rag.yaml', 'index:\\n  excludes: []\\n', true), file('conf/c.md', '# C\\nA ledge.\\n'),
        ]);
    }""", NOT_FOUND)
    assert app.stats()["files"] == ["pick/a.md", "pick/b.md"]
    assert status(page) == "Indexed 2 files (2 chunks). Some of the drop could not be read (see the message below)."
    assert banner(page).split("\n") == [
        f"A folder was left out: cannot read conf/rag.yaml: {NOT_FOUND}",
        f"Some of the drop could not be read: pick/.gitignore: unreadable ignore file: {NOT_FOUND}",
    ]


def test_a_drop_that_fails_part_way_does_not_stay_under_way(app):
    page = app.page
    drop(app, {"proj": {"a.md": note(1), "bad": {"b.md": note(2), "odd": "x"}}}, {"proj/bad/odd": "throw"})
    page.evaluate("window.ragweb.idle()")
    assert banner(page) == "Indexing failed: The entry is no longer valid."
    assert status(page) == "Indexing failed: see the message below."
    assert not busy(page)
    assert page.locator("#progress-text").inner_text() == "Indexing failed."
    assert page.evaluate("document.getElementById('progress-bar').hasAttribute('value')")
    # the sample's files cannot be fetched: the status line no longer says they are
    n = page.evaluate("fetch('./manifest.json').then((r) => r.json()).then((m) => m.sample.length)")
    gone = []

    def refuse(route):
        route.fulfill(status=404, body="gone")
        gone.append(route.request.url)
    page.route("**/sample/**", refuse)
    try:
        page.evaluate("window.ragweb.trySample()")
        # (the page gives up at the first 404: the others are still on their way, and a
        # route taken away under them went to the next handler too, "already handled")
        for _ in range(600):
            if len(gone) >= n:
                break
            page.wait_for_timeout(50)
    finally:
        page.unroute("**/sample/**")
    assert banner(page).startswith("Indexing failed: sample/") and banner(page).endswith(": HTTP 404")
    assert status(page) == "Indexing failed: see the message below."
    assert app.stats()["files"] == []


# ---------------------------------------------------------------- 3. a reload while a folder is read


def test_a_reload_while_a_dropped_folder_is_read_says_the_drop_was_cut_short(launch_persistent, boot_page,
                                                                              make_app):
    page = launch_persistent().pages[0]
    boot_page(page)
    app = make_app(page)
    cut_short = ("A drop was cut short when the page was closed or reloaded, while its folders were still "
                 "being read: its files were not indexed; drop them again to add them.")
    # the walk is held at the dropped folder itself: no file of it is found yet
    drop(app, {"proj": {"deep": {f"n{i}.md": note(i) for i in range(5)}}}, {"proj": "read"})
    held(app, "proj")
    assert page.locator("#progress-text").inner_text() == "Reading dropped files… 0 found"
    page.reload()
    assert page.evaluate("window.ragReady")["totalDocs"] == 0
    expect(page.locator("#banner")).to_be_visible()
    assert banner(page) == cut_short
    # again, with a drop queued behind it: both are told
    drop(app, {"proj": {"deep": {f"n{i}.md": note(i) for i in range(5)}}}, {"proj": "read"})
    held(app, "proj")
    drop(app, {"later.md": note(6)})
    app.wait("/queued/.test(document.getElementById('status').textContent)")
    page.reload()
    assert page.evaluate("window.ragReady")["totalDocs"] == 0
    expect(page.locator("#banner")).to_be_visible()
    assert banner(page).split("\n") == [
        cut_short, "1 drop waiting behind it when the page was closed or reloaded was not indexed."]


def test_a_reload_while_a_pick_reads_its_config_or_the_sample_is_fetched_says_so(launch_persistent,
                                                                          boot_page, make_app):
    page = launch_persistent().pages[0]
    boot_page(page)
    app = make_app(page)
    # the pick's rag.yaml is never read to its end: the pick is held before its first file
    page.evaluate("""() => {
        const file = (path, text, held) => {
            const f = new File([text], path.split('/').pop());
            Object.defineProperty(f, 'webkitRelativePath', {value: path});
            if (held) f.arrayBuffer = () => { window.__configRead = true; return new Promise(() => {}); };
            return f;
        };
        window.ragweb.indexFiles([file('pick/rag.yaml', 'index:\\n  excludes: []\\n', true),
                                  file('pick/a.md', '# A\\nA ledge.\\n'), file('pick/b.md', '# B\\nA ledge.\\n')]);
    }""")
    app.wait("window.__configRead === true", timeout=60)
    page.reload()
    assert page.evaluate("window.ragReady")["totalDocs"] == 0
    expect(page.locator("#banner")).to_be_visible()
    assert banner(page) == ("A drop was cut short when the page was closed or reloaded: 3 of its files were "
                            "not indexed; drop them again to add them.")
    # the sample's files are never fetched: the sample project is held before its first file
    n = page.evaluate("fetch('./manifest.json').then((r) => r.json()).then((m) => m.sample.length)")
    assert n > 0
    requests = []
    page.route("**/sample/**", lambda route: requests.append(route))
    try:
        page.locator('[data-testid="try-sample"]').click()
        app.wait("/Fetching the sample/.test(document.getElementById('status').textContent)", timeout=60)
        for _ in range(600):
            if requests:
                break
            page.wait_for_timeout(100)
        page.reload()
    finally:
        page.unroute("**/sample/**")
    assert page.evaluate("window.ragReady")["totalDocs"] == 0
    expect(page.locator("#banner")).to_be_visible()
    assert banner(page) == (f"A drop was cut short when the page was closed or reloaded: {n} of its files were "
                            "not indexed; drop them again to add them.")


def test_a_drop_cut_short_at_a_yield_counts_the_files_not_indexed_exactly(launch_persistent, boot_page, make_app):
    page = launch_persistent().pages[0]
    boot_page(page)
    # the page is left (pagehide) at the drop's first yield between two files: the note it
    # leaves must count the files indexed and those not indexed as the drop's whole
    note = page.evaluate("""async () => {
        const orig = window.setTimeout;
        let note = null;
        window.setTimeout = function (fn, ms, ...rest) {
            if (ms === undefined && !note && JSON.parse(ragStats()).totalDocs >= 5) {
                window.dispatchEvent(new PageTransitionEvent('pagehide', {persisted: false}));
                const keys = Object.keys(localStorage).filter((k) => k.startsWith('ragweb:exit-note:'));
                note = keys.map((k) => JSON.parse(localStorage.getItem(k)))[0] || {};
                note.indexed = JSON.parse(ragStats()).totalDocs;
            }
            return orig.call(window, fn, ms, ...rest);
        };
        const dt = new DataTransfer();
        for (let i = 0; i < 1500; i++) dt.items.add(new File([`# Note ${i}\\nA beam ${i}.\\n`], `n${i}.md`));
        document.querySelector('[data-testid="dropzone"]').dispatchEvent(
            new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
        await window.ragweb.idle();
        window.setTimeout = orig;
        return note;
    }""")
    assert note and note["files"] == note["indexed"], note
    assert note["files"] + note["left"] == 1500, note

"""Big drops: what a reload in their middle keeps and says, a clear while a folder is read,
no look-up of every file's size up front, saves spaced by what they cost, the count of files
found while a folder is read, a drop's banners, files too large named, a full storage, a
folder dropped again under the same name, and folders too deep (as `rag index`)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import expect

from test_web_dragdrop import DROP_FILES_JS

SRC = Path(__file__).resolve().parent.parent / "src"

# A folder drop as the browser presents it (FileSystemEntry objects; a directory reader hands
# out at most 100 entries a call, each after `delay` ms: a slow disk). `tree`: {name: text or
# {…}}; `deep`: a chain of folders that deep instead (a note in each, deep/d1/…/dN). Without
# `wait` it returns at once.
DROP_JS = """async ({tree, deep, delay = 0, wait = true}) => {
    if (deep) {
        tree = {deep: {}};
        let node = tree.deep;
        for (let d = 0; d <= deep; d++) {
            node[`f${d}.md`] = `# Level ${d}\\nA storm petrel at depth ${d}.\\n`;
            if (d < deep) node = node[`d${d + 1}`] = {};
        }
    }
    const isDir = (c) => typeof c === 'object' && !Array.isArray(c);
    const entry = (name, c) => isDir(c) ? {
        isFile: false, isDirectory: true, name,
        createReader() {
            const kids = Object.entries(c).map(([n, k]) => entry(n, k));
            let pos = 0;
            return { readEntries(ok) { const batch = kids.slice(pos, pos + 100); pos += batch.length;
                                       setTimeout(() => ok(batch), delay); } };
        },
    } : {
        isFile: true, isDirectory: false, name,
        file(ok) { ok(new File([Array.isArray(c) ? new Uint8Array(c) : c], name)); },
    };
    const items = Object.entries(tree).map(([n, c]) => {
        const e = entry(n, c);
        return { kind: 'file', webkitGetAsEntry: () => e, getAsFile: () => null };
    });
    const ev = new Event('drop', {bubbles: true, cancelable: true});
    Object.defineProperty(ev, 'dataTransfer', {value: {items, files: []}});
    document.querySelector('[data-testid="dropzone"]').dispatchEvent(ev);
    if (wait) await window.ragweb.idle();
}"""

# Resolves once the text of the element `id` matches the regex `re` (polled in the page).
UNTIL_TEXT_JS = """async (id, re) => {
    const until = performance.now() + 30000;
    while (!new RegExp(re).test(document.getElementById(id).textContent)) {
        if (performance.now() > until) throw new Error(`no ${re} in #${id} in 30 s`);
        await new Promise((r) => setTimeout(r, 5));
    }
}"""

# Drops made one after the other in one call (DROP_JS's arguments), each once `after` ([id,
# regex]: UNTIL_TEXT_JS) holds, if it has one. A drop meant to come while another is under
# way then does: made in the test's next call, it came a round trip later, and on a loaded
# machine the other drop could have ended by then.
DROPS_JS = """async (drops) => {
    const drop = %s, until = %s;
    for (const {after, ...args} of drops) {
        if (after) await until(...after);
        await drop(args);
    }
}""" % (DROP_JS, UNTIL_TEXT_JS)

# Every text the progress line shows from now on, in window.__progress.
LOG_PROGRESS_JS = """() => {
    window.__progress = [];
    const el = document.getElementById('progress-text');
    window.__progressObs = new MutationObserver(() => window.__progress.push(el.textContent));
    window.__progressObs.observe(el, {childList: true, characterData: true, subtree: true});
}"""

INVALID_CONFIG = "index:\n  excludes: drafts\n"


def folder(n_dirs: int, n_files: int, tag: str = "fulmar") -> dict:
    return {f"part{d:02d}": {f"n{i:03d}.md": f"# Note {d}-{i}\nA {tag} over ledge {d} and {i}.\n"
                             for i in range(n_files)} for d in range(n_dirs)}


def status(page) -> str:
    return page.locator("#status").inner_text()


def banner(page) -> str:
    return page.locator("#banner-text").inner_text() if page.locator("#banner").is_visible() else ""


# ---------------------------------------------------------------- 1. a reload during a drop


# The browser ends the leaving page before the write of its save on the way out lands (what
# a big index's write often does): the transaction the page commits is aborted instead.
EXIT_WRITE_LOST_JS = """window.addEventListener('pagehide', () => {
    IDBTransaction.prototype.commit = function () { this.abort(); };
});"""


def test_a_reload_whose_save_on_the_way_out_did_not_land_says_so(launch_persistent, boot_page, make_app):
    page = launch_persistent().pages[0]
    page.add_init_script(EXIT_WRITE_LOST_JS)
    boot_page(page)
    app = make_app(page)
    for name in ("a", "b"):
        assert app.index(f"{name}.md", f"# {name}\nA shag on the rocks.\n")["success"]
    assert app.flush()["saved"] is True
    app.defer_saves()  # (c, d, e wait for the reload)
    # (in one call: changes kept coming for 5 s are saved whatever the debounce, see markChanged)
    assert page.evaluate("""() => ['c', 'd', 'e'].every((name) =>
        JSON.parse(ragIndex(`${name}.md`, `# ${name}\\nA gannet at sea.\\n`)).success)""")
    page.reload()  # (only the save on the way out holds c, d, e)
    assert page.evaluate("window.ragReady")["totalDocs"] == 2
    expect(page.locator("#banner")).to_be_visible()
    assert banner(page) == (
        "Changes made just before this page was last closed or reloaded may not all have been kept: "
        "the save it made on its way out did not reach the browser's storage (5 files were indexed "
        "then; 2 are restored here).")
    page.reload()  # said once
    page.evaluate("window.ragReady")
    expect(page.locator("#banner")).to_be_hidden()


def test_a_reload_in_the_middle_of_a_drop_says_how_many_of_its_files_were_not_indexed(
        launch_persistent, boot_page, make_app, wait_for):
    page = launch_persistent().pages[0]
    boot_page(page)
    page.evaluate("""() => {
        const files = Array.from({length: 30}, (_, i) =>
            new File([`# Note ${i}\\nA guillemot on ledge ${i}.\\n`], `note${String(i).padStart(2, '0')}.md`));
        files[10].arrayBuffer = () => new Promise(() => {});  // a file that takes for ever to read
        window.ragweb.indexFiles(files);
    }""")
    wait_for(page, "JSON.parse(ragStats()).totalDocs === 10")
    # (saved now: whether the save on the way out lands is another test's; here nothing is left to save)
    assert json.loads(page.evaluate("ragFlush()"))["success"]
    page.reload()
    assert page.evaluate("window.ragReady")["totalDocs"] == 10
    expect(page.locator("#banner")).to_be_visible()
    assert banner(page) == ("A drop was cut short when the page was closed or reloaded: 20 of its files "
                            "were not indexed; drop them again to add them.")
    assert make_app(page).stats()["files"] == [f"note{i:02d}.md" for i in range(10)]


# ---------------------------------------------------------------- 2. a clear while a folder is read


def test_clearing_the_index_while_a_dropped_folder_is_read_leaves_the_drop_out(app):
    page = app.page
    # (cleared in the call that drops, once the folder is being read: a round trip later, on a
    # loaded machine, its reading could have ended)
    assert json.loads(page.evaluate(f"""async (tree) => {{
        await ({DROP_JS})({{tree, delay: 60, wait: false}});
        await ({UNTIL_TEXT_JS})('status', '^Reading dropped files');
        return ragClear();
    }}""", {"proj": folder(12, 20)})) == {"success": True}
    page.evaluate("window.ragweb.idle()")
    assert app.stats()["files"] == []  # (the walk went on, and every file was indexed after the clear)
    assert status(page) == "The index was cleared while files were being indexed: the rest were not indexed."


# ---------------------------------------------------------------- 3. no size look-ups up front


def test_the_files_sizes_are_not_looked_up_before_the_first_is_indexed(app):
    """For a picked folder each File.size is a synchronous look-up: summed over 20,000 files
    up front, they held the page 26 s (4x slowdown) before anything moved."""
    out = app.page.evaluate("""async () => {
        const size = Object.getOwnPropertyDescriptor(Blob.prototype, 'size');
        let looked = 0;
        let atStart = null;
        Object.defineProperty(Blob.prototype, 'size', {configurable: true,
            get() { looked += 1; return size.get.call(this); }});
        try {
            const el = document.getElementById('progress-text');
            const obs = new MutationObserver(() => {
                if (atStart === null && el.textContent.startsWith('Indexing')) atStart = looked; });
            obs.observe(el, {childList: true, characterData: true, subtree: true});
            const files = Array.from({length: 2000}, (_, i) => new File([`note ${i} about a fulmar`], `n${i}.md`));
            await window.ragweb.indexFiles(files);
            obs.disconnect();
            return {atStart, looked, last: el.textContent};
        } finally {
            Object.defineProperty(Blob.prototype, 'size', size);
        }
    }""")
    assert out["atStart"] is not None and out["atStart"] < 20, out
    assert out["last"].startswith("Indexed 2,000 of 2,000 files"), out
    assert app.stats()["totalDocs"] == 2000


# ---------------------------------------------------------------- 4. saves spaced by their cost


def test_a_drops_saves_are_spaced_by_what_they_cost(app):
    """Each save of a big index held the page for seconds, every 5 s: a drop spent a third of
    its time saving. Here a save holds the page 1.5 s (its write to IndexedDB is made slow):
    the next one during the drop waits ten times that. (The drop's files are read one every
    50 ms, so that it lasts 13 s whatever the machine's speed: one sized by how fast a first
    drop went was too short to tell when the machine was less loaded by then.)"""
    out = app.page.evaluate("""async ({n, everyMs, holdMs}) => {
        const put = IDBObjectStore.prototype.put;
        const saves = [];
        IDBObjectStore.prototype.put = function (value, key) {
            if (key === 'current' && value && value.bytes) {
                const t = performance.now();
                while (performance.now() - t < holdMs) { /* a slow write holds the page */ }
                saves.push(t);
            }
            return put.call(this, value, key);
        };
        try {
            const t0 = performance.now();
            const files = Array.from({length: n}, (_, i) => {
                const file = new File([`# N ${i}\\nA skua w${i} chases terns.`], `n${String(i).padStart(3, '0')}.md`);
                const read = file.arrayBuffer.bind(file);
                file.arrayBuffer = () => new Promise((ok) => setTimeout(ok, t0 + i * everyMs - performance.now()))
                    .then(read);
                return file;
            });
            await window.ragweb.indexFiles(files);
            await window.ragweb.idle();  // (the drop's save as it ends is the last one: not counted)
            const ms = performance.now() - t0;
            await ragFlush();
            return {during: saves.slice(0, -1).map((t) => Math.round(t - t0)), ms: Math.round(ms), saves: saves.length};
        } finally {
            IDBObjectStore.prototype.put = put;
        }
    }""", {"n": 261, "everyMs": 50, "holdMs": 1500})
    assert out["ms"] > 11_000, f"the drop was too short to tell: {out}"
    assert app.stats()["totalDocs"] == 261
    # before: a save every 5 s whatever it cost (at 5 s and 11.5 s, each holding the page 1.5 s).
    # (On a loaded machine the drop can run longer, with more saves during it: so the spacing
    # is what is checked, not a count.)
    during = out["during"]
    assert during and during[0] >= 4500, out
    assert all(later - earlier >= 14_000 for earlier, later in zip(during, during[1:])), out


# ---------------------------------------------------------------- 5. progress while a folder is read


def test_the_files_found_are_counted_while_a_dropped_folder_is_read_and_a_second_drop_waits(app):
    page = app.page
    page.evaluate(LOG_PROGRESS_JS)
    page.evaluate(DROPS_JS, [
        {"tree": {"proj": folder(25, 24)}, "delay": 60, "wait": False},
        {"tree": {"later.md": "# Later\nA kittiwake.\n"}, "wait": False,  # (made while the first is read)
         "after": ["progress-text", "^Reading dropped files… [1-9]"]},
    ])
    assert "queued" in status(page)
    page.evaluate("window.ragweb.idle()")
    page.evaluate("window.__progressObs.disconnect()")
    shown = page.evaluate("window.__progress")
    first = shown[:next(i for i, t in enumerate(shown) if t.startswith("Indexing "))]  # (the first drop's)
    counts = [int(t.split("… ")[1].split(" ")[0].replace(",", "")) for t in first]
    assert any(0 < c < 600 for c in counts), shown
    assert counts == sorted(counts), shown
    assert any(t.startswith("Reading dropped files… ") and t.endswith(" found (1 more drop queued)") for t in shown), shown
    assert any(t.startswith("Indexing ") and t.endswith("(1 more drop queued)") for t in shown), shown
    assert app.stats()["totalDocs"] == 601


# ---------------------------------------------------------------- 6. a drop's banners


def test_a_drops_problems_stay_in_view_all_of_them_while_a_queued_drop_runs(app):
    page = app.page
    page.evaluate(DROPS_JS, [
        {"tree": {
            "bad": {"rag.yaml": INVALID_CONFIG, "guide.md": "# Guide\nEgret.\n"},
            "good": {**folder(3, 10)["part00"], "odd\nname.md": "# Odd\nA name with a line break.\n"},
        }, "delay": 100, "wait": False},
        {"tree": {"later.md": "# Later\nA kittiwake.\n"}},  # queued meanwhile
    ])
    assert "later.md" in app.stats()["files"]
    expect(page.locator("#banner")).to_be_visible()
    lines = banner(page).split("\n")
    assert len(lines) == 2, lines
    assert lines[0].startswith("A folder was left out: bad/rag.yaml line 2") and "index.excludes" in lines[0]
    assert lines[1].startswith("Some files failed: good/odd") and "line break" in lines[1], lines
    # a drop made once the banner is up: its user has seen it
    page.evaluate(DROP_JS, {"tree": {"last.md": "# Last\nA puffin.\n"}})
    expect(page.locator("#banner")).to_be_hidden()


# ---------------------------------------------------------------- 7. files too large, named


def test_files_left_out_for_their_size_are_named_with_their_sizes_and_the_limit(app):
    page = app.page
    app.drop_files({"huge.txt": ["x", 5_000_001], "huger.md": ["y", 6_000_000], "small.txt": "small file about quokkas"})
    assert app.stats()["files"] == ["small.txt"]
    assert status(page) == (
        "Indexed 1 file (1 chunk). 2 files were larger than index.max_file_bytes (5,000,000 bytes) "
        "and left out: huge.txt (5,000,001 bytes), huger.md (6,000,000 bytes); drop them in a folder "
        "whose rag.yaml raises it to index them.")  # (a loose file has no folder of its own)


# ---------------------------------------------------------------- 8. the storage full during a drop


def test_a_full_storage_stops_a_drop_says_so_once_and_keeps_its_banner(launch_persistent, boot_page,
                                                                      make_app, origin):
    ctx = launch_persistent()
    page = ctx.pages[0]
    ctx.new_cdp_session(page).send("Storage.overrideQuotaForOrigin", {"origin": origin, "quotaSize": 1_500_000})
    boot_page(page)
    app = make_app(page)
    assert app.index("small.md", "# Small\nA small note about terns.\n")["success"]
    assert app.flush()["saved"] is True
    page.evaluate("window.ragweb.setSaveBudget(-1e9)")  # (big.txt waits for the debounce: see apiChanged)
    # ~3 MB of text that does not fit (not saved yet), then a drop of 20 notes, the 6th slow to
    # read; the save made meanwhile finds the storage full
    out = page.evaluate("""async () => {
        const lines = Array.from({length: 50000}, (_, i) => `line ${i} about cormorant colony ${i * 7919 % 10007} nesting ledge ${i}`);
        ragIndex('big.txt', lines.join('\\n'));
        let release;
        const slow = new Promise((ok) => { release = ok; });
        const files = Array.from({length: 20}, (_, i) =>
            new File([`# Note ${i}\\nA shag on ledge ${i}.\\n`], `notes/n${String(i).padStart(2, '0')}.md`));
        const read = files[5].arrayBuffer.bind(files[5]);
        files[5].arrayBuffer = () => slow.then(read);
        const done = window.ragweb.indexFiles(files);
        while (JSON.parse(ragStats()).totalDocs < 7) await new Promise((r) => setTimeout(r, 10));
        const saved = JSON.parse(await ragFlush());
        release();
        await done;
        return saved;
    }""")
    assert out["error"].startswith("storage quota full"), out
    assert app.stats()["totalDocs"] == 8  # small, big and the 6 notes read before the storage was full
    text = banner(page)
    assert page.locator("#banner").get_attribute("data-kind") == "quota"
    assert text.count("storage quota full") == 1, text  # (it was repeated for every file left)
    time.sleep(0.8)  # (the save after the drop finds the storage full again: the banner stays whole)
    assert banner(page) == text
    assert "will be lost on reload" not in text  # (a reload brings back what was last saved)
    assert "a reload brings back the index as it was last saved (1 file)" in text, text
    assert "A drop stopped there: 14 of its files were not indexed." in text, text
    assert status(page) == ("Indexed 6 files (6 chunks). The browser's storage is full: the drop's other 14 files "
                            "were not indexed (see the message below).")


# ---------------------------------------------------------------- 9. a folder of the same name


def test_a_second_folder_of_the_same_name_says_what_it_replaced_and_what_it_kept(app):
    page = app.page
    page.evaluate(DROP_JS, {"tree": {"docs": {"install.md": "# Install\nA.\n", "usage.md": "# Usage\nA.\n",
                                              "faq.md": "# FAQ\nA.\n"}}})
    assert status(page) == "Indexed 3 files (3 chunks)."
    page.evaluate(DROP_JS, {"tree": {"docs": {"install.md": "# Install\nB.\n", "api.md": "# API\nB.\n"}}})
    assert app.stats()["files"] == ["docs/api.md", "docs/faq.md", "docs/install.md", "docs/usage.md"]
    assert status(page) == (
        "Indexed 2 files (2 chunks). docs/ was indexed already: 1 file replaced, 2 of the earlier drop's "
        "files kept (not in this drop: remove them if they do not belong here).")
    # the same folder again: its files are as indexed, so none is indexed again (only their
    # times, new here: these File objects are made now, are recorded)
    page.evaluate(DROP_JS, {"tree": {"docs": {"install.md": "# Install\nB.\n", "api.md": "# API\nB.\n"}}})
    assert status(page) == (
        "Nothing new: 2 files unchanged, not indexed again. docs/ was indexed already: 2 files unchanged, "
        "2 of the earlier drop's files kept (not in this drop: remove them if they do not belong here).")


# ---------------------------------------------------------------- 10. folders too deep


def test_folders_deeper_than_the_cli_walks_are_left_out_and_named(app, tmp_path):
    page = app.page
    page.evaluate(DROP_JS, {"deep": 205})
    files = app.stats()["files"]
    # the same folder on disk, indexed by `rag index`
    node = tmp_path / "deep"
    for d in range(206):
        node.mkdir()
        (node / f"f{d}.md").write_text(f"# Level {d}\nA storm petrel at depth {d}.\n")
        node = node / f"d{d + 1}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "ragweb", "index", str(tmp_path / "deep")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "a folder more than 200 folders deep" in proc.stderr
    from ragweb.engine import Engine
    from ragweb.indexer import index_path
    engine = Engine.open(index_path(tmp_path / "deep"), create=False)
    try:
        cli = sorted(f"deep/{p}" for p in engine.stats()["files"])
    finally:
        engine.close()
    assert files == cli and len(files) == 201
    too_deep = "deep/" + "/".join(f"d{d}" for d in range(1, 202)) + "/"
    assert status(page) == (f"Indexed 201 files (201 chunks). Left out 1 folder more than 200 folders deep "
                            f"(its files are not indexed, as with rag index): {too_deep}.")

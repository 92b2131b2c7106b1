"""Drag and drop (synthetic DataTransfer), folders (recursive), the file pickers, the CLI's
include/exclude, binary and size rules, and the progress bar."""

import gzip
import json
import re

DROP_FILES_JS = """async (files) => {
    const dt = new DataTransfer();
    for (const [name, content] of files) {
        const body = Array.isArray(content) ? new Uint8Array(content) : content;
        dt.items.add(new File([body], name, {type: 'application/octet-stream'}));
    }
    const zone = document.querySelector('[data-testid="dropzone"]');
    zone.dispatchEvent(new DragEvent('dragover', {dataTransfer: dt, bubbles: true, cancelable: true}));
    zone.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
    await window.ragweb.idle();
}"""

# A folder drop as the browser presents it: DataTransferItem.webkitGetAsEntry() gives
# FileSystemEntry objects; directory readers hand out at most 100 entries per call.
DROP_TREE_JS = """async (tree) => {
    window.__entered = [];
    const fileEntry = (name, content) => ({
        isFile: true, isDirectory: false, name,
        file(ok) { ok(new File([Array.isArray(content) ? new Uint8Array(content) : content], name)); },
    });
    const dirEntry = (name, children, path) => ({
        isFile: false, isDirectory: true, name,
        createReader() {
            window.__entered.push(path);
            const kids = Object.entries(children).map(([n, c]) =>
                typeof c === 'object' && !Array.isArray(c) ? dirEntry(n, c, path + '/' + n) : fileEntry(n, c));
            let pos = 0;
            return { readEntries(ok) { const batch = kids.slice(pos, pos + 100); pos += batch.length;
                                       setTimeout(() => ok(batch)); } };
        },
    });
    const roots = Object.entries(tree).map(([n, c]) =>
        typeof c === 'object' && !Array.isArray(c) ? dirEntry(n, c, n) : fileEntry(n, c));
    const items = roots.map(entry => ({ kind: 'file', webkitGetAsEntry: () => entry, getAsFile: () => null }));
    const ev = new Event('drop', {bubbles: true, cancelable: true});
    Object.defineProperty(ev, 'dataTransfer', {value: {items, files: []}});
    document.querySelector('[data-testid="dropzone"]').dispatchEvent(ev);
    await window.ragweb.idle();
    return window.__entered;
}"""


def progress_text(app):
    return app.page.locator('[data-testid="progress"]').inner_text()


def test_drop_files(app):
    app.page.evaluate(DROP_FILES_JS, [
        ["notes.md", "# Notes\nThe lighthouse keeper logs the fog signal.\n"],
        ["script.py", "def fog_signal():\n    return 'horn'\n"],
        ["photo.png", [137, 80, 78, 71, 13, 10, 26, 10, 0, 0]],        # not included
        ["data.txt", [0, 1, 2, 3, 0, 255, 0, 7, 0, 0, 1, 2, 3, 4]],    # binary
        ["searchindex.js", 'Search.setIndex({"terms":"' + "fog signal " * 40 + '"})'],  # minified
        ["guide.md.gz", list(gzip.compress(b"# Guide\nSound the fog signal twice.\n"))],  # as Debian ships docs
    ])
    assert app.stats()["files"] == ["guide.md.gz", "notes.md", "script.py"]
    hits = app.query("fog signal")["results"]
    assert {h["path"] for h in hits} == {"guide.md.gz", "notes.md", "script.py"}
    assert next(h["text"] for h in hits if h["path"] == "guide.md.gz") == "# Guide\nSound the fog signal twice."
    text = progress_text(app)
    # (photo.png is not included: left out, as `rag index` does not count it as skipped)
    assert "Indexed 3 of 6 files" in text and "1 left out by the globs or ignore files, 2 skipped" in text, text
    bar = app.page.evaluate("[document.getElementById('progress-bar').value, document.getElementById('progress-bar').max]")
    assert bar[0] == bar[1]


def test_a_drop_that_indexes_nothing_says_what_was_left_out(app):
    app.page.evaluate(DROP_TREE_JS, {"docs": {
        "build": {"html": {"index.html": "<p>Barometer docs.</p>"}},
        ".git": {"HEAD": "ref: main\n"},
        "manual.pdf": [37, 80, 68, 70],
    }})
    assert app.stats()["files"] == []
    assert app.page.locator("#status").inner_text() == (
        "Nothing was indexed: left out the folder docs/build/ (excluded) (drop such a folder's "
        "contents to index them); left out by the globs or ignore files: docs/manual.pdf (not included); "
        "1 file is not text (.pdf), which the page does not read: it indexes text and code files "
        "(save a document as text, as pdftotext does for a PDF, and drop that).")
    # as it says: the folder's contents
    app.page.evaluate(DROP_TREE_JS, {"html": {"index.html": "<p>Barometer docs.</p>"}})
    assert app.stats()["files"] == ["html/index.html"]
    assert app.page.locator("#status").inner_text().startswith("Indexed 1 file ")


def test_a_drop_that_indexes_nothing_for_the_globs_says_so_and_what_would_index_them(app):
    # (it said "skipped proj/notes.txt: not included, proj/secret.md: ignored", its rag.yaml
    # and .gitignore among them, with no word of what would index them, where `rag index`
    # notes "1 file matches no index.includes glob (1 .txt); 1 file or folder is ignored by
    # .gitignore/.ragignore rules ...; index.gitignore: false indexes them")
    app.page.evaluate(DROP_TREE_JS, {"proj": {
        "rag.yaml": "index:\n  includes: ['**/*.md']\n  excludes: ['**/draft-*.md']\n",
        ".gitignore": "secret.md\n",
        "notes.txt": "barometer notes\n",
        "secret.md": "# Secret\nbarometer secret\n",
        "draft-1.md": "# Draft\nbarometer draft\n",
    }})
    assert app.stats()["files"] == []
    assert app.page.locator("#status").inner_text().startswith(
        "Nothing was indexed: left out by the globs or ignore files: proj/draft-1.md (excluded), "
        "proj/notes.txt (not included), proj/secret.md (ignored); "
        "1 file matches no index.includes glob: add a glob that takes it to index.includes in the folder's rag.yaml "
        "to index it (a list there replaces the default one: keep its globs too); "
        "1 file is left out by index.excludes: change it in the folder's rag.yaml to index it; "
        "1 file is ignored by .gitignore/.ragignore rules or the repository's .git/info/exclude: "
        "index.gitignore: false in the folder's rag.yaml indexes it. proj/rag.yaml applied.")
    # loose files have no folder, so no rag.yaml: one of a folder they are dropped in
    app.page.evaluate(DROP_FILES_JS, [["photo.png", [137, 80, 78, 71]], ["chart.svg", "<svg/>"],
                                      ["app.min.js", "var a=1;"]])
    assert app.stats()["files"] == []
    assert app.page.locator("#status").inner_text() == (
        "Nothing was indexed: left out by the globs or ignore files: photo.png (not included), "
        "chart.svg (not included), app.min.js (excluded); "
        "1 file matches no index.includes glob: add a glob that takes it to index.includes in the rag.yaml of a "
        "folder you drop it in to index it (a list there replaces the default one: keep its globs too); "
        "1 file is not text (.png), which the page does not read: it indexes text and code files; "
        "1 file is left out by index.excludes: change it in the rag.yaml of a folder you drop it in to index it.")


def test_loose_hidden_files_that_index_nothing_are_named(app):
    # (a dropped folder's .gitignore is passed over without a word, as `rag index` passes
    # over it; a loose .env is a document given: "Nothing was indexed." named no reason, and
    # the progress line said "0 of 0 files")
    app.page.evaluate(DROP_FILES_JS, [[".env", "SECRET=1\n"], [".bashrc", "alias ll='ls -l'\n"]])
    assert app.stats()["files"] == []
    assert app.page.locator("#status").inner_text().startswith(
        "Nothing was indexed: left out by the globs or ignore files: .env (not included), .bashrc (not included); "
        "2 files match no index.includes glob")
    assert "Indexed 0 of 2 files" in progress_text(app)


def test_drop_folder_recursive_with_cli_rules(app):
    many = {f"item{i:03d}.md": f"# Item {i}\nCatalogue entry {i} about barometers.\n" for i in range(130)}
    entered = app.page.evaluate(DROP_TREE_JS, {
        "proj": {
            "README.md": "# Proj\nA weather station project with an anemometer.\n",
            "src": {"station.py": "def read_anemometer():\n    return 4.2\n",
                    "deep": {"deeper": {"calibrate.js": "export function calibrateBarometer() {}\n"}}},
            "catalogue": many,                                        # > 100 entries: several readEntries
            "node_modules": {"lib": {"index.js": "anemometer in a dependency\n"}},   # excluded dir
            "dist": {"bundle.js": "anemometer bundled\n"},                        # excluded dir
            "app.min.js": "anemometer minified\n",                               # excluded file
            "logo.png": [137, 80, 78, 71, 0, 0, 0, 0],                           # not included
            "blob.txt": [0, 0, 0, 1, 2, 3, 0, 0, 200, 201, 0, 9],                # binary
            ".gitignore": "generated/\nscratch.md\n",                           # as the CLI
            "generated": {"out.md": "anemometer generated\n"},
            "scratch.md": "anemometer scratch\n",
        },
        "loose.txt": "a loose file about hygrometers\n",
    })
    files = app.stats()["files"]
    assert "proj/README.md" in files
    assert "proj/src/station.py" in files
    assert "proj/src/deep/deeper/calibrate.js" in files
    assert "loose.txt" in files
    assert sum(f.startswith("proj/catalogue/") for f in files) == 130
    assert not any("node_modules" in f or "dist/" in f or "generated" in f or
                   f.endswith((".min.js", ".png", "blob.txt", "scratch.md", ".gitignore")) for f in files)
    assert len(files) == 134
    # Excluded folders are not even walked into, as in the CLI.
    assert "proj/node_modules" not in entered and "proj/dist" not in entered
    assert "proj/generated" not in entered
    assert "proj/src/deep/deeper" in entered
    assert {h["path"] for h in app.query("anemometer", 10)["results"]} == {"proj/src/station.py", "proj/README.md"}


def test_a_dropped_folders_ignore_files_are_read_from_their_bytes_as_the_cli_reads_them(app):
    app.page.evaluate(DROP_TREE_JS, {"proj": {
        ".ragignore": list("secret.md\r\n".encode("utf-16")),   # (PowerShell 5.1's `echo secret.md > .ragignore`)
        ".gitignore": list("open.md\r\n".encode("utf-16")),     # (git reads no rule from it either)
        "secret.md": "salary figures\n", "open.md": "open notes\n", "a.md": "plain notes\n",
    }})
    assert app.stats()["files"] == ["proj/a.md", "proj/open.md"]
    status = app.page.locator("#status").inner_text()
    assert "proj/.gitignore not read: UTF-16 text, from which git reads no usable rule either" in status, status


def test_a_dropped_folders_config_is_read_from_its_bytes_and_a_misnamed_one_is_named(app):
    app.page.evaluate(DROP_TREE_JS, {
        "win": {"rag.yaml": list("index:\r\n  excludes: ['private/']\r\n".encode("utf-16")),  # (PowerShell 5.1)
                "private": {"s.md": "salary figures\n"}, "a.md": "open notes\n"},
        "mac": {"Rag.yaml": "index:\n  excludes: ['private/']\n",
                "private": {"s.md": "salary figures\n"}, "b.md": "open notes\n"},
    })
    # (as rag index: the misnamed file is not read, nor indexed -- it was, as a YAML document)
    assert app.stats()["files"] == ["mac/b.md", "mac/private/s.md", "win/a.md"]
    status = app.page.locator("#status").inner_text()
    assert "win/rag.yaml applied" in status and "mac/Rag.yaml is not read: the config file must be named rag.yaml" in status, status
    # passed over without a word, as rag index passes over it: not "left out by index.excludes:
    # change it in the folder's rag.yaml", for a folder whose config is the file left out
    app.page.evaluate(DROP_TREE_JS, {"lone": {"rag.yml": "index:\n  excludes: ['private/']\n"}})
    status = app.page.locator("#status").inner_text()
    assert status.startswith("Nothing was indexed") and "index.excludes" not in status, status
    assert "lone/rag.yml is not read: the config file must be named rag.yaml" in status, status


def test_a_dropped_name_with_backslashes_cannot_replace_another_folders_file(app):
    app.page.evaluate(DROP_TREE_JS, {"work": {"src": {"main.py": "def login():\n    return check_password()\n"}}})
    app.page.evaluate(DROP_TREE_JS, {"evil": {"..\\work\\src\\main.py": "def login():\n    return True\n"}})
    assert app.stats()["files"] == ["evil/..\\work\\src\\main.py", "work/src/main.py"]
    hits = {h["path"]: h["text"] for h in app.query("login", 5)["results"]}
    assert "check_password" in hits["work/src/main.py"]


def test_drop_too_large_file_is_skipped_without_reading(app):
    app.drop_files({"huge.txt": ["x", 5_000_001], "small.txt": "small file about quokkas"})
    assert app.stats()["files"] == ["small.txt"]
    # (the bytes on the progress line are those read: the skipped file's 5 MB are not)
    assert re.fullmatch(r"Indexed 1 of 2 files, \d+ B, 1 skipped\.", progress_text(app)), progress_text(app)


def test_drop_replaces_existing_file(app):
    app.page.evaluate(DROP_FILES_JS, [["a.md", "old words about geckos\n"]])
    app.page.evaluate(DROP_FILES_JS, [["a.md", "new words about iguanas\n"]])
    assert app.stats()["totalDocs"] == 1
    assert app.query("geckos")["results"] == []
    assert app.query("iguanas")["results"][0]["path"] == "a.md"


def test_a_loose_file_replacing_an_indexed_one_or_sharing_a_path_in_its_drop_is_said(app):
    status = app.page.locator("#status")
    app.page.evaluate(DROP_FILES_JS, [["notes.md", "alpha words about geckos\n"]])
    app.page.evaluate(DROP_FILES_JS, [["notes.md", "beta words about iguanas\n"], ["other.md", "newts\n"]])
    assert status.inner_text() == ("Indexed 2 files (2 chunks). notes.md replaced the file of the same name "
                                   "indexed before.")
    # two files of one name in one drop (a file manager's search view): the last one is indexed
    app.page.evaluate(DROP_FILES_JS, [["todo.md", "first list of chores\n"], ["todo.md", "second list of errands\n"],
                                      ["done.md", "finished\n"]])
    assert status.inner_text() == ("Indexed 2 files (2 chunks). The drop held more than one file at the path "
                                   "todo.md: the last one is indexed.")
    assert app.stats()["files"] == ["done.md", "notes.md", "other.md", "todo.md"]
    assert app.query("errands")["results"][0]["path"] == "todo.md"
    assert app.query("chores")["results"] == []


def test_progress_moves_and_page_stays_responsive(app):
    result = app.page.evaluate("""async () => {
        const texts = new Set();
        const el = document.getElementById('progress-text');
        const obs = new MutationObserver(() => texts.add(el.textContent));
        obs.observe(el, {childList: true, characterData: true, subtree: true});
        let ticks = 0;
        const timer = setInterval(() => { ticks += 1; }, 10);
        const dt = new DataTransfer();
        for (let i = 0; i < 300; i++) {
            const body = Array.from({length: 40}, (_, j) => `line ${j} of file ${i}: ${'lorem ipsum dolor '.repeat(4)} w${i}x${j}`).join('\\n');
            dt.items.add(new File([body], `bulk/f${String(i).padStart(3, '0')}.md`));
        }
        document.querySelector('[data-testid="dropzone"]').dispatchEvent(
            new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
        await window.ragweb.idle();
        clearInterval(timer);
        obs.disconnect();
        return {updates: texts.size, ticks, last: el.textContent};
    }""")
    assert app.stats()["totalDocs"] == 300
    assert result["updates"] >= 3, result          # the bar moved while indexing
    assert result["ticks"] >= 3, result            # timers ran: the page was not frozen
    assert "Indexed 300 of 300 files" in result["last"]


# A big file whose words are mostly new (a word analysed before is counted from a memo):
# its terms take long enough to count that the bar moves within it on a fast machine too.
BIG_FILE_JS = """() => {
    const parts = [];
    for (let i = 0; i < 1200; i++) {
        const lines = [];
        for (let j = 0; j < 30; j++) lines.push(`Operators log reading r${i}x${j} of valve v${j}y${i}.`);
        parts.push(`## Section ${i}\\n\\n` + lines.join(' '));
    }
    parts.push('The harbour puffin appears only at the very end.');
    return new File([parts.join('\\n\\n')], 'manual.md');
}"""


# Inside `async (makeFile) => {...}`: drop BIG_FILE_JS's file and wait until part of it is
# indexed (then `el` is the progress text).
START_BIG_DROP_JS = """
        const dt = new DataTransfer();
        dt.items.add((0, eval)(makeFile)());
        const el = document.getElementById('progress-text');
        const started = new Promise((ok) => {
            const obs = new MutationObserver(() => {
                if (/^Indexing 0 of 1 files, [1-9]/.test(el.textContent)) { obs.disconnect(); ok(); } });
            obs.observe(el, {childList: true, characterData: true, subtree: true});
        });
        document.querySelector('[data-testid="dropzone"]').dispatchEvent(
            new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
        await started;"""


def test_one_big_file_is_indexed_in_steps_and_the_bar_moves_within_it(app):
    result = app.page.evaluate("""async (makeFile) => {
        const file = (0, eval)(makeFile)();
        const texts = [];
        const el = document.getElementById('progress-text');
        const obs = new MutationObserver(() => texts.push(el.textContent));
        obs.observe(el, {childList: true, characterData: true, subtree: true});
        const dt = new DataTransfer();
        dt.items.add(file);
        document.querySelector('[data-testid="dropzone"]').dispatchEvent(
            new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
        await window.ragweb.idle();
        obs.disconnect();
        return {texts, size: file.size};
    }""", BIG_FILE_JS)
    assert result["size"] > 1_000_000
    within = {t for t in result["texts"] if t.startswith("Indexing 0 of 1 files")}
    assert len(within) >= 3, result["texts"]  # the bar moved while the one file was indexed
    assert result["texts"][-1].startswith("Indexed 1 of 1 files")
    assert app.stats()["files"] == ["manual.md"]
    assert app.query("harbour puffin")["results"][0]["path"] == "manual.md"


def test_clearing_the_index_while_a_big_file_is_indexed_stops_it(app):
    result = app.page.evaluate("""async (makeFile) => {""" + START_BIG_DROP_JS + """
        const cleared = JSON.parse(ragClear());
        await window.ragweb.idle();
        return {cleared, progress: el.textContent};
    }""", BIG_FILE_JS)
    assert result["cleared"] == {"success": True}
    assert result["progress"].startswith("Stopped at a clear of the index"), result
    assert app.stats()["files"] == []
    assert app.query("harbour puffin")["results"] == []


def test_a_file_given_through_the_api_while_a_big_dropped_one_of_that_name_is_indexed_wins(app):
    result = app.page.evaluate("""async (makeFile) => {""" + START_BIG_DROP_JS + """
        const given = JSON.parse(ragIndex('manual.md', '# Manual\\nNewer text about zebras.'));
        await window.ragweb.idle();
        return {given, status: document.getElementById('status').textContent};
    }""", BIG_FILE_JS)
    assert result["given"] == {"success": True, "chunks": 1, "filename": "manual.md"}
    assert app.query("zebras")["results"][0]["text"] == "# Manual\nNewer text about zebras."
    assert app.stats()["totalChunks"] == 1 and app.query("harbour puffin")["results"] == []
    assert result["status"] == ("Nothing was indexed: skipped manual.md: replaced by ragIndex while it "
                                "was being indexed.")


def test_a_file_being_read_when_the_index_is_cleared_is_not_indexed(app):
    result = app.page.evaluate("""async () => {
        const f = new File(['quokka notes'], 'late.txt');
        const read = f.arrayBuffer.bind(f);
        f.arrayBuffer = () => new Promise((ok) => setTimeout(() => ok(read()), 300));  // a slow disk
        const done = window.ragweb.indexFiles([f]);
        await new Promise((r) => setTimeout(r, 100));
        ragClear();
        await done;
        await window.ragweb.idle();
        return document.getElementById('status').textContent;
    }""")
    assert app.stats()["files"] == []
    assert result == "The index was cleared while files were being indexed: the rest were not indexed."


def test_file_picker(app, tmp_path):
    (tmp_path / "one.md").write_text("# One\nPicked file about sextants.\n")
    (tmp_path / "two.py").write_text("def sextant_angle():\n    pass\n")
    app.page.set_input_files("#pick-files", [str(tmp_path / "one.md"), str(tmp_path / "two.py")])
    app.page.evaluate("window.ragweb.idle()")
    app.wait("JSON.parse(ragStats()).totalDocs === 2")
    assert app.stats()["files"] == ["one.md", "two.py"]


def test_folder_picker(app, tmp_path):
    root = tmp_path / "chart"
    (root / "docs").mkdir(parents=True)
    (root / "node_modules" / "x").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("# Guide\nHow to read a nautical chart.\n")
    (root / "main.js").write_text("export const chartScale = 50000;\n")
    (root / "node_modules" / "x" / "index.js").write_text("nautical dependency\n")
    app.page.set_input_files("#pick-folder", str(root))
    app.wait("JSON.parse(ragStats()).totalDocs >= 2")
    app.page.evaluate("window.ragweb.idle()")
    assert app.stats()["files"] == ["chart/docs/guide.md", "chart/main.js"]
    assert json.loads(app.page.evaluate("ragQuery('nautical chart')"))["results"][0]["path"] == "chart/docs/guide.md"


def test_a_dropped_folders_rag_yaml_selects_its_files(app):
    """As `rag index proj` reads proj/rag.yaml: its globs, relative to the folder, decide."""
    app.page.evaluate(DROP_TREE_JS, {
        "proj": {
            "rag.yaml": "index:\n  excludes: ['drafts/**', '**/*.txt']\npack:\n  token_budget: 900\n",
            "guide.md": "# Guide\nCalibrate the theodolite before each survey.\n",
            "notes.txt": "theodolite notes\n",
            "drafts": {"d.md": "a theodolite draft\n"},
        },
        "other": {"drafts": {"o.md": "# Other\nA theodolite elsewhere.\n"}, "notes.txt": "theodolite\n"},
    })
    assert app.stats()["files"] == ["other/drafts/o.md", "other/notes.txt", "proj/guide.md"]
    assert app.page.locator("#status").inner_text() == (
        "Indexed 3 files (3 chunks). proj/rag.yaml applied (not used in the page: pack.token_budget).")


def test_a_dropped_folder_with_an_invalid_rag_yaml_is_left_out_with_the_reason(app):
    app.page.evaluate(DROP_TREE_JS, {
        "bad": {"rag.yaml": "index:\n  excludes: drafts\n", "guide.md": "# Guide\nLevelling staff.\n"},
        "good": {"a.md": "# A\nLevelling staff readings.\n"},
    })
    assert app.stats()["files"] == ["good/a.md"]
    banner = app.page.locator("#banner-text").inner_text()
    assert banner.startswith("A folder was left out: bad/rag.yaml line 2") and "index.excludes" in banner
    # .rag/config.yaml is read when there is no rag.yaml, as the CLI does
    app.page.evaluate(DROP_TREE_JS, {
        "dot": {".rag": {"config.yaml": "index:\n  includes: ['**/*.rst']\n"},
                "a.md": "# A\nA plumb bob.\n", "b.rst": "B\n=\nA plumb bob.\n"},
    })
    assert "dot/b.rst" in app.stats()["files"] and "dot/a.md" not in app.stats()["files"]


def test_folder_picker_reads_the_folders_rag_yaml(app, tmp_path):
    root = tmp_path / "survey"
    (root / "raw").mkdir(parents=True)
    (root / "rag.yaml").write_text("index:\n  excludes: ['raw/**']\n")
    (root / "report.md").write_text("# Report\nThe survey used a total station.\n")
    (root / "raw" / "points.md").write_text("total station raw points\n")
    app.page.set_input_files("#pick-folder", str(root))
    app.wait("JSON.parse(ragStats()).totalDocs >= 1")
    app.page.evaluate("window.ragweb.idle()")
    assert app.stats()["files"] == ["survey/report.md"]
    assert "survey/rag.yaml applied" in app.page.locator("#status").inner_text()


def test_folder_picker_leaves_out_a_folder_whose_rag_yaml_is_invalid(app, tmp_path):
    root = tmp_path / "level"
    root.mkdir()
    (root / "rag.yaml").write_text("index:\n  includes: 7\n")
    (root / "notes.md").write_text("# Notes\nA spirit level.\n")
    app.page.set_input_files("#pick-folder", str(root))
    app.page.evaluate("window.ragweb.idle()")
    assert app.stats()["files"] == []
    banner = app.page.locator("#banner-text").inner_text()
    assert banner.startswith("A folder was left out: level/rag.yaml line 2") and "index.includes" in banner


def test_clearing_the_index_during_a_drop_stops_the_drop(app):
    result = app.page.evaluate("""async () => {
        const dt = new DataTransfer();
        for (let i = 0; i < 300; i++) {
            const body = Array.from({length: 40}, (_, j) => `line ${j} of file ${i}: ${'lorem ipsum '.repeat(6)}`).join('\\n');
            dt.items.add(new File([body], `bulk/f${String(i).padStart(3, '0')}.md`));
        }
        const el = document.getElementById('progress-text');
        const started = new Promise((ok) => {
            const obs = new MutationObserver(() => { if (/Indexing [1-9]/.test(el.textContent)) { obs.disconnect(); ok(); } });
            obs.observe(el, {childList: true, characterData: true, subtree: true});
        });
        document.querySelector('[data-testid="dropzone"]').dispatchEvent(
            new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
        await started;
        const cleared = JSON.parse(ragClear());
        await window.ragweb.idle();
        return {cleared, progress: el.textContent, status: document.getElementById('status').textContent};
    }""")
    assert result["cleared"] == {"success": True}
    assert app.stats()["totalDocs"] == 0  # (it went on indexing the rest before)
    assert result["progress"].startswith("Stopped at a clear of the index"), result
    assert "cleared while files were being indexed" in result["status"]


def test_files_dropped_while_the_engine_loads_are_indexed_when_it_is_ready(launch_persistent, make_app,
                                                                           wait_for):
    ctx = launch_persistent()
    page = ctx.pages[0]
    page.goto("./", wait_until="commit")
    wait_for(page, "typeof window.ragStats === 'function'")
    early = page.evaluate("""(files) => {
        const dt = new DataTransfer();
        for (const [name, content] of files) dt.items.add(new File([content], name));
        document.querySelector('[data-testid="dropzone"]').dispatchEvent(
            new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
        // read in the same turn as the drop: the engine may be ready by the next one
        return {stats: ragStats(), status: document.getElementById('status').textContent};
    }""", [["early.md", "# Early\nThe puffin lands before the engine is up.\n"]])
    assert json.loads(early["stats"])["error"].startswith("not ready")  # (the drop came first)
    assert "still loading" in early["status"]
    page.evaluate("window.ragReady")
    page.evaluate("window.ragweb.idle()")
    app = make_app(page)
    assert app.stats()["files"] == ["early.md"]
    assert app.query("puffin lands")["results"][0]["path"] == "early.md"
    assert "Indexed 1 file" in page.locator("#status").inner_text()


def test_a_picked_folder_is_reported_as_a_drop_of_it_is(app, tmp_path):
    # (a pick named the folders it left out in the order of their depth, "proj/zeta/,
    # proj/alpha/build/", and its files in the browser's order; a drop names them in its walk's)
    tree = {"zeta": {"node_modules": {"x.md": "x"}, "z.png": "z"}, "alpha": {"build": {"b.md": "b"}, "a.png": "a"},
            "node_modules": {"n.md": "n"}, "m.png": "m",
            ".gitignore": "zeta/\n", "beta": {"y.png": "y", "B.png": "B", "a": {"q.png": "q"}}}

    def write(node, path):
        path.mkdir()
        for name in sorted(node, reverse=True):  # (made in reverse: the listing is not sorted)
            if isinstance(node[name], dict):
                write(node[name], path / name)
            else:
                (path / name).write_text(node[name])
    write(tree, tmp_path / "proj")
    seen = []
    for how in ("pick", "drop"):
        app.page.evaluate("async () => { await window.ragweb.idle(); ragClear(); await ragFlush(); "
                          "document.getElementById('status').textContent = ''; }")
        if how == "pick":
            app.page.set_input_files("#pick-folder", str(tmp_path / "proj"))
            app.wait("document.getElementById('status').textContent !== ''")
            app.page.evaluate("window.ragweb.idle()")
        else:
            app.page.evaluate(DROP_TREE_JS, {"proj": tree})
        seen.append((app.stats()["files"], app.page.locator("#status").inner_text(), progress_text(app)))
    assert seen[0] == seen[1]
    assert seen[1][1].startswith(
        "Nothing was indexed: left out the folders proj/alpha/build/ (excluded), proj/node_modules/ (excluded), "
        "proj/zeta/ (ignored) (drop such a folder's contents to index them); left out by the globs or ignore files: "
        "proj/alpha/a.png (not included), proj/beta/B.png (not included), proj/beta/a/q.png (not included), "
        "proj/beta/y.png (not included), proj/m.png (not included);"), seen[1][1]


def test_a_folder_named_as_an_exclude_is_indexed_by_its_own_rag_yaml(app, tmp_path):
    # `rag index build` reads build/rag.yaml, whose globs do not see the folder's own name; a
    # picked build/ with one was indexed so, then left out whole ("build/ (excluded)" and
    # "build/rag.yaml applied" in one line), and a dropped one was left out; without one, the
    # page's excludes leave it out, as before ("drop such a folder's contents")
    for config, files in (("index:\n  includes: ['**/*.md']\n", ["build/a.md"]), (None, [])):
        tree = {"a.md": "# A\nBarometer readings.\n", **({"rag.yaml": config} if config else {})}
        root = tmp_path / ("with" if config else "without") / "build"
        root.mkdir(parents=True)
        for name, body in tree.items():
            (root / name).write_text(body)
        seen = []
        for how in ("pick", "drop"):
            app.page.evaluate("async () => { await window.ragweb.idle(); ragClear(); await ragFlush(); "
                              "document.getElementById('status').textContent = ''; }")
            if how == "pick":
                app.page.set_input_files("#pick-folder", str(root))
                app.wait("document.getElementById('status').textContent !== ''")
                app.page.evaluate("window.ragweb.idle()")
            else:
                app.page.evaluate(DROP_TREE_JS, {"build": tree})
            seen.append((app.stats()["files"], app.page.locator("#status").inner_text()))
        assert seen[0] == seen[1] and seen[0][0] == files, seen
        if not config:
            assert seen[0][1] == ("Nothing was indexed: left out the folder build/ (excluded) "
                                  "(drop such a folder's contents to index them).")


def test_a_dropped_or_picked_hidden_folder_left_out_whole_is_named(app, tmp_path):
    # (a project's .rag folder dropped on its own, as to load the CLI's index, said only
    # "Nothing was indexed.": a hidden folder the excludes leave out was named only when
    # it was not hidden, which is right for one met inside a drop, not for the one dropped)
    app.page.evaluate(DROP_TREE_JS, {".rag": {"index.db": "SQLite format 3", "notes.md": "# Notes\nquokka\n"}})
    assert app.stats()["files"] == []
    assert app.page.locator("#status").inner_text() == (
        "Nothing was indexed: left out the folder .rag/ (excluded) (drop such a folder's contents to index them).")
    git = tmp_path / ".git"
    git.mkdir()
    (git / "notes.md").write_text("# Notes\nquokka\n")
    app.page.set_input_files("#pick-folder", str(git))
    app.wait("document.getElementById('status').textContent.includes('.git')")
    assert app.stats()["files"] == []
    assert app.page.locator("#status").inner_text() == (
        "Nothing was indexed: left out the folder .git/ (excluded) (drop such a folder's contents to index them).")


def test_a_dropped_pdf_or_image_is_said_to_be_no_text_not_a_glob_away_from_being_indexed(app):
    # (a PDF dropped alone was told to add a glob that takes it to index.includes in a folder's
    # rag.yaml "to index it": done so, it is skipped as binary; the page reads text and code)
    app.page.evaluate(DROP_FILES_JS, [["report.pdf", list(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n") + [0] * 40]])
    assert app.stats()["files"] == []
    assert app.page.locator("#status").inner_text() == (
        "Nothing was indexed: left out by the globs or ignore files: report.pdf (not included); "
        "1 file is not text (.pdf), which the page does not read: it indexes text and code files "
        "(save a document as text, as pdftotext does for a PDF, and drop that).")
    # one that is text in a format the globs do not take is still told of the glob
    app.page.evaluate(DROP_FILES_JS, [["photo.JPG", [255, 216, 255, 224, 0, 0]], ["notes.rtf", r"{\rtf1 quokka}"]])
    assert app.page.locator("#status").inner_text() == (
        "Nothing was indexed: left out by the globs or ignore files: photo.JPG (not included), notes.rtf (not included); "
        "1 file matches no index.includes glob: add a glob that takes it to index.includes in the rag.yaml of a "
        "folder you drop it in to index it (a list there replaces the default one: keep its globs too); "
        "1 file is not text (.jpg), which the page does not read: it indexes text and code files.")


def test_a_drop_with_no_file_to_index_says_so(app):
    # (an empty folder, or one of hidden files only, said "Nothing was indexed." and no more)
    expected = ("Nothing was indexed: no file to index was found (an empty folder, or only hidden "
                "files such as .gitignore, which are not indexed).")
    app.page.evaluate(DROP_TREE_JS, {"empty": {"sub": {}}})
    assert app.page.locator("#status").inner_text() == expected
    app.page.evaluate(DROP_TREE_JS, {"proj": {".DS_Store": "x", ".gitignore": "*.log\n", ".git": {"HEAD": "x"}}})
    assert app.page.locator("#status").inner_text() == expected
    assert app.stats()["files"] == []

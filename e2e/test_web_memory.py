"""The tab's memory: a full index refuses more files, every save carries a checksum that
the restore checks, and past 2 GB of engine memory (where Pyodide 314 garbles what it
copies between Python and the page) the tab does nothing more until it is reloaded."""

import json
import zlib

from playwright.sync_api import expect

from test_web_dragdrop import DROP_FILES_JS, progress_text
from idb import READ_RECORD_JS, WRITE_RECORD_JS


def run_python(page, code: str):
    """Run Python in the page's own Pyodide (the test hook `window.ragweb.pyodide`)."""
    return page.evaluate("(code) => window.ragweb.pyodide().runPython(code)", code)


def saved_page(launch_persistent, boot_page, make_app):
    """A page of its own with one file indexed and saved: (page, app, the stored record)."""
    page = launch_persistent().pages[0]
    boot_page(page)
    app = make_app(page)
    assert app.index("saved.md", "# Saved\nThe razorbill dives for sand eels.\n")["success"]
    assert app.flush()["saved"] is True
    return page, app, page.evaluate(READ_RECORD_JS, True)


def test_a_full_index_refuses_the_rest_of_a_drop_until_files_are_removed(app):
    page = app.page
    text = "\n".join(f"line {i} about puffin burrow {i * 7919 % 10007}" for i in range(2000))
    assert app.index("big.txt", text)["success"]
    app.stats()  # writes the buffered postings
    default = run_python(page, "import ragweb.facade as f; f.MAX_INDEX_BYTES")
    try:
        run_python(page, "import ragweb.facade as f; f.MAX_INDEX_BYTES = f._engine.db_bytes()")
        refused = app.index("one.md", "# One\nA note about gannets.\n")
        assert refused["code"] == "full" and refused["error"].startswith("the index is full")
        page.evaluate(DROP_FILES_JS, [[f"note{i}.md", f"# Note {i}\nTerns nest on ledge {i}.\n"]
                                      for i in range(3)])
        expect(page.locator("#banner")).to_contain_text("3 files were not indexed: the index is full")
        assert "3 failed" in progress_text(app)
        assert app.stats()["files"] == ["big.txt"]
        assert app.query("puffin burrow")["results"][0]["path"] == "big.txt"
        # removing frees its pages at once: the same drop goes in
        assert app.call("(f) => ragRemove(f)", "big.txt")["removed"] is True
        page.evaluate(DROP_FILES_JS, [[f"note{i}.md", f"# Note {i}\nTerns nest on ledge {i}.\n"]
                                      for i in range(3)])
        assert app.stats()["files"] == ["note0.md", "note1.md", "note2.md"]
    finally:
        run_python(page, f"import ragweb.facade as f; f.MAX_INDEX_BYTES = {default}")


def test_saved_records_carry_a_checksum_that_the_restore_checks(launch_persistent, boot_page, make_app):
    ctx = launch_persistent()
    page = ctx.pages[0]
    boot_page(page)
    app = make_app(page)
    assert app.index("notes.md", "# Notes\nThe kittiwake colony returns in April.\n")["success"]
    assert app.flush()["saved"] is True
    record = page.evaluate(READ_RECORD_JS, True)
    assert record["crc"] == zlib.crc32(bytes(record["bytes"]))  # the page's CRC-32 is zlib's
    # a record whose bytes do not match their checksum is not loaded, nor overwritten
    page.evaluate(WRITE_RECORD_JS, {**record, "crc": (record["crc"] + 1) % 2**32})
    page.reload()
    assert page.evaluate("window.ragReady")["restored"] is False
    expect(page.locator("#banner")).to_contain_text("did not reach the engine intact")
    assert app.index("other.md", "other words\n")["success"]
    assert "error" in app.flush()
    assert page.evaluate(READ_RECORD_JS, True)["bytes"] == record["bytes"]
    # with its own checksum it loads again
    page.evaluate(WRITE_RECORD_JS, record)
    page.reload()
    assert page.evaluate("window.ragReady")["restored"] is True
    assert app.query("kittiwake colony")["results"][0]["path"] == "notes.md"


def test_past_2_gb_of_engine_memory_the_tab_stops_and_the_saved_index_is_kept(
        launch_persistent, boot_page, make_app):
    page, app, saved = saved_page(launch_persistent, boot_page, make_app)
    app.defer_saves()  # (left unsaved)
    assert app.index("unsaved.md", "# Unsaved\nA later note about shags.\n")["success"]
    # Python itself takes memory until the engine's WebAssembly memory passes 2 GiB
    run_python(page, "import builtins; builtins._ballast = [bytearray(400_000_000) for _ in range(6)]")
    assert page.evaluate("window.ragweb.heapBytes()") > 2**31
    for out in (app.query("razorbill"), app.stats(), app.index("more.md", "more"), app.flush(),
                json.loads(page.evaluate("ragPack('razorbill', 300)"))):
        assert "grown past 2 GB of memory" in out["error"], out
    expect(page.locator("#banner")).to_contain_text("Reload the page")
    assert page.evaluate(READ_RECORD_JS, True) == saved  # the stored index is untouched
    page.reload()
    info = page.evaluate("window.ragReady")
    assert info["restored"] is True and info["totalDocs"] == 1
    assert app.query("razorbill")["results"][0]["path"] == "saved.md"
    assert app.index("more.md", "# More\nGuillemots too.\n")["success"]


def test_a_copy_garbled_above_2_gb_is_caught_by_its_checksum_and_not_saved(
        launch_persistent, boot_page, make_app):
    """The second line of defence, with the first (the memory limit) lifted: a save whose
    bytes Pyodide copied wrongly into the page is refused, and the stored index is kept."""
    page, app, saved = saved_page(launch_persistent, boot_page, make_app)
    page.evaluate("window.ragweb.setHeapSafeBytes(2 ** 33)")
    # (in 10 MB pieces: they fill the free gaps below 2 GiB first, so the dump lands above it)
    run_python(page, "import builtins; builtins._ballast = [bytearray(10_000_000) for _ in range(240)]")
    assert page.evaluate("window.ragweb.heapBytes()") > 2**31
    for part in range(3):  # (three files: one may hold at most max_file_bytes)
        text = "\n".join(f"line {i} about puffin burrow {i * 7919 % 10007} near {i * 31 % 977}"
                         for i in range(part * 50_000, (part + 1) * 50_000))
        assert app.index(f"big{part}.txt", text)["success"]  # (its text may be garbled already)
    out = app.flush()
    assert "differs from the engine's (checksum); nothing was saved" in out["error"], out
    assert page.evaluate(READ_RECORD_JS, True) == saved


def test_a_call_that_takes_the_memory_past_the_limit_returns_the_error_not_its_result(
        launch_persistent, boot_page, make_app):
    page = launch_persistent().pages[0]  # a fresh tab: little free memory inside its heap
    boot_page(page)
    app = make_app(page)
    # the limit just where the engine's memory is now: this call has to grow it
    page.evaluate("window.ragweb.setHeapSafeBytes(window.ragweb.heapBytes())")
    text = "\n".join(f"line {i} about word{i * 7919 % 100003} and term{i}" for i in range(120_000))
    out = app.index("big.txt", text)
    assert "grown past 2 GB of memory" in out["error"], out
    assert "grown past 2 GB of memory" in app.stats()["error"]  # and so is every later call

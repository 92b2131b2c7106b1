"""The rag* JavaScript API (reference §5): ready signal, exact JSON shapes, error cases."""

import json

import pytest


def test_ready_resolves_offline_with_boot_info(app, ready_info):
    assert ready_info["ready"] is True
    assert ready_info["pyodide"] == "314.0.7"
    assert set(ready_info) >= {"restored", "totalDocs", "bootMs", "restoreMs", "ragweb"}
    # Everything the page needs is inside the site's sub-path: nothing else was even requested.
    assert app.page.url.endswith("/ragweb/")
    assert app.offline.blocked == []
    # (the status line changes as other tests use the shared page; the ready class stays)
    assert app.page.evaluate("document.body.classList.contains('ready')")


def test_api_functions_exist_and_return_strings(app):
    kinds = app.page.evaluate("""() => ['ragIndex', 'ragQuery', 'ragClear', 'ragStats', 'ragPack',
        'ragRemove', 'ragFlush'].map(n => typeof window[n])""")
    assert kinds == ["function"] * 7
    assert app.page.evaluate("window.ragReady instanceof Promise")


def test_calls_before_ready_return_error_not_throw(browser, base_url, offline, wait_for):
    context = browser.new_context(base_url=base_url)
    offline.install(context)
    page = context.new_page()
    try:
        page.goto("./", wait_until="commit")
        wait_for(page, "typeof window.ragIndex === 'function'")
        early = page.evaluate("""() => [ragIndex('a.md', 'x'), ragQuery('x'), ragStats(), ragClear(),
                                        ragPack('x', 100), ragRemove('a.md')]""")
        for out in early:
            assert json.loads(out)["error"].startswith("not ready")
        assert json.loads(page.evaluate("ragFlush()"))["error"].startswith("not ready")
        page.evaluate("window.ragReady")
        assert json.loads(page.evaluate("ragStats()"))["totalDocs"] == 0
    finally:
        context.close()


def test_index_shape(app):
    out = app.index("doc.txt", "alpha beta gamma\n" * 3)
    assert out == {"success": True, "chunks": 1, "filename": "doc.txt"}


def test_an_identical_text_given_again_is_not_indexed_or_saved_again(app):
    """ragIndex of the text already indexed under that name indexed it again, and the page
    saved the index again for it; a drop of an unchanged file did neither."""
    text = "# Doc\n\n" + "\n\n".join(f"Paragraph {i} about the okapi and its forest." for i in range(60))
    first = app.index("doc.txt", text)
    assert first["success"] and first["chunks"] > 1 and "unchanged" not in first
    assert app.flush()["saved"] is True
    saved = app.page.evaluate("window.ragweb.storage()")
    before = app.stats()
    again = app.index("doc.txt", text)
    assert again == {"success": True, "chunks": first["chunks"], "filename": "doc.txt", "unchanged": True}
    assert app.page.evaluate("window.ragweb.storage().dirty") is False
    assert app.flush() == {"success": True, "saved": False}
    assert app.page.evaluate("window.ragweb.storage().generation") == saved["generation"]
    assert app.stats() == before
    assert "unchanged" in app.page.locator("#status").inner_text()
    # one character changed: indexed, and saved
    changed = app.index("doc.txt", text.replace("59 about the okapi", "59 about the okapa"))
    assert changed == {"success": True, "chunks": first["chunks"], "filename": "doc.txt"}
    assert app.flush()["saved"] is True
    assert app.page.evaluate("window.ragweb.storage().generation") != saved["generation"]
    assert [h["path"] for h in app.query("okapa", 3)["results"]] == ["doc.txt"]


def test_query_shape_and_default_top_k(app):
    topics = ["apple orchard harvest cider", "bridge cable suspension steel", "cactus desert spine bloom",
              "dolphin pod sonar reef", "ember furnace coal smoke", "fjord cliff glacier melt",
              "harbor crane cargo dock", "violin bow string rosin"]
    for i, topic in enumerate(topics):  # distinct texts, so MMR's near-duplicate filter keeps all
        app.index(f"notes/n{i}.md", f"# Note {i}\nA zebra by the river; {topic}.\n")
    out = app.query("zebra river")
    assert set(out) == {"query", "results"}
    assert out["query"] == "zebra river"
    assert len(out["results"]) == 5  # topK defaults to 5
    for r in out["results"]:
        assert set(r) == {"path", "startLine", "endLine", "score", "text"}
        assert isinstance(r["startLine"], int) and isinstance(r["endLine"], int)
        assert isinstance(r["score"], float) and r["score"] > 0
        assert "zebra" in r["text"]
    assert len(app.query("zebra", 2)["results"]) == 2
    assert len(app.query("zebra", 50)["results"]) == 8


def test_stats_shape(app):
    app.index("b.md", "# B\nsecond file about llamas\n")
    app.index("a.txt", "first file about alpacas\n")
    st = app.stats()
    assert set(st) == {"totalDocs", "totalChunks", "avgChunkLen", "files"}
    assert st["totalDocs"] == 2 and st["totalChunks"] == 2
    assert st["files"] == ["a.txt", "b.md"]
    assert isinstance(st["avgChunkLen"], float) and st["avgChunkLen"] > 0


def test_clear_shape(app):
    app.index("a.txt", "something to forget\n")
    assert app.call("() => ragClear()") == {"success": True}
    assert app.stats() == {"totalDocs": 0, "totalChunks": 0, "avgChunkLen": 0.0, "files": []}
    assert app.query("forget")["results"] == []


def test_index_same_filename_replaces(app):
    app.index("same.md", "the old text mentions walruses\n")
    app.index("same.md", "the new text mentions penguins\n")
    st = app.stats()
    assert st["totalDocs"] == 1 and st["files"] == ["same.md"]
    assert app.query("walruses")["results"] == []
    assert app.query("penguins")["results"][0]["path"] == "same.md"


def test_remove(app):
    app.index("keep.md", "kestrels hover\n")
    app.index("drop.md", "kestrels and owls\n")
    out = app.call("(f) => ragRemove(f)", "drop.md")
    assert out == {"success": True, "removed": True, "filename": "drop.md"}
    assert app.stats()["files"] == ["keep.md"]
    assert [r["path"] for r in app.query("kestrels")["results"]] == ["keep.md"]
    missing = app.call("(f) => ragRemove(f)", "never-indexed.md")
    assert missing == {"success": True, "removed": False, "filename": "never-indexed.md"}


def test_remove_of_a_folder_removes_its_files_and_says_how_many(app):
    app.index("docs/a.md", "kestrels hover\n")
    app.index("docs/sub/b.md", "kestrels and owls\n")
    app.index("keep.md", "kestrels nest\n")
    out = app.call("(f) => ragRemove(f)", "docs")
    assert out == {"success": True, "removed": True, "filename": "docs", "folder": True, "count": 2,
                   "paths": ["docs/a.md", "docs/sub/b.md"]}
    assert app.stats()["files"] == ["keep.md"]
    assert [r["path"] for r in app.query("kestrels")["results"]] == ["keep.md"]
    assert app.page.locator("#status").inner_text() == "Removed 2 files under docs/ (through ragRemove)."


def test_pack_shape_and_budget(app, sample_docs):
    app.index_sample()
    out = app.pack("how are headers parsed", 300)
    assert {"query", "budget_tokens", "used_tokens", "snippets"} <= set(out)
    assert out["budget_tokens"] == 300
    assert 0 < out["used_tokens"] <= 300
    docs = dict(sample_docs)
    for s in out["snippets"]:
        assert {"path", "range", "why", "text"} <= set(s)
        assert s["path"] in docs
        start, end = (int(x) for x in s["range"][1:].split("-"))
        assert 1 <= start <= end
    default = app.pack("how are headers parsed")
    assert default["budget_tokens"] == 4000


def test_pack_options_lean_whole_and_path(app, sample_docs):
    app.index_sample()
    q = "how does the retry policy back off"
    default = app.pack(q, 600)
    lean = app.call("(q) => ragPack(q, 600, {lean: true})", q)
    whole = app.call("(q) => ragPack(q, 600, {compact: false})", q)
    only = app.call("(q) => ragPack(q, 600, {path: 'pigeonpost/**', topK: 2})", q)
    assert 0 < lean["used_tokens"] <= 192 < default["used_tokens"] <= 600  # lean: 32% of the budget
    assert any(s["why"].startswith("compacted") for s in default["snippets"])
    assert whole["snippets"] and not any(s["why"].startswith("compacted") for s in whole["snippets"])
    assert only["snippets"] and all(s["path"].startswith("pigeonpost/") for s in only["snippets"])
    assert app.call("(q) => ragPack(q, 600, null)", q) == default
    # values JSON cannot carry are refused by name, not dropped (NaN became null: the default)
    assert app.call("(q) => ragPack(q, 600, {topK: NaN})", q)["error"] == "options.topK must be a finite number, got NaN"
    assert app.call("(q) => ragPack(q, 600, {topK: 2n})", q)["error"] == "options.topK must be a number, got a BigInt"
    circle = app.call("(q) => { const o = {lean: true}; o.self = o; return ragPack(q, 600, o); }", q)
    assert circle["error"] == "options.self must be true or false, a string or a number, got an object"
    throws = app.call("(q) => ragPack(q, 600, {get lean() { throw new Error('no'); }})", q)
    assert throws["error"] == "options must be plain data like {lean: true}: no"


def test_an_html_page_is_searched_and_packed_by_its_visible_text(app):
    page = ("<html><head><title>Kestrel guide</title><style>.kestrel-css { color: red }</style></head>\n"
            "<body><h2 id='hover'>Hovering</h2>\n<p>A <b>kestrel</b> hovers &amp; waits for voles.</p>\n"
            "<script>window.zorblaxCounter = 1</script></body></html>\n")
    assert app.index("guide/kestrel.html", page)["success"]
    assert app.query("zorblaxCounter")["results"] == []  # script text is not indexed
    results = app.query("kestrel hovers voles")["results"]
    assert [r["path"] for r in results] == ["guide/kestrel.html"]
    assert results[0]["visible"] is True and "A kestrel hovers & waits" in results[0]["text"]
    out = app.pack("what does a kestrel wait for", 50)
    snippet = next(s for s in out["snippets"] if "voles" in s["text"])
    assert snippet["visible"] is True and "A kestrel hovers & waits for voles." in snippet["text"]
    assert "<" not in snippet["text"] and out["used_tokens"] <= 50


@pytest.mark.parametrize("expr, needle", [
    ("() => ragIndex()", "filename must be a string"),
    ("() => ragIndex(42, 'x')", "filename must be a string"),
    ("() => ragIndex('a.md')", "content must be a string"),
    ("() => ragIndex('a.md', {text: 'x'})", "content must be a string"),
    ("() => ragIndex('', 'x')", "filename must not be empty"),
    ("() => ragIndex('   ', 'x')", "filename must not be empty"),
    ("() => ragQuery()", "query must be a string"),
    ("() => ragQuery(7)", "query must be a string"),
    ("() => ragQuery('')", "query must not be empty"),
    ("() => ragQuery('the of and')", ""),
    ("() => ragQuery('zebra', 0)", "topK must be between 1 and"),
    ("() => ragQuery('zebra', -3)", "topK must be between 1 and"),
    ("() => ragQuery('zebra', 1e300)", "topK must be between 1 and 1000, got 1e+300"),  # (as JS writes it)
    ("() => ragQuery('zebra', 2.5)", "topK must be an integer"),
    ("() => ragQuery('zebra', '3')", "topK must be a number"),
    ("() => ragQuery('zebra', NaN)", "topK must be an integer"),
    ("() => ragPack('', 100)", "query must not be empty"),
    ("() => ragPack('zebra', 0)", "budget must be between 1 and"),
    ("() => ragPack('zebra', 'big')", "budget must be a number"),
    ("() => ragPack('zebra', 100, 'lean')", "options must be a plain object like {lean: true}, got a string"),
    ("() => ragPack('zebra', 100, [true])", "options must be a plain object like {lean: true}, got an array"),
    ("() => ragPack('zebra', 100, {leen: true})", "unknown key 'leen'"),
    ("() => ragPack('zebra', 100, {compact: 'no'})", "options.compact must be true or false"),
    ("() => ragRemove()", "filename must be a string"),
    ("() => ragRemove(['a'])", "filename must be a string"),
    ("() => ragIndex('notes/a\\ud800.md', 'x')", "is not valid Unicode: it holds a lone surrogate (U+D800)"),
    # (JSON dropped these without a word: the pack ran without the option)
    ("() => ragPack('zebra', 100, {lean: Symbol()})", "options.lean must be true or false, got a symbol"),
    ("() => ragPack('zebra', 100, {lean: () => true})", "options.lean must be true or false, got a function"),
    ("() => ragPack('zebra', 100, new Map([['lean', true]]))", "options must be a plain object like {lean: true}, got a Map"),
    ("() => ragPack('zebra', 100, new Date(0))", "options must be a plain object like {lean: true}, got a Date"),
    ("() => ragPack('zebra', 100, Object.create({lean: true}))", "options must be a plain object"),
    ("() => ragPack('zebra', 100, {lean: {a: NaN}})", "options.lean must be true or false, got an object"),
    # (each option named with what it takes, as the engine's own check says it)
    ("() => ragPack('zebra', 100, {path: ['a']})", "options.path must be a string, got an array"),
    ("() => ragPack('zebra', 100, {topK: [5]})", "options.topK must be an integer, got an array"),
    ("() => ragPack('zebra', 100, {compact: {}})", "options.compact must be true or false, got an object"),
    ("() => ragPack('zebra', 100, {topK: Infinity})", "options.topK must be a finite number, got Infinity"),
    ("() => ragQuery('zebra', Infinity)", "got the number Infinity"),  # (not Python's "inf")
    ("() => ragPack('zebra', -Infinity)", "got the number -Infinity"),
    ("() => ragIndex('x'.repeat(5000), 'a zebra')", "the file name is 5,000 characters long, more than 4,096"),
    ("() => ragIndex('docs/' + 'x'.repeat(300) + '.md', 'a zebra')", "has a part of more than 255 characters"),
    ("() => ragQuery('zebra '.repeat(20000))", "query is too long: 120,000 characters > 100,000"),
    ("() => ragPack('zebra '.repeat(20000), 100)", "query is too long: 120,000 characters > 100,000"),
    # (a Proxy whose traps throw, what is thrown no text: "Cannot convert object to primitive
    # value" was thrown into the caller from the error's own message)
    ("() => ragIndex(new Proxy({}, {getPrototypeOf() { throw Object.create(null); }}), 'x')",
     "filename must be a string, got an object"),
    ("() => ragQuery(new Proxy({}, {getPrototypeOf() { throw Object.create(null); }}))",
     "query must be a string, got an object"),
    ("() => ragPack('zebra', 100, new Proxy({}, {getPrototypeOf() { throw Object.create(null); }}))",
     "options must be a plain object like {lean: true}, got an object"),
    ("() => ragPack('zebra', 100, {get lean() { throw Object.create(null); }})",
     "options must be plain data like {lean: true}"),
    ("() => ragPack('zebra', 100, {get lean() { throw {get message() { throw new Error('no'); }}; }})",
     "options must be plain data like {lean: true}"),
    ("() => ragRemove((() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; })())",
     "filename must be a string, got an object"),
])
def test_bad_arguments_return_error(app, expr, needle):
    app.index("zebra.md", "a zebra\n")
    out = app.call(expr)
    assert set(out) == {"error"}, out
    assert needle in out["error"]
    assert app.stats()["files"] == ["zebra.md"]  # nothing changed


def test_the_status_line_follows_changes_made_through_the_api(app):
    status = app.page.locator("#status")
    assert app.index("notes/t.txt", "then world\n")["success"]
    assert status.inner_text() == "Indexed notes/t.txt (through ragIndex)."
    assert app.call("(f) => ragRemove(f)", "notes/t.txt")["removed"]
    assert status.inner_text() == "Removed notes/t.txt (through ragRemove)."
    assert app.call("(f) => ragRemove(f)", "notes/t.txt")["removed"] is False
    assert status.inner_text() == "Removed notes/t.txt (through ragRemove)."  # (nothing changed)
    app.index("a.md", "a zebra\n")
    assert app.call("() => ragClear()")["success"]
    assert status.inner_text() == "Index cleared (through ragClear)."


def test_errors_never_throw_into_caller(app):
    threw = app.page.evaluate("""() => {
        const calls = [() => ragIndex(null, null), () => ragQuery(undefined, undefined),
                       () => ragPack(Symbol.iterator ? {} : 1), () => ragRemove(null),
                       () => ragQuery('x'.repeat(100000), 1e9)];
        return calls.filter(c => { try { JSON.parse(c()); return false; } catch (e) { return true; } }).length;
    }""")
    assert threw == 0


def test_filename_is_normalised(app):
    out = app.index("./docs//guide.md", "text about owls\n")
    assert out["filename"] == "docs/guide.md"
    assert app.index("docs/old/../notes/./a.md", "text about larks\n")["filename"] == "docs/notes/a.md"
    assert app.stats()["files"] == ["docs/guide.md", "docs/notes/a.md"]
    for name in ("/", "./", "docs/", ""):
        out = app.index(name, "text about crows\n")
        assert "names no file" in out["error"] or "must not be empty" in out["error"], (name, out)
    assert "climbs out of" in app.index("../etc/passwd", "root:x:0:0\n")["error"]
    assert "line break" in app.index("bad\nname.md", "text\n")["error"]
    assert app.stats()["files"] == ["docs/guide.md", "docs/notes/a.md"]

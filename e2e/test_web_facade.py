"""`ragweb.facade` natively (no browser): the JSON contract the page relies on, and the
CLI's file-selection rules applied to dropped paths."""

import gzip
import json
import zlib

import pytest

from ragweb import facade
from ragweb import pack as pack_mod
from ragweb.config import default_config
from ragweb.errors import RagError
from ragweb.files import iter_files


def call(fn, *args):
    out = fn(*args)
    assert isinstance(out, str)
    return json.loads(out)


@pytest.fixture(autouse=True)
def fresh():
    assert call(facade.init)["success"]
    facade.ignore_reset()
    yield


def test_a_drops_ignore_files_and_config_outlive_another_tabs_save_loaded_meanwhile():
    """Another tab's save, loaded (`init`) while a drop's folders were being read, wiped the
    drop's .gitignore and rag.yaml: the files they leave out (a secret) were indexed."""
    facade.ignore_add("proj", b"secret.md\n", ".gitignore")
    call(facade.config_add, "proj", "index:\n  excludes: ['**/*.txt']\n")
    assert call(facade.index_text, "other.md", "from the other tab")["success"]
    data = facade.dump()
    assert call(facade.init, data, False, call(facade.dump_crc)["crc"])["restored"] is True
    assert "skip" in call(facade.check_path, "proj/secret.md", 10)
    assert call(facade.index_bytes, "proj/secret.md", b"password hunter2\n", 1.0).get("skipped")
    assert call(facade.index_bytes, "proj/keys.txt", b"password hunter2\n", 1.0).get("skipped")
    assert call(facade.stats)["files"] == ["other.md"]


def test_a_long_name_in_chinese_that_windows_holds_is_taken():
    """A part of more than 255 bytes of UTF-8 was refused as "no file system holds" it: 99
    Chinese characters are 297 bytes, an everyday name on Windows (NTFS: 255 UTF-16 units)."""
    name = "文" * 99 + ".md"
    assert call(facade.index_text, f"docs/{name}", "zebra okapi")["success"]
    assert call(facade.index_bytes, name, "okapi".encode(), 1.0)["success"]
    assert call(facade.stats)["files"] == [f"docs/{name}", name]
    assert "more than 255 characters" in call(facade.index_text, "文" * 256 + ".md", "okapi")["error"]
    assert "more than 255 characters" in call(facade.index_text, "\U0001F600" * 128, "okapi")["error"]  # (256 units)


def test_a_file_dropped_again_as_it_was_indexed_is_not_indexed_again():
    """A folder dropped again (the banner's own advice after a drop cut short) indexed every
    file again: 1,170 unchanged pages took longer than the first drop, and were all saved."""
    text = "# Guide\n\n" + "\n\n".join(f"Section {i} about okapi number {i}." for i in range(400))
    first = call(facade.index_bytes, "docs/guide.md", text.encode(), 1000.0)
    assert first["success"] and first["chunks"] > 1 and "unchanged" not in first
    before = call(facade.stats)
    again = call(facade.index_bytes, "docs/guide.md", text.encode(), 1000.0, True)  # (stepwise: not started)
    assert again == {"success": True, "chunks": first["chunks"], "filename": "docs/guide.md",
                     "unchanged": True, "touched": False}
    assert call(facade.stats) == before
    # a new time alone is recorded (recency reads it), the text is not read again
    assert call(facade.index_bytes, "docs/guide.md", text.replace("\n", "\r\n").encode(), 2000.0)["touched"] is True
    assert facade._engine.file_mtime("docs/guide.md") == 2000.0
    # a changed text is indexed, by a drop or by ragIndex
    assert "unchanged" not in call(facade.index_bytes, "docs/guide.md", (text + "\nMore.").encode(), 3000.0)
    assert "unchanged" not in call(facade.index_text, "docs/guide.md", text + "\nMore!")


def test_ragindex_of_the_text_indexed_at_that_name_does_not_index_it_again():
    """ragIndex of an identical text re-chunked and rewrote the file (the page then saved it
    again), where a drop of it is passed over."""
    text = "# Guide\n\n" + "\n\n".join(f"Section {i} about okapi number {i}." for i in range(400))
    first = call(facade.index_text, "docs/guide.md", text)
    assert first["success"] and first["chunks"] > 1 and "unchanged" not in first
    before = (call(facade.stats), facade._engine.next_chunk)
    same = {"success": True, "chunks": first["chunks"], "filename": "docs/guide.md", "unchanged": True}
    assert call(facade.index_text, "docs/guide.md", text) == same
    # (the text the index stores: line ends as "\n" whatever they were given as)
    assert call(facade.index_text, "docs/guide.md", text.replace("\n", "\r\n")) == same
    assert (call(facade.stats), facade._engine.next_chunk) == before  # (no chunk written anew)
    # one character changed, or one more line end: indexed
    for changed in (text.replace("okapi number 399", "okapi number 398"), text + "\n"):
        out = call(facade.index_text, "docs/guide.md", changed)
        assert out == {"success": True, "chunks": first["chunks"], "filename": "docs/guide.md"}
        assert facade._engine.file_text("docs/guide.md") == changed
    # a dropped file's text given by ragIndex: unchanged, its recorded time kept
    assert call(facade.index_bytes, "a.md", b"okapi giraffe\n", 1000.0)["success"]
    assert call(facade.index_text, "a.md", "okapi giraffe\n")["unchanged"] is True
    assert facade._engine.file_mtime("a.md") == 1000.0


def test_new_root_names_are_said_so_the_page_saves_them():
    """A folder dropped again whose files were all unchanged made no change the page saved,
    though its name was recorded as a root only now (an index saved before roots were)."""
    assert call(facade.roots_add, '["proj"]') == {"success": True, "added": 1}
    assert call(facade.roots_add, '["proj"]') == {"success": True, "added": 0}
    assert call(facade.roots_add, '["proj", "docs"]') == {"success": True, "added": 1}


def test_calls_before_init_are_errors(monkeypatch):
    monkeypatch.setattr(facade, "_engine", None)
    for fn, args in [(facade.index_text, ("a", "b")), (facade.query, ("a",)), (facade.stats, ()),
                     (facade.clear, ()), (facade.pack, ("a",)), (facade.remove, ("a",))]:
        assert call(fn, *args)["error"].startswith("not ready")


def test_a_modification_time_that_is_not_a_finite_number_is_unknown():
    assert call(facade.index_text, "a.md", "zebra okapi")["success"]
    for mtime in (float("nan"), float("inf"), 10 ** 400, "yesterday"):
        assert call(facade.index_bytes, "a.md", b"okapi giraffe", mtime)["success"]
    assert call(facade.stats)["totalChunks"] == 1
    assert [r["path"] for r in call(facade.query, "okapi", 5)["results"]] == ["a.md"]


def test_dump_and_restore_round_trip(sample_docs):
    for path, text in sample_docs:
        call(facade.index_text, path, text)
    before = (call(facade.stats), call(facade.query, "retry backoff", 5))
    data = facade.dump()
    assert isinstance(data, bytes) and data[:16] == b"SQLite format 3\x00"
    info = call(facade.init, data)
    assert info == {"success": True, "restored": True, "reread": 0, "totalDocs": len(sample_docs),
                    "totalChunks": before[0]["totalChunks"]}
    assert (call(facade.stats), call(facade.query, "retry backoff", 5)) == before


def test_the_smallest_dump_makes_each_removal_count():
    # After the storage quota refused a save, the page asks for the smallest bytes: removing
    # one file must then shrink them (its postings were only listed dead, its pages free).
    docs = {f"d{i}.md": "\n".join(f"note {i} line {j}: kittiwake q{i}x{j}z ledge" for j in range(300))
            for i in range(30)}
    for path, text in docs.items():
        call(facade.index_text, path, text)
    before = len(facade.dump())
    call(facade.remove, "d29.md")
    plain = len(facade.dump())
    smallest = facade.dump(True)
    assert len(smallest) < before and len(smallest) < plain
    results = call(facade.query, "kittiwake ledge", 5)
    info = call(facade.init, smallest)
    assert info["restored"] and info["totalDocs"] == 29
    assert call(facade.query, "kittiwake ledge", 5) == results
    assert "d29.md" not in {r["path"] for r in call(facade.query, "q29x3z", 30)["results"]}


def test_an_older_index_is_read_again_stepwise_and_nothing_runs_meanwhile(older_index):
    data = older_index.to_bytes()
    info = call(facade.init, data, True)
    assert info["rereadPending"] == 2 and info["reread"] == 0 and info["totalDocs"] == 2
    for fn, args in [(facade.query, ("quokka",)), (facade.stats, ()), (facade.index_text, ("a.md", "b"))]:
        assert "being re-read" in call(fn, *args)["error"]
    with pytest.raises(RagError):
        facade.dump()
    steps = [call(facade.reread_step, 1)]
    while not steps[-1]["finished"]:
        steps.append(call(facade.reread_step, 1))
    assert steps[-1] == {"done": 2, "total": 2, "finished": True}
    assert [s["done"] for s in steps] == sorted(s["done"] for s in steps)
    assert call(facade.query, "zebrafish")["results"] == []  # markup is no longer text
    assert call(facade.query, "quokka rules")["results"][0]["path"] == "docs/page.html"
    assert call(facade.reread_step)["error"] == "no re-read is in progress"
    again = call(facade.init, facade.dump(), True)
    assert again["reread"] == 0 and "rereadPending" not in again
    # without stepwise, init reads it again at once
    assert call(facade.init, data)["reread"] == 2 and call(facade.stats)["totalDocs"] == 2


def test_an_older_index_too_large_to_reread_is_used_as_it_was_built(older_index, monkeypatch):
    data = older_index.to_bytes()
    monkeypatch.setattr(facade, "REREAD_MAX_BYTES", len(data) // 2)
    for stepwise in (True, False):
        info = call(facade.init, data, stepwise)
        assert info["rereadSkipped"] is True and info["reread"] == 0 and "rereadPending" not in info
        assert info["totalDocs"] == 2
        # read as that version built it: the page's markup is still text
        assert call(facade.query, "zebrafish")["results"][0]["path"] == "docs/page.html"
        assert call(facade.index_text, "more.md", "# More\nQuokka extras.\n")["success"]
    monkeypatch.setattr(facade, "REREAD_MAX_BYTES", len(data))
    info = call(facade.init, data, False)
    assert info["reread"] == 2 and "rereadSkipped" not in info


def test_an_index_a_newer_version_built_is_used_as_it_was_built_and_said_so(older_index):
    """The page re-read an index a newer version saved (and saved it so), the way it re-reads
    an older one's, without a word."""
    from ragweb.engine import MARKUP_VERSION
    older_index._set_meta("analysis", {**older_index.settings, "markup": MARKUP_VERSION + 1})
    data = older_index.to_bytes()
    for stepwise in (True, False):
        info = call(facade.init, data, stepwise)
        assert info["newerVersion"] is True and info["reread"] == 0 and "rereadPending" not in info
        assert info["totalDocs"] == 2
        assert call(facade.query, "zebrafish")["results"][0]["path"] == "docs/page.html"  # (as it was built)
    assert "newerVersion" not in call(facade.init, None)


def test_an_index_a_newer_decoder_read_is_said_to_be_a_newer_versions():
    """An index whose files a newer decoder read (`files.DECODER_VERSION`), its analysis
    settings this version's, was restored without a word, as the CLI queried it."""
    from ragweb.engine import Engine
    from ragweb.files import DECODER_VERSION
    eng = Engine.memory()
    eng.add_document("notes.md", "# Notes\n\nQuokka notes.\n", mtime=1.0)
    eng.set_decoded_by(DECODER_VERSION)
    assert "newerVersion" not in call(facade.init, eng.to_bytes())
    eng.set_decoded_by(DECODER_VERSION + 1)
    info = call(facade.init, eng.to_bytes())
    assert info["newerVersion"] is True and info["reread"] == 0 and info["totalDocs"] == 1


def test_a_new_init_abandons_a_reread_in_progress(older_index):
    data = older_index.to_bytes()
    assert call(facade.init, data, True)["rereadPending"] == 2
    call(facade.reread_step, 1)
    assert call(facade.init)["totalDocs"] == 0
    assert call(facade.reread_step)["error"] == "no re-read is in progress"
    assert call(facade.index_text, "a.md", "fresh words")["success"]


def test_restore_of_garbage_is_a_format_error():
    out = call(facade.init, b"\x00" * 4096)
    assert out["code"] == "format" and "cannot be read" in out["error"]
    assert call(facade.stats)["totalDocs"] == 0  # an empty engine is there anyway


def test_an_unreadable_stored_index_names_the_pages_remedy_not_the_clis(tmp_path):
    import sqlite3
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table t (x)")
    for data in (db.read_bytes(), b"\x00" * 4096):
        out = call(facade.init, data)
        assert out["error"].endswith('; to start again, clear it with "Clear stored index" and add the files again')
        assert "rag index" not in out["error"] and "index again" not in out["error"]
    assert out["error"].startswith("the stored index cannot be read (it is not a SQLite database)")
    # one of a newer format: said so, with the page's remedy alone (the CLI's "upgrade ragweb
    # ..., or rebuild it with `rag index --rebuild`" was left in, a reviewer found)
    from ragweb.store import FORMAT_VERSION
    from ragweb.engine import Engine
    db = tmp_path / "newer.db"
    Engine.open(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute("pragma journal_mode = delete")
        conn.execute(f"pragma user_version = {FORMAT_VERSION + 1}")
    out = call(facade.init, db.read_bytes())
    assert "newer version of ragweb" in out["error"] and "rag index" not in out["error"], out


def test_dump_gives_its_checksum_and_restore_checks_it(sample_docs):
    for path, text in sample_docs:
        call(facade.index_text, path, text)
    data = facade.dump()
    crc = call(facade.dump_crc)["crc"]
    assert crc == zlib.crc32(data)
    info = call(facade.init, data, False, crc)
    assert info["restored"] is True and info["totalDocs"] == len(sample_docs)
    # bytes garbled on their way in (the checksum saved with them no longer matches)
    garbled = bytearray(data)
    garbled[len(garbled) // 2] ^= 0xFF
    for bad, good_crc in [(bytes(garbled), crc), (data, (crc + 1) % 2**32)]:
        out = call(facade.init, bad, False, good_crc)
        assert out["code"] == "copy" and "did not reach the engine intact" in out["error"]
        assert call(facade.stats)["totalDocs"] == 0
    assert "crc must be" in call(facade.init, data, False, "12")["error"]
    assert "crc must be" in call(facade.init, data, False, -1)["error"]
    # records saved before checksums restore as before
    assert call(facade.init, data, False, None)["totalDocs"] == len(sample_docs)


def test_a_full_index_takes_no_more_files_until_some_are_removed(monkeypatch):
    text = "\n".join(f"line {i} about puffin burrow {i * 7919 % 10007}" for i in range(3000))
    assert call(facade.index_text, "a.txt", text)["success"]
    call(facade.stats)  # writes the buffered postings
    monkeypatch.setattr(facade, "MAX_INDEX_BYTES", facade._engine.db_bytes())
    assert call(facade.index_size) == {"bytes": facade.MAX_INDEX_BYTES, "max": facade.MAX_INDEX_BYTES}
    out = call(facade.index_text, "b.txt", "one more line about gannets")
    assert out["code"] == "full" and out["error"].startswith("the index is full")
    assert "rag` CLI" in out["error"]
    out = call(facade.index_bytes, "c.md", b"# C\nabout terns\n")
    assert out["code"] == "full"
    assert call(facade.stats)["files"] == ["a.txt"]
    assert call(facade.query, "puffin burrow")["results"][0]["path"] == "a.txt"
    assert call(facade.remove, "a.txt")["removed"] is True  # its pages are free at once
    assert call(facade.index_text, "b.txt", "one more line about gannets")["success"]


def test_index_text_refuses_a_text_larger_than_a_file_may_be(monkeypatch):
    limit = default_config()["index"]["max_file_bytes"]
    call(facade.index_text, "keep.md", "a note about puffins")
    out = call(facade.index_text, "huge.txt", "x" * (limit + 1))
    assert out["code"] == "too_large", out
    assert out["error"].startswith(f"huge.txt is too large: at least {limit + 1} bytes of UTF-8 > max_file_bytes {limit}")
    # the limit counts UTF-8 bytes, not characters: a text of "é" is twice as long in bytes
    out = call(facade.index_text, "accents.txt", "\u00e9" * (limit // 2 + 1))
    assert out["code"] == "too_large" and f"{limit // 2 * 2 + 2} bytes" in out["error"], out
    assert call(facade.index_text, "fits.txt", "\u00e9" * (limit // 2))["success"]
    # a refused text replaces nothing: the document of that name keeps its old text
    assert call(facade.index_text, "keep.md", "y" * (limit + 1))["code"] == "too_large"
    assert call(facade.stats)["files"] == ["fits.txt", "keep.md"]
    assert call(facade.query, "puffins")["results"][0]["path"] == "keep.md"


def test_a_file_name_with_a_lone_surrogate_is_a_clear_error():
    # JavaScript strings may hold one; SQLite cannot store it (it used to be an "internal error")
    for fn, args in [(facade.index_text, ("a\ud800b.md", "yaks")), (facade.index_bytes, ("a\udc00.md", b"yaks")),
                     (facade.remove, ("x\ud800",)), (facade.check_path, ("a\ud800b.md", 3))]:
        out = call(fn, *args)
        assert "is not valid Unicode: it holds a lone surrogate (U+D" in out["error"], out
    assert call(facade.index_text, "ok\U0001F600.md", "yaks")["success"]  # a pair is a character
    assert call(facade.stats)["files"] == ["ok\U0001F600.md"]


def test_a_lone_surrogate_in_a_text_becomes_one_replacement_character():
    # (a JavaScript string may hold one; it cannot be UTF-8, so it is stored as U+FFFD)
    assert call(facade.index_text, "a.md", "yak \ud800 herd \udfff\n")["success"]
    assert call(facade.query, "yak herd")["results"][0]["text"] == "yak \ufffd herd \ufffd"


def test_a_number_too_big_for_a_float_is_named_by_its_digits():
    assert call(facade.query, "x", 10**400)["error"] == "topK must be between 1 and 1000, got a number of 401 digits"


def test_dump_compacts_after_removals():
    call(facade.index_text, "small.md", "small note\n")
    small = len(facade.dump())
    call(facade.index_text, "big.txt", "\n".join(f"row {i} value {i * 37 % 1001}" for i in range(30_000)))
    big = len(facade.dump())
    call(facade.remove, "big.txt")
    assert big > 10 * small
    assert len(facade.dump()) < 2 * small


def test_internal_errors_become_json(monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("kaput")
    monkeypatch.setattr(facade._engine, "search", boom)
    assert call(facade.query, "anything") == {"error": "internal error: RuntimeError: kaput"}


def test_search_ui_marks_match_words(sample_docs):
    for path, text in sample_docs:
        call(facade.index_text, path, text)
    res = call(facade.search_ui, "parse_headers folding", 3)
    assert res["results"]
    for r in res["results"]:
        words = [r["text"][s:e].lower() for s, e in r["marks"]]
        assert words and all("pars" in w or "header" in w or "fold" in w for w in words), words
        assert {"path", "startLine", "endLine", "score", "text", "heading", "marks"} == set(r)


def test_search_ui_marks_the_terms_that_are_no_words():
    # (a hit for "$*", "-g" or "0.2.5" showed no mark on them: only words were marked)
    call(facade.index_text, "p.md", "# Params\n\n($*) all of them; install -g; pin 0.2.5 or 127.0.0.1 (not 0.2.6)\n")
    r = call(facade.search_ui, "$* with -g at 0.2.5 params")["results"][0]
    assert [r["text"][s:e] for s, e in r["marks"]] == ["Params", "$*", "-g", "0.2.5"]


def test_search_ui_marks_are_utf16_offsets():
    text = "\U0001F600 smile, then parseHeaders and \U0001D4B3 headers"
    call(facade.index_text, "e.md", text)
    r = call(facade.search_ui, "headers")["results"][0]
    utf16 = text.encode("utf-16-le")
    assert [utf16[2 * s:2 * e].decode("utf-16-le") for s, e in r["marks"]] == ["parseHeaders", "headers"]


def test_search_ui_shows_bidi_and_control_characters_and_keeps_its_marks():
    """A name like "report.md:L1-2\u202e.md" read, reversed, as another file's citation."""
    call(facade.index_text, "report.md:L1-2 \u202e.md", "# Re\u202eport\n\nThe \x1b[8mhidden retry\u2066 policy.\n")
    r = call(facade.search_ui, "retry policy")["results"][0]
    assert r["path"] == "report.md:L1-2 \ufffd.md" and r["heading"] == "Re\ufffdport"
    assert "\u241b[8mhidden retry\ufffd policy" in r["text"]
    assert [r["text"][s:e] for s, e in r["marks"]] == ["retry", "policy"]
    assert call(facade.query, "retry policy")["results"][0]["path"] == "report.md:L1-2 \u202e.md"  # (the API: exact)


def test_a_backslash_is_a_character_of_a_name_as_in_rag_index():
    """A dropped file named "..\\work\\src\\main.py" replaced work/src/main.py of another folder."""
    call(facade.index_text, "work/src/main.py", "def login():\n    return check_password()\n")
    out = call(facade.index_text, "evil/..\\work\\src\\main.py", "def login():\n    return True  # auth disabled\n")
    assert out["filename"] == "evil/..\\work\\src\\main.py"
    assert call(facade.stats)["files"] == ["evil/..\\work\\src\\main.py", "work/src/main.py"]
    assert call(facade.check_path, "docs\\guide.md", 10)["path"] == "docs\\guide.md"


def test_runtime_prompt_has_question_and_citations(sample_docs):
    for path, text in sample_docs:
        call(facade.index_text, path, text)
    packed = facade.pack("how does the retry policy back off", 600)
    prompt = call(facade.runtime_prompt, packed)["prompt"]
    first = json.loads(packed)["snippets"][0]
    assert "how does the retry policy back off" in prompt
    assert f"[{first['path']}:{first['range']}]" in prompt


def test_pack_options_reach_the_engine(sample_docs):
    """ragPack's options are `rag pack`'s --lean, --no-compact, --path and --top-k."""
    for path, text in sample_docs:
        call(facade.index_text, path, text)
    engine, q = facade._engine, "how does the retry policy back off"
    modes = {"default": ({}, {}), "lean": ({"lean": True}, {"lean": True}),
             "whole": ({"compact": False}, {"compact": False}),
             "narrow": ({"path": "*.md", "topK": 3, "lean": None}, {"path_glob": "*.md", "top_k": 3})}
    packs = {}
    for name, (options, kwargs) in modes.items():
        packs[name] = call(facade.pack, q, 600, json.dumps(options))
        assert packs[name] == json.loads(json.dumps(engine.pack(q, 600, **kwargs)))
    assert packs["default"] == call(facade.pack, q, 600) == call(facade.pack, q, 600, None)
    # the modes differ: lean spends far less, whole chunks are not compacted
    assert 0 < packs["lean"]["used_tokens"] <= pack_mod.lean_budget(600) < packs["default"]["used_tokens"]
    assert all(s["why"].startswith("compacted") is False for s in packs["whole"]["snippets"])
    assert any(s["why"].startswith("compacted") for s in packs["default"]["snippets"])
    assert {s["path"] for s in packs["narrow"]["snippets"]} <= {p for p, _ in sample_docs if p.endswith(".md")}


@pytest.mark.parametrize("options, needle", [
    ("[1]", "options must be an object"),
    ("not json", "options must be an object"),
    (7, "options must be an object"),
    ('{"leen": true}', "unknown key 'leen'"),
    ('{"lean": 1}', "options.lean must be true or false"),
    ('{"compact": "no"}', "options.compact must be true or false"),
    ('{"path": 3}', "options.path must be a string"),
    ('{"path": " "}', "options.path must not be empty"),
    ('{"topK": 0}', "options.topK must be between 1 and"),
    ('{"topK": true}', "options.topK must be an integer"),
])
def test_pack_options_errors(options, needle):
    call(facade.index_text, "a.md", "a zebra grazes\n")
    out = call(facade.pack, "zebra", 100, options)
    assert set(out) == {"error"} and needle in out["error"], out


def test_index_bytes_rules():
    assert call(facade.index_bytes, "a.md", b"# A\nhello\n")["success"]
    assert call(facade.index_bytes, "b.txt", b"\x00\x01\x02\x00" * 100) == {"skipped": "binary", "filename": "b.txt"}
    assert call(facade.index_bytes, "c.png", b"text")["skipped"] == "not included"
    assert call(facade.index_bytes, "node_modules/x/d.js", b"x")["skipped"] == "excluded"
    assert call(facade.index_bytes, "e.txt", "\ufeffBOM text".encode("utf-16-le"))["success"]
    assert call(facade.index_bytes, "jp.txt", "サーバーのポートを変えます。\n".encode("euc_jp") * 3)["success"]
    assert call(facade.index_bytes, "zh.txt", "配置文件用于更改服务器的端口。连接失败时会重试。\n".encode("gbk") * 3)["success"]
    assert call(facade.index_bytes, "el.txt", "Το αρχείο ρυθμίσεων αλλάζει τη θύρα.\n".encode("cp1253") * 3)["success"]
    assert call(facade.index_bytes, "odd.txt", bytes(range(0x80, 0x100)) * 3)["skipped"].startswith("not UTF-8")
    soup = b'Search.setIndex({"docnames":["index"],"terms":{"alpha":[0,1]' + b',"x":0' * 300 + b"}})"
    assert call(facade.index_bytes, "_build/searchindex.js", soup)["skipped"].startswith("minified")
    assert call(facade.index_bytes, "notes.txt", soup)["success"]  # prose may have long lines
    assert call(facade.index_bytes, "guide.md.gz", gzip.compress(b"# Guide\nturn the dial\n"))["success"]
    assert call(facade.index_bytes, "bad.md.gz", b"# Guide\n")["skipped"].startswith("damaged: not gzip data")
    assert call(facade.index_bytes, "notes.gz", gzip.compress(b"x"))["skipped"] == "not included"
    limit = default_config()["index"]["max_file_bytes"]
    assert call(facade.check_path, "big.txt", limit + 1)["skip"].startswith("too large")
    assert call(facade.check_path, "ok.txt", limit) == {"ok": True, "path": "ok.txt"}
    assert call(facade.stats)["files"] == ["a.md", "e.txt", "el.txt", "guide.md.gz", "jp.txt", "notes.txt", "zh.txt"]
    assert call(facade.query, "dial", 1)["results"][0]["text"] == "# Guide\nturn the dial"


def _big_text(n_sections=200):
    """A real-looking Markdown manual of more than `facade.STEP_MIN_CHARS` characters."""
    parts = []
    for i in range(n_sections):
        parts.append(f"## Section {i}\n\nThe valve number {i} opens when the pressure of tank {i % 17} "
                     f"passes the limit; word{i}x marks it.\n" + "Operators log readings every hour. " * 30)
    text = "\n\n".join(parts) + "\n\nThe lighthouse quokka appears only here.\n"
    assert len(text) >= facade.STEP_MIN_CHARS
    return text.encode()


def test_a_big_file_is_indexed_in_steps_to_the_same_index(sample_docs):
    for path, text in sample_docs:
        call(facade.index_text, path, text)
    assert call(facade.query, "lighthouse quokka")["results"] == []  # (a search flushes: as below)
    data = _big_text()
    start = call(facade.index_bytes, "manual.md", data, 1.5, True)
    assert start["pending"] is True and start["filename"] == "manual.md" and start["done"] == 0
    total = start["total"]
    assert total > 10
    steps = []
    while True:
        out = call(facade.index_step, 1)
        if not out.get("pending"):
            break
        steps.append(out["done"])
        # between steps the page may search, and the file is not in the index yet
        assert call(facade.query, "lighthouse quokka")["results"] == []
        assert "manual.md" not in call(facade.stats)["files"]
    assert len(steps) >= 2 and steps == sorted(steps) and steps[-1] <= total
    assert out == {"success": True, "chunks": total, "filename": "manual.md"}
    assert call(facade.query, "lighthouse quokka", 1)["results"][0]["path"] == "manual.md"
    assert call(facade.index_step)["error"] == "no file is being indexed in steps"
    stepped = facade.dump()
    # the same database as the file indexed in one call
    assert call(facade.init)["success"]
    for path, text in sample_docs:
        call(facade.index_text, path, text)
    assert call(facade.query, "lighthouse quokka")["results"] == []
    assert call(facade.index_bytes, "manual.md", data, 1.5)["success"]
    assert facade.dump() == stepped


def test_a_small_file_is_indexed_at_once_even_when_steps_are_asked_for():
    assert call(facade.index_bytes, "a.md", b"# A\nhello\n", None, True) == {
        "success": True, "chunks": 1, "filename": "a.md"}
    assert call(facade.index_step)["error"] == "no file is being indexed in steps"


def test_a_file_indexed_in_steps_can_be_abandoned_and_nothing_of_it_is_stored():
    assert call(facade.index_text, "keep.md", "# Keep\nThe quokka stays.\n")["success"]
    before = facade.dump()
    assert call(facade.index_bytes, "manual.md", _big_text(), None, True)["pending"]
    assert call(facade.index_step, 1)["pending"]
    assert call(facade.index_cancel) == {"success": True, "cancelled": True}
    assert call(facade.index_step)["error"] == "no file is being indexed in steps"
    assert call(facade.index_cancel) == {"success": True, "cancelled": False}
    assert facade.dump() == before
    # a new init abandons one too
    assert call(facade.index_bytes, "manual.md", _big_text(), None, True)["pending"]
    assert call(facade.init)["totalDocs"] == 0
    assert call(facade.index_step)["error"] == "no file is being indexed in steps"


def test_remove_of_a_folders_path_removes_every_file_under_it():
    """ragRemove("docs"), a folder's path as the file list shows its files, answered
    "removed": false and removed nothing."""
    for path in ("docs/a.md", "docs/sub/b.md", "docsx/c.md", "top.md"):
        assert call(facade.index_text, path, f"# {path}\nThe walrus naps.\n")["success"]
    assert call(facade.index_bytes, "docs/big.md", _big_text(), None, True)["pending"]  # (on its way in)
    assert call(facade.remove, "docs") == {"success": True, "removed": True, "filename": "docs", "folder": True,
                                          "count": 3, "paths": ["docs/a.md", "docs/big.md", "docs/sub/b.md"]}
    assert call(facade.index_step)["superseded"] == "removed by ragRemove while it was being indexed"
    assert call(facade.stats)["files"] == ["docsx/c.md", "top.md"]  # (not docsx/: a folder's name is whole)
    assert call(facade.remove, "docs") == {"success": True, "removed": False, "filename": "docs"}
    # a name ending in "/" names a folder only; a file indexed under the name itself is the file
    assert call(facade.remove, "top.md/") == {"success": True, "removed": False, "filename": "top.md"}
    assert call(facade.index_text, "notes", "a file named notes\n")["success"]
    assert call(facade.index_text, "notes/x.md", "a file in notes/\n")["success"]
    assert call(facade.remove, "notes") == {"success": True, "removed": True, "filename": "notes"}
    assert call(facade.remove, "notes/")["paths"] == ["notes/x.md"]
    # the top is no folder to remove: ragClear is
    assert "ragClear() removes every file" in call(facade.remove, ".")["error"]
    assert call(facade.stats)["files"] == ["docsx/c.md", "top.md"]


def test_a_later_call_on_the_path_of_a_file_being_indexed_in_steps_wins():
    # ragIndex of the same path: its text stays, the dropped file is not stored over it
    assert call(facade.index_bytes, "manual.md", _big_text(), None, True)["pending"]
    assert call(facade.index_step, 1)["pending"]
    assert call(facade.index_text, "other.md", "# Other\nThe walrus.\n")["success"]  # another path: no effect
    assert call(facade.index_text, "manual.md", "# Manual\nNewer text about zebras.\n")["success"]
    assert call(facade.index_step) == {"superseded": "replaced by ragIndex while it was being indexed",
                                       "filename": "manual.md"}
    assert call(facade.index_step)["error"] == "no file is being indexed in steps"
    assert call(facade.query, "zebras", 1)["results"][0]["text"] == "# Manual\nNewer text about zebras."
    assert call(facade.stats)["totalChunks"] == 2
    # ragRemove of it: it is not indexed, and the removal says it removed it
    assert call(facade.index_bytes, "manual.md", _big_text(), None, True)["pending"]
    assert call(facade.remove, "manual.md") == {"success": True, "removed": True, "filename": "manual.md"}
    assert call(facade.index_step)["superseded"] == "removed by ragRemove while it was being indexed"
    assert call(facade.stats)["files"] == ["other.md"]
    # ragClear
    assert call(facade.index_bytes, "manual.md", _big_text(), None, True)["pending"]
    assert call(facade.clear) == {"success": True}
    assert call(facade.index_step)["superseded"] == "cleared while it was being indexed"
    assert call(facade.stats)["files"] == []


def test_a_file_being_indexed_in_steps_is_checked_for_room_when_it_is_stored(monkeypatch):
    assert call(facade.index_bytes, "manual.md", _big_text(), None, True)["pending"]
    monkeypatch.setattr(facade, "MAX_INDEX_BYTES", 1)  # the index filled up meanwhile
    out = call(facade.index_step, 60_000)
    assert out["code"] == "full" and "the index is full" in out["error"]
    assert call(facade.stats)["files"] == []
    assert call(facade.index_step)["error"] == "no file is being indexed in steps"


def test_selection_matches_the_cli_walker(tmp_path):
    """Every file of a tree, decided by the facade's per-path checks, as `rag index` decides."""
    tree = {
        "README.md": "x", "a.py": "x", "b.png": "x", "c.min.js": "x", "d.js": "x",
        "node_modules/p/i.js": "x", "vendor/v.py": "x", "dist/o.md": "x", "build/b.md": "x",
        "src/__pycache__/m.py": "x", "src/m.py": "x", ".git/config": "x", ".rag/x.md": "x",
        "docs/a/b/c.rst": "x", "Makefile": "x", "data.csv": "x", "conf.yaml": "x",
        ".gitignore": "gen/\n*.log.md\n!keep.log.md\n/top.md\n",
        "gen/g.md": "x", "x.log.md": "x", "keep.log.md": "x", "top.md": "x", "sub/top.md": "x",
        "sub/.ragignore": "secret.md\n", "sub/secret.md": "x", "sub/open.md": "x",
        "docs/z.md.gz": "x", "docs/z.min.js.gz": "x", "docs/changelog.gz": "x", "docs/Readme": "x", "sub/makefile": "x",
        # a config file under a name rag does not read: not read, nor indexed (its words are settings)
        "Rag.yaml": "x", "sub/rag.yml": "x", "docs/rag.yaml.txt": "x",
    }
    for rel, text in tree.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    cfg = default_config()["index"]
    cli = sorted(e.path for e in iter_files(tmp_path, cfg["includes"], cfg["excludes"], use_gitignore=True))
    call(facade.ignore_add, "", (tmp_path / ".gitignore").read_text())
    call(facade.ignore_add, "sub", (tmp_path / "sub" / ".ragignore").read_text())
    page = sorted(rel for rel in tree if call(facade.check_path, rel, 1).get("ok"))
    assert page == cli
    assert "keep.log.md" in cli and "sub/top.md" in cli and "top.md" not in cli
    assert "docs/z.md.gz" in cli and "docs/z.min.js.gz" not in cli
    assert {"docs/changelog.gz", "docs/Readme", "sub/makefile"} <= set(page)  # (names in other capitals)
    assert "conf.yaml" in cli and not {"Rag.yaml", "sub/rag.yml", "docs/rag.yaml.txt"} & set(cli)
    # in a dropped folder, passed over as `rag index` of the folder passes over it (not counted)
    assert call(facade.check_path, "proj/Rag.yaml", 1) == {"skip": "excluded", "path": "proj/Rag.yaml", "quiet": True}


def test_check_dir_prunes_excluded_and_ignored_folders():
    call(facade.ignore_add, "proj", "generated/\n")
    assert call(facade.check_dir, "proj/node_modules")["skip"] == "excluded"
    assert call(facade.check_dir, "proj/.git")["skip"] == "excluded"
    assert call(facade.check_dir, "proj/generated")["skip"] == "ignored"
    assert call(facade.check_dir, "other/generated") == {"ok": True, "path": "other/generated"}
    assert call(facade.check_dir, "proj/src")["ok"]


def test_a_dropped_folders_rag_yaml_selects_its_files():
    text = ("index:\n  includes: ['**/*.md', '**/*.py']\n  excludes: ['drafts/**', '**/*_test.py']\n"
            "  max_file_bytes: 100\n  chunk_tokens: 256\npack:\n  token_budget: 900\n")
    out = call(facade.config_add, "proj", text)
    assert out == {"success": True, "folder": "proj",
                   "applied": ["index.includes", "index.excludes", "index.max_file_bytes"],
                   "unused": ["index.chunk_tokens", "pack.token_budget"]}
    assert call(facade.check_path, "proj/a.md", 10)["ok"]
    assert call(facade.check_path, "proj/src/m.py", 10)["ok"]
    assert call(facade.check_path, "proj/src/m_test.py", 10)["skip"] == "excluded"
    assert call(facade.check_path, "proj/notes.txt", 10)["skip"] == "not included"  # its includes replace the defaults
    assert call(facade.check_path, "proj/drafts/d.md", 10)["skip"] == "excluded"
    assert call(facade.check_dir, "proj/drafts")["skip"] == "excluded"
    # its excludes replace the defaults, but rag's own files stay out, as in `rag index`
    assert call(facade.check_path, "proj/node_modules/x.md", 10)["ok"]
    assert call(facade.check_dir, "proj/.rag")["skip"] == "excluded"
    assert call(facade.check_path, "proj/rag.yaml", 10)["skip"] == "excluded"
    assert call(facade.check_path, "proj/big.md", 101)["skip"].startswith("too large (101 bytes > max_file_bytes 100)")
    # globs are relative to the folder, and other folders keep the page's rules
    assert call(facade.check_path, "other/notes.txt", 10)["ok"]
    assert call(facade.check_path, "other/drafts/d.md", 10)["ok"]
    assert call(facade.check_dir, "other/drafts")["ok"]
    assert call(facade.index_bytes, "proj/src/m_test.py", b"def test(): pass\n")["skipped"] == "excluded"
    assert call(facade.index_bytes, "proj/a.md", b"# A\nhello\n")["success"]
    # the next drop starts from the page's rules again
    facade.ignore_reset()
    assert call(facade.check_path, "proj/notes.txt", 10)["ok"]


def test_an_invalid_rag_yaml_is_an_error_naming_its_line_and_changes_nothing():
    out = call(facade.config_add, "proj", "index:\n  excludes: 5\n")
    assert "proj/rag.yaml line 2" in out["error"] and "index.excludes" in out["error"]
    assert call(facade.config_add, "proj", "index: [\n", ".rag/config.yaml")["error"].startswith(
        "proj/.rag/config.yaml line 1: invalid YAML")  # (the line of the "[" never closed)
    assert call(facade.config_add, "proj", "index:\n  exclude: []\n")["error"].count("did you mean 'excludes'")
    assert call(facade.config_add, "proj", "pack:\n  synonyms: [zap]\n")["error"].startswith(  # (as rag index)
        "proj/rag.yaml line 2: pack.synonyms item 'zap' has one word")
    assert call(facade.check_path, "proj/notes.txt", 10)["ok"]  # still the page's rules


def test_a_folders_rag_yaml_can_turn_its_ignore_files_off():
    call(facade.ignore_add, "proj", "secret.md\n")
    call(facade.ignore_add, "other", "secret.md\n")
    call(facade.config_add, "proj", "index:\n  gitignore: false\n")
    assert call(facade.check_path, "proj/secret.md", 10)["ok"]
    assert call(facade.check_path, "other/secret.md", 10)["skip"] == "ignored"


def test_selection_under_a_rag_yaml_matches_the_cli_walker(tmp_path):
    """A dropped folder with a rag.yaml: the facade's checks against `rag index` of that folder."""
    from ragweb.config import load_config

    text = "index:\n  includes: ['**/*.md', '**/*.txt', 'build/**/*.py']\n  excludes: ['**/skip/**', 'old*.md']\n"
    tree = {"rag.yaml": text, "a.md": "x", "b.txt": "x", "c.py": "x", "build/gen.py": "x", "build/g.md": "x",
            "skip/s.md": "x", "docs/skip/t.md": "x", "old1.md": "x", "docs/old2.md": "x",
            "node_modules/n.md": "x", ".gitignore": "tmp/\n", "tmp/t.md": "x", ".rag/config.yaml": "index: {}\n"}
    for rel, body in tree.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body)
    cfg = load_config(tmp_path)[0]["index"]
    cli = sorted(e.path for e in iter_files(tmp_path, cfg["includes"], cfg["excludes"], use_gitignore=True))
    call(facade.config_add, "proj", text)
    call(facade.ignore_add, "proj", tree[".gitignore"])
    page = sorted(rel for rel in tree if call(facade.check_path, f"proj/{rel}", 1).get("ok"))
    assert page == cli
    # its excludes replace the defaults (node_modules/ is indexed), a bare glob matches at any depth
    assert cli == ["a.md", "b.txt", "build/g.md", "build/gen.py", "node_modules/n.md"]


def test_a_nul_character_in_text_is_kept_as_a_replacement_not_a_cut():
    # (SQLite's substr stops at a NUL: a hit's text ended there, and a pack found no evidence)
    call(facade.index_text, "nul.txt", "before\0after nul egrets\nsecond line egrets")
    (hit,) = call(facade.query, "egrets", 5)["results"]
    assert hit["text"] == "before\ufffdafter nul egrets\nsecond line egrets"
    packed = call(facade.pack, "egrets")
    assert packed["evidence"] == "sufficient" and "second line egrets" in packed["snippets"][0]["text"]


def test_files_rag_index_passes_over_without_counting_them_are_quiet():
    """A dropped folder's rag.yaml (read as its config), its .gitignore and what its .git/
    holds were counted among the files the globs or ignore files left out; rag index of the
    folder never counts them."""
    call(facade.config_add, "proj", "index:\n  includes: ['**/*.md']\n")
    quiet = [p for p in ("proj/rag.yaml", "proj/.gitignore", "proj/.git/HEAD", "proj/.rag/config.yaml",
                         "other/.git/config", "other/sub/rag.yaml", "proj/photo.png", "proj/.env.md",
                         "other/photo.png", "rag.yaml", ".env", ".gitignore") if call(facade.check_path, p, 10).get("quiet")]
    # (a loose file is a document given: a loose rag.yaml, left out by the default excludes, and
    # a loose .env, which no include takes, are counted, as they were before)
    assert quiet == ["proj/rag.yaml", "proj/.gitignore", "proj/.git/HEAD", "proj/.rag/config.yaml",
                     "other/.git/config", "other/sub/rag.yaml"]

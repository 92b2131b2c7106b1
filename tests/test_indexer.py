import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragweb.config import default_config
from ragweb.engine import Engine
from ragweb.errors import IndexBusyError, IndexCorruptError
from ragweb.indexer import PARALLEL_BYTES, PARALLEL_FILES, index_path, index_root, worker_count
from ragweb.webbuild import copy_sample


def search_paths(root, q):
    eng = Engine.open(index_path(root), create=False)
    try:
        return [(h.path, h.start_line, h.end_line, h.score) for h in eng.search(q, top_k=50)]
    finally:
        eng.close()


def test_first_run_adds_everything(sample_root):
    r = index_root(sample_root, default_config())
    n = sum(1 for p in sample_root.rglob("*") if p.is_file() and ".rag" not in p.parts)
    assert r.added == n and r.updated == r.removed == r.unchanged == 0
    assert r.chunks == r.total_chunks > 0
    assert "added" in r.summary() and "chunks" in r.summary()


def test_a_file_name_that_is_not_utf8_is_reported_and_the_rest_indexed(tmp_path):
    (tmp_path / "good.md").write_text("# Good\nYaks graze here.\n")
    with open(os.fsencode(tmp_path) + b"/caf\xe9.md", "wb") as f:  # a Latin-1 name
        f.write(b"# Cafe\nYaks drink coffee.\n")
    for _ in range(2):  # (and again: it is not "new" forever, nor a crash later)
        r = index_root(tmp_path, default_config())
        assert r.problems == [(r"caf\xe9.md", "its name is not valid UTF-8; rename it to index it")]
        assert "1 left out for its name or depth;" in r.summary() and "unreadable" not in r.summary()
    assert [p for p, *_ in search_paths(tmp_path, "yaks")] == ["good.md"]


def test_legacy_encodings_are_read_and_one_that_reads_as_no_language_is_reported_once(tmp_path):
    from ragweb.indexer import scan_changes
    (tmp_path / "jp.txt").write_bytes("設定ファイルでサーバーのポートを変えられます。\n".encode("shift_jis") * 3)
    (tmp_path / "zh.txt").write_bytes("配置文件用于更改服务器的端口。连接失败时会重试请求。\n".encode("gbk") * 3)
    (tmp_path / "el.txt").write_bytes("Το αρχείο ρυθμίσεων αλλάζει τη θύρα του διακομιστή.\n".encode("cp1253") * 3)
    (tmp_path / "odd.txt").write_bytes(bytes(range(0x80, 0x100)) * 3)  # reads as no language
    r = index_root(tmp_path, default_config())
    assert r.added == 3 and [p for p, _ in r.problems] == ["odd.txt"]
    assert r.problems[0][1].startswith("not UTF-8") and "Save it as UTF-8" in r.problems[0][1]
    assert [p for p, *_ in search_paths(tmp_path, "サーバー")] == ["jp.txt"]
    assert [p for p, *_ in search_paths(tmp_path, "服务器")] == ["zh.txt"]
    assert [p for p, *_ in search_paths(tmp_path, "θύρα")] == ["el.txt"]
    eng = Engine.open(index_path(tmp_path))
    assert not scan_changes(eng, tmp_path, default_config()).any  # not "new" on every query
    eng.close()
    r = index_root(tmp_path, default_config())
    assert r.problems == [] and r.unchanged == 4
    (tmp_path / "odd.txt").write_text("Die Datei ist jetzt konvertiert.\n", encoding="utf-8")  # converted
    r = index_root(tmp_path, default_config())
    assert r.added == 1 and [p for p, *_ in search_paths(tmp_path, "konvertiert")] == ["odd.txt"]


def test_a_file_an_older_version_refused_as_legacy_is_read_again(tmp_path):
    # an index made by a version that tried fewer encodings remembers its refusal by mtime and
    # size; this version lists other encodings in the reason, so it reads the file again
    (tmp_path / "el.txt").write_bytes("Το αρχείο ρυθμίσεων αλλάζει τη θύρα του διακομιστή.\n".encode("cp1253") * 3)
    (tmp_path / "odd.txt").write_bytes(bytes(range(0x80, 0x100)) * 3)
    index_root(tmp_path, default_config())
    eng = Engine.open(index_path(tmp_path))
    st = (tmp_path / "el.txt").stat()
    with eng.transaction():
        eng.remove_document("el.txt")
        eng.mark_skipped("el.txt", st.st_mtime, st.st_size, "not UTF-8, and it reads as none of the "
                         "legacy encodings tried (Windows-1252, Windows-1251). Save it as UTF-8 to index it")
    eng.close()
    assert search_paths(tmp_path, "θύρα") == []
    r = index_root(tmp_path, default_config())
    assert r.added == 1 and r.problems == [] and r.unchanged == 1  # odd.txt: refused by this version
    assert [p for p, *_ in search_paths(tmp_path, "θύρα")] == ["el.txt"]


def test_a_file_rewritten_within_one_tick_of_a_coarse_clock_is_indexed_again(tmp_path):
    # same size, same modification time (FAT keeps 2 s; Linux's clock ticks every few ms):
    # the time and size said "unchanged" and the edit was never indexed
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nThe walruses nest here.\n")
    (tmp_path / "old.md").write_text("# Old\n\nWritten long ago.\n")
    os.utime(tmp_path / "old.md", (time.time() - 3600, time.time() - 3600))
    first = note.stat()
    assert index_root(tmp_path, default_config()).added == 2
    note.write_text("# Note\n\nThe narwhals nest here.\n")
    os.utime(note, ns=(first.st_atime_ns, first.st_mtime_ns))
    r = index_root(tmp_path, default_config())
    assert r.updated == 1 and [p for p, *_ in search_paths(tmp_path, "narwhals")] == ["note.md"]
    # read again while it is that recent, it is compared, and unchanged; an old file is not read
    r = index_root(tmp_path, default_config())
    assert r.updated == 0 and r.unchanged == 2


def test_a_skipped_file_rewritten_as_text_within_one_tick_is_indexed(tmp_path):
    # (a file preallocated with NUL bytes and filled in place within one tick of a coarse clock)
    blob = tmp_path / "blob.txt"
    blob.write_bytes(b"papaya\x00words\n")
    first = blob.stat()
    assert index_root(tmp_path, default_config()).binary == 1
    blob.write_bytes(b"papaya words\n")
    os.utime(blob, ns=(first.st_atime_ns, first.st_mtime_ns))
    r = index_root(tmp_path, default_config())
    assert r.added == 1 and [p for p, *_ in search_paths(tmp_path, "papaya")] == ["blob.txt"]


def test_a_damaged_gz_or_a_pipe_in_place_of_a_file_drops_its_old_text_once(tmp_path):
    # both were kept as "unreadable" (tried again every run): the old text was served for
    # ever, and the damaged .gz made every query say "1 file changed since the last index"
    import gzip
    from ragweb.indexer import scan_changes
    gz = gzip.compress(b"# Notes\n\nThe zebra unicorn is old text.\n")
    (tmp_path / "notes.md.gz").write_bytes(gz)
    (tmp_path / "pipe.md").write_text("# Pipe\n\nThe walrus text.\n")
    (tmp_path / "dir.md").mkdir()
    (tmp_path / "dir.md" / "part.md").write_text("# Part\n\nThe narwhal text.\n")
    cfg = default_config()
    assert index_root(tmp_path, cfg).added == 3
    (tmp_path / "notes.md.gz").write_bytes(gz[:len(gz) // 2])  # cut short
    (tmp_path / "pipe.md").unlink()
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "dir.md" / "part.md").unlink()
    (tmp_path / "dir.md").rmdir()
    os.mkfifo(tmp_path / "dir.md")  # (a folder's name, now a pipe: what was under it goes too)
    r = index_root(tmp_path, cfg)
    assert r.removed == 3
    problems = dict(r.problems)
    assert problems.pop("notes.md.gz").startswith("damaged: not gzip data")
    assert problems == {"pipe.md": "not a regular file (a named pipe)", "dir.md": "not a regular file (a named pipe)"}
    assert "1 unreadable, 2 not regular files;" in r.summary()  # (the damaged .gz; the pipes are never opened)
    for word in ("zebra", "walrus", "narwhal"):
        assert search_paths(tmp_path, word) == []
    eng = Engine.open(index_path(tmp_path))
    assert not scan_changes(eng, tmp_path, cfg).any  # (a query has nothing to say)
    eng.close()
    assert index_root(tmp_path, cfg).removed == 0


def test_a_file_an_older_decoder_read_otherwise_is_read_again_once(tmp_path):
    # an index made before Windows-1250 was told from Windows-1252 holds the Czech file as
    # garbage ("pøíliš"); the next `rag index` decodes the files that are not UTF-8 again
    from ragweb.files import DECODER_VERSION
    from ragweb.indexer import scan_changes
    czech = "Soubor je příliš velký, zkuste jiný žlutý kůň.\n" * 4
    (tmp_path / "cz.txt").write_bytes(czech.encode("cp1250"))
    (tmp_path / "fr.txt").write_bytes("Le café est déjà prêt.\n".encode("cp1252") * 4)  # reads the same
    (tmp_path / "utf8.md").write_text("Crème brûlée, naïve façade.\n", encoding="utf-8")
    (tmp_path / "ascii.md").write_text("Plain words.\n", encoding="utf-8")
    for f in tmp_path.iterdir():  # written well before the runs (not "racy": see the next test)
        os.utime(f, (time.time() - 3600, time.time() - 3600))
    index_root(tmp_path, default_config())
    assert [p for p, *_ in search_paths(tmp_path, "příliš")] == ["cz.txt"]

    def as_older_version(decoder):
        eng = Engine.open(index_path(tmp_path))
        st = (tmp_path / "cz.txt").stat()
        with eng.transaction():
            eng.add_document("cz.txt", czech.encode("cp1250").decode("cp1252"), st.st_mtime, st.st_size)
            eng.set_decoded_by(decoder)
        eng.close()

    as_older_version(DECODER_VERSION)  # recorded as read by this decoder: left alone
    assert search_paths(tmp_path, "příliš") == []
    r = index_root(tmp_path, default_config())
    assert r.updated == 0 and search_paths(tmp_path, "příliš") == []

    as_older_version(1)
    eng = Engine.open(index_path(tmp_path))
    changes = scan_changes(eng, tmp_path, default_config())
    assert not changes.any  # a query does not pay for decoding again
    changes = scan_changes(eng, tmp_path, default_config(), decoding=True)
    assert [e.path for e in changes.reread] == ["cz.txt"] and len(changes.unchanged) == 3
    assert "re-read  cz.txt" in "\n".join(changes.describe())
    eng.close()
    r = index_root(tmp_path, default_config())
    assert r.updated == 1 and r.unchanged == 3
    assert [p for p, *_ in search_paths(tmp_path, "příliš")] == ["cz.txt"]
    eng = Engine.open(index_path(tmp_path))
    assert eng.decoded_by() == DECODER_VERSION
    eng.close()
    r = index_root(tmp_path, default_config())  # once
    assert r.updated == 0 and r.unchanged == 4


def test_a_pack_an_older_version_indexed_is_taken_out_once(sample_root):
    """Before a pack was told by its text, one that `.rag/outputs` did not name (written before
    the index was made, or `.rag` deleted since) was indexed; the next `rag index` reads the
    indexed packs again, once, and takes them out (`DECODER_VERSION` 3)."""
    from ragweb.files import DECODER_VERSION, PACKED_REASON
    from ragweb.formats import render
    from ragweb.indexer import scan_changes
    index_root(sample_root, default_config())
    eng = Engine.open(index_path(sample_root))
    with eng.reading():
        text = render(eng.pack("how do retries back off", budget=300), "markdown") + "\n"
    eng.close()
    (sample_root / "ctx.md").write_text(text)
    os.utime(sample_root / "ctx.md", (time.time() - 3600, time.time() - 3600))  # (not "racy")

    def as_older_version(decoder):
        eng = Engine.open(index_path(sample_root))
        st = (sample_root / "ctx.md").stat()
        with eng.transaction():
            eng.add_document("ctx.md", text, st.st_mtime, st.st_size)
            eng.mark_skipped("ctx.md", st.st_mtime, st.st_size, None)
            eng.set_decoded_by(decoder)
        eng.close()

    as_older_version(DECODER_VERSION)  # recorded as read by this version: left alone
    r = index_root(sample_root, default_config())
    assert r.removed == 0 and "ctx.md" in {p for p, *_ in search_paths(sample_root, "retries back off")}
    as_older_version(2)
    eng = Engine.open(index_path(sample_root))
    assert [e.path for e in scan_changes(eng, sample_root, default_config(), decoding=True).reread] == ["ctx.md"]
    eng.close()
    r = index_root(sample_root, default_config())
    assert r.removed == 1 and r.packed == 1 and "1 packed context)" in r.summary(), r.summary()
    assert "ctx.md" not in {p for p, *_ in search_paths(sample_root, "retries back off")}
    eng = Engine.open(index_path(sample_root))
    assert eng.decoded_by() == DECODER_VERSION and eng.skipped_states()["ctx.md"][2] == PACKED_REASON
    eng.close()
    r = index_root(sample_root, default_config())  # once
    assert r.removed == r.updated == r.added == 0 and r.packed == 0


def test_second_run_skips_unchanged(sample_root):
    index_root(sample_root, default_config())
    r = index_root(sample_root, default_config())
    assert r.added == r.updated == r.removed == 0 and r.unchanged > 0 and r.chunks == 0


def test_touched_but_same_content_is_skipped_by_hash(sample_root):
    index_root(sample_root, default_config())
    f = sample_root / "README.md"
    os.utime(f, (time.time() + 100, time.time() + 100))
    r = index_root(sample_root, default_config())
    assert r.updated == 0 and r.unchanged > 0


def test_changed_and_deleted_files(sample_root):
    index_root(sample_root, default_config())
    (sample_root / "README.md").write_text("# Renamed\nflamingo plumage\n")
    (sample_root / "CHANGELOG.md").unlink()
    (sample_root / "new.txt").write_text("a brand new okapi\n")
    r = index_root(sample_root, default_config())
    assert (r.added, r.updated, r.removed) == (1, 1, 1)
    assert [p[0] for p in search_paths(sample_root, "flamingo")] == ["README.md"]
    assert [p[0] for p in search_paths(sample_root, "okapi")] == ["new.txt"]
    eng = Engine.open(index_path(sample_root))
    assert "CHANGELOG.md" not in eng.stats()["files"]


def test_incremental_equals_fresh(sample_root, tmp_path):
    index_root(sample_root, default_config())
    (sample_root / "docs" / "headers.md").write_text("# Headers\nheaders are parsed by parse_headers\n")
    index_root(sample_root, default_config())
    import shutil
    copy = tmp_path / "copy"
    shutil.copytree(sample_root, copy, ignore=shutil.ignore_patterns(".rag"))
    index_root(copy, default_config())
    for q in ["parse headers", "retry backoff", "configuration timeout"]:
        assert search_paths(sample_root, q) == search_paths(copy, q)


def test_binary_and_large_files_are_skipped_and_counted(sample_root):
    (sample_root / "blob.txt").write_bytes(b"\x00\x01\x02binary" * 10)
    (sample_root / "huge.txt").write_text("word " * 3000)
    cfg = default_config()
    cfg["index"]["max_file_bytes"] = 10_000
    r = index_root(sample_root, cfg)
    assert r.binary == 1 and r.too_large == 1
    assert "1 binary" in r.summary() and "1 too large" in r.summary()
    eng = Engine.open(index_path(sample_root))
    assert "blob.txt" not in eng.stats()["files"] and "huge.txt" not in eng.stats()["files"]


def test_files_skipped_before_are_counted_by_why_on_later_runs(sample_root):
    # (the next run called them "unchanged": "9 skipped (9 unchanged)", the too large file among them)
    (sample_root / "blob.txt").write_bytes(b"\x00\x01\x02binary" * 10)
    (sample_root / "huge.txt").write_text("word " * 3000)
    (sample_root / "bundle.js").write_text("var a=1;" * 300)
    cfg = default_config()
    cfg["index"]["max_file_bytes"] = 10_000
    first = index_root(sample_root, cfg)
    assert "3 skipped (1 binary, 1 too large, 1 minified)" in first.summary()
    r = index_root(sample_root, cfg)
    assert f"{first.added + 3} skipped ({first.added} unchanged, 1 binary, 1 too large, 1 minified)" in r.summary()
    assert (r.unchanged, r.binary, r.too_large, r.minified) == (first.added, 0, 0, 0)  # (the CLI's note: once)


def test_a_new_size_limit_applies_to_files_already_seen(sample_root):
    """Raising index.max_file_bytes indexes the files it refused (unchanged since); lowering it
    removes the indexed ones now over it: as a fresh index with that limit would hold."""
    (sample_root / "huge.txt").write_text("walrus " * 3000)
    cfg = default_config()
    cfg["index"]["max_file_bytes"] = 10_000
    assert index_root(sample_root, cfg).too_large == 1
    cfg["index"]["max_file_bytes"] = 100_000
    r = index_root(sample_root, cfg)
    assert r.added == 1 and search_paths(sample_root, "walrus")[0][0] == "huge.txt"
    cfg["index"]["max_file_bytes"] = 10_000
    r = index_root(sample_root, cfg)
    assert r.removed == 1 and r.too_large == 1 and search_paths(sample_root, "walrus") == []
    assert index_root(sample_root, cfg).too_large == 0  # remembered: not read again


def test_a_new_size_limit_applies_to_gz_files_by_their_uncompressed_size(tmp_path):
    import gzip
    gz = tmp_path / "manual.md.gz"
    gz.write_bytes(gzip.compress(("# Manual\n\n" + "walrus tusks " * 1600 + "\n").encode()))  # 21 KB, 0.1 KB packed
    os.utime(gz, (time.time() - 3600, time.time() - 3600))  # (not within the racy re-check's reach)
    cfg = default_config()
    cfg["index"]["max_file_bytes"] = 40_000
    assert index_root(tmp_path, cfg).added == 1
    cfg["index"]["max_file_bytes"] = 10_000  # lowered: the file is over it now, though not its .gz
    r = index_root(tmp_path, cfg)
    assert (r.removed, r.too_large) == (1, 1) and search_paths(tmp_path, "walrus") == []
    r = index_root(tmp_path, cfg)  # remembered: not read again, and not "changed" for ever
    assert (r.too_large, r.unchanged, r.skipped_before) == (0, 0, {"too large": 1})
    eng = Engine.open(index_path(tmp_path), cfg, create=False)
    try:
        from ragweb.indexer import scan_changes
        changes = scan_changes(eng, tmp_path, cfg)
        assert not changes.changed and not changes.new
    finally:
        eng.close()
    cfg["index"]["max_file_bytes"] = 40_000
    assert index_root(tmp_path, cfg).added == 1 and search_paths(tmp_path, "walrus")[0][0] == "manual.md.gz"


def test_minified_scripts_and_generated_search_indexes_are_skipped_and_counted(sample_root):
    words = " ".join(f"term{i}" for i in range(60))
    (sample_root / "searchindex.js").write_text('Search.setIndex({"terms": "' + words * 20 + '"})')
    (sample_root / "bundle.css").write_text(".a{color:red}" * 100)
    (sample_root / "app.js").write_text("// term7 in a readable script\nexport const a = 1;\n")
    (sample_root / "long.md").write_text(words * 20 + "\n")  # prose: long lines are paragraphs
    r = index_root(sample_root, default_config())
    assert r.minified == 2 and "2 minified" in r.summary()
    files = Engine.open(index_path(sample_root)).stats()["files"]
    assert "searchindex.js" not in files and "bundle.css" not in files
    assert "app.js" in files and "long.md" in files
    again = index_root(sample_root, default_config())  # remembered: not read again until it changes
    assert again.minified == 0 and again.added == again.updated == 0
    (sample_root / "searchindex.js").write_text('Search.setIndex({\n  "terms": "term1"\n})\n')
    r = index_root(sample_root, default_config())
    assert r.added == 1 and "searchindex.js" in Engine.open(index_path(sample_root)).stats()["files"]


def test_a_documentation_builds_theme_files_and_bundled_jquery_are_left_out(tmp_path):
    # a Sphinx build: its pages and their sources are documentation, _static/ is the theme
    (tmp_path / "_static").mkdir()
    (tmp_path / "_sources").mkdir()
    (tmp_path / "js").mkdir()
    lib = "".join(f"function sortBy{i}(list) {{\n  return list.filter(x => x > {i});\n}}\n" for i in range(200))
    (tmp_path / "_static" / "underscore.js").write_text(lib)
    (tmp_path / "_static" / "basic.css").write_text("div.sphinxsidebar {\n  float: left;\n}\n")
    (tmp_path / "js" / "jquery-3.6.0.js").write_text(lib)
    (tmp_path / "js" / "menu.js").write_text("// sort the menu\nexport const sortMenu = 1;\n")
    (tmp_path / "library.html").write_text("<h1>sorted</h1><p>Return a new sorted list.</p>\n")
    (tmp_path / "_sources" / "library.rst.txt").write_text("sorted\n======\n\nReturn a new sorted list.\n")
    r = index_root(tmp_path, default_config())
    files = set(Engine.open(index_path(tmp_path)).stats()["files"])
    assert files == {"library.html", "_sources/library.rst.txt", "js/menu.js"}
    assert r.left_out.dirs == ["_static"]


def test_file_that_becomes_binary_is_removed(sample_root):
    index_root(sample_root, default_config())
    (sample_root / "README.md").write_bytes(b"\x00\x00\x00 now binary")
    r = index_root(sample_root, default_config())
    assert r.removed == 1 and r.binary == 1


def test_empty_folder(tmp_path):
    r = index_root(tmp_path, default_config())
    assert r.added == 0 and r.total_chunks == 0
    assert search_paths(tmp_path, "anything") == []


def test_changed_analysis_settings_rebuild(sample_root):
    index_root(sample_root, default_config())
    cfg = default_config()
    cfg["index"]["stemming"] = False
    r = index_root(sample_root, cfg)
    assert r.rebuilt == "analysis settings changed" and r.added > 0


def test_corrupt_index_is_reported_and_rebuild_recovers(sample_root):
    index_root(sample_root, default_config())
    db = index_path(sample_root)
    for suffix in ("-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    with pytest.raises(IndexCorruptError, match="--rebuild"):
        index_root(sample_root, default_config())
    r = index_root(sample_root, default_config(), rebuild=True)
    assert r.added > 0 and search_paths(sample_root, "retry")


HOLDER = r"""
import sys, time
from ragweb.config import default_config
from ragweb.indexer import index_root
def progress(done, total, nbytes, total_bytes):
    if done == 1:
        print("HOLDING", flush=True)
        time.sleep(60)
index_root(sys.argv[1], default_config(), progress=progress)
"""


def _start_holder(root):
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(root)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "HOLDING"
    return proc


def test_a_question_during_the_first_run_says_the_index_is_being_built(sample_root):
    proc = _start_holder(sample_root)  # (the first run: nothing committed but the empty schema)
    try:
        for cmd in ("query", "pack"):
            r = subprocess.run([sys.executable, "-m", "ragweb", cmd, "-q", "retry", "-d", str(sample_root)],
                               capture_output=True, text=True, timeout=120)
            assert r.returncode == 1 and r.stdout == "", (cmd, r.stdout)
            assert r.stderr == (f"Error: the index of {sample_root} is being built by a `rag index` run that "
                                "has not finished; try again when it has\n"), r.stderr
    finally:
        proc.kill()
        proc.wait()


def test_kill_9_mid_index_leaves_previous_index_intact(sample_root):
    index_root(sample_root, default_config())
    before = search_paths(sample_root, "retry headers")
    for p in list(sample_root.rglob("*.md")):
        p.write_text(p.read_text() + "\nappended zebra text\n")
    proc = _start_holder(sample_root)
    # the run is mid-transaction: a reader still sees the previous index
    assert search_paths(sample_root, "retry headers") == before
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert search_paths(sample_root, "retry headers") == before
    assert search_paths(sample_root, "zebra") == []
    r = index_root(sample_root, default_config())
    assert r.updated > 0 and search_paths(sample_root, "zebra")


REBUILD_HOLDER = r"""
import sys, time
from ragweb.config import default_config
from ragweb.indexer import index_root
def progress(done, total, nbytes, total_bytes):
    if done == 1:
        print("HOLDING", flush=True)
        sys.stdin.readline()  # until the test says go on
r = index_root(sys.argv[1], default_config(), rebuild=True, progress=progress)
print("REBUILT", r.total_chunks, flush=True)
"""


def test_two_rebuilds_at_once_each_build_a_whole_index(sample_root):
    index_root(sample_root, default_config())
    before = search_paths(sample_root, "retry headers")
    rag = sample_root / ".rag"
    (rag / "index.db.rebuild").write_bytes(b"left by an older version")
    (rag / "index.db.rebuild-999999999-wal").write_bytes(b"left by a killed rebuild")
    proc = subprocess.Popen([sys.executable, "-c", REBUILD_HOLDER, str(sample_root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "HOLDING"  # the first rebuild is under way ...
        second = index_root(sample_root, default_config(), rebuild=True)  # ... when a second runs
        assert search_paths(sample_root, "retry headers") == before
        out, _ = proc.communicate("go on\n", timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out.split() == ["REBUILT", str(second.total_chunks)]
    assert search_paths(sample_root, "retry headers") == before
    assert sorted(p.name for p in rag.iterdir() if "rebuild" in p.name) == []


def test_a_rebuild_whose_new_file_was_removed_meanwhile_leaves_the_index_as_it_was(sample_root):
    """A `rag index` in another container sharing the folder (another PID namespace) takes a
    running rebuild's new file for one a killed rebuild left, and deletes it: the rebuild
    then swapped an empty file in for the index and said it had rebuilt it."""
    index_root(sample_root, default_config())
    before = search_paths(sample_root, "retry headers")
    rag = sample_root / ".rag"
    proc = subprocess.Popen([sys.executable, "-c", REBUILD_HOLDER, str(sample_root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "HOLDING"
        for path in rag.glob("index.db.rebuild-*"):  # (as that other run's clean-up does)
            path.unlink()
        out, err = proc.communicate("go on\n", timeout=60)
    finally:
        proc.kill()
    assert proc.returncode != 0 and "REBUILT" not in out
    assert "removed while it was being built" in err and "the index is as it was" in err
    assert search_paths(sample_root, "retry headers") == before
    assert sorted(p.name for p in rag.iterdir() if "rebuild" in p.name) == []


OPEN_HOLDER = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("CREATE TABLE t(x)")
print("OPEN", flush=True)
sys.stdin.readline()
conn.execute("INSERT INTO t VALUES(1)")
print(conn.execute("SELECT count(*) FROM t").fetchone()[0], flush=True)
"""


def test_a_rebuild_file_a_process_has_open_is_kept_though_its_pid_is_not_seen(sample_root):
    """A rebuild in another container sharing the folder has a PID this process cannot see:
    its new file is in use (SQLite holds a lock on it), not one a killed rebuild left."""
    index_root(sample_root, default_config())
    other = sample_root / ".rag" / "index.db.rebuild-999999999"  # (no such process here)
    proc = subprocess.Popen([sys.executable, "-c", OPEN_HOLDER, str(other)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "OPEN"
        index_root(sample_root, default_config())
        assert other.exists() and Path(f"{other}-wal").exists()
        out, _ = proc.communicate("go on\n", timeout=60)
    finally:
        proc.kill()
    assert out.split() == ["1"]
    index_root(sample_root, default_config())  # (its process gone, it is removed)
    assert sorted(p.name for p in (sample_root / ".rag").iterdir() if "rebuild" in p.name) == []


TEMP_HOLDER = r"""
import sys
from ragweb.files import _lock_first_byte
f = open(sys.argv[1], "w")
_lock_first_byte(f)
print("LOCKED", flush=True)
sys.stdin.readline()
"""


def test_an_outputs_temp_file_a_killed_pack_left_is_removed_by_the_next_run(sample_root):
    """`rag pack -o` killed while it wrote .rag/outputs left .outputs.PID.tmp for good; one
    that a writer the PID does not show (another container) holds locked is kept."""
    from ragweb.indexer import note_pack_output
    index_root(sample_root, default_config())
    rag = sample_root / ".rag"
    left = rag / ".outputs.999999999.tmp"  # (no such process here)
    left.write_text("a.json\n")
    index_root(sample_root, default_config())
    assert not left.exists()
    left.write_text("a.json\n")
    note_pack_output(sample_root, sample_root / "b.json")  # (the next `rag pack -o` too)
    assert not left.exists() and (rag / "outputs").read_text() == "b.json\n"
    proc = subprocess.Popen([sys.executable, "-c", TEMP_HOLDER, str(left)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "LOCKED"
        index_root(sample_root, default_config())
        assert left.exists()
        proc.communicate("go on\n", timeout=60)
    finally:
        proc.kill()
    index_root(sample_root, default_config())
    assert sorted(p.name for p in rag.iterdir()) == ["index.db", "outputs"]


def test_second_writer_waits_then_refuses(sample_root):
    index_root(sample_root, default_config())
    (sample_root / "README.md").write_text("changed\n" * 3)
    proc = _start_holder(sample_root)
    try:
        with pytest.raises(IndexBusyError, match="another process"):
            index_root(sample_root, default_config(), wait=0.5)
    finally:
        proc.kill()
        proc.wait()


def test_skipped_files_are_remembered_until_they_change(sample_root):
    from ragweb.indexer import scan_changes
    (sample_root / "blob.txt").write_bytes(b"\x00\x01binary" * 10)
    r = index_root(sample_root, default_config())
    assert r.binary == 1
    eng = Engine.open(index_path(sample_root))
    assert not scan_changes(eng, sample_root, default_config()).any   # not "new" on every query
    eng.close()
    r = index_root(sample_root, default_config())
    assert r.binary == 0 and r.added == 0
    (sample_root / "blob.txt").write_text("now it is text about walruses\n")
    r = index_root(sample_root, default_config())
    assert r.added == 1 and search_paths(sample_root, "walruses")[0][0] == "blob.txt"
    (sample_root / "blob.txt").write_bytes(b"\x00\x01binary again" * 10)
    r = index_root(sample_root, default_config())
    assert r.removed == 1 and r.binary == 1
    (sample_root / "blob.txt").unlink()
    index_root(sample_root, default_config())
    eng = Engine.open(index_path(sample_root))
    assert eng.skipped_states() == {}


def test_the_config_file_is_not_indexed(tmp_path):
    (tmp_path / "rag.yaml").write_text("pack:\n  synonyms:\n    - k8s kubernetes\n")
    (tmp_path / "deploy.yaml").write_text("cluster: k8s\n")
    (tmp_path / "ops.md").write_text("# Ops\n\nThe kubernetes cluster.\n")
    index_root(tmp_path, default_config())
    assert set(Engine.open(index_path(tmp_path)).stats()["files"]) == {"deploy.yaml", "ops.md"}


def test_the_config_files_are_not_indexed_when_the_user_sets_excludes(tmp_path):
    """A user's ``index.excludes`` replaces the defaults that list rag.yaml and .rag/; rag's
    own files stay out all the same, a nested root's too (`**/rag.yaml` in the defaults)."""
    from ragweb.config import load_config

    (tmp_path / "rag.yaml").write_text("index:\n  excludes: ['drafts/**']\n")
    (tmp_path / ".rag").mkdir()
    (tmp_path / ".rag" / "config.yaml").write_text("index: {}\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "rag.yaml").write_text("index: {}\n")
    (tmp_path / "sub" / ".rag").mkdir()
    (tmp_path / "sub" / ".rag" / "config.yaml").write_text("index: {}\n")
    (tmp_path / "ops.md").write_text("# Ops\n\nThe cluster.\n")
    cfg = load_config(tmp_path)[0]
    assert cfg["index"]["excludes"] == ["drafts/**"]
    cfg["index"]["includes"] += ["**/*.db"]
    index_root(tmp_path, cfg)
    assert set(Engine.open(index_path(tmp_path)).stats()["files"]) == {"ops.md"}


def _dump(root) -> list[str]:
    import sqlite3
    conn = sqlite3.connect(index_path(root))
    try:
        # (when the run was; which files were read, the two trees' own)
        return [line for line in conn.iterdump() if "'scanned_at'" not in line and 'INTO "idents"' not in line]
    finally:
        conn.close()


def _mixed_tree(root: Path) -> None:
    copy_sample(root)
    for i in range(12):
        (root / f"page{i}.html").write_text(
            f"<html><nav>Home | Next</nav><h1>Page {i}</h1>\n<p>Widget {i} retries the upload"
            f" {i} times.</p><pre>retry({i})</pre></html>\n" * 3)
        (root / f"notes{i}.md").write_text(f"# Notes {i}\n\nThe walrus{i} sleeps on the ice.\r\nLine two.\n")
    (root / "blob.txt").write_bytes(b"\x00\x01binary" * 10)
    (root / "huge.txt").write_text("word " * 3000)
    (root / "app.min.js").write_text("var a=1;" * 2000)
    (root / "search.js").write_text('Search.setIndex({"t": "' + "x1 " * 2500 + '"})')
    (root / "latin1.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e, a dessert".encode("latin-1"))
    _same_times(root, 1_700_000_000)


def _same_times(root: Path, when: int) -> None:
    for p in root.rglob("*"):
        if p.is_file() and ".rag" not in p.parts:
            os.utime(p, (when, when))  # (the index keeps mtimes: two trees compare equal)


def test_files_read_by_worker_processes_give_the_index_one_process_gives(tmp_path):
    """`index.workers`: the same database, byte for byte (term ids, chunk ids, skipped files),
    on a first run and on one that adds, changes, touches and deletes files."""
    one, many = tmp_path / "one", tmp_path / "many"
    _mixed_tree(one)
    _mixed_tree(many)
    cfg1, cfg3 = default_config(), default_config()
    cfg1["index"]["max_file_bytes"] = cfg3["index"]["max_file_bytes"] = 10_000
    cfg1["index"]["workers"], cfg3["index"]["workers"] = 1, 3
    r1, r3 = index_root(one, cfg1), index_root(many, cfg3)
    assert (r1.workers, r3.workers) == (1, 3)
    assert r1.summary().split(";")[:2] == r3.summary().split(";")[:2]
    assert r1.binary == r1.too_large == r1.minified == 1 and r1.added > 30
    assert _dump(one) == _dump(many)
    for root in (one, many):
        (root / "notes3.md").write_text("# Notes 3\n\nThe narwhal is new here.\n")
        (root / "page4.html").unlink()
        (root / "zebra.md").write_text("# Zebra\n\nStripes.\n")
        _same_times(root, 1_800_000_000)  # every file touched: the same content is not read again
    r1, r3 = index_root(one, cfg1), index_root(many, cfg3)
    assert r3.workers == 3 and (r1.added, r1.updated, r1.removed) == (r3.added, r3.updated, r3.removed) == (1, 1, 1)
    assert r1.unchanged == r3.unchanged > 30
    assert _dump(one) == _dump(many)
    assert search_paths(many, "narwhal")[0][0] == "notes3.md"


def test_worker_processes_only_for_a_big_job_unless_asked():
    cfg = default_config()
    assert cfg["index"]["workers"] == 0
    assert worker_count(cfg, PARALLEL_FILES - 1, 10 * PARALLEL_BYTES) == 1
    assert worker_count(cfg, 10 * PARALLEL_FILES, PARALLEL_BYTES - 1) == 1
    cfg["index"]["workers"] = 1
    assert worker_count(cfg, 1000, 10 * PARALLEL_BYTES) == 1
    cfg["index"]["workers"] = 3
    assert worker_count(cfg, 2, 10) == 1  # (one file each at most: not worth a pool)
    if sys.platform.startswith("linux"):
        assert worker_count(cfg, 10, 10) == 3


def test_a_worker_process_that_dies_stops_the_run_and_the_index_is_as_it_was(sample_root):
    import multiprocessing
    from ragweb.errors import RagError
    index_root(sample_root, default_config())
    before = search_paths(sample_root, "retry headers")
    for i in range(200):
        (sample_root / f"walrus{i}.md").write_text(f"# Walrus {i}\n\nThe walrus {i} sleeps on the ice.\n")
    cfg = default_config()
    cfg["index"]["workers"] = 2

    def progress(done, total, bytes_done, bytes_total):
        if done == 1:  # the first file is stored: kill a worker, as the OOM killer would
            os.kill(multiprocessing.active_children()[0].pid, signal.SIGKILL)

    with pytest.raises(RagError, match="a worker process reading files for the index stopped"):
        index_root(sample_root, cfg, progress=progress)
    assert multiprocessing.active_children() == []
    assert search_paths(sample_root, "retry headers") == before and search_paths(sample_root, "walrus") == []
    assert index_root(sample_root, cfg).added == 200 and search_paths(sample_root, "walrus")


WORKERS_HOLDER = r"""
import multiprocessing, sys, time
from ragweb.config import default_config
from ragweb.indexer import index_root
cfg = default_config()
cfg["index"]["workers"] = 2
def progress(done, total, nbytes, total_bytes):
    if done == 1:
        print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
        time.sleep(60)
index_root(sys.argv[1], cfg, progress=progress)
"""


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in "ZX"  # (a zombie has ended)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes are forked on Linux only")
def test_worker_processes_end_when_the_run_is_killed(sample_root):
    for i in range(300):
        (sample_root / f"walrus{i}.md").write_text(f"# Walrus {i}\n\nThe walrus {i} sleeps on the ice.\n")
    proc = subprocess.Popen([sys.executable, "-c", WORKERS_HOLDER, str(sample_root)], stdout=subprocess.PIPE,
                            text=True)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2 and all(map(_running, pids))
    proc.kill()  # as the OOM killer would: no clean-up runs in the main process
    proc.wait()
    deadline = time.monotonic() + 10
    while any(map(_running, pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in pids if _running(pid)]
    for pid in left:  # (so a failure leaves nothing running)
        os.kill(pid, signal.SIGKILL)
    assert not left


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_while_reading_a_file_stops_the_run_the_same_with_or_without_workers(
        tmp_path, monkeypatch, workers):
    """An exception inside a worker process travels back and is raised by the run, as it is
    in one process; nothing of the run is stored. (The failure is made in the standard
    library's zlib, which stores each HTML page's shown text, not in ragweb's code.)"""
    import multiprocessing
    import zlib
    root = tmp_path / "tree"
    _mixed_tree(root)
    cfg = default_config()
    cfg["index"]["workers"] = workers
    real = zlib.compress

    def compress(data, *args):
        if b"Page 7" in data:
            raise RuntimeError("the compressor broke on page 7")
        return real(data, *args)

    monkeypatch.setattr(zlib, "compress", compress)  # (workers are forked: they have it too)
    with pytest.raises(RuntimeError, match="the compressor broke on page 7"):
        index_root(root, cfg)
    assert multiprocessing.active_children() == []
    assert search_paths(root, "walrus3") == []
    monkeypatch.setattr(zlib, "compress", real)
    assert index_root(root, cfg).added > 30 and search_paths(root, "walrus3")[0][0] == "notes3.md"



@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="worker processes are forked on Linux only")
def test_a_worker_that_failed_after_answering_a_batch_reports_its_error_not_a_death(tmp_path, monkeypatch):
    """A worker that answered one batch and failed on the next had often ended by the time it
    was given another: that send failed, and the run said "a worker process ... stopped
    (killed, or out of memory?)" instead of the error (the test above failed 1 run in 3 on a
    busy machine). Here the run's consumer waits while the worker ends, so the send always
    comes after it. (The failure is made in the standard library's zlib, as above.)"""
    import zlib
    from ragweb import indexer
    from ragweb.files import FileEntry
    root = tmp_path / "tree"
    root.mkdir()
    entries = []
    for i in range(40):  # (batches of 4: the 2 workers are given batches 0, 1 and 2, 3)
        path = root / f"p{i:02}.html"
        path.write_text(f"<html><h1>Page {i}</h1><p>Walrus {i} sleeps on the ice.</p></html>\n")
        entries.append(FileEntry(path.name, str(path), path.stat().st_size, path.stat().st_mtime))
    real = zlib.compress

    def compress(data, *args):
        if b"Page 13" in data:  # (batch 3: the second worker's second batch)
            raise RuntimeError("the compressor broke on page 13")
        return real(data, *args)

    monkeypatch.setattr(zlib, "compress", compress)
    engine = Engine.memory(default_config())
    with pytest.raises(RuntimeError, match="page 13"):
        with indexer._prepared(entries, {}, engine, 1_000_000, 2) as outcomes:
            for n, _ in enumerate(outcomes, 1):
                if n == 4:  # (batch 0 is in: the second worker has answered batch 2 and
                    time.sleep(1.0)  # failed on batch 3 meanwhile)


def test_a_file_or_folder_that_cannot_be_read_this_time_keeps_what_was_indexed(sample_root, monkeypatch):
    # (as root, permissions do not stop a read: the refusal is made in the os module)
    index_root(sample_root, default_config())
    before = search_paths(sample_root, "retry headers")
    guide = str(sample_root / "docs" / "configuration.md")
    real_access, real_scandir = os.access, os.scandir
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == guide else real_access(p, mode, **kw))

    def scandir(path="."):
        if str(path).endswith("pigeonpost"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)
    monkeypatch.setattr(os, "scandir", scandir)
    r = index_root(sample_root, default_config())
    assert r.removed == 0 and len(r.problems) == 2
    assert search_paths(sample_root, "retry headers") == before  # nothing lost
    monkeypatch.undo()
    (sample_root / "docs" / "configuration.md").write_text("# Configuration\nNow about walruses.\n")
    r = index_root(sample_root, default_config())  # readable again: read again
    assert r.updated == 1 and search_paths(sample_root, "walruses")[0][0] == "docs/configuration.md"


def test_a_file_deleted_while_the_run_reads_the_others_is_removed_not_kept(tmp_path):
    """A file the walk listed that is gone when its turn to be read comes (deleted, its folder
    deleted, or the folder replaced by a file) is removed, as the next run would remove it:
    it kept its old text, cited by every query until then, with an "unreadable" warning. A
    link whose target went meanwhile is a broken link, and what was indexed of it stays."""
    root, outside = tmp_path / "tree", tmp_path / "outside.md"
    outside.write_text("# Outside\nThe okapi lives outside.\n")
    root.mkdir()
    (root / "sub").mkdir()
    (root / "link.md").symlink_to(outside)
    (root / "z.bin").write_bytes(b"\x00binary" * 10)

    def write(version: str) -> None:
        for name in ("a.md", "b.md", "sub/c.md"):
            (root / name).write_text(f"# {name}\nThe walrus{version} text of {name}.\n")
    write("one")
    cfg = default_config()
    assert index_root(root, cfg).added == 4
    write("twotwo")  # (all changed: the run reads each again, a.md first)
    outside.write_text("# Outside\nThe okapi lives outside, still.\n")
    (root / "z.bin").write_bytes(b"\x00binary again" * 10)

    def progress(done, total, bytes_done, bytes_total):
        if done == 1:  # a.md is stored; the others go before they are read
            (root / "b.md").unlink()
            (root / "sub" / "c.md").unlink()
            (root / "sub").rmdir()
            (root / "sub").write_text("now a file\n")  # (sub/c.md: "not a directory")
            (root / "z.bin").unlink()
            outside.unlink()

    r = index_root(root, cfg, progress=progress)
    assert (r.updated, r.removed) == (1, 2) and r.problems == [("link.md", "unreadable: broken symlink")]
    assert [p for p, *_ in search_paths(root, "walrustwotwo")] == ["a.md"]
    assert search_paths(root, "walrusone") == []
    assert [p for p, *_ in search_paths(root, "okapi")] == ["link.md"]  # (kept: its target may come back)
    eng = Engine.open(index_path(root))
    assert eng.skipped_states() == {}  # (z.bin's row went with it)
    eng.close()
    outside.write_text("# Outside\nThe okapi is back.\n")
    r = index_root(root, cfg)
    assert (r.updated, r.removed) == (1, 0) and r.problems == []  # (link.md, read again)


def _same_time(path, when=1_600_000_000):
    os.utime(path, (when, when))


def test_a_file_kept_while_its_link_was_broken_is_compared_when_it_is_back(tmp_path):
    """A folder linked to one version of a tree whose files all carry one time (a Nix store):
    the link broken for one run, then pointed at the next version, whose file changed at the
    same size, kept the old text for good (the run that kept it dropped its identity, so the
    next took it as the file it had read)."""
    root, store = tmp_path / "mydocs", tmp_path / "store"
    root.mkdir()
    (store / "v1").mkdir(parents=True)
    (store / "v1" / "install.md").write_text("# Install\nRequires version 1.2.3 of libfoo.\n")
    _same_time(store / "v1" / "install.md")
    (root / "pkg").symlink_to(store / "v1")
    cfg = default_config()
    assert index_root(root, cfg).added == 1
    (store / "v1" / "install.md").unlink()  # (the old version collected before the new one is linked)
    (store / "v1").rmdir()
    r = index_root(root, cfg)  # (the link is broken: what was indexed through it stays)
    assert r.problems == [("pkg", "unreadable: broken symlink")] and _texts(root)["pkg/install.md"].endswith("1.2.3 of libfoo.\n")
    (store / "v2").mkdir()
    (store / "v2" / "install.md").write_text("# Install\nRequires version 1.2.4 of libfoo.\n")
    _same_time(store / "v2" / "install.md")
    (root / "pkg").unlink()
    (root / "pkg").symlink_to(store / "v2")
    r = index_root(root, cfg)
    assert r.updated == 1 and "1.2.4" in _texts(root)["pkg/install.md"]
    assert index_root(root, cfg).updated == 0  # (read: its identity is recorded again)


def test_a_file_that_was_a_broken_link_for_a_run_is_compared_when_it_is_back(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("the quick alpha fox\n")
    _same_time(root / "a.md")
    cfg = default_config()
    index_root(root, cfg)
    (root / "a.md").unlink()
    (root / "a.md").symlink_to(root / "gone.md")
    assert index_root(root, cfg).problems == [("a.md", "unreadable: broken symlink")]
    (root / "a.md").unlink()
    (root / "a.md").write_text("the quick bravo fox\n")  # (the same size and time)
    _same_time(root / "a.md")
    assert index_root(root, cfg).updated == 1
    assert [p for p, *_ in search_paths(root, "bravo")] == ["a.md"] and search_paths(root, "alpha") == []


def _rebuild_with(root, how: str, cfg: dict):
    """Run `rag index` so that it rebuilds the index: new analysis settings in the config, an
    index an older version built, or ``--rebuild``. Returns (its report, the config now)."""
    if how == "settings":
        cfg = {**cfg, "index": {**cfg["index"], "chunk_tokens": 300}}
    elif how == "older version":
        eng = Engine.open(index_path(root))
        eng._set_meta("analysis", {**eng.settings, "markup": 1})
        eng.conn.commit()
        eng.close()
    return index_root(root, cfg, rebuild=how == "--rebuild"), cfg


@pytest.mark.parametrize("how", ["settings", "older version", "--rebuild"])
def test_a_rebuild_keeps_what_was_indexed_under_a_folder_link_broken_this_run(tmp_path, how):
    """A run that rebuilds the index (new analysis settings, an older version's index,
    ``--rebuild``) emptied it before its walk, so the files under a folder link whose target
    was gone that run (a share, a drive not mounted) were gone from the index until a run
    could read them again, where an incremental run keeps them. Now they are indexed again
    from their stored text, and once the link works the index is the one a fresh run makes."""
    root, share = tmp_path / "docs", tmp_path / "share"
    for folder in (root, share):
        folder.mkdir()
    (root / "alpha.md").write_text("# Alpha\nThe walrus sleeps.\n")
    (root / "zulu.md").write_text("# Zulu\nThe narwhal swims.\n")  # (after the link's files in the walk)
    (share / "okapi.md").write_text("# Okapi\nThe okapi lives in the forest.\n")
    (share / "page.html").write_text("<html><nav>Home</nav><h1>Quagga</h1><p>The quagga grazes.</p></html>\n")
    (share / "blob.bin.txt").write_bytes(b"\x00binary" * 10)
    for path in [*root.iterdir(), *share.iterdir()]:
        _same_time(path)
    (root / "pkg").symlink_to(share)
    cfg = default_config()
    assert index_root(root, cfg).added == 4
    share.rename(tmp_path / "away")
    r, cfg = _rebuild_with(root, how, cfg)
    assert r.rebuilt and r.problems == [("pkg", "unreadable: broken symlink")] and (r.added, r.kept) == (2, 3)
    assert "1 unreadable, 3 kept from the index (unreadable now);" in r.summary()
    assert [p for p, *_ in search_paths(root, "okapi")] == ["pkg/okapi.md"]
    assert [p for p, *_ in search_paths(root, "quagga")] == ["pkg/page.html"]
    (tmp_path / "away").rename(share)
    r = index_root(root, cfg)
    assert (r.added, r.updated, r.removed, r.kept, r.problems) == (0, 0, 0, 0, [])
    kept = sorted(_dump(root))  # (a run rewrites the meta rows it records: their order is not the first run's)
    assert index_root(root, cfg, rebuild=True).added == 4 and sorted(_dump(root)) == kept


def test_a_rebuild_reads_the_text_of_a_file_it_keeps_only_when_it_indexes_it(tmp_path):
    """(A structural test: memory is not measured in tests.) What a rebuild keeps of the files
    under a folder it cannot read this run is their paths and states; each one's text is read
    from the old index when its turn comes. All their texts were read at the run's start: a
    share of gigabytes not mounted during an upgrade's rebuild took as much memory."""
    import sqlite3
    from ragweb.indexer import IndexReport, _held_by, _index_held
    root, share = tmp_path / "docs", tmp_path / "share"
    for folder in (root, share):
        folder.mkdir()
    (share / "okapi.md").write_text("# Okapi\nThe okapi lives in the forest.\n")
    (share / "blob.bin.txt").write_bytes(b"\x00binary" * 10)
    (root / "pkg").symlink_to(share)
    cfg = default_config()
    index_root(root, cfg)
    paths, text = ["pkg/blob.bin.txt", "pkg/okapi.md"], "# Okapi\nThe okapi lives in the forest.\n"
    conn = sqlite3.connect(index_path(root))
    try:
        held = _held_by(conn, paths)
        assert "pkg/okapi.md" in repr(held) and "okapi lives" not in repr(held)
        engine, report = Engine.memory(cfg), IndexReport()
        _index_held(engine, held, None, report)
        assert report.kept == 2 and engine.file_text("pkg/okapi.md") == text
        assert list(engine.skipped_states()) == ["pkg/blob.bin.txt"]
        # (where the old index cannot be read after the run empties it, not in WAL mode: read now)
        held = _held_by(conn, paths, texts=True)
    finally:
        conn.close()
    engine, report = Engine.memory(cfg), IndexReport()
    _index_held(engine, held, None, report)
    assert report.kept == 2 and engine.file_text("pkg/okapi.md") == text


@pytest.mark.parametrize("config_text", ['index:\n  excludes: ["pkg/"]\n', 'index:\n  excludes: ["p*/"]\n',
                                         'index:\n  includes: ["**/*.txt"]\n'])
def test_files_under_a_broken_link_that_the_config_now_leaves_out_are_removed(tmp_path, config_text):
    """What was indexed through a folder link is kept while the link is broken, but not once
    rag.yaml excludes the folder (or stops including its files): it stayed, and a user who
    excluded a folder to get its text out of the index still found it."""
    from ragweb.config import load_config
    ext, root = tmp_path / "ext", tmp_path / "docs"
    ext.mkdir()
    root.mkdir()
    (ext / "plan.md").write_text("secret plan zebra\n")
    (root / "readme.txt").write_text("hello world\n")
    (root / "pkg").symlink_to(ext)
    index_root(root, default_config())
    (ext / "plan.md").unlink()
    ext.rmdir()
    (root / "rag.yaml").write_text(config_text)
    r = index_root(root, load_config(root)[0])
    assert r.removed == 1 and search_paths(root, "zebra") == []
    assert "pkg/plan.md" not in _texts(root)


def test_a_file_away_only_while_an_editor_saves_it_is_not_removed(tmp_path):
    """A file gone when read but back by the run's end (an editor that saves by renaming the
    file away and writing it anew) keeps what the index holds of it, and the next run reads
    it: it was removed, and missing from every query until the next run."""
    root = tmp_path / "tree"
    root.mkdir()
    pages = {"a.md": "apples grow on trees", "b.md": "boats float on water", "c.md": "cats sleep all day"}
    for name, words in pages.items():
        (root / name).write_text(f"# {name}\nThe walrusone text: {words}.\n")
    cfg = default_config()
    assert index_root(root, cfg).added == 3
    for name, words in pages.items():
        (root / name).write_text(f"# {name}\nThe walrustwo text: {words}.\n")

    def progress(done, total, bytes_done, bytes_total):
        if done == 1:  # a.md is stored; b.md is away when its turn comes ...
            (root / "b.md").rename(root / "b.md~")
        if done == total:  # ... and saved anew before the run ends
            (root / "b.md~").rename(root / "b.md")

    r = index_root(root, cfg, progress=progress)
    assert (r.updated, r.removed, r.problems) == (2, 0, [])
    assert [p for p, *_ in search_paths(root, "walrusone")] == ["b.md"]  # (its old text, kept)
    r = index_root(root, cfg)
    assert (r.updated, r.removed) == (1, 0)
    assert sorted(p for p, *_ in search_paths(root, "walrustwo")) == ["a.md", "b.md", "c.md"]


def _indexed_pages(tmp_path, n: int, words: int):
    """A folder ``docs`` of ``n`` pages of ``words`` words each, indexed: (root, config, index file)."""
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(n):
        (root / f"f{i}.md").write_text(f"# Page {i}\n\n" + " ".join(f"word{i}x{j}" for j in range(words)) + "\n")
    cfg = default_config()
    index_root(root, cfg)
    return root, cfg, index_path(root)


def test_a_run_beside_an_open_reader_leaves_sqlites_log_empty(tmp_path):
    root, cfg, db = _indexed_pages(tmp_path, 60, 300)
    wal = db.with_name(db.name + "-wal")
    reader = Engine.open(db, cfg, create=False)  # (a `rag pack --batch` between two questions)
    try:
        for run in range(3):
            for i in range(0, 60, 2):
                (root / f"f{i}.md").write_text(f"# Page {i}\n\n" + " ".join(f"new{run}w{i}x{j}" for j in range(300)) + "\n")
            assert index_root(root, cfg).updated == 30
            # (SQLite starts its log over only when no reader is in it: it grew with each run)
            assert wal.stat().st_size == 0, wal.stat().st_size
            assert reader.search(f"new{run}w4x7")[0].path == "f4.md"
    finally:
        reader.close()


def test_a_run_that_frees_most_of_the_index_gives_the_space_back(tmp_path):
    root, cfg, db = _indexed_pages(tmp_path, 120, 400)
    full = db.stat().st_size
    for i in range(10, 120):
        (root / f"f{i}.md").unlink()
    report = index_root(root, cfg)
    assert report.removed == 110
    assert db.stat().st_size < full / 4  # (SQLite keeps freed pages in the file until a VACUUM)
    eng = Engine.open(db, cfg, create=False)
    assert eng.search("word3x7")[0].path == "f3.md" and eng.stats()["totalDocs"] == 10
    eng.close()


def _fill(folder: Path, n: int, seed: int) -> None:
    import random
    rng = random.Random(seed)
    for i in range(n):
        (folder / f"n{i}.md").write_text(" ".join(f"w{rng.randrange(10**6):06d}" for _ in range(400)) + "\n")


@pytest.mark.parametrize("rebuild", [False, True])
def test_a_run_that_runs_out_of_disk_says_so_and_leaves_the_index_answering(tmp_path, rebuild):
    # the disk is made "full" for the run by a file-size limit (SQLite's write fails with EFBIG)
    import resource
    for i in range(30):
        (tmp_path / f"d{i}.md").write_text(f"# Doc {i}\n\nretry backoff words {i}\n")
    assert index_root(tmp_path, default_config()).added == 30
    db = index_path(tmp_path)

    def answers():
        eng = Engine.open(db, create=False)
        try:
            return [(h.path, h.score) for h in eng.search("retry backoff")]
        finally:
            eng.close()

    before = answers()
    _fill(tmp_path, 300, seed=1)
    room = db.stat().st_size + 200_000

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (room, room))

    r = subprocess.run([sys.executable, "-m", "ragweb", "index", tmp_path, *(["--rebuild"] if rebuild else [])],
                       preexec_fn=small_disk, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr.startswith("Error: the disk "), r.stderr
    assert "the index is as it was" in r.stderr and "damaged" not in r.stderr and "Traceback" not in r.stderr
    assert sorted(p.name for p in db.parent.iterdir()) == ["index.db"]  # (no rebuild file left taking the space)
    assert answers() == before


def test_a_rebuilt_file_whose_log_cannot_be_folded_in_is_not_moved_into_place(tmp_path):
    # SQLite closes without a word when it cannot copy its WAL into the file (a full disk):
    # moved into place without its WAL, a rebuilt index was half an index. Here a reader's
    # snapshot keeps the log from being folded in.
    import sqlite3
    from ragweb.errors import RagError
    from ragweb.indexer import _fold_wal
    path = tmp_path / "index.db.rebuild-1"
    eng = Engine.open(path)
    with eng.transaction():
        eng.add_document("a.md", "zebra okapi\n")
    reader = sqlite3.connect(path)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM chunks").fetchone()
    eng.close()
    assert (tmp_path / "index.db.rebuild-1-wal").exists()
    with pytest.raises(RagError, match="could not be written whole"):
        _fold_wal(path)
    reader.close()
    _fold_wal(path)
    assert not (tmp_path / "index.db.rebuild-1-wal").exists()
    assert [h.path for h in Engine.open(path, create=False).search("zebra")] == ["a.md"]


def _texts(root):
    engine = Engine.open(index_path(root), create=False)
    try:
        return {p: engine.file_text(p) for p in engine.stats()["files"]}
    finally:
        engine.close()


def test_a_file_of_the_same_time_and_size_that_is_another_file_is_read_again(tmp_path):
    # Time and size alone called these unchanged, and queries cited the old text: two files
    # of one time and size swapped (a tar or `cp -p` tree), and a link moved to another
    # version of a reproducible build's docs (every file's time fixed, as Nix's store does)
    from ragweb.indexer import scan_changes
    root = tmp_path / "root"
    store = tmp_path / "store"
    for version, word in (("1.2.3", "fast"), ("1.2.4", "slow")):
        (store / version).mkdir(parents=True)
        (store / version / "install.md").write_text(f"# Install\n\nVersion {version}: run setup --{word}.\n")
        os.utime(store / version / "install.md", (1, 1))
    root.mkdir()
    (root / "a.md").write_text("# Alpha\n\nThe alpha page talks about zebras.\n")
    (root / "b.md").write_text("# Bravo\n\nThe bravo page talks about walrus.\n")
    for name in ("a.md", "b.md"):
        os.utime(root / name, (1_700_000_000, 1_700_000_000))
    (root / "docs").symlink_to(store / "1.2.3")
    config = default_config()
    index_root(root, config)
    (root / "a.md").rename(root / "t")
    (root / "b.md").rename(root / "a.md")
    (root / "t").rename(root / "b.md")
    (root / "docs").unlink()
    (root / "docs").symlink_to(store / "1.2.4")
    engine = Engine.open(index_path(root), create=False)
    try:  # (not a query's scan, which would read every file after a `chmod -R`, each query)
        assert scan_changes(engine, root, config).changed == []
        assert sorted(e.path for e in scan_changes(engine, root, config, decoding=True).changed) == [
            "a.md", "b.md", "docs/install.md"]
    finally:
        engine.close()
    report = index_root(root, config)
    assert report.updated == 3 and report.unchanged == 0
    texts = _texts(root)
    assert "walrus" in texts["a.md"] and "zebras" in texts["b.md"] and "--slow" in texts["docs/install.md"]
    assert index_root(root, config).unchanged == 3  # (recorded: the next run trusts time and size again)

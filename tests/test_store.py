import re
import sqlite3

import pytest

from ragweb import store
from ragweb.engine import Engine
from ragweb.errors import IndexBusyError, IndexCorruptError


def test_blob_round_trip_is_little_endian():
    blob = store.ints_to_blob([1, 2, 70000])
    assert blob == (1).to_bytes(4, "little") + (2).to_bytes(4, "little") + (70000).to_bytes(4, "little")
    assert list(store.blob_to_ints(blob)) == [1, 2, 70000]


def test_new_file_gets_schema_version_and_marker(tmp_path):
    conn = store.open_file(tmp_path / "i.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == store.FORMAT_VERSION
    assert conn.execute("PRAGMA application_id").fetchone()[0] == store.APPLICATION_ID
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_foreign_sqlite_file_is_refused(tmp_path):
    other = sqlite3.connect(tmp_path / "other.db")
    other.execute("CREATE TABLE t(x)")
    other.commit()
    other.close()
    with pytest.raises(IndexCorruptError, match="not a ragweb index"):
        store.open_file(tmp_path / "other.db")


def test_not_a_database_is_refused(tmp_path):
    (tmp_path / "junk.db").write_bytes(b"hello" * 1000)
    with pytest.raises(IndexCorruptError, match="--rebuild"):
        store.open_file(tmp_path / "junk.db")


def test_missing_file_without_create(tmp_path):
    with pytest.raises(IndexCorruptError):
        store.open_file(tmp_path / "none.db", create=False)


def test_memory_round_trip():
    conn = store.open_memory()
    data = conn.serialize()
    again = store.open_memory(data)
    assert again.execute("PRAGMA user_version").fetchone()[0] == store.FORMAT_VERSION


def _locked_by_another(path):
    """An index at ``path`` holding "hello", and a connection holding its exclusive lock."""
    eng = Engine.open(path)
    eng.add_document("a.md", "hello")
    with eng.transaction():
        pass
    eng.close()
    other = sqlite3.connect(path, check_same_thread=False)
    other.execute("PRAGMA locking_mode=EXCLUSIVE")
    other.execute("BEGIN EXCLUSIVE")
    other.execute("INSERT INTO meta VALUES('x', '1')")
    return other


def test_an_index_locked_by_another_process_is_busy_not_damaged(tmp_path):
    # (once seen when two `rag index` runs met: "not a readable index (database is locked);
    # rebuild it", advice that would throw the index away)
    path = tmp_path / "index.db"
    other = _locked_by_another(path)
    with pytest.raises(IndexBusyError, match="being written by another rag process"):
        store.open_file(path, create=False, timeout=0.2)
    other.rollback()
    other.close()
    assert Engine.open(path, create=False).search("hello")


def test_a_reader_waits_for_a_lock_held_a_moment_instead_of_failing(tmp_path):
    # (a run's connection locks the file for a moment as it opens or closes the WAL: `rag
    # query` beside back-to-back `rag index` runs failed one open in five)
    import threading
    path = tmp_path / "index.db"
    other = _locked_by_another(path)
    release = threading.Timer(0.5, lambda: (other.rollback(), other.close()))
    release.start()
    try:
        reader = Engine.open(path, create=False)  # (as `rag query` opens it)
        assert [h.path for h in reader.search("hello")] == ["a.md"]
    finally:
        release.join()


def test_a_new_index_created_by_another_run_meanwhile_is_opened_not_called_damaged(tmp_path):
    # (two `rag index` runs started at once in a folder never indexed: the second saw an
    # empty file, then failed to create the tables the first had just made: "cannot open
    # ...: table meta already exists; rebuild it with `rag index --rebuild`")
    import threading
    path = tmp_path / "index.db"
    first = sqlite3.connect(path, isolation_level=None, check_same_thread=False)  # (the first run, making the schema)
    first.execute("PRAGMA journal_mode=WAL")
    first.execute("BEGIN IMMEDIATE")
    for statement in store.SCHEMA.split(";"):
        if statement.strip():
            first.execute(statement)
    first.execute(f"PRAGMA user_version={store.FORMAT_VERSION}")
    first.execute(f"PRAGMA application_id={store.APPLICATION_ID}")
    first.execute("INSERT INTO meta VALUES('format', '1'), ('marker', '\"first\"')")
    done = threading.Timer(0.5, lambda: (first.execute("COMMIT"), first.close()))
    done.start()
    try:
        conn = store.open_file(path)  # (the second run: the file is empty until the first commits)
    finally:
        done.join()
    assert conn.execute("SELECT value FROM meta WHERE key = 'marker'").fetchone() == ('"first"',)
    assert store.check_format(conn, str(path), deep=True)


def test_temporary_files_are_kept_in_memory(tmp_path):
    """SQLite's statement journals and sorts do not go to $TMPDIR, whose being full failed
    `rag index` as "the disk is full" (test_cli runs that on a full tmpfs, as root)."""
    for conn in (store.open_file(tmp_path / "i.db"), store.open_memory()):
        assert conn.execute("PRAGMA temp_store").fetchone()[0] == 2  # MEMORY


def test_an_index_of_an_early_version_without_a_table_is_named_so(tmp_path):
    # (`skipped` came without a new format version: such an index was "damaged (no such
    # table: skipped)" in the CLI, and an "internal error: OperationalError" on the page)
    for eng in (Engine.open(tmp_path / "index.db"), Engine.memory()):  # (the CLI's, the page's)
        eng.add_document("a.md", "# A\n\nretry with backoff\n")
        eng.flush()
        eng.conn.execute("DROP TABLE skipped")
    data = eng.to_bytes()
    says = "was written by an early version of ragweb (it has no 'skipped' table); rebuild it"
    with pytest.raises(IndexCorruptError, match=re.escape(says)):
        Engine.open(tmp_path / "index.db")
    with pytest.raises(IndexCorruptError, match=re.escape(says)):
        Engine.from_bytes(data)


def test_an_index_of_a_newer_format_says_a_newer_ragweb_made_it(tmp_path):
    # (it only said "rebuild it", which throws away what the newer ragweb indexed, when
    # upgrading this one reads it); the remedy follows the cause after "; ", for the page's own
    conn = store.open_file(tmp_path / "index.db")
    conn.execute(f"PRAGMA user_version={store.FORMAT_VERSION + 1}")
    conn.close()
    with pytest.raises(IndexCorruptError) as e:
        store.open_file(tmp_path / "index.db", create=False)
    cause, remedy = str(e.value).split("; ")
    assert cause == (f"{tmp_path / 'index.db'} was made by a newer version of ragweb (index format version "
                     f"{store.FORMAT_VERSION + 1}, this one reads version {store.FORMAT_VERSION})")
    assert remedy == "upgrade ragweb to read it, or rebuild it with `rag index --rebuild` to replace it"

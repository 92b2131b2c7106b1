"""The SQLite store: schema, format version, opening, (de)serialising.

The same schema is used natively (a file, ``.rag/index.db``) and in the browser (an
in-memory database whose bytes are kept in IndexedDB). See DESIGN.md for the tables.
Posting blobs are little-endian int32 triples ``(chunk_id, tf, chunk_len)``.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import sys
import zlib
from array import array
from pathlib import Path

from ragweb.errors import IndexBusyError, IndexCorruptError, IndexReadOnlyError, RagError

FORMAT_VERSION = 1
APPLICATION_ID = 0x52414757  # "RAGW": marks the database file as ours

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    mtime REAL NOT NULL,
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE TABLE chunks(
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    col_start INTEGER,
    col_end INTEGER,
    char_start INTEGER NOT NULL,
    char_end INTEGER NOT NULL,
    heading TEXT NOT NULL,
    len INTEGER NOT NULL,
    terms BLOB NOT NULL
);
CREATE INDEX chunks_file ON chunks(file_id);
CREATE TABLE terms(id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, df INTEGER NOT NULL);
CREATE TABLE postings(
    term INTEGER NOT NULL,
    seg INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY(term, seg)
) WITHOUT ROWID;
CREATE TABLE dead(chunk INTEGER PRIMARY KEY);
CREATE TABLE skipped(path TEXT PRIMARY KEY, mtime REAL NOT NULL, size INTEGER NOT NULL, reason TEXT NOT NULL);
"""

TABLES = tuple(re.findall(r"CREATE TABLE (\w+)", SCHEMA))
"""The tables every index of `FORMAT_VERSION` holds."""

# An HTML page's shown text (`ragweb.markup.show_html`), kept so that showing a hit does not
# read the whole page again: zlib-compressed UTF-8 (about an eighth of the page's size),
# with the sha256 of the text it was made from. Created when first written, so the format
# is unchanged (an index without it shows pages as before, by reading them).
SHOWN_TABLE = "CREATE TABLE IF NOT EXISTS shown(file INTEGER PRIMARY KEY, sha256 TEXT NOT NULL, data BLOB NOT NULL)"

# Postings by segment, for merging the newest segments without reading the others. Created
# when first merged that way, so the format is unchanged (an index without it is read as before).
POSTINGS_BY_SEGMENT = "CREATE INDEX IF NOT EXISTS postings_seg ON postings(seg)"

# Which file each indexed path was read from, as `rag index` last saw it ("inode:ctime_ns"):
# a file of the same modification time and size is another file when this differs (a link
# pointed elsewhere, two files swapped, a tree whose files all carry one fixed time), and its
# text is compared. Created when first written, so the format is unchanged (an index without
# it trusts time and size, as before).
IDENTS_TABLE = "CREATE TABLE IF NOT EXISTS idents(path TEXT PRIMARY KEY, ident TEXT NOT NULL) WITHOUT ROWID"

_SWAP = sys.byteorder != "little"


def array_to_blob(arr: array) -> bytes:
    """An array's values as little-endian bytes (the stored form on every machine)."""
    if _SWAP:
        arr = array(arr.typecode, arr)
        arr.byteswap()
    return arr.tobytes()


def blob_to_array(typecode: str, blob: bytes) -> array:
    """The array of ``typecode`` values stored little-endian in ``blob``."""
    arr = array(typecode)
    arr.frombytes(blob)
    if _SWAP:
        arr.byteswap()
    return arr


def ints_to_blob(values) -> bytes:
    """Pack ints as little-endian int32."""
    return array_to_blob(array("i", values))


def blob_to_ints(blob: bytes) -> array:
    """Unpack a little-endian int32 blob."""
    return blob_to_array("i", blob)


def pack_shown(shown: str) -> bytes:
    """A page's shown text as `put_shown` keeps it (compressed; made where the page is read,
    which may be another process, `ragweb.ingest`)."""
    return zlib.compress(shown.encode("utf-8", "surrogatepass"), 1)


def put_shown(conn: sqlite3.Connection, file_id: int, sha256: str, packed: bytes) -> None:
    """Keep a page's shown text (`SHOWN_TABLE`), as `pack_shown` made it."""
    conn.execute(SHOWN_TABLE)
    conn.execute("INSERT OR REPLACE INTO shown VALUES(?, ?, ?)", (file_id, sha256, packed))


def get_shown(conn: sqlite3.Connection, file_id: int) -> str | None:
    """A page's kept shown text, or None when there is none for the file's current text
    (never kept, the table absent, or kept for other text: a file of the same id since)."""
    try:
        row = conn.execute("SELECT s.data, length(f.text) FROM shown s JOIN files f ON f.id = s.file "
                           "WHERE s.file = ? AND s.sha256 = f.sha256", (file_id,)).fetchone()
    except sqlite3.OperationalError:  # no such table
        return None
    if row is None:
        return None
    try:
        shown = zlib.decompress(row[0]).decode("utf-8", "surrogatepass")
    except (zlib.error, UnicodeDecodeError):
        return None
    return shown if len(shown) == row[1] else None  # (SQLite's length stops at a NUL: then read again)


def drop_shown(conn: sqlite3.Connection, file_id: int | None = None) -> None:
    """Forget a file's kept shown text (every file's when ``file_id`` is None)."""
    if file_id is None:
        conn.execute("DROP TABLE IF EXISTS shown")
        return
    try:
        conn.execute("DELETE FROM shown WHERE file = ?", (file_id,))
    except sqlite3.OperationalError:  # no such table
        pass


def _configure(conn: sqlite3.Connection) -> sqlite3.Connection:
    conn.isolation_level = None  # explicit BEGIN/COMMIT only
    conn.execute("PRAGMA foreign_keys=OFF")
    # SQLite's temporary files (a statement's journal, a sort's overflow) in memory, not in
    # $TMPDIR: a full /tmp failed a run as "the disk is full" though the index's disk had room.
    # A --rebuild of 53 MB of files peaks at the same 156 MB either way (a VACUUM's copy of the
    # whole index still goes to a file: `indexer._give_back_free_pages`)
    conn.execute("PRAGMA temp_store=MEMORY")
    return conn


_SCHEMA_AND_STAMP = (f"{SCHEMA} PRAGMA user_version={FORMAT_VERSION}; PRAGMA application_id={APPLICATION_ID}; "
                     f"INSERT INTO meta VALUES('format', '{FORMAT_VERSION}');")


def create_schema(conn: sqlite3.Connection) -> None:
    """Create the tables in an empty database and stamp the format version."""
    conn.executescript(f"BEGIN; {_SCHEMA_AND_STAMP} COMMIT;")


def _create_schema_once(conn: sqlite3.Connection, where: str) -> None:
    """Create the tables in an index file that was empty when looked at, unless another
    process made them meanwhile (two `rag index` runs started at once in a folder never
    indexed: the second failed with "table meta already exists", called a damaged index).
    The write lock is taken, waiting for the other's, before the file is looked at again."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not check_format(conn, where):
            for statement in _SCHEMA_AND_STAMP.split(";"):
                if statement.strip():
                    conn.execute(statement)
        conn.execute("COMMIT")
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")


def check_format(conn: sqlite3.Connection, where: str, deep: bool = False) -> bool:
    """True if the database holds our schema, False if it is empty; raises if foreign/unknown.

    ``deep`` also runs SQLite's quick_check, which reads every page (about 1 ms a MB): used on
    restored bytes, and by `rag index` before it writes (`open_file`), since a run that
    changes nothing reaches no postings and ended as a success on a damaged index; not on a
    query's open, where a damaged page is reported when the query reaches it.
    """
    try:
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        (app,) = conn.execute("PRAGMA application_id").fetchone()
        (ntables,) = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as e:
        raise _unreadable(e, where, "is not a readable index") from e
    if ntables == 0 and version == 0:
        return False
    if app != APPLICATION_ID:
        raise IndexCorruptError(f"{where} is not a ragweb index; rebuild it with `rag index --rebuild`")
    if version > FORMAT_VERSION:  # (the cause, then after "; " the remedy: the page gives its own)
        raise IndexCorruptError(
            f"{where} was made by a newer version of ragweb (index format version {version}, this one "
            f"reads version {FORMAT_VERSION}); upgrade ragweb to read it, or rebuild it with "
            "`rag index --rebuild` to replace it")
    if version != FORMAT_VERSION:
        raise IndexCorruptError(
            f"{where} has index format version {version}, this ragweb reads version "
            f"{FORMAT_VERSION}; rebuild it with `rag index --rebuild`"
        )
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if missing := sorted(set(TABLES) - tables):
        # (`skipped` came without a new format version: an index of the versions before it)
        raise IndexCorruptError(f"{where} was written by an early version of ragweb (it has no "
                                f"{missing[0]!r} table); rebuild it with `rag index --rebuild`")
    if not deep:
        return True
    try:
        (result,) = conn.execute("PRAGMA quick_check(1)").fetchone()
    except sqlite3.DatabaseError as e:
        raise _unreadable(e, where, "is damaged") from e
    if result != "ok":
        # ("*** in database main ***\nPage 5: btreeInitPage() returns error code 11": its problem)
        problem = [line for line in result.splitlines() if not line.startswith("***")] or [result]
        raise IndexCorruptError(f"{where} is damaged ({problem[0]}); rebuild it with `rag index --rebuild`")
    return True


def _unreadable(e: sqlite3.DatabaseError, where: str, says: str) -> RagError:
    """The error for a SQLite error met reading the index at ``where``: busy (another process
    holds it) or the storage's fault (`storage_problem`), neither of which a rebuild would
    mend, else the index's own damage (``says`` what it is)."""
    if isinstance(e, sqlite3.OperationalError) and ("locked" in str(e) or "busy" in str(e)):
        return IndexBusyError(f"{where} is being written by another rag process; try again")
    if isinstance(e, sqlite3.OperationalError) and (why := storage_problem(e)):
        return RagError(f"cannot read {where}: {why} ({e})")
    return IndexCorruptError(f"{where} {says} ({e}); rebuild it with `rag index --rebuild`")


def _cannot_write(folder: Path, err: OSError | None) -> IndexReadOnlyError:
    why = f" ({err.strerror})" if err is not None and err.strerror else ""
    return IndexReadOnlyError(f"cannot write the index in {folder}{why}")


_STORAGE_ERRORS = ("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_READONLY")


def storage_problem(e: sqlite3.Error, path: Path | None = None, write: bool = True) -> str | None:
    """What a SQLite error says of the storage under the index, when that is its cause (a
    full disk, an I/O error, a file that cannot be opened or written: `permission_problem`
    of ``path`` and ``write`` when it has one), else None: the index itself is then not at
    fault, and rebuilding it would not help."""
    name = getattr(e, "sqlite_errorname", "") or ""
    if name == "SQLITE_FULL" or "disk is full" in str(e):
        return "the disk is full"
    if name.startswith(_STORAGE_ERRORS) or "disk I/O error" in str(e):
        return ((path is not None and permission_problem(path, write))
                or "the disk could not be read or written (is it full, or read-only?)")
    return None


def permission_problem(path: Path, write: bool) -> str | None:
    """Why this user may not read (or, with ``write``, write) the index file at ``path`` or
    the log files beside it, or, with ``write``, its folder (where SQLite makes and deletes
    them), by their permissions, else None. (SQLite says only that it cannot open the file,
    that the database is read-only, or that the disk could not be read or written.)"""
    # (read as it is, an index is read without its log files: `read_as_it_is`)
    logs = () if not write and read_as_it_is(path) else log_files(path)
    for file in (path, *logs):
        if not file.is_file():
            continue
        if not os.access(file, os.R_OK):
            verb = "read"
        elif write and not os.access(file, os.W_OK):
            verb = "write"
        else:
            continue
        bit = 0o200 if verb == "write" else 0o400
        if not os.access(path.parent, os.W_OK):
            remedy = ", or ask the folder's owner"
        elif verb == "write" and not _by_mode(file, bit):
            remedy = ""  # (immutable: a rebuild could neither delete the log nor replace the index)
        else:
            remedy = ", or replace the index with `rag index --rebuild`"
        return (f"this user may not {verb} {'it' if file == path else f'{file.name} beside it'} "
                f"{_denied_by(file, bit)}{remedy}")
    if write and path.parent.is_dir() and not os.access(path.parent, os.W_OK):  # (made so during a run)
        return f"this user may not write its folder {path.parent} {_denied_by(path.parent, 0o200)}, or ask its owner"
    return None


def _by_mode(path: Path, owner_bit: int) -> bool:
    """Whether ``path``'s mode is what keeps this user from it: False when it is the user's
    own and its mode grants the owner ``owner_bit`` (`chattr +i`, a read-only mount)."""
    try:
        st = path.stat()
    except OSError:
        return True
    return not (st.st_uid == os.geteuid() and st.st_mode & owner_bit)


def log_files(path: Path) -> tuple[Path, Path]:
    """The files SQLite keeps beside the index file at ``path`` in WAL mode: its log and the log's index."""
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def immutable(path: Path) -> bool:
    """Whether the file at ``path`` cannot be written though it is this user's and its mode
    lets its owner write it (`chattr +i`, a read-only mount): then it cannot be replaced either."""
    return path.is_file() and not os.access(path, os.W_OK) and not _by_mode(path, 0o200)


def _denied_by(path: Path, owner_bit: int) -> str:
    """What keeps this user from ``path``, and what to do: its permissions, or something
    else (`_by_mode`): then the command that undoes `chattr +i`."""
    if not _by_mode(path, owner_bit):
        undo = (f": `chattr -i {shlex.quote(str(path))}` (as root), or mount it read-write" if owner_bit == 0o200
                else "")  # (immutable keeps it from being written, not read)
        return f"(not by its permissions: it is immutable, see `lsattr`, or on a read-only mount); undo that{undo}"
    return "(its permissions); fix them (chmod, chown)"


LOCK_WAIT_SECONDS = 10.0
"""How long a connection waits for a lock another process holds: a second `rag index` for
the first, and a reader for the moment a run's connection opens or closes the WAL (a
reader that did not wait failed one open in five beside back-to-back runs)."""


def read_as_it_is(path: Path) -> bool:
    """Whether the index file at ``path`` is opened read-only and "immutable": on read-only
    media, or in a folder this user cannot write (/usr/share/doc), since SQLite's WAL mode
    needs to write beside the file even to read it. SQLite then does not see changes its
    owner makes: a reader must open it again (`Engine.reading` does, when the file changes)."""
    path = Path(path)
    return path.is_file() and not os.access(path.parent, os.W_OK)


def open_file(path: Path, create: bool = True, timeout: float = LOCK_WAIT_SECONDS) -> sqlite3.Connection:
    """Open (and create when asked) the index file at ``path``.

    WAL mode lets queries read while an index run writes; a crash mid-run leaves the
    last committed index. ``timeout`` is how long to wait for a lock another process holds.
    """
    path = Path(path)
    if create:
        folder = path.parent
        if not os.access(folder if folder.is_dir() else folder.parent, os.W_OK):
            raise _cannot_write(folder, None)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise _cannot_write(folder, e) from None
    if why := permission_problem(path, write=create):  # (a query only reads it)
        raise RagError(f"cannot open {path}: {why}")
    read_only = not create and read_as_it_is(path)
    if read_only:
        wal = path.with_name(path.name + "-wal")
        if wal.is_file() and wal.stat().st_size > 0:  # (read without it, the file may be half-merged)
            raise IndexReadOnlyError(
                f"{path} has writes not yet merged into it ({wal.name}), and its folder cannot be "
                f"written: open it once where it can be (any `rag query` merges them)")
    try:
        if read_only:
            conn = _configure(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True))
        else:
            conn = _configure(sqlite3.connect(str(path), timeout=timeout))
        if not check_format(conn, str(path), deep=create):  # (a writer checks every page first)
            if not create:
                raise IndexCorruptError(f"{path} is empty; run `rag index` first")
            conn.execute("PRAGMA journal_mode=WAL")
            _create_schema_once(conn, str(path))
        if not read_only:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.OperationalError as e:
        if "locked" in str(e) or "busy" in str(e):
            raise IndexBusyError(f"{path} is being written by another rag process; try again") from e
        if why := storage_problem(e, path, create):
            raise RagError(f"cannot open {path}: {why} ({e})") from e
        raise IndexCorruptError(f"cannot open {path}: {e}; rebuild it with `rag index --rebuild`") from e
    except sqlite3.DatabaseError as e:
        if why := storage_problem(e, path, create):
            raise RagError(f"cannot open {path}: {why} ({e})") from e
        raise IndexCorruptError(f"{path} is not a readable index ({e}); rebuild it with `rag index --rebuild`") from e
    return conn


def being_written(path: Path) -> bool:
    """Whether another connection holds the index file's write lock now (a `rag index` run
    under way): its first run commits nothing until it ends. False when it cannot be told
    (a folder this user cannot write)."""
    try:
        # (a moment's wait: another reader's own test holds the lock only that long)
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=rw", uri=True, timeout=0.2)
    except sqlite3.Error:
        return False
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.rollback()
        return False
    except sqlite3.OperationalError as e:
        return "locked" in str(e) or "busy" in str(e)
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def open_memory(data: bytes | None = None) -> sqlite3.Connection:
    """An in-memory index, empty or restored from ``serialize()`` bytes."""
    conn = _configure(sqlite3.connect(":memory:"))
    if data is not None:
        if not data.startswith(b"SQLite format 3\x00"):
            raise IndexCorruptError("stored index is not a SQLite database; clear it and index again")
        try:
            conn.deserialize(data)
        except sqlite3.DatabaseError as e:
            raise IndexCorruptError(f"stored index is unreadable ({e}); clear it and index again") from e
        if check_format(conn, "stored index", deep=True):
            return conn
    create_schema(conn)
    return conn

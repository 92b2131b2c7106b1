"""The engine: one index (a SQLite store) that documents go into and questions come out of.

`Engine` is the one public entry point of the core. The CLI's indexer, the browser facade
and the benchmarks all use it. Writes go to an in-memory buffer (postings by term, df
deltas) and reach SQLite as one *segment* on `flush()`, which queries and serialisation
do first. Removal is proportional to the removed document's own terms: its chunks' term
ids decrement document frequencies and the chunk ids are listed as dead until segments
are merged.
"""

from __future__ import annotations

import gc
import heapq
import json
import math
import os
import sqlite3
from array import array
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from pathlib import Path

from ragweb import accel, analysis, ingest, store
from collections import _count_elements  # C helper behind Counter.update

from ragweb.analysis import Analyzer
from ragweb.chunking import Outline, PageLines, code_outline, indented_is_literal, is_asciidoc, outline, split_lines
from ragweb.markup import FILL, code_lines, readable, show_page, visible
from ragweb.config import SHOWN_CHARS, default_config
from ragweb.files import DECODER_VERSION, GlobSet, glob_problem
from ragweb.errors import (EmptyQueryError, IndexBusyError, IndexCorruptError, IndexReadOnlyError, Interrupted,
                           RagError, UsageError, quoted)
from ragweb.search import (REPEAT_SHARE, REPEAT_TERMS, aggregate_path, bm25_idf, changelog_path, contained, license_path,
                           license_title, license_weight, mmr_select, shingles)

MERGE_FACTOR = 8           # segments of about the same size are merged this many at a time (`_window_to_merge`)
DEAD_MERGE_RATIO = 0.25    # all segments are merged when this share of indexed chunks is dead
FLUSH_INTS = 4_000_000     # buffered postings (3 ints each) are flushed as a segment beyond this (~30 MB of text)
MERGE_INTS = 1_000_000     # a merge writes its postings in ranges of terms of about this many ints (4 MB)
MEMO_MAX = 500_000         # words whose analysis a flush keeps memoised, at most (then forgotten)
RELATED_LONGER = 10        # a question term the index lacks is searched for as up to this many longer terms
COMPOUND_MATCH = 1.0       # match strength of two question words the index holds as one ("back off": "backoff"; 0: off)
TIES_KEPT = 4  # chunks tied at a search's pool cut are all kept up to this many times the pool

FILE_CACHE = 256           # files whose lines (and an HTML page's views) packing keeps in memory ...
FILE_CACHE_CHARS = 8_000_000  # ... and at most this many characters of them
OUTLINE_CACHE = 1024       # outlines kept (of files whose lines were dropped too: small, slow to make)
MARKUP_VERSION = 23        # how pages are read: HTML through `ragweb.markup` (2: <dt> terms are
                           # headings), reST entries (3: ".. function::" heads a section), front
                           # matter (4: its "title" is the page's title heading), headings on
                           # one line (5: an HTML heading's blanked tags are one space), the
                           # kept shown text (6: a line's indentation outside <pre> is markup),
                           # AsciiDoc's preprocessor lines (7: `markup.mask_directives`), the
                           # space between two blocks whose second opens with inline tags
                           # (8: "files).</p><p><code>ninja"), a heading whose text starts
                           # on the line below its tag (9: "<h1>" / "Title" / "</h1>"), controls
                           # (10: a <button>'s "copy", a <select>'s options), Sphinx's
                           # viewcode links, "&para;" permalinks, a "<" in a quoted value,
                           # Texinfo's node headers
                           # (11: "[source]", Apache's <img alt="<-">), ARIA menus
                           # (12: mdBook's theme picker, role="menu"), a heading's
                           # text up to its end tag and as shown, <pre> lines never headings
                           # nor Markdown fences, "</h2><a>" a space, "&#xf17c" without its
                           # ";" (13), an empty or numbered heading closed on
                           # its line taking no title from the line below (14), an unclosed
                           # <button> or <select> ending where the next one starts (15),
                           # a README without a suffix and Texinfo, POD, LaTeX as prose
                           # (16: `files.PROSE_NAMES`, `files.MORE_PROSE_SUFFIXES`), those
                           # names in any capitals (17: Readme, Changelog), POD read as
                           # shown (18: `markup.show_pod`, "C<x>" shows "x", "=head2" is a
                           # heading, verbatim paragraphs are code), man pages read as
                           # shown (19: `markup.show_man`, ".BR open ()" shows "open()"), Info
                           # files as prose, their node headers hidden (20: `markup.show_info`), an
                           # exponent shown (21: "2<sup>31</sup>" reads "2^31", not "231"), an
                           # AsciiDoc title's inline anchor, "OPTIONS[[OPTIONS]]", not its title,
                           # a <dt> whose text is on the next line marked on its own line, a
                           # rotated log ("app.log.1") not read as a man page, AsciiDoc's
                           # listing and literal blocks code and its two-line titles its own
                           # (`chunking.is_asciidoc`: git's "# comment" in a "----" block no
                           # heading) (22), a Markdown title's closing "[[wiki link]]"
                           # kept in it, only AsciiDoc's inline anchor left out, a heading
                           # after text on its line marked and a section (DocBook's one-page
                           # manuals: git's user-manual.html), a line
                           # where a <pre> ends or starts and shows nothing no code line
                           # ("</pre><h2>Description", PostgreSQL's pages), Texinfo's table of
                           # contents and printed indexes navigation, and gtk-doc's and
                           # DocBook's API and book indexes (<div class="index">), texi2html's and
                           # gtk-doc's "generated by" lines and groff's list of a man page's
                           # sections, a <dt> after text on its line a term, an indented
                           # "# x" no heading but in Markdown (`chunking.indented_is_literal`:
                           # a plain-text example's "   # comment"), a README named with a
                           # word before or after prose (`files.affixed_prose`) (23); an
                           # index built before (no "markup" setting) reads HTML as plain text,
                           # one of another version chunked some pages otherwise: rebuilt by
                           # `rag index`, re-read from its texts by the browser


@dataclass
class Hit:
    """One retrieved chunk with its citation and the parts of its score."""

    path: str
    start_line: int
    end_line: int
    score: float
    text: str
    heading: str = ""
    terms: list[str] = field(default_factory=list)   # query terms (or related forms searched for) the chunk matched
    bm25: float = 0.0
    path_boost: float = 0.0
    chunk_id: int = 0
    file_id: int = 0
    col_start: int | None = None
    col_end: int | None = None
    mtime: float = 0.0        # the file's modification time when indexed
    visible: bool = False     # an HTML page's: text is the visible text of the range (`ragweb.markup`)

    @property
    def range(self) -> str:
        return f"L{self.start_line}-{self.end_line}"

    def to_json(self) -> dict:
        """The browser/CLI JSON shape of a result (reference §5)."""
        out = {"path": self.path, "startLine": self.start_line, "endLine": self.end_line,
               "score": round(self.score, 6), "text": self.text}
        if self.col_start is not None:  # a piece of one over-long line: its columns, as a pack's snippet
            out["cols"] = [self.col_start, self.col_end]
        if self.visible:
            out["visible"] = True
        return out


VERSION_SETTINGS = ("markup", "short_terms", "unicode", "words", "folds", "stemmer")  # analysis settings a new version changes, not the config
OLDER_VERSION = "built by an older version"     # `Engine.settings_change` when only those differ
NEWER_VERSION = "built by a newer version"      # ... when a newer version wrote them (`by_newer_version`)
OTHER_STEMMER = "stemmed by snowballstemmer"    # ... when only the stemmer's version differs: "... 2.2.0, not 3.1.1"


def analysis_settings(config: dict) -> dict:
    """The index settings that change what terms and chunks are (a change needs a rebuild)."""
    ix = config["index"]
    return {"stemming": ix["stemming"], "language": ix["language"],
            "chunk_tokens": ix["chunk_tokens"], "chunk_overlap": ix["chunk_overlap"],
            "markup": MARKUP_VERSION, "short_terms": analysis.SHORT_TERMS, "unicode": analysis.UNICODE_FORM,
            "words": analysis.WORD_FORM, "folds": analysis.fold_form(ix["stemming"], ix["language"]),
            "stemmer": analysis.STEMMER_VERSION if ix["stemming"] is not False else None}


def by_newer_version(stored: dict, decoder: object = 1) -> bool:
    """Whether analysis settings an index records were written by a newer ragweb: a reading
    of pages after this one's (`MARKUP_VERSION`), short terms after its (`SHORT_TERMS`), or a form of words or folds this version
    does not know (an older one recorded none, or this one's); or whether a newer decoder
    read its files (``decoder``, `Engine.decoded_by`, after `files.DECODER_VERSION`)."""
    markup, short = stored.get("markup"), stored.get("short_terms")
    return (isinstance(markup, int) and markup > MARKUP_VERSION
            or isinstance(short, int) and short > analysis.SHORT_TERMS
            or isinstance(decoder, int) and decoder > DECODER_VERSION
            or stored.get("unicode") not in (None, analysis.UNICODE_FORM)
            or stored.get("words") not in (None, analysis.WORD_FORM)
            or stored.get("folds") not in (None, *analysis.FOLD_FORMS))


def _identity(path, immutable: bool = False) -> tuple[int, ...] | None:
    """Which file stands at ``path`` (device and inode), or None when none does; with
    ``immutable``, also its state (modification time and size): a connection that reads it
    as it is (`store.read_as_it_is`) sees no change its owner commits."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) + ((st.st_mtime_ns, st.st_size) if immutable else ())


class Engine:
    """An index over one SQLite connection. Create with `open`, `memory` or `from_bytes`."""

    _file = None  # (the index file's path and identity when opened by `open`)
    _immutable = False  # (opened read-only, as it is: `store.read_as_it_is`)
    conn_timeout = store.LOCK_WAIT_SECONDS  # (how long `open` waited for a lock; a re-open waits as long)

    committed = False
    """Whether a `transaction` of this engine has committed: its changes are in the file."""

    embedder = None
    """An `ragweb.embeddings.Embedder` when the config enables embeddings (set by the CLI):
    `search` can then rank by vectors (``mode``) and fuses them by default when
    ``retrieve.hybrid_enabled``."""

    def __init__(self, conn: sqlite3.Connection, config: dict | None = None, where: str = "index"):
        self.conn = conn
        self.config = config or default_config()
        self.where = where
        self._load_state()

    @property
    def read_only(self) -> bool:
        """Whether the index file was opened read-only, as it is (`store.read_as_it_is`: this
        user cannot write it), so that no `rag index` of it will run."""
        return self._immutable

    # --- construction -----------------------------------------------------------------
    @classmethod
    def open(cls, path: str | Path, config: dict | None = None, create: bool = True,
             timeout: float = store.LOCK_WAIT_SECONDS) -> "Engine":
        """The index file at ``path`` (created when missing and ``create``)."""
        immutable = not create and store.read_as_it_is(Path(path))
        eng = cls(store.open_file(Path(path), create=create, timeout=timeout), config, str(path))
        eng._file = (Path(path), _identity(path, immutable))
        eng._immutable = immutable
        eng.conn_timeout = timeout
        return eng

    @classmethod
    def memory(cls, config: dict | None = None) -> "Engine":
        """An empty in-memory index (the browser's)."""
        return cls(store.open_memory(), config, "in-memory index")

    @classmethod
    def from_bytes(cls, data: bytes, config: dict | None = None) -> "Engine":
        """An in-memory index restored from `to_bytes()` output."""
        return cls(store.open_memory(bytes(data)), config, "stored index")

    def to_bytes(self, vacuum_ratio: float | None = None, smallest: bool = False) -> bytes:
        """The whole index as SQLite database bytes (flushes first).

        SQLite keeps the pages of removed documents as free pages; with ``vacuum_ratio``
        the database is compacted first when at least that share of its pages is free.
        ``smallest``: as small as it can be made, whatever that costs (a save the storage
        quota refused, after the user removed files to make room): the postings of removed
        chunks merged away, then the database compacted if any page is free."""
        self.flush()
        if smallest and not self.conn.in_transaction:
            if self.n_dead:
                self.merge_segments()
            vacuum_ratio = 0.0
        if vacuum_ratio is not None and not self.conn.in_transaction:
            (free,) = self.conn.execute("PRAGMA freelist_count").fetchone()
            (pages,) = self.conn.execute("PRAGMA page_count").fetchone()
            if pages and free and free / pages >= vacuum_ratio:
                self.conn.execute("VACUUM")
        return self.conn.serialize()

    def db_bytes(self) -> int:
        """Bytes of the database's pages in use (not the free pages of removed documents,
        nor postings still buffered in memory)."""
        (pages,) = self.conn.execute("PRAGMA page_count").fetchone()
        (free,) = self.conn.execute("PRAGMA freelist_count").fetchone()
        (size,) = self.conn.execute("PRAGMA page_size").fetchone()
        return (pages - free) * size

    def close(self) -> None:
        self.conn.close()

    def weighed_path(self, path: str) -> str:
        """The part of a stored path whose words weigh in ranking and in the evidence (a
        question word in it, a change log's or an index page's name): the path itself, or,
        below a folder dropped on the page (`add_roots`), the path below that folder, so
        its name ("acme", "releases") does not lift or lower all of its files, as `rag
        index` of that folder would not."""
        if self._roots and "/" in path:
            top, rest = path.split("/", 1)
            if top in self._roots:
                return rest
        return path

    def add_roots(self, names) -> int:
        """Record folders dropped on the page, whose files' paths start with the folder's
        name (``proj/notes.md``, where `rag index proj` stores ``notes.md``): `weighed_path`.
        Returns how many were new (a change of the index, to be saved)."""
        new = set(names) - self._roots
        if new:
            self._roots |= new
            self._set_meta("roots", sorted(self._roots))
            self._paths.clear()
        return len(new)

    # --- state ------------------------------------------------------------------------
    def _meta(self, key: str, default=None):
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def _set_meta(self, key: str, value) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, json.dumps(value)))

    def _load_state(self) -> None:
        own = not self.conn.in_transaction  # (one snapshot: a commit between reads mixed two states)
        try:
            if own:
                self.conn.execute("BEGIN")
            stored = self._meta("analysis")
            self.n_chunks = self._meta("n_chunks", 0)
            self.total_len = self._meta("total_len", 0)
            self.n_dead = self._meta("n_dead", 0)
            self.next_seg = self._meta("next_seg", 0)
            self.n_segs = self._meta("n_segs", 0)
            self._segs = self._listed_segments()
            (max_chunk,) = self.conn.execute("SELECT max(id) FROM chunks").fetchone()
            (max_dead,) = self.conn.execute("SELECT max(chunk) FROM dead").fetchone()
            # changes when another connection commits (`transaction` reloads then)
            (self._data_version,) = self.conn.execute("PRAGMA data_version").fetchone()
        except (sqlite3.DatabaseError, ValueError) as e:
            raise IndexCorruptError(f"{self.where} is unreadable ({e}); rebuild it with `rag index --rebuild`") from e
        finally:
            if own and self.conn.in_transaction:
                self.conn.execute("COMMIT")
        if stored is None and max_chunk is not None:  # (chunks are stored with the settings they were made by)
            raise IndexCorruptError(f"{self.where} is damaged (its meta table lost the index's settings and "
                                    "counts); rebuild it with `rag index --rebuild`")
        wanted = analysis_settings(self.config)
        self.settings = stored or wanted
        # The stored settings win for reading, so questions are analysed as the index was.
        self.settings_changed = stored is not None and stored != wanted
        self.analyzer = Analyzer.of(self.settings)
        self.next_chunk = max(max_chunk or 0, max_dead or 0, self._meta("next_chunk", 0)) + 1
        self._vocab: dict[str, int] | None = None
        self._raw_ids: dict[str, tuple[int, ...]] = {}  # raw word -> term ids
        self._next_term = 0
        self._paths: dict[str, tuple[frozenset, bool, bool, bool]] = {}  # path -> (its terms, `changelog_path`, `aggregate_path`, `license_path`)
        self._roots: set[str] = set(self._meta("roots", ()))  # folders dropped on the page: `weighed_path`
        self._outlines: dict[int, Outline] = {}  # file id -> its outline (compaction reads it per pack)
        self._views: dict[int, list] = {}        # file id -> an HTML page's view, shown and visible lines, <pre> lines (each made when asked for)
        self._shown: dict[int, str] = {}         # file id -> an HTML page's shown text
        self._lines: dict[int, list[str]] = {}   # file id -> its lines (packing reads them per pack)
        self._lines_size = 0                     # characters in _lines
        self._lines_chars: dict[int, int] = {}   # file id -> characters of its text in _lines
        self._vectors = None                     # (chunk ids, unit vectors, their numpy matrix or None) for vector search
        self._reset_pending()

    def _reset_pending(self) -> None:
        # term id -> flat (chunk, tf, len) triples; a list (extending one is several times
        # faster than an array's), packed into a blob at flush
        self._post: dict[int, list[int]] = {}
        self._df_delta: dict[int, int] = {}
        self._new_terms: dict[int, str] = {}
        # Chunk ids only grow, so the chunks whose postings are still in _post are those
        # numbered from here on.
        self._pending_from = self.next_chunk
        self._pending_dead: set[int] = set()
        self._pending_ints = 0  # ints buffered in _post
        self._dirty = False

    def _load_vocab(self) -> dict[str, int]:
        if self._vocab is None:
            self._vocab = dict(self.conn.execute("SELECT term, id FROM terms"))
            (mx,) = self.conn.execute("SELECT max(id) FROM terms").fetchone()
            self._next_term = (mx or 0) + 1
        return self._vocab

    @property
    def dirty(self) -> bool:
        """True when there are changes not yet flushed into SQLite."""
        return self._dirty

    @contextmanager
    def transaction(self):
        """One atomic unit of work: everything inside commits together or not at all."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            raise IndexBusyError(f"{self.where} is being written by another process ({e}); "
                                 "wait for it to finish and try again") from e
        try:
            (version,) = self.conn.execute("PRAGMA data_version").fetchone()
            if version != self._data_version:
                # Another process wrote the index since this engine read its counters (a
                # second `rag index` that waited for the first): read them again, or its
                # chunk ids and totals would be stale.
                if self._dirty:
                    raise IndexBusyError(f"{self.where} was written by another process while this one "
                                         "had changes of its own; try again")
                self._load_state()
            yield self
            self.flush()
        except BaseException:
            self._rollback()
            raise
        try:
            self.conn.execute("COMMIT")
        except BaseException as e:
            # (not committed: still open, or rolled back by SQLite itself, as an I/O error at the
            # commit does -- its log made read-only meanwhile -- where no transaction is left open)
            if self.conn.in_transaction or isinstance(e, sqlite3.Error):
                self._rollback()
                raise
            self.committed = True
            if isinstance(e, KeyboardInterrupt):  # (Ctrl-C as the commit ended: it is done)
                raise Interrupted(f"interrupted as the changes were saved: {self.where} holds them all") from None
            raise
        self.committed = True

    def _rollback(self) -> None:
        """Undo the open transaction, if SQLite has not already (a full disk, an I/O error
        roll it back themselves), and read the counters again."""
        if self.conn.in_transaction:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # (the error that brought us here says more)
        self._load_state()

    @contextmanager
    def reading(self):
        """One consistent view of the index for a search or pack (nested uses are one).

        Another process may commit an index run while this engine is open (a `rag pack
        --batch` beside a `rag index`): the engine's counters, segment list and caches are
        then read again, and the reads of one question see one committed state. An index
        file replaced meanwhile (`rag index --rebuild`) is opened again. An engine
        with changes of its own not yet flushed (the page's, or a run's) reads as it is."""
        if self.conn.in_transaction or self._dirty:
            yield self
            return
        if self._file is not None:
            path, opened = self._file
            now = _identity(path, self._immutable)
            # (`rag index --rebuild` put a new file in its place, or a read-as-it-is file changed)
            if now is not None and now != opened:
                try:
                    conn = store.open_file(path, create=False, timeout=self.conn_timeout)
                except IndexReadOnlyError:  # (its owner's run is writing it: not this user's to merge)
                    raise IndexBusyError(f"{path} is being written by its owner (a `rag index` run); "
                                         "try again when it has finished") from None
                self.conn.close()
                self.conn, self._file = conn, (path, now)
                self._load_state()
        conn = self.conn
        conn.execute("BEGIN")
        try:
            conn.execute("SELECT 1 FROM meta LIMIT 1").fetchall()  # (the first read fixes the snapshot)
            (version,) = conn.execute("PRAGMA data_version").fetchone()
            if version != self._data_version:
                self._load_state()
            yield self
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")

    def settings_change(self) -> str:
        """Why the index's analysis settings are not the config's ('' when they are): "the
        config changed them" or, when only `VERSION_SETTINGS` differ, `OLDER_VERSION`, or,
        when only the stemmer's version does, `OTHER_STEMMER` and the two versions; and
        `NEWER_VERSION` when a newer ragweb wrote them, or when a newer decoder read the
        files (the settings the same: `rag index` would read them the older way)."""
        # (whatever else differs: rebuilt, it would be read the older way)
        if by_newer_version(self.settings, self.decoded_by()):
            return NEWER_VERSION
        if not self.settings_changed:
            return ""
        wanted = analysis_settings(self.config)
        keys = {k for k in set(wanted) | set(self.settings) if wanted.get(k) != self.settings.get(k)}
        if keys == {"stemmer"} and self.settings.get("stemmer"):
            return f"{OTHER_STEMMER} {self.settings['stemmer']}, not {wanted['stemmer'] or 'a version that does not say'}"
        # (a key this version no longer has: an early version's name for a setting)
        return OLDER_VERSION if keys <= set(VERSION_SETTINGS) | (set(self.settings) - set(wanted)) \
            else "analysis settings changed"

    def reset(self, config: dict | None = None) -> None:
        """Drop every document (and adopt the analysis settings of ``config``). When the
        config enables embeddings, the vectors of its model are kept for reuse by the chunks
        of the same text (`ragweb.embeddings.keep_for_reuse`); otherwise they go too."""
        if config is not None:
            self.config = config
        kept = None
        if self.config["embedding"]["enabled"]:  # (the page never has vectors: it imports no client)
            from ragweb import embeddings
            kept = embeddings.keep_for_reuse(self)
        for table in ("files", "chunks", "terms", "postings", "dead", "skipped", "meta"):
            self.conn.execute(f"DELETE FROM {table}")
        if kept is None:
            self.conn.execute("DROP TABLE IF EXISTS vectors")
            self.conn.execute("DROP TABLE IF EXISTS vector_keys")
        self.conn.execute("DROP TABLE IF EXISTS idents")
        store.drop_shown(self.conn)
        self.conn.execute("INSERT INTO meta VALUES('format', ?)", (str(store.FORMAT_VERSION),))
        if kept is not None:
            self._set_meta("embedding", kept)
        self._load_state()
        self.settings = analysis_settings(self.config)
        self.settings_changed = False
        self.analyzer = Analyzer.of(self.settings)
        self._set_meta("analysis", self.settings)

    clear = reset

    def reread(self) -> int:
        """Index every stored document again under the config's analysis settings, from the
        texts the index keeps (an index built by an older version, whose settings differ,
        reads its files differently: `settings_changed`). Atomic; returns the documents."""
        done = 0
        for done, _ in self.reread_steps():
            pass
        return done

    def reread_steps(self):
        """`reread` a document at a time, for a caller that must stay responsive (the page):
        a generator yielding (documents done, total), first (0, total) before any work.

        One transaction holds the whole re-read: it commits when the generator is exhausted,
        and closing the generator before that rolls everything back (the old index stays,
        as it was read)."""
        with self.transaction():
            files = self.conn.execute("SELECT path, text, mtime, size, sha256 FROM files ORDER BY id").fetchall()
            skipped = self.conn.execute("SELECT path, mtime, size, reason FROM skipped").fetchall()
            roots = sorted(self._roots)  # (the page's dropped folders: still its files' first names)
            yield 0, len(files)
            self.reset(self.config)
            self.add_roots(roots)
            for row in skipped:
                self.mark_skipped(*row)
            for done, (path, text, mtime, size, sha256) in enumerate(files, 1):
                self.add_document(path, text, mtime, size, sha256)
                yield done, len(files)

    def has_table(self, name: str) -> bool:
        """Whether the index has the table ``name`` (the optional ones: ``vectors``, ``idents``)."""
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?",
                                 (name,)).fetchone() is not None

    # --- writing ----------------------------------------------------------------------
    def file_idents(self) -> dict[str, str]:
        """path -> which file it was read from as the last `rag index` saw it (`store.IDENTS_TABLE`;
        none in an index of an older version, or the page's)."""
        try:
            return dict(self.conn.execute("SELECT path, ident FROM idents"))
        except sqlite3.OperationalError:  # (no such table)
            return {}

    def set_file_idents(self, idents: dict[str, str], old: dict[str, str]) -> None:
        """Record ``idents`` (path -> identity) in place of ``old`` (`file_idents`'s), writing
        only what differs."""
        self.conn.execute(store.IDENTS_TABLE)
        self.conn.executemany("DELETE FROM idents WHERE path=?", [(p,) for p in old if p not in idents])
        self.conn.executemany("INSERT OR REPLACE INTO idents VALUES(?, ?)",
                              [(p, i) for p, i in idents.items() if old.get(p) != i])

    def file_states(self) -> dict[str, tuple[float, int, str]]:
        """path -> (mtime, size, sha256) of every indexed file."""
        return {p: (m, s, h) for p, m, s, h in self.conn.execute("SELECT path, mtime, size, sha256 FROM files")}

    def decoded_by(self) -> int:
        """The `ragweb.files.DECODER_VERSION` that read the indexed files (1: before one was
        recorded)."""
        return self._meta("decoder", 1)

    def set_decoded_by(self, version: int) -> None:
        """Record that the indexed files are as decoder ``version`` reads them."""
        self._set_meta("decoder", version)

    def scanned_at(self) -> float | None:
        """When (wall clock, seconds) the last `rag index` run read the file states."""
        return self._meta("scanned_at")

    def set_scanned_at(self, when: float) -> None:
        """Record when this run read the file states (see `scanned_at`)."""
        self._set_meta("scanned_at", when)

    def ignore_files_applied(self) -> bool | None:
        """Whether the last `rag index` run applied the ignore files (False: ``--no-gitignore``;
        None: not recorded)."""
        return self._meta("gitignore")

    def set_ignore_files_applied(self, applied: bool) -> None:
        """Record whether this run applied the ignore files (see `ignore_files_applied`)."""
        self._set_meta("gitignore", applied)

    def size_limit(self) -> int | None:
        """The ``index.max_file_bytes`` the last `rag index` run held files to (None: not
        recorded)."""
        return self._meta("max_file_bytes")

    def set_size_limit(self, limit: int) -> None:
        """Record the size limit this run held files to (see `size_limit`)."""
        self._set_meta("max_file_bytes", limit)

    def paths_beyond_ascii(self) -> set[str]:
        """Paths of the indexed files whose text is not all ASCII: only those can be files
        that were not UTF-8 (the others read alike in every version)."""
        return {p for p, t in self.conn.execute("SELECT path, text FROM files") if not t.isascii()}

    def skipped_states(self) -> dict[str, tuple[float, int, str]]:
        """path -> (mtime, size, reason) of files a run looked at and did not index."""
        return {p: (m, s, r) for p, m, s, r in self.conn.execute("SELECT path, mtime, size, reason FROM skipped")}

    def mark_skipped(self, path: str, mtime: float, size: int, reason: str | None) -> None:
        """Remember that ``path`` was not indexed (binary, too large...), or forget it (reason None)."""
        if reason is None:
            self.conn.execute("DELETE FROM skipped WHERE path=?", (path,))
        else:
            self.conn.execute("INSERT OR REPLACE INTO skipped VALUES(?,?,?,?)", (path, mtime, size, reason))

    def touch_file(self, path: str, mtime: float, size: int) -> None:
        """Record a new mtime/size for a file whose content hash did not change."""
        self.conn.execute("UPDATE files SET mtime=?, size=? WHERE path=?", (mtime, size, path))

    def add_document(self, path: str, text: str, mtime: float = 0.0, size: int | None = None,
                     sha256: str | None = None) -> int:
        """Index ``text`` under ``path`` (replacing any document of that path); returns chunks."""
        return self.add_prepared(ingest.prepare(path, text, self.settings, size, sha256), mtime)

    def add_prepared(self, doc: ingest.Prepared, mtime: float = 0.0) -> int:
        """Index a document `ingest.prepare` made for this index's settings (in this process
        or another one); returns its chunks."""
        term_ids = self._id_counts if doc.counts is None else self._counted_ids
        first_id = self.next_chunk
        id_lists = []
        rows = []
        for cid, (ch, terms) in enumerate(zip(doc.chunks, doc.bodies if doc.counts is None else doc.counts),
                                          first_id):
            counts = term_ids(terms)
            length = sum(counts.values())
            id_lists.append((cid, counts, length))
            rows.append((cid, None) + ch + (length, store.ints_to_blob(sorted(counts))))
        path = doc.path
        self._savepoint_begin()
        try:
            removed = self._remove(path)
            cur = self.conn.execute(
                "INSERT INTO files(path, mtime, size, sha256, text) VALUES(?,?,?,?,?)",
                (path, mtime, doc.size, doc.sha256, doc.text))
            file_id = cur.lastrowid
            if len(rows) == 1:  # (most files of a big corpus are one chunk; executemany costs more)
                self.conn.execute("INSERT INTO chunks VALUES(?,?,?,?,?,?,?,?,?,?,?)", (rows[0][0], file_id) + rows[0][2:])
            else:
                self.conn.executemany("INSERT INTO chunks VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                                      [(r[0], file_id) + r[2:] for r in rows])
            if doc.shown is not None:
                store.put_shown(self.conn, file_id, doc.sha256, doc.shown)
            self._savepoint_end()
        except BaseException:
            self._savepoint_rollback()
            raise
        if removed is not None:
            self._count_removal(removed)
        # Postings change only after the database accepted the document. (Terms it added
        # to the vocabulary stay; unused ones get df 0, are ignored and purged on merge.)
        post = self._post
        pget = post.get
        self._pending_ints += 3 * sum(len(c) for _, c, _ in id_lists)
        for cid, counts, length in id_lists:
            for tid, tf in counts.items():
                arr = pget(tid)
                if arr is None:
                    post[tid] = [cid, tf, length]
                else:
                    arr += (cid, tf, length)
        self.next_chunk = first_id + len(rows)
        self.n_chunks += len(rows)
        self.total_len += sum(r[2] for r in id_lists)
        self._dirty = True
        if self._pending_ints > FLUSH_INTS:  # bound the buffer's memory on a big corpus
            self.flush()
        return len(rows)

    def _counted_ids(self, counts: dict[str, int]) -> dict[int, int]:
        """Term id -> frequency for terms counted by `ingest.prepare` (new terms get ids in
        the order they first appeared, as `_id_counts` gives them)."""
        vocab = self._load_vocab()
        out: dict[int, int] = {}
        for term, n in counts.items():
            tid = vocab.get(term)
            if tid is None:
                tid = self._term_id(term)
            out[tid] = n
        return out

    def _id_counts(self, text: str) -> dict[int, int]:
        """Term id -> frequency for a text; new terms get ids (memoised per raw word)."""
        memo = self._raw_ids
        text = self.analyzer.normal(text)
        words = self.analyzer.words(text)
        counts: dict[int, int] = {}
        try:
            _count_elements(counts, chain.from_iterable(map(memo.__getitem__, words)))  # counted in C
        except KeyError:  # new words get ids in the order they first appear
            for w in dict.fromkeys(words):
                if w not in memo:
                    memo[w] = tuple(self._term_id(t) for t in self.analyzer.word_terms(w))
            counts.clear()
            _count_elements(counts, chain.from_iterable(map(memo.__getitem__, words)))
        if self.analyzer.short_terms:
            for t in analysis.number_and_option_terms(text, self.analyzer.parameters):
                tid = self._term_id(t)
                counts[tid] = counts.get(tid, 0) + 1
        return counts

    def _term_id(self, term: str) -> int:
        vocab = self._load_vocab()
        tid = vocab.get(term)
        if tid is None:
            tid = vocab[term] = self._next_term
            self._new_terms[tid] = term
            self._next_term += 1
        return tid

    def remove_document(self, path: str) -> bool:
        """Remove a document; False if it was not indexed."""
        self._savepoint_begin()
        try:
            removed = self._remove(path)
            self._savepoint_end()
        except BaseException:
            self._savepoint_rollback()
            raise
        if removed is None:
            return False
        self._count_removal(removed)
        return True

    def _remove(self, path: str) -> list | None:
        """Delete ``path``'s rows (inside the caller's savepoint); the removed chunks as
        (id, length, term-ids blob), for `_count_removal` once the savepoint is released (a
        savepoint rolled back leaves the counters as they were), or None when not indexed."""
        row = self.conn.execute("SELECT id FROM files WHERE path=?", (path,)).fetchone()
        if row is None:
            return None
        file_id = row[0]
        self._forget_file(file_id)  # SQLite may give a later file this id again
        chunks = self.conn.execute("SELECT id, len, terms FROM chunks WHERE file_id=?", (file_id,)).fetchall()
        dead_rows = [(cid,) for cid, _, _ in chunks if cid < self._pending_from]
        if dead_rows:
            self.conn.executemany("INSERT INTO dead VALUES(?)", dead_rows)
        self.conn.execute("DELETE FROM chunks WHERE file_id=?", (file_id,))
        self.conn.execute("DELETE FROM files WHERE id=?", (file_id,))
        store.drop_shown(self.conn, file_id)
        return chunks

    def _count_removal(self, chunks: list) -> None:
        """The counters' share of a `_remove` whose rows are gone."""
        df = self._df_delta
        for cid, length, blob in chunks:
            for tid in store.blob_to_ints(blob):
                df[tid] = df.get(tid, 0) - 1
            self.n_chunks -= 1
            self.total_len -= length
            if cid >= self._pending_from:
                self._pending_dead.add(cid)
            else:
                self.n_dead += 1
        self._dirty = True

    def _savepoint_begin(self):
        self.conn.execute("SAVEPOINT doc")

    def _savepoint_end(self):
        self.conn.execute("RELEASE doc")

    def _savepoint_rollback(self):
        if not self.conn.in_transaction:
            return  # (SQLite rolled the whole transaction back itself: a full disk, an I/O error)
        try:
            self.conn.execute("ROLLBACK TO doc")
            self.conn.execute("RELEASE doc")
        except sqlite3.Error:
            pass  # (the error that brought us here says more)

    def flush(self) -> None:
        """Write buffered postings as one segment and the counters; merge if needed."""
        if not self._dirty:
            return
        conn = self.conn
        new = self._new_terms
        # df change per term: postings added in this batch (each chunk once per term),
        # plus the decrements recorded by removals.
        delta = self._df_delta
        for tid, arr in self._post.items():
            delta[tid] = delta.get(tid, 0) + len(arr) // 3
        conn.executemany("INSERT INTO terms VALUES(?,?,?)",
                         [(tid, term, delta.get(tid, 0)) for tid, term in new.items()])
        conn.executemany("UPDATE terms SET df = df + ? WHERE id = ?",
                         [(d, tid) for tid, d in delta.items() if d and tid not in new])
        dead = self._pending_dead
        seg = self.next_seg
        rows = []
        for tid, arr in self._post.items():
            if dead:
                arr = _drop_dead(arr, dead)
                if not arr:
                    continue
            rows.append((tid, seg, store.ints_to_blob(arr)))
        unborn = [tid for tid in new if delta.get(tid, 0) <= 0]  # (their chunks were all removed unflushed)
        if rows:
            conn.executemany("INSERT INTO postings VALUES(?,?,?)", rows)
            if self._segs is not None:
                self._segs.append([seg, self._pending_from, sum(len(r[2]) for r in rows) // 4])
            self.next_seg += 1
            self.n_segs += 1
        self._reset_pending()
        if len(self._raw_ids) > MEMO_MAX:  # (memos, not state: what they forget is made again)
            self._raw_ids = {}
        self.analyzer.trim(MEMO_MAX)
        if self._segs is None or self.n_dead > DEAD_MERGE_RATIO * max(self.n_chunks, 1):
            self.merge_segments()
        else:
            while window := _window_to_merge([size for _, _, size in self._segs]):
                self._merge_window(*window)
            if unborn:
                self._drop_unused_terms(unborn)
        if self._meta("analysis") is None:
            self._set_meta("analysis", self.settings)
        for key in ("n_chunks", "total_len", "n_dead", "next_seg", "n_segs"):
            self._set_meta(key, getattr(self, key))
        self._set_meta("next_chunk", self.next_chunk - 1)
        self._list_segments()

    def merge_segments(self) -> None:
        """Rewrite all postings as one segment without dead chunks; drop unused terms."""
        conn = self.conn
        dead = {c for (c,) in conn.execute("SELECT chunk FROM dead")}
        ints = self._merge_in_ranges(
            lambda after: [conn.execute("SELECT term, data FROM postings WHERE term > ? ORDER BY term, seg",
                                        (after,))],
            lambda after, upto: conn.execute("DELETE FROM postings WHERE term > ? AND term <= ?", (after, upto)),
            dead, 0)
        conn.execute("DELETE FROM dead")
        conn.execute("DELETE FROM terms WHERE df <= 0")
        self._vocab = None
        self._raw_ids = {}
        self.n_dead = 0
        self.next_seg = 1
        self.n_segs = 1 if ints else 0
        self._segs = [[0, 0, ints]] if ints else []
        for key in ("n_dead", "next_seg", "n_segs"):
            self._set_meta(key, getattr(self, key))
        self._list_segments()

    def _list_segments(self) -> None:
        # With the counters an older version also writes, which it changes when it writes
        # segments: then the list is stale, and is not read (`_listed_segments`).
        self._set_meta("segs", {"segs": self._segs, "next_seg": self.next_seg,
                                "next_chunk": self.next_chunk - 1})

    def _listed_segments(self) -> list[list[int]] | None:
        """The segments as ``[segment, its first chunk id, its ints]``, the oldest first; None
        when they are not known: in an index written before segments were listed, or written
        since by such a version (the first flush merges them all, and lists the one)."""
        listed = self._meta("segs")
        if not self.n_segs:
            return []
        if (isinstance(listed, dict) and listed.get("next_seg") == self.next_seg
                and listed.get("next_chunk") == self._meta("next_chunk", 0)
                and len(listed.get("segs") or ()) == self.n_segs):
            return listed["segs"]
        return None

    def _merge_window(self, start: int, end: int) -> None:
        """Rewrite segments ``self._segs[start:end]`` as one, without dead chunks.

        A flush writes the chunks added since the last, so a segment holds the chunk ids
        from its first up to the next segment's first: these segments' chunks are those
        from ``start``'s first to ``end``'s, and their dead entries can go. A term left with
        no postings anywhere and in no chunk goes too (`_drop_unused_terms`)."""
        conn = self.conn
        segs = self._segs
        seg, lo, _ = segs[start]
        numbers = [s for s, _, _ in segs[start:end]]
        hi = segs[end][1] if end < len(segs) else self.next_chunk
        conn.execute(store.POSTINGS_BY_SEGMENT)
        dead = {c for (c,) in conn.execute("SELECT chunk FROM dead WHERE chunk >= ? AND chunk < ?", (lo, hi))}
        emptied: list[int] = []
        if sum(size for _, _, size in segs[start:end]) < MERGE_INTS:
            # A few small segments (as when each document is flushed): one query, which
            # sorts them by term, is quicker than a cursor each, and holds no more. ("+term":
            # by the primary key, SQLite would read every segment's terms.)
            last = numbers[-1]
            read = lambda after: [conn.execute("SELECT term, data FROM postings WHERE seg BETWEEN ? AND ? "
                                               "AND +term > ? ORDER BY term, seg", (seg, last, after))]
            delete = lambda after, upto: conn.execute("DELETE FROM postings WHERE seg BETWEEN ? AND ? "
                                                      "AND +term > ? AND +term <= ?", (seg, last, after, upto))
        else:
            # One cursor per segment, each in term order by the index on seg: one query would
            # sort the whole window, in memory, to read it by term.
            read = lambda after: [conn.execute("SELECT term, data FROM postings WHERE seg = ? AND term > ? "
                                               "ORDER BY term", (s, after)) for s in numbers]
            delete = lambda after, upto: conn.executemany(
                "DELETE FROM postings WHERE seg = ? AND term > ? AND term <= ?", [(s, after, upto) for s in numbers])
        ints = self._merge_in_ranges(read, delete, dead, seg, emptied)
        conn.execute("DELETE FROM dead WHERE chunk >= ? AND chunk < ?", (lo, hi))
        self.n_dead -= len(dead)
        segs[start:end] = [[seg, lo, ints]] if ints else []
        self.n_segs = len(segs)
        if emptied:
            self._drop_unused_terms(emptied)

    def _merge_in_ranges(self, read, delete, dead: set[int], seg: int, emptied: list[int] | None = None) -> int:
        """Rewrite postings as one row per term of segment ``seg``, without the postings of
        ``dead`` chunks, a range of terms at a time; returns the ints written.

        ``read(after)`` gives cursors of (term, posting blob) rows of the terms after
        ``after``, each in term order, the oldest segment's first; ``delete(after, upto)``
        deletes the rows read of the terms in ``(after, upto]``. Each range of about
        `MERGE_INTS` merged ints is read, deleted and written before the next is read, so
        a merge holds one range in memory, not the whole merged segment (the biggest merges
        rewrite the whole index). A term left no postings has no row, and is added to
        ``emptied``."""
        after, written = -(1 << 63), 0
        while True:
            cursors = read(after)
            rows = heapq.merge(*cursors, key=itemgetter(0)) if len(cursors) > 1 else cursors[0]
            merged, ints, upto, rest = _merged_range(rows, dead, seg, emptied)
            for cursor in cursors:
                cursor.close()  # (before writing: they read the table)
            if upto is None:
                return written
            delete(after, upto)
            self.conn.executemany("INSERT INTO postings VALUES(?,?,?)", merged)
            written += ints
            if not rest:
                return written
            after = upto

    def _drop_unused_terms(self, tids: list[int]) -> None:
        """Delete the terms of ``tids`` that no chunk contains and no segment has postings of
        (their last postings were of removed chunks, just merged away): text that changes on
        every save, such as a log's ids, would otherwise grow the vocabulary for ever."""
        unused = self._select_in(
            "SELECT id, term FROM terms WHERE df <= 0 AND NOT EXISTS "
            "(SELECT 1 FROM postings WHERE postings.term = terms.id) AND id IN", tids)
        if not unused:
            return
        self.conn.executemany("DELETE FROM terms WHERE id = ?", [(tid,) for tid, _ in unused])
        if self._vocab is not None:
            for _, term in unused:
                self._vocab.pop(term, None)
        self._raw_ids = {}  # (a memo: some of its words' ids are gone)

    # --- reading ----------------------------------------------------------------------
    def stats(self) -> dict:
        """Counts for the UI and `ragStats()` (reference §5 shape)."""
        self.flush()
        files = [p for (p,) in self.conn.execute("SELECT path FROM files ORDER BY path")]
        avg = self.total_len / self.n_chunks if self.n_chunks else 0.0
        return {"totalDocs": len(files), "totalChunks": self.n_chunks,
                "avgChunkLen": round(avg, 1), "files": files}

    def file_chunks(self, path: str) -> int:
        """How many chunks the indexed file ``path`` has (0: none, or not indexed)."""
        (n,) = self.conn.execute("SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id "
                                 "WHERE f.path=?", (path,)).fetchone()
        return n

    def file_mtime(self, path: str) -> float | None:
        """The recorded modification time of an indexed file, or None."""
        row = self.conn.execute("SELECT mtime FROM files WHERE path=?", (path,)).fetchone()
        return row[0] if row else None

    def file_text(self, path: str) -> str | None:
        """The stored text of an indexed file, or None."""
        row = self.conn.execute("SELECT text FROM files WHERE path=?", (path,)).fetchone()
        return row[0] if row else None

    def idf_of(self, terms: list[str]) -> dict[str, float]:
        """IDF of each indexed term of ``terms`` (absent terms are left out)."""
        self.flush()
        out = {}
        n = self.n_chunks
        for term, df in self._term_rows(terms, with_id=False):
            if df > 0:
                out[term] = bm25_idf(n, df)
        return out

    def related_index_terms(self, terms) -> dict[str, dict[str, float]]:
        """`analysis.related_terms` of ``terms`` among the indexed terms (a term's longer forms:
        the `RELATED_LONGER` most frequent)."""
        self.flush()
        present = {t for t, df in self._term_rows(sorted(analysis.related_candidates(terms)), with_id=False)
                   if df > 0}

        def longer(q):
            return [t for (t,) in self.conn.execute(
                "SELECT term FROM terms WHERE term > ? AND term < ? AND df > 0 ORDER BY df DESC, term LIMIT ?",
                (q, q + "\U0010ffff", RELATED_LONGER))]

        # The bigrams that end with a one-character CJK word: one scan of the vocabulary
        # for all of a question's (no index orders terms by their last character).
        chars = sorted({t for t in terms if analysis.is_cjk_char(t)})
        endings: dict[str, list[str]] = {}
        if chars:
            rows = self._select_in("SELECT term, df FROM terms WHERE length(term) = 2 AND df > 0 "
                                   "AND substr(term, 2) IN", chars)
            for t, _ in sorted(rows, key=lambda r: (-r[1], r[0])):  # the most frequent first
                got = endings.setdefault(t[1], [])
                if len(got) < RELATED_LONGER:
                    got.append(t)
        return analysis.related_terms(terms, present, longer, ending=lambda q: endings.get(q, []))

    def _postings(self, tid: int) -> list[bytes]:
        return [blob for (blob,) in self.conn.execute(
            "SELECT data FROM postings WHERE term=? ORDER BY seg", (tid,))]

    def _term_rows(self, terms, with_id=True):
        cols = "id, term, df" if with_id else "term, df"
        rows = self._select_in(f"SELECT {cols} FROM terms WHERE term IN", terms)
        return sorted(rows, key=lambda r: r[-2])  # by term, as one query's ORDER BY term gave them

    @staticmethod
    def check_options(top_k: int | None = None, path_glob: str | None = None, budget: int | None = None) -> None:
        """Raise `UsageError` for a search or pack option that no question makes right: a
        ``top_k`` below 1, a ``path_glob`` that can match no file, a ``budget`` that is not a
        positive whole number (None: the default). A batch checks them before its questions."""
        if top_k is not None and int(top_k) < 1:
            raise UsageError(f"top_k must be at least 1, got {top_k}")
        if path_glob is not None:
            if not isinstance(path_glob, str) or not path_glob.strip():
                raise UsageError(f"the path glob {quoted(path_glob)} is empty: give one, such as 'src/**/*.py', "
                                 "or leave it out to search every file")
            if path_glob.startswith("!"):
                raise UsageError(f"the path glob {quoted(path_glob)} starts with '!': it names the files to "
                                 "search, and cannot leave files out")
            if problem := glob_problem(path_glob):
                raise UsageError(f"the path glob {quoted(path_glob)} can match no file: it has {problem}")
        if budget is not None and (not isinstance(budget, int) or isinstance(budget, bool) or budget <= 0):
            raise UsageError(f"the token budget must be a positive whole number, got {budget!r}")

    def files_matching(self, path_glob: str) -> list[str]:
        """The indexed paths that ``path_glob`` (a `--path` glob) matches."""
        self.check_options(path_glob=path_glob)
        with self.reading():
            return sorted(self._matching(path_glob).values())

    def _matching(self, path_glob: str) -> dict[int, str]:
        globs = GlobSet([path_glob])  # the same glob rules as file selection
        return {fid: p for fid, p in self.conn.execute("SELECT id, path FROM files") if globs.matches_file(p)}

    def _files_matching(self, path_glob: str) -> set[int]:
        allowed = set(self._matching(path_glob))
        if not allowed:
            raise UsageError(f"no indexed file matches the path glob {quoted(path_glob)}{self.path_glob_hint(path_glob)}")
        return allowed

    def path_glob_hint(self, path_glob: str) -> str:
        """For a path glob that matches no indexed file: ", such as P" naming the indexed
        path most like it, and why it missed when that shows (case, a backslash, anchoring);
        "" for an empty index."""
        import difflib
        with self.reading():
            paths = [row[0] for row in self.conn.execute("SELECT path FROM files ORDER BY path LIMIT 100000")]
        if not paths:
            return ""
        wanted = path_glob.replace("\\", "/").removeprefix("./").lstrip("/")
        # the indexed path most like it: by its name (one comparison per distinct name), then,
        # among the paths of that name, by the whole path
        keys = {p: p.rsplit("/", 1)[-1] for p in paths}
        names: dict[str, list[str]] = {}
        for p in paths:
            names.setdefault(keys[p].lower(), []).append(p)
        base = wanted.rsplit("/", 1)[-1]
        close = difflib.get_close_matches(base.lower(), list(names), n=1, cutoff=0.6)
        close = difflib.get_close_matches(wanted, names[close[0]], n=1, cutoff=0) if close else []
        like = f", such as {close[0] if close else paths[0]}"
        target = (close[0] if "/" in wanted else keys[close[0]]) if close else None  # (what the glob is held to)
        if "\\" in path_glob:
            like += " (with '/' between folders)"
        elif target and target != wanted and target.lower() == wanted.lower():
            like += " (paths are case-sensitive)"
        elif target == wanted and "/" in path_glob and "/" not in wanted:
            like += f" (a glob from '/' or './' names the folder's own file: '**/{wanted}' takes one at any depth)"
        return like

    def search(self, query: str, top_k: int | None = None, mmr: bool = True,
               path_glob: str | None = None, pool: int | None = None,
               mode: str | None = None, repeats: bool = True) -> list[Hit]:
        """The best chunks for ``query``: BM25 + path boost (release notes and change logs
        x ``retrieve.changelog_weight``; pages that gather other pages, such as mdBook's
        print.html, x ``retrieve.aggregate_weight``; license texts, a LICENSE file or a
        manual's license appendix, x ``retrieve.license_weight``), then MMR (see DESIGN.md).

        ``mode``: "bm25"; "semantic" (cosine similarity of embeddings only) or "hybrid"
        (both lists fused by reciprocal rank, `ragweb.embeddings.fuse`), which need an
        `embedder`; None: "hybrid" when there is one and ``retrieve.hybrid_enabled``, else "bm25".
        ``repeats``: leave out a hit whose text repeats a better one's (with MMR; `_repeats`).
        """
        self.embed_ahead(query, mode)
        with self.reading():
            return self._search(query, top_k, mmr, path_glob, pool, mode, repeats)

    def _search(self, query, top_k, mmr, path_glob, pool, mode, repeats) -> list[Hit]:
        if not isinstance(query, str):
            raise UsageError("the question must be text")
        rc = self.config["retrieve"]
        if mode is None:
            mode = self.search_mode()
        if mode not in ("bm25", "semantic", "hybrid"):
            raise UsageError(f"unknown search mode {mode!r}")
        if mode != "bm25" and self.embedder is None:
            raise RagError("vector search needs embeddings: set embedding.enabled: true in rag.yaml "
                           "and run `rag index`")
        self.check_options(top_k, path_glob)
        allowed = None if path_glob is None else self._files_matching(path_glob)
        top_k = rc["top_k"] if top_k is None else int(top_k)
        qterms = self.analyzer.query_terms(query)
        if not qterms and (mode == "bm25" or not query.strip()):  # vectors read any question
            raise EmptyQueryError(
                f"the question {query[:SHOWN_CHARS]!r}{'...' if len(query) > SHOWN_CHARS else ''} has no indexable words "
                "(only stopwords, punctuation "
                "or one-letter words); ask with a few content words")
        self.flush()
        if self.n_chunks == 0:
            return []
        k1, b = self.config["index"]["k1"], self.config["index"]["b"]
        n = self.n_chunks
        avgdl = self.total_len / n if n else 1.0
        dead = ({c for (c,) in self.conn.execute("SELECT chunk FROM dead")} if self.n_dead else None)
        scores: dict[int, float] = {}
        idfs: dict[str, float] = {}
        term_of: dict[int, str] = {}
        k1p1 = k1 + 1.0
        norm_a = k1 * (1.0 - b)
        norm_b = k1 * b / avgdl if avgdl else 0.0
        pool = pool or max(top_k * 4, 50)
        weighted = []  # (idf x (k1 + 1) x match strength, posting blobs) per term searched for
        for tid, term, df in self._term_rows(qterms):
            if df <= 0:
                continue
            idf = idfs[term] = bm25_idf(n, df)
            term_of[tid] = term
            if mode == "semantic":  # no BM25 scores; the matched terms are still reported
                continue
            weighted.append((idf * k1p1, self._postings(tid)))
        # (a one-character CJK word is also looked for in the bigrams that hold it)
        absent = [t for t in qterms if t not in idfs or analysis.is_cjk_char(t)]
        if absent and mode != "semantic":
            # a question word the index never saw is looked for in its related forms
            strength: dict[str, float] = {}
            for rel in self.related_index_terms(absent).values():
                for t, m in rel.items():
                    strength[t] = max(strength.get(t, 0.0), m)
            for tid, term, df in self._term_rows(sorted(strength.keys() - idfs.keys())):
                term_of[tid] = term
                weighted.append((bm25_idf(n, df) * strength[term] * k1p1, self._postings(tid)))
        if COMPOUND_MATCH and mode != "semantic":
            # two question words the index holds as one ("back off": "backoff")
            joined = sorted(self.analyzer.compound_terms(query).keys() - term_of.values())
            for tid, term, df in self._term_rows(joined):
                if df > 0:
                    term_of[tid] = term
                    weighted.append((bm25_idf(n, df) * COMPOUND_MATCH * k1p1, self._postings(tid)))
        # numpy, when installed (`accel`), scores a BM25-only search over every chunk at
        # once and cuts the pool itself; the same arithmetic in the same order gives the
        # same floats
        postings = sum(len(blob) for _, blobs in weighted for blob in blobs) // 12
        np = accel.numpy(postings) if mode == "bm25" and not path_glob else None
        if np is not None:
            total = np.zeros(self.next_chunk + 1)
            for w, blobs in weighted:
                arr = np.frombuffer(b"".join(blobs), dtype="<i4").reshape(-1, 3)
                tf = arr[:, 1].astype(np.float64)
                total += np.bincount(arr[:, 0], w * tf / (tf + norm_a + norm_b * arr[:, 2]), len(total))
            scores = _pool_scores(np, total, dead, pool)
        else:
            get = scores.get
            for w, blobs in weighted:
                for blob in blobs:
                    arr = store.blob_to_ints(blob)
                    parts = [w * tf / (tf + norm_a + norm_b * ln) for tf, ln in zip(arr[1::3], arr[2::3])]
                    if not scores and not dead:  # (a chunk is in one posting blob of a term once)
                        scores = dict(zip(arr[0::3], parts))
                        get = scores.get
                        continue
                    for c, v in zip(arr[0::3], parts):
                        if dead and c in dead:
                            continue
                        scores[c] = get(c, 0.0) + v
        vector = self._vector_scores(query, mode == "semantic") if mode != "bm25" else {}
        if not scores and not vector:
            return []
        if allowed is not None:
            file_of = dict(self._chunk_files(list(scores.keys() | vector.keys())))
            scores = {c: s for c, s in scores.items() if file_of.get(c) in allowed}
            vector = {c: s for c, s in vector.items() if file_of.get(c) in allowed}
        if mode == "semantic":
            final = vector
        elif mode == "hybrid":
            from ragweb.embeddings import fuse
            final = fuse(scores, vector, rc["rrf_k"], rc["bm25_weight"])
        else:
            final = scores
        boost_w = rc["path_boost_weight"] if mode == "bm25" else 0.0
        changelog_w, aggregate_w = rc["changelog_weight"], rc["aggregate_weight"]
        license_w = license_weight(self.analyzer, qterms, rc["license_weight"])  # (1 when the question is of the license)

        def weighed(path: str, score: float, heading: str = "") -> tuple[float, float]:
            """(``score`` -- BM25, or a fused or vector score -- with the path's boost and
            weights and the license weight of a chunk under ``heading``, the boost)."""
            known = self._paths.get(path)
            if known is None:
                named = self.weighed_path(path)
                known = self._paths[path] = (frozenset(self.analyzer.term_counts(named)), changelog_path(named),
                                             aggregate_path(named), license_path(named))
            pterms, is_log, is_aggregate, is_license = known
            boost = boost_w * sum(v for t, v in idfs.items() if t in pterms) if boost_w and idfs else 0.0
            if mode == "bm25":
                score += boost
            if is_log or is_aggregate:  # pages that say again what other pages say
                score *= (changelog_w if is_log else 1.0) * (aggregate_w if is_aggregate else 1.0)
            if license_w != 1.0 and (is_license or license_title(heading)):  # (words of the law, not of the software)
                score *= license_w
            return score, boost

        if len(final) > pool:
            # Keep ties at the cut too, so results never depend on chunk ids.
            cut = sorted(final.values(), reverse=True)[pool - 1]
            best = [c for c, v in final.items() if v >= cut]
            if len(best) > TIES_KEPT * pool:
                # thousands of files of one text (stubs, a header): those tied at the cut are
                # taken best first as their paths weigh them, then in path order, still not by
                # chunk id (the rows of all of them were read, and ranked, for every question)
                above = [c for c in best if final[c] > cut]
                tied = self._select_in("SELECT c.id, f.path, c.start_line FROM chunks c JOIN files f "
                                       "ON f.id = c.file_id WHERE c.id IN", [c for c in best if final[c] == cut])
                tied.sort(key=lambda row: (-weighed(row[1], cut)[0], row[1], row[2]))
                best = above + [row[0] for row in tied[:max(0, TIES_KEPT * pool - len(above))]]
        else:
            best = list(final)
        rows = self._chunk_rows(best)
        cands = []  # (hit, blob of the chunk's distinct term ids)
        for cid, fid, start, end, cs, ce, heading, blob, path, mtime in rows:
            bm = scores.get(cid, 0.0)
            score, boost = weighed(path, bm if mode == "bm25" else final[cid], heading)
            cands.append((Hit(path, start, end, score, "", heading, [], bm, boost, cid, fid, cs, ce, mtime), blob))
        threshold = rc["min_score_threshold"]
        if threshold > 0:  # (0 drops none: a cosine similarity, --semantic's score, can be below 0)
            cands = [hc for hc in cands if hc[0].score >= threshold]
        cands.sort(key=lambda hc: (-hc[0].score, hc[0].path, hc[0].start_line, hc[0].col_start or 0))
        # term-id sets are made only for the candidates MMR looks at
        sets = _Cached(lambda i: frozenset(store.blob_to_ints(cands[i][1])))
        if mmr:
            order = mmr_select([h.score for h, _ in cands], sets, top_k, rc["mmr_lambda"], rc["dedup_jaccard"],
                               self._repeats([h for h, _ in cands]) if repeats else None, REPEAT_TERMS)
        else:
            order = range(min(top_k, len(cands)))
        hits = []
        for i in order:
            hit, ids = cands[i][0], sets[i]
            hit.terms = sorted(term for t, term in term_of.items() if t in ids)
            hits.append(hit)
        self.fill_text([h for h in hits if not h.text])  # (`_repeats` read some already)
        return hits

    def _repeats(self, hits: list[Hit]):
        """`mmr_select`'s ``repeats`` for ``hits``: hit i repeats hit j when most of its word
        runs (`REPEAT_SHARE` of its `shingles`) are in j's text (a page's twin in another
        format, a paragraph copied onto several pages). `mmr_select` asks only of pairs where
        j has `REPEAT_TERMS` of i's terms, which such a repeat implies, so few texts are read."""
        cache: dict[int, frozenset] = {}

        def runs(i: int) -> frozenset:
            got = cache.get(i)
            if got is None:
                if not hits[i].text:  # with the next few, which MMR is likely to look at too
                    self.fill_text([h for h in hits[i:i + 8] if not h.text])
                got = cache[i] = shingles(hits[i].text)
            return got

        def repeats(i: int, j: int) -> bool:
            return contained(runs(i), runs(j)) >= REPEAT_SHARE
        return repeats

    def embed_ahead(self, query, mode: str | None = None) -> None:
        """Ask the embedding service for ``query``'s vector now, before a read of the index
        begins, when a search in ``mode`` (None: `search_mode`) will want it: the embedder
        keeps it for the search, and a slow service does not hold a read snapshot open
        meanwhile (SQLite's log cannot start over while one is, and grew beside `rag index`
        runs). Nothing is asked when the index has no vectors of this model."""
        mode = self.search_mode() if mode is None else mode
        if self.embedder is None or mode == "bm25" or not isinstance(query, str):
            return
        if self._loaded_vectors(mode == "semantic") is not None:
            self.embedder.embed_query(query)

    def _loaded_vectors(self, needed: bool):
        """(ids, vectors, matrix) of the index's embeddings of the configured model, or None
        when there are none (an error when ``needed``)."""
        from ragweb import embeddings
        if self._vectors is None:  # checked and loaded once per engine (writes drop the cache)
            signature = self._meta("embedding")
            if signature is not None and signature != self.embedder.signature:
                if not needed:
                    return None  # (vectors of another model are no use: BM25 alone, as the CLI says)
                raise RagError(f"the index's embeddings were made by {embeddings.described(signature)}, the "
                               f"config asks for {embeddings.described(self.embedder.signature)}: run `rag index` "
                               "to make them again")
            ids, vectors = embeddings.load_vectors(self)
            self._vectors = ids, vectors, embeddings.vector_matrix(vectors)
        if not self._vectors[0]:
            if not needed:
                return None
            raise RagError("the index has no embeddings yet: run `rag index` with embedding.enabled: true")
        return self._vectors

    def _vector_scores(self, query: str, needed: bool) -> dict[int, float]:
        """chunk id -> cosine similarity of its embedding with the question's; with no
        embeddings of the configured model in the index, an error when ``needed``, else none
        (hybrid search then ranks by BM25 alone, and the CLI has said why)."""
        from ragweb import embeddings
        loaded = self._loaded_vectors(needed)
        if loaded is None:
            return {}
        ids, vectors, matrix = loaded
        return dict(zip(ids, embeddings.similarities(self.embedder.embed_query(query), vectors, matrix)))

    def search_mode(self) -> str:
        """The mode `search` ranks by when not told: "hybrid" with an `embedder` and
        ``retrieve.hybrid_enabled``, else "bm25"."""
        return "hybrid" if self.embedder is not None and self.config["retrieve"]["hybrid_enabled"] else "bm25"

    def drop_vector_cache(self) -> None:
        """Forget the loaded vectors (after `ragweb.embeddings.embed_missing` wrote some)."""
        self._vectors = None

    def chunk_texts(self, ids) -> dict[int, str]:
        """chunk id -> the text an embedding is made of: its heading line and its text (an
        HTML page's visible text)."""
        hits = [Hit(path, start, end, 0.0, "", heading, [], 0.0, 0.0, cid, fid, cs, ce, mtime)
                for cid, fid, start, end, cs, ce, heading, _, path, mtime in self._chunk_rows(ids)]
        self.fill_text(hits)
        return {h.chunk_id: f"{h.heading}\n{h.text}" if h.heading else h.text for h in hits}

    def _select_in(self, sql: str, ids) -> list[tuple]:
        """Rows of ``sql`` (which ends in ``IN``) for ``ids``, in batches under SQLite's variable limit."""
        ids = list(ids)
        out = []
        for i in range(0, len(ids), 900):
            part = ids[i:i + 900]
            out += self.conn.execute(f"{sql} ({','.join('?' * len(part))})", part).fetchall()
        return out

    def file_chunk_ids(self, file_ids) -> dict[int, int]:
        """chunk id -> file id for every chunk of the given files."""
        self.flush()
        return dict(self._select_in("SELECT id, file_id FROM chunks WHERE file_id IN", sorted(set(file_ids))))

    def term_chunk_ids(self, terms) -> dict[str, set[int]]:
        """term -> ids of the chunks containing it, for the given terms only (their postings).

        May include removed chunks not yet merged away; intersect with live chunk ids."""
        self.flush()
        out: dict[str, set[int]] = {}
        for tid, term, _ in self._term_rows(sorted(set(terms))):
            ids: set[int] = set()
            for blob in self._postings(tid):
                ids.update(store.blob_to_ints(blob)[0::3])
            out[term] = ids
        return out

    def _chunk_files(self, ids):
        return self._select_in("SELECT id, file_id FROM chunks WHERE id IN", ids)

    def _chunk_rows(self, ids):
        return self._select_in(
            "SELECT c.id, c.file_id, c.start_line, c.end_line, c.col_start, c.col_end, c.heading, "
            "c.terms, f.path, f.mtime FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN", ids)

    def file_lines(self, file_ids) -> dict[int, list[str]]:
        """file id -> stored lines, for the given files (the lists are shared: read only).

        Kept for later packs, with what is made from them (outline, an HTML page's views),
        for at most `FILE_CACHE` files of `FILE_CACHE_CHARS` characters: the files used
        least recently are dropped first (pages every question of a topic reads stay)."""
        ids = set(file_ids)
        cache = self._lines  # (in order of use: the least recent first)
        out = {}
        for fid in ids & cache.keys():
            out[fid] = cache[fid] = cache.pop(fid)
        missing = sorted(ids - out.keys())
        if missing:
            rows = self._select_in("SELECT id, text FROM files WHERE id IN", missing)
            size = sum(len(text) for _, text in rows)
            old = iter([fid for fid in cache if fid not in ids])
            while len(cache) + len(rows) > FILE_CACHE or self._lines_size + size > FILE_CACHE_CHARS:
                fid = next(old, None)
                if fid is None:
                    break
                self._forget_file(fid, keep_outline=True)
            for fid, text in rows:
                out[fid] = cache[fid] = split_lines(text)
                self._lines_chars[fid] = len(text)
            self._lines_size += size
        return out

    def _forget_file(self, file_id: int, keep_outline: bool = False) -> None:
        """Drop what the file caches hold of one file (but its outline, small and slow to
        make again, when ``keep_outline``: it is dropped when the file changes)."""
        if not keep_outline:
            self._outlines.pop(file_id, None)
        self._views.pop(file_id, None)
        self._shown.pop(file_id, None)
        if self._lines.pop(file_id, None) is not None:
            self._lines_size -= self._lines_chars.pop(file_id)

    def reads_shown(self, path: str) -> bool:
        """True when ``path`` is a document this index reads through its view (`file_view`):
        an HTML page, a POD document, a man page or an Info file (`ingest.reads_shown`)."""
        return ingest.reads_shown(path, self.settings)

    def is_prose(self, path: str) -> bool:
        """True for a file read as prose (Markdown-like text, a document read as shown); False
        for a program."""
        return ingest.is_prose(path, self.settings)

    def file_view(self, file_id: int, path: str, lines: list[str]) -> list[str]:
        """The lines compaction reads for a file: a page's view (an HTML page's, POD
        document's, man page's or Info file's, `reads_shown`: same lines, same columns, the
        markup blanked), any other file's as stored."""
        return self._html_lines(file_id, path, lines, 0) if self.reads_shown(path) else lines

    def file_shown(self, file_id: int, path: str, lines: list[str]) -> list[str] | None:
        """A page's shown lines (`markup.show_page`: what hits and packs show of a span is
        its `markup.visible` text); None for any other file, shown as stored."""
        return self._html_lines(file_id, path, lines, 1) if self.reads_shown(path) else None

    def file_visible(self, file_id: int, path: str, lines: list[str]) -> list[str]:
        """The lines hits and packs show of a file: a page's visible lines (markup dropped,
        `markup.visible`), any other file's stored lines."""
        return self._html_lines(file_id, path, lines, 2) if self.reads_shown(path) else lines

    def _html_lines(self, file_id: int, path: str, lines: list[str], part: int):
        """Part ``part`` of a page's lines (`reads_shown`): 0 its view, 1 its shown lines, 2
        its visible lines, 3 the set of its code lines (`markup.code_lines`: an HTML page's
        ``<pre>``, a POD document's verbatim paragraphs, a man page's ``.nf`` blocks); each
        made when first asked for."""
        views = self._views.get(file_id)
        if views is None:
            if len(self._views) >= FILE_CACHE:
                self._views.clear()
            views = self._views[file_id] = [None, None, None, None]
        got = views[part]
        if got is None:
            n = len(lines)  # (a text's last line break ends a line: it starts none)
            if part == 3:
                got = code_lines(path, "\n".join(lines))
            else:
                shown = self.shown_text(file_id, path)
                # (`visible` works line by line, so the whole text's is its lines', joined)
                text = shown.replace(FILL, " ") if part == 0 else shown if part == 1 else visible(shown)
                got = text.split("\n")[:n]
            views[part] = got
        return got

    def shown_text(self, file_id: int, path: str) -> str:
        """A page's shown text (`reads_shown`; `markup.show_page`, same offsets as the
        stored text): as kept when it was indexed, else read again (an index written
        before it was kept)."""
        shown = self._shown.get(file_id)
        if shown is None:
            shown = store.get_shown(self.conn, file_id)
            if shown is None:
                shown = show_page(path, "\n".join(self.file_lines([file_id])[file_id]))
            if (len(self._shown) >= FILE_CACHE
                    or sum(map(len, self._shown.values())) + len(shown) > FILE_CACHE_CHARS):
                self._shown.clear()
            self._shown[file_id] = shown
        return shown

    def file_outline(self, file_id: int, lines: list[str], markdown: bool, path: str = "") -> Outline:
        """The `chunking.outline` of a file's ``lines`` (`chunking.code_outline` of a program;
        for an HTML page its view's, with the lines of its ``<pre>`` elements as code; an
        AsciiDoc file's as AsciiDoc, `chunking.is_asciidoc`),
        cached per file until the file is replaced or removed."""
        ol = self._outlines.get(file_id)
        if ol is None:
            if len(self._outlines) >= OUTLINE_CACHE:  # the least recently made first
                del self._outlines[next(iter(self._outlines))]
            page = None
            if self.reads_shown(path):
                stored = self.file_lines([file_id])[file_id]
                page = PageLines(stored, self._html_lines(file_id, path, stored, 1),
                                 self._html_lines(file_id, path, stored, 3))
            asciidoc = markdown and page is None and is_asciidoc(path, lines)
            literal = markdown and page is None and indented_is_literal(path)
            ol = outline(lines, markdown, page, asciidoc, literal) if markdown else code_outline(lines)
            if page is not None and not markdown:
                ol.code |= page.pre
            self._outlines[file_id] = ol
        return ol

    def fill_text(self, hits: list[Hit]) -> None:
        """Set each hit's text to exactly its stored lines (or its piece of one long line);
        a page's hit (`reads_shown`) gets the visible text of that span (`file_shown`)."""
        pages = {h.chunk_id for h in hits if self.reads_shown(h.path)}
        rows = self._select_in(
            "SELECT c.id, c.char_start, c.char_end, substr(f.text, c.char_start + 1, c.char_end - c.char_start) "
            "FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN", [h.chunk_id for h in hits])
        spans = {cid: (a, b, text) for cid, a, b, text in rows}
        for h in hits:
            a, b, h.text = spans[h.chunk_id]
            if h.chunk_id in pages:  # the same span of the shown text: what a reader sees of it
                h.text = readable(visible(self.shown_text(h.file_id, h.path)[a:b]))
                h.visible = True

    def widen(self, hit: Hit, context: int) -> Hit:
        """A copy of ``hit`` widened by ``context`` lines before and after (from the stored
        text; an HTML page's visible text). A piece of one over-long line is returned as it
        is: lines around it would not be next to it, and the whole line is what was cut."""
        if hit.col_start is not None:
            return hit
        lines = self.file_lines([hit.file_id])[hit.file_id]
        lines = self.file_visible(hit.file_id, hit.path, lines)
        start = max(1, hit.start_line - context)
        end = min(len(lines), hit.end_line + context)
        text = "\n".join(lines[start - 1:end])
        return Hit(hit.path, start, end, hit.score, readable(text) if hit.visible else text, hit.heading,
                   hit.terms, hit.bm25, hit.path_boost, hit.chunk_id, hit.file_id, mtime=hit.mtime,
                   visible=hit.visible)

    def pack(self, query: str, budget: int | None = None, top_k: int | None = None,
             path_glob: str | None = None, compact: bool | None = None, lean: bool | None = None) -> dict:
        """The packed-context dict for ``query`` within ``budget`` tokens (reference §4)."""
        from ragweb.pack import pack_context
        # Compaction makes tens of thousands of small objects on a big file, and none of them
        # forms a cycle: the cyclic collector, which scans them all as they pile up, is
        # paused meanwhile (a pack over 1 MB of Markdown in long paragraphs: 1.27 s -> 0.86 s).
        self.embed_ahead(query)
        paused = gc.isenabled()
        gc.disable()
        try:
            with self.reading():
                return pack_context(self, query, budget=budget, top_k=top_k, path_glob=path_glob,
                                    compact=compact, lean=lean)
        finally:
            if paused:
                gc.enable()


class _Cached:
    """``make(i)`` by index, each made once, when first asked for."""

    def __init__(self, make):
        self._make, self._got = make, {}

    def __getitem__(self, i):
        got = self._got.get(i)
        if got is None:
            got = self._got[i] = self._make(i)
        return got


def _pool_scores(np, total, dead: set[int] | None, pool: int) -> dict[int, float]:
    """chunk id -> score of the best ``pool`` chunks of ``total`` (a score per chunk id; 0:
    no question term) and every chunk tied with the last of them; ``dead`` chunks left out."""
    if dead:
        total[np.fromiter(dead, dtype=np.int64)] = 0.0
    ids = np.flatnonzero(total > 0.0)
    vals = total[ids]
    if len(ids) > pool:
        cut = np.partition(vals, len(vals) - pool)[len(vals) - pool]
        keep = vals >= cut
        ids, vals = ids[keep], vals[keep]
    return dict(zip(ids.tolist(), vals.tolist()))


def _window_to_merge(sizes: list[int]) -> tuple[int, int] | None:
    """The segments to merge as one, ``(start, end)`` indexes into ``sizes`` (the segments'
    sizes, oldest first), or None to merge none.

    Segments are levelled by size, a level per `MERGE_FACTOR` times bigger (as Lucene's
    log merge policy does). From the oldest, the segments up to the last one within a
    level of the biggest left form a group (so small segments written before a big one
    join its group), and `MERGE_FACTOR` segments of a group are merged. A posting is
    rewritten about once per level, so indexing N postings costs N log N however often
    it is flushed (merging every segment every few flushes cost N² when each document was
    flushed on its own), and there are at most about `MERGE_FACTOR` segments per level."""
    levels = [math.log(max(size, 1), MERGE_FACTOR) for size in sizes]
    start = 0
    while start < len(levels):
        top = max(levels[start:]) - 0.75
        end = max(i for i in range(start, len(levels)) if levels[i] >= top) + 1
        if end - start >= MERGE_FACTOR:
            return start, start + MERGE_FACTOR
        start = end
    return None


def _merged_range(rows, dead: set[int], seg: int, emptied: list[int] | None):
    """The first range of ``rows`` (term, posting blob), by term then segment, as one row
    per term of segment ``seg`` without the postings of ``dead`` chunks: the terms up to
    the one that brings them to `MERGE_INTS` ints (a term left none has no row, and is
    added to ``emptied``). Returns those rows, their ints, the range's last term (None: no
    rows) and whether rows of more terms follow."""
    merged, ints = [], 0
    cur_term, cur = None, None
    for tid, blob in rows:
        if tid != cur_term:
            if cur:
                merged.append((cur_term, seg, store.ints_to_blob(cur)))
                ints += len(cur)
                if ints >= MERGE_INTS:
                    return merged, ints, cur_term, True
            elif cur is not None and emptied is not None:
                emptied.append(cur_term)
            cur_term, cur = tid, array("i")
        arr = store.blob_to_ints(blob)
        cur.extend(_drop_dead(arr, dead) if dead else arr)
    if cur:
        merged.append((cur_term, seg, store.ints_to_blob(cur)))
        ints += len(cur)
    elif cur is not None and emptied is not None:
        emptied.append(cur_term)
    return merged, ints, cur_term, False


def _drop_dead(arr: array, dead: set[int]) -> array:
    """The (chunk, tf, len) triples of ``arr`` whose chunk is not in ``dead``."""
    if dead.isdisjoint(arr[0::3]):
        return arr
    out = array("i")
    it = iter(arr)
    for c, tf, ln in zip(it, it, it):
        if c not in dead:
            out.extend((c, tf, ln))
    return out

"""Indexing a directory tree into ROOT/.rag/index.db, incrementally, in one transaction.

Unchanged files (same mtime and size, else same content hash) are skipped, changed files
are replaced, deleted ones removed. The whole run is one SQLite transaction: an
interrupted run leaves the previous index as it was.
"""

from __future__ import annotations

import bisect
import errno
import gc
import hashlib
import logging
import os
import shlex
import sqlite3
import signal
import sys
import time
from collections import deque
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ragweb import ingest, signals, store
from ragweb.analysis import Analyzer
from ragweb.config import never_indexed
from ragweb.engine import NEWER_VERSION, Engine
from ragweb.errors import IndexReadOnlyError, Interrupted, RagError
from ragweb.files import (BROKEN_LINK, DECODER_VERSION, GONE, LEGACY_REASON, NOT_REGULAR, PACKED_REASON,
                          AtomicWrite, FileEntry, GlobSet, LeftOut, compressed, is_left_out_note, is_link_note,
                          iter_files, packed_context_reason, read_regular, read_text_file, still_selected)

INDEX_DIR = ".rag"
INDEX_FILE = "index.db"
UNREAD_IDENT = "unread"  # `Engine.file_idents` of a file kept, not read, by the last run: no real one
WRITER_WAIT_SECONDS = store.LOCK_WAIT_SECONDS  # how long a second `rag index` waits for the first one
# A file whose modification time is this close to the last run's scan (or later) may have
# been written again within one tick of a coarse clock (FAT keeps 2 s) after that run read
# it, with the same size: its text is compared, not only its time and size (git's "racy" files).
RACY_SECONDS = 2.0
log = logging.getLogger("ragweb.index")


OUTPUTS_FILE = "outputs"  # ROOT/.rag/outputs: files `rag pack -o` wrote under ROOT, one path a line


def index_path(root: str | Path) -> Path:
    """Where the index of ``root`` lives."""
    return Path(root) / INDEX_DIR / INDEX_FILE


OUTPUTS_MAX_BYTES = 10_000_000


def pack_outputs(root: str | Path) -> set[str]:
    """The paths (relative, ``/``-separated) of the files `rag pack -o` wrote under ``root``.
    They are not indexed: a packed context repeats the text of the files it cites, and
    indexing it would make every later answer cite the copy. (A pack is also known by its
    text, `files.packed_context_reason`; this list covers one being written, or edited out of
    its shape.)"""
    path = Path(root) / INDEX_DIR / OUTPUTS_FILE
    try:
        text = read_regular(path, OUTPUTS_MAX_BYTES).decode("utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return set()
    except OSError as e:  # (a file edited by hand: a folder, a pipe, something huge)
        raise RagError(f"cannot read {path} ({e.strerror or e}); it lists the files `rag pack -o` "
                       "wrote, which are not indexed: fix it or delete it") from None
    return {line for line in text.split("\n") if line}


def note_pack_output(root: str | Path, output: str | Path) -> list[Path]:
    """Record ``output`` in the ``.rag/outputs`` of every indexed folder it lies under (the
    root of the index the pack came from, and any root nested in it or above it), as each
    one's walk will see it: the path as written (through a symlinked folder, or a link to a
    file elsewhere) and the real path. Written atomically. A failure to write another
    folder's list (someone else's index, read-only) is not an error: those folders are
    returned."""
    seen, failed = set(), []
    own = {os.path.abspath(root), os.path.realpath(root)}
    for form in (os.path.abspath(output), os.path.realpath(output)):
        for folder in Path(form).parents:
            rel = Path(form).relative_to(folder).as_posix()
            if (folder / INDEX_DIR).is_dir() and (folder, rel) not in seen:
                seen.add((folder, rel))
                try:
                    _note_output(folder, rel)
                except (RagError, OSError):
                    if str(folder) in own:
                        raise
                    failed.append(folder)
    return failed


def forget_outputs(folder: Path, gone: list[str]) -> None:
    """Take ``gone`` (files `rag pack -o` wrote that are no longer there) off ``folder``'s
    ``.rag/outputs``: a file of the user's written there later is theirs, and was left out of
    the index for good without a word. Not an error when the list cannot be written."""
    known = pack_outputs(folder)
    if known & set(gone):
        try:
            with AtomicWrite(folder / INDEX_DIR / OUTPUTS_FILE) as f:
                f.write("".join(f"{p}\n" for p in sorted(known - set(gone))))
        except OSError:
            pass  # (the next run tries again)


def _note_output(folder: Path, rel: str) -> None:
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:  # (a name that is not UTF-8 is never indexed anyway)
        return
    if never_indexed(rel):  # (never indexed anyway)
        return
    known = pack_outputs(folder)
    if rel not in known:
        _remove_stale_temps(folder / INDEX_DIR)
        with AtomicWrite(folder / INDEX_DIR / OUTPUTS_FILE) as f:
            f.write("".join(f"{p}\n" for p in sorted(known | {rel})))


def _output_files(root: str | Path, outputs: set[str]) -> dict[str, set[str]]:
    """The real paths of the files `rag pack -o` wrote, by the name of the real file: the walk
    may reach one by another path (a symlinked folder inside the root that leads to where it
    was written, a link to it under another name)."""
    found: dict[str, set[str]] = {}
    for rel in outputs:
        real = os.path.realpath(os.path.join(root, rel))
        found.setdefault(os.path.basename(real), set()).add(real)
    return found


def _is_output(entry: FileEntry, output_files: dict[str, set[str]]) -> bool:
    if not (entry.link or entry.path.rsplit("/", 1)[-1] in output_files):  # (no path resolved for most files)
        return False
    real = os.path.realpath(entry.abspath)
    return real in output_files.get(os.path.basename(real), ())


@dataclass
class Changes:
    """How the tree differs from the index, by mtime and size only (cheap)."""

    new: list[FileEntry] = field(default_factory=list)
    changed: list[FileEntry] = field(default_factory=list)
    reread: list[FileEntry] = field(default_factory=list)  # unchanged, but a newer decoder reads them otherwise
    unchanged: list[FileEntry] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # indexed, not read: under something unreadable this time
    gone_skipped: list[str] = field(default_factory=list)  # skipped before, no longer there
    gone_outputs: list[str] = field(default_factory=list)  # in .rag/outputs, no longer there
    problems: list[tuple[str, str]] = field(default_factory=list)
    left_out: LeftOut = field(default_factory=LeftOut)
    idents: dict[str, str] = field(default_factory=dict)  # `Engine.file_idents` when scanned

    @property
    def any(self) -> bool:
        return bool(self.new or self.changed or self.reread or self.deleted)

    def describe(self, limit: int = 10) -> list[str]:
        lines = [f"  new      {e.path}" for e in self.new]
        lines += [f"  changed  {e.path}" for e in self.changed]
        lines += [f"  re-read  {e.path} (this version decodes it otherwise)" for e in self.reread]
        lines += [f"  deleted  {p}" for p in self.deleted]
        if len(lines) > limit:
            lines = lines[:limit] + [f"  ... and {len(lines) - limit} more"]
        return lines


def scan_changes(engine: Engine, root: str | Path, config: dict,
                 use_gitignore: bool | None = None, decoding: bool = False,
                 also_held: set[str] | frozenset[str] = frozenset()) -> Changes:
    """Compare the files selected under ``root`` with what ``engine`` holds.

    ``also_held``: the paths (indexed or skipped) of the index a `rag index --rebuild`
    replaces, which ``engine``, the new one, does not hold yet: those under something
    unreadable this run are listed in ``kept``, as the engine's own would be.

    With ``decoding`` (what `rag index` asks; a query does not pay for these reads): when an
    older decoder read the index (`Engine.decoded_by`), an unchanged file that is not UTF-8
    is decoded again, and listed in ``reread`` when its text is not the stored one, as is
    one whose stored text is a packed context (`_indexed_packs`); and a file whose time and
    size are unchanged but whose time is close to the last run's scan (`RACY_SECONDS`) has
    its text compared, and is listed in ``changed`` when it differs. So has one that is not
    the file the last run read (`Engine.file_idents`: a link that points elsewhere, two files
    of one time and size swapped). Not at a query's scan, which records nothing: after a
    `chmod -R` or a copy of the tree (every file's status or inode new), each query would
    read every file again until the next `rag index`."""
    ix = config["index"]
    older = decoding and engine.decoded_by() < DECODER_VERSION
    beyond = engine.paths_beyond_ascii() if older else set()
    packs = _indexed_packs(engine) if older else set()
    if use_gitignore is None:
        use_gitignore = ix["gitignore"]
    states = engine.file_states()
    skipped = engine.skipped_states()
    scanned = engine.scanned_at() if decoding else None
    racy_since = None if scanned is None else scanned - RACY_SECONDS
    same_limit = engine.size_limit() == ix["max_file_bytes"]
    out = Changes()
    idents = out.idents = engine.file_idents() if decoding else {}
    seen = set()
    outputs = pack_outputs(root)
    output_files = _output_files(root, outputs)
    for entry in iter_files(root, ix["includes"], ix["excludes"], use_gitignore, out.problems, out.left_out):
        if entry.path in outputs or _is_output(entry, output_files):  # (the walk leaves out `never_indexed`)
            continue
        seen.add(entry.path)
        old = states.get(entry.path) or skipped.get(entry.path)
        if old is None:
            out.new.append(entry)
        elif (old[0] == entry.mtime and old[1] == entry.size
              and not _refused_by_older_decoder(old[2])  # (a skipped file's reason; else a hash)
              # (the limit may have moved; a .gz file's is on its uncompressed size, which
              # only reading it again tells)
              and (same_limit if compressed(entry.path) else _too_large(old[2]) == (entry.size > ix["max_file_bytes"]))):
            if entry.path in packs or (entry.path in beyond and _reads_otherwise(entry, old[2], ix["max_file_bytes"])):
                out.reread.append(entry)
            elif (((racy_since is not None and entry.mtime >= racy_since)
                   or idents.get(entry.path, entry.ident) != entry.ident)
                    and (_text_differs(entry, old[2], ix["max_file_bytes"]) if entry.path in states
                         else _skip_differs(entry, old[2], ix["max_file_bytes"]))):
                out.changed.append(entry)
            else:
                out.unchanged.append(entry)
        else:
            out.changed.append(entry)
    # A symlink whose target is gone, the index holding files under it: a folder's link (a
    # share, a drive that is not there this time), unreadable like the folder itself.
    indexed = sorted({*states, *skipped, *also_held, *outputs}) if out.left_out.dangling else []
    for link in out.left_out.dangling:
        at = bisect.bisect_left(indexed, link + "/")
        if at < len(indexed) and indexed[at].startswith(link + "/"):
            out.problems.append((link, BROKEN_LINK))
    # A file or folder that is there but could not be read this time (permissions, a
    # network share gone away, a broken link) keeps what was indexed of it: the next run tries again.
    # (but not what the config's globs no longer take: a folder excluded while it cannot be read)
    unreadable = [path for path, message in out.problems if message.startswith("unreadable")]
    includes, excludes = GlobSet(ix["includes"]), GlobSet(ix["excludes"])

    def kept(p: str) -> bool:
        return (any(p == u or p.startswith(u + "/") or u == "." for u in unreadable)
                and still_selected(includes, excludes, p))
    out.kept = sorted(p for p in {*states, *skipped, *also_held} if p not in seen and kept(p)) if unreadable else []
    out.deleted = sorted(p for p in states if p not in seen and not kept(p))
    out.gone_skipped = sorted(p for p in skipped if p not in seen and not kept(p))
    out.gone_outputs = sorted(p for p in outputs if not os.path.lexists(os.path.join(root, p)) and not kept(p))
    return out


def _indexed_packs(engine: Engine) -> set[str]:
    """Paths of the indexed files whose text is a packed context (`files.packed_context_reason`),
    which a version before `DECODER_VERSION` 3 indexed when `.rag/outputs` did not name them."""
    return {p for p, t in engine.conn.execute("SELECT path, text FROM files") if packed_context_reason(t)}


def _reads_otherwise(entry: FileEntry, sha: str, max_bytes: int) -> bool:
    """Whether this version reads ``entry`` into another text than the one whose hash is
    ``sha``: never for a UTF-8 file (checked first, cheaply), else decoded again."""
    try:
        read_regular(entry.abspath, max_bytes).decode("utf-8")  # (a pipe put in its place cannot hang it)
        return False
    except UnicodeDecodeError:
        pass
    except OSError:
        return False  # unreadable now: the run's own read reports it when the file changes
    return _text_differs(entry, sha, max_bytes)


def _text_differs(entry: FileEntry, sha: str, max_bytes: int) -> bool:
    """Whether ``entry`` reads into another text than the one whose hash is ``sha``."""
    try:
        text = read_text_file(entry.abspath, max_bytes).text
    except OSError:
        return False  # unreadable now: the run's own read reports it when the file changes
    return text is None or hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() != sha


def _skip_differs(entry: FileEntry, reason: str | None, max_bytes: int) -> bool:
    """Whether ``entry``, skipped for ``reason`` (binary, minified...), would not be skipped
    for it now: a file filled in place within one tick of a coarse clock may be text now."""
    try:
        result = read_text_file(entry.abspath, max_bytes)
    except OSError:
        return False
    return result.text is not None or result.skipped != reason


def _refused_by_older_decoder(reason: str | None) -> bool:
    """Whether a skipped file's ``reason`` is a legacy-encoding refusal by a version that tried
    other encodings than this one (its message lists them): it is read again."""
    return bool(reason) and reason.startswith("not UTF-8") and reason != LEGACY_REASON


def _skip_kind(reason: str) -> str | None:
    """How `IndexReport.summary` counts a file skipped for ``reason``: "binary", "too large",
    "minified", "packed", or None (a legacy encoding, a damaged file: warned of once)."""
    if reason == "binary":
        return "binary"
    if reason == PACKED_REASON:
        return "packed"
    return "too large" if _too_large(reason) else "minified" if reason.startswith("minified") else None


def _too_large(reason: str | None) -> bool:
    """Whether a file's stored state says it was skipped for its size (a hash never does)."""
    return bool(reason) and reason.startswith("too large")


@dataclass
class IndexReport:
    """What one `rag index` run did."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    binary: int = 0
    too_large: int = 0
    too_large_paths: list[str] = field(default_factory=list)  # (the first few, for the CLI's note)
    # unchanged files an earlier run skipped, by why ("binary", "too large", ...): counted so,
    # not as "unchanged" (the counts above, and the CLI's note, are of the files this run read)
    skipped_before: dict[str, int] = field(default_factory=dict)
    gone: list = field(default_factory=list)  # files gone when read (`_remove_gone`)
    minified: int = 0
    packed: int = 0  # packed contexts (`files.PACKED_REASON`)
    chunks: int = 0
    total_chunks: int = 0
    files: int = 0
    bytes: int = 0
    seconds: float = 0.0
    rebuilt: str = ""
    first: bool = False  # the run that made the folder's index (its notes say what the globs passed over)
    kept: int = 0  # files a rebuild took from the index it replaced, unreadable this run (`_index_held`)
    workers: int = 1  # processes that read and prepared the files (`worker_count`)
    problems: list[tuple[str, str]] = field(default_factory=list)
    left_out: LeftOut = field(default_factory=LeftOut)  # what the globs passed over

    @property
    def warnings(self) -> list[tuple[str, str]]:
        """The problems worth a warning: files or folders that could not be read."""
        return [(path, message) for path, message in self.problems if not is_link_note(message)]

    @property
    def links_not_followed(self) -> list[str]:
        """Symlinks the walk left out (loops, folders reached another way, links to files
        inside the tree): nothing lost, unless what they link to is not indexed either."""
        return [path for path, message in self.problems if is_link_note(message)]

    def summary(self) -> str:
        """One line: what the run did, why files were skipped, what it could not read."""
        before = self.skipped_before.get
        packed = self.packed + before("packed", 0)
        counts = ((self.unchanged, "unchanged"), (self.binary + before("binary", 0), "binary"),
                  (self.too_large + before("too large", 0), "too large"),
                  (self.minified + before("minified", 0), "minified"), (packed, "packed context" + "s" * (packed != 1)))
        skipped = sum(n for n, _ in counts)
        why = [f"{n} {reason}" for n, reason in counts if n]
        parts = [f"{self.added} added", f"{self.updated} updated", f"{self.removed} removed",
                 f"{skipped} skipped" + (f" ({', '.join(why)})" if why else "")]
        links = len(self.links_not_followed)
        left_out = sum(is_left_out_note(message) for _, message in self.problems)
        special = sum(message.startswith(NOT_REGULAR) for _, message in self.problems)
        if len(self.problems) > links + left_out + special:  # (not among the skipped: tried again next run)
            parts.append(f"{len(self.problems) - links - left_out - special} unreadable")
        if self.kept:
            parts.append(f"{self.kept} kept from the index (unreadable now)")
        if special:  # (a pipe, a socket, a device: never opened, so not "unreadable")
            parts.append(f"{special} not {'a regular file' if special == 1 else 'regular files'}")
        if left_out:
            parts.append(f"{left_out} left out for {'its' if left_out == 1 else 'their'} name or depth")
        if links:
            parts.append(f"{links} symlink{'' if links == 1 else 's'} not followed")
        text = ", ".join(parts)
        return (f"{text}; {self.chunks} chunk{'' if self.chunks == 1 else 's'} written, {self.total_chunks} in index; "
                f"{self.seconds:.2f} s")


Progress = Callable[[int, int, int, int], None]  # files done, files total, bytes done, bytes total


def index_root(root: str | Path, config: dict, rebuild: bool = False,
               use_gitignore: bool | None = None, progress: Progress | None = None,
               wait: float = WRITER_WAIT_SECONDS) -> IndexReport:
    """Bring ROOT/.rag/index.db up to date with the files under ``root``.

    ``wait`` is how many seconds to wait for another process writing the same index
    before giving up with IndexBusyError. With ``rebuild`` a new index file is built
    beside the old one and then swapped in, so even an unreadable index is replaced and
    an interrupted rebuild leaves the old file as it was.
    """
    t0 = time.perf_counter()
    root = Path(root)
    report = IndexReport()
    db = index_path(root)
    check_index_place(db)
    if rebuild and (why := _unreplaceable(db)):  # (known before a whole index is built, not after)
        raise RagError(_not_replaced(db, why))
    target = db
    _remove_stale_rebuilds(db)
    first = report.first = not db.exists()
    if rebuild:
        # (a name of its own: two rebuilds at once each build a whole index, the later replaces)
        target = db.with_name(f"{INDEX_FILE}{REBUILD_SUFFIX}{os.getpid()}")
        _remove_db(target)
        report.rebuilt = "requested"
    engine = None
    try:
        try:
            engine = Engine.open(target, config, timeout=wait)
        except IndexReadOnlyError as e:
            if os.access(root, os.W_OK) and (why := store.permission_problem(db, write=True)):
                # (a folder of the user's own whose .rag alone was made read-only: no link to make)
                raise IndexReadOnlyError(f"cannot write the index {db}: {why}") from None
            raise IndexReadOnlyError(
                f"{e}: the index of a folder is kept in its .rag folder. To index a folder you cannot "
                f"write to, index a folder of your own that links to it: mkdir mydocs && "
                f"ln -s {root.resolve()} mydocs/ && rag index mydocs") from None
        _index_into(engine, root, config, use_gitignore, progress, report, replaces=db if target != db else None)
        if target != db:
            _fold_wal(target)
    except BaseException as e:
        if target != db:
            try:
                _remove_db(target)  # (a failed rebuild: the old index stays, and so does the disk's space)
            except OSError:  # (its folder made read-only meanwhile: the next run removes it; the error is e's)
                pass
            if isinstance(e, Interrupted):
                raise KeyboardInterrupt from None  # (whatever the new file held, the old one is as it was)
        elif type(e) is KeyboardInterrupt and engine is not None and engine.committed:  # (tidying up after)
            raise Interrupted(SAVED) from None
        elif first and type(e) is KeyboardInterrupt:  # (the index stays, empty: "as it was" would mislead)
            raise Interrupted("interrupted; nothing was indexed (it was the folder's first run): "
                              "run `rag index` again to index it") from None
        # (the index, its log or its folder made read-only during the run: SQLite says only "disk
        # I/O error" or "readonly database", which read as a full disk)
        if (isinstance(e, sqlite3.Error) and not (engine is not None and engine.committed)
                and store.storage_problem(e) and (why := store.permission_problem(target, write=True))):
            raise RagError(f"cannot write {target}: {why} ({e}); the index is as it was before this "
                           "command") from None
        raise
    if target != db:
        # The new file holds all it has (its WAL is folded in). Drop the old file's WAL
        # first so it can never be paired with the new file, then swap atomically.
        try:
            # (known before its log is deleted: that may hold writes not yet in the index; checked
            # again here, the index or its log made immutable while the new one was built)
            if frozen := _immutable_part(db):
                raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), str(frozen))
            for log in store.log_files(db):
                log.unlink(missing_ok=True)
            os.replace(target, db)
        except OSError as e:  # (the index or its log made immutable: "[Errno 1] Operation not permitted")
            try:
                _remove_db(target)
            except OSError:  # (its folder made read-only meanwhile: the next run removes it; the error is e's)
                pass
            why = store.permission_problem(db, write=True) or e.strerror or str(e)
            raise RagError(_not_replaced(db, why)) from None
    report.seconds = time.perf_counter() - t0
    return report


def _immutable_part(db: Path) -> Path | None:
    """The index file ``db``, or a log file beside it, that is immutable (`store.immutable`):
    a rebuild could neither delete that log nor replace the index. None if there is none."""
    return next((f for f in (db, *store.log_files(db)) if store.immutable(f)), None)


def _unreplaceable(db: Path) -> str | None:
    """Why a rebuild could not replace the index file ``db`` (`_immutable_part`), with what to
    do (`chattr -i PATH`), else None."""
    if (frozen := _immutable_part(db)) is None:
        return None
    return store.permission_problem(db, write=True) or f"{frozen} is immutable"


def _not_replaced(db: Path, why: str) -> str:
    """The error of a rebuild that cannot replace ``db``: ``why``, and that nothing changed."""
    return f"cannot replace {db} with the rebuilt index: {why}; the index is as it was before this command"


def _index_into(engine: Engine, root: Path, config: dict, use_gitignore: bool | None,
                progress: Progress | None, report: IndexReport, replaces: Path | None = None) -> None:
    """`index_root`'s run in one transaction on ``engine``, which it closes. ``replaces``: the
    index file a rebuild in ``engine``'s new file is to replace, whose vectors are kept for
    reuse when the config enables embeddings (`ragweb.embeddings.keep_vectors_of`). A run
    whose config does not deletes the vectors kept so (`ragweb.embeddings.drop_kept`)."""
    max_bytes = config["index"]["max_file_bytes"]
    was_enabled = gc.isenabled()
    gc.disable()  # millions of small objects: the cyclic GC would cost a third of the run
    try:
        # (`held` reads the old index until the block ends: before the commit, the compacting and
        # the emptying of the log, which would wait for it)
        with engine.transaction(), ExitStack() as held_open:
            scanned = time.time()
            changes, held = held_open.enter_context(_scan(engine, root, config, use_gitignore, replaces, report))
            # (the module only when there are vectors: its HTTP client takes 17 ms to load)
            if config["embedding"]["enabled"] and replaces is not None:
                from ragweb import embeddings
                embeddings.keep_vectors_of(engine, replaces)
            elif not config["embedding"]["enabled"] and engine.has_table("vectors"):
                from ragweb import embeddings
                embeddings.drop_kept(engine)
            report.problems = changes.problems
            report.left_out = changes.left_out
            kinds = engine.skipped_states()
            for entry in changes.unchanged:
                if entry.path in kinds and (kind := _skip_kind(kinds[entry.path][2])):
                    report.skipped_before[kind] = report.skipped_before.get(kind, 0) + 1
            report.unchanged = len(changes.unchanged) - sum(report.skipped_before.values())
            todo = changes.new + changes.changed + changes.reread
            states = engine.file_states()
            total_bytes = sum(e.size for e in todo)
            for path in changes.deleted:
                engine.remove_document(path)
                report.removed += 1
            for path in changes.gone_skipped:
                engine.mark_skipped(path, 0.0, 0, None)
            report.workers = worker_count(config, len(todo), total_bytes)
            unread = list(changes.kept)  # (what the index holds of them is not known to be theirs now)
            with _prepared(todo, states, engine, max_bytes, report.workers) as outcomes:
                for i, (entry, outcome) in enumerate(zip(todo, outcomes)):
                    _index_held(engine, held, entry.path, report)
                    report.bytes += entry.size
                    _index_one(engine, entry, states.get(entry.path), outcome, report)
                    if outcome[0] == GONE or (outcome[0] or "").startswith("unreadable"):
                        unread.append(entry.path)
                    if progress:
                        progress(i + 1, len(todo), report.bytes, total_bytes)
            _index_held(engine, held, None, report)
            _remove_gone(engine, report)
            report.files = len(todo) + len(changes.unchanged)
            # A file kept as it was indexed, unread this run (unreadable, a broken link, gone
            # while read), is recorded as `UNREAD_IDENT`: the next run compares its text, even
            # at the same time and size (a link pointed at another version of a tree meanwhile)
            idents = {e.path: e.ident for e in todo + changes.unchanged if e.ident}
            idents.update((p, UNREAD_IDENT) for p in unread)
            engine.set_file_idents(idents, changes.idents)
            engine.set_decoded_by(DECODER_VERSION)
            engine.set_scanned_at(scanned)
            engine.set_size_limit(config["index"]["max_file_bytes"])
            engine.set_ignore_files_applied(config["index"]["gitignore"] if use_gitignore is None else use_gitignore)
        report.total_chunks = engine.n_chunks
        if changes.gone_outputs:
            forget_outputs(root, changes.gone_outputs)
        _give_back_free_pages(engine)
        _empty_the_log(engine)
    finally:
        engine.close()
        if was_enabled:
            gc.enable()


@contextmanager
def _scan(engine: Engine, root: Path, config: dict, use_gitignore: bool | None, replaces: Path | None,
          report: IndexReport):
    """The run's `scan_changes`, and what the index held of the files it keeps unread
    (`_held_by`, for `_index_held`): nothing unless the run rebuilds the index. A rebuild
    keeps them too, as an incremental run does: an index whose analysis settings changed is
    walked before it is emptied (`Engine.reset`), and the one a ``--rebuild`` replaces
    (``replaces``) is read beside the new one. Without that, the files under a folder link
    that was broken, or a folder that could not be read, that one run were gone from the
    index until a run could read them again. A context: the old index is read, as it was
    before the run, until it ends."""
    change = engine.settings_change()
    if change == NEWER_VERSION:  # (not read again the older way without a word; a newer decoder's alone too)
        raise RagError(f"the index of {root} was built by a newer version of ragweb, which reads some "
                       "files otherwise; upgrade ragweb to update it, or rebuild it with this version: "
                       f"rag index --rebuild {shlex.quote(str(root))}")
    if engine.settings_changed:
        report.rebuilt = change
        # (no need to compare any file's text with the index's: every file is read again)
        changes = _all_new(scan_changes(engine, root, config, use_gitignore))
        with _before_the_run(engine, bool(changes.kept)) as old:
            if old is not None:
                held = _held_by(old, changes.kept)
            else:  # (no second reader: the texts are read before the index is emptied)
                held = _held_by(engine.conn, changes.kept, texts=True)
            engine.reset(config)
            yield changes, held
        return
    if replaces is None:
        yield scan_changes(engine, root, config, use_gitignore, decoding=True), Held()
        return
    with _replaced_index(replaces) as old:
        changes = scan_changes(engine, root, config, use_gitignore, decoding=True, also_held=_held_paths(old))
        yield changes, _held_by(old, changes.kept)


def _all_new(changes: Changes) -> Changes:
    """``changes`` as an index emptied before its run sees them: every file the walk found
    is new, in the walk's order, and none is deleted."""
    found = changes.new + changes.changed + changes.reread + changes.unchanged
    changes.new = sorted(found, key=lambda entry: entry.path)
    changes.changed, changes.reread, changes.unchanged = [], [], []
    changes.deleted, changes.gone_skipped = [], []
    return changes


@contextmanager
def _replaced_index(path: Path):
    """A connection reading the index file at ``path``, which a rebuild replaces, in one
    snapshot (another run may be writing it), taken as it opens; None when there is none or
    it cannot be read (damaged, of another format: a rebuild is also how such an index is
    replaced)."""
    try:
        # (not mode=ro, as `embeddings.keep_vectors_of` reads it: only SQL's writes are refused)
        old = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
    except (sqlite3.Error, OSError):
        old = None
    try:
        if old is not None:
            old.execute("PRAGMA query_only = 1")
            old.execute("BEGIN")
            old.execute("SELECT count(*) FROM sqlite_master").fetchone()  # (the first read fixes the snapshot)
    except sqlite3.Error:
        old.close()
        old = None
    try:
        yield old
    finally:
        if old is not None:
            old.close()


@contextmanager
def _before_the_run(engine: Engine, needed: bool):
    """A second connection reading ``engine``'s index file as it was before the run (the run
    holds the write lock: its last committed state), from which a run whose settings changed
    reads the texts of the files it keeps after it has emptied the index (`Engine.reset`).
    None when not ``needed``, or when the file is not in WAL mode (SQLite could not put it
    in it, on some file system): a reader there would keep the run from writing and committing."""
    (mode,) = engine.conn.execute("PRAGMA journal_mode").fetchone()
    (name,) = [file for _, db, file in engine.conn.execute("PRAGMA database_list") if db == "main"] or [""]
    if not needed or str(mode).lower() != "wal" or not name:
        yield None
        return
    with _replaced_index(Path(name)) as old:
        yield old


def _held_paths(conn: sqlite3.Connection | None) -> set[str]:
    """The paths of the files, indexed or skipped, that the index on ``conn`` holds (none
    when it cannot be read)."""
    if conn is None:
        return set()
    try:
        return {path for (path,) in conn.execute("SELECT path FROM files UNION SELECT path FROM skipped")}
    except sqlite3.Error:
        return set()


@dataclass
class Held:
    """The files a rebuild keeps unread (`_held_by`), in the walk's order, and where their
    texts are read when `_index_held` comes to each one: not all at the run's start (a
    share of gigabytes that was not mounted took as much memory)."""

    # (path, "file", (mtime, size, sha256)), the text too when `_held_by` was asked for it,
    # or (path, "skipped", (mtime, size, reason))
    rows: deque = field(default_factory=deque)
    conn: sqlite3.Connection | None = None  # the old index, in the snapshot ``rows`` were read from

    def text(self, path: str) -> str | None:
        """The stored text of the held file ``path``; None when it cannot be read (a damaged index)."""
        try:
            row = self.conn.execute("SELECT text FROM files WHERE path=?", (path,)).fetchone()
        except sqlite3.Error:
            return None
        return row and row[0]


def _held_by(conn: sqlite3.Connection | None, paths: list[str], texts: bool = False) -> Held:
    """What the index on ``conn`` holds of ``paths`` (sorted: the walk's order), in their
    order, their texts left in it (`Held.text`), unless ``texts``: ``conn`` is not to be read
    after this. What cannot be read is left out."""
    held = Held(conn=None if texts else conn)
    if conn is None:
        return held
    columns = "mtime, size, sha256, text" if texts else "mtime, size, sha256"
    try:
        for path in paths:
            row = conn.execute(f"SELECT {columns} FROM files WHERE path=?", (path,)).fetchone()
            if row is not None:
                held.rows.append((path, "file", row))
            elif (row := conn.execute("SELECT mtime, size, reason FROM skipped WHERE path=?", (path,)).fetchone()):
                held.rows.append((path, "skipped", row))
    except sqlite3.Error:
        pass  # (a damaged index: what was read of it is kept)
    return held


def _index_held(engine: Engine, held: Held, until: str | None, report: IndexReport) -> None:
    """Put back into the rebuilt index the files of ``held`` (`_held_by`) whose paths come
    before ``until`` (all when None), as the walk would have met them: an indexed file is
    indexed again from its stored text under the new settings, a skipped one is marked
    skipped again. So once they can be read again, and are unchanged, the index is the one
    a fresh run makes."""
    rows = held.rows
    while rows and (until is None or rows[0][0] < until):
        path, kind, row = rows.popleft()
        if kind == "file":
            mtime, size, sha256, *text = row
            text = text[0] if text else held.text(path)
            if text is None:
                continue
            report.chunks += engine.add_document(path, text, mtime, size, sha256)
        else:
            engine.mark_skipped(path, *row)
        report.kept += 1


GONE_RECHECK_S = 0.25  # a file gone when read is removed if it is still gone this long later, at the run's end


def _remove_gone(engine: Engine, report: IndexReport) -> None:
    """Remove the files that were gone when the run read them (deleted since the walk) and
    are still gone a moment later, at the run's end, as if the walk had not seen them. One
    back by then was only between names (an editor saving by renaming the file away and
    writing it anew): what the index holds of it stays, and the next run reads it."""
    if not report.gone:
        return
    time.sleep(GONE_RECHECK_S)
    for entry in report.gone:
        if os.path.lexists(entry.abspath):
            continue
        if engine.remove_document(entry.path):
            report.removed += 1
        engine.mark_skipped(entry.path, 0.0, 0, None)


VACUUM_FREE_SHARE = 0.5     # a run leaving at least this share of the index file's pages free ...
VACUUM_MIN_FREE_PAGES = 256  # ... and at least this many (1 MB at SQLite's 4 KB pages) compacts it


def _give_back_free_pages(engine: Engine) -> None:
    """Compact the index file (VACUUM) when a run left most of its pages free: SQLite reuses
    free pages but never gives them back, so an index rebuilt in place for a new version, or
    one most of whose files were removed, stayed as big as it had been (an 18 MB file holding
    0.5 MB). Another process reading or writing it meanwhile leaves it for a later run."""
    (free,) = engine.conn.execute("PRAGMA freelist_count").fetchone()
    (pages,) = engine.conn.execute("PRAGMA page_count").fetchone()
    if free >= VACUUM_MIN_FREE_PAGES and free >= VACUUM_FREE_SHARE * pages:
        try:
            # (its copy of the index in a temporary file, not in memory where a run's other
            # temporary data goes: a 1.5 GB index would take as much; a full $TMPDIR only
            # leaves the compacting for a later run)
            engine.conn.execute("PRAGMA temp_store=FILE")
            engine.conn.execute("VACUUM")
        except sqlite3.OperationalError:
            pass
        except KeyboardInterrupt:
            raise Interrupted("interrupted while compacting the index file; the index is up to date "
                              "(the next run compacts it)") from None
        finally:
            engine.conn.execute("PRAGMA temp_store=MEMORY")


LOG_EMPTY_WAIT_MS = 2000  # how long a run waits at its end for readers to leave older snapshots


def _empty_the_log(engine: Engine) -> None:
    """Copy the run's writes from SQLite's log (``index.db-wal``) into the index and empty it.
    SQLite starts its log over only when no reader is in it, so beside a busy reader (a
    ``rag pack --batch``, a reader in one read after another) it grew with every run: 49 MB
    after 30 runs, and reads slowed with it. A reader still in an older snapshot after
    `LOG_EMPTY_WAIT_MS` leaves the log for a later run."""
    try:
        engine.conn.execute(f"PRAGMA busy_timeout = {LOG_EMPTY_WAIT_MS}")
        engine.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.Error:
        pass  # (not in WAL mode, or busy: nothing is lost, the log is only longer)
    except KeyboardInterrupt:
        raise Interrupted("interrupted while tidying the index's log; the index is up to date") from None


def check_index_place(db: Path) -> None:
    """Raise a clear error when something else stands where the index goes: a file named
    ``.rag``, or a folder named ``index.db`` (SQLite would only say it cannot open it); or
    when a folder on the way cannot be entered (``chmod 000``)."""
    try:
        if db.parent.exists() and not db.parent.is_dir():
            raise RagError(f"{db.parent} is a file, not a folder: rag keeps the index in the folder "
                           f"{db.parent.name}/ there; rename or move that file")
        if db.is_dir():
            raise RagError(f"{db} is a folder, not an index: rag keeps the index in a file of that name; "
                           "move or remove the folder")
    except PermissionError as e:  # (what was looked up is in a folder this user may not enter)
        folder = os.path.dirname(e.filename) if e.filename else db.parent
        raise RagError(f"cannot read folder {folder} (permission denied): fix its permissions "
                       "(chmod), or ask its owner") from None


SAVED = "interrupted after this run's changes were saved: the index is up to date"
"""What Ctrl-C after the run committed says (`index_root`, and `rag index`'s report after it)."""
REBUILD_SUFFIX = ".rebuild-"  # index.db.rebuild-PID: the file a --rebuild builds, then moves into place


def _remove_stale_rebuilds(db: Path) -> None:
    """Delete what rebuilds that were killed left next to ``db`` (their processes are gone),
    and what a `.rag/outputs` write that was killed left (`_remove_stale_temps`)."""
    if os.name != "posix" or not db.parent.is_dir():
        return  # (where os.kill cannot ask whether a process lives, they stay)
    _remove_stale_temps(db.parent)
    in_use: dict[str, bool] = {}
    for path in db.parent.glob(INDEX_FILE + ".rebuild*"):
        tail = path.name[len(INDEX_FILE) + len(REBUILD_SUFFIX):].split("-")[0]
        if not path.name.startswith(INDEX_FILE + REBUILD_SUFFIX) or not tail.isdigit():
            _unlink_if_can(path)  # (an older version's index.db.rebuild)
            continue
        # (a rebuild in another PID namespace, a container sharing the folder, is not seen
        # here, but has its file open: deleted, its index was lost)
        if _process_gone(tail):
            if tail not in in_use:
                in_use[tail] = _held_open(db.with_name(f"{INDEX_FILE}{REBUILD_SUFFIX}{tail}"))
            if not in_use[tail]:
                _unlink_if_can(path)


def _unlink_if_can(path: Path) -> None:
    """Delete the file at ``path``, unless this user may not (a folder made read-only: opening
    the index says so, with what to do; a raw "Permission denied" on a leftover said nothing)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def _remove_stale_temps(folder: Path) -> None:
    """Delete the ``.outputs.PID.tmp`` (`files.AtomicWrite`'s temporary file) that a `rag pack
    -o` killed while it wrote ``folder``'s list of outputs left: its process is gone, and no
    process (of another PID namespace) holds the lock its writer takes on it."""
    if os.name != "posix":
        return
    for path in folder.glob(f".{OUTPUTS_FILE}.*.tmp"):
        pid = path.name[len(OUTPUTS_FILE) + 2:-len(".tmp")]
        if pid.isdigit() and _process_gone(pid) and not _locked(path, 0):
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass  # (a folder this user cannot write: its list is not written either)


def _process_gone(pid: str) -> bool:
    """Whether no process of id ``pid`` is seen here (one of another PID namespace is not)."""
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        pass  # (it lives, as another user's process)
    return False


_SHM_DMS_BYTE = 128  # the byte of a WAL index's -shm that SQLite locks while a connection has it open


def _held_open(path: Path) -> bool:
    """Whether a process (of any PID namespace, on any machine that shares the lock) has the
    SQLite file at ``path`` open in WAL mode: it holds a lock on its ``-shm`` meanwhile."""
    return _locked(Path(f"{path}-shm"), _SHM_DMS_BYTE)


def _locked(path: Path, byte: int) -> bool:
    """Whether a process holds a lock on ``byte`` of the file at ``path``. Tried with a lock
    of this process's own, for a moment (the holder waits for it)."""
    import fcntl
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, byte)
    except OSError:
        return True
    finally:
        os.close(fd)  # (and with it the lock)
    return False


def _fold_wal(path: Path) -> None:
    """Make the index file at ``path`` hold everything committed to it, with no WAL beside it,
    or raise: SQLite closes without a word when a full disk keeps it from copying its WAL
    into the file, and a rebuilt file moved into place without its WAL was half an index.
    A file removed meanwhile is not made anew (it was: an empty file then replaced the index)."""
    try:
        # (``mode=rw``: opening a file that is gone fails instead of creating an empty one)
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True)
    except sqlite3.Error:
        raise RagError(f"the rebuilt index {path} was removed while it was being built; the index is "
                       "as it was before this command") from None
    try:
        (mode,) = conn.execute("PRAGMA journal_mode=DELETE").fetchone()
        why = "" if str(mode).lower() == "delete" else "; is the disk full?"
    except sqlite3.Error as e:
        why = f": {e}"
    finally:
        conn.close()
    if why or Path(str(path) + "-wal").exists():
        if denied := store.permission_problem(path, write=True):  # (its folder made read-only meanwhile)
            why = f": {denied}"
        raise RagError(f"the rebuilt index could not be written whole{why or '; is the disk full?'} "
                       "(the index is as it was before this command)")


def _remove_db(path: Path) -> None:
    """Delete an index file and its WAL companions."""
    for suffix in ("-wal", "-shm", ""):
        Path(str(path) + suffix).unlink(missing_ok=True)


def _read_one(entry: FileEntry, old_sha: str | None, max_bytes: int, settings: dict,
              analyzer: Analyzer | None = None) -> tuple[str | None, ingest.Prepared | None]:
    """Read and prepare one file: (why it is skipped, None), or (None, the document; None
    when its content is the indexed one). Pure, so a worker process can do it."""
    result = read_text_file(entry.abspath, max_bytes)
    if result.text is None:
        return result.skipped or "unreadable", None
    text = result.text
    sha = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    if old_sha == sha:
        return None, None
    return None, ingest.prepare(entry.path, text, settings, entry.size, sha, analyzer)


def _worker(conn, settings: dict, max_bytes: int, parent_ends=()) -> None:
    """A worker process: reads batches of (file, its indexed hash) from ``conn`` and sends
    back their `_read_one` outcomes, until it reads None or the main process is gone.

    ``parent_ends``: the main process's ends of the pipes, which the fork copied; closed
    here, so that when the main process dies (killed, out of memory) the pipe is closed and
    this process ends too, instead of waiting forever to send."""
    for end in parent_ends:
        end.close()
    gc.disable()  # (as in the main process: many small objects, no cycles)
    # Ctrl-C reaches the whole process group: the main process stops the run and the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signals.release()  # (forked with them held: SIGTERM and SIGHUP end a worker again)
    analyzer = Analyzer.of(settings)
    try:
        while (jobs := conn.recv()) is not None:
            try:
                outcome = [_read_one(entry, old_sha, max_bytes, settings, analyzer) for entry, old_sha in jobs]
            except Exception as e:  # raised in the main process, as if it had read the file itself
                outcome = e
            conn.send(outcome)
            if isinstance(outcome, Exception):
                return
    except (EOFError, OSError):  # the main process is gone
        return


PARALLEL_FILES = 16          # with index.workers 0, `rag index` reads files in worker processes for at least
PARALLEL_BYTES = 2_000_000   # this many files of this many bytes in all (fewer: a pool costs more than it saves)


def worker_count(config: dict, files: int, size: int) -> int:
    """How many worker processes read and prepare ``files`` files of ``size`` bytes:
    ``index.workers``; when that is 0, one per CPU this process may use (at most 4) for a
    big job and none for a small one. 1 means none (this process reads them), as it always
    does where processes are not forked (Windows, macOS) and for a single file."""
    wanted = config["index"]["workers"]
    if wanted == 0:
        if files < PARALLEL_FILES or size < PARALLEL_BYTES:
            return 1
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        wanted = min(cpus, 4)
    if sys.platform in ("win32", "darwin", "emscripten"):
        return 1
    import multiprocessing  # (here: its import costs Pyodide's page a tenth of a second)
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(wanted, files // 2))


PARALLEL_BATCH = 4             # files a worker reads per message
PARALLEL_QUEUE = 2             # batches given to a worker at a time (one read, one waiting)
PARALLEL_WINDOW = 64_000_000   # bytes of files read ahead of the writer at most (one batch always)
WORKER_DIED = ("a worker process reading files for the index stopped (killed, or out of memory?); "
               "the index is as it was. Run again, or set index.workers: 1 in rag.yaml to read "
               "the files in one process")


def _why_stopped(conn) -> Exception:
    """Why the worker at the other end of ``conn``, which no longer reads it, stopped: the
    error it sent before it ended (its answers to earlier batches may come first: a worker
    that answered one batch and failed on the next had often ended before it was given a
    third), else `WORKER_DIED` (killed, out of memory)."""
    try:
        while conn.poll():
            message = conn.recv()
            if isinstance(message, Exception):
                return message
    except (EOFError, OSError):
        pass
    return RagError(WORKER_DIED)


@contextmanager
def _prepared(todo: list[FileEntry], states: dict, engine: Engine, max_bytes: int, workers: int):
    """The `_read_one` outcomes of ``todo``, in its order: read here, or by ``workers``
    processes (forked before any file is read) while this one stores what they made.

    Each worker has its own pipe and reads the batches it is given in order; a free worker
    gets the next batch, and results that come early wait until their turn, within
    `PARALLEL_WINDOW` bytes of files. No lock is shared, so a worker that dies (killed, out
    of memory) is seen by its process sentinel and stops the run with `WORKER_DIED`."""
    jobs = [(entry, states[entry.path][2] if entry.path in states else None) for entry in todo]
    if workers <= 1:
        yield (_read_one(entry, old_sha, max_bytes, engine.settings) for entry, old_sha in jobs)
        return
    batches = [jobs[i:i + PARALLEL_BATCH] for i in range(0, len(jobs), PARALLEL_BATCH)]
    sizes = [sum(entry.size for entry, _ in b) for b in batches]
    import multiprocessing.connection
    ctx = multiprocessing.get_context("fork")
    procs, conns = [], []
    try:
        for _ in range(workers):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(theirs, engine.settings, max_bytes, conns + [mine]),
                               daemon=True)
            with signals.held():
                proc.start()
            theirs.close()
            procs.append(proc)
            conns.append(mine)

        def outcomes():
            given = [deque() for _ in procs]  # per worker: the batches it has, in its order
            done: dict[int, list] = {}        # batch -> outcomes, until its turn
            sent = turn = ahead = 0           # next batch to give, next to yield, bytes given out
            while turn < len(batches):
                for w, queue in enumerate(given):
                    while (len(queue) < PARALLEL_QUEUE and sent < len(batches)
                           and (sent == turn or ahead + sizes[sent] <= PARALLEL_WINDOW)):
                        try:
                            conns[w].send(batches[sent])
                        except OSError:  # (its end is closed: it stopped, on an error or killed)
                            raise _why_stopped(conns[w]) from None
                        queue.append(sent)
                        ahead += sizes[sent]
                        sent += 1
                if turn in done:
                    outcome = done.pop(turn)
                    ahead -= sizes[turn]
                    turn += 1
                    yield from outcome
                    continue
                waiting = [w for w, queue in enumerate(given) if queue]
                ready = multiprocessing.connection.wait([conns[w] for w in waiting] +
                                                        [procs[w].sentinel for w in waiting])
                for w in waiting:
                    if conns[w] in ready or (procs[w].sentinel in ready and conns[w].poll()):
                        try:
                            result = conns[w].recv()
                        except (EOFError, OSError):
                            raise RagError(WORKER_DIED) from None
                        if isinstance(result, Exception):
                            raise result
                        done[given[w].popleft()] = result
                    elif procs[w].sentinel in ready:
                        raise RagError(WORKER_DIED)
        yield outcomes()
        for conn in conns:
            conn.send(None)
        for proc in procs:
            proc.join()
    finally:  # (an error or Ctrl-C: the workers are stopped where they are)
        for proc in procs:
            if proc.is_alive():
                proc.kill()
            proc.join()
        for conn in conns:
            conn.close()


def _index_one(engine: Engine, entry: FileEntry, old, outcome: tuple, report: IndexReport) -> None:
    reason, doc = outcome
    if reason == GONE:  # (deleted after the walk listed it: looked at again at the run's end)
        log.debug("gone: %s", entry.path)
        report.gone.append(entry)
        return
    if reason is not None:
        log.debug("skipped %s: %s", entry.path, reason)
        if reason == "binary":
            report.binary += 1
        elif _too_large(reason):
            report.too_large += 1
            if len(report.too_large_paths) < 3:
                report.too_large_paths.append(entry.path)
        elif reason.startswith("minified"):
            report.minified += 1
        elif reason == PACKED_REASON:
            report.packed += 1
        else:
            report.problems.append((entry.path, reason))
        if reason.startswith("unreadable"):
            return  # (what was indexed of it stays until it can be read again: tried every run)
        if engine.remove_document(entry.path):  # indexed before: what is there now cannot be
            report.removed += 1
        if reason in ("binary", PACKED_REASON) or reason.startswith(("too large", "minified", "not UTF-8", "damaged")):
            # Remembered, so later runs and queries do not see it as new until it changes
            # (an unreadable file is tried again every time; a file in a legacy encoding or a
            # damaged one is warned about once, as a problem).
            engine.mark_skipped(entry.path, entry.mtime, entry.size, reason)
        return
    engine.mark_skipped(entry.path, entry.mtime, entry.size, None)
    if doc is None:
        log.debug("unchanged content, new mtime: %s", entry.path)
        engine.touch_file(entry.path, entry.mtime, entry.size)
        report.unchanged += 1
        return
    n = engine.add_prepared(doc, entry.mtime)
    log.debug("%s %s: %d chunks", "updated" if old else "added", entry.path, n)
    report.chunks += n
    if old is None:
        report.added += 1
    else:
        report.updated += 1

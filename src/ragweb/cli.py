"""The `rag` command line: parse arguments, call the library, print results.

Exit codes: 0 success, 1 runtime error (`Error: ...` on stderr, traceback only with
--debug), 2 usage error, 128 + the signal when interrupted (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).
A file or folder named on the command line that is not there (or is a folder where a file is
wanted) is a usage error; one that is there but cannot be read, or holds the wrong thing, a
runtime error.
"""

from __future__ import annotations

try:  # (Ctrl-C while `rag` starts: no traceback from a module being imported)
    import argparse
    import codecs
    import contextlib
    import io
    import json
    import logging
    import os
    import re
    import shlex
    import sqlite3
    import stat
    import sys
    import time
    from pathlib import Path

    from ragweb import signals
    from ragweb.errors import Interrupted, RagError, UsageError, quoted
    from ragweb.config import read_capped
    from ragweb.formats import FORMATS
    from ragweb.files import WILDCARD_RE, AtomicWrite, glob_escape, user_text, utf16_encoding, within
except KeyboardInterrupt:
    from ragweb.signals import interrupted_while_starting
    interrupted_while_starting()

EXIT_OK, EXIT_ERROR, EXIT_USAGE = 0, 1, 2


# --- notes and warnings, as logging.level allows ------------------------------------------
_HIDDEN_AT = {"note:": ("warning", "error"), "warning:": ("error",)}  # levels that hide a kind of line
_level: str | None = None  # logging.level of this run; None until the config is read
_held: list[str] = []  # lines said before that: written when it is known
_index_root: Path | None = None  # the folder whose index the command uses (its remedy names it)


def _say(line: str) -> None:
    """Write a ``note: ...`` or ``warning: ...`` line to standard error unless
    ``logging.level`` hides it (``warning`` hides notes; ``error`` notes and warnings;
    errors are always shown). A line said before the config is read waits for its level."""
    if _level is None:
        _held.append(line)
        return
    kind = line.split(" ", 1)[0]
    if _level not in _HIDDEN_AT.get(kind, ()):
        sys.stderr.write(line.rstrip("\n") + "\n")


def _set_level(level: str | None) -> None:
    """Set the level `_say` applies (None: the default) and write the lines held for it."""
    global _level
    _level = level or "info"
    held, _held[:] = list(_held), []
    for line in held:
        _say(line)


# --- argument parsing -------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """An argument parser whose error for ``-q -g`` (a question that looks like a flag)
    says how to ask it; the commands' parsers are of this class too."""

    def parse_known_args(self, args=None, namespace=None):
        self.given = list(sys.argv[1:] if args is None else args)  # (for `error`)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        if message == "argument -q/--query: expected one argument":
            message += _flag_like_question(self.prog, getattr(self, "given", []))
        super().error(message)


def _flag_like_question(prog: str, args: list[str]) -> str:
    """How to ask a question that argparse read as a flag (``rag query -q -g``: ``-q=-g``),
    to follow the error that ``-q`` got no question; '' when no such word follows ``-q``."""
    for option, word in zip(args, args[1:]):
        if option == "--":
            break
        if (option == "-q" or len(option) > 2 and "--query".startswith(option)) and word.startswith("-"):
            written = "--query" if option.startswith("--") else "-q"
            other = f" (or {prog} -- {shlex.quote(word)})" if prog.endswith((" query", " pack", " runprompt")) else ""
            return (f" (a question), and {word} is read as a flag; to ask about {word}, write "
                    f"{written}={shlex.quote(word)}{other}")
    return ""


# What -d/--dir names for each command that takes it (`_common`)
_DIR_HELP = {
    "index": "the folder to index, as PATH (default: the current directory); its index goes in ROOT/.rag/",
    "query": "root directory of the index to search (default: the nearest folder at or above the "
             "current directory that has an index)",
    "pack": "root directory of the index to pack from (default: the nearest folder at or above the "
            "current directory that has an index)",
    "config": "the folder whose config to print: the one its index is built with (default: the current directory)",
}


def _common(p: argparse.ArgumentParser, command: str) -> None:
    p.add_argument("-d", "--dir", metavar="ROOT", default=None, help=_DIR_HELP[command])
    p.add_argument("--config", metavar="FILE", default=None,
                   help="config file (default: ROOT/rag.yaml, then ROOT/.rag/config.yaml)")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")


def _retrieval(p: argparse.ArgumentParser, command: str) -> None:
    p.add_argument("-q", "--query", help="the question (required unless --batch)")
    p.add_argument("words", nargs="*", metavar="QUESTION",
                   help=f"the question as plain words, instead of -q (rag {command} how does retry work)")
    _common(p, command)
    p.add_argument("-k", "--top-k", type=int, default=None, metavar="N",
                   help="number of results (default retrieve.top_k)" if command == "query" else
                        "candidate pool: how many of the best-ranked chunks the pack chooses from (default retrieve.top_k)")
    p.add_argument("--path", metavar="GLOB", default=None,
                   help="only search files whose relative path matches GLOB (e.g. 'src/**/*.py')")
    p.add_argument("--batch", metavar="FILE", default=None,
                   help="read one question per line (text, or JSON with id and question; '-' for stdin) "
                        "and write one JSON result per line")
    p.add_argument("--no-auto-index", action="store_true",
                   help="fail with a message instead of offering to index when there is no index")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rag", description="Index files and pack cited evidence for a question into a token budget.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("index", help="index the files under a directory into ROOT/.rag/index.db")
    p.add_argument("root", nargs="?", default=None, metavar="PATH",
                   help="directory to index (default: --dir or the current directory)")
    _common(p, "index")
    p.add_argument("--rebuild", action="store_true", help="drop the index and index everything again")
    p.add_argument("--gitignore", action=argparse.BooleanOptionalAction, default=None,
                   help="apply .gitignore/.ragignore files in this run (default index.gitignore); "
                        "--no-gitignore also indexes the files they exclude")
    p.add_argument("--quiet", action="store_true", help="no progress bar")

    p = sub.add_parser("query", help="search the index and print ranked results")
    _retrieval(p, "query")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--no-mmr", action="store_true", help="rank by relevance only (no diversity)")
    p.add_argument("-c", "--context", type=int, default=0, metavar="N",
                   help="widen each hit by N lines before and after, from the indexed text")
    p.add_argument("--semantic", action="store_true", help="vector search only (needs embeddings)")

    p = sub.add_parser("pack", help="pack the best evidence for a question into a token budget")
    _retrieval(p, "pack")
    p.add_argument("-b", "--budget", type=int, default=None, metavar="TOKENS",
                   help="token budget (default pack.token_budget); tokens = ceil(chars/4)")
    p.add_argument("-o", "--output", metavar="FILE", default=None, help="write to FILE instead of stdout ('-': stdout)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="output format (default pack.output)")
    p.add_argument("--compact", action=argparse.BooleanOptionalAction, default=None,
                   help="split top chunks into sentences when they do not fit whole (default pack.compact); "
                        "--no-compact packs whole chunks only")
    p.add_argument("--lean", action=argparse.BooleanOptionalAction, default=None,
                   help="trade recall for far fewer tokens (default pack.lean); --no-lean packs as usual")

    p = sub.add_parser("runprompt", help="render a prompt from a packed context file")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--runtime", action="store_true", help="answering prompt with citations")
    mode.add_argument("--builder", action="store_true", help="compression prompt (condense the snippets)")
    p.add_argument("--ctx", required=True, metavar="FILE", help="packed context JSON (from rag pack; - reads standard input)")
    p.add_argument("-q", "--query", default=None, help="override the question stored in the context")
    p.add_argument("words", nargs="*", metavar="QUESTION",
                   help="the question as plain words, instead of -q (rag runprompt --runtime --ctx c.json "
                        "how does retry work)")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")

    p = sub.add_parser("config", help="print the effective configuration")
    _common(p, "config")

    p = sub.add_parser("web", help="build the static browser app and serve it on localhost")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    from ragweb import webbuild
    webbuild.add_arguments(p)
    parser.commands = sub.choices  # (a flag no command takes is told in that command's usage)
    return parser


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("ragweb")
    except Exception:  # not installed (running from a source tree)
        return "0.1.0"


# --- helpers ----------------------------------------------------------------------------
# What a flag that names a file or folder means when it is left out, for the error that
# refuses an empty name (`rag index "$DIR"` with $DIR unset took the current folder, `-o ""`
# wrote to standard output, `--config ""` was "config file . is a folder")
_EMPTY_NAMES = {
    "root": ("the folder to index (PATH)", "name one, or leave it out to index the current folder"),
    "dir": ("-d/--dir", "name the folder of the index, or leave -d out for the current folder"),
    "config": ("--config", "name a config file, or leave --config out for ROOT/rag.yaml"),
    "output": ("-o/--output", "name a file to write, or - for standard output"),
    "batch": ("--batch", "name a file of questions, one a line, or - for standard input"),
    "ctx": ("--ctx", "name a packed context file (`rag pack -o FILE`), or - for standard input"),
}


def _refuse_empty_names(args) -> None:
    """Refuse a file or folder flag given an empty name (or only spaces), which was read as
    the current folder or as no flag at all: a shell variable that was not set."""
    for attr, (flag, hint) in _EMPTY_NAMES.items():
        value = getattr(args, attr, None)
        if value is not None and not value.strip():
            raise UsageError(f"{flag} is empty ({quoted(value)}); {hint}")


_INPUT_FILES = ("config", "batch", "ctx")  # the flags that name a file `rag` reads
_VARIABLE_RE = re.compile(r"\$(?:\{\w+\}|[A-Za-z_]\w*)")  # $HOME, ${DOCS}


def _not_expanded(name: str) -> str:
    """Why a file or folder ``name`` that is not there may be other than the user meant: a
    "~" or "$VAR" the shell did not expand (in quotes, or from a script), blanks at its ends."""
    if name.startswith("~"):
        return " (a ~ is the home folder only where the shell expands it, not in quotes: write $HOME instead)"
    if m := _VARIABLE_RE.search(name):
        return f" (the shell did not expand {m.group()}: in single quotes it stays as written)"
    if name != name.strip():
        return " (it begins or ends with a blank)"
    return ""


def _refuse_missing_files(args) -> None:
    """Refuse an input file flag (``--config``, ``--batch``, ``--ctx``) whose name is not a
    file: none is there, or a folder is. That is a usage error (exit 2), as ``-d`` naming no
    folder is; a file that is there but cannot be read, or holds the wrong thing, is a
    runtime error (exit 1)."""
    for attr in _INPUT_FILES:
        value = getattr(args, attr, None)
        if value is None or (value == "-" and attr != "config"):  # (`--config -` is a file named -)
            continue
        flag, hint = _EMPTY_NAMES[attr]
        try:
            is_dir = stat.S_ISDIR(os.stat(value).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            raise UsageError(f"{flag} {quoted(value)}: no such file{_not_expanded(value)}; {hint}") from None
        except (OSError, ValueError):  # (a folder on the way this user may not enter: the command says so)
            continue
        if is_dir:
            raise UsageError(f"{flag} {value} is a folder, not a file; {hint}")


def _root(args) -> Path:
    if getattr(args, "root", None) and args.dir:
        raise UsageError(f"rag index: give the folder once, as PATH ({args.root}) or with -d ({args.dir}), not both")
    given = getattr(args, "root", None) or args.dir
    root = Path(given or ".")
    try:
        here = None if given else os.getcwd()  # (named in the messages below)
    except FileNotFoundError:  # the folder the shell is in was deleted: the shell still knows its name
        pwd = os.environ.get("PWD")
        raise RagError(f"the current folder{f' {pwd}' if pwd else ''} no longer exists (deleted or moved); "
                       "cd to a folder that does, or name one with -d") from None
    try:
        if not root.is_dir():
            if root.is_file():  # (`rag index README.md`: the user meant to index that one file)
                raise UsageError(f"not a directory: {root} (a file; rag indexes folders: the one it is in is "
                                 f"{quoted(str(root.parent))}, and with that folder --path {quoted(root.name)} "
                                 "asks `rag query` or `rag pack` about this file alone)")
            raise UsageError(f"not a directory: {root}" if os.path.lexists(root)
                             else f"no such folder: {quoted(given or '.')}{_not_expanded(given or '.')}")
    except PermissionError as e:
        raise RagError(f"cannot read {root if given else f'the current folder {here}'}: {e.strerror}") from None
    from ragweb.indexer import INDEX_DIR
    if (given or hasattr(args, "root")) and os.path.basename(os.path.abspath(root)) == INDEX_DIR:
        # (`rag index .rag` made .rag/.rag/index.db; `rag query -d docs/.rag` said to run that)
        folder = quoted(os.path.dirname(os.path.abspath(root)) if not given or root.parent == root
                        else str(root.parent))
        command = "rag index" if hasattr(args, "root") else "-d"
        raise UsageError(f"{root if given else here} is where rag keeps the index of {folder}, not a folder of "
                         f"documents: name {folder} ({command} {folder})")
    return root


def _reading_root(args) -> Path:
    """`_root`, except that with no ``-d`` and no index in the current folder the nearest
    folder above it that has one is the root (as git finds a repository from a subfolder)."""
    root = _root(args)
    if (folder := _index_above(args, root)) is not None:
        from ragweb.indexer import INDEX_DIR
        alone = os.path.basename(os.path.abspath(root)) != INDEX_DIR  # (in .rag: nothing to index there)
        _say(f"note: using the index of {folder}" + (" (run `rag index` here for an index of this folder alone)"
                                                     if alone else ""))
        return folder
    return root


def _index_above(args, root: Path) -> Path | None:
    """The folder above ``root`` whose index `rag query` and `rag pack` use from ``root``
    (no ``-d``, no index here), else None."""
    if args.dir is not None or getattr(args, "root", None):
        return None
    from ragweb.indexer import index_path
    try:
        if index_path(root).is_file():
            return None
    except PermissionError:  # (a .rag here that cannot be entered: `check_index_place` says so)
        return None
    # (the folders above it as the shell names them first: from inside a linked folder,
    # `mydocs/docs/sub` where mydocs/docs links elsewhere, the index of mydocs is above)
    above = [*Path(_logical_cwd()).parents] if root == Path(".") else []
    return next((folder for folder in [*above, *root.resolve().parents] if _has_index(folder)), None)


def _has_index(folder: Path) -> bool:
    """Whether ``folder`` holds an index file (False when that cannot be told: another user's)."""
    from ragweb.indexer import index_path
    try:
        return index_path(folder).is_file()
    except OSError:
        return False


def _logical_cwd() -> str:
    """The current folder as the shell names it (``$PWD``, through the links it was reached
    by) when that is this very folder, else its real path (`os.getcwd`)."""
    here = os.getcwd()
    pwd = os.environ.get("PWD")
    if pwd and pwd != here and os.path.isabs(pwd):
        try:
            if os.path.samefile(pwd, here):
                return os.path.normpath(pwd)
        except OSError:
            pass
    return here


def _config(args, root: Path) -> dict:
    from ragweb.config import load_config
    cfg, found = load_config(root, args.config)  # (an error: `_main` writes the notes held first)
    args.config_file = found  # (`rag pack -o` does not write over it)
    level = "debug" if args.debug else cfg["logging"]["level"]
    _set_level(level)
    _note_misnamed_config(args, root, found)
    _leave_out_config_file(cfg, root, args.config)
    logger = logging.getLogger("ragweb")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(level.upper())
    return cfg


def _leave_out_config_file(cfg: dict, root: Path, config: str | None) -> None:
    """Leave the ``--config`` file out of the index when it lies under ``root`` (as every
    ``rag.yaml`` is left out): its words (pack.synonyms, globs) are not the documents'. An
    anchored glob naming it is added to ``index.excludes``, by the path as written and the
    real one (`rag index` and the scans of `rag query` and `rag pack` apply it alike)."""
    from ragweb.files import glob_problem
    if config is None:
        return
    excludes = cfg["index"]["excludes"]
    for path, top in ((os.path.abspath(config), os.path.abspath(root)),
                      (os.path.realpath(config), os.path.realpath(root))):
        if path != top and within(path, top):
            glob = "/" + glob_escape(os.path.relpath(path, top).replace(os.sep, "/"))
            if glob not in excludes and glob_problem(glob) is None:
                excludes.append(glob)


def _note_misnamed_config(args, root: Path, found) -> None:
    """Say so when the defaults apply because the config file is misnamed (``Rag.yaml``)."""
    from ragweb.config import misnamed_config_note
    if found is None and args.config is None:
        try:
            note = misnamed_config_note(e.name for e in os.scandir(root) if e.is_file())  # (as the page: files)
        except OSError:
            return
        if note:
            _say(f"note: {note}")


def _escaped(err: UnicodeError):
    """Codec error handler "ragweb.escape": what the output's encoding cannot hold is written as
    an escape: ``\\xNN`` for a byte of a name that is not UTF-8 (as the warnings name such
    files), ``\\u00e9`` for a character (never ``\\xe9``, which would read as a byte)."""
    if not isinstance(err, UnicodeEncodeError):
        raise err
    return "".join(f"\\x{ord(c) - 0xdc00:02x}" if "\udc80" <= c <= "\udcff" else
                   f"\\u{ord(c):04x}" if ord(c) <= 0xffff else f"\\U{ord(c):08x}"
                   for c in err.object[err.start:err.end]), err.end


codecs.register_error("ragweb.escape", _escaped)


def _escape_unencodable() -> None:
    """Text on standard output and error never fails on a character the terminal's encoding
    (Latin-1, ASCII) cannot hold, nor on a folder name that is not UTF-8: it is escaped."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="ragweb.escape")


class OutputError(OSError):
    """Standard output could not be written (`rag query > FILE` on a full disk, or past
    ``ulimit -f``): said as such, not as a bare ``[Errno 27] File too large``."""


class _Output(io.FileIO):
    """Standard output's file, whose failed writes are `OutputError`s (a reader gone stays a
    BrokenPipeError)."""

    def write(self, data):
        try:
            return super().write(data)
        except (BrokenPipeError, BlockingIOError):
            raise
        except OSError as e:
            raise OutputError(e.errno, e.strerror) from None


def _guard_output() -> None:
    """Standard output written through `_Output` (when it is the process's own file)."""
    out = sys.stdout
    if not isinstance(out, io.TextIOWrapper):
        return
    raw = out.buffer if isinstance(out.buffer, io.FileIO) else getattr(out.buffer, "raw", None)  # (unbuffered: -u)
    if type(raw) is io.FileIO:
        out.flush()
        guarded = _Output(raw.fileno(), "w", closefd=False)
        sys.stdout = io.TextIOWrapper(guarded if raw is out.buffer else io.BufferedWriter(guarded),
                                      encoding=out.encoding, errors=out.errors,
                                      line_buffering=out.line_buffering, write_through=out.write_through)


def _utf8_stdout() -> None:
    """Standard output in UTF-8, whatever the terminal's encoding, for JSON and XML (the
    encoding they are read in, and `-o FILE` writes); a lone surrogate is written as the JSON
    escape ``\\udXXX``."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def _ask(question: str) -> bool:
    sys.stderr.write(question)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:  # Ctrl-D: no (only Enter takes the default)
        sys.stderr.write("\n")
        return False
    return line.strip().lower() in ("", "y", "yes")


class _ProgressBar:
    """A one-line progress bar on a terminal (stderr); silent otherwise."""

    def __init__(self, enabled: bool, unit: str = "files"):
        self.enabled = enabled
        self.unit = unit
        self.t0 = time.perf_counter()
        self.last = 0.0

    def __call__(self, done: int, total: int, nbytes: int, total_bytes: int) -> None:
        now = time.perf_counter()
        if not self.enabled or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        frac = done / total if total else 1.0
        bar = "#" * int(frac * 30)
        rate = nbytes / 1e6 / max(now - self.t0, 1e-6)
        size = (f"  {nbytes / 1e6:.1f}/{total_bytes / 1e6:.1f} MB  {rate:.1f} MB/s"
                if total_bytes else "")
        sys.stderr.write(f"\r[{bar:<30}] {done}/{total} {self.unit}{size} ")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 79 + "\r")


def _run_index(root: Path, cfg: dict, rebuild=False, use_gitignore=None, quiet=False, out=None):
    """`rag index`'s run and report: the summary line on ``out`` (standard output; standard
    error when a query or pack indexes first, whose results are the output)."""
    from ragweb.indexer import SAVED, index_root
    bar = _ProgressBar(not quiet and sys.stderr.isatty())
    try:
        report = index_root(root, cfg, rebuild=rebuild, use_gitignore=use_gitignore, progress=bar)
    finally:
        bar.close()
    try:
        _report_index(root, cfg, report, out)
    except Interrupted:
        raise
    except KeyboardInterrupt:  # (the run is saved: "as it was" would mislead)
        raise Interrupted(SAVED) from None
    if cfg["embedding"]["enabled"]:
        _run_embed(root, cfg, quiet, out)
    return report


def _report_index(root: Path, cfg: dict, report, out=None) -> None:
    """Print what a `rag index` run did: the summary line on ``out``, and its notes."""
    if report.rebuilt:
        print(f"rebuilt the index ({report.rebuilt})", file=sys.stderr)
    problems = report.warnings
    for path, message in problems[:20]:
        _say(f"warning: {path}: {message}")
    if len(problems) > 20:
        _say(f"warning: ... and {len(problems) - 20} more")
    from ragweb.files import NOT_FOLLOWED, UNINDEXED_FILE, UNINDEXED_TARGET
    lost = [(path, message) for path, message in report.problems
            if message.endswith((UNINDEXED_TARGET + NOT_FOLLOWED, UNINDEXED_FILE + NOT_FOLLOWED))]
    lost_paths = {path for path, _ in lost}
    links = [path for path in report.links_not_followed if path not in lost_paths]
    if links:  # (a folder reached twice, a file linked to, is indexed once: nothing to fix, one line says so)
        _say(f"note: {len(links)} symlink{'' if len(links) == 1 else 's'} not followed, being a loop or a second "
             f"way to what is indexed: {', '.join(links[:3])}{' ...' if len(links) > 3 else ''}")
    for path, message in lost[:5]:  # (its files are not in the index: say so, and why)
        _say(f"note: {path}: {message.removesuffix(NOT_FOLLOWED)}, so the link is not followed"
             + (" and its files are not indexed" if message.endswith(UNINDEXED_TARGET + NOT_FOLLOWED) else ""))
    print(f"indexed {root}: {report.summary()}", file=out or sys.stdout)
    if report.too_large:  # text the includes asked for, left out whole: say which, and the key
        more = " ..." if report.too_large > len(report.too_large_paths) else ""
        _say(f"note: {report.too_large} file{' was' if report.too_large == 1 else 's were'} larger than "
             f"index.max_file_bytes ({cfg['index']['max_file_bytes']} bytes) and left out: "
             f"{', '.join(report.too_large_paths)}{more}; raise it in rag.yaml to index "
             f"{'it' if report.too_large == 1 else 'them'}")
    if report.left_out.case_note():
        _say(f"note: {report.left_out.case_note()}")
    warned = {path for path, _ in report.problems}
    if broken := [p for p in report.left_out.dangling if p not in warned]:  # (a folder's link, maybe: none can tell)
        _say(f"note: {len(broken)} broken symlink{'' if len(broken) == 1 else 's'} left out, what "
             f"{'it links' if len(broken) == 1 else 'they link'} to being gone (a folder's files would be indexed "
             f"through one): {', '.join(broken[:3])}{' ...' if len(broken) > 3 else ''}")
    if report.total_chunks == 0 and report.left_out.hint():
        _say(f"note: nothing is indexed: {report.left_out.hint()}")
    elif report.first and report.left_out.unmatched():  # (once: Debian's bash docs, COMPAT.gz and
        # 45 example scripts of 90 files, were passed over with only "24 added" said)
        _say(f"note: not indexed: {report.left_out.unmatched()}; add globs to index.includes in rag.yaml "
             "to index such files (a list there replaces the default one, which `rag config` shows)")


def _run_embed(root: Path, cfg: dict, quiet: bool, out=None) -> None:
    """Give the index's new chunks embeddings (`ragweb.embeddings.embed_missing`)."""
    from ragweb import embeddings
    from ragweb.engine import Engine
    from ragweb.indexer import WRITER_WAIT_SECONDS, index_path
    embedder = embeddings.Embedder(cfg)
    bar = _ProgressBar(not quiet and sys.stderr.isatty(), "chunks embedded")
    t0 = time.perf_counter()
    engine = Engine.open(index_path(root), cfg, create=False, timeout=WRITER_WAIT_SECONDS)
    try:
        try:
            done, had, reused = embeddings.embed_missing(engine, embedder, lambda d, n: bar(d, n, 0, 0))
        except RagError as e:
            raise RagError(f"{e}\n{_embedding_state(engine, embedder)}") from None
        except sqlite3.Error as e:  # (each batch of vectors commits on its own)
            from ragweb.store import permission_problem, storage_problem
            why = f"{storage_problem(e) or 'the index could not be written'} while embedding"
            if storage_problem(e) and (denied := permission_problem(index_path(root), write=True)):
                why = f"cannot write {index_path(root)} while embedding: {denied}"  # (made read-only meanwhile)
            raise RagError(f"{why} ({e}); {_embedding_state(engine, embedder)}") from None
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted while embedding; {_embedding_state(engine, embedder)}") from None
        finally:
            bar.close()
    finally:
        engine.close()
    kept = f", {reused} reused the vector of an identical text" if reused else ""
    print(f"embedded {done} chunk{'' if done == 1 else 's'} with {embedder.provider} {embedder.model} "
          f"({had} already had embeddings{kept}); {time.perf_counter() - t0:.2f} s", file=out or sys.stdout)


def _embedding_state(engine, embedder) -> str:
    """What a run that stopped while embedding leaves: the text index, and which vectors."""
    from ragweb import embeddings
    signature, have, total = embeddings.status(engine)
    if have and signature != embedder.signature:
        return (f"the text index is up to date, and keeps its {have} embeddings made by "
                f"{embeddings.described(signature)}; none are made by {embeddings.described(embedder.signature)} "
                "yet (run `rag index` again to make them).")
    return (f"the text index is up to date; {have} of {total} chunks have embeddings "
            "(run `rag index` again to embed the rest).")


def _open_for_reading(args, root: Path, cfg: dict):
    """The engine for ROOT, after checking it exists and is up to date (offering to re-index)."""
    global _index_root
    _index_root = root
    from ragweb import store
    from ragweb.engine import NEWER_VERSION, OLDER_VERSION, OTHER_STEMMER, Engine
    from ragweb.errors import IndexBusyError
    from ragweb.files import DECODER_VERSION
    from ragweb.indexer import check_index_place, index_path, scan_changes
    path = index_path(root)
    check_index_place(path)
    shown_root = shlex.quote(str(root))  # (for the commands the messages suggest)
    interactive = _stdin_is_tty() and not args.no_auto_index and not args.batch
    if not path.exists():
        other = ""  # (`rag index docs` puts the index in docs/: the usual slip is asking from above it)
        if args.dir is None and not getattr(args, "root", None):
            try:
                below = sorted(p.name for p in root.iterdir() if p.is_dir() and _has_index(p))
            except OSError:  # (a folder that can be entered but not listed)
                below = []
            if below:
                names = [shlex.quote(n) for n in below]
                other = (f"add `-d {names[0]}` to use the index in {names[0]}" if len(names) == 1 else
                         f"add `-d DIR` to use the index in one of {', '.join(names[:5])}"
                         + (", ..." if len(names) > 5 else ""))
        # (the folder by its name: "There is no index for .." read as a slip; Enter indexes all of it)
        where = f"the current folder {_logical_cwd()}" if root == Path(".") else str(root)
        if interactive and _ask(f"There is no index for {where}{f' ({other} instead)' if other else ''}. "
                                "Index it now? [Y/n] "):
            _run_index(root, cfg, out=sys.stderr)
        else:
            raise RagError(f"no index at {path}; run `rag index {shown_root}` first{f', or {other}' if other else ''}")
    engine = Engine.open(path, cfg, create=False)
    if engine.n_chunks == 0 and store.being_written(path):  # (not "the index is empty")
        engine.close()
        raise IndexBusyError(f"the index of {root} is being built by a `rag index` run that has not "
                             "finished; try again when it has")
    # (by the ignore rules of the last run: files a `--no-gitignore` run indexed are not "deleted")
    applied = engine.ignore_files_applied()
    changes = scan_changes(engine, root, cfg, use_gitignore=applied)
    change = engine.settings_change()
    if changes.any:
        n = len(changes.new) + len(changes.changed) + len(changes.deleted)
        lines = "\n".join(changes.describe())
        if change == NEWER_VERSION:  # (`rag index` refuses it: the note below says what to do)
            _say(f"note: {n} file(s) changed since the last index, which a newer version of ragweb built")
        elif interactive:
            sys.stderr.write(f"{n} file(s) changed since the last index:\n{lines}\n")
            if _ask("Re-index now? [Y/n] "):
                engine.close()
                _run_index(root, cfg, use_gitignore=applied, out=sys.stderr)
                engine = Engine.open(path, cfg, create=False)
        else:
            flag = ({False: " --no-gitignore", True: " --gitignore"}[applied]
                    if applied is not None and applied != cfg["index"]["gitignore"] else "")
            _say(f"note: {n} file(s) changed since the last index; run `rag index {shown_root}{flag}`")
    change = engine.settings_change()  # (again: a re-index above changed it)
    if cfg["embedding"]["enabled"]:
        from ragweb import embeddings
        engine.embedder = embeddings.Embedder(cfg)
        signature, have, total = embeddings.status(engine)
        # (a plain `rag index` refuses an index a newer version built)
        update = f"rag index {'--rebuild ' if change == NEWER_VERSION else ''}{shown_root}"
        if have and signature != engine.embedder.signature:
            _say(f"note: the index's embeddings were made by {embeddings.described(signature)}, not "
                 f"{embeddings.described(engine.embedder.signature)}; run `{update}` to make "
                 "them again (until then hybrid search ranks by BM25 alone)")
        elif have < total:
            _say(f"note: {total - have} of {total} chunks have no embedding yet; run "
                 f"`{update}` (vector search sees only the others)")
    # (an index this user cannot write is rebuilt by its owner: `rag index` here would refuse;
    # the folder named, as the other notes name it: a bare `rag index` in a folder below the
    # root, where the index was found, made a second index of that folder alone)
    rebuild = (f"its owner can rebuild it with `rag index {shown_root}` (you cannot write it here)"
               if engine.read_only else f"run `rag index {shown_root}` to rebuild it")
    if change == NEWER_VERSION:  # (`rag index` refuses it: rebuilt, it would be read the older way)
        _say("note: the index was built by a newer version of ragweb, which reads some files otherwise; "
             f"upgrade ragweb, or rebuild it with this version: `rag index --rebuild {shown_root}` (queries "
             "use its reading until then)")
    elif change == OLDER_VERSION or (not change and engine.n_chunks and engine.decoded_by() < DECODER_VERSION):
        _say("note: the index was built by an older version of ragweb, which reads some files "
             f"otherwise; {rebuild} (queries use its reading until then)")
    elif change.startswith(OTHER_STEMMER):
        _say(f"note: the index's words were {change} (this Python's), which stems some words "
             f"otherwise; {rebuild} (until then some words may not be found)")
    elif change:
        _say("note: the config's index settings differ from the index's; "
             f"{rebuild} (queries use the index's settings)")
    return engine


_UNDECODED_RE = re.compile("[\udc80-\udcff]")  # bytes of an argument that were not UTF-8 (surrogateescape)
_SURROGATE_RE = re.compile("[\ud800-\udfff]")  # any lone surrogate: no UTF-8 text holds one


def _undecoded(text: str) -> str | None:
    """"the byte 0xNN" for the first byte of ``text`` that was not UTF-8 (read with
    surrogateescape), else None."""
    m = _UNDECODED_RE.search(text)
    return f"the byte 0x{ord(m.group()) - 0xdc00:02x}" if m else None


def _questions(batch: str):
    """(id, question) pairs from a batch file: plain lines or JSON objects. A file is read and
    checked whole first, so a bad line stops the run before any question is answered; from
    stdin (``-``) each line is answered as it comes."""
    if batch == "-":  # (read as bytes: the terminal's encoding would let other bytes through)
        if sys.stdin is None:
            raise UsageError("--batch - reads standard input, which is closed")
        stream = sys.stdin.buffer
        head = stream.peek(2)[:2] if hasattr(stream, "peek") else b""
        encoding = "utf-16" if head in (b"\xff\xfe", b"\xfe\xff") else "utf-8"  # (PowerShell 5.1 pipes UTF-16)
        return _parse_questions(_capped_lines(io.TextIOWrapper(stream, encoding=encoding, errors="surrogateescape")),
                                batch)
    try:
        with open(batch, "rb") as f:
            data = read_capped(f, MAX_INPUT_BYTES)
        if data is None:  # (`--batch /dev/zero` never ends)
            raise UsageError(f"the batch file {batch} is over {MAX_INPUT_BYTES >> 20} MB: "
                             "not a file of questions")
        if b"\x00" in data and not utf16_encoding(data):  # (named by its line, as from standard input)
            n = data[:data.index(b"\x00")].count(b"\n") + 1
            raise UsageError(f"the batch file {batch} is not a text file of questions (it holds NUL bytes, "
                             f"the first on line {n})")
        text = user_text(data, errors="surrogateescape")  # (a line's bad byte is named below)
    except OSError as e:  # (there, but not to be read: permissions, a disk error)
        raise RagError(f"cannot read the batch file {batch}: {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(f"the batch file {batch} is not a text file of questions ({e})") from None
    return iter(list(_parse_questions(io.StringIO(text, newline=None), batch)))


MAX_LINE_CHARS = 16 << 20  # a line of questions from standard input at most (a stream without
                           # line breaks, `--batch - < /dev/zero`, was read as one line until the
                           # memory was full)


def _capped_lines(text):
    """The lines of the text stream ``text``, each refused once it is over `MAX_LINE_CHARS`."""
    n = 0
    while line := text.readline(MAX_LINE_CHARS + 1):
        n += 1
        if len(line) > MAX_LINE_CHARS:
            raise UsageError(f"standard input line {n} is over {MAX_LINE_CHARS:,} characters: "
                             "not a question (one a line, or a JSON object)")
        yield line


MAX_INPUT_BYTES = 256 << 20  # a --batch or --ctx file's size at most (a pack of the largest budget,
                             # 10,000,000 tokens, is some 40 million characters)


_JSON_LINE_RE = re.compile(r'\{\s*(?:"|\}|$)')  # a JSON object's start: "{" then a key, "}" or nothing
# a JSON array's start: "[" then an object's start, a string or nothing, or "[]"; so "[{x}] template",
# as "{retry} backoff", is a question
_JSON_ARRAY_RE = re.compile(r'\[\s*(?:' + _JSON_LINE_RE.pattern + r'|"|$)|\[\]$')


def _not_json_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _read_json(text: str, where: str, cut: str = "", line: int | None = None):
    """``text`` as JSON (no NaN or Infinity), or a UsageError that says ``where`` it was (and
    ``cut`` when the text ends before its JSON does; and the line of the fault when ``text``
    starts on line ``line`` of a file and spans lines)."""
    try:
        return json.loads(text, parse_constant=_not_json_constant)
    except json.JSONDecodeError as e:
        at = f" at line {line + e.lineno - 1}" if line is not None else ""
        raise UsageError(f"{where}: invalid JSON{at} ({e.msg}){cut if e.pos >= len(text) else ''}") from None
    except (ValueError, RecursionError) as e:
        raise UsageError(f"{where}: invalid JSON ({e})") from None


_COMMENT_RE = re.compile(r"#(?:\s|$)")  # a comment line of a batch: "# notes", "#"; not "#include x"


def _batch_entries(lines, where: str):
    """(what the entry is called, its default id, its text or JSON value) for each question of a
    batch: each line that holds anything but a comment (its id: its line number), or, when the first such
    line opens a JSON array (a file of questions written as one: `[{"id": 1, "question": ...},
    ...]` or `["...", ...]`), each item of the array (its id: its position)."""
    lines = iter(lines)
    first = True
    commented = False
    for n, line in enumerate(lines, 1):
        # (Notepad's byte order mark; on a later line too, where `cat a.txt b.txt` puts b's)
        line = line.lstrip("\ufeff").strip()
        if not line:
            continue
        if byte := _undecoded(line):
            raise UsageError(f"{where} line {n} is not UTF-8 text ({byte})")
        if "\x00" in line:  # (UTF-16 piped in)
            raise UsageError(f"{where} line {n} holds NUL characters, as UTF-16 text would; save it as UTF-8")
        if _COMMENT_RE.match(line):
            if not commented:  # (once: a file of notes would repeat it)
                commented = True
                _say(f"note: {where} line {n} is a comment ('#' then a space), not a question: such lines are "
                     "skipped; to ask one, write it as a JSON line: {\"question\": \"# ...\"}")
            continue
        if first and _JSON_ARRAY_RE.match(line) and not _json_then_words(line):  # ("[WIP] retry backoff" is a question)
            text = _rest(line, lines, where)
            if byte := _undecoded(text):
                raise UsageError(f"{where} is not UTF-8 text ({byte})")
            items = _read_json(text, f"{where} (a JSON array from line {n})", line=n)
            for i, item in enumerate(items, 1):
                yield f"item {i} of the JSON array", i, {"question": item} if isinstance(item, str) else item
            return
        first = False
        yield f"line {n}", n, line


def _json_then_words(line: str) -> bool:
    """Whether ``line`` starts with a whole JSON value and goes on after it (``["WIP"] retry
    backoff``): a question, not the start of a JSON array."""
    try:
        _, end = json.JSONDecoder().raw_decode(line)
    except (ValueError, RecursionError):
        return False
    return bool(line[end:].strip())


def _rest(first: str, lines, where: str) -> str:
    """``first`` and the rest of ``lines``, at most `MAX_INPUT_BYTES` characters (standard input
    has no end of its own)."""
    text = io.StringIO()  # (not a list of the lines: 256 MB of short lines took 1.4 GB so)
    text.write(first + "\n")
    for line in lines:
        if text.tell() + len(line) > MAX_INPUT_BYTES:
            raise UsageError(f"{where} is over {MAX_INPUT_BYTES >> 20} MB: not a JSON array of questions")
        text.write(line)
    return text.getvalue()


def _parse_questions(lines, batch: str):
    asked = noted = twice = False
    ids: dict[str, str] = {}  # each id given (as JSON) -> the entry that gave it first
    where = "standard input" if batch == "-" else batch
    for label, n, entry in _batch_entries(lines, where):
        if isinstance(entry, str) and _JSON_LINE_RE.match(entry):  # ("{retry} backoff" is a question)
            entry = _read_json(entry, f"{where} {label}", "; a JSON question is one line, as `jq -c` writes it")
        if isinstance(entry, str):
            qid, q = n, entry
        else:
            obj = entry
            q = obj.get("question", obj.get("query")) if isinstance(obj, dict) else None
            if not isinstance(q, str):
                raise UsageError(f"{where} {label}: " + ('a JSON line needs a "question" string' if label.startswith("line")
                                                         else 'an item is a question, or an object with a "question" string'))
            if m := _SURROGATE_RE.search(q):
                raise UsageError(f"{where} {label}: the question holds a lone surrogate "
                                 f"(U+{ord(m.group()):04X}), which is not text")
            try:  # (its id is written back: 1e999 would come out as Infinity, "\ud800" not at all)
                json.dumps(obj, allow_nan=False, ensure_ascii=False).encode("utf-8")
            except (ValueError, UnicodeEncodeError):
                raise UsageError(f"{where} {label}: its id (or another value) is a number too large "
                                 "or a lone surrogate, which the JSON answer cannot repeat") from None
            if (unread := sorted(set(obj) - {"id", "question", "query"})) and not noted:
                noted = True  # (once: a file of such lines would repeat it for each)
                _say(f"note: {where} {label}: {', '.join(map(repr, unread))} "
                     f"{'is' if len(unread) == 1 else 'are'} not read; a JSON line gives \"id\" and \"question\", "
                     "and options such as --path or --budget apply to every line")
            qid = obj.get("id", n)
        asked = True
        key = json.dumps(qid, sort_keys=True)
        if key in ids and not twice:
            twice = True  # (once: answers are matched to questions by their ids)
            _say(f"note: {where} {label}: its id {key} is {ids[key]}'s too (a line without \"id\" "
                 "has its line number, an item of a JSON array its position), so their answers cannot be told apart by id")
        ids.setdefault(key, label)
        yield qid, q
    if not asked:  # (an empty run is no error, but an empty file is likely a mistake)
        _say(f"note: {'standard input' if batch == '-' else batch} holds no questions")


def _highlighter(terms: list[str], analyzer):
    """Wrap words whose terms matched in ANSI bold (terminal output only)."""
    from ragweb.analysis import SHOWN_WORD_RE
    wanted = set(terms)

    def paint(text: str) -> str:
        def sub(m):
            return f"\x1b[1;33m{m.group()}\x1b[0m" if wanted & set(analyzer.word_terms(m.group())) else m.group()
        return SHOWN_WORD_RE.sub(sub, text)
    return paint


# --- commands ---------------------------------------------------------------------------
REBUILD = "`rag index --rebuild`"  # the remedy a damaged index's message names (with its folder, `_main`)


def cmd_index(args) -> int:
    global _index_root
    root = _index_root = _root(args)
    cfg = _config(args, root)
    _run_index(root, cfg, rebuild=args.rebuild, use_gitignore=args.gitignore, quiet=args.quiet)
    return EXIT_OK




def _question(args, command: str) -> str | None:
    """The question of `rag query` / `rag pack`: ``-q TEXT`` or the words after the command."""
    for flag, value in (("the question", args.query), ("the question", " ".join(args.words or ())),
                        ("--path", args.path)):
        if value and (byte := _undecoded(value)):
            raise UsageError(f"{flag} is not UTF-8 text ({byte}); "
                             "set the terminal's encoding to UTF-8")
    words = " ".join(args.words).strip() if args.words else ""
    if words and args.query:
        raise UsageError(f"rag {command}: give the question once, with -q or as words, not both")
    question = args.query or words or None
    if not question and not args.batch:
        given = args.query if args.query is not None else " ".join(args.words or ())
        blank = args.query is not None or bool(args.words)  # (`-q "$Q"` with $Q not set)
        empty = f" (the question given, {given!r}, is empty: a shell variable not set?)" if blank else ""
        raise UsageError(f"rag {command} needs a question{empty}: rag {command} -q QUESTION, "
                         f"rag {command} QUESTION WORDS, or --batch FILE")
    if args.batch and (args.query is not None or args.words):  # (an empty `-q "$Q"` too: not ignored)
        empty = "" if question else f" (an empty question, {(args.query or ' '.join(args.words))!r}, was given too)"
        raise UsageError(f"rag {command}: give either a question or --batch FILE, not both{empty}")
    if args.path and args.words and os.path.isfile(args.path) and not WILDCARD_RE.search(args.path):
        files = [w for w in args.words if os.path.isfile(w)]
        if files:  # (`--path src/*.py` unquoted: the shell gave one file to --path, the rest to the question)
            _say(f"note: the question holds file names ({', '.join(files[:3])}"
                 f"{' ...' if len(files) > 3 else ''}); if the shell expanded a --path glob, "
                 f"quote it: --path 'src/*.py'")
    return question


def _path_option(args, root: Path) -> None:
    """``--path`` as a glob relative to ``root`` (`_path_from_here`), its ``.`` and ``..``
    folders and doubled slashes taken out as a shell takes them: ``docs/../README.md`` is
    ``README.md`` (it matched nothing); one that climbs out of the root is an error."""
    args.path_typed = args.path  # (messages name the glob as the user wrote it)
    _path_from_here(args, root)
    if args.path is not None:
        args.path = _collapse_dots(args.path, root)


def _collapse_dots(glob: str, root: Path) -> str:
    """``glob`` without its ``.`` and ``..`` folders and ``//``: ``docs/./a.md`` is
    ``docs/a.md``, ``/docs/../a.md`` is ``/a.md`` (a leading ``/`` or ``./`` anchors it at the
    root and stays). A ``..`` that climbs above the root, or follows a wildcard (``*/..``
    stands for no one folder), is a UsageError."""
    head = "/" if glob.startswith("/") else "./" if glob.startswith("./") else ""
    parts = glob[len(head):].split("/")
    if not any(part in ("", ".", "..") for part in parts[:-1]) and parts[-1] not in (".", ".."):
        return glob
    kept: list[str] = []
    for part in parts:
        if part == "..":
            if not kept:
                raise UsageError(f"--path {quoted(glob)} leads out of the indexed folder {os.path.abspath(root)}: "
                                 "the paths of its index are matched, relative to that folder")
            if WILDCARD_RE.search(kept[-1]) or "{" in kept[-1]:
                raise UsageError(f"--path {quoted(glob)}: '..' after {quoted(kept[-1])}, a wildcard, names no one "
                                 "folder; write the path without it")
            kept.pop()
        elif part not in ("", "."):
            kept.append(part)
    folder = glob.endswith(("/", "/.", "/..")) and bool(kept)  # ("docs/sub/.." is the folder docs/)
    rest = "/".join(kept) + ("/" if folder else "")
    if not rest:  # ("docs/.." is the whole root, as "." is)
        return "**"
    anchored = head or "/" in glob.rstrip("/")  # (a slash inside anchors a glob at the root, as in git)
    return ("/" if anchored else "") + rest


def _path_from_here(args, root: Path) -> None:
    """``--path`` as a glob relative to ``root``: an absolute path inside the root is made
    relative to it (a glob starting with ``/`` is anchored at the root, so ``$PWD/src`` named
    nothing), and so is one written from ``./`` in a folder inside the root, or from ``../``
    (from the current folder, wherever it is; one that leads out of the root is an error).
    An absolute path that exists names itself: its ``[``, ``*``, ``?`` are not wildcards."""
    value = args.path
    literal = value is not None and os.path.isabs(value) and os.path.lexists(value)  # (a path, not a glob)
    climbs = value is not None and (value == ".." or value.startswith("../"))
    if value is not None and (value == "." or value.startswith("./") or climbs):
        for here, top in ((_logical_cwd(), os.path.abspath(root)), (os.path.realpath("."), os.path.realpath(root))):
            if climbs or (here != top and within(here, top)):
                # run from a folder inside the root (its index found above): "." is this folder
                value = os.path.join(here, value)
                break
    if value is None or not os.path.isabs(value):
        return
    for base, path in ((os.path.abspath(root), os.path.abspath(value)),
                       (os.path.realpath(root), os.path.realpath(value))):
        if within(path, base):
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            rel = glob_escape(rel) if literal else rel  # (pages/[id].tsx names that file, not pages/i.tsx)
            args.path = ("**" if rel == "." else "/" + rel) + ("/" if value.endswith("/") and rel != "." else "")
            return
    if climbs:
        raise UsageError(f"--path {quoted(args.path)} leads out of the indexed folder {os.path.abspath(root)}: the paths "
                         "of its index are matched, relative to that folder")


def _check_flag_bounds(args) -> None:
    """``-k`` and ``-b`` within the bounds rag.yaml's ``retrieve.top_k`` and
    ``pack.token_budget`` take (and the page's ``ragPack`` budget): a flag says what a key
    says, so a value the config refuses is refused as a flag too (a batch would answer every
    question with it). Each error names the flag the user typed."""
    from ragweb.config import SCHEMA
    for flag, value, (section, key) in (("-k/--top-k", args.top_k, ("retrieve", "top_k")),
                                        ("-b/--budget", getattr(args, "budget", None), ("pack", "token_budget"))):
        least, most = SCHEMA[section][key][2]
        if value is not None and value < least:
            raise UsageError(f"{flag} must be at least {least}, got {value}")
        if value is not None and value > most:
            raise UsageError(f"{flag} must be at most {most} (as {section}.{key} in rag.yaml), got {value}")


def _check_path_matches(args, engine, root: Path) -> None:
    """A ``--path`` that matches no indexed file is a usage error, said once (a batch would
    answer every question with nothing), with how paths are written. A path that is there
    outside the indexed folder (`--path /tmp/notes.md`; read as a glob from the root, it
    names that folder's own `/tmp`) is said to be outside it."""
    if args.path is None or engine.files_matching(args.path):
        return
    typed = args.path_typed
    if os.path.isabs(typed) and os.path.lexists(typed) and not within(os.path.abspath(typed), os.path.abspath(root)):
        raise UsageError(f"--path {quoted(typed)} is outside the indexed folder {os.path.abspath(root)}: the paths "
                         "of its index are matched, relative to that folder")
    like = engine.path_glob_hint(args.path)
    raise UsageError(f"--path {quoted(args.path_typed)} matches no indexed file: it is matched against the paths of "
                     f"the index of {root}, relative to that folder{like}")


def cmd_query(args) -> int:
    root = _reading_root(args)
    cfg = _config(args, root)
    if args.semantic and not cfg["embedding"]["enabled"]:
        raise RagError("--semantic ranks by embeddings: set embedding.enabled: true in rag.yaml "
                       "(with a running embedding provider) and run `rag index`")
    if args.context < 0:
        raise UsageError(f"--context must be 0 or more, got {args.context}")
    args.query = _question(args, "query")
    from ragweb.engine import Engine
    _path_option(args, root)
    _check_flag_bounds(args)
    Engine.check_options(top_k=args.top_k, path_glob=args.path)  # (a batch would fail every question)
    engine = _open_for_reading(args, root, cfg)
    _check_path_matches(args, engine, root)

    def run(q: str):
        mode = "semantic" if args.semantic else None
        engine.embed_ahead(q, mode)  # (not while reading: a slow embedding service would hold the read open)
        with engine.reading():  # (another `rag index` may commit between questions)
            hits = engine.search(q, top_k=args.top_k, mmr=not args.no_mmr, path_glob=args.path, mode=mode)
            if args.context:
                hits = [engine.widen(h, args.context) for h in hits]
        return hits

    def as_json(q, hits):
        return {"query": q, "results": [{**h.to_json(), "heading": h.heading, "terms": h.terms}
                                        for h in hits]}

    if args.batch or args.json:
        _utf8_stdout()
    if args.batch:
        for qid, q in _questions(args.batch):
            try:
                out = {"id": qid, **as_json(q, run(q))}
            except RagError as e:
                out = {"id": qid, "query": q, "error": str(e)}
            print(json.dumps(out, ensure_ascii=False), flush=True)
        return EXIT_OK
    hits = run(args.query)
    if args.json:
        print(json.dumps(as_json(args.query, hits), ensure_ascii=False, indent=2))
        return EXIT_OK
    if not hits:
        why = _empty_index(engine, root)
        if why is None:
            which = "no indexed file" + (f" matching --path {args.path_typed}" if args.path else "")
            floor = engine.config["retrieve"]["min_score_threshold"]
            why = (f"{which} scores retrieve.min_score_threshold ({floor}) or more" if floor
                   else f"{which} has these words")
        print(f"no results ({why})")
        return EXIT_OK
    from ragweb.formats import cited_range, shown
    # (https://no-color.org: any value but an empty one; a dumb terminal shows escapes as text)
    color = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    for i, h in enumerate(hits, 1):
        paint = _highlighter(h.terms, engine.analyzer) if color else (lambda t: t)
        where = f"{shown(h.path)}:{cited_range(h.range, h.to_json().get('cols'))}"
        head = f"  ({shown(h.heading)})" if h.heading else ""
        print(f"{i}. {where}  score {h.score:.3f}{head}")
        for line in shown(h.text).split("\n"):
            print(f"   {paint(line)}")
        print()
    return EXIT_OK


def _empty_index(engine, root: Path) -> str | None:
    """Why the index of ``root`` answers nothing, when it holds no chunk, else None."""
    if engine.n_chunks:
        return None
    if engine.scanned_at() is None:  # (no run has finished)
        return f"the index is empty: no `rag index` run of {root} has finished; run it again"
    return "the index is empty: `rag index` found no file to index"


def cmd_pack(args) -> int:
    from ragweb.formats import evidence_warning, render
    from ragweb.indexer import INDEX_DIR
    if args.output == "-":  # (as `--batch -` reads standard input)
        args.output = None
    if args.output in FORMATS:  # `-o text` reads as the config's `pack.output: text`: say which flag does that
        raise UsageError(f"-o/--output takes a file name; for the {args.output} format use --format "
                         f"{args.output} (to write a file named {args.output!r}, give ./{args.output})")
    root = _reading_root(args)
    cfg = _config(args, root)
    fmt = args.format or cfg["pack"]["output"]
    if args.output and _inside(args.output, index_dir := Path(root) / INDEX_DIR):
        raise UsageError(f"-o {args.output} is in the index folder {index_dir}, where rag keeps its own files; "
                         "write the pack elsewhere")
    if args.batch and args.output and args.batch != "-" and os.path.exists(args.output) and \
            os.path.realpath(args.batch) == os.path.realpath(args.output):
        raise UsageError(f"-o {args.output} is the --batch file: the answers would replace the questions; "
                         "write them to another file")
    if args.batch and args.format not in (None, "json"):
        raise UsageError(f"--batch writes one JSON result per line; --format {args.format} is for one question")
    args.query = _question(args, "pack")
    from ragweb.engine import Engine
    _path_option(args, root)
    _check_flag_bounds(args)
    Engine.check_options(top_k=args.top_k, path_glob=args.path, budget=args.budget)
    engine = _open_for_reading(args, root, cfg)
    _check_path_matches(args, engine, root)
    _check_output_not_indexed(args.output, engine, root, args.config_file)
    if empty := _empty_index(engine, root):  # (else its packs' "no evidence" blames the question)
        _say(f"note: {empty}")

    def run(q: str) -> dict:
        return engine.pack(q, budget=args.budget, top_k=args.top_k, path_glob=args.path,
                           compact=args.compact, lean=args.lean)  # (None: the config's)

    if args.batch:
        questions = _questions(args.batch)
        counts = {"packs": 0, "unsure": 0, "errors": 0}

        def answer(out):
            for qid, q in questions:
                try:
                    res = {"id": qid, **run(q)}
                    counts["unsure"] += evidence_warning(res) is not None
                except RagError as e:
                    res = {"id": qid, "query": q, "error": str(e)}
                    counts["errors"] += 1
                counts["packs"] += 1
                out.write(json.dumps(res, ensure_ascii=False) + "\n")
                out.flush()
        if args.output:
            with _output_kept_if_interrupted(args.output), AtomicWrite(args.output) as out:
                answer(out)
            _note_output(root, args.output)
            # the packs are in the file: say where, and how many may not answer their question
            n = counts["packs"]
            print(f"wrote {n} pack{'' if n == 1 else 's'} to {args.output} ({counts['unsure']} with weak or "
                  f"no evidence, {counts['errors']} with an error)", file=sys.stderr)
        else:
            _utf8_stdout()
            answer(sys.stdout)
        return EXIT_OK
    packed = run(args.query)
    text = render(packed, fmt)
    if args.output:
        with _output_kept_if_interrupted(args.output), AtomicWrite(args.output) as out:
            out.write(text + "\n")
        # a packed context written under the root is not indexed (indexer.pack_outputs)
        _note_output(root, args.output)
        files = len({sn["path"] for sn in packed["snippets"]})
        n = len(packed["snippets"])
        print(f"wrote {args.output}: {n} snippet{'' if n == 1 else 's'} from {files} "
              f"file{'' if files == 1 else 's'}, {packed['used_tokens']}/{packed['budget_tokens']} tokens, "
              f"evidence {packed['evidence']}", file=sys.stderr)
        warning = evidence_warning(packed)
        if warning:  # (JSON in a file shows it to nobody)
            _say(warning)
    else:
        if fmt in ("json", "xml"):
            _utf8_stdout()
        print(text)
    return EXIT_OK


def _check_output_not_indexed(output: str | None, engine, root: Path, config: Path | None) -> None:
    """A UsageError when ``-o FILE`` is a document the index of ``root`` holds (`-o
    README.md`, a slip of the hand or of tab completion) or the ``config`` file read: the
    pack would replace it (and a document, then listed as a pack output, would leave the
    index). An earlier pack's file is not indexed, so it is written over as ever."""
    if not output or not os.path.isfile(output):
        return
    if config is not None and os.path.isfile(config) and os.path.samefile(output, config):
        raise UsageError(f"-o {output} is the config file {config}: the pack would replace it; "
                         "write the pack to another file")
    for base, path in ((os.path.abspath(root), os.path.abspath(output)),
                       (os.path.realpath(root), os.path.realpath(output))):
        if path != base and within(path, base):
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            with engine.reading():
                indexed = engine.file_mtime(rel) is not None
            if indexed:
                raise UsageError(f"-o {output} is {rel}, a document the index of {root} holds: the pack would "
                                 "replace it; write the pack to another file")


@contextlib.contextmanager
def _output_kept_if_interrupted(output: str):
    """Ctrl-C while `AtomicWrite` writes ``output``: say that it was not written (a file is
    as it was; a pipe or device, written directly, has what was written before)."""
    try:
        yield
    except Interrupted:
        raise
    except KeyboardInterrupt:
        if os.path.exists(output) and not os.path.isfile(output):
            raise Interrupted(f"interrupted; -o {output} has what was written to it before, "
                              "and the index is as it was") from None
        state = "is as it was before this run" if os.path.exists(output) else "was not written"
        raise Interrupted(f"interrupted; -o {output} {state}, and the index is as it was") from None


def _note_output(root: Path, output: str) -> None:
    """`indexer.note_pack_output`, with a note for each other index that could not record it."""
    from ragweb.indexer import note_pack_output
    # (written from a folder reached through a link: the path through the link too, unless a
    # ".." in it climbs out of the real folder, not the shell's)
    where = output if ".." in Path(output).parts else os.path.join(_logical_cwd(), output)
    for folder in note_pack_output(root, where):
        _say(f"note: the index of {folder} could not record {output} as a packed context, so its next "
             "`rag index` may index it")


def _inside(path: str, folder: Path) -> bool:
    """Whether ``path`` (links followed) is ``folder`` or lies under it."""
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
    except ValueError:
        return False
    return True


def _batch_records(text: str) -> int | None:
    """How many packed contexts ``text`` holds as `rag pack --batch` writes them, one JSON
    object a line, or None when it is not such lines."""
    n = 0
    for line in text.splitlines():
        if line.strip():
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                return None
            if not isinstance(record, dict) or not ("snippets" in record or "error" in record):
                return None
            n += 1
    return n


def _other_format(text: str) -> str | None:
    """The format of a packed context `rag pack` wrote in a form other than JSON
    (`files.packed_context_reason`), else None."""
    from ragweb.files import packed_context_reason
    if not packed_context_reason(text) or text.lstrip().startswith("{"):
        return None
    head = text.lstrip()
    return "Markdown" if head.startswith("# Context for: ") else "XML" if head.startswith("<") else "text"


def _runprompt_question(args) -> str | None:
    """The question that overrides the context's: ``-q TEXT`` or the words after the flags,
    as `rag query` and `rag pack` take theirs; None to use the stored one."""
    if args.words and args.query is not None:
        raise UsageError("rag runprompt: give the question once, with -q or as words, not both")
    if args.words:
        words = " ".join(args.words).strip()
        if not words:  # (`rag runprompt ... "$Q"` with $Q not set)
            raise UsageError(f"the question is empty ({' '.join(args.words)!r}); give one, or leave it out "
                             "to use the question stored in the context")
        return words
    return args.query


def cmd_runprompt(args) -> int:
    from ragweb.prompts import builder_prompt, runtime_prompt
    args.query = _runprompt_question(args)
    if args.query is not None and not args.query.strip():  # (`-q "$Q"` with $Q not set)
        raise UsageError(f"the question (-q) is empty ({args.query!r}); give one, or leave -q out "
                         "to use the question stored in the context")
    if args.query and (byte := _undecoded(args.query)):
        raise UsageError(f"the question is not UTF-8 text ({byte}); "
                         "set the terminal's encoding to UTF-8")
    if args.ctx == "-" and sys.stdin is None:
        raise UsageError("--ctx - reads standard input, which is closed")
    remedy = ("make one with `rag pack -q ... --format json -o FILE`" if args.ctx != "-"
              else "pipe one in: `rag pack -q ... --format json | rag runprompt ... --ctx -`")
    source = "standard input" if args.ctx == "-" else args.ctx
    try:  # (as `--batch -`: `rag pack ... | rag runprompt --ctx -`)
        if args.ctx == "-":
            data = read_capped(sys.stdin.buffer, MAX_INPUT_BYTES)
        else:
            with open(args.ctx, "rb") as f:
                data = read_capped(f, MAX_INPUT_BYTES)
        if data is None:  # (`--ctx /dev/zero` never ends)
            raise RagError(f"context file {args.ctx} is over {MAX_INPUT_BYTES >> 20} MB: not packed-context "
                           f"JSON; {remedy}")
        text = user_text(data)
    except OSError as e:
        raise RagError(f"cannot read context file {args.ctx}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise RagError(f"{source} is not packed-context JSON (not UTF-8 text); {remedy}") from None
    except ValueError as e:  # (NUL bytes)
        raise RagError(f"{source} is not packed-context JSON ({e}); {remedy}") from None
    if not text.strip():  # (`rag pack ... | rag runprompt --ctx -` after the pack failed)
        raise RagError(f"{source} is empty, not a packed context"
                       + (" (did the command before the pipe fail?)" if args.ctx == "-" else "") + f"; {remedy}")
    if fmt := _other_format(text):  # (`pack.output: markdown` in rag.yaml, or --format)
        raise RagError(f"{source} is a packed context in the {fmt} format; rag runprompt reads JSON: {remedy}")
    try:
        packed = json.loads(text)
    except RecursionError:
        raise RagError(f"{source} is not packed-context JSON (nested too deeply)") from None
    except json.JSONDecodeError as e:
        n = _batch_records(text) if e.msg == "Extra data" else None
        if n:
            given = "FILE" if args.ctx == "-" else shlex.quote(args.ctx)
            raise RagError(f"{source} holds {n} packed contexts, one a line (`rag pack --batch` output); "
                           f"give one of them, such as the second: `sed -n 2p {given} | rag runprompt "
                           f"{'--runtime' if args.runtime else '--builder'} --ctx -`") from None
        raise RagError(f"{source} is not packed-context JSON (line {e.lineno}: {e.msg}); {remedy}") from None
    except ValueError:  # (a number of more than 4,300 digits)
        raise RagError(f"{source} is not packed-context JSON (it holds a number too long to read)") from None
    if isinstance(packed, dict) and "snippets" not in packed and isinstance(packed.get("error"), str):
        raise RagError(f"{source} is the answer to a question that failed, not a packed context: "
                       f"{packed['error']}")
    if isinstance(packed, dict) and "snippets" not in packed and isinstance(packed.get("results"), list):
        raise RagError(f"{source} holds search results (`rag query --json` output), not a packed context; {remedy}")
    if not isinstance(packed, dict) or not isinstance(packed.get("snippets"), list):
        raise RagError(f"{source} is not packed-context JSON (no \"snippets\" list)")
    for n, sn in enumerate(packed["snippets"], 1):
        missing = [k for k in ("path", "range", "text") if not isinstance(sn, dict) or not isinstance(sn.get(k), str)]
        if missing:
            quoted = [f'"{k}"' for k in missing]
            names = " and ".join([", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted)
            raise RagError(f"{source} is not packed-context JSON (snippet {n}: {names} "
                           f"{'is' if len(missing) == 1 else 'are'} missing or not text)")
    if not isinstance(packed.get("query", ""), str):
        raise RagError(f"{source} is not packed-context JSON (its \"query\" is not text)")
    if args.query is None and not packed.get("query", "").strip():
        raise RagError(f"{source} holds no question (its \"query\" is missing or empty); give one with -q")
    texts = [packed.get("query", "")] + [v for sn in packed["snippets"] for v in (sn["path"], sn["range"], sn["text"])]
    if any(_SURROGATE_RE.search(t) for t in texts):
        raise RagError(f"{source} is not packed-context JSON (it holds a lone surrogate, which is not text)")
    render = runtime_prompt if args.runtime else builder_prompt
    print(render(packed, args.query))
    from ragweb.formats import evidence_warning
    if args.query is None and packed.get("evidence") in ("weak", "none"):  # (as `rag pack -o` says it: a
        _say(evidence_warning(packed))  # JSON pack piped on shows it to nobody; -q asks another question)
    return EXIT_OK


def cmd_config(args) -> int:
    from ragweb.config import dump_config, load_config
    root = _root(args)
    cfg, found = load_config(root, args.config)  # (an error: `_main` writes the notes held)
    _set_level("debug" if args.debug else cfg["logging"]["level"])
    _note_misnamed_config(args, root, found)
    if (folder := _index_above(args, root)) is not None and args.config is None:
        _say(f"note: this is the config of `rag index` here; `rag query` and `rag pack` here use "
             f"the index of {folder} and its config: `rag config -d {shlex.quote(str(folder))}` "
             "shows it")
    print(f"# effective config ({'from ' + str(found) if found else 'defaults'})")
    print(dump_config(cfg), end="")
    return EXIT_OK


def cmd_web(args) -> int:
    from ragweb import webbuild
    return webbuild.run(args)


COMMANDS = {"index": cmd_index, "query": cmd_query, "pack": cmd_pack, "runprompt": cmd_runprompt,
            "config": cmd_config, "web": cmd_web}


def main(argv: list[str] | None = None) -> int:
    """Run `rag` with ``argv`` (default: the command line) and return its exit code."""
    signals.stopped_by = None
    try:
        _guard_output()
        _escape_unencodable()
        try:
            return _main(argv)
        finally:
            if sys.stdout is not None:  # (here, not at exit, where a reader gone is "Exception ignored")
                sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`rag query ... | head -1`): nothing more to say
        null = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):  # (the flush at exit then writes nowhere, not "Exception ignored")
            os.dup2(null, fd)
        return EXIT_OK
    except KeyboardInterrupt as e:  # (before its command ran: reading the arguments)
        return _interrupted(e)


def _interrupted(e: KeyboardInterrupt) -> int:
    """Say that Ctrl-C (or SIGTERM, SIGHUP) stopped `rag`, and what it left; its exit code."""
    print(("" if signals.stopped_by else "\n")  # (after the terminal's ^C)
          + getattr(e, "message", signals.INTERRUPTED), file=sys.stderr)
    return 128 + (signals.stopped_by or 2)  # (as a shell reports a command a signal ended: SIGINT 130)


def _flush_output() -> None:
    """Write out what standard output holds while an error can still be said (`main`)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:  # (a full disk: `rag query ... > FILE`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # (not tried again at exit)
        raise RagError(f"cannot write the output: {e.strerror or e}") from None


_OTHER_COMMANDS_FLAGS = {
    ("query", "--format"): "; rag query prints JSON with --json",
    ("pack", "--json"): "; rag pack writes JSON unless pack.output says otherwise: --format json",
    ("index", "--path"): ("; rag index indexes the whole folder (index.includes and index.excludes in rag.yaml "
                          "choose its files); --path narrows what rag query and rag pack search"),
}
"""(command, a flag of another command's) -> what the command takes instead."""


def _unknown_flags(command_parser: argparse.ArgumentParser, command: str, extra: list[str],
                   words: list[str] | None = None) -> None:
    """Exit with the usage of ``command``, which lists the flags it takes, for ``extra`` it
    does not take (`rag query --format json`: a flag of `rag pack`'s). A question given as
    plain ``words`` with a word that looks like a flag (`rag query what does -g do`) is told
    to come after ``--``."""
    flags = {a.split("=")[0] for a in extra}
    hint = next((h for (c, flag), h in _OTHER_COMMANDS_FLAGS.items() if c == command and flag in flags), "")
    if not hint and words and extra[0].startswith("-"):
        question = " ".join(shlex.quote(w) for w in [*words, *extra])
        hint = (f"; if {extra[0]} is a word of the question, write the question after -- "
                f"(rag {command} -- {question}) or as -q={shlex.quote(' '.join([*words, *extra]))}")
    command_parser.error(f"unrecognized arguments: {' '.join(extra)}{hint}")


def _main(argv: list[str] | None) -> int:
    if sys.stderr is None:  # started with its standard error closed (`2>&-`): warnings nobody can read
        sys.stderr = open(os.devnull, "w", errors="ragweb.escape")
    global _level, _index_root
    _level, _held[:], _index_root = None, [], None  # (a run's notes wait for its config's logging.level)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # (`rag query retry -k 1 backoff`: words after an option are the question's too)
        if args.command in ("query", "pack", "runprompt") and not any(a.startswith("-") for a in extra):
            args.words = [*(args.words or ()), *extra]
        else:
            _unknown_flags(parser.commands[args.command], args.command, extra, getattr(args, "words", None))
    if sys.stdout is None:  # started with its standard output closed (`>&-`)
        if args.command not in ("index", "web") and getattr(args, "output", None) in (None, "-"):
            print(f"Error: standard output is closed: rag {args.command} has nowhere to write its results",
                  file=sys.stderr)
            return EXIT_ERROR
        sys.stdout = open(os.devnull, "w", errors="ragweb.escape")  # (a summary nobody can read)
    try:
        with signals.stop_signals_interrupt():  # (SIGTERM, SIGHUP: the cleanup of Ctrl-C)
            _refuse_empty_names(args)
            _refuse_missing_files(args)
            code = COMMANDS[args.command](args) or EXIT_OK
        _flush_output()
        return code
    except (RagError, sqlite3.DatabaseError) as e:
        if _level is None:  # (the notes said before the config was read, then the error)
            _set_level(None)
        if args.debug:
            raise
        if isinstance(e, sqlite3.DatabaseError):
            from ragweb.store import storage_problem
            if why := storage_problem(e):  # (a write that failed is rolled back whole)
                e = RagError(f"{why} ({e}); the index is as it was before this command")
            elif _index_root is not None:
                from ragweb.indexer import index_path
                e = RagError(f"the index {index_path(_index_root)} is damaged ({e}); rebuild it with "
                             "`rag index --rebuild`")
            else:
                e = RagError(f"the index is damaged ({e}); rebuild it with `rag index --rebuild`")
        if _index_root is not None and _index_root != Path(".") and REBUILD in str(e):
            # (`rag query -d docs`: a rebuild in the current folder would build another index)
            e = type(e)(str(e).replace(REBUILD, f"{REBUILD[:-1]} {shlex.quote(str(_index_root))}`"))
        print(f"Error: {e}", file=sys.stderr)
        return EXIT_USAGE if isinstance(e, UsageError) else EXIT_ERROR
    except KeyboardInterrupt as e:
        return _interrupted(e)
    except BrokenPipeError:
        raise
    except OSError as e:
        if args.debug:
            raise
        if isinstance(e, OutputError):  # (what it holds is not written again at exit)
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            e = f"cannot write the output: {e.strerror or e}"
        print(f"Error: {e}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        if _level is None:  # (stopped before its config was read: the notes held are written)
            _set_level(None)


if __name__ == "__main__":  # (`python -m ragweb.cli`, as `python -m ragweb`)
    raise SystemExit(main())

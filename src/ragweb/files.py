"""File selection and decoding for the indexer (and, for decoding, the browser).

Selection: `iter_files` walks a root in sorted order and yields the files that match an
include glob and no exclude glob and are not ignored by a `.gitignore` / `.ragignore` (or, in a
git work tree, by ``info/exclude`` and the user's ``core.excludesFile``).
Globs use gitignore syntax everywhere: a pattern without a slash (other than a trailing
one) matches a name at any depth, `**/` matches zero or more directories (so `**/*.md`
also matches `a.md` at the root), a trailing `/` matches directories only, a leading `/`
anchors to the directory the pattern belongs to, and excluding a directory excludes
everything under it.

Decoding: `decode` applies one set of rules in both targets: BOMs, UTF-16 with or
without BOM, binary detection by NUL bytes, UTF-8 (with replacement of invalid bytes, or,
when no byte beyond ASCII is valid UTF-8 -- or fewer than not, in a file mostly beyond ASCII
-- a legacy encoding: Windows-1252 or Windows-1250, whichever reads likelier, for a mostly ASCII
file, else the Japanese, Korean, Chinese, Hebrew, Cyrillic, Arabic, Greek, Thai or Latin one
whose text reads as its language, else a clear refusal), newlines to `\\n`.
"""

from __future__ import annotations

import bisect
import errno
import functools
import gzip
import hashlib
import io
import os
import re
import shlex
import stat
import unicodedata
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

from . import gitconfig
from .config import DEFAULT_INCLUDES, never_indexed
from .errors import RagError, UsageError, quoted

IGNORE_FILES = (".gitignore", ".ragignore")  # read in this order; later rules win
SNIFF_BYTES = 8192  # binary detection looks at this many leading bytes
# A script, style sheet or JSON file whose lines average more than this many characters
# is minified or generated (a bundled library, a doc build's search index): machine text
# whose words match every question. (GitHub Linguist calls a .js or .css file minified
# past 110 characters; this is more lenient.)
MINIFIED_SUFFIXES = (".js", ".mjs", ".cjs", ".css", ".json", ".map")
MINIFIED_LINE_CHARS = 200
PROSE_SUFFIXES = (".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc", ".org")  # `chunking.is_markdown`
# Also prose since `engine.MARKUP_VERSION` 16 (`ingest.is_prose`): documents known by their
# name alone, as a project's README is, and prose formats whose markup is read as text
# (Texinfo, Perl's POD, LaTeX, RDoc, R Markdown, Quarto).
# In any capitals (`Readme`, `changelog`) since version 17, as `is_more_prose` compares them
# (an include such as `**/*` took them before, read as plain text).
PROSE_NAMES = frozenset({"README", "INSTALL", "NEWS", "CHANGES", "CHANGELOG", "CONTRIBUTING",
                         "HACKING", "TODO", "AUTHORS", "LICENSE", "COPYING", "COPYING.LESSER"})
# A README-like document named with a word before or after its name, as Debian's and other
# projects' documentation folders hold them: "TLS_README", "README.Debian", "NEWS.Debian",
# "INSTALL.generic" (`affixed_prose`; not a change log's: "changelog.Debian" is the packaging's)
AFFIXED_NAMES = frozenset({"README", "INSTALL", "NEWS", "TODO", "FAQ"})
_WORD_BEFORE_RE = re.compile(r"(?:[A-Za-z0-9]+[_-])+([A-Za-z]+)")  # "TLS_README", "SMTPUTF8_README"
_WORD_AFTER_RE = re.compile(r"([A-Za-z]+)\.([A-Za-z]+)")            # "README.Debian", "changelog.Debian"
SCRIPT_NAMES = frozenset({"install"})  # a known name in lower case that is usually a program, not prose
MORE_PROSE_SUFFIXES = (".texi", ".texinfo", ".pod", ".tex", ".rdoc", ".rmd", ".qmd")
HTML_SUFFIXES = (".html", ".htm", ".xhtml")  # `markup.is_html`
COMPRESSED_SUFFIX = ".gz"  # a gzip-compressed document is read as the document it compresses (`plain_name`)


@dataclass(frozen=True)
class FileEntry:
    """A selected file: `path` relative to the root with '/' separators."""

    path: str
    abspath: str
    size: int
    mtime: float
    link: bool = False  # (a symbolic link to the file, whose name may not be its target's)
    ident: str = ""  # which file it is: "inode:ctime_ns" (`store.IDENTS_TABLE`)


@dataclass(frozen=True)
class DecodeResult:
    """Decoded text, or `skipped` with a short reason ("binary", "too large (...)", ...)."""

    text: str | None
    skipped: str | None = None


def compressed(path: str) -> bool:
    """Whether ``path`` names a gzip-compressed file (asked per file read: the common answer
    is the cheapest)."""
    return path[-1:] in "zZ" and path[-len(COMPRESSED_SUFFIX):].lower() == COMPRESSED_SUFFIX


def plain_name(path: str) -> str:
    """The name a file's text goes by: a gzip-compressed document's without its ``.gz``
    (Debian ships most documentation so: ``config.md.gz`` is selected and read as
    ``config.md``), else ``path``. Only prose and HTML pages: compressed data and programs
    are machine-made twins or datasets (Node's ``fs.json.gz`` beside ``fs.md`` and
    ``fs.html``, Docker's seventeen ``v1.NN.yaml.gz`` API specifications)."""
    if compressed(path):
        inner = path[:-len(COMPRESSED_SUFFIX)]
        if inner.lower().endswith(PROSE_SUFFIXES + HTML_SUFFIXES) or is_more_prose(inner):
            return inner
    return path


MAN_NAME_RE = re.compile(r"\.[1-9][a-z]{0,8}$")  # a man page's name, its ".gz" taken off: open.2, Foo.3pm
LOG_FOLDERS = frozenset({"log", "logs"})  # a numbered name in one is a rotated log (/var/log/syslog.2.gz)
INFO_NAME_RE = re.compile(r"\.info(?:-\d+)?$", re.I)  # an Info file's: coreutils.info, find.info-1
# the globs that take them, for the note of a run that found nothing else (`LeftOut.hint`)
DOCUMENT_GLOBS = {"man page": '"**/*.[1-9]*.gz", "**/*.[1-9]*"', "Info file": '"**/*.info*.gz", "**/*.info*"'}


def document_kind(name: str, folder: str = "") -> str | None:
    """"man page" or "Info file" for a file name (compressed or not) of one, else None: the
    documents no default glob takes, which `ragweb.markup` reads (`show_man`, `show_info`).
    A rotated log has a man page's name: one whose stem ends in ``.log`` (``app.log.1``,
    ``kern.log.2.gz``) is none, nor is one in a ``folder`` named log or logs
    (``syslog.2.gz``, in man2/ the page syslog(2))."""
    if name[-3:].lower() == COMPRESSED_SUFFIX:
        name = name[:-3]
    if m := MAN_NAME_RE.search(name):
        if name[:m.start()].lower().endswith(".log") or folder.lower() in LOG_FOLDERS:
            return None
        return "man page"
    if INFO_NAME_RE.search(name):
        return "Info file"
    return None


def is_more_prose(path: str, affixed: bool = True) -> bool:
    """True for a document `PROSE_NAMES` names, in any capitals, or (``affixed``, since
    `engine.MARKUP_VERSION` 23) named as one with a word before or after it (`affixed_prose`),
    or a `MORE_PROSE_SUFFIXES` format (not compressed: see `plain_name`)."""
    name = path[path.rfind("/") + 1:]
    return ((name.upper() in PROSE_NAMES and name not in SCRIPT_NAMES) or path.lower().endswith(MORE_PROSE_SUFFIXES)
            or (affixed and affixed_prose(name)))


def affixed_prose(name: str) -> bool:
    """True for a document named as an `AFFIXED_NAMES` one, in capitals, with a word before it
    ("TLS_README") or after it ("README.Debian", "INSTALL.generic"). The word after it is
    letters, and no format a default glob takes: "README.md", "INSTALL.sh" are read as their
    formats; "install-sh" is none."""
    if m := _WORD_BEFORE_RE.fullmatch(name):
        return m[1] in AFFIXED_NAMES
    if m := _WORD_AFTER_RE.fullmatch(name):
        return m[1] in AFFIXED_NAMES and m[2].lower() not in _format_words()
    return False


@functools.lru_cache(maxsize=1)
def _format_words() -> frozenset:
    """The suffixes the default includes name ("md", "py", "sh", ...)."""
    return frozenset(glob[len("**/*."):].lower() for glob in DEFAULT_INCLUDES if glob.startswith("**/*."))


# ---------------------------------------------------------------------------- globs

_ANY_FOLDER = "(?:.*/)?"  # before an unanchored pattern: in any folder


@functools.lru_cache(maxsize=4096)
def glob_to_regex(pattern: str) -> str:
    """Regex source (for fullmatch) of a gitignore-style glob, without `!` or trailing `/`.

    The result matches paths relative to the pattern's base directory.
    """
    anchored = "/" in pattern
    segments = pattern.removeprefix("/").split("/")
    parts = [] if anchored else [_ANY_FOLDER]
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if len(seg) >= 2 and not seg.strip("*"):  # (git reads "***" as "**")
            parts.append(".*" if last else "(?:[^/]*/)*")
        else:
            parts.append(_segment_regex(seg) + ("" if last else "/"))
    return "".join(parts)


NEVER = "(?!)"
"""A regex that matches nothing: what git makes of a glob with an unclosed ``[`` or an
unknown ``[:class:]``."""


_STAR = "[^/]*"


def _segment_regex(seg: str) -> str:
    out, i, n = [], 0, len(seg)
    while i < n:
        c = seg[i]
        if c == "*":
            while i + 1 < n and seg[i + 1] == "*":
                i += 1
            out.append(_STAR)
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(seg[i]))
        elif c == "[":
            regex, i = _bracket(seg, i)
            if regex == NEVER:
                return NEVER
            out.append(regex)
        else:
            out.append(re.escape(c))
        i += 1
    return _without_backtracking(out)


def _without_backtracking(pieces: list[str]) -> str:
    """The regex of a segment's pieces, each `_STAR` but the last taking the shortest run
    that lets the fixed-length pieces after it match, and keeping it (an atomic group): a
    glob of many stars ("*a*a*a*a*b") against a long name backtracked exponentially (60
    letters took 13 s at seven stars). Taking the earliest match of each piece between two
    stars is as right as trying them all, since the pieces have fixed lengths."""
    stars = [k for k, p in enumerate(pieces) if p is _STAR]
    if len(stars) < 2:
        return "".join(pieces)
    out = pieces[:stars[0]]
    for a, b in zip(stars, stars[1:]):
        out.append(f"(?>[^/]*?{''.join(pieces[a + 1:b])})")
    out += pieces[stars[-1]:]
    return "".join(out)


_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "\\x21-\\x7e", "lower": "a-z", "print": "\\x20-\\x7e",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z", "xdigit": "0-9A-Fa-f",
}


def _bracket(seg: str, start: int) -> tuple[str, int]:
    """The regex of the bracket expression opened at ``seg[start]`` and the index of its
    closing ``]``, read as git's wildmatch reads it: ``!`` or ``^`` first negates, a ``]``
    first is literal, ``\\`` escapes, ``a-z`` is a range (a reversed one adds nothing),
    ``[:digit:]`` a character class. `NEVER` when it is not closed or names an unknown class."""
    i, n = start + 1, len(seg)
    negate = i < n and seg[i] in "!^"
    if negate:
        i += 1
    items: list[str] = []
    prev = ""  # the last literal character, which a '-' may start a range from
    first = True
    close = start  # the first ']' past the last "[:" looked at (-1: none), looked for again only once passed
    while i < n and (first or seg[i] != "]"):
        first = False
        c = seg[i]
        if c == "\\":
            i += 1
            if i == n:
                break
            c = seg[i]
            items.append(re.escape(c))
        elif c == "-" and prev and i + 1 < n and seg[i + 1] != "]":
            i += 1
            if seg[i] == "\\":
                i += 1
                if i == n:
                    break
            c = seg[i]
            if prev <= c:
                items.append(f"{re.escape(prev)}-{re.escape(c)}")
            c = ""
        elif c == "[" and seg.startswith(":", i + 1):
            if 0 <= close < i + 2:  # (not a search to the end for each "[:" of "[:[:[:...": quadratic)
                close = seg.find("]", i + 2)
            if close - 1 >= i + 2 and seg[close - 1] == ":":
                name = seg[i + 2:close - 1]
                if name not in _POSIX_CLASSES:
                    return NEVER, n
                items.append(_POSIX_CLASSES[name])
                i = close
                c = ""
            else:
                items.append(re.escape(c))
        else:
            items.append(re.escape(c))
        prev = c
        i += 1
    if i >= n:  # not closed
        return NEVER, n
    body = "".join(items)
    if negate:
        return f"[^/{body}]", i
    return (f"(?!/)[{body}]" if body else NEVER), i  # (never a slash, as in git: "[[:punct:]]")


def glob_problem(pattern: str) -> str | None:
    """Why a config glob can match nothing at all (an unclosed ``[``, an unknown
    ``[:class:]``, ``{a,b}`` groups standing for too many globs, a last backslash that
    escapes nothing, a control character), or None. (In a .gitignore such a line is
    silently inert, as in git.)"""
    if m := _CONTROL_RE.search(pattern):
        code = ord(m.group())
        name = {0x0A: ", a line break", 0x09: ", a tab", 0x08: ", a backspace", 0x0D: ", a carriage return"}.get(code, "")
        return (f"the control character U+{code:04X}{name} (in double quotes YAML reads \\n, \\t, \\b as "
                "one: write globs in single quotes, with '/' between folders)")
    if (len(pattern) - len(pattern.rstrip("\\"))) % 2:
        return "a last '\\' that escapes nothing (folders are separated by '/')"
    if brace_count(pattern) > MAX_BRACE_GLOBS:
        return f"{{a,b}} groups that stand for more than {MAX_BRACE_GLOBS} globs"
    for seg in pattern.split("/"):
        i = 0
        while i < len(seg):
            if seg[i] == "\\":
                i += 2
                continue
            if seg[i] == "[":
                regex, i = _bracket(seg, i)
                if regex == NEVER:
                    unknown = [c for c in re.findall(r"\[:(\w*):\]", seg) if c not in _POSIX_CLASSES]
                    if unknown:
                        return (f"an unknown character class [:{unknown[0]}:] (known: "
                                + ", ".join(_POSIX_CLASSES) + ")")
                    return "a '[' that no ']' closes (write '\\[' for the character itself)"
            i += 1
    return None


_CONTROL_RE = re.compile("[\x00-\x1f\x7f]")
# a backslash between two characters of names, outside brackets: "docs\\build", ".\\src"
_PATH_JOIN_RE = re.compile(r"(?<=[\w.-])\\(?=[\w.-])")
# (an unclosed one is matched too, to its end, and left as it is: a search that failed at
# each of many '[' with no ']' after them was quadratic; none of the '[' it passed has one)
_BRACKETS_RE = re.compile(r"\[(?:\\.|[^\]\\])*(\])?")


def glob_escape(path: str) -> str:
    """A glob that matches ``path`` itself: its wildcard and brace characters made plain."""
    return re.sub(r"([\\*?\[\]{},])", r"\\\1", path)


def backslash_problem(pattern: str) -> str | None:
    """What is wrong with a glob whose backslash stands between two characters of names,
    outside brackets (``docs\\build``, ``.\\src``): a Windows path, where a glob separates
    folders with '/' and '\\' only makes the next character plain (``\\*``, ``*\\.md``,
    ``a[\\-_]b`` are fine); else None."""
    outside = _BRACKETS_RE.sub(lambda m: "[" + "x" * (len(m.group()) - 2) + "]" if m.group(1) else m.group(),
                               pattern.replace("\\\\", "//"))
    m = _PATH_JOIN_RE.search(outside)
    if m is None:
        return None
    return (f"a backslash before {pattern[m.end()]!r}: globs separate folders with '/', and '\\' only "
            "makes the next character plain (\\*, \\?, \\[)")


@dataclass(frozen=True)
class Rule:
    """One parsed pattern: compiled regex, negation (`!`), directory-only (trailing `/`)."""

    regex: re.Pattern
    negate: bool = False
    dir_only: bool = False


@functools.lru_cache(maxsize=4096)
def parse_rule(pattern: str, allow_negation: bool = True) -> Rule | None:
    """Parse one gitignore line (or config glob); None for blank lines and comments."""
    if allow_negation and pattern.startswith("#"):
        return None
    pattern = _trim_trailing_spaces(pattern[:-1] if pattern.endswith("\r") else pattern)  # (one "\r", as git)
    if (len(pattern) - len(pattern.rstrip("\\"))) % 2:
        return None  # (a last backslash escapes nothing: git's rule matches no path)
    negate = allow_negation and pattern.startswith("!")
    pattern = pattern[1:] if negate else pattern
    dir_only = pattern.endswith("/")
    pattern = pattern[:-1] if dir_only else pattern  # (one only: git's "build//" matches nothing)
    if not pattern:
        return None
    return Rule(re.compile(glob_to_regex(pattern), re.DOTALL), negate, dir_only)


def _trim_trailing_spaces(pattern: str) -> str:
    """``pattern`` without its trailing spaces, but for one a backslash escapes (``foo\\ ``
    keeps it; ``foo\\\\ `` is an escaped backslash, and loses it), as git trims them."""
    kept = pattern.rstrip(" ")
    if kept != pattern and (len(kept) - len(kept.rstrip("\\"))) % 2:
        return kept + " "
    return kept


# The two forms most config globs take, tested without a regex (a walk asks for every
# file): "**/*.md", any path whose name ends so, and "**/node_modules/**", any path inside
# a folder of that name.
_SUFFIX_GLOB_RE = re.compile(r"\*\*/\*([^*?\[\]\\/\s!#]+)")
_FOLDER_GLOB_RE = re.compile(r"\*\*/([^*?\[\]\\/\s!#]+)/\*\*")


def _composed(text: str) -> str:
    """``text`` in Unicode's composed form (NFC); ASCII text as it is, at no cost."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def case_only_glob(includes: "GlobSet", path: str) -> str | None:
    """The glob (``**/*.MD``) that would take ``path``, which ``includes`` leaves out only
    for the case of its suffix (``Guide.MD``, which ``**/*.md`` takes in lower case), else
    None (`LeftOut.case_only`; the page's `facade.check_path`)."""
    suffix = os.path.splitext(path.rsplit("/", 1)[-1])[1]
    if suffix == suffix.lower() or not includes.matches_file(path[:len(path) - len(suffix)] + suffix.lower()):
        return None
    return f"**/*{suffix}"


class GlobSet:
    """Config globs (includes or excludes) compiled into one regex per kind; the globs that
    only name an ending (``**/*.md``) or a folder (``**/build/**``) are tested as strings,
    the same test in a fraction of the time."""

    def __init__(self, patterns: list[str]):
        suffixes, folders, rest = [], [], []
        patterns = [q for p in patterns for q in expand_braces(_strip_dot(_composed(p)))]
        # A folder named as such ("docs/") or plainly ("docs", "src/lib", no wildcard) stands
        # for everything in it, as in a .gitignore
        trees = [parse_rule(p, allow_negation=False) for p in patterns
                 if p.endswith("/") or not WILDCARD_RE.search(p)]
        self._trees = _union([r for r in trees if r])
        for p in patterns:
            if m := _SUFFIX_GLOB_RE.fullmatch(p):
                suffixes.append(m.group(1))
            elif m := _FOLDER_GLOB_RE.fullmatch(p):
                folders.append(f"/{m.group(1)}/")
            else:
                rest.append(p)
        self._suffixes, self._folders = tuple(suffixes), tuple(folders)
        rules = [r for r in (parse_rule(p, allow_negation=False) for p in rest) if r]
        self._any = _union([r for r in rules if not r.dir_only])
        self._dirs = _union([r for r in rules if r.dir_only])

    def matches(self, path: str, is_dir: bool = False) -> bool:
        """True when a glob matches the relative '/'-separated `path` (both read in one
        Unicode form: macOS writes "é" of a name as "e" and an accent, a keyboard as one)."""
        path = _composed(path)
        if self._suffixes and path.endswith(self._suffixes):
            return True
        if self._folders:
            inside = "/" + path
            if any(f in inside for f in self._folders):
                return True
        if self._any and self._any.fullmatch(path):
            return True
        return bool(is_dir and self._dirs and self._dirs.fullmatch(path))

    def matches_file(self, path: str) -> bool:
        """True when a glob matches the file ``path`` or, for a compressed document, the name
        of the document (`plain_name`): ``**/*.md`` takes ``config.md.gz``; or names a folder
        it is in (``docs/``, ``docs``)."""
        path = _composed(path)
        plain = plain_name(path)
        if self.matches(path) or (plain != path and self.matches(plain)):
            return True
        if self._trees:
            at = path.find("/")
            while at > 0:
                if self._trees.fullmatch(path[:at]):
                    return True
                at = path.find("/", at + 1)
        return False

    def covers_dir(self, path: str) -> bool:
        """True when the directory itself or everything inside it matches (prune it)."""
        return self.matches(path + "/") or self.matches(path, is_dir=True)  # (+ "/": "dir/**")


def still_selected(includes: GlobSet, excludes: GlobSet, path: str) -> bool:
    """Whether the walk would take the file ``path`` by the config's globs alone: an include
    matches it, and no exclude matches it or covers a folder it is in."""
    if not includes.matches_file(path) or excludes.matches_file(path):
        return False
    at = path.find("/")
    while at > 0:
        if excludes.covers_dir(path[:at]):
            return False
        at = path.find("/", at + 1)
    return True


NAME_BREAK_RE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
"""Control characters but the tab, and the Unicode line breaks (NEL, U+2028, U+2029): a file
name holding one cannot be cited (`path:Ls-e` is one line; a name holding line breaks could
write lines of its own, a citation or an instruction, outside a snippet's fence)."""
WILDCARD_RE = re.compile(r"[*?\[]")
_BRACES_RE = re.compile(r"\{([^{}]*,[^{}]*)\}")


def _strip_dot(pattern: str) -> str:
    """``./docs/*.md`` as ``/docs/*.md``: paths are relative to the root already, and a shell
    user writes the dot (`rag query --path ./docs/*.md` matched nothing). The dot anchors the
    glob at the root, as a leading ``/`` does: ``./notes.txt`` is not ``notes.txt`` at any
    depth. ``.`` alone is the whole root."""
    if pattern in (".", "./"):
        return "**"
    if not pattern.startswith("./"):
        return pattern
    while pattern.startswith("./"):
        pattern = pattern[2:].lstrip("/")
    return "/" + pattern if pattern else "**"


MAX_BRACE_GLOBS = 1000  # globs one pattern's {a,b} groups may stand for ({a,b} 30 times: a billion)


def brace_count(pattern: str) -> int:
    """How many globs ``pattern``'s ``{a,b}`` groups stand for (at most; counted only up to
    past `MAX_BRACE_GLOBS`), without making them."""
    n = 1
    while n <= MAX_BRACE_GLOBS and (m := _BRACES_RE.search(pattern)):
        n *= m.group(1).count(",") + 1
        pattern = pattern[:m.start()] + "\0" + pattern[m.end():]
    return n


def expand_braces(pattern: str) -> list[str]:
    """The globs a pattern with ``{a,b}`` groups stands for, as shells and most tools read
    them: ``**/*.{md,txt}`` is ``**/*.md`` and ``**/*.txt``. A group without a comma is literal.
    More than `MAX_BRACE_GLOBS` is a UsageError (`glob_problem` says so first)."""
    if brace_count(pattern) > MAX_BRACE_GLOBS:
        raise UsageError(f"the glob {quoted(pattern[:80])} stands for more than {MAX_BRACE_GLOBS} globs "
                         "({a,b} groups multiply)")
    return _expand_braces(pattern)


def _expand_braces(pattern: str) -> list[str]:
    m = _BRACES_RE.search(pattern)
    while m and _escaped(pattern, m.start()):  # ("\\{a,b}" is the name itself)
        m = _BRACES_RE.search(pattern, m.start() + 1)
    if not m:
        return [pattern]
    head, tail = pattern[:m.start()], pattern[m.end():]
    return [q for alt in m.group(1).split(",") for q in _expand_braces(head + alt + tail)]


def _escaped(pattern: str, i: int) -> bool:
    """Whether ``pattern[i]`` follows an odd run of backslashes (is made plain)."""
    n = 0
    while i - n - 1 >= 0 and pattern[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _union(rules: list[Rule]) -> re.Pattern | None:
    if not rules:
        return None
    return re.compile("|".join(f"(?:{r.regex.pattern})" for r in rules), re.DOTALL)


class Rules(list):
    """The rules of one ignore file, in order, with `deciders`: a path is tested against a
    file of thousands of rules in a few look-ups and regex calls, not one per rule."""

    @functools.cached_property
    def deciders(self) -> tuple:
        """For files and for folders: (plain name -> index of the last rule naming it, a
        name's ending (``*.log``) -> index of the last rule of it, the lengths of those
        endings, and the runs of the other rules, last first, as (first index, last index,
        negate, one regex)). A path's verdict is then a few look-ups and the regexes of the
        runs after the last look-up that matched: a file of thousands of alternating
        ``*.x`` / ``!name`` rules was one test per run of rules for every path."""
        out = []
        for is_dir in (False, True):
            names: dict[str, int] = {}
            ends: dict[str, int] = {}
            runs: list[list] = []  # [first, last, negate, rules]
            for k, rule in enumerate(self):
                if rule.dir_only and not is_dir:
                    continue
                if (n := _plain_name_of(rule)) is not None:
                    names[n] = k
                elif (e := _name_ending_of(rule)) is not None:
                    ends[e] = k
                elif runs and runs[-1][1] == k - 1 and runs[-1][2] == rule.negate:
                    runs[-1][1] = k
                    runs[-1][3].append(rule)
                else:
                    runs.append([k, k, rule.negate, [rule]])
            out.append((names, ends, sorted({len(e) for e in ends}),
                        [(a, b, neg, rs[0].regex if len(rs) == 1 else _union(rs)) for a, b, neg, rs in reversed(runs)]))
        return tuple(out)


def _name_ending_of(rule: Rule) -> str | None:
    """The ending of the names an unanchored rule ``*ending`` (one star, then no wildcard)
    matches as a path's last part, or None."""
    source = rule.regex.pattern
    if not source.startswith(_ANY_FOLDER + _STAR):
        return None
    escaped = source[len(_ANY_FOLDER) + len(_STAR):]
    name = re.sub(r"\\(.)", r"\1", escaped, flags=re.S)
    return name if name and "/" not in name and re.escape(name) == escaped else None


def _plain_name_of(rule: Rule) -> str | None:
    """The name an unanchored rule without wildcards matches as a path's last part, or None."""
    source = rule.regex.pattern
    if not source.startswith(_ANY_FOLDER):
        return None
    escaped = source[len(_ANY_FOLDER):]
    name = re.sub(r"\\(.)", r"\1", escaped, flags=re.S)
    return name if "/" not in name and re.escape(name) == escaped else None


def parse_ignore(text: str) -> Rules:
    """The rules of a .gitignore / .ragignore file, in order (read in Unicode's composed form,
    as the names they are matched with: `ignore_verdict`)."""
    return Rules(r for r in map(parse_rule, _composed(text).split("\n")) if r)  # (git splits on "\n" only)


# ---------------------------------------------------------------------------- walking

@dataclass
class LeftOut:
    """What a walk passed over by the config's globs: the folders ``index.excludes`` pruned
    (their paths) and the files no ``index.includes`` glob matched (counted by suffix)."""

    dirs: list[str] = field(default_factory=list)
    suffixes: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)  # of those, man pages and Info files (`document_kind`)
    excluded: int = 0       # files an includes glob took and an excludes glob left out
    ignored: int = 0        # files and folders .gitignore / .ragignore rules (or git's excludes) left out
    ignored_above: str = ""  # ... some by those of the git work tree above the root: its top
    case_only: list[str] = field(default_factory=list)  # files an includes glob takes in lower case (GUIDE.MD)
    # symbolic links whose target is gone, other than those the globs take as files (a link to
    # a folder, say): what the index holds under one is kept, as under an unreadable folder
    dangling: list[str] = field(default_factory=list)

    def case_note(self, limit: int = 3) -> str:
        """A sentence on the files left out only for the case of their suffix ("" if none):
        globs are case-sensitive, as in git, and ``**/*.md`` does not take ``GUIDE.MD``."""
        if not self.case_only:
            return ""
        n = len(self.case_only)
        shown = ", ".join(self.case_only[:limit]) + (" ..." if n > limit else "")
        globs = sorted({f"'**/*{os.path.splitext(p)[1]}'" for p in self.case_only})
        return (f"{n} {'file is' if n == 1 else 'files are'} left out for the case of {'its' if n == 1 else 'their'} "
                f"suffix ({shown}): globs are case-sensitive, so add {', '.join(globs)} to index.includes "
                "to index them (a list in rag.yaml replaces the default one: keep its globs too, as "
                "`rag config` shows them)")

    def unmatched(self, limit: int = 5) -> str:
        """A sentence on the files no includes glob took, by suffix, the most common first ("" if
        none), naming the globs that take the man pages and Info files among them."""
        if not self.suffixes:
            return ""
        top = sorted(self.suffixes.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
        shown = ", ".join(f"{n} {s or '(no suffix)'}" for s, n in top) + (" ..." if len(self.suffixes) > limit else "")
        n = sum(self.suffixes.values())
        return (f"{n} {'file matches' if n == 1 else 'files match'} no index.includes glob ({shown})"
                + "".join(f", {k} {kind}{'' if k == 1 else 's'}, which index.includes: [{DOCUMENT_GLOBS[kind]}] "
                          "in rag.yaml takes" for kind, k in sorted(self.kinds.items())))

    def hint(self, limit: int = 5) -> str:
        """One sentence on what was left out, for a run that found nothing to index ("" if nothing)."""
        parts = []
        if self.dirs:
            shown = ", ".join(d + "/" for d in self.dirs[:limit]) + (" ..." if len(self.dirs) > limit else "")
            one = len(self.dirs) == 1
            parts.append(f"index.excludes left out the folder{'' if one else 's'} {shown} (index "
                         f"{'it' if one else 'one of them'} directly, as `rag index {shlex.quote(self.dirs[0])}`, "
                         "or change index.excludes in rag.yaml)")
        if self.excluded:
            one = self.excluded == 1
            parts.append(f"{self.excluded} file{' is' if one else 's are'} left out by index.excludes")
        if self.suffixes:
            parts.append(self.unmatched(limit))
        if self.ignored:
            where = f" (some of the git work tree at {self.ignored_above}, above this folder)" if self.ignored_above else ""
            one = self.ignored == 1
            parts.append(f"{self.ignored} {'file or folder is' if one else 'files or folders are'} ignored by "
                         f".gitignore/.ragignore rules or git's excludes (info/exclude, core.excludesFile){where}; "
                         "`rag index --no-gitignore` or index.gitignore: false indexes them")
        return "; ".join(parts)


NOT_FOLLOWED = "; not followed"
"""How the walk's note on a symlinked folder it left out ends (a loop, or a folder it reaches
another way): nothing is lost, unlike with the other problems it reports."""


UNINDEXED_TARGET = "that nothing is indexed from (excluded, ignored, or no file the includes take)"
"""How the walk's note on a symlinked folder ends when the folder it links to, inside the
tree, gave the index no file: then the link's files are left out, not indexed elsewhere."""


UNINDEXED_FILE = "a file inside the tree that is not indexed (excluded, ignored, or no include takes it)"
"""How the walk's note on a link to a file inside the tree ends when that file is not
indexed: then neither is the link (one to a file that is indexed is a second copy of it)."""


def is_link_note(message: str) -> bool:
    """Whether a problem `iter_files` reported is only a symlink not followed (to a folder, or
    to a file inside the tree)."""
    return message.endswith(NOT_FOLLOWED)


NOT_REGULAR = "not a regular file"
"""How the walk's note on a named pipe, a socket or a device begins: left out, never opened."""

RENAME_IT = "rename it to index it"
TOO_DEEP = "its files are not indexed"


def is_left_out_note(message: str) -> bool:
    """Whether a problem `iter_files` reported is a file or folder it left out for its name
    (not UTF-8, a line break) or its depth, not one it could not read."""
    return message.endswith((RENAME_IT, TOO_DEEP))


def iter_files(root: str | os.PathLike, includes: list[str], excludes: list[str],
               use_gitignore: bool = True, problems: list | None = None,
               left_out: LeftOut | None = None) -> Iterator[FileEntry]:
    """Yield the files under `root` to index, in sorted order of their relative paths.

    A file is yielded when it matches an include glob, no exclude glob, and (with
    `use_gitignore`) no `.gitignore` / `.ragignore` rule of its directory or any parent
    inside the tree. Excluded and ignored directories are not entered. Symlinked
    directories are followed once per real path; loops and unreadable entries are
    appended to `problems` as `(path, message)` and skipped, never raised. What the
    globs passed over is recorded in ``left_out`` when given.
    """
    root_path = os.path.abspath(os.fspath(root))  # so every entry's path is absolute already
    if not os.path.isdir(root_path):
        raise UsageError(f"not a directory: {root_path}")
    walker = _Walker(root_path, GlobSet(includes), GlobSet(excludes), use_gitignore,
                     problems if problems is not None else [], left_out)
    paths = []  # (yielded in sorted order)
    for entry in walker.walk(root_path, "", []):
        paths.append(entry.path)
        yield entry
    # A link to a folder inside the tree is not followed because the folder is walked at its
    # own place; when nothing there was indexed (excluded, ignored), say that the link's
    # files are left out, not that they were indexed another way.
    for i, link, rel in walker.inside_links:
        at = bisect.bisect_left(paths, rel + "/")
        if (at == len(paths) or not paths[at].startswith(rel + "/")) and _has_entries(os.path.join(root_path, rel)):
            walker.problems[i] = (link, f"symlink to {rel}, a folder inside the tree {UNINDEXED_TARGET}"
                                        + NOT_FOLLOWED)
    # Likewise a link to a file inside the tree: the file is indexed at its own place (the
    # link was a second copy of it), or, when it is not, neither is the link.
    for i, link, rel in walker.inside_file_links:
        at = bisect.bisect_left(paths, rel)
        if at == len(paths) or paths[at] != rel:
            walker.problems[i] = (link, f"symlink to {rel}, {UNINDEXED_FILE}" + NOT_FOLLOWED)


BROKEN_LINK = "unreadable: broken symlink"
"""The walk's problem for a symbolic link whose target is gone (a file's, or a folder's that
the index holds files under: `LeftOut.dangling`): unreadable this time, so what was indexed
through it is kept, as a share gone away keeps it."""


def _dangling(entry: os.DirEntry) -> bool:
    """Whether ``entry`` is a symbolic link whose target is gone (or cannot be reached)."""
    try:
        return entry.is_symlink() and not os.path.exists(entry.path)
    except OSError:
        return False


def _has_entries(folder: str) -> bool:
    try:
        with os.scandir(folder) as it:
            return next(it, None) is not None
    except OSError:
        return False


MAX_DEPTH = 200
"""Folders nested deeper than this below the root are reported and not walked (the walk
recurses; Python's stack ends near 500 levels)."""


class _Walker:
    def __init__(self, root, includes, excludes, use_gitignore, problems, left_out=None):
        self.left_out = left_out
        self.root_real = os.path.realpath(root)
        self.root_name = os.path.basename(self.root_real)  # (the folder of the files at the top: `document_kind`)
        self.includes, self.excludes = includes, excludes
        self.use_gitignore, self.problems = use_gitignore, problems
        self.chain = [self.root_real]  # real paths of the directories being walked
        self.linked: dict[str, str] = {}  # real path outside the tree -> path that linked it
        self.inside_links: list[tuple[int, str, str]] = []  # (its problem's index, link, target), inside the tree
        self.inside_file_links: list[tuple[int, str, str]] = []  # the same, of links to files
        # real path outside the tree -> the link it was indexed by, for a linked folder walked
        # later that holds it (man2/getcwd.2 -> ../man3/getcwd.3, man3 linked too)
        self.linked_files: dict[str, str] = {}
        # the ignore files of the git work tree above the root, which git applies here too
        self.above_prefix, self.above = ignores_above(self.root_real) if use_gitignore else ("", [])
        self.above_top = self.root_real[:len(self.root_real) - len(self.above_prefix) - 1] if self.above else ""

    def walk(self, abspath: str, rel: str, ignores: list) -> Iterator[FileEntry]:
        try:
            with os.scandir(abspath) as it:
                entries = list(it)
        except FileNotFoundError as e:
            if not rel or os.path.islink(abspath):  # (the root, or a link whose target went)
                self.problems.append((rel or ".", f"unreadable directory: {e.strerror or e}"))
            return  # (deleted since its parent was listed: gone, as it would be a moment later)
        except OSError as e:
            self.problems.append((rel or ".", f"unreadable directory: {e.strerror or e}"))
            return
        if self.use_gitignore:
            ignores = ignores + self._ignore_rules(abspath, rel, entries)
        listed = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            # a directory sorts as "name/" so the walk yields paths in plain string order
            listed.append((entry.name + "/" if is_dir else entry.name, entry, is_dir))
        listed.sort(key=lambda t: t[0])
        for _, entry, is_dir in listed:
            path = f"{rel}/{entry.name}" if rel else entry.name
            verdict = ignore_verdict(ignores, path, is_dir)
            if verdict is None and self.above:
                verdict = ignore_verdict(self.above, f"{self.above_prefix}/{path}", is_dir)
                if verdict and self.left_out is not None:
                    self.left_out.ignored_above = self.above_top
            if verdict:
                if self.left_out is not None and not entry.name.startswith("."):
                    self.left_out.ignored += 1
                continue
            if never_indexed(path + "/" if is_dir else path):
                continue  # (rag's own files and git's, a nested root's too)
            if (not is_dir and self.left_out is not None and _dangling(entry)
                    and not (self.includes.matches_file(path) and not self.excludes.matches_file(path))
                    and not self.excludes.covers_dir(path)):
                self.left_out.dangling.append(path)  # (maybe a folder: its target is gone, so none can tell)
            if is_dir:
                if not self.excludes.covers_dir(path):
                    yield from self._walk_dir(entry, path, ignores)
                elif self.left_out is not None and not entry.name.startswith("."):
                    self.left_out.dirs.append(path)
            elif self.includes.matches_file(path):
                if not self.excludes.matches_file(path):
                    entry_out = self._file(entry, path)
                    if entry_out:
                        yield entry_out
                elif self.left_out is not None:
                    self.left_out.excluded += 1
            elif self.left_out is not None and not entry.name.startswith("."):
                # (.gitignore: nobody means to index that)
                name = entry.name
                if compressed(name):  # ("open.2.gz": ".2.gz", not ".gz")
                    suffix = os.path.splitext(name[:-len(COMPRESSED_SUFFIX)])[1] + name[-len(COMPRESSED_SUFFIX):]
                else:
                    suffix = os.path.splitext(name)[1]
                self.left_out.suffixes[suffix] = self.left_out.suffixes.get(suffix, 0) + 1
                if kind := document_kind(name, rel.rpartition("/")[2] if rel else self.root_name):
                    self.left_out.kinds[kind] = self.left_out.kinds.get(kind, 0) + 1
                if case_only_glob(self.includes, path):
                    self.left_out.case_only.append(path)

    def _walk_dir(self, entry: os.DirEntry, path: str, ignores: list) -> Iterator[FileEntry]:
        if self._bad_name(path):
            return
        if len(self.chain) > MAX_DEPTH:  # (each level is two frames of Python's stack)
            self.problems.append((path, f"a folder more than {MAX_DEPTH} folders deep: {TOO_DEEP}"))
            return
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            problem = self._link_problem(real)
            if problem:
                if within(real, self.root_real) and not any(within(w, real) for w in self.chain):
                    rel = os.path.relpath(real, self.root_real).replace(os.sep, "/")
                    self.inside_links.append((len(self.problems), path, rel))
                self.problems.append((path, problem + NOT_FOLLOWED))
                return
            self.linked[real] = path
        else:  # a plain directory's real path is its parent's (being walked) plus its name
            real = os.path.join(self.chain[-1], entry.name)
            first = self.linked.get(real)
            if first is not None:  # (reached again through a link to a folder above it)
                self.problems.append((path, f"the folder {real}, already indexed via {first}" + NOT_FOLLOWED))
                return
        self.chain.append(real)
        try:
            yield from self.walk(entry.path, path, ignores)
        finally:
            self.chain.pop()

    def _link_problem(self, real: str) -> str | None:
        """Why a symlinked directory must not be walked, or None."""
        if any(within(walking, real) for walking in self.chain):
            return f"symlink loop: points to {real}, which contains it"
        if within(real, self.root_real):  # walked at its real place instead
            rel = os.path.relpath(real, self.root_real).replace(os.sep, "/")
            return f"symlink to a directory inside the tree ({rel})"
        folder = real  # (its ancestors looked up: each link compared with every earlier one was quadratic)
        while True:
            first = self.linked.get(folder)
            if first is not None:
                return f"symlink to {real}, already indexed via {first}"
            parent = os.path.dirname(folder)
            if parent == folder:
                return None
            folder = parent

    def _tree_path(self, real: str) -> str | None:
        """Where the file of real path ``real`` is in the tree: below the root, or below a
        linked folder walked through its link (`linked`: Debian's ``creat.2.gz``, a link to
        ``open.2.gz`` beside it, in ``man2`` linked from the tree); None when it is neither."""
        if within(real, self.root_real):
            return os.path.relpath(real, self.root_real).replace(os.sep, "/")
        folder = os.path.dirname(real)  # (its ancestors looked up, as `_link_problem` does)
        while True:
            via = self.linked.get(folder)
            if via is not None:
                return via + "/" + os.path.relpath(real, folder).replace(os.sep, "/")
            parent = os.path.dirname(folder)
            if parent == folder:
                return None
            folder = parent

    def _bad_name(self, path: str) -> bool:
        """A name that is not valid UTF-8 (the OS gave its bytes as surrogates) cannot be
        stored, cited or printed as it is: a problem, named with those bytes escaped."""
        try:
            path.encode("utf-8")
            if NAME_BREAK_RE.search(path):
                self.problems.append((path.encode("unicode_escape").decode("ascii"),
                                      f"its name holds a line break or another control character; {RENAME_IT}"))
                return True
            return False
        except UnicodeEncodeError:
            shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            self.problems.append((shown, f"its name is not valid UTF-8; {RENAME_IT}"))
            return True

    def _file(self, entry: os.DirEntry, path: str) -> FileEntry | None:
        if self._bad_name(path):
            return None
        try:
            if not entry.is_file():  # sockets, fifos, devices: never opened
                if _dangling(entry):  # (its target may be back next time: what was indexed stays)
                    self.problems.append((path, BROKEN_LINK))
                else:
                    # (a lasting state, unlike an unreadable file: what was indexed there goes)
                    self.problems.append((path, f"{NOT_REGULAR} ({special_kind(entry.path)})"))
                return None
            st = entry.stat()
            if not os.access(entry.path, os.R_OK):
                raise PermissionError(13, "Permission denied")
        except OSError as e:
            if isinstance(e, FileNotFoundError) and not entry.is_symlink():
                return None  # (deleted since its folder was listed: gone, not unreadable)
            self.problems.append((path, f"unreadable: {e.strerror or e}"))
            return None
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if (rel := self._tree_path(real)) is not None:
                if (first := self.linked_files.get(real)) is not None:  # (its place walked after that link)
                    self.problems.append((path, f"symlink to {rel}, a file already indexed via {first}" + NOT_FOLLOWED))
                    return None
                self.inside_file_links.append((len(self.problems), path, rel))
                self.problems.append((path, f"symlink to {rel}, a file indexed at its own place" + NOT_FOLLOWED))
                return None
            self.linked_files.setdefault(real, path)
        elif self.linked_files and (first := self.linked_files.get(real := os.path.join(self.chain[-1], entry.name))):
            # (in a linked folder walked after a link to this file: indexed once, by the link's name)
            self.problems.append((path, f"the file {real}, already indexed via {first}" + NOT_FOLLOWED))
            return None
        return FileEntry(path, entry.path, st.st_size, st.st_mtime, entry.is_symlink(), f"{st.st_ino}:{st.st_ctime_ns}")

    def _ignore_rules(self, abspath: str, rel: str, entries) -> list:
        names = {e.name for e in entries}
        found = []
        if not rel and ".git" in names:  # the top of a work tree: the user's and its repository's excludes first
            for path in git_exclude_files(abspath):
                try:
                    found.append(("", parse_ignore(read_ignore_file(path))))
                except (OSError, ValueError):
                    pass  # (none there, or unreadable: as git, go on)
        for name in IGNORE_FILES:
            if name in names:
                try:
                    found.append((rel, parse_ignore(read_ignore_file(os.path.join(abspath, name),
                                                                     in_tree=name == ".gitignore"))))
                except OSError as e:
                    where = f"{rel}/{name}" if rel else name
                    self.problems.append((where, f"unreadable ignore file: {e.strerror or e}"))
        return found


def is_ignored(ignores: list[tuple[str, list[Rule]]], path: str, is_dir: bool) -> bool:
    """Whether ignore files ``(base folder, rules)`` exclude ``path`` (relative, '/'-separated).

    Gitignore precedence: the last matching rule wins, deeper files after shallower; an
    ignore file applies only below its own folder. Used by the walker and the browser.
    """
    return ignore_verdict(ignores, path, is_dir) is True


def ignore_verdict(ignores: list[tuple[str, list[Rule]]], path: str, is_dir: bool) -> bool | None:
    """`is_ignored`, or None when no rule speaks of ``path`` (so shallower files may). Names
    are compared in one Unicode form (macOS writes "é" in a name as "e" and an accent, a
    keyboard as one character; git there reads both as one), as `GlobSet` does."""
    path = _composed(path)
    for base, rules in reversed(ignores):
        base = _composed(base)
        if base and not path.startswith(base + "/"):
            continue
        sub = path[len(base) + 1:] if base else path
        # the last rule that matches decides: the last run of rules holding one
        rules = rules if isinstance(rules, Rules) else Rules(rules)
        names, ends, lengths, runs = rules.deciders[is_dir]
        name = sub[sub.rfind("/") + 1:]
        best = names.get(name, -1)
        for n in lengths:
            if n > len(name):
                break
            best = max(best, ends.get(name[len(name) - n:], -1))
        for first, last, negate, regex in runs:
            if last < best:
                break
            if regex.fullmatch(sub):
                return not negate
        if best >= 0:
            return not rules[best].negate
    return None


def ignores_above(root_real: str) -> tuple[str, list[tuple[str, list[Rule]]]]:
    """When ``root_real`` is inside a git work tree but not its top: (the root's path from
    the top, the ignore rules of the folders above it, with `git_exclude_files`), as git
    applies them to the files below; else ("", [])."""
    if os.path.exists(os.path.join(root_real, ".git")):  # the top itself (or a repository in another)
        return "", []
    top = os.path.dirname(root_real)
    while not os.path.exists(os.path.join(top, ".git")):
        parent = os.path.dirname(top)
        if parent == top:
            return "", []
        top = parent
    prefix = os.path.relpath(root_real, top).replace(os.sep, "/")
    found = []
    steps = prefix.split("/")
    for depth in range(len(steps)):
        base = "/".join(steps[:depth])
        here = os.path.join(top, *steps[:depth])
        names = [(path, False) for path in git_exclude_files(top)] if depth == 0 else []
        names += [(os.path.join(here, name), name == ".gitignore") for name in IGNORE_FILES]
        for path, in_tree in names:
            try:
                found.append((base, parse_ignore(read_ignore_file(path, in_tree))))
            except (OSError, ValueError):
                pass  # (none there, or unreadable: as git, go on)
    return prefix, found


def git_dir(top: str) -> str:
    """The git folder of the repository whose work tree starts at ``top``: its ``.git``
    folder, or, where ``.git`` is a file (``gitdir: ...``: a linked worktree, a submodule),
    the git folder it names, or that folder's ``commondir`` (which holds ``info/`` and
    ``config``)."""
    gitdir = os.path.join(top, ".git")
    if not os.path.isdir(gitdir):
        try:
            text = read_regular(gitdir, 4096).decode("utf-8", errors="replace")
        except OSError:
            return gitdir  # (not there: reading from it fails, as it should)
        if text.startswith("gitdir:"):
            gitdir = os.path.join(top, text[len("gitdir:"):].strip())
            try:
                common = read_regular(os.path.join(gitdir, "commondir"), 4096).decode("utf-8", errors="replace").strip()
            except OSError:
                common = ""
            gitdir = os.path.join(gitdir, common) if common else gitdir
    return gitdir


def git_exclude_files(top: str) -> list[str]:
    """The ignore files git applies to the whole work tree starting at ``top``, lowest
    precedence first: the user's ``core.excludesFile`` (`gitconfig.excludes_file`), then
    the repository's ``info/exclude``."""
    folder = git_dir(top)
    user = gitconfig.excludes_file(folder, top)
    return ([user] if user else []) + [os.path.join(folder, "info", "exclude")]


def within(path: str, parent: str) -> bool:
    """Whether the path ``path`` is ``parent`` or lies below it (as strings: no links followed)."""
    return path == parent or path.startswith(parent.rstrip(os.sep) + os.sep)


# ---------------------------------------------------------------------------- decoding

def special_kind(path: str | os.PathLike) -> str:
    """What a file that is not a regular one is: "a named pipe", "a socket", "a device"."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "gone"
    return ("a named pipe" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a folder" if stat.S_ISDIR(mode) else "a device")


class TooLarge(OSError):
    """A file holds more bytes than its reader takes: ``size`` of them ("1234+" when it grew
    while read and that is as far as it was read)."""

    def __init__(self, size: str, limit: int):
        super().__init__(f"too large ({size} bytes > {limit})")
        self.size, self.limit = size, limit


def read_regular(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (links followed); `TooLarge` past ``limit``
    bytes, an OSError "not a regular file (a named pipe)" for anything else. It is opened
    without blocking and checked once open, so a named pipe put in its place meanwhile, or
    a kernel file that blocks (/proc/kmsg), cannot hang the run."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        st = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise OSError(0, f"{NOT_REGULAR} ({special_kind(path)})")
    with os.fdopen(fd, "rb") as f:
        if st.st_size > limit:
            raise TooLarge(str(st.st_size), limit)
        data = f.read(limit + 1)
    if len(data) > limit:  # grew since fstat
        raise TooLarge(f"{len(data)}+", limit)
    return data


IGNORE_FILE_MAX = 100_000_000  # bytes: git reads no bigger ignore file either


def read_ignore_file(path: str, in_tree: bool = False) -> str:
    """An ignore file's text: a regular file of at most `IGNORE_FILE_MAX` bytes, as UTF-8
    with a byte order mark dropped (Notepad's), bad bytes replaced. A `.ragignore` (rag's
    own) may also be UTF-16 (`ignore_file_text`). A .gitignore in the work tree (``in_tree``)
    that is a symbolic link is not read, as git (2.32 on) does not (a .ragignore may be one)."""
    if in_tree and os.path.islink(path):
        raise OSError(errno.ELOOP, "a symbolic link, which git does not follow there (not read)")
    try:
        data = read_regular(path, IGNORE_FILE_MAX)
    except TooLarge as e:
        raise OSError(0, f"over {IGNORE_FILE_MAX // 1_000_000} MB, not read (as git)") from e
    try:
        return ignore_file_text(data, os.path.basename(path))
    except ValueError as e:
        raise OSError(0, str(e)) from None


def ignore_file_text(data: bytes, name: str) -> str:
    """The text of the ignore file ``name`` (for the walk and the page alike). A `.ragignore`
    is read as `user_text` reads a file (PowerShell 5.1's ``echo x > .ragignore`` writes
    UTF-16). git reads its own files (.gitignore, info/exclude) as bytes, from which it gets
    no usable rule when they are UTF-16, so one in UTF-16 raises ValueError saying so (the
    walk reports a .gitignore so, and applies none of its rules)."""
    if name == ".ragignore":
        return user_text(data, errors="replace")
    if utf16_encoding(data):
        raise ValueError("UTF-16 text, from which git reads no usable rule either (not read; save it as UTF-8)")
    return data.decode("utf-8-sig", errors="replace")


def utf16_encoding(data: bytes) -> str | None:
    """The UTF-16 (or UTF-32) encoding that ``data`` is in, told by its byte order mark or by
    its NULs ("utf-16-le"), else None."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return None if encoding == "utf-8" else encoding
    head = data[:SNIFF_BYTES]
    return _utf16_without_bom(head) if b"\x00" in head else None


def user_text(data: bytes, errors: str = "strict") -> str:
    """The text of a file a user wrote for rag (a batch file, a packed context, a
    `.ragignore`): UTF-8 with a byte order mark dropped (Notepad's), or UTF-16 (what Windows
    PowerShell 5.1's ``>`` writes). ``errors`` applies to UTF-8 that is not valid
    (UnicodeDecodeError when "strict"). Raises ValueError for bytes holding NULs that are
    not UTF-16 text."""
    encoding = utf16_encoding(data)
    if encoding:
        bom = next((b for b, e in _BOMS if e == encoding and data.startswith(b)), b"")
        return data[len(bom):].decode(encoding, errors="replace")
    if b"\x00" in data:
        raise ValueError("it holds NUL bytes: it is not text")
    return data.decode("utf-8", errors).removeprefix("\ufeff")


GONE = "gone: deleted since the walk listed it"
"""`read_text_file`'s reason for a file no longer there when it is read (deleted or moved
while `rag index` ran): the indexer treats it as deleted, as the next walk would."""


def read_text_file(abspath: str | os.PathLike, max_bytes: int) -> DecodeResult:
    """Read and decode a file, or say why it was skipped (binary, too large, unreadable, `GONE`)."""
    try:
        data = read_regular(abspath, max_bytes)
    except TooLarge as e:
        return DecodeResult(None, f"too large ({e.size} bytes > max_file_bytes {max_bytes})")
    except (FileNotFoundError, NotADirectoryError) as e:
        return DecodeResult(None, _missing(abspath) or f"unreadable: {e.strerror or e}")
    except OSError as e:
        return DecodeResult(None, f"unreadable: {e.strerror or e}")
    return decode_file(str(abspath), data, max_bytes)


def _missing(abspath: str | os.PathLike) -> str | None:
    """Why the file at ``abspath`` cannot be found: `BROKEN_LINK` when the nearest part of
    its path still there is a symbolic link whose target is gone (the file itself, or a
    folder's link: what was indexed through it is kept, as the walk keeps it), `GONE` when
    a part of the path is not there (or is a file now), else None."""
    path = p = os.path.abspath(abspath)
    while not os.path.lexists(p):
        if os.path.dirname(p) == p:
            break
        p = os.path.dirname(p)
    if os.path.islink(p) and not os.path.exists(p):
        return BROKEN_LINK
    return GONE if p != path else None


def decode_file(path: str, data: bytes, max_bytes: int) -> DecodeResult:
    """A selected file's bytes as text, or why not (the CLI's and the page's one rule): a
    ``.gz`` file uncompressed first (at most ``max_bytes`` of it: a small file can hold
    gigabytes), then `decode`, then `packed_context_reason` and `minified_reason`."""
    if compressed(path):
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
                data = f.read(max_bytes + 1)
        except (OSError, EOFError, zlib.error) as e:  # (gzip.BadGzipFile is an OSError)
            return DecodeResult(None, f"damaged: not gzip data ({e})")
        if len(data) > max_bytes:
            return DecodeResult(None, f"too large (over {max_bytes} bytes uncompressed > max_file_bytes)")
    result = decode(data)
    if result.text is None:
        return result
    reason = packed_context_reason(result.text) or minified_reason(path, result.text)
    return DecodeResult(None, reason) if reason else result


PACKED_REASON = "a packed context (rag pack output): it repeats the files it cites"
"""Why a file that `rag pack` wrote is not indexed, whatever its name or place: indexed, its
copies of the cited text would answer later questions in their stead (`packed_context_reason`)."""

_PACK_RANGE_RE = re.compile(r"L\d+-\d+")
_PACK_FOOTER_RE = re.compile(r"\d+/\d+ tokens")  # (`formats.render`'s last line)
_PACK_WARNING_RE = re.compile(r"warning: the (?:packed context holds no evidence|evidence packed is weak)")
_PACK_TEXT_HEAD_RE = re.compile(r"\[.+:L\d+-\d+(?: cols \d+-\d+)?\]")  # [path:L1-9], [path:L1-1 cols 10-90]
_PACK_MARKDOWN_HEAD_RE = re.compile(r"\[`.*`:L\d+-\d+(?: cols \d+-\d+)?\]")  # [`path`:L1-9] (`formats.cited_range`)
_PACK_XML_START_RE = re.compile(r"(?:<\?xml[^>]*\?>\s*)?<context query=(?:\"[^\"]*\"|'[^']*')>\s*"
                                r"(?:<warning>|<snippet path=|<tokens>)")
_PACK_XML_END_RE = re.compile(r"<tokens>\s*\d+/\d+ tokens\s*</tokens>\s*</context>\s*\Z")


def packed_context_reason(text: str) -> str | None:
    """`PACKED_REASON` for a text that is a packed context `rag pack` wrote, else None: told by
    its shape, so a pack is known however it is named, linked or moved, and after `.rag` is
    deleted (`.rag/outputs` names only the files written under an index's folder). Each
    format's whole shape, from its first line to its last: JSON (one pack, reindented or
    edited by hand as long as it stays one, or ``--batch``'s lines), Markdown (``# Context
    for:`` ... ``N/M tokens``), XML (``<context query=`` ... ``<tokens>N/M tokens</tokens>``)
    and text (``[path:Lx-y]`` or the evidence warning ... ``N/M tokens``); a file that only
    shows one, as a README's example, is not one."""
    head = text.lstrip()
    if head.startswith("{"):
        return PACKED_REASON if '"budget_tokens"' in head and _json_packs(head) else None
    if head.startswith("<"):
        return PACKED_REASON if _PACK_XML_START_RE.match(head) and _PACK_XML_END_RE.search(head[-400:]) else None
    if not head.startswith(("# Context for: ", "[", "warning: ")):
        return None
    tail = head[-200:].rstrip()  # (slices: a big file is not copied whole)
    last = tail[tail.rfind("\n") + 1:]
    if not _PACK_FOOTER_RE.fullmatch(last) or ("\n" not in tail and len(head) > 200):
        return None
    lines = head[:65536].split("\n", 4)[:4]
    first = lines[0]
    after = next((line for line in lines[1:] if line), "")  # (the next line that holds words)
    if first.startswith("# Context for: "):  # markdown: the warning quoted, a snippet or the footer next
        fits = (after == last or _PACK_MARKDOWN_HEAD_RE.fullmatch(after)
                or (after.startswith("> ") and _PACK_WARNING_RE.match(after, 2)))
    elif _PACK_WARNING_RE.match(first):  # text with the evidence warning: a blank line, a snippet or the footer
        fits = lines[1:2] == [""] and (after == last or _PACK_TEXT_HEAD_RE.fullmatch(after))
    else:
        fits = _PACK_TEXT_HEAD_RE.fullmatch(first)
    return PACKED_REASON if fits else None


def _json_packs(text: str) -> bool:
    """Whether ``text`` is JSON of packed contexts: one, or `rag pack --batch`'s lines (each a
    pack with its ``"id"``, or a question's ``{"id", "query", "error"}``), at least one a pack."""
    import json  # (only for a file that starts as one: `rag index` of other files does not load it)
    decoder, at, packs = json.JSONDecoder(), 0, 0
    while True:
        while at < len(text) and text[at] in " \t\n":
            at += 1
        if at == len(text):
            return packs > 0
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError:
            return False
        if not isinstance(value, dict):
            return False
        if _is_pack(value):
            packs += 1
        elif not ({"id", "query", "error"} <= value.keys() and isinstance(value["error"], str)):
            return False


def _is_pack(value: dict) -> bool:
    snippets = value.get("snippets")
    return (isinstance(value.get("query"), str) and isinstance(snippets, list)
            and all(type(value.get(k)) is int for k in ("budget_tokens", "used_tokens"))
            and all(isinstance(s, dict) and isinstance(s.get("path"), str) and isinstance(s.get("text"), str)
                    and isinstance(s.get("range"), str) and _PACK_RANGE_RE.fullmatch(s["range"])
                    for s in snippets))


def minified_reason(path: str, text: str) -> str | None:
    """"minified (...)" for a script, style sheet or JSON file of machine text (`MINIFIED_LINE_CHARS`), else None."""
    if compressed(path):
        path = path[:-len(COMPRESSED_SUFFIX)]
    if not path.lower().endswith(MINIFIED_SUFFIXES):
        return None
    lines = text.count("\n") + (not text.endswith("\n"))
    average = (len(text) - text.count("\n")) / max(lines, 1)
    if average <= MINIFIED_LINE_CHARS:
        return None
    return f"minified (lines of {average:.0f} characters on average)"


_BOMS = (  # UTF-32 first: its little-endian BOM starts with the UTF-16 one
    (b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"),
)


_VALID_NON_ASCII_RE = re.compile("[^\x00-\x7f\ufffd]")


def decode(data: bytes) -> DecodeResult:
    """Decode file bytes to text with newlines normalised to `\\n`, or say why not: "binary",
    or "not UTF-8 ..." for a legacy encoding that cannot be told. A file that is not UTF-8 is
    read in the legacy encoding whose text is plausible (`LEGACY_SHARE`)."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            text = data[len(bom):].decode(encoding, errors="replace")
            break
    else:
        if b"\x00" in data[:SNIFF_BYTES]:
            encoding = utf16_encoding(data)
            if encoding is None:
                return DecodeResult(None, "binary")
            text = data.decode(encoding, errors="replace")
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = data.decode("utf-8", errors="replace")
                # a legacy encoding when no character beyond ASCII is valid UTF-8, or (a file
                # mostly beyond ASCII may hold valid sequences by chance) fewer are than not;
                # else UTF-8 with a few stray bytes replaced
                if (_VALID_NON_ASCII_RE.search(text) is None
                        or (_mostly_beyond_ascii(data) and _fewer_valid_than(text, text.count("\ufffd")))):
                    text = _legacy_text(data)
                    if text is None:
                        return DecodeResult(None, LEGACY_REASON)
    return DecodeResult(text.replace("\r\n", "\n").replace("\r", "\n"))


LEGACY_SHARE = 0.2
"""A file that is not UTF-8 is read as Western or Central European text (Windows-1252 or
Windows-1250, whichever is likelier, `_latin_text`: "caf\\xe9") unless this share of its bytes
or more are beyond ASCII (or, fewer, they are letters no Latin alphabet explains,
`_reads_as_latin`: then it is read in the first of `_LEGACY` whose text looks like its language,
else as Latin still). Then it is read in the first of `_LEGACY` (then that Latin pair) that
decodes it strictly into text that looks like its language (`_looks_like`), else refused
(`LEGACY_REASON`): these encodings read each other's bytes, and a wrong guess is garbage in
the index."""

DECODER_VERSION = 3
"""Raised when a file may be read otherwise than before (2: Windows-1250 told from
Windows-1252; Greek, Hebrew, Arabic and Thai read; a mostly-ASCII file with Cyrillic, Greek
or Hebrew read in its script; 3: a packed context refused, `packed_context_reason`).
`rag index` reads such files again once: those that are not UTF-8, and those whose indexed
text is a packed context (an older version indexed a pack that `.rag/outputs` did not name)."""

LEGACY_MIN_BYTES = 16  # ... and at least this many (a short note with a few accents is Western)
LEGACY_REASON = ("not UTF-8, and it reads as none of the legacy encodings tried (Windows-1252, "
                  "Windows-1250, Shift-JIS, EUC-JP, EUC-KR, GBK, Big5, Windows-1255, Windows-1251, "
                  "KOI8-R, Windows-1256, Windows-1253, ISO-8859-7, Windows-874). Save it as UTF-8 to index it")
_ASCII_BYTES = bytes(range(128))
_NON_ASCII_RE = re.compile("[^\x00-\x7f]")
_SCRIPT_RES = {
    "hiragana": re.compile("[\u3041-\u309f]"),
    "halfwidth kana": re.compile("[\uff61-\uff9f]"),
    "hangul": re.compile("[\uac00-\ud7af]"),
    "han": re.compile("[\u3400-\u4dbf\u4e00-\u9fff]"),
    "cjk punctuation": re.compile("[\u3000-\u303f\uff01-\uff60]"),
    "cyrillic": re.compile("[\u0400-\u04ff]"),
    "cyrillic lower": re.compile("[\u0430-\u044f\u0451]"),
    # a capital inside a word: Greek's accented letters, or Arabic, read as Cyrillic
    "cyrillic capital inside": re.compile("[\u0430-\u044f\u0451][\u0410-\u042f\u0401]"),
    "cyrillic glued to latin": re.compile("[A-Za-z][\u0400-\u04ff]|[\u0400-\u04ff][A-Za-z]"),
    "latin": re.compile("[A-Za-z]"),
    "latin accented": re.compile("[\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017f]"),
    "greek": re.compile("[\u0386-\u03ce]"),
    "greek tonos": re.compile("[\u0386\u0388-\u038a\u038c\u038e\u038f\u03ac-\u03af\u03cc-\u03ce]"),
    "greek sigma": re.compile("\u03c2"),
    "greek sigma inside": re.compile("\u03c2(?=[\u0386-\u03ce])"),  # (final sigma ends a word)
    "greek capital inside": re.compile("[\u03ac-\u03ce][\u0386-\u03ab]"),
    "greek upsilon": re.compile("\u03b0"),  # "ΰ", rare in Greek: Cyrillic "а" and Hebrew "א" read as Greek
    # ISO-8859-7's "Ά", "‘" and "’" read as Windows-1253 (a paragraph sign or a dialytika-tonos
    # before a word, a capital "Ά" after one), or Windows-1253 read as ISO-8859-7 ("Ά" as "’"
    # before a word, quotes and dashes as control characters)
    "greek other code page": re.compile("[\u00b6\u0385](?=\\w)|(?<=[\\w)\\]])\u0386"
                                        "|(?<!\\w)\u2019(?=[\u0386-\u03ce])|[\x80-\x9f]"),
    "hebrew": re.compile("[\u05b0-\u05f4]"),
    # The final letters (ך ם ן ף ץ) end a word; in the visual order of old files they begin it
    "hebrew final": re.compile("[\u05da\u05dd\u05df\u05e3\u05e5]"),
    "hebrew final ending": re.compile("[\u05da\u05dd\u05df\u05e3\u05e5](?![\u05d0-\u05ea])"),
    "hebrew final beginning": re.compile("(?<![\u05d0-\u05ea])[\u05da\u05dd\u05df\u05e3\u05e5]"),
    "arabic": re.compile("[\u060c-\u06d5\u200c-\u200f]"),  # (and the joiners and marks Persian uses)
    "thai": re.compile("[\u0e01-\u0e5b]"),
    "thai leading vowels and tone marks": re.compile("[\u0e40-\u0e44\u0e48\u0e49]"),
}
_SCRIPTS = {"el": "greek", "he": "hebrew", "ar": "arabic", "th": "thai"}  # (`_looks_like_script`)
# A letter of the script glued to a plain Latin one: a Western text's accents read as the script
_GLUED_TO_LATIN_RES = {
    language: re.compile(f"[A-Za-z]{_SCRIPT_RES[script].pattern}|{_SCRIPT_RES[script].pattern}[A-Za-z]")
    for language, script in _SCRIPTS.items()}
# The commonest characters of a language's running text (particles, function words; a
# technical text's "set", "file", "use"): text decoded in its own encoding is full of them,
# text decoded in another's reads as characters picked at random.
_COMMON = {
    "ko": frozenset("이다는의에하고을를가지서한로기수리사정도있대자인아시어주해게일나으니면전부상보성적들만국제과여화할합니"),
    "zh": frozenset("的一是不了在人有我他这个们中来上大为和国地到以说时要就出会可也你对生能而子那得于着下自之年过发"
                    "后作里用道行所然家种事成方多经么去法学如都同现当没动面起看定天分还进好小部其些主样理心本前开但因只"
                    "从想实设置数件文使该将请"),
    "zh-hant": frozenset("的一是不了在人有我他這個們中來上大為和國地到以說時要就出會可也你對生能而子那得於著下自之年過發"
                         "後作裡用道行所然家種事成方多經麼去法學如都同現當沒動面起看定天分還進好小部其些主樣理心本前開但因"
                         "只從想實設置數件文使該將請"),
    "ru": frozenset("оеаинтсрвл"),
    "el": frozenset("αοετνισρμη"),
    "he": frozenset("יותהלמרשאנ"),
    "ar": frozenset("الميترنةوع"),
    "th": frozenset("าอรมกนเงดลต\u0e48\u0e49\u0e31\u0e35"),  # (and the commonest marks)
}
# The share of a script's characters that must be its language's commonest (`_COMMON`): below
# the least in real text, above the most in the other legacy scripts' text read as it
_COMMON_SHARE = {"el": 0.45, "he": 0.45, "ar": 0.35, "th": 0.4}
_LEGACY = (  # (encoding, what its text must look like), in the order they are tried; then `_LATIN`
    ("cp932", "ja"), ("euc_jp", "ja"), ("cp949", "ko"), ("gb18030", "zh"), ("big5", "zh-hant"),
    ("cp1255", "he"), ("cp1251", "ru"), ("koi8_r", "ru"), ("cp1256", "ar"), ("cp1253", "el"),
    ("iso8859_7", "el"), ("cp874", "th"),
)
_LATIN = ("cp1252", "cp1250")  # Western, Central European: the likelier (`_latin_text`)
# The accented letters of the languages written in each of `_LATIN`. Text read in its own
# code page has its letters in ONE of them; read in the other it mixes alphabets (Czech
# "příliš" read as Western is "pøíliš", with Danish "ø" but Spanish "í") or puts symbols
# inside words (Polish "ułatwia": "u³atwia").
_ALPHABETS = {
    "cp1252": ("àâçéèêëîïôœùûüÿ",  # French
               "äöüß",  # German
               "áéíñóúü",  # Spanish, Galician
               "àáâãçéêíóôõú",  # Portuguese
               "àèéìíîòóùú",  # Italian
               "éèëïóöü",  # Dutch, Afrikaans
               "åæøéèóòô",  # Danish, Norwegian
               "åäöé",  # Swedish, Finnish
               "äõöüšž",  # Estonian
               "áæðéíóöúýþ",  # Icelandic
               "àçèéíïòóúü"),  # Catalan
    "cp1250": ("áčďéěíňóřšťúůýž",  # Czech
               "áäčďéíĺľňóôŕšťúýž",  # Slovak
               "ąćęłńóśźż",  # Polish
               "áéíóöőúüű",  # Hungarian
               "čćđšž",  # Croatian, Bosnian, Slovene
               "ăâîşţ"),  # Romanian
}
LATIN_MISFITS = 0.25  # the share of a Latin reading's letters beyond ASCII its likeliest alphabet may lack
_IN_WORD_MARKS = "\u2019\u00b7\u00ad"  # apostrophe (l’élève), middle dot (col·lecció), soft hyphen


def _looks_like(text: str, language: str, among_latin: bool = False) -> bool:
    """Whether ``text``, decoded from a legacy encoding, reads as ``language`` ("ja": hiragana
    and few half-width katakana; "ko": Hangul, much of it common syllables; "zh", "zh-hant":
    Han characters, many of them common ones; "ru": Cyrillic, mostly lower case and hardly a
    capital inside a word, many of them the commonest letters, and most of the letters (``among_latin``, a mostly
    ASCII file, `_legacy_text`: hardly one glued to a Latin letter); "el", "he",
    "ar", "th": `_looks_like_script`; "latin": accented Latin letters among more plain ones,
    nearly all in one language's alphabet (`_misfits`), a Western or Central European text
    dense with accents)."""
    wide = (len(text) - len(text.encode("ascii", "ignore"))) or 1

    def count(script):
        return _count(_SCRIPT_RES[script], text)

    def common_share(chars):
        return sum(n for c, n in Counter(chars).items() if c in _COMMON[language]) / max(len(chars), 1)
    if language == "ja":
        return count("hiragana") >= 0.15 * wide and count("halfwidth kana") <= 0.05 * wide
    if language == "ko":
        hangul = _SCRIPT_RES["hangul"].findall(text)
        return len(hangul) >= 0.6 * wide and common_share(hangul) >= 0.25
    if language.startswith("zh"):
        han = _SCRIPT_RES["han"].findall(text)
        return len(han) + count("cjk punctuation") >= 0.9 * wide and common_share(han) >= 0.2
    if language in _SCRIPTS:
        return _looks_like_script(text, language, wide)
    if language == "latin":  # accented letters among mostly plain ones ("élève à côté")
        accented = count("latin accented")
        return accented >= 0.8 * wide and count("latin") >= accented and _latin_fits(text, accented)
    cyrillic = count("cyrillic")
    lower = _SCRIPT_RES["cyrillic lower"].findall(text)
    return (cyrillic >= 0.9 * wide and len(lower) >= 0.6 * cyrillic
            # not a Western text's accents (``among_latin``: a mostly ASCII file whose Latin
            # reading is implausible, `_legacy_text`, may be English with some Russian in it)
            and (cyrillic >= 0.5 * (cyrillic + count("latin")) if not among_latin
                 else count("cyrillic glued to latin") <= 0.05 * cyrillic)
            and common_share(lower) >= 0.45 and count("cyrillic capital inside") <= 1 + 0.02 * cyrillic)


def _looks_like_script(text: str, language: str, wide: int) -> bool:
    """Whether ``text`` (``wide`` characters beyond ASCII) reads as Greek, Hebrew, Arabic or
    Thai: its script is nearly all of them, many of its characters the language's commonest
    (`_COMMON_SHARE`), few glued to a plain Latin letter. These code pages read each other's
    bytes as letters, so Greek also needs its accents (tonos), hardly a final sigma or a
    capital inside a word (Arabic reads as Greek capitals and accented letters) and no sign of
    ISO-8859-7 read as Windows-1253 or the other way round; Hebrew its final letters at the
    ends of words (or all at the beginnings: visual order); Thai its leading vowels and tone
    marks (KOI8-R's lower case reads as Thai letters, but not as those)."""
    def count(script):
        return _count(_SCRIPT_RES[script], text)
    chars = _SCRIPT_RES[_SCRIPTS[language]].findall(text)
    common = sum(n for c, n in Counter(chars).items() if c.lower() in _COMMON[language])
    if (len(chars) < 0.9 * wide or common < _COMMON_SHARE[language] * len(chars)
            or _count(_GLUED_TO_LATIN_RES[language], text) > 0.05 * len(chars)):
        return False
    if language == "el":
        return (count("greek tonos") >= 0.04 * len(chars) and count("greek other code page") == 0
                and count("greek sigma inside") <= 1 + 0.2 * count("greek sigma")
                and count("greek capital inside") + count("greek upsilon") <= 1 + 0.02 * len(chars))
    if language == "he":
        finals = count("hebrew final")
        in_place = max(count("hebrew final ending"), count("hebrew final beginning"))
        return finals - in_place <= 0.1 * finals
    if language == "th":
        return count("thai leading vowels and tone marks") >= 0.03 * len(chars)
    return True


def _count(regex: re.Pattern, text: str) -> int:
    """How many times ``regex`` matches in ``text`` (without a list of the matches)."""
    return regex.subn("", text)[1]


def _fewer_valid_than(text: str, n: int) -> bool:
    """Whether ``text`` has fewer than ``n`` valid characters beyond ASCII (stops counting at ``n``)."""
    for i, _ in enumerate(_VALID_NON_ASCII_RE.finditer(text), 1):
        if i >= n:
            return False
    return True


def _mostly_beyond_ascii(data: bytes) -> bool:
    """Whether `LEGACY_SHARE` or more of the first 64 KB, and `LEGACY_MIN_BYTES`, are beyond ASCII."""
    sample = data[:1 << 16]
    high = len(sample.translate(None, _ASCII_BYTES))
    return high >= LEGACY_SHARE * len(sample) and high >= LEGACY_MIN_BYTES


def _legacy_text(data: bytes) -> str | None:
    """``data`` (not UTF-8) read as Western or Central European text, or in a legacy
    encoding of `_LEGACY` (`LEGACY_SHARE`); None: refused."""
    if not _mostly_beyond_ascii(data):
        text = _latin_text(data, "replace")
        if _reads_as_latin(text):
            return text
        # a mostly ASCII file (an English README with some Russian or Greek in it) whose
        # letters beyond ASCII no Latin alphabet explains: the script whose text it reads as
        for encoding, language in _LEGACY:
            other = _decoded(data, encoding, "strict")
            if other is not None and _looks_like(other, language, among_latin=True):
                return other
        return text
    for encoding, language in _LEGACY:
        text = _decoded(data, encoding, "strict")
        if text is not None and _looks_like(text, language):
            return text
    text = _latin_text(data, "strict")
    return text if text is not None and _looks_like(text, "latin") else None


def _reads_as_latin(text: str) -> bool:
    """Whether the letters beyond ASCII of ``text`` (a Windows-1252 or -1250 reading) are
    few (fewer than `LEGACY_MIN_BYTES`) or mostly explained by one language's alphabet."""
    letters = sum(c.isalpha() for c in _NON_ASCII_RE.findall(text))
    return letters < LEGACY_MIN_BYTES or _latin_fits(text, letters)


def _latin_fits(text: str, letters: int) -> bool:
    """Whether one Western or Central European alphabet explains nearly all (`LATIN_MISFITS`)
    of the ``letters`` beyond ASCII of ``text`` (`_misfits`)."""
    return _misfits(text, _ALPHABETS["cp1252"] + _ALPHABETS["cp1250"]) <= LATIN_MISFITS * letters


def _latin_text(data: bytes, errors: str) -> str | None:
    """``data`` read as Windows-1252 or, when its text is clearly likelier (`_misfits`: at
    most half as many), as Windows-1250; ties and doubt go to Windows-1252, whose German
    and French letters ("ä", "é") are the same bytes in both. None: neither decodes (``errors``
    "strict")."""
    western, central = (_decoded(data, encoding, errors) for encoding in _LATIN)
    if central is None or central == western:
        return western
    if western is None:
        return central
    likelier = 2 * _misfits(central, _ALPHABETS["cp1250"]) < _misfits(western, _ALPHABETS["cp1252"])
    return central if likelier else western


def _decoded(data: bytes, encoding: str, errors: str) -> str | None:
    """``data`` decoded, or None when it does not decode (``errors`` "strict")."""
    try:
        return data.decode(encoding, errors=errors)
    except UnicodeDecodeError:
        return None


def _misfits(text: str, alphabets: tuple[str, ...]) -> int:
    """How many characters beyond ASCII in ``text`` the likeliest language of ``alphabets``
    (`_ALPHABETS`) does not explain: letters outside its alphabet, symbols inside words
    ("u³atwia") and undecodable bytes."""
    letters, symbols = Counter(), []
    for c, n in Counter(_NON_ASCII_RE.findall(text)).items():
        if c.isalpha():
            letters[c.lower()] += n
        elif c not in _IN_WORD_MARKS and c != "\ufffd":  # (counted once, below)
            symbols.append(c)
    odd = text.count("\ufffd")
    if symbols:
        inside = f"(?<=[^\\W\\d_])[{re.escape(''.join(symbols))}](?=[^\\W\\d_])"
        odd += len(re.findall(inside, text))
    total = sum(letters.values())
    return odd + min(total - sum(letters[c] for c in alphabet) for alphabet in alphabets)


def _utf16_without_bom(head: bytes) -> str | None:
    """'utf-16-le'/'utf-16-be' when the NULs look like UTF-16 text, else None (binary).

    Mostly-Latin UTF-16 text has a NUL in nearly every high byte, all at one parity;
    binary data has NULs at both parities or decodes to control characters.
    """
    even, odd = head[0::2].count(0), head[1::2].count(0)
    pairs = len(head) // 2
    # (one NUL in a few bytes, b"bin\0ary", is no evidence of UTF-16)
    if pairs == 0 or min(even, odd) > 0.05 * max(even, odd) or max(even, odd) < max(2, 0.1 * pairs):
        return None
    encoding = "utf-16-le" if odd > even else "utf-16-be"
    sample = head[: pairs * 2].decode(encoding, errors="replace")
    controls = sum(1 for ch in sample if ch < " " and ch not in "\t\n\r\f\v")
    return encoding if controls <= 0.01 * len(sample) else None


def file_sha256(abspath: str | os.PathLike) -> str:
    """Hex SHA-256 of the file's bytes."""
    digest = hashlib.sha256()
    with open(abspath, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class AtomicWrite:
    """A text file written whole or not at all: ``with AtomicWrite(path) as f`` writes a
    temporary file beside ``path`` and renames it over ``path`` when the block succeeds (an
    error or Ctrl-C leaves the previous file as it was)."""

    def __init__(self, path: str | os.PathLike):
        self.path = os.fspath(path)
        # A link is written through (the file it points to is replaced, not the link), an
        # existing file keeps its permissions, and what is not a regular file (a pipe,
        # /dev/stdout, a shell's >(...)) is written directly: it cannot be replaced.
        try:
            st = os.stat(self.path)
        except OSError:
            st = None
        self.direct = st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode)
        self.target = self.path if self.direct else os.path.realpath(self.path)
        self.mode = stat.S_IMODE(st.st_mode) if st is not None and stat.S_ISREG(st.st_mode) else None
        folder, name = os.path.split(self.target)
        self.tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")

    def __enter__(self):
        try:
            self.file = open(self.target if self.direct else self.tmp, "w", encoding="utf-8")
        except OSError as e:
            raise RagError(f"cannot write {self.path}: {e.strerror or e}") from None
        if not self.direct:
            _lock_first_byte(self.file)
        if self.mode is not None:
            try:
                os.chmod(self.tmp, self.mode)
            except OSError:
                pass  # (not this user's file: the new one gets the usual permissions)
        return self.file

    def __exit__(self, kind, value, tb):
        self._finish(kind)
        if kind is not None and issubclass(kind, OSError) and not issubclass(kind, BrokenPipeError):
            # a write in the block failed (a full disk): name the file, as a failed close does
            raise RagError(f"cannot write {self.path}: {value.strerror or value}") from None
        return False

    def _finish(self, kind) -> None:
        if self.direct:
            try:
                self.file.close()
            except OSError as e:
                if kind is None:
                    raise RagError(f"cannot write {self.path}: {e.strerror or e}") from None
            return
        try:
            self.file.close()
            if kind is None:
                os.replace(self.tmp, self.target)
                return
        except OSError as e:  # (a full disk on close; ``path`` a folder)
            if kind is None:
                self._discard()
                raise RagError(f"cannot write {self.path}: {e.strerror or e}") from None
        self._discard()

    def _discard(self) -> None:
        try:
            os.unlink(self.tmp)
        except FileNotFoundError:
            pass


def _lock_first_byte(file) -> None:
    """Hold a lock on the first byte of ``file`` while it is open: a process that finds the
    temporary file of an `AtomicWrite` whose process it cannot see (another PID namespace)
    knows by it that the file is being written (`indexer._remove_stale_temps`)."""
    try:
        import fcntl
        fcntl.lockf(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
    except (ImportError, OSError):
        pass  # (a file system without such locks: the file is written all the same)

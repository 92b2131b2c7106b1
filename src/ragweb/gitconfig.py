"""Where git's user-wide ignore file is: ``core.excludesFile``, read as git reads it.

git applies the patterns of that file (by default ``~/.config/git/ignore``: editor swap
files, ``.DS_Store``, ``.idea/``) to every repository, below ``.git/info/exclude`` and the
``.gitignore`` files. `excludes_file` finds it the way git does: the value set last in the
system, global and repository config files, else the default path. ``include`` and
``includeIf`` sections are not followed.
"""

from __future__ import annotations

import os
import re

_SECTION_RE = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)\s*(?:"((?:[^"\\]|\\.)*)")?\s*\]')
_KEY_RE = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(=?)")
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}
CONFIG_MAX_BYTES = 1_000_000  # a bigger config file is not read


def excludes_file(git_dir: str | None, top: str) -> str | None:
    """The path of the ignore file git applies to the repository at ``git_dir`` (its work
    tree starting at ``top``): ``core.excludesFile`` from the config files, the last one
    that sets it winning, else ``$XDG_CONFIG_HOME/git/ignore`` or ``~/.config/git/ignore``.
    None when neither names a file (no home folder, or the value is empty)."""
    value = None
    for path in config_files(git_dir):
        found = _core_excludes_file(path)
        if found is not None:
            value = found
    if value is None:
        xdg = os.environ.get("XDG_CONFIG_HOME")
        home = os.environ.get("HOME")
        if xdg:
            return os.path.join(xdg, "git", "ignore")
        return os.path.join(home, ".config", "git", "ignore") if home else None
    if not value:
        return None
    if value.startswith("~"):
        value = os.path.expanduser(value)
    return os.path.join(top, value)  # (relative: to the work tree's top, where git runs)


def config_files(git_dir: str | None) -> list[str]:
    """The config files git reads, in its order: the system's, the user's, the repository's."""
    env = os.environ
    files = []
    if not _true(env.get("GIT_CONFIG_NOSYSTEM")):
        files.append(env.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig"))  # (set but empty: none, as git)
    if "GIT_CONFIG_GLOBAL" in env:
        files.append(env["GIT_CONFIG_GLOBAL"])
    else:
        xdg, home = env.get("XDG_CONFIG_HOME"), env.get("HOME")
        if xdg:
            files.append(os.path.join(xdg, "git", "config"))
        elif home:
            files.append(os.path.join(home, ".config", "git", "config"))
        if home:
            files.append(os.path.join(home, ".gitconfig"))
    if git_dir:
        files.append(os.path.join(git_dir, "config"))
    return [f for f in files if f]


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def _core_excludes_file(path: str) -> str | None:
    """The last ``core.excludesFile`` value that the config file at ``path`` sets, or None
    (also when the file is missing or unreadable: git goes on without it)."""
    try:
        with open(path, "rb") as f:
            data = f.read(CONFIG_MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > CONFIG_MAX_BYTES:
        return None
    return core_excludes_file(data.decode("utf-8", errors="replace"))


def core_excludes_file(text: str) -> str | None:
    """The last ``core.excludesFile`` that the git config ``text`` sets, or None."""
    found = None
    section = ""
    lines = text.removeprefix("\ufeff").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        m = _SECTION_RE.match(line)
        if m:
            name, sub = m.group(1).lower(), m.group(2)
            section = name if sub is None else f"{name}\0"  # (a subsection: never plain "core")
            line = line[m.end():]
        m = _KEY_RE.match(line)
        if not m or line.lstrip().startswith(("#", ";")):
            continue
        key = m.group(1).lower()
        if not m.group(2):
            value = ""  # ("key" alone is a boolean true: no path)
        else:
            value, i = _value(line[m.end():], lines, i)
        if section == "core" and key == "excludesfile":
            found = value
    return found


def _value(rest: str, lines: list[str], i: int) -> tuple[str, int]:
    """A config value that starts with ``rest``, read as git's ``parse_value`` reads it:
    quotes joined, escapes read, a comment dropped, whitespace outside quotes kept as one
    space each between characters of the value (dropped at its ends), a backslash at a line's
    end continuing it on the next line, a NUL ending it. Returns the value and the index of
    the line after it."""
    out: list[str] = []
    quoted = False
    spaces = 0
    j = 0
    while True:
        if j >= len(rest):
            break
        c = rest[j]
        j += 1
        if c == "\0":
            break  # (git reads a value as a C string)
        if c in " \t\r\f\v" and not quoted:
            if out:
                spaces += 1
            continue
        if c in "#;" and not quoted:
            break
        if c == "\\":
            if rest[j:].strip("\r") == "":  # (a continued line)
                if i < len(lines):
                    rest, j, i = lines[i], 0, i + 1
                continue
            escaped = _ESCAPES.get(rest[j], "")
            j += 1
            if escaped:
                out.append(" " * spaces + escaped)
                spaces = 0
            continue
        if c == '"':
            quoted = not quoted
            continue
        out.append(" " * spaces + c)
        spaces = 0
    return "".join(out), i

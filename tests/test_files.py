"""Tests for ragweb.files: glob matching, ignore files, walking, decoding."""

import hashlib
import os
import random
import re
import stat
import threading

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ragweb.config import DEFAULT_EXCLUDES, DEFAULT_INCLUDES
from ragweb.errors import UsageError
from ragweb.files import (DecodeResult, FileEntry, GlobSet, LeftOut, backslash_problem, decode, expand_braces, file_sha256,
                          document_kind, glob_problem, glob_to_regex, is_more_prose, plain_name,
                          UNINDEXED_TARGET, is_link_note, iter_files, ignore_verdict, parse_ignore, parse_rule, read_text_file)

ALL = ["**"]


def make(root, files):
    """Create files from {relative path: str or bytes}."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def walk(root, includes=ALL, excludes=(), use_gitignore=True):
    problems = []
    paths = [e.path for e in iter_files(root, list(includes), list(excludes), use_gitignore, problems)]
    return paths, problems


def paths_of(root, **kw):
    paths, problems = walk(root, **kw)
    assert problems == []
    return paths


# --------------------------------------------------------------------------- globs

@pytest.mark.parametrize("pattern, path, expected", [
    ("**/*.md", "a.md", True),  # root level too
    ("**/*.md", "x/y/a.md", True),
    ("**/*.md", "a.mdx", False),
    ("**/*.md", "a.md/b.txt", False),
    ("*.md", "x/a.md", True),  # no slash: any depth
    ("*.md", "a.md", True),
    ("docs/*.md", "docs/a.md", True),  # a slash anchors to the root
    ("docs/*.md", "docs/x/a.md", False),
    ("docs/*.md", "x/docs/a.md", False),
    ("/a.md", "a.md", True),
    ("/a.md", "x/a.md", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "ab", False),
    ("a/**", "a/x/y", True),
    ("a/**", "a", False),
    ("**/node_modules/**", "node_modules/x/y.js", True),
    ("**/node_modules/**", "a/b/node_modules/x.js", True),
    ("**/node_modules/**", "a/node_modules_x/x.js", False),
    ("a*b", "a/b", False),  # * never crosses a slash
    ("a*b", "axxb", True),
    ("?.md", "a.md", True),
    ("?.md", "ab.md", False),
    ("[a-c].md", "b.md", True),
    ("[a-c].md", "d.md", False),
    ("[!a-c].md", "b.md", False),
    ("[!a-c].md", "d.md", True),
    ("[!a-c].md", "/.md", False),
    ("x[ab", "x[ab", False),  # an unclosed bracket matches nothing, as in git
    ("\\*.md", "*.md", True),
    ("\\*.md", "a.md", False),
    ("a.md", "a_md", False),  # dots are literal
    ("*.MD", "a.md", False),  # case-sensitive, like git
])
def test_glob_matching(pattern, path, expected):
    assert GlobSet([pattern]).matches(path) is expected


# What `git check-ignore` (git 2.39) answers for these .gitignore lines and names: a `]`
# first in a class, `\` escapes, ranges (a reversed one adds nothing), POSIX classes, and
# brackets git never closes or cannot read (the line then matches nothing).
GIT_BRACKETS = {
    "a[\\]]b": {"a]b": True, "a\\]b": False, "a\\b": False},
    "c[[:digit:]]d": {"c5d": True, "c[d": False, "cad": False},
    "e[!a-c]f": {"ezf": True, "ebf": False, "e]f": True},
    "g[]x]h": {"g]h": True, "gxh": True, "g]x]h": False},
    "i[a-]j": {"i-j": True, "iaj": True, "ibj": False},
    "k[\\\\]l": {"k\\l": True, "kl": False},
    "m[[:alpha:][:digit:]]n": {"mAn": True, "m5n": True, "m-n": False},
    "o[[:bogus:]]p": {"obp": False, "o:p": False},
    "q[z-a]r": {"qzr": True, "qar": False, "q-r": False},
    "x[y": {"x[y": False, "xy": False},
    "u[[:alpha:]v": {"u[v": False, "uav": False},
    "w[[:alp]z": {"w[z": True, "wpz": True, "w:z": True, "w]z": False},
    "r[a-c-e]s": {"rbs": True, "r-s": True, "res": True, "rds": False},
    "t[!]]u": {"t]u": False, "tau": True},
    "a[[:punct:]]b.md": {"a-b.md": True, "a/b.md": False},  # (a class never matches a slash)
    # an unclosed bracket after closed ones, a '[' inside a closed one
    "a[b]c[d": {"abc[d": False, "abcd": False, "a[b]c[d": False},
    "[x]y[[:digit:]": {"xy5": False, "xy[": False, "xy[[:digit:]": False},
    "e[[]f[": {"e[f[": False, "e[f": False},
    "g[:[h]i": {"g:i": True, "g[i": True, "ghi": True, "g]i": False},
    "j[[:[:k]l": {"j[l": True, "j:l": True, "jkl": True, "j]l": False},
    "m[]n[o]": {"m]": True, "mn": True, "m[": True, "mo": True, "m]n[o]": False},
    "p[q[r]s": {"pqs": True, "p[s": True, "prs": True, "ps": False},
    "t[!u[v]w": {"tuw": False, "t[w": False, "tzw": True, "tvw": False},
    "x[y]z[\\]": {"xyz]": False, "xyz\\": False, "xyz[\\]": False},
    "[a][[:alpha:]][:": {"ab": False, "a[:": False},
    "[[:[:]:]]": {"[": False, ":": False, "]": False},
}


@pytest.mark.parametrize("line", GIT_BRACKETS)
def test_bracket_expressions_match_as_git_matches_them(line):
    rule = parse_rule(line)  # (a reversed range used to raise re.error: `rag index` crashed)
    for name, ignored in GIT_BRACKETS[line].items():
        assert bool(rule.regex.fullmatch(name)) is ignored, name


@settings(max_examples=500, deadline=None)
@given(st.text("[]\\:ab/\n.-", max_size=16))
def test_backslash_problem_reads_brackets_as_before(pattern):
    # the bracket regex now matches an unclosed '[' to its end too (and keeps it): the same
    # text outside brackets as the search that tried each '[' again
    outside = re.sub(r"\[(?:\\.|[^\]\\])*\]", lambda m: "[" + "x" * (len(m.group()) - 2) + "]",
                     pattern.replace("\\\\", "//"))
    m = re.search(r"(?<=[\w.-])\\(?=[\w.-])", outside)
    assert backslash_problem(pattern) == (None if m is None else backslash_problem("a\\" + pattern[m.end()]))


@pytest.mark.parametrize("pattern", ["**/*.md", "**/*.d.ts", "**/*.MD", "**/build/**", "**/.rag/**"])
def test_globs_tested_as_strings_match_as_their_regex(pattern):
    # "**/*.md" and "**/build/**" are tested with endswith / in, not a regex: the same answers
    regex = re.compile(glob_to_regex(pattern), re.DOTALL)
    globs = GlobSet([pattern])
    assert not globs._any  # (the fast path is what is under test)
    for path in ["a.md", "x/a.md", ".md", "a/.md", "a.md/b", "a.mdx", "a\nb.md", "f.d.ts", "f.ts", "A.MD",
                 "build", "build/x", "a/build/x/y", "rebuild/x", "a/build", "x/builds/y", ".rag/index.db", "a/.rag/x"]:
        assert globs.matches(path) is bool(regex.fullmatch(path)), path
        assert globs.covers_dir(path) is bool(regex.fullmatch(path + "/") or regex.fullmatch(path)), path


def test_a_glob_written_from_the_current_folder_is_relative_to_the_root():
    globs = GlobSet(["./docs/*.md", ".//src/"])
    assert globs.matches_file("docs/a.md") and globs.matches_file("src/x/y.py")
    assert not globs.matches_file("x/docs/a.md") and not globs.matches_file("a.md")


def test_dir_only_glob_matches_directories_only():
    globs = GlobSet(["build/"])
    assert globs.matches("x/build", is_dir=True)
    assert not globs.matches("x/build")


def test_a_folder_named_in_a_glob_stands_for_the_files_in_it():
    # includes: ["docs/"] or ["docs"] took nothing (no file is named docs)
    for pattern in ("docs/", "docs"):
        globs = GlobSet([pattern])
        assert globs.matches_file("docs/a.md") and globs.matches_file("x/docs/deep/b.py"), pattern
        assert not globs.matches_file("docs.md") and not globs.matches_file("other/a.md"), pattern
    anchored = GlobSet(["src/lib"])
    assert anchored.matches_file("src/lib/a.py") and not anchored.matches_file("x/src/lib/a.py")
    assert not GlobSet(["**/*.md"]).matches_file("notes.md/a.png")  # (a wildcard names files only)


def test_braces_stand_for_each_of_their_words():
    assert expand_braces("**/*.{md,txt}") == ["**/*.md", "**/*.txt"]
    assert expand_braces("{a,b}/x.{c,d}") == ["a/x.c", "a/x.d", "b/x.c", "b/x.d"]
    assert expand_braces("x{y}z") == ["x{y}z"]
    globs = GlobSet(["**/*.{md,txt}"])
    assert globs.matches_file("a/b.md") and globs.matches_file("c.txt") and not globs.matches_file("d.py")


def test_a_glob_and_a_name_written_in_other_unicode_forms_match(tmp_path):
    # macOS writes "é" in a name as "e" and a combining accent (NFD), a keyboard as one
    # character (NFC): an exclude typed in rag.yaml let a folder of private notes be indexed
    import unicodedata
    nfd, nfc = (unicodedata.normalize(f, "privé") for f in ("NFD", "NFC"))
    assert nfd != nfc
    for glob, name in ((f"{nfc}/**", nfd), (f"{nfd}/**", nfc), (f"**/{nfc}/*.md", nfd)):
        assert GlobSet([glob]).matches_file(f"{name}/notes.md"), (glob, name)
        assert GlobSet([glob.removesuffix("/**")]).matches_file(f"{name}/notes.md")
    assert GlobSet([nfc + "/"]).covers_dir(nfd)
    (tmp_path / nfd).mkdir()
    (tmp_path / nfd / "notes.md").write_text("secret")
    (tmp_path / "kept.md").write_text("kept")
    found = [e.path for e in iter_files(tmp_path, DEFAULT_INCLUDES, DEFAULT_EXCLUDES + [f"{nfc}/**"])]
    assert found == ["kept.md"]
    # (and a .gitignore typed on a keyboard, for a name macOS wrote: git there reads both as one)
    (tmp_path / nfd / "notes.md").unlink()
    (tmp_path / nfd).rmdir()
    (tmp_path / f"{nfd}.md").write_text("secret")
    (tmp_path / ".gitignore").write_text(f"{nfc}.md\n")
    assert [e.path for e in iter_files(tmp_path, DEFAULT_INCLUDES, DEFAULT_EXCLUDES)] == ["kept.md"]
    (tmp_path / ".gitignore").write_text(f"{nfd}.md\n")
    (tmp_path / f"{nfd}.md").rename(tmp_path / f"{nfc}.md")
    assert [e.path for e in iter_files(tmp_path, DEFAULT_INCLUDES, DEFAULT_EXCLUDES)] == ["kept.md"]
    from ragweb.engine import Engine  # (`rag query --path` and ragPack's path option)
    eng = Engine.memory()
    eng.add_document(unicodedata.normalize("NFD", "café.md"), "# Menu\n\nespresso\n")
    assert eng.files_matching(unicodedata.normalize("NFC", "café.md"))


def test_globset_matches_any_pattern():
    globs = GlobSet(["*.md", "src/**/*.py"])
    assert globs.matches("a/b.md") and globs.matches("src/x/y.py") and globs.matches("src/y.py")
    assert not globs.matches("lib/y.py")
    assert not GlobSet([]).matches("a.md")


@pytest.mark.parametrize("path, covered", [
    ("node_modules", True), ("a/node_modules", True), (".git", True), ("x/.rag", True),
    ("src", False), ("node_modules_old", False), ("builds", False),
])
def test_default_excludes_cover_whole_directories(path, covered):
    assert GlobSet(DEFAULT_EXCLUDES).covers_dir(path) is covered


def test_parse_ignore_skips_comments_and_blanks_and_trailing_spaces():
    rules = parse_ignore("# comment\n\n   \n*.log   \n!keep.log\nout/\n\\#hash\n\\!bang\n")
    assert [(r.negate, r.dir_only) for r in rules] == [
        (False, False), (True, False), (False, True), (False, False), (False, False)]
    assert rules[0].regex.fullmatch("a/b.log")
    assert rules[3].regex.fullmatch("#hash")
    assert rules[4].regex.fullmatch("!bang")


# --------------------------------------------------------------------------- walking

def test_includes_and_excludes(tmp_path):
    make(tmp_path, {"a.md": "", "b.txt": "", "c.py": "", "docs/d.md": "", "docs/deep/e.md": "",
                    "docs/f.mdx": "", "node_modules/pkg/readme.md": "", "x.min.js": "", "y.js": "",
                    "z.bin": ""})
    assert paths_of(tmp_path, includes=["**/*.md"]) == [
        "a.md", "docs/d.md", "docs/deep/e.md", "node_modules/pkg/readme.md"]
    assert paths_of(tmp_path, includes=["docs/*.md"]) == ["docs/d.md"]
    assert paths_of(tmp_path, includes=DEFAULT_INCLUDES, excludes=DEFAULT_EXCLUDES) == [
        "a.md", "b.txt", "c.py", "docs/d.md", "docs/deep/e.md", "docs/f.mdx", "y.js"]
    only_md = dict(includes=["**/*.md"])
    assert paths_of(tmp_path, **only_md, excludes=["docs/", "node_modules"]) == ["a.md"]
    assert paths_of(tmp_path, **only_md, excludes=["docs/*", "**/pkg/**"]) == ["a.md"]
    assert paths_of(tmp_path, **only_md, excludes=["deep/"]) == [
        "a.md", "docs/d.md", "node_modules/pkg/readme.md"]


def test_the_default_includes_take_documents_known_by_name_and_more_languages(tmp_path):
    """A project's README, INSTALL or Makefile has no suffix, and a Texinfo manual or a Lua
    program another one: each was left out ("6 files match no index.includes glob")."""
    import gzip
    make(tmp_path, {"README": "", "INSTALL": "", "src/Makefile": "", "Dockerfile": "", "doc/tool.texi": "",
                    "lib/Tool.pm": "", "main.lua": "", "analysis.R": "", "paper.tex": "", "a/readme": "",
                    "b/Readme": "", "Changelog": "", "c/makefile": "", "COPYING.LESSER": "",
                    "README.Debian": "", "Makefile.old": "", "notes": ""})
    (tmp_path / "doc/NEWS.gz").write_bytes(gzip.compress(b"1.0: first\n"))
    assert paths_of(tmp_path, includes=DEFAULT_INCLUDES, excludes=DEFAULT_EXCLUDES) == [
        "COPYING.LESSER", "Changelog", "Dockerfile", "INSTALL", "README", "README.Debian", "a/readme", "analysis.R",
        "b/Readme", "c/makefile", "doc/NEWS.gz", "doc/tool.texi", "lib/Tool.pm", "main.lua", "paper.tex",
        "src/Makefile"]
    assert read_text_file(tmp_path / "doc/NEWS.gz", 100).text == "1.0: first\n"
    # (read as prose in the capitals they are written in, as the default includes take them)
    assert [p for p in ("a/readme", "b/Readme", "Changelog", "COPYING.LESSER", "doc/NEWS", "c/makefile",
                        "README.Debian", "bin/install", "Install") if is_more_prose(p)] == [
        "a/readme", "b/Readme", "Changelog", "COPYING.LESSER", "doc/NEWS", "README.Debian", "Install"]


def test_a_readme_named_with_a_word_before_or_after_is_taken_and_read_as_prose(tmp_path):
    """A documentation folder as Debian installs it (/usr/share/doc/postfix): TLS_README.gz,
    README.Debian matched no default glob ("51 .gz, 22 (no suffix)" left out), and taken by a
    glob of one's own were read line by line as a program. (Not the packaging's change log.)"""
    import gzip
    make(tmp_path, {"README.Debian": "", "NEWS.Debian": "", "INSTALL.generic": "", "LMTP_README": "",
                    "install-sh": "", "INSTALL.sh": "", "Makefile.old": "", "README.md": "", "tls_readme": ""})
    for name in ("TLS_README.gz", "changelog.Debian.gz"):
        (tmp_path / name).write_bytes(gzip.compress(b"Text.\n"))
    assert paths_of(tmp_path, includes=DEFAULT_INCLUDES, excludes=DEFAULT_EXCLUDES) == [
        "INSTALL.generic", "INSTALL.sh", "LMTP_README", "NEWS.Debian", "README.Debian", "README.md",
        "TLS_README.gz"]
    assert [p for p in ("TLS_README", "doc/SMTPUTF8_README", "README.Debian", "INSTALL.generic", "changelog.Debian",
                        "INSTALL.sh", "README.md", "install-sh", "my-install", "Makefile.old", "tls_readme",
                        "readme.Debian") if is_more_prose(p)] == [
        "TLS_README", "doc/SMTPUTF8_README", "README.Debian", "INSTALL.generic"]
    assert plain_name("TLS_README.gz") == "TLS_README"
    # (an index built before markup 23 read them as it did)
    assert not is_more_prose("TLS_README", affixed=False)
    # (`install` in lower case is most often a script: not taken by default, nor read as prose)
    (tmp_path / "install").write_text("#!/bin/sh\ncp tool /usr/local/bin\n")
    assert "install" not in paths_of(tmp_path, includes=DEFAULT_INCLUDES, excludes=DEFAULT_EXCLUDES)


def test_order_is_sorted_by_relative_path(tmp_path):
    make(tmp_path, {"a.md": "", "a/b.md": "", "a-b.md": "", "B.md": "", "a/a/z.md": "", "ab.md": ""})
    paths = paths_of(tmp_path)
    assert paths == sorted(paths)
    assert len(paths) == 6


def test_file_entry_fields(tmp_path):
    make(tmp_path, {"sub/f.txt": "hello"})
    (entry,) = iter_files(tmp_path, ALL, [])
    st_ = os.stat(tmp_path / "sub" / "f.txt")
    assert entry == FileEntry("sub/f.txt", str(tmp_path / "sub" / "f.txt"), 5, st_.st_mtime,
                              ident=f"{st_.st_ino}:{st_.st_ctime_ns}")
    assert os.path.isabs(entry.abspath)


def test_relative_root_gives_absolute_abspath(tmp_path, monkeypatch):
    make(tmp_path, {"r/f.md": "x"})
    monkeypatch.chdir(tmp_path)
    (entry,) = iter_files("r", ALL, [])
    assert entry.abspath == str(tmp_path / "r" / "f.md")


def test_root_must_be_a_directory(tmp_path):
    with pytest.raises(UsageError, match="not a directory"):
        list(iter_files(tmp_path / "nope", ALL, []))


def test_excluded_directory_is_not_entered(tmp_path):
    make(tmp_path, {"a.md": "", "node_modules/x.md": ""})
    # a loop inside node_modules would be reported if the walk went in there
    os.symlink("..", tmp_path / "node_modules" / "loop")
    paths, problems = walk(tmp_path, excludes=["**/node_modules/**"])
    assert paths == ["a.md"]
    assert problems == []


def test_nested_gitignore_with_negation_and_dir_only(tmp_path):
    make(tmp_path, {
        ".gitignore": "# comment\n\n*.log\n!keep.log\nout/\n/top.md\n",
        "a.log": "", "keep.log": "", "top.md": "", "x.md": "",
        "out/gen.md": "",
        "sub/.gitignore": "!a.log\n*.md\n",
        "sub/a.log": "", "sub/b.log": "", "sub/top.md": "", "sub/c.txt": "",
        "sub/out": "",  # a file named like the dir-only pattern is kept
        "sub/deeper/out/gen.md": "", "sub/deeper/k.log": "",
    })
    assert paths_of(tmp_path, includes=["**/*.md", "**/*.log", "**/*.txt", "**/out"]) == [
        "keep.log", "sub/a.log", "sub/c.txt", "sub/out", "x.md"]


def test_nested_gitignore_applies_only_to_its_subtree(tmp_path):
    make(tmp_path, {"a/.gitignore": "*.md\n", "a/x.md": "", "b/x.md": "", "x.md": ""})
    assert paths_of(tmp_path) == ["a/.gitignore", "b/x.md", "x.md"]


def test_anchored_pattern_in_nested_gitignore_is_relative_to_it(tmp_path):
    make(tmp_path, {"sub/.gitignore": "/gen/\nlib/x.md\n", "sub/gen/a.md": "", "sub/q/gen/a.md": "",
                    "sub/lib/x.md": "", "sub/q/lib/x.md": "", "gen/a.md": ""})
    assert paths_of(tmp_path, includes=["**/*.md"]) == [
        "gen/a.md", "sub/q/gen/a.md", "sub/q/lib/x.md"]


def test_negation_cannot_reinclude_inside_ignored_dir(tmp_path):
    make(tmp_path, {".gitignore": "logs/\n!logs/a.md\n", "logs/a.md": "", "b.md": ""})
    assert paths_of(tmp_path, includes=["**/*.md"]) == ["b.md"]


def test_double_star_ignore_allows_reinclusion(tmp_path):
    make(tmp_path, {".gitignore": "logs/**\n!logs/a.md\n", "logs/a.md": "", "logs/b.md": ""})
    assert paths_of(tmp_path, includes=["**/*.md"]) == ["logs/a.md"]


def test_escaped_hash_and_trailing_spaces(tmp_path):
    make(tmp_path, {".gitignore": "\\#notes.md\nspace.md   \n", "#notes.md": "", "space.md": "",
                    "other.md": ""})
    assert paths_of(tmp_path, includes=["**/*.md"]) == ["other.md"]


def test_ragignore_works_and_overrides_gitignore(tmp_path):
    make(tmp_path, {".gitignore": "*.md\n", ".ragignore": "!keep.md\nsecret/\n",
                    "keep.md": "", "drop.md": "", "secret/s.txt": "", "sub/.ragignore": "*.txt\n",
                    "sub/a.txt": "", "b.txt": ""})
    assert paths_of(tmp_path, includes=["**/*.md", "**/*.txt"]) == ["b.txt", "keep.md"]


def test_use_gitignore_false_ignores_ignore_files(tmp_path):
    make(tmp_path, {".gitignore": "*.md\n", ".ragignore": "*.txt\n", "a.md": "", "b.txt": "",
                    "sub/.gitignore": "*\n", "sub/c.md": ""})
    assert paths_of(tmp_path, includes=["**/*.md", "**/*.txt"], use_gitignore=False) == [
        "a.md", "b.txt", "sub/c.md"]


def test_ignored_directory_is_not_entered(tmp_path):
    make(tmp_path, {".gitignore": "cache/\n", "cache/x.md": "", "a.md": ""})
    os.symlink("..", tmp_path / "cache" / "loop")
    paths, problems = walk(tmp_path, includes=["**/*.md"])
    assert (paths, problems) == (["a.md"], [])


# --------------------------------------------------------------------------- symlinks and problems

def test_a_name_that_is_not_utf8_is_a_problem_not_a_crash(tmp_path):
    make(tmp_path, {"a.md": "", "d/c.md": ""})
    root = os.fsencode(tmp_path)
    with open(root + b"/bad\xffname.md", "wb") as f:
        f.write(b"text")
    os.mkdir(root + b"/dir\xfe")
    with open(root + b"/dir\xfe/x.md", "wb") as f:
        f.write(b"text")
    paths, problems = walk(tmp_path, includes=["**/*.md"])
    assert paths == ["a.md", "d/c.md"]
    assert problems == [(r"bad\xffname.md", "its name is not valid UTF-8; rename it to index it"),
                        (r"dir\xfe", "its name is not valid UTF-8; rename it to index it")]


def test_a_name_with_a_line_break_is_a_problem_a_tab_is_not(tmp_path):
    # a citation `path:Ls-e` is one line: a name that breaks it cannot be cited
    make(tmp_path, {"bad\nname.md": "x", "tab\tname.md": "x", "ok.md": "x", "ls\u2028[evil.md:L1-3].md": "x",
                    "nel\x85.md": "x"})
    paths, problems = walk(tmp_path, includes=["**/*.md"])
    assert paths == ["ok.md", "tab\tname.md"]
    # (U+2028 and NEL are line breaks too: a name of them wrote a citation of its own)
    why = "its name holds a line break or another control character; rename it to index it"
    assert sorted(problems) == sorted([(r"bad\nname.md", why), (r"ls\u2028[evil.md:L1-3].md", why), (r"nel\x85.md", why)])


def test_symlink_loop_is_reported_not_fatal(tmp_path):
    make(tmp_path, {"a/x.md": "", "b.md": ""})
    os.symlink("..", tmp_path / "a" / "up")
    os.symlink(".", tmp_path / "a" / "self")
    paths, problems = walk(tmp_path, includes=["**/*.md"])
    assert paths == ["a/x.md", "b.md"]
    assert [p for p, _ in problems] == ["a/self", "a/up"]
    assert all("symlink loop" in message for _, message in problems)


def test_symlink_to_outside_dir_is_followed_once(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    make(outside, {"o.md": "", "back/.keep": ""})
    make(root, {"r.md": ""})
    os.symlink(outside, root / "link1")
    os.symlink(outside, root / "link2")
    os.symlink(root, outside / "back" / "to_root")  # a loop through the outside dir
    paths, problems = walk(root, includes=["**/*.md"])
    assert paths == ["link1/o.md", "r.md"]
    assert problems[0][0] == "link1/back/to_root" and "symlink loop" in problems[0][1]
    assert problems[1][0] == "link2" and "already indexed via link1" in problems[1][1]


def test_a_folder_linked_by_itself_and_through_its_parent_is_indexed_once(tmp_path):
    # a link to ext/inner walked before a link to ext: inner's files came twice
    root, ext = tmp_path / "root", tmp_path / "ext"
    make(ext, {"e.md": "", "inner/i.md": ""})
    root.mkdir()
    os.symlink(ext / "inner", root / "a_inner")
    os.symlink(ext, root / "b_ext")
    paths, problems = walk(root, includes=["**/*.md"])
    assert paths == ["a_inner/i.md", "b_ext/e.md"]
    assert problems == [("b_ext/inner", f"the folder {ext / 'inner'}, already indexed via a_inner; not followed")]
    assert all(is_link_note(m) for _, m in problems)


def test_symlink_inside_tree_is_not_followed(tmp_path):
    make(tmp_path, {"real/a.md": ""})
    os.symlink("real", tmp_path / "alias")
    paths, problems = walk(tmp_path, includes=["**/*.md"])
    assert paths == ["real/a.md"]
    assert problems == [("alias", "symlink to a directory inside the tree (real); not followed")]


def test_a_link_to_a_folder_inside_the_tree_that_gives_no_file_says_its_files_are_left_out(tmp_path):
    # Sphinx's output linked as docs: build/ is excluded, so nothing under build/html is indexed
    make(tmp_path, {"build/html/g.md": "generated", "content/docs/m.md": "real"})
    (tmp_path / "empty").mkdir()
    os.symlink("build/html", tmp_path / "docs")
    os.symlink("content/docs", tmp_path / "docs2")
    os.symlink("empty", tmp_path / "nothing")
    paths, problems = walk(tmp_path, includes=["**/*.md"], excludes=["**/build/**"])
    assert paths == ["content/docs/m.md"]
    assert problems == [
        ("docs", f"symlink to build/html, a folder inside the tree {UNINDEXED_TARGET}; not followed"),
        ("docs2", "symlink to a directory inside the tree (content/docs); not followed"),
        ("nothing", "symlink to a directory inside the tree (empty); not followed")]  # nothing to lose
    assert all(map(is_link_note, (m for _, m in problems)))


def test_a_folder_inside_a_git_work_tree_follows_the_ignore_files_above_it(tmp_path):
    # `rag index docs` in a repository: git ignores what the top's .gitignore says, so do we
    make(tmp_path, {".gitignore": "secret.md\ndocs/_build/\n*.log.md\n!keep.log.md\n",
                    ".git/info/exclude": "private.md\n", "docs/.ragignore": "drafts/\n",
                    "docs/secret.md": "", "docs/_build/b.md": "", "docs/guide/g.md": "", "docs/a.log.md": "",
                    "docs/keep.log.md": "", "docs/private.md": "", "docs/drafts/d.md": "",
                    "docs/_build2/c.md": ""})
    left_out = LeftOut()
    paths = [e.path for e in iter_files(tmp_path / "docs", ["**/*.md"], [], True, [], left_out)]
    assert paths == ["_build2/c.md", "guide/g.md", "keep.log.md"]
    assert left_out.ignored == 5 and left_out.ignored_above == str(tmp_path)
    assert "ignored by .gitignore/.ragignore rules or git's excludes (info/exclude, core.excludesFile) (some of the git work tree at" in left_out.hint()
    # without gitignore, or at the top of the work tree itself, or in a repository of its own
    assert len(paths_of(tmp_path / "docs", includes=["**/*.md"], use_gitignore=False)) == 8
    assert "docs/guide/g.md" in paths_of(tmp_path, includes=["**/*.md"])
    assert "docs/secret.md" not in paths_of(tmp_path, includes=["**/*.md"])
    (tmp_path / "docs" / ".git").mkdir()
    assert "secret.md" in paths_of(tmp_path / "docs", includes=["**/*.md"])


def test_symlinked_file_is_yielded_once_and_broken_symlink_reported(tmp_path):
    # A link to a file outside the tree is the way to it; one to a file inside the tree was
    # a second copy of that file in the index (its chunks twice, cited under either name).
    outside = tmp_path / "outside"
    make(outside, {"shared.md": "shared"})
    root = tmp_path / "root"
    make(root, {"a.md": "hello", "z/deep.md": "deep", "secret/key.md": "k"})
    os.symlink("a.md", root / "b.md")
    os.symlink("missing.md", root / "c.md")
    os.symlink("z/deep.md", root / "docs.md")  # (sorted before its target)
    os.symlink(outside / "shared.md", root / "shared.md")
    os.symlink("secret/key.md", root / "key.md")
    paths, problems = walk(root, excludes=["secret/**"])
    assert paths == ["a.md", "shared.md", "z/deep.md"]
    assert sorted(problems) == [
        ("b.md", "symlink to a.md, a file indexed at its own place; not followed"),
        ("c.md", "unreadable: broken symlink"),
        ("docs.md", "symlink to z/deep.md, a file indexed at its own place; not followed"),
        ("key.md", "symlink to secret/key.md, a file inside the tree that is not indexed (excluded, ignored, "
                   "or no include takes it); not followed")]
    assert all(is_link_note(m) for p, m in problems if p != "c.md")


def test_a_file_link_inside_a_linked_folder_is_yielded_once(tmp_path):
    # Debian's man2/creat.2.gz links to open.2.gz beside it: through `ln -s /usr/share/man/man2
    # mydocs/`, as README says to index a folder one cannot write, both were indexed
    outside = tmp_path / "man"
    make(outside, {"man2/open.2": "open", "man3/printf.3": "printf"})
    os.symlink("open.2", outside / "man2" / "creat.2")
    os.symlink("../man2/open.2", outside / "man3" / "open.3")  # (into another linked folder, walked before it)
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside / "man2", root / "man2")
    os.symlink(outside / "man3", root / "man3")
    paths, problems = walk(root, includes=["**/*.[1-9]"])
    assert paths == ["man2/open.2", "man3/printf.3"]
    assert sorted(problems) == [("man2/creat.2", "symlink to man2/open.2, a file indexed at its own place; not followed"),
                                ("man3/open.3", "symlink to man2/open.2, a file indexed at its own place; not followed")]
    assert all(is_link_note(m) for p, m in problems)



def test_a_file_link_into_a_linked_folder_walked_later_is_yielded_once(tmp_path):
    # Debian's man2/getcwd.2.gz links to ../man3/getcwd.3.gz: with man2 and man3 each
    # linked from the tree, the link (man2, walked first) and the file (man3) were both indexed
    outside = tmp_path / "man"
    make(outside, {"man2/open.2": "open", "man3/printf.3": "printf"})
    os.symlink("../man3/printf.3", outside / "man2" / "printf.2")
    os.symlink("printf.3", outside / "man3" / "printf-alias.3")  # (beside the file, in the later folder)
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside / "man2", root / "man2")
    os.symlink(outside / "man3", root / "man3")
    paths, problems = walk(root, includes=["**/*.[1-9]"])
    assert paths == ["man2/open.2", "man2/printf.2"]
    assert sorted(problems) == [
        ("man3/printf-alias.3", "symlink to man3/printf.3, a file already indexed via man2/printf.2; not followed"),
        ("man3/printf.3", f"the file {outside / 'man3' / 'printf.3'}, already indexed via man2/printf.2; not followed")]
    assert all(is_link_note(m) for p, m in problems)
    # two links to a file outside any linked folder are each still indexed by its name
    os.symlink(outside / "man2" / "open.2", root / "a.2")
    os.symlink(outside / "man2" / "open.2", root / "b.2")
    os.unlink(root / "man2")
    assert walk(root, includes=["**/*.[1-9]"])[0] == ["a.2", "b.2", "man3/printf.3"]


def test_special_files_are_skipped_without_opening_and_named(tmp_path):
    make(tmp_path, {"a.md": ""})
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "big.txt").symlink_to("/dev/zero")
    (tmp_path / "gone.md").symlink_to(tmp_path / "nowhere.md")
    paths, problems = walk(tmp_path)
    assert paths == ["a.md"]
    assert sorted(problems) == [("big.txt", "not a regular file (a device)"), ("gone.md", "unreadable: broken symlink"),
                                ("pipe.md", "not a regular file (a named pipe)")]


def _walk_in_a_child(root, timeout=30):
    """`walk` in another process, so a walk that blocks fails the test instead of hanging it."""
    import json
    import subprocess
    import sys
    code = ("import json, sys; from ragweb.files import iter_files; p = []; "
            "f = [e.path for e in iter_files(sys.argv[1], ['**/*.md'], [], True, p)]; print(json.dumps([f, p]))")
    r = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_an_ignore_file_that_is_a_pipe_or_a_device_is_not_read(tmp_path):
    make(tmp_path, {"a.md": "", "sub/b.md": ""})
    os.mkfifo(tmp_path / ".gitignore")            # (opening it blocked the walk for ever)
    (tmp_path / "sub" / ".ragignore").symlink_to("/dev/zero")  # (read until memory ran out)
    paths, problems = _walk_in_a_child(tmp_path)
    assert paths == ["a.md", "sub/b.md"]
    assert sorted(map(tuple, problems)) == [
        (".gitignore", "unreadable ignore file: not a regular file (a named pipe)"),
        ("sub/.ragignore", "unreadable ignore file: not a regular file (a device)")]


def test_an_ignore_file_with_a_byte_order_mark_keeps_its_first_rule(tmp_path):
    make(tmp_path, {"a.md": "", "secret.md": "", ".gitignore": b"\xef\xbb\xbfsecret.md\n"})
    assert paths_of(tmp_path, includes=["**/*.md"]) == ["a.md"]


def test_too_long_paths_are_problems_not_exceptions(tmp_path):
    # Paths past PATH_MAX fail with ENAMETOOLONG even for root, like an unreadable entry.
    fd = os.open(tmp_path, os.O_RDONLY)
    rel, length = [], len(str(tmp_path))
    try:
        while length + 201 < 4096:
            name = "d" * 200
            os.mkdir(name, dir_fd=fd)
            new_fd = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd, length = new_fd, length + 201
            rel.append(name)
        os.close(os.open("f" * 250 + ".md", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
        os.mkdir("e" * 250, dir_fd=fd)
    finally:
        os.close(fd)
    make(tmp_path, {"ok.md": ""})
    paths, problems = walk(tmp_path)
    prefix = "/".join(rel)
    assert paths == ["ok.md"]
    assert sorted(problems) == [
        (f"{prefix}/{'e' * 250}", "unreadable directory: File name too long"),
        (f"{prefix}/{'f' * 250}.md", "unreadable: File name too long"),
    ]


# --------------------------------------------------------------------------- decoding

def read(tmp_path, data, max_bytes=1000):
    path = tmp_path / "f"
    path.write_bytes(data)
    return read_text_file(path, max_bytes)


def test_plain_utf8(tmp_path):
    assert read(tmp_path, "héllo\nwörld".encode()) == DecodeResult("héllo\nwörld", None)


def test_empty_file_is_empty_text(tmp_path):
    assert read(tmp_path, b"") == DecodeResult("", None)


def test_crlf_and_lone_cr_normalised(tmp_path):
    assert read(tmp_path, b"a\r\nb\rc\n\r\nd").text == "a\nb\nc\n\nd"


def test_utf8_bom_stripped(tmp_path):
    assert read(tmp_path, b"\xef\xbb\xbfhi\r\n").text == "hi\n"


def test_invalid_utf8_replaced(tmp_path):
    # a UTF-8 file (valid "é") with stray bytes keeps its UTF-8, the strays replaced
    assert read(tmp_path, "café ".encode() + b"\xff\xfe bad \xc3").text == "café \ufffd\ufffd bad \ufffd"


def test_a_legacy_8_bit_file_is_read_as_windows_1252(tmp_path):
    # no byte beyond ASCII is valid UTF-8: Latin-1 / Windows-1252 text, as most editors save it
    assert read(tmp_path, "Café “quoted” – naïve\r\n".encode("cp1252")).text == "Café “quoted” – naïve\n"
    assert decode("déjà vu".encode("latin-1")).text == "déjà vu"
    assert decode(b"ok \xff\xfe bad \x81").text == "ok ÿþ bad \ufffd"  # (0x81: not in Windows-1252)


JAPANESE = ("設定ファイルでサーバーのポートを変えられます。接続に失敗したときは、指数バックオフで"
            "再試行します。詳しくは「リトライ」の節を見てください。\n") * 4


@pytest.mark.parametrize("encoding", ["shift_jis", "cp932", "euc_jp"])
def test_a_legacy_japanese_file_is_read_as_japanese(tmp_path, encoding):
    assert read(tmp_path, ("# README\n" + JAPANESE).encode(encoding)).text == "# README\n" + JAPANESE


OTHER_SCRIPTS = [  # Greek, Hebrew, Arabic, Thai: code pages that read each other's bytes as letters
    ("Πριν εγκαταστήσετε το πρόγραμμα, ελέγξτε ότι υπάρχει αρκετός ελεύθερος χώρος στον δίσκο. Το αρχείο "
     "ρυθμίσεων βρίσκεται στον κατάλογο των ρυθμίσεων· εκεί μπορείτε να αλλάξετε τη θύρα του διακομιστή και "
     "το επίπεδο λεπτομέρειας του αρχείου καταγραφής. Αν η σύνδεση αποτύχει, ο πελάτης επαναλαμβάνει το "
     "αίτημα έως πέντε φορές. Άλλες επιλογές περιγράφονται στο εγχειρίδιο.\n", ["cp1253", "iso8859_7"]),
    ("לפני התקנת התוכנה, בדקו שיש מספיק מקום פנוי בדיסק. קובץ ההגדרות נמצא בתיקיית ההגדרות; שם אפשר "
     "לשנות את הפורט של השרת ואת רמת הפירוט של היומן. אם החיבור נכשל, הלקוח שולח את הבקשה שוב עד חמש "
     "פעמים. אחרי כל שינוי יש להפעיל מחדש את השירות כדי שההגדרות ייכנסו לתוקף.\n", ["cp1255"]),
    ("قبل تثبيت البرنامج، تأكد من وجود مساحة فارغة كافية على القرص. يوجد ملف الإعدادات في مجلد "
     "الإعدادات؛ يمكنك فيه تغيير منفذ الخادم ومستوى تفاصيل السجل. إذا فشل الاتصال، يعيد العميل إرسال "
     "الطلب خمس مرات على الأكثر. بعد كل تغيير يجب إعادة تشغيل الخدمة حتى تصبح الإعدادات سارية.\n", ["cp1256"]),
    ("ก่อนติดตั้งโปรแกรม ให้ตรวจสอบว่ามีพื้นที่ว่างบนดิสก์เพียงพอ ไฟล์การตั้งค่าอยู่ในโฟลเดอร์การตั้งค่า "
     "คุณสามารถเปลี่ยนพอร์ตของเซิร์ฟเวอร์และระดับรายละเอียดของบันทึกได้ หากการเชื่อมต่อล้มเหลว "
     "ไคลเอนต์จะส่งคำขอซ้ำไม่เกินห้าครั้ง หลังจากแก้ไขทุกครั้งต้องเริ่มบริการใหม่เพื่อให้การตั้งค่ามีผล\n",
     ["cp874", "tis_620"]),
]
LEGACY = OTHER_SCRIPTS + [  # a paragraph of each language, and an encoding it was commonly saved in
    ("配置文件用于更改服务器的端口和日志级别。当连接失败时，客户端会使用指数退避策略重试请求，最多重试五次。"
     "你可以在命令行中使用参数来覆盖这些设置，例如指定超时时间或者代理地址。\n", ["gbk", "gb18030"]),
    ("設定檔用於更改伺服器的連接埠和日誌等級。當連線失敗時，用戶端會使用指數退避策略重試請求，最多重試五次。"
     "你可以在命令列中使用參數來覆蓋這些設定，例如指定逾時時間或者代理位址。\n", ["big5"]),
    ("설정 파일에서 서버의 포트와 로그 수준을 바꿀 수 있습니다. 연결에 실패하면 클라이언트는 지수 백오프 "
     "방식으로 요청을 다시 시도하며, 최대 다섯 번까지 재시도합니다.\n", ["euc_kr", "cp949"]),
    ("Файл настроек позволяет изменить порт сервера и уровень журнала. Если соединение не удалось, "
     "клиент повторяет запрос с экспоненциальной задержкой, не более пяти раз.\n", ["cp1251", "koi8_r"]),
    ("Réessayer après l'échec: l'élève à côté a déjà reçu ça, où est-ce? Très élégant, même ému.\n", ["cp1252"]),
]


@pytest.mark.parametrize("text, encoding", [(t, e) for t, encodings in LEGACY for e in encodings])
def test_a_legacy_file_is_read_in_the_encoding_whose_text_reads_as_its_language(tmp_path, text, encoding):
    assert read(tmp_path, (text * 3).encode(encoding), max_bytes=5000).text == text * 3


@pytest.mark.parametrize("text, encoding", [(t, e) for t, encodings in OTHER_SCRIPTS for e in encodings])
def test_a_greek_hebrew_arabic_or_thai_paragraph_is_read_in_its_encoding(text, encoding):
    assert decode(text.encode(encoding)).text == text


RUSSIAN_MESSAGES = ("недопустимое имя параметра\nнедопустимое имя файла\n"  # (read as Windows-874: Thai letters)
                    "неизвестный параметр командной строки\n")
GREEK_LABELS = "νέο παράθυρο\nκλείσιμο καρτέλας\nεπαναφορά επιλογών\nεκτέλεση εντολής\n"  # (as Windows-1251: Cyrillic)


def test_a_legacy_file_read_in_another_legacy_encoding_is_not_taken_for_it():
    from ragweb.files import _LATIN, _LEGACY, _looks_like
    samples = ([(t, e) for t, encodings in LEGACY for e in encodings]
               + [(JAPANESE, "shift_jis"), (JAPANESE, "euc_jp"), (RUSSIAN_MESSAGES, "koi8_r"),
                  (GREEK_LABELS, "cp1253")])
    for text, encoding in samples:
        data = (text * 3).encode(encoding)
        # (a Western text read as Central European is still Latin: `_latin_text` tells those apart)
        latin = [] if encoding == "cp1252" else [(other, "latin") for other in _LATIN]
        for other, language in list(_LEGACY) + latin:
            try:
                wrong = data.decode(other)
            except UnicodeDecodeError:
                continue
            if wrong != text * 3:
                assert not _looks_like(wrong, language), (encoding, other)


def test_hebrew_is_tried_before_cyrillic_which_it_can_read_as():
    from ragweb.files import _looks_like
    text = "אין חיבור לאינטרנט. אנא בדקו את הגדרות הרשת ונסו שוב.\n"
    assert _looks_like(text.encode("cp1255").decode("cp1251"), "ru")  # ("айп зйбеш майришри. ара ...")
    assert decode(text.encode("cp1255")).text == text


@pytest.mark.parametrize("text", [
    "Default spacing between cells\nСтандардно растојание\nWidth of the border\nШирина на рамката\n",
    "Retry the request later\nОбиди се подоцна\nServer is not responding\nСерверот не одговара\n",
    "не може да се отвори файлът с настройките\nне може да се създаде временен файл\n",
])
def test_cyrillic_is_not_read_as_hebrew_or_latin(text):
    # (Cyrillic read as Windows-1255 is Hebrew letters, as Windows-1252 accented ones; the
    # first two have more Latin letters than Cyrillic ones and do not read as Cyrillic either)
    assert decode(text.encode("cp1251")).text in (None, text)


def random_beyond_ascii(seed):
    """Words of random bytes beyond ASCII, as a file in no encoding would be."""
    rng = random.Random(seed)
    return b" ".join(bytes(rng.randrange(0x80, 0x100) for _ in range(rng.randrange(1, 9)))
                     for _ in range(rng.choice([10, 40, 200])))


def test_a_legacy_file_that_reads_as_no_language_is_refused_clearly(tmp_path):
    result = read(tmp_path, random_beyond_ascii(0), max_bytes=5000)
    assert result.text is None and result.skipped.startswith("not UTF-8"), result
    assert "Save it as UTF-8" in result.skipped and "Windows-1255" in result.skipped


def test_random_bytes_beyond_ascii_are_refused_not_read_as_a_language():
    for seed in range(40):
        rng = random.Random(seed)
        for data in random_beyond_ascii(seed), bytes(rng.randrange(0x80, 0x100) for _ in range(300)):
            assert decode(data).text is None, (seed, decode(data).text[:40])


CENTRAL_EUROPEAN = [  # mostly ASCII, like most text: Windows-1250, not Windows-1252
    ("Před instalací programu zkontrolujte, že máte na disku dost volného místa. Konfigurační soubor "
     "najdete ve složce s nastavením; upravte v něm port serveru a úroveň podrobností protokolu. Pokud "
     "se připojení nezdaří, klient zkusí požadavek znovu nejvýše pětkrát. Po každé změně nastavení je "
     "třeba službu restartovat.\n"),
    ("Przed instalacją programu sprawdź, czy na dysku jest wystarczająco dużo wolnego miejsca. Plik "
     "konfiguracyjny znajduje się w katalogu ustawień; możesz w nim zmienić port serwera oraz poziom "
     "szczegółowości dziennika. Jeśli połączenie się nie powiedzie, klient ponowi żądanie najwyżej pięć "
     "razy. Po każdej zmianie należy ponownie uruchomić usługę.\n"),
    ("A program telepítése előtt ellenőrizze, hogy van-e elég szabad hely a lemezen. A beállítófájl a "
     "konfigurációs könyvtárban található; ebben módosíthatja a kiszolgáló portját és a naplózás "
     "részletességét. Ha a kapcsolódás nem sikerül, az ügyfél legfeljebb ötször próbálja újra a kérést. "
     "Minden módosítás után újra kell indítani a szolgáltatást.\n"),
]
WESTERN_EUROPEAN = [  # read as Windows-1250, Central European letters (but German's are the same bytes)
    ("Avant d'installer le programme, vérifiez qu'il reste assez d'espace libre sur le disque. Le fichier "
     "de configuration se trouve dans le répertoire des paramètres ; vous pouvez y modifier le port du "
     "serveur et le niveau de détail du journal. Si la connexion échoue, le client réessaie la requête au "
     "plus cinq fois. Après chaque modification, redémarrez le service pour qu'elle soit prise en compte.\n"),
    ("Bevor Sie das Programm installieren, prüfen Sie, ob auf der Festplatte genügend freier Speicherplatz "
     "vorhanden ist. Die Konfigurationsdatei liegt im Einstellungsverzeichnis; dort können Sie den Port des "
     "Servers und die Ausführlichkeit des Protokolls ändern. Schlägt die Verbindung fehl, wiederholt der "
     "Client die Anfrage höchstens fünfmal. Nach jeder Änderung muss der Dienst neu gestartet werden.\n"),
    ("Antes de instalar el programa, compruebe que hay suficiente espacio libre en el disco. El archivo de "
     "configuración está en el directorio de ajustes; allí puede cambiar el puerto del servidor y el nivel "
     "de detalle del registro. Si la conexión falla, el cliente reintenta la petición como máximo cinco "
     "veces. ¿Ha cambiado algo? Reinicie el servicio después de cada modificación.\n"),
    ("Antes de instalar o programa, verifique se há espaço livre suficiente no disco. O arquivo de "
     "configuração fica no diretório de definições; nele você pode alterar a porta do servidor e o nível "
     "de detalhe do registro. Se a conexão falhar, o cliente repete a requisição no máximo cinco vezes. "
     "Após cada alteração, é preciso reiniciar o serviço para que as opções sejam aplicadas.\n"),
    ("Prima di installare il programma, verificate che sul disco ci sia abbastanza spazio libero. Il file "
     "di configurazione si trova nella cartella delle impostazioni; lì è possibile cambiare la porta del "
     "server e il livello di dettaglio del registro. Se la connessione non riesce, il client ripete la "
     "richiesta al più cinque volte. Dopo ogni modifica bisogna riavviare il servizio perché abbia effetto.\n"),
    ("Før du installerer programmet, skal du kontrollere, at der er nok ledig plads på disken. "
     "Konfigurationsfilen ligger i mappen med indstillinger; her kan du ændre serverens port og hvor "
     "detaljeret loggen skal være. Hvis forbindelsen mislykkes, prøver klienten forespørgslen igen højst "
     "fem gange. Efter hver ændring skal tjenesten genstartes, før den får virkning.\n"),
    ("Før du installerer programmet, må du sjekke at det er nok ledig plass på disken. Konfigurasjonsfilen "
     "ligger i mappen for innstillinger; der kan du endre porten til tjeneren og hvor detaljert loggen skal "
     "være. Hvis tilkoblingen mislykkes, prøver klienten forespørselen på nytt høyst fem ganger. Etter hver "
     "endring må tjenesten startes på nytt.\n"),
]


@pytest.mark.parametrize("text", CENTRAL_EUROPEAN)
def test_a_central_european_file_is_read_as_windows_1250(text):
    assert decode(text.encode("cp1250")).text == text
    assert decode(text.encode("cp1250") * 40).text == text * 40  # (and longer)


@pytest.mark.parametrize("text", WESTERN_EUROPEAN)
def test_a_western_european_file_is_still_read_as_windows_1252(text):
    assert decode(text.encode("cp1252")).text == text
    assert decode(text.encode("cp1252") * 40).text == text * 40


def test_central_european_text_dense_with_accents_is_read_as_windows_1250():
    text = "Žádná úprava účtu? Přečtěte si nápovědu k úložišti, ověřte šířku řádků a též dílčí výpočty.\n"
    assert decode(text.encode("cp1250")).text == text  # (a third of its bytes beyond ASCII)


def test_windows_1250_and_1252_ties_go_to_1252_and_undefined_bytes_count():
    assert decode("Très bien, à bientôt.".encode("cp1252")).text == "Très bien, à bientôt."  # (or "Tčs ..., ŕ")
    assert decode("Spusťte to znovu.".encode("cp1250")).text == "Spusťte to znovu."  # (0x9d: not in Windows-1252)


def test_symbols_inside_words_count_against_a_reading():
    assert decode("Włącz ją teraz.".encode("cp1250")).text == "Włącz ją teraz."  # (not "W³¹cz j¹")


def test_utf8_text_mostly_beyond_ascii_keeps_its_utf8_with_a_stray_byte(tmp_path):
    assert read(tmp_path, JAPANESE.encode() + b"\xff").text == JAPANESE + "\ufffd"


def test_nul_byte_means_binary(tmp_path):
    assert read(tmp_path, b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x03\x00>\x00\x01") == DecodeResult(None, "binary")
    assert decode(bytes(range(256)) * 8) == DecodeResult(None, "binary")


def test_nul_after_sniff_window_is_not_binary(tmp_path):
    data = b"a" * 9000 + b"\x00b"
    assert read(tmp_path, data, max_bytes=10_000).text == "a" * 9000 + "\x00b"


def test_size_limit(tmp_path):
    assert read(tmp_path, b"x" * 100, max_bytes=50) == DecodeResult(
        None, "too large (100 bytes > max_file_bytes 50)")
    assert read(tmp_path, b"x" * 50, max_bytes=50).text == "x" * 50


def test_a_gzip_file_is_read_as_the_file_it_compresses(tmp_path):
    import gzip
    for rel, text in {"guide.md.gz": "# Guide\nturn the dial\n", "api/fs.json.gz": '{"desc": "x"}\n',
                      "changelog.Debian.gz": "entries\n", "b/notes.txt": "x\n", "site.tar.gz": "x",
                      "build/page.html.gz": "<p>x</p>"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(gzip.compress(text.encode()))
    # a compressed document is selected by the name it goes by (an included suffix, and not
    # an excluded place); compressed data and programs are not documents
    assert paths_of(tmp_path, includes=DEFAULT_INCLUDES, excludes=DEFAULT_EXCLUDES) == ["b/notes.txt", "guide.md.gz"]
    assert GlobSet(["**/*.md"]).matches_file("x/guide.md.GZ") and not GlobSet(["**/*.md"]).matches_file("x.gz")
    assert not GlobSet(["**/*.json"]).matches_file("fs.json.gz")
    assert read_text_file(tmp_path / "guide.md.gz", 100).text == "# Guide\nturn the dial\n"
    assert paths_of(tmp_path, includes=["**/*.json.gz"], excludes=[]) == ["api/fs.json.gz"]  # named: read
    assert read_text_file(tmp_path / "api/fs.json.gz", 100).text == '{"desc": "x"}\n'
    # uncompressed size counts; a broken or mislabelled file is a reason, not a crash
    big = tmp_path / "big.txt.gz"
    big.write_bytes(gzip.compress(b"a" * 5000))
    assert read_text_file(big, 1000).skipped == "too large (over 1000 bytes uncompressed > max_file_bytes)"
    for name, data in [("plain.md.gz", b"# not compressed\n"), ("cut.md.gz", gzip.compress(b"x" * 500)[:-12])]:
        (tmp_path / name).write_bytes(data)
        assert read_text_file(tmp_path / name, 1000).skipped.startswith("damaged: not gzip data ("), name
    (tmp_path / "lib.js.gz").write_bytes(gzip.compress(b"x" * 900))
    assert read_text_file(tmp_path / "lib.js.gz", 1000).skipped.startswith("minified")


def test_unreadable_file(tmp_path):
    from ragweb.files import BROKEN_LINK, GONE
    # gone (deleted after a walk listed it; its folder too, or a file now): not "unreadable"
    (tmp_path / "file").write_text("x\n")
    for missing in ("missing", "gone/missing", "file/missing"):
        assert read_text_file(tmp_path / missing, 100) == DecodeResult(None, GONE), missing
    (tmp_path / "link.md").symlink_to(tmp_path / "missing")
    (tmp_path / "folder").symlink_to(tmp_path / "gone")
    for broken in ("link.md", "folder/a.md"):  # (a link whose target is gone: kept, as the walk keeps it)
        assert read_text_file(tmp_path / broken, 100) == DecodeResult(None, BROKEN_LINK), broken
    assert read_text_file(tmp_path, 100).skipped == "unreadable: not a regular file (a folder)"


def test_a_file_or_folder_deleted_while_the_walk_lists_its_folder_is_gone_not_unreadable(tmp_path):
    # (one deleted between its folder's listing and its stat was "unreadable", and what the
    # index held of it was kept, old text and all, until the next run)
    from ragweb.files import _Walker
    (tmp_path / "a.md").write_text("x\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.md").symlink_to(tmp_path / "a.md")
    with os.scandir(tmp_path) as it:
        entries = {e.name: e for e in it}
    (tmp_path / "a.md").unlink()  # (the link's target: the link is broken now, and said so)
    (tmp_path / "sub").rmdir()
    problems: list = []
    walker = _Walker(str(tmp_path), ["**/*.md"], [], False, problems)
    assert walker._file(entries["a.md"], "a.md") is None
    assert list(walker.walk(str(tmp_path / "sub"), "sub", [])) == []
    assert problems == []
    assert walker._file(entries["link.md"], "link.md") is None
    assert [p for p, _ in problems] == ["link.md"]
    assert list(walker.walk(str(tmp_path / "gone"), "", [])) == [] and problems[-1][0] == "."  # (the root)


def test_reading_a_fifo_does_not_block(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    assert read_text_file(tmp_path / "pipe", 100) == DecodeResult(None, "unreadable: not a regular file (a named pipe)")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
@pytest.mark.parametrize("bom", [True, False])
def test_utf16_with_and_without_bom(tmp_path, encoding, bom):
    text = "Grüße, мир!\r\nline two\rthree"
    data = text.encode(encoding)
    if bom and encoding != "utf-16":  # "utf-16" writes its own BOM
        data = "\ufeff".encode(encoding) + data
    if not bom and encoding == "utf-16":
        data = data[2:]
    assert read(tmp_path, data).text == "Grüße, мир!\nline two\nthree"


def test_utf16_without_bom_mostly_cyrillic():
    text = "Привет мир, как дела? Всё хорошо."
    assert decode(text.encode("utf-16-le")).text == text
    assert decode(text.encode("utf-16-be")).text == text


def test_a_few_bytes_with_one_nul_are_binary_not_utf16():
    assert decode(b"bin\x00ary") == DecodeResult(None, "binary")  # (it read as '楢n牡...')
    assert decode("hi\n".encode("utf-16-le")).text == "hi\n"      # three NULs: UTF-16 still


def test_utf32_with_bom():
    assert decode("hi\r\n€".encode("utf-32")).text == "hi\n€"


def test_binary_with_nuls_at_one_parity_but_control_chars_is_binary():
    data = bytes([1, 0, 2, 0, 3, 0, 4, 0] * 100)
    assert decode(data) == DecodeResult(None, "binary")


def test_decode_matches_read_text_file(tmp_path):
    for data in [b"a\r\nb", "x\r\ny".encode("utf-16-le"), b"\x00\x01", b"\xef\xbb\xbfz", "Ελληνικά κείμενα".encode("cp1253") * 9]:
        assert read(tmp_path, data) == decode(data)


@given(st.text())
def test_utf8_text_round_trips(text):
    expected = text.replace("\r\n", "\n").replace("\r", "\n")
    data = text.encode("utf-8")
    if "\x00" in text or text.startswith("\ufeff"):
        return  # NUL means binary; a leading U+FEFF is read as a BOM
    assert decode(data).text == expected


@given(st.text(), st.sampled_from(["utf-16", "utf-32", "utf-8-sig"]))
def test_text_with_bom_round_trips(text, encoding):
    # A UTF-16 LE BOM followed by U+0000 is byte for byte the UTF-32 LE BOM: inherently ambiguous.
    assume(not (encoding == "utf-16" and text.startswith("\x00")))
    assert decode(text.encode(encoding)).text == text.replace("\r\n", "\n").replace("\r", "\n")


def test_file_sha256(tmp_path):
    data = os.urandom(3 << 20)
    (tmp_path / "f").write_bytes(data)
    assert file_sha256(tmp_path / "f") == hashlib.sha256(data).hexdigest()


def test_minified_reason_reads_scripts_styles_and_json_only():
    from ragweb.files import MINIFIED_LINE_CHARS, minified_reason
    line = "x" * (MINIFIED_LINE_CHARS + 1)
    for path in ("a.js", "b.mjs", "c.CSS", "_build/searchindex.js", "search/search_index.json"):
        assert minified_reason(path, line).startswith("minified"), path
        assert minified_reason(path, line + "\n") is not None, path
    assert minified_reason("a.js", "x" * MINIFIED_LINE_CHARS) is None  # at the limit
    assert minified_reason("a.js", (line + "\n" + "y\n") * 3) is None  # an average, not one line
    for path in ("a.md", "a.txt", "a.html", "a.py"):
        assert minified_reason(path, line) is None, path
    assert minified_reason("empty.js", "") is None


PACK = {"query": "how do retries back off", "budget_tokens": 300, "used_tokens": 12, "evidence": "weak",
        "evidence_score": 0.4, "snippets": [
            {"path": "docs/a.md", "range": "L3-4", "why": "BM25 score: 2.1", "text": "Retries back off.\nTwice.",
             "score": 2.1},
            {"path": "src/[x]:L1-2.py", "range": "L1-1", "why": "", "text": "retry = 2", "score": 1.0}]}


def test_a_packed_context_is_told_by_its_whole_shape_not_by_an_example_of_one():
    import json

    from ragweb.files import PACKED_REASON, decode_file
    from ragweb.formats import render

    def reason(name, text):
        return decode_file(name, text.encode("utf-8"), 5_000_000).skipped

    none = {**PACK, "evidence": "none", "evidence_score": 0.0, "used_tokens": 0, "snippets": []}
    sure = {**PACK, "evidence": "sufficient", "evidence_score": 1.0}
    # (first a snippet cut from a line, cited with its columns: "[docs/a.md:L3-4 cols 2-9]")
    cut = {**PACK, "snippets": [{**PACK["snippets"][0], "cols": [2, 9]}, PACK["snippets"][1]]}
    for packed in (PACK, none, sure, cut):
        for fmt in ("json", "markdown", "xml", "text"):
            assert reason("ctx.out", render(packed, fmt) + "\n") == PACKED_REASON, (fmt, packed["evidence"])
    packs = [
        json.dumps(PACK, indent=4, sort_keys=True),  # indented again, keys sorted (jq -S, json.tool)
        json.dumps({k: v for k, v in PACK.items() if not k.startswith("evidence")}),  # edited by hand, one line
        "\n".join(json.dumps({"id": n, **p}) for n, p in enumerate([PACK, none], 1))  # rag pack --batch
        + '\n{"id": 3, "query": "the", "error": "the question has no words to search for"}\n',
        '<?xml version="1.0" encoding="utf-8"?>\n' + render(PACK, "xml").replace("\n<", "\n  <"),  # (xmllint --format)
        "\n\n" + render(PACK, "text") + "\n\n",
    ]
    for text in packs:
        assert reason("ctx.json", text) == PACKED_REASON, text[:80]
    text_pack = render(PACK, "text")
    not_packs = [
        # a README that shows one
        "# The pack\n\nWhat `rag pack` writes:\n\n```\n" + text_pack + "\n```\n",
        "# Context for: the talk\n\nSlides and notes.\n",
        "Example:\n" + render(PACK, "markdown"),
        render(PACK, "markdown") + "\n\nMy notes on it.\n",  # (edited out of its shape: .rag/outputs still names it)
        "[draft] how retries back off\n\n300/400 tokens\n",
        "warning: the disk is full\n\n3/4 tokens\n",
        "[core]\nretries = 3\n",
        json.dumps({"query": "q", "budget_tokens": 300, "used_tokens": 4}),  # no snippets
        json.dumps({**PACK, "snippets": [{"path": "a", "range": "lines 1-2", "text": "x"}]}),
        json.dumps([PACK]),
        json.dumps(PACK) + "\n" + json.dumps({"id": 2, "name": "x"}),
        json.dumps(PACK)[:-1],
        "<context query=\"q\">\n<p>a talk</p>\n</context>\n",
    ]
    for text in not_packs:
        assert reason("notes.md", text) is None, text[:80]
    import gzip  # a compressed one: the text it compresses
    assert decode_file("ctx.md.gz", gzip.compress(render(PACK, "markdown").encode()), 10_000).skipped == PACKED_REASON

MOSTLY_ENGLISH = "Run `pip install foo`, then `foo --serve`. " + "The options are described below, with examples. " * 4


@pytest.mark.parametrize("local, encoding", [
    ("# Установка\n\nНастройки сервера хранятся в файле config.yaml; порт можно изменить.\n", "cp1251"),
    ("# Установка\n\nНастройки сервера хранятся в файле config.yaml; порт можно изменить.\n", "koi8_r"),
    ("# Εγκατάσταση\n\nΤο αρχείο ρυθμίσεων αλλάζει τη θύρα του διακομιστή.\n", "cp1253"),
    ("# התקנה\n\nקובץ ההגדרות נמצא בתיקיית ההגדרות של השרת.\n", "cp1255"),
])
def test_a_mostly_english_file_with_some_russian_greek_or_hebrew_is_read_in_their_encoding(local, encoding):
    # under LEGACY_SHARE of its bytes are beyond ASCII, yet no Latin alphabet explains them
    text = local + MOSTLY_ENGLISH
    data = text.encode(encoding)
    assert sum(b >= 0x80 for b in data) < 0.2 * len(data)
    assert decode(data).text == text


def test_a_mostly_english_file_with_names_from_many_western_languages_stays_western():
    text = ("Contributors: Jürgen Müller, José Núñez, François Gérard, Søren Kierkegård, Åsa Öberg, "
            "João Conceição, Ðorðe, Þór Björnsson, Ignacio Peña, Mårten Løvås, Renée Brontë, Zoë Dupré.\n"
            + MOSTLY_ENGLISH)
    assert decode(text.encode("cp1252")).text == text


def test_atomic_write_writes_through_a_link_keeps_permissions_and_writes_a_pipe_directly(tmp_path):
    from ragweb.files import AtomicWrite
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "ctx.json").write_text("old")
    (tmp_path / "ctx.json").symlink_to("shared/ctx.json")
    with AtomicWrite(tmp_path / "ctx.json") as f:
        f.write("new")
    assert (tmp_path / "ctx.json").is_symlink() and (tmp_path / "shared" / "ctx.json").read_text() == "new"
    private = tmp_path / "priv.json"
    private.write_text("x")
    private.chmod(0o600)
    with AtomicWrite(private) as f:
        f.write("packed")
    assert private.read_text() == "packed" and private.stat().st_mode & 0o777 == 0o600
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()))
    reader.start()
    with AtomicWrite(fifo) as f:
        f.write("through the pipe")
    reader.join(10)
    assert got == ["through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx.json", "f", "priv.json", "shared"]  # no temp files


def test_an_ignore_file_of_thousands_of_names_decides_as_its_last_matching_rule():
    # plain names are looked up in a set, the rest run by run in one regex each
    text = "\n".join(f"gen{i}.log" for i in range(3000)) + "\n!gen7.log\n*.tmp\n!keep.tmp\nbuild/\n"
    ignores = [("", parse_ignore(text)), ("sub", parse_ignore("gen7.log\n"))]
    assert ignore_verdict(ignores, "gen5.log", False) is True
    assert ignore_verdict(ignores, "x/gen2999.log", False) is True
    assert ignore_verdict(ignores, "gen7.log", False) is False         # re-included later in the file
    assert ignore_verdict(ignores, "sub/gen7.log", False) is True      # ... and ignored again below
    assert ignore_verdict(ignores, "a.tmp", False) is True and ignore_verdict(ignores, "keep.tmp", False) is False
    assert ignore_verdict(ignores, "build", True) is True and ignore_verdict(ignores, "build", False) is None
    assert ignore_verdict(ignores, "gen3000.log", False) is None


def test_a_folder_too_deep_to_walk_is_reported_not_a_crash(tmp_path):
    from ragweb.files import MAX_DEPTH
    path = tmp_path
    for i in range(MAX_DEPTH + 60):  # (past Python's stack: RecursionError before)
        path = path / "d"
        path.mkdir()
        (path / "f.md").write_text(f"level {i}\n")
    problems = []
    found = list(iter_files(tmp_path, ["**/*.md"], [], problems=problems))
    assert len(found) == MAX_DEPTH
    assert problems == [("/".join(["d"] * (MAX_DEPTH + 1)),
                         f"a folder more than {MAX_DEPTH} folders deep: its files are not indexed")]


def test_a_glob_of_many_stars_against_a_long_name_answers_at_once():
    # "*a*a*a...*b" backtracked exponentially in Python's re: 60 letters, 12 stars ran for minutes
    import subprocess
    import sys
    code = ("from ragweb.files import GlobSet, parse_rule; g = '*a' * 12 + '*b'; name = 'a' * 60 + '.md'; "
            "print(GlobSet([g]).matches(name), GlobSet([g[:-1] + 'md']).matches(name), parse_rule(g).regex.fullmatch(name))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert r.stdout.split() == ["False", "True", "None"], r.stderr


@given(st.text("ab*?/", min_size=1, max_size=9), st.lists(st.text("abc/", max_size=10), max_size=8))
def test_globs_of_several_stars_match_as_the_plain_regex_does(glob, names):
    # each star but a segment's last takes the earliest match and keeps it: the same answers
    assume(not glob.startswith("/") and "//" not in glob)
    plain = re.compile(glob_to_regex(glob).replace("(?>[^/]*?", "(?:[^/]*"), re.DOTALL)
    ours = re.compile(glob_to_regex(glob), re.DOTALL)
    for name in names:
        assert bool(ours.fullmatch(name)) == bool(plain.fullmatch(name)), (glob, name)


def _git(root, *args, home=None, **env_vars):
    import subprocess
    env = {"PATH": os.environ["PATH"], "HOME": str(home or root), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           **env_vars}
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, check=True).stdout


def _git_keeps(root, **env_vars) -> list[str]:
    """The files git itself does not ignore: the oracle of these tests."""
    return sorted(p.decode() for p in _git(root, "ls-files", "-z", "--others", "--exclude-standard", **env_vars).split(b"\0") if p)


@pytest.mark.parametrize("ignore, files", [
    (None, ["docs/notes.md", "docs/a.md"]),                  # the top's own .git/info/exclude
    (b"notes\rdraft.md\n", ["notes", "draft.md"]),            # git splits lines on "\n" only
    (b"x\x0by\nz\x0c\n", ["x", "y", "z"]),
    (b"foo\\\n", ["foo\\", "foo"]),                          # a last backslash: the rule matches nothing
    (b"foo\\\\ \n", ["foo\\", "foo\\ "]),                     # an escaped backslash: the space is trimmed
    (b"build//\n", ["build/a.txt"]),                          # two slashes: nothing
    (b"a/***/b\n", ["a/b", "a/x/b", "a/x/y/b", "c"]),         # "***" is "**"
    (b"foo\r\r\n", ["foo"]),                                   # git drops one "\r" before "\n"
])
def test_ignore_files_select_what_git_selects(tmp_path, ignore, files):
    _git(tmp_path, "init", "-q")
    make(tmp_path, {name: "text\n" for name in files})
    if ignore is None:
        (tmp_path / ".git" / "info").mkdir(exist_ok=True)
        (tmp_path / ".git" / "info" / "exclude").write_text("notes.md\n")
    else:
        (tmp_path / ".gitignore").write_bytes(ignore)
    assert sorted(walk(tmp_path)[0]) == _git_keeps(tmp_path)


def test_a_symlinked_gitignore_is_not_read_as_git_does_not(tmp_path):
    _git(tmp_path, "init", "-q")
    make(tmp_path, {"shared-ignore": "*.log\n", "a.log": "x\n", "b.md": "y\n"})
    (tmp_path / ".gitignore").symlink_to("shared-ignore")
    paths, problems = walk(tmp_path)
    assert _git_keeps(tmp_path) == [".gitignore", "a.log", "b.md", "shared-ignore"]
    assert sorted(paths) == ["a.log", "b.md", "shared-ignore"]  # (the link is a second copy of shared-ignore)
    assert problems == [(".gitignore", "unreadable ignore file: a symbolic link, which git does not follow there (not read)"),
                        (".gitignore", "symlink to shared-ignore, a file indexed at its own place; not followed")]


def test_a_linked_worktree_reads_its_repositorys_excludes(tmp_path):
    repo, tree = tmp_path / "repo", tmp_path / "tree"
    repo.mkdir()
    _git(repo, "init", "-q")
    make(repo, {"docs/README.md": "r\n"})
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "i")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("notes.md\n")
    _git(repo, "worktree", "add", "-q", str(tree))
    make(tree, {"docs/notes.md": "n\n", "docs/new.md": "m\n"})
    assert _git_keeps(tree) == ["docs/new.md"]
    assert sorted(walk(tree)[0]) == ["docs/README.md", "docs/new.md"]  # (.git, a file here, is never indexed)
    assert sorted(walk(tree / "docs")[0]) == ["README.md", "new.md"]


# ------------------------------------------------------------ the user's git ignore file

@pytest.fixture
def git_home(tmp_path, monkeypatch):
    """A home folder for git and for the walk alike, with no config but what a test writes."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.mark.parametrize("setup", [
    {"home/.config/git/ignore": "*.swp\n"},                                           # git's default place
    {"home/.gitconfig": "[core]\n\texcludesFile = ~/my ignore\n", "home/my ignore": "*.swp\n"},
    {"home/.gitconfig": "[Core]\n  ExcludesFile = \"ign\\\\x\" ; why\n", "repo/ign\\x": "*.swp\n"},  # relative: to the top
    {"home/.config/git/config": "[core] excludesfile = /EXT/g\n", "ext/g": "*.swp\n",
     "home/.gitconfig": "[core \"x\"]\n\texcludesfile = /nowhere\n"},               # a subsection is not core
    {"home/.gitconfig": "[core]\n\texcludesfile = ~/a\n", "home/a": "*.md\n",
     "repo/.git/config+": "[core]\n\texcludesfile = ~/b\n", "home/b": "*.swp\n"},  # the repository's wins
    {"home/.config/git/ignore": "notes/\n*.swp\n", "repo/.git/info/exclude": "!keep.swp\n"},  # info/exclude is above it
])
def test_the_users_git_ignore_file_selects_what_git_selects(tmp_path, git_home, setup):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", home=git_home)
    make(repo, {"a.md": "a\n", "a.md.swp": "x\n", "keep.swp": "k\n", "notes/n.md": "n\n", "docs/b.swp": "x\n"})
    for rel, text in setup.items():
        path = tmp_path / rel.removesuffix("+").replace("/EXT", str(tmp_path / "ext"))
        path.parent.mkdir(parents=True, exist_ok=True)
        text = text.replace("/EXT", str(tmp_path / "ext"))
        with open(path, "a" if rel.endswith("+") else "w", encoding="utf-8") as f:
            f.write(text)
    kept = _git_keeps(repo, home=git_home)
    assert "a.md.swp" not in kept or "a.md" not in kept  # (each case leaves something out)
    assert sorted(walk(repo)[0]) == kept
    assert sorted(walk(repo / "docs")[0]) == [p.removeprefix("docs/") for p in kept if p.startswith("docs/")]


def test_xdg_config_home_moves_the_default_ignore_file(tmp_path, git_home, monkeypatch):
    repo, xdg = tmp_path / "repo", tmp_path / "xdg"
    repo.mkdir()
    _git(repo, "init", "-q", home=git_home)
    make(repo, {"a.md": "a\n", "b.log": "x\n"})
    make(xdg, {"git/ignore": "*.log\n"})
    make(git_home, {".config/git/ignore": "*.md\n"})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    assert sorted(walk(repo)[0]) == _git_keeps(repo, home=git_home, XDG_CONFIG_HOME=str(xdg)) == ["a.md"]


def test_the_users_git_ignore_file_applies_only_in_a_repository(tmp_path, git_home):
    make(git_home, {".config/git/ignore": "*.log\n"})
    make(tmp_path / "plain", {"a.md": "a\n", "b.log": "x\n"})
    assert sorted(walk(tmp_path / "plain")[0]) == ["a.md", "b.log"]


@pytest.mark.parametrize("text", [
    "[core]\n\texcludesFile = ~/x\n",
    "[core]\nexcludesfile=a b  # c\n",
    "[core]\n\texcludesfile = \"a ; b\" c ; d\n",
    "[core]\n\texcludesfile = a\\\n b\n",                     # a continued line
    "[core]\n\texcludesfile = one\n[core]\n\texcludesfile = two\n",
    "[core \"sub\"]\n\texcludesfile = no\n",
    "[core.sub]\n\texcludesfile = no\n",
    "[core]\n\texcludesfile = \"a\\tb\\\\c\"\n",
    "[user]\n\texcludesfile = no\n[core] excludesfile = same-line\n",
    "[core]\r\n\texcludesfile = crlf\r\n",
    "\ufeff[core]\n\texcludesfile = after-bom\n",
    "[core]\n\texcludesFile = \\\n    ~/.gitignore_global\n",  # (a continued line's indent is not kept)
    '[core]\n\texcludesfile = ""  x\n',
    "[core]\n\texcludesfile = a\tb  c \r\r\n",                  # (whitespace as one space each, not at the ends)
    '[core]\n\texcludesfile = "a  b"  c\n',
    "[core]\n\texcludesfile = ~/ign\x00x\n",                     # (a NUL ends it)
    "[core]\nexcludesfile\n",
])
def test_core_excludes_file_is_read_as_git_config_reads_it(tmp_path, text):
    from ragweb.gitconfig import core_excludes_file
    import subprocess
    (tmp_path / "cfg").write_bytes(text.encode("utf-8"))
    git = subprocess.run(["git", "config", "--file", str(tmp_path / "cfg"), "--get", "core.excludesFile"],
                         capture_output=True, text=True)
    expected = git.stdout.removesuffix("\n") if git.returncode == 0 else None
    assert core_excludes_file(text) == expected


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-8-sig"])
def test_a_ragignore_saved_by_windows_tools_is_read(tmp_path, encoding):
    make(tmp_path, {"a.md": "a\n", "private/s.md": "s\n", ".ragignore": "private/\r\n".encode(encoding)})
    assert walk(tmp_path) == ([".ragignore", "a.md"], [])


def test_a_utf16_gitignore_is_not_read_as_git_does_not_and_says_so(tmp_path):
    _git(tmp_path, "init", "-q")
    make(tmp_path, {"a.md": "a\n", "b.log": "x\n", ".gitignore": "*.log\r\n".encode("utf-16")})
    paths, problems = walk(tmp_path)
    assert sorted(paths) == _git_keeps(tmp_path) == [".gitignore", "a.md", "b.log"]
    assert problems == [(".gitignore", "unreadable ignore file: UTF-16 text, from which git reads no usable "
                                       "rule either (not read; save it as UTF-8)")]


@pytest.mark.parametrize("seed", range(6))
def test_alternating_ignore_rules_select_as_git_selects(tmp_path, seed):
    """Rules that alternate between leaving out and keeping (`*.x3` / `!keep3.md`), of every
    kind -- plain names, name endings, folders, wildcards -- are decided as git decides them
    (they are tested by look-ups and runs of one regex, not one rule at a time)."""
    import subprocess
    rnd = random.Random(seed)
    names = [f"{stem}{i}{ext}" for i in range(6) for stem in ("keep", "f", "note") for ext in (".md", ".x1", ".log")]
    folders = ["", "a/", "a/b/", "build/", "c/"]
    kinds = [lambda: rnd.choice(names), lambda: f"*{rnd.choice(['.md', '.x1', '.log', '1.md', 'p2.log'])}",
             lambda: rnd.choice(["build/", "b/", "a/b/", "c"]), lambda: f"{rnd.choice(['k', 'f', 'n'])}*{rnd.randrange(6)}.md",
             lambda: f"a/*{rnd.choice(['.md', '.log'])}"]
    rules = [("!" if i % 2 else "") + rnd.choice(kinds)() for i in range(60)]
    (tmp_path / ".gitignore").write_text("\n".join(rules) + "\n")
    for folder in folders:
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        for name in rnd.sample(names, 12):
            (tmp_path / folder / name).write_text("x\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    git = subprocess.run(["git", "-C", str(tmp_path), "ls-files", "--others", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout.split()
    ours = paths_of(tmp_path, includes=["**/*"], excludes=[])
    assert sorted(p for p in ours if p != ".gitignore") == sorted(p for p in git if p != ".gitignore")


def test_a_rotated_log_is_not_counted_as_a_man_page_and_every_real_man_page_is(tmp_path):
    """A run over /var/log that indexed nothing said "13 man pages, which index.includes:
    [...] takes" of its rotated logs (app.log.1, kern.log.2.gz, syslog.2.gz). A name whose
    stem ends in .log is a log, and so is a numbered name in a folder named log or logs;
    syslog.2.gz in man2/ is syslog(2)."""
    for name in ("app.log.1", "kern.log.2.gz", "Xorg.0.LOG.1", "access.log.3"):
        assert document_kind(name) is None, name
    for name in ("syslog.2.gz", "messages.1", "wtmp.1"):
        assert document_kind(name, "log") is None and document_kind(name, "Logs") is None, name
        assert document_kind(name) == document_kind(name, "man2") == "man page", name
    for name in ("open.2.gz", "Foo::Bar.3pm.gz", "openssl.1ssl", "logrotate.8.gz", "lastlog.8", "catalog.5"):
        assert document_kind(name) == "man page", name
    make(tmp_path, {"log/syslog.2.gz": "", "log/app.log.1": "", "log/apache2/access.log.1": "",
                    "kern.log.2.gz": "", "man2/syslog.2.gz": "", "logs/messages.1": ""})
    left_out = LeftOut()
    assert [e.path for e in iter_files(tmp_path, ["**/*.md"], [], True, [], left_out)] == []
    assert left_out.kinds == {"man page": 1}
    # every man page on this machine (none where there is no /usr/share/man: nothing to check)
    for folder, _, names in os.walk("/usr/share/man"):
        for name in names:
            assert document_kind(name, os.path.basename(folder)) == "man page", os.path.join(folder, name)

"""The `rag` command line, run as a user would: a subprocess on the sample corpus."""

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from ragweb.cli import build_parser

README = Path(__file__).resolve().parent.parent / "README.md"


def rag(*args, cwd=None, stdin=""):
    return subprocess.run([sys.executable, "-m", "ragweb", *map(str, args)], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120)


def make_files(root, files: dict) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.fixture
def indexed(sample_root):
    r = rag("index", sample_root)
    assert r.returncode == 0, r.stderr
    return sample_root


def test_the_cli_module_runs_as_the_package_does(indexed):
    """`python -m ragweb.cli` answers as `python -m ragweb` and `rag` do (it exited 0 having
    done nothing)."""
    r = subprocess.run([sys.executable, "-m", "ragweb.cli", "query", "-d", indexed, "-q", "retry", "-k", "1",
                        "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(rag("query", "-d", indexed, "-q", "retry", "-k", "1",
                                                  "--json").stdout)
    r = subprocess.run([sys.executable, "-m", "ragweb.cli", "query", "-d", indexed, "-q", "retry", "-k", "0"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "-k/--top-k must be at least 1" in r.stderr


def test_index_prints_a_summary(sample_root):
    r = rag("index", sample_root)
    assert r.returncode == 0
    assert "added" in r.stdout and "chunks" in r.stdout and " s" in r.stdout
    r = rag("index", "-d", sample_root)
    assert "0 added" in r.stdout and "unchanged" in r.stdout
    (sample_root / "one.md").write_text("# One\nA single chunk.\n")  # ("1 chunks written")
    assert "1 added, 0 updated, 0 removed, 8 skipped (8 unchanged); 1 chunk written" in rag("index", sample_root).stdout


def test_a_run_over_man_pages_and_info_files_says_which_globs_take_them(tmp_path):
    import gzip
    for name in ("man2/open.2.gz", "man3/printf.3.gz", "man3/Foo::Bar.3pm.gz", "info/sed.info.gz"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(gzip.compress(b".TH x 1\n.SH NAME\nx \\- a page\n"))
    r = rag("index", tmp_path)
    assert r.returncode == 0 and "0 added" in r.stdout
    assert r.stderr.strip() == (
        "note: nothing is indexed: 4 files match no index.includes glob (1 .2.gz, 1 .3.gz, 1 .3pm.gz, 1 .info.gz), "
        "1 Info file, which index.includes: [\"**/*.info*.gz\", \"**/*.info*\"] in rag.yaml takes, "
        "3 man pages, which index.includes: [\"**/*.[1-9]*.gz\", \"**/*.[1-9]*\"] in rag.yaml takes")
    (tmp_path / "rag.yaml").write_text('index:\n  includes: ["**/*.[1-9]*.gz", "**/*.info*.gz"]\n')
    r = rag("index", tmp_path)
    assert r.returncode == 0 and "4 added" in r.stdout, r.stdout + r.stderr


def test_a_run_that_indexes_nothing_says_what_was_left_out(tmp_path):
    (tmp_path / "build" / "html").mkdir(parents=True)
    (tmp_path / "build" / "html" / "index.html").write_text("<p>hello docs</p>")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("*.log\n")  # (neither is counted as a file left out)
    (tmp_path / "rag.yaml").write_text("index:\n  chunk_tokens: 300\n")
    for name in ("a.pdf", "b.pdf", "c.docx"):
        (tmp_path / name).write_bytes(b"%PDF")
    r = rag("index", tmp_path)
    assert r.returncode == 0 and "0 added" in r.stdout
    assert r.stderr.strip() == (
        "note: nothing is indexed: index.excludes left out the folder build/ (index it directly, "
        "as `rag index build`, or change index.excludes in rag.yaml); 3 files match no "
        "index.includes glob (2 .pdf, 1 .docx)")
    r = rag("query", "-q", "hello", "-d", tmp_path)
    assert r.stdout.strip() == "no results (the index is empty: `rag index` found no file to index)"
    # (a pack said only "no evidence for this question", as if the documents did not answer it)
    r = rag("pack", "-q", "hello", "-d", tmp_path, "--format", "text")
    assert r.returncode == 0 and r.stdout.startswith("warning: the packed context holds no evidence")
    assert r.stderr == "note: the index is empty: `rag index` found no file to index\n"
    # as the note says: the folder itself
    assert "1 added" in rag("index", tmp_path / "build").stdout
    # a run that indexes something says nothing of the rest
    (tmp_path / "notes.md").write_text("# Notes\nhello\n")
    r = rag("index", tmp_path)
    assert "1 added" in r.stdout and r.stderr == ""


def test_the_first_run_says_which_files_no_glob_took(tmp_path):
    """A folder's first run names, by suffix, the files the includes passed over, once: Debian's
    bash docs (COMPAT.gz, example scripts without a suffix) were left out with only "1 added"."""
    import gzip
    make_files(tmp_path, {"README.md": "# Bash\nA shell.\n", "examples/hello": "#!/bin/bash\necho hi\n"})
    (tmp_path / "COMPAT.gz").write_bytes(gzip.compress(b"compat notes\n"))
    (tmp_path / "logo.png").write_bytes(b"\x89PNG")
    r = rag("index", tmp_path)
    assert r.returncode == 0 and "1 added" in r.stdout
    assert r.stderr.strip() == (
        "note: not indexed: 3 files match no index.includes glob (1 (no suffix), 1 .gz, 1 .png); add globs to "
        "index.includes in rag.yaml to index such files (a list there replaces the default one, which "
        "`rag config` shows)")
    r = rag("index", tmp_path)  # (said once: the folder's later runs are quiet)
    assert r.returncode == 0 and r.stderr == ""


def test_query_text_output_cites_ranges(indexed):
    r = rag("query", "-q", "retry backoff", "-d", indexed, "-k", "3")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    assert first.startswith("1. ") and ":L" in first and "score" in first


def test_query_text_shows_a_files_escape_sequences_and_json_keeps_them(tmp_path):
    (tmp_path / "notes.md").write_text("# Retry\nretry \x1b[2J\x1b[8mconcealed\x1b[0m backoff\x07\n")
    assert rag("index", tmp_path).returncode == 0
    r = rag("query", "-q", "retry backoff", "-d", tmp_path)
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    assert "retry \u241b[2J\u241b[8mconcealed\u241b[0m backoff\u2407" in r.stdout
    r = rag("query", "-q", "retry backoff", "-d", tmp_path, "--json")
    assert json.loads(r.stdout)["results"][0]["text"].endswith("\x1b[8mconcealed\x1b[0m backoff\x07")


def test_query_json_shape(indexed):
    r = rag("query", "-q", "parse headers", "-d", indexed, "--json")
    data = json.loads(r.stdout)
    assert data["query"] == "parse headers" and data["results"]
    hit = data["results"][0]
    assert {"path", "startLine", "endLine", "score", "text"} <= hit.keys()
    lines = (indexed / hit["path"]).read_text().split("\n")
    assert hit["text"] == "\n".join(lines[hit["startLine"] - 1:hit["endLine"]])


def test_query_context_widens(indexed):
    plain = json.loads(rag("query", "-q", "retry", "-d", indexed, "--json", "-k", "1").stdout)["results"][0]
    wide = json.loads(rag("query", "-q", "retry", "-d", indexed, "--json", "-k", "1", "-c", "2").stdout)["results"][0]
    assert wide["startLine"] == max(1, plain["startLine"] - 2)
    assert wide["endLine"] >= plain["endLine"]


def test_query_path_filter_and_no_mmr(indexed):
    data = json.loads(rag("query", "-q", "headers", "-d", indexed, "--json", "--path", "docs/**",
                          "--no-mmr").stdout)
    assert data["results"] and all(h["path"].startswith("docs/") for h in data["results"])


def test_a_path_glob_that_can_match_no_file_is_an_error(indexed):
    for cmd in ("query", "pack"):
        r = rag(cmd, "-q", "retry", "-d", indexed, "--path", "docs/[ab")
        assert r.returncode == 2 and not r.stdout
        assert r.stderr.strip() == ("Error: the path glob docs/[ab can match no file: it has a '[' that "
                                    "no ']' closes (write '\\[' for the character itself)")


def test_a_path_in_a_message_is_shown_as_typed_not_as_a_python_repr(indexed):
    """`--path 'docs\\guide.md'` was named 'docs\\\\guide.md' (Python's repr: its backslash
    doubled), and a glob with a space or a quote was named in quotes a shell does not read
    back as the same glob when it also held a backslash."""
    for given, shown in (("docs\\guide.md", "docs\\guide.md"), ("it's/*.md", "\"it's/*.md\""),
                         ("my docs\\*.md", "'my docs\\*.md'"), ("a\x1bb", "'a\\x1bb'")):
        r = rag("query", "-q", "retry", "-d", indexed, "--path", given)
        assert r.returncode == 2 and r.stdout == ""
        assert r.stderr.startswith((f"Error: --path {shown} matches no indexed file: ",
                                    f"Error: the path glob {shown} can match no file: ")), (given, r.stderr)


def test_query_without_results_says_why(indexed):
    r = rag("query", "-q", "quantum chromodynamics", "-d", indexed)
    assert r.returncode == 0 and r.stdout.strip() == "no results (no indexed file has these words)"
    r = rag("query", "-q", "quantum chromodynamics", "-d", indexed, "--path", "docs/**")
    assert r.stdout.strip() == "no results (no indexed file matching --path docs/** has these words)"
    (indexed / "rag.yaml").write_text("retrieve:\n  min_score_threshold: 1000\n")
    r = rag("query", "-q", "retry", "-d", indexed)
    assert r.stdout.strip() == "no results (no indexed file scores retrieve.min_score_threshold (1000.0) or more)"


def test_query_batch(indexed, tmp_path):
    batch = tmp_path / "q.txt"
    batch.write_text('retry backoff\n{"id": "x1", "question": "parse headers"}\n\nthe of\n')
    r = rag("query", "--batch", batch, "-d", indexed)
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["id"] for row in rows] == [1, "x1", 4]
    assert rows[0]["results"] and "error" in rows[2]
    assert "holds no questions" not in r.stderr
    # a file of blank lines is no error, but it is said
    batch.write_text("\n  \n")
    r = rag("query", "--batch", batch, "-d", indexed)
    assert r.returncode == 0 and r.stdout == "" and f"note: {batch} holds no questions" in r.stderr
    r = rag("pack", "--batch", "-", "-d", indexed, stdin="")
    assert r.returncode == 0 and r.stdout == "" and "note: standard input holds no questions" in r.stderr


@pytest.mark.parametrize("rebuild", [[], ["--rebuild"]])
@pytest.mark.parametrize("cmd", ["query", "pack"])
def test_a_batch_answers_from_the_index_another_run_committed_meanwhile(tmp_path, cmd, rebuild):
    # questions come on stdin as they are asked; between two of them `rag index` updates a file
    (tmp_path / "a.md").write_text("# Alpha\n\nThe zebra grazes near the okapi.\n")
    (tmp_path / "c.md").write_text("# Gamma\n\nfirst line\nsecond line\nThe okapi hides in the forest.\nfourth line\n")
    assert rag("index", tmp_path).returncode == 0
    args = [sys.executable, "-m", "ragweb", cmd, "-d", tmp_path, "--batch", "-", "--no-auto-index"]
    if cmd == "pack":
        args += ["-b", "40", "--no-compact"]
    batch = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        batch.stdin.write("okapi zebra\n")
        batch.stdin.flush()
        json.loads(batch.stdout.readline())
        (tmp_path / "c.md").write_text("# Gamma changed\n\nThe okapi is kin to the giraffe, not the zebra.\nA second line.\n")
        os.utime(tmp_path / "c.md", (2_000_000_000, 2_000_000_000))
        assert "1 updated" in rag("index", tmp_path, *rebuild).stdout or rebuild  # (--rebuild: a new file in its place)
        batch.stdin.write("okapi zebra\n")
        batch.stdin.flush()
        after = json.loads(batch.stdout.readline())
    finally:
        batch.stdin.close()
        batch.wait(timeout=60)
    fresh = json.loads(rag(*args[3:], stdin="okapi zebra\n").stdout)
    assert {**after, "id": 1} == fresh
    key = "results" if cmd == "query" else "snippets"
    assert any("kin to the giraffe" in r["text"] for r in after[key])


@pytest.mark.parametrize("cmd", ["query", "pack"])
def test_a_bad_batch_file_stops_before_any_answer_and_output_is_kept(indexed, tmp_path, cmd):
    tmp_path = tmp_path / "work"
    tmp_path.mkdir()
    batch = tmp_path / "q.jsonl"
    batch.write_text('retry backoff\n{"id": "c"}\nparse headers\n')
    out = tmp_path / "out.jsonl"
    out.write_text("PREVIOUS\n")
    extra = ["-o", out] if cmd == "pack" else []
    r = rag(cmd, "--batch", batch, "-d", indexed, *extra)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == f'Error: {batch} line 2: a JSON line needs a "question" string'
    assert out.read_text() == "PREVIOUS\n" and sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "q.jsonl"]
    r = rag(cmd, "--batch", tmp_path / "missing.txt", "-d", indexed)
    assert r.returncode == 2 and f"--batch {tmp_path / 'missing.txt'}: no such file" in r.stderr


def test_pack_output_onto_an_indexed_document_is_refused_and_the_document_kept(tmp_path):
    """`rag pack -q ... -o README.md` (a slip of tab completion) replaced the README with the
    pack, silently, and listed it as a pack output, so the next `rag index` dropped it;
    `-o rag.yaml` replaced the config."""
    root = _tree(tmp_path / "docs", {"README.md": "# Retry\nretry backoff doubles\n", "guide.md": "retry guide\n"})
    assert rag("index", root).returncode == 0
    (tmp_path / "link.md").symlink_to(root / "guide.md")
    for output, rel in ((root / "README.md", "README.md"), (tmp_path / "link.md", "guide.md")):
        r = rag("pack", "-d", root, "-q", "retry backoff", "-o", output)
        assert (r.returncode, r.stdout) == (2, "") and r.stderr == (
            f"Error: -o {output} is {rel}, a document the index of {root} holds: the pack would replace it; "
            "write the pack to another file\n"), r.stderr
    assert (root / "README.md").read_text() == "# Retry\nretry backoff doubles\n"
    assert (root / "guide.md").read_text() == "retry guide\n"
    assert not (root / ".rag" / "outputs").exists()
    (root / "rag.yaml").write_text("pack:\n  token_budget: 300\n")  # (the config: lost too)
    r = rag("pack", "-d", root, "-q", "retry backoff", "-o", root / "rag.yaml")
    assert r.returncode == 2 and r.stderr == (f"Error: -o {root / 'rag.yaml'} is the config file {root / 'rag.yaml'}: "
                                              "the pack would replace it; write the pack to another file\n"), r.stderr
    assert (root / "rag.yaml").read_text() == "pack:\n  token_budget: 300\n"
    r = rag("pack", "-d", root, "-q", "retry backoff", "-o", root / "ctx.json")  # (a pack's own file: not indexed)
    assert r.returncode == 0 and rag("pack", "-d", root, "-q", "retry", "-o", root / "ctx.json").returncode == 0


def test_pack_output_is_replaced_only_by_a_whole_result(indexed, tmp_path):
    tmp_path = tmp_path / "work"
    tmp_path.mkdir()
    out = tmp_path / "ctx.json"
    assert rag("pack", "-q", "retry backoff", "-d", indexed, "-b", "300", "-o", out).returncode == 0
    first = json.loads(out.read_text())
    assert first["snippets"]
    # a failing run (a question with no indexable words) leaves the previous file
    r = rag("pack", "-q", "the of", "-d", indexed, "-o", out)
    assert r.returncode == 2 and json.loads(out.read_text()) == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx.json"]
    # a folder where the file should go: said plainly, and no temporary file is left
    (tmp_path / "folder").mkdir()
    r = rag("pack", "-q", "retry backoff", "-d", indexed, "-o", tmp_path / "folder")
    assert r.returncode == 1 and f"cannot write {tmp_path / 'folder'}: Is a directory" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx.json", "folder"]


@pytest.mark.parametrize("cmd, out", [("query", ["--json"]), ("pack", ["-b", "300"])])
def test_the_question_can_be_plain_words(indexed, cmd, out):
    flag = rag(cmd, "-q", "retry backoff", "-d", indexed, *out)
    words = rag(cmd, "retry", "backoff", "-d", indexed, *out)
    assert flag.returncode == words.returncode == 0, words.stderr
    assert json.loads(words.stdout) == json.loads(flag.stdout)


@pytest.mark.parametrize("cmd", ["query", "pack"])
def test_the_question_is_given_exactly_once(indexed, tmp_path, cmd):
    batch = tmp_path / "q.txt"
    batch.write_text("retry\n")
    for args, says in ((["-q", "retry", "backoff"], "once"), (["retry", "--batch", batch], "not both"),
                       (["-q", "retry", "--batch", batch], "not both"), ([], "needs a question")):
        r = rag(cmd, *args, "-d", indexed)
        assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


@pytest.mark.parametrize("cmd", ["query", "pack"])
@pytest.mark.parametrize("question", [["-q", ""], [""], ["--query="]])
def test_an_empty_question_is_named_empty(tmp_path, monkeypatch, capsys, cmd, question):
    """`rag pack -q "$Q"` with $Q not set said only "needs a question", as if none were given."""
    from ragweb.cli import main
    monkeypatch.chdir(tmp_path)
    assert main([cmd, *question]) == 2
    err = capsys.readouterr().err
    assert "needs a question" in err and "is empty" in err, err


@pytest.mark.parametrize("cmd", ["query", "pack"])
@pytest.mark.parametrize("question", [["-q", ""], [""], ["--query="]])
def test_an_empty_question_with_batch_is_refused_not_ignored(tmp_path, monkeypatch, capsys, cmd, question):
    """`rag pack --batch F -q ""` (`-q "$Q"` with $Q not set) quietly asked the file's questions,
    as if no -q were given, where `-q retry` with --batch is refused."""
    from ragweb.cli import main
    monkeypatch.chdir(tmp_path)
    (tmp_path / "q.txt").write_text("retry\n")
    assert main([cmd, "--batch", "q.txt", *question]) == 2
    assert capsys.readouterr().err == (f"Error: rag {cmd}: give either a question or --batch FILE, not both "
                                       "(an empty question, '', was given too)\n")


def test_a_batch_skips_comment_lines_but_asks_a_question_that_starts_with_a_hash(tmp_path, monkeypatch, capsys):
    """A `# comment` line of a questions file was asked as a question; "#include not found"
    (no space after the #) is still one, and a comment's line still counts for the ids."""
    from ragweb.cli import main
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("# Build\n\nThe include path is not found when the compiler is old.\n")
    assert main(["index", "--quiet"]) == 0
    (tmp_path / "q.txt").write_text("# questions about the build\n#\ninclude path\n  # indented\n#include not found\n")
    capsys.readouterr()
    assert main(["query", "--batch", "q.txt", "-k", "1"]) == 0
    out = capsys.readouterr()
    answers = [json.loads(line) for line in out.out.splitlines()]
    assert [(a["id"], a["query"], len(a["results"])) for a in answers] == [(3, "include path", 1),
                                                                         (5, "#include not found", 1)]
    assert out.err.count("note: q.txt line 1 is a comment") == 1, out.err


def test_no_index_fails_clearly(sample_root):
    r = rag("query", "-q", "retry", "-d", sample_root, "--no-auto-index")
    assert r.returncode == 1 and "no index" in r.stderr and "rag index" in r.stderr
    r = rag("query", "-q", "retry", "-d", sample_root)  # stdin is not a terminal: never prompt
    assert r.returncode == 1 and "no index" in r.stderr and "Traceback" not in r.stderr


def test_no_index_here_names_the_folders_below_that_have_one(indexed):
    parent = indexed.parent
    r = rag("query", "-q", "retry backoff", "--no-auto-index", cwd=parent)
    assert r.returncode == 1 and f"add `-d {indexed.name}` to use the index in {indexed.name}" in r.stderr
    r = rag("query", "-d", indexed.name, "-q", "retry backoff", "-k", "1", cwd=parent)  # as it says
    assert r.returncode == 0 and "retry" in r.stdout.lower(), r.stderr
    (parent / "other docs").mkdir()
    assert rag("index", parent / "other docs").returncode == 0
    r = rag("pack", "-q", "retry backoff", cwd=parent)
    assert r.returncode == 1 and "`-d DIR`" in r.stderr and "'other docs'" in r.stderr, r.stderr
    empty = parent / "empty"
    empty.mkdir()
    r = rag("query", "-q", "retry backoff", cwd=empty)
    assert r.returncode == 1 and r.stderr.strip().endswith("run `rag index .` first"), r.stderr


def test_changed_files_are_reported(indexed):
    (indexed / "README.md").write_text("# new\n\nretry everything\n")
    r = rag("query", "-q", "retry", "-d", indexed)
    assert r.returncode == 0 and "changed since the last index" in r.stderr


def test_index_notes_symlinked_folders_it_did_not_follow_once_and_warns_of_real_problems(tmp_path):
    """Debian's /usr/share/doc links dozens of folders to others (gcc-12 -> gcc-12-base): each
    is indexed once, which is no problem to warn of; a broken link still is."""
    import os

    root = tmp_path / "doc"
    for name in ("base", "other"):
        (root / name).mkdir(parents=True)
        (root / name / "README.md").write_text(f"# {name}\nSome notes.\n")
    for i in range(5):
        os.symlink(root / "base", root / f"alias{i}")
    os.symlink(root / "missing.md", root / "broken.md")
    r = rag("index", root)
    assert r.returncode == 0
    assert r.stderr.count("warning:") == 1 and "warning: broken.md: unreadable: broken symlink" in r.stderr
    assert ("note: 5 symlinks not followed, being a loop or a second way to what is indexed: "
            "alias0, alias1, alias2 ...") in r.stderr
    assert "0 skipped, 1 unreadable, 5 symlinks not followed;" in r.stdout and "2 added" in r.stdout
    # a link to a folder the config leaves out: its files are not indexed anywhere, and it says so
    (root / "build" / "html").mkdir(parents=True)
    (root / "build" / "html" / "guide.md").write_text("# Guide\nGenerated.\n")
    os.symlink(root / "build" / "html", root / "site")
    r = rag("index", root)
    assert ("note: site: symlink to build/html, a folder inside the tree that nothing is indexed from (excluded, "
            "ignored, or no file the includes take), so the link is not followed and its files are not indexed"
            ) in r.stderr
    assert "a second way to what is indexed: alias0, alias1, alias2 ..." in r.stderr and "site ..." not in r.stderr
    # a link to a file: the file is indexed once, at its own place; a link to a file left out
    # is said, as the folder's is (the file linked to was indexed twice, once by each name)
    os.symlink(root / "other" / "README.md", root / "OTHER.md")
    os.symlink(root / "build" / "html" / "guide.md", root / "guide.md")
    r = rag("index", root)
    assert r.returncode == 0 and "0 added" in r.stdout, r.stdout
    assert "note: guide.md: symlink to build/html/guide.md, a file inside the tree that is not indexed (excluded, " \
           "ignored, or no include takes it), so the link is not followed\n" in r.stderr, r.stderr
    assert "note: 6 symlinks not followed" in r.stderr and "OTHER.md" in r.stderr


def test_index_names_the_files_too_large_to_index_and_the_key_that_allows_them(tmp_path):
    (tmp_path / "rag.yaml").write_text("index:\n  max_file_bytes: 1000\n")
    (tmp_path / "small.md").write_text("# Small\nA short page.\n")
    for name in ("all.html", "big.md", "huge.txt", "more.md"):
        (tmp_path / name).write_text("words " * 400)
    r = rag("index", tmp_path)
    assert r.returncode == 0 and "(4 too large)" in r.stdout
    assert ("note: 4 files were larger than index.max_file_bytes (1000 bytes) and left out: "
            "all.html, big.md, huge.txt ...; raise it in rag.yaml to index them") in r.stderr
    (tmp_path / "rag.yaml").write_text("index:\n  max_file_bytes: 10000\n")
    r = rag("index", tmp_path)
    assert "4 added" in r.stdout and "note:" not in r.stderr


def test_gzip_compressed_docs_are_indexed_and_cited_by_their_lines(tmp_path):
    import gzip
    gz, plain = tmp_path / "gz", tmp_path / "plain"
    gz.mkdir()
    text = ("# Tuning\n\nIntro words.\n\n## Flow control\n\nThe paint dries in an hour on most walls of the old house. "
            "Set the window to 64 kB for a slow uplink. Other filler about colours of paint and brushes follows here.\n")
    (gz / "tuning.md.gz").write_bytes(gzip.compress(text.encode()))  # as Debian ships docs
    (gz / "broken.md.gz").write_bytes(b"# not gzip\n")
    r = rag("index", gz)
    assert r.returncode == 0 and "1 added" in r.stdout, r.stdout + r.stderr
    assert "broken.md.gz: damaged: not gzip data" in r.stderr
    r = rag("pack", "-q", "what window for a slow uplink", "-d", gz, "-b", "200")
    snippet = json.loads(r.stdout)["snippets"][0]
    lines = text.splitlines()
    first, last = snippet["range"][1:].partition("-")[::2]
    first, last = int(first), int(last or first)
    assert snippet["path"] == "tuning.md.gz" and "64 kB" in snippet["text"]
    assert "\n".join(lines[first - 1:last]).startswith(snippet["text"])  # the uncompressed text's lines
    plain.mkdir()  # read as the Markdown file it compresses: the same pack
    (plain / "tuning.md").write_text(text)
    rag("index", plain)
    question = ["-q", "flow control window", "-b", "30"]  # (prose: one sentence of the line)
    packs = [json.loads(rag("pack", *question, "-d", d).stdout)["snippets"] for d in (gz, plain)]
    assert [dict(s, path="") for s in packs[0]] == [dict(s, path="") for s in packs[1]]


def test_pack_json_within_budget(indexed):
    r = rag("pack", "-q", "how does retry backoff work", "-d", indexed, "-b", "300")
    data = json.loads(r.stdout)
    assert {"query", "budget_tokens", "used_tokens", "snippets"} <= data.keys()
    assert data["budget_tokens"] == 300 and 0 < data["used_tokens"] <= 300
    s = data["snippets"][0]
    assert {"path", "range", "why", "text"} <= s.keys() and s["range"].startswith("L")


@pytest.mark.parametrize("fmt", ["markdown", "xml", "text"])
def test_pack_formats_have_citations_and_a_token_line(indexed, fmt, tmp_path):
    out = tmp_path / "ctx.txt"
    r = rag("pack", "-q", "retry backoff", "-d", indexed, "-b", "400", "--format", fmt, "-o", out)
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert "[" in text and ":L" in text
    if fmt == "xml":  # one well-formed document, its token line an element
        assert ElementTree.fromstring(text).find("tokens").text.endswith("/400 tokens")
    else:
        assert text.strip().splitlines()[-1].endswith("/400 tokens")


def test_pack_into_a_file_says_what_it_wrote_and_warns_on_stderr(indexed, tmp_path):
    out = tmp_path / "ctx.json"
    r = rag("pack", "-q", "how does retry backoff work", "-d", indexed, "-b", "300", "-o", out)
    packed = json.loads(out.read_text())
    n, used = len(packed["snippets"]), packed["used_tokens"]
    assert r.returncode == 0 and r.stdout == "" and packed["evidence"] == "sufficient"
    assert r.stderr.splitlines()[-1].startswith(f"wrote {out}: {n} snippets from ")
    assert f", {used}/300 tokens, evidence sufficient" in r.stderr and "warning" not in r.stderr
    # JSON in a file shows its evidence level to nobody: the warning goes to the terminal
    r = rag("pack", "-q", "airspeed of an unladen swallow", "-d", indexed, "-o", out)
    assert r.returncode == 0 and json.loads(out.read_text())["evidence"] == "none"
    assert r.stderr.splitlines()[-1] == "warning: the packed context holds no evidence for this question"
    batch = tmp_path / "q.txt"
    batch.write_text("retry backoff\nthe of\nairspeed of an unladen swallow\n")
    r = rag("pack", "--batch", batch, "-d", indexed, "-o", tmp_path / "b.jsonl")
    assert r.returncode == 0 and len((tmp_path / "b.jsonl").read_text().splitlines()) == 3
    assert r.stderr.splitlines()[-1] == f"wrote 3 packs to {tmp_path / 'b.jsonl'} (1 with weak or no evidence, 1 with an error)"


def test_pack_bad_budget_is_a_usage_error(indexed):
    r = rag("pack", "-q", "retry", "-d", indexed, "-b", "0")
    assert r.returncode == 2 and "budget" in r.stderr


def test_pack_output_named_like_a_format_is_a_usage_error(indexed, tmp_path):
    """`-o text` reads as the config's `pack.output: text`; nothing is written, the message
    names --format, and ./text still writes a file of that name."""
    work = tmp_path / "work"
    work.mkdir()
    r = rag("pack", "-q", "retry", "-d", indexed, "-o", "text", cwd=work)
    assert r.returncode == 2 and "--format text" in r.stderr and "./text" in r.stderr
    assert list(work.iterdir()) == []
    r = rag("pack", "-q", "retry", "-d", indexed, "-o", "./text", "--format", "text", cwd=work)
    assert r.returncode == 0 and (work / "text").read_text().startswith("[")


def test_empty_question_is_a_usage_error(indexed):
    r = rag("query", "-q", "the of and", "-d", indexed)
    assert r.returncode == 2 and "no indexable words" in r.stderr


def test_runprompt(indexed, tmp_path):
    ctx = tmp_path / "ctx.json"
    assert rag("pack", "-q", "retry backoff", "-d", indexed, "-o", ctx).returncode == 0
    r = rag("runprompt", "--runtime", "--ctx", ctx)
    assert r.returncode == 0 and "retry backoff" in r.stdout and "[" in r.stdout and "cite" in r.stdout.lower()
    r = rag("runprompt", "--builder", "--ctx", ctx, "-q", "other question")
    assert "other question" in r.stdout and "Gaps" in r.stdout
    assert rag("runprompt", "--ctx", ctx).returncode == 2
    assert rag("runprompt", "--runtime", "--builder", "--ctx", ctx).returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    r = rag("runprompt", "--runtime", "--ctx", bad)
    assert r.returncode == 1 and "not packed-context JSON" in r.stderr


def test_malformed_config_names_key_and_line(sample_root):
    (sample_root / "rag.yaml").write_text("index:\n  chunk_tokens: 512\n  chunk_tokenz: 3\n")
    r = rag("index", sample_root)
    assert r.returncode == 1 and "chunk_tokenz" in r.stderr and "line 3" in r.stderr
    assert "Traceback" not in r.stderr


def test_config_prints_effective_config(sample_root):
    (sample_root / "rag.yaml").write_text("retrieve:\n  top_k: 7\n")
    r = rag("config", "-d", sample_root)
    assert r.returncode == 0 and "top_k: 7" in r.stdout and "chunk_tokens: 512" in r.stdout


def test_corrupt_index_message(indexed):
    db = indexed / ".rag" / "index.db"
    for extra in ("index.db-wal", "index.db-shm"):
        (indexed / ".rag" / extra).unlink(missing_ok=True)
    db.write_bytes(b"\x00" * 4096)
    r = rag("query", "-q", "retry", "-d", indexed)
    assert r.returncode == 1 and "--rebuild" in r.stderr and "Traceback" not in r.stderr
    assert rag("index", "--rebuild", indexed).returncode == 0
    assert rag("query", "-q", "retry", "-d", indexed).returncode == 0


def _overwrite_root_page(db: Path, table: str) -> None:
    """Garbage in place of ``table``'s first page of the SQLite file at ``db``."""
    import sqlite3
    conn = sqlite3.connect(db)
    (page,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    (size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with open(db, "r+b") as f:
        f.seek((page - 1) * size)
        f.write(b"\xa5\x5a" * (size // 2))


@pytest.mark.parametrize("damage", ["a postings page", "the meta rows"])
def test_a_plain_index_run_on_a_damaged_index_fails_as_a_query_does(indexed, damage):
    """A run that changes nothing reads no postings: on an index with a page of garbage in
    them it said "0 chunks written, 21 in index" and exited 0, and the next `rag query` said
    the index is damaged. One whose meta rows were lost (its counts, its analysis settings)
    said "0 in index", exit 0, and every question found nothing."""
    import sqlite3
    db = indexed / ".rag" / "index.db"
    if damage == "a postings page":
        _overwrite_root_page(db, "postings")
    else:
        conn = sqlite3.connect(db)
        with conn:
            conn.execute("DELETE FROM meta")
        conn.close()
    for args in (("index", indexed), ("query", "-q", "retry", "-d", indexed)):
        r = rag(*args)
        assert r.returncode == 1 and r.stdout == "", (args, r.stdout)
        # (the index and the rebuild name the folder: `rag index --rebuild` alone, run where the
        # query was, rebuilt the current folder's index, not this one)
        assert re.fullmatch(rf"Error: (the index )?{re.escape(str(indexed))}/\.rag/index\.db is damaged \(.+\); "
                            rf"rebuild it with `rag index --rebuild {re.escape(str(indexed))}`\n", r.stderr), (args, r.stderr)
    assert rag("index", "--rebuild", indexed).returncode == 0
    assert rag("query", "-q", "retry", "-d", indexed).returncode == 0


def test_usage_errors_exit_2():
    assert rag().returncode == 2
    assert rag("query").returncode == 2
    assert rag("nosuchcommand").returncode == 2


def test_an_unknown_flag_shows_the_usage_of_its_command(indexed):
    """`rag query --format json` (a flag of rag pack's) answered with rag's own usage line,
    `rag [-h] [--version] COMMAND ...`, which lists none of rag query's flags."""
    r = rag("query", "-q", "retry", "-d", indexed, "--format", "json")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("usage: rag query ") and "--json" in r.stderr, r.stderr
    assert "rag query: error: unrecognized arguments: --format" in r.stderr, r.stderr
    assert "rag query prints JSON with --json" in r.stderr, r.stderr
    r = rag("pack", "-q", "retry", "-d", indexed, "--json")  # (rag query's flag)
    assert r.returncode == 2 and r.stdout == "" and r.stderr.startswith("usage: rag pack ")
    assert r.stderr.endswith("rag pack: error: unrecognized arguments: --json; rag pack writes JSON "
                             "unless pack.output says otherwise: --format json\n"), r.stderr
    r = rag("index", indexed, "--bogus")
    assert r.returncode == 2 and r.stderr.startswith("usage: rag index ")
    assert "rag index: error: unrecognized arguments: --bogus" in r.stderr and "--json" not in r.stderr
    r = rag("index", indexed, "--path", "docs/**")  # (a flag of query's and pack's)
    assert r.returncode == 2 and r.stderr.endswith(
        "rag index: error: unrecognized arguments: --path docs/**; rag index indexes the whole folder (index.includes "
        "and index.excludes in rag.yaml choose its files); --path narrows what rag query and rag pack search\n"), r.stderr


def test_a_question_in_plain_words_with_a_flag_like_word_is_told_how_to_ask(indexed):
    """`rag query what does -g do` said only "unrecognized arguments: -g do"."""
    r = rag("query", "-d", indexed, "what", "does", "-g", "do")
    assert r.returncode == 2 and r.stderr.endswith(
        "rag query: error: unrecognized arguments: -g do; if -g is a word of the question, write the question "
        "after -- (rag query -- what does -g do) or as -q='what does -g do'\n"), r.stderr
    for args in (("--", "what", "does", "-g", "do"), ("-q=what does -g do",)):
        r = rag("query", "-d", indexed, "--json", *args)
        assert r.returncode == 0 and json.loads(r.stdout)["query"] == "what does -g do", (args, r.stderr)
    r = rag("pack", "-d", indexed, "retry", "--jsn")  # (a mistyped flag: the same advice, said as an if)
    assert r.returncode == 2 and "unrecognized arguments: --jsn; if --jsn is a word of the question" in r.stderr


def test_a_question_that_looks_like_a_flag_is_told_how_to_ask(indexed):
    """`rag query -q "-g"` (asking about the -g flag) said only "argument -q/--query: expected
    one argument"; the error says how to ask it, and the ways it names work."""
    r = rag("query", "-d", indexed, "-q", "-g")
    assert r.returncode == 2 and r.stderr.endswith(
        "rag query: error: argument -q/--query: expected one argument (a question), and -g is read as a flag; "
        "to ask about -g, write -q=-g (or rag query -- -g)\n"), r.stderr
    for args in (("-q=-g",), ("--query=-g",), ("--", "-g")):
        r = rag("query", "-d", indexed, "--json", *args)
        assert r.returncode == 0 and json.loads(r.stdout)["query"] == "-g", (args, r.stderr)
    r = rag("query", "-d", indexed, "-q", "-k", "3")  # (a flag after -q is still no question)
    assert r.returncode == 2 and "and -k is read as a flag; to ask about -k, write -q=-k" in r.stderr, r.stderr
    r = rag("pack", "-d", indexed, "--query", "--verbose")
    assert r.returncode == 2 and r.stderr.endswith(
        "and --verbose is read as a flag; to ask about --verbose, write --query=--verbose "
        "(or rag pack -- --verbose)\n"), r.stderr
    packed = rag("pack", "-d", indexed, "-q", "retry")
    r = rag("runprompt", "--runtime", "--ctx", "-", "-q", "-g", stdin=packed.stdout)
    assert r.returncode == 2 and r.stderr.endswith("to ask about -g, write -q=-g (or rag runprompt -- -g)\n"), r.stderr
    r = rag("runprompt", "--runtime", "--ctx", "-", "-q=-g", stdin=packed.stdout)
    assert r.returncode == 0 and "-g" in r.stdout, r.stderr
    assert rag("query", "-d", indexed, "-q").stderr.endswith("argument -q/--query: expected one argument\n")


def test_a_folder_that_is_not_there_is_named_so(tmp_path):
    """`rag index dosc` (a typo) said "not a directory: dosc", as if it were something else."""
    for args in (("index", tmp_path / "dosc"), ("query", "-q", "retry", "-d", tmp_path / "dosc"),
                 ("config", "-d", tmp_path / "dosc")):
        r = rag(*args)
        assert r.returncode == 2 and r.stderr == f"Error: no such folder: {tmp_path / 'dosc'}\n", (args, r.stderr)


def test_a_folder_or_file_not_there_whose_name_the_shell_did_not_expand_says_so(tmp_path):
    """`rag index "~/docs"` (a ~ in quotes, which the shell leaves as written) said only "no
    such folder: ~/docs", as did '$HOME/docs' and "docs " (a blank at its end, unseen)."""
    for args, said in ((("index", "~/docs"), "no such folder: ~/docs (a ~ is the home folder only where the shell "
                                             "expands it, not in quotes: write $HOME instead)"),
                       (("query", "-q", "retry", "-d", "$HOME/docs"), "no such folder: $HOME/docs (the shell did not "
                                                                       "expand $HOME: in single quotes it stays as written)"),
                       (("index", "docs "), "no such folder: 'docs ' (it begins or ends with a blank)"),
                       (("query", "--batch", "${QS}.txt"), "--batch ${QS}.txt: no such file (the shell did not expand "
                                                           "${QS}: in single quotes it stays as written); name a file of "
                                                           "questions, one a line, or - for standard input")):
        r = rag(*args, cwd=tmp_path)
        assert (r.returncode, r.stderr) == (2, f"Error: {said}\n"), r.stderr


def test_an_index_folder_given_as_the_folder_names_the_folder_it_indexes(indexed):
    """`rag index .rag` indexed rag's own folder, making .rag/.rag/index.db, and `rag query -d
    docs/.rag` said "no index at docs/.rag/.rag/index.db; run `rag index docs/.rag` first"."""
    for args, flag in ((("index", ".rag"), "rag index"), (("index", ".rag/"), "rag index"),
                       (("query", "-q", "retry", "-d", ".rag"), "-d"), (("pack", "retry", "-d", ".rag"), "-d")):
        r = rag(*args, cwd=indexed)
        assert (r.returncode, r.stderr) == (2, f"Error: .rag is where rag keeps the index of ., not a folder of "
                                               f"documents: name . ({flag} .)\n"), r.stderr
    r = rag("index", cwd=indexed / ".rag")
    assert r.stderr == (f"Error: {indexed / '.rag'} is where rag keeps the index of {indexed}, not a folder of "
                        f"documents: name {indexed} (rag index {indexed})\n"), r.stderr
    assert not (indexed / ".rag" / ".rag").exists()
    r = rag("query", "-q", "retry", "-k", "1", cwd=indexed / ".rag")  # (the index above is used, as from any folder)
    assert r.returncode == 0 and r.stderr == f"note: using the index of {indexed}\n", r.stderr


def test_a_file_given_as_the_folder_names_its_folder_and_path(tmp_path):
    """`rag index notes.md` (to index one file) said only "not a directory: notes.md"."""
    (tmp_path / "notes.md").write_text("# Notes\n")
    for args in (("index", "notes.md"), ("query", "-q", "notes", "-d", "notes.md"), ("pack", "notes", "-d", "notes.md")):
        r = rag(*args, cwd=tmp_path)
        assert r.returncode == 2 and r.stderr == ("Error: not a directory: notes.md (a file; rag indexes folders: the "
                                                  "one it is in is ., and with that folder --path notes.md asks `rag "
                                                  "query` or `rag pack` about this file alone)\n"), r.stderr
    r = rag("index", tmp_path / "notes.md")
    assert r.returncode == 2 and f"the one it is in is {tmp_path}, " in r.stderr, r.stderr
    os.mkfifo(tmp_path / "pipe")
    assert rag("index", tmp_path / "pipe").stderr == f"Error: not a directory: {tmp_path / 'pipe'}\n"


def test_every_command_and_flag_has_help_and_is_in_the_readme():
    parser = build_parser()
    readme = README.read_text()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        assert f"rag {name}" in readme, f"`rag {name}` is not documented in README.md"
        for action in p._actions:
            if action.help == "==SUPPRESS==" or not action.option_strings:
                continue
            assert action.help, f"rag {name} {action.option_strings} has no help text"
            assert any(opt in readme for opt in action.option_strings), \
                f"rag {name} {action.option_strings} is not in README.md"


def test_each_commands_help_shows_its_own_name_in_examples():
    # (`rag pack --help` showed "instead of -q (rag query how does retry work)")
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sub.choices.items():
        for action in p._actions:
            for other in set(sub.choices) - {name}:
                assert f"rag {other} " not in (action.help or ""), (name, action.dest)


def test_each_commands_help_says_what_its_own_flags_do_there():
    """`rag index --help` said of -d "query and pack: the nearest folder at or above it that
    has an index", which only those two do; `rag query -k` was "number of results (query) or
    candidate pool (pack)"."""
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    helps = {name: {opt: action.help for action in p._actions for opt in action.option_strings}
             for name, p in sub.choices.items()}
    for name, flags in helps.items():
        for opt, text in flags.items():
            assert not re.search(r"\((?:query|pack|index|config)\)|\b(?:query|pack) and (?:query|pack)\b", text), \
                (name, opt, text)
    assert "folder to index" in helps["index"]["-d"] and "nearest folder" not in helps["index"]["-d"]
    assert "nearest folder" in helps["query"]["-d"] and "nearest folder" in helps["pack"]["-d"]
    assert "config" in helps["config"]["-d"] and "nearest folder" not in helps["config"]["-d"]
    assert "results" in helps["query"]["-k"] and "candidate" in helps["pack"]["-k"]
    assert "candidate" not in helps["query"]["-k"] and "results" not in helps["pack"]["-k"]


def test_readme_config_table_is_current():
    from ragweb.config import config_help
    assert config_help().strip() in README.read_text(), \
        "README's config table differs from config_help(); paste the new table into README.md"


def run_on_terminal(args, answer: str, cwd=None, env=None) -> str:
    """Run `rag ARGS` with a pseudo-terminal as stdin/stdout/stderr, answering prompts; ``env``:
    variables set for it (on a terminal that shows colours, NO_COLOR unset)."""
    import os
    import pty
    import time
    master, slave = pty.openpty()
    env = {**{k: v for k, v in os.environ.items() if k != "NO_COLOR"}, "TERM": "xterm", **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "ragweb", *map(str, args)], stdin=slave,
                            stdout=slave, stderr=slave, cwd=cwd, close_fds=True, env=env)
    os.close(slave)
    os.write(master, answer.encode())
    out = b""
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        out += data
    proc.wait(timeout=60)
    os.close(master)
    return out.decode(errors="replace")


def test_terminal_offers_to_index_then_highlights(sample_root):
    out = run_on_terminal(["query", "-q", "parse headers", "-d", sample_root, "-k", "1"], "y\n")
    assert "Index it now? [Y/n]" in out
    assert "indexed" in out and "8/8 files" in out          # the progress bar, then the summary
    assert "\x1b[1;33m" in out                               # matched words highlighted


def test_the_offer_to_index_names_the_folder_and_the_index_below_it(indexed):
    # (it asked "There is no index for .. Index it now?", where Enter indexes the whole
    # folder, while piped the error said which -d finds the index below)
    here = indexed.parent
    out = run_on_terminal(["query", "-q", "parse headers"], "\x04", cwd=here)
    assert (f"There is no index for the current folder {here} (add `-d corpus` to use the index in corpus "
            "instead). Index it now? [Y/n] ") in out
    assert "add `-d corpus` to use the index in corpus\r\n" in out and "indexed" not in out  # (Ctrl-D: no)


def test_terminal_offers_to_reindex_changed_files(indexed):
    (indexed / "README.md").write_text("# pigeonpost\n\nparse headers quickly\n")
    out = run_on_terminal(["query", "-q", "parse headers", "-d", indexed, "-k", "1"], "y\n")
    assert "changed  README.md" in out and "Re-index now?" in out and "1 updated" in out
    out = run_on_terminal(["query", "-q", "parse headers", "-d", indexed, "-k", "1"], "")
    assert "changed since" not in out


def test_a_packed_context_written_into_the_indexed_folder_is_not_indexed(indexed):
    out = indexed / "ctx.json"
    r = rag("pack", "-q", "retry backoff", "-d", indexed, "-o", out, "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["snippets"]
    r = rag("query", "-q", "retry backoff", "-d", indexed, "--json")
    assert "changed since the last index" not in r.stderr  # the new file is not a change
    r = rag("index", indexed)
    assert r.returncode == 0 and "0 added" in r.stdout
    hits = json.loads(rag("query", "-q", "retry backoff", "-d", indexed, "--json", "-k", "20").stdout)["results"]
    assert hits and all(h["path"] != "ctx.json" for h in hits)
    assert (indexed / ".rag" / "outputs").read_text() == "ctx.json\n"
    # a file written outside the folder is not recorded
    r = rag("pack", "-q", "retry backoff", "-d", indexed, "-o", indexed.parent / "elsewhere.json")
    assert r.returncode == 0 and (indexed / ".rag" / "outputs").read_text() == "ctx.json\n"


@pytest.mark.parametrize("name", ["ctx\u2028x.md", "ctx\x85x.md", "ctx\u2029x.md"])
def test_a_packed_context_named_with_a_unicode_line_break_is_not_indexed(indexed, name):
    for out in (name, "plain.md"):  # (the second pack reads the list and writes it again)
        r = rag("pack", "-q", "retry backoff", "-d", indexed, "-o", indexed / out, "--format", "markdown")
        assert r.returncode == 0, r.stderr
    r = rag("index", indexed)
    assert r.returncode == 0 and "0 added" in r.stdout, r.stdout


def test_an_index_built_by_an_older_version_is_named_so_and_rebuilt(indexed):
    # the analysis settings an older version stored: no number/option terms, an older reading
    from ragweb.engine import Engine
    eng = Engine.open(indexed / ".rag" / "index.db")
    old = dict(eng.settings, markup=1)
    old.pop("short_terms")
    old.pop("unicode")
    eng._set_meta("analysis", old)
    eng.conn.commit()
    eng.close()
    r = rag("query", "-q", "retry backoff", "-d", indexed, "--no-auto-index")
    assert r.returncode == 0 and "built by an older version of ragweb" in r.stderr
    r = rag("index", indexed)
    assert r.returncode == 0 and "rebuilt the index (built by an older version)" in r.stderr
    r = rag("query", "-q", "retry backoff", "-d", indexed, "--no-auto-index")
    assert r.returncode == 0 and "note:" not in r.stderr


def test_the_note_on_an_older_index_names_its_folder_when_asked_from_below_it(indexed):
    """`rag query` in a folder below the root finds the index above it, and said "run `rag
    index` to rebuild it": run there, that made a second index of the subfolder alone and
    left the older one as it was. The note names the folder, as the note on changed files does."""
    _stored_settings(indexed, markup=15)
    below = indexed / "guide"
    below.mkdir()
    r = rag("query", "-q", "retry backoff", "--no-auto-index", cwd=below)
    assert r.returncode == 0 and "built by an older version of ragweb" in r.stderr, r.stderr
    assert f"run `rag index {indexed}` to rebuild it" in r.stderr, r.stderr
    r = rag("index", indexed)  # (what the note says)
    assert r.returncode == 0 and "rebuilt the index (built by an older version)" in r.stderr, r.stderr
    assert not (below / ".rag").exists()
    r = rag("pack", "-q", "retry backoff", "--no-auto-index", cwd=below)
    assert r.returncode == 0 and "older version" not in r.stderr, r.stderr



def _stored_settings(indexed, **changes):
    """Rewrite the analysis settings an index records, as another version left them."""
    from ragweb.engine import Engine
    eng = Engine.open(indexed / ".rag" / "index.db")
    old = {**eng.settings, **changes}
    eng._set_meta("analysis", {k: v for k, v in old.items() if v is not ...})
    eng.conn.commit()
    eng.close()


def _decoded_by(indexed, version):
    """Record that decoder ``version`` read an index's files, as another version left it."""
    from ragweb.engine import Engine
    eng = Engine.open(indexed / ".rag" / "index.db")
    eng.set_decoded_by(version)
    eng.conn.commit()
    eng.close()


@pytest.mark.parametrize("newer", ["markup", "decoder", "short_terms"])
def test_an_index_built_by_a_newer_version_is_named_so_and_kept_until_rebuild(indexed, newer):
    """An index a newer ragweb built was called "built by an older version", and `rag index`
    read it again the older way, saying only "rebuilt the index". One whose files a newer
    decoder read (`files.DECODER_VERSION`), its analysis settings the same, was not named at
    all, and `rag index` read its changed files the older way and recorded the older decoder."""
    from ragweb.engine import MARKUP_VERSION
    from ragweb.files import DECODER_VERSION
    from ragweb.analysis import SHORT_TERMS
    if newer == "markup":
        _stored_settings(indexed, markup=MARKUP_VERSION + 1)
    elif newer == "short_terms":
        _stored_settings(indexed, short_terms=SHORT_TERMS + 1)
    else:
        _decoded_by(indexed, DECODER_VERSION + 1)
    r = rag("query", "-q", "retry backoff", "-d", indexed, "--no-auto-index")
    assert r.returncode == 0 and "older" not in r.stderr, r.stderr
    assert ("note: the index was built by a newer version of ragweb, which reads some files otherwise; upgrade "
            f"ragweb, or rebuild it with this version: `rag index --rebuild {indexed}`") in r.stderr, r.stderr
    r = rag("index", indexed)
    assert (r.returncode, r.stdout) == (1, "") and r.stderr == (
        f"Error: the index of {indexed} was built by a newer version of ragweb, which reads some files otherwise; "
        f"upgrade ragweb to update it, or rebuild it with this version: rag index --rebuild {indexed}\n")
    assert "built by a newer version" in rag("query", "-q", "retry", "-d", indexed, "--no-auto-index").stderr
    r = rag("index", "--rebuild", indexed)
    assert r.returncode == 0, r.stderr
    assert "note:" not in rag("query", "-q", "retry backoff", "-d", indexed, "--no-auto-index").stderr


def test_an_index_stemmed_by_another_snowballstemmer_is_named_so_and_rebuilt(indexed):
    # snowballstemmer 2.2 stemmed "added" as "ad", 3.1 as "add": a question found nothing in
    # an index another release stemmed, and `rag index` kept its terms, mixing both
    from ragweb import analysis
    assert analysis.STEMMER_VERSION
    _stored_settings(indexed, stemmer="2.2.0")
    r = rag("query", "-q", "retry backoff", "-d", indexed, "--no-auto-index")
    assert r.returncode == 0 and (f"the index's words were stemmed by snowballstemmer 2.2.0, not "
                                  f"{analysis.STEMMER_VERSION}") in r.stderr, r.stderr
    r = rag("index", indexed)
    assert r.returncode == 0 and f"rebuilt the index (stemmed by snowballstemmer 2.2.0, not " in r.stderr, r.stderr
    r = rag("query", "-q", "retry backoff", "-d", indexed, "--no-auto-index")
    assert r.returncode == 0 and "note:" not in r.stderr
    # an index from before the stemmer's version was recorded: built by an older version
    _stored_settings(indexed, stemmer=...)
    r = rag("index", indexed)
    assert r.returncode == 0 and "rebuilt the index (built by an older version)" in r.stderr, r.stderr


def test_an_index_without_special_parameter_terms_is_an_older_version_and_rebuilt(indexed):
    # (short terms 1: no "$@" in its terms; its questions are analysed as it was built, and
    # `rag index` rebuilds it, after which the question finds the page that names them)
    (indexed / "params.md").write_text("# Special Parameters\n\n($*) All the positional parameters.\n"
                                       "\n($@) All the positional parameters, each one word.\n")
    assert rag("index", indexed).returncode == 0
    _stored_settings(indexed, short_terms=True)
    r = rag("query", "-q", "$* or $@", "-d", indexed, "--no-auto-index")
    assert r.returncode == 2 and "built by an older version of ragweb" in r.stderr, r.stderr
    assert "has no indexable words" in r.stderr
    r = rag("index", indexed)
    assert r.returncode == 0 and "rebuilt the index (built by an older version)" in r.stderr, r.stderr
    r = rag("query", "-q", "$* or $@", "-d", indexed, "--no-auto-index", "--json")
    assert r.returncode == 0 and "note:" not in r.stderr, r.stderr
    assert [h["path"] for h in json.loads(r.stdout)["results"]] == ["params.md"]


def test_an_index_with_an_early_versions_setting_names_is_an_older_version(indexed):
    # (an early version called short_terms "dotted": the note blamed the config, and questions
    # were analysed without dotted-number terms, so "0.2.5" had "no indexable words")
    (indexed / "n.md").write_text("# Notes\n\nUpgrade to 0.2.5 before the migration.\n")
    assert rag("index", indexed).returncode == 0
    _stored_settings(indexed, short_terms=..., dotted=True)
    r = rag("query", "-q", "0.2.5", "-d", indexed, "--no-auto-index", "--json")
    assert r.returncode == 0 and "built by an older version of ragweb" in r.stderr, r.stderr
    assert json.loads(r.stdout)["results"][0]["path"] == "n.md"


def test_an_index_whose_files_an_older_decoder_read_is_named_so_by_query(indexed):
    # (its packs were cited as sources until the next `rag index`, and query said nothing)
    from ragweb.engine import Engine
    eng = Engine.open(indexed / ".rag" / "index.db")
    eng.set_decoded_by(2)
    eng.conn.commit()
    eng.close()
    r = rag("pack", "-q", "retry backoff", "-d", indexed, "--no-auto-index")
    assert r.returncode == 0 and "built by an older version of ragweb" in r.stderr, r.stderr
    assert rag("index", indexed).returncode == 0
    r = rag("pack", "-q", "retry backoff", "-d", indexed, "--no-auto-index")
    assert r.returncode == 0 and "note:" not in r.stderr, r.stderr


def test_snowballstemmer_older_than_3_1_is_a_clear_error(tmp_path, indexed):
    # (2.2 stems otherwise and lacks seven languages; nothing checked the requirement at run time)
    import subprocess
    import sys
    target = tmp_path / "old"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                        "snowballstemmer==2.2.0"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    env = {**os.environ, "PYTHONPATH": f"{target}{os.pathsep}{README.parent / 'src'}"}
    r = subprocess.run([sys.executable, "-m", "ragweb", "query", "-q", "retry", "-d", str(indexed), "--no-auto-index"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 1 and "ragweb needs snowballstemmer 3.1 or later" in r.stderr and "2.2.0" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr

@pytest.fixture
def read_only(monkeypatch):
    """Make folders read-only for this process: the immutable attribute where the file system
    and our rights allow it (root ignores permission bits), else `os.access` answers for them
    as for a read-only folder -- the check `ragweb.store` makes before it writes (a container
    lacks CAP_LINUX_IMMUTABLE); undone after the test."""
    import os
    frozen, fake = [], []
    real_access = os.access

    def freeze(*paths):
        for p in paths:
            try:
                ok = subprocess.run(["chattr", "+i", str(p)], capture_output=True).returncode == 0
            except FileNotFoundError:
                ok = False
            if ok:
                frozen.append(p)
            else:
                fake.append(str(Path(p).resolve()))
        if fake:
            monkeypatch.setattr(os, "access", lambda p, mode, **kw: not (
                mode & os.W_OK and str(Path(p).resolve()) in fake) and real_access(p, mode, **kw))
    yield freeze
    for p in frozen:
        subprocess.run(["chattr", "-i", str(p)])


def test_an_index_in_a_read_only_folder_is_queried_as_it_is_and_not_written(indexed, read_only, capsys):
    from ragweb.cli import main
    rag_dir = indexed / ".rag"
    before = sorted(p.name for p in rag_dir.iterdir())
    read_only(indexed, rag_dir)
    assert main(["query", "-d", str(indexed), "-q", "retry backoff", "-k", "1", "--no-auto-index"]) == 0
    assert "retry" in capsys.readouterr().out.lower()
    assert main(["pack", "-d", str(indexed), "-q", "retry backoff", "-b", "200"]) == 0
    assert json.loads(capsys.readouterr().out)["snippets"]
    assert sorted(p.name for p in rag_dir.iterdir()) == before  # no -wal, no -shm
    # indexing it says why it cannot and what to do instead (not "damaged, rebuild it")
    assert main(["index", str(indexed)]) == 1
    err = capsys.readouterr().err
    assert "cannot write the index" in err and "ln -s" in err and "rebuild" not in err


def test_an_older_index_read_only_names_its_owner_for_the_rebuild(indexed, read_only, capsys):
    # (the note said "run `rag index` to rebuild it", which this user's `rag index` refuses)
    from ragweb.cli import main
    from ragweb.engine import Engine
    eng = Engine.open(indexed / ".rag" / "index.db")
    eng._set_meta("analysis", dict(eng.settings, folds="fold1"))
    eng.conn.commit()
    eng.close()
    read_only(indexed, indexed / ".rag")
    assert main(["query", "-d", str(indexed), "-q", "retry backoff", "-k", "1", "--no-auto-index"]) == 0
    err = capsys.readouterr().err
    assert "built by an older version of ragweb" in err and "its owner can rebuild it" in err, err
    assert "run `rag index`" not in err


def test_indexing_a_read_only_folder_without_an_index_says_how_to_index_it(sample_root, read_only, capsys):
    from ragweb.cli import main
    read_only(sample_root)
    assert main(["index", str(sample_root)]) == 1
    err = capsys.readouterr().err
    assert f"ln -s {sample_root.resolve()} mydocs/" in err
    assert not (sample_root / ".rag").exists()


def test_a_read_only_index_a_writer_left_unmerged_is_not_read_half_merged(indexed, read_only, capsys):
    from ragweb.cli import main
    (indexed / ".rag" / "index.db-wal").write_bytes(b"frames not merged")
    read_only(indexed, indexed / ".rag")
    assert main(["query", "-d", str(indexed), "-q", "retry backoff", "--no-auto-index"]) == 1
    assert "index.db-wal" in capsys.readouterr().err


def test_an_index_read_as_it_is_is_read_again_when_its_owner_indexes(indexed, monkeypatch):
    # (a `rag query --batch` of a user who cannot write the folder kept answering from the
    # index as it was when it opened it, and once the file changed under it, called it damaged)
    from ragweb import store
    from ragweb.engine import Engine
    rag_dir, real_access = (indexed / ".rag").resolve(), os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: not (
        mode & os.W_OK and Path(p).resolve() == rag_dir) and real_access(p, mode, **kw))
    path = rag_dir / "index.db"
    assert store.read_as_it_is(path)  # (this process reads it as one who cannot write there)
    reader = Engine.open(path, create=False)
    with reader.reading():
        assert reader.search("zeppelin") == []
    (indexed / "hangar.md").write_text("# Hangar\n\nThe zeppelin hangar notes.\n")
    assert rag("index", indexed).returncode == 0  # (its owner, another process)
    with reader.reading():
        assert [h.path for h in reader.search("zeppelin")] == ["hangar.md"]
    # while its owner's run has writes not yet merged, say that (this user cannot merge them)
    import sqlite3
    from ragweb.errors import IndexBusyError
    owner = sqlite3.connect(path)
    owner.execute("PRAGMA wal_autocheckpoint=0")
    owner.execute("INSERT INTO meta VALUES('owner', '1')")
    owner.commit()
    owner.execute("PRAGMA wal_checkpoint(PASSIVE)")  # (the file changes; its WAL stays, the connection open)
    with pytest.raises(IndexBusyError, match="is being written by its owner"):
        with reader.reading():
            pass
    owner.close()  # (the last connection merges the writes)
    with reader.reading():
        assert [h.path for h in reader.search("zeppelin")] == ["hangar.md"]
    reader.close()


def test_query_and_pack_from_a_subfolder_use_the_index_above_it(indexed):
    sub = indexed / "notes" / "deep"
    sub.mkdir(parents=True)
    r = rag("query", "-q", "retry backoff", "-k", "1", "--no-auto-index", cwd=sub)
    assert r.returncode == 0, r.stderr
    assert f"using the index of {indexed.resolve()}" in r.stderr and "retry" in r.stdout.lower()
    r = rag("pack", "-q", "retry backoff", "-b", "100", cwd=sub)
    assert r.returncode == 0 and json.loads(r.stdout)["snippets"], r.stderr
    # -d names the root: no looking up
    r = rag("query", "-d", ".", "-q", "retry backoff", "--no-auto-index", cwd=sub)
    assert r.returncode == 1 and "no index" in r.stderr


def test_something_else_where_the_index_goes_is_named(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "notes.md").write_text("# Notes\nabout wrens\n")
    (tmp_path / "a" / ".rag").write_text("not a folder")
    for args in (["index", tmp_path / "a"], ["query", "-q", "wrens", "-d", tmp_path / "a"]):
        r = rag(*args)
        assert r.returncode == 1 and ".rag is a file, not a folder" in r.stderr, r.stderr
    (tmp_path / "a" / ".rag").unlink()
    (tmp_path / "a" / ".rag" / "index.db").mkdir(parents=True)
    for args in (["index", tmp_path / "a"], ["index", "--rebuild", tmp_path / "a"],
                 ["query", "-q", "wrens", "-d", tmp_path / "a"]):
        r = rag(*args)
        assert r.returncode == 1 and "index.db is a folder, not an index" in r.stderr, r.stderr


def test_a_batch_with_an_option_no_question_makes_right_stops_before_any_answer(indexed, tmp_path):
    batch = tmp_path / "q.txt"
    batch.write_text("retry backoff\nheaders\n")
    for cmd, option, why in [("pack", ("-b", "0"), "-b/--budget must be at least 1, got 0"),
                             ("pack", ("-k", "0"), "-k/--top-k must be at least 1, got 0"),
                             ("query", ("-k", "0"), "-k/--top-k must be at least 1, got 0"),
                             ("pack", ("-b", "-5"), "-b/--budget must be at least 1, got -5"),
                             ("query", ("--path", "docs/[ab"), "the path glob docs/[ab can match no file")]:
        r = rag(cmd, "-d", indexed, "--batch", batch, *option)
        assert r.returncode == 2 and r.stdout == "", (cmd, option, r.stdout)
        assert r.stderr.startswith(f"Error: {why}"), r.stderr


def test_a_flag_takes_the_values_its_config_key_takes(indexed, tmp_path):
    # -k and -b say what retrieve.top_k and pack.token_budget say: a value rag.yaml refuses
    # (and the page's ragPack, for a budget) is refused as a flag too, not answered
    for cmd, option, key in [("query", ("-k", "10001"), "retrieve:\n  top_k: 10001\n"),
                             ("pack", ("-k", "10001"), "retrieve:\n  top_k: 10001\n"),
                             ("pack", ("-b", "10000001"), "pack:\n  token_budget: 10000001\n")]:
        config = tmp_path / "rag.yaml"
        config.write_text(key)
        by_key = rag(cmd, "-d", indexed, "--config", config, "-q", "retry backoff")
        assert by_key.returncode == 1 and "must be an integer between 1 and" in by_key.stderr, by_key.stderr
        r = rag(cmd, "-d", indexed, "-q", "retry backoff", *option)
        assert r.returncode == 2 and r.stdout == "", (cmd, option, r.stdout[:200])
        assert r.stderr.startswith(f"Error: {option[0]}/--"), r.stderr
        assert f"must be at most {int(option[1]) - 1}" in r.stderr, r.stderr
    # the largest values both take are taken by both
    config.write_text("retrieve:\n  top_k: 10000\npack:\n  token_budget: 10000000\n")
    by_key = json.loads(rag("pack", "-d", indexed, "--config", config, "-q", "retry backoff").stdout)
    by_flag = json.loads(rag("pack", "-d", indexed, "-q", "retry backoff", "-k", "10000", "-b", "10000000").stdout)
    assert by_key == by_flag and by_flag["budget_tokens"] == 10_000_000


def test_a_batch_file_with_a_byte_order_mark_reads_its_first_line_as_written(indexed, tmp_path):
    batch = tmp_path / "q.jsonl"
    batch.write_bytes(b'\xef\xbb\xbf {"id": "q-7", "question": "retry backoff"}\n')  # (Notepad's UTF-8)
    out = json.loads(rag("query", "-d", indexed, "--batch", batch).stdout)
    assert out["id"] == "q-7" and out["query"] == "retry backoff" and out["results"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig"])
def test_a_batch_file_written_by_windows_tools_is_read(indexed, tmp_path, encoding):
    batch = tmp_path / "q.txt"  # (PowerShell 5.1's `>` writes UTF-16 with a byte order mark; others without)
    batch.write_bytes('retry backoff\r\n{"id": "h", "question": "header parsing"}\r\n'.encode(encoding))
    r = rag("query", "-d", indexed, "--batch", batch)
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(o["id"], o["query"]) for o in out] == [(1, "retry backoff"), ("h", "header parsing")]
    assert all(o["results"] for o in out)


def test_a_batch_of_nul_bytes_or_utf16_on_standard_input_is_refused_before_any_answer(indexed, tmp_path):
    (tmp_path / "bin").write_bytes(b"retry backoff\n\x00\x01\x02\x03 binary\x00\x00\n")
    r = rag("query", "-d", indexed, "--batch", tmp_path / "bin")
    assert r.returncode == 2 and r.stdout == "" and "is not a text file of questions (it holds NUL bytes" in r.stderr
    r = subprocess.run([sys.executable, "-m", "ragweb", "query", "-d", str(indexed), "--batch", "-"],
                       input="retry backoff\n".encode("utf-16-le"), capture_output=True, timeout=120)
    assert r.returncode == 2 and r.stdout == b"" and b"line 1 holds NUL characters, as UTF-16 text would" in r.stderr
    r = subprocess.run([sys.executable, "-m", "ragweb", "query", "-d", str(indexed), "--batch", "-"],
                       input="retry backoff\nheader parsing\n".encode("utf-16"), capture_output=True, timeout=120)
    assert r.returncode == 0 and [json.loads(line)["query"] for line in r.stdout.splitlines()] == [
        "retry backoff", "header parsing"], r.stderr  # (with a byte order mark: read as UTF-16)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_runprompt_reads_a_context_saved_with_a_byte_order_mark_or_in_utf16(indexed, tmp_path, encoding):
    ctx = tmp_path / "ctx.json"
    assert rag("pack", "-q", "retry backoff", "-d", indexed, "-o", ctx).returncode == 0
    expected = rag("runprompt", "--runtime", "--ctx", ctx)
    (tmp_path / "saved.json").write_bytes(ctx.read_text().encode(encoding))  # (Notepad; PowerShell's `>`)
    r = rag("runprompt", "--runtime", "--ctx", tmp_path / "saved.json")
    assert r.returncode == 0 and r.stdout == expected.stdout, r.stderr
    piped = subprocess.run([sys.executable, "-m", "ragweb", "runprompt", "--runtime", "--ctx", "-"],
                           input=ctx.read_text().encode(encoding), capture_output=True, timeout=120)
    assert piped.returncode == 0 and piped.stdout.decode() == expected.stdout, piped.stderr


def test_a_pack_that_fails_leaves_its_output_file_to_be_indexed(indexed):
    r = rag("pack", "-d", indexed, "-q", "the of", "-o", indexed / "notes.md")
    assert r.returncode == 2 and not (indexed / "notes.md").exists()
    outputs = indexed / ".rag" / "outputs"
    assert not outputs.exists() or "notes.md" not in outputs.read_text().split()
    (indexed / "notes.md").write_text("# Notes\nThe zeppelin hangar notes.\n")
    rag("index", indexed)
    assert "notes.md:L" in rag("query", "-d", indexed, "-q", "zeppelin hangar").stdout


def test_a_pack_output_deleted_is_forgotten_and_a_file_written_there_later_is_indexed(indexed):
    assert rag("pack", "-d", indexed, "-q", "retry backoff", "-o", indexed / "notes.md").returncode == 0
    outputs = indexed / ".rag" / "outputs"
    assert "notes.md" in outputs.read_text().split()
    assert "notes.md:L" not in rag("query", "-d", indexed, "-q", "retry backoff", "-k", "20").stdout
    (indexed / "notes.md").unlink()
    assert rag("index", indexed).returncode == 0
    assert "notes.md" not in outputs.read_text().split()
    (indexed / "notes.md").write_text("# Notes\nThe zeppelin hangar notes.\n")  # the user's own, later
    rag("index", indexed)
    assert "notes.md:L" in rag("query", "-d", indexed, "-q", "zeppelin hangar").stdout


def test_a_question_that_is_not_utf8_is_a_clear_error(indexed):
    for args in [("pack", "-q", b"retry \xe9"), ("query", "retry", b"\xe9t\xe9"),
                 ("query", "-q", "retry", "--path", b"\xe9*")]:
        r = subprocess.run([sys.executable, "-m", "ragweb", *args, "-d", str(indexed)], capture_output=True,
                           timeout=120, env={**os.environ, "LC_ALL": "C.UTF-8", "PYTHONUTF8": "1"})
        assert r.returncode == 2 and r.stdout == b"", args
        assert r.stderr.decode().endswith("is not UTF-8 text (the byte 0xe9); set the terminal's encoding to UTF-8\n")


def test_runprompt_refuses_a_question_that_is_not_utf8_and_reads_a_context_from_stdin(indexed, tmp_path):
    ctx = tmp_path / "ctx.json"
    assert rag("pack", "-q", "retry backoff", "-d", indexed, "-o", ctx).returncode == 0
    r = subprocess.run([sys.executable, "-m", "ragweb", "runprompt", "--runtime", "--ctx", str(ctx), "-q", b"retry \xff"],
                       capture_output=True, timeout=120, env={**os.environ, "LC_ALL": "C.UTF-8", "PYTHONUTF8": "1"})
    assert r.returncode == 2 and r.stdout == b"" and b"is not UTF-8 text (the byte 0xff)" in r.stderr
    piped = rag("runprompt", "--runtime", "--ctx", "-", stdin=ctx.read_text())  # rag pack ... | rag runprompt --ctx -
    assert piped.returncode == 0 and piped.stdout == rag("runprompt", "--runtime", "--ctx", ctx).stdout


def test_a_batch_refuses_what_is_not_text_or_not_json_and_takes_a_brace_as_a_question(indexed, tmp_path):
    for stdin, why in [(b"retry backoff\n\xff\xfe bad\n", "standard input line 2 is not UTF-8 text (the byte 0xff)"),
                       (b'{"question": "retry \\udc80 backoff"}\n', "line 1: the question holds a lone surrogate (U+DC80)"),
                       (b'{"question": "header", "id": NaN}\n', "line 1: invalid JSON (NaN is not JSON)")]:
        for cmd, *more in (["query"], ["pack", "-o", str(tmp_path / "out.jsonl")]):
            r = subprocess.run([sys.executable, "-m", "ragweb", cmd, "-d", str(indexed), "--batch", "-", *more],
                               input=stdin, capture_output=True, timeout=120)
            assert r.returncode == 2 and why in r.stderr.decode() and b"Traceback" not in r.stderr, (cmd, r.stderr)
    for stdin in (b'{"question": "retry", "id": 1e999}\n', b'{"question": "retry", "id": "\\ud800"}\n'):
        r = subprocess.run([sys.executable, "-m", "ragweb", "query", "-d", str(indexed), "--batch", "-"],
                           input=stdin, capture_output=True, timeout=120)  # (Infinity, or a traceback, before)
        assert r.returncode == 2 and b"the JSON answer cannot repeat" in r.stderr and r.stdout == b"", r.stderr
    assert not (tmp_path / "out.jsonl").exists()  # (written whole or not at all)
    r = rag("query", "-d", indexed, "--batch", "-", stdin="{retry} backoff\n")
    assert r.returncode == 0 and json.loads(r.stdout)["query"] == "{retry} backoff"


def test_pack_refuses_a_batch_in_another_format_and_an_output_in_the_index_folder(indexed, tmp_path):
    batch = tmp_path / "q.txt"
    batch.write_text("retry backoff\n")
    r = rag("pack", "-d", indexed, "--batch", batch, "--format", "markdown", "-o", tmp_path / "out.md")
    assert r.returncode == 2 and "--batch writes one JSON result per line" in r.stderr
    assert not (tmp_path / "out.md").exists()
    before = (indexed / ".rag" / "index.db").read_bytes()
    for target in (indexed / ".rag" / "index.db", indexed / ".rag" / "ctx.json"):
        r = rag("pack", "-d", indexed, "-q", "retry backoff", "-o", target)
        assert r.returncode == 2 and "is in the index folder" in r.stderr
    assert (indexed / ".rag" / "index.db").read_bytes() == before
    assert rag("query", "-d", indexed, "-q", "retry backoff").returncode == 0


def test_runprompt_refuses_a_context_file_that_is_not_a_packed_context(tmp_path):
    ctx = tmp_path / "c.json"
    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    r = rag("runprompt", "--runtime", "--ctx", tmp_path / "deep.json")
    assert r.returncode == 1 and "nested too deeply" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "huge.json").write_text('{"query": "q", "snippets": [], "used_tokens": ' + "9" * 5000 + "}")
    r = rag("runprompt", "--runtime", "--ctx", tmp_path / "huge.json")
    assert r.returncode == 1 and "a number too long to read" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "ragweb", "runprompt", "--runtime", "--ctx", "-"], capture_output=True,
                       text=True, timeout=120, preexec_fn=lambda: os.close(0))
    assert r.returncode == 2 and "standard input, which is closed" in r.stderr
    for body, why in [(b'{"query": "q", "snippets": [{"text": "hello"}]}',
                       'snippet 1: "path" and "range" are missing or not text'),
                      (b'{"snippets": ["abc"]}', 'snippet 1: "path", "range" and "text" are missing or not text'),
                      (b'{"query": 5, "snippets": []}', 'its "query" is not text'),
                      (b'{"query": "caf\xe9", "snippets": []}', "not UTF-8 text"),
                      (b'{"query": "a \\udc80", "snippets": []}', "it holds a lone surrogate, which is not text")]:
        ctx.write_bytes(body)
        r = rag("runprompt", "--runtime", "--ctx", ctx)
        assert r.returncode == 1 and r.stderr.startswith(f"Error: {ctx} is not packed-context JSON ({why})"), r.stderr


def test_runprompt_says_what_it_was_given_instead_of_a_packed_context(tmp_path, monkeypatch, capsys):
    """An empty question, an empty pipe (the pack before it failed), a pack in another format, search
    results and a context without a question are named as such (they were "- is not packed-context JSON (line 1:
    Expecting value)", or a prompt whose question was empty)."""
    from ragweb.cli import main
    from ragweb.formats import render
    packed = {"query": "retry backoff", "budget_tokens": 50, "used_tokens": 2, "evidence": "sufficient",
              "snippets": [{"path": "a.md", "range": "L1-1", "why": "BM25 score: 1.00", "text": "Retry."}]}
    ctx = tmp_path / "ctx.json"
    ctx.write_text(render(packed, "json"))

    def run(*args, stdin=None):
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        code = main(["runprompt", "--runtime", *map(str, args)])
        return code, capsys.readouterr()
    for q in ("", "  "):  # (`-q "$Q"` with $Q not set: the stored question was used, or none at all)
        code, out = run("--ctx", ctx, "-q", q)
        assert code == 2 and "the question (-q) is empty" in out.err and not out.out
    code, out = run("--ctx", "-", stdin="")
    assert code == 1 and out.err.startswith("Error: standard input is empty, not a packed context (did the "
                                            "command before the pipe fail?)"), out.err
    for fmt, name in (("markdown", "Markdown"), ("xml", "XML"), ("text", "text")):
        code, out = run("--ctx", "-", stdin=render(packed, fmt) + "\n")
        assert code == 1 and f"standard input is a packed context in the {name} format; rag runprompt reads JSON: " \
            "pipe one in: `rag pack -q ... --format json | rag runprompt ... --ctx -`" in out.err, out.err
    code, out = run("--ctx", "-", stdin='{"query": "retry", "results": []}')  # (`rag query --json | rag runprompt`)
    assert code == 1 and "standard input holds search results (`rag query --json` output), not a packed context" in out.err
    ctx.write_text(render(dict(packed, query=""), "json"))
    code, out = run("--ctx", ctx)
    assert code == 1 and f'{ctx} holds no question (its "query" is missing or empty); give one with -q' in out.err
    code, out = run("--ctx", ctx, "-q", "how do retries back off?")
    assert code == 0 and "Question: how do retries back off?\n" in out.out


def test_runprompt_says_when_the_context_may_not_answer_its_question(tmp_path, capsys):
    """`rag pack ... | rag runprompt --ctx -` said nothing of a pack of weak or no evidence (the
    JSON holds the level, and only `rag pack -o` and the text formats warned); with -q the
    question is another, which the level was not measured for."""
    from ragweb.cli import main
    from ragweb.formats import render
    ctx = tmp_path / "ctx.json"
    for level, said in [("none", "warning: the packed context holds no evidence for this question"),
                        ("weak", "warning: the evidence packed is weak; the context may not answer the question"),
                        ("sufficient", None)]:
        ctx.write_text(render({"query": "helm charts", "budget_tokens": 300, "used_tokens": 2, "evidence": level,
                               "snippets": [{"path": "a.md", "range": "L1-1", "text": "Retry."}]}, "json"))
        assert main(["runprompt", "--runtime", "--ctx", str(ctx)]) == 0
        out = capsys.readouterr()
        assert "Question: helm charts" in out.out and (said in out.err if said else out.err == ""), out.err
        assert main(["runprompt", "--builder", "--ctx", str(ctx), "-q", "retry"]) == 0
        assert capsys.readouterr().err == ""


def test_runprompt_takes_the_question_as_plain_words_as_query_and_pack_do(tmp_path, capsys):
    """`rag runprompt --runtime --ctx c.json how do retries work` said "unrecognized arguments",
    while `rag query` and `rag pack` take a question as plain words."""
    from ragweb.cli import main
    from ragweb.formats import render
    ctx = tmp_path / "ctx.json"
    ctx.write_text(render({"query": "helm charts", "budget_tokens": 300, "used_tokens": 2, "evidence": "sufficient",
                           "snippets": [{"path": "a.md", "range": "L1-1", "text": "Retry."}]}, "json"))

    def run(*args):
        code = main(["runprompt", "--runtime", "--ctx", str(ctx), *args])
        return code, capsys.readouterr()
    code, by_flag = run("-q", "how do retries work")
    assert code == 0 and "Question: how do retries work" in by_flag.out
    assert run("how", "do", "retries", "work") == (0, by_flag)
    assert run("-q", "what does -g do")[1].out == run("--", "what", "does", "-g", "do")[1].out
    code, out = run("-q", "retry", "backoff")
    assert code == 2 and out.err == "Error: rag runprompt: give the question once, with -q or as words, not both\n"
    code, out = run("")  # (`"$Q"` with $Q not set: not the stored question without a word)
    assert code == 2 and out.err.startswith("Error: the question is empty ('')"), out.err


def test_a_closed_standard_output_is_an_error_not_a_traceback(indexed, tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "ragweb", *map(str, args)], capture_output=False,
                              stdout=None, stderr=subprocess.PIPE, text=True, timeout=120,
                              preexec_fn=lambda: os.close(1))
    for cmd in ("query", "pack"):
        r = run(cmd, "-d", indexed, "-q", "retry backoff")
        assert r.returncode == 1
        assert r.stderr == f"Error: standard output is closed: rag {cmd} has nowhere to write its results\n"
    r = run("pack", "-d", indexed, "-q", "retry backoff", "-o", "-")  # (- is standard output too)
    assert r.returncode == 1 and "standard output is closed" in r.stderr
    r = run("pack", "-d", indexed, "-q", "retry backoff", "-o", tmp_path / "ctx.json")
    assert r.returncode == 0 and json.loads((tmp_path / "ctx.json").read_text())["snippets"]


def test_a_pack_written_to_a_file_whose_name_is_not_utf8_is_written(indexed):
    name = os.fsencode(indexed) + b"/ctx\xe9.json"
    r = subprocess.run([sys.executable, "-m", "ragweb", "pack", "-d", str(indexed), "-q", "retry backoff",
                        "-o", name], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr  # (a traceback after writing it, before)
    with open(name, "rb") as f:
        assert json.loads(f.read())["snippets"]


def test_pack_output_dash_is_standard_output(indexed):
    r = rag("pack", "-d", indexed, "-q", "retry backoff", "-o", "-", cwd=indexed)
    assert r.returncode == 0 and json.loads(r.stdout)["snippets"] and not (indexed / "-").exists()


def test_pieces_of_an_over_long_line_carry_their_columns_and_are_not_widened(tmp_path):
    line = " ".join(f"Sentence {i} about otters." for i in range(200))
    (tmp_path / "l.txt").write_text("intro\n" + line + "\n")
    rag("index", tmp_path)
    for extra in ((), ("-c", "1")):
        hits = json.loads(rag("query", "-d", tmp_path, "-q", "otters 150", "--json", *extra).stdout)["results"]
        assert len(hits) >= 2 and all(h["startLine"] == h["endLine"] == 2 for h in hits)
        for h in hits:
            c0, c1 = h["cols"]
            assert h["text"] == line[c0:c1] and len(h["text"]) < len(line) / 2
        assert len({tuple(h["cols"]) for h in hits}) == len(hits)  # (-c 1 gave the whole line, again and again)


def test_a_piece_of_a_one_line_page_is_cited_with_its_columns_in_the_text_output(tmp_path):
    """`rag query` and a text pack cited a piece of a minified one-line page as
    `page.html:L1-1`, the whole 20,000-character line, though the JSON said which part."""
    page = "<html><body>" + "".join(f"<p>Paragraph {i} about widgets and gadgets.</p>" for i in range(400))
    page = page.replace("<p>Paragraph 300 ", "<p>Paragraph 300 says otters retry with backoff ")
    (tmp_path / "page.html").write_text(page + "</body></html>")
    assert rag("index", tmp_path).returncode == 0
    hit = json.loads(rag("query", "-d", tmp_path, "-q", "otters retry", "-k", "1", "--json").stdout)["results"][0]
    c0, c1 = hit["cols"]
    assert 0 < c0 < c1 < len(page)
    assert rag("query", "-d", tmp_path, "-q", "otters retry", "-k", "1").stdout.startswith(
        f"1. page.html:L1-1 cols {c0}-{c1}  score ")
    r = rag("pack", "-d", tmp_path, "-q", "otters retry", "-b", "100", "--format", "json")
    (snippet,) = json.loads(r.stdout)["snippets"]
    c0, c1 = snippet["cols"]
    assert 0 < c0 < c1 < len(page) and "otters" in page[c0:c1]
    r = rag("pack", "-d", tmp_path, "-q", "otters retry", "-b", "100", "--format", "text")
    assert r.stdout.startswith(f"[page.html:L1-1 cols {c0}-{c1}]\n"), r.stdout


def test_a_hand_edited_outputs_list_that_cannot_be_read_is_a_clear_error(indexed):
    outputs = indexed / ".rag" / "outputs"
    outputs.write_bytes(b"caf\xe9.json\n")  # (Latin-1: a traceback on every run)
    assert rag("index", indexed).returncode == 0 and rag("query", "-d", indexed, "-q", "retry").returncode == 0
    outputs.unlink()
    os.mkfifo(outputs)  # (opening it blocked every run)
    for args in (("index", indexed), ("query", "-d", indexed, "-q", "retry")):
        r = rag(*args)
        assert r.returncode == 1 and f"cannot read {outputs} (not a regular file (a named pipe))" in r.stderr, r.stderr
    outputs.unlink()
    outputs.mkdir()
    assert "cannot read" in rag("index", indexed).stderr


def test_accepting_the_offer_to_index_keeps_the_summary_off_standard_output(sample_root):
    """A terminal answers the offer while standard output is a pipe (`rag pack ... | rag
    runprompt --ctx -`): the run's summary goes to stderr, the output stays JSON."""
    import pty
    master, slave = pty.openpty()
    os.write(master, b"y\n")
    try:
        r = subprocess.run([sys.executable, "-m", "ragweb", "pack", "-q", "retry backoff", "-b", "300"],
                           stdin=slave, capture_output=True, text=True, cwd=sample_root, timeout=120)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["snippets"] and "indexed" in r.stderr


def _tree(root, files: dict):
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _paths(r):
    assert r.returncode == 0, r.stderr
    return sorted({h["path"] for h in json.loads(r.stdout)["results"]})


def test_path_globs_from_a_dot_are_anchored_and_an_absolute_path_is_made_relative(tmp_path):
    _tree(tmp_path, {"src/client.py": "retry backoff\n", "src/sub/headers.py": "retry headers\n",
                     "sub/notes.md": "retry notes\n", "docs/retry.md": "retry backoff docs\n"})
    assert rag("index", tmp_path).returncode == 0
    q = ("query", "-q", "retry", "-d", tmp_path, "--json", "-k", "10")
    assert _paths(rag(*q, "--path", "./sub")) == ["sub/notes.md"]  # (not src/sub/headers.py too)
    assert _paths(rag(*q, "--path", "./src/client.py")) == ["src/client.py"]
    assert _paths(rag(*q, "--path", str(tmp_path / "src"))) == ["src/client.py", "src/sub/headers.py"]
    assert _paths(rag(*q, "--path", ".")) == _paths(rag(*q))
    r = rag(*q, "--path", "./client.py")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == (f"Error: --path ./client.py matches no indexed file: it is matched against the "
                                f"paths of the index of {tmp_path}, relative to that folder, such as src/client.py (a glob "
                                "from '/' or './' names the folder's own file: '**/client.py' takes one at any depth)")
    for bad, says in (("", "is empty"), ("!docs", "starts with '!'")):
        r = rag("pack", "-q", "retry", "-d", tmp_path, "--path", bad)
        assert r.returncode == 2 and says in r.stderr, r.stderr


def test_an_exclude_written_from_a_dot_leaves_out_that_file_only(tmp_path):
    _tree(tmp_path, {"notes.txt": "top notes retry\n", "vendored/lib/notes.txt": "lib notes retry\n",
                     "guide.md": "guide retry\n", "rag.yaml": 'index:\n  excludes: ["./notes.txt"]\n'})
    assert "2 added" in rag("index", tmp_path).stdout
    assert _paths(rag("query", "-q", "retry", "-d", tmp_path, "--json")) == ["guide.md", "vendored/lib/notes.txt"]


def test_a_pack_written_through_a_link_or_into_a_nested_root_is_not_indexed(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    _tree(root, {"docs/i.md": "inside retry backoff text\n", "sub/child.md": "child retry backoff\n"})
    _tree(outside, {"o.md": "outside retry backoff text\n"})
    (root / "ext").symlink_to(outside)
    (root / "linked.json").symlink_to(outside / "target.json")
    for folder in (root / "sub", root):
        assert rag("index", folder).returncode == 0
    for out in ("ext/ctx.json", "linked.json", "sub/ctx.json"):
        assert rag("pack", "-q", "retry backoff", "-d", root, "-o", root / out).returncode == 0
    for folder in (root, root / "sub"):
        r = rag("index", folder)
        assert "0 added" in r.stdout, r.stdout
    indexed = _paths(rag("query", "-q", "retry backoff", "-d", root, "--json", "-k", "20"))
    assert indexed == ["docs/i.md", "ext/o.md", "sub/child.md"]
    assert _paths(rag("query", "-q", "retry backoff", "-d", root / "sub", "--json")) == ["child.md"]


def test_rag_config_from_a_subfolder_names_the_config_that_query_and_pack_use_there(tmp_path):
    _tree(tmp_path, {"src/f.txt": "retry\n", "rag.yaml": "retrieve:\n  top_k: 1\n"})
    assert rag("index", tmp_path).returncode == 0
    r = rag("config", cwd=tmp_path / "src")
    assert r.stdout.startswith("# effective config (defaults)")
    assert r.stderr == (f"note: this is the config of `rag index` here; `rag query` and `rag pack` here use the "
                        f"index of {tmp_path} and its config: `rag config -d {tmp_path}` shows it\n")
    assert rag("config", cwd=tmp_path).stderr == ""


def test_option_slips_are_usage_errors(indexed, tmp_path):
    batch = tmp_path / "q.txt"
    batch.write_text("retry backoff\nparse headers\n")
    r = rag("pack", "-d", indexed, "--batch", batch, "-o", batch)
    assert r.returncode == 2 and "is the --batch file" in r.stderr
    assert batch.read_text() == "retry backoff\nparse headers\n"
    r = rag("index", indexed, "-d", tmp_path)
    assert r.returncode == 2 and "give the folder once" in r.stderr
    (indexed / "rag.yaml").write_text("retrieve:\n  hybrid_enabled: true\n")
    for cmd in (("config",), ("index",)):
        r = rag(*cmd, "-d", indexed)
        assert r.returncode != 0 and "rag.yaml line 2: retrieve.hybrid_enabled fuses" in r.stderr, r.stderr


def test_question_words_may_stand_on_both_sides_of_an_option(indexed):
    r = rag("query", "retry", "-k", "1", "backoff", "-d", indexed, "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["query"] == "retry backoff"
    r = rag("query", "retry", "-k", "1", "--bogus", "-d", indexed)
    assert r.returncode == 2 and "unrecognized arguments: --bogus" in r.stderr


def test_a_batch_line_with_keys_that_are_not_read_says_so_once(indexed):
    lines = '{"id": "y", "question": "retry", "path": "docs/**", "budget": 10}\n{"id": "z", "question": "headers", "path": "x"}\n'
    r = rag("pack", "-d", indexed, "--batch", "-", "-b", "200", stdin=lines)
    assert [json.loads(line)["id"] for line in r.stdout.splitlines()] == ["y", "z"]
    assert r.stderr == ("note: standard input line 1: 'budget', 'path' are not read; a JSON line gives \"id\" and "
                        "\"question\", and options such as --path or --budget apply to every line\n")


def test_a_batch_that_cannot_be_written_names_the_file(indexed, tmp_path):
    batch = tmp_path / "q.txt"
    batch.write_text("retry\n")
    r = rag("pack", "-d", indexed, "--batch", batch, "-o", "/dev/full")
    assert r.returncode == 1 and r.stderr.strip() == "Error: cannot write /dev/full: No space left on device"


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_an_output_that_cannot_be_written_midway_says_so(tmp_path, unbuffered):
    # (more than the output's buffer holds: it was written, and failed, before the command
    # ended, as a raw "[Errno 27] File too large" past `ulimit -f` or "[Errno 28] ..." here)
    import resource
    root = tmp_path / "notes"
    make_files(root, {f"n{i}.md": f"# Note {i}\n\n" + "".join(f"The retry {i} backs off at step {j} of {i * j}. "
                                                          for j in range(40)) + "\n" for i in range(60)})
    assert rag("index", root).returncode == 0
    for target, limit, why in (("/dev/full", None, "No space left on device"),
                               # (40 KB: SQLite's -shm file beside the index takes 32 KB)
                               (tmp_path / "out.txt", 40_960, "File too large")):
        with open(target, "w") as out:
            r = subprocess.run([sys.executable, "-m", "ragweb", "pack", "-d", root, "-q", "retry backoff",
                                "-k", "60", "-b", "100000", "--format", "text"], stdout=out, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "PYTHONUNBUFFERED": unbuffered}, timeout=120,
                               preexec_fn=limit and (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))))
        assert (r.returncode, r.stderr) == (1, f"Error: cannot write the output: {why}\n"), target


def test_nothing_indexed_says_what_excludes_left_out_not_the_index_files(tmp_path):
    _tree(tmp_path, {"a.pdf": "x\n", "notes.md": "notes\n", "rag.yaml": "index:\n  excludes: ['notes.md']\n"})
    for _ in range(2):  # (the second run walks past .rag/ and its index.db)
        r = rag("index", tmp_path)
        assert r.stderr.strip() == ("note: nothing is indexed: 1 file is left out by index.excludes; "
                                    "1 file matches no index.includes glob (1 .pdf)")


def test_suggested_commands_quote_a_folder_with_spaces(tmp_path):
    folder = _tree(tmp_path / "sp ace", {"a.md": "retry\n"})
    r = rag("query", "-d", folder, "-q", "retry", "--no-auto-index")
    assert f"run `rag index '{folder}'` first" in r.stderr


def test_a_path_glob_the_shell_expanded_is_pointed_out(tmp_path):
    _tree(tmp_path, {"src/a.py": "retry = 1\n", "src/b.py": "backoff = 2\n"})
    assert rag("index", tmp_path).returncode == 0
    # what `rag query retry --path src/*.py` becomes in a shell: the glob's second file joins the question
    r = rag("query", "retry", "--path", "src/a.py", "src/b.py", cwd=tmp_path)
    assert r.returncode == 0 and "note: the question holds file names (src/b.py); if the shell expanded a " \
                                 "--path glob, quote it: --path 'src/*.py'" in r.stderr
    assert "note" not in rag("query", "retry", "--path", "src/*.py", cwd=tmp_path).stderr


def test_an_enclosing_index_that_cannot_record_a_pack_is_a_note_not_an_error(tmp_path):
    _tree(tmp_path, {"top.md": "parent retry backoff\n", "sub/child.md": "child retry backoff\n"})
    for folder in (tmp_path, tmp_path / "sub"):
        assert rag("index", folder).returncode == 0
    (tmp_path / ".rag" / "outputs").mkdir()  # (someone else's index, or a broken one: not ours to fix)
    r = rag("pack", "-q", "retry backoff", "-d", tmp_path / "sub", "-o", tmp_path / "sub" / "ctx.json")
    assert r.returncode == 0 and (tmp_path / "sub" / "ctx.json").is_file(), r.stderr
    assert f"note: the index of {tmp_path} could not record" in r.stderr and "wrote " in r.stderr
    assert (tmp_path / "sub" / ".rag" / "outputs").read_text() == "ctx.json\n"


def test_a_path_from_a_dot_in_a_subfolder_is_that_subfolder(tmp_path):
    _tree(tmp_path, {"notes.md": "retry notes\n", "src/r.py": "retry = 1  # notes\n", "docs/a.md": "retry notes a\n",
                     "docs/sub/b.md": "retry notes b\n"})
    assert rag("index", tmp_path).returncode == 0
    q = ("query", "-q", "retry notes", "--json", "-k", "10", "--no-mmr")
    assert _paths(rag(*q, "--path", ".", cwd=tmp_path / "docs")) == ["docs/a.md", "docs/sub/b.md"]
    assert _paths(rag(*q, "--path", "./sub", cwd=tmp_path / "docs")) == ["docs/sub/b.md"]
    assert _paths(rag(*q, "--path", ".", cwd=tmp_path)) == ["docs/a.md", "docs/sub/b.md", "notes.md", "src/r.py"]


def test_a_path_from_dot_dot_is_read_from_the_current_folder(tmp_path):
    # (`--path '../src/**'` from docs/ "matched no indexed file": it was matched as written)
    root = _tree(tmp_path / "proj", {"notes.md": "retry notes\n", "src/r.py": "retry = 1  # notes\n",
                                     "docs/a.md": "retry notes a\n"})
    assert rag("index", root).returncode == 0
    q = ("query", "-q", "retry notes", "--json", "-k", "10", "--no-mmr")
    assert _paths(rag(*q, "--path", "../src/**", cwd=root / "docs")) == ["src/r.py"]
    assert _paths(rag(*q, "--path", "..", cwd=root / "docs")) == ["docs/a.md", "notes.md", "src/r.py"]
    assert _paths(rag(*q, "-d", root, "--path", "../proj/docs", cwd=root)) == ["docs/a.md"]
    for cwd, path in ((root / "docs", "../../other/**"), (root, "../other")):
        r = rag(*q, "-d", root, "--path", path, cwd=cwd)
        assert (r.returncode, r.stderr) == (2, f"Error: --path {path} leads out of the indexed folder {root}: "
                                               "the paths of its index are matched, relative to that folder\n")


def test_a_path_with_dot_folders_is_the_path_a_shell_reads_and_one_outside_the_folder_is_an_error(tmp_path):
    """`--path docs/../README.md` (and `docs/./a.md`, `docs//a.md`) "matched no indexed
    file": the glob was matched as written; `--path /tmp/other.md`, a file outside the
    indexed folder, was a glob from its root that "matches no indexed file"."""
    from ragweb.cli import UsageError, _collapse_dots
    for given, glob in (("docs/../README.md", "/README.md"), ("./docs/../README.md", "/README.md"),
                        ("/docs/../README.md", "/README.md"), ("docs/./a.md", "/docs/a.md"), ("docs//a.md", "/docs/a.md"),
                        ("docs/x/../", "/docs/"), ("docs/.", "/docs/"), ("docs/..", "**"), ("x/../docs/*.md", "/docs/*.md"),
                        ("README.md", "README.md"), ("docs/**", "docs/**"), ("**/a.md", "**/a.md"), ("docs/", "docs/")):
        assert _collapse_dots(given, tmp_path) == glob, given
    root = _tree(tmp_path / "proj", {"README.md": "retry notes\n", "docs/a.md": "retry notes a\n",
                                     "docs/README.md": "retry notes b\n"})
    (tmp_path / "other.md").write_text("retry notes elsewhere\n")
    assert rag("index", root).returncode == 0
    q = ("query", "-q", "retry notes", "--json", "-k", "10", "--no-mmr")
    assert _paths(rag(*q, "--path", "docs/../README.md", cwd=root)) == ["README.md"]
    assert _paths(rag(*q, "--path", "./x/../../README.md", cwd=root / "docs")) == ["README.md"]
    r = rag("pack", "-q", "retry notes", "--format", "text", "--path", "docs//../README.md", cwd=root)
    assert r.returncode == 0 and "[README.md:L1-1]" in r.stdout and "docs/" not in r.stdout, r.stdout + r.stderr
    for path in ("docs/../../other.md", str(root / ".." / "other.md")):
        r = rag(*q, "--path", path, cwd=root)
        says = "is outside" if path.startswith("/") else "leads out of"
        assert (r.returncode, r.stderr) == (2, f"Error: --path {path} {says} the indexed folder {root}: "
                                               "the paths of its index are matched, relative to that folder\n")
    with pytest.raises(UsageError, match="'..' after \\*, a wildcard, names no one folder"):
        _collapse_dots("*/../README.md", root)


@pytest.mark.parametrize("name", ["Rag.yaml", "RAG.YAML", "rag.yml", "rag.yaml.txt"])
def test_a_config_file_under_a_near_miss_name_is_said_not_to_be_read(tmp_path, name):
    make_files(tmp_path, {name: "index:\n  excludes: ['private/']\n", "a.md": "open notes\n",
                          "private/s.md": "salary figures\n"})
    for args in (("index", tmp_path), ("config", "-d", tmp_path), ("query", "-d", tmp_path, "-q", "notes")):
        r = rag(*args)
        assert r.returncode == 0, r.stderr
        assert f"note: {name} is not read: the config file must be named rag.yaml (the defaults apply)" in r.stderr
    (tmp_path / "rag.yaml").write_text("index:\n  excludes: ['private/']\n")
    r = rag("index", tmp_path)
    assert r.returncode == 0 and "is not read" not in r.stderr


@pytest.mark.parametrize("name", ["Rag.yaml", "rag.yml", "rag.yaml.txt", ".rag.yaml"])
def test_a_config_file_under_a_near_miss_name_is_not_indexed_either(tmp_path, name):
    """A `Rag.yaml` was indexed as a YAML document (its globs and settings came back as
    answers) while the note said it is not read; it is rag's file, as a rag.yaml is, at the
    root or below it, even when index.excludes replaces the default list."""
    make_files(tmp_path, {name: "index:\n  excludes: ['private/']\n", f"sub/{name}": "pack:\n  lean: true\n",
                          "a.md": "open notes on excludes and lean packs\n"})
    r = rag("index", tmp_path)
    assert r.returncode == 0 and "1 added" in r.stdout, r.stdout
    assert _paths(rag("query", "-d", tmp_path, "-q", "excludes lean", "--json")) == ["a.md"]
    (tmp_path / "rag.yaml").write_text("index:\n  excludes: ['private/']\n")  # (replaces the defaults)
    r = rag("index", tmp_path)
    assert r.returncode == 0 and "0 added" in r.stdout, r.stdout
    assert _paths(rag("query", "-d", tmp_path, "-q", "excludes lean", "--json")) == ["a.md"]


def test_files_left_out_only_for_the_case_of_their_suffix_are_named(tmp_path):
    make_files(tmp_path, {"a.md": "open notes\n", "docs/GUIDE.MD": "guide\n", "NOTES.TXT": "read me\n",
                          "logo.PNG": "x"})
    r = rag("index", tmp_path)
    assert r.returncode == 0 and "1 added" in r.stdout
    assert ("note: 2 files are left out for the case of their suffix (NOTES.TXT, docs/GUIDE.MD): globs are "
            "case-sensitive, so add '**/*.MD', '**/*.TXT' to index.includes to index them (a list in rag.yaml "
            "replaces the default one: keep its globs too, as `rag config` shows them)") in r.stderr
    (tmp_path / "a.md").unlink()
    r = rag("index", tmp_path)
    assert "match no index.includes glob (1 .MD, 1 .PNG, 1 .TXT)" in r.stderr  # (as written, not as .md)


def test_an_absolute_path_option_names_that_file_even_with_brackets_and_a_near_miss_is_pointed_out(tmp_path):
    make_files(tmp_path, {"pages/[id].tsx": "export const retry = 1\n", "pages/i.tsx": "retry here too\n",
                          "docs/README.txt": "retry notes\n", "pages/x{a,b}.md": "retry braces\n",
                          "pages/xa.md": "retry a\n"})
    assert rag("index", tmp_path).returncode == 0
    for name in ("[id].tsx", "x{a,b}.md"):
        r = rag("query", "-d", tmp_path, "-q", "retry", "--path", tmp_path / "pages" / name, "--json")
        assert r.returncode == 0, r.stderr
        assert [h["path"] for h in json.loads(r.stdout)["results"]] == [f"pages/{name}"]
    r = rag("query", "-d", tmp_path, "-q", "retry", "--path", "pages/[id].tsx", "--json")  # (a glob: [id] is i or d)
    assert [h["path"] for h in json.loads(r.stdout)["results"]] == ["pages/i.tsx"]
    for glob, hint in [("readme.txt", "such as docs/README.txt (paths are case-sensitive)"),
                       ("docs\\README.txt", "such as docs/README.txt (with '/' between folders)")]:
        r = rag("query", "-d", tmp_path, "-q", "retry", "--path", glob)
        assert r.returncode == 2 and r.stderr.rstrip().endswith(hint), r.stderr


def test_text_the_terminal_cannot_show_is_escaped_and_json_is_always_utf8(tmp_path):
    """On a terminal in Latin-1 or ASCII: text output escapes what it cannot show (it was a
    traceback), JSON and XML are UTF-8 (`rag pack > ctx.json` was Latin-1 that runprompt refused)."""
    (tmp_path / "cafe.md").write_text("# Café\nretry café — “quoted” 日本\n", encoding="utf-8")
    assert rag("index", tmp_path).returncode == 0
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}  # (as LANG=en_US.ISO-8859-1 does, for fewer characters)

    def run(*args, stdin=b""):
        r = subprocess.run([sys.executable, "-m", "ragweb", *map(str, args)], input=stdin,
                           capture_output=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        return r.stdout

    assert "# Caf\\u00e9\n   retry caf\\u00e9 \\u2014 \\u201cquoted\\u201d \\u65e5\\u672c" in run(
        "query", "-d", tmp_path, "-q", "retry").decode("ascii")
    hit = json.loads(run("query", "-d", tmp_path, "-q", "retry", "--json").decode("utf-8"))["results"][0]
    assert hit["heading"] == "Café" and "— “quoted” 日本" in hit["text"]
    for cmd in ("query", "pack"):
        line = json.loads(run(cmd, "-d", tmp_path, "--batch", "-", stdin=b"retry\n").decode("utf-8"))
        assert "日本" in json.dumps(line, ensure_ascii=False)
    (tmp_path / "ctx.json").write_bytes(run("pack", "-d", tmp_path, "-q", "retry"))
    assert "retry caf\\u00e9 \\u2014" in run("runprompt", "--runtime", "--ctx", tmp_path / "ctx.json").decode("ascii")
    assert "日本" in ElementTree.fromstring(run("pack", "-d", tmp_path, "-q", "retry", "--format", "xml")).find(
        "snippet").text


def test_a_folder_whose_name_is_not_utf8_is_indexed_and_named_with_its_byte_escaped(tmp_path):
    folder = os.fsencode(tmp_path) + b"/r\xff"
    os.mkdir(folder)
    with open(folder + b"/notes.md", "wb") as f:
        f.write(b"# Notes\nretry\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUTF8", "PYTHONIOENCODING")}
    r = subprocess.run([sys.executable, "-m", "ragweb", "index", folder], capture_output=True, timeout=120,
                       env={**env, "LC_ALL": "C.UTF-8"})
    assert r.returncode == 0, r.stderr  # (it committed, then "surrogates not allowed")
    assert r.stdout.decode("utf-8").startswith(f"indexed {tmp_path}/r\\xff: 1 added")


def _without_unbuffered():
    return {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # (buffered, as a user's)


def test_a_reader_that_goes_away_ends_the_output_quietly(indexed, tmp_path):
    """`rag query ... | grep -q word` and the like: exit 0, not "Exception ignored ...
    BrokenPipeError" and 120 from the flush at exit; a broken standard error too."""
    def run(*args, **streams):
        gone, end = os.pipe()
        os.close(gone)  # (the reader has gone before rag writes)
        try:
            return subprocess.run([sys.executable, "-m", "ragweb", *map(str, args)], timeout=120,
                                  env=_without_unbuffered(), **{k: end if v is None else v for k, v in streams.items()})
        finally:
            os.close(end)
    for args in (("query", "-d", indexed, "-q", "retry"), ("config", "-d", indexed), ("--help",), ("--version",)):
        r = run(*args, stdout=None, stderr=subprocess.PIPE)
        assert (r.returncode, r.stderr) == (0, b""), args
    for i in range(30):  # (a warning each: `rag index --rebuild w 2>&1 | head -1`)
        (tmp_path / os.fsdecode(b"bad%d\xff.md" % i)).write_text("x")
    assert run("index", "--rebuild", tmp_path, stdout=subprocess.DEVNULL, stderr=None).returncode == 0


def test_a_closed_standard_error_does_not_stop_a_run(tmp_path):
    (tmp_path / "notes.md").write_text("# Notes\nretry\n")
    (tmp_path / os.fsdecode(b"bad\xff.md")).write_text("x")  # (a warning, written nowhere)
    r = subprocess.run([sys.executable, "-m", "ragweb", "index", tmp_path], stdout=subprocess.PIPE, text=True,
                       timeout=120, preexec_fn=lambda: os.close(2))
    assert r.returncode == 0 and r.stdout.startswith(f"indexed {tmp_path}: 1 added")


def test_a_full_temporary_folder_does_not_fail_a_run(tmp_path):
    """SQLite's temporary files are in memory: $TMPDIR full was "the disk is full"."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", tmp],
                                           capture_output=True).returncode:
        pytest.skip("needs root, to mount a small tmpfs")
    try:
        with open(tmp / "fill", "wb", buffering=0) as f:
            with pytest.raises(OSError):
                while True:
                    f.write(b"\0" * 4096)
        import random
        rnd = random.Random(1)
        corpus = tmp_path / "corpus"
        corpus.mkdir()
        for n in range(60):  # (about 1 MB: enough for SQLite to spill to a temporary file)
            (corpus / f"f{n}.md").write_text("\n\n".join(" ".join(f"w{rnd.randrange(20000)}" for _ in range(60))
                                                         for _ in range(40)))
        r = subprocess.run([sys.executable, "-m", "ragweb", "index", corpus], capture_output=True, text=True,
                           timeout=300, env={**os.environ, "TMPDIR": str(tmp)})
        assert r.returncode == 0, r.stderr
    finally:
        subprocess.run(["umount", tmp])


def test_end_of_input_at_an_offer_to_index_is_no(sample_root):
    out = run_on_terminal(["query", "-q", "parse headers", "-d", sample_root, "-k", "1"], "\x04")
    assert "Index it now? [Y/n]" in out and "no index at" in out and not (sample_root / ".rag" / "index.db").exists()
    assert rag("index", sample_root).returncode == 0
    (sample_root / "README.md").write_text("# pigeonpost\n\nparse headers quickly\n")
    out = run_on_terminal(["query", "-q", "parse headers", "-d", sample_root, "-k", "1"], "\x04")
    assert "Re-index now? [Y/n]" in out and "updated" not in out and "1. " in out
    assert "changed since" in rag("query", "-q", "parse headers", "-d", sample_root).stderr


def _slow_corpus(folder) -> None:
    """Files that take `rag index` a few seconds (distinct words: about 6 s here; the same
    words repeated took 0.4 s, and a signal sent as the run started sometimes came after it)."""
    import random
    rnd = random.Random(1)
    for n in range(150):
        (folder / f"f{n}.md").write_text("\n\n".join(f"retry {n} {i} backoff " + " ".join(
            f"w{rnd.randrange(200_000)}" for _ in range(20)) for i in range(150)))


def _poll(found, seconds=60):
    import time
    deadline = time.time() + seconds
    while not found():
        assert time.time() < deadline
        time.sleep(0.02)


INTERRUPTED_IN_IMPORT = r"""
import importlib.abc, os, runpy, signal, sys
module = sys.argv.pop(1)
class CtrlC(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == module:  # (Ctrl-C as rag imports that module)
            os.kill(os.getpid(), signal.SIGINT)
sys.meta_path.insert(0, CtrlC())
signal.signal(signal.SIGINT, signal.default_int_handler)  # (as on a terminal, whatever the test runner's)
sys.argv[0] = "rag"
runpy.run_module("ragweb", run_name="__main__")  # (python -m ragweb)
"""


@pytest.mark.parametrize("module", ["ragweb.cli", "ragweb.files", "ragweb.webbuild"])
def test_ctrl_c_while_rag_starts_is_as_quiet_as_later(tmp_path, module):
    """A Ctrl-C in the first tenth of a second (`rag` importing its modules, reading its
    arguments) printed a traceback from the module being imported."""
    r = subprocess.run([sys.executable, "-c", INTERRUPTED_IN_IMPORT, module, "query", "-q", "retry", "-d", tmp_path],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (130, "\ninterrupted; the index is as it was before this run\n")


INTERRUPTED_IN_CALL = r"""
import os, runpy, signal, sys
function = sys.argv.pop(1)
def ctrl_c(frame, event, arg):
    if event == "call" and frame.f_code.co_qualname == function:  # (Ctrl-C as rag calls that function)
        sys.setprofile(None)
        os.kill(os.getpid(), signal.SIGINT)
signal.signal(signal.SIGINT, signal.default_int_handler)  # (as on a terminal, whatever the test runner's)
sys.setprofile(ctrl_c)
sys.argv[0] = "rag"
runpy.run_module("ragweb", run_name="__main__")  # (python -m ragweb)
"""


@pytest.mark.parametrize("function", ["_give_back_free_pages", "IndexReport.summary"])
def test_ctrl_c_after_an_index_run_was_saved_says_so(tmp_path, function):
    """Ctrl-C after the run's commit (tidying the file, printing the report) said "nothing
    was indexed" (a first run) or "the index is as it was", though the run was saved."""
    (tmp_path / "notes.md").write_text("# Notes\nretry backoff\n")
    r = subprocess.run([sys.executable, "-c", INTERRUPTED_IN_CALL, function, "index", tmp_path],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (130, "\ninterrupted after this run's changes were saved: the index "
                                             "is up to date\n")
    assert _paths(rag("query", "-d", tmp_path, "-q", "retry backoff", "--json")) == ["notes.md"]


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_clean_up_as_ctrl_c_does(tmp_path, sig):
    """A killed --rebuild left index.db.rebuild-PID, a killed `pack --batch -o` its hidden
    temporary file; the exit code is 128 + the signal, as a shell reports one it ended."""
    import signal
    sig = getattr(signal, sig)

    def start(*args, **kw):
        return subprocess.Popen([sys.executable, "-m", "ragweb", *map(str, args)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, **kw,
                                preexec_fn=lambda: signal.signal(sig, signal.SIG_DFL))  # (not as pytest's)
    (tmp_path / "notes.md").write_text("# Notes\nretry backoff\n")
    assert rag("index", tmp_path).returncode == 0
    _slow_corpus(tmp_path)
    proc = start("index", "--rebuild", "--quiet", tmp_path)
    _poll(lambda: any("rebuild" in p.name for p in (tmp_path / ".rag").iterdir()))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig and "interrupted; the index is as it was" in err.decode()
    assert sorted(p.name for p in (tmp_path / ".rag").iterdir() if "rebuild" in p.name) == []
    assert _paths(rag("query", "-d", tmp_path, "-q", "retry backoff", "--json")) == ["notes.md"]  # (the old index)
    out = tmp_path / "out.jsonl"
    proc = start("pack", "-d", tmp_path, "--no-auto-index", "--batch", "-", "-o", out, stdin=subprocess.PIPE)
    proc.stdin.write(b"retry backoff\n")
    proc.stdin.flush()
    _poll(lambda: any(p.name.startswith(".out.jsonl.") and p.stat().st_size for p in tmp_path.iterdir()))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig
    assert err.decode().endswith(f"\ninterrupted; -o {out} was not written, and the index is as it was\n")
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl.")]


def test_a_current_folder_deleted_or_unreadable_is_named(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    rag_cmd = f'"{sys.executable}" -m ragweb'
    r = subprocess.run(["sh", "-c", f"cd '{gone}' && rmdir '{gone}' && exec {rag_cmd} query -q retry"],
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (1, f"Error: the current folder {gone} no longer exists (deleted or "
                                           "moved); cd to a folder that does, or name one with -d\n")
    locked = tmp_path / "locked"
    locked.mkdir()
    as_user = ""
    if os.geteuid() == 0:  # (root reads any folder, unless it gives up the capabilities to)
        if subprocess.run(["setpriv", "--version"], capture_output=True).returncode:
            pytest.skip("root reads an unreadable folder; setpriv drops the capability")
        as_user = "setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search --"
    try:
        for cmd in ("query -q retry", "index", "config"):
            r = subprocess.run(["sh", "-c", f"cd '{locked}' && chmod 000 . && exec {as_user} {rag_cmd} {cmd}"],
                               capture_output=True, text=True, timeout=120)
            assert (r.returncode, r.stderr) == (1, f"Error: cannot read the current folder {locked}: "
                                                   "Permission denied\n"), cmd
    finally:
        locked.chmod(0o755)


def _as_user() -> str:
    """A command prefix that runs `rag` without root's power to read and write any file (for
    the permission tests), "" when not root."""
    if os.geteuid() != 0:
        return ""
    if subprocess.run(["setpriv", "--version"], capture_output=True).returncode:
        pytest.skip("root reads an unreadable folder; setpriv drops the capability")
    return "setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search --"


def test_an_index_folder_or_file_this_user_may_not_read_or_write_is_named(indexed):
    """A folder on the way to the index that cannot be entered, or an index file of another
    user's, is said to be so, with what to do: it was a raw "[Errno 13] Permission denied:
    '.../.rag'", or "the disk could not be read or written (is it full, or read-only?)"."""
    as_user, rag_cmd = _as_user(), f'"{sys.executable}" -m ragweb'
    db = indexed / ".rag" / "index.db"
    batch = indexed.parent / "questions.txt"
    batch.write_text("retry backoff\n")
    remedy = f"(its permissions); fix them (chmod, chown), or replace the index with `rag index --rebuild {indexed}`\n"
    cases = [(indexed, 0o000, ["index", "query -q retry"],
              f"Error: cannot read folder {indexed} (permission denied): fix its permissions (chmod), "
              "or ask its owner\n"),
             (indexed / ".rag", 0o000, ["index", "query -q retry"],
              f"Error: cannot read folder {indexed / '.rag'} (permission denied): fix its permissions "
              "(chmod), or ask its owner\n"),
             (db, 0o000, ["index", "query -q retry"], f"Error: cannot open {db}: this user may not read it {remedy}"),
             (db, 0o444, ["index"], f"Error: cannot open {db}: this user may not write it {remedy}"),
             # (a file that is there but cannot be read: a runtime error, as an index's, not a usage one)
             (batch, 0o000, [f"pack --batch '{batch}'"], f"Error: cannot read the batch file {batch}: Permission denied\n")]
    for path, mode, commands, said in cases:
        before = path.stat().st_mode
        try:
            for cmd in commands:
                r = subprocess.run(["sh", "-c", f"chmod {mode:o} '{path}' && exec {as_user} {rag_cmd} {cmd} "
                                                f"-d '{indexed}' --no-auto-index" if cmd != "index" else
                                    f"chmod {mode:o} '{path}' && exec {as_user} {rag_cmd} index '{indexed}'"],
                                   capture_output=True, text=True, timeout=120)
                assert (r.returncode, r.stderr) == (1, said), (path, cmd)
        finally:
            path.chmod(before)
    try:  # (without -d: the index here, not one above it)
        r = subprocess.run(["sh", "-c", f"cd '{indexed}' && chmod 000 .rag && exec {as_user} {rag_cmd} query -q retry"],
                           capture_output=True, text=True, timeout=120)
        assert (r.returncode, r.stderr) == (1, "Error: cannot read folder .rag (permission denied): fix its "
                                               "permissions (chmod), or ask its owner\n")
    finally:
        (indexed / ".rag").chmod(0o755)
    r = subprocess.run(["sh", "-c", f"chmod 444 '{db}' && exec {as_user} {rag_cmd} query -q retry -d '{indexed}'"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("1. "), r.stderr  # (a query only reads it)
    # an index in a folder this user cannot write is read as it is, without its log files: an
    # unreadable -shm and an empty -wal left beside it (a crashed run of their owner) are no
    # matter (a reviewer's repro: "may not read index.db-shm beside it", and a --rebuild to do)
    logs = [db.with_name("index.db-wal"), db.with_name("index.db-shm")]
    for log in logs:
        log.write_bytes(b"")
        log.chmod(0o000)
    try:
        r = subprocess.run(["sh", "-c", f"chmod 555 '{indexed / '.rag'}' && exec {as_user} {rag_cmd} query -q retry "
                                        f"-d '{indexed}'"], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stdout.startswith("1. "), r.stderr
    finally:
        (indexed / ".rag").chmod(0o755)
        for log in logs:
            log.unlink()


CHANGED_IN_CALL = r"""
import runpy, subprocess, sys
function, command = sys.argv.pop(1), sys.argv.pop(1)
def change(frame, event, arg):
    if event == "call" and frame.f_code.co_qualname == function:  # (the shell command as rag calls that function)
        sys.setprofile(None)
        subprocess.run(command, shell=True, check=True)
sys.setprofile(change)
sys.argv[0] = "rag"
runpy.run_module("ragweb", run_name="__main__")  # (python -m ragweb)
"""


def _rag_changed_in_call(function: str, command: str, *args, as_user: str = ""):
    """`rag ARGS`, with the shell ``command`` run as rag calls ``function`` (by ``as_user``'s
    prefix: root without its power over permissions)."""
    return subprocess.run([*as_user.split(), sys.executable, "-c", CHANGED_IN_CALL, function, command, *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_an_index_folder_made_read_only_during_a_rebuild_is_named(indexed):
    """`.rag` made read-only while `rag index --rebuild` ran: "[Errno 13] Permission denied:
    '.../index.db.rebuild-PID-wal'" (the rebuild's own leftovers could not be deleted, and that
    hid the error), and each later run said the same of them."""
    as_user, rag_dir = _as_user(), indexed / ".rag"
    db = rag_dir / "index.db"
    before = db.read_bytes()
    try:
        r = _rag_changed_in_call("_index_one", f"chmod 555 '{rag_dir}'", "index", "--rebuild", indexed, as_user=as_user)
        assert (r.returncode, r.stderr) == (1, f"Error: the rebuilt index could not be written whole: this user may "
                                               f"not write its folder {rag_dir} (its permissions); fix them (chmod, "
                                               "chown), or ask its owner (the index is as it was before this command)\n")
        assert db.read_bytes() == before
        r = subprocess.run([*as_user.split(), sys.executable, "-m", "ragweb", "index", indexed], capture_output=True,
                           text=True, timeout=120)
        assert (r.returncode, r.stderr) == (1, f"Error: cannot write the index {db}: this user may not write its "
                                               f"folder {rag_dir} (its permissions); fix them (chmod, chown), or ask "
                                               "its owner\n")
    finally:
        rag_dir.chmod(0o755)
    assert rag("index", indexed).returncode == 0
    assert sorted(p.name for p in rag_dir.iterdir() if "rebuild" in p.name) == []


def test_an_index_log_made_immutable_during_a_run_is_named_not_a_full_disk(indexed):
    """The index's log (`index.db-wal`) made unwritable while `rag index` ran (`chattr +i`: a
    mode change does not touch a file this process has open): "the disk could not be read or
    written (is it full, or read-only?)". The index is as it was, and the next run indexes."""
    wal = indexed / ".rag" / "index.db-wal"
    (indexed / "zeppelin.md").write_text("# Zeppelins\n\nThe zeppelin mooring mast.\n")
    probe = indexed / ".rag" / "probe"
    probe.touch()
    if subprocess.run(["chattr", "+i", probe], capture_output=True).returncode:
        probe.unlink()
        pytest.skip("chattr +i is refused here (no CAP_LINUX_IMMUTABLE)")
    subprocess.run(["chattr", "-i", probe])
    probe.unlink()
    try:
        r = _rag_changed_in_call("_index_one", f"chattr +i '{wal}'", "index", indexed)
        assert (r.returncode, r.stderr) == (1, f"Error: cannot write {indexed / '.rag' / 'index.db'}: this user may "
                                               "not write index.db-wal beside it (not by its permissions: it is "
                                               f"immutable, see `lsattr`, or on a read-only mount); undo that: `chattr "
                                               f"-i {wal}` (as root), or mount it read-write (disk I/O error); the "
                                               "index is as it was before this command\n")
    finally:
        subprocess.run(["chattr", "-i", wal])
    assert "zeppelin.md" not in _paths(rag("query", "-d", indexed, "-q", "zeppelin mooring", "--json", "--no-auto-index"))
    r = rag("index", indexed)
    assert r.returncode == 0 and "1 added" in r.stdout, r.stderr


def test_an_immutable_index_log_names_chattr_not_a_rebuild_that_would_fail_too(indexed):
    """An index log made immutable (`chattr +i`) was "undo that, or replace the index with
    `rag index --rebuild`", and the rebuild failed too, with "[Errno 1] Operation not
    permitted: '.../index.db-wal'": it cannot delete that log, nor replace an immutable index."""
    rag_dir = indexed / ".rag"
    db, wal = rag_dir / "index.db", rag_dir / "index.db-wal"
    wal.touch()
    if subprocess.run(["chattr", "+i", wal], capture_output=True).returncode:
        pytest.skip("chattr +i is refused here (no CAP_LINUX_IMMUTABLE)")
    try:
        why = ("this user may not write index.db-wal beside it (not by its permissions: it is immutable, see "
               f"`lsattr`, or on a read-only mount); undo that: `chattr -i {wal}` (as root), or mount it read-write")
        r = rag("index", indexed)
        assert (r.returncode, r.stderr) == (1, f"Error: cannot open {db}: {why}\n")
        r = rag("index", "--rebuild", indexed)
        assert (r.returncode, r.stderr) == (1, f"Error: cannot replace {db} with the rebuilt index: {why}; the "
                                               "index is as it was before this command\n")
    finally:
        subprocess.run(["chattr", "-i", wal])
    assert sorted(p.name for p in rag_dir.iterdir() if "rebuild" in p.name) == []
    assert rag("index", indexed).returncode == 0


@pytest.mark.parametrize("frozen", ["index.db", "index.db-wal"])
def test_a_rebuild_onto_an_immutable_index_fails_before_it_builds(indexed, frozen):
    """`rag index --rebuild` with index.db (or its log) immutable built the whole new index
    first (minutes, on a large folder) and only then failed to swap it in. Now it says so
    before building, with the same message, and the .rag folder is as it was."""
    rag_dir = indexed / ".rag"
    db, part = rag_dir / "index.db", rag_dir / frozen
    part.touch()
    before = {p.name: p.read_bytes() for p in rag_dir.iterdir()}
    if subprocess.run(["chattr", "+i", part], capture_output=True).returncode:
        pytest.skip("chattr +i is refused here (no CAP_LINUX_IMMUTABLE)")
    built = indexed.parent / "built"
    try:
        r = _rag_changed_in_call("_index_into", f"touch '{built}'", "index", "--rebuild", indexed)
        assert (r.returncode, r.stderr) == (1, f"Error: cannot replace {db} with the rebuilt index: this user may "
                                               f"not write {'it' if frozen == 'index.db' else f'{frozen} beside it'} "
                                               "(not by its permissions: it is immutable, see `lsattr`, or on a "
                                               f"read-only mount); undo that: `chattr -i {part}` (as root), or mount "
                                               "it read-write; the index is as it was before this command\n")
    finally:
        subprocess.run(["chattr", "-i", part])
    assert not built.exists()  # (no index was built)
    assert {p.name: p.read_bytes() for p in rag_dir.iterdir()} == before


@pytest.mark.parametrize("frozen", ["index.db", "index.db-shm"])
def test_a_rebuild_that_cannot_replace_an_immutable_index_keeps_its_log(indexed, frozen):
    """With index.db (or its -shm file) immutable, a rebuild deleted the index's log before
    it failed to replace the index (or delete that file), and said "the index is as it was":
    the writes in that log (a run killed before they were merged into the file) were lost."""
    rag_dir = indexed / ".rag"
    db, wal = rag_dir / "index.db", rag_dir / "index.db-wal"
    writer = ("import os, sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.execute('PRAGMA wal_autocheckpoint=0')\n"
              "with c:\n    c.execute('CREATE TABLE kept_in_the_log(x)')\nos._exit(0)\n")  # (never merged)
    subprocess.run([sys.executable, "-c", writer, db], check=True)
    assert wal.stat().st_size > 0
    if subprocess.run(["chattr", "+i", rag_dir / frozen], capture_output=True).returncode:
        pytest.skip("chattr +i is refused here (no CAP_LINUX_IMMUTABLE)")
    try:
        r = rag("index", "--rebuild", indexed)
        assert r.returncode == 1 and r.stderr.startswith(f"Error: cannot replace {db} with the rebuilt index: "), r.stderr
        assert r.stderr.endswith("; the index is as it was before this command\n"), r.stderr
    finally:
        subprocess.run(["chattr", "-i", rag_dir / frozen])
    assert wal.stat().st_size > 0
    assert sorted(p.name for p in rag_dir.iterdir() if "rebuild" in p.name) == []
    import sqlite3
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'kept_in_the_log'").fetchall() != []
    conn.close()


def test_no_color_and_a_dumb_terminal_turn_highlighting_off(indexed):
    args = ["query", "-q", "parse headers", "-d", indexed, "-k", "1"]
    assert "\x1b[1;33m" in run_on_terminal(args, "", env={"NO_COLOR": ""})  # (https://no-color.org: empty is unset)
    for env in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        out = run_on_terminal(args, "", env=env)
        assert "1. " in out and "\x1b" not in out, env


def test_files_a_no_gitignore_run_indexed_are_not_called_deleted_by_a_query(sample_root):
    (sample_root / ".gitignore").write_text("scratch/\n")
    (sample_root / "scratch").mkdir()
    (sample_root / "scratch" / "notes.md").write_text("# Scratch notes\nThe zeppelin hangar scratch.\n")
    assert rag("index", sample_root, "--no-gitignore").returncode == 0
    assert "scratch/notes.md:L" in rag("query", "-d", sample_root, "-q", "zeppelin hangar", "--no-auto-index").stdout
    r = rag("query", "-d", sample_root, "-q", "zeppelin hangar")
    assert r.returncode == 0 and "changed since the last index" not in r.stderr, r.stderr
    # an edit is still seen, and the offer to re-index keeps the run's choice
    (sample_root / "scratch" / "notes.md").write_text("# Scratch notes\nThe zeppelin hangar scratch, longer.\n")
    r = rag("query", "-d", sample_root, "-q", "zeppelin hangar")
    assert "1 file(s) changed since the last index; run `rag index " in r.stderr and "--no-gitignore`" in r.stderr
    out = run_on_terminal(["query", "-d", sample_root, "-q", "zeppelin hangar", "-k", "1"], "\n")
    assert "changed  scratch/notes.md" in out and "scratch/notes.md:L" in out and "deleted" not in out, out
    # a plain `rag index` applies the ignore files again
    r = rag("index", sample_root)
    assert "1 removed" in r.stdout, r.stdout
    assert "scratch/notes.md" not in rag("query", "-d", sample_root, "-q", "zeppelin hangar").stdout


def test_a_first_run_stopped_part_way_says_nothing_was_indexed(tmp_path):
    import signal

    _slow_corpus(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "ragweb", "index", "--quiet", tmp_path], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    _poll(lambda: (tmp_path / ".rag" / "index.db").exists())
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    # ("the index is as it was before this run" read as if there were one)
    assert proc.returncode == 143 and err.decode().endswith(
        "interrupted; nothing was indexed (it was the folder's first run): run `rag index` again to index it\n")
    r = rag("query", "-d", tmp_path, "-q", "retry backoff", "--no-auto-index")
    # (stopped before its tables were written, the file is empty, and says so)
    assert (r.stdout == f"no results (the index is empty: no `rag index` run of {tmp_path} has finished; run it again)\n"
            or r.stderr == f"Error: {tmp_path / '.rag' / 'index.db'} is empty; run `rag index` first\n"), r
    # stopped after its tables were written (made here without a run, to be sure of it)
    (tmp_path / ".rag" / "index.db").unlink()
    from ragweb.engine import Engine
    Engine.open(tmp_path / ".rag" / "index.db").close()
    r = rag("query", "-d", tmp_path, "-q", "retry backoff", "--no-auto-index")
    assert r.stdout == f"no results (the index is empty: no `rag index` run of {tmp_path} has finished; run it again)\n"


PACK_QUESTIONS = {"ok": "how do retries back off", "weak": "header zebra quantum", "none": "zeppelin hangar"}


def test_a_packed_context_is_known_by_its_text_however_it_was_written_and_after_rag_is_deleted(indexed):
    """`.rag/outputs` names only the packs written under an index's folder, by name: a pack is
    also known by its shape (every format, with or without the evidence warning, a batch,
    a JSON pack edited and indented by hand), so deleting `.rag` does not index them; a
    README that shows an example pack is indexed."""
    packs = indexed / "packs"
    packs.mkdir()
    for fmt, ext in (("json", "json"), ("markdown", "md"), ("xml", "xml"), ("text", "txt")):
        for name, q in PACK_QUESTIONS.items():
            r = rag("pack", "-d", indexed, "-q", q, "-b", "300", "--format", fmt, "-o", packs / f"{name}.{ext}")
            assert r.returncode == 0, r.stderr
    (packs / "questions.txt").write_text("\n".join(PACK_QUESTIONS.values()) + "\n")
    r = rag("pack", "-d", indexed, "--batch", packs / "questions.txt", "-o", packs / "batch.json")
    assert r.returncode == 0 and len((packs / "batch.json").read_text().splitlines()) == 3, r.stderr
    (packs / "questions.txt").unlink()
    assert "> warning: the evidence packed is weak" in (packs / "weak.md").read_text()
    assert (packs / "none.txt").read_text().startswith("warning: the packed context holds no evidence")
    edited = json.loads((packs / "ok.json").read_text())
    del edited["evidence"], edited["evidence_score"]
    edited["snippets"][0]["text"] += " (checked)"
    (indexed / "edited.json").write_text(json.dumps(edited, indent=4, sort_keys=True))  # (by hand: not listed)
    example = (packs / "ok.txt").read_text()
    (indexed / "docs" / "example.md").write_text(
        "# What a pack looks like\n\nA pack of `rag pack --format text` reads so:\n\n```\n" + example
        + "```\n\nAnd in JSON:\n\n```json\n" + (packs / "ok.json").read_text() + "\n```\n")
    (indexed / "notes.txt").write_text("[draft] how retries back off\n\n300/400 tokens\n")  # (not a pack's first line)
    shutil.rmtree(indexed / ".rag")
    r = rag("index", indexed)
    assert r.returncode == 0 and "10 added" in r.stdout, r.stdout
    n = len(list(packs.iterdir())) + 1  # (and edited.json)
    assert n == 14 and f"skipped ({n} packed contexts)" in r.stdout and r.stderr == "", r.stdout
    hits = _paths(rag("query", "-d", indexed, "-q", "how do retries back off", "--json", "-k", "50"))
    assert "docs/example.md" in hits and "notes.txt" in hits
    assert not [h for h in hits if h.startswith("packs/") or h == "edited.json"], hits
    # known by its text whatever its name: written as the user's own file, or moved
    (packs / "ok.json").rename(indexed / "answer.txt")
    r = rag("index", indexed)
    assert "0 added" in r.stdout and "1 removed" not in r.stdout, r.stdout


def test_a_pack_written_before_an_index_above_it_or_reached_through_a_link_is_not_indexed(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    _tree(root, {"docs/i.md": "inside retry backoff text\n", "sub/child.md": "child retry backoff\n"})
    _tree(outside, {"o.md": "outside retry backoff text\n"})
    assert rag("index", root / "sub").returncode == 0
    assert rag("index", outside).returncode == 0
    # written under sub before root had an index; written outside, reached through a link
    assert rag("pack", "-q", "retry backoff", "-d", root / "sub", "-o", root / "sub" / "ctx.md",
               "--format", "markdown").returncode == 0
    assert rag("pack", "-q", "retry backoff", "-d", outside, "-o", outside / "ctx.json").returncode == 0
    (root / "ext").symlink_to(outside)
    (root / "docs" / "latest.json").symlink_to(outside / "ctx.json")  # (another name: ctx.json is not under root)
    r = rag("index", root)
    # (ext/ctx.json, walked after the link to it, is that file: read once, by the link's name)
    assert r.returncode == 0 and "3 added" in r.stdout and "(2 packed contexts)" in r.stdout, r.stdout
    assert "1 symlink not followed" in r.stdout and r.stderr.endswith(": ext/ctx.json\n"), r.stderr
    assert _paths(rag("query", "-q", "retry backoff", "-d", root, "--json", "-k", "20")) == [
        "docs/i.md", "ext/o.md", "sub/child.md"]


def test_a_link_to_a_recorded_pack_under_another_name_is_not_indexed(indexed):
    # a pack edited out of its shape is still left out while .rag/outputs lists it: so is a
    # link to it, whatever the link's name
    r = rag("pack", "-d", indexed, "-q", "retry backoff", "--format", "markdown", "-o", indexed / "ctx.md")
    assert r.returncode == 0, r.stderr
    with open(indexed / "ctx.md", "a") as f:
        f.write("\nmy own retry backoff notes on it\n")
    (indexed / "latest.md").symlink_to("ctx.md")
    r = rag("index", indexed)
    assert r.returncode == 0 and "0 added" in r.stdout, r.stdout
    assert not {"ctx.md", "latest.md"} & set(_paths(rag("query", "-d", indexed, "-q", "retry backoff", "--json",
                                                        "-k", "50")))


def test_a_broken_link_to_a_folder_or_a_file_keeps_what_was_indexed_through_it(tmp_path):
    """A link whose target is gone this time (a drive not mounted, a share away) is unreadable,
    not deleted: the folder's link is named too, and a pack written through it stays listed.
    A link the user removed takes its files out of the index."""
    root, share = tmp_path / "root", tmp_path / "share"
    _tree(root, {"own.md": "own notes\n"})
    _tree(share, {"docs/a.md": "zeppelin hangar by the sea\n", "docs/sub/b.md": "zeppelin over the hills\n",
                  "note.md": "a note on a zeppelin\n"})
    (root / "docs").symlink_to(share / "docs")
    (root / "note.md").symlink_to(share / "note.md")
    r = rag("index", root)
    assert "4 added" in r.stdout, r.stdout
    assert rag("pack", "-d", root, "-q", "zeppelin", "-o", root / "docs" / "ctx.json").returncode == 0
    assert (root / ".rag" / "outputs").read_text() == "docs/ctx.json\n"
    share.rename(tmp_path / "away")
    r = rag("index", root)
    assert r.returncode == 0 and "0 removed" in r.stdout and "2 unreadable" in r.stdout, r.stdout
    assert "warning: docs: unreadable: broken symlink" in r.stderr
    assert "warning: note.md: unreadable: broken symlink" in r.stderr
    found = ["docs/a.md", "docs/sub/b.md", "note.md"]
    assert _paths(rag("query", "-d", root, "-q", "zeppelin", "--json", "--no-auto-index")) == found
    assert (root / ".rag" / "outputs").read_text() == "docs/ctx.json\n"
    (tmp_path / "away").rename(share)
    r = rag("index", root)
    assert "0 added" in r.stdout and "0 removed" in r.stdout and r.stderr == "", r
    # the user's own choice: the links removed take their files out
    share.rename(tmp_path / "away")
    (root / "docs").unlink()
    (root / "note.md").unlink()
    r = rag("index", root)
    assert "3 removed" in r.stdout and "unreadable" not in r.stdout and r.stderr == "", r
    assert (root / ".rag" / "outputs").read_text() == ""


@pytest.mark.parametrize("rebuild", ["rag.yaml", "--rebuild"])
def test_a_rebuild_keeps_what_was_indexed_in_a_folder_it_cannot_read_this_time(tmp_path, rebuild):
    """A folder that cannot be read this time (chmod 000) keeps what was indexed of it, also in
    a run that rebuilds the index (new analysis settings in rag.yaml, or --rebuild), which
    emptied the index first: its files were missing from every answer until the next run."""
    as_user, rag_cmd = _as_user(), f'"{sys.executable}" -m ragweb'
    root = _tree(tmp_path / "root", {"own.md": "own notes\n", "locked/a.md": "zeppelin hangar by the sea\n"})
    assert "2 added" in rag("index", root).stdout
    if rebuild == "rag.yaml":
        (root / "rag.yaml").write_text("index:\n  chunk_tokens: 300\n")
    (root / "locked").chmod(0o000)
    try:
        flag = "--rebuild" if rebuild == "--rebuild" else ""
        r = subprocess.run(["sh", "-c", f"exec {as_user} {rag_cmd} index {flag} '{root}'"],
                           capture_output=True, text=True, timeout=120)
    finally:
        (root / "locked").chmod(0o755)
    assert r.returncode == 0 and "rebuilt the index" in r.stderr, r.stderr
    assert "warning: locked: unreadable directory: Permission denied" in r.stderr
    assert "1 added, 0 updated, 0 removed, 0 skipped, 1 unreadable, 1 kept from the index (unreadable now);" in r.stdout
    assert _paths(rag("query", "-d", root, "-q", "zeppelin", "--json", "--no-auto-index")) == ["locked/a.md"]
    r = rag("index", root)
    assert "0 added, 0 updated, 0 removed" in r.stdout and "kept" not in r.stdout and r.stderr == "", r


def test_a_broken_link_to_a_folder_never_indexed_is_noted(tmp_path):
    # (its target gone, nothing tells it was a folder: it was left out without a word, while
    # a broken link to a file the includes take is warned of)
    root = tmp_path / "root"
    _tree(root, {"own.md": "own notes\n"})
    (root / "docs").symlink_to(tmp_path / "unmounted" / "docs")
    (root / "gone.md").symlink_to(tmp_path / "gone.md")
    r = rag("index", root)
    assert r.returncode == 0 and "1 added" in r.stdout, r.stdout
    assert "warning: gone.md: unreadable: broken symlink" in r.stderr
    assert ("note: 1 broken symlink left out, what it links to being gone (a folder's files would be indexed "
            "through one): docs\n") in r.stderr, r.stderr


def test_query_and_pack_from_inside_a_linked_folder_find_the_index_of_the_folder_that_links_it(tmp_path):
    """mkdir mydocs && ln -s /usr/share/doc/foo mydocs/ && rag index mydocs: then from
    mydocs/foo/sub (so the shell's $PWD names it) the index of mydocs is above, `--path .`
    is that subfolder, and a pack written there is recorded as under mydocs."""
    real, mine = tmp_path / "share" / "foo", tmp_path / "mydocs"
    _tree(real, {"top.md": "zeppelin hangar on the roof\n", "sub/a.md": "zeppelin hangar by the sea\n",
                 "sub/deep/b.md": "zeppelin hangar in the hills\n"})
    mine.mkdir()
    (mine / "foo").symlink_to(real)
    assert "3 added" in rag("index", mine).stdout
    here = mine / "foo" / "sub"  # (the physical folder is share/foo/sub, where no index is above)

    def run(*args, pwd=here):
        return subprocess.run([sys.executable, "-m", "ragweb", *map(str, args)], cwd=real / "sub",
                              env={**os.environ, "PWD": str(pwd)}, capture_output=True, text=True, timeout=120)
    r = run("query", "-q", "zeppelin hangar", "--json", "--no-auto-index")
    assert f"note: using the index of {mine}" in r.stderr
    assert _paths(r) == ["foo/sub/a.md", "foo/sub/deep/b.md", "foo/top.md"]
    assert _paths(run("query", "-q", "zeppelin hangar", "--json", "--path", ".")) == [
        "foo/sub/a.md", "foo/sub/deep/b.md"]
    assert _paths(run("query", "-q", "zeppelin hangar", "--json", "--path", "./deep")) == ["foo/sub/deep/b.md"]
    r = run("pack", "-q", "zeppelin hangar", "--format", "text", "-o", "ctx.txt")
    assert r.returncode == 0 and (real / "sub" / "ctx.txt").is_file(), r.stderr
    assert (mine / ".rag" / "outputs").read_text() == "foo/sub/ctx.txt\n"
    # a $PWD that is not the current folder is not believed: no index above the real one
    r = run("query", "-q", "zeppelin hangar", "--no-auto-index", pwd=mine)
    assert r.returncode == 1 and "no index" in r.stderr, r.stderr


def test_logging_level_hides_notes_then_warnings_but_never_errors(tmp_path):
    """logging.level: warning hides the `note:` lines, error the `warning:` lines too; an
    error is always said. A note said before the config is read (the index found above)
    waits for its level."""
    make_files(tmp_path, {"a.md": "retry notes\n", "docs/GUIDE.MD": "guide\n", "sub/b.md": "retry more\n"})
    os.symlink(tmp_path / "missing.md", tmp_path / "broken.md")
    said = {}
    for level in ("info", "warning", "error"):
        (tmp_path / "rag.yaml").write_text(f"logging:\n  level: {level}\n")
        shutil.rmtree(tmp_path / ".rag", ignore_errors=True)  # (each level's run meets the files first)
        r = rag("index", tmp_path)
        assert r.returncode == 0 and "2 added" in r.stdout, r.stderr
        q = rag("query", "retry", cwd=tmp_path / "sub")
        assert q.returncode == 0 and "a.md" in q.stdout
        bad = rag("query", "retry", "--path", "nowhere/*.md", cwd=tmp_path / "sub")
        assert bad.returncode == 2 and "Error: --path nowhere/*.md matches no indexed file" in bad.stderr
        said[level] = (r.stderr + q.stderr).splitlines()
    info = said["info"]
    assert "warning: broken.md: unreadable: broken symlink" in info
    assert any(line.startswith("note: 1 file is left out for the case of its suffix") for line in info)
    assert f"note: using the index of {tmp_path} (run `rag index` here for an index of this folder alone)" in info
    assert said["warning"] == [line for line in info if line.startswith("warning:")] == [
        "warning: broken.md: unreadable: broken symlink"]
    assert said["error"] == []


def test_a_config_file_given_under_the_root_is_not_indexed(sample_root):
    (sample_root / "my.yaml").write_text("pack:\n  synonyms: ['zebra quagga']\n")
    (sample_root / "conf").mkdir()
    (sample_root / "conf" / "[x].yaml").write_text("retrieve:\n  top_k: 5  # ocelot\n")
    r = rag("index", ".", "--config", "my.yaml", cwd=sample_root)  # (8 sample files and conf/[x].yaml)
    assert r.returncode == 0 and "9 added" in r.stdout, r.stdout + r.stderr
    r = rag("query", "zebra", "--config", "my.yaml", cwd=sample_root)
    assert r.returncode == 0 and r.stdout.startswith("no results") and "changed" not in r.stderr
    other = sample_root / "conf" / "[x].yaml"  # (named as it is: its brackets are no glob)
    r = rag("index", sample_root, "--config", other)
    assert r.returncode == 0 and "1 added" in r.stdout and "1 removed" in r.stdout, r.stdout
    assert "no results" in rag("query", "ocelot", "-d", sample_root, "--config", other).stdout
    (sample_root / "rag.yaml").write_text("")  # (without the flag, the file is a document like any other)
    r = rag("index", sample_root)
    assert "1 added" in r.stdout and "my.yaml" in rag("query", "zebra", "-d", sample_root).stdout


def test_pack_flags_undo_the_configs_lean_and_compact_either_way(sample_root):
    r = rag("index", sample_root)
    assert r.returncode == 0
    ask = ("pack", "-q", "retry backoff", "-b", "300", "-d", sample_root)
    plain, lean, whole = rag(*ask).stdout, rag(*ask, "--lean").stdout, rag(*ask, "--no-compact").stdout
    assert len({plain, lean, whole}) == 3
    (sample_root / "rag.yaml").write_text("pack:\n  lean: true\n  compact: false\n")
    assert rag(*ask).stdout == rag(*ask, "--no-compact", "--lean").stdout != plain
    assert rag(*ask, "--no-lean", "--compact").stdout == plain
    assert rag(*ask, "--no-lean").stdout == whole
    (sample_root / "rag.yaml").write_text("pack:\n  lean: true\n")
    assert rag(*ask).stdout == lean and rag(*ask, "--no-lean").stdout == plain
    help_text = rag("pack", "--help").stdout
    assert "--lean, --no-lean" in help_text and "--compact, --no-compact" in help_text


def test_index_gitignore_flag_wins_over_the_config_either_way(tmp_path):
    make_files(tmp_path, {"a.md": "open notes\n", "secret.md": "hidden notes\n", ".gitignore": "secret.md\n",
                          "rag.yaml": "index:\n  gitignore: false\n"})
    r = rag("index", tmp_path, "--gitignore")
    assert r.returncode == 0 and "1 added" in r.stdout, r.stdout
    r = rag("query", "notes", "-d", tmp_path)  # (the last run's choice: no file is new)
    assert "secret.md" not in r.stdout and "changed" not in r.stderr
    (tmp_path / "a.md").write_text("open notes, edited\n")
    assert f"run `rag index {tmp_path} --gitignore`" in rag("query", "notes", "-d", tmp_path).stderr
    r = rag("index", tmp_path)
    assert "1 added" in r.stdout and "secret.md" in rag("query", "notes", "-d", tmp_path).stdout


def test_an_empty_glob_in_the_config_is_an_error_and_the_index_is_left_as_it_was(indexed):
    (indexed / "rag.yaml").write_text("index:\n  includes:\n    - '**/*.md'\n    - ''\n")
    r = rag("index", indexed)
    assert r.returncode == 1 and r.stderr.startswith(
        "Error: rag.yaml line 4: index.includes item '' is empty and can match no file"), r.stderr
    (indexed / "rag.yaml").unlink()
    r = rag("query", "retry backoff", "-d", indexed)
    assert r.returncode == 0 and "README.md" in r.stdout and "changed" not in r.stderr


@pytest.mark.parametrize("url, why", [
    ("http://[::1", "is not a usable URL: Invalid IPv6 URL (an IPv6 address is written in brackets"),
    ("http://127.0.0.1:99999", "is not a usable URL: its port '99999' is not a number from 1 to 65535"),
    ("http://127.0.0.1:0", "is not a usable URL: its port '0' is not a number from 1 to 65535"),
    ("http://127.0.0.1:abc", "is not a usable URL: its port 'abc' is not a number from 1 to 65535"),
    ("http://:11434", "is not a usable URL: it names no host"),
    ("http://local host:11434", "is not a usable URL: it holds a space"),
    ("http://localhost:11434/vé", "is not a usable URL: it holds 'é' after its host: write it percent-encoded, as %C3%A9"),
    ("http://localhost:11434/#v1", "is not a usable URL: it holds a fragment ('#v1'), which is never sent to a server"),
    ("http://me:secret@localhost:11434", "'http://***@localhost:11434' holds a user name or password")])
def test_an_unusable_embedding_url_is_refused_when_the_config_is_read(indexed, url, why):
    """An embedding.base_url that urllib cannot send a request to was refused only when `rag
    index` reached the embeddings, after it had brought the whole text index up to date."""
    (indexed / "new.md").write_text("# New\nThe walrus is new.\n")
    (indexed / "rag.yaml").write_text(f'embedding:\n  enabled: true\n  base_url: "{url}"\n')
    before = (indexed / ".rag" / "index.db").read_bytes()
    for cmd in (("index",), ("query", "-q", "walrus"), ("config",)):
        r = rag(*cmd, "-d", indexed)
        shown = why if why.startswith("'") else f"'{url}' {why}"
        assert r.returncode == 1 and r.stderr.startswith(f"Error: rag.yaml line 3: embedding.base_url {shown}"), r.stderr
        assert r.stdout == "" and "secret" not in r.stderr
    assert (indexed / ".rag" / "index.db").read_bytes() == before


def test_a_usable_embedding_url_is_taken(tmp_path):
    for url in ("http://localhost:11434/v1", "https://api.example.com/v1/", "http://[::1]:11434", "HTTP://127.0.0.1",
                "http://localhost:/v1", "http://localhost:11434/v%C3%A9?key=a"):
        (tmp_path / "rag.yaml").write_text(f'embedding:\n  enabled: true\n  base_url: "{url}"\n')
        r = rag("config", "-d", tmp_path)
        assert r.returncode == 0 and f"base_url: {url}" in r.stdout, (url, r.stderr)


@pytest.mark.parametrize("args, said", [
    (["index", ""], "the folder to index (PATH) is empty ('')"), (["index", "-d", ""], "-d/--dir is empty"),
    (["query", "-q", "retry", "-d", ""], "-d/--dir is empty"), (["pack", "-q", "retry", "--config", ""], "--config is empty"),
    (["config", "--config", " "], "--config is empty (' ')"), (["pack", "-q", "retry", "-o", ""], "-o/--output is empty"),
    (["query", "--batch", ""], "--batch is empty"), (["pack", "--batch", ""], "--batch is empty"),
    (["runprompt", "--runtime", "--ctx", ""], "--ctx is empty"),
    (["web", "--build", "new.md", "--pyodide-dir", ""], "--pyodide-dir is empty"),
    (["web", "--build", "new.md", "--wheels-dir", ""], "--wheels-dir is empty")])
def test_an_empty_file_or_folder_name_is_refused_not_taken_for_the_default(indexed, args, said):
    """A flag that names a file or folder, given an empty name (a shell variable that is not
    set: `rag index "$DOCS"`), was taken as left out without a word: `rag index ''` and
    `-d ''` used the current folder, `-o ''` wrote to standard output, `--pyodide-dir ''` and
    `--wheels-dir ''` the default folders; `--batch ''` said a question was missing, and
    `--config ''` that "config file . is a folder"."""
    (indexed / "new.md").write_text("# New\nThe walrus is new.\n")  # (a run would index it)
    before = (indexed / ".rag" / "index.db").read_bytes()
    r = rag(*args, cwd=indexed)
    assert r.returncode == 2 and r.stderr.startswith(f"Error: {said}") and r.stdout == "", r
    assert (indexed / ".rag" / "index.db").read_bytes() == before


def test_a_batch_made_of_two_notepad_files_reads_the_second_files_json_lines(indexed, tmp_path):
    # (`cat a.txt b.txt`: b's byte order mark starts a later line, which was then read as a
    # plain question, its JSON text searched and its id lost)
    batch = tmp_path / "ab.txt"
    batch.write_bytes('\ufeff{"id": "a1", "question": "retry backoff"}\n'.encode()
                      + '\ufeff{"id": "b1", "question": "parse headers"}\n'.encode())
    r = rag("query", "-d", indexed, "--batch", batch, "--no-auto-index")
    assert r.returncode == 0, r.stderr
    records = [json.loads(line) for line in r.stdout.splitlines()]
    assert [(x["id"], x["query"]) for x in records] == [("a1", "retry backoff"), ("b1", "parse headers")]


def test_a_batch_id_given_twice_is_noted_and_a_nul_is_named_by_its_line(indexed, tmp_path):
    batch = tmp_path / "q.txt"
    batch.write_text('{"id": 2, "question": "retry backoff"}\nparse headers\n')
    r = rag("query", "-d", indexed, "--batch", batch, "--no-auto-index")
    assert r.returncode == 0 and [json.loads(x)["id"] for x in r.stdout.splitlines()] == [2, 2]
    assert "note: " + str(batch) + " line 2: its id 2 is line 1's too" in r.stderr, r.stderr
    batch.write_bytes(b"retry backoff\nparse\x00headers\n")
    r = rag("query", "-d", indexed, "--batch", batch, "--no-auto-index")
    assert r.returncode == 2 and "(it holds NUL bytes, the first on line 2)" in r.stderr, r.stderr


def test_a_batch_file_written_as_a_json_array_is_its_questions(tmp_path, capsys):
    """A file of questions as one JSON array was asked as one question, made of its whole
    text; indented, it stopped at line 2 ("Extra data"). An array's items are its questions (an
    object's id, else the item's position), and a JSON line cut short says to write one a line."""
    from ragweb.cli import UsageError, _questions
    batch = tmp_path / "questions.json"
    batch.write_text('[{"id": "a", "question": "retry backoff"}, {"question": "parse headers"}, "rate limit"]\n')
    assert list(_questions(str(batch))) == [("a", "retry backoff"), (2, "parse headers"), (3, "rate limit")]
    batch.write_text('\ufeff[\n  {"id": 1, "question": "retry backoff"},\n  {"id": 2, "query": "parse headers"}\n]\n')
    assert list(_questions(str(batch))) == [(1, "retry backoff"), (2, "parse headers")]
    batch.write_text("[ ] retry backoff\n[draft] parse headers\n")  # (plain questions that start with a bracket)
    assert list(_questions(str(batch))) == [(1, "[ ] retry backoff"), (2, "[draft] parse headers")]
    batch.write_text('["WIP"] retry backoff\n{"question": "parse headers"}\n')  # (JSON, then words: a question)
    assert list(_questions(str(batch))) == [(1, '["WIP"] retry backoff'), (2, "parse headers")]
    batch.write_text("[]\n")
    assert list(_questions(str(batch))) == []
    for text, said in [('[{"question": "retry"},\n', "(a JSON array from line 1): invalid JSON"),
                       ('[{"id": 1}]', 'item 1 of the JSON array: an item is a question, or an object with a "question"'),
                       ('{\n  "question": "retry"\n}\n', "line 1: invalid JSON (Expecting property name enclosed in "
                                                      "double quotes); a JSON question is one line, as `jq -c` writes it")]:
        batch.write_text(text)
        with pytest.raises(UsageError, match=re.escape(said)):
            list(_questions(str(batch)))


def test_a_batch_line_of_a_bracket_then_braces_is_a_question_and_a_broken_array_names_its_line(tmp_path):
    """`[{x}] template` (a bracket, then braces that are no JSON object) was read as a JSON
    array and refused as invalid JSON; it is a question, as `{retry} backoff` is. A JSON array
    broken further on is still refused, and the error names the line of the fault, not only
    the line the array starts on."""
    from ragweb.cli import UsageError, _questions
    batch = tmp_path / "q.txt"
    batch.write_text("[{x}] template\n[{{name}}] retry backoff\n")
    assert list(_questions(str(batch))) == [(1, "[{x}] template"), (2, "[{{name}}] retry backoff")]
    batch.write_text('# questions\n[\n  {"id": 1, "question": "retry"},\n  {"id": 2, "question": "parse"}\n'
                     '  {"id": 3, "question": "limit"}\n]\n')  # (a comma missing at the end of line 4)
    with pytest.raises(UsageError, match=re.escape(f"{batch} (a JSON array from line 2): invalid JSON at line 5 "
                                                   "(Expecting ',' delimiter)")):
        list(_questions(str(batch)))


def test_runprompt_given_a_batchs_output_says_so(indexed, tmp_path):
    r = rag("pack", "-d", indexed, "--batch", "-", "--no-auto-index", stdin="retry backoff\nparse headers\n")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 2
    p = rag("runprompt", "--runtime", "--ctx", "-", stdin=r.stdout)
    assert p.returncode == 1 and "holds 2 packed contexts, one a line (`rag pack --batch` output)" in p.stderr, p.stderr
    assert "sed -n 2p FILE | rag runprompt --runtime --ctx -" in p.stderr
    failed = rag("pack", "-d", indexed, "--batch", "-", "--no-auto-index", stdin="the and of\n")
    p = rag("runprompt", "--builder", "--ctx", "-", stdin=failed.stdout)
    assert p.returncode == 1 and "the answer to a question that failed, not a packed context: " in p.stderr, p.stderr


@pytest.mark.parametrize("args, said", [
    (["query", "-q", "retry", "--config", "nope.yaml"], "--config nope.yaml: no such file; name a config file"),
    (["index", "--config", "nope.yaml"], "--config nope.yaml: no such file"),
    (["config", "--config", "."], "--config . is a folder, not a file"),
    (["pack", "--batch", "nope.txt"], "--batch nope.txt: no such file; name a file of questions"),
    (["query", "--batch", "."], "--batch . is a folder, not a file"),
    (["runprompt", "--runtime", "--ctx", "nope.json"], "--ctx nope.json: no such file; name a packed context file"),
    (["runprompt", "--builder", "--ctx", "."], "--ctx . is a folder, not a file"),
    (["web", "--build", "site", "--pyodide-dir", "nope"], "nope (from --pyodide-dir) is not a folder")])
def test_an_input_file_flag_that_names_no_file_is_a_usage_error(tmp_path, monkeypatch, capsys, args, said):
    """A flag naming a file to read that is not there, or is a folder, exits 2 (usage), as
    `--batch nope` and `-d nope` did: `--config nope` and `--ctx nope` exited 1."""
    from ragweb.cli import main
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    assert capsys.readouterr().err.startswith(f"Error: {said}")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("args, needle", [
    (["query", "-q", "retry", "--config", "/dev/zero"], "config file /dev/zero is over 16 MB"),
    (["index", "--config", "/dev/zero"], "config file /dev/zero is over 16 MB"),
    (["pack", "--batch", "/dev/zero"], "the batch file /dev/zero is over 256 MB"),
    (["query", "--batch", "/dev/zero"], "the batch file /dev/zero is over 256 MB"),
    (["runprompt", "--runtime", "--ctx", "/dev/zero"], "context file /dev/zero is over 256 MB"),
])
def test_a_file_argument_that_never_ends_is_refused_not_read_into_memory(indexed, args, needle):
    # (`--config /dev/zero` read the device whole: the kernel's OOM killer ended rag with -9,
    # and under a memory limit it was a MemoryError's traceback)
    import resource

    def limit():  # (1.5 GB: the fixed reads stay far below it; the unfixed ones hit it at once)
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
    r = subprocess.run([sys.executable, "-m", "ragweb", *args], cwd=indexed, input="", capture_output=True,
                       text=True, timeout=120, preexec_fn=limit)
    assert r.returncode in (1, 2) and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.startswith("Error: ") and needle in r.stderr, r.stderr


def test_questions_from_a_stream_without_line_breaks_are_refused_not_read_into_memory(indexed):
    # (`--batch -` read a line at a time, and a stream with no line break, as `< /dev/zero`,
    # was one line read until the memory was full)
    import resource

    def limit():  # (as above: the unfixed read hits it at once)
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
    with open("/dev/zero", "rb") as zero:
        r = subprocess.run([sys.executable, "-m", "ragweb", "pack", "--batch", "-", "--no-auto-index"],
                           cwd=indexed, stdin=zero, capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.stderr.startswith("Error: standard input line 1 is over 16,777,216 characters"), r.stderr



def test_changed_files_of_an_index_a_newer_version_built_are_not_offered_to_plain_rag_index(indexed):
    """With files changed, `rag query` on a terminal offered "Re-index now?" for an index a newer
    version built, then stopped with `rag index`'s refusal instead of answering; piped, it said
    to run `rag index`, which refuses it."""
    from ragweb.engine import MARKUP_VERSION
    _stored_settings(indexed, markup=MARKUP_VERSION + 1)
    (indexed / "README.md").write_text("# pigeonpost\n\nparse headers quickly\n")
    out = run_on_terminal(["query", "-q", "parse headers", "-d", indexed, "-k", "1"], "y\n")
    assert "Re-index now?" not in out and "Error" not in out and "1. " in out, out
    r = rag("query", "-q", "parse headers", "-d", indexed, "--no-auto-index")
    assert r.returncode == 0 and f"run `rag index {indexed}`" not in r.stderr, r.stderr
    assert "note: 1 file(s) changed since the last index, which a newer version of ragweb built" in r.stderr, r.stderr

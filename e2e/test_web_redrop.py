"""A folder dropped or picked again selects its files as `rag index` of it would, and the page
says what it left out as the CLI does: files of the drop that are now skipped (too large,
binary, ignored, excluded...) lose the old text the index held at their paths; a dropped
repository's .git/info/exclude applies; a .gz too large once uncompressed, a damaged .gz and
a file left out for the case of its suffix are named."""

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from test_web_dragdrop import DROP_FILES_JS, DROP_TREE_JS

SRC = Path(__file__).resolve().parent.parent / "src"


def rag_index_files(root: Path, home: Path) -> list[str]:
    """The files `rag index root` indexes (its own config, git's rules; no user-wide git files)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
           "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    proc = subprocess.run([sys.executable, "-m", "ragweb", "index", str(root)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    from ragweb.engine import Engine
    from ragweb.indexer import index_path
    engine = Engine.open(index_path(root), create=False)
    try:
        return list(engine.stats()["files"])
    finally:
        engine.close()


def pick_folder(app, root: Path) -> None:
    app.page.set_input_files("#pick-folder", str(root))  # (its change event queues the pick)
    app.page.evaluate("window.ragweb.idle()")


def write_tree(root: Path, tree: dict) -> None:
    """A DROP_TREE_JS tree (name -> text, or a dict for a folder) written on disk."""
    for name, body in tree.items():
        if isinstance(body, dict):
            (root / name).mkdir(parents=True, exist_ok=True)
            write_tree(root / name, body)
        else:
            root.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(body)


def status(app) -> str:
    return app.page.locator("#status").inner_text()


def make_project(root: Path) -> None:
    (root / "sub").mkdir(parents=True)
    (root / "rag.yaml").write_text("index:\n  max_file_bytes: 2000\n")
    (root / "notes.md").write_text("# Notes\n\nThe gate code is alpha.\n")
    (root / "tool.py").write_text("def gate():\n    return 'alpha gate code'\n")
    (root / "todo.txt").write_text("alpha gate code todo\n")
    (root / "keep.md").write_text("# Keep\n\nalpha stays.\n")
    (root / "extra.md").write_text("# Extra\n\nalpha extra.\n")
    (root / "sub" / "x.md").write_text("# Sub\n\nalpha gate code in a sub folder.\n")


def edit_project(root: Path) -> None:
    (root / "notes.md").write_text("# Notes\n\nThe gate code changed to omega.\n" + "padding line\n" * 200)
    (root / "tool.py").write_bytes(b"\x00binary now\n")
    (root / ".gitignore").write_text("todo.txt\nsub/\n")
    (root / "extra.md").unlink()


def test_picking_a_folder_again_removes_the_files_it_now_leaves_out(app, tmp_path):
    root = tmp_path / "pick" / "proj"
    make_project(root)
    pick_folder(app, root)
    assert app.stats()["files"] == ["proj/extra.md", "proj/keep.md", "proj/notes.md", "proj/sub/x.md",
                                    "proj/todo.txt", "proj/tool.py"]
    edit_project(root)
    pick_folder(app, root)
    # as `rag index` of the folder now: only keep.md (extra.md is not in this pick: kept, and said so)
    native = tmp_path / "native" / "proj"
    shutil.copytree(root, native)
    assert rag_index_files(native, tmp_path) == ["keep.md"]
    assert app.stats()["files"] == ["proj/extra.md", "proj/keep.md"]
    hits = app.query("gate code alpha", 10)["results"]
    assert not any("gate code is alpha" in h["text"] for h in hits), hits
    assert {h["path"] for h in hits} <= {"proj/extra.md", "proj/keep.md"}
    text = status(app)
    assert "Removed 4 files indexed before that this drop leaves out, as rag index does: " in text, text
    for said in ("proj/notes.md: too large (", "proj/tool.py: binary", "proj/todo.txt: ignored", "proj/sub/x.md: ignored"):
        assert said in text, (said, text)
    assert ("proj/ was indexed already: 1 file unchanged, 1 of the earlier drop's files kept (not in this drop: "
            "remove it if it does not belong here).") in text, text  # (keep.md: not indexed again)
    assert "4 removed" in app.page.locator('[data-testid="progress"]').inner_text()


def test_dropping_a_folder_again_removes_the_files_under_folders_it_now_leaves_out(app):
    first = {"proj": {"a.md": "# A\nThe kestrel hovers.\n",
                      "drafts": {"d.md": "# Draft\nA kestrel draft.\n"},
                      "old": {"o.md": "# Old\nAn old kestrel note.\n"},
                      "data.txt": "kestrel data\n"}}
    app.page.evaluate(DROP_TREE_JS, first)
    assert app.stats()["files"] == ["proj/a.md", "proj/data.txt", "proj/drafts/d.md", "proj/old/o.md"]
    again = {"proj": {"a.md": "# A\nThe kestrel hovers.\n",
                      ".gitignore": "drafts/\n",
                      "rag.yaml": "index:\n  excludes: ['old/**']\n  includes: ['**/*.md']\n",
                      "drafts": {"d.md": "# Draft\nA kestrel draft.\n"},
                      "old": {"o.md": "# Old\nAn old kestrel note.\n"},
                      "data.txt": "kestrel data\n"}}
    entered = app.page.evaluate(DROP_TREE_JS, again)
    # (pruned: their files not read; their names listed, as the index held files there)
    assert entered.count("proj/drafts") == 1 and entered.count("proj/old") == 1, entered
    assert app.stats()["files"] == ["proj/a.md"]
    text = status(app)
    assert "Removed 3 files indexed before that this drop leaves out, as rag index does: " in text, text
    for said in ("proj/drafts/d.md: ignored (its folder proj/drafts/)", "proj/old/o.md: excluded (its folder proj/old/)",
                 "proj/data.txt: not included"):
        assert said in text, (said, text)
    assert "kept (not in this drop" not in text, text


def test_a_drop_removes_only_what_a_folder_it_now_leaves_out_holds(app):
    # (a folder left out was taken to hold every indexed path under its name: files a
    # ragIndex put there, never in any drop, were removed by a drop of the folder)
    app.page.evaluate(DROP_TREE_JS, {"proj": {"a.md": "# A\nThe kestrel hovers.\n",
                                              "gen": {"x.md": "# X\nA generated kestrel page.\n"}}})
    assert app.index("proj/gen/api.md", "# API\nThe kestrel API, indexed by hand.\n").get("success")
    assert app.index("proj/node_modules/readme.md", "# Readme\nA kestrel module.\n").get("success")
    app.page.evaluate(DROP_TREE_JS, {"proj": {"a.md": "# A\nThe kestrel hovers.\n", ".gitignore": "gen/\n",
                                              "gen": {"x.md": "# X\nA generated kestrel page.\n"},
                                              "node_modules": {"other.md": "# Other\n"}}})
    assert app.stats()["files"] == ["proj/a.md", "proj/gen/api.md", "proj/node_modules/readme.md"]
    text = status(app)
    assert "Removed 1 file indexed before that this drop leaves out" in text and "proj/gen/x.md: ignored" in text, text


def test_names_that_differ_by_a_bidi_control_are_told_apart_in_the_file_list(app):
    for name in ("notes\u202a.md", "notes\u202b.md"):
        assert app.index(name, "# Notes\nabout kestrels\n").get("success")
    app.wait("document.querySelectorAll('#files .remove').length === 2")  # (the list is drawn after the API call)
    labels = app.page.eval_on_selector_all("#files .remove", "els => els.map(e => e.getAttribute('aria-label'))")
    assert labels == ["Remove notes\\u202a.md", "Remove notes\\u202b.md"], labels


def make_repo(root: Path) -> None:
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / ".git" / "info" / "exclude").write_text("local-*.md\n")
    (root / ".gitignore").write_text("!local-notes.md\n")  # (a .gitignore wins over info/exclude, as in git)
    (root / "README.md").write_text("# Repo\n\nNothing secret here about the staging server.\n")
    (root / "local-secrets.md").write_text("# Secrets\n\nThe staging password is hunter2.\n")
    (root / "local-notes.md").write_text("# Local notes\n\nThe staging server reboots at noon.\n")


def test_a_picked_repositorys_git_info_exclude_applies_as_in_rag_index(app, tmp_path):
    root = tmp_path / "pick" / "repo"
    make_repo(root)
    native = tmp_path / "native" / "repo"
    shutil.copytree(root, native)
    assert rag_index_files(native, tmp_path) == ["README.md", "local-notes.md"]
    pick_folder(app, root)
    assert app.stats()["files"] == ["repo/README.md", "repo/local-notes.md"]
    assert not any("hunter2" in h["text"] for h in app.query("staging password", 10)["results"])


def test_a_dropped_repositorys_git_info_exclude_applies_as_in_rag_index(app, tmp_path):
    repo = {".git": {"HEAD": "ref: refs/heads/main\n", "info": {"exclude": "local-*.md\n"}},
            ".gitignore": "!local-notes.md\n",
            "README.md": "# Repo\n\nNothing secret here about the staging server.\n",
            "local-secrets.md": "# Secrets\n\nThe staging password is hunter2.\n",
            "local-notes.md": "# Local notes\n\nThe staging server reboots at noon.\n",
            # a nested repository's info/exclude is not applied, as by `rag index` of the outer one
            "vendored": {".git": {"info": {"exclude": "*.md\n"}}, "lib.md": "# Lib\n\nstaging helpers\n"}}
    write_tree(tmp_path / "repo", repo)
    assert rag_index_files(tmp_path / "repo", tmp_path) == ["README.md", "local-notes.md", "vendored/lib.md"]
    app.page.evaluate(DROP_TREE_JS, {"repo": repo})
    assert app.stats()["files"] == ["repo/README.md", "repo/local-notes.md", "repo/vendored/lib.md"]


def test_a_gz_too_large_uncompressed_a_damaged_gz_and_a_suffix_of_the_wrong_case_are_named(app):
    huge = gzip.compress(b"word\n" * 1_200_000)  # 6 MB uncompressed, a few KB compressed
    app.page.evaluate(DROP_FILES_JS, [
        ["a.md", "# A\n\nplain words\n"],
        ["huge.md.gz", list(huge)],
        ["bad.md.gz", list(b"\x1f\x8b\x08\x00garbage")],
        ["Guide.MD", "# Guide\n\nA guide.\n"],
    ])
    assert app.stats()["files"] == ["a.md"]
    text = status(app)
    assert ("1 file was larger than index.max_file_bytes (5,000,000 bytes) and left out: huge.md.gz "
            "(over 5,000,000 bytes uncompressed); drop it in a folder whose rag.yaml raises it to index it.") in text, text
    assert ("1 file was left out for the case of its suffix (Guide.MD): globs are case-sensitive, so add '**/*.MD' "
            "to index.includes in the rag.yaml of a folder you drop it in to index it") in text, text
    assert "Some of the drop could not be read (see the message below)." in text, text
    banner = app.page.locator("#banner-text").inner_text()
    assert "Some files could not be read and were left out: bad.md.gz: damaged: not gzip data (" in banner, banner


# ---------------------------------------------------------------- the facade, natively

def call(fn, *args):
    return json.loads(fn(*args))


def test_the_facade_names_a_file_left_out_for_the_case_of_its_suffix_and_the_skips_rag_index_warns_of():
    from ragweb import facade
    assert call(facade.init)["success"]
    facade.ignore_reset()
    assert call(facade.check_path, "docs/Guide.MD", 10) == {
        "skip": "not included", "path": "docs/Guide.MD", "caseOnly": "**/*.MD"}
    assert "caseOnly" not in call(facade.check_path, "docs/photo.PNG", 10)  # (no glob takes .png either)
    assert "caseOnly" not in call(facade.check_path, "docs/.Hidden.MD", 10)  # (as the CLI: not noted)
    bad = call(facade.index_bytes, "bad.md.gz", b"\x1f\x8b\x08\x00garbage")
    assert bad["warn"] is True and bad["skipped"].startswith("damaged: not gzip data")
    assert "warn" not in call(facade.index_bytes, "b.txt", b"\x00\x01" * 50)  # binary: counted, not warned of


def cli_left_out(root: Path, home: Path, monkeypatch) -> int:
    """How many files `rag index root` leaves out by its globs and ignore files (what its
    note on a run that indexes nothing counts)."""
    from ragweb.config import load_config
    from ragweb.indexer import index_root
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    report = index_root(root, load_config(root)[0])
    left = report.left_out
    assert not left.dirs
    return left.excluded + left.ignored + sum(left.suffixes.values())


def test_a_folders_own_config_and_ignore_files_are_not_counted_as_left_out(app, tmp_path, monkeypatch):
    # (its rag.yaml and .gitignore were counted among the files the globs or ignore files
    # left out, and so was each file of a picked folder's .git/, which rag index never looks at)
    tree = {"rag.yaml": "index:\n  includes: ['**/*.md', '**/*.txt']\n  excludes: ['**/draft-*.md']\n",
            ".gitignore": "scratch.md\n", ".env": "TOKEN=1\n",
            "a.md": "# A\n\nThe heron waits.\n",
            "scratch.md": "heron scratch\n",     # ignored
            "draft-1.md": "heron draft\n",       # excluded
            "photo.png": "not a photo\n"}        # not included
    write_tree(tmp_path / "native" / "proj", tree)
    assert rag_index_files(tmp_path / "native" / "proj", tmp_path) == ["a.md"]
    assert cli_left_out(tmp_path / "native" / "proj", tmp_path, monkeypatch) == 3
    app.page.evaluate(DROP_TREE_JS, {"proj": tree})
    assert app.stats()["files"] == ["proj/a.md"]
    text = app.page.locator('[data-testid="progress"]').inner_text()
    assert text.startswith("Indexed 1 of 4 files, ") and text.endswith(", 3 left out by the globs or ignore files."), text
    # picked: the browser lists what .git/ holds too
    write_tree(tmp_path / "pick" / "proj", {**tree, ".git": {"HEAD": "ref: refs/heads/main\n", "config": "[core]\n",
                                                           "info": {"exclude": "nothing.md\n"}}})
    app.page.evaluate("ragClear()")
    pick_folder(app, tmp_path / "pick" / "proj")
    assert app.stats()["files"] == ["proj/a.md"]
    text = app.page.locator('[data-testid="progress"]').inner_text()
    assert text.startswith("Indexed 1 of 4 files, ") and text.endswith(", 3 left out by the globs or ignore files."), text


def test_loose_files_dropped_again_unchanged_are_said_unchanged(app):
    # (the status said "Indexed 3 files (3 chunks)." and only the progress line "3 unchanged",
    # where a folder dropped again says "N files unchanged")
    files = [["a.md", "# A\n\nThe ibis wades.\n"], ["b.md", "# B\n\nThe ibis feeds.\n"], ["c.txt", "ibis notes\n"]]
    app.page.evaluate(DROP_FILES_JS, files)
    assert status(app) == "Indexed 3 files (3 chunks)."
    app.page.evaluate(DROP_FILES_JS, files)
    assert status(app) == ("Nothing new: 3 files unchanged, not indexed again. Already indexed with the same text: "
                           "a.md, b.md, c.txt.")
    files[1][1] = "# B\n\nThe ibis fed.\n"
    app.page.evaluate(DROP_FILES_JS, files)
    assert status(app) == ("Indexed 1 file (1 chunk); 2 unchanged, not indexed again. b.md replaced the file of the "
                           "same name indexed before. Already indexed with the same text: a.md, c.txt.")
    assert any("fed" in h["text"] for h in app.query("ibis fed")["results"])


def test_a_picked_folders_left_out_folders_are_left_out_whole_as_in_a_drop(app, tmp_path, monkeypatch):
    # (the browser lists every file of a picked folder: each file of its node_modules/ and of a
    # folder its .gitignore ignores was counted as left out, where a drop, as rag index, leaves
    # out the folder: "Indexed 1 of 28 files, 27 left out" against "Indexed 1 of 1 file")
    tree = {".gitignore": "build/\n", "a.md": "# A\n\nThe egret stands.\n",
            "node_modules": {f"m{i}": {"README.md": f"egret module {i}\n"} for i in range(20)},
            "build": {f"out{i}.md": f"egret build {i}\n" for i in range(6)},
            "docs": {".gitignore": "drafts/\n", "b.md": "# B\n\nThe egret flies.\n",
                     "drafts": {"c.md": "egret draft\n"}}}
    write_tree(tmp_path / "native" / "proj", tree)
    assert rag_index_files(tmp_path / "native" / "proj", tmp_path) == ["a.md", "docs/b.md"]
    app.page.evaluate(DROP_TREE_JS, {"proj": tree})
    dropped = (app.stats()["files"], app.page.locator('[data-testid="progress"]').inner_text(), status(app))
    assert dropped[0] == ["proj/a.md", "proj/docs/b.md"]
    write_tree(tmp_path / "pick" / "proj", tree)
    app.page.evaluate("ragClear()")
    pick_folder(app, tmp_path / "pick" / "proj")
    picked = (app.stats()["files"], app.page.locator('[data-testid="progress"]').inner_text(), status(app))
    assert picked == dropped
    assert "left out" not in picked[1], picked
    # what the index held under a folder now left out goes, as in a drop
    (tmp_path / "pick" / "proj" / ".gitignore").write_text("build/\ndocs/\n")
    pick_folder(app, tmp_path / "pick" / "proj")
    assert app.stats()["files"] == ["proj/a.md"]


def test_a_drop_or_pick_of_unchanged_files_says_nothing_new_as_rag_index_does(app, tmp_path):
    # (a folder dropped again with every file unchanged said "Indexed 3 files (3 chunks)." and
    # then "proj/ was indexed already: 3 files unchanged": it had indexed none of them, and
    # `rag index` says "0 added, 0 updated, 0 removed, 3 skipped (3 unchanged); 0 chunks written")
    tree = {"a.md": "# A\n\nThe avocet sweeps.\n", "b.md": "# B\n\nThe avocet nests.\n", "c.txt": "avocet notes\n"}
    edited = {**tree, "b.md": "# B\n\nThe avocet nested.\n"}
    progress = app.page.locator('[data-testid="progress"]')
    none_new = "Nothing new: 3 files unchanged, not indexed again."
    some_new = "Indexed 1 file (1 chunk); 2 unchanged, not indexed again."

    # a dropped folder: none, all, then some of its files unchanged
    app.page.evaluate(DROP_TREE_JS, {"proj": tree})
    assert status(app) == "Indexed 3 files (3 chunks)."
    app.page.evaluate(DROP_TREE_JS, {"proj": tree})
    assert status(app) == f"{none_new} proj/ was indexed already: 3 files unchanged."
    assert progress.inner_text().startswith("Indexed 0 of 3 files, "), progress.inner_text()
    assert progress.inner_text().endswith(", 3 unchanged."), progress.inner_text()
    app.page.evaluate(DROP_TREE_JS, {"proj": edited})
    assert status(app) == f"{some_new} proj/ was indexed already: 1 file replaced, 2 files unchanged."
    assert progress.inner_text().startswith("Indexed 1 of 3 files, "), progress.inner_text()

    # a picked folder, and `rag index` of it, twice: the same counts
    app.page.evaluate("ragClear()")
    root = tmp_path / "pick" / "proj"
    write_tree(root, tree)
    pick_folder(app, root)
    assert status(app) == "Indexed 3 files (3 chunks)."
    assert " 3 added, 0 updated, 0 removed, 0 skipped; 3 chunks written" in rag_index_report(root, tmp_path)
    pick_folder(app, root)
    assert status(app) == f"{none_new} proj/ was indexed already: 3 files unchanged."
    assert " 0 added, 0 updated, 0 removed, 3 skipped (3 unchanged); 0 chunks written" in rag_index_report(root, tmp_path)
    write_tree(root, edited)
    pick_folder(app, root)
    assert status(app) == f"{some_new} proj/ was indexed already: 1 file replaced, 2 files unchanged."
    assert " 0 added, 1 updated, 0 removed, 2 skipped (2 unchanged); 1 chunk" in rag_index_report(root, tmp_path)

    # loose files, dropped and picked
    app.page.evaluate("ragClear()")
    app.page.evaluate(DROP_FILES_JS, list(tree.items()))
    assert status(app) == "Indexed 3 files (3 chunks)."
    app.page.evaluate(DROP_FILES_JS, list(tree.items()))
    assert status(app) == f"{none_new} Already indexed with the same text: a.md, b.md, c.txt."
    loose = tmp_path / "loose"
    write_tree(loose, edited)
    app.page.set_input_files("#pick-files", [str(loose / name) for name in edited])
    app.page.evaluate("window.ragweb.idle()")
    assert status(app) == (f"{some_new} b.md replaced the file of the same name indexed before. "
                           "Already indexed with the same text: a.md, c.txt.")
    assert any("nested" in h["text"] for h in app.query("avocet nested")["results"])


def rag_index_report(root: Path, home: Path) -> str:
    """What `rag index root` prints (its own config, no user-wide git files)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
           "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    proc = subprocess.run([sys.executable, "-m", "ragweb", "index", str(root)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr


def test_a_drop_that_removed_or_could_not_read_files_is_not_said_to_hold_nothing_new(app):
    # (a folder dropped again whose rag.yaml now excludes a file said "Nothing new: 2 files
    # unchanged" and then "Removed 1 file indexed before"; `rag index` says "1 removed")
    tree = {"a.md": "# A\n\nThe avocet sweeps.\n", "b.md": "# B\n\nThe avocet nests.\n", "c.txt": "avocet notes\n"}
    app.page.evaluate(DROP_TREE_JS, {"proj": tree})
    assert status(app) == "Indexed 3 files (3 chunks)."
    app.page.evaluate(DROP_TREE_JS, {"proj": {**tree, "rag.yaml": "index:\n  excludes: ['**/*.txt']\n"}})
    assert status(app).startswith("Indexed 0 files (0 chunks); 2 unchanged, not indexed again. proj/rag.yaml applied. "
                                  "Removed 1 file indexed before that this drop leaves out"), status(app)
    # a file of the drop that could not be read (a damaged .gz) may be new: not "nothing new" either
    app.page.evaluate(DROP_TREE_JS, {"proj": {**tree, "d.md.gz": "not gzip at all\n"}})
    assert status(app).startswith("Indexed 1 file (1 chunk); 2 unchanged, not indexed again."), status(app)
    app.page.evaluate(DROP_TREE_JS, {"proj": {**tree, "d.md.gz": "not gzip at all\n"}})
    assert status(app).startswith("Indexed 0 files (0 chunks); 3 unchanged, not indexed again."), status(app)
    assert "Some of the drop could not be read" in status(app)
    # and a drop that changed nothing still says so
    app.page.evaluate(DROP_TREE_JS, {"proj": tree})
    assert status(app).startswith("Nothing new: 3 files unchanged, not indexed again."), status(app)

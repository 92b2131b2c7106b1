"""`rag web --build`: the static site's layout, its wheels, and the local server (no browser)."""

import base64
import errno
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from ragweb import webbuild
from ragweb.errors import RagError, UsageError

REPO = Path(__file__).resolve().parent.parent


def test_site_layout(site_dir):
    manifest = json.loads((site_dir / "manifest.json").read_text())
    assert manifest["generator"] == webbuild.GENERATOR
    assert manifest["pyodide"] == webbuild.PYODIDE_VERSION == \
        json.loads((REPO / "package.json").read_text())["dependencies"]["pyodide"]
    assert sorted(p.name for p in (site_dir / "pyodide").iterdir()) == sorted(webbuild.PYODIDE_CORE_FILES)
    assert sorted(p.name for p in (site_dir / "wheels").iterdir()) == sorted(manifest["wheels"])
    assert [w.split("-")[0] for w in manifest["wheels"]] == ["ragweb", "snowballstemmer", "pyyaml"]
    assert all(w.endswith("-py3-none-any.whl") for w in manifest["wheels"])
    assert not list(site_dir.glob("*.md"))  # docs of web/ stay out of the site
    for name in (*webbuild.PAGE_FILES, ".nojekyll"):
        assert (site_dir / name).is_file()
    assert manifest["sample"] == list(webbuild.SAMPLE_FILES)
    assert sorted(p.relative_to(site_dir / "sample").as_posix() for p in (site_dir / "sample").rglob("*")
                  if p.is_file()) == sorted(webbuild.SAMPLE_FILES)


def test_page_uses_only_relative_urls(site_dir):
    html = (site_dir / "index.html").read_text()
    urls = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert urls and all(u.startswith(("./", "data:")) for u in urls), urls
    js = (site_dir / "app.js").read_text()
    assert "http://" not in js and "https://" not in js
    assert not re.search(r"""fetch\(\s*['"`]/""", js)


def _record_ok(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
        rows = [line.split(",") for line in zf.read(record_name).decode().splitlines() if line]
        listed = {r[0] for r in rows}
        assert listed == set(names), set(names) ^ listed
        for name, digest, size in rows:
            if name == record_name:
                assert digest == "" and size == ""
                continue
            data = zf.read(name)
            expect = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={expect}" and int(size) == len(data), name


def test_ragweb_wheel_is_valid_and_complete(site_dir):
    wheel = next((site_dir / "wheels").glob("ragweb-*.whl"))
    _record_ok(wheel)
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(f"ragweb-{webbuild.ragweb_version()}.dist-info/WHEEL").decode()
    assert "Tag: py3-none-any" in meta and "Root-Is-Purelib: true" in meta
    package = REPO / "src" / "ragweb"
    modules = {f"ragweb/{p.name}" for p in package.glob("*.py")}
    assert modules <= names
    assert "ragweb/facade.py" in names and "ragweb/engine.py" in names


def test_wheels_carry_pyodide_bytecode(site_dir):
    assert webbuild.shutil.which("node"), "node is needed to precompile (make test installs npm packages with it)"
    for wheel in (site_dir / "wheels").glob("*.whl"):
        _record_ok(wheel)
        with zipfile.ZipFile(wheel) as zf:
            pycs = [n for n in zf.namelist() if n.endswith(".cpython-314.pyc")]
        assert pycs, wheel.name


def test_ragweb_wheel_installs_with_pip(tmp_path):
    wheel = webbuild.build_ragweb_wheel(tmp_path / "w")
    target = tmp_path / "target"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                           "--target", str(target), str(wheel)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (target / "ragweb" / "facade.py").is_file()


def test_ragweb_wheel_is_deterministic(tmp_path):
    a = webbuild.build_ragweb_wheel(tmp_path / "a").read_bytes()
    b = webbuild.build_ragweb_wheel(tmp_path / "b").read_bytes()
    assert a == b


def test_rebuild_removes_only_what_an_earlier_build_wrote(tmp_path):
    out = tmp_path / "site"
    webbuild.build_site(out, precompile=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert "index.html" in manifest["files"] and "manifest.json" in manifest["files"]
    old_wheel = "wheels/ragweb-0.0.1-py3-none-any.whl"  # written by that build, not by the next
    (out / old_wheel).write_bytes(b"old")
    manifest["files"].append(old_wheel)
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "stale.txt").write_text("mine")
    webbuild.build_site(out, precompile=False)
    assert not (out / old_wheel).exists() and (out / "index.html").is_file()
    assert (out / "stale.txt").read_text() == "mine"
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("precious")
    (foreign / "CNAME").write_text("example.org\n")  # (a deploy folder's files do not make the rest ours)
    with pytest.raises(UsageError, match="not a ragweb site"):
        webbuild.build_site(foreign, precompile=False)
    assert (foreign / "keep.txt").read_text() == "precious"


def test_rebuild_keeps_what_the_user_added(tmp_path):
    out = tmp_path / "site"
    webbuild.build_site(out, precompile=False)
    (out / "CNAME").write_text("example.org\n")
    (out / ".git").mkdir()
    (out / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    (out / "sample" / "mine.md").write_text("my notes")
    webbuild.build_site(out, precompile=False)
    assert (out / "CNAME").read_text() == "example.org\n"
    assert (out / ".git" / "HEAD").read_text() == "ref: refs/heads/gh-pages\n"
    assert (out / "sample" / "mine.md").read_text() == "my notes"
    files = json.loads((out / "manifest.json").read_text())["files"]
    assert "CNAME" not in files and "sample/mine.md" not in files and "app.js" in files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no temporary folders left


@pytest.mark.parametrize("git", ["worktree", "repository"])
def test_a_first_build_into_a_deploy_folder_keeps_its_git_and_cname(tmp_path, git):
    # (`git worktree add site gh-pages` leaves a `.git` file, `git init` a `.git` folder, and a
    # GitHub Pages folder a CNAME: such a folder was refused as "not empty", so the first deploy failed)
    out = tmp_path / "site"
    out.mkdir()
    if git == "worktree":
        (out / ".git").write_text("gitdir: /elsewhere/.git/worktrees/site\n")
    else:
        (out / ".git").mkdir()
        (out / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    (out / "CNAME").write_text("example.org\n")
    (out / ".nojekyll").write_text("")
    before = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for _ in range(2):  # (the first build, then a rebuild)
        webbuild.build_site(out, precompile=False)
        assert {name: (out / name).read_bytes() for name in before} == before
        files = json.loads((out / "manifest.json").read_text())["files"]
        assert "index.html" in files and ".nojekyll" in files and "CNAME" not in files
        assert not [f for f in files if f == ".git" or f.startswith(".git/")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    (out / "manifest.json").unlink()  # (no longer a ragweb site: its other files are the user's)
    with pytest.raises(UsageError, match="not a ragweb site"):
        webbuild.build_site(out, precompile=False)
    assert (out / "index.html").is_file() and (out / "CNAME").read_text() == "example.org\n"


def test_only_the_named_sample_files_are_shipped(tmp_path, monkeypatch):
    # (a `ctx.json` written in sample/ by `rag pack -o` ended up in the site, and the page
    # said "Indexed 8 of 9 files, 1 skipped")
    sample = tmp_path / "sample"
    shutil.copytree(webbuild.sample_dir(), sample, ignore=shutil.ignore_patterns(".rag"))
    (sample / "ctx.json").write_text("{}")
    (sample / "docs" / "notes.md").write_text("mine")
    monkeypatch.setattr(webbuild, "sample_dir", lambda: sample)
    out = tmp_path / "site"
    webbuild.build_site(out, precompile=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["sample"] == list(webbuild.SAMPLE_FILES)
    assert sorted(p.relative_to(out / "sample").as_posix() for p in (out / "sample").rglob("*")
                  if p.is_file()) == sorted(webbuild.SAMPLE_FILES)
    # An earlier build that shipped the stray file: the rebuild removes it.
    (out / "sample" / "ctx.json").write_text("{}")
    manifest["files"].append("sample/ctx.json")
    (out / "manifest.json").write_text(json.dumps(manifest))
    webbuild.build_site(out, precompile=False)
    assert not (out / "sample" / "ctx.json").exists()


def test_only_the_page_files_of_web_are_shipped(tmp_path, monkeypatch):
    # (a scratch page or an editor's backup left in web/ was published with the site)
    page = tmp_path / "web"
    shutil.copytree(webbuild.web_dir(), page)
    (page / "scratch.html").write_text("<p>a draft</p>")
    (page / "app.js~").write_text("// an editor's backup")
    (page / "drafts").mkdir()
    (page / "drafts" / "idea.js").write_text("// not yet")
    monkeypatch.setattr(webbuild, "web_dir", lambda: page)
    out = tmp_path / "site"
    webbuild.build_site(out, precompile=False)
    top = sorted(p.name for p in out.iterdir() if p.is_file())
    assert top == sorted([*webbuild.PAGE_FILES, "manifest.json", ".nojekyll"])
    assert not (out / "drafts").exists()


def test_rebuild_of_a_build_that_did_not_list_its_files_keeps_unknown_ones(tmp_path):
    out = tmp_path / "site"
    (out / "wheels").mkdir(parents=True)
    (out / "wheels" / "ragweb-0.0.1-py3-none-any.whl").write_bytes(b"old")
    (out / "manifest.json").write_text(json.dumps(
        {"generator": webbuild.GENERATOR, "wheels": ["ragweb-0.0.1-py3-none-any.whl"], "sample": []}))
    (out / "thesis.tex").write_text("data")
    webbuild.build_site(out, precompile=False)
    assert (out / "thesis.tex").read_text() == "data"
    assert not (out / "wheels" / "ragweb-0.0.1-py3-none-any.whl").exists()


def test_rebuild_refuses_to_overwrite_a_file_it_did_not_write(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "manifest.json").write_text(json.dumps({"generator": webbuild.GENERATOR, "files": ["manifest.json"]}))
    (out / "index.html").write_text("my own page")
    with pytest.raises(UsageError, match=r"did not write.*index\.html"):
        webbuild.build_site(out, precompile=False)
    assert (out / "index.html").read_text() == "my own page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_build_into_new_parents_never_renames_across_filesystems(tmp_path, monkeypatch):
    systmp = tmp_path / "systmp"  # stands for a system temp folder on another filesystem
    systmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))
    real_rename = os.rename

    def rename(src, dst, *args, **kwargs):
        if Path(src).is_relative_to(systmp) != Path(dst).is_relative_to(systmp):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_rename(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "rename", rename)
    out = tmp_path / "new" / "parent" / "site"
    assert webbuild.build_site(out, precompile=False) == out
    assert (out / "manifest.json").is_file()
    assert [p.name for p in out.parent.iterdir()] == ["site"] and not list(systmp.iterdir())


def test_failed_build_leaves_no_new_parents(tmp_path, monkeypatch):
    def fail(dest):
        raise RagError("boom")

    monkeypatch.setattr(webbuild, "copy_sample", fail)
    with pytest.raises(RagError, match="boom"):
        webbuild.build_site(tmp_path / "new" / "parent" / "site", precompile=False)
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("source", ["web", "sample", "package"])
def test_build_refuses_a_folder_inside_what_it_reads(source):
    folder = {"web": webbuild.web_dir, "sample": webbuild.sample_dir,
              "package": lambda: webbuild._PACKAGE_DIR}[source]()
    out = folder / "site-under-test" / "site"
    try:
        with pytest.raises(UsageError, match="inside"):
            webbuild.build_site(out, precompile=False)
        assert not out.parent.exists()
    finally:
        shutil.rmtree(out.parent, ignore_errors=True)  # (only a build that failed to refuse made it)


def test_build_refuses_a_mount_point_before_building(tmp_path, monkeypatch):
    # (mounting needs privileges the tests may lack: the OS's answer is faked, for this folder only)
    out = tmp_path / "volume"
    out.mkdir()
    real = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda p: Path(p) == out or real(p))
    with pytest.raises(UsageError, match="mount point.*inside it"):
        webbuild.build_site(out, precompile=False)
    assert list(tmp_path.iterdir()) == [out] and not any(out.iterdir())


def _fake_program(folder: Path, name: str, body: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


def test_a_named_pyodide_folder_is_checked_and_never_npm_installed(tmp_path, monkeypatch):
    _fake_program(tmp_path / "bin", "npm", f'touch "{tmp_path}/npm-ran"')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("RAGWEB_PYODIDE_DIR", str(tmp_path / "nonexistent"))
    with pytest.raises(RagError, match=r"RAGWEB_PYODIDE_DIR.*not a folder"):
        webbuild.find_pyodide()
    assert not (tmp_path / "npm-ran").exists()
    monkeypatch.delenv("RAGWEB_PYODIDE_DIR")
    partial = tmp_path / "partial"
    partial.mkdir()
    (partial / "pyodide.asm.wasm").write_bytes(b"\0asm")
    with pytest.raises(RagError, match=r"--pyodide-dir.*lacks pyodide\.js"):
        webbuild.find_pyodide(partial)
    assert not (tmp_path / "npm-ran").exists()


def test_a_failed_npm_install_is_a_clear_error(tmp_path, monkeypatch):
    root = tmp_path / "checkout"
    root.mkdir()
    (root / "package.json").write_text("{}")
    monkeypatch.setattr(webbuild, "project_root", lambda: root)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWEB_PYODIDE_DIR", raising=False)
    _fake_program(tmp_path / "bin", "npm", "echo 'npm ERR! network' >&2; exit 1")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    with pytest.raises(RagError, match=r"`npm install` failed in .*checkout \(exit status 1"):
        webbuild.find_pyodide()


def test_npm_install_with_no_network_gives_up_soon(tmp_path, monkeypatch):
    # Real npm, a registry that refuses connections and an empty cache: npm's own retries
    # took 70 s here before the error (2 min 21 s on a machine with no network at all).
    root = tmp_path / "checkout"
    root.mkdir()
    for name in ("package.json", "package-lock.json"):
        shutil.copy2(REPO / name, root / name)
    monkeypatch.setattr(webbuild, "project_root", lambda: root)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAGWEB_PYODIDE_DIR", raising=False)
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    start = time.monotonic()
    with pytest.raises(RagError, match=r"`npm install` failed in .*checkout"):
        webbuild.find_pyodide()
    assert time.monotonic() - start < 40


def _cold_wheels(tmp_path: Path) -> Path:
    """A copy of the third-party wheels without a bytecode cache: the build runs node."""
    cold = tmp_path / "wheels"
    cold.mkdir()
    for wheel in webbuild.third_party_wheels():
        shutil.copy2(wheel, cold / wheel.name)
    return cold


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended within 5 s (a zombie waiting for init counts); else kills it."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)  # (left running by broken code)
    return False


def test_a_hung_precompile_is_stopped_and_the_site_built_without_bytecode(tmp_path, monkeypatch, capsys):
    wheels = _cold_wheels(tmp_path)
    _fake_program(tmp_path / "bin", "node", f'echo $$ > "{tmp_path}/node.pid"; exec sleep 30')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    real_run = subprocess.run

    def run(*args, **kwargs):
        if "timeout" in kwargs:
            kwargs["timeout"] = 1  # stands for the real limit of minutes
        return real_run(*args, **kwargs)

    monkeypatch.setattr(webbuild.subprocess, "run", run)
    out = webbuild.build_site(tmp_path / "site", wheels_dir=wheels)
    assert (out / "manifest.json").is_file()
    assert "precompiling the wheels took over" in capsys.readouterr().err
    assert _gone(int((tmp_path / "node.pid").read_text()))


def _default_signals() -> None:
    # A shell runs background jobs with SIGINT ignored, and the child would inherit that
    # (`make test &`): the child gets the dispositions a terminal gives it.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig, entry", [(signal.SIGTERM, "ragweb web"), (signal.SIGINT, "ragweb web"),
                                        (signal.SIGHUP, "ragweb web"), (signal.SIGTERM, "ragweb.webbuild")])
def test_a_signal_during_the_build_cleans_up(tmp_path, sig, entry):
    wheels = _cold_wheels(tmp_path)
    _fake_program(tmp_path / "bin", "node", f'echo $$ > "{tmp_path}/node.pid.tmp"; '
                                            f'mv "{tmp_path}/node.pid.tmp" "{tmp_path}/node.pid"; exec sleep 30')
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TMPDIR": str(systmp),
           "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    out = tmp_path / "out" / "site"
    proc = subprocess.Popen([sys.executable, "-m", *entry.split(), "--build", str(out), "--wheels-dir", str(wheels)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_signals)
    deadline = time.monotonic() + 60
    while not (tmp_path / "node.pid").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    node_gone = _gone(int((tmp_path / "node.pid").read_text()))
    assert proc.returncode == 128 + sig, err  # (as a shell reports a command the signal ended)
    assert "interrupted; no site was built" in err and "index" not in err and "Traceback" not in err, err
    assert not list(systmp.iterdir()) and not (tmp_path / "out").exists()
    assert node_gone


def test_sighup_while_serving_removes_the_temporary_site(tmp_path):
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "TMPDIR": str(systmp)}
    proc = subprocess.Popen([sys.executable, "-m", "ragweb", "web", "--port", "0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_signals)
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    try:
        line = proc.stdout.readline()
        assert line.startswith("Serving ragweb at http://127.0.0.1:"), line
        assert list(systmp.iterdir())
        proc.send_signal(signal.SIGHUP)
        _, err = proc.communicate(timeout=30)
    finally:
        watchdog.cancel()
    assert proc.returncode == 0 and "stopped" in err and "warning" not in err, err
    assert not list(systmp.iterdir())


def test_server_serves_with_types_and_no_cache(site_dir):
    server = webbuild.make_server(site_dir, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for path, ctype in [("/", "text/html"), ("/app.js", "text/javascript"),
                            ("/pyodide/pyodide.asm.wasm", "application/wasm"),
                            ("/pyodide/pyodide.asm.mjs", "text/javascript"),
                            ("/manifest.json", "application/json")]:
            with urllib.request.urlopen(base + path) as r:
                assert r.status == 200
                assert r.headers["Content-Type"].startswith(ctype), path
                assert r.headers["Cache-Control"] == "no-cache"
    finally:
        server.shutdown()
        server.server_close()


def test_rag_web_build_command(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    out = tmp_path / "built"
    proc = subprocess.run([sys.executable, "-m", "ragweb", "web", "--build", str(out)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"Built the ragweb site in {out}" in proc.stdout
    assert (out / "manifest.json").is_file()
    bad = subprocess.run([sys.executable, "-m", "ragweb", "web", "--port", "70000"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and "--port 70000 is out of range" in bad.stderr
    empty = subprocess.run([sys.executable, "-m", "ragweb", "web", "--build", "", "--port", "0"],
                           capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert empty.returncode == 2 and "--build" in empty.stderr, empty.stderr


def _every_wheel_whole(site: Path) -> bool:
    return all(webbuild._valid_wheel(w) for w in (site / "wheels").glob("*.whl"))


def test_a_bytecode_cache_cut_short_is_made_again_not_shipped(tmp_path):
    # (a full disk or a killed build left 118,784 of 401,437 bytes of a cached wheel: every later
    # build said "Built" and shipped a wheel the page could not open)
    wheels = _cold_wheels(tmp_path)
    assert _every_wheel_whole(webbuild.build_site(tmp_path / "site", wheels_dir=wheels))
    cached = sorted((wheels / "pyc").glob("snowballstemmer-*.whl"))
    assert len(cached) == 1
    cached[0].write_bytes(cached[0].read_bytes()[:len(cached[0].read_bytes()) // 3])
    out = webbuild.build_site(tmp_path / "site", wheels_dir=wheels)
    assert _every_wheel_whole(out) and webbuild._valid_wheel(cached[0])
    with zipfile.ZipFile(next((out / "wheels").glob("snowballstemmer-*.whl"))) as zf:
        assert any(n.endswith(".pyc") for n in zf.namelist())  # (its bytecode made again)


def test_a_damaged_cached_wheel_is_not_taken(tmp_path):
    good = webbuild.third_party_wheels()[0]
    shutil.copy2(good, tmp_path / good.name)
    name, version = good.name.split("-")[:2]
    assert webbuild._find_wheel(tmp_path, name, version) == tmp_path / good.name
    (tmp_path / good.name).write_bytes(good.read_bytes()[:1000])
    assert webbuild._find_wheel(tmp_path, name, version) is None and not (tmp_path / good.name).exists()


def test_the_ragweb_wheel_holds_only_the_packages_modules(tmp_path, monkeypatch):
    package = tmp_path / "ragweb"
    shutil.copytree(webbuild._PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    for stray in (".engine.py.swp", "engine.py~", "engine.py.orig", ".idea/workspace.xml"):
        (package / stray).parent.mkdir(parents=True, exist_ok=True)
        (package / stray).write_text("/home/someone/secret")
    monkeypatch.setattr(webbuild, "_PACKAGE_DIR", package)
    with zipfile.ZipFile(webbuild.build_ragweb_wheel(tmp_path / "out")) as zf:
        names = [n for n in zf.namelist() if n.startswith("ragweb/")]
    assert names and all(n.endswith(".py") and "/." not in n for n in names), names
    assert "ragweb/engine.py" in names


def test_a_build_run_from_inside_its_folder_is_refused(tmp_path, monkeypatch):
    out = webbuild.build_site(tmp_path / "site", precompile=False)
    (out / "docs").mkdir()
    for here in (out, out / "docs"):
        monkeypatch.chdir(here)  # (the swap would leave this shell, or a server started here, in a deleted folder)
        with pytest.raises(UsageError, match="run `rag web --build` from outside it"):
            webbuild.build_site(out, precompile=False)
    assert (out / "manifest.json").is_file()


def test_a_parent_folder_that_cannot_be_written_is_said_so(tmp_path, monkeypatch):
    # (root ignores permission bits: the OS's answer is faked, for this folder only)
    real = tempfile.mkdtemp

    def mkdtemp(*args, **kwargs):
        if Path(kwargs.get("dir", "")) == tmp_path:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real(*args, **kwargs)

    monkeypatch.setattr(webbuild.tempfile, "mkdtemp", mkdtemp)
    with pytest.raises(RagError, match=f"built beside it, in {re.escape(str(tmp_path))}, .*cannot be written"):
        webbuild.build_site(tmp_path / "site", precompile=False)


def test_a_half_built_site_a_killed_build_left_is_removed_later(tmp_path):
    stale, fresh, old_site = (tmp_path / ".ragweb-site-stale", tmp_path / ".ragweb-site-fresh",
                              tmp_path / ".ragweb-old-kept")
    for folder in (stale, fresh, old_site):
        (folder / "wheels").mkdir(parents=True)
    hour_ago = time.time() - 2 * webbuild.LEFTOVER_AGE
    for folder in (stale, old_site):
        os.utime(folder, (hour_ago, hour_ago))
    webbuild.build_site(tmp_path / "site", precompile=False)
    assert not stale.exists() and fresh.exists() and old_site.exists()  # (another build's, and a site mid-swap)

"""`rag web --build`: the static site's layout, its wheels, and the local server (no browser)."""

import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import urllib.request
import zipfile
from pathlib import Path

import pytest

from ragweb import webbuild
from ragweb.errors import UsageError

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
    sample = sorted(p.relative_to(REPO / "sample").as_posix() for p in (REPO / "sample").rglob("*") if p.is_file())
    assert manifest["sample"] == sample
    assert all((site_dir / "sample" / s).is_file() for s in sample)


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


def test_rebuild_replaces_a_site_but_never_a_foreign_folder(tmp_path):
    out = tmp_path / "site"
    webbuild.build_site(out, precompile=False)
    (out / "stale.txt").write_text("old")
    webbuild.build_site(out, precompile=False)
    assert not (out / "stale.txt").exists() and (out / "index.html").is_file()
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("precious")
    with pytest.raises(UsageError, match="not a ragweb site"):
        webbuild.build_site(foreign, precompile=False)
    assert (foreign / "keep.txt").read_text() == "precious"


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

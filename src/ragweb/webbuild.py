"""`rag web`: build the static browser site and serve it on localhost.

The site is self-contained (no CDN) and uses only relative URLs, so it works from any
static host and under a sub-path such as GitHub Pages' ``/repo/``::

    index.html app.js style.css      the page (copied from ``web/``)
    manifest.json                    what app.js loads: Pyodide version, wheel file names, sample files
    pyodide/                         the 5 Pyodide core files, from the npm package ``pyodide``
    wheels/                          ragweb (zipped from the installed package), snowballstemmer, pure pyyaml
    sample/                          the bundled sample corpus for the "try it" button

Pyodide comes from ``node_modules/pyodide`` (``npm install`` with the repository's
package.json, which pins ``PYODIDE_VERSION``). The two third-party wheels are fetched once
with pip into a cache folder (``build/wheels/``). This module is native tooling: unlike
the engine it may run subprocesses (npm, pip).
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

from ragweb.errors import RagError, UsageError

PYODIDE_VERSION = "314.0.7"
"""The Pyodide release the site ships; must equal the pin in package.json."""

SNOWBALL_VERSION = "3.1.1"
"""snowballstemmer wheel shipped to the browser (pure Python, from PyPI)."""

PYYAML_VERSION = "6.0.3"
"""pyyaml built without libyaml into a pure ``py3-none-any`` wheel."""

PYODIDE_CORE_FILES = (
    "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json",
)
"""The only Pyodide files the page ever requests."""

PAGE_FILES = ("index.html", "app.js", "style.css")
"""The page: copied from ``web/`` into the site root (with anything else there but docs)."""

MANIFEST = "manifest.json"
GENERATOR = "ragweb.webbuild"

_PACKAGE_DIR = Path(__file__).resolve().parent
_SKIP_IN_WHEEL = {"__pycache__", "web", "sample"}


# --------------------------------------------------------------------------- locating inputs

def project_root() -> Path | None:
    """The ragweb source checkout: the one holding this package (``src/ragweb`` -> repo root,
    an editable install), else the current directory when it is one; None otherwise."""
    for root in (_PACKAGE_DIR.parent.parent, Path.cwd()):
        if (root / "web" / "index.html").is_file() and (root / "package.json").is_file():
            return root
    return None


def _data_dirs(name: str) -> list[Path]:
    """Where a data folder (``web``, ``sample``) may be: package data first, then the checkout."""
    root = project_root()
    return [_PACKAGE_DIR / name] + ([root / name] if root else [])


def web_dir() -> Path:
    """The page sources: ``ragweb/web`` when installed with package data, else the checkout's ``web/``."""
    for cand in _data_dirs("web"):
        if all((cand / name).is_file() for name in PAGE_FILES):
            return cand
    raise RagError("the page sources (web/index.html) were not found next to the ragweb package; "
                   "run `rag web` from a ragweb source checkout")


def sample_dir() -> Path | None:
    """The bundled sample corpus (``sample/``), if present."""
    return next((cand for cand in _data_dirs("sample") if cand.is_dir()), None)


def _base_dir() -> Path:
    """Where node_modules/ and build/ live: the checkout if any, else the current directory."""
    return project_root() or Path.cwd()


def find_pyodide(pyodide_dir: str | os.PathLike | None = None, install: bool = True) -> Path:
    """The npm package folder of Pyodide ``PYODIDE_VERSION``.

    Looks at ``pyodide_dir``, ``$RAGWEB_PYODIDE_DIR``, then ``node_modules/pyodide`` in the
    checkout and in the current directory. When none is there and the checkout has a
    package.json, runs ``npm install`` once (``install=False`` turns that off).
    """
    cands = []
    if pyodide_dir:
        cands.append(Path(pyodide_dir))
    elif os.environ.get("RAGWEB_PYODIDE_DIR"):
        cands.append(Path(os.environ["RAGWEB_PYODIDE_DIR"]))
    else:
        cands += [_base_dir() / "node_modules" / "pyodide", Path.cwd() / "node_modules" / "pyodide"]
    for cand in cands:
        if (cand / "pyodide.asm.wasm").is_file():
            _check_pyodide_version(cand)
            return cand
    root = project_root()
    if install and not pyodide_dir and root and (root / "package.json").is_file() and shutil.which("npm"):
        print(f"Pyodide not found: running npm install in {root}", file=sys.stderr)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=root, check=True)
        return find_pyodide(None, install=False)
    where = ", ".join(str(c) for c in cands)
    raise RagError(f"Pyodide {PYODIDE_VERSION} not found (looked in {where}); run `npm install` in the "
                   "ragweb checkout (package.json pins it) or pass the folder of the npm package `pyodide`")


def _check_pyodide_version(folder: Path) -> None:
    try:
        version = json.loads((folder / "package.json").read_text("utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return  # a bare copy of the core files: trust it
    if version != PYODIDE_VERSION:
        raise RagError(f"{folder} holds Pyodide {version}, but this ragweb ships {PYODIDE_VERSION}; "
                       "run `npm install` to get the pinned version")


# --------------------------------------------------------------------------- wheels

def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def ragweb_version() -> str:
    """The ragweb version: installed metadata, else pyproject.toml of the checkout, else 0.0.0."""
    root = project_root()
    if root and (root / "pyproject.toml").is_file():
        match = re.search(r'(?m)^version\s*=\s*"([^"]+)"', (root / "pyproject.toml").read_text("utf-8"))
        if match:
            return match.group(1)
    try:
        from importlib.metadata import version
        return version("ragweb")
    except Exception:  # noqa: BLE001 - not installed: any version string will do
        return "0.0.0"


def _dependencies() -> list[str]:
    root = project_root()
    if root and (root / "pyproject.toml").is_file():
        match = re.search(r'(?m)^dependencies\s*=\s*\[([^\]]*)\]', (root / "pyproject.toml").read_text("utf-8"))
        if match:
            return re.findall(r'"([^"]+)"', match.group(1))
    return ["snowballstemmer>=2.2", "pyyaml>=6"]


def build_ragweb_wheel(out_dir: str | os.PathLike) -> Path:
    """Zip the installed ragweb package into a valid ``py3-none-any`` wheel (no pip needed).

    Deterministic: the same sources give byte-identical wheels (fixed timestamps, sorted names).
    """
    version = ragweb_version()
    dist_info = f"ragweb-{version}.dist-info"
    entries: list[tuple[str, bytes]] = []
    for path in sorted(_PACKAGE_DIR.rglob("*")):
        rel = path.relative_to(_PACKAGE_DIR)
        if not path.is_file() or set(rel.parts) & _SKIP_IN_WHEEL or path.suffix in (".pyc", ".pyo"):
            continue
        entries.append((f"ragweb/{rel.as_posix()}", path.read_bytes()))
    metadata = [
        "Metadata-Version: 2.1", "Name: ragweb", f"Version: {version}",
        "Summary: Local context compressor for LLMs (browser build)",
        *(f"Requires-Dist: {dep}" for dep in _dependencies()), "",
    ]
    entries.append((f"{dist_info}/METADATA", "\n".join(metadata).encode()))
    wheel_meta = ["Wheel-Version: 1.0", f"Generator: {GENERATOR}", "Root-Is-Purelib: true",
                  "Tag: py3-none-any", ""]
    entries.append((f"{dist_info}/WHEEL", "\n".join(wheel_meta).encode()))
    entries.append((f"{dist_info}/top_level.txt", b"ragweb\n"))
    record = [f"{name},{_record_hash(data)},{len(data)}" for name, data in entries]
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))

    out = Path(out_dir) / f"ragweb-{version}-py3-none-any.whl"
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return out


def _find_wheel(folder: Path, dist: str, version: str) -> Path | None:
    pattern = re.compile(rf"^{dist}-{re.escape(version)}-py3-none-any\.whl$", re.IGNORECASE)
    for path in sorted(folder.glob("*.whl")) if folder.is_dir() else []:
        if pattern.match(path.name):
            return path
    return None


def _pip(args: list[str], env: dict | None = None) -> None:
    cmd = [sys.executable, "-m", "pip", *args]
    print("running:", " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RagError(f"pip failed ({' '.join(args[:2])}): {proc.stdout.strip()[-2000:]}")


def third_party_wheels(wheels_dir: str | os.PathLike | None = None) -> list[Path]:
    """The pure wheels of ragweb's dependencies, fetched once with pip into ``wheels_dir``.

    Default cache: ``build/wheels/`` of the checkout (or of the current directory).
    """
    folder = Path(wheels_dir) if wheels_dir else _base_dir() / "build" / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    snowball = _find_wheel(folder, "snowballstemmer", SNOWBALL_VERSION)
    if snowball is None:
        _pip(["download", "--no-deps", "--only-binary=:all:", "--python-version", "3.14",
              "-d", str(folder), f"snowballstemmer=={SNOWBALL_VERSION}"])
        snowball = _find_wheel(folder, "snowballstemmer", SNOWBALL_VERSION)
    yaml = _find_wheel(folder, "pyyaml", PYYAML_VERSION)
    if yaml is None:
        # Without libyaml the build is a pure-Python py3-none-any wheel that Pyodide accepts;
        # --no-cache-dir keeps this build out of pip's cache (and a native one out of ours).
        env = {**os.environ, "PYYAML_FORCE_LIBYAML": "0"}
        _pip(["wheel", "--no-deps", "--no-binary", "pyyaml", "--no-cache-dir", "-w", str(folder),
              f"pyyaml=={PYYAML_VERSION}"], env=env)
        yaml = _find_wheel(folder, "pyyaml", PYYAML_VERSION)
    missing = [n for n, w in (("snowballstemmer", snowball), ("pyyaml", yaml)) if w is None]
    if missing:
        raise RagError(f"no pure py3-none-any wheel for {', '.join(missing)} in {folder}")
    with zipfile.ZipFile(yaml) as zf:
        if any(n.endswith((".so", ".pyd")) for n in zf.namelist()):
            raise RagError(f"{yaml} contains a native extension; delete it and rebuild with PYYAML_FORCE_LIBYAML=0")
    return [snowball, yaml]


# --------------------------------------------------------------------------- bytecode

# Importing ragweb, snowballstemmer and yaml from source costs ~0.3 s of every page load
# (Pyodide compiles ~60 modules). The build compiles them once, with Pyodide's own Python
# running under Node, into `__pycache__/*.cpython-314.pyc` files added to the wheels
# (unchecked-hash pycs: used as they are, the .py sources stay for tracebacks).

_PRECOMPILE_JS = r"""
import { pathToFileURL } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';
const [pyodideDir, script, ...pairs] = process.argv.slice(2);
const { loadPyodide } = await import(pathToFileURL(path.join(pyodideDir, 'pyodide.mjs')).href);
const py = await loadPyodide({ indexURL: pyodideDir + path.sep, stdout: () => {}, stderr: (m) => console.error(m) });
py.FS.mkdirTree('/precompile');
const jobs = [];
for (let i = 0; i < pairs.length; i += 2) {
  const name = path.basename(pairs[i]);
  py.FS.writeFile(`/precompile/in-${name}`, fs.readFileSync(pairs[i]));
  jobs.push([`/precompile/in-${name}`, `/precompile/out-${name}`, pairs[i + 1]]);
}
py.globals.set('JOBS', py.toPy(jobs.map(([a, b]) => [a, b])));
py.runPython(fs.readFileSync(script, 'utf8'));
for (const [, out, dest] of jobs) fs.writeFileSync(dest, py.FS.readFile(out));
"""

_PRECOMPILE_PY = r"""
import base64, hashlib, importlib.util, os, py_compile, sysconfig, zipfile

SITE = sysconfig.get_paths()["purelib"]
MODE = py_compile.PycInvalidationMode.UNCHECKED_HASH

def record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

for src, dst in JOBS:
    with zipfile.ZipFile(src) as zin:
        entries = [(info, zin.read(info)) for info in zin.infolist()]
    record_name = next(i.filename for i, _ in entries if i.filename.endswith(".dist-info/RECORD"))
    added = []
    for info, data in entries:
        name = info.filename
        if not name.endswith(".py") or "/__pycache__/" in name:
            continue
        full = os.path.join(SITE, name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
        cfile = importlib.util.cache_from_source(full)
        try:
            py_compile.compile(full, cfile=cfile, dfile=full, doraise=True, invalidation_mode=MODE)
        except py_compile.PyCompileError:
            continue
        with open(cfile, "rb") as f:
            added.append((os.path.relpath(cfile, SITE), f.read()))
    record = [line for line in dict(entries)[next(i for i, _ in entries if i.filename == record_name)]
              .decode().splitlines() if line and not line.startswith(record_name + ",")]
    record += [f"{n},{record_hash(d)},{len(d)}" for n, d in added]
    record.append(f"{record_name},,")
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info, data in entries:
            if info.filename != record_name:
                zout.writestr(info, data)
        for n, d in added:
            zi = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            zout.writestr(zi, d)
        zi = zipfile.ZipInfo(record_name, date_time=(1980, 1, 1, 0, 0, 0))
        zi.compress_type = zipfile.ZIP_DEFLATED
        zout.writestr(zi, "\n".join(record) + "\n")
"""


def precompile_wheels(wheels: list[Path], pyodide: Path, cache_dir: Path) -> bool:
    """Add Pyodide bytecode to ``wheels`` in place (cached by the wheel's sha256).

    Needs ``node``; returns False (wheels left as they are, still valid) when it is missing
    or the compile fails, so a site can always be built.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    todo = []
    for wheel in wheels:
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
        cached = cache_dir / f"{wheel.stem}-{PYODIDE_VERSION}-{digest}.whl"
        if cached.is_file():
            shutil.copy2(cached, wheel)
        else:
            todo.append((wheel, cached))
    if not todo:
        return True
    node = shutil.which("node")
    if node is None:
        print("warning: node not found; wheels are shipped without bytecode (pages load ~0.3 s slower)",
              file=sys.stderr)
        return False
    with tempfile.TemporaryDirectory(prefix="ragweb-pyc-") as tmp:
        script_js, script_py = Path(tmp) / "precompile.mjs", Path(tmp) / "precompile.py"
        script_js.write_text(_PRECOMPILE_JS, "utf-8")
        script_py.write_text(_PRECOMPILE_PY, "utf-8")
        args = [node, str(script_js), str(pyodide.resolve()), str(script_py)]
        for wheel, cached in todo:
            args += [str(wheel), str(Path(tmp) / wheel.name)]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            err = proc.stderr or proc.stdout
            err = err[err.find("PythonError"):] if "PythonError" in err else err[-800:]
            print("warning: could not precompile the wheels (shipped without bytecode): "
                  + err.split("\n    at ")[0].strip()[-1500:], file=sys.stderr)
            return False
        for wheel, cached in todo:
            for stale in cache_dir.glob(f"{wheel.stem}-{PYODIDE_VERSION}-*.whl"):
                stale.unlink()  # an older build of the same wheel
            shutil.copy2(Path(tmp) / wheel.name, cached)
            shutil.copy2(cached, wheel)
    return True


# --------------------------------------------------------------------------- the site

def _is_our_site(folder: Path) -> bool:
    try:
        return json.loads((folder / MANIFEST).read_text("utf-8")).get("generator") == GENERATOR
    except (OSError, ValueError, AttributeError):
        return False


def build_site(out_dir: str | os.PathLike, pyodide_dir: str | os.PathLike | None = None,
               wheels_dir: str | os.PathLike | None = None, precompile: bool = True) -> Path:
    """Write the static site into ``out_dir`` and return its path.

    ``out_dir`` must be empty, missing, or an earlier build (which is replaced).
    ``pyodide_dir``: the npm package folder of Pyodide (default: found by `find_pyodide`).
    ``wheels_dir``: cache folder for the third-party wheels (default ``build/wheels``).
    ``precompile``: add Pyodide bytecode to the wheels (needs node; see `precompile_wheels`).
    """
    out = Path(out_dir).resolve()
    if out.exists():
        if not out.is_dir():
            raise UsageError(f"{out} exists and is not a directory; choose another --build folder")
        if any(out.iterdir()) and not _is_our_site(out):
            raise UsageError(f"{out} is not empty and is not a ragweb site; "
                             "choose an empty or new folder for --build")
    pyodide = find_pyodide(pyodide_dir)
    page = web_dir()
    deps = third_party_wheels(wheels_dir)
    cache = deps[0].parent

    tmp = Path(tempfile.mkdtemp(prefix=".ragweb-site-", dir=out.parent if out.parent.exists() else None))
    try:
        shutil.copytree(page, tmp, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.md"))
        (tmp / "pyodide").mkdir()
        for name in PYODIDE_CORE_FILES:
            shutil.copy2(pyodide / name, tmp / "pyodide" / name)
        wheels = tmp / "wheels"
        wheels.mkdir()
        wheel_names = [build_ragweb_wheel(wheels).name]
        for dep in deps:
            shutil.copy2(dep, wheels / dep.name)
            wheel_names.append(dep.name)
        if precompile:
            precompile_wheels([wheels / name for name in wheel_names], pyodide, cache / "pyc")
        sample_files = _copy_sample(tmp / "sample")
        (tmp / ".nojekyll").write_text("")  # GitHub Pages: serve files as they are
        manifest = {
            "generator": GENERATOR,
            "ragweb": ragweb_version(),
            "pyodide": PYODIDE_VERSION,
            "wheels": wheel_names,
            "sample": sample_files,
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _copy_sample(dest: Path) -> list[str]:
    src = sample_dir()
    names: list[str] = []
    dest.mkdir()
    if src is None:
        return names
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_file() and not any(p.startswith(".") or p == "__pycache__" for p in rel.parts):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / rel)
            names.append(rel.as_posix())
    return names


# --------------------------------------------------------------------------- serving

class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the right MIME types; revalidated on every load (no stale wheels)."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
        ".json": "application/json", ".whl": "application/zip", ".md": "text/plain; charset=utf-8",
        ".py": "text/plain; charset=utf-8",
    }

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        pass


def make_server(site_dir: str | os.PathLike, port: int = 8000,
                host: str = "127.0.0.1") -> http.server.ThreadingHTTPServer:
    """An HTTP server for ``site_dir`` (not started); ``port=0`` picks a free port."""
    handler = functools.partial(_Handler, directory=str(site_dir))
    try:
        return http.server.ThreadingHTTPServer((host, port), handler)
    except OSError as exc:
        raise RagError(f"cannot listen on {host}:{port}: {exc.strerror or exc}; try another --port") from exc


def serve(site_dir: str | os.PathLike, port: int = 8000, host: str = "127.0.0.1") -> None:
    """Serve ``site_dir`` until Ctrl-C; prints the URL first."""
    server = make_server(site_dir, port, host)
    url = f"http://{host}:{server.server_address[1]}/"
    print(f"Serving ragweb at {url}  (Ctrl-C to stop)", flush=True)
    previous = None
    if threading.current_thread() is threading.main_thread():
        # A plain `kill` stops the server like Ctrl-C does (and temporary sites get removed).
        previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


# --------------------------------------------------------------------------- `rag web`

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``rag web``."""
    parser.add_argument("--build", metavar="DIR",
                        help="write the static site into DIR and exit (DIR must be empty or an earlier build)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port to serve on (default 8000; 0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    parser.add_argument("--pyodide-dir", metavar="DIR",
                        help="folder of the npm package `pyodide` (default: node_modules/pyodide)")
    parser.add_argument("--wheels-dir", metavar="DIR",
                        help="cache folder for the snowballstemmer and pyyaml wheels (default: build/wheels)")


def run(args: argparse.Namespace) -> int:
    """Run ``rag web``: build into --build DIR, or build into a temporary folder and serve it."""
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is out of range; use 0-65535")
    if args.build:
        site = build_site(args.build, args.pyodide_dir, args.wheels_dir)
        print(f"Built the ragweb site in {site}")
        return 0
    with tempfile.TemporaryDirectory(prefix="ragweb-site-") as tmp:
        site = build_site(Path(tmp) / "site", args.pyodide_dir, args.wheels_dir)
        serve(site, args.port, args.host)
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m ragweb.webbuild``: the same as ``rag web``, for use before the CLI wires it."""
    parser = argparse.ArgumentParser(prog="rag web", description="Build or serve the ragweb browser app.")
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except UsageError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    except RagError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())

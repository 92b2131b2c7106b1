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
import contextlib
import errno
import functools
import hashlib
import http.server
import ipaddress
import json
import mimetypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import zipfile
from http import HTTPStatus
from pathlib import Path, PurePosixPath

from ragweb.errors import Interrupted, RagError, UsageError
from ragweb import signals
from ragweb.signals import stop_signals_interrupt

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
"""The page: copied from ``web/`` into the site root. Only these are shipped, in the site and
the wheel (setup.py reads this list), so a file a developer leaves in ``web/`` (a scratch
page, an editor's backup) is not published."""

SAMPLE_FILES = (
    "CHANGELOG.md", "README.md", "docs/configuration.md", "docs/headers.md", "docs/troubleshooting.md",
    "pigeonpost/headers.py", "pigeonpost/retry.py", "web/client.js",
)
"""The sample project (paths in ``sample/``): only these are shipped, in the site, the wheel
and the sdist (setup.py reads this list), so a file a user leaves in ``sample/``, such as the
``ctx.json`` of a ``rag pack -o`` run there, is not published."""

DEPLOY_FILES = frozenset({".git", "CNAME", ".nojekyll"})
"""What a static host's deploy folder may hold before the first build (a ``git worktree``'s
``.git``, GitHub Pages' ``CNAME`` and ``.nojekyll``): such a folder counts as empty, and a
build keeps them (``.nojekyll`` it writes itself)."""

MANIFEST = "manifest.json"
GENERATOR = "ragweb.webbuild"

_PACKAGE_DIR = Path(__file__).resolve().parent
_SKIP_IN_WHEEL = {"__pycache__", "web", "sample"}


# --------------------------------------------------------------------------- locating inputs

def project_root() -> Path | None:
    """The ragweb source checkout: the one holding this package (``src/ragweb`` -> repo root,
    an editable install), else the current directory when it is one; None otherwise."""
    for root in (_PACKAGE_DIR.parent.parent, None):
        if root is None:
            try:
                root = Path.cwd()
            except OSError:  # (run from a folder since deleted)
                return None
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

    Looks at ``pyodide_dir``, else ``$RAGWEB_PYODIDE_DIR`` (a folder named either way must
    hold every core file: it is never replaced by an ``npm install``), else
    ``node_modules/pyodide`` in the checkout and in the current directory. When none of
    those has Pyodide and the checkout has a package.json, runs ``npm install`` once
    (``install=False`` turns that off).
    """
    named = pyodide_dir or os.environ.get("RAGWEB_PYODIDE_DIR")
    if named:
        return _named_pyodide(Path(named), "--pyodide-dir" if pyodide_dir else "$RAGWEB_PYODIDE_DIR")
    cands = list(dict.fromkeys([_base_dir() / "node_modules" / "pyodide", Path.cwd() / "node_modules" / "pyodide"]))
    for cand in cands:
        if cand.is_dir() and not _missing_core_files(cand):
            _check_pyodide_version(cand)
            return cand
    root = project_root()
    if install and root and shutil.which("npm"):
        _npm_install(root)
        return find_pyodide(None, install=False)
    where = "; ".join(f"{c} lacks {', '.join(_missing_core_files(c))}" if c.is_dir() else f"no {c}"
                      for c in cands)
    raise RagError(f"Pyodide {PYODIDE_VERSION} not found ({where}); {_npm_hint(root)}, "
                   "or pass the folder of the npm package `pyodide` (--pyodide-dir)")


def _npm_hint(root: Path | None) -> str:
    """How to get the pinned Pyodide: `npm install` in the checkout, whose package.json pins
    it; for an installed ragweb (no checkout), the package and version named, in the current
    folder, where `find_pyodide` looks (a bare `npm install` there installs nothing)."""
    if root:
        return f"run `npm install` in the ragweb checkout {root} (package.json pins it)"
    return f"run `npm install pyodide@{PYODIDE_VERSION}` in this folder"


def _missing_core_files(folder: Path) -> list[str]:
    return [name for name in PYODIDE_CORE_FILES if not (folder / name).is_file()]


def _named_pyodide(folder: Path, named_by: str) -> Path:
    """The Pyodide folder the user named, checked: every core file there, the pinned version."""
    if not folder.is_dir():  # (a usage error, as a -d that names no folder)
        raise UsageError(f"{folder} (from {named_by}) is not a folder; name the folder of the npm package "
                         f"`pyodide` {PYODIDE_VERSION} (node_modules/pyodide after `npm install`)")
    missing = _missing_core_files(folder)
    if missing:
        raise RagError(f"{folder} (from {named_by}) is not a complete Pyodide: it lacks {', '.join(missing)}; "
                       f"name the folder of the npm package `pyodide` {PYODIDE_VERSION} (node_modules/pyodide)")
    _check_pyodide_version(folder)
    return folder


def _npm_install(root: Path) -> None:
    print(f"Pyodide not found: running npm install in {root}", file=sys.stderr)
    try:
        # (one retry, after at most 10 s: with no network npm's defaults retried for over a minute)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--fetch-retries=1",
                        "--fetch-retry-maxtimeout=10000"], cwd=root, check=True)
    except subprocess.CalledProcessError as exc:
        raise RagError(f"`npm install` failed in {root} (exit status {exc.returncode}; its output is above); "
                       "fix that and run it again, or pass --pyodide-dir") from None
    except OSError as exc:
        raise RagError(f"cannot run npm in {root}: {exc.strerror or exc}; run `npm install` there yourself, "
                       "or pass --pyodide-dir") from None


def _check_pyodide_version(folder: Path) -> None:
    try:
        version = json.loads((folder / "package.json").read_text("utf-8"))["version"]
    except (OSError, ValueError, KeyError):
        return  # a bare copy of the core files: trust it
    if version != PYODIDE_VERSION:
        raise RagError(f"{folder} holds Pyodide {version}, but this ragweb ships {PYODIDE_VERSION}; "
                       f"{_npm_hint(project_root())} to get the pinned version")


# --------------------------------------------------------------------------- wheels

def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _checkout_package() -> Path | None:
    """The checkout whose package this running ragweb is (an editable install, or run from
    ``src/``), else None: an installed copy run from inside a checkout is not that checkout's
    code, so its version and dependencies are its own metadata's."""
    root = project_root()
    return root if root and _PACKAGE_DIR.is_relative_to(root.resolve()) else None


def ragweb_version() -> str:
    """The ragweb version: pyproject.toml of the checkout this package is, else the installed
    metadata, else 0.0.0."""
    root = _checkout_package()
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
    root = _checkout_package()
    if root and (root / "pyproject.toml").is_file():
        match = re.search(r'(?m)^dependencies\s*=\s*\[([^\]]*)\]', (root / "pyproject.toml").read_text("utf-8"))
        if match:
            return re.findall(r'"([^"]+)"', match.group(1))
    return ["snowballstemmer>=3.1", "pyyaml>=6"]


def build_ragweb_wheel(out_dir: str | os.PathLike) -> Path:
    """Zip the installed ragweb package into a valid ``py3-none-any`` wheel (no pip needed).

    Deterministic: the same sources give byte-identical wheels (fixed timestamps, sorted names).
    """
    version = ragweb_version()
    dist_info = f"ragweb-{version}.dist-info"
    entries: list[tuple[str, bytes]] = []
    for path in sorted(_PACKAGE_DIR.rglob("*")):
        rel = path.relative_to(_PACKAGE_DIR)
        # (only its modules: an editor's swap or backup file, `.engine.py.swp`, `engine.py~`,
        # holds the user's name and paths, and the wheel is published with the site)
        if (not path.is_file() or set(rel.parts) & _SKIP_IN_WHEEL or path.suffix != ".py"
                or any(part.startswith(".") for part in rel.parts)):
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
    """The cached wheel of ``dist`` ``version`` in ``folder``; None when there is none, or
    when it is damaged (cut short by a full disk or a killed build: it is deleted, and
    fetched again)."""
    pattern = re.compile(rf"^{dist}-{re.escape(version)}-py3-none-any\.whl$", re.IGNORECASE)
    for path in sorted(folder.glob("*.whl")) if folder.is_dir() else []:
        if pattern.match(path.name):
            if _valid_wheel(path):
                return path
            path.unlink(missing_ok=True)
    return None


def _valid_wheel(path: Path) -> bool:
    """Whether ``path`` is a whole zip file (every member's CRC checked)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return zf.testzip() is None
    except (OSError, zipfile.BadZipFile, EOFError, ValueError):
        return False


def _pip(args: list[str], env: dict | None = None) -> None:
    cmd = [sys.executable, "-m", "pip", *args]
    print("running:", " ".join(cmd), file=sys.stderr)
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RagError(f"pip failed ({' '.join(args[:2])}): {proc.stdout.strip()[-2000:]}")


def _wheel_cache() -> Path:
    """The default cache of third-party wheels: the checkout's ``build/wheels``, else (an
    installed ragweb) the user's cache folder, not the current one."""
    root = project_root()
    if root:
        return root / "build" / "wheels"
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "ragweb" / "wheels"


def third_party_wheels(wheels_dir: str | os.PathLike | None = None) -> list[Path]:
    """The pure wheels of ragweb's dependencies, fetched once with pip into ``wheels_dir``.

    Default cache: `_wheel_cache`.
    """
    folder = Path(wheels_dir) if wheels_dir else _wheel_cache()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # (`--wheels-dir /dev/null`: a file stands there)
        raise RagError(f"{folder} (from {'--wheels-dir' if wheels_dir else 'the default cache'}) is not a "
                       "folder; name a folder for the cached wheels, or leave --wheels-dir out") from None
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


PRECOMPILE_TIMEOUT = 300
"""Seconds the node precompile may take (a cold run takes a few); a hung one is killed."""


def precompile_wheels(wheels: list[Path], pyodide: Path, cache_dir: Path) -> bool:
    """Add Pyodide bytecode to ``wheels`` in place (cached by the wheel's sha256).

    Needs ``node``; returns False (wheels left as they are, still valid) when it is missing
    or the compile fails or hangs, so a site can always be built.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    todo = []
    for wheel in wheels:
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()[:16]
        cached = cache_dir / f"{wheel.stem}-{PYODIDE_VERSION}-{digest}.whl"
        if cached.is_file() and _valid_wheel(cached):
            shutil.copy2(cached, wheel)
        else:  # (none, or one cut short by a full disk or a killed build: made again)
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
        try:
            proc = subprocess.run(args, capture_output=True, text=True, timeout=PRECOMPILE_TIMEOUT)
        except subprocess.TimeoutExpired:  # (run() has killed node)
            print(f"warning: precompiling the wheels took over {PRECOMPILE_TIMEOUT} s and was stopped; "
                  "wheels are shipped without bytecode (pages load ~0.3 s slower)", file=sys.stderr)
            return False
        except OSError as exc:
            print(f"warning: could not run {node} to precompile the wheels ({exc.strerror or exc}); "
                  "wheels are shipped without bytecode (pages load ~0.3 s slower)", file=sys.stderr)
            return False
        if proc.returncode != 0:
            err = proc.stderr or proc.stdout
            err = err[err.find("PythonError"):] if "PythonError" in err else err[-800:]
            print("warning: could not precompile the wheels (shipped without bytecode): "
                  + err.split("\n    at ")[0].strip()[-1500:], file=sys.stderr)
            return False
        for wheel, cached in todo:
            for stale in cache_dir.glob(f"{wheel.stem}-{PYODIDE_VERSION}-*.whl"):
                stale.unlink()  # an older build of the same wheel
            part = cached.with_name(cached.name + ".part")
            shutil.copy2(Path(tmp) / wheel.name, part)
            os.replace(part, cached)  # (whole or not at all: a later build trusts what it finds)
            shutil.copy2(cached, wheel)
    return True


# --------------------------------------------------------------------------- the site



def _read_manifest(folder: Path) -> dict:
    try:
        manifest = json.loads((folder / MANIFEST).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _is_our_site(folder: Path) -> bool:
    return _read_manifest(folder).get("generator") == GENERATOR


def _check_destination(out: Path) -> None:
    """Refuse a --build folder that is a file, a foreign folder, or inside what the build reads."""
    sources = [("the page sources", web_dir()), ("the sample corpus", sample_dir()),
               ("the ragweb package", _PACKAGE_DIR)]
    for what, folder in sources:
        if folder is not None and out.is_relative_to(folder.resolve()):
            raise UsageError(f"{out} is inside {folder} ({what}), which the build reads, so the site "
                             "would end up in itself; choose a --build folder outside it")
    if out.exists():
        if not out.is_dir():
            raise UsageError(f"{out} exists and is not a directory; choose another --build folder")
        if os.path.ismount(out):  # (the site is swapped in by renaming the folder, which a mount point refuses)
            raise UsageError(f"{out} is a mount point, which a build cannot replace; build into a folder "
                             f"inside it, such as {out / 'site'}")
        if any(p.name not in DEPLOY_FILES for p in out.iterdir()) and not _is_our_site(out):
            raise UsageError(f"{out} is not empty and is not a ragweb site; choose an empty or new folder "
                             f"for --build (one holding nothing but {', '.join(sorted(DEPLOY_FILES))} will do)")
        try:
            here = Path.cwd().resolve()
        except OSError:
            here = None
        if here is not None and (here == out or out in here.parents):
            # (the new site is swapped in by renaming folders: a shell or a server there would be
            # left in the old one, deleted)
            raise UsageError(f"the current folder is {'' if here == out else 'inside '}{out}, which a build "
                             "replaces whole: run `rag web --build` from outside it")


def build_site(out_dir: str | os.PathLike, pyodide_dir: str | os.PathLike | None = None,
               wheels_dir: str | os.PathLike | None = None, precompile: bool = True) -> Path:
    """Write the static site into ``out_dir`` and return its path.

    ``out_dir`` must be missing, empty (`DEPLOY_FILES` aside), or an earlier build. An
    earlier build is replaced as a whole (one rename), keeping what the user added to it (a
    CNAME, a ``.git``): only the files the manifest says that build wrote are removed.
    ``pyodide_dir``: the npm package folder of Pyodide (default: found by `find_pyodide`).
    ``wheels_dir``: cache folder for the third-party wheels (default ``build/wheels``).
    ``precompile``: add Pyodide bytecode to the wheels (needs node; see `precompile_wheels`).
    """
    if not os.fspath(out_dir).strip():
        raise UsageError("the site folder is empty; name one, e.g. `rag web --build site`")
    out = Path(out_dir).resolve()
    _check_destination(out)
    existed = out.exists()
    made: list[Path] = []
    tmp = old = None
    built = False
    try:
        pyodide = find_pyodide(pyodide_dir)
        page = web_dir()
        deps = third_party_wheels(wheels_dir)
        made = _make_parents(out.parent)
        _remove_leftovers(out.parent)
        # Built next to its destination: the final rename never crosses filesystems.
        try:
            tmp = Path(tempfile.mkdtemp(prefix=".ragweb-site-", dir=out.parent))
        except OSError as e:
            raise RagError(f"cannot build {out}: the site is built beside it, in {out.parent}, and swapped "
                           f"in whole, and that folder cannot be written ({e.strerror or e}); choose a "
                           "--build folder whose parent you can write") from None
        _write_site(tmp, page, pyodide, deps, deps[0].parent / "pyc" if precompile else None)
        kept = _user_files(out, tmp) if existed else []
        with _signals_deferred():
            old = _swap_in(tmp, out, kept)
            built = True
    except KeyboardInterrupt:
        if built:
            raise Interrupted(f"interrupted; the site was built in {out}") from None
        raise Interrupted("interrupted; no site was built" + (f" ({out} is as it was)" if existed else "")) from None
    finally:
        for leftover in (tmp, old):
            if leftover is not None and leftover.exists():
                shutil.rmtree(leftover, ignore_errors=True)
        if not built:
            _remove_empty(made)
    return out


def _write_site(tmp: Path, page: Path, pyodide: Path, deps: list[Path], pyc_cache: Path | None) -> None:
    """Write every file of the site into the empty folder ``tmp``, the manifest last."""
    for name in PAGE_FILES:
        shutil.copy2(page / name, tmp / name)
    (tmp / "pyodide").mkdir()
    for name in PYODIDE_CORE_FILES:
        shutil.copy2(pyodide / name, tmp / "pyodide" / name)
    wheels = tmp / "wheels"
    wheels.mkdir()
    wheel_names = [build_ragweb_wheel(wheels).name]
    for dep in deps:
        shutil.copy2(dep, wheels / dep.name)
        wheel_names.append(dep.name)
    if pyc_cache is not None:
        precompile_wheels([wheels / name for name in wheel_names], pyodide, pyc_cache)
    sample_files = copy_sample(tmp / "sample")
    (tmp / ".nojekyll").write_text("")  # GitHub Pages: serve files as they are
    files = sorted({p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file()} | {MANIFEST})
    manifest = {
        "generator": GENERATOR,
        "ragweb": ragweb_version(),
        "pyodide": PYODIDE_VERSION,
        "wheels": wheel_names,
        "sample": sample_files,
        "files": files,  # what a rebuild may remove: anything else in the folder is the user's
    }
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")


def _make_parents(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; returns those it created, deepest first."""
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _remove_empty(missing)
        raise RagError(f"cannot create {folder}: {exc.strerror or exc}; choose another --build folder") from None
    return missing


def _remove_empty(folders: list[Path]) -> None:
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            break


def _written_by_earlier_build(site: Path) -> set[str]:
    """The files (relative paths) the build that left ``site`` wrote, from its manifest."""
    manifest = _read_manifest(site)

    def listed(key: str) -> list[str]:
        value = manifest.get(key)
        return [f for f in value if isinstance(f, str)] if isinstance(value, list) else []

    if isinstance(manifest.get("files"), list):
        return set(listed("files"))
    # A build from before the manifest listed its files: what such a build wrote.
    return {MANIFEST, ".nojekyll", *(f"pyodide/{n}" for n in PYODIDE_CORE_FILES),
            *(f"wheels/{w}" for w in listed("wheels")), *(f"sample/{s}" for s in listed("sample")),
            *PAGE_FILES}


def _user_files(out: Path, tmp: Path) -> list[str]:
    """What in the earlier build ``out`` its build did not write (relative paths; a folder
    holding nothing of the build's counts as one entry). Refuses when the new site ``tmp``
    has a file of its own at one of those places."""
    ours = _written_by_earlier_build(out)
    our_dirs = {str(parent) for rel in ours for parent in PurePosixPath(rel).parents}
    found: list[str] = []

    def walk(folder: Path, prefix: str) -> None:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            rel = prefix + entry.name
            if entry.is_dir(follow_symlinks=False) and rel in our_dirs:
                walk(Path(entry.path), rel + "/")
            elif rel not in ours or entry.is_dir(follow_symlinks=False):
                found.append(rel)

    walk(out, "")
    clashes = [rel for rel in found
               if any((tmp / p).exists() and not (tmp / p).is_dir() for p in PurePosixPath(rel).parents)
               or (tmp / rel).exists() or (tmp / rel).is_symlink()]
    if clashes:
        raise UsageError(f"{out} holds files that rag web did not write where the new build puts its own: "
                         f"{', '.join(clashes)}; move them out of {out} and build again")
    return found


@contextlib.contextmanager
def _signals_deferred():
    """Hold Ctrl-C, SIGTERM and SIGHUP until the block is done (delivered right after it)."""
    sigs = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _remove_leftovers(folder: Path) -> None:
    """Delete the half-built sites a killed build left in ``folder`` (``.ragweb-site-*``, 14 MB
    each) once no build can be using them (an hour on). (A ``.ragweb-old-*`` one is kept: a
    build killed mid-swap leaves the earlier site there, with what the user added to it.)"""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".ragweb-site-") and entry.is_dir(follow_symlinks=False):
            try:
                if time.time() - entry.stat(follow_symlinks=False).st_mtime > LEFTOVER_AGE:
                    shutil.rmtree(entry.path, ignore_errors=True)
            except OSError:
                pass


LEFTOVER_AGE = 3600  # seconds: a build's own folders are younger (two builds may run at once)


def _swap_in(tmp: Path, out: Path, kept: list[str]) -> Path | None:
    """Put the new site ``tmp`` at ``out``, moving the ``kept`` entries of the site there
    into it (renames in one folder: nothing is copied). Returns the old site to delete."""
    if not out.exists():
        tmp.rename(out)
        return None
    old = out.with_name(tmp.name.replace(".ragweb-site-", ".ragweb-old-", 1))
    out.rename(old)
    moved: list[str] = []
    try:
        for rel in kept:
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (old / rel).rename(tmp / rel)
            moved.append(rel)
        tmp.rename(out)
    except BaseException:
        for rel in reversed(moved):
            (tmp / rel).rename(old / rel)
        old.rename(out)
        raise
    return old


def copy_sample(dest: Path) -> list[str]:
    """Copy the `SAMPLE_FILES` there are into the folder ``dest`` (made if need be); returns
    their names. (The site's sample; the tests' copies of it too.)"""
    src = sample_dir()
    names: list[str] = []
    dest.mkdir(parents=True, exist_ok=True)
    if src is None:
        return names
    for name in SAMPLE_FILES:
        if (src / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / name, dest / name)
            names.append(name)
    return names


# --------------------------------------------------------------------------- serving

_SURROGATE_RE = re.compile("[\ud800-\udfff]")


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files with the right MIME types; revalidated on every load (no stale wheels)."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
        ".json": "application/json", ".whl": "application/zip", ".md": "text/plain; charset=utf-8",
        ".py": "text/plain; charset=utf-8",
    }

    timeout = 30
    """Seconds a connection may sit idle (mid-request or mid-download) before it is dropped,
    so a half-open connection does not hold a thread forever."""

    def send_head(self):
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path, errors="surrogatepass")
        if "\x00" in path or _SURROGATE_RE.search(path):  # (open() would raise: ValueError, UnicodeEncodeError)
            self.send_error(HTTPStatus.BAD_REQUEST, "Bad request path")
            return None
        return super().send_head()

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        pass


class _Server(http.server.ThreadingHTTPServer):
    """A thread per connection; a client that goes away (a closed tab, an aborted download,
    a connection idle past the timeout) is not an error worth a traceback."""

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Server6(_Server):
    address_family = socket.AF_INET6


def _url_host(host: str) -> str:
    """``host`` as a URL writes it: an IPv6 address in brackets."""
    return f"[{host.strip('[]')}]" if ":" in host else host


def make_server(site_dir: str | os.PathLike, port: int = 8000,
                host: str = "127.0.0.1") -> http.server.ThreadingHTTPServer:
    """An HTTP server for ``site_dir`` (not started); ``port=0`` picks a free port."""
    handler = functools.partial(_Handler, directory=str(site_dir))
    if not mimetypes.inited:
        mimetypes.init()  # now, not lazily at a request that may find no file descriptor free
    server_class = _Server6 if ":" in host else _Server  # (an IPv6 address: `--host ::1`, `--host ::`)
    try:
        return server_class((host.strip("[]"), port), handler)
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            hint = "try another --port" + (" (ports below 1024 need privileges)" if exc.errno == errno.EACCES else "")
        else:
            hint = "--host must be a name or address of this computer, such as 127.0.0.1"
        raise RagError(f"cannot listen on {_url_host(host)}:{port}: {exc.strerror or exc}; {hint}") from None


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def serve(site_dir: str | os.PathLike, port: int = 8000, host: str = "127.0.0.1",
          server: http.server.ThreadingHTTPServer | None = None) -> None:
    """Serve ``site_dir`` until Ctrl-C, SIGTERM or SIGHUP; prints the URL first. ``server``:
    one `make_server` made for it already (its port taken before the site was built)."""
    server = server or make_server(site_dir, port, host)
    with stop_signals_interrupt():
        try:
            print(f"Serving ragweb at http://{_url_host(host)}:{server.server_address[1]}/  (Ctrl-C to stop)",
                  flush=True)
            if not _is_loopback(server.server_address[0]):
                print(f"warning: --host {host} makes the site reachable from the network, not only from "
                      "this computer (the default --host 127.0.0.1 keeps it local)", file=sys.stderr, flush=True)
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
        finally:
            server.server_close()


# --------------------------------------------------------------------------- `rag web`

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``rag web``."""
    parser.add_argument("--build", metavar="DIR",
                        help="write the static site into DIR and exit (DIR must be new, empty or an earlier build; "
                        "a .git, CNAME or .nojekyll in it is kept)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port to serve on (default 8000; 0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    parser.add_argument("--pyodide-dir", metavar="DIR",
                        help="folder of the npm package `pyodide` (default: $RAGWEB_PYODIDE_DIR, else node_modules/pyodide)")
    parser.add_argument("--wheels-dir", metavar="DIR",
                        help="cache folder for the snowballstemmer and pyyaml wheels (default: build/wheels of the checkout, else ~/.cache/ragweb/wheels)")


def run(args: argparse.Namespace) -> int:
    """Run ``rag web``: build into --build DIR, or build into a temporary folder and serve it."""
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is out of range; use 0-65535")
    if args.build is not None and not args.build.strip():
        raise UsageError("--build needs a folder, e.g. `rag web --build site`")
    # (an empty name was taken as no flag at all: the default folders, without a word)
    if args.pyodide_dir is not None and not args.pyodide_dir.strip():
        raise UsageError("--pyodide-dir is empty; name the folder of the npm package pyodide, or leave "
                         "--pyodide-dir out for $RAGWEB_PYODIDE_DIR, else node_modules/pyodide")
    if args.wheels_dir is not None and not args.wheels_dir.strip():
        raise UsageError("--wheels-dir is empty; name a folder for the cached wheels, or leave --wheels-dir "
                         "out for the default cache")
    if not args.host.strip():
        raise UsageError("--host is empty; name an address to serve on: 127.0.0.1 (the default, this "
                         "computer only) or 0.0.0.0 (every network interface)")
    try:
        with stop_signals_interrupt():
            if args.build is not None:
                site = build_site(args.build, args.pyodide_dir, args.wheels_dir)
                print(f"Built the ragweb site in {site}")
                return 0
            with tempfile.TemporaryDirectory(prefix="ragweb-site-") as tmp:
                site = Path(tmp) / "site"
                server = make_server(site, args.port, args.host)  # (a busy port is said before the build, not after)
                try:
                    build_site(site, args.pyodide_dir, args.wheels_dir)
                except BaseException:
                    server.server_close()
                    raise
                serve(site, args.port, args.host, server=server)
    except Interrupted:
        raise
    except KeyboardInterrupt:  # between the steps: not the CLI's default message, which is about an index
        raise Interrupted("interrupted; rag web stopped") from None
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
    except KeyboardInterrupt as exc:
        print("\n" + getattr(exc, "message", "interrupted"), file=sys.stderr)
        return 128 + (signals.stopped_by or 2)  # (as `rag web` reports it: SIGINT 130, SIGTERM 143)


if __name__ == "__main__":
    raise SystemExit(main())

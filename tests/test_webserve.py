"""`rag web`'s local server and its flags, on a small folder (no Pyodide, no browser)."""

import argparse
import http.server
import os
import socket
import struct
import threading
import time

import pytest

from ragweb import webbuild
from ragweb.errors import RagError, UsageError


@pytest.fixture
def site(tmp_path):
    (tmp_path / "index.html").write_text("<p>hi</p>")
    with open(tmp_path / "big.bin", "wb") as f:
        f.truncate(64 << 20)  # more than the socket buffers hold
    return tmp_path


@pytest.fixture
def server(site):
    server = webbuild.make_server(site, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def _connect(server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=10)


def _get(server, path: str) -> bytes:
    with _connect(server) as s:
        s.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def test_a_nul_byte_or_a_lone_surrogate_in_the_path_is_a_bad_request(server, capfd):
    for path in ("/%00", "/index.html%00.js", "/%ed%a0%80", "/sample/%ed%b0%80"):
        assert _get(server, path).startswith(b"HTTP/1.0 400 "), path
    assert _get(server, "/index.html").startswith(b"HTTP/1.0 200 ")
    assert "Traceback" not in capfd.readouterr().err


def test_a_client_that_goes_away_mid_download_is_no_error(server, capfd):
    for _ in range(3):
        s = _connect(server)
        s.sendall(b"GET /big.bin HTTP/1.0\r\n\r\n")
        s.recv(1000)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset, as an aborted load
        s.close()
    time.sleep(1.0)  # the handler threads hit the reset
    assert _get(server, "/index.html").startswith(b"HTTP/1.0 200 ")
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception" not in err, err


def test_an_idle_connection_is_dropped(site, monkeypatch):
    assert 10 <= (webbuild._Handler.timeout or 0) <= 120
    monkeypatch.setattr(webbuild._Handler, "timeout", 0.5)
    server = webbuild.make_server(site, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with _connect(server) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # headers never finished
            start = time.monotonic()
            assert s.recv(100) == b""
            assert time.monotonic() - start < 5
    finally:
        server.shutdown()
        server.server_close()


def _args(**kwargs) -> argparse.Namespace:
    return argparse.Namespace(**{"build": None, "port": 0, "host": "127.0.0.1", "pyodide_dir": None,
                                 "wheels_dir": None, **kwargs})


@pytest.mark.parametrize("kwargs, flag", [({"build": ""}, "--build"), ({"build": "  "}, "--build"),
                                          ({"host": ""}, "--host")])
def test_empty_build_or_host_is_a_usage_error(monkeypatch, kwargs, flag):
    def must_not_run(*args, **kw):
        raise AssertionError("rag web went on with an empty flag")

    monkeypatch.setattr(webbuild, "build_site", must_not_run)
    monkeypatch.setattr(webbuild, "serve", must_not_run)
    with pytest.raises(UsageError, match=flag):
        webbuild.run(_args(**kwargs))


def test_a_host_that_is_not_here_is_not_blamed_on_the_port(site):
    with pytest.raises(RagError) as err:
        webbuild.make_server(site, port=0, host="203.0.113.7")  # TEST-NET-3: no address of this computer
    assert "--host" in str(err.value) and "--port" not in str(err.value)


def test_a_busy_port_says_try_another_port(site, server):
    with pytest.raises(RagError, match="try another --port"):
        webbuild.make_server(site, port=server.server_address[1])


@pytest.mark.parametrize("host, warned", [("127.0.0.1", False), ("localhost", False), ("0.0.0.0", True),
                                          ("::1", False), ("::", True)])
def test_serving_beyond_this_computer_warns(site, monkeypatch, capsys, host, warned):
    if ":" in host and (why := _no_ipv6()):
        pytest.skip(why)
    monkeypatch.setattr(http.server.ThreadingHTTPServer, "serve_forever", lambda self, *a: None)
    webbuild.serve(site, 0, host)
    out, err = capsys.readouterr()
    assert out.startswith(f"Serving ragweb at http://{f'[{host}]' if ':' in host else host}:")
    assert ("reachable from the network" in err) == warned, err


def _no_ipv6() -> str:
    """Why this machine cannot serve on IPv6's loopback (a container without IPv6), or ''."""
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return ""
    except OSError as e:
        return f"no IPv6 loopback here: {e}"


@pytest.mark.parametrize("host", ["::1", "[::1]"])
def test_an_ipv6_host_is_served_and_its_url_bracketed(site, host):
    # (an IPv6 address failed: the server was IPv4 only, "Address family for hostname not supported")
    if why := _no_ipv6():
        pytest.skip(why)
    import urllib.request
    server = webbuild.make_server(site, port=0, host=host)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        assert server.socket.family == socket.AF_INET6
        url = f"http://{webbuild._url_host(host)}:{server.server_address[1]}/index.html"
        assert url.startswith("http://[::1]:")
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.status == 200
    finally:
        server.shutdown()
        server.server_close()


def test_the_checkout_is_found_from_a_deleted_current_folder(tmp_path):
    import subprocess
    import sys
    gone = tmp_path / "gone"
    gone.mkdir()
    code = ("import os; os.chdir(%r); os.rmdir(%r); from ragweb import webbuild; print(webbuild.project_root())"
            % (str(gone), str(gone)))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == str(webbuild._PACKAGE_DIR.parent.parent), r.stderr


def test_a_busy_port_is_said_before_the_site_is_built(server, tmp_path):
    # (it was found only after the whole build: seconds, or minutes on a first run; here the
    # build could not even start, with no Pyodide where it is told to look)
    args = argparse.Namespace(build=None, port=server.server_address[1], host="127.0.0.1",
                              pyodide_dir=str(tmp_path / "no-pyodide"), wheels_dir=str(tmp_path / "wheels"))
    with pytest.raises(RagError, match="try another --port"):
        webbuild.run(args)


def test_a_wheel_carries_the_page_and_the_sample_so_rag_web_works_when_installed(tmp_path):
    """`pip install .` and a wheel left out web/ and sample/ (the package-data globs matched
    nothing), so `rag web` failed outside a checkout; setup.py copies them in."""
    import subprocess
    import sys
    import zipfile
    import shutil
    repo = webbuild.project_root()
    src = tmp_path / "src"  # (a clean copy: a checkout's build/ may hold an earlier build's files)
    shutil.copytree(repo, src, ignore=shutil.ignore_patterns(".git", ".venv", "node_modules", "build", "dist", "site",
                                                          "bench", "*.egg-info", "__pycache__", ".rag*"))
    (src / "sample" / "ctx.json").write_text("{}")  # (`rag pack -o ctx.json` run there: not the sample's)
    (src / "web" / "scratch.html").write_text("<p>a draft</p>")  # (a developer's: not the page's)
    (src / "web" / "app.js~").write_text("// an editor's backup")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(src)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("ragweb-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {n.removeprefix("ragweb/web/") for n in names if n.startswith("ragweb/web/")} == set(webbuild.PAGE_FILES)
    assert {n.removeprefix("ragweb/sample/") for n in names if n.startswith("ragweb/sample/")} == set(webbuild.SAMPLE_FILES)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_the_sdist_carries_what_make_test_and_make_bench_need(tmp_path):
    """The sdist held only the unit tests' own files (setuptools' default): no e2e/, bench/,
    tests/conftest.py or .ci/run, so its tests and benchmarks could not run. Every file git
    tracks is in it now, except git's and GitHub's own."""
    import subprocess
    import sys
    import tarfile
    import shutil
    repo = webbuild.project_root()
    tracked = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], capture_output=True, text=True, check=True)
    files = {f for f in tracked.stdout.split("\0") if f and (repo / f).is_file()}
    src = tmp_path / "src"  # (a clean copy of what git tracks, plus benchmark output that must stay out)
    for f in files:
        (src / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / f, src / f)
    (src / "bench" / "out").mkdir(parents=True, exist_ok=True)
    (src / "bench" / "out" / "native.json").write_text("{}")
    (src / "sample" / "ctx.json").write_text("{}")
    r = subprocess.run([sys.executable, "-m", "build", "--sdist", "-o", str(tmp_path / "dist"), str(src)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    (sdist,) = (tmp_path / "dist").glob("ragweb-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n and tar.getmember(n).isfile()}
    expected = {f for f in files if not f.startswith((".github/", ".gitignore"))}
    assert expected - names == set()
    assert not [n for n in names if n.startswith("bench/out/") or "__pycache__" in n or n == "sample/ctx.json"]


def test_the_shipped_sample_is_the_files_git_tracks_in_sample():
    """The sample is a fixed list (a `ctx.json` left in sample/ was shipped in the site, the
    wheel and the sdist); a file added to the sample must be added to that list too."""
    import subprocess
    repo = webbuild.project_root()
    tracked = subprocess.run(["git", "-C", str(repo), "ls-files", "sample"], capture_output=True, text=True, check=True)
    assert sorted(f.removeprefix("sample/") for f in tracked.stdout.split()) == sorted(webbuild.SAMPLE_FILES)


def test_the_shipped_page_is_the_files_git_tracks_in_web():
    """The page is a fixed list (a stray file in web/ was published with the site and the
    wheel); a file added to the page must be added to that list too."""
    import subprocess
    repo = webbuild.project_root()
    tracked = subprocess.run(["git", "-C", str(repo), "ls-files", "web"], capture_output=True, text=True, check=True)
    assert sorted(f.removeprefix("web/") for f in tracked.stdout.split() if f != "web/README.md") == \
        sorted(webbuild.PAGE_FILES)


def test_the_help_of_pyodide_dir_names_its_environment_variable():
    parser = argparse.ArgumentParser(prog="rag web")
    webbuild.add_arguments(parser)
    assert "$RAGWEB_PYODIDE_DIR" in " ".join(parser.format_help().split())


@pytest.mark.parametrize("make", ["file", "under_file"])
def test_a_wheels_dir_that_is_no_folder_is_an_error_naming_it(tmp_path, make):
    # (`rag web --wheels-dir /dev/null` said only "Error: [Errno 17] File exists: '/dev/null'")
    from ragweb.errors import RagError
    from ragweb.webbuild import third_party_wheels
    (tmp_path / "f").write_text("x")
    folder = tmp_path / "f" if make == "file" else tmp_path / "f" / "wheels"
    with pytest.raises(RagError) as info:
        third_party_wheels(folder)
    assert str(info.value).startswith(f"{folder} (from --wheels-dir) is not a folder"), str(info.value)


def test_an_installed_ragweb_without_pyodide_says_which_npm_install_gets_it(tmp_path):
    """`rag web` of an installed ragweb (no checkout) said to run `npm install` "in the ragweb
    checkout (package.json pins it)", which such a user has not got, and a bare `npm install`
    in the current folder (as README said) installs nothing there: the package and its
    version must be named."""
    import shutil
    import subprocess
    import sys
    repo = webbuild.project_root()
    lib = tmp_path / "lib"  # (the package as a wheel installs it, page and sample inside; no package.json)
    shutil.copytree(repo / "src" / "ragweb", lib / "ragweb", ignore=shutil.ignore_patterns("__pycache__"))
    for folder, names in (("web", webbuild.PAGE_FILES), ("sample", webbuild.SAMPLE_FILES)):
        for name in names:
            (lib / "ragweb" / folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(repo / folder / name, lib / "ragweb" / folder / name)
    here = tmp_path / "here"
    here.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "RAGWEB_PYODIDE_DIR"}
    env["PYTHONPATH"] = str(lib)
    r = subprocess.run([sys.executable, "-m", "ragweb", "web", "--build", "site"], cwd=here, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert f"npm install pyodide@{webbuild.PYODIDE_VERSION}" in r.stderr and "checkout" not in r.stderr, r.stderr
    assert not (here / "site").exists()
    assert f"`npm install pyodide@{webbuild.PYODIDE_VERSION}` in the current folder" in (repo / "README.md").read_text()

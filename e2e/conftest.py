"""End-to-end fixtures: the static site built once, served on 127.0.0.1, driven by Debian's
Chromium through Playwright with every non-local request aborted (offline is enforced).

Pyodide boots are the slow part (~2-3 s each), so most tests share one booted page
(`app`, reset before each test); tests about reloads, restarts and storage get their own.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample"
CHROMIUM = os.environ.get("RAGWEB_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]
BOOT_TIMEOUT_MS = 60_000


BROWSER_FIXTURES = {"page", "context", "browser", "app", "_shared", "launch_persistent"}


def pytest_collection_modifyitems(config, items):
    # A missing browser must fail the run, not quietly skip the browser tests.
    if not Path(CHROMIUM).exists() and any(
            BROWSER_FIXTURES.intersection(getattr(item, "fixturenames", ())) for item in items):
        raise pytest.UsageError(f"no Chromium at {CHROMIUM}: install it with `apt-get install chromium` "
                                "(`make test` does) or set RAGWEB_CHROMIUM")


SUB_PATH = "/ragweb/"
"""The site is served under a sub-path, as on GitHub Pages (https://user.github.io/repo/)."""


@pytest.fixture(scope="session")
def site_dir(tmp_path_factory) -> Path:
    """The static site, built once per session with `webbuild.build_site`."""
    from ragweb import webbuild
    return webbuild.build_site(tmp_path_factory.mktemp("www") / SUB_PATH.strip("/"))


@pytest.fixture(scope="session")
def origin(site_dir) -> str:
    """http://127.0.0.1:PORT serving the folder that holds the site (a free local port)."""
    from ragweb import webbuild
    server = webbuild.make_server(site_dir.parent, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def base_url(origin) -> str:
    """Overrides pytest-playwright's base_url: the site's URL, under its sub-path."""
    return origin + SUB_PATH


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": ARGS}


class Offline:
    """Routes a context so that only the local site is reachable; records what was blocked."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.blocked: list[str] = []

    def __call__(self, route):
        url = route.request.url
        if url.startswith(self.base_url) or url.startswith("data:"):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def install(self, context):
        context.route("**/*", self)
        return context


@pytest.fixture
def offline(base_url) -> Offline:
    return Offline(base_url)


def wait_js(page, expr: str, timeout: float = 30.0) -> None:
    """Poll until the JS expression ``expr`` is truthy (awaiting a Promise result).

    Playwright's ``wait_for_function`` evaluates strings with ``new Function``, which the
    page's Content-Security-Policy forbids; ``page.evaluate`` goes through DevTools."""
    deadline = time.monotonic() + timeout
    while True:
        if page.evaluate(f"(async () => {{ try {{ return !!(await ({expr})); }} catch (e) {{ return false; }} }})()"):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for: {expr}")
        time.sleep(0.05)


def _hold_wheels(page):
    """Hold the page's wheel requests, so its engine keeps loading until the returned
    ``release()`` lets them go on (to the context's offline routing)."""
    held = []

    def hold(route):
        if held is None:
            route.fallback()
        else:
            held.append(route)
    page.route("**/wheels/*.whl", hold)

    def release():
        nonlocal held
        waiting, held = held, None
        for route in waiting:
            route.fallback()
    return release


@pytest.fixture
def hold_wheels():
    """`_hold_wheels`: ``release = hold_wheels(page)`` before the page is opened."""
    return _hold_wheels


def boot(page, path: str = "./") -> dict:
    """Open the app and wait for window.ragReady; returns what it resolved to.

    Then waits (up to a minute) for a store that answered after the page's wait for it: on a
    loaded machine a new profile's first open of IndexedDB can take more than those 5 s
    (STORE_OPEN_WAIT_MS), and until it answers the page saves nothing (see the page's
    storeAnswered); a test's first flush then found a tab that saves nothing."""
    page.goto(path)
    wait_js(page, "typeof window.ragReady !== 'undefined'")
    info = page.evaluate("window.ragReady")
    wait_js(page, "!/did not answer/.test(window.ragweb.storage().unread || '')", 60)
    return info


class App:
    """A booted page plus helpers that call the JS API and parse its JSON strings."""

    def __init__(self, page, offline: Offline, console: list):
        self.page = page
        self.offline = offline
        self.console = console

    def call(self, expr: str, *args):
        """Evaluate a JS function expression (e.g. ``(f, c) => ragIndex(f, c)``) with args; parse JSON."""
        out = self.page.evaluate(f"(args) => ({expr})(...args)", list(args))
        assert isinstance(out, str), f"{expr} returned {out!r}, not a JSON string"
        return json.loads(out)

    def index(self, filename, content):
        return self.call("(f, c) => ragIndex(f, c)", filename, content)

    def query(self, q, *k):
        return self.call("(q, ...k) => ragQuery(q, ...k)", q, *k)

    def pack(self, q, *budget):
        return self.call("(q, ...b) => ragPack(q, ...b)", q, *budget)

    def stats(self):
        return self.call("() => ragStats()")

    def flush(self):
        return json.loads(self.page.evaluate("ragFlush()"))

    def defer_saves(self) -> None:
        """Leave the API's changes unsaved until ragFlush, a close or a reload: they are not
        saved at once (as once those saves have had their share of the page's time, see
        apiChanged) and the debounce is a minute (300 ms passes between two calls of a test
        on a loaded machine, and its save came before the close the test was about)."""
        self.page.evaluate("window.ragweb.setSaveBudget(-1e9); window.ragweb.setSaveDelay(60000)")

    def wait(self, expr: str, timeout: float = 30.0) -> None:
        wait_js(self.page, expr, timeout)

    def drop_files(self, files: dict) -> None:
        """Drop loose files on the drop zone and wait until they are indexed: name -> text, or
        [character, count] for a big one (made in the page, not sent)."""
        self.page.evaluate("""async (files) => {
            const dt = new DataTransfer();
            for (const [name, body] of files) {
                dt.items.add(new File([typeof body === 'string' ? body : body[0].repeat(body[1])], name));
            }
            document.querySelector('[data-testid="dropzone"]').dispatchEvent(
                new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
            await window.ragweb.idle();
        }""", list(files.items()))

    def index_sample(self) -> None:
        for path, text in sample_documents():
            assert self.index(path, text).get("success"), path


def sample_documents() -> list[tuple[str, str]]:
    """(relative path, text) of every file of the bundled sample corpus, sorted."""
    from ragweb.webbuild import SAMPLE_FILES
    return sorted((name, (SAMPLE / name).read_text(encoding="utf-8")) for name in SAMPLE_FILES)


@pytest.fixture(scope="session")
def _shared(browser, base_url):
    """One context and one booted page for the whole session."""
    offline = Offline(base_url)
    context = browser.new_context(base_url=base_url)
    offline.install(context)
    page = context.new_page()
    page.set_default_timeout(BOOT_TIMEOUT_MS)
    console: list = []
    page.on("console", lambda m: console.append((m.type, m.text)))
    page.on("pageerror", lambda e: console.append(("pageerror", str(e))))
    info = boot(page)
    assert info["ready"] is True
    yield App(page, offline, console), info
    context.close()


@pytest.fixture
def app(_shared) -> App:
    """The shared booted page, emptied before the test (index cleared, UI reset)."""
    app, _ = _shared
    app.page.evaluate("""async () => {
        await window.ragweb.idle();
        ragClear();
        await ragFlush();
        for (const id of ['search', 'pack-output']) {
            const el = document.getElementById(id);
            if ('value' in el) el.value = ''; else el.textContent = '';
        }
        document.getElementById('results').replaceChildren();
        document.getElementById('banner').hidden = true;
        document.getElementById('copy-prompt').disabled = true;
        document.getElementById('pack-format').value = 'json';
        window.ragweb.refresh();
        delete window.__pwned;
        delete window.__ragLastCopied;
    }""")
    app.console.clear()
    return app


@pytest.fixture
def ready_info(_shared) -> dict:
    return _shared[1]


@pytest.fixture
def launch_persistent(playwright, browser_type_launch_args, base_url, tmp_path):
    """Launch (and relaunch) a persistent Chromium profile in tmp_path; returns (context, Offline)."""
    contexts = []

    def launch(profile: str = "profile"):
        ctx = playwright.chromium.launch_persistent_context(
            str(tmp_path / profile), base_url=base_url, **browser_type_launch_args)
        ctx.set_default_timeout(BOOT_TIMEOUT_MS)
        offline = Offline(base_url).install(ctx)
        contexts.append(ctx)
        return ctx

    yield launch
    for ctx in contexts:
        try:
            ctx.close()
        except Exception:  # noqa: BLE001 - already closed by the test
            pass


@pytest.fixture
def sample_copy(tmp_path) -> Path:
    from ragweb.webbuild import copy_sample
    dest = tmp_path / "corpus"
    copy_sample(dest)  # (the shipped files: not an index or a ctx.json left in sample/)
    return dest


@pytest.fixture
def boot_page():
    """The `boot` helper: open the app in a page and await window.ragReady."""
    return boot


@pytest.fixture
def wait_for():
    """The `wait_js` helper: poll a JS expression until it is truthy (CSP-safe)."""
    return wait_js


@pytest.fixture
def older_index():
    """An index as a version before HTML views saved it (no "markup" analysis setting, so
    a page's markup was indexed as text), built by the real engine natively: a page whose
    tag carries the word "zebrafish", and a Markdown note."""
    from ragweb.engine import Engine
    eng = Engine.memory()
    old = dict(eng.settings)
    old.pop("markup")
    eng._set_meta("analysis", old)
    eng._load_state()
    eng.add_document("docs/page.html", '<p class="zebrafish">Quokka rules apply.</p>\n', mtime=1.0)
    eng.add_document("notes.md", "# Notes\n\nQuokka notes.\n", mtime=2.0)
    assert eng.settings_changed and eng.search("zebrafish")
    return eng


@pytest.fixture
def sample_docs() -> list[tuple[str, str]]:
    return sample_documents()


@pytest.fixture
def make_app(offline):
    """Wrap a page into an `App` (JSON-parsing helpers)."""
    def make(page, console=None):
        return App(page, offline, console if console is not None else [])
    return make

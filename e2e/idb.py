"""What the browser tests of the stored index share: reading and writing the record in
IndexedDB, and pages of new profiles whose stored index is set up."""

import base64

from conftest import wait_js

# The stored record's version, size and savedAt; called with true, the whole record (bytes as an array).
READ_RECORD_JS = """(whole) => new Promise((ok, ko) => {
    const rq = indexedDB.open('ragweb', 1);
    rq.onerror = () => ko(rq.error);
    rq.onsuccess = () => {
        const tx = rq.result.transaction('index', 'readonly');
        const get = tx.objectStore('index').get('current');
        get.onsuccess = () => { const r = get.result; rq.result.close();
            ok(!r ? null : whole ? {...r, bytes: Array.from(r.bytes)}
                         : {version: r.version, size: r.bytes ? r.bytes.byteLength : null, savedAt: r.savedAt}); };
        get.onerror = () => ko(get.error);
    };
})"""

# Writes ``record`` as the stored one; its bytes are a list of numbers, or (much faster to
# send for a big index: a list goes over the wire as one object per byte) `packed` ones.
WRITE_RECORD_JS = """(record) => new Promise((ok, ko) => {
    const rq = indexedDB.open('ragweb', 1);
    rq.onupgradeneeded = () => rq.result.createObjectStore('index');
    rq.onerror = () => ko(rq.error);
    rq.onsuccess = () => {
        const tx = rq.result.transaction('index', 'readwrite');
        const bytes = typeof record.bytes === 'string'
            ? Uint8Array.from(atob(record.bytes), (c) => c.charCodeAt(0)) : new Uint8Array(record.bytes);
        tx.objectStore('index').put({...record, bytes}, 'current');
        tx.oncomplete = () => { rq.result.close(); ok(true); };
        tx.onabort = () => ko(tx.error);
    };
})"""


def packed(data: bytes) -> str:
    """``data`` for WRITE_RECORD_JS's bytes, as base64."""
    return base64.b64encode(data).decode("ascii")


def restored(launch_persistent, boot_page, engine):
    """A page of a new profile whose stored index is ``engine``'s, reloaded to restore it:
    (the page, what ragReady resolved to)."""
    page = launch_persistent().pages[0]
    boot_page(page)
    page.evaluate(WRITE_RECORD_JS, {"version": 1, "bytes": packed(engine.to_bytes()), "savedAt": 0})
    page.reload()
    return page, page.evaluate("window.ragReady")


READ_KEYS_JS = """() => new Promise((ok, ko) => {
    const rq = indexedDB.open('ragweb', 1);
    rq.onerror = () => ko(rq.error);
    rq.onsuccess = () => {
        const get = rq.result.transaction('index', 'readonly').objectStore('index').getAllKeys();
        get.onsuccess = () => { rq.result.close(); ok(get.result); };
        get.onerror = () => ko(get.error);
    };
})"""

# Sets window.__storeRead once the page's first read of the stored index has succeeded.
STORE_READ_FLAG_JS = """(() => {
    const get = IDBObjectStore.prototype.get;
    IDBObjectStore.prototype.get = function (...args) {
        const rq = get.apply(this, args);
        rq.addEventListener('success', () => { window.__storeRead = true; });
        return rq;
    };
})();"""


def saved_tab(launch_persistent, boot_page, make_app, path=None, text=None):
    """A new browser profile whose first tab has indexed ``path`` (default: the sample) and
    saved it: (context, page, app)."""
    ctx = launch_persistent()
    page = ctx.pages[0]
    boot_page(page)
    # (on a loaded machine the new profile's store can answer after the boot's wait, and a tab
    # saves nothing until it has: see the page's storeAnswered)
    wait_js(page, "window.ragweb.storage().unread === null", 60)
    app = make_app(page)
    if path is None:
        app.index_sample()
    else:
        app.index(path, text)
    # (saved by the flush, or by the debounced save before it, on a loaded machine)
    flushed = app.flush()
    assert flushed.get("success") is True and page.evaluate(READ_RECORD_JS) is not None, flushed
    assert page.evaluate("window.ragweb.storage().dirty") is False
    return ctx, page, app

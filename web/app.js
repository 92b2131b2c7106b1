// ragweb in the browser: one async main() whose promise is window.ragReady.
//
// The page talks to Python only through the `ragweb.facade` module (JSON strings in and
// out). The rag* functions below are synchronous once ragReady has resolved; before that,
// and on bad arguments, they return '{"error": "..."}' instead of throwing.
// The index lives in memory (SQLite inside Pyodide); its bytes are saved to IndexedDB
// (one record, one transaction, debounced) and restored before ragReady resolves.
'use strict';

(() => {
  const STORE_FORMAT = 1;          // version of the IndexedDB record {version, bytes, crc, savedAt, ...}
  const DB_NAME = 'ragweb';
  const DB_STORE = 'index';
  const DB_KEY = 'current';
  // A tab's save on its way out goes under a key of its own, never over DB_KEY (see saveOnExit)
  const EXIT_PREFIX = 'exit:';
  const SAVE_DELAY_MS = 300;       // debounce: save this long after the last change
  const DROP_SAVE_MS = 5000;       // during a long drop, save at least this often
  const YIELD_EVERY_MS = 40;       // long indexing yields to the event loop this often
  const UI_REFRESH_MS = 120;       // stats/file list refresh, debounced
  // Pyodide 314 copies bytes and strings between Python and the page wrongly when they lie
  // above 2 GiB of WebAssembly memory (a signed pointer): past this, nothing is trusted.
  const HEAP_SAFE_BYTES = 2 ** 31;
  const MEMORY_ERROR = "this tab's engine has grown past 2 GB of memory, where the Python runtime " +
    'can garble what it passes to the page; to keep your saved index safe, this tab indexes, ' +
    'answers and saves nothing more. Reload the page: the index as last saved comes back';

  const state = {
    py: null,
    facade: null,
    manifest: null,
    ready: false,
    bootError: null,
    storageRefused: null,  // message: stored data of an unknown format; saving is off until cleared
    quotaError: null,      // message: the last save failed for lack of space
    dirty: false,
    ownChanges: false,     // the unsaved changes are the user's (not only a re-read of an older index)
    missedSave: false,     // another tab saved or closed while this one was still loading
    exitKeys: [],          // saves of closed tabs that the next save settles (stores or drops)
    savingGeneration: null,
    saveTimer: null,
    lastSave: 0,           // performance.now() when the last save began (or a drop did)
    saving: null,
    uiTimer: null,
    jobs: Promise.resolve(),
    clears: 0,             // how many times the index was cleared (a drop stops at a clear)
    lastPack: null,
    packPaths: new Set(),  // the files lastPack quotes
    pending: null,         // 'search' or 'pack': asked for while the engine loaded
    indexing: false,
    generation: null,      // id of the stored record this tab's index was loaded from or saved as
    conflict: null,        // message: another tab saved since; this tab does not overwrite it
    memoryError: null,     // message: the engine's memory passed heapSafeBytes; reload
    heapSafeBytes: HEAP_SAFE_BYTES,
  };

  const $ = (id) => document.getElementById(id);
  const errorJson = (message) => JSON.stringify({ error: message });
  const NOT_READY = 'not ready: the engine is still loading (await window.ragReady first)';

  // ------------------------------------------------------------------ IndexedDB

  let dbPromise = null;
  let openedDb = null;  // (for `saveOnExit`, which cannot wait for a promise)
  function openDb() {
    if (!dbPromise) {
      dbPromise = new Promise((resolve, reject) => {
        if (!('indexedDB' in window)) { reject(new Error('IndexedDB is not available in this browser')); return; }
        const rq = indexedDB.open(DB_NAME, 1);
        rq.onupgradeneeded = () => rq.result.createObjectStore(DB_STORE);
        rq.onsuccess = () => {
          const db = rq.result;
          db.onversionchange = () => { db.close(); dbPromise = null; openedDb = null; };
          openedDb = db;
          resolve(db);
        };
        rq.onerror = () => reject(rq.error);
        rq.onblocked = () => reject(new Error('IndexedDB is blocked by another tab of this page'));
      });
      dbPromise.catch(() => { dbPromise = null; });
    }
    return dbPromise;
  }

  // One transaction per operation: either the whole record is written or nothing is.
  async function idb(mode, op) {
    const db = await openDb();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(DB_STORE, mode, { durability: 'strict' });
      const rq = op(tx.objectStore(DB_STORE));
      tx.oncomplete = () => resolve(rq ? rq.result : undefined);
      tx.onabort = () => reject(tx.error || new DOMException('transaction aborted', 'AbortError'));
      tx.onerror = (ev) => { ev.preventDefault(); };  // reported by onabort
    });
  }
  const exitRange = () => IDBKeyRange.bound(EXIT_PREFIX, `${EXIT_PREFIX}\uffff`);
  const generationOf = (record) => (record && record.generation) || null;

  // The stored record and the saves of tabs that closed since, in one read:
  // {record, exits: [{key, record}]}.
  async function idbReadAll() {
    const db = await openDb();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(DB_STORE, 'readonly');
      const store = tx.objectStore(DB_STORE);
      const main = store.get(DB_KEY);
      const keys = store.getAllKeys(exitRange());
      const values = store.getAll(exitRange());
      tx.oncomplete = () => resolve({ record: main.result,
                                      exits: keys.result.map((key, i) => ({ key, record: values.result[i] })) });
      tx.onabort = () => reject(tx.error || new DOMException('transaction aborted', 'AbortError'));
      tx.onerror = (ev) => { ev.preventDefault(); };
    });
  }

  // Write `record` only if the stored record is still the one this tab last loaded or
  // saved (`expected` generation), in the same transaction as the check: two tabs of the
  // page never silently overwrite each other's index. The `drop` keys (saves of closed
  // tabs this one has settled) go in the same transaction; with `record` null only they
  // and the stored record go (what frees space when the quota is full). Resolves to false
  // on a conflict.
  async function idbPutIfCurrent(record, expected, drop = []) {
    let conflict = false;
    await idb('readwrite', (s) => {
      const rq = s.get(DB_KEY);
      rq.onsuccess = () => {
        const current = rq.result;
        if (current && generationOf(current) !== expected) { conflict = true; return; }
        if (record) s.put(record, DB_KEY);
        else s.delete(DB_KEY);
        for (const key of drop) s.delete(key);
      };
      return null;
    });
    return !conflict;
  }
  const newGeneration = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

  // Other tabs of this page: told when this tab saved, so they can load the new index.
  const channel = ('BroadcastChannel' in window) ? new BroadcastChannel('ragweb-index') : null;
  const idbDelete = () => idb('readwrite', (s) => { s.delete(DB_KEY); s.delete(exitRange()); });
  const idbDeleteKeys = (keys) => idb('readwrite', (s) => { for (const key of keys) s.delete(key); });

  function isQuotaError(e) {
    return !!e && (e.name === 'QuotaExceededError' || /quota/i.test(String(e.message || e)));
  }

  // ------------------------------------------------------------------ memory and checksums

  // CRC-32 (IEEE, as Python's zlib.crc32): the page checks the copy of the index it got
  // from Python before storing it, and the engine checks it again when it is restored.
  let crcTable = null;
  function crc32(bytes) {
    if (!crcTable) {
      crcTable = new Int32Array(256);
      for (let n = 0; n < 256; n++) {
        let c = n;
        for (let k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
        crcTable[n] = c;
      }
    }
    let c = -1;
    for (let i = 0; i < bytes.length; i++) c = crcTable[(c ^ bytes[i]) & 0xFF] ^ (c >>> 8);
    return (c ^ -1) >>> 0;
  }

  function heapBytes() {
    const m = state.py && state.py._module;
    return m && m.HEAPU8 ? m.HEAPU8.length : 0;
  }

  // The facade with every call checked against the memory limit, before and after (a call
  // may cross it, and then its result may be garbled): once past it, a call returns an
  // error (dump throws) and the page says to reload.
  function guardMemory(facade) {
    const overLimit = () => {
      if (!state.memoryError && heapBytes() > state.heapSafeBytes) {
        state.memoryError = MEMORY_ERROR;
        showBanner(MEMORY_ERROR, 'memory');
      }
      return !!state.memoryError;
    };
    const refuse = (name, result) => {
      if (result && typeof result.destroy === 'function') result.destroy();
      if (name === 'dump') throw new Error(state.memoryError);
      return errorJson(state.memoryError);
    };
    return new Proxy(facade, {
      get(target, name) {
        const value = target[name];
        if (typeof value !== 'function') return value;
        return (...args) => {
          if (overLimit()) return refuse(name);
          const result = value(...args);
          return overLimit() ? refuse(name, result) : result;
        };
      },
    });
  }

  // ------------------------------------------------------------------ saving

  // `own`: a change the user made (false: the re-read of an index saved by an older version,
  // which another tab's save may replace without a conflict)
  function markChanged(own = true) {
    state.dirty = true;
    if (own) state.ownChanges = true;
    // A drop still being indexed is saved after it, and meanwhile every DROP_SAVE_MS: a
    // reload in its middle keeps what was indexed up to then (the save on the way out
    // cannot be relied on for a big index: a leaving page may end before its write lands).
    if (state.indexing && !state.saving && performance.now() - state.lastSave >= DROP_SAVE_MS) flush();
    if (state.saveTimer) clearTimeout(state.saveTimer);
    state.saveTimer = setTimeout(() => {
      state.saveTimer = null;
      if (state.indexing) markChanged(false);  // a drop is still being indexed: save after it
      else flush();
    }, SAVE_DELAY_MS);
    scheduleUi();
  }

  // The record to store: the engine's bytes, checked against the engine's own checksum; for
  // an empty index a small record that says so (a cleared index frees the space it took).
  function dumpRecord() {
    let empty = false;
    try { empty = JSON.parse(state.facade.stats()).totalDocs === 0; } catch (e) { /* garbled: see the checksum below */ }
    if (empty) {
      return { version: STORE_FORMAT, cleared: true, savedAt: Date.now(), ragweb: state.manifest.ragweb,
               generation: newGeneration() };
    }
    let bytes;
    // (after the quota refused a save, the smallest bytes it can be: so each removal counts)
    const proxy = state.facade.dump(Boolean(state.quotaError));
    try { bytes = proxy.toJs(); } finally { proxy.destroy(); }
    const crc = crc32(bytes);
    const expected = JSON.parse(state.facade.dump_crc());
    if (expected.error) throw new Error(expected.error);
    if (crc !== expected.crc) {
      throw new Error('the copy of the index the page got differs from the engine\'s (checksum); ' +
                      'nothing was saved, the stored index is as it was');
    }
    return { version: STORE_FORMAT, bytes, crc, savedAt: Date.now(), ragweb: state.manifest.ragweb,
             generation: newGeneration() };
  }

  // The page is going (reload, close, another page): `flush`'s check-then-write needs more
  // turns of the event loop than a leaving page gets, so a change made just before (a drop,
  // Clear all) was lost; and a write without the check could replace another tab's newer
  // save. Here the record is written at once, in a transaction opened now on the database
  // opened at boot, under a key of its own, with the generations it was made on top of
  // (`bases`: the stored one, and the one a save still under way would store). The next tab
  // to load (`settleExits`) makes it the index if the stored record is still one of those,
  // and otherwise drops it and says so: the first save wins, as between open tabs. (A tab
  // in conflict writes its changes too: the next tab then says they were not kept.)
  function saveOnExit() {
    if (!state.ready || !(state.dirty || state.saving) || state.storageRefused || !openedDb) return;
    try {
      const bases = [state.generation];
      if (state.savingGeneration) bases.push(state.savingGeneration);
      const record = { ...dumpRecord(), bases };
      const key = EXIT_PREFIX + record.generation;
      const tx = openedDb.transaction(DB_STORE, 'readwrite', { durability: 'strict' });
      const store = tx.objectStore(DB_STORE);
      store.put(record, key);
      for (const taken of state.exitKeys) store.delete(taken);  // (this save holds what they held)
      if (tx.commit) tx.commit();  // (without it Chromium drops the write with the page)
      state.dirty = false;
      if (channel) channel.postMessage({ type: 'exit', key });
    } catch (e) { /* best effort: the page is going */ }
  }

  // Save now if anything changed; resolves to a JSON string like the other calls.
  async function flush() {
    if (state.saveTimer) { clearTimeout(state.saveTimer); state.saveTimer = null; }
    while (state.saving) await state.saving;
    if (state.storageRefused) return errorJson(state.storageRefused);
    if (state.conflict) return errorJson(state.conflict);
    if (!state.dirty) return state.quotaError ? errorJson(state.quotaError) : JSON.stringify({ success: true, saved: false });
    state.dirty = false;
    const own = state.ownChanges;
    state.ownChanges = false;
    state.lastSave = performance.now();
    let result;
    state.saving = (async () => {
      const t0 = performance.now();
      let record;
      try {
        record = dumpRecord();
      } catch (e) {
        state.dirty = true;
        state.ownChanges ||= own;
        result = errorJson(`cannot serialise the index: ${pyMessage(e)}`);
        return;
      }
      const { generation } = record;
      const size = record.bytes ? record.bytes.byteLength : 0;
      const drop = state.exitKeys;
      state.savingGeneration = generation;
      try {
        let fresh;
        try {
          fresh = await idbPutIfCurrent(record, state.generation, drop);
        } catch (e) {
          // the quota is so full that even the small record of an empty index does not fit:
          // deleting the stored one frees the space
          if (!record.cleared || !isQuotaError(e)) throw e;
          fresh = await idbPutIfCurrent(null, state.generation, drop);
          record.generation = null;
        }
        if (!fresh) {
          state.dirty = true;
          state.ownChanges ||= own;
          if (!state.ownChanges) {  // only a re-read of an older index: take the other tab's save
            state.dirty = false;
            setTimeout(syncWithStored);
            result = JSON.stringify({ success: true, saved: false });
            return;
          }
          result = errorJson(markConflict());
          return;
        }
        state.exitKeys = state.exitKeys.filter((k) => !drop.includes(k));
        state.generation = record.generation;
        if (channel) channel.postMessage({ type: 'saved', generation: record.generation });
        state.quotaError = null;
        result = JSON.stringify({ success: true, saved: true, bytes: size,
                                  ms: Math.round(performance.now() - t0) });
        hideBanner('quota');
      } catch (e) {
        state.dirty = true;  // memory is still the truth; the previous record is intact
        state.ownChanges ||= own;
        if (isQuotaError(e)) {
          state.quotaError = `storage quota full: the index (${formatBytes(size)}) could not be saved; ` +
            'it is kept in this tab but will be lost on reload. Remove files or clear the index to free space';
          showBanner(state.quotaError, 'quota');
          result = errorJson(state.quotaError);
        } else {
          result = errorJson(`could not save the index: ${e && e.message ? e.message : e}`);
          showBanner(`Could not save the index: ${e && e.message ? e.message : e}`, 'save');
        }
      }
    })();
    try { await state.saving; } finally { state.saving = null; state.savingGeneration = null; }
    updateStorage();
    return result;
  }

  // ------------------------------------------------------------------ the JS API

  function pyMessage(e) {
    const text = String(e && e.message ? e.message : e);
    const lines = text.trim().split('\n');
    return lines[lines.length - 1] || text;
  }

  // Run a synchronous facade call; never throws.
  function api(fn) {
    if (!state.ready) return errorJson(state.bootError ? `not ready: ${state.bootError}` : NOT_READY);
    try {
      return fn();
    } catch (e) {
      return errorJson(pyMessage(e));
    }
  }

  const isSuccess = (out) => typeof out === 'string' && out.startsWith('{"success": true');

  function ragIndex(filename, content) {
    return api(() => {
      if (typeof filename !== 'string') return errorJson(`filename must be a string, got ${typeName(filename)}`);
      if (typeof content !== 'string') return errorJson(`content must be a string, got ${typeName(content)}`);
      if (state.quotaError) return errorJson(state.quotaError);
      const out = state.facade.index_text(filename, content);
      if (isSuccess(out)) { markChanged(); dropPackQuoting(JSON.parse(out).filename); }
      return out;
    });
  }

  function ragQuery(query, topK = 5) {
    return api(() => {
      if (typeof query !== 'string') return errorJson(`query must be a string, got ${typeName(query)}`);
      if (topK === null) topK = 5;
      if (typeof topK !== 'number') return errorJson(`topK must be a number, got ${typeName(topK)}`);
      return state.facade.query(query, topK);
    });
  }

  // options: {lean, compact, path, topK}, as `rag pack --lean / --no-compact / --path / --top-k`
  function ragPack(query, budget, options) {
    return api(() => {
      if (typeof query !== 'string') return errorJson(`query must be a string, got ${typeName(query)}`);
      if (budget !== undefined && budget !== null && typeof budget !== 'number') {
        return errorJson(`budget must be a number, got ${typeName(budget)}`);
      }
      if (options !== undefined && options !== null &&
          (typeof options !== 'object' || Array.isArray(options))) {
        return errorJson(`options must be an object like {lean: true}, got ${typeName(options)}`);
      }
      let text;
      try {  // (JSON would turn NaN into null and a circle into a TypeError's many lines)
        text = options == null ? undefined : JSON.stringify(options, (key, v) => {
          if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`options.${key} must be a finite number, got ${v}`);
          if (typeof v === 'bigint') throw new Error(`options.${key} must be a number, got a BigInt`);
          return v;
        });
      } catch (e) {
        const why = String(e && e.message ? e.message : e).split('\n')[0];
        return errorJson(why.startsWith('options.') ? why : `options must be plain data like {lean: true}: ${why}`);
      }
      return state.facade.pack(query, budget ?? undefined, text);
    });
  }

  function ragRemove(filename) {
    return api(() => {
      if (typeof filename !== 'string') return errorJson(`filename must be a string, got ${typeName(filename)}`);
      const out = state.facade.remove(filename);
      const res = isSuccess(out) ? JSON.parse(out) : null;
      if (res && res.removed) { markChanged(); dropPackQuoting(res.filename); }
      return out;
    });
  }

  function ragClear() {
    return api(() => {
      const out = state.facade.clear();
      if (isSuccess(out)) {
        state.clears += 1;
        markChanged();
        resetPack();  // (it quoted files that are gone)
      }
      return out;
    });
  }

  function ragStats() {
    return api(() => state.facade.stats());
  }

  function ragFlush() {
    if (!state.ready) return Promise.resolve(errorJson(NOT_READY));
    return flush().catch((e) => errorJson(String(e && e.message ? e.message : e)));
  }

  function typeName(v) {
    if (v === null) return 'null';
    if (Array.isArray(v)) return 'an array';
    return typeof v === 'undefined' ? 'nothing' : `${/^[aeiou]/.test(typeof v) ? 'an' : 'a'} ${typeof v}`;
  }

  Object.assign(window, { ragIndex, ragQuery, ragPack, ragRemove, ragClear, ragStats, ragFlush });

  // ------------------------------------------------------------------ boot

  async function main() {
    const t0 = performance.now();
    const phases = {};
    const mark = (name, since) => { phases[name] = Math.round(performance.now() - since); };
    setStatus('Loading the engine…');
    // Four things at once: the manifest and then the wheels it names, the stored index and
    // the Pyodide runtime.
    const manifest = fetch('./manifest.json', { cache: 'no-cache' }).then((r) => {
      if (!r.ok) throw new Error(`manifest.json: HTTP ${r.status}`);
      return r.json();
    });
    const wheelError = (w, why) => new Error(`could not load the Python wheel ${w}: ${why}`);
    const wheels = manifest.then((m) => Promise.all(m.wheels.map((w) =>
      fetch(new URL(`./wheels/${w}`, location.href), { cache: 'no-cache' }).then((r) => {
        if (!r.ok) throw wheelError(w, `HTTP ${r.status}`);
        return r.arrayBuffer();
      }, (e) => { throw wheelError(w, e.message || e); }).then((data) => [w, data]))));
    wheels.catch(() => {}); // (awaited below; this only keeps an early failure from going unhandled)
    const stored = idbReadAll().catch((e) => ({ readError: e }))
      .then((r) => { mark('storeRead', t0); return r; });
    if (typeof loadPyodide !== 'function') throw new Error('pyodide/pyodide.js did not load');
    const pyodide = loadPyodide({ indexURL: new URL('./pyodide/', location.href).href, stdout: () => {} })
      .then((py) => { mark('pyodide', t0); return py; });
    state.manifest = await manifest;
    const py = await pyodide;
    let t = performance.now();
    // pure-Python wheels: unpacked into site-packages as they are (what loadPackage does
    // for them, without its package-index machinery)
    const sitePackages = py.runPython('import site; site.getsitepackages()[0]');
    for (const [w, data] of await wheels) {
      try {
        py.unpackArchive(data, 'wheel', { extractDir: sitePackages });
      } catch (e) {
        throw wheelError(w, 'not a readable wheel');
      }
    }
    py.runPython('import importlib; importlib.invalidate_caches()');
    mark('wheels', t);
    t = performance.now();
    state.py = py;
    state.facade = guardMemory(py.pyimport('ragweb.facade'));
    mark('import', t);
    const bootMs = performance.now() - t0;

    const t1 = performance.now();
    const found = await stored;
    const record = found.readError ? null : found.record;
    let info = null;
    let settled = false;  // the index loaded is a closed tab's save, to be stored as the index
    if (found.readError) {
      showBanner(`Could not read the stored index (${found.readError.message || found.readError}); starting empty.`, 'read');
    } else if (record && record.version !== STORE_FORMAT) {
      refuseStorage(`The stored index has format version ${JSON.stringify(record.version)}, ` +
        `but this page reads version ${STORE_FORMAT}. It was not loaded and will not be overwritten ` +
        'unless you clear it.');
    } else {
      state.generation = generationOf(record);
      const { pick, lost, keys } = settleExits(found);
      if (pick) {
        info = loadRecord(pick.record, true);
        if (info.error) { lost.push(pick.record); info = null; } else settled = true;
      }
      if (!info && record) {
        info = loadRecord(record, true);
        if (info.error) refuseStorage(`${info.error}. It was not loaded and will not be overwritten unless you clear it.`);
      }
      if (lost.length) showBanner(lostExitsMessage(lost), 'exit');
      if (settled) state.exitKeys = keys;  // dropped by the save that stores the settled one
      else if (keys.length && !state.storageRefused) idbDeleteKeys(keys).catch(() => {});
    }
    if (!info || info.error) {
      const empty = JSON.parse(state.facade.init());
      if (empty.error) throw new Error(empty.error);
      info = { ...empty, restored: false };
    }
    if (info.rereadPending) info.reread = await rereadStored(info.rereadPending);
    if (info.rereadSkipped) {
      showBanner('The stored index was built by an older version of ragweb and is too large to ' +
        'read again inside this tab, so it is used as it was built. To have its files read the ' +
        "way this version does, choose \"Clear all\" and add them again.", 'reread');
    }
    const restoreMs = performance.now() - t1;
    state.ready = true;
    requestPersistence();
    refreshUi();
    // a closed tab's changes on top of the stored index: store them (not this tab's own
    // changes: should another tab store them first, or something newer, this one gives way)
    if (settled) markChanged(false);
    // an index saved by an older version was read again with this one's settings: keep that
    else if (info.reread && !state.storageRefused) markChanged(false);
    // another tab saved while this one loaded: catch up
    if (state.missedSave) { state.missedSave = false; syncWithStored(); }
    const docs = JSON.parse(state.facade.stats()).totalDocs;
    const how = info.reread ? `; restored from this browser and re-read by this version (${info.reread} file${info.reread === 1 ? '' : 's'})`
      : info.restored ? ' (restored from this browser)' : '';
    setStatus(`Ready. ${docs} file${docs === 1 ? '' : 's'} indexed${how}.`);
    document.body.classList.add('ready');
    if (state.pending === 'pack') runPack();
    else if (state.pending === 'search') rerunSearch();
    state.pending = null;
    return {
      ready: true,
      restored: !!info.restored,
      reread: info.reread || 0,
      totalDocs: docs,
      bootMs: Math.round(bootMs),
      restoreMs: Math.round(restoreMs),
      storeReadMs: phases.storeRead,
      phases,
      storedBytes: record && record.bytes && record.bytes.byteLength ? record.bytes.byteLength : 0,
      pyodide: state.manifest.pyodide,
      ragweb: state.manifest.ragweb,
    };
  }

  function markConflict() {
    state.conflict = 'another tab of this page saved the index after this tab loaded it, so this ' +
      "tab's changes were not saved (that would overwrite the other tab's). Reload this tab to " +
      'load the saved index';
    showBanner(state.conflict, 'conflict');
    return state.conflict;
  }

  // Load a stored record into the engine (stepwise: see facade.init). Returns init's result,
  // or {error, code: 'format'} for a record that is damaged (its bytes or checksum not what
  // the page stores), which is refused, not thrown.
  function loadRecord(record, stepwise) {
    if (record.cleared) return JSON.parse(state.facade.init());
    const bytes = record.bytes instanceof Uint8Array ? record.bytes
      : record.bytes instanceof ArrayBuffer ? new Uint8Array(record.bytes) : null;
    const crc = record.crc ?? null;
    if (!bytes) return { error: 'the stored index is damaged (it holds no bytes of an index)', code: 'format' };
    if (crc !== null && !(Number.isInteger(crc) && crc >= 0 && crc <= 0xFFFFFFFF)) {
      return { error: 'the stored index is damaged (its checksum is not a number)', code: 'format' };
    }
    const res = JSON.parse(state.facade.init(bytes, stepwise, crc));
    return res.error ? { error: res.error, code: res.code || 'format' } : res;
  }

  // The saves of tabs that closed with unsaved changes (`saveOnExit`), against the stored
  // record: the first one made on top of it is the index now; the others lost to a save
  // made before them (the first save wins, as between open tabs: a tab told of a conflict
  // that then closed comes after the save it lost to). {pick: {key, record} | null,
  // lost: [records], keys: [their keys]}.
  function settleExits(found) {
    const base = generationOf(found.record);
    const exits = found.exits.filter((e) => e.record && e.record.version === STORE_FORMAT);
    const onTop = exits.filter((e) => Array.isArray(e.record.bases) && e.record.bases.includes(base))
      .sort((a, b) => (a.record.savedAt || 0) - (b.record.savedAt || 0));
    const pick = onTop[0] || null;
    return { pick, lost: exits.filter((e) => e !== pick).map((e) => e.record), keys: exits.map((e) => e.key) };
  }

  function lostExitsMessage(lost) {
    const when = lost.map((r) => new Date(r.savedAt || 0).toLocaleTimeString()).join(', ');
    const who = lost.length === 1 ? 'a tab of this page' : `${lost.length} tabs of this page`;
    return `Changes made just before ${who} closed (at ${when}) were not kept: another tab had ` +
      'saved the index, or closed with changes of its own, first.';
  }

  const hasOwnChanges = () => (state.dirty && state.ownChanges) || state.indexing || !!state.saving;

  // Another tab saved, or closed with changes (`saveOnExit`), or did so while this one was
  // loading: load what is stored now -- after storing the closed tab's changes as the index
  // when they were made on top of it -- unless this tab has changes of its own: then it is
  // a conflict, and the first save wins.
  async function syncWithStored(message = null) {
    if (!state.ready) { state.missedSave = true; return; }
    while (state.saving) await state.saving;  // (decided on what this tab's own save did)
    if (state.storageRefused || state.conflict) return;
    if (message && message.generation && message.generation === state.generation) return;
    let found;
    try { found = await idbReadAll(); } catch (e) { return; }
    let record = found.record;
    if (record && record.version !== STORE_FORMAT) return;
    // (the closed tabs' saves this tab took at its boot are settled by its next save)
    const { pick } = settleExits({ ...found, exits: found.exits.filter((e) => !state.exitKeys.includes(e.key)) });
    if (!pick && generationOf(record) === state.generation) return;  // nothing new
    if (hasOwnChanges()) { markConflict(); return; }
    if (pick) {
      const { bases, ...closed } = pick.record;
      try {
        if (!await idbPutIfCurrent(closed, generationOf(record), [pick.key])) return;  // (another tab did)
      } catch (e) { return; }
      if (channel) channel.postMessage({ type: 'saved', generation: closed.generation });
      record = closed;
      if (hasOwnChanges()) { markConflict(); return; }
    }
    if (!record) return;
    const res = loadRecord(record, false);
    if (res.error) return;
    state.generation = generationOf(record);
    state.dirty = false;  // (a re-read of an older index, replaced by the other tab's save)
    state.ownChanges = false;
    refreshUi();
    rerunSearch();
    resetPack();  // (made from the index this tab had)
    setStatus(`Updated from another tab: ${res.totalDocs} file${res.totalDocs === 1 ? '' : 's'} indexed.`);
  }
  if (channel) {
    channel.onmessage = (ev) => {
      if (ev.data && (ev.data.type === 'saved' || ev.data.type === 'exit')) syncWithStored(ev.data);
    };
  }

  function refuseStorage(message) {
    state.storageRefused = message;
    showBanner(message, 'format', true);
  }

  async function clearStoredIndex() {
    try {
      await idbDelete();
    } catch (e) {
      showBanner(`Could not clear the stored index: ${e.message || e}`, 'format', true);
      return;
    }
    // The unreadable record is gone; what this tab has indexed since is saved from now on.
    state.storageRefused = null;
    hideBanner('format');
    if (state.ready && state.dirty) markChanged();
    setStatus('Stored index cleared.');
    updateStorage();
  }

  async function requestPersistence() {
    try {
      if (navigator.storage && navigator.storage.persist && !(await navigator.storage.persisted())) {
        await navigator.storage.persist();
      }
    } catch (e) { /* not granted: storage is best-effort */ }
    updateStorage();
  }

  async function updateStorage() {
    const el = $('storage');
    if (!navigator.storage || !navigator.storage.estimate) { el.textContent = 'Storage estimate not available.'; return; }
    try {
      const [est, persisted] = await Promise.all([navigator.storage.estimate(),
        navigator.storage.persisted ? navigator.storage.persisted() : Promise.resolve(false)]);
      el.textContent = `Browser storage: ${formatBytes(est.usage || 0)} used of ${formatBytes(est.quota || 0)}` +
        (persisted ? ' (persistent).' : ' (best-effort: the browser may evict it when space runs low).');
    } catch (e) {
      el.textContent = 'Storage estimate not available.';
    }
  }

  // ------------------------------------------------------------------ indexing files

  // A queued job runs after the boot: not ready then means the boot failed.
  const notReadyStatus = () => state.bootError ? `The engine failed to load: ${state.bootError}` : NOT_READY;

  // Queue a job so that drops, picks and the sample never interleave.
  function enqueue(job) {
    if (!state.ready && !state.bootError) setStatus('The engine is still loading: what you gave it is indexed when it is ready.');
    // (a banner about the last drop, a folder left out say, goes when the next one starts;
    // the quota, storage and memory banners have kinds of their own and stay while they apply)
    const run = () => { hideBanner('index'); return job(); };
    state.jobs = state.jobs.then(run, run).catch((e) => {
      showBanner(`Indexing failed: ${e && e.message ? e.message : e}`, 'index');
    });
    return state.jobs;
  }

  // An index saved by an older version is read again from its stored texts, in steps that
  // yield to the page so the progress bar moves. Returns the files re-read (0 if it failed:
  // the index then stays as saved, read as it was built).
  async function rereadStored(total) {
    const bar = $('progress-bar');
    const text = $('progress-text');
    $('progress').classList.add('busy');
    bar.max = Math.max(total, 1);
    const show = (done, finished) => {
      bar.value = done;
      text.textContent = `${finished ? 'Re-read' : 'Re-reading'} ${done} of ${total} stored files ` +
        `with this version${finished ? '.' : '…'}`;
    };
    show(0, false);
    try {
      for (;;) {
        await new Promise((r) => setTimeout(r));
        const step = JSON.parse(state.facade.reread_step(YIELD_EVERY_MS));
        if (step.error) {
          showBanner(`Could not re-read the stored index with this version (${step.error}); ` +
            'it is used as it was saved.', 'read');
          return 0;
        }
        show(step.done, step.finished);
        if (step.finished) return step.total;
      }
    } finally {
      $('progress').classList.remove('busy');
    }
  }

  // items: [{path, file}] (File objects) or [{path, text}] (already fetched text).
  async function indexItems(items) {
    if (!state.ready) { setStatus(NOT_READY); return null; }
    const bar = $('progress-bar');
    const text = $('progress-text');
    const totalBytes = items.reduce((n, it) => n + (it.file ? it.file.size : it.size || 0), 0);
    const tally = { files: 0, chunks: 0, bytes: 0, partial: 0, skipped: 0, errors: [], skippedList: [], full: null };
    $('progress').classList.add('busy');
    state.indexing = true;  // the file list and stats refresh once at the end, not per file
    state.lastSave = performance.now();  // (a drop's first save while it runs: DROP_SAVE_MS in)
    bar.max = Math.max(totalBytes, 1);
    bar.value = 0;
    const show = (done) => {
      const bytes = tally.bytes + tally.partial;  // (partial: the part of a big file done)
      bar.value = Math.min(bytes, bar.max);
      const head = done ? (tally.cleared ? 'Stopped at a clear of the index: indexed' : 'Indexed') : 'Indexing';
      text.textContent = `${head} ${tally.files} of ${items.length} files, ` +
        `${formatBytes(bytes)} of ${formatBytes(totalBytes)}` +
        (tally.skipped ? `, ${tally.skipped} skipped` : '') +
        (tally.errors.length ? `, ${tally.errors.length} failed` : '') + (done ? '.' : '…');
    };
    show(false);
    try {
      await indexLoop(items, tally, show);
    } finally {
      state.indexing = false;
      $('progress').classList.remove('busy');
    }
    show(true);
    if (tally.full) {
      const n = tally.errors.length;
      showBanner(`${n} file${n === 1 ? ' was' : 's were'} not indexed: ${tally.full}.`, 'index');
    } else if (tally.errors.length) {
      showBanner(`Some files failed: ${tally.errors.slice(0, 3).join('; ')}`, 'index');
    }
    refreshUi();
    rerunSearch();
    return tally;
  }

  async function indexLoop(items, tally, show) {
    let lastYield = performance.now();
    const clears = state.clears;
    for (const item of items) {
      if (state.clears !== clears) {  // ragClear or Clear all during the drop: the rest is not indexed
        tally.cleared = true;
        break;
      }
      const refused = state.quotaError || tally.full;  // the rest of the drop is not read
      if (refused) { tally.errors.push(`${item.path}: ${refused}`); tally.bytes += item.file ? item.file.size : 0; continue; }
      const size = item.file ? item.file.size : (item.size || 0);
      let out;
      try {
        const check = JSON.parse(state.facade.check_path(item.path, size));
        if (check.skip) {
          out = JSON.stringify({ skipped: check.skip, filename: check.path || item.path });
        } else if (item.file) {
          const bytes = new Uint8Array(await item.file.arrayBuffer());
          if (state.clears !== clears) { tally.cleared = true; break; }  // (cleared while it was read)
          out = state.facade.index_bytes(item.path, bytes, item.file.lastModified ? item.file.lastModified / 1000 : undefined, true);
          out = await indexSteps(out, size, tally, show, clears);
          if (out === null) { tally.cleared = true; break; }
        } else {
          out = state.facade.index_text(item.path, item.text);
        }
      } catch (e) {
        out = errorJson(pyMessage(e));
      }
      const res = JSON.parse(out);
      if (res.success) { tally.files += 1; tally.chunks += res.chunks; markChanged(); dropPackQuoting(res.filename); }
      else if (res.skipped || res.superseded) {
        tally.skipped += 1;
        tally.skippedList.push(`${res.filename}: ${res.skipped || res.superseded}`);
      }
      else {
        tally.errors.push(`${item.path}: ${res.error}`);
        if (res.code === 'full') tally.full = res.error;
      }
      tally.bytes += size;
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        show(false);
        await new Promise((r) => setTimeout(r));
        lastYield = performance.now();
      }
    }
  }

  // A big file that `index_bytes` only started: run its steps, yielding between them so the
  // page stays responsive and the bar moves within the file. Returns the file's result, or
  // null when a clear came meanwhile (the file is abandoned; nothing of it was stored).
  async function indexSteps(out, size, tally, show, clears) {
    let res = JSON.parse(out);
    while (res.pending) {
      tally.partial = res.total ? Math.round(size * res.done / res.total) : 0;
      show(false);
      await new Promise((r) => setTimeout(r));
      if (state.clears !== clears) {
        state.facade.index_cancel();
        tally.partial = 0;
        return null;
      }
      out = state.facade.index_step(YIELD_EVERY_MS);
      res = JSON.parse(out);
    }
    tally.partial = 0;
    return out;
  }

  const IGNORE_FILES = ['.gitignore', '.ragignore'];   // read in this order; later rules win (as the CLI)
  const CONFIG_FILES = ['rag.yaml', '.rag/config.yaml'];  // a dropped folder's own config: the first found (as the CLI)

  // Apply a dropped folder's config file (text) to what is under it: null when it is valid
  // (a note of it goes to `notes`), else the reason to leave the folder out.
  function applyConfig(folder, name, text, notes) {
    const res = JSON.parse(state.facade.config_add(folder, text, name));
    if (res.error) return res.error;
    const unused = res.unused.length ? ` (not used in the page: ${res.unused.join(', ')})` : '';
    notes.push(`${folder}/${name} applied${unused}`);
    return null;
  }

  // (the reason itself is in the banner, an alert: the status line would read it out twice)
  const configLeftOut = (folder, name) => `${folder}/ (its ${name} is invalid; see the message below)`;

  const entryFile = (entry) => new Promise((resolve, reject) => entry.file(resolve, reject));
  const readAll = async (dirEntry) => {
    const reader = dirEntry.createReader();
    const all = [];
    for (;;) {  // readEntries hands out at most ~100 entries per call
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (!batch.length) return all;
      all.push(...batch);
    }
  };

  // Walk dropped items: files and whole folders (recursive), skipping what the CLI would
  // not enter (excluded or ignored folders). Entries must be taken synchronously inside
  // the drop handler, so callers pass them in.
  async function walkEntries(entries) {
    const out = [];
    out.leftOut = [];  // folders the excludes or ignore files left out (not hidden ones)
    out.configErrors = [];  // dropped folders left out because their rag.yaml is invalid
    out.notes = [];  // the config files applied
    const visit = async (entry, prefix) => {
      if (!entry) return;
      if (entry.isFile) {
        out.push({ path: prefix + entry.name, file: await entryFile(entry) });
      } else if (entry.isDirectory) {
        const dirPath = prefix + entry.name;
        const skip = JSON.parse(state.facade.check_dir(dirPath)).skip;
        if (skip) {
          if (!entry.name.startsWith('.')) out.leftOut.push(`${dirPath}/ (${skip})`);
          return;
        }
        const children = (await readAll(entry)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        if (!prefix) {  // a dropped folder is a root: its own config file selects its files
          const config = await findConfig(children);
          const error = config && applyConfig(dirPath, config.name, await (await entryFile(config.entry)).text(), out.notes);
          if (error) { out.configErrors.push(error); out.leftOut.push(configLeftOut(dirPath, config.name)); return; }
        }
        for (const name of IGNORE_FILES) {
          const rules = children.find((c) => c.isFile && c.name === name);
          if (rules) state.facade.ignore_add(dirPath, await (await entryFile(rules)).text());
        }
        for (const child of children) await visit(child, `${dirPath}/`);
      }
    };
    for (const entry of entries) await visit(entry, '');
    return out;
  }

  // The first of CONFIG_FILES among a folder's entries: {name, entry}, or null.
  async function findConfig(children) {
    const top = children.find((c) => c.isFile && c.name === CONFIG_FILES[0]);
    if (top) return { name: CONFIG_FILES[0], entry: top };
    const dot = children.find((c) => c.isDirectory && c.name === '.rag');
    const inner = dot && (await readAll(dot)).find((c) => c.isFile && c.name === 'config.yaml');
    return inner ? { name: CONFIG_FILES[1], entry: inner } : null;
  }

  // Files from a picker: a folder pick gives webkitRelativePath; its config file and ignore
  // files apply (a folder whose config file is invalid is left out).
  async function pickedItems(files) {
    const all = Array.from(files, (f) => ({ path: f.webkitRelativePath || f.name, file: f }));
    const report = { leftOut: [], configErrors: [], notes: [] };
    const failed = new Set();
    const roots = new Set(all.filter((it) => it.path.includes('/')).map((it) => it.path.split('/')[0]));
    for (const root of roots) {
      const config = CONFIG_FILES.map((n) => all.find((it) => it.path === `${root}/${n}`)).find(Boolean);
      const error = config && applyConfig(root, config.path.slice(root.length + 1), await config.file.text(), report.notes);
      if (error) {
        failed.add(root);
        report.configErrors.push(error);
        report.leftOut.push(configLeftOut(root, config.path.slice(root.length + 1)));
      }
    }
    const items = Object.assign(all.filter((it) => !it.path.includes('/') || !failed.has(it.path.split('/')[0])), report);
    const ignoreFiles = items.filter((it) => IGNORE_FILES.includes(it.path.split('/').pop()))
      .sort((a, b) => a.path.split('/').length - b.path.split('/').length ||
        IGNORE_FILES.indexOf(a.path.split('/').pop()) - IGNORE_FILES.indexOf(b.path.split('/').pop()));
    for (const it of ignoreFiles) {
      state.facade.ignore_add(it.path.split('/').slice(0, -1).join('/'), await it.file.text());
    }
    return items;
  }

  async function handleDrop(dataTransfer) {
    const entries = [];
    const loose = [];
    const items = dataTransfer.items ? Array.from(dataTransfer.items) : [];
    for (const item of items) {
      if (item.kind !== 'file') continue;
      const entry = item.webkitGetAsEntry ? item.webkitGetAsEntry() : null;
      if (entry) entries.push(entry);
      else { const f = item.getAsFile(); if (f) loose.push(f); }
    }
    if (!items.length && dataTransfer.files) loose.push(...Array.from(dataTransfer.files));
    await enqueue(async () => {
      if (!state.ready) { setStatus(notReadyStatus()); return; }
      setStatus('Reading dropped files…');
      state.facade.ignore_reset();
      const found = await walkEntries(entries);
      found.push(...await pickedItems(loose));
      reportIndexed(found, await indexItems(found));
    });
  }

  // The status line after a drop or a pick, and a banner for a folder whose config file is invalid.
  function reportIndexed(found, tally) {
    if (!tally) return;
    if (tally.cleared) { setStatus('The index was cleared while files were being indexed: the rest were not indexed.'); return; }
    const notes = found.notes.length ? ` ${found.notes.join('; ')}.` : '';
    if (!tally.files && !tally.errors.length) setStatus(nothingIndexed(found.leftOut, tally) + notes);
    else setStatus(`Indexed ${tally.files} file${tally.files === 1 ? '' : 's'} (${tally.chunks} chunks).${notes}`);
    if (found.configErrors.length) {
      showBanner(`A folder was left out: ${found.configErrors.join('; ')}`, 'index');
    }
  }

  // A drop that indexed nothing says what was left out, as `rag index` does.
  function nothingIndexed(leftOut, tally) {
    const parts = [];
    if (leftOut.length) {
      parts.push(`left out the folder${leftOut.length === 1 ? '' : 's'} ${leftOut.slice(0, 5).join(', ')}` +
        `${leftOut.length > 5 ? ' …' : ''} (drop such a folder's contents to index them)`);
    }
    if (tally.skippedList.length) {
      parts.push(`skipped ${tally.skippedList.slice(0, 5).join(', ')}${tally.skippedList.length > 5 ? ' …' : ''}`);
    }
    return `Nothing was indexed${parts.length ? ': ' + parts.join('; ') : ''}.`;
  }

  function handlePicked(fileList) {
    const files = Array.from(fileList);
    return enqueue(async () => {
      if (!state.ready) { setStatus(notReadyStatus()); return; }
      state.facade.ignore_reset();
      const found = await pickedItems(files);
      reportIndexed(found, await indexItems(found));
    });
  }

  async function trySample() {
    return enqueue(async () => {
      if (!state.ready) { setStatus(notReadyStatus()); return; }
      setStatus('Fetching the sample project…');
      state.facade.ignore_reset();
      const names = state.manifest.sample || [];
      const items = await Promise.all(names.map(async (name) => {
        const url = new URL(`./sample/${name.split('/').map(encodeURIComponent).join('/')}`, location.href);
        const r = await fetch(url);
        if (!r.ok) throw new Error(`sample/${name}: HTTP ${r.status}`);
        const blob = await r.blob();
        return { path: name, file: new File([blob], name.split('/').pop()) };
      }));
      const tally = await indexItems(items);
      setStatus(`Indexed the sample project: ${tally.files} files. Try a question such as “how are headers parsed?”`);
      const box = $('search');
      if (!box.value) box.value = 'how are headers parsed?';
      runSearch();
    });
  }

  // ------------------------------------------------------------------ UI

  function setStatus(message) { $('status').textContent = message; }

  function showBanner(message, kind, offerClear = false) {
    $('banner-text').textContent = message;
    $('banner-clear').hidden = !offerClear;
    $('banner').dataset.kind = kind;
    $('banner').hidden = false;
  }
  function hideBanner(kind) {
    if ($('banner').dataset.kind === kind) closeBanner();
  }
  // A banner hidden with the focus in it (its × or "Clear stored index") hands the focus to
  // the drop zone, next in the page, instead of dropping it to <body>.
  function closeBanner(moveFocus = false) {
    const banner = $('banner');
    const hadFocus = moveFocus || banner.contains(document.activeElement);
    banner.hidden = true;
    if (hadFocus) $('dropzone').focus();
  }

  function formatBytes(n) {
    if (n < 1024) return `${n} B`;
    const units = ['KB', 'MB', 'GB', 'TB'];
    let v = n / 1024; let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
    return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
  }

  function scheduleUi() {
    if (state.uiTimer || state.indexing) return;
    // (the results shown are redone too: a change made through the API, ragRemove, ragClear,
    // would leave them quoting files that are gone)
    state.uiTimer = setTimeout(() => { state.uiTimer = null; refreshUi(); rerunSearch(); }, UI_REFRESH_MS);
  }

  function refreshUi() {
    if (!state.ready) return;
    const st = JSON.parse(state.facade.stats());
    if (st.error) { $('stats').textContent = st.error; return; }
    const size = JSON.parse(state.facade.index_size());
    $('stats').textContent = `${st.totalDocs} file${st.totalDocs === 1 ? '' : 's'}, ` +
      `${st.totalChunks} chunk${st.totalChunks === 1 ? '' : 's'}, average chunk ${st.avgChunkLen} terms` +
      (size.error ? '' : `; index ${formatBytes(size.bytes)} of the ${formatBytes(size.max)} a tab holds`);
    renderFiles(st.files);
    updateStorage();
  }

  // The file list, rebuilt only when it changed. A focused Remove button keeps the focus: on
  // its file's new button, or, its file gone, on the button now at its place, else the one
  // before, else "Choose files" (never <body>).
  function renderFiles(files) {
    const list = $('files');
    const shown = Array.from(list.querySelectorAll('.path'), (el) => el.textContent);
    if (shown.length === files.length && shown.every((p, i) => p === files[i])) return;
    const buttons = () => Array.from(list.querySelectorAll('.remove'));
    const focused = buttons().indexOf(document.activeElement);
    const frag = document.createDocumentFragment();
    for (const path of files) {
      const li = document.createElement('li');
      const name = document.createElement('span');
      name.className = 'path';
      name.textContent = path;
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.className = 'remove';
      btn.textContent = 'Remove';
      btn.setAttribute('aria-label', `Remove ${path}`);
      btn.dataset.testid = 'remove';
      btn.addEventListener('click', () => {
        const out = JSON.parse(ragRemove(path));
        if (out.error) showBanner(out.error, 'remove');
        else setStatus(out.removed ? `Removed ${out.filename}.` : `${out.filename} was no longer indexed.`);
        refreshUi();
        rerunSearch();
      });
      li.append(name, btn);
      frag.append(li);
    }
    list.replaceChildren(frag);
    if (focused < 0) return;
    const now = buttons();
    const same = files.indexOf(shown[focused]);
    (now[same >= 0 ? same : Math.min(focused, now.length - 1)] || $('choose-files')).focus();
  }

  // Text with <mark> around [start, end) ranges; only text nodes, never HTML.
  function highlighted(text, marks) {
    const frag = document.createDocumentFragment();
    let pos = 0;
    for (const [start, end] of marks) {
      if (start < pos) continue;
      if (start > pos) frag.append(document.createTextNode(text.slice(pos, start)));
      const mark = document.createElement('mark');
      mark.textContent = text.slice(start, end);
      frag.append(mark);
      pos = end;
    }
    if (pos < text.length) frag.append(document.createTextNode(text.slice(pos)));
    return frag;
  }

  // A question typed, or a pack asked for, while the engine loads is answered once it is ready.
  function whenReady(what) {
    if (state.bootError) { setStatus(notReadyStatus()); return; }
    state.pending = what === 'pack' || state.pending === 'pack' ? 'pack' : 'search';
    setStatus('The engine is still loading: your question is answered when it is ready.');
  }

  function runSearch() {
    if (!state.ready) { whenReady('search'); return; }
    const q = $('search').value;
    const list = $('results');
    if (!q.trim()) { list.replaceChildren(); $('search-info').textContent = ''; return; }
    const asked = $('topk').value.trim() === '' ? NaN : Number($('topk').value);  // ("1e1" is 10)
    const k = Number.isFinite(asked) ? Math.max(1, Math.min(100, Math.round(asked))) : 10;
    const t0 = performance.now();
    const res = JSON.parse(state.facade.search_ui(q, k));
    const ms = performance.now() - t0;
    if (res.error) { list.replaceChildren(); $('search-info').textContent = res.error; return; }
    const n = res.results.length;
    let why = '';
    if (!n) {
      why = res.indexEmpty ? ': nothing is indexed yet; add files above or try the sample project'
        : ': no indexed file has these words';
    }
    $('search-info').textContent = `${n} result${n === 1 ? '' : 's'} in ${ms.toFixed(1)} ms${why}`;
    const frag = document.createDocumentFragment();
    for (const r of res.results) {
      const li = document.createElement('li');
      li.dataset.testid = 'result';
      li.className = 'result';
      const head = document.createElement('div');
      head.className = 'result-head';
      const cite = document.createElement('code');
      cite.className = 'cite';
      cite.textContent = `${r.path}:L${r.startLine}-${r.endLine}`;
      const score = document.createElement('span');
      score.className = 'score';
      score.textContent = `score ${r.score.toFixed(3)}`;
      head.append(cite, score);
      if (r.heading) {
        const h = document.createElement('span');
        h.className = 'heading';
        h.textContent = r.heading;
        head.append(h);
      }
      const body = document.createElement('pre');
      body.className = 'snippet';
      body.append(highlighted(r.text, r.marks || []));
      li.append(head, body);
      frag.append(li);
    }
    list.replaceChildren(frag);
  }

  function rerunSearch() { if ($('search').value.trim()) runSearch(); }

  const PACK_MODES = { compact: {}, lean: { lean: true }, whole: { compact: false } };

  function runPack() {
    if (!state.ready) { whenReady('pack'); return; }
    const q = $('search').value;
    const raw = $('budget').value.trim();  // (as a number: "1e3" is 1000; a fraction is refused by ragPack)
    const mode = $('pack-mode').value;
    const out = ragPack(q, raw === '' ? undefined : Number(raw), PACK_MODES[mode] || {});
    const res = JSON.parse(out);
    state.lastPack = res.error ? null : out;
    state.packPaths = new Set(res.error ? [] : res.snippets.map((sn) => sn.path));
    if (res.error) {
      $('pack-info').textContent = res.error;
      $('pack-output').textContent = '';
    } else {
      showPack();
    }
    $('copy-prompt').disabled = !state.lastPack;
    $('copy-json').disabled = !state.lastPack;
  }

  // A pack that quotes a file indexed again or removed since no longer cites what is
  // indexed: it goes, with a note (the copy buttons must not hand out the old text).
  function dropPackQuoting(path) {
    if (!state.lastPack || !state.packPaths.has(path)) return;
    resetPack();
    $('pack-info').textContent = `The packed context quoted ${path}, which has changed since; pack again.`;
  }

  // No packed context on show (after Clear all: it quoted files that are gone).
  function resetPack() {
    state.lastPack = null;
    state.packPaths = new Set();
    $('pack-info').textContent = '';
    $('pack-output').textContent = '';
    $('copy-prompt').disabled = true;
    $('copy-json').disabled = true;
  }

  // The packed context in the chosen view (json, markdown, xml, text), with the evidence signal.
  function renderedPack() {
    return JSON.parse(state.facade.render_pack(state.lastPack, $('pack-format').value));
  }

  function showPack() {
    if (!state.lastPack) return;
    const res = JSON.parse(state.lastPack);
    const view = renderedPack();
    $('pack-info').textContent = `${res.snippets.length} snippet${res.snippets.length === 1 ? '' : 's'}, ` +
      `${res.used_tokens} of ${res.budget_tokens} tokens` + (view.warning ? ` (${view.warning})` : '');
    $('pack-output').textContent = view.error ? view.error : view.text;
  }

  async function copyText(text) {
    window.__ragLastCopied = text;  // for tests and for browsers without clipboard access
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (e) {
      const area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.append(area);
      area.select();
      let ok = false;
      try { ok = document.execCommand('copy'); } catch (e2) { ok = false; }
      area.remove();
      return ok;
    }
  }

  async function copyPrompt() {
    if (!state.lastPack) return;
    const res = JSON.parse(state.facade.runtime_prompt(state.lastPack));
    if (res.error) { $('pack-info').textContent = res.error; return; }
    const ok = await copyText(res.prompt);
    $('pack-info').textContent = ok ? `Copied the prompt (${res.prompt.length} characters): paste it into any LLM.`
      : 'Could not copy automatically: select the packed context and copy it by hand.';
  }

  // "Clear all" also empties the index saved in this browser, so it asks first (unless
  // nothing is indexed). ragClear() does not: it is an API.
  function confirmClear() {
    const n = JSON.parse(ragStats()).totalDocs;
    if (n === 0) return true;
    const what = typeof n === 'number' ? `all ${n} file${n === 1 ? '' : 's'}` : 'every file';
    return window.confirm(`Remove ${what} from the index? The index saved in this browser is emptied too; ` +
      'this cannot be undone.');
  }

  function wireUi() {
    const zone = $('drop-area');
    zone.addEventListener('dragenter', (e) => { e.preventDefault(); zone.classList.add('over'); });
    zone.addEventListener('dragover', (e) => { e.preventDefault(); if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy'; zone.classList.add('over'); });
    zone.addEventListener('dragleave', () => zone.classList.remove('over'));
    zone.addEventListener('drop', (e) => {
      e.preventDefault();
      zone.classList.remove('over');
      if (e.dataTransfer) handleDrop(e.dataTransfer);
    });
    // A drop outside the zone must not navigate away from the page.
    window.addEventListener('dragover', (e) => e.preventDefault());
    window.addEventListener('drop', (e) => e.preventDefault());
    // (buttons, not labels around the inputs: a keyboard reaches them; Enter or Space on
    // the drop zone chooses files too)
    $('choose-files').addEventListener('click', () => $('pick-files').click());
    $('choose-folder').addEventListener('click', () => $('pick-folder').click());
    $('dropzone').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); $('pick-files').click(); }
    });
    // (a button answers a click too: screen readers in browse mode click rather than press keys)
    $('dropzone').addEventListener('click', () => $('pick-files').click());
    $('pick-files').addEventListener('change', (e) => { handlePicked(e.target.files); e.target.value = ''; });
    $('pick-folder').addEventListener('change', (e) => { handlePicked(e.target.files); e.target.value = ''; });
    $('try-sample').addEventListener('click', () => { trySample(); });
    let searchTimer = null;
    $('search').addEventListener('input', () => {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(runSearch, 150);
    });
    $('search-form').addEventListener('submit', (e) => { e.preventDefault(); clearTimeout(searchTimer); runSearch(); });
    $('topk').addEventListener('change', rerunSearch);
    $('budget').addEventListener('input', () => { $('budget-range').value = $('budget').value; });
    $('budget-range').addEventListener('input', () => { $('budget').value = $('budget-range').value; });
    $('budget').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); runPack(); } });
    $('pack-run').addEventListener('click', runPack);
    $('copy-prompt').addEventListener('click', copyPrompt);
    $('pack-format').addEventListener('change', showPack);
    $('pack-mode').addEventListener('change', () => { if (state.lastPack) runPack(); });
    $('copy-json').addEventListener('click', async () => {
      if (state.lastPack) {
        const view = renderedPack();
        const ok = await copyText(view.text || '');
        $('pack-info').textContent = ok ? `Copied the packed context (${$('pack-format').value}).` : 'Could not copy automatically.';
      }
    });
    $('clear-all').addEventListener('click', () => {
      if (!state.ready || !confirmClear()) return;
      const res = JSON.parse(ragClear());
      if (res.error) showBanner(res.error, 'clear');
      refreshUi();
      rerunSearch();
      setStatus('Index cleared.');
    });
    $('banner-clear').addEventListener('click', clearStoredIndex);
    $('banner-close').addEventListener('click', () => closeBanner(true));
    // Save a pending change when the tab is hidden (it may be discarded later) or left.
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden' && state.ready && state.dirty) flush();
    });
    window.addEventListener('pagehide', saveOnExit);
    // back from the browser's page cache: the save made on the way out is settled like
    // another tab's (this tab takes it as the index)
    window.addEventListener('pageshow', (ev) => { if (ev.persisted) syncWithStored(); });
  }

  // Hooks for tests and scripts (not part of the reference API).
  window.ragweb = {
    trySample,
    clearStoredIndex,
    indexFiles: handlePicked,
    handleDrop,
    idle: () => state.jobs,
    refresh: () => { refreshUi(); rerunSearch(); },
    // dirty turns false when a save starts; saving stays true until IndexedDB has it
    storage: () => ({ refused: state.storageRefused, quotaError: state.quotaError, dirty: state.dirty,
                      saving: state.saving !== null, conflict: state.conflict, generation: state.generation }),
    storeFormat: STORE_FORMAT,
    pyodide: () => state.py,
    heapBytes,
    setHeapSafeBytes: (n) => { state.heapSafeBytes = n; },  // tests: see the checksum catch a garbled copy
  };

  wireUi();
  window.ragReady = main().catch((e) => {
    state.bootError = e && e.message ? e.message : String(e);
    setStatus(`The engine failed to load: ${state.bootError}`);
    showBanner(`The engine failed to load: ${state.bootError}`, 'boot');
    throw e;
  });
  // Files dropped or chosen while the engine loads wait for it (then see state.ready).
  state.jobs = window.ragReady.then(() => {}, () => {});
})();

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
  // ... its bytes in parts, each a value of its own under EXIT_PART_PREFIX + its key: Chromium
  // stores a value over 64 KB as a blob, whose write a leaving page does not finish (an exit
  // save of a 500 KB index landed 0 times in 5 whole, and 18 in 18 in 32 KB parts). Such saves
  // go under a prefix of their own, which a tab of an earlier version of the page (one open
  // since before a deploy) does not read: it would take the record without its bytes for a
  // whole one, and store it as the index. Saves of such a tab (EXIT_PREFIXES' first) are read.
  const EXIT_PREFIX = 'exitp:';
  const EXIT_PREFIXES = ['exit:', EXIT_PREFIX];
  const EXIT_PART_PREFIX = 'exitpart:';
  const EXIT_PART_BYTES = 32 * 1024;
  const SAVE_DELAY_MS = 300;       // debounce: save this long after the last change
  const SAVE_GAP_MS = 5000;        // while changes keep coming (a long drop, a script), save at least this often
  // ... but no sooner than this many times the page's time the last save took: the saves of a
  // big index hold the page for seconds, and a drop must not spend its time saving
  const SAVE_GAP_COST = 10;
  // A change made through the JS API is saved at once while the saves have held the page no more
  // than 1/SAVE_GAP_COST of the time, in bursts of up to this many ms (see apiChanged)
  const SAVE_BURST_MS = 1000;
  // What a tab's save on its way out held, in localStorage (written at once: see saveOnExit)
  const EXIT_NOTE_PREFIX = 'ragweb:exit-note:';
  const EXIT_WAIT_MS = 3000;       // how long a loading tab waits for a closed tab's save to land
  // A stored record names the generations of the records it was made on top of (`lineage`,
  // newest first), up to this many: a closed tab's note naming one of them is of a save that
  // landed, then another tab's on top of it (see exitNotesMessage)
  const LINEAGE_MAX = 64;
  // how long the boot waits for IndexedDB to open (Safari's open has been known never to answer)
  const STORE_OPEN_WAIT_MS = 5000;
  const READ_SHOW_MS = 250;        // the count of a dropped folder's files being read, shown this often
  const MAX_DEPTH_DEFAULT = 200;   // (ragweb.files.MAX_DEPTH, read from the engine: see maxFolderDepth)
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
    storeUnread: null,     // message: the stored index could not be read at boot; saving is off
    quotaError: null,      // message: the last save failed for lack of space
    quotaNotes: [],        // what it cost a drop (shown with it)
    dirty: false,
    ownChanges: false,     // the unsaved changes are the user's (not only a re-read of an older index)
    missedSave: false,     // another tab saved or closed while this one was still loading
    exitKeys: [],          // saves of closed tabs that the next save settles (stores or drops)
    exitTaken: null,       // the key of the one among them whose changes this tab loaded at its boot
    savingGeneration: null,
    saveTimer: null,
    lastSave: 0,           // performance.now() when the last save began (or a drop did)
    dirtySince: 0,         // performance.now() of the first change not saved yet
    saveDelay: SAVE_DELAY_MS,  // the debounce (a test may lengthen it: setSaveDelay)
    saveBudget: SAVE_BURST_MS,  // ms of the page's time the saves may still take for API changes (see apiChanged)
    budgetAt: 0,           // performance.now() when saveBudget was last worked out
    saveQueued: false,     // an API change's save starts when the task that made it ends
    lastSaved: null,       // flush's answer for the last save made since ragFlush last answered
    saving: null,
    uiTimer: null,
    jobs: Promise.resolve(),
    clears: 0,             // how many times the index was cleared (a drop stops at a clear)
    apiSeq: 0,             // ragIndex and ragRemove calls made while drops were queued or under way
    apiChanges: new Map(), // path -> {seq, how}: the last such call on it (a drop made before leaves it out)
    lastPack: null,
    packQuery: null,       // the question lastPack was made for
    packWarning: null,     // its evidence warning
    packShownStale: false, // its summary says it is for an earlier question
    packPaths: new Set(),  // the files lastPack quotes
    topkEditing: false,    // the top box is being typed in (see topK)
    pending: null,         // 'search' or 'pack': asked for while the engine loaded
    indexing: false,
    generation: null,      // id of the stored record this tab's index was loaded from or saved as
    lineage: [],           // that one's generation and its record's lineage: what the next save holds (see lineageOf)
    conflict: null,        // message: another tab saved since; this tab does not overwrite it
    memoryError: null,     // message: the engine's memory passed heapSafeBytes; reload
    heapSafeBytes: HEAP_SAFE_BYTES,
    saveCost: 0,           // ms the last save held the page (dump and put): spaces a drop's saves
    savedDocs: null,       // files in the index as last stored (null: not known)
    busy: false,           // a drop, pick or sample is under way
    queued: 0,             // drops, picks and samples waiting for the one under way
    drop: null,            // the one under way: {reading, left} (files not indexed yet; see saveOnExit)
    jobSeq: 0,             // drops, picks and samples made so far
    bannerSeq: 0,          // jobSeq when a banner about a drop was shown (a drop made later hides it)
    exitNoteKey: null,     // the note this tab left on its way out (a page back from the cache drops it)
    exitAborted: false,    // saveOnExit stopped a save under way (its failure is not said)
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
          // (another tab or devtools deletes or upgrades the database: let it, then open it
          // again, so that the save on the way out, which cannot wait for an open, has one)
          db.onversionchange = () => {
            db.close(); dbPromise = null; openedDb = null;
            setTimeout(() => { openDb().catch(() => {}); });
          };
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
  const exitRanges = () => EXIT_PREFIXES.map((prefix) => IDBKeyRange.bound(prefix, `${prefix}\uffff`));
  // the parts of the exit save under `key` (all of them: no key)
  const exitPartsRange = (key = '') => IDBKeyRange.bound(`${EXIT_PART_PREFIX}${key}`, `${EXIT_PART_PREFIX}${key}\uffff`);
  const exitPartKey = (key, i) => `${EXIT_PART_PREFIX}${key}:${String(i).padStart(8, '0')}`;
  // Delete the exit save under `key` from `store`, with its parts.
  function deleteExit(store, key) {
    store.delete(key);
    store.delete(exitPartsRange(`${key}:`));
  }

  // An exit save read back: its parts (`parts`: [[key, bytes]] in key order) joined as its
  // bytes. Parts missing or extra leave it with no bytes: refused as damaged when loaded.
  function joinExitParts(key, record, parts) {
    if (!record || !Number.isInteger(record.parts)) return record;
    const { parts: count, ...whole } = record;
    const own = parts.filter(([k]) => k.startsWith(`${EXIT_PART_PREFIX}${key}:`)).map(([, bytes]) => bytes);
    if (own.length !== count || !own.every((b) => b instanceof Uint8Array)) return whole;
    const bytes = new Uint8Array(own.reduce((n, b) => n + b.byteLength, 0));
    let at = 0;
    for (const b of own) { bytes.set(b, at); at += b.byteLength; }
    return { ...whole, bytes };
  }
  const generationOf = (record) => (record && record.generation) || null;
  // The generations whose changes `record` holds: its own, then those it was made on top of.
  const lineageOf = (record) => [...(generationOf(record) ? [record.generation] : []),
    ...(record && Array.isArray(record.lineage) ? record.lineage : [])].slice(0, LINEAGE_MAX);

  // The stored record and the saves of tabs that closed since, in one read:
  // {record, exits: [{key, record}]}.
  async function idbReadAll() {
    const db = await openDb();
    return new Promise((resolve, reject) => {
      const tx = db.transaction(DB_STORE, 'readonly');
      const store = tx.objectStore(DB_STORE);
      const main = store.get(DB_KEY);
      const ranges = exitRanges();
      const keyLists = ranges.map((range) => store.getAllKeys(range));
      const valueLists = ranges.map((range) => store.getAll(range));
      const partKeys = store.getAllKeys(exitPartsRange());
      const partValues = store.getAll(exitPartsRange());
      tx.oncomplete = () => {
        const keys = keyLists.flatMap((rq) => rq.result);
        const values = valueLists.flatMap((rq) => rq.result);
        const parts = partKeys.result.map((key, i) => [key, partValues.result[i]]);
        // (parts whose exit save is gone: deleted by a tab of an earlier version, say)
        const owners = new Set(parts.map(([k]) => k.slice(EXIT_PART_PREFIX.length).replace(/:\d+$/, '')));
        resolve({ record: main.result, orphans: [...owners].filter((k) => !keys.includes(k)),
                  exits: keys.map((key, i) => ({ key, record: joinExitParts(key, values[i], parts) })) });
      };
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
  // (`lastPutMs`: how long the put of the record held the page: it copies the bytes)
  let lastPutMs = 0;
  // (the transaction of a save under way, which a leaving page aborts: see saveOnExit)
  let putTx = null;
  // (the generation of the record that save stores, once its write is committed)
  let committing = null;
  async function idbPutIfCurrent(record, expected, drop = []) {
    let conflict = false;
    lastPutMs = 0;
    await idb('readwrite', (s) => {
      putTx = s.transaction;
      const rq = s.get(DB_KEY);
      rq.onsuccess = () => {
        const current = rq.result;
        if (current && generationOf(current) !== expected) { conflict = true; return; }
        const t0 = performance.now();
        if (record) s.put(record, DB_KEY);
        else s.delete(DB_KEY);
        lastPutMs = performance.now() - t0;
        for (const key of drop) deleteExit(s, key);
        // Committed now, not once the page gets another turn to see the last request done: a
        // page left from here on does not stop this write (saveOnExit lets it go on). A browser
        // may still end it with the page (a reload at once after a loop of ragIndex calls on a
        // 1 MB index: 1 time in 8 here); the next load says so (exitNotesMessage).
        if (s.transaction.commit) s.transaction.commit();
        putTx = null;
        committing = record ? generationOf(record) : null;
      };
      return null;
    }).finally(() => { putTx = null; committing = null; });
    return !conflict;
  }
  const newGeneration = () => `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;

  // Other tabs of this page: told when this tab saved, so they can load the new index.
  const channel = ('BroadcastChannel' in window) ? new BroadcastChannel('ragweb-index') : null;
  const idbDelete = () => idb('readwrite', (s) => { s.delete(DB_KEY); for (const r of exitRanges()) s.delete(r); s.delete(exitPartsRange()); });
  const idbDeleteKeys = (keys) => idb('readwrite', (s) => { for (const key of keys) deleteExit(s, key); });

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
    if (!state.dirty) state.dirtySince = performance.now();
    state.dirty = true;
    if (own) state.ownChanges = true;
    // Changes that keep coming (a drop being indexed, a script calling ragIndex every 200 ms)
    // would put the debounced save off for ever: once the first unsaved change is
    // SAVE_GAP_MS old, save now. A reload or a crash then keeps what was indexed up to then
    // (the save on the way out cannot be relied on: a leaving page may end before its write
    // lands). A save holds the page while it runs (a big index: seconds), so they come no
    // more often than SAVE_GAP_COST times the time the last one took.
    const waited = performance.now() - Math.max(state.dirtySince, state.lastSave);
    if (!state.saving && waited >= saveGap()) flush();
    if (state.saveTimer) clearTimeout(state.saveTimer);
    state.saveTimer = setTimeout(() => {
      state.saveTimer = null;
      if (state.indexing) markChanged(false);  // a drop is still being indexed: save after it
      else flush();
    }, state.saveDelay);
    scheduleUi();
  }

  const saveGap = () => Math.max(SAVE_GAP_MS, SAVE_GAP_COST * state.saveCost);

  // A change made through the JS API (ragIndex, ragRemove, ragClear) is saved at once: the
  // save starts when the task that made the change ends (so a loop of calls makes one save),
  // not after the debounce. A page reloaded or closed right after the call then keeps the
  // change: left to the save on the way out, it was lost 1 time in 6 (Chromium ends the leaving
  // page's writes with it unless they are well under way; see saveOnExit). A save under way is
  // waited for (flush). The saves may hold the page at most 1/SAVE_GAP_COST of the time, in
  // bursts of up to SAVE_BURST_MS (a big index's save holds it for seconds, and a script that
  // adds files one at a time must not spend its time saving): past that, the debounce saves.
  // A drop under way saves when it ends (saveAfterRun).
  function apiChanged() {
    markChanged();
    if (state.busy || state.indexing || state.saveQueued || !inSaveBudget()) return;
    state.saveQueued = true;
    queueMicrotask(() => {
      state.saveQueued = false;
      if (state.dirty) flush();
    });
  }

  // Whether the saves have page time left (saveBudget, refilled at 1/SAVE_GAP_COST of the
  // time passed); each save spends what it held the page (flush).
  function inSaveBudget() {
    const now = performance.now();
    state.saveBudget = Math.min(SAVE_BURST_MS, state.saveBudget + (now - state.budgetAt) / SAVE_GAP_COST);
    state.budgetAt = now;
    return state.saveBudget > 0;
  }

  // The files the index holds (null if the engine cannot say).
  function docCount() {
    try { const n = JSON.parse(state.facade.stats()).totalDocs; return Number.isInteger(n) ? n : null; } catch (e) { return null; }
  }

  // The record to store: the engine's bytes, checked against the engine's own checksum; for
  // an empty index a small record that says so (a cleared index frees the space it took).
  // `docs`: the files it holds (null if not known), for the messages about what is stored.
  function dumpRecord(docs = docCount()) {
    if (docs === 0) {
      return { version: STORE_FORMAT, cleared: true, savedAt: Date.now(), ragweb: state.manifest.ragweb,
               generation: newGeneration(), lineage: state.lineage };
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
             generation: newGeneration(), lineage: state.lineage };
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
  //
  // A browser may end the leaving page before that write lands (a big index), and a drop
  // under way is cut short. So a small note goes to localStorage too, written at once: the
  // key and generation of the exit save, the files it holds, and the files of a drop not
  // indexed yet. The next tab to load compares it with what it finds (`exitNotesMessage`).
  function saveOnExit() {
    const note = { savedAt: Date.now(), base: state.generation, queued: state.queued,
                   left: state.drop ? state.drop.left : 0, reading: !!(state.drop && state.drop.reading),
                   total: state.drop && Number.isInteger(state.drop.total) ? state.drop.total : null };
    // A save whose write is committed holds every change when none came since: it goes on,
    // and only the note is written, naming what it stores (the next load says if it did not land).
    if (state.ready && committing && !state.dirty) {
      note.generation = committing;
      note.files = docCount();
      writeExitNote(note);
      // (the open tabs hear of it now: this page may be gone before the save's own message)
      if (channel) channel.postMessage({ type: 'saved', generation: committing });
      return;
    }
    if (state.ready && (state.dirty || state.saving) && !state.storageRefused && openedDb) {
      try {
        const bases = [state.generation];
        if (state.savingGeneration) bases.push(state.savingGeneration);
        note.files = docCount();
        const record = { ...dumpRecord(note.files), bases };
        // (on top of the save under way too, if its write is committed: it goes on)
        if (committing) record.lineage = lineageOf({ generation: committing, lineage: state.lineage });
        const key = EXIT_PREFIX + record.generation;
        Object.assign(note, { exitKey: key, generation: record.generation });
        writeExitNote(note);  // (first: what follows may not run to its end)
        // A save under way waits for its read of the stored record to come back before it
        // writes, and a leaving page gets no more turns for that: its transaction stayed open,
        // the one below queued behind it, and the browser ended both with the page (a save
        // begun just before the page was left lost both 7 times in 24). This one holds all
        // that one would have stored: that one goes.
        if (putTx) {
          state.exitAborted = true;
          try { putTx.abort(); } catch (e) { /* finished meanwhile */ }
        }
        const tx = openedDb.transaction(DB_STORE, 'readwrite', { durability: 'strict' });
        const store = tx.objectStore(DB_STORE);
        putExitSave(store, key, record);
        for (const taken of state.exitKeys) deleteExit(store, taken);  // (this save holds what they held)
        if (tx.commit) tx.commit();  // (without it Chromium drops the write with the page)
        state.dirty = false;
        if (channel) channel.postMessage({ type: 'exit', key });
        return;
      } catch (e) {  // best effort: the page is going
        note.failed = !note.exitKey;
        if (note.exitKey) return;
      }
    } else if (state.ready && (state.dirty || state.saving) && !state.storageRefused) {
      // nothing to write with (the database was deleted under the page, or never answered):
      // the next load says these changes were not kept
      note.failed = true;
      note.files = docCount();
    }
    // (a drop whose folders are being read has found no file yet, maybe: it is told all the same)
    if (note.failed || note.left || note.queued || note.reading) writeExitNote(note);
  }

  // The exit save `record` under `key`, its bytes in parts of EXIT_PART_BYTES (copies: a view
  // would be stored with the whole buffer it views), all in the transaction of `store`.
  function putExitSave(store, key, record) {
    if (!record.bytes) { store.put(record, key); return; }
    const { bytes, ...rest } = record;
    let n = 0;
    for (let at = 0; at < bytes.byteLength; at += EXIT_PART_BYTES, n++) {
      store.put(bytes.slice(at, at + EXIT_PART_BYTES), exitPartKey(key, n));
    }
    store.put({ ...rest, parts: n }, key);
  }

  function writeExitNote(note) {
    try {
      const key = EXIT_NOTE_PREFIX + (note.exitKey || newGeneration());
      localStorage.setItem(key, JSON.stringify(note));
      state.exitNoteKey = key;
    } catch (e) { /* no localStorage: nothing to compare with next time */ }
  }

  // The notes closed tabs left (saveOnExit): [{key, exitKey?, generation?, files?, left,
  // reading, queued, failed?}].
  function readExitNotes() {
    const notes = [];
    try {
      for (let i = 0; i < localStorage.length; i++) {
        const key = localStorage.key(i);
        if (!key || !key.startsWith(EXIT_NOTE_PREFIX)) continue;
        let note = {};
        try { note = JSON.parse(localStorage.getItem(key)) || {}; } catch (e) { /* not ours to read */ }
        notes.push({ ...note, key });
      }
    } catch (e) { /* no localStorage */ }
    return notes;
  }

  // A closed tab's save on its way out may land after this tab first read the store (the
  // write of a big record takes a while, and nothing orders it before the next page's read):
  // while a note names a save that is not found (noteLanded), read again, for up to EXIT_WAIT_MS. Resolves to what idbReadAll found last.
  async function exitSavesLanded(found, notes) {
    const missing = (f) => !f.readError && notes.some((n) => !noteLanded(n, f));
    const until = performance.now() + EXIT_WAIT_MS;
    while (missing(found) && performance.now() < until) {
      await new Promise((r) => setTimeout(r, 150));
      try { found = await idbReadAll(); } catch (e) { return found; }
    }
    return found;
  }

  function removeExitNotes(notes) {
    for (const note of notes) { try { localStorage.removeItem(note.key); } catch (e) { /* gone */ } }
  }

  // Whether the save a closed tab's note names (none: true) is among those `found`: an exit
  // save not settled yet, the stored record, or one the stored record was made on top of
  // (another tab saved after it: that save holds its changes, or replaced them on purpose).
  function noteLanded(note, found) {
    if (!note.generation) return true;
    return found.exits.some((e) => e.key === note.exitKey) || lineageOf(found.record).includes(note.generation);
  }

  // What the notes of closed tabs say against what was found at boot (`found`: the stored
  // record and exit saves, `docs`: the files restored), as sentences for a banner ([] when
  // all is well). An exit save that is neither among the saves found nor the stored record
  // did not land; a drop under way when the tab closed has files that were never indexed.
  function exitNotesMessage(notes, found, docs) {
    const parts = [];
    const missed = notes.filter((n) => n.failed || !noteLanded(n, found));
    if (missed.length) {
      const files = Math.max(...missed.map((n) => (Number.isInteger(n.files) ? n.files : -1)));
      parts.push('Changes made just before this page was last closed or reloaded may not all have been kept: ' +
        "the save it made on its way out did not reach the browser's storage" +
        (files >= 0 ? ` (${plural(files, 'file was', 'files were')} indexed then; ${num(docs)} ${docs === 1 ? 'is' : 'are'} restored here).` : '.'));
    }
    // (a drop whose exit save did not land lost what it had indexed since the last save too:
    // the files indexed then that are not restored here)
    for (const note of notes) {
      const lost = missed.includes(note) && Number.isInteger(note.files) ? Math.max(0, note.files - docs) : 0;
      parts.push(...cutShortMessage(note, undefined, lost));
    }
    return parts;
  }

  // The drop a closed tab's note says was under way, and those queued behind it.
  // `lost`: files indexed when the page closed that are not restored (its exit save did not
  // land): those of the drop are not indexed here either.
  function cutShortMessage(note, when = 'the page was closed or reloaded', lost = 0) {
    const parts = [];
    const notIndexed = Number.isInteger(note.left) ? note.left : 0;
    const total = Number.isInteger(note.total) && note.total > 0 ? note.total : null;
    const queued = Number.isInteger(note.queued) ? note.queued : 0;
    const left = lost > 0 && notIndexed > 0 ? Math.min(total ?? Infinity, notIndexed + lost) : notIndexed;
    if (left > 0 && left !== notIndexed) {
      parts.push(`A drop was cut short when ${when}, and the files it had indexed were not all kept: ` +
        `${total ? `${num(left)} of its ${plural(total, 'file', 'files')}` : `at least ${num(left)} of its files`} ` +
        `${left === 1 ? 'is' : 'are'} not in the index here; drop them again to add them.`);
    } else if (left > 0) {
      parts.push(`A drop was cut short when ${when}: ${note.reading ? 'at least ' : ''}` +
        `${plural(left, 'of its files was', 'of its files were')} not indexed` +
        `${note.reading ? ' (its folders were still being read)' : ''}; drop them again to add them.`);
    } else if (note.reading) {  // (how many files it holds was not known yet)
      parts.push(`A drop was cut short when ${when}, while its folders were still being read: ` +
        'its files were not indexed; drop them again to add them.');
    }
    if (queued > 0) {
      parts.push(`${plural(queued, 'drop', 'drops')} waiting ${left > 0 || note.reading ? 'behind it' : 'to be indexed'} ` +
        `when ${when} ${queued === 1 ? 'was' : 'were'} not indexed.`);
    }
    return parts;
  }

  // Save now if anything changed; resolves to a JSON string like the other calls.
  async function flush() {
    if (state.saveTimer) { clearTimeout(state.saveTimer); state.saveTimer = null; }
    while (state.saving) await state.saving;
    if (state.storageRefused) return errorJson(state.storageRefused);
    if (state.storeUnread) return errorJson(state.storeUnread);
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
      let dumpMs = 0;
      const docs = docCount();
      try {
        record = dumpRecord(docs);
        dumpMs = performance.now() - t0;
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
          state.saveCost = dumpMs + lastPutMs;
          state.saveBudget -= state.saveCost;
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
        state.lineage = lineageOf(record);
        state.savedDocs = docs;
        if (channel) channel.postMessage({ type: 'saved', generation: record.generation });
        state.quotaError = null;
        state.quotaNotes = [];
        result = JSON.stringify({ success: true, saved: true, bytes: size,
                                  ms: Math.round(performance.now() - t0) });
        state.lastSaved = result;
        hideBanner('quota');
      } catch (e) {
        state.dirty = true;  // memory is still the truth; the previous record is intact
        state.ownChanges ||= own;
        state.saveCost = Math.max(state.saveCost, dumpMs + lastPutMs);
        state.saveBudget -= dumpMs + lastPutMs;
        if (isQuotaError(e)) {
          const stored = state.savedDocs === null ? 'the index as it was last saved'
            : state.savedDocs === 0 ? 'an empty index' : `the index as it was last saved (${plural(state.savedDocs, 'file', 'files')})`;
          state.quotaError = `storage quota full: the index (${formatBytes(size)}) could not be saved. ` +
            `This tab keeps it and answers from it, but a reload brings back ${stored}, and no more ` +
            'files are added until there is room. Remove files or clear the index to free space';
          showQuotaBanner();
          result = errorJson(state.quotaError);
        } else {
          result = errorJson(`could not save the index: ${e && e.message ? e.message : e}`);
          // (not the save a leaving page stopped: its changes went into the save on the way out)
          if (!state.exitAborted) showBanner(`Could not save the index: ${e && e.message ? e.message : e}`, 'save');
        }
      }
    })();
    try { await state.saving; } finally { state.saving = null; state.savingGeneration = null; }
    updateStorage();
    return result;
  }

  // ------------------------------------------------------------------ the JS API

  // The text of what was thrown (never throws itself: a caller's Proxy or getter may throw an
  // object that is no text, `Object.create(null)`, or whose `message` throws).
  function thrownText(e) {
    try {
      return String(e && e.message ? e.message : e);
    } catch (_) {
      return 'an exception that cannot be shown as text';
    }
  }

  function pyMessage(e) {
    const text = thrownText(e);
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
      if (isSuccess(out)) {
        const res = JSON.parse(out);
        noteApiChange(res.filename, 'replaced by ragIndex');  // (unchanged too: a drop's other copy stays out)
        if (res.unchanged) {  // (the text indexed at that name: nothing changed, nothing to save)
          apiStatus(`${shownPath(res.filename)} is unchanged: that text is indexed already (through ragIndex).`);
        } else {
          apiChanged();
          dropPackQuoting(res.filename);
          apiStatus(`Indexed ${shownPath(res.filename)} (through ragIndex).`);
        }
      }
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
  // (what each must be, as the engine's check says it: facade.PACK_OPTIONS)
  const PACK_OPTION_KINDS = { lean: 'true or false', compact: 'true or false', path: 'a string', topK: 'an integer' };
  function ragPack(query, budget, options) {
    return api(() => {
      if (typeof query !== 'string') return errorJson(`query must be a string, got ${typeName(query)}`);
      if (budget !== undefined && budget !== null && typeof budget !== 'number') {
        return errorJson(`budget must be a number, got ${typeName(budget)}`);
      }
      if (options !== undefined && options !== null &&
          (typeof options !== 'object' || isArray(options) ||
           ![Object.prototype, null].includes(protoOf(options)))) {
        // (a Map, a Date or a class's object: JSON would drop what it holds without a word)
        return errorJson(`options must be a plain object like {lean: true}, got ${typeName(options)}`);
      }
      let text;
      try {
        const plain = {};  // (each value checked here: JSON drops a function or a Symbol, and writes NaN as null)
        for (const key of Object.keys(options ?? {})) {
          const v = options[key];
          if (typeof v === 'number' && !Number.isFinite(v)) return errorJson(`options.${key} must be a finite number, got ${v}`);
          if (typeof v === 'bigint') return errorJson(`options.${key} must be a number, got a BigInt`);
          if (v !== null && v !== undefined && !['boolean', 'string', 'number'].includes(typeof v)) {
            const kind = PACK_OPTION_KINDS[key] || 'true or false, a string or a number';
            return errorJson(`options.${key} must be ${kind}, got ${typeName(v)}`);
          }
          plain[key] = v;
        }
        text = options == null ? undefined : JSON.stringify(plain);
      } catch (e) {  // (a getter that throws)
        return errorJson(`options must be plain data like {lean: true}: ${thrownText(e).split('\n')[0]}`);
      }
      return state.facade.pack(query, budget ?? undefined, text);
    });
  }

  function ragRemove(filename) {
    return api(() => {
      if (typeof filename !== 'string') return errorJson(`filename must be a string, got ${typeName(filename)}`);
      const out = state.facade.remove(filename);
      const res = isSuccess(out) ? JSON.parse(out) : null;
      // (a folder's path: every file under it)
      const paths = res && res.folder ? res.paths : res ? [res.filename] : [];
      for (const path of paths) noteApiChange(path, 'removed by ragRemove');  // (not indexed yet: a drop may still add it)
      if (res && res.removed) {
        apiChanged();
        for (const path of paths) dropPackQuoting(path);
        apiStatus(res.folder ? `Removed ${plural(res.count, 'file', 'files')} under ${shownPath(res.filename)}/ (through ragRemove).`
          : `Removed ${shownPath(res.filename)} (through ragRemove).`);
      }
      return out;
    });
  }

  function ragClear() {
    return api(() => {
      const out = state.facade.clear();
      if (isSuccess(out)) {
        state.clears += 1;
        apiChanged();
        resetPack();  // (it quoted files that are gone)
        apiStatus('Index cleared (through ragClear).');
      }
      return out;
    });
  }

  function ragStats() {
    return api(() => state.facade.stats());
  }

  // Saves what is not saved yet, and answers for the changes made since it last answered: a
  // change is often saved before ragFlush is called (at once, see apiChanged, or by the
  // debounce), and then its answer is that save's ({saved: true, bytes, ms}); saved: false
  // when nothing changed since.
  function ragFlush() {
    if (!state.ready) return Promise.resolve(errorJson(state.bootError ? `not ready: ${state.bootError}` : NOT_READY));
    return flush().then((out) => {
      const earlier = state.lastSaved;
      state.lastSaved = null;
      const res = JSON.parse(out);
      return earlier && res.success && !res.saved ? earlier : out;
    }).catch((e) => errorJson(thrownText(e)));
  }

  // The status line after a change made through the API, so that it does not go on stating
  // what an earlier drop or the boot said (a drop under way keeps its own).
  function apiStatus(message) {
    if (!state.busy && !state.indexing) setStatus(message);
  }

  // Array.isArray and Object.getPrototypeOf, for a caller's value: a revoked Proxy, or one whose
  // trap throws, is taken for an object whose prototype is unknown (undefined), not thrown.
  function isArray(v) {
    try { return Array.isArray(v); } catch (_) { return false; }
  }
  function protoOf(v) {
    try { return Object.getPrototypeOf(v); } catch (_) { return undefined; }
  }

  function typeName(v) {
    if (v === null) return 'null';
    if (isArray(v)) return 'an array';
    let name = typeof v;
    const proto = name === 'object' ? protoOf(v) : null;
    if (proto !== undefined && ![Object.prototype, null].includes(proto)) {
      let made;  // (a Map, a Date: name it)
      try { made = proto.constructor; } catch (_) { made = null; }
      if (typeof made === 'function' && /^\w+$/.test(made.name)) name = made.name;
    }
    return name === 'undefined' ? 'nothing' : `${/^[aeiouAEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
  }

  Object.assign(window, { ragIndex, ragQuery, ragPack, ragRemove, ragClear, ragStats, ragFlush });

  // ------------------------------------------------------------------ boot

  async function main() {
    const t0 = performance.now();
    const phases = {};
    const mark = (name, since) => { phases[name] = Math.round(performance.now() - since); };
    setStatus('Loading the engine…');
    // (a built site opened from disk: its fetches are refused, which said only "Failed to fetch")
    if (location.protocol === 'file:') {
      throw new Error('this page was opened as a file (file://), and a browser does not let such a page load ' +
        'its engine: serve its folder and open the address it prints (rag web, or python3 -m http.server ' +
        'in the folder, then 127.0.0.1:8000 in the address bar)');
    }
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
    // (the notes of closed tabs first: a note comes before its tab's write, see saveOnExit)
    const exitNotes = readExitNotes();
    // (an open that never answers must not hold the page for ever: after STORE_OPEN_WAIT_MS it
    // starts empty, and saves nothing until the store answers; see storeAnswered)
    const opened = openDb();
    const openWait = new Promise((resolve, reject) => setTimeout(() => reject(Object.assign(
      new Error(`the browser's storage did not answer in ${STORE_OPEN_WAIT_MS / 1000} s`), { timedOut: true })),
    STORE_OPEN_WAIT_MS));
    const stored = Promise.race([opened, openWait]).then(() => idbReadAll()).catch((e) => ({ readError: e }))
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
    const found = await exitSavesLanded(await stored, exitNotes);
    const record = found.readError ? null : found.record;
    let info = null;
    let settled = false;  // the index loaded is a closed tab's save, to be stored as the index
    let storedBytes = record && record.bytes && record.bytes.byteLength ? record.bytes.byteLength : 0;
    if (found.readError) {
      const why = found.readError.message || found.readError;
      showBanner(`Could not read the stored index (${why}); starting empty. This tab saves nothing, ` +
        'so as not to overwrite an index it has not read: reload the page to try again.', 'read');
      state.storeUnread = `could not read the stored index (${why}), so this tab saves nothing (that could ` +
        'overwrite it); reload the page to try again';
      if (found.readError.timedOut) opened.then(storeAnswered, () => {});
    } else if (record && record.version !== STORE_FORMAT) {
      refuseStorage(`The stored index has format version ${JSON.stringify(record.version)}, ` +
        `but this page reads version ${STORE_FORMAT}. It was not loaded and will not be overwritten ` +
        'unless you clear it.');
    } else {
      state.generation = generationOf(record);
      state.lineage = lineageOf(record);
      const { pick, lost, keys } = settleExits(found);
      if (pick) {
        info = loadRecord(pick.record, true);
        if (info.error) { lost.push(pick.record); info = null; } else {
          settled = true;
          state.lineage = lineageOf(pick.record);  // (made on top of the stored one: its lineage holds it)
          storedBytes = pick.record.bytes ? pick.record.bytes.byteLength : 0;
        }
      }
      if (!info && record) {
        info = loadRecord(record, true);
        if (info.error) {
          const why = info.error.charAt(0).toUpperCase() + info.error.slice(1);
          refuseStorage(`${why}. It was not loaded and will not be overwritten unless you clear it.`);
        }
      }
      if (lost.length) showBanner(lostExitsMessage(lost), 'exit');
      if (settled) {  // dropped by the save that stores the settled one
        state.exitKeys = keys;
        state.exitTaken = pick.key;
      } else if (keys.length && !state.storageRefused) idbDeleteKeys(keys).catch(() => {});
      if (found.orphans && found.orphans.length && !state.storageRefused) idbDeleteKeys(found.orphans).catch(() => {});
    }
    if (!info || info.error) {
      const empty = JSON.parse(state.facade.init());
      if (empty.error) throw new Error(empty.error);
      info = { ...empty, restored: false };
    }
    if (info.rereadPending) info.reread = await rereadStored(info.rereadPending);
    if (info.newerVersion) {
      showBanner('The stored index was built by a newer version of ragweb, so it is used as it was built ' +
        '(this version would read some of its files otherwise). Open the newer version of this page to ' +
        'keep it up to date, or to have this version read its files, choose "Clear all" and add them again.', 'reread');
    }
    if (info.rereadSkipped) {
      showBanner('The stored index was built by an older version of ragweb and is too large to ' +
        'read again inside this tab, so it is used as it was built. To have its files read the ' +
        "way this version does, choose \"Clear all\" and add them again.", 'reread');
    }
    const restoreMs = performance.now() - t1;
    state.ready = true;
    $('clear-all').disabled = false;  // (disabled while the engine loads: see index.html)
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
    state.savedDocs = settled ? null : record && record.cleared ? 0 : record ? (info.restored ? docs : null) : 0;
    if (exitNotes.length) {
      // (found.readError: the banner says so already; the notes are kept for the next load)
      const said = found.readError ? [] : exitNotesMessage(exitNotes, found, docs);
      if (said.length) {
        const banner = $('banner');
        const before = !banner.hidden && banner.dataset.kind === 'exit' ? [$('banner-text').textContent] : [];
        showBanner([...before, ...said].join('\n'), 'exit');
      }
      if (!found.readError) removeExitNotes(exitNotes);
    }
    const how = info.reread ? `; restored from this browser and re-read by this version (${info.reread} file${info.reread === 1 ? '' : 's'})`
      : info.restored ? ' (restored from this browser)' : '';
    setStatus(`Ready. ${docs} file${docs === 1 ? '' : 's'} indexed${how}.`);
    document.body.classList.add('ready');
    // A question or a pack asked for while the engine loaded: answered after the files
    // dropped meanwhile are indexed (queued behind them), not before.
    if (state.pending) {
      state.jobs = state.jobs.then(() => {
        const what = state.pending;
        state.pending = null;
        if (what === 'pack') runPack();
        else if (what === 'search') rerunSearch();
      });
    }
    return {
      ready: true,
      restored: !!info.restored,
      reread: info.reread || 0,
      totalDocs: docs,
      bootMs: Math.round(bootMs),
      restoreMs: Math.round(restoreMs),
      storeReadMs: phases.storeRead,
      phases,
      storedBytes,  // (of the record restored: a closed tab's save, when one was taken)
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
    // (with no stored record, as a save with none to check against, any is on top: the
    // database deleted under an open tab, say)
    // (one without its bytes -- parts missing -- is never stored as the index: it is lost)
    const whole = (e) => e.record.cleared || e.record.bytes;
    const onTop = exits.filter((e) => whole(e) && (!found.record || (Array.isArray(e.record.bases) && e.record.bases.includes(base))))
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
  // (`late`: the store answered only after this tab had started without it: what it loads is
  // the stored index, not another tab's news)
  // A save of this tab's that begins while the store is read or written here (its debounce
  // ran out meanwhile) is waited for, and the store read again: that save decides, and says
  // a conflict itself if its changes were the user's. (Taken for changes of this tab's own,
  // it made a conflict of two tabs opened together that both took a closed tab's save: the
  // first stored it, and the other, catching up on a slow store, began to store it too.)
  async function syncWithStored(message = null, late = false) {
    if (!state.ready) { state.missedSave = true; return; }
    let record;
    let found;
    for (;;) {
      while (state.saving) await state.saving;  // (decided on what this tab's own save did)
      if (state.storageRefused || state.conflict) return;
      if (message && message.generation && message.generation === state.generation) {
        landedExitNotes(state.lineage);  // (a closed tab's note may reach this tab after its save)
        return;
      }
      const base = state.generation;
      const overtaken = () => !!state.saving || state.generation !== base;
      try { found = await idbReadAll(); } catch (e) { return; }
      landedExitNotes(lineageOf(found.record));
      if (overtaken()) continue;
      record = found.record;
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
        adoptedExitNote(pick.key);
        if (overtaken()) continue;  // (stored: loaded once this tab's save has decided)
        record = closed;
        if (hasOwnChanges()) { markConflict(); return; }
      }
      break;
    }
    if (!record) return;
    const res = loadRecord(record, false);
    if (res.error) return;
    if (state.storeUnread) { state.storeUnread = null; hideBanner('read'); }  // (read now: see storeAnswered)
    state.generation = generationOf(record);
    state.lineage = lineageOf(record);
    state.dirty = false;  // (a re-read of an older index, replaced by the other tab's save)
    state.ownChanges = false;
    gaveWayWithExits(found.exits);
    refreshUi();
    rerunSearch();
    resetPack();  // (made from the index this tab had)
    const files = `${res.totalDocs} file${res.totalDocs === 1 ? '' : 's'} indexed`;
    setStatus(late ? `Loaded the stored index (the browser's storage answered late): ${files}.`
                   : `Updated from another tab: ${files}.`);
  }

  // This tab loaded another tab's save while it held closed tabs' saves it took at its boot
  // and had not stored yet: those still in the store (`exits`: what the read found) are not
  // in what it loaded (a save that holds one drops it in the same write), so the changes of
  // the one it showed were not kept, and are said so here, as a boot says it; its next save
  // would have dropped it unsaid. They are dropped now (the others were said at its boot).
  function gaveWayWithExits(exits) {
    const left = exits.filter((e) => state.exitKeys.includes(e.key));
    const taken = left.filter((e) => e.key === state.exitTaken && e.record);
    if (taken.length) {
      const banner = $('banner');
      const before = !banner.hidden && banner.dataset.kind === 'exit' ? [$('banner-text').textContent] : [];
      showBanner([...before, lostExitsMessage(taken.map((e) => e.record))].join('\n'), 'exit');
    }
    if (left.length && !state.storageRefused) idbDeleteKeys(left.map((e) => e.key)).catch(() => {});
    state.exitKeys = [];
    state.exitTaken = null;
  }

  if (channel) {
    channel.onmessage = (ev) => {
      if (ev.data && (ev.data.type === 'saved' || ev.data.type === 'exit')) syncWithStored(ev.data);
    };
  }

  // This open tab stored a closed tab's exit save as the index: that tab's note is settled
  // here, and a drop it cut short is told here (its user may well be looking at this tab).
  function adoptedExitNote(exitKey) {
    settleExitNotes(readExitNotes().filter((n) => n.exitKey === exitKey));
  }

  // This open tab read a stored record (`lineage`: its lineageOf): the notes of closed tabs
  // whose save had been committed when they went (no exit save: see saveOnExit) and is that
  // record or one it was made on top of are settled here, as adoptedExitNote's are. (The next
  // tab to load would find it in the record's lineage, unless more than LINEAGE_MAX saves
  // came after it.)
  function landedExitNotes(lineage) {
    settleExitNotes(readExitNotes().filter((n) => !n.exitKey && n.generation && lineage.includes(n.generation)));
  }

  function settleExitNotes(notes) {
    removeExitNotes(notes);
    const said = notes.flatMap((n) => cutShortMessage(n, 'a tab of this page closed'));
    if (said.length) showBanner(said.join('\n'), 'exit');
  }

  // The store answered after the boot had given up on it (STORE_OPEN_WAIT_MS) and started
  // empty: when nothing is stored, this tab saves from now on; otherwise it goes on saving
  // nothing (its index was not made on top of the stored one) and says to reload.
  async function storeAnswered() {
    let found;
    try { found = await idbReadAll(); } catch (e) { return; }
    if (!found.record && !found.exits.length) {
      state.storeUnread = null;
      hideBanner('read');
      if (state.dirty) markChanged(state.ownChanges);
      return;
    }
    if (!hasOwnChanges()) await syncWithStored(null, true);  // (loads it, and saves from then on)
    if (!state.storeUnread) return;
    state.storeUnread = 'the stored index could be read only after this tab had started without it, so ' +
      'this tab saves nothing (that would overwrite it); reload the page to load it';
    showBanner('The browser\'s storage answered late: the stored index was not loaded in this tab, ' +
      'which saves nothing so as not to overwrite it. Reload the page to load it.', 'read');
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

  // Queue a job so that drops, picks and the sample never interleave. The job gets a ticket:
  // {seq, clears, changes}, taken now: a clear of the index from now on leaves its files out,
  // and a ragIndex or ragRemove from now on the file it names (a later call wins over a drop,
  // even one still waiting or being read: see changedSince).
  function enqueue(job) {
    if (!state.ready && !state.bootError) setStatus('The engine is still loading: what you gave it is indexed when it is ready.');
    const ticket = { seq: ++state.jobSeq, clears: state.clears, changes: state.apiSeq };
    state.queued += 1;
    if (state.busy) {
      setStatus('Another drop is under way: this one is queued, and indexed after it.');
      showQueued();
    }
    // A banner about an earlier drop stays until it is closed, or until a drop made after it
    // appeared starts (its user has seen it then); the quota, storage and memory banners have
    // kinds of their own and stay while they apply.
    const run = async () => {
      state.queued -= 1;
      state.busy = true;
      if (ticket.seq > state.bannerSeq) hideBanner('index');
      try {
        return await job(ticket);
      } finally {
        state.drop = null;
        await saveAfterRun();
        state.busy = false;
        if (!state.queued) state.apiChanges.clear();  // (no drop left that was made before them)
      }
    };
    state.jobs = state.jobs.then(run, run).catch(jobFailed);
    return state.jobs;
  }

  // What a drop, pick or sample indexed is stored as soon as it ends, and the run counts as
  // done (window.ragweb.idle) only then. Left to the debounce, a run that another one
  // followed at once (the sample, then a drop) had its save put off by each change of the
  // next, and a reload soon after rested on the save on the way out alone, which Chromium
  // may drop with the leaving page (1 reload in 8 kept nothing: an empty store, and a note
  // saying 9 files were indexed). A save that fails says so itself (flush).
  // A store that does not answer (a write another tab holds, a stalled disk) does not keep
  // the next drop waiting: past SAVE_AFTER_RUN_WAIT_MS the run ends and the save goes on.
  const SAVE_AFTER_RUN_WAIT_MS = 5000;
  async function saveAfterRun() {
    if (!(state.ready && state.dirty)) return;
    let timer = null;
    try {
      await Promise.race([flush(), new Promise((r) => { timer = setTimeout(r, SAVE_AFTER_RUN_WAIT_MS); })]);
    } catch (e) {
      console.error("ragweb: the save at a run's end failed", e);  // (flush reports its own failures)
    } finally {
      clearTimeout(timer);
    }
  }

  // A drop, pick or sample that failed part way: the banner says why, and the progress and
  // status lines no longer say it is under way ("Reading dropped files…" stayed for ever).
  function jobFailed(e) {
    $('progress').classList.remove('busy');
    $('progress-bar').value = 0;  // (not indeterminate any more)
    $('progress-text').textContent = 'Indexing failed.';
    setStatus('Indexing failed: see the message below.');
    showDropBanner([`Indexing failed: ${e && e.message ? e.message : e}`]);
    if (state.ready) { refreshUi(); rerunSearch(); }  // (what it indexed before it failed)
  }

  // A ragIndex or ragRemove while drops are queued or under way: those drops leave that file
  // out, even when they reach it later (a later call wins over a drop).
  function noteApiChange(path, how) {
    if (state.busy || state.queued) state.apiChanges.set(path, { seq: ++state.apiSeq, how });
  }

  // How a ragIndex or ragRemove changed `path` since the drop of `ticket` was made
  // ('replaced by ragIndex'), or null.
  function changedSince(path, ticket) {
    const change = state.apiChanges.get(path);
    return change && change.seq > ticket.changes ? change.how : null;
  }

  // ' (2 more drops queued)', or ''.
  const queuedNote = () => (state.queued ? ` (${plural(state.queued, 'more drop', 'more drops')} queued)` : '');
  function showQueued() {
    const text = $('progress-text');
    text.textContent = text.textContent.replace(/ \(\d[\d,]* more drops? queued\)$/, '') + queuedNote();
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

  // items: [{path, file}] (File objects), [{path, entry}] (a dropped folder's FileSystemFileEntry,
  // read when its turn comes) or [{path, text}] (already fetched text). `ticket`: enqueue's.
  // With `sameName`, a top folder of the items that was indexed already is reported (tally.sameName).
  // The progress counts files: their sizes are not looked up ahead (for a picked folder each
  // File.size is a synchronous look-up: 20,000 of them held the page 26 s at 4x slowdown).
  async function indexItems(items, ticket, { sameName = false } = {}) {
    if (!state.ready) { setStatus(NOT_READY); return null; }
    const bar = $('progress-bar');
    const text = $('progress-text');
    const tally = { files: 0, chunks: 0, bytes: 0, done: 0, partial: 0, partialBytes: 0, skipped: 0, leftOut: 0,
                    errors: [], skippedList: [], leftOutList: [], tooLarge: [], superseded: [], full: null, stopped: null,
                    left: 0, indexed: new Set(), unchanged: new Set(), removed: [], unread: [], caseOnly: [] };
    const pruned = items.pruned || [];  // (folders the walk did not enter: excluded or ignored)
    ({ items, repeated: tally.repeated } = lastOfEachPath(items));
    const had = indexedFiles();  // (one look at the index's files for all three)
    // the files indexed before the drop: one that the drop holds and now skips is removed (indexLoop)
    tally.had = new Set(had);
    const earlier = sameName ? indexedUnder(items, had) : null;
    const earlierLoose = sameName ? indexedLoose(items, had) : [];
    const dropped = items;
    let passed;
    ({ items, passed } = passedOver(items));
    tally.total = items.length;  // (the files counted: not hidden ones no include takes)
    $('progress').classList.add('busy');
    state.indexing = true;  // the file list and stats refresh once at the end, not per file
    state.lastSave = performance.now();  // (a drop's first save while it runs: SAVE_GAP_MS in)
    state.drop = { reading: false, left: items.length, total: items.length };
    // (said on the status line, a live region, so that a screen-reader user hears it started;
    // the progress text below is not live)
    if (items.length) setStatus(`Indexing ${plural(items.length, 'file', 'files')}…`);
    bar.max = Math.max(items.length, 1);
    bar.value = 0;
    const show = (done) => {
      const bytes = tally.bytes + tally.partialBytes;  // (partial: the part of a big file done)
      bar.value = done && !tally.left ? bar.max : Math.min(tally.done + tally.partial, bar.max);
      const head = !done ? 'Indexing' : tally.cleared ? 'Stopped at a clear of the index: indexed'
        : tally.stopped ? 'Stopped, the storage being full: indexed' : 'Indexed';
      const failed = tally.errors.length + (tally.stopped || tally.full ? tally.left : 0);
      // (a file unchanged is not indexed again: counted apart, as `rag index` counts it skipped)
      const fresh = tally.files - tally.unchanged.size;
      text.textContent = `${head} ${num(fresh)} of ${num(items.length)} files, ${formatBytes(bytes)}` +
        (tally.unchanged.size ? `, ${num(tally.unchanged.size)} unchanged` : '') +
        (tally.leftOut ? `, ${num(tally.leftOut)} left out by the globs or ignore files` : '') +
        (tally.skipped ? `, ${num(tally.skipped)} skipped` : '') +
        (tally.removed.length ? `, ${num(tally.removed.length)} removed` : '') +
        (failed ? `, ${num(failed)} failed` : '') + (done ? '.' : `…${queuedNote()}`);
    };
    show(false);
    try {
      if (state.clears === ticket.clears) {
        await removePruned(pruned, tally, ticket);
        for (const { path, skip } of passed) removeStale(path, skip, tally, ticket);  // (as rag index: not counted)
      }
      await indexLoop(items, tally, show, ticket);
    } finally {
      state.indexing = false;
      $('progress').classList.remove('busy');
    }
    show(true);
    if (earlier) tally.sameName = sameNameReport(earlier, tally, ticket, dropped);
    tally.replacedLoose = earlierLoose.filter((p) => tally.indexed.has(p) && !tally.unchanged.has(p) && !changedSince(p, ticket));
    tally.unchangedLoose = earlierLoose.filter((p) => tally.unchanged.has(p) && !changedSince(p, ticket));
    refreshUi();
    rerunSearch();
    return tally;
  }

  async function indexLoop(items, tally, show, ticket) {
    let lastYield = performance.now();
    const stop = (i, why) => { tally[why] = tally[why] || true; tally.left = items.length - i; };
    // the folders dropped: their names do not weigh in ranking, as `rag index FOLDER` stores
    // its paths without the folder's name (a loose file's path has no '/')
    const roots = [...new Set(items.filter((it) => it.path.includes('/')).map((it) => it.path.split('/')[0]))];
    // (new names change the index: saved even when every file of the drop is unchanged)
    if (roots.length && JSON.parse(state.facade.roots_add(JSON.stringify(roots))).added) markChanged();
    if (state.clears !== ticket.clears) stop(0, 'cleared');  // (while its folders were read)
    for (let i = 0; i < items.length && !tally.cleared; i++) {
      const item = items[i];
      state.drop.left = items.length - i;
      // ragClear or Clear all since the drop was made: the rest is not indexed
      if (state.clears !== ticket.clears) { stop(i, 'cleared'); break; }
      // the storage or the index is full: the rest of the drop is not read (said once)
      if (state.quotaError) { tally.stopped = state.quotaError; stop(i, 'stopped'); break; }
      if (tally.full) { stop(i - 1, 'full'); break; }
      let size = 0;
      let read = false;  // (the bytes of a file skipped for its size or name are not read)
      let out;
      try {
        const file = item.file || (item.entry ? await entryFile(item.entry) : null);
        if (state.clears !== ticket.clears) { stop(i, 'cleared'); break; }  // (cleared while it was found)
        size = file ? file.size : (item.size || 0);
        const check = JSON.parse(state.facade.check_path(item.path, size));
        const path = check.path || item.path;
        // a ragIndex or ragRemove of this file since the drop was made wins (one while it was
        // read too; one while a big file is indexed in steps, the engine stops it: indexSteps)
        const later = () => changedSince(path, ticket);
        if (check.skip) {
          // (not included, excluded, ignored: what `rag index` never counts as skipped)
          out = JSON.stringify({ skipped: check.skip, filename: path, leftOut: SELECTION_SKIPS.includes(check.skip) });
          if (check.caseOnly) tally.caseOnly.push({ path, glob: check.caseOnly });
        } else if (later()) {
          out = supersededJson(path, later());
        } else if (file) {
          const bytes = new Uint8Array(await file.arrayBuffer());
          read = true;
          if (state.clears !== ticket.clears) { stop(i, 'cleared'); break; }  // (cleared while it was read)
          if (later()) {
            out = supersededJson(path, later());
          } else {
            out = state.facade.index_bytes(item.path, bytes, file.lastModified ? file.lastModified / 1000 : undefined, true);
            out = await indexSteps(out, size, tally, show, ticket.clears);
            if (out === null) { stop(i, 'cleared'); break; }
          }
        } else {
          read = true;
          out = state.facade.index_text(item.path, item.text);
        }
      } catch (e) {
        out = errorJson(pyMessage(e));
      }
      const res = JSON.parse(out);
      if (res.success) {
        tally.files += 1;
        tally.indexed.add(res.filename);
        if (res.unchanged) {  // (its text is the one indexed: a folder dropped again)
          tally.unchanged.add(res.filename);
          if (res.touched) markChanged();  // (only its time is new)
        } else {
          tally.chunks += res.chunks;  // (the chunks written, as `rag index` counts them)
          markChanged();
          dropPackQuoting(res.filename);
        }
      } else if (res.skipped || res.superseded) {
        if (res.leftOut) {
          tally.leftOut += 1;
          tally.leftOutList.push({ path: res.filename, why: res.skipped });
        } else {
          tally.skipped += 1;
          tally.skippedList.push(`${res.filename}: ${res.skipped || res.superseded}`);
        }
        if (res.superseded) tally.superseded.push(`${shownPath(res.filename)} (${res.superseded})`);
        const big = /^too large \((\d+) bytes > max_file_bytes (\d+)\)$/.exec(res.skipped || '');
        if (big) tally.tooLarge.push({ path: res.filename, size: Number(big[1]), limit: Number(big[2]) });
        // (a .gz file: its uncompressed size is not known, only that it is over the limit)
        const bigGz = /^too large \(over (\d+) bytes uncompressed > max_file_bytes\)$/.exec(res.skipped || '');
        if (bigGz) tally.tooLarge.push({ path: res.filename, size: null, limit: Number(bigGz[1]) });
        if (res.warn) tally.unread.push(`${shownPath(res.filename)}: ${res.skipped}`);  // (rag index warns of it)
        // in the drop, and left out now (too large, binary, ignored...): the text the index
        // holds at its path is not the file's any more, and goes, as with rag index
        if (res.skipped) removeStale(res.filename, res.skipped, tally, ticket);
      } else if (res.code === 'full') {
        tally.full = res.error;  // (this file and the rest: counted when the loop stops)
      } else {
        tally.errors.push(`${shownPath(item.path)}: ${res.error}`);
      }
      if (read) tally.bytes += size;
      tally.done += 1;
      state.drop.left = items.length - i - 1;  // (a reload at the yield below: this one is done)
      if (performance.now() - lastYield > YIELD_EVERY_MS) {
        show(false);
        await new Promise((r) => setTimeout(r));
        lastYield = performance.now();
      }
    }
    if (tally.full && !tally.left) tally.left = 1;  // (the last file found the index full)
    state.drop.left = tally.left;
  }

  // A file of the drop that it leaves out (`why`): when the index held it before the drop
  // (and no ragIndex or ragRemove changed it since), what it holds is the file's old text, so
  // it is removed, as `rag index` removes a file it now skips (tally.removed: "path: why").
  function removeStale(path, why, tally, ticket) {
    if (!tally.had.has(path) || changedSince(path, ticket)) return;
    const res = JSON.parse(state.facade.remove(path));
    if (!res.removed) return;
    tally.had.delete(path);
    tally.removed.push(`${shownPath(path)}: ${why}`);
    markChanged();
    dropPackQuoting(path);
  }

  // The files indexed before a drop that lie in the folders its walk left out (`pruned`:
  // [{path, why, entry}], excluded or ignored now): removed, as `rag index` removes them.
  // Only those the folder holds now (its names listed, no file read): a file under the same
  // name that a ragIndex or another folder of that name put there is not this drop's.
  async function removePruned(pruned, tally, ticket) {
    if (!pruned.length) return;
    const byDir = new Map(pruned.map((p) => [p.path, { ...p, under: [] }]));
    const tops = new Set(pruned.map((p) => p.path.split('/')[0]));
    for (const path of tally.had) {
      const slash = path.indexOf('/');
      if (slash < 0 || !tops.has(path.slice(0, slash))) continue;  // (a loose file, another folder's)
      const parts = path.split('/');
      for (let i = 1; i < parts.length; i++) {
        const dir = byDir.get(parts.slice(0, i).join('/'));
        if (dir) { dir.under.push(path); break; }
      }
    }
    for (const dir of byDir.values()) {
      if (!dir.under.length || !(dir.entry || dir.names)) continue;
      let present = dir.names;  // (a picked folder's: the browser listed them)
      try {
        present = present || await namesUnder(dir.entry, dir.path, new Set());
      } catch (e) {
        continue;  // (a folder that cannot be listed: what the index holds of it stays)
      }
      if (state.clears !== ticket.clears) return;
      for (const path of dir.under) {
        if (present.has(path)) removeStale(path, `${dir.why} (its folder ${shownPath(dir.path)}/)`, tally, ticket);
      }
    }
  }

  // The paths of the files in a dropped folder entry and its subfolders, by their names only.
  async function namesUnder(entry, dirPath, out) {
    for (const child of await readAll(entry)) {
      const path = `${dirPath}/${child.name}`;
      if (child.isDirectory) await namesUnder(child, path, out);
      else out.add(path);
    }
    return out;
  }

  // What indexLoop makes of a dropped file that a later ragIndex or ragRemove changed (as the
  // engine says of one it was indexing in steps)
  const supersededJson = (path, how) => JSON.stringify({ superseded: `${how} after it was dropped`, filename: path });

  // A big file that `index_bytes` only started: run its steps, yielding between them so the
  // page stays responsive and the bar moves within the file. Returns the file's result, or
  // null when a clear came meanwhile (the file is abandoned; nothing of it was stored).
  async function indexSteps(out, size, tally, show, clears) {
    let res = JSON.parse(out);
    while (res.pending) {
      tally.partial = res.total ? res.done / res.total : 0;
      tally.partialBytes = Math.round(size * tally.partial);
      show(false);
      await new Promise((r) => setTimeout(r));
      if (state.clears !== clears) {
        state.facade.index_cancel();
        tally.partial = 0;
        tally.partialBytes = 0;
        return null;
      }
      out = state.facade.index_step(YIELD_EVERY_MS);
      res = JSON.parse(out);
    }
    tally.partial = 0;
    tally.partialBytes = 0;
    return out;
  }

  // The files of a drop that `rag index` passes over without counting them among those the
  // globs or ignore files leave out (facade.check_path's "quiet"): a dropped folder's own
  // rag.yaml (read as its config) or one misnamed (Rag.yaml, rag.yml: not read, nor indexed),
  // what its .git/ or .rag/ holds (a picked folder lists them), a hidden file no include takes
  // (.gitignore). Only names that may be such are asked about.
  // {items: the others, passed: [{path, skip}]}
  function passedOver(items) {
    const passed = [];
    const rest = items.filter((it) => {
      const name = it.path.split('/').pop();
      if (!name.startsWith('.') && !/^rag\.ya?ml(\.txt)?$/i.test(name)
        && !/(^|\/)\.(git|rag)\//.test(it.path)) return true;
      const check = JSON.parse(state.facade.check_path(it.path));
      if (!check.quiet) return true;
      passed.push({ path: check.path, skip: check.skip });
      return false;
    });
    return { items: rest, passed };
  }

  // The files among `files` (indexed already) under the top folders of `items` (a folder dropped again, or
  // another folder of the same name): {folder: [paths]}, only folders that have some.
  function indexedUnder(items, files) {
    const tops = new Set(items.filter((it) => it.path.includes('/')).map((it) => it.path.split('/')[0]));
    if (!tops.size) return null;
    const out = {};
    for (const path of files) {
      const top = path.split('/')[0];
      if (path.includes('/') && tops.has(top)) (out[top] ||= []).push(path);
    }
    return Object.keys(out).length ? out : null;
  }

  // The loose files (no folder) of `items` whose paths are among `files`, indexed already: [paths].
  function indexedLoose(items, files) {
    const loose = items.filter((it) => !it.path.includes('/'));
    if (!loose.length) return [];
    const had = new Set(files);
    return loose.map((it) => it.path).filter((p) => had.has(p));
  }

  // The paths of the indexed files ([] when the engine cannot say).
  function indexedFiles() {
    const st = JSON.parse(state.facade.stats());
    return st.error ? [] : st.files;
  }

  // Items of one drop that share a path (two loose files of one name, say from a file
  // manager's search view): the last of each path is indexed, as it would replace the ones
  // before it. {items, repeated: [paths left out]}
  function lastOfEachPath(items) {
    const last = new Map(items.map((it, i) => [it.path, i]));
    if (last.size === items.length) return { items, repeated: [] };
    return { items: items.filter((it, i) => last.get(it.path) === i),
             repeated: [...new Set(items.filter((it, i) => last.get(it.path) !== i).map((it) => it.path))] };
  }

  // For each top folder that had files before the drop: how many of them the drop replaced,
  // and how many it left as they were (files of the earlier drop that this one does not
  // have: from another folder of the same name, say; one it has and skips now is removed, one
  // it could not read is named as such). A file that a ragIndex or ragRemove
  // changed since the drop was made is not an earlier drop's any more. [{folder, replaced, kept}]
  function sameNameReport(earlier, tally, ticket, items) {
    const now = new Set(JSON.parse(state.facade.stats()).files || []);
    const dropped = new Set(items.map((it) => it.path));
    return Object.entries(earlier).map(([folder, all]) => {
      const paths = all.filter((p) => !changedSince(p, ticket));
      return { folder,
               replaced: paths.filter((p) => tally.indexed.has(p) && !tally.unchanged.has(p)).length,
               unchanged: paths.filter((p) => tally.unchanged.has(p)).length,
               kept: paths.filter((p) => !tally.indexed.has(p) && !dropped.has(p) && now.has(p)).length };
    });
  }

  const SELECTION_SKIPS = ['not included', 'excluded', 'ignored'];  // (facade._skip_reason's by the globs and ignore files)
  const SAMPLE_FOLDER = 'sample';  // the sample project is indexed under it
  const IGNORE_FILES = ['.gitignore', '.ragignore'];   // read in this order; later rules win (as the CLI)
  const CONFIG_FILES = ['rag.yaml', '.rag/config.yaml'];  // a dropped folder's own config: the first found (as the CLI)

  // Apply a dropped folder's config file (a File, or a dropped folder's entry) to what is under
  // it: null when it is valid (a note of it goes to `notes`), else why the folder is left out:
  // {error, leftOut} (for the banner and the status line). One that cannot be read leaves it
  // out too, as `rag index` stops at it: the files it keeps out would be indexed.
  async function applyConfig(folder, name, source, notes) {
    let bytes;
    try {
      bytes = await readBytes(source);  // (read as the CLI reads it: UTF-16 too)
    } catch (e) {
      return { error: `cannot read ${folder}/${name}: ${errorText(e)}`, leftOut: configLeftOut(folder, name, 'could not be read') };
    }
    const res = JSON.parse(state.facade.config_add(folder, bytes, name));
    if (res.error) return { error: res.error, leftOut: configLeftOut(folder, name) };
    const unused = res.unused.length ? ` (not used in the page: ${res.unused.join(', ')})` : '';
    notes.push(`${folder}/${name} applied${unused}`);
    return null;
  }

  // A dropped folder without a config file but with one surely meant as it (Rag.yaml, rag.yml):
  // say that it is not read, as the CLI does.
  function noteMisnamedConfig(folder, names, notes) {
    const res = JSON.parse(state.facade.config_misnamed(folder, JSON.stringify(names)));
    if (res.note) notes.push(res.note);
  }

  // (the reason itself is in the banner, an alert: the status line would read it out twice)
  const configLeftOuts = new Map();  // configLeftOut's texts -> the config file's name (nothingIndexed's advice)
  const configLeftOut = (folder, name, why = 'is invalid') => {
    const text = `${folder}/ (its ${name} ${why}; see the message below)`;
    configLeftOuts.set(text, name);
    return text;
  };

  const entryFile = (entry) => new Promise((resolve, reject) => entry.file(resolve, reject));
  // The bytes of a File, or of a dropped folder's FileSystemFileEntry
  const readBytes = async (source) => new Uint8Array(await (source.isFile ? await entryFile(source) : source).arrayBuffer());
  const errorText = (e) => String(e && e.message ? e.message : e);
  // What could not be read, as `rag index` warns of it ('docs/old/: unreadable directory: ...')
  const unreadable = (path, what, e) => `${shownPath(path)}: ${what}: ${errorText(e)}`;
  // A folder's entries; a read that fails part way keeps the entries read before it
  // (`all.error` holds the failure).
  const readAll = async (dirEntry) => {
    const reader = dirEntry.createReader();
    const all = [];
    for (;;) {  // readEntries hands out at most ~100 entries per call
      let batch;
      try {
        batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      } catch (e) {
        if (!all.length) throw e;
        all.error = e;
        return all;
      }
      if (!batch.length) return all;
      all.push(...batch);
    }
  };

  // How deep below a dropped folder its folders are walked: `rag index`'s limit
  // (ragweb.files.MAX_DEPTH); a deeper one is left out and named, as the CLI warns of it.
  let maxDepth = null;
  function maxFolderDepth() {
    if (maxDepth === null) {
      maxDepth = MAX_DEPTH_DEFAULT;
      try {
        const files = state.py.pyimport('ragweb.files');
        try { if (Number.isInteger(files.MAX_DEPTH)) maxDepth = files.MAX_DEPTH; } finally { files.destroy(); }
      } catch (e) { /* the default */ }
    }
    return maxDepth;
  }

  // While a drop's folders are read: how many files were found so far (and the drops queued).
  function showReading(found) {
    const bar = $('progress-bar');
    bar.removeAttribute('value');  // (indeterminate: how many there are is not known yet)
    $('progress').classList.add('busy');
    $('progress-text').textContent = `Reading dropped files… ${num(found)} found${queuedNote()}`;
  }

  // Apply a dropped ignore file (a File or an entry), read from its bytes as the CLI reads it
  // (a UTF-16 .ragignore too); a file that gives no rules (a UTF-16 .gitignore, as git) is
  // named in `report.notes`, one that cannot be read in `report.unreadable` (the drop goes on
  // without its rules, as `rag index` does: then it returns false).
  async function addIgnore(dirPath, name, source, report) {
    let bytes;
    try {
      bytes = await readBytes(source);
    } catch (e) {
      report.unreadable.push(unreadable(dirPath ? `${dirPath}/${name}` : name, 'unreadable ignore file', e));
      return false;
    }
    const result = JSON.parse(state.facade.ignore_add(dirPath, bytes, name));
    if (result.note) report.notes.push(result.note);
    return true;
  }

  // A dropped repository's .git/info/exclude (its entry, or null): read, as `rag index` of
  // the folder reads it, at the top of the dropped folder only (the CLI applies a nested
  // repository's only when that repository is the folder indexed).
  async function gitExcludeEntry(children) {
    try {
      const git = children.find((c) => c.isDirectory && c.name === '.git');
      const info = git && (await readAll(git)).find((c) => c.isDirectory && c.name === 'info');
      return (info && (await readAll(info)).find((c) => c.isFile && c.name === 'exclude')) || null;
    } catch (e) {
      return null;  // (as git and `rag index`: an exclude file that cannot be read is passed over)
    }
  }

  // Apply a dropped repository's .git/info/exclude (a File or an entry, or null) to its
  // folder, as git's rules of lowest precedence there: added before the folder's .gitignore
  // and .ragignore. One that cannot be read, or gives no rules (UTF-16), is passed over
  // without a word, as by git and `rag index`.
  async function addGitExclude(dirPath, source) {
    if (!source) return;
    let bytes;
    try {
      bytes = await readBytes(source);
    } catch (e) {
      return;
    }
    state.facade.ignore_add(dirPath, bytes, '.git/info/exclude');
  }

  // Walk dropped items: files and whole folders (recursive), skipping what the CLI would
  // not enter (excluded or ignored folders, folders more than MAX_DEPTH deep). Entries must be
  // taken synchronously inside the drop handler, so callers pass them in; their files are
  // read when they are indexed. A clear of the index since the drop was made (`ticket`)
  // stops the walk (out.cleared). A folder that cannot be read is named (out.unreadable) and
  // the walk goes on, as `rag index` does.
  async function walkEntries(entries, ticket) {
    const out = [];
    out.leftOut = [];  // folders the excludes or ignore files left out (not hidden ones inside a drop)
    out.pruned = [];  // ... all of them, hidden ones too: [{path, why}] (what the index holds under them goes)
    out.configErrors = [];  // dropped folders left out because their rag.yaml is invalid or unreadable
    out.notes = [];  // the config files applied
    out.tooDeep = [];  // folders more than maxFolderDepth() below a dropped folder
    out.unreadable = [];  // folders and ignore files that could not be read
    const deepest = maxFolderDepth();
    let shownAt = performance.now();
    showReading(0);
    const found = () => {
      state.drop.left = out.length;
      if (performance.now() - shownAt >= READ_SHOW_MS) { showReading(out.length); shownAt = performance.now(); }
    };
    const visit = async (entry, prefix, depth) => {
      if (!entry || out.cleared) return;
      if (state.clears !== ticket.clears) { out.cleared = true; return; }
      if (entry.isFile) {
        out.push({ path: prefix + entry.name, entry });
        found();
      } else if (entry.isDirectory) {
        const dirPath = prefix + entry.name;
        if (depth > deepest) { out.tooDeep.push(`${dirPath}/`); return; }
        const pruned = () => {  // (excluded or ignored: not entered)
          const dirCheck = JSON.parse(state.facade.check_dir(dirPath));
          if (!dirCheck.skip) return false;
          // (a hidden one met inside a drop, .git/, goes without a word; the one dropped is named)
          if (!prefix || !entry.name.startsWith('.')) out.leftOut.push(`${dirPath}/ (${dirCheck.skip})`);
          out.pruned.push({ path: dirCheck.path || dirPath, why: dirCheck.skip, entry });
          return true;
        };
        if (prefix && pruned()) return;
        const children = await readFolder(entry, dirPath, out);
        if (state.clears !== ticket.clears) { out.cleared = true; return; }
        if (!children) return;
        if (!prefix) {  // a dropped folder is a root: its own config file selects its files
          const config = await findConfig(children, dirPath, out);
          if (!config) noteMisnamedConfig(dirPath, children.filter((c) => c.isFile).map((c) => c.name), out.notes);
          const refused = config && await applyConfig(dirPath, config.name, config.entry, out.notes);
          if (refused) { out.configErrors.push(refused.error); out.leftOut.push(refused.leftOut); return; }
          // (checked once its config is read: a folder with one is selected by its globs, which
          // do not see its own name, as `rag index FOLDER`; one without, by the page's)
          if (pruned()) return;
          await addGitExclude(dirPath, await gitExcludeEntry(children));  // (before its .gitignore, which wins)
        }
        const unread = new Set();  // (ignore files named as unreadable: not read again as files)
        for (const name of IGNORE_FILES) {
          const rules = children.find((c) => c.isFile && c.name === name);
          if (rules && !await addIgnore(dirPath, name, rules, out)) unread.add(rules);
        }
        for (const child of children) if (!unread.has(child)) await visit(child, `${dirPath}/`, depth + 1);
      }
    };
    for (const entry of entries) await visit(entry, '', 0);
    state.drop.left = out.length;
    return out;
  }

  // A dropped folder's entries, sorted by name; null when it cannot be read (named in
  // `out.unreadable`, as is one read only in part: its entries read before the failure are kept).
  async function readFolder(entry, dirPath, out) {
    try {
      const all = await readAll(entry);
      if (all.error) out.unreadable.push(unreadable(`${dirPath}/`, 'directory read only in part', all.error));
      return all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (e) {
      out.unreadable.push(unreadable(`${dirPath}/`, 'unreadable directory', e));
      return null;
    }
  }

  // The first of CONFIG_FILES among a folder's entries: {name, entry}, or null (also when its
  // .rag/ cannot be read: named, and the defaults apply, as with `rag index`).
  async function findConfig(children, dirPath, out) {
    const top = children.find((c) => c.isFile && c.name === CONFIG_FILES[0]);
    if (top) return { name: CONFIG_FILES[0], entry: top };
    const dot = children.find((c) => c.isDirectory && c.name === '.rag');
    const inner = dot && ((await readFolder(dot, `${dirPath}/.rag`, out)) || []).find((c) => c.isFile && c.name === 'config.yaml');
    return inner ? { name: CONFIG_FILES[1], entry: inner } : null;
  }

  // Files from a picker: a folder pick gives webkitRelativePath; its config file and ignore
  // files apply (a folder whose config file is invalid or unreadable is left out; an ignore
  // file that cannot be read is named, and the rest goes on).
  async function pickedItems(files) {
    const report = { leftOut: [], configErrors: [], notes: [], tooDeep: [], unreadable: [] };
    // (a folder more than maxFolderDepth() below the picked one is left out, as in a drop)
    const deepest = maxFolderDepth();
    const tooDeep = new Set();
    const all = [];
    for (const f of files) {
      const path = f.webkitRelativePath || f.name;
      const parts = path.split('/');
      if (parts.length - 2 > deepest) tooDeep.add(`${parts.slice(0, deepest + 2).join('/')}/`);
      else all.push({ path, file: f });
    }
    report.tooDeep.push(...tooDeep);
    const failed = new Set();
    const roots = new Set(all.filter((it) => it.path.includes('/')).map((it) => it.path.split('/')[0]));
    for (const root of roots) {
      const config = CONFIG_FILES.map((n) => all.find((it) => it.path === `${root}/${n}`)).find(Boolean);
      if (!config) {
        noteMisnamedConfig(root, all.filter((it) => it.path.startsWith(`${root}/`) && it.path.split('/').length === 2)
          .map((it) => it.path.split('/')[1]), report.notes);
      }
      const refused = config && await applyConfig(root, config.path.slice(root.length + 1), config.file, report.notes);
      if (refused) {
        failed.add(root);
        report.configErrors.push(refused.error);
        report.leftOut.push(refused.leftOut);
      } else {  // (before its .gitignore files, below, which win over it)
        const exclude = all.find((it) => it.path === `${root}/.git/info/exclude`);
        await addGitExclude(root, exclude && exclude.file);
      }
    }
    // (a picked folder's files in a drop's order: each folder's entries by name, a folder's
    // files at its place, where the browser lists them in its own order; loose files as given)
    const kept = all.filter((it) => !it.path.includes('/'));
    kept.push(...all.filter((it) => it.path.includes('/') && !failed.has(it.path.split('/')[0]))
      .map((it) => ({ it, parts: it.path.split('/') }))  // (split once: a pick may list 100,000 files)
      .sort((a, b) => partsOrder(a.parts, b.parts)).map(({ it }) => it));
    // The browser lists every file of a picked folder, those of its node_modules/ too: a folder
    // the excludes or ignore files leave out is left out whole, as a drop's walk leaves it
    // (`check_dir`, top-down: each folder's ignore files are read before the folders below it
    // are checked), not its files counted one by one.
    report.pruned = [];
    const byFolder = new Map();  // folder -> its files' items
    for (const it of kept) {
      const parts = it.path.split('/');
      for (let i = 1; i < parts.length; i++) {
        const folder = parts.slice(0, i).join('/');
        if (!byFolder.has(folder)) byFolder.set(folder, []);
        if (i === parts.length - 1) byFolder.get(folder).push(it);
      }
    }
    const folders = [...byFolder.keys()].sort((a, b) => a.split('/').length - b.split('/').length);
    for (const name of IGNORE_FILES) {  // (loose files' own, as before)
      const rules = kept.find((it) => it.path === name);
      if (rules) await addIgnore('', name, rules.file, report);
    }
    const out = new Set();  // folders left out
    const prunedAt = new Map();  // the outermost of them -> its `pruned` record (names: the files under it)
    for (const folder of folders) {
      const parent = folder.includes('/') ? folder.slice(0, folder.lastIndexOf('/')) : null;
      if (parent !== null && out.has(parent)) { out.add(folder); continue; }
      const check = JSON.parse(state.facade.check_dir(folder));
      if (check.skip) {
        out.add(folder);
        prunedAt.set(folder, { path: check.path || folder, why: check.skip, names: new Set() });
        continue;
      }
      const files = byFolder.get(folder);
      for (const name of IGNORE_FILES) {
        const rules = files.find((it) => it.path === `${folder}/${name}`);
        if (rules) await addIgnore(folder, name, rules.file, report);
      }
    }
    const items = kept.filter((it) => {
      const parts = it.path.split('/');
      for (let i = 1; i < parts.length; i++) {
        const top = prunedAt.get(parts.slice(0, i).join('/'));
        if (top) { top.names.add(it.path); return false; }
      }
      return true;
    });
    // (named in a drop's order, not in the order of their depth that read them)
    report.pruned.push(...[...prunedAt.values()].sort((a, b) => byFolderOrder(a.path, b.path)));
    for (const { path, why } of report.pruned) {  // (as a drop names them: the picked folder too)
      if (!path.includes('/') || !path.split('/').pop().startsWith('.')) report.leftOut.push(`${path}/ (${why})`);
    }
    return Object.assign(items, report);
  }

  // The order of two paths in a drop's walk (each folder's entries sorted by name).
  function byFolderOrder(a, b) { return partsOrder(a.split('/'), b.split('/')); }
  function partsOrder(x, y) {
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
    }
    return x.length - y.length;
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
    // (text or a link let go on the zone: no drop of files, not "an empty folder")
    const noFile = !entries.length && !loose.length && !items.some((item) => item.kind === 'file');
    await enqueue(async (ticket) => {
      if (noFile) {
        setStatus('Nothing was indexed: the drop held no file or folder (text or a link is not indexed: ' +
          'drop files or folders here, or choose them with the buttons).');
        return;
      }
      if (!state.ready) { setStatus(notReadyStatus()); return; }
      setStatus('Reading dropped files…');
      state.drop = { reading: true, left: 0 };
      state.facade.ignore_reset();
      const found = await walkEntries(entries, ticket);
      const picked = await pickedItems(loose);
      found.push(...picked);
      found.tooDeep.push(...picked.tooDeep);
      found.unreadable.push(...picked.unreadable);
      found.notes.push(...picked.notes);  // (a loose UTF-16 .gitignore's note)
      reportIndexed(found, await indexItems(found, ticket, { sameName: true }));
    });
  }

  // A dropped file's name as text to show on one line (a control character in it escaped).
  const shownPath = (path) => path.replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g,
    (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
  const num = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : String(n));
  const plural = (n, one, many) => `${num(n)} ${n === 1 ? one : many}`;

  // The status line after a drop or a pick, and a banner with its problems (a folder whose
  // config file is invalid, files that failed, a full index or storage).
  function reportIndexed(found, tally) {
    if (!tally) return;
    if (tally.cleared) { setStatus('The index was cleared while files were being indexed: the rest were not indexed.'); return; }
    const notes = found.notes.length ? [`${found.notes.join('; ')}.`] : [];
    let head;
    if (!tally.files && !tally.errors.length) head = nothingIndexed(found.leftOut, tally, emptyDrop(found, tally));
    else head = indexedHead(tally);
    if (tally.stopped || tally.full) {
      notes.unshift(`${tally.stopped ? "The browser's storage is full" : 'The index is full'}: the drop's ` +
        `${tally.files || tally.errors.length ? 'other ' : ''}${plural(tally.left, 'file was', 'files were')} ` +
        'not indexed (see the message below).');
    }
    notes.push(...dropNotes(found, tally));
    // (what it was is in the banner, an alert: the status line would read it out twice)
    if ((found.unreadable && found.unreadable.length) || tally.unread.length) notes.push('Some of the drop could not be read (see the message below).');
    setStatus([head, ...notes].join(' '));
    showDropBanner(dropProblems(found, tally), tally);
  }

  // The head of the status line after a drop or a pick that indexed files: those it indexed, and
  // apart from them those it did not index again for being unchanged, as `rag index` counts
  // them ("0 added, 0 updated, 3 skipped (3 unchanged); 0 chunks written"). "Nothing new" only
  // when the drop changed nothing and read every file: not when it removed files it now leaves
  // out, nor when files failed, could not be read, or found the index or the storage full.
  function indexedHead(tally) {
    const same = tally.unchanged.size;
    const fresh = tally.files - same;
    const more = tally.removed.length || tally.errors.length || tally.unread.length || tally.stopped || tally.full;
    if (same && !fresh && !more) return `Nothing new: ${plural(same, 'file', 'files')} unchanged, not indexed again.`;
    return `Indexed ${plural(fresh, 'file', 'files')} (${plural(tally.chunks, 'chunk', 'chunks')})` +
      (same ? `; ${num(same)} unchanged, not indexed again.` : '.');
  }

  // Notes on what a drop left out on purpose: files over the size limit (named, as `rag
  // index` names them), folders too deep, files a later ragIndex or ragRemove changed, a top
  // folder that was indexed already.
  function dropNotes(found, tally) {
    const notes = [];
    if (tally.tooLarge.length) {
      const limits = [...new Set(tally.tooLarge.map((t) => t.limit))];
      const shown = tally.tooLarge.slice(0, 5).map((t) => `${t.path} (` +
        `${t.size === null ? `over ${num(t.limit)} bytes uncompressed` : `${num(t.size)} bytes`})`).join(', ');
      const n = tally.tooLarge.length;
      notes.push(`${plural(n, 'file was', 'files were')} larger than index.max_file_bytes ` +
        `(${limits.map((l) => `${num(l)} bytes`).join(' or ')}) and left out: ${shown}${n > 5 ? ' …' : ''}; ` +
        (tally.tooLarge.every((t) => !t.path.includes('/'))  // (a loose file has no folder, so no rag.yaml)
          ? `drop ${n === 1 ? 'it' : 'them'} in a folder whose rag.yaml raises it to index ${n === 1 ? 'it' : 'them'}.`
          : `raise it in the folder's rag.yaml to index ${n === 1 ? 'it' : 'them'}.`));
    }
    const cased = tally.caseOnly || [];
    if (cased.length) {  // (as `rag index` notes them)
      const n = cased.length;
      const globs = [...new Set(cased.map((c) => `'${c.glob}'`))].sort();
      notes.push(`${plural(n, 'file was', 'files were')} left out for the case of ${n === 1 ? 'its' : 'their'} suffix ` +
        `(${cased.slice(0, 3).map((c) => shownPath(c.path)).join(', ')}${n > 3 ? ' …' : ''}): globs are case-sensitive, ` +
        `so add ${globs.join(', ')} to index.includes ` +
        (cased.every((c) => !c.path.includes('/')) ? `in the rag.yaml of a folder you drop ${n === 1 ? 'it' : 'them'} in`
          : "in the folder's rag.yaml") +
        ` to index ${n === 1 ? 'it' : 'them'} (a list there replaces the default one: keep its globs too).`);
    }
    const removed = tally.removed || [];
    if (removed.length) {  // (in the drop and left out now: the index held their old text)
      const n = removed.length;
      notes.push(`Removed ${plural(n, 'file', 'files')} indexed before that this drop leaves out, as rag index does: ` +
        `${removed.slice(0, 5).join('; ')}${n > 5 ? ` (and ${num(n - 5)} more)` : ''}.`);
    }
    const deep = found.tooDeep || [];
    if (deep.length) {
      notes.push(`Left out ${plural(deep.length, 'folder', 'folders')} more than ${maxFolderDepth()} folders deep ` +
        `(${deep.length === 1 ? 'its' : 'their'} files are not indexed, as with rag index): ${deep[0]}${deep.length > 1 ? ' …' : ''}.`);
    }
    // (a drop that indexed nothing names them among the files it skipped: see nothingIndexed)
    if (tally.superseded.length && (tally.files || tally.errors.length)) {
      const n = tally.superseded.length;
      notes.push(`Left out ${plural(n, 'file', 'files')} that a later call changed: ` +
        `${tally.superseded.slice(0, 5).join(', ')}${n > 5 ? ' …' : ''}.`);
    }
    const replaced = tally.replacedLoose || [];
    if (replaced.length) {
      notes.push(`${replaced.length === 1 ? `${shownPath(replaced[0])} replaced the file` : `${plural(replaced.length, 'file', 'files')} replaced the files`} ` +
        `of the same name indexed before${replaced.length > 1 ? `: ${replaced.slice(0, 5).map(shownPath).join(', ')}${replaced.length > 5 ? ' …' : ''}` : ''}.`);
    }
    const same = tally.unchangedLoose || [];
    if (same.length) {  // (the head counts them; a folder's are counted below)
      notes.push(`Already indexed with the same text: ${same.slice(0, 5).map(shownPath).join(', ')}` +
        `${same.length > 5 ? ' …' : ''}.`);
    }
    const repeated = tally.repeated || [];
    if (repeated.length) {
      notes.push(`The drop held more than one file at ${repeated.length === 1 ? 'the path' : 'each of the paths'} ` +
        `${repeated.slice(0, 5).map(shownPath).join(', ')}${repeated.length > 5 ? ' …' : ''}: the last one is indexed.`);
    }
    for (const { folder, replaced, unchanged, kept } of tally.sameName || []) {
      if (!replaced && !kept && !unchanged) continue;
      const parts = [replaced && `${plural(replaced, 'file', 'files')} replaced`,
                     unchanged && `${plural(unchanged, 'file', 'files')} unchanged`].filter(Boolean);
      notes.push(`${folder}/ was indexed already: ${parts.join(', ') || 'no file replaced'}` +
        (kept ? `, ${plural(kept, "of the earlier drop's files", "of the earlier drop's files")} kept (not in this drop: ` +
          `remove ${kept === 1 ? 'it' : 'them'} if ${kept === 1 ? 'it does' : 'they do'} not belong here)` : '') + '.');
    }
    return notes;
  }

  // The problems of a drop, for its banner: a folder's invalid or unreadable config file,
  // folders or ignore files that could not be read, failed files, a full index (the storage
  // being full is the quota banner's: see showDropBanner).
  function dropProblems(found, tally) {
    const problems = [];
    if (found.configErrors && found.configErrors.length) problems.push(`A folder was left out: ${found.configErrors.join('; ')}`);
    if (found.unreadable && found.unreadable.length) {
      const more = found.unreadable.length - 3;
      problems.push(`Some of the drop could not be read: ${found.unreadable.slice(0, 3).join('; ')}` +
        (more > 0 ? ` (and ${plural(more, 'more', 'more')})` : ''));
    }
    if (tally.unread && tally.unread.length) {  // (a damaged .gz, a text in no encoding read: rag index warns)
      const more = tally.unread.length - 3;
      problems.push(`Some files could not be read and were left out: ${tally.unread.slice(0, 3).join('; ')}` +
        (more > 0 ? ` (and ${plural(more, 'more', 'more')})` : ''));
    }
    if (tally.errors.length) {
      const more = tally.errors.length - 3;
      problems.push(`Some files failed: ${tally.errors.slice(0, 3).join('; ')}` +
        (more > 0 ? ` (and ${plural(more, 'more', 'more')})` : ''));
    }
    if (tally.full) problems.push(`${plural(tally.left, 'file was', 'files were')} not indexed: ${tally.full}.`);
    return problems;
  }

  // A drop's problems in the banner, all of them (each on a line of its own). A banner about
  // an earlier drop that is still up (nobody closed it, no drop was made since it appeared)
  // stays above them. When the storage is full the banner is the quota banner, which stays
  // while it applies, and says how much of the drop was not indexed.
  function showDropBanner(problems, tally = null) {
    const banner = $('banner');
    const earlier = !banner.hidden && banner.dataset.kind === 'index' ? [$('banner-text').textContent] : [];
    if (tally && tally.stopped && state.quotaError) {
      state.quotaNotes = [`A drop stopped there: ${plural(tally.left, 'of its files was', 'of its files were')} not indexed.`,
        ...earlier, ...problems];
      showQuotaBanner();
    } else if (problems.length) {
      showBanner([...earlier, ...problems].join('\n'), 'index');
    } else {
      return;
    }
    state.bannerSeq = state.jobSeq;
  }

  // The storage is full: the quota banner, with what it cost the drop it stopped (kept
  // when a later save finds the storage still full; gone with the quota error).
  function showQuotaBanner() {
    showBanner([`${state.quotaError}.`, ...state.quotaNotes].join('\n'), 'quota');
  }

  // A drop or a pick in which no file was found, and nothing else went wrong: an empty folder,
  // or one of hidden files no include takes (.gitignore, .DS_Store), which are not counted.
  const emptyDrop = (found, tally) => tally.total === 0 && !tally.removed.length && !found.tooDeep.length
    && !found.unreadable.length && !(found.configErrors || []).length && !found.leftOut.length;

  // A drop that indexed nothing says what was left out, as `rag index` does (`empty`: no file
  // to index was found at all).
  function nothingIndexed(leftOut, tally, empty = false) {
    const parts = [];
    if (empty) {
      parts.push('no file to index was found (an empty folder, or only hidden files such as .gitignore, ' +
        'which are not indexed)');
    }
    // (a folder excluded or ignored: its contents dropped are indexed; a folder whose config
    // file is invalid or unreadable: that file must be fixed)
    const byConfig = leftOut.filter((f) => configLeftOuts.has(f));
    const excluded = leftOut.filter((f) => !configLeftOuts.has(f));
    if (excluded.length) {
      parts.push(`left out the folder${excluded.length === 1 ? '' : 's'} ${excluded.slice(0, 5).join(', ')}` +
        `${excluded.length > 5 ? ' …' : ''} (drop such a folder's contents to index them)`);
    }
    if (byConfig.length) {
      const names = [...new Set(byConfig.map((f) => configLeftOuts.get(f)))];
      const one = byConfig.length === 1;
      parts.push(`left out the folder${one ? '' : 's'} ${byConfig.slice(0, 5).join(', ')}${byConfig.length > 5 ? ' …' : ''} ` +
        `(fix ${one ? 'its' : 'their'} ${names.length === 1 ? names[0] : 'config files'} and drop ${one ? 'it' : 'them'} again)`);
    }
    parts.push(...leftOutAdvice(tally));
    // (files too large are named in a note of their own)
    const skipped = tally.skippedList.filter((s) => !tally.tooLarge.some((t) => s.startsWith(`${t.path}: too large`)));
    if (skipped.length) {
      parts.push(`skipped ${skipped.slice(0, 5).join(', ')}${skipped.length > 5 ? ' …' : ''}`);
    }
    return `Nothing was indexed${parts.length ? ': ' + parts.join('; ') : ''}.`;
  }

  // Suffixes of files that are not text (documents, images, media, archives, programs): no
  // glob makes them readable. DOCUMENTS: those whose text a converter gives.
  const DOCUMENTS = new Set(['pdf', 'doc', 'docx', 'odt', 'ods', 'odp', 'xls', 'xlsx', 'ppt', 'pptx', 'epub',
    'pages', 'key', 'numbers']);
  const NOT_TEXT = new Set([...DOCUMENTS, 'png', 'jpg', 'jpeg', 'gif', 'webp', 'bmp', 'ico', 'tif', 'tiff',
    'heic', 'psd', 'mp3', 'wav', 'flac', 'ogg', 'm4a', 'mp4', 'mov', 'avi', 'mkv', 'webm', 'zip', '7z', 'rar',
    'tar', 'tgz', 'bz2', 'xz', 'jar', 'exe', 'dll', 'so', 'dylib', 'o', 'class', 'pyc', 'wasm', 'whl', 'db',
    'sqlite', 'sqlite3', 'woff', 'woff2', 'ttf', 'otf', 'iso', 'dmg', 'apk']);
  // A path's suffix, lower case ('' for none): "docs/Report.PDF" -> "pdf".
  const suffixOf = (path) => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    return name.lastIndexOf('.') > 0 ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  };

  // The files of a drop that indexed nothing that the globs or ignore files left out, and
  // what would index them, as `rag index` advises when it indexes nothing for its globs
  // (files that match no index.includes glob, that index.excludes or the ignore files leave
  // out). A file left out only for the case of its suffix has a note of its own (dropNotes).
  function leftOutAdvice(tally) {
    const all = tally.leftOutList || [];
    if (!all.length) return [];
    const parts = [`left out by the globs or ignore files: ${all.slice(0, 5).map((f) => `${shownPath(f.path)} (${f.why})`).join(', ')}` +
      (all.length > 5 ? ` (and ${num(all.length - 5)} more)` : '')];
    const cased = new Set((tally.caseOnly || []).map((c) => c.path));
    const group = (why) => all.filter((f) => f.why === why && !cased.has(f.path));
    // (a loose file has no folder, so no rag.yaml: one of a folder it is dropped in)
    const where = (files) => (files.every((f) => !f.path.includes('/'))
      ? `the rag.yaml of a folder you drop ${files.length === 1 ? 'it' : 'them'} in` : "the folder's rag.yaml");
    const them = (files) => (files.length === 1 ? 'it' : 'them');
    // (a PDF or an image is no glob away from being indexed: taken, it is skipped as binary)
    const notText = group('not included').filter((f) => NOT_TEXT.has(suffixOf(f.path)));
    const notIncluded = group('not included').filter((f) => !NOT_TEXT.has(suffixOf(f.path)));
    if (notIncluded.length) {
      parts.push(`${plural(notIncluded.length, 'file matches', 'files match')} no index.includes glob: add ` +
        `${notIncluded.length === 1 ? 'a glob that takes it' : 'globs that take them'} to index.includes in ` +
        `${where(notIncluded)} to index ${them(notIncluded)} (a list there replaces the default one: keep its globs too)`);
    }
    if (notText.length) {
      const kinds = [...new Set(notText.map((f) => `.${suffixOf(f.path)}`))];
      parts.push(`${plural(notText.length, 'file is', 'files are')} not text (${kinds.slice(0, 5).join(', ')}` +
        `${kinds.length > 5 ? ', …' : ''}), which the page does not read: it indexes text and code files` +
        (notText.some((f) => DOCUMENTS.has(suffixOf(f.path)))
          ? ' (save a document as text, as pdftotext does for a PDF, and drop that)' : ''));
    }
    const excluded = group('excluded');
    if (excluded.length) {
      parts.push(`${plural(excluded.length, 'file is', 'files are')} left out by index.excludes: change it in ` +
        `${where(excluded)} to index ${them(excluded)}`);
    }
    const ignored = group('ignored');
    if (ignored.length) {
      parts.push(`${plural(ignored.length, 'file is', 'files are')} ignored by .gitignore/.ragignore rules or the ` +
        `repository's .git/info/exclude: index.gitignore: false in ${where(ignored)} indexes ${them(ignored)}`);
    }
    return parts;
  }

  function handlePicked(fileList) {
    const files = Array.from(fileList);
    return enqueue(async (ticket) => {
      if (!state.ready) { setStatus(notReadyStatus()); return; }
      state.drop = { reading: false, left: files.length };  // (a reload while its config files are read is told)
      state.facade.ignore_reset();
      const found = await pickedItems(files);
      reportIndexed(found, await indexItems(found, ticket, { sameName: true }));
    });
  }

  // The head of the status line after the sample project: as a drop's (indexedHead), its
  // files that were indexed already with the same text counted apart.
  function sampleHead(tally) {
    const same = tally.unchanged.size;
    const fresh = tally.files - same;
    if (same && !fresh) {
      return `Nothing new: the sample project (${SAMPLE_FOLDER}/) is indexed already, its ${plural(same, 'file', 'files')} unchanged.`;
    }
    return `Indexed the sample project (${SAMPLE_FOLDER}/): ${plural(fresh, 'file', 'files')}` +
      (same ? `; ${num(same)} unchanged, not indexed again.` : '.');
  }

  async function trySample() {
    return enqueue(async (ticket) => {
      if (!state.ready) { setStatus(notReadyStatus()); return; }
      setStatus('Fetching the sample project…');
      state.facade.ignore_reset();
      const names = state.manifest.sample || [];
      state.drop = { reading: false, left: names.length };  // (a reload while they are fetched is told)
      const items = await Promise.all(names.map(async (name) => {
        const url = new URL(`./sample/${name.split('/').map(encodeURIComponent).join('/')}`, location.href);
        const r = await fetch(url);
        if (!r.ok) throw new Error(`sample/${name}: HTTP ${r.status}`);
        const blob = await r.blob();
        // (under a folder of its own: a file of the user's named README.md stays theirs)
        return { path: `${SAMPLE_FOLDER}/${name}`, file: new File([blob], name.split('/').pop()) };
      }));
      const tally = await indexItems(items, ticket, { sameName: true });
      if (tally.cleared) { reportIndexed({ notes: [], leftOut: [] }, tally); return; }
      // (its folder's note only when it says more than the head: files replaced or kept)
      tally.sameName = (tally.sameName || []).filter((f) => f.replaced || f.kept);
      setStatus([sampleHead(tally), ...dropNotes({}, tally), 'Try a question such as “how are headers parsed?”'].join(' '));
      showDropBanner(dropProblems({}, tally), tally);
      const box = $('search');
      if (!box.value) box.value = 'how are headers parsed?';
      runSearch();
    });
  }

  // ------------------------------------------------------------------ UI

  // A message, or a name, with the characters that hide or reorder text shown as escapes: the
  // bidi controls (a name "a\u202e.md" reversed the message around it, and "x.md:L1-2\u202e.md"
  // read as another citation) and the invisible ones (a name differing by a zero-width space
  // looked like another file). The app's own words hold none of them.
  function visible(text) {
    return String(text).replace(/[\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  }

  // Text with the bidi embeddings, overrides and isolates shown as U+FFFD, one for one, as
  // the engine's `formats.shown` shows them in results and in the Markdown and Text views.
  const noBidi = (text) => String(text).replace(/[\u202a-\u202e\u2066-\u2069]/g, '\ufffd');
  // A file's name as the file list and the results show it (alike): bidi controls as U+FFFD,
  // the other invisible characters as escapes.
  const listName = (path) => visible(noBidi(path));

  function setStatus(message) { $('status').textContent = visible(message); }

  function showBanner(message, kind, offerClear = false) {
    $('banner-text').textContent = visible(message);
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
      `${st.totalChunks} chunk${st.totalChunks === 1 ? '' : 's'}` +
      (st.totalChunks ? ` (about ${Math.round(st.avgChunkLen)} searchable words each)` : '') +
      (size.error ? '' : `; index ${formatBytes(size.bytes)} of the ${formatBytes(size.max)} a tab holds`);
    renderFiles(st.files);
    updateStorage();
  }

  // The file list, rebuilt only when it changed. A focused Remove button keeps the focus: on
  // its file's new button, or, its file gone, on the button now at its place, else the one
  // before, else "Choose files" (never <body>).
  function renderFiles(files) {
    const list = $('files');
    const shown = Array.from(list.querySelectorAll('.path'), (el) => el.dataset.path);
    if (shown.length === files.length && shown.every((p, i) => p === files[i])) return;
    const buttons = () => Array.from(list.querySelectorAll('.remove'));
    const focused = buttons().indexOf(document.activeElement);
    const frag = document.createDocumentFragment();
    for (const path of files) {
      const li = document.createElement('li');
      const name = document.createElement('span');
      name.className = 'path';
      name.dataset.path = path;
      name.textContent = listName(path);  // (as the results show it)
      name.title = visible(path);  // (names differing only by a bidi control told apart: escapes)
      const btn = document.createElement('button');
      btn.type = 'button';
      btn.className = 'remove';
      btn.textContent = 'Remove';
      btn.setAttribute('aria-label', `Remove ${visible(path)}`);
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

  // The top box's number of results (1 to 100; a number outside is shown clamped, and a box
  // that holds none, empty or "e", as the 10 it is read as) -- but not while it is being
  // edited: a search run meanwhile (a live update) rewrote "" to 10 under the cursor of a
  // user emptying it to type another number. It is shown so once the edit is done (Enter,
  // or the box left: state.topkEditing).
  function topK() {
    const box = $('topk');
    const asked = box.value.trim() === '' ? NaN : Number(box.value);  // ("1e1" is 10)
    const k = Number.isFinite(asked) ? Math.max(1, Math.min(100, Math.round(asked))) : 10;
    if (k !== asked && !state.topkEditing) box.value = String(k);
    return k;
  }

  // `typing`: a search made as the question is typed. It keeps the results on show, and says
  // nothing, while the words typed so far have none to search for ("how do r"): Enter says it.
  function runSearch(typing = false) {
    if (!state.ready) { whenReady('search'); return; }
    const q = $('search').value;
    const list = $('results');
    const k = topK();
    if (!q.trim()) { list.replaceChildren(); $('search-info').textContent = ''; $('search-time').textContent = ''; return; }
    const t0 = performance.now();
    const res = JSON.parse(state.facade.search_ui(q, k));
    const ms = performance.now() - t0;
    if (res.error && typing && /has no indexable words/.test(res.error)) return;
    $('search-time').textContent = '';
    if (res.error) { list.replaceChildren(); $('search-info').textContent = visible(res.error); return; }
    const n = res.results.length;
    let why = '';
    if (!n) {
      why = res.indexEmpty ? ': nothing is indexed yet; add files above or try the sample project'
        : ': no indexed file has these words';
    }
    // (the time is not in the live region: it would be read out at each keystroke)
    $('search-info').textContent = `${n} result${n === 1 ? '' : 's'}${why}`;
    $('search-time').textContent = ` (in ${ms.toFixed(1)} ms)`;
    const frag = document.createDocumentFragment();
    for (const r of res.results) {
      const li = document.createElement('li');
      li.dataset.testid = 'result';
      li.className = 'result';
      const head = document.createElement('div');
      head.className = 'result-head';
      const cite = document.createElement('code');
      cite.className = 'cite';
      // (its name as the file list shows it; a piece of a line, its columns, as `rag query` cites it)
      const cols = Array.isArray(r.cols) ? ` cols ${r.cols[0]}-${r.cols[1]}` : '';
      const citation = `${listName(r.path)}:L${r.startLine}-${r.endLine}${cols}`;
      cite.textContent = citation;
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
      // (a long snippet scrolls, and Chromium then puts it in the tab order: it needs a name)
      body.setAttribute('role', 'group');
      body.setAttribute('aria-label', citation);
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
    // (in the page's words: an empty question, and an empty index, whose pack would hold
    // nothing to copy, with a warning of no evidence for the question)
    const out = !q.trim() || docCount() === 0 ? null
      : ragPack(q, raw === '' ? undefined : Number(raw), PACK_MODES[mode] || {});
    const res = !q.trim() ? { error: 'Type a question above first: Pack packs the best evidence for it.' }
      : out === null ? { error: 'Nothing is indexed yet: add files above or try the sample project, then press Pack.' }
        : JSON.parse(out);
    state.lastPack = res.error ? null : out;
    state.packQuery = res.error ? null : q;
    state.packPaths = new Set(res.error ? [] : res.snippets.map((sn) => sn.path));
    if (res.error) {
      $('pack-info').textContent = visible(res.error);  // (it may quote the question)
      $('pack-output').textContent = '';
    } else {
      // (a box that holds no number, empty or "-", is read as the default: shown as it)
      if (raw === '') $('budget').value = $('budget-range').value = String(res.budget_tokens);
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
    $('pack-info').textContent = visible(`The packed context quoted ${shownPath(path)}, which has changed since; pack again.`);
  }

  // No packed context on show (after Clear all: it quoted files that are gone).
  function resetPack() {
    state.lastPack = null;
    state.packQuery = null;
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
    const view = renderedPack();
    state.packWarning = view.warning || null;
    showPackInfo();
    // (display only: the bidi controls shown as U+FFFD, as the Markdown and Text views show
    // them, so a name like "notes\u202edm.txt" cannot read reversed; Copy copies the view exact)
    $('pack-output').textContent = view.error ? view.error : noBidi(view.text);
  }

  // The question the pack on show was made for, quoted (a long one cut short).
  function packQuestion() {
    const q = state.packQuery.trim().replace(/\s+/g, ' ');
    return `“${q.length > 80 ? `${q.slice(0, 80)}…` : q}”`;
  }

  // The question box no longer holds the question of the pack on show.
  const packStale = () => !!state.lastPack && $('search').value.trim() !== state.packQuery.trim();

  // The pack's summary: its question (marked as the earlier one once the box holds another),
  // snippets, tokens and evidence warning.
  function showPackInfo() {
    const res = JSON.parse(state.lastPack);
    const n = res.snippets.length;
    state.packShownStale = packStale();
    const head = `${n} snippet${n === 1 ? '' : 's'} for ${state.packShownStale ? 'the earlier question ' : ''}` +
      `${packQuestion()}, ${res.used_tokens} of ${res.budget_tokens} tokens` +
      (state.packWarning ? ` (${state.packWarning})` : '');
    $('pack-info').textContent = visible(state.packShownStale
      ? `${head}. The question above has changed since: press Pack to pack it.` : head);
  }

  // On each edit of the question: the pack's summary says when it is for an earlier question
  // (said once, when that changes, not at each keystroke: #pack-info is a live region).
  function notePackQuestion() {
    if (state.lastPack && packStale() !== state.packShownStale) showPackInfo();
  }

  async function copyText(text) {
    window.__ragLastCopied = text;  // for tests and for browsers without clipboard access
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (e) {
      // (no clipboard API, as over plain http on a LAN address: copied from a hidden text area,
      // which takes the focus to be selected; it goes back to where it was, not to <body>)
      const focused = document.activeElement;
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
      if (focused && focused !== document.body && focused.isConnected) focused.focus();
      return ok;
    }
  }

  async function copyPrompt() {
    if (!state.lastPack) return;
    const res = JSON.parse(state.facade.runtime_prompt(state.lastPack));
    if (res.error) { $('pack-info').textContent = visible(res.error); return; }
    const pack = state.lastPack;
    const which = `${packStale() ? 'the earlier question ' : ''}${packQuestion()}`;  // (before the wait)
    const ok = await copyText(res.prompt);
    if (state.lastPack !== pack) return;  // (reset meanwhile: a file it quotes changed, and it says so)
    $('pack-info').textContent = visible(ok ? `Copied the prompt for ${which}` +
      ` (${res.prompt.length} characters): paste it into any LLM.`
      : 'Could not copy automatically: select the packed context and copy it by hand.');
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
    // A drop outside the zone must not navigate away from the page (a file, or a link, let go
    // beside it would open in the tab); text dragged into a field is dropped there as usual.
    // Files let go beside the zone are taken as dropped on it, not refused without a word.
    const hasFiles = (e) => !!e.dataTransfer && Array.from(e.dataTransfer.types || []).includes('Files');
    // (a field that takes dropped text: not the budget slider, on which a link let go would open)
    const intoField = (e) => e.target instanceof Element && !hasFiles(e)
      && e.target.matches('textarea, input:is([type="search"], [type="text"], [type="number"], :not([type]))');
    window.addEventListener('dragover', (e) => {
      if (intoField(e)) return;
      e.preventDefault();
      if (hasFiles(e)) e.dataTransfer.dropEffect = 'copy';
    });
    window.addEventListener('drop', (e) => {
      if (intoField(e)) return;
      const taken = e.defaultPrevented;  // (by the drop zone, inside which it was let go)
      e.preventDefault();
      if (!taken && hasFiles(e)) handleDrop(e.dataTransfer);
    });
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
      notePackQuestion();
      searchTimer = setTimeout(() => runSearch(true), 150);
    });
    $('search-form').addEventListener('submit', (e) => {
      e.preventDefault();
      clearTimeout(searchTimer);
      state.topkEditing = false;  // (Enter in the top box: its number is shown as read)
      runSearch();
    });
    $('topk').addEventListener('input', () => { state.topkEditing = true; });
    $('topk').addEventListener('change', () => { state.topkEditing = false; rerunSearch(); });
    $('topk').addEventListener('blur', () => { state.topkEditing = false; topK(); });
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
        const pack = state.lastPack;
        const which = `${packStale() ? 'the earlier question ' : ''}${packQuestion()}`;  // (before the wait)
        const format = $('pack-format').selectedOptions[0].textContent;  // ("JSON", "Markdown"...)
        const ok = await copyText(view.text || '');
        if (state.lastPack !== pack) return;  // (reset meanwhile: a file it quotes changed, and it says so)
        $('pack-info').textContent = visible(ok ? `Copied the packed context (${format}) for ${which}.`
          : 'Could not copy automatically.');
      }
    });
    $('clear-all').addEventListener('click', () => {
      if (!state.ready || !confirmClear()) return;
      const res = JSON.parse(ragClear());
      hideBanner('index');  // (about files that are gone now)
      if (res.error) showBanner(res.error, 'clear');
      refreshUi();
      rerunSearch();
      setStatus('Index cleared.');
    });
    $('banner-clear').addEventListener('click', clearStoredIndex);
    $('banner-close').addEventListener('click', () => closeBanner(true));
    // Escape closes the banner (from inside it, or from anywhere but a field, where Escape
    // has a meaning of its own: the question box clears)
    document.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || $('banner').hidden || e.defaultPrevented) return;
      const inBanner = $('banner').contains(document.activeElement);
      if (!inBanner && document.activeElement && document.activeElement.matches('input, select, textarea')) return;
      closeBanner(inBanner);
    });
    // Save a pending change when the tab is hidden (it may be discarded later) or left.
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden' && state.ready && state.dirty) flush();
    });
    window.addEventListener('pagehide', saveOnExit);
    // back from the browser's page cache: the save made on the way out is settled like
    // another tab's (this tab takes it as the index)
    window.addEventListener('pageshow', (ev) => {
      if (!ev.persisted) return;
      state.exitAborted = false;
      if (state.exitNoteKey) { removeExitNotes([{ key: state.exitNoteKey }]); state.exitNoteKey = null; }
      syncWithStored();
    });
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
    storage: () => ({ refused: state.storageRefused, unread: state.storeUnread, quotaError: state.quotaError, dirty: state.dirty,
                      saving: state.saving !== null, conflict: state.conflict, generation: state.generation,
                      saveCost: state.saveCost }),
    storeFormat: STORE_FORMAT,
    pyodide: () => state.py,
    heapBytes,
    setHeapSafeBytes: (n) => { state.heapSafeBytes = n; },  // tests: see the checksum catch a garbled copy
    // tests: the page time left for saving API changes at once (negative: they wait for the
    // debounce, as once saves have held the page their share; see apiChanged)
    setSaveBudget: (ms) => { state.saveBudget = ms; state.budgetAt = performance.now(); },
    // tests: the debounce, so that changes left to it are still unsaved after a test's next
    // round trip to the page, however slow the machine (the page's default: SAVE_DELAY_MS)
    setSaveDelay: (ms) => { state.saveDelay = ms; },
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

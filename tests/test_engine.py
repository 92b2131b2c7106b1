import json
import math
import sqlite3
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from ragweb import analysis
from ragweb import engine as engine_mod
from ragweb import store
from ragweb.chunking import chunk_lines, is_markdown, split_lines
from ragweb.config import default_config
from ragweb.engine import MARKUP_VERSION, Engine
from ragweb.errors import EmptyQueryError, IndexCorruptError, UsageError
from ragweb.store import FORMAT_VERSION

from conftest import sample_documents

WORDS = ["alpha", "beta", "gamma", "delta", "parseHeaders", "retry_policy", "socket", "timeout",
         "header", "budget", "token", "cache", "queue", "worker", "index"]
QUERIES = ["alpha beta", "parse headers", "retry policy timeout", "socket", "cache queue worker",
           "token budget index", "gamma delta header"]


def results(eng, q, **kw):
    return [(h.path, h.start_line, h.end_line, h.score, h.text) for h in eng.search(q, **kw)]


def fresh(docs: dict, config=None):
    eng = Engine.memory(config)
    for path in sorted(docs):
        eng.add_document(path, docs[path])
    return eng


def small_chunks():
    cfg = default_config()
    cfg["index"]["chunk_tokens"] = 32
    cfg["index"]["chunk_overlap"] = 8
    return cfg


def run_ops(eng, ops_, after_each=None) -> dict:
    """Apply (op, path, text) operations -- add, remove, flush -- to ``eng``; returns the
    documents it should then hold."""
    docs = {}
    for op, path, text in ops_:
        if op == "add":
            eng.add_document(path, text)
            docs[path] = text
        elif op == "remove":
            assert eng.remove_document(path) == (path in docs)
            docs.pop(path, None)
        else:
            eng.flush()
        if after_each:
            after_each()
    return docs


doc_text = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
                    min_size=1, max_size=40).map("\n".join)
ops = st.lists(st.tuples(st.sampled_from(["add", "remove", "flush"]),
                         st.sampled_from([f"f{i}.txt" for i in range(6)]), doc_text), max_size=25)


@settings(max_examples=40, deadline=None)
@given(ops)
def test_incremental_index_gives_identical_results_to_fresh(monkeypatch_ops):
    cfg = small_chunks()
    eng = Engine.memory(cfg)
    docs = run_ops(eng, monkeypatch_ops)
    ref = fresh(docs, cfg)
    for q in QUERIES:
        assert results(eng, q, top_k=10) == results(ref, q, top_k=10)
        assert results(eng, q, top_k=10, mmr=False) == results(ref, q, top_k=10, mmr=False)
    st_a, st_b = eng.stats(), ref.stats()
    assert st_a == st_b
    assert st_a["totalChunks"] == eng.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]


@settings(max_examples=40, deadline=None)
@given(ops, st.integers(1, 6))
def test_numpy_scores_a_search_exactly_as_pure_python(ops_, pool):
    """numpy is an optional accelerator of BM25 scoring: the same hits, scores and order,
    over segments and removed chunks, with ties at a small pool's cut."""
    import numpy  # noqa: F401  (a test dependency: the accelerated path must run here)
    from ragweb import accel
    cfg = small_chunks()
    eng = Engine.memory(cfg)
    for op, path, text in ops_:
        if op == "add":
            eng.add_document(path, text)
            eng.add_document("copy-" + path, text)  # ties
        elif op == "remove":
            eng.remove_document(path)
        else:
            eng.flush()
    runs = []
    copies = eng.files_matching("copy-*")  # (a glob no indexed file matches is an error)
    try:
        for enabled in (True, False):
            accel.ENABLED = enabled
            runs.append([(results(eng, q, top_k=10), results(eng, q, top_k=3, mmr=False, pool=pool),
                          results(eng, q, top_k=10, path_glob="copy-*") if copies else None) for q in QUERIES])
    finally:
        accel.ENABLED = True
    assert runs[0] == runs[1]


def test_numpy_leaves_removed_chunks_out_of_the_pool():
    from ragweb import accel
    eng = Engine.memory()
    for i in range(30):
        eng.add_document(f"best{i}.txt", "socket timeout " * (10 - i % 10))
        eng.add_document(f"weak{i}.txt", "socket worker queue cache index " + "budget " * i)
    eng.flush()
    for i in range(6):
        eng.remove_document(f"best{i}.txt")  # listed dead: their postings stay until a merge
    eng.flush()
    assert eng.n_dead == 6  # (too few to merge segments)
    runs = []
    try:
        for enabled in (True, False):
            accel.ENABLED = enabled
            runs.append(results(eng, "socket timeout", top_k=8, mmr=False, pool=8))
    finally:
        accel.ENABLED = True
    assert runs[0] == runs[1] and len(runs[0]) == 8


def check_segments(eng):
    """The listed segments are the postings' (sizes, chunk-id runs), and `dead` lists
    exactly the removed chunks whose postings some segment still holds."""
    conn = eng.conn
    segs = eng._segs
    assert eng.n_segs == len(segs) and [s for s, _, _ in segs] == sorted({s for s, _, _ in segs})
    live = {c for (c,) in conn.execute("SELECT id FROM chunks")}
    dead = {c for (c,) in conn.execute("SELECT chunk FROM dead")}
    assert eng.n_dead == len(dead) and not live & dead
    in_postings = set()
    for i, (seg, first, size) in enumerate(segs):
        blobs = [b for (b,) in conn.execute("SELECT data FROM postings WHERE seg=?", (seg,))]
        assert sum(len(b) for b in blobs) // 4 == size
        upto = segs[i + 1][1] if i + 1 < len(segs) else eng.next_chunk
        for b in blobs:
            chunks = set(engine_mod.store.blob_to_ints(b)[0::3])
            assert all(first <= c < upto for c in chunks)
            in_postings |= chunks
    assert conn.execute("SELECT count(*) FROM postings WHERE seg NOT IN (%s)"
                        % ",".join(str(s) for s, _, _ in segs) if segs else
                        "SELECT count(*) FROM postings").fetchone() == (0,)
    assert in_postings <= live | dead and dead <= in_postings


def test_many_flushes_merge_segments_and_keep_results(monkeypatch):
    docs = {p: t for p, t in sample_documents()}
    eng = Engine.memory()
    for round_ in range(3):
        for path, text in docs.items():
            eng.add_document(path, text)
            eng.flush()
            check_segments(eng)
    assert eng.n_segs < 2 * engine_mod.MERGE_FACTOR
    ref = fresh(docs)
    for q in QUERIES + ["configure the client", "pigeon post"]:
        assert results(eng, q) == results(ref, q)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "add", "remove", "flush"]),
                          st.sampled_from([f"f{i}.txt" for i in range(8)]), doc_text), max_size=60),
       st.integers(2, 4))
def test_merging_some_segments_keeps_results_and_lists(ops_, factor):
    """Segments are merged a few at a time (any run of them, by their sizes); with removals
    between, each merge drops its own chunks' dead entries and no others."""
    cfg = small_chunks()
    old = engine_mod.MERGE_FACTOR
    engine_mod.MERGE_FACTOR = factor
    try:
        eng = Engine.memory(cfg)
        docs = run_ops(eng, ops_, after_each=lambda: (eng.flush(), check_segments(eng)))
    finally:
        engine_mod.MERGE_FACTOR = old
    ref = fresh(docs, cfg)
    for q in QUERIES:
        assert results(eng, q, top_k=10, mmr=False) == results(ref, q, top_k=10, mmr=False)
    assert eng.stats() == ref.stats()


def test_flushing_each_document_costs_n_log_n_rows_not_n_squared():
    # Indexing through the JS API flushes after each document when questions come between.
    # Merging every segment every few flushes rewrote all postings each time: the rows
    # written grew with the square of the documents.
    def rows_written(n):
        eng = Engine.memory()
        for i in range(n):
            eng.add_document(f"d{i}.txt", " ".join(f"w{i}x{j}" for j in range(40)))
            eng.flush()
        return eng.conn.total_changes

    small, big = rows_written(150), rows_written(1200)
    assert big / small < 8 * 1.6  # 8 times the documents: 64 times the rows at N²


def five_flushed_apart():
    """Five sample documents and an engine that flushed after each (five segments)."""
    docs = {p: t for p, t in sample_documents()[:5]}
    eng = Engine.memory()
    for path, text in docs.items():
        eng.add_document(path, text)
        eng.flush()
    return docs, eng


def test_an_index_without_its_segments_listed_merges_them_once():
    # an index written before segments were listed (no "segs" in meta)
    docs, eng = five_flushed_apart()
    eng.conn.execute("DELETE FROM meta WHERE key='segs'")
    old = Engine.from_bytes(eng.to_bytes())
    assert old._segs is None and old.n_segs > 1
    old.add_document("new.md", "pigeon post by carrier")
    old.flush()
    assert old.n_segs == 1
    check_segments(old)
    docs["new.md"] = "pigeon post by carrier"
    for q in QUERIES + ["pigeon post"]:
        assert results(old, q) == results(fresh(docs), q)


def test_segments_listed_then_written_by_an_older_version_are_not_trusted():
    # An index this version wrote, then an older one (which writes segments and counters
    # but not their list): the stale list must not guide a merge, which would drop the
    # dead entries of chunks whose postings are still in a segment it does not list.
    docs, eng = five_flushed_apart()
    listed = eng.conn.execute("SELECT value FROM meta WHERE key='segs'").fetchone()[0]
    first = next(iter(docs))
    eng.remove_document(first)  # the older version's writes: one more segment, a removal
    eng.add_document("new.md", "pigeon post by carrier")
    eng.flush()
    eng.conn.execute("UPDATE meta SET value=? WHERE key='segs'", (listed,))
    old = Engine.from_bytes(eng.to_bytes())
    assert old._segs is None
    for i in range(12):
        old.add_document(f"more{i}.md", f"carrier number {i}")
        old.flush()
        check_segments(old)
    del docs[first]
    docs["new.md"] = "pigeon post by carrier"
    docs.update({f"more{i}.md": f"carrier number {i}" for i in range(12)})
    for q in QUERIES + ["pigeon post", "carrier"]:
        assert results(old, q) == results(fresh(docs), q)


def test_a_big_buffer_flushes_by_itself_and_keeps_results(monkeypatch):
    # a big corpus must not hold all its postings in memory until the end of the run
    docs = {p: t for p, t in sample_documents()}
    monkeypatch.setattr(engine_mod, "FLUSH_INTS", 300)
    eng = Engine.memory()
    segs = []
    for path, text in docs.items():
        eng.add_document(path, text)
        segs.append(eng.n_segs)
        assert eng._pending_ints <= 300
    assert max(segs) > 1  # segments were written during the run
    ref = fresh(docs)
    for q in QUERIES + ["configure the client", "pigeon post"]:
        assert results(eng, q) == results(ref, q)


def test_merges_write_ranges_of_terms_and_the_same_rows(monkeypatch):
    # The biggest merges rewrite the whole index: built whole in memory before it was
    # written, the merged segment was the peak of a big `rag index` run. Written a range
    # of terms at a time, the rows must be the ones a merge in one piece writes.
    docs = sample_documents()

    def build():
        deletes = []
        eng = Engine.memory()
        eng.conn.set_trace_callback(lambda sql: deletes.append(sql) if sql.startswith("DELETE FROM postings") else None)
        for path, text in docs:  # eight segments: merged as one
            eng.add_document(path, text)
            eng.flush()
        assert eng.n_segs == 1
        for path, _ in docs[:3]:  # a third of the chunks dead: all merged
            eng.remove_document(path)
        eng.add_document("new.md", "pigeon post by carrier")
        eng.flush()
        check_segments(eng)
        rows = eng.conn.execute("SELECT term, seg, data FROM postings ORDER BY term, seg").fetchall()
        return eng, rows, len(deletes)

    _, whole, deletes_whole = build()
    monkeypatch.setattr(engine_mod, "MERGE_INTS", 50, raising=False)
    eng, ranged, deletes_ranged = build()
    assert ranged == whole
    assert deletes_ranged > 4 * deletes_whole  # (written in many ranges)
    kept = dict(docs[3:], **{"new.md": "pigeon post by carrier"})
    for q in QUERIES + ["pigeon post"]:
        assert results(eng, q) == results(fresh(kept), q)


def test_replaced_text_no_longer_matches():
    eng = Engine.memory()
    eng.add_document("a.md", "the zebra crossing")
    assert results(eng, "zebra")
    eng.add_document("a.md", "the giraffe")
    assert results(eng, "zebra") == []
    assert [r[0] for r in results(eng, "giraffe")] == ["a.md"]


def brute_force_bm25(docs, query, k1=1.2, b=0.75):
    """Plain BM25 over every chunk, straight from the formula (reference §3)."""
    eng = Engine.memory()
    for p in sorted(docs):
        eng.add_document(p, docs[p])
    chunks = []
    for path in sorted(docs):
        lines = split_lines(docs[path])
        for ch in chunk_lines(docs[path], 512, 50, is_markdown(path)):
            body = "\n".join(lines[ch.start - 1:ch.end])
            if ch.context:
                body = ch.context + "\n" + body
            chunks.append(((path, ch.start, ch.end), Counter(eng.analyzer.terms(body))))
    n = len(chunks)
    avgdl = sum(sum(c.values()) for _, c in chunks) / n
    scores = {}
    for key, counts in chunks:
        dl = sum(counts.values())
        s = 0.0
        for t in eng.analyzer.query_terms(query):
            df = sum(1 for _, c in chunks if t in c)
            if t in counts:
                idf = math.log((n - df + 0.5) / (df + 0.5) + 1)
                tf = counts[t]
                s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
        if s > 0:
            scores[key] = s
    return scores


def test_bm25_matches_the_plain_formula():
    docs = dict(sample_documents())
    cfg = default_config()
    cfg["retrieve"]["path_boost_weight"] = 0.0
    cfg["retrieve"]["changelog_weight"] = 1.0  # (the sample has a CHANGELOG.md)
    eng = fresh(docs, cfg)
    for q in ["retry backoff", "parse headers", "configuration file timeout", "pigeon"]:
        ref = brute_force_bm25(docs, q)
        got = {(h.path, h.start_line, h.end_line): h.score for h in eng.search(q, top_k=1000, mmr=False)}
        assert got.keys() == ref.keys()
        for key in ref:
            assert got[key] == pytest.approx(ref[key], rel=1e-9)


def test_path_boost_lifts_files_named_like_the_query():
    eng = Engine.memory()
    for i in range(8):
        eng.add_document(f"notes/filler{i}.md", "unrelated words about cooking")
    eng.add_document("notes/a.md", "retry the request later")
    eng.add_document("notes/retry.md", "retry the request later")
    hits = eng.search("retry", mmr=False)
    assert [h.path for h in hits] == ["notes/retry.md", "notes/a.md"]
    assert hits[0].bm25 == hits[1].bm25 and hits[0].path_boost > 0 == hits[1].path_boost


def test_release_notes_weigh_less_than_the_pages_they_change():
    text = "Failed requests are retried with exponential backoff."
    docs = {"CHANGELOG.md": text, "docs/guide.md": text, "releases/2.0.md": text}
    docs.update({f"docs/filler{i}.md": "unrelated words about cooking" for i in range(8)})
    cfg = default_config()
    cfg["retrieve"]["changelog_weight"] = 1.0
    same = fresh(docs, cfg).search("retried backoff", mmr=False)
    assert [h.path for h in same] == ["CHANGELOG.md", "docs/guide.md", "releases/2.0.md"]  # ties: by path
    assert same[0].score == same[1].score == same[2].score
    hits = fresh(docs).search("retried backoff", mmr=False)  # the default, 0.8
    assert [h.path for h in hits] == ["docs/guide.md", "CHANGELOG.md", "releases/2.0.md"]
    assert hits[1].score == pytest.approx(0.8 * hits[0].score)
    assert hits[1].bm25 == hits[0].bm25  # (the weight is on the score, not on BM25's figure)


LICENSED_MANUAL = (
    "# Shell manual\n\n## Here Documents\n\n"
    "A here document works by redirecting the lines that follow to the command's input.\n\n"
    "## Appendix C GNU Free Documentation License\n\n"
    "The Document is any manual or work under this License. A copy of the Document is a work; you may copy "
    "the Document, or any work based on the Document, as a whole. Each work says the Document is free.\n")


def licensed_manual_config(license_weight=None) -> dict:
    """Chunks small enough to cut `LICENSED_MANUAL` at its license appendix."""
    cfg = default_config()
    cfg["index"]["chunk_tokens"], cfg["index"]["chunk_overlap"] = 40, 0
    if license_weight is not None:
        cfg["retrieve"]["license_weight"] = license_weight
    return cfg


def test_a_license_text_weighs_less_than_the_text_it_licenses():
    # bashref.html's GNU FDL appendix says "Document" in every sentence: a question about
    # here documents ranked five of its chunks above the manual's own pages
    docs = {"manual.md": LICENSED_MANUAL, "LICENSE": "Each work is a Document; copy the Document as a work.\n"}
    docs.update({f"filler{i}.md": "unrelated words about cooking" for i in range(8)})
    q = "how does a here document work"
    same = fresh(docs, licensed_manual_config(1.0)).search(q, mmr=False)
    assert [h.heading for h in same][:3] == ["", "Appendix C GNU Free Documentation License", "Shell manual"]
    hits = fresh(docs, licensed_manual_config()).search(q, mmr=False)  # the default, 0.3
    assert hits[0].heading == "Shell manual" and hits[0].score == hits[0].bm25
    for h in hits[1:]:
        assert h.heading.startswith("Appendix C") or h.path == "LICENSE"
        assert h.score == pytest.approx(0.3 * h.bm25)
    # a section titled "License" alone (a README's, npm's `license` field) is no license text
    docs = {"README.md": "# Tool\n\n## License\n\nThe license of each work: MIT.\n", "LICENSE.md": "Each work: MIT.\n"}
    hits = {h.path: h for h in fresh(docs).search("what is each work", mmr=False)}
    assert hits["README.md"].score == hits["README.md"].bm25 and hits["LICENSE.md"].score < hits["LICENSE.md"].bm25


def test_a_question_about_the_license_weighs_license_texts_as_any_text():
    # ("Which license does widget use?": the README's "## MIT License" and the LICENSE file
    # are the answer, and weighed 0.3 they lost to a FAQ that says "use" three times)
    docs = {"README.md": "# Widget\n\n## MIT License\n\nWidget is released under the MIT License.\n",
            "LICENSE": "MIT License\n\nPermission is hereby granted to use the software.\n",
            "faq.md": "# FAQ\n\n## Can I use widget at work?\n\nYes, use widget at work; many teams use it.\n"}
    for q in ("Which license does widget use?", "What is the copyright of widget?", "Is widget GPL?"):
        for h in fresh(docs, licensed_manual_config()).search(q, mmr=False):
            assert h.score == pytest.approx(h.bm25 + h.path_boost), (q, h.path)
    hits = fresh(docs, licensed_manual_config()).search("can I use widget", mmr=False)
    assert [h.path for h in hits if h.score < h.bm25 + h.path_boost] == ["LICENSE"]


def test_a_page_that_gathers_other_pages_weighs_less_than_the_page_itself():
    text = "Failed requests are retried with exponential backoff."
    docs = {"book/ch09.html": f"<p>{text}</p>", "book/print.html": f"<p>{text}</p>",
            "book/ch10.html": "<p>Failed jobs are logged.</p>"}
    docs.update({f"book/filler{i}.html": "<p>unrelated words about cooking</p>" for i in range(8)})
    cfg = default_config()
    cfg["retrieve"]["aggregate_weight"] = 1.0
    same = fresh(docs, cfg).search("failed requests retried", mmr=False)
    assert [h.path for h in same] == ["book/ch09.html", "book/print.html", "book/ch10.html"]  # ties: by path
    assert same[0].score == same[1].score
    hits = fresh(docs).search("failed requests retried", mmr=False)  # the default, 0.8
    assert [h.path for h in hits] == ["book/ch09.html", "book/print.html", "book/ch10.html"]
    assert hits[1].score == pytest.approx(0.8 * hits[0].score) and hits[1].bm25 == hits[0].bm25
    assert hits[2].score == hits[2].bm25  # (any other page as it was)
    cfg["retrieve"]["aggregate_weight"] = 0.1
    assert [h.path for h in fresh(docs, cfg).search("failed requests retried", mmr=False)] == \
        ["book/ch09.html", "book/ch10.html", "book/print.html"]


def test_a_question_word_the_index_lacks_is_searched_for_in_its_related_forms():
    eng = Engine.memory()
    eng.add_document("server.md", "Edit the configuration to change the listening port of the server.")
    eng.add_document("admin.md", "The admin port is fixed.")
    eng.add_document("retries.md", "At most 10 attempts; see max_retries.")
    eng.add_document("clock.md", "The time of day.")
    eng.add_document("waits.md", "A timeout after 30 seconds.")
    # "config" is not a term of the index: "configuration" (configur), which it starts, stands in
    hits = eng.search("config port", mmr=False)
    assert [h.path for h in hits] == ["server.md", "admin.md"]
    assert hits[0].terms == ["configur", "port"] and hits[1].terms == ["port"]
    assert hits[0].bm25 > hits[1].bm25
    # ... at half strength: the same word itself would score more
    assert eng.search("configuration port", mmr=False)[0].bm25 > hits[0].bm25
    # an abbreviation ("max") and a number's digits ("10") stand in the same way
    assert [h.path for h in eng.search("maximum", mmr=False)] == ["retries.md"]
    assert [h.path for h in eng.search("ten", mmr=False)] == ["retries.md"]
    # a word the index has is searched for as it is, not as the longer words it starts
    assert [h.path for h in eng.search("time", mmr=False)] == ["clock.md"]
    # a word without related forms in the index finds nothing, as before
    assert eng.search("pigeon", mmr=False) == []


def test_a_question_with_more_words_than_sqlite_takes_variables_is_answered():
    eng = Engine.memory()
    eng.add_document("a.md", "The zebra crossing is painted white.")
    # SQLite builds differ in how many host parameters one statement takes (Debian's 250,000,
    # the default 32,766, older ones 999): with 999, a question of 2,000 distinct words
    eng.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)
    words = [f"zebr{i:04d}x" for i in range(2_000)]
    assert [h.path for h in eng.search(" ".join(words + ["zebra"]))] == ["a.md"]
    assert eng.pack(" ".join(words + ["zebra"]), 200)["snippets"]


def test_a_hit_that_repeats_a_better_one_is_left_out():
    para = ("Retries back off exponentially with full jitter, starting at half a second and doubling "
            "up to thirty seconds, and a Retry-After header from the server wins over the computed delay.")
    eng = Engine.memory()
    eng.add_document("docs/retry.md", f"# Retry policy\n\n{para}\n")
    more = " ".join(f"Field {i} of the delay table is documented on the reference page." for i in range(12))
    # the page's build: the same paragraph in HTML, and a table the Markdown page links to
    eng.add_document("html/retry.html", f"<html><body><h1>Retry policy</h1><p>{para.replace('Retry-After', '<code>Retry-After</code>')}</p><p>{more}</p></body></html>")
    eng.add_document("docs/other.md", "# Timeouts\n\nA request that gets no answer in ten seconds is retried once, without jitter.\n")
    everything = eng.search("retry jitter delay", mmr=False)
    assert sorted(h.path for h in everything) == ["docs/other.md", "docs/retry.md", "html/retry.html"]
    hits = eng.search("retry jitter delay")
    # the Markdown page says nothing its HTML build does not: the build alone is shown (the
    # term sets of the two differ too much for MMR's Jaccard to see it)
    assert [h.path for h in hits] == ["html/retry.html", "docs/other.md"]
    assert len(eng.search("retry jitter delay", repeats=False)) == 3
    # a pack of whole chunks keeps it: the rest of a repeat may be what the better one lacks
    whole = eng.pack("retry jitter delay", 2000, compact=False)
    assert {s["path"] for s in whole["snippets"]} == {"docs/retry.md", "html/retry.html", "docs/other.md"}


def test_hit_text_is_exactly_the_file_lines():
    docs = dict(sample_documents())
    eng = fresh(docs)
    for q in QUERIES + ["retry backoff jitter", "headers"]:
        for h in eng.search(q, top_k=20):
            lines = split_lines(docs[h.path].replace("\r\n", "\n"))
            assert h.text == "\n".join(lines[h.start_line - 1:h.end_line])


def test_min_score_threshold_drops_weak_hits():
    cfg = default_config()
    cfg["retrieve"]["min_score_threshold"] = 1e6
    eng = fresh(dict(sample_documents()), cfg)
    assert eng.search("retry") == []


def test_path_glob_restricts_results():
    eng = fresh(dict(sample_documents()))
    hits = eng.search("retry headers", top_k=50, path_glob="**/*.py")
    assert hits and all(h.path.endswith(".py") for h in hits)


def test_mmr_drops_near_duplicates():
    eng = Engine.memory()
    text = "alpha beta gamma delta epsilon zeta"
    eng.add_document("a.txt", text)
    eng.add_document("b.txt", text)
    eng.add_document("c.txt", "alpha something different here")
    assert sorted(h.path for h in eng.search("alpha", mmr=False)) == ["a.txt", "b.txt", "c.txt"]
    assert sorted(h.path for h in eng.search("alpha")) == ["a.txt", "c.txt"]


def test_widen_adds_context_lines():
    eng = Engine.memory()
    eng.add_document("a.txt", "\n".join(f"line {i}" for i in range(1, 2001)) + "\nneedle here\n")
    h = eng.search("needle")[0]
    w = eng.widen(h, 3)
    assert w.start_line == max(1, h.start_line - 3) and w.end_line == h.end_line
    assert w.text.endswith("needle here")


def test_empty_question_is_a_clear_error():
    eng = fresh(dict(sample_documents()))
    for q in ["", "the of and", "?!", "a b c"]:
        with pytest.raises(EmptyQueryError, match="no indexable words"):
            eng.search(q)


def test_bad_arguments():
    eng = Engine.memory()
    with pytest.raises(UsageError):
        eng.add_document("", "text")
    with pytest.raises(UsageError):
        eng.add_document("a", b"bytes")
    with pytest.raises(UsageError):
        eng.search("x y", top_k=0)


def test_empty_index_returns_nothing():
    assert Engine.memory().search("anything") == []


def test_bytes_round_trip_keeps_results():
    docs = dict(sample_documents())
    eng = fresh(docs)
    copy = Engine.from_bytes(eng.to_bytes())
    for q in QUERIES:
        assert results(copy, q) == results(eng, q)
    assert copy.stats() == eng.stats()
    copy.add_document("new.md", "brand new pelican text")
    assert results(copy, "pelican")


@pytest.mark.parametrize("data", [b"", b"garbage" * 100, b"SQLite format 3\x00" + b"\x00" * 50])
def test_corrupt_bytes_are_refused(data):
    with pytest.raises(IndexCorruptError):
        Engine.from_bytes(data)


def test_truncated_bytes_are_refused():
    docs = dict(sample_documents())
    data = fresh(docs).to_bytes()
    with pytest.raises(IndexCorruptError):
        Engine.from_bytes(data[: len(data) // 2])


def test_unknown_format_version_is_refused():
    eng = fresh(dict(sample_documents()))
    eng.conn.execute(f"PRAGMA user_version={FORMAT_VERSION + 1}")
    with pytest.raises(IndexCorruptError, match="format version"):
        Engine.from_bytes(eng.conn.serialize())


def test_file_backed_index_transaction_rolls_back(tmp_path):
    db = tmp_path / "index.db"
    eng = Engine.open(db)
    with eng.transaction():
        eng.add_document("a.md", "kept text")
    with pytest.raises(RuntimeError):
        with eng.transaction():
            eng.add_document("b.md", "lost text")
            raise RuntimeError("boom")
    eng.close()
    again = Engine.open(db)
    assert again.stats()["files"] == ["a.md"]
    assert again.search("lost") == []


def test_to_bytes_vacuums_after_removals():
    eng = fresh(dict(sample_documents()))
    big = "\n".join(f"line {i} of a large file about pelicans" for i in range(5000))
    eng.add_document("big.txt", big)
    full = len(eng.to_bytes())
    eng.remove_document("big.txt")
    assert len(eng.to_bytes()) == full          # free pages are kept without vacuuming
    small = eng.to_bytes(vacuum_ratio=0.25)
    assert len(small) < full / 2
    assert Engine.from_bytes(small).stats() == eng.stats()


def test_cjk_documents_are_searchable():
    eng = Engine.memory()
    eng.add_document("ja.md", "# 東京\n東京都は日本の首都です。\n")
    eng.add_document("ko.md", "# 서울\n서울특별시는 한국의 수도입니다.\n")
    eng.add_document("zh.md", "北京是中国的首都。\n")
    assert [h.path for h in eng.search("日本の首都")][0] == "ja.md"
    assert [h.path for h in eng.search("한국의 수도")][0] == "ko.md"
    assert [h.path for h in eng.search("北京")] == ["zh.md"]


def test_numpy_is_loaded_only_for_work_that_pays_for_it_and_ragweb_numpy_0_turns_it_off():
    import os
    import subprocess
    import sys
    code = ("import sys; from ragweb import accel; small = accel.numpy(10); "
            "print(small is None, 'numpy' in sys.modules, accel.numpy(accel.IMPORT_WORK) is None, "
            "accel.numpy(10) is None)")
    for value, out in (("1", "True False False False"), ("0", "True False True True")):
        got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={**os.environ, "RAGWEB_NUMPY": value}, check=True).stdout.strip()
        assert got == out, value


def test_file_caches_drop_the_least_recently_used_files(monkeypatch):
    monkeypatch.setattr(engine_mod, "FILE_CACHE", 3)
    eng = Engine.memory()
    for name in "abcd":
        eng.add_document(f"{name}.md", f"# {name}\n\nthe {name} page\n")
    eng.flush()
    fid = {p: i for i, p in eng.conn.execute("SELECT id, path FROM files")}
    a, b, c, d = (fid[f"{n}.md"] for n in "abcd")
    eng.file_lines([a, b, c])
    outline = eng.file_outline(a, eng.file_lines([a])[a], True)  # a: used last of the three
    eng.file_lines([d])                                           # one must go: b, the least recent
    assert set(eng._lines) == {c, a, d} and eng._outlines.get(a) is outline
    monkeypatch.setattr(engine_mod, "FILE_CACHE_CHARS", len("# d\n\nthe d page\n") * 2)
    eng.file_lines([b])                                           # by characters too: c and a go
    assert set(eng._lines) == {d, b}
    assert eng._outlines.get(a) is outline  # (an outline stays: small, and slow to make again)
    eng.add_document("a.md", "# a\n\nthe a page, changed\n")   # ... until its file changes
    eng.flush()
    assert a not in eng._outlines
    assert eng._lines_size == sum(len(eng.file_text(f"{n}.md")) for n in "db")
    assert eng.file_lines([a, b, c, d])[c] == ["# c", "", "the c page"]  # (a request larger than the cache is whole)


def test_a_writer_that_waited_for_another_reads_what_it_wrote(tmp_path):
    # two `rag index` runs at once: the second opened the index, then waited for the first
    db = tmp_path / "index.db"
    first, second = Engine.open(db), Engine.open(db)
    with first.transaction():
        first.add_document("one.md", "alpha words in the first file\n")
        first.add_document("gone.md", "gamma words, removed below\n")
    with second.transaction():
        second.remove_document("gone.md")
        second.add_document("two.md", "beta words in the second file\n")
    first.close()
    second.close()
    eng = Engine.open(db, create=False)
    count, total = eng.conn.execute("SELECT count(*), sum(len) FROM chunks").fetchone()
    assert (eng.n_chunks, eng.total_len) == (count, total) and count == 2
    assert [h.path for h in eng.search("alpha")] == ["one.md"]
    assert [h.path for h in eng.search("beta")] == ["two.md"]
    assert eng.search("gamma") == []
    eng.close()


def test_a_commit_while_a_reader_opens_the_index_is_seen_whole(tmp_path):
    """A run's commit landing between the reads that open an index left the reader with the
    counters from before it and the data version from after it, so it never read them again."""
    db = tmp_path / "index.db"
    eng = Engine.open(db)
    with eng.transaction():
        for i in range(20):
            eng.add_document(f"f{i}.md", f"# File {i}\n\nkiwi fruit number {i} is here.\n")
    eng.close()

    class CommitMidway:  # (the real connection; another one commits a run at one moment)
        def __init__(self, conn):
            self.conn, self.fired = conn, False

        def __getattr__(self, name):
            return getattr(self.conn, name)

        def execute(self, sql, *args):
            if sql.startswith("SELECT max(id) FROM chunks") and not self.fired:
                self.fired = True
                writer = Engine.open(db)
                with writer.transaction():
                    for i in range(2):
                        writer.add_document(f"f{i}.md", f"# File {i}\n\nplum only now, number {i}.\n")
                writer.close()
            return self.conn.execute(sql, *args)

    reader = Engine(CommitMidway(store.open_file(db, create=False)), default_config(), str(db))
    assert reader.conn.fired
    fresh = Engine.open(db, create=False)
    with reader.reading(), fresh.reading():
        assert (reader.n_chunks, reader.total_len, reader.n_dead) == (fresh.n_chunks, fresh.total_len, fresh.n_dead)
        assert results(reader, "kiwi") == results(fresh, "kiwi")


@pytest.mark.parametrize("flushed", [True, False])
def test_a_replace_the_database_refuses_leaves_the_index_as_it_was(flushed):
    eng = fresh({"a.md": "# A\n\nzebra okapi words\n", "b.md": "# B\n\nokapi lion\n"})
    if flushed:
        eng.flush()
    before = (eng.n_chunks, eng.total_len, eng.n_dead, results(eng, "zebra"), results(eng, "okapi"))
    with pytest.raises(sqlite3.IntegrityError):  # (NaN reaches SQLite as NULL: files.mtime is NOT NULL)
        eng.add_document("a.md", "# A\n\nreplaced by a giraffe\n", mtime=float("nan"))
    assert (eng.n_chunks, eng.total_len, eng.n_dead, results(eng, "zebra"), results(eng, "okapi")) == before
    eng.flush()
    assert results(eng, "okapi") == before[-1] and results(eng, "giraffe") == []
    again = fresh({"a.md": "# A\n\nzebra okapi words\n", "b.md": "# B\n\nokapi lion\n"})
    assert [r[:4] for r in results(eng, "zebra okapi")] == [r[:4] for r in results(again, "zebra okapi")]


def test_a_reader_open_beside_an_index_run_answers_from_what_the_run_committed(tmp_path):
    # `rag pack --batch` open while another `rag index` commits: the reader's counters, term
    # ids and caches were those of when it opened (a KeyError on a new chunk id, a negative IDF)
    db = tmp_path / "index.db"
    with Engine.open(db).transaction() as w:
        for i in range(20):
            w.add_document(f"d{i}.md", f"# Doc {i}\n\nretry backoff header {i} parse timeout\n")
    reader = Engine.open(db, create=False)
    assert reader.pack("retry backoff", 200)["snippets"]
    with Engine.open(db).transaction() as w:
        for i in range(20):
            w.remove_document(f"d{i}.md")
        for i in range(20, 60):
            w.add_document(f"d{i}.md", f"# Doc {i}\n\nretry backoff header {i} parse zeppelin\n")
    assert {h.path for h in reader.search("zeppelin", top_k=100, mmr=False)} == {f"d{i}.md" for i in range(20, 60)}
    packed = reader.pack("retry zeppelin", 200)
    assert packed["snippets"] and all(s["path"] not in {f"d{i}.md" for i in range(20)} for s in packed["snippets"])
    assert reader.n_chunks == 40
    reader.close()


def test_a_one_character_cjk_word_finds_the_runs_that_hold_it():
    eng = Engine.memory()
    eng.add_document("a.md", "狗是人类的朋友。\n")     # first in a run: the bigram 狗是
    eng.add_document("b.md", "# 猫\n\n我爱狗。\n")     # last in a run (爱狗), and 猫 alone
    eng.add_document("c.md", "Cats and dogs.\n")
    assert {h.path for h in eng.search("狗")} == {"a.md", "b.md"}
    assert [h.path for h in eng.search("猫")] == ["b.md"]
    assert eng.search("狗是")[0].path == "a.md"       # a bigram is still itself
    packed = eng.pack("狗", budget=200)
    assert {s["path"] for s in packed["snippets"]} == {"a.md", "b.md"}
    assert packed["evidence"] == "sufficient"          # the packed text holds the word
    assert eng.search("鱼") == [] and eng.pack("鱼")["evidence"] == "none"


def test_forgetting_the_memos_of_word_analyses_changes_nothing_in_the_index(monkeypatch):
    docs = [(f"d{i}.md", f"# Part {i}\nThe valve v{i}x opens; retries back off. Identifiers: parseHeaderV{i % 7}.\n")
            for i in range(60)]

    def build():
        eng = Engine.memory()
        for path, text in docs:
            eng.add_document(path, text)
            eng.flush()  # (the memos are trimmed at each flush)
        return eng.to_bytes(), [h.path for h in eng.search("valve retries parse header")]
    kept = build()
    monkeypatch.setattr(engine_mod, "MEMO_MAX", 1)
    assert build() == kept


def churned_log(saves: int, versions: int) -> Engine:
    """An engine of 40 documents and a log of 20 new ids re-indexed ``versions`` times
    before each of ``saves`` flushes (its segments checked at each)."""
    eng = Engine.memory()
    for i in range(40):
        eng.add_document(f"d{i}.txt", f"alpha beta gamma {i}")
    ids = iter(range(10**6))
    for _ in range(saves):
        for _ in range(versions):
            eng.add_document("log.txt", "\n".join(f"event q{next(ids):07d}z done" for _ in range(20)))
        eng.flush()
        check_segments(eng)
    return eng


def test_terms_of_text_that_changes_on_every_save_do_not_pile_up():
    # a log re-indexed with new ids each time: its old ids are in no chunk once replaced,
    # and must leave the vocabulary when their last postings are merged away
    eng = churned_log(300, 1)
    (unused,) = eng.conn.execute("SELECT count(*) FROM terms WHERE df <= 0").fetchone()
    (total,) = eng.conn.execute("SELECT count(*) FROM terms").fetchone()
    assert unused < 20 * 40 and total < 20 * 50  # (300 saves made 6,000 ids)
    assert [h.path for h in eng.search("q0005990z")] == ["log.txt"]
    assert eng.search("q0000001z") == []
    # a word whose term was dropped is indexed again under a term of its own
    eng.add_document("again.txt", "event q0000001z returns")
    assert [h.path for h in eng.search("q0000001z")] == ["again.txt"]


def test_terms_of_text_replaced_before_it_was_flushed_do_not_pile_up():
    # (ragIndex does not flush: a log re-indexed twice between saves left its first ids with
    # no chunk and no postings, which no merge would ever meet)
    eng = churned_log(100, 3)
    (unused,) = eng.conn.execute("SELECT count(*) FROM terms WHERE df <= 0").fetchone()
    assert unused < 20 * 40  # (the 200 replaced versions made 4,000 ids)
    assert [h.path for h in eng.search("q0005990z")] == ["log.txt"]


def test_a_decomposed_document_is_found_by_a_composed_question_and_pack_quotes_it_as_written():
    eng = Engine.memory()
    text = "# Cafe\u0301\n\nThe cafe\u0301 serves cre\u0300me bru\u0302le\u0301e.\n"
    eng.add_document("menu.md", text)
    eng.add_document("other.md", "# Other\n\nNothing about coffee here.\n")
    eng.flush()
    assert [h.path for h in eng.search("café crème")] == ["menu.md"]
    snippets = eng.pack("café crème brûlée", 300)["snippets"]
    assert snippets and snippets[0]["path"] == "menu.md" and snippets[0]["text"] in text


def test_a_file_whose_path_names_the_question_is_kept_among_thousands_of_tied_stubs():
    """Chunks tied at the pool's cut beyond `TIES_KEPT` times the pool are cut by how their
    paths weigh them first: retry.md, of the same text as 300 stubs, is boosted by its name."""
    from ragweb import engine as engine_mod
    eng = Engine.memory()
    stub = "This alias is deprecated; use the new client instead."
    for i in range(300):
        eng.add_document(f"alias_{i:03d}.md", stub)
    eng.add_document("retry.md", stub)
    for i in range(3):
        eng.add_document(f"zz_other{i}.md", f"Call retry when the request times out, with a longer wait ({i}).")
    eng.flush()
    assert 301 > engine_mod.TIES_KEPT * engine_mod.Engine.memory().config["retrieve"]["top_k"]  # (the cap is reached)
    hits = eng.search("retry deprecated alias", top_k=5, mmr=False)
    assert "retry.md" in [h.path for h in hits]


def test_a_dropped_folders_name_does_not_weigh_in_ranking_or_the_evidence():
    # The page stores a dropped folder's files as "acme/n1.md", `rag index acme` as "n1.md":
    # the folder's name, a question word, lifted every hit (and "releases/" made every file a
    # change log) on the page only. `add_roots` names such folders.
    docs = {"n1.md": "# One\n\nrefresh the token before expiry\n", "n2.md": "# Two\n\ntoken request\n",
            "about.md": "# About\n\nThe acme service.\n"}
    native, page = Engine.memory(), Engine.memory()
    for name, text in docs.items():
        native.add_document(name, text)
        page.add_document("acme/" + name, text)
    page.add_roots(["acme"])
    native.flush()
    page.flush()
    for q in ("acme token refresh", "token"):
        assert [(h.path, h.score) for h in native.search(q, top_k=5)] == \
               [(h.path.removeprefix("acme/"), h.score) for h in page.search(q, top_k=5)], q
        a, b = native.pack(q, 60), page.pack(q, 60)
        assert (a["evidence"], a["evidence_score"]) == (b["evidence"], b["evidence_score"]), q
    assert Engine.from_bytes(page.to_bytes()).weighed_path("acme/n1.md") == "n1.md"  # (kept with the index)
    page.reread()  # (a re-read for a new version keeps them)
    assert page.weighed_path("acme/n1.md") == "n1.md"
    page.clear()
    assert page.weighed_path("acme/n1.md") == "acme/n1.md"


FINGERPRINT_DOCS = {
    "guide.md": "---\ntitle: Guide\n---\n# Install\n\nRun `pip install ragweb` (v0.2.5, -g).\n\n## Use\n\n"
                "- one item\n- two items, e.g. this\n\n```python\ndef parseHeaders(raw):\n    return raw\n```\n\n"
                + "A long paragraph line that goes on. " * 120 + "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "page.html": "<html><head><title>T</title><script>x=1</script></head><body><h1>Page</h1><p>Text with "
                 "<code>ninja</code> and &para; marks, 2<sup>31</sup> of them.</p><dl><dt>term</dt><dd>its meaning</dd></dl>"
                 "<pre>line one\nline two</pre><button>copy</button></body></html>\n",
    "api.rst": "API\n===\n\n.. function:: spam(eggs)\n\n   Spam the eggs.\n\nNotes\n-----\n\nSee :func:`spam`.\n",
    "tool.py": "import os\n\n\nclass Walker:\n    \"\"\"Walk.\"\"\"\n\n    def walk(self, top):\n"
               "        return os.walk(top)\n" * 30,
    "intl.txt": "İstanbul Straße pass\u200bword 数据库的备份每天运行。時々 ค้นหาข้อมูล हिन्दी café cafe\u0301\n",
    "notes.txt": ("word " * 2000 + "\n") * 3,
    "README": "Tool\n====\n\nWhat it is.\n\nUsage\n-----\n\n" + "Run it once. " * 300 + "\n",
    "Changelog": "Changes\n=======\n\n" + "Fixed a crash. Sped it up. " * 150 + "\n",
    "perlfunc.pod": "=head1 NAME\n\n=over\n\n=item wantarray\nX<wantarray>\n\nReturns true in L<C<list>|/list> "
                    "context E<lt>here.\n\n  # a comment\n  wantarray;\n\n=back\n\n" + "Words. " * 400 + "\n",
    "man2/open.2.gz": ".\\\" comment\n.TH open 2 2023 x\n.SH NAME\nopen \\- open a file\n.SH SYNOPSIS\n.nf\n"
                      ".BI \"int open(const char *\" path );\n.fi\n.TP 20\n.B O_EXCL\nFails if \\fIpath\\fP exists.\n"
                      + "Words. " * 400 + "\n",
    "info/sort.info.gz": "\x1f\nFile: sort.info,  Node: Top,  Next: Intro,  Up: (dir)\n\nSort\n****\n\nSorts lines. "
                         + "Words. " * 400 + "\n\x1f\nTag Table:\nNode: Top\x7f1\n\x1f\nEnd Tag Table\n",
    "git-reset.txt": "git-reset(1)\n============\n\nOPTIONS[[OPTIONS]]\n------------------\n\n--soft::\n\tKeeps the "
                     "index. " + "Words. " * 400 + "\n",
    "git-config.html": "<html><body><h2>Variables</h2><div class=\"dlist\"><dl>\n<dt class=\"hdlist1\">\n"
                       "stash.showIncludeUntracked\n</dt>\n<dd>\n<p>Shows untracked files.</p>\n</dd>\n</dl></div>"
                       + "<p>Words.</p>\n" * 400 + "</body></html>\n",
    "logs/app.log.1": ".TH not a title\n.SH started\nGET /index.html 200\n" + "Words. " * 400 + "\n",
    "git-stash.txt": "git-stash(1)\n============\n\nEXAMPLES\n--------\n\nSee linkgit:git-pull[1].\n\n"
                     "------------------------\n$ git pull\n# ... hack hack hack ...\n$ git stash\n"
                     "------------------------\n\n" + "Words. " * 400 + "\n\n[[OPTIONS]]\nOPTIONS\n-------\n\nbody\n",
    "user-manual.html": "<html><body><p>Intro.</p><div><h2 class=\"title\"><a name=\"u\"></a>Undoing</h2></div><p>"
                        "Revert:</p><pre>$ git revert HEAD</pre><p>Done.</p>\n" + "<p>Words.</p>\n" * 400
                        + "<p>End.</p><div><h3>Rewriting</h3></div><p>Amend it.</p>\n</body></html>\n",
    "sql-select.html": "<pre>\nSELECT 1;\n</pre><div><h2>Description</h2><p>\nIt selects.\n</p>\n"
                       + "<p>Words.</p>\n" * 400,
    "sql-createtable.html": "<div class=\"toc\"><dl class=\"toc\"><dt><a href=\"#x\">1. Intro</a></dt></dl></div>\n"
                            "<h2>Parameters</h2><dl><dt><code>TEMPORARY</code></dt><dd><p>\nTemporary.\n</p></dd>\n"
                            + "<p>Words.</p>\n" * 400,
    "bash.html": "<DL>\n<DT>${x:-word}<DD>\nIf\n<I>parameter</I>\n\nis unset.\n</DL>\n" + "<P>Words.\n" * 400,
    "git-branch.html": "<ol>\n<li>\n<p>\nDelete the branch.\n</p>\n</li>\n</ol>\n" + "<p>Words.</p>\n" * 400,
    "params.md": "# Special Parameters\n\n($*) and ($@) expand to the parameters; $? and $# and $1, not $HOME.\n",
    "bashref.html": "<html><body><p>Bash.</p><div class=\"Contents_element\" id=\"SEC_Contents\"><h2>Table of "
                    "Contents</h2><ul><li><a href=\"#I\">1 Introduction</a></li></ul></div>\n<h2>1 Introduction</h2>"
                    + "<p>Words.</p>\n" * 400 + "<table class=\"index-cp\"><tr><td><a href=\"#p\">process group</a>"
                    ":</td><td><a href=\"#D\">Definitions</a></td></tr></table></body></html>\n",
    "gettext_6.html": "<table cellpadding=\"1\" cellspacing=\"1\" border=\"0\"><tr><td>[<a href=\"t.html#SEC_Top\" "
                      "title=\"Cover (top) of document\">Top</a>]</td></tr></table>\n<h1>6. New PO File</h1>\n"
                      + "<p>Words.</p>\n" * 400 + "<ul class=\"toc\"><li><a href=\"#S1\">1. Introduction</a></li></ul>\n",
    "access.txt": "Access\n======\n\n/etc/postfix/access.cidr:\n   # Rules in order.\n   10.0.0.1 permit\n\n"
                  + "Words.\n" * 400,
    "POSTSCREEN_README": "P\bPr\bre\beg\bgr\bre\bee\bet\bt t\bte\bes\bst\bt\n\nZombies speak first.\n",
    "api-index-full.html": "<table class=\"navigation\"><tr><td><a href=\"#idxA\">A</a></td></tr></table>\n<p>Words.</p>\n"
                           "<div class=\"index\"><a name=\"idxA\"></a><h3>A</h3>\n<dt>\naes_setkey, function in aes\n</dt>"
                           "\n</div>\n" + "<p>Words.</p>\n" * 400,
    "msgmerge.1.html": "<!-- Creator     : groff version 1.22.4 -->\n<h1 align=\"center\">MSGMERGE</h1>\n"
                       "<a href=\"#NAME\">NAME</a><br>\n<a href=\"#SYNOPSIS\">SYNOPSIS</a><br>\n<hr>\n"
                       + "<p>Words.</p>\n" * 400 + "<p>\n <font size=\"-1\">\n This document was generated by <em>B"
                       "</em> using <a href=\"https://www.nongnu.org/texi2html/\"><em>texi2html 1.78a</em></a>.\n"
                       " </font>\n</p>\n",
    "sql-createtable.html": "<div class=\"toc\"><dl class=\"toc\"><dt><a href=\"#x\">1. Intro</a></dt></dl></div>\n"
                            "<h2>Parameters</h2><dl><dt><code>TEMPORARY</code></dt><dd><p>\nTemporary.\n</p></dd>\n"
                            + "<p>Words.</p>\n" * 400,
    "TLS_README": "TLS support\n===========\n\nThe smtpd server speaks TLS\nonce it is told where its keys are.\n\n"
                  + "Words.\n" * 400,
}

FINGERPRINTS = {  # (MARKUP_VERSION, WORD_FORM, UNICODE_FORM, FOLD_FORM, SHORT_TERMS) -> the chunks' and terms' sha256
    (23, "marks", "nfkc", "fold2", 2): "a25460c3fd641f697ea169dc10debdf22dd89704f40d48c68afeba998ae3633f",
}


def _chunks_fingerprint() -> str:
    import hashlib
    config = default_config()
    config["index"]["stemming"] = False  # (the stemmer's own version is recorded apart)
    eng = Engine.memory(config)
    for path, text in FINGERPRINT_DOCS.items():
        eng.add_document(path, text)
    eng.flush()
    names = dict(eng.conn.execute("SELECT id, term FROM terms"))
    rows = eng.conn.execute("SELECT f.path, c.start_line, c.end_line, c.col_start, c.col_end, c.char_start, "
                            "c.char_end, c.heading, c.len, c.terms FROM chunks c JOIN files f ON f.id = c.file_id "
                            "ORDER BY f.path, c.start_line, c.char_start").fetchall()
    out = [[*row[:-1], sorted(names[t] for t in store.blob_to_ints(row[-1]))] for row in rows]
    return hashlib.sha256(json.dumps(out, ensure_ascii=False).encode()).hexdigest()


def test_a_title_in_nroff_bold_is_found_by_its_words():
    # "P\bPr\bre\beg..." (Postfix's POSTSCREEN_README.gz as html2readme writes its titles) held no
    # term "pregreet": the question "what is the pregreet test" found every other page first
    docs = {"POSTSCREEN_README": "P\bPr\bre\beg\bgr\bre\bee\bet\bt t\bte\bes\bst\bt\n\n"
                                 "Zombies speak before their turn.\n",
            "TUNING.md": "# Tuning\n\nA test of the greeting, before the server speaks.\n"}
    docs.update({f"filler{i}.md": "unrelated words about cooking" for i in range(8)})
    hits = fresh(docs).search("pregreet test", mmr=False)
    assert hits[0].path == "POSTSCREEN_README" and "pregreet" in hits[0].terms


def test_a_change_to_chunks_or_terms_comes_with_a_new_version():
    """How a fixed corpus is chunked and which terms it gets, by the versions an index records.
    A change to reading, chunking or analysis without a new version left the indexes built
    before it in the old shape for good (a line over the budget only by its newline kept its
    columns): raise the version the change belongs to (`engine.MARKUP_VERSION`, or the
    analysis's `WORD_FORM`, `UNICODE_FORM`, `FOLD_FORM`, `SHORT_TERMS`) and record the new fingerprint."""
    key = (MARKUP_VERSION, analysis.WORD_FORM, analysis.UNICODE_FORM, analysis.FOLD_FORM, analysis.SHORT_TERMS)
    assert key in FINGERPRINTS, f"new versions {key}: add their fingerprint {_chunks_fingerprint()}"
    assert _chunks_fingerprint() == FINGERPRINTS[key], "chunks or terms changed: raise a version (see the docstring)"

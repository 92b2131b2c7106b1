import math
import random

from hypothesis import given, settings, strategies as st

from ragweb.search import (aggregate_path, bm25_idf, bm25_term, changelog_path, contained, jaccard, license_path,
                           license_title, mmr_select, shingles)


def test_idf_never_negative_and_decreasing():
    assert bm25_idf(10, 10) > 0
    assert bm25_idf(100, 1) > bm25_idf(100, 50) > bm25_idf(100, 100)


def test_bm25_term_formula():
    got = bm25_term(2.0, 3, 100, 50.0, 1.2, 0.75)
    assert math.isclose(got, 2.0 * 3 * 2.2 / (3 + 1.2 * (1 - 0.75 + 0.75 * 100 / 50.0)))


def test_changelog_path_names_release_notes_and_change_logs_only():
    logs = ["CHANGELOG.md", "pkg/ChangeLog", "doc/changelog.Debian.gz",
            "NEWS", "NEWS.gz", "CHANGES.txt", "lib/HISTORY.rst", "ReleaseNotes.md",
            "docs/release-notes/v2.md", "html/releases/4.2.html", "Help/release/3.7.rst",
            "whatsnew/3.11.html", "html/release-15-4.html", "git/RelNotes/2.14.6.txt", "RelNotes"]
    pages = ["history.md", "web/api/history/index.md", "news.html", "changes.html", "release.md",
             "releasing.md", "api/releases.md", "docs/NEWSLETTER.md", "CHANGES_TO_MAKE/plan.md",
             "src/changelog_parser.py/x", "pre-release-15.md", "guide/changelog-format.md.bak/notes.md"]
    assert [p for p in logs if not changelog_path(p)] == []
    assert [p for p in pages if changelog_path(p)] == []


def test_aggregate_path_names_pages_that_gather_other_pages_only():
    gathered = ["book/print.html", "print.html", "reference/PRINT.HTML", "docs/_build/singlehtml/index.html",
                "site/print_page/index.html", "manual/print.htm"]
    pages = ["std/macro.print.html", "book/ch01-print.html", "blueprint.html", "print/index.html",
             "docs/print.md", "singlehtml.md", "api/printing.html", "site/print_page.md"]
    assert [p for p in gathered if not aggregate_path(p)] == []
    assert [p for p in pages if aggregate_path(p)] == []


def test_license_path_and_title_name_license_texts_only():
    licenses = ["LICENSE", "LICENSE.md", "pkg/LICENCE.txt", "COPYING", "COPYING.LESSER", "LICENSE-MIT",
                "LICENSE-APACHE-2.0", "debian/copyright", "html/license.html", "licenses.txt", "UNLICENSE"]
    pages = ["docs/licensing.md", "src/license.py", "copying-files.html", "api/license-keys.md",
             "LICENSE/README.md/x.md", "guide/copyright-notices.md"]
    assert [p for p in licenses if not license_path(p)] == []
    assert [p for p in pages if license_path(p)] == []
    titles = ["Appendix C GNU Free Documentation License", "GNU General Public License", "GNU LESSER GENERAL PUBLIC LICENSE",
              "Apache License, Version 2.0", "The MIT License (MIT)", "BSD 3-Clause License",
              "PSF LICENSE AGREEMENT FOR PYTHON 3.11", "ADDENDUM: How to use this License for your documents",
              "How to Apply These Terms to Your New Programs", "Mozilla Public License 2.0"]
    headings = ["License", "license", "init-license", "The license field", "Licensing", "GPL-licensed backends",
                "License keys for the MIT server", "Choosing a license", ""]
    assert [t for t in titles if not license_title(t)] == []
    assert [t for t in headings if license_title(t)] == []


def test_jaccard():
    assert jaccard(frozenset(), frozenset()) == 0.0
    assert jaccard(frozenset({1, 2}), frozenset({2, 3})) == 1 / 3


def eager_mmr(scores, sets, k, lam, dedup, repeats=None):
    """The textbook loop: every round, recompute every remaining item's MMR value."""
    top = scores[0] or 1.0
    max_sim = [0.0] * len(scores)
    alive, picked = list(range(len(scores))), []
    while alive and len(picked) < k:
        best = max(alive, key=lambda i: (lam * scores[i] / top - (1 - lam) * max_sim[i], -i))
        if repeats and any(repeats(best, j) for j in picked):
            alive.remove(best)
            continue
        picked.append(best)
        still = []
        for i in alive:
            if i == best:
                continue
            sim = jaccard(sets[i], sets[best])
            if sim < dedup:
                max_sim[i] = max(max_sim[i], sim)
                still.append(i)
        alive = still
    return picked


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1.0, 2.0, 3.0, 0.5, 4.25]),
                          st.frozensets(st.integers(0, 10), max_size=8)), min_size=1, max_size=25),
       st.integers(1, 12), st.sampled_from([0.0, 0.3, 0.7, 1.0]), st.sampled_from([0.5, 0.8, 1.0]))
def test_lazy_mmr_equals_the_eager_loop(items, k, lam, dedup):
    items.sort(key=lambda it: -it[0])
    scores = [s for s, _ in items]
    sets = [t for _, t in items]
    assert mmr_select(scores, sets, k, lam, dedup) == eager_mmr(scores, sets, k, lam, dedup)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1.0, 2.0, 3.0, 0.5, 4.25]),
                          st.frozensets(st.integers(0, 10), max_size=8), st.integers(0, 4)), min_size=1, max_size=25),
       st.integers(1, 12), st.sampled_from([0.0, 0.3, 0.7, 1.0]), st.sampled_from([0.5, 0.8, 1.0]),
       st.sampled_from([0.0, 0.5, 1.0]))
def test_lazy_mmr_with_repeats_equals_the_eager_loop(items, k, lam, dedup, repeat_terms):
    items.sort(key=lambda it: -it[0])
    scores = [s for s, _, _ in items]
    sets = [t for _, t, _ in items]
    asked = []

    def repeats(i, j):  # items of the same group repeat each other
        asked.append((i, j))
        return items[i][2] == items[j][2]

    def eager_repeats(i, j):  # ... when j holds repeat_terms of i's set
        return len(sets[i] & sets[j]) >= repeat_terms * len(sets[i]) and repeats(i, j)
    got = mmr_select(scores, sets, k, lam, dedup, repeats, repeat_terms)
    lazily_asked, asked[:] = list(asked), []
    assert got == eager_mmr(scores, sets, k, lam, dedup, eager_repeats)
    if repeat_terms == 0.0:
        assert len({items[i][2] for i in got}) == len(got)
    assert all(len(sets[i] & sets[j]) >= repeat_terms * len(sets[i]) for i, j in lazily_asked)


def test_lazy_mmr_equals_the_eager_loop_on_bigger_pools_of_near_ties():
    # many picks pending for an item, which is weighed against them only until it falls
    # below the next one: scores of few values (ties) or close together, pools of 20 to 120
    rng = random.Random(7)
    for trial in range(300):
        n = rng.randint(20, 120)
        if trial % 2:
            scores = sorted((rng.choice([1.0, 0.75, 0.5]) for _ in range(n)), reverse=True)
        else:
            scores = [1.0 - i * 1e-4 for i in range(n)]
        sets = [frozenset(rng.sample(range(40), rng.randint(0, 12))) for _ in range(n)]
        k, lam, dedup = rng.randint(1, n), rng.choice([0.3, 0.7, 0.9]), rng.choice([0.5, 0.8, 1.0])
        group = [rng.randint(0, 9) for _ in range(n)]

        def repeats(i, j):
            return group[i] == group[j]

        def eager_repeats(i, j):
            return len(sets[i] & sets[j]) >= 0.5 * len(sets[i]) and repeats(i, j)
        assert mmr_select(scores, sets, k, lam, dedup) == eager_mmr(scores, sets, k, lam, dedup)
        assert mmr_select(scores, sets, k, lam, dedup, repeats, 0.5) == \
            eager_mmr(scores, sets, k, lam, dedup, eager_repeats)


class _Counted(frozenset):
    """A frozenset that counts the intersections it is asked for (one per similarity)."""
    ands = 0

    def __and__(self, other):
        _Counted.ands += 1
        return frozenset.__and__(self, other)


def test_mmr_weighs_an_item_against_new_picks_only_while_it_may_be_next():
    # 400 items of nearly equal relevance: each pick lowers the others' values a little,
    # so nearly every item comes back to the top of the heap between picks; computing all
    # its similarities to the picks made since then each time took 0.45 of pool x k
    rng = random.Random(0)
    pool, k = 400, 100
    scores = [1.0 - i * 1e-5 for i in range(pool)]
    sets = [_Counted(rng.sample(range(300), 30)) for _ in range(pool)]
    _Counted.ands = 0
    got = mmr_select(scores, sets, k, 0.7, 0.8)
    assert got == eager_mmr(scores, [frozenset(t) for t in sets], k, 0.7, 0.8)
    assert len(got) == k and _Counted.ands < 0.37 * pool * k


def test_shingles_see_the_same_text_through_markup():
    rst = "The :mod:`csv` module implements classes to read and write tabular data in CSV format."
    html = "The csv module implements classes to read and write tabular data in CSV format."
    other = "The json module implements classes to read and write data in JSON format."
    assert contained(shingles(html), shingles(rst)) >= 0.8
    assert contained(shingles(other), shingles(rst)) < 0.5
    assert shingles("") == frozenset() and contained(frozenset(), shingles(rst)) == 0.0
    assert shingles("two words") == frozenset({("two", "words")})


def test_mmr_pure_relevance_keeps_order():
    sets = [frozenset({1}), frozenset({1, 2}), frozenset({3})]
    assert mmr_select([3.0, 2.0, 1.0], sets, 3, 1.0, 1.01) == [0, 1, 2]

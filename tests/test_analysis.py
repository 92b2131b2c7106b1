from ragweb.analysis import Analyzer
import pytest
from ragweb.errors import ConfigError


def test_identifier_parts_match_words():
    a = Analyzer()
    q = set(a.query_terms("parse headers"))
    assert q <= set(a.terms("def parseHeaders(raw):"))
    assert q <= set(a.terms("def parse_headers(raw):"))


def test_stopwords_and_short_words_dropped():
    a = Analyzer()
    assert a.terms("the a of x I to be") == []


def test_stemming_can_be_turned_off():
    assert Analyzer(stemming=True).terms("running") == ["run"]
    assert Analyzer(stemming=False).terms("running") == ["running"]


def test_porter_is_accepted():
    assert Analyzer(stemming="porter").terms("generalization") == Analyzer(stemming="porter").terms("generalizations")


def test_other_language():
    assert Analyzer(language="german").terms("Häuser") == Analyzer(language="german").terms("Häusern")


def test_unknown_language_is_a_config_error():
    with pytest.raises(ConfigError, match="klingon"):
        Analyzer(language="klingon")


def test_cjk_bigrams_same_at_index_and_query_time():
    a = Analyzer()
    doc = set(a.terms("東京都に住んでいます。서울특별시"))
    assert set(a.query_terms("東京都")) <= doc
    assert set(a.query_terms("서울")) <= doc
    assert "東京" in doc and "京都" in doc


def test_term_counts_match_terms():
    a = Analyzer()
    text = "Parse the HTTPServer headers; parse_headers parses headers."
    from collections import Counter
    assert a.term_counts(text) == Counter(a.terms(text))


def test_query_terms_sorted_and_distinct():
    a = Analyzer()
    assert a.query_terms("zeta alpha alpha") == ["alpha", "zeta"]

import unicodedata

import pytest
from ragweb import analysis
from ragweb.analysis import Analyzer
from ragweb.errors import ConfigError


def test_identifier_parts_match_words():
    a = Analyzer()
    q = set(a.query_terms("parse headers"))
    assert q <= set(a.terms("def parseHeaders(raw):"))
    assert q <= set(a.terms("def parse_headers(raw):"))


def test_stopwords_and_short_words_dropped():
    a = Analyzer()
    assert a.terms("the a of x I to be") == []


def test_contractions_leave_no_terms():
    a = Analyzer()
    assert a.terms("don't doesn't isn't won't you'll we've") == []
    assert a.query_terms("Why doesn't the script run?") == ["run", "script"]


def test_numbers_are_left_unstemmed_as_every_stemmer_leaves_them():
    # (the analyzer skips the stemmer for ASCII digits: numbers in logs and tables are many)
    import snowballstemmer
    for lang in analysis.snowball_languages():
        stem = snowballstemmer.stemmer(lang).stemWord
        an = Analyzer(language=lang)
        for word in ("10", "2026", "0042", "31415926535", "1" * 40):
            assert an.word_terms(word) == (stem(word),) == (word,), (lang, word)
    assert Analyzer(language="arabic").word_terms("١٢٣") == ("123",)  # (its digits are the stemmer's)


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


def test_a_dotted_number_and_a_one_letter_option_are_terms_of_their_own():
    a = Analyzer()
    terms = a.query_terms("Will ^0.2.5 pick up 0.3.0? Try 127.0.0.1, v1.2 or version 3. (ratio 0.5)")
    assert {"0.2.5", "0.3.0", "127.0.0.1", "1.2", "0.5"} <= set(terms)
    assert "3" not in terms and "3." not in terms  # a sentence's full stop is no decimal point
    assert a.term_counts("1.2.3 and 1.2.3 again")["1.2.3"] == 2
    assert "1.2.3" in a.span_terms("see 1.2.3")[0]
    # an index built before dotted terms analyses its questions as it was
    assert a.query_terms("install it with -g, not -gx or a-b") == ["-g", "gx", "instal"]
    assert "0.2.5" not in Analyzer(short_terms=False).query_terms("^0.2.5")


def test_a_special_parameter_is_a_term_of_its_own():
    # ("What is the difference between $* and $@?" had one term, "differ": search found any
    # page that differs, and bash's "Special Parameters" was not packed)
    a = Analyzer()
    assert a.query_terms("What is the difference between $* and $@?") == ["$*", "$@", "differ"]
    assert {"$?", "$#", "$$", "$!", "$1", "$<", "$^"} <= set(a.query_terms(
        "$? after it, $# counts, $$ is the pid, $! the job, $1 the first; make's $< and $^"))
    # a variable's name is a word, not a parameter; nor is a "$" inside a word
    assert not [t for t in a.query_terms("$HOME, $$VAR, $10x, a$b, US$5") if "$" in t]
    assert a.term_counts('"$@" and "$@" again')["$@"] == 2
    assert "$*" in a.span_terms("($*) Expands to the positional parameters")[0]
    # an index built before them analyses its questions as it was (`SHORT_TERMS` 1)
    old = Analyzer.of({"stemming": True, "language": "english", "short_terms": True})
    assert old.query_terms("the difference between $* and $@ in -e") == ["-e", "differ"]


def test_a_special_parameter_finds_the_section_that_names_it():
    from ragweb.engine import Engine
    eng = Engine.memory()
    eng.add_document("params.md", "# Special Parameters\n\n($*) Expands to the positional parameters.\n"
                     "\n($@) Expands to the positional parameters, each a word.\n")
    eng.add_document("diff.md", "# Differences\n\nThe shells differ. Each difference is listed.\n")
    eng.flush()
    assert eng.search("What is the difference between $* and $@?")[0].path == "params.md"


def test_versions_are_told_apart_by_search():
    from ragweb.engine import Engine
    eng = Engine.memory()
    eng.add_document("a.md", "# Caret\n\nA caret range ^0.2.5 stays below 0.3.0.\n")
    eng.add_document("b.md", "# Tilde\n\nA tilde range ~1.4.7 stays below 1.5.0.\n")
    eng.flush()
    assert [h.path for h in eng.search("what does ^0.2.5 allow")] == ["a.md"]
    assert [h.path for h in eng.search("what does ~1.4.7 allow")] == ["b.md"]


def test_related_terms_number_words_prefixes_and_abbreviations():
    rel = analysis.related_terms(["ten", "time", "maximum", "use"], {"10", "timeout", "max", "user", "us"})
    assert rel["ten"] == {"10": 1.0}
    assert rel["time"] == {"timeout": analysis.PREFIX_MATCH}
    assert rel["maximum"] == {"max": analysis.ABBREV_MATCH}
    assert "use" not in rel  # "user" starts with it but "use" is too short to be a prefix match


def test_a_long_word_is_looked_up_as_a_few_abbreviations_not_all_its_prefixes():
    # a pasted sequence or key: looking up every prefix made a search quadratic in its length
    word = "acgt" * 25_000
    forms = analysis.related_candidates([word])
    assert forms == {word[:n] for n in range(3, analysis.ABBREV_MAX + 1)}
    assert analysis.related_terms(["internationalization"], {"intl", "internation"}) == {
        "internationalization": {"internation": analysis.ABBREV_MATCH}}


def test_synonyms_of_the_trade_relate_in_english_only():
    an = analysis.Analyzer()
    syn = an.synonyms()
    delete, remove, erase = (an.word_terms(w)[0] for w in ("delete", "remove", "erase"))
    assert {remove, erase} <= syn[delete] and delete not in syn[delete]
    rel = analysis.related_terms([delete], {remove, "other"}, synonyms=syn)
    assert rel[delete] == {remove: analysis.SYNONYM_MATCH}
    assert delete not in analysis.related_terms([delete], {remove})  # without synonyms: none
    assert analysis.Analyzer(language="german").synonyms() == {}


def test_synonyms_follow_a_changed_list(monkeypatch):
    an = analysis.Analyzer()
    assert an.word_terms("widget")[0] not in an.synonyms()
    monkeypatch.setattr(analysis, "SYNONYMS", "widget gadget")
    assert an.synonyms()[an.word_terms("widget")[0]] == {an.word_terms("gadget")[0]}


@pytest.mark.parametrize("document, question", [
    ("The cafe\u0301 serves cre\u0300me bru\u0302le\u0301e.", "café crème brûlée"),     # decomposed (macOS)
    ("\u1100\u1161\u11a8 \u1109\u1165 \u1112\u1161\u11ab\u1100\u1173\u11af", "각 서 한글"),  # Korean as jamo
    ("The \ufb01le is a \uff50\uff59\uff54\uff48\uff4f\uff4e script", "file python"),  # a ligature, full width
])
def test_text_and_questions_are_read_in_one_unicode_form(document, question):
    an = Analyzer()
    wanted = set(an.query_terms(question))
    assert wanted and wanted <= set(an.term_counts(document)) and wanted <= an.span_terms(document)[0]
    assert wanted <= set(an.terms(document))
    assert set(an.word_terms(document.split()[1])) <= set(an.terms(document))


def test_an_index_built_without_the_unicode_form_is_read_as_it_was_built():
    old = Analyzer.of({"stemming": True, "language": "english", "short_terms": True})
    assert "unicode" not in old.settings and old.term_counts("cafe\u0301") == {"cafe": 1}
    assert Analyzer().settings["unicode"] == "nfkc" and Analyzer(latin=False).term_counts("cafe\u0301") == {"café": 1}


def bold(text: str) -> str:
    """``text`` in nroff's bold, each character struck over itself."""
    return "".join(c if c == " " else c + "\b" + c for c in text)


def test_a_word_struck_over_as_nroff_writes_bold_and_underline_reads_as_shown():
    # Postfix's *_README files (html2readme) write each title in bold: "Pregreet test" was the
    # words "p", "pr", "re", "eg" ..., so no question found the section by its title
    a = Analyzer()
    assert a.term_counts(bold("Pregreet test")) == a.term_counts("Pregreet test") == {"pregreet": 1, "test": 1}
    assert a.terms("$ " + bold("gzcat opendkim-x.y.z.tar.gz")) == a.terms("$ gzcat opendkim-x.y.z.tar.gz")
    assert a.terms("_\bs_\bt_\br_\bi_\bn_\bg") == a.terms("string")  # (underline)
    assert a.terms("a\b\bb c\b") == a.terms("a\b\bb c\b")  # (a lone backspace stays: it strikes nothing)
    old = Analyzer.of({"stemming": True, "language": "english", "short_terms": True})
    assert "pregreet" not in old.term_counts(bold("Pregreet"))  # (an index without the form: as built)


def test_a_decomposed_word_is_marked_whole_where_it_matched():
    from ragweb.cli import _highlighter
    from ragweb.facade import _marks
    an, text = Analyzer(), "Le cafe\u0301 est ouvert"
    assert _marks(an, text, set(an.query_terms("café"))) == [[3, 8]]
    assert _highlighter(an.query_terms("café"), an)(text) == "Le \x1b[1;33mcafe\u0301\x1b[0m est ouvert"


@pytest.mark.parametrize("document, question, language", [
    ("हिन्दी भारत की राजभाषा है और संविधान में लिखी है।", "राजभाषा संविधान", "hindi"),   # vowel signs, virama
    ("বাংলা ভাষা বাংলাদেশের রাষ্ট্রভাষা।", "রাষ্ট্রভাষা", "english"),                  # Bengali
    ("שָׁלוֹם עֲלֵיכֶם, the greeting", "שלום", "english"),                         # Hebrew points left out
    ("كَتَبَ الطالبُ الدرسَ", "كتب الطالب", "arabic"),                               # Arabic vowel marks
])
def test_a_word_holds_its_combining_marks(document, question, language):
    """`\\w+` split a word at each combining mark: Hindi text gave no term at all ("has no
    indexable words"), and pointed Hebrew matched no unpointed question."""
    an = Analyzer(language=language)
    wanted = set(an.query_terms(question))
    assert wanted and wanted <= set(an.term_counts(document)) and wanted <= an.span_terms(document)[0]


def test_an_index_built_before_words_held_their_marks_is_read_as_it_was_built():
    old = Analyzer.of({"stemming": False, "language": "english", "short_terms": True, "unicode": "nfkc"})
    assert "words" not in old.settings and old.term_counts("שָׁלוֹם") != {"שלום": 1}
    assert Analyzer().settings["words"] == "marks" and Analyzer(stemming=False).term_counts("שָׁלוֹם") == {"שלום": 1}


def test_a_pointed_word_is_marked_whole_where_it_matched():
    from ragweb.facade import _marks
    an, text = Analyzer(), "He said שָׁלוֹם today"
    assert _marks(an, text, set(an.query_terms("שלום"))) == [[8, 8 + len("שָׁלוֹם")]]


def test_turkish_dotted_capital_i_is_an_i():
    """"İ".lower() is "i" and a combining dot, which the word kept: "İndirme" was not "indirme"."""
    tr = Analyzer(language="turkish")
    assert set(tr.query_terms("indirme")) <= set(tr.terms("İndirme tamamlandıktan sonra"))
    an = Analyzer()
    assert an.terms("İstanbul") == an.terms("Istanbul") == an.terms("i\u0307stanbul") == ["istanbul"]


@pytest.mark.parametrize("document, question, language", [
    ("Set the pass\u200bword with the vault tool.", "password", "english"),        # zero-width space
    ("Die Konfigu\u00adrations\u00addatei liegt hier.", "Konfigurationsdatei", "german"),  # soft hyphen
    ("the data\u2060base and the file\ufeffsystem", "database filesystem", "english"),  # word joiners
    ("هذه قاعـــدة البيانات", "قاعدة", "english"),                                   # tatweel
    ("من می\u200cخواهم بروم", "میخواهم", "english"),                                  # ZWNJ
    ("من میخواهم بروم", "می\u200cخواهم", "english"),
])
def test_invisible_characters_inside_a_word_are_left_out(document, question, language):
    an = Analyzer(language=language)
    wanted = set(an.query_terms(question))
    assert wanted and wanted <= set(an.terms(document)) and wanted <= an.span_terms(document)[0]
    assert wanted <= set(an.term_counts(document))


def test_a_word_with_an_invisible_character_is_marked_whole_in_the_original_text():
    from ragweb.cli import _highlighter
    from ragweb.facade import _marks
    an, text = Analyzer(), "Set the pass\u200bword now"
    assert _marks(an, text, set(an.query_terms("password"))) == [[8, 8 + len("pass\u200bword")]]
    assert _highlighter(an.query_terms("password"), an)(text) == "Set the \x1b[1;33mpass\u200bword\x1b[0m now"


def test_a_soft_hyphen_of_an_html_page_is_no_break_in_the_word():
    from ragweb.engine import Engine
    eng = Engine.memory()
    eng.add_document("hilfe.html", "<html><body><h1>Hilfe</h1><p>Die Konfigu&shy;rations&shy;datei liegt "
                                   "im Home-Verzeichnis.</p></body></html>\n")
    eng.add_document("other.md", "# Other\n\nDie Datei wird beim Start gelesen, nicht die Konfiguration.\n")
    eng.flush()
    hits = eng.search("Konfigurationsdatei")
    assert hits[0].path == "hilfe.html" and hits[0].terms == Analyzer().query_terms("Konfigurationsdatei")


def test_letters_are_case_folded():
    an = Analyzer()
    assert an.terms("Straße") == an.terms("strasse") == an.terms("STRASSE")
    assert an.terms("ΣΟΦΟΣ") == an.terms("σοφος") == an.terms("σοφοσ")
    assert an.terms("ASCII Words stay") == ["ascii", "word", "stay"]


def test_rare_cjk_ideographs_and_iteration_marks_are_kept():
    an = Analyzer()
    assert an.terms("時々") == ["時々"]
    assert "人々" in an.terms("人々の生活") and "〆切" in an.terms("〆切") and "〇年" in an.terms("二〇年")
    assert set(an.query_terms("𠮷野家")) == {"𠮷野", "野家"} and "𠮷野" in an.terms("吉野家と𠮷野家")
    assert analysis.is_cjk_char("𠮷") and analysis.is_cjk_char("々")


@pytest.mark.parametrize("document, question", [
    ("ภาษาไทยไม่มีการเว้นวรรค การค้นหาข้อมูลในฐานข้อมูลควรทำงานได้ดี", "ค้นหา"),   # Thai
    ("ภาษาไทยไม่มีการเว้นวรรค การค้นหาข้อมูลในฐานข้อมูลควรทำงานได้ดี", "ฐานข้อมูล"),
    ("ພາສາລາວບໍ່ມີການຍະຫວ່າງລະຫວ່າງຄໍາ", "ພາສາລາວ"),                               # Lao
    ("ភាសាខ្មែរមិនមានដកឃ្លារវាងពាក្យទេ", "ភាសាខ្មែរ"),                                  # Khmer
    ("မြန်မာဘာသာစကားသည်စကားလုံးများကြားတွင်နေရာလွတ်မရှိပါ", "ဘာသာစကား"),          # Myanmar
])
def test_a_script_without_spaces_is_read_as_bigrams_of_clusters(document, question):
    """Thai was cut at each vowel sign and tone mark: "ค้นหา" gave one piece, "นหา", which the
    document, cut elsewhere, did not hold."""
    an = Analyzer()
    wanted = set(an.query_terms(question))
    assert len(wanted) >= 2 and wanted <= set(an.terms(document)) and wanted <= set(an.term_counts(document))
    assert an.terms("๒๕๖๗") == ["๒๕๖๗"]  # a number stays a word


def test_an_index_built_before_folding_is_read_as_it_was_built():
    old = Analyzer.of({"stemming": False, "language": "english", "short_terms": True, "unicode": "nfkc",
                       "words": "marks"})
    new = Analyzer(stemming=False)
    assert not old.folds and "folds" not in old.settings and new.settings["folds"] == analysis.FOLD_FORM
    for text, before, after in [("İstanbul", ["i\u0307stanbul"], ["istanbul"]),
                                ("Straße", ["straße"], ["strasse"]),
                                ("pass\u200bword", ["pass", "word"], ["password"]),
                                ("قاعـــدة", ["قاعـــدة"], ["قاعدة"]),
                                ("時々", ["時"], ["時々"]),
                                ("𠮷野家", ["野家"], ["𠮷野", "野家"]),
                                ("ค้นหา", ["นหา"], ["ค้น", "นห", "หา"])]:
        assert old.terms(text) == before and old.term_counts(text) == dict.fromkeys(before, 1), text
        assert new.terms(text) == after, text


def test_a_users_synonym_group_in_a_script_with_marks_relates_its_words():
    # (a group was split as `\w+` splits it: "हिन्दी" into letters too short to be terms, so a
    # `pack.synonyms` group in Hindi, Thai or with a joiner related nothing)
    an = Analyzer()
    (hindi,) = an.query_terms("हिन्दी")
    (hindustani,) = an.query_terms("हिंदुस्तानी")
    assert an.synonyms(["हिन्दी हिंदुस्तानी"]).get(hindi) == frozenset({hindustani})


def test_the_stemmers_version_is_the_installed_ones():
    # (read from its .dist-info folder's name: importlib.metadata took 140 ms of the page's boot)
    from importlib.metadata import version
    assert analysis.STEMMER_VERSION == version("snowballstemmer")


def test_a_word_and_its_particle_are_also_read_as_one_word():
    a = Analyzer()
    assert a.compound_terms("how do retries back off?") == {"backoff": "back", "retriesback": "retri"}
    assert a.compound_terms("does it fall back?") == {"fallback": "fall"}
    assert a.compound_terms("When does a request time out, and how do I log in?") == {"timeout": "time", "login": "log"}
    assert a.compound_terms("set up the server") == {"setup": "set"}
    # only spaces between them, each word whole, never a stopword first, never a noun pair
    assert a.compound_terms("back, off; time-out; back\noff") == {}
    assert a.compound_terms("get it in on time") == {}
    # a noun and a preposition are not a verb and its particle (a reviewer's repro: "login"
    # pages lifted for a question on where an error log is)
    for noun in ("where is the error log in production", "is every attempt written to a log in the database",
                 "which log in the service is rotated", "how does the plug in work"):
        assert "login" not in a.compound_terms(noun) and "plugin" not in a.compound_terms(noun), noun
    assert a.compound_terms("how do I log in to the dashboard?") == {"login": "log"}
    assert a.compound_terms("the user name and file name") == {}
    # already one word in the question: nothing to add
    assert "backoff" not in a.compound_terms("does backoff back off")


def test_a_question_finds_the_word_its_two_words_are_written_as():
    from ragweb import engine as engine_mod
    from ragweb.engine import Engine
    eng = Engine.memory()
    eng.add_document("retry.md", "# Retry policy\n\nDelays grow by exponential backoff with full jitter.\n")
    eng.add_document("headers.md", "# Headers\n\nSerialise the headers back to wire format before you send them.\n")
    eng.flush()
    hits = eng.search("how do retries back off?")
    assert hits[0].path == "retry.md" and "backoff" in hits[0].terms
    packed = eng.pack("how do retries back off?", 20)
    assert [s["path"] for s in packed["snippets"]][:1] == ["retry.md"], packed
    engine_mod.COMPOUND_MATCH = 0.0
    try:
        assert "backoff" not in eng.search("how do retries back off?", mmr=False)[0].terms
    finally:
        engine_mod.COMPOUND_MATCH = 1.0


@pytest.mark.parametrize("document, question", [
    ("Send your résumé to the hiring team", "where do I send my resume"),
    ("A naïve Bayes classifier", "naive bayes"),
    ("Der Server läuft in Zürich", "zurich"),
    ("El año fiscal empieza en enero", "ano fiscal"),
    ("Tiếng Việt không dấu", "tieng viet"),
    ("the naïveBayes model", "naiveBayes"),
    ("resume the download", "Résumé"),            # and the other way round
])
def test_a_latin_letters_accents_are_left_out_on_both_sides(document, question):
    """A question typed without accents found no document that writes them ("resume" never
    matched "résumé"), nor the other way round."""
    for an in (Analyzer(), Analyzer(stemming=False), Analyzer(language="spanish")):
        wanted = set(an.query_terms(question)) - set(an.query_terms("where do I send my"))
        assert wanted and wanted <= set(an.terms(document)) and wanted <= set(an.term_counts(document))


def test_letters_of_their_own_and_other_scripts_keep_their_marks():
    an = Analyzer(stemming=False)
    assert an.terms("Ørsted Æsir łódź") == ["ørsted", "æsir", "łodz"]  # (ó folds; ø, æ, ł are letters)
    assert an.terms("йод ёлка ελληνικά") == ["йод", "ёлка", "ελληνικά"]  # (Cyrillic, Greek: as written)


def test_an_index_built_before_latin_folding_is_read_as_it_was_built():
    settings = {"stemming": True, "language": "english", "short_terms": True, "unicode": "nfkc",
                "words": "marks", "folds": "fold1"}
    old, new = Analyzer.of(settings), Analyzer.of({**settings, "folds": analysis.FOLD_FORM})
    assert old.folds and not old.latin and old.settings == settings
    assert new.latin and new.settings["folds"] == analysis.FOLD_FORM != "fold1"
    assert old.terms("Résumé İstanbul") == ["résumé", "istanbul"] and old.term_counts("résumé") == {"résumé": 1}
    assert new.terms("Résumé İstanbul") == ["resum", "istanbul"]


@pytest.mark.parametrize("language, words", [
    ("portuguese", ["informação", "informações"]),      # (fold2: "informaca", "informaco")
    ("portuguese", ["configuração", "configurações"]),
    ("french", ["créée", "créées", "créer"]),            # (fold2: "cree", "cree", "cre")
    ("romanian", ["configurație", "configurații"]),      # (fold2: "configurat", "configur")
])
def test_a_stemmer_that_reads_accents_still_joins_a_words_forms(language, words):
    """Accents left out before stemming hid from Portuguese's, French's and Romanian's stemmers
    the endings they remove ("-ção", "-ções", "-ée", "-ații"): a word's forms, one term each
    with fold1, were two; a question in the singular missed the page in the plural."""
    an = Analyzer(language=language)
    assert len({an.word_terms(w) for w in words}) == 1, [an.word_terms(w) for w in words]
    fold1 = Analyzer(language=language, latin=False)
    assert len({fold1.word_terms(w) for w in words}) == 1  # (as before the accents were left out)


@pytest.mark.parametrize("language, document, question", [
    ("french", "Envoyez votre résumé", "resume"),
    ("french", "Les fichiers créés hier", "crees"),
    ("french", "La fenêtre principale", "fenetre"),
    ("portuguese", "A informação do usuário", "usuario"),
    ("german", "Der Server läuft in Zürich", "zurich"),
    ("spanish", "El año fiscal", "ano"),
    ("romanian", "Fișierele mele", "fisierele"),
    ("french", "le modèle naïveBayes", "naiveBayes"),
])
def test_a_question_without_accents_finds_them_in_any_language(language, document, question):
    an = Analyzer(language=language)
    wanted = set(an.query_terms(question))
    assert wanted and wanted <= set(an.terms(document)) and wanted <= set(an.term_counts(document))


def test_how_accents_are_left_out_is_recorded_and_an_index_is_read_as_it_was_built():
    """English (and Porter, and no stemming) leave them out before stemming, as fold2 did:
    such an index of fold2 is this version's. A stemmer that reads accents stems first
    (fold3): a fold2 index of another language is read as built and rebuilt."""
    from ragweb.config import default_config
    from ragweb.engine import Engine, OLDER_VERSION, analysis_settings
    assert Analyzer().settings["folds"] == Analyzer(stemming="porter").settings["folds"] == "fold2"
    assert Analyzer(stemming=False, language="french").settings["folds"] == "fold2"
    assert Analyzer(language="french").settings["folds"] == "fold3"
    base = {"stemming": True, "short_terms": True, "unicode": "nfkc", "words": "marks"}
    for folds in ("fold1", "fold2", "fold3"):
        an = Analyzer.of({**base, "language": "french", "folds": folds})
        assert an.settings["folds"] == folds
    fold2 = Analyzer.of({**base, "language": "french", "folds": "fold2"})
    assert fold2.word_terms("créée") == ("cree",) and fold2.word_terms("créer") == ("cre",)  # (as built)
    cfg = default_config()
    assert analysis_settings(cfg)["folds"] == "fold2"
    cfg["index"]["language"] = "french"
    assert analysis_settings(cfg)["folds"] == "fold3"
    eng = Engine.memory(cfg)
    eng._set_meta("analysis", {**analysis_settings(cfg), "folds": "fold2"})
    eng._load_state()
    assert eng.settings_change() == OLDER_VERSION and eng.analyzer.word_terms("créer") == ("cre",)
    eng.add_document("a.md", "Les fichiers créés hier.\n")
    eng.reread()
    assert not eng.settings_changed and eng.settings["folds"] == "fold3"
    assert eng.search("fichier créé")[0].path == "a.md"


@pytest.mark.parametrize("language", ["english", "french", "portuguese"])
def test_a_latin_letters_marks_with_no_one_character_for_them_are_left_out_too(language):
    """Yoruba "ọ̀rọ̀" kept its grave accents once "ọ" was read as "o" (Unicode has no one
    character for "ọ̀"), so neither "oro" nor "ọrọ" found it; Lithuanian "ą̃žuolas" likewise."""
    an = Analyzer(language=language)
    for written, typed in [("ọ̀rọ̀", "oro"), ("ọ̀rọ̀", "ọrọ"), ("ą̃žuolas", "azuolas"), ("x̄yz", "xyz")]:
        for form in ("NFC", "NFD"):
            assert an.terms(unicodedata.normalize(form, written)) == an.terms(typed), (written, form)


@pytest.mark.parametrize("language", ["english", "french", "portuguese"])
def test_an_identifiers_parts_are_split_without_the_marks_no_one_character_holds(language):
    """fold3 kept those marks in the word it splits, where `_PART_RE` ends a part at each:
    French "ọ̀rọ̀Bar" was one term ("oro" and "bar" missed it), "ą̃žuolasTree" had "zuol"
    for "azuolas", and "x̀" was the one-letter term "x", which English's fold2 has not."""
    an = Analyzer(language=language)
    for written, typed in [("ọ̀rọ̀Bar", "oroBar"), ("ọ̀rọ̀_bar", "oro_bar"), ("ą̃žuolasTree", "azuolasTree"),
                           ("x̀", "x"), ("ą̃b́̀Cd̀_x̀́", "abCd_x")]:
        got, wanted = an.terms(written), an.terms(typed)  # (the whole word stems as written)
        assert len(got) == len(wanted) and got[1:] == wanted[1:], (written, got, wanted)
        assert set(an.term_counts(written)) == set(got)

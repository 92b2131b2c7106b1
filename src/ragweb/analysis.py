"""Tokens for search: the same analysis at index time and at query time.

A text is split into word runs (letters, digits, ``_``, combining marks). Each run is
lowercased (case-folded: "Straße" is "strasse"; an invisible joiner or soft hyphen inside it
is left out); code identifiers also yield their parts (``parseHeaders`` and ``parse_headers``
give ``parse`` and ``headers`` as well as the whole word); CJK runs become overlapping
character bigrams, and runs of Thai, Lao, Myanmar or Khmer, written without spaces, bigrams of
their clusters; words shorter than 2 characters and stopwords are dropped; the rest is stemmed
with Snowball when enabled. Each distinct raw word is analysed once and memoised, which
is what makes pure-Python analysis fast (the stemmer dominates otherwise).

`related_terms` relates terms that say the same in other words: a longer word a term
starts, its abbreviation, a number word's digits, a synonym of the trade. Packing matches
sentences by it (synonyms included), and a search looks for a question term the index
lacks in its related indexed terms (synonyms left out).
"""

from __future__ import annotations

import bisect
import os
import re
import unicodedata
from collections import _count_elements  # C helper behind Counter.update
from itertools import chain

import snowballstemmer

from ragweb.errors import ConfigError, RagError

WORD_RE = re.compile(r"\w+")


# The combining marks (Unicode 14's categories Mn, Mc, Me: written out, so that the CLI and the
# page, whose Python may know another Unicode version, read words alike), but those of the
# scripts written without spaces between words (Thai, Lao, Tibetan, Myanmar, Khmer: a run of
# their text is not a word, and a mark in it is where `\\w+` has always split it; `Analyzer.folds`
# reads their runs whole, `_SPACELESS_MARKS`)
_MARK_RANGES = """
0300-036F 0483-0489 0591-05BD 05BF 05C1-05C2 05C4-05C5 05C7 0610-061A 064B-065F 0670
06D6-06DC 06DF-06E4 06E7-06E8 06EA-06ED 0711 0730-074A 07A6-07B0 07EB-07F3 07FD 0816-0819
081B-0823 0825-0827 0829-082D 0859-085B 0898-089F 08CA-08E1 08E3-0903 093A-093C 093E-094F
0951-0957 0962-0963 0981-0983 09BC 09BE-09C4 09C7-09C8 09CB-09CD 09D7 09E2-09E3 09FE
0A01-0A03 0A3C 0A3E-0A42 0A47-0A48 0A4B-0A4D 0A51 0A70-0A71 0A75 0A81-0A83 0ABC 0ABE-0AC5
0AC7-0AC9 0ACB-0ACD 0AE2-0AE3 0AFA-0AFF 0B01-0B03 0B3C 0B3E-0B44 0B47-0B48 0B4B-0B4D
0B55-0B57 0B62-0B63 0B82 0BBE-0BC2 0BC6-0BC8 0BCA-0BCD 0BD7 0C00-0C04 0C3C 0C3E-0C44
0C46-0C48 0C4A-0C4D 0C55-0C56 0C62-0C63 0C81-0C83 0CBC 0CBE-0CC4 0CC6-0CC8 0CCA-0CCD
0CD5-0CD6 0CE2-0CE3 0D00-0D03 0D3B-0D3C 0D3E-0D44 0D46-0D48 0D4A-0D4D 0D57 0D62-0D63
0D81-0D83 0DCA 0DCF-0DD4 0DD6 0DD8-0DDF 0DF2-0DF3 135D-135F 1712-1715 1732-1734 1752-1753
1772-1773 180B-180D 180F 1885-1886 18A9 1920-192B 1930-193B 1A17-1A1B 1A55-1A5E 1A60-1A7C
1A7F 1AB0-1ACE 1B00-1B04 1B34-1B44 1B6B-1B73 1B80-1B82 1BA1-1BAD 1BE6-1BF3 1C24-1C37
1CD0-1CD2 1CD4-1CE8 1CED 1CF4 1CF7-1CF9 1DC0-1DFF 20D0-20F0 2CEF-2CF1 2D7F 2DE0-2DFF
302A-302F 3099-309A A66F-A672 A674-A67D A69E-A69F A6F0-A6F1 A802 A806 A80B A823-A827 A82C
A880-A881 A8B4-A8C5 A8E0-A8F1 A8FF A926-A92D A947-A953 A980-A983 A9B3-A9C0 A9E5 AA29-AA36
AA43 AA4C-AA4D AA7B-AA7D AAB0 AAB2-AAB4 AAB7-AAB8 AABE-AABF AAC1 AAEB-AAEF AAF5-AAF6
ABE3-ABEA ABEC-ABED FB1E FE00-FE0F FE20-FE2F 101FD 102E0 10376-1037A 10A01-10A03 10A05-10A06
10A0C-10A0F 10A38-10A3A 10A3F 10AE5-10AE6 10D24-10D27 10EAB-10EAC 10F46-10F50 10F82-10F85
11000-11002 11038-11046 11070 11073-11074 1107F-11082 110B0-110BA 110C2 11100-11102
11127-11134 11145-11146 11173 11180-11182 111B3-111C0 111C9-111CC 111CE-111CF 1122C-11237
1123E 112DF-112EA 11300-11303 1133B-1133C 1133E-11344 11347-11348 1134B-1134D 11357
11362-11363 11366-1136C 11370-11374 11435-11446 1145E 114B0-114C3 115AF-115B5 115B8-115C0
115DC-115DD 11630-11640 116AB-116B7 1171D-1172B 1182C-1183A 11930-11935 11937-11938
1193B-1193E 11940 11942-11943 119D1-119D7 119DA-119E0 119E4 11A01-11A0A 11A33-11A39
11A3B-11A3E 11A47 11A51-11A5B 11A8A-11A99 11C2F-11C36 11C38-11C3F 11C92-11CA7 11CA9-11CB6
11D31-11D36 11D3A 11D3C-11D3D 11D3F-11D45 11D47 11D8A-11D8E 11D90-11D91 11D93-11D97
11EF3-11EF6 16AF0-16AF4 16B30-16B36 16F4F 16F51-16F87 16F8F-16F92 16FE4 16FF0-16FF1
1BC9D-1BC9E 1CF00-1CF2D 1CF30-1CF46 1D165-1D169 1D16D-1D172 1D17B-1D182 1D185-1D18B
1D1AA-1D1AD 1D242-1D244 1DA00-1DA36 1DA3B-1DA6C 1DA75 1DA84 1DA9B-1DA9F 1DAA1-1DAAF
1E000-1E006 1E008-1E018 1E01B-1E021 1E023-1E024 1E026-1E02A 1E130-1E136 1E2AE 1E2EC-1E2EF
1E8D0-1E8D6 1E944-1E94A E0100-E01EF
"""


def _mark_ranges() -> list[tuple[int, int]]:
    """`_MARK_RANGES` as (first, last) code points."""
    out = []
    for item in _MARK_RANGES.split():
        a, _, b = item.partition("-")
        out.append((int(a, 16), int(b or a, 16)))
    return out


_MARKS = "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b != a else "") for a, b in _mark_ranges())
# A word with the combining marks inside or after it: a Devanagari, Bengali or Tamil word's
# vowel signs and viramas, Hebrew points, Arabic vowel marks (`\w+` split "हिन्दी" into
# letters, too short to be terms: Hindi text had no words); a decomposed "café"
MARKED_WORD_RE = re.compile(f"\\w+(?:[{_MARKS}]+\\w*)*")
WORD_FORM = "marks"  # how words are found (`MARKED_WORD_RE`), as an index's settings record it
# The combining marks of the scripts written without spaces (Thai, Lao, Myanmar, Khmer; Unicode 14)
_SPACELESS_MARKS = ("\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ecd\u102b-\u103e\u1056-\u1059"
                    "\u105e-\u1060\u1062-\u1064\u1067-\u106d\u1071-\u1074\u1082-\u108d\u108f\u109a-\u109d"
                    "\u17b4-\u17d3\u17dd\ua9e5\uaa7b-\uaa7d")
# Invisible characters inside a word that are no part of it: the soft hyphen (HTML's &shy;),
# zero-width space, ZWNJ and ZWJ (Persian "می‌خواهم"), word joiner, zero-width no-break space
_JOINER_RANGES = ((0x00AD, 0x00AD), (0x200B, 0x200D), (0x2060, 0x2060), (0xFEFF, 0xFEFF))
_JOINERS = "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b != a else "") for a, b in _JOINER_RANGES)
# A word as `Analyzer.folds` reads it: `MARKED_WORD_RE`'s, through the invisible joiners too, and
# a run of a script written without spaces whole, its marks and all (cut into clusters later)
FOLDED_WORD_RE = re.compile(f"\\w+(?:[{_MARKS}{_SPACELESS_MARKS}{_JOINERS}]+\\w*)*")
# A word as written, where a caller marks the words of the original text (the widest form: an
# analyzer's `word_terms` of it are those of the words it reads there)
SHOWN_WORD_RE = FOLDED_WORD_RE
# Marks a writer may leave out, which a word is read without: Hebrew points and cantillation,
# Arabic vowel marks ("שָׁלוֹם" is "שלום", as most text writes it)
_OPTIONAL_MARKS = {c: None for a, b in _mark_ranges() for c in range(max(a, 0x0591), min(b, 0x06FE) + 1)}
# What `Analyzer.folds` deletes from a word: those marks, the joiners and the Arabic tatweel,
# which stretches a letter ("قاعـــدة"); and a test for whether a word holds any (cheaper than
# translating every word: most hold none)
_FOLD_DELETES = {**_OPTIONAL_MARKS, **{c: None for a, b in _JOINER_RANGES for c in range(a, b + 1)}, 0x0640: None}
_FOLD_DELETES_RE = re.compile("[%s]" % "".join(re.escape(chr(c)) for c in sorted(_FOLD_DELETES)))


def marked_words(text: str) -> list[str]:
    """The words of ``text`` with their combining marks (`MARKED_WORD_RE`): `WORD_RE`'s for
    ASCII text, which has none, at half the cost."""
    return WORD_RE.findall(text) if text.isascii() else MARKED_WORD_RE.findall(text)


def folded_words(text: str) -> list[str]:
    """The words of ``text`` as `Analyzer.folds` reads them (`FOLDED_WORD_RE`; `WORD_RE`'s for
    ASCII text)."""
    return WORD_RE.findall(text) if text.isascii() else FOLDED_WORD_RE.findall(text)


def _fold(word: str) -> str:
    """``word`` case-folded ("Straße" is "strasse"), a dotted capital I (Turkish "İ", which
    folds to "i" and a combining dot) as "i"."""
    word = word.casefold()
    return word.replace("i\u0307", "i") if "\u0307" in word else word


def _latin_folds() -> dict[int, str]:
    """A Latin letter with accents -> the ASCII letter it is written on ("é" -> "e", "ñ" ->
    "n", "ǘ" -> "u"): Latin-1, Latin Extended-A and -B and Latin Extended Additional, each
    letter whose canonical decomposition is an ASCII letter and combining marks only (those
    decompositions never change between Unicode versions, so the CLI and the page agree).
    Letters of their own, "ø", "æ", "ł", "ı", are left as they are."""
    out = {}
    for first, last in ((0x00C0, 0x024F), (0x1E00, 0x1EFF)):
        for c in range(first, last + 1):
            parts = unicodedata.normalize("NFD", chr(c))
            if len(parts) > 1 and parts[0].isascii() and parts[0].isalpha() \
                    and all(0x0300 <= ord(m) <= 0x036F for m in parts[1:]):
                out[c] = parts[0]
    return out


_LATIN_FOLDS = _latin_folds()  # (`Analyzer.latin`: a word is read through it before it is
                                # split or stemmed, so "résumé" and "resume" stem alike and
                                # "naïveBayes" splits as "naiveBayes" does)
# The accents a letter keeps once `_LATIN_FOLDS` has read it, where Unicode has no one character
# for the letter with all its marks (Yoruba "ọ̀" is "ọ" and a grave accent, Lithuanian "ą̃"):
# combining marks after an ASCII letter, left out too
_LATIN_MARKS_RE = re.compile("(?<=[A-Za-z])[\u0300-\u036f]+")


def _latin_folded(text: str) -> str:
    """``text`` with its Latin letters' accents left out (`_LATIN_FOLDS`, `_LATIN_MARKS_RE`)."""
    text = text.translate(_LATIN_FOLDS)
    return _LATIN_MARKS_RE.sub("", text) if _LATIN_MARKS_RE.search(text) else text


# Terms that words alone miss, their parts being too short to be terms: a dotted number --
# a version, an address, a decimal ("0.2.5", "127.0.0.1", "0.5") -- and a one-letter
# command-line option ("-g", "-D")
# (each pattern starts with a literal, which the regex engine scans for fast)
_DOTTED_RE = re.compile(r"(?<!\d)\d+(?:\.\d+)+")
_HAS_DOTTED_RE = re.compile(r"\.(?<=\d\.)\d")
# A shell's, make's or Perl's special parameter: "$@", "$*", "$?", "$#", "$$", "$!", "$1", make's
# "$<" and "$^" (a "$" and one sign or digit, no word after it: "$HOME" and "$$VAR" are words).
# Words they are not, so "what is the difference between $* and $@?" had one term, "differ".
_PARAMETER_RE = re.compile(r"(?<![\w$])\$[*@#?$!0-9<^+](?![\w$])")
SHORT_TERMS = 2  # the short terms of this version, as an index's settings record them: 1 (True)
                 # a dotted number and a one-letter option, 2 also a special parameter
_OPTION_RE = re.compile(r"-(?<![\w-]-)[A-Za-z](?![\w-])")


def short_term_spans(text: str, parameters: bool = True):
    """(start, end) of each dotted number, one-letter option and, with ``parameters``,
    special parameter of ``text`` (`number_and_option_terms`' terms, where they stand)."""
    for pattern in (_OPTION_RE, _DOTTED_RE, _PARAMETER_RE)[:3 if parameters else 2]:
        yield from (m.span() for m in pattern.finditer(text))


def number_and_option_terms(text: str, parameters: bool = True) -> list[str]:
    """The dotted numbers and one-letter options of ``text`` and, with ``parameters``, its
    special parameters (`_PARAMETER_RE`), in order of kind, repeated."""
    out = _OPTION_RE.findall(text) if "-" in text else []
    if parameters and "$" in text:
        out += _PARAMETER_RE.findall(text)
    if _HAS_DOTTED_RE.search(text):
        out += _DOTTED_RE.findall(text)
    return out
# Parts of an identifier: "HTTPServer" -> HTTP, Server; "parse2Json" -> parse, 2, Json.
_PART_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")
_NEEDS_SPLIT_RE = re.compile(r"_|[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[A-Z]{2}[a-z]")
_CJK_BMP = "\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_CJK_RE = re.compile(f"[{_CJK_BMP}]+")
# `Analyzer.folds`: CJK with the iteration marks "々" "〆" "〇" and the ideographs beyond the
# BMP (Extension B to G: "𠮷"), which `_CJK_RE` left as one-character words, dropped; and runs
# of Thai, Lao, Myanmar and Khmer letters and marks (digits left out: a number stays a word)
_CJK_CHARS = f"\u3005-\u3007{_CJK_BMP}\U00020000-\U0003134f"
_RUNS_RE = re.compile(f"([{_CJK_CHARS}]+)|([\u0e00-\u0e4f\u0e5a-\u0ecf\u0eda-\u0eff\u1000-\u103f\u104a-\u108f"
                      f"\u109a-\u109f\u1780-\u17df\u17ea-\u17ff\ua9e0-\ua9ef\ua9fa-\ua9ff\uaa60-\uaa7f]+)")
_CJK_CHAR_RE = re.compile(f"[{_CJK_CHARS}]")
# A letter of those scripts with the marks that follow it (a vowel sign, a tone mark)
_CLUSTER_RE = re.compile(f".[{_SPACELESS_MARKS}]*", re.S)

# (the last lines: what a contraction leaves once its apostrophe splits it, "don't" -> "don"; as
# terms they matched every "you don't need ..." sentence)
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its
itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself
yourselves
ain aren couldn didn doesn don hadn hasn haven isn ll mightn mustn needn shan shouldn ve wasn
weren won wouldn
""".split())

UNICODE_FORM = "nfkc"  # the form of text whose words are read (`nfkc`), as an index's settings record it
FOLD_FORM = "fold2"  # how a word's letters are folded (`Analyzer.folds`, `Analyzer.latin`), as an index's settings record it
# (an English one, a Porter one or one without stemming; a stemmer that reads accents: `fold_form`)
FOLD_FORMS = {"fold1": (True, False), "fold2": (True, "first"), "fold3": (True, "after")}  # each form -> (folds, latin)
# The stemmers that read no accents (a word's accented letter is a consonant to them): a word's
# accents are left out before these stem it. Every other one has endings with accents ("-ção",
# "-ções", "-ée", "-ații"), which it would no longer see: it stems first, and its stems lose them.
FOLD_FIRST_STEMMERS = frozenset({"english", "porter"})


def fold_form(stemming: bool | str, language: str) -> str:
    """The `FOLD_FORMS` form this version folds the words of an index of these settings in:
    `FOLD_FORM` ("fold2": accents left out before stemming) where the stemmer reads none or
    there is none, else "fold3" (stemmed first)."""
    algorithm = "porter" if stemming == "porter" else language
    return FOLD_FORM if stemming is False or algorithm in FOLD_FIRST_STEMMERS else "fold3"
SPAN_MEMO = 20_000  # sentences and lines whose terms an analyzer remembers (about 10 MB at most)


# a typewriter's overstrike, as nroff writes bold ("E\bEx\bxa\bam..." for "Example") and
# underline ("_\bs"): the character struck over is the one shown (`nfkc`)
_OVERSTRIKE_RE = re.compile("[^\n\x08]\x08(?=[^\n\x08])")


def nfkc(text: str) -> str:
    """``text`` in Unicode's compatibility composed form: "café" written as "e" and a
    combining accent (macOS, Korean typed there as jamo) is the "café" a question holds, and
    "ｆｉｌｅ" (full width) or "ﬁle" (a ligature, from a PDF) is "file". Text struck over as
    nroff writes bold and underline reads as shown: Postfix's README files, made by
    html2readme, write each title so ("P\bPr\bre\beg\bgr\bre\bee\bet\bt" is "Pregreet").
    ASCII text and text in the form already are returned as they are (the usual case: no copy)."""
    if "\x08" in text:
        text = _OVERSTRIKE_RE.sub("", text)
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def _same(text: str) -> str:
    return text


def _stemmer_version() -> str:
    """The installed snowballstemmer's version ('' when its metadata cannot be read): from
    the name of its ``.dist-info`` folder beside it, as `importlib.metadata` would give it
    at many times the cost (in the page, 140 ms of its boot)."""
    try:
        site = os.path.dirname(os.path.dirname(os.path.abspath(snowballstemmer.__file__)))
        for name in os.listdir(site):
            if name.lower().startswith("snowballstemmer-") and name.endswith(".dist-info"):
                return name[len("snowballstemmer-"):-len(".dist-info")]
    except (OSError, TypeError, AttributeError):  # (a module that is not a file)
        pass
    try:
        from importlib.metadata import version
        return version("snowballstemmer")
    except Exception:  # (no metadata: a copied-in module)
        return ""


STEMMER_VERSION = _stemmer_version()
"""Recorded with an index (`ragweb.engine.analysis_settings`): another release stems some
words otherwise (2.2 stemmed "added" as "ad", 3.1 as "add"), so an index's terms are only
those of the question's stemmer when both were made by the same version."""

MIN_STEMMER = (3, 1)
"""The oldest snowballstemmer ragweb runs with (2.2 lacked seven of the listed languages)."""


def _check_stemmer_version() -> None:
    numbers = re.match(r"(\d+)\.(\d+)", STEMMER_VERSION)
    if numbers and tuple(map(int, numbers.groups())) < MIN_STEMMER:
        raise RagError(f"ragweb needs snowballstemmer {'.'.join(map(str, MIN_STEMMER))} or later, and this Python "
                       f"has {STEMMER_VERSION}: run `pip install -U snowballstemmer`")


def snowball_languages() -> list[str]:
    """Languages the Snowball stemmer knows (valid values of ``index.language``)."""
    return sorted(snowballstemmer.algorithms())


class Analyzer:
    """Turns text into search terms. Settings: stemming (bool or "porter"), language, and
    ``short_terms``: whether a dotted number and a one-letter option are terms of their own
    (`number_and_option_terms`; an index built before they were has none, and its questions are
    analysed as it was), and, from `SHORT_TERMS` 2, a special parameter ("$@": likewise); ``unicode_forms``: whether text is read in its `nfkc` form (an index
    built before it was is read as it was built); ``word_marks``: whether a word holds its
    combining marks (`MARKED_WORD_RE`; likewise); ``folds``: whether a word's letters are
    folded (likewise): case-folded, not lowercased ("Straße" is "strasse", Turkish "İndirme"
    "indirme"), read through the invisible characters inside it, which it is read without
    (`FOLDED_WORD_RE`: a soft hyphen, a zero-width space or joiner, the Arabic tatweel), CJK
    with its iteration marks and the ideographs beyond the BMP, and a run of Thai, Lao,
    Myanmar or Khmer, which has no spaces between words, as bigrams of clusters (a letter
    with its marks), as a CJK run is bigrams of characters; ``latin``: whether, folded, a
    Latin letter's accents are left out too ("Café" is "cafe", "naïve" "naive", as a
    question typed without them writes it; `_LATIN_FOLDS`; likewise): True, this version's
    way for the stemmer (`fold_form`), or "first" (before stemming: fold2) or "after" (a word
    split where its unaccented form is, its parts stemmed as written and their stems' accents
    left out: fold3).

    `normal` is the form a text's words are read in: a caller that finds words itself (the
    engine's own counting) reads them in it too."""

    def __init__(self, stemming: bool | str = True, language: str = "english", short_terms: bool | int = SHORT_TERMS,
                 unicode_forms: bool = True, word_marks: bool = True, folds: bool = True, latin: bool | str = True):
        self.stemming = stemming
        self.folds = folds
        if latin is True:
            latin = FOLD_FORMS[fold_form(stemming, language)][1]
        self.latin = latin = folds and latin
        self.language = language
        self.short_terms = short_terms
        self.parameters = short_terms >= 2  # (True, an index's 1, is below 2)
        self.unicode_forms = unicode_forms
        self.normal = nfkc if unicode_forms else _same
        self.word_marks = word_marks
        self.words = (folded_words if folds else marked_words) if word_marks else WORD_RE.findall
        self._runs = _RUNS_RE if folds else _CJK_RE  # (`_CJK_RE` has no groups: its runs are CJK)
        self._lower = _fold if folds else str.lower  # (for a word that is not ASCII)
        if stemming is False:
            self._stem = None
        else:
            algorithm = "porter" if stemming == "porter" else language
            if algorithm not in snowballstemmer.algorithms():
                raise ConfigError(
                    f"index.language: unknown Snowball language {algorithm!r}; "
                    f"choose one of: {', '.join(snowball_languages())}"
                )
            _check_stemmer_version()
            self._stem = snowballstemmer.stemmer(algorithm).stemWord
        self._stop = STOPWORDS if language == "english" else frozenset()
        self._memo: dict[str, tuple[str, ...]] = {}
        self._stems: dict[str, str] = {}  # identifier parts recur across many raw words
        self._spans: dict[str, tuple[frozenset, int]] = {}  # text -> its term set and word characters
        self._synonyms: tuple[tuple, dict[str, frozenset]] = ((), {})  # (what it was made of, the map)

    def trim(self, most: int) -> None:
        """Forget the memoised analyses of words once they hold more than ``most`` entries (a
        corpus of ids or hashes has a new word in every line: memory grew with it, unbounded)."""
        for memo in (self._memo, self._stems):  # (`_spans` has a cap of its own)
            if len(memo) > most:
                memo.clear()

    @classmethod
    def of(cls, settings: dict) -> "Analyzer":
        """The analyzer of an index's analysis ``settings`` (`Engine.settings`)."""
        # ("dotted": the name "short_terms" had in an index of one early version)
        folds, latin = FOLD_FORMS.get(settings.get("folds"), (False, False))
        return cls(settings["stemming"], settings["language"], settings.get("short_terms", settings.get("dotted", False)),
                   settings.get("unicode") == UNICODE_FORM, settings.get("words") == WORD_FORM, folds, latin)

    def synonyms(self, groups=()) -> dict[str, frozenset]:
        """Term -> the other terms of its groups, in this analyzer's terms: the `SYNONYMS`
        groups (English only) and a user's ``groups`` (strings of words, any language; config
        ``pack.synonyms``); made again when either changes."""
        key = (SYNONYMS, tuple(groups))
        if self._synonyms[0] != key:
            builtin = SYNONYMS.replace("\n", "|").split("|") if self.language == "english" else []
            self._synonyms = (key, self.group_terms(builtin + list(groups)))
        return self._synonyms[1]

    def group_terms(self, groups) -> dict[str, frozenset]:
        """Term -> the other terms of its groups among ``groups`` (strings of words, as
        config ``pack.synonyms`` writes them), in this analyzer's terms (`synonym_groups`)."""
        return synonym_groups(self.word_terms, groups, lambda group: self.words(self.normal(group)))

    @property
    def settings(self) -> dict:
        """The settings that define the terms; stored in the index so queries match it."""
        return {"stemming": self.stemming, "language": self.language, "short_terms": self.short_terms,
                **({"unicode": UNICODE_FORM} if self.unicode_forms else {}),
                **({"words": WORD_FORM} if self.word_marks else {}),
                **({"folds": next(k for k, v in FOLD_FORMS.items() if v == (True, self.latin or False))}
                   if self.folds else {})}

    def _term(self, word: str) -> str | None:
        if len(word) < 2 or word in self._stop:
            return None
        if self._stem is None or (word.isdigit() and word.isascii()):
            return word  # (every Snowball stemmer leaves ASCII digits as they are: a log's or a
                         # table's thousands of distinct numbers cost ~75 us each to stem)
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stems[word] = self._stem(word)
        return stem

    def _analyze_word(self, raw: str) -> tuple[str, ...]:
        if raw.isascii():  # (the usual case: no CJK, nothing to fold)
            return self._word_terms(raw, str.lower)
        if self.folds and _FOLD_DELETES_RE.search(raw):
            raw = raw.translate(_FOLD_DELETES)
        accented = None  # (fold3: the word as written, as long as ``raw``, which its stems come from)
        if self.latin:
            folded = raw.translate(_LATIN_FOLDS)  # (a letter for a letter: the same length)
            if self.latin == "after":
                if _LATIN_MARKS_RE.search(folded):  # (no stemmer reads them: out of both forms,
                    marks = {i for m in _LATIN_MARKS_RE.finditer(folded)  # whose lengths agree,
                             for i in range(m.start(), m.end())}          # so "ọ̀rọ̀Bar" splits as "oroBar")
                    raw = "".join(c for i, c in enumerate(raw) if i not in marks)
                    folded = _LATIN_MARKS_RE.sub("", folded)
                if folded != raw:
                    accented = raw
            elif _LATIN_MARKS_RE.search(folded):
                folded = _LATIN_MARKS_RE.sub("", folded)
            raw = folded
            if raw.isascii():
                return self._word_terms(raw, str.lower, accented)
        if not self._runs.search(raw):
            if self.word_marks and not self.folds:  # (folding has deleted them)
                raw = raw.translate(_OPTIONAL_MARKS)
            return self._word_terms(raw, self._lower, accented)
        # Split into CJK runs (bigrams of characters), runs of a script without spaces (bigrams
        # of clusters) and the rest (analysed as words).
        terms: list[str] = []
        pos = 0
        written = accented or raw
        for m in self._runs.finditer(raw):
            if m.start() > pos:
                terms.extend(self._analyze_word(written[pos:m.start()]))
            run = m.group()
            units = _CLUSTER_RE.findall(run) if m.lastindex == 2 else run
            if len(units) == 1:
                terms.append(run)
            else:
                terms.extend(units[i] + units[i + 1] for i in range(len(units) - 1))
            pos = m.end()
        if pos < len(raw):
            terms.extend(self._analyze_word(written[pos:]))
        return tuple(terms)

    def _word_terms(self, raw: str, lower, accented: str | None = None) -> tuple[str, ...]:
        """The terms of a word that holds no run (``lower``: how its letters are lowercased).
        With ``accented`` (fold3: ``raw`` as written, before its accents were left out), the
        word is split where ``raw`` is, and each part stemmed as written, its accents left out
        of its stem."""
        if accented is not None:
            return self._stemmed_first(raw, accented)
        terms: list[str] = []
        whole = self._term(lower(raw).strip("_"))
        if whole:
            terms.append(whole)
        if _NEEDS_SPLIT_RE.search(raw):
            for part in _PART_RE.findall(raw):
                t = self._term(lower(part))
                if t and t != whole:
                    terms.append(t)
        return tuple(terms)

    def _stemmed_first(self, raw: str, accented: str) -> tuple[str, ...]:
        """`_word_terms` of fold3: the parts of ``raw`` (accents left out), each stemmed as
        ``accented`` writes it, the stem's accents then left out."""
        def term(text):
            t = self._term(_fold(text))
            return _latin_folded(t) if t else t
        terms: list[str] = []
        whole = term(accented.strip("_"))
        if whole:
            terms.append(whole)
        if _NEEDS_SPLIT_RE.search(raw):
            for m in _PART_RE.finditer(raw):
                t = term(accented[m.start():m.end()])
                if t and t != whole and t not in terms:
                    terms.append(t)
        return tuple(terms)

    def word_terms(self, raw: str) -> tuple[str, ...]:
        """Terms for one raw word (memoised)."""
        terms = self._memo.get(raw)
        if terms is None:
            terms = self._memo[raw] = tuple(t for w in self.words(self.normal(raw)) for t in self._analyze_word(w)) \
                if self.unicode_forms and not raw.isascii() else self._analyze_word(raw)
        return terms

    def span_terms(self, text: str) -> tuple[frozenset, int]:
        """(the distinct terms of a short text, how many word characters it has), memoised:
        packing analyses the same sentences of the same files question after question."""
        hit = self._spans.get(text)
        if hit is None:
            key, text = text, self.normal(text)
            words = self.words(text)
            distinct = set(words)
            try:  # (every word seen before, the usual case: no Python loop)
                terms = set(chain.from_iterable(map(self._memo.__getitem__, distinct)))
            except KeyError:
                terms = set(chain.from_iterable(map(self.word_terms, distinct)))
            if self.short_terms:
                terms.update(number_and_option_terms(text, self.parameters))
            if len(self._spans) >= SPAN_MEMO:
                self._spans.clear()
            hit = self._spans[key] = (frozenset(terms), sum(map(len, words)))
        return hit

    def term_counts(self, text: str) -> dict[str, int]:
        """Term -> frequency for a text (counts raw words first, then analyses each once)."""
        memo = self._memo
        text = self.normal(text)
        raw_counts: dict[str, int] = {}
        _count_elements(raw_counts, self.words(text))
        counts: dict[str, int] = {}
        get = counts.get
        for raw, n in raw_counts.items():
            terms = memo.get(raw)
            if terms is None:
                terms = memo[raw] = self._analyze_word(raw)
            for t in terms:
                counts[t] = get(t, 0) + n
        if self.short_terms:
            for t in number_and_option_terms(text, self.parameters):
                counts[t] = get(t, 0) + 1
        return counts

    def terms(self, text: str) -> list[str]:
        """Terms of a text in order (with repeats)."""
        out: list[str] = []
        text = self.normal(text)
        for raw in self.words(text):
            out.extend(self.word_terms(raw))
        if self.short_terms:
            out.extend(number_and_option_terms(text, self.parameters))
        return out

    def query_terms(self, text: str) -> list[str]:
        """Distinct terms of a question, sorted (a fixed order keeps float sums identical)."""
        return sorted(set(self.terms(text)))

    def compound_terms(self, text: str) -> dict[str, str]:
        """Two words of ``text`` that documentation often writes as one, read as one: a word
        and the particle after it, apart only by spaces ("back off" -> "backoff", "time out"
        -> "timeout", "log in" -> "login", "set up the server" -> "setup"; `COMPOUND_SECOND`),
        where they read as a verb and its particle: not after a determiner ("a log in the
        database") nor before a word that is not a stopword ("the error log in production":
        "in" is a preposition there). The term of each joined word that is not a term of
        ``text`` already -> the term of its first word, which it is another way of writing.
        A caller keeps those its index holds."""
        text = self.normal(text)
        own = set(self.terms(text))
        out: dict[str, str] = {}
        for m in _PAIR_RE.finditer(text):
            a, b, after = m.group(1).lower(), m.group(2).lower(), (m.group(3) or "").lower()
            if a in self._stop or (COMPOUND_SECOND and b not in COMPOUND_SECOND):
                continue
            if after and after not in self._stop:
                continue
            before = _LAST_WORD_RE.search(text, max(0, m.start() - 40), m.start())
            if before and before.group(1).lower() in DETERMINERS:
                continue
            joined, first = self.word_terms(a + b), self.word_terms(a)
            if len(joined) == 1 and len(first) == 1 and joined[0] not in own:
                out.setdefault(joined[0], first[0])
        return out


COMPOUND_SECOND = frozenset("up down out off in on over back away".split())  # the particles a compound ends in (empty: any word)
# Two words of letters (at least two each) with only spaces or tabs between them, each whole
# (not part of an identifier or a hyphenated word), and the word after them, if only spaces
# come between: `Analyzer.compound_terms`' pairs, found overlapping ("set up the time out":
# "set up", "up the", "the time", "time out").
_PAIR_RE = re.compile(r"(?<![\w\-.])(?=([^\W\d_]{2,})[ \t]+([^\W\d_]{2,})(?![\w\-])(?:[ \t]+(\w+))?)")
_LAST_WORD_RE = re.compile(r"(\w+)[ \t]+$")
# Words that make the next word a noun ("the log in ...", "a back up of ..."): no compound after them.
DETERMINERS = frozenset("the a an this that these those each every my your our its their his her "
                        "any some no another which what whose".split())


# ------------------------------------------------------------------ related forms of a term

NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "hundred": "100",
                     "thousand": "1000"})
PREFIX_MATCH = 0.5           # match strength of a longer word starting with the term (0..1)
PREFIX_MIN = 4               # ... only for terms of at least this many characters
ABBREV_MATCH = 0.5           # match strength of a word abbreviating the term, "max" (0..1)
ABBREV_MIN_QUERY = 5         # ... only for terms of at least this many characters
ABBREV_MAX = 40              # ... and only abbreviations up to this long (a pasted 50,000-letter
                             # word would otherwise be looked up as 50,000 prefixes)


SYNONYM_MATCH = 0.3          # match strength of another word of a `SYNONYMS` group (0..1; 0: off)
# Words that software documentation and the people asking about it use for the same thing
# (general English of the trade, not drawn from any question set). Packing matches a
# sentence by them; search does not (measured: no gain, more noise).
SYNONYMS = """
delete remove erase drop purge | create generate | start launch begin spawn | stop halt terminate kill
run execute invoke | show display print | hide conceal mask | error failure fault exception
fail crash | limit cap maximum ceiling | minimum lowest | small tiny
fast quick rapid | slow sluggish | speed performance throughput | memory ram heap
config configuration settings preferences | change modify alter edit | fetch retrieve obtain
save store persist | copy duplicate clone | rename move | find search lookup locate
replace substitute | merge combine concatenate | split divide separate | convert transform cast coerce
parse decode deserialize | serialize encode stringify | upgrade migrate | old legacy deprecated obsolete
allow permit | deny forbid prevent reject refuse disallow | disable deactivate | enable activate
ignore skip exclude omit | check verify validate | wait sleep pause delay | timeout deadline
retry reattempt | cancel abort | permission privilege | password credential secret
authentication auth login | concurrent parallel simultaneous
server backend | automatic automatically auto | manual manually explicitly | quiet silent suppress mute
directory folder | argument parameter param arg | function method | connection socket
link url | uninstall remove | empty blank | missing absent | unique distinct
"""


def synonym_groups(word_terms, groups, words=WORD_RE.findall) -> dict[str, frozenset]:
    """Term -> the other terms of its groups (strings of words; a word in two groups relates
    to both), each word analysed by ``word_terms`` (an analyzer's: a stopword or a too-short
    word gives none) as ``words`` finds them (an analyzer's: "हिन्दी" is one word with its marks)."""
    out: dict[str, set] = {}
    for group in groups:
        terms = {t for w in words(group) for t in word_terms(w)[:1]}
        for t in terms:
            out.setdefault(t, set()).update(terms - {t})
    return {t: frozenset(v) for t, v in out.items() if v}


def _exact_forms(q: str):
    """(term, match strength) of the related forms of ``q`` that are looked up as they are: a
    number word's digits (1) and its alphabetic abbreviations (`ABBREV_MATCH`)."""
    digits = NUMBER_WORDS.get(q)
    if digits:
        yield digits, 1.0
    if ABBREV_MATCH and len(q) >= ABBREV_MIN_QUERY:
        for n in range(3, min(len(q), ABBREV_MAX + 1)):
            if q[:n].isalpha():
                yield q[:n], ABBREV_MATCH


def related_candidates(qterms) -> set[str]:
    """The terms `related_terms` looks up as they are (a number word's digits, the
    abbreviations of a term), so a caller can find which of them exist first."""
    return {t for q in qterms for t, _ in _exact_forms(q)}


def spaceless(word: str) -> bool:
    """Whether ``word`` holds a run of a script written without spaces between words (CJK;
    Thai, Lao, Myanmar, Khmer), which is searched as pairs of characters (of clusters)."""
    return _RUNS_RE.search(word) is not None


def is_cjk_char(term: str) -> bool:
    """True for a term that is one CJK character: a question's one-character word, which the
    index holds only where it stood alone (a run of two or more became its bigrams)."""
    return len(term) == 1 and _CJK_CHAR_RE.match(term) is not None


def related_terms(qterms, vocab, longer=None, synonyms=None, ending=None) -> dict[str, dict[str, float]]:
    """Query term -> {term: match strength} for terms that are not the query term itself
    but say the same: the digits of a number word ("ten" -> "10", strength 1), a longer word
    it starts ("time" -> "timeout", `PREFIX_MATCH`), an alphabetic abbreviation of it
    ("maximum" -> "max", "argument" -> "arg", `ABBREV_MATCH`) and, given ``synonyms``
    (`Analyzer.synonyms`), a word of the same group ("delete" -> "remove", `SYNONYM_MATCH`).
    ``vocab`` holds the terms there are (it needs to hold only `related_candidates`, the
    synonyms and, without ``longer``, the longer words); ``longer(q)``: the terms that start
    with ``q`` and are longer (default: from ``vocab``). Packing passes the terms of the text
    it compacts, search the index's. A one-CJK-character term (`is_cjk_char`) relates to the
    bigrams that hold it, at `PREFIX_MATCH`: those it starts (``longer``) and those it ends
    (``ending(q)``; default: from ``vocab``)."""
    if ending is None:
        ends: dict[str, list[str]] | None = None

        def ending(q):
            nonlocal ends
            if ends is None:  # (once: each CJK character of a long question scanned the vocabulary)
                ends = {}
                for t in vocab:
                    if len(t) == 2:
                        ends.setdefault(t[1], []).append(t)
            return ends.get(q, ())
    if longer is None:
        ordered = sorted(vocab)

        def longer(q):
            i = bisect.bisect_right(ordered, q)
            out = []
            while i < len(ordered) and ordered[i].startswith(q):
                out.append(ordered[i])
                i += 1
            return out
    out: dict[str, dict[str, float]] = {}
    for q in qterms:
        rel: dict[str, float] = {}
        for t, m in _exact_forms(q):
            if t in vocab:
                rel[t] = max(rel.get(t, 0.0), m)
        if PREFIX_MATCH and len(q) >= PREFIX_MIN:
            for t in longer(q):
                rel[t] = max(rel.get(t, 0.0), PREFIX_MATCH)
        if PREFIX_MATCH and is_cjk_char(q):
            for t in (*longer(q), *ending(q)):
                if len(t) == 2:
                    rel[t] = max(rel.get(t, 0.0), PREFIX_MATCH)
        if synonyms and SYNONYM_MATCH:
            for t in synonyms.get(q, ()):
                if t in vocab:
                    rel[t] = max(rel.get(t, 0.0), SYNONYM_MATCH)
        if rel:
            out[q] = rel
    return out

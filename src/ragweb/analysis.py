"""Tokens for search: the same analysis at index time and at query time.

A text is split into word runs (letters, digits, ``_``). Each run is lowercased; code
identifiers also yield their parts (``parseHeaders`` and ``parse_headers`` give ``parse``
and ``headers`` as well as the whole word); CJK runs become overlapping character
bigrams; words shorter than 2 characters and stopwords are dropped; the rest is stemmed
with Snowball when enabled. Each distinct raw word is analysed once and memoised, which
is what makes pure-Python analysis fast (the stemmer dominates otherwise).

`related_terms` relates terms that say the same in other words: a longer word a term
starts, its abbreviation, a number word's digits, a synonym of the trade. Packing matches
sentences by it (synonyms included), and a search looks for a question term the index
lacks in its related indexed terms (synonyms left out).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import _count_elements  # C helper behind Counter.update
from itertools import chain

import snowballstemmer

from ragweb.errors import ConfigError

WORD_RE = re.compile(r"\w+")
# A word as written, with the combining marks inside or after it (a decomposed "café" is one
# word; in `nfkc` form it is): where a caller marks the words of the original text
SHOWN_WORD_RE = re.compile("\\w+(?:[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u3099\u309a]+\\w*)*")
# Terms that words alone miss, their parts being too short to be terms: a dotted number --
# a version, an address, a decimal ("0.2.5", "127.0.0.1", "0.5") -- and a one-letter
# command-line option ("-g", "-D")
# (each pattern starts with a literal, which the regex engine scans for fast)
_DOTTED_RE = re.compile(r"\d+(?:\.\d+)+")
_HAS_DOTTED_RE = re.compile(r"\.(?<=\d\.)\d")
_OPTION_RE = re.compile(r"-(?<![\w-]-)[A-Za-z](?![\w-])")


def number_and_option_terms(text: str) -> list[str]:
    """The dotted numbers and one-letter options of ``text``, in order of kind, repeated."""
    out = _OPTION_RE.findall(text) if "-" in text else []
    if _HAS_DOTTED_RE.search(text):
        out += _DOTTED_RE.findall(text)
    return out
# Parts of an identifier: "HTTPServer" -> HTTP, Server; "parse2Json" -> parse, 2, Json.
_PART_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")
_NEEDS_SPLIT_RE = re.compile(r"_|[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z]|[A-Z]{2}[a-z]")
_CJK_RE = re.compile(
    "[\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f]+"
)

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
SPAN_MEMO = 20_000  # sentences and lines whose terms an analyzer remembers (about 10 MB at most)


def nfkc(text: str) -> str:
    """``text`` in Unicode's compatibility composed form: "café" written as "e" and a
    combining accent (macOS, Korean typed there as jamo) is the "café" a question holds, and
    "ｆｉｌｅ" (full width) or "ﬁle" (a ligature, from a PDF) is "file". ASCII text and
    text in the form already are returned as they are (the usual case: no copy)."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


def _same(text: str) -> str:
    return text


def snowball_languages() -> list[str]:
    """Languages the Snowball stemmer knows (valid values of ``index.language``)."""
    return sorted(snowballstemmer.algorithms())


class Analyzer:
    """Turns text into search terms. Settings: stemming (bool or "porter"), language, and
    ``short_terms``: whether a dotted number and a one-letter option are terms of their own
    (`number_and_option_terms`; an index built before they were has none, and its questions are
    analysed as it was); ``unicode_forms``: whether text is read in its `nfkc` form (an index
    built before it was is read as it was built).

    `normal` is the form a text's words are read in: a caller that finds words itself (the
    engine's own counting) reads them in it too."""

    def __init__(self, stemming: bool | str = True, language: str = "english", short_terms: bool = True,
                 unicode_forms: bool = True):
        self.stemming = stemming
        self.language = language
        self.short_terms = short_terms
        self.unicode_forms = unicode_forms
        self.normal = nfkc if unicode_forms else _same
        if stemming is False:
            self._stem = None
        else:
            algorithm = "porter" if stemming == "porter" else language
            if algorithm not in snowballstemmer.algorithms():
                raise ConfigError(
                    f"index.language: unknown Snowball language {algorithm!r}; "
                    f"choose one of: {', '.join(snowball_languages())}"
                )
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
        return cls(settings["stemming"], settings["language"], settings.get("short_terms", False),
                   settings.get("unicode") == UNICODE_FORM)

    def synonyms(self, groups=()) -> dict[str, frozenset]:
        """Term -> the other terms of its groups, in this analyzer's terms: the `SYNONYMS`
        groups (English only) and a user's ``groups`` (strings of words, any language; config
        ``pack.synonyms``); made again when either changes."""
        key = (SYNONYMS, tuple(groups))
        if self._synonyms[0] != key:
            builtin = SYNONYMS.replace("\n", "|").split("|") if self.language == "english" else []
            self._synonyms = (key, synonym_groups(self.word_terms, builtin + list(groups)))
        return self._synonyms[1]

    @property
    def settings(self) -> dict:
        """The settings that define the terms; stored in the index so queries match it."""
        return {"stemming": self.stemming, "language": self.language, "short_terms": self.short_terms,
                **({"unicode": UNICODE_FORM} if self.unicode_forms else {})}

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
        terms: list[str] = []
        if _CJK_RE.search(raw):
            # Split into CJK runs (bigrams) and the rest (analysed as words).
            pos = 0
            for m in _CJK_RE.finditer(raw):
                if m.start() > pos:
                    terms.extend(self._analyze_word(raw[pos:m.start()]))
                run = m.group()
                if len(run) == 1:
                    terms.append(run)
                else:
                    terms.extend(run[i:i + 2] for i in range(len(run) - 1))
                pos = m.end()
            if pos < len(raw):
                terms.extend(self._analyze_word(raw[pos:]))
            return tuple(terms)
        whole = self._term(raw.lower().strip("_"))
        if whole:
            terms.append(whole)
        if _NEEDS_SPLIT_RE.search(raw):
            for part in _PART_RE.findall(raw):
                t = self._term(part.lower())
                if t and t != whole:
                    terms.append(t)
        return tuple(terms)

    def word_terms(self, raw: str) -> tuple[str, ...]:
        """Terms for one raw word (memoised)."""
        terms = self._memo.get(raw)
        if terms is None:
            terms = self._memo[raw] = tuple(t for w in WORD_RE.findall(self.normal(raw)) for t in self._analyze_word(w)) \
                if self.unicode_forms and not raw.isascii() else self._analyze_word(raw)
        return terms

    def span_terms(self, text: str) -> tuple[frozenset, int]:
        """(the distinct terms of a short text, how many word characters it has), memoised:
        packing analyses the same sentences of the same files question after question."""
        hit = self._spans.get(text)
        if hit is None:
            key, text = text, self.normal(text)
            words = WORD_RE.findall(text)
            distinct = set(words)
            try:  # (every word seen before, the usual case: no Python loop)
                terms = set(chain.from_iterable(map(self._memo.__getitem__, distinct)))
            except KeyError:
                terms = set(chain.from_iterable(map(self.word_terms, distinct)))
            if self.short_terms:
                terms.update(number_and_option_terms(text))
            if len(self._spans) >= SPAN_MEMO:
                self._spans.clear()
            hit = self._spans[key] = (frozenset(terms), sum(map(len, words)))
        return hit

    def term_counts(self, text: str) -> dict[str, int]:
        """Term -> frequency for a text (counts raw words first, then analyses each once)."""
        memo = self._memo
        text = self.normal(text)
        raw_counts: dict[str, int] = {}
        _count_elements(raw_counts, WORD_RE.findall(text))
        counts: dict[str, int] = {}
        get = counts.get
        for raw, n in raw_counts.items():
            terms = memo.get(raw)
            if terms is None:
                terms = memo[raw] = self._analyze_word(raw)
            for t in terms:
                counts[t] = get(t, 0) + n
        if self.short_terms:
            for t in number_and_option_terms(text):
                counts[t] = get(t, 0) + 1
        return counts

    def terms(self, text: str) -> list[str]:
        """Terms of a text in order (with repeats)."""
        out: list[str] = []
        text = self.normal(text)
        for raw in WORD_RE.findall(text):
            out.extend(self.word_terms(raw))
        if self.short_terms:
            out.extend(number_and_option_terms(text))
        return out

    def query_terms(self, text: str) -> list[str]:
        """Distinct terms of a question, sorted (a fixed order keeps float sums identical)."""
        return sorted(set(self.terms(text)))


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


def synonym_groups(word_terms, groups) -> dict[str, frozenset]:
    """Term -> the other terms of its groups (strings of words; a word in two groups relates
    to both), each word analysed by ``word_terms`` (an analyzer's: a stopword or a too-short
    word gives none)."""
    out: dict[str, set] = {}
    for group in groups:
        terms = {t for w in WORD_RE.findall(group) for t in word_terms(w)[:1]}
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


def is_cjk_char(term: str) -> bool:
    """True for a term that is one CJK character: a question's one-character word, which the
    index holds only where it stood alone (a run of two or more became its bigrams)."""
    return len(term) == 1 and _CJK_RE.match(term) is not None


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

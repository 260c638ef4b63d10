"""The inverted index over a corpus, and term matching: which indexed words a query term reaches.

Each document is split into weighted fields (ranker.rules.FIELD_WEIGHTS); the postings of a
word hold, per document, the field-weighted, length-normalised count of that word. A query
term reaches words in four forms: as written, as an inflection, as a prefix of a whole word or
segment, and (only when nothing else matches) as a corrected typo.
"""

from __future__ import annotations

import bisect
import copy
import math
from array import array
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from . import rules
from .corpus import Corpus, Document
from .page_evidence import PageIndex
from .text import (
    MAX_CACHED_TOKEN,
    PLAIN_WORD,
    STOPWORDS,
    fold_lemma,
    inflection_roots,
    snowball_stem,
    stemmed,
    words,
)


class Form(NamedTuple):
    """One way a query term reaches an indexed word. A named tuple: a term's forms key the
    evidence cache on every query, and a tuple hashes in C."""

    word: str
    kind: str  # "as written" | "inflection" | "prefix" | "typo"
    weight: float


def document_fields(doc: Document) -> dict[str, str]:
    """The text of each scored field of a record."""
    fields = {
        "title": doc.title,
        "keywords": doc.keywords,
        "curated": doc.curated,
        "summary": doc.summary,
        "package": doc.package,
        "topics": " ".join(doc.topics),
        "label": doc.section if doc.tier != "symbol" else "",
        "emphasis": doc.emphasis,
        "text": doc.text,
        "doc": doc.doc,
    }
    return {name: text for name, text in fields.items() if text}


def field_weight(doc: Document, field: str) -> float:
    if field == "summary" and doc.tier == "symbol":
        return rules.SYMBOL_SUMMARY_WEIGHT
    if field == "doc":
        return rules.SYMBOL_DOC_WEIGHT
    return rules.FIELD_WEIGHTS[field]


class InvertedIndex:
    """Postings per word as two packed arrays (document ids, weights), decoded on first use,
    so a snapshot loads without rebuilding anything."""

    def __init__(
        self,
        corpus: Corpus,
        packed: dict[str, bytes],
        roots: dict[str, str],
        phrases: dict[str, bytes],
        symbol_names: dict[str, list[int]],
        external: bytes,
        factor: bytes,
        url_order: bytes,
        answers: list[int],
        packages: list[str],
        pages: PageIndex,
        stems: dict[str, str],
    ) -> None:
        self.documents = corpus.documents
        self.size = len(self.documents)
        self.lemmas = corpus.lemmas
        self.packed = packed
        self.vocabulary = sorted(packed)
        self.roots = roots  # root -> the other indexed words (space-separated) that reduce to it
        # indexed word -> its Snowball stem, worked out at build: a query's words the docs hold are
        # not stemmed again (the pure-Python stemmer is most of a new word's first cost)
        self.stems = stems
        self.phrases = phrases  # curated phrase -> packed ids (see pack_phrase)
        self.symbol_names = symbol_names  # bare member/symbol name -> ids
        self._decoded: dict[str, tuple[array[int], array[float]]] = {}
        self._deletions: dict[str, set[str]] | None = None
        self._initials: tuple[list[str], Any, Any] | None = None  # initial_buckets
        self._nearest: dict[tuple[str, int], list[str]] = {}  # nearest_words, per term
        self._term_cache: dict[tuple[str, bool], tuple[list[Form], int]] = {}
        # forms -> (record ids, saturated evidence) as numpy vectors; filled by ranker.search
        self.evidence_cache: dict[tuple[Form, ...], tuple[Any, Any]] = {}
        self.dense_tables: Any = None  # ranker.dense.Tables, made on first search
        self.record_table: Any = None  # ranker.dense.RecordTable, made on first search
        # (kind, name) -> per-record membership: a package's, a subject's (ranker.search)
        self.record_masks: dict[tuple[str, str], Any] = {}
        self.descriptions: dict[int, str] = {}  # record id -> its hit description (ranker.search)
        self.external = array("b", external)  # per record: an imqueue.com record
        self.factor = array("f")  # per record: tier x blog x deprecation multiplier
        self.factor.frombytes(factor)
        self.url_order = array("I")  # per record: its rank in URL order, the tie-break
        self.url_order.frombytes(url_order)
        self.answers = frozenset(answers)  # records written as answers to a question (g=2)
        self.packages = packages  # every package a record belongs to, for the filter's check
        self.filter_packages: list[str] | None = None  # what the filter takes (ranker.search.known_packages)
        self.pages = pages  # whole pages as a fielded BM25 (ranker.pages), fused with record scores

    @classmethod
    def build(cls, corpus: Corpus) -> InvertedIndex:
        postings = weighted_postings(corpus.documents)
        packed = {word: pack_row(row) for word, row in postings.items()}
        roots: dict[str, set[str]] = defaultdict(set)
        stems = {word: snowball_stem(word) for word in sorted(postings) if stemmed(word)}
        for word in postings:
            for root in roots_of(word, corpus.lemmas, stems):
                if root != word:  # a root that is itself a word is found in the postings directly
                    roots[root].add(word)
        names: dict[str, list[int]] = defaultdict(list)
        for doc_id, doc in enumerate(corpus.documents):
            if doc.tier == "symbol":
                names[phrase_key(doc.title.rsplit(".", 1)[-1]).replace(" ", "")].append(doc_id)
        return cls(
            corpus,
            packed,
            {root: " ".join(sorted(ws)) for root, ws in sorted(roots.items())},
            curated_phrases(corpus.documents),
            dict(sorted(names.items())),
            bytes(doc.external for doc in corpus.documents),
            array("f", (record_multiplier(doc)[0] for doc in corpus.documents)).tobytes(),
            url_order(corpus.documents).tobytes(),
            [i for i, doc in enumerate(corpus.documents) if doc.tier == "answer"],
            sorted({doc.package.lower() for doc in corpus.documents if doc.package}),
            PageIndex.build(corpus.documents),
            stems,
        )

    def to_wire(self) -> dict[str, Any]:
        return {
            "postings": self.packed,
            "roots": self.roots,
            "phrases": self.phrases,
            "symbol_names": self.symbol_names,
            "external": self.external.tobytes(),
            "factor": self.factor.tobytes(),
            "url_order": self.url_order.tobytes(),
            "answers": sorted(self.answers),
            "packages": self.packages,
            "pages": self.pages.to_wire(),
            "stems": self.stems,
        }

    @classmethod
    def from_wire(cls, corpus: Corpus, wire: dict[str, Any]) -> InvertedIndex:
        return cls(
            corpus,
            wire["postings"],
            wire["roots"],
            wire["phrases"],
            wire["symbol_names"],
            wire["external"],
            wire["factor"],
            wire["url_order"],
            wire["answers"],
            wire["packages"],
            PageIndex.from_wire(wire["pages"]),
            wire["stems"],
        )

    def sibling(self) -> InvertedIndex:
        """The same postings for ranking under other values of the rules' constants (tuning: one
        build, many settings). Shared, filled or not, is what depends on the postings alone: the
        decoded rows, the typo deletions, the per-record tables and descriptions, the page tables.
        What a search works out under the constants (term forms, evidence, record masks) starts
        empty."""
        twin = copy.copy(self)
        twin._term_cache, twin.evidence_cache, twin.record_masks = {}, {}, {}
        return twin

    def row(self, word: str) -> tuple[array[int], array[float]]:
        decoded = self._decoded.get(word)
        if decoded is None:
            raw = self.packed.get(word)
            if raw is None:
                return array("I"), array("f")
            decoded = unpack_row(raw)
            self._decoded[word] = decoded
        return decoded

    def term_forms(self, term: str, allow_typo: bool = True) -> tuple[list[Form], int]:
        """The term's forms (typo forms only when nothing else matches) and how many records
        any of them reaches. Cached: queries repeat their words."""
        key = (term, allow_typo)
        cached = self._term_cache.get(key)
        if cached is None:
            forms = self.forms(term)
            if not forms and allow_typo:
                forms = self.typo_forms(term)
            reached: set[int] = set()
            for form in forms:
                reached.update(self.row(form.word)[0])
            cached = (forms, len(reached))
            if len(term) <= MAX_CACHED_TOKEN:  # a made-up token of hundreds of letters is not kept
                if len(self._term_cache) > 100_000:
                    self._term_cache.clear()
                self._term_cache[key] = cached
        return cached

    def phrase(self, key: str) -> tuple[list[int], list[int]] | None:
        """Records where `key` is a whole curated phrase, and where it is part of one."""
        raw = self.phrases.get(key)
        return unpack_phrase(raw) if raw is not None else None

    def document_frequency(self, word: str) -> int:
        raw = self.packed.get(word)
        return len(raw) // 8 if raw else 0

    def idf(self, df: int) -> float:
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    def forms(self, term: str) -> list[Form]:
        """Every indexed word the term reaches, with the form and its weight (best form per word)."""
        found: dict[str, Form] = {}

        def offer(form: Form) -> None:
            if form.word not in found or found[form.word].weight < form.weight:
                found[form.word] = form

        if term in self.packed:
            offer(Form(term, "as written", 1.0))
        for root in roots_of(term, self.lemmas, self.stems):
            reached = self.roots.get(root, "").split()
            if root in self.packed:
                reached.append(root)
            for word in reached:
                if word != term:
                    offer(Form(word, "inflection", rules.INFLECTION_WEIGHT))
        if len(term) >= rules.MIN_PREFIX and term.isalnum():
            start = bisect.bisect_left(self.vocabulary, term)
            for word in self.vocabulary[start:]:
                if not word.startswith(term):
                    break
                if word != term and word.isalnum():
                    share = rules.PREFIX_LENGTH_SHARE
                    weight = rules.PREFIX_WEIGHT * (1 - share + share * len(term) / len(word))
                    offer(Form(word, "prefix", weight))
        return sorted(found.values(), key=lambda f: (-f.weight, f.word))

    def typo_forms(self, term: str) -> list[Form]:
        """Words one or two edits away (two only for long terms), for a term that reaches nothing."""
        if len(term) < rules.MIN_TYPO or not term.isalpha():
            return []
        # One deletion on each side reaches one edit, one transposition and most two-edit pairs.
        distance = 1 if len(term) < rules.TWO_TYPOS_FROM else 2
        candidates: set[str] = set()
        index = self.deletions()
        for variant in deletion_variants(term, 1):
            candidates |= index.get(variant, set())
        close = [w for w in candidates if w != term and edit_distance(term, w) <= distance]
        if not close:
            return []
        best = min(edit_distance(term, w) for w in close)
        close = sorted(
            (w for w in close if edit_distance(term, w) == best),
            key=lambda w: (-self.document_frequency(w), w),
        )
        return [Form(close[0], "typo", rules.TYPO_WEIGHT)]

    def deletions(self) -> dict[str, set[str]]:
        """Symmetric-delete index of alphabetic words (built on first typo, not at load)."""
        if self._deletions is None:
            index: dict[str, set[str]] = defaultdict(set)
            for word in self.vocabulary:
                if word.isalpha() and 4 <= len(word) <= 24:
                    for variant in deletion_variants(word, 1):
                        index[variant].add(word)
            self._deletions = dict(index)
        return self._deletions

    def nearest_words(self, term: str, count: int = 5) -> list[str]:
        """Indexed words closest to a term, for the guidance a miss returns: alphabetic words within
        3 letters of its length that share its first letter (or its first two, swapped), at most
        max(2, half its length) edits away, nearest first, then the most used. Cached per term.
        A word whose letters differ from the term's by more edits than that (the bag distance: what
        one has that the other lacks, counted per letter, is a lower bound of the edit distance) is
        left out before the distance is worked out."""
        if not term:
            return []
        key = (term, count)
        found = self._nearest.get(key)
        if found is not None:
            return found
        import numpy as np

        limit = max(2, len(term) // 2)
        words, letters, lengths = self.initial_buckets()
        swapped = term[:2][::-1]
        # the words that start with the term's first letter, then (a range of their own unless the
        # term doubles its first letter) those that start with its first two swapped
        prefixes = [term[0]] + ([swapped] if len(term) > 1 and term[1] != term[0] else [])
        ids = np.concatenate(
            [
                np.arange(bisect.bisect_left(words, prefix), bisect.bisect_left(words, prefix + "\U0010ffff"))
                for prefix in prefixes
            ]
        )
        ids = ids[np.abs(lengths[ids] - len(term)) <= 3]
        own = np.bincount([ord(c) % 32 for c in term], minlength=32)
        apart = letters[ids].astype(np.int16) - own.astype(np.int16)
        bag = np.maximum(np.clip(apart, 0, None).sum(axis=1), np.clip(-apart, 0, None).sum(axis=1))
        scored = []
        for word_id in ids[bag <= limit].tolist():
            word = words[word_id]
            distance = edit_distance(term, word, limit)
            if distance <= limit:
                scored.append((distance, -self.document_frequency(word), word))
        found = [w for _d, _df, w in sorted(scored)[:count]]
        if len(term) <= MAX_CACHED_TOKEN:
            if len(self._nearest) > 10_000:
                self._nearest.clear()
            self._nearest[key] = found
        return found

    def initial_buckets(self) -> tuple[list[str], Any, Any]:
        """The alphabetic words in order, their letter counts (a row of 32 per word, by code point
        mod 32: letters that share a row only lower the bag distance, which stays a lower bound)
        and their lengths (made on the first miss, or by Index.warm)."""
        if self._initials is None:
            import numpy as np

            words = [word for word in self.vocabulary if word.isalpha()]
            lengths = np.array([len(word) for word in words], dtype=np.int64)
            codes = np.frombuffer("".join(words).encode("utf-32-le"), dtype=np.uint32).astype(np.int64) % 32
            cells = np.repeat(np.arange(len(words)) * 32, lengths) + codes
            letters = np.bincount(cells, minlength=len(words) * 32).reshape(len(words), 32).astype(np.uint8)
            self._initials = (words, letters, lengths)
        return self._initials


def weighted_postings(documents: Sequence[Document]) -> dict[str, dict[int, float]]:
    """word -> {doc id: sum over fields of field weight x count / length norm}."""
    field_terms: list[dict[str, Counter[str]]] = []
    lengths: dict[str, list[int]] = defaultdict(list)
    for doc in documents:
        per_field = {name: Counter(words(text)) for name, text in document_fields(doc).items()}
        field_terms.append(per_field)
        for name, counts in per_field.items():
            lengths[name].append(sum(counts.values()))
    average = {name: sum(v) / len(v) for name, v in lengths.items()}
    postings: dict[str, dict[int, float]] = defaultdict(dict)
    b = rules.LENGTH_NORMALISATION
    for doc_id, per_field in enumerate(field_terms):
        for name, counts in per_field.items():
            weight = field_weight(documents[doc_id], name)
            if not weight:  # a field weighed at 0 is not indexed: it would count for coverage
                continue
            weight /= 1 - b + b * sum(counts.values()) / average[name]
            for word, count in counts.items():
                row = postings[word]
                row[doc_id] = row.get(doc_id, 0.0) + weight * count
    return dict(sorted(postings.items()))


@lru_cache(maxsize=1024)
def phrase_key(text: str) -> str:
    """The text's plain words, lowercased, one space apart. Cached: a query's phrase boosts,
    question test and shape test each ask for it."""
    return " ".join(PLAIN_WORD.findall(text)).lower()


def curated_phrases(documents: Sequence[Document]) -> dict[str, bytes]:
    """phrase -> [doc ids where it is a whole curated phrase, doc ids where it is a part (2+ words)]."""
    found: dict[str, tuple[set[int], set[int]]] = defaultdict(lambda: (set(), set()))
    for doc_id, doc in enumerate(documents):
        if doc.tier == "section":
            continue
        for phrase in [doc.title, *doc.keywords.split(",")]:
            tokens = phrase_key(phrase).split()
            if not tokens:
                continue
            found[" ".join(tokens)][0].add(doc_id)
            content = [t for t in tokens if t not in STOPWORDS]
            if content and len(content) < len(tokens):  # "what is imqueue" is also "imqueue"
                found[" ".join(content)][0].add(doc_id)
            for size in range(2, len(tokens)):
                for start in range(len(tokens) - size + 1):
                    found[" ".join(tokens[start : start + size])][1].add(doc_id)
    return {k: pack_phrase(sorted(whole), sorted(part - whole)) for k, (whole, part) in sorted(found.items())}


def pack_phrase(whole: list[int], part: list[int]) -> bytes:
    """One bytes value per phrase (count of whole ids, whole ids, part ids): a snapshot holds
    ten thousand phrases, and lists of ints are what makes unpacking slow."""
    return array("I", [len(whole), *whole, *part]).tobytes()


def unpack_phrase(raw: bytes) -> tuple[list[int], list[int]]:
    ids = array("I")
    ids.frombytes(raw)
    count = ids[0]
    return list(ids[1 : 1 + count]), list(ids[1 + count :])


def record_multiplier(doc: Document) -> tuple[float, list[str]]:
    """Tier, blog and listing demotion, deprecation: the record's fixed multiplier and its explain notes."""
    factor, notes = rules.TIER_WEIGHTS[doc.tier], []
    if factor != 1.0:
        notes.append(f"TIER_WEIGHTS.{doc.tier} x{factor:g}: a {doc.tier} record")
    if doc.is_blog:
        factor *= rules.BLOG_DEMOTION
        notes.append(f"BLOG_DEMOTION x{rules.BLOG_DEMOTION:g}: a blog post")
    if doc.listing:
        factor *= rules.LISTING_DEMOTION
        notes.append(f"LISTING_DEMOTION x{rules.LISTING_DEMOTION:g}: a listing of other pages' summaries")
    if doc.deprecated:
        factor *= rules.DEPRECATED_DEMOTION
        notes.append(f"DEPRECATED_DEMOTION x{rules.DEPRECATED_DEMOTION:g}: a deprecated symbol")
    return factor, notes


def url_order(documents: Sequence[Document]) -> array[int]:
    order = sorted(range(len(documents)), key=lambda i: (documents[i].path, documents[i].site))
    ranks = array("I", [0] * len(documents))
    for rank, doc_id in enumerate(order):
        ranks[doc_id] = rank
    return ranks


def pack_row(row: dict[int, float]) -> bytes:
    ids = sorted(row)
    return array("I", ids).tobytes() + array("f", (row[i] for i in ids)).tobytes()


def unpack_row(raw: bytes) -> tuple[array[int], array[float]]:
    half = len(raw) // 2
    ids, weights = array("I"), array("f")
    ids.frombytes(raw[:half])
    weights.frombytes(raw[half:])
    return ids, weights


def roots_of(word: str, lemmas: Mapping[str, str], stems: Mapping[str, str] | None = None) -> frozenset[str]:
    """The word's inflection roots and its folded lemma; `stems`: Snowball stems already known."""
    roots = inflection_roots(word, stems.get(word) if stems else None)
    lemma = fold_lemma(word, lemmas.get(word, ""))
    return roots | {lemma} if lemma else roots


def deletion_variants(word: str, distance: int) -> set[str]:
    variants = {word}
    frontier = {word}
    for _ in range(distance):
        frontier = {w[:i] + w[i + 1 :] for w in frontier for i in range(len(w))}
        variants |= frontier
    return variants


def edit_distance(a: str, b: str, limit: int | None = None) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions, transpositions.
    With `limit`, any distance over it comes back as limit + 1, found as soon as a row's (and the
    row before's) every cell is over it: a row never holds less than the two before it, less one
    transposition, so the distance can only be larger."""
    if limit is not None and abs(len(a) - len(b)) > limit:
        return limit + 1
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        if limit is not None and min(current) > limit and min(previous) > limit:
            return limit + 1
        previous2, previous = previous, current
    return previous[len(b)] if limit is None else min(previous[len(b)], limit + 1)

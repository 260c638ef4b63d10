"""Text -> terms: words, identifier segments, inflection roots. Pure string functions.

    words("Use RedisQueue.send()")   -> ["use", "redisqueue.send", "redisqueuesend", "redisqueue", "send",
                                         "redis", "queue"]
    segment_identifier("MigrateDownOptions") -> ("migrate", "down", "options")
    inflection_roots("retries")      -> {"retries", "retry"}

A term never matches the middle of a longer word: matching happens on whole words, whole
identifier segments, or a prefix of one (see ranker.rules).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Generic, TypeVar

from . import rules

T = TypeVar("T")

# A token longer than this is computed each time, never cached: the caches below are bounded by
# count (CACHED_TOKENS entries each), and a query's words are short; one made-up token of thousands
# of characters (`ab.cd.ef...`) would otherwise keep its every piece, about 170 kB, for good. At
# these bounds, 90,000 made-up dotted tokens of the longest cached length grew a process by 65 MB
# (measured in-process, docs/performance.md), the docs' own words take a few MB.
MAX_CACHED_TOKEN = 32
CACHED_TOKENS = 1 << 14


class short_cached(Generic[T]):  # noqa: N801 - a decorator, named as functools' are
    """`function` with an LRU cache of MAX_CACHED_TOKEN-character arguments at most."""

    def __init__(self, function: Callable[[str], T]) -> None:
        self.function = function
        self.cached = lru_cache(maxsize=CACHED_TOKENS)(function)
        functools.update_wrapper(self, function)

    def __call__(self, token: str) -> T:
        return self.cached(token) if len(token) <= MAX_CACHED_TOKEN else self.function(token)

    def cache_clear(self) -> None:
        self.cached.cache_clear()

    def cache_info(self) -> Any:
        return self.cached.cache_info()


@short_cached
def snowball_stem(word: str) -> str:
    """The Snowball (Porter2) stem of a lowercase word; safe to call from any thread. A stemmer
    keeps its cursor in itself while it stems, so one shared between threads (the server ranks
    in worker threads) corrupts its words: each call makes its own (about a microsecond).
    snowballstemmer runs the compiled stemmers when PyStemmer is installed, the same stems ~20x
    faster (tests/test_ranker_text.py holds them equal), and its own Python ones otherwise.
    Imported on the first stem, not with the ranker: it loads every language's stemmer (20 ms of
    a server's start, before it answers initialize; Index.warm makes the first stem)."""
    import snowballstemmer  # type: ignore[import-untyped]  # the Snowball stemmers, no data files

    return str(snowballstemmer.stemmer("english").stemWord(word))


# An identifier may carry dots, underscores and hyphens inside it: RedisQueue.send, pg-prisma, IMQ_CLI_HOME.
RAW_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[._\-/][A-Za-z0-9]+)*")
PLAIN_WORD = re.compile(r"[A-Za-z0-9]+")
CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

# Words that carry the template of a question, not its subject. Dropped from a query that has
# other words (so "How do I expose a method" ranks on expose/method), kept when alone ("the").
STOPWORDS = frozenset(
    "a an the and or of to in on for is are was were be been do does did i me my we us our you your "
    "it its this that these those with by from as at how what why when where which who can could "
    "should would will shall may might must there their them they he she his her so if then than "
    "into about any some all not no yes get got have has had just also use using used want need "
    "make way vs before after across through under among each every several actually really "
    "very much most another such own else ever even still yet already again thing things "
    "something anything everything someone anyone lot lots kind sort goes going give gives".split()
)


@short_cached
def segment_identifier(token: str) -> tuple[str, ...]:
    """Split camelCase, dotted, snake_case and kebab-case identifiers into lowercase segments.
    Cached: queries and pages repeat their identifiers."""
    segments: list[str] = []
    for piece in re.split(r"[._\-/]+", token):
        segments.extend(part.lower() for part in CAMEL_PART.findall(piece))
    return tuple(segments)


def words(text: str) -> list[str]:
    """Every term of a text: each whole token, and its segments when it is an identifier."""
    out: list[str] = []
    for match in RAW_TOKEN.finditer(text):
        out.extend(token_terms(match.group()))
    return out


@short_cached
def token_terms(raw: str) -> tuple[str, ...]:
    """words() of one token (RAW_TOKEN): the whole token lowercased, then its pieces and
    segments. Cached: a query's words are mostly words seen before."""
    whole = raw.lower()
    out = [whole]
    pieces = [p for p in re.split(r"[._\-/]+", raw) if p]
    if re.search(r"[./]", raw) and re.search(r"[-_]", raw):  # @imqueue/pg-prisma -> pg-prisma
        out.extend(p.lower() for p in re.split(r"[./]+", raw) if p and re.search(r"[-_]", p))
    if len(pieces) > 1:  # RedisQueue.send -> redisqueue, send (each piece whole)
        out.append("".join(p.lower() for p in pieces))
        out.extend(p.lower() for p in pieces)
    for piece in pieces:
        segments = segment_identifier(piece)
        if len(segments) > 1:
            out.extend(segments)
    return tuple(out)


@short_cached
def token_compounds(raw: str) -> frozenset[str]:
    """The terms of one token that are not its leaf segments: the whole identifier and its
    joined or dotted pieces (watcherChekcDelay, nestjs.microservices), never typo-corrected."""
    leaves = set(segment_identifier(raw))
    return frozenset(w for w in token_terms(raw) if w not in leaves)


def query_terms(query: str) -> list[str]:
    """Distinct query terms in order (stopwords kept: the ranker weighs them down)."""
    return list(dict.fromkeys(words(query)))


SIBILANT_ENDINGS = ("s", "x", "z", "ch", "sh", "o")


def inflection_roots(word: str, stem: str | None = None) -> frozenset[str]:
    """The word plus the roots its inflectional suffix can be stripped to (-s/-es/-ies, -ing,
    -ed, -tion/-sion) and its Snowball (Porter2) stem (`stem` when the caller has it already:
    an index keeps its words'). Two words are inflections of each other when their roots meet.
    Cached per value of the rules it reads, so a changed rule (a test, benchmarks.cv) never
    reads roots computed under another."""
    roots = _roots if len(word) <= MAX_CACHED_TOKEN else _roots.__wrapped__
    return roots(word, rules.MIN_INFLECTED, rules.MIN_ROOT, rules.MIN_DOUBLED_BASE, rules.SNOWBALL_STEM, stem)


def stemmed(word: str) -> bool:
    """Whether inflection_roots reaches for the word's Snowball stem (under the rules as they are)."""
    return len(word) >= rules.MIN_INFLECTED and word.isalpha()


@lru_cache(maxsize=CACHED_TOKENS)
def _roots(
    word: str, min_inflected: int, min_root: int, min_doubled: int, snowball: bool, known: str | None
) -> frozenset[str]:
    """`known`: the word's Snowball stem, when the caller has it."""
    roots = {word}
    if len(word) < min_inflected or not word.isalpha():
        return frozenset(roots)

    def add(root: str) -> None:
        if len(root) >= min_root:
            roots.add(root)

    if word.endswith("ies"):
        add(word[:-3] + "y")
    elif word.endswith("es"):
        add(word[:-1])
        if word[:-2].endswith(SIBILANT_ENDINGS):
            add(word[:-2])
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        add(word[:-1])
    stem = word[:-1] if word.endswith("s") and word[-2:-1] == "n" else word
    if stem.endswith(("tion", "sion")):
        base = stem[:-3]  # connection -> connect, compression -> compress
        add(base)
        if base.endswith("at"):  # validation -> validate, installation -> install
            add(base + "e")
            add(base[:-2])
            add(base[:-2] + "e")
    if word.endswith("ing"):
        _add_verb_roots(word[:-3], add, min_doubled)
    elif word.endswith("ied"):
        add(word[:-3] + "y")
    elif word.endswith("ed"):
        _add_verb_roots(word[:-2], add, min_doubled)
    if snowball:  # beside the suffix rules: configurable ~ configure, retries ~ retrying
        add(snowball_stem(word) if known is None else known)
    return frozenset(roots)


def _add_verb_roots(base: str, add: object, min_doubled: int) -> None:
    assert callable(add)
    add(base)
    add(base + "e")  # exposing -> expose, queued -> queue
    if len(base) >= min_doubled and base[-1] == base[-2] and base[-1] not in "lsz":
        add(base[:-1])  # running -> run, stopped -> stop


def fold_lemma(word: str, lemma: str) -> str | None:
    """A feed lemma is used only where suffix rules cannot reach it (went -> go, indices -> index)
    or for -ly adverbs (commercially -> commercial); a plain truncation (modes -> mod) is not."""
    if not lemma or lemma == word:
        return None
    if not word.startswith(lemma) or word.endswith("ly"):
        return lemma
    return None

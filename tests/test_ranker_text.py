"""ranker.text on literal strings: identifier segments, terms, inflection roots, feed lemmas.

These are the pieces the ranking rules stand on (tests/test_ranker_rules.py proves the rules
themselves on tiny corpora)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from imqueue_mcp.ranker import rules
from imqueue_mcp.ranker.text import (
    STOPWORDS,
    fold_lemma,
    inflection_roots,
    query_terms,
    segment_identifier,
    words,
)

# --- segment_identifier -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("identifier", "segments"),
    [
        ("MigrateDownOptions", ["migrate", "down", "options"]),  # PascalCase
        ("watcherCheckDelay", ["watcher", "check", "delay"]),  # camelCase
        ("RedisQueue.send", ["redis", "queue", "send"]),  # dotted member
        ("IMQ_CLI_HOME", ["imq", "cli", "home"]),  # SCREAMING_SNAKE
        ("pg-prisma", ["pg", "prisma"]),  # kebab-case
        ("imqueue/rpc", ["imqueue", "rpc"]),  # a scoped package path
        ("IMQService", ["imq", "service"]),  # an acronym run before a capitalised word
        ("parseJSONBody", ["parse", "json", "body"]),  # an acronym in the middle
        ("v2Beta", ["v", "2", "beta"]),  # digits are their own segment
        ("queue", ["queue"]),  # a plain word is one segment
    ],
)
def test_identifier_splits_into_lowercase_segments(identifier: str, segments: list[str]) -> None:
    assert list(segment_identifier(identifier)) == segments


def test_segments_of_an_empty_string_are_none() -> None:
    assert segment_identifier("") == ()


# --- words ---------------------------------------------------------------------------------


def test_words_keep_the_whole_identifier_and_add_its_segments() -> None:
    terms = words("MigrateDownOptions")
    assert terms[0] == "migratedownoptions"
    assert {"migrate", "down", "options"} <= set(terms)


def test_words_of_a_dotted_member_keep_each_part_whole_and_split() -> None:
    terms = words("Use RedisQueue.send()")
    assert terms[:2] == ["use", "redisqueue.send"]  # each raw token first, as written (lowercased)
    # the dotted token joined, each dotted part whole, and the camel segments of each part
    assert {"redisqueuesend", "redisqueue", "send", "redis", "queue"} <= set(terms)
    assert "(" not in "".join(terms) and ")" not in "".join(terms)


def test_words_of_snake_and_kebab_identifiers() -> None:
    assert set(words("IMQ_CLI_HOME")) == {"imq_cli_home", "imqclihome", "imq", "cli", "home"}
    assert set(words("pg-prisma")) == {"pg-prisma", "pgprisma", "pg", "prisma"}


def test_words_of_a_scoped_package_drop_the_at_sign() -> None:
    assert words("@imqueue/rpc") == ["imqueue/rpc", "imqueuerpc", "imqueue", "rpc"]


def test_words_of_plain_prose_are_lowercased_tokens_only() -> None:
    assert words("Start the Service, then Stop it.") == ["start", "the", "service", "then", "stop", "it"]


def test_words_of_punctuation_alone_are_none() -> None:
    assert words("  -- ... ?! ") == []


def test_query_terms_are_distinct_in_order_with_stopwords_kept() -> None:
    assert query_terms("how to retry Retry RETRY") == ["how", "to", "retry"]
    assert "how" in STOPWORDS and "to" in STOPWORDS and "retry" not in STOPWORDS


# --- inflection_roots ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "root"),
    [
        ("services", "service"),  # -s
        ("boxes", "box"),  # -es after a sibilant
        ("matches", "match"),  # -es after ch
        ("processes", "process"),  # -es after s
        ("retries", "retry"),  # -ies
        ("libraries", "library"),
        ("retrying", "retry"),  # -ing
        ("exposing", "expose"),  # -ing with the silent e restored
        ("running", "run"),  # -ing with the doubled consonant undone
        ("queued", "queue"),  # -ed with the e restored
        ("stopped", "stop"),  # -ed with the doubled consonant undone
        ("copied", "copy"),  # -ied
        ("connection", "connect"),  # -tion
        ("connections", "connect"),  # -tions
        ("compression", "compress"),  # -sion
        ("validation", "validate"),  # -ation -> -ate
        ("installation", "install"),  # -ation -> bare stem
    ],
)
def test_inflection_strips_to_the_root(word: str, root: str) -> None:
    roots = inflection_roots(word)
    assert word in roots and root in roots


@pytest.mark.parametrize(
    "word",
    [
        "bus",  # shorter than five letters: never stripped
        "class",  # -ss is not a plural
        "status",  # -us is not a plural
        "analysis",  # -is is not a plural
        "address",
        "v2ses",  # not alphabetic: left alone
        "queue",  # no inflectional suffix
    ],
)
def test_words_without_an_inflection_are_their_own_only_root(
    word: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suffix rules strip nothing from these (the Snowball stem, a rule of its own, is off)."""
    monkeypatch.setattr(rules, "SNOWBALL_STEM", False)
    assert inflection_roots(word) == frozenset({word})


def test_calling_keeps_its_double_l() -> None:
    roots = inflection_roots("calling")
    assert "call" in roots and "cal" not in roots


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("retries", "retrying"),
        ("connecting", "connections"),
        ("validated", "validation"),
        ("exposing", "exposes"),
        ("queued", "queues"),
    ],
)
def test_two_inflections_of_one_word_share_a_root(one: str, other: str) -> None:
    assert inflection_roots(one) & inflection_roots(other)


def test_unrelated_words_share_no_root() -> None:
    assert not inflection_roots("migrate") & inflection_roots("rate")
    assert not inflection_roots("description") & inflection_roots("script")


# --- fold_lemma ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "lemma", "folded"),
    [
        ("went", "go", "go"),  # irregular: suffix rules cannot reach it
        ("indices", "index", "index"),  # irregular plural
        ("commercially", "commercial", "commercial"),  # an -ly adverb
        ("modes", "mod", None),  # a plain truncation is not a lemma
        ("retries", "retr", None),
        ("queue", "queue", None),  # the word itself
        ("queue", "", None),  # no lemma
    ],
)
def test_feed_lemma_folds_only_where_suffix_rules_cannot(word: str, lemma: str, folded: str | None) -> None:
    assert fold_lemma(word, lemma) == folded


# --- snowball_stem from many threads ------------------------------------------------------


def test_snowball_stem_gives_each_thread_the_single_threaded_answer() -> None:
    """The server ranks in worker threads; a stemmer shared between them once crashed a
    find_examples call under load (CI's fleet run). Every thread must get the stem one
    stemmer alone gives."""
    import random
    import threading

    import snowballstemmer  # type: ignore[import-untyped]

    from imqueue_mcp.ranker.text import snowball_stem

    rng = random.Random(7)
    suffixes = ["ational", "ization", "fulness", "iveness", "ing", "edly", "ements", "ousli", "icate", "ies"]
    letters = "abcdefghilmnoprstuv"
    stems = ("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(6000))
    vocabulary = sorted({stem + rng.choice(suffixes) for stem in stems})
    alone = snowballstemmer.stemmer("english")
    expected = {word: alone.stemWord(word) for word in vocabulary}
    snowball_stem.cache_clear()
    wrong: list[str] = []
    errors: list[BaseException] = []

    def stem_all(seed: int) -> None:
        order = vocabulary[:]
        random.Random(seed).shuffle(order)
        for word in order:
            try:
                if snowball_stem(word) != expected[word]:
                    wrong.append(word)
            except Exception as error:  # the shared stemmer raised IndexError mid-word
                errors.append(error)

    threads = [threading.Thread(target=stem_all, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and not wrong, (errors[:3], wrong[:10])


def test_the_compiled_stemmer_stems_every_corpus_word_as_snowballs_pure_python_one() -> None:
    """ranker/text.py stems through snowballstemmer, which runs PyStemmer's compiled stemmers
    (libstemmer_c, ~20x faster) where that is installed; the stems, and so the index and every
    ranking, are those of snowballstemmer's pure-Python English stemmer either way, checked on
    every word of the docs and on the inflections the ranker strips."""
    from snowballstemmer.english_stemmer import EnglishStemmer  # type: ignore[import-untyped]

    from imqueue_mcp.ranker.text import snowball_stem

    from conftest import SITE

    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    words = {
        w.lower() for path in SITE.rglob("*.md") for w in re.findall(r"[A-Za-z]{2,}", path.read_text("utf-8"))
    }
    words |= {
        base + ending
        for base in ("queue", "connect", "retry", "run", "expose")
        for ending in ("s", "es", "ing", "ed", "ies", "ation", "ations")
    }
    pure = EnglishStemmer()
    snowball_stem.cache_clear()
    assert len(words) > 5000
    assert [w for w in sorted(words) if snowball_stem(w) != pure.stemWord(w)] == []


def test_an_index_keeps_its_words_stems_and_ranks_the_same_without_them() -> None:
    """InvertedIndex.stems: the Snowball stem of each indexed word the roots stem, worked out at
    build and kept in the snapshot so a query's words the docs hold are not stemmed again. They
    are the stemmer's own, and an index that has lost them (a stand-in for a cold cache) ranks
    every query the same, scores included."""
    from imqueue_mcp.ranker import Index
    from imqueue_mcp.ranker.text import snowball_stem, stemmed

    from fixtures.corpus_tiny import index_of, page, section

    built = index_of(
        page("/retry/", "Retrying deliveries", summary="a failed delivery is retried with backoff"),
        page("/config/", "Configuration", summary="configurable connections and their configurations"),
        section("/config/#timeouts", "Timeouts", text="connection timeouts are configured per queue"),
    )
    stems = built.inverted.stems
    assert stems and all(stemmed(word) for word in stems)
    assert {word: snowball_stem(word) for word in stems} == stems
    assert stems["configurable"] == "configur"  # a stem no suffix rule reaches, and a root:
    assert {"configurable", "configurations", "configured"} <= set(built.inverted.roots["configur"].split())
    without = Index.from_wire(built.corpus, built.to_wire() | {"stems": {}})
    for query in ("retries", "configure connection", "configured timeout", "backoffs retrying"):
        ranked = [(h.path, h.score) for h in built.search(query).results]
        assert ranked and ranked == [(h.path, h.score) for h in without.search(query).results], query


def test_a_token_longer_than_any_word_is_answered_but_not_kept_in_the_caches() -> None:
    # audit 11: one made-up dotted token of 8,000 characters kept ~170 kB of pieces for good, per call
    from imqueue_mcp.ranker import text

    long = ".".join(f"{a}{b}" for a in "abcdefgh" for b in "abcdefghij")  # 80 pieces, 239 characters
    cached: list[text.short_cached[Any]] = [
        text.token_terms,
        text.segment_identifier,
        text.token_compounds,
        text.snowball_stem,
    ]

    def ask(token: str) -> tuple[str, ...]:
        text.token_compounds(token)
        text.segment_identifier(token)
        text.snowball_stem(token.replace(".", ""))
        text.inflection_roots(token.replace(".", ""))
        return text.token_terms(token)

    terms = ask(long)  # its short pieces are words like any other: those are kept
    before = [function.cache_info().currsize for function in cached]
    ask(".".join(reversed(long.split("."))))  # another long token of the same pieces: nothing new kept

    assert terms[0] == long and "aa" in terms and len(terms) == 82  # the whole, joined, 80 pieces
    assert [function.cache_info().currsize for function in cached] == before
    assert len(long) > text.MAX_CACHED_TOKEN >= len("MigrateDownOptionsDeleteFolder")
    text.token_terms("MigrateDownOptions")
    assert text.token_terms.cache_info().currsize >= 1

"""The answer and reply caches: a repeated question on the same index is not ranked again, nor its
reply made again for the same corpus and sizes, and nothing outlives the corpus that gave it. Real
indexes and snapshots of the tiny fixture site; nothing stubbed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from imqueue_mcp import docsource
from imqueue_mcp.server.config import Config
from imqueue_mcp.server.docs import search_docs as search
from imqueue_mcp.server.docs.answer_cache import HIT_BYTES, AnswerCache, ReplyCache, reply_bytes
from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper
from imqueue_mcp.server.docs.hit_passages import PassageOptions
from imqueue_mcp.server.docs.sizes import DocSizes

from conftest import tiny_site


def fresh_index() -> Any:
    return docsource.build(mirror=tiny_site()).index()


@pytest.fixture(scope="module")
def index() -> Any:
    return fresh_index()


def urls(response: Any) -> list[str]:
    return [hit.url for hit in response.results]


def test_a_repeated_question_is_answered_from_the_cache_exactly_as_the_ranker_answers(index: Any) -> None:
    cache = AnswerCache()
    first = cache.search(index, "redis queue", 6, None)
    again = cache.search(index, "redis queue", 6, None)
    assert again is first and (cache.hits, cache.misses) == (1, 1)
    assert urls(first) == urls(index.search("redis queue", limit=6)) and first.results


def test_limit_and_package_filter_are_part_of_the_question(index: Any) -> None:
    cache = AnswerCache()
    cache.search(index, "redis queue", 6, None)
    fewer = cache.search(index, "redis queue", 1, None)
    assert cache.misses == 2 and len(fewer.results) <= 1


def test_a_new_index_empties_the_cache(index: Any) -> None:
    cache = AnswerCache()
    cache.search(index, "redis queue", 6, None)
    replacement = fresh_index()
    answer = cache.search(replacement, "redis queue", 6, None)
    assert cache.misses == 2 and len(cache) == 1
    assert urls(answer) == urls(replacement.search("redis queue", limit=6))


def test_the_least_recently_asked_answer_goes_first_when_full(index: Any) -> None:
    cache = AnswerCache(max_answers=2)
    cache.search(index, "redis", 6, None)
    cache.search(index, "queue", 6, None)
    cache.search(index, "redis", 6, None)  # now the most recent
    cache.search(index, "service", 6, None)  # "queue" goes
    assert len(cache) == 2
    cache.search(index, "redis", 6, None)
    cache.search(index, "queue", 6, None)
    assert (cache.hits, cache.misses) == (2, 4)


def test_a_refused_search_is_raised_every_time_and_not_kept(index: Any) -> None:
    cache = AnswerCache()
    for _ in range(2):
        with pytest.raises(ValueError):
            cache.search(index, "redis", 0, None)
    assert len(cache) == 0 and cache.misses == 0


def test_a_repeated_search_docs_call_gets_the_reply_kept_for_its_corpus_and_sizes(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.msgpack"
    docsource.save_snapshot(docsource.build(mirror=tiny_site()), path)
    keeper = CorpusKeeper(Config(snapshot=path, offline=True))
    replies, sizes, answers = ReplyCache(), DocSizes(), AnswerCache()

    def ask(limit: int = 6, passages: PassageOptions | None = None) -> dict[str, Any]:
        call = search.search_docs(
            keeper, "redis queue", limit, None, sizes, passages or PassageOptions(), answers, replies
        )
        return asyncio.run(call)

    first = ask()
    assert first["results"] and ask() is first and (replies.hits, replies.misses) == (1, 1)
    assert ask(limit=2) is not first and ask(passages=PassageOptions(enabled=False)) is not first
    assert replies.misses == 3 and len(replies) == 3
    # a get_doc read measures a hit's page: the reply made before no longer says its size
    url = first["results"][0]["url"]
    sizes.record({"url": url, "totalTokens": 1234})
    measured = ask()
    assert measured is not first and measured["results"][0]["tokens"] == 1234
    assert measured["results"][0]["tokensBasis"] == "measured"
    sizes.record({"url": url, "totalTokens": 1234})  # the same size again changes nothing
    assert ask() is measured
    # apart from what the reply says of its size, the same reply
    assert [hit["url"] for hit in measured["results"]] == [hit["url"] for hit in first["results"]]


def test_replies_belong_to_one_corpus_and_the_least_recently_asked_goes_first() -> None:
    replies = ReplyCache(max_replies=2)
    corpus, replacement = object(), object()
    replies.put(corpus, "a", {"query": "a"})
    replies.put(corpus, "b", {"query": "b"})
    assert replies.get(corpus, "a") == {"query": "a"}  # now the most recent
    replies.put(corpus, "c", {"query": "c"})  # "b" goes
    assert replies.get(corpus, "b") is None and len(replies) == 2
    assert replies.get(replacement, "a") is None and len(replies) == 0  # another corpus answers


def test_replies_are_kept_within_their_estimated_bytes_whatever_budgets_clients_ask_for() -> None:
    corpus = object()

    def reply(query: str, passage_tokens: int, hits: int = 1) -> dict[str, Any]:
        return {"query": query, "results": [{}] * hits, "passageBudget": {"tokens": passage_tokens}}

    big = reply("big", 20_000, hits=20)  # the most a client may ask for: ~100 KB
    assert reply_bytes(big) == 4 * 20_000 + 20 * HIT_BYTES + 3
    each = reply_bytes(reply("big0", 20_000, hits=20))
    replies = ReplyCache(max_replies=100, max_bytes=3 * each)
    for number in range(5):
        replies.put(corpus, number, reply(f"big{number}", 20_000, hits=20))
    assert len(replies) == 3 and replies.weight <= replies.max_weight  # the two oldest went
    assert replies.get(corpus, 0) is None and replies.get(corpus, 4) is not None
    too_big = ReplyCache(max_replies=100, max_bytes=reply_bytes(big) - 1)
    too_big.put(corpus, "big", big)  # heavier alone than the whole budget: not kept
    assert len(too_big) == 0 and too_big.weight == 0
    # replacing a key counts its new weight only, and a new corpus starts from nothing
    replies.put(corpus, 4, reply("small", 10))
    assert replies.weight == 2 * each + reply_bytes(reply("small", 10))
    replies.get(object(), 4)
    assert len(replies) == 0 and replies.weight == 0

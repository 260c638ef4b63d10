"""The answer cache: a repeated question on the same index is not ranked again, and no answer
outlives the index that gave it. Real indexes of the tiny fixture site; nothing stubbed."""

from __future__ import annotations

from typing import Any

import pytest

from imqueue_mcp import docsource
from imqueue_mcp.server.docs.answer_cache import AnswerCache

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

"""The ranker's answers, and search_docs' whole replies, kept for the corpus that gave them: a
repeated question is not ranked, nor its passages cut, twice.

Ranking is pure: the same index, query, limit and package filter give the same answer, so
an answer can be reused for as long as the index that produced it is the one answering. On
a hosted server many agents ask the same few questions, and ranking is most of a
search_docs call's cost (about 1.5 ms of ~3.5 ms on the benchmark machine, see
docs/performance.md), so reuse is what lets search_docs keep up with a tool that does nothing.
Since passages came (issue 21), cutting them is the larger part of a repeated question's cost
(0.5 of 0.6 ms in-process): ReplyCache keeps the whole structured reply, for the corpus object
that answered (its index, and its note and date, which the reply states).

- Entries belong to one index (AnswerCache) or one loaded corpus (ReplyCache): the first lookup
  for another empties the cache, so no answer outlives its corpus.
- At most MAX_ANSWERS / MAX_REPLIES entries, least recently used out first; a few MB at most.
- A refused search (ValueError for an unknown package filter) is not kept: it is raised again.
- What is cached is shared: callers read it and build their own result from it, never change it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from imqueue_mcp.ranker import Index, SearchResponse

MAX_ANSWERS = 1024
MAX_REPLIES = 256  # a reply with the default passage budget is ~12 KB of JSON
# ...and at most this much of them, estimated (reply_bytes): a client asking for 20 hits with
# 20,000 tokens of passages each time (~100 KB a reply) fills 40 entries, not 256.
MAX_REPLY_BYTES = 4 * 1024 * 1024
HIT_BYTES = 1024  # a hit's fields besides its passage (title, URL, description, ...), estimated

Owner = TypeVar("Owner")
Key = TypeVar("Key", bound=Hashable)
Value = TypeVar("Value")


class OwnedCache(Generic[Owner, Key, Value]):
    """At most `size` values (and, with `weigh`, at most `max_weight` of their weights), least
    recently used out first, all of one owner (held: its id is never reused while it is): a
    lookup for another owner empties the cache first. `observe`, when set (the hosted metrics),
    is told of every lookup: True for a hit."""

    def __init__(self, size: int, weigh: Callable[[Value], int] | None = None, max_weight: int = 0) -> None:
        self.size = size
        self.observe: Callable[[bool], None] | None = None
        self._weigh = weigh
        self.max_weight = max_weight
        self.weight = 0  # of the values kept, when weighed
        self._owner: Owner | None = None
        self._values: OrderedDict[Key, tuple[Value, int]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, owner: Owner, key: Key) -> Value | None:
        self._own(owner)
        kept = self._values.get(key)
        if self.observe is not None:
            self.observe(kept is not None)
        if kept is None:
            return None
        self._values.move_to_end(key)
        self.hits += 1
        return kept[0]

    def put(self, owner: Owner, key: Key, value: Value) -> None:
        """Keep `value` for `owner` (what get() was last asked for, or it empties the cache): a
        miss, made and kept (a lookup that found nothing and then failed is not counted). A value
        weighing more than max_weight alone is not kept."""
        self.misses += 1
        self._own(owner)
        weight = 0 if self._weigh is None else self._weigh(value)
        if self._weigh is not None and weight > self.max_weight:
            return
        old = self._values.pop(key, None)
        self.weight += weight - (old[1] if old is not None else 0)
        self._values[key] = (value, weight)
        while len(self._values) > self.size or (self._weigh is not None and self.weight > self.max_weight):
            self.weight -= self._values.popitem(last=False)[1][1]

    def _own(self, owner: Owner) -> None:
        if owner is not self._owner:
            self._values.clear()
            self.weight = 0
            self._owner = owner

    def __len__(self) -> int:
        return len(self._values)


class AnswerCache(OwnedCache[Index, tuple[str, int, "str | None"], SearchResponse]):
    def __init__(self, max_answers: int = MAX_ANSWERS) -> None:
        super().__init__(max_answers)

    def search(self, index: Index, query: str, limit: int, package: str | None) -> SearchResponse:
        """`index.search(query, limit=limit, package=package)`, from the cache when it has it."""
        key = (query, limit, package)
        answer = self.get(index, key)
        if answer is None:
            answer = index.search(query, limit=limit, package=package)
            self.put(index, key, answer)
        return answer


class ReplyCache(OwnedCache[object, Hashable, dict[str, Any]]):
    """search_docs' structured replies, for the loaded corpus that answered them
    (docs/search_docs.py says what is in the key), at most MAX_REPLY_BYTES of them (reply_bytes)."""

    def __init__(self, max_replies: int = MAX_REPLIES, max_bytes: int = MAX_REPLY_BYTES) -> None:
        super().__init__(max_replies, reply_bytes, max_bytes)


def reply_bytes(reply: dict[str, Any]) -> int:
    """A search_docs reply's size, estimated: its passages' tokens (4 characters each, as the
    budgets count them) and HIT_BYTES a hit, and its query."""
    passages = reply.get("passageBudget", {}).get("tokens", 0)
    return 4 * int(passages) + HIT_BYTES * len(reply.get("results", ())) + len(str(reply.get("query", "")))

"""The ranker's answers, kept for the corpus that gave them: a repeated question is not ranked twice.

Ranking is pure: the same index, query, limit and package filter give the same answer, so
an answer can be reused for as long as the index that produced it is the one answering. On
a hosted server many agents ask the same few questions, and ranking is most of a
search_docs call's cost (about 1.5 ms of ~3.5 ms on the benchmark machine, see
docs/performance.md), so reuse is what lets search_docs keep up with a tool that does nothing.

- Entries belong to one index: the first lookup on another index (a refresh landed, or a
  snapshot gave way to the live sites) empties the cache, so no answer outlives its corpus.
- At most MAX_ANSWERS entries, least recently used out first; a few MB at most.
- A refused search (ValueError for an unknown package filter) is not kept: it is raised again.
- The cached response is shared: callers read it and build their own result from it.
"""

from __future__ import annotations

from collections import OrderedDict

from imqueue_mcp.ranker import Index, SearchResponse

MAX_ANSWERS = 1024


class AnswerCache:
    def __init__(self, max_answers: int = MAX_ANSWERS) -> None:
        self.max_answers = max_answers
        self._index: Index | None = None  # the index the entries belong to (held: its id is never reused)
        self._answers: OrderedDict[tuple[str, int, str | None], SearchResponse] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def search(self, index: Index, query: str, limit: int, package: str | None) -> SearchResponse:
        """`index.search(query, limit=limit, package=package)`, from the cache when it has it."""
        if index is not self._index:
            self._answers.clear()
            self._index = index
        key = (query, limit, package)
        answer = self._answers.get(key)
        if answer is not None:
            self._answers.move_to_end(key)
            self.hits += 1
            return answer
        answer = index.search(query, limit=limit, package=package)
        self.misses += 1
        self._answers[key] = answer
        if len(self._answers) > self.max_answers:
            self._answers.popitem(last=False)
        return answer

    def __len__(self) -> int:
        return len(self._answers)

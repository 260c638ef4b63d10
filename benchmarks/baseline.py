"""The plain BM25 baseline the KPI README measures: rank-bm25's BM25Okapi over the same corpus.

Documents: one per tier-1 record (title + summary + keywords) and one per prose section
(heading + text), both sites; imqueue.com records are marked external. Tokens: lowercase
alphanumeric words, nothing else (no stemming, no stopwords, no field weights). Results:
ranked by score, zero scores dropped, 60 deep. A page and its intro section share a URL, so a
URL can appear twice: that is what plain BM25 over these documents returns.

This module imports neither ranker/ nor build_index/ at load time, so the speed benchmark's
baseline child process measures rank-bm25 alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

DEPTH = 60  # as deep as ranker.rules.BATCH_DEPTH: evaluate.py needs ranks past 50
TIER_ONE = ("page", "symbol", "answer")
PROSE = "section"
WORD = re.compile(r"[^\W_]+")


class CorpusDocument(Protocol):
    """The fields of ranker.corpus.Document the baseline reads."""

    @property
    def path(self) -> str: ...
    @property
    def site(self) -> str: ...
    @property
    def tier(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def keywords(self) -> str: ...
    @property
    def heading(self) -> str: ...
    @property
    def text(self) -> str: ...


@dataclass(frozen=True)
class BaselineDocument:
    path: str
    external: bool
    text: str


def tokenize(text: str) -> list[str]:
    return WORD.findall(text.lower())


def baseline_documents(documents: Iterable[CorpusDocument]) -> list[BaselineDocument]:
    """Tier-1 records as title + summary + keywords, prose sections as heading + text."""
    out = []
    for doc in documents:
        if doc.tier in TIER_ONE:
            parts: Sequence[str] = (doc.title, doc.summary, doc.keywords)
        elif doc.tier == PROSE:
            parts = (doc.heading, doc.text)
        else:
            continue
        text = " ".join(part for part in parts if part)
        out.append(BaselineDocument(path=doc.path, external=doc.site == "com", text=text))
    return out


class Bm25Baseline:
    """rank-bm25's BM25Okapi over the documents. `scores` is its get_scores, term for term and float
    for float, with each term's document frequencies looked up in a postings table instead of read
    from every document's dict (the library's Python loop over the corpus, 2-3 ms a term): the KPI
    ranks 10,000 generated queries with it. `library_scores` is the library's own call, which the
    latency benchmark times."""

    def __init__(self, documents: Sequence[BaselineDocument]) -> None:
        self.paths = [d.path for d in documents]
        self.external = [d.external for d in documents]
        self.bm25 = BM25Okapi([self.words(d.text) for d in documents])
        # word -> (document ids, counts), and the documents' lengths: made on the first scores()
        # call, so the model the latency benchmark builds, saves and loads is the library's alone
        self._postings: tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray] | None = None

    def postings(self) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], np.ndarray]:
        if self._postings is None:
            table: dict[str, tuple[list[int], list[int]]] = {}
            for number, frequencies in enumerate(self.bm25.doc_freqs):
                for word, count in frequencies.items():
                    ids, counts = table.setdefault(word, ([], []))
                    ids.append(number)
                    counts.append(count)
            arrays = {w: (np.array(i), np.array(c)) for w, (i, c) in table.items()}
            self._postings = arrays, np.array(self.bm25.doc_len)
        return self._postings

    def words(self, text: str) -> list[str]:
        return tokenize(text)

    def library_scores(self, query: str) -> np.ndarray:
        tokens = self.words(query)
        if not tokens:
            return np.zeros(len(self.paths))
        return np.asarray(self.bm25.get_scores(tokens), dtype=float)

    def scores(self, query: str) -> np.ndarray:
        """BM25Okapi.get_scores(words), the same arithmetic in the same order."""
        (postings, doc_len), model = self.postings(), self.bm25
        score = np.zeros(len(self.paths))
        length_norm = model.k1 * (1 - model.b + model.b * doc_len / model.avgdl)  # per document
        for word in self.words(query):
            frequency = np.zeros(len(self.paths), dtype=int)
            ids, counts = postings.get(word, (None, None))
            if ids is not None:
                frequency[ids] = counts
            score += (model.idf.get(word) or 0) * (frequency * (model.k1 + 1) / (frequency + length_norm))
        return score

    def top(self, query: str, limit: int = DEPTH) -> list[tuple[str, bool, float]]:
        """(path, external, score) best first, zero scores dropped."""
        scores = self.scores(query)
        # stable sort: equal scores keep corpus order, so runs are reproducible
        best = np.argsort(-scores, kind="stable")[:limit]
        return [(self.paths[i], self.external[i], float(scores[i])) for i in best if scores[i] > 0]

    def top6_ids(self, query: str) -> list[int]:
        """The latency benchmark's unit of work: rank-bm25's get_scores + the six best document ids."""
        return best_six(self.library_scores(query))

    def batch_line(self, query: str) -> dict[str, Any]:
        """One results line in the ../shared/kpi format, like build_index.search_cli.batch_line."""
        return {
            "query": query,
            "results": [{"u": u, "external": e, "score": round(s, 6)} for u, e, s in self.top(query)],
        }


def best_six(scores: Any) -> list[int]:
    """The ids of the six best scores, best first: what a latency run times after the scoring."""
    if len(scores) <= 6:
        return [int(i) for i in np.argsort(-scores)]
    best = np.argpartition(-scores, 6)[:6]
    return [int(i) for i in best[np.argsort(-scores[best])]]

"""The speed limit for lexical scoring in Python: bm25s (sparse matrices, numpy) over the same
documents and tokens as the rank-bm25 baseline (benchmarks/baseline.py).

Scores are precomputed per (term, document) into a sparse matrix at index time, so a query is
a sum of a few matrix rows. Lucene's BM25 variant with bm25s's defaults (k1 1.5, b 0.75, as
BM25Okapi's). Its unit of work in the latency benchmark matches the other sides': score every
document, pick the six best. Like baseline.py, this module never imports ranker/ or
build_index/, so its child process measures bm25s alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bm25s  # type: ignore[import-untyped]
import numpy as np

from .baseline import DEPTH, BaselineDocument, best_six, tokenize


class Bm25sBaseline:
    def __init__(self, documents: Sequence[BaselineDocument], retriever: Any = None) -> None:
        self.paths = [d.path for d in documents]
        self.external = [d.external for d in documents]
        if retriever is None:
            retriever = bm25s.BM25()
            retriever.index([tokenize(d.text) for d in documents], show_progress=False)
        self.retriever = retriever
        self.vocabulary: dict[str, int] = retriever.vocab_dict

    def save(self, folder: Path) -> None:
        self.retriever.save(str(folder), show_progress=False)

    @classmethod
    def load(cls, folder: Path, documents: Sequence[BaselineDocument]) -> Bm25sBaseline:
        """The saved matrices; the documents (paths, external marks) are the caller's, as with
        the parent-provided list of the rank-bm25 child."""
        return cls(documents, bm25s.BM25.load(str(folder), show_progress=False))

    def scores(self, query: str) -> np.ndarray:
        ids = [self.vocabulary[t] for t in tokenize(query) if t in self.vocabulary]
        if not ids:
            return np.zeros(len(self.paths), dtype=np.float32)
        return np.asarray(self.retriever.get_scores(ids))

    def top6_ids(self, query: str) -> list[int]:
        """The latency benchmark's unit of work: every document's score + the six best ids."""
        return best_six(self.scores(query))

    def retrieve_top6_ids(self, query: str) -> list[int]:
        """The same six through bm25s's front door, retrieve() (top-k selection, its threading
        switch, result arrays): how bm25s is usually called, for a second, more common figure."""
        tokens = [t for t in tokenize(query) if t in self.vocabulary]
        if not tokens:
            return []
        ids, _scores = self.retriever.retrieve([tokens], k=min(6, len(self.paths)), show_progress=False)
        return [int(i) for i in ids[0]]

    def retrieve_records(self, query: str, k: int = DEPTH) -> list[dict[str, Any]]:
        """The batch benchmark's unit of work: tokenise the query, retrieve() its best k, and
        turn the ids into result records in the ../shared/kpi line's shape (zero scores dropped)."""
        tokens = [t for t in tokenize(query) if t in self.vocabulary]
        if not tokens:
            return []
        ids, scores = self.retriever.retrieve([tokens], k=min(k, len(self.paths)), show_progress=False)
        return [
            {"u": self.paths[i], "external": self.external[i], "score": round(s, 6)}
            for i, s in zip(ids[0].tolist(), scores[0].tolist(), strict=True)
            if s > 0
        ]

    def top(self, query: str, limit: int = DEPTH) -> list[tuple[str, bool, float]]:
        """(path, external, score) best first, zero scores dropped (stable: ties in corpus order)."""
        scores = self.scores(query)
        best = np.argsort(-scores, kind="stable")[:limit]
        return [(self.paths[i], self.external[i], float(scores[i])) for i in best if scores[i] > 0]

    def batch_line(self, query: str) -> dict[str, Any]:
        """One results line in the ../shared/kpi format, like Bm25Baseline.batch_line."""
        return {
            "query": query,
            "results": [{"u": u, "external": e, "score": round(s, 6)} for u, e, s in self.top(query)],
        }

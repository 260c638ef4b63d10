"""ranker: the search engine. Pure: no network, no MCP, no clock. Corpus in, ranked results out.

    corpus.py         Document and Corpus: the records the builder hands over
    text.py           words, identifier segments, inflection roots, stopwords
    pasted.py         what is searched: a pasted error output's message lines, its frames left out
    rules.py          every ranking constant, named
    index.py          inverted index (packed postings), term forms (as written, inflection, prefix, typo)
    page_evidence.py  whole pages as a fielded BM25 (title, headings, body) with RM3-style feedback,
                      fused with record scores by rules.PAGE_FUSION (off unless the nested CV keeps it)
    search.py         searched -> checked_plan -> rank (score_records, coverage, record_factors) ->
                      order (floor, caps) -> hit_of -> SearchResponse; --explain's notes beside the score
    confidence.py     high / medium / low per hit, from its score and the share of the query it matches
    results.py        the one result shape: response_dict / hit_dict (imq-search --json, search_docs)

Flow: Corpus -> Index (built once, or loaded from a snapshot) -> Index.search(query) -> hits.
"""

from __future__ import annotations

from typing import Any

from . import dense
from . import search as ranking
from .corpus import Corpus, Document
from .index import InvertedIndex
from .results import hit_dict, response_dict
from .search import Brief, Guidance, Hit, SearchResponse, normalize_package
from .text import snowball_stem

__all__ = [
    "Brief",
    "Corpus",
    "Document",
    "Guidance",
    "Hit",
    "Index",
    "SearchResponse",
    "hit_dict",
    "normalize_package",
    "response_dict",
]


class Index:
    """A searchable corpus. `Index(corpus)` builds the postings; `Index.from_wire` reuses stored ones."""

    def __init__(self, corpus: Corpus, inverted: InvertedIndex | None = None) -> None:
        self.corpus = corpus
        self.inverted = inverted or InvertedIndex.build(corpus)

    @classmethod
    def from_wire(cls, corpus: Corpus, wire: dict[str, Any]) -> Index:
        return cls(corpus, InvertedIndex.from_wire(corpus, wire))

    def to_wire(self) -> dict[str, Any]:
        return self.inverted.to_wire()

    def sibling(self) -> Index:
        """This index for ranking under other values of the rules' constants, with the tables
        that depend only on the postings shared (InvertedIndex.sibling): a tuner's setting after
        the first ranks without decoding them again."""
        return Index(self.corpus, self.inverted.sibling())

    def warm(self) -> None:
        """Make now what the first search would otherwise make: numpy's import, the per-record
        tables every query reads (dense.tables, dense.record_table) and the query shapes' subject
        masks (a choice query's first search read every heading: 19 ms). A server calls it off its
        event loop while it loads a corpus, so that its first answer does not pay for them."""
        dense.tables(self.inverted)
        dense.record_table(self.inverted)
        self.inverted.initial_buckets()  # a miss's nearest words read them: ~4 ms to make
        snowball_stem("warming")  # imports the stemmers, which a query's unseen word would
        for subject in ranking.SHAPE_SUBJECTS:  # the first query of a shape would read every heading
            ranking.subject_mask(self.inverted, subject)

    def search(
        self,
        query: str,
        limit: int = 6,
        package: str | None = None,
        explain: bool = False,
        parent_cap: int | None = None,
    ) -> SearchResponse:
        """parent_cap: records sharing a parent before the rest move down (default
        rules.PER_PARENT_CAP; the code-example index passes rules.EXAMPLE_PARENT_CAP)."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        return ranking.search(
            self.inverted,
            query,
            limit=limit,
            package=package,
            explain=explain,
            sections=self.corpus.section_names,
            parent_cap=parent_cap,
        )

    def records_using(self, word: str, inflections: bool = True) -> frozenset[int]:
        """The ids of the records holding `word` as written (lowercase; an identifier's joined
        form, e.g. ddtrace), and with `inflections` its inflected forms too (trace: traced,
        tracing); no prefixes, no typo corrections."""
        forms, _ = self.inverted.term_forms(word.lower(), allow_typo=False)
        kinds = ("as written", "inflection") if inflections else ("as written",)
        return frozenset(i for form in forms if form.kind in kinds for i in self.inverted.row(form.word)[0])

    def brief(self, query: str, limit: int, package: str | None = None) -> tuple[list[Brief], str | None]:
        """search()'s ranking, each result only its path, site, score and confidence (what
        `imq-search --batch` writes), and the typo-corrected query if one was made."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        if not query.strip():
            return [], None
        return ranking.brief(self.inverted, query, limit, package)

"""Page-level evidence: a fielded BM25 (BM25F) over whole pages, with RM3-style feedback.

A record is part of a page: a page's own record, its prose sections, its answers. Record scores
see one part at a time; a query often names what a page as a whole is about, its title in one
word and its headings in another. So each page is also indexed whole, in three fields (the
page's title and keywords; its headings: section titles and answer questions; its body: every
summary, description and prose), each weighted (title heaviest) and length-normalised on its
own, summed, then saturated once: BM25F. The words are Snowball stems (reliable ~ reliability).

    page_key(doc)            the page a record belongs to: (site, path without its #anchor)
    PageIndex.build(docs)    per stem, the pages holding it and their saturated fielded evidence
    PageIndex.evidence(q)    per page, sum over the query's stems of idf x evidence; with RM3-
                             style feedback (rules.FEEDBACK_WEIGHT): the words the best pages
                             share, weighed by those pages' scores, added to the query
    record_factor            per record, 1 + PAGE_FUSION x its page's share of the best page

The postings are built with the record index (snapshot build time) and stored beside it; the
numpy tables are made on the first search. Pure: no I/O.
"""

from __future__ import annotations

from array import array
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import rules
from .corpus import Document
from .text import STOPWORDS, query_terms, snowball_stem, words

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]
    Ids = npt.NDArray[np.intp]

PAGE_FIELDS = ("title", "headings", "body")


def page_key(doc: Document) -> tuple[str, str]:
    return doc.site, doc.path.split("#", 1)[0]


def stem(word: str) -> str:
    return snowball_stem(word) if word.isalpha() else word


def stems(text: str) -> list[str]:
    """The text's words (identifiers and their segments, as the record index splits them),
    template words left out, each reduced to its Snowball stem."""
    return [stem(w) for w in words(text) if w not in STOPWORDS]


def query_stems(query: str) -> list[str]:
    return list(dict.fromkeys(stem(w) for w in query_terms(query) if w not in STOPWORDS))


def page_fields(documents: Sequence[Document]) -> tuple[list[int], list[dict[str, list[str]]]]:
    """Per record its page number, and per page the stems of each field. A page's title field is
    its own record's title and keywords; a page known only by anchored parts takes their label."""
    number: dict[tuple[str, str], int] = {}
    page_of: list[int] = []
    fields: list[dict[str, list[str]]] = []
    labelled: set[int] = set()
    for doc in documents:
        key = page_key(doc)
        if key not in number:
            number[key] = len(fields)
            fields.append({name: [] for name in PAGE_FIELDS})
        page = number[key]
        page_of.append(page)
        own = "#" not in doc.path
        target = fields[page]
        if own and page not in labelled:
            target["title"] += stems(f"{doc.title} {doc.keywords.replace(',', ' ')}")
            labelled.add(page)
        elif not own:
            target["headings"] += stems(doc.heading or doc.title)  # a section's title is its heading
        body = " ".join((doc.summary, doc.curated, doc.emphasis, doc.text, " ".join(doc.topics)))
        target["body"] += stems(body)
    for page, doc in ((page_of[i], d) for i, d in enumerate(documents)):
        if page not in labelled and doc.section:
            fields[page]["title"] += stems(doc.section)
            labelled.add(page)
    return page_of, fields


def fielded_postings(fields: Sequence[dict[str, list[str]]]) -> dict[str, dict[int, float]]:
    """stem -> {page: saturated BM25F evidence}: per field, weight x count / its length norm,
    summed over the fields, then tf (k + 1) / (tf + k) with k = PAGE_SATURATION."""
    average = {name: (sum(len(page[name]) for page in fields) / len(fields)) or 1.0 for name in PAGE_FIELDS}
    b, k = rules.PAGE_LENGTH_NORMALISATION, rules.PAGE_SATURATION
    evidence: dict[str, dict[int, float]] = defaultdict(dict)
    for page, per_field in enumerate(fields):
        for name, found in per_field.items():
            if not found:
                continue
            norm = 1 - b + b * len(found) / average[name]
            weight = rules.PAGE_FIELD_WEIGHTS[name] / norm
            for word, count in Counter(found).items():
                row = evidence[word]
                row[page] = row.get(page, 0.0) + weight * count
    return {
        word: {page: tf * (k + 1) / (tf + k) for page, tf in row.items()}
        for word, row in sorted(evidence.items())
    }


@dataclass
class Tables:
    """The numpy form, made on the first search: per stem its pages and evidence (term-major),
    per page its stems (page-major, for feedback), per record its page."""

    stem_id: dict[str, int]
    stem_names: list[str]
    term_start: Ids
    term_pages: Ids
    term_values: Floats
    idf: Floats  # per stem
    long: Floats  # per stem: 1.0 for three letters or more, else 0.0
    page_start: Ids
    page_terms: Ids
    page_values: Floats
    page_of: Ids
    pages: int


class PageIndex:
    def __init__(self, page_of: bytes, stems_: list[str], starts: bytes, pages: bytes, values: bytes) -> None:
        self.wire: dict[str, Any] = {
            "page_of": page_of,
            "stems": stems_,
            "starts": starts,
            "pages": pages,
            "values": values,
        }
        self._tables: Tables | None = None

    @classmethod
    def build(cls, documents: Sequence[Document]) -> PageIndex:
        page_of, fields = page_fields(documents)
        postings = fielded_postings(fields)
        starts, pages, values = array("I", [0]), array("I"), array("f")
        for row in postings.values():
            for page in sorted(row):
                pages.append(page)
                values.append(row[page])
            starts.append(len(pages))
        return cls(
            array("I", page_of).tobytes(), list(postings), starts.tobytes(), pages.tobytes(), values.tobytes()
        )

    def to_wire(self) -> dict[str, Any]:
        return dict(self.wire)

    @classmethod
    def from_wire(cls, wire: dict[str, Any]) -> PageIndex:
        return cls(wire["page_of"], list(wire["stems"]), wire["starts"], wire["pages"], wire["values"])

    def tables(self) -> Tables:
        import numpy as np

        if self._tables is None:
            wire = self.wire
            starts = np.frombuffer(wire["starts"], dtype=np.uint32).astype(np.intp)
            pages = np.frombuffer(wire["pages"], dtype=np.uint32).astype(np.intp)
            values = np.frombuffer(wire["values"], dtype=np.float32).astype(np.float64)
            page_of = np.frombuffer(wire["page_of"], dtype=np.uint32).astype(np.intp)
            count = int(page_of.max()) + 1 if len(page_of) else 0
            frequency = np.diff(starts)
            terms = np.repeat(np.arange(len(frequency), dtype=np.intp), frequency)
            order = np.argsort(pages, kind="stable")  # page-major, for the feedback words
            page_start = np.zeros(count + 1, dtype=np.intp)
            page_start[1:] = np.cumsum(np.bincount(pages, minlength=count))
            self._tables = Tables(
                stem_id={s: i for i, s in enumerate(wire["stems"])},
                stem_names=list(wire["stems"]),
                term_start=starts,
                term_pages=pages,
                term_values=values,
                long=np.array([len(s) >= 3 for s in wire["stems"]], dtype=np.float64),
                idf=np.log(1 + (count - frequency + 0.5) / (frequency + 0.5)),
                page_start=page_start,
                page_terms=terms[order],
                page_values=values[order],
                page_of=page_of,
                pages=count,
            )
        return self._tables

    def evidence(self, query: str) -> tuple[Floats, list[str]]:
        """Per page, the query's fielded BM25 score mixed with RM3-style feedback: the stems of
        the FEEDBACK_PAGES best pages, each page's words by their share of its evidence, weighed
        by the page's score; the FEEDBACK_TERMS heaviest new stems join the query at
        FEEDBACK_WEIGHT of its mass. Returns the scores and the feedback stems used."""
        import numpy as np

        tables = self.tables()
        ids = [tables.stem_id[s] for s in query_stems(query) if s in tables.stem_id]
        scores = self.weighted(tables, ids, np.full(len(ids), 1.0 / max(len(ids), 1)))
        weight = rules.FEEDBACK_WEIGHT
        if not weight or not ids or not scores.any():
            return scores, []
        best = np.argsort(-scores, kind="stable")[: rules.FEEDBACK_PAGES]
        best = best[scores[best] > 0]
        share = scores[best] / scores[best].sum()
        terms, masses = [], []
        for page, page_share in zip(best.tolist(), share.tolist(), strict=True):
            start, end = tables.page_start[page], tables.page_start[page + 1]
            values = tables.page_values[start:end]
            terms.append(tables.page_terms[start:end])
            masses.append(values * (page_share / values.sum()))
        distinct, where = np.unique(np.concatenate(terms), return_inverse=True)
        mass: Floats = np.bincount(where.reshape(-1), weights=np.concatenate(masses)).astype(np.float64)
        # RM3's P(w|R), times idf: on a docs site every page says the product's name, which
        # feedback must not pick; the query's own stems and stems of two letters are not feedback
        mass *= tables.idf[distinct] * tables.long[distinct]
        mass[np.isin(distinct, ids)] = 0.0
        order = np.lexsort((distinct, -mass))[: rules.FEEDBACK_TERMS]
        order = order[mass[order] > 0]
        if not len(order):
            return scores, []
        chosen = distinct[order].tolist()
        added = self.weighted(tables, chosen, mass[order] / mass[order].sum())
        names = tables.stem_names
        return (1 - weight) * scores + weight * added, [names[t] for t in chosen]

    @staticmethod
    def weighted(tables: Tables, ids: Sequence[int], weights: Floats) -> Floats:
        """Per page, sum over the stems of weight x idf x evidence."""
        import numpy as np

        if not len(ids):
            return np.zeros(tables.pages, dtype=np.float64)
        pages, values = [], []
        for term, weight in zip(ids, weights.tolist(), strict=True):
            start, end = tables.term_start[term], tables.term_start[term + 1]
            pages.append(tables.term_pages[start:end])
            values.append(tables.term_values[start:end] * (weight * tables.idf[term]))
        result: Floats = np.bincount(
            np.concatenate(pages), weights=np.concatenate(values), minlength=tables.pages
        ).astype(np.float64, copy=False)
        return result

    def record_factor(self, query: str) -> tuple[Floats | None, Floats | None, list[str]]:
        """Per record, 1 + PAGE_FUSION x its page's score / the best page's score (None when the
        rule is off or no page matches); per record that share; the feedback stems used."""
        if not rules.PAGE_FUSION:
            return None, None, []
        scores, feedback = self.evidence(query)
        top = float(scores.max()) if len(scores) else 0.0
        if top <= 0:
            return None, None, feedback
        share = (scores / top)[self.tables().page_of]
        return 1 + rules.PAGE_FUSION * share, share, feedback

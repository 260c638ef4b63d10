"""Per-record arithmetic of a query as whole-corpus vectors (numpy), instead of a loop per record.

The corpus is a few thousand records, so one float64 slot per record and per query is cheap,
and every per-record step of ranker.search (add a term's weighted evidence, add its idf to the
matched mass, coverage, the fixed factor and the boosts) becomes one vector operation. The
arithmetic is the same IEEE double arithmetic in the same order as the per-record formulas in
ranker.search, so scores are bit-for-bit those of the straightforward computation (pinned by
tests/test_ranker_speed_invariants.py). Nothing here reads or writes the world.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import rules
from .index import Form, InvertedIndex

# numpy is imported by the functions that use it, on the first search: a process that builds an
# index (imq-build-index, benchmarks) never holds it, so its peak memory stays the build's.
if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ids = npt.NDArray[np.intp]
    Floats = npt.NDArray[np.float64]
    Mask = npt.NDArray[np.bool_]
    Codes = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Tables:
    """What every query reads per record, as vectors: made once per index, on first search."""

    factor: Floats  # tier x blog x deprecation (float32 in the index, widened as Python does)
    url_order: Ids  # the tie-break
    answer: Mask  # records written as answers
    external: Mask  # imqueue.com records (each site has its own relative floor)


@dataclass(frozen=True)
class RecordTable:
    """Per record, as Python lists (read one record at a time): what ranker.search.cap compares,
    a number per distinct value, and the path a batch line writes. Made once per index, on first
    search."""

    url: list[int]  # (site, path): an answer and its prose section share one URL
    parent: list[int]  # site:parent (or site:path)
    member: list[int]  # lower-cased member name; -1 for none
    package: list[int]  # an API symbol's package (its parent is a class or itself: PER_CLASS_CAP); -1 else
    parents: list[str]  # number -> site:parent, for the reason a record was capped
    members: list[str]
    packages: list[str]
    path: list[str]
    external: list[bool]


def record_table(index: InvertedIndex) -> RecordTable:
    cached: RecordTable | None = index.record_table
    if cached is not None:
        return cached
    urls: dict[tuple[str, str], int] = {}
    parents: dict[str, int] = {}
    members: dict[str, int] = {}
    packages: dict[str, int] = {}
    url: list[int] = []
    parent: list[int] = []
    member: list[int] = []
    package: list[int] = []
    paths: list[str] = []
    for doc_id in range(index.size):
        doc = index.documents[doc_id]
        paths.append(doc.path)
        named, symbol_package = doc.member.lower(), doc.package if doc.tier == "symbol" else None
        url.append(urls.setdefault((doc.site, doc.path), len(urls)))
        parent.append(parents.setdefault(f"{doc.site}:{doc.parent or doc.path}", len(parents)))
        member.append(members.setdefault(named, len(members)) if named else -1)
        package.append(-1 if symbol_package is None else packages.setdefault(symbol_package, len(packages)))
    cached = RecordTable(
        url=url,
        parent=parent,
        member=member,
        package=package,
        parents=list(parents),
        members=list(members),
        packages=list(packages),
        path=paths,
        external=[bool(flag) for flag in index.external],
    )
    index.record_table = cached
    return cached


def tables(index: InvertedIndex) -> Tables:
    import numpy as np

    cached: Tables | None = index.dense_tables
    if cached is None:
        answer = np.zeros(index.size, dtype=np.bool_)
        answer[sorted(index.answers)] = True
        cached = Tables(
            factor=np.frombuffer(index.factor.tobytes(), dtype=np.float32).astype(np.float64),
            url_order=np.frombuffer(index.url_order.tobytes(), dtype=np.uint32).astype(np.intp),
            answer=answer,
            external=np.frombuffer(index.external.tobytes(), dtype=np.int8).astype(np.bool_),
        )
        index.dense_tables = cached
    return cached


def saturate_vector(evidence: Floats) -> Floats:
    """ranker.search.saturate, elementwise: evidence x (k + 1) / (evidence + k)."""
    k = rules.SATURATION
    result: Floats = evidence * (k + 1) / (evidence + k)
    return result


def best_form_evidence(index: InvertedIndex, forms: Sequence[Form]) -> tuple[Ids, Floats]:
    """Per record reached, the largest weighted evidence over the term's forms (forms never add
    up): ranker.search.term_evidence without the form that gave it."""
    import numpy as np

    best = np.zeros(index.size, dtype=np.float64)
    reached = np.zeros(index.size, dtype=np.bool_)
    for form in forms:
        raw_ids, raw_weights = index.row(form.word)
        if not raw_ids:
            continue
        ids = np.frombuffer(raw_ids.tobytes(), dtype=np.uint32).astype(np.intp)
        values = np.frombuffer(raw_weights.tobytes(), dtype=np.float32).astype(np.float64) * form.weight
        best[ids] = np.maximum(best[ids], values)
        reached[ids] = True
    ids = np.flatnonzero(reached)
    return ids, best[ids]


def add_weighted(
    scores: Floats,
    matched_idf: Floats,
    found: Mask,
    row: tuple[Ids, Floats],
    weight: float,
    idf: float | None,
    only_found: bool,
    which: tuple[Codes, int] | None = None,
) -> None:
    """ranker.search.add_term over vectors: the term's weight x its saturated evidence to each
    record's score, and (for a covering term, idf given) its idf to the matched mass. With
    only_found, only records a covering term already found get anything. `which` (codes, bit):
    a covering term also sets its bit in each record's code (see coverage_of_codes)."""
    ids, evidence = row
    if only_found:
        keep = found[ids]
        ids, evidence = ids[keep], evidence[keep]
    scores[ids] += weight * evidence
    if idf is not None:
        matched_idf[ids] += idf
        if which is not None:
            which[0][ids] |= which[1]
    if not only_found:
        found[ids] = True


MAX_CODED_TERMS = 12  # covering terms up to which coverage_of_codes counts subsets (4,096 bins)


def coverage_of_codes(codes: Codes, idfs: Sequence[float], total: float, power: float) -> Floats:
    """coverage ** power per record, from which covering terms it matched (bit k: the
    k-th covering term). The matched idf of a subset is summed in the order add_weighted added
    it and divided as the vector division does, so each value equals coverage_factor's, found
    by counting the few distinct subsets (linear) instead of sorting every record."""
    import numpy as np

    present = np.flatnonzero(np.bincount(codes, minlength=1))
    table = np.zeros(int(present[-1]) + 1 if len(present) else 1, dtype=np.float64)
    for code in present.tolist():
        matched = 0.0
        for bit, idf in enumerate(idfs):
            if code >> bit & 1:
                matched += idf
        table[code] = math.pow(matched / total, power)
    result: Floats = table[codes]
    return result


def coverage_factor(coverage: Floats, power: float) -> Floats:
    """coverage ** power (search.coverage_power), through the same pow() as the per-record formula:
    a query has a handful of distinct coverage values, so each is raised once."""
    import numpy as np

    distinct, where = np.unique(coverage, return_inverse=True)
    powered = np.array([math.pow(c, power) for c in distinct.tolist()], dtype=np.float64)
    result: Floats = powered[where.reshape(-1)]
    return result


def boost_vector(size: int, boosts: dict[int, tuple[float, str]]) -> Floats:
    """1 + the record's phrase / symbol-name boost (1.0 where there is none)."""
    import numpy as np

    vector = np.ones(size, dtype=np.float64)
    if boosts:
        ids = np.fromiter(boosts, dtype=np.intp, count=len(boosts))
        vector[ids] = 1 + np.array([b[0] for b in boosts.values()], dtype=np.float64)
    return vector


def over_relative_floor(index: InvertedIndex, scores: Floats, ids: Ids) -> Mask:
    """Which of `ids` score at least RELATIVE_FLOOR x the best score of their own site
    (imqueue.org or imqueue.com): the records any list may hold."""
    import numpy as np

    external = tables(index).external[ids]
    floor = np.zeros(len(ids), dtype=np.float64)
    for site in (external, ~external):
        if site.any():
            floor[site] = float(scores[site].max()) * rules.RELATIVE_FLOOR
    result: Mask = scores >= floor
    return result


def ranked(scores: Floats, ids: Ids, order: Ids) -> Ids:
    """Positions of `ids` by score, best first; ties break on the URL order."""
    import numpy as np

    result: Ids = np.lexsort((order[ids], -scores))
    return result


def ranked_rows(
    scores: Floats, ids: Ids, coverage: Floats, order: Ids, head: int = 64
) -> Iterator[tuple[float, int, float]]:
    """The (score, record id, coverage) rows of `ids` in ranked order (as ranked()), made
    lazily: the best `head` or so are sorted first, the rest only if the caller reads past
    them. Every record scoring at least the head-th best score sorts before every record below
    it, so the two sorted runs, one after the other, are exactly the full ranking."""
    import numpy as np

    if len(scores) <= 2 * head:
        top = ranked(scores, ids, order)
        yield from rows_of(scores[top], ids[top], coverage[top])
        return
    threshold = np.partition(scores, len(scores) - head)[len(scores) - head]
    first = scores >= threshold
    for part in (np.flatnonzero(first), np.flatnonzero(~first)):
        top = part[ranked(scores[part], ids[part], order)]
        yield from rows_of(scores[top], ids[top], coverage[top])


def rows_of(scores: Floats, ids: Ids, coverage: Floats) -> Iterable[tuple[float, int, float]]:
    """The (score, record id, coverage) triples ranker.search.cap walks, as Python numbers."""
    return zip(scores.tolist(), ids.tolist(), coverage.tolist(), strict=True)


def query_vectors(size: int) -> tuple[Floats, Floats, Mask]:
    """A query's zeroed score and matched-idf vectors and its found-records mask."""
    import numpy as np

    return np.zeros(size, dtype=np.float64), np.zeros(size, dtype=np.float64), np.zeros(size, dtype=np.bool_)


def zeros(size: int) -> Floats:
    """One zeroed float per record."""
    import numpy as np

    result: Floats = np.zeros(size, dtype=np.float64)
    return result


def code_vector(size: int) -> Codes:
    """A query's zeroed per-record codes of matched covering terms (see coverage_of_codes)."""
    import numpy as np

    result: Codes = np.zeros(size, dtype=np.int64)
    return result


def found_ids(found: Mask) -> Ids:
    import numpy as np

    result: Ids = np.flatnonzero(found)
    return result


def mask_of(flags: Iterable[bool]) -> Mask:
    import numpy as np

    result: Mask = np.fromiter(flags, dtype=np.bool_)
    return result

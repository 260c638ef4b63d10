"""Which records are listings: text made of other pages' summaries, not an answer of its own.

A blog topic's page, an author's page, the blog's index, a package's tables of classes and
functions: each lists other pages, one line per page, and that line is the page's summary. Such
a record holds the words of every question one of its pages answers, often more of them than
the page itself, and answers none of them (the ranker demotes it: rules.LISTING_DEMOTION).

A record is a listing when at least LISTING_SHARE of its prose words lie in runs that repeat,
word for word, the summary of a record of another page (summaries of SUMMARY_MIN_WORDS words or
more, so that a stock phrase is no match). A page record carries no prose of its own: it is a
listing when most of its sections' words are in listing sections. On the mirror of 2026-08-22,
71 sections and 16 pages (12 topics, 3 authors, the blog's index) are listings at shares of
0.11 to 0.94; every other record of the corpus has a share of 0 (docs/ranking-kpi.md).
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

from imqueue_mcp.ranker.corpus import Document
from imqueue_mcp.ranker.page_evidence import page_key as page_of
from imqueue_mcp.ranker.text import PLAIN_WORD

LISTING_SHARE = 0.2  # of a record's prose words, in other pages' summaries
LISTING_MIN_WORDS = 30  # a shorter record is never a listing: too little to tell
SUMMARY_MIN_WORDS = 6  # a summary shorter than this is not looked for
KEY_WORDS = 3  # summaries are found by their first words


def with_listings(documents: Sequence[Document]) -> list[Document]:
    """The documents, those that are listings marked (Document.listing)."""
    summaries: dict[tuple[str, ...], set[tuple[str, str]]] = defaultdict(set)
    for doc in documents:
        summary = tuple(PLAIN_WORD.findall(doc.summary.lower()))
        if len(summary) >= SUMMARY_MIN_WORDS:
            summaries[summary].add(page_of(doc))
    by_start: dict[tuple[str, ...], list[tuple[str, ...]]] = defaultdict(list)
    for summary in summaries:
        by_start[summary[:KEY_WORDS]].append(summary)

    listing: set[int] = set()
    page_words: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # [all, in listings]
    for number, doc in enumerate(documents):
        if doc.tier == "symbol" or not doc.text:
            continue
        words = PLAIN_WORD.findall(doc.text.lower())
        share = repeated_share(words, by_start, summaries, page_of(doc))
        counts = page_words[page_of(doc)]
        counts[0] += len(words)
        if len(words) >= LISTING_MIN_WORDS and share >= LISTING_SHARE:
            listing.add(number)
            counts[1] += len(words)
    for number, doc in enumerate(documents):
        if doc.tier == "page":
            every, listed = page_words.get(page_of(doc), (0, 0))
            if every and 2 * listed >= every:
                listing.add(number)
    return [
        dataclasses.replace(doc, listing=True) if number in listing else doc
        for number, doc in enumerate(documents)
    ]


def repeated_share(
    words: list[str],
    by_start: dict[tuple[str, ...], list[tuple[str, ...]]],
    summaries: dict[tuple[str, ...], set[tuple[str, str]]],
    own_page: tuple[str, str],
) -> float:
    """The share of `words` inside a run equal to the summary of a record of another page."""
    if not words:
        return 0.0
    covered = bytearray(len(words))
    for start in range(len(words) - KEY_WORDS + 1):
        for summary in by_start.get(tuple(words[start : start + KEY_WORDS]), ()):
            end = start + len(summary)
            if tuple(words[start:end]) == summary and summaries[summary] - {own_page}:
                covered[start:end] = b"\x01" * len(summary)
    return sum(covered) / len(words)

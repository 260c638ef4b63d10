"""docsource.listings: a record made of other pages' summaries is marked a listing, and its page
with it; prose that quotes no summary, or one of its own page's, is not."""

from __future__ import annotations

from imqueue_mcp.docsource.listings import LISTING_MIN_WORDS, with_listings
from imqueue_mcp.ranker import Document

from fixtures.corpus_tiny import page, section

RETRY = "Retry a failed call with backoff, and how long to wait between the attempts."
TRACE = "Trace every call across services with spans that join the caller and the worker."
CACHE = "Cache a method's result and drop it when the row it was read from changes."


def posts() -> list[Document]:
    return [
        page("/blog/retries/", "Retries", summary=RETRY),
        page("/blog/tracing/", "Tracing", summary=TRACE),
        page("/blog/caching/", "Caching", summary=CACHE),
    ]


def marked(documents: list[Document]) -> dict[str, bool]:
    return {doc.path: doc.listing for doc in with_listings(documents)}


def test_a_section_listing_other_pages_summaries_and_its_page_are_listings() -> None:
    listing = f"Retries — 2026-08-01: {RETRY} Tracing — 2026-08-02: {TRACE} Caching: {CACHE}"
    documents = [
        *posts(),
        page("/blog/topics/calls/", "Calls"),
        section("/blog/topics/calls/", "Calls", text=listing),
        section("/blog/topics/calls/#other-topics", "Other topics", text="Queues, Types"),
    ]
    flags = marked(documents)
    assert flags["/blog/topics/calls/"] is True  # the section (the page's lead) and the page
    assert [doc.listing for doc in with_listings(documents) if doc.tier == "page"] == [False] * 3 + [True]
    assert flags["/blog/topics/calls/#other-topics"] is False  # no summary in it
    assert not any(flags[doc.path] for doc in posts())


def test_prose_that_explains_in_its_own_words_is_no_listing() -> None:
    prose = (
        "A call that fails is tried again after a pause that grows each time; the client gives "
        "up after the last attempt and the caller sees the error. Spans join the two sides."
    )
    assert len(prose.split()) >= LISTING_MIN_WORDS
    guide = [page("/guide/calls/", "Calls"), section("/guide/calls/#retry", "Retry", text=prose)]
    flags = marked([*posts(), *guide])
    assert flags["/guide/calls/#retry"] is False and flags["/guide/calls/"] is False


def test_a_page_repeating_its_own_summary_or_a_short_quote_is_no_listing() -> None:
    own = f"{RETRY} " + "The rest of the post says how, with the numbers that matter in production. " * 3
    quote = f"As the tracing post puts it: {TRACE}"  # one summary, under the minimum length
    flags = marked(
        [
            *posts(),
            section("/blog/retries/#intro", "Intro", text=own),
            page("/guide/trace/", "Trace"),
            section("/guide/trace/#why", "Why", text=quote),
        ]
    )
    assert flags["/blog/retries/#intro"] is False  # its own page's summary
    assert flags["/guide/trace/#why"] is False

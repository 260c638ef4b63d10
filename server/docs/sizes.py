"""How big get_doc's answer for a URL is, in tokens: the `tokens` of each search_docs hit.

    DocSizes.record(result)    after a get_doc read: its URL's totalTokens, measured on the page
    DocSizes.tokens_of(...)    a hit URL -> (tokens, basis), or None when nothing is known

Two bases, said on every hit, because they are not equally exact:

    measured   get_doc has read that URL in this server's life: the size of what it returned
               in all (the section for a #anchor URL, else the whole page). Exact.
    prose      from the corpus's tier-2 prose (search-text.json: each section's heading and
               text, without code blocks or markup): the section for a #anchor URL, the sum of
               the page's sections otherwise. A lower bound: on the mirror of both sites every
               page is 1.07 to 1.78 times its prose (median 1.18, 117 pages), and none of the 813
               anchored sections is smaller than its prose (docs/get-doc.md has the command).

A URL with neither (an API symbol's page before any read of it) carries no `tokens`: an
agent can always ask get_doc for the outline, which costs little.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Any

from imqueue_mcp.ranker.corpus import SITES, WIRE_FIELDS
from imqueue_mcp.server.docs.budget import estimate_tokens

PROSE_SEPARATOR = "\n\n"  # between a section's heading and its text, as on the page


class DocSizes:
    def __init__(self) -> None:
        self._measured: dict[str, int] = {}
        self.version = 0  # one more each time a measured size changes (a kept reply carries sizes)
        self._lock = threading.Lock()
        # The documents the prose table was built from, held: an id() alone could be reused by the
        # documents of a later refresh once these are freed, and the table would outlive its corpus.
        self._prose_for: object = None
        self._prose: dict[str, int] = {}

    def record(self, result: dict[str, Any]) -> None:
        """Remember what a get_doc answer measured (not an outline, which carries no body)."""
        if "outline" in result or "totalTokens" not in result:
            return
        tokens = int(result["totalTokens"])
        with self._lock:
            if self._measured.get(result["url"]) != tokens:
                self._measured[result["url"]] = tokens
                self.version += 1

    def tokens_of(self, url: str, documents: Iterable[Any]) -> tuple[int, str] | None:
        """(tokens, 'measured' | 'prose') for a canonical hit URL, or None; `documents` are those of
        the corpus answering."""
        measured = self._measured.get(url)
        if measured is not None:
            return measured, "measured"
        with self._lock:
            if self._prose_for is not documents:
                self._prose = prose_sizes(documents)
                self._prose_for = documents
            prose = self._prose.get(url)
        return (prose, "prose") if prose is not None else None


def prose_sizes(documents: Iterable[Any]) -> dict[str, int]:
    """Canonical URL -> prose tokens, for every tier-2 section and the page it belongs to."""
    sections: dict[str, int] = {}
    pages: dict[str, int] = {}
    for url, heading, text in prose_sections(documents):
        tokens = estimate_tokens(heading + PROSE_SEPARATOR + text)
        if "#" in url:  # the prose before the first anchored heading counts for the page only
            sections[url] = tokens
        page = url.split("#", 1)[0]
        pages[page] = pages.get(page, 0) + tokens
    return pages | sections


def document_fields(documents: Iterable[Any], *names: str) -> Iterator[tuple[Any, ...]]:
    """The named fields of every document, in corpus order. Reads a snapshot's wire rows as they
    are when it can: decoding every document first would cost the first search about 30 ms more."""
    rows = documents.wire_rows() if hasattr(documents, "wire_rows") else None
    if rows is None:
        return (tuple(getattr(document, name) for name in names) for document in documents)
    columns = [WIRE_FIELDS.index(name) for name in names]
    return (tuple(row[column] for column in columns) for row in rows)


def prose_sections(documents: Iterable[Any]) -> Iterator[tuple[str, str, str]]:
    """(canonical URL, heading, text) of every tier-2 prose section, in corpus order."""
    for tier, site, path, heading, text in document_fields(
        documents, "tier", "site", "path", "heading", "text"
    ):
        if tier == "section":
            yield SITES[site] + path, heading, text


def symbol_doc_texts(documents: Iterable[Any]) -> Iterator[tuple[str, str]]:
    """(canonical URL, summary and doc comment) of every API symbol whose doc comment the build
    read (Document.doc), in corpus order: a symbol hit's passage when its page is not saved."""
    for tier, site, path, summary, doc in document_fields(
        documents, "tier", "site", "path", "summary", "doc"
    ):
        if tier == "symbol" and doc:
            # The builder's doc comment keeps a summary its page writes with links or code marks
            # (api_pages.page_doc_comment), and a passage need not say it twice.
            said = " ".join(summary.split())
            yield SITES[site] + path, doc if said and doc.startswith(said) else f"{summary}\n\n{doc}".strip()

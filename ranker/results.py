"""The one result shape: a SearchResponse as the dict `imq-search --json` prints and `search_docs`
returns (the server adds only its own fields: advisories, the corpus it answered from).

    response_dict(response)   {query, searched?, corrected?, count, results: [hit_dict...], weak, miss?}
    searched_text(data, asked) the text the ranker searched: corrected, else searched, else asked
    hit_dict(hit)             url, path, title, section, description, kind, label, recordKind,
                              package, symbol, external, score, confidence, deprecated?

What a search hit is, said where the agent reads it: its kind, its label, its deprecation.

The ranker's Hit knows the record's tier (page, symbol, answer, section), its feed kind
(a symbol's kind such as ``method``, a page's kind such as ``Tutorial``, an answer's page
title), its package and its site. This module turns those into the words an agent sees:

    kind         "api" | "answer" | "page" | "section"   (one per ranker tier)
    label        "API · @imqueue/core method"             an API symbol: package and symbol kind
                 "Answer · <page title>"                  a question-shaped answer on that page
                 "Page · Tutorial"                        a page: the site's own page kind
                 "Section · <page title>"                 a prose section of that page
                 ... + " · imqueue.com"                   any record of the commercial site
    description  prefixed with DEPRECATED_PREFIX when the feed marks the record deprecated

Pure functions of the response: no I/O, no MCP.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .search import Hit, SearchResponse

DEPRECATED_PREFIX = "DEPRECATED — do not use in new code."
COMMERCIAL_SITE = "imqueue.com"

# The ranker's tier -> the kind an agent reads, and the word its label starts with.
KINDS = {"symbol": ("api", "API"), "answer": ("answer", "Answer"), "page": ("page", "Page")}
SECTION = ("section", "Section")


def hit_kind(hit: Hit) -> str:
    return KINDS.get(hit.tier, SECTION)[0]


def hit_label(hit: Hit) -> str:
    """'API · @imqueue/core method', 'Answer · FAQ', 'Page · Tutorial', ... (see the module map)."""
    word = KINDS.get(hit.tier, SECTION)[1]
    if hit.tier == "symbol":
        detail = " ".join(part for part in (hit.package, hit.kind) if part)
    elif hit.tier == "page":
        detail = hit.kind
    else:  # an answer's or a prose section's page title
        detail = hit.section or hit.kind
    label = f"{word} · {detail}" if detail else word
    return f"{label} · {COMMERCIAL_SITE}" if hit.external else label


def hit_description(hit: Hit) -> str:
    """The hit's description, which starts with DEPRECATED_PREFIX on a deprecated record."""
    if not hit.deprecated:
        return hit.description
    return f"{DEPRECATED_PREFIX} {hit.description}".rstrip()


def hit_dict(hit: Hit) -> dict[str, Any]:
    """One hit as an agent and a human read it; `recordKind` is the feed's own kind of record."""
    data: dict[str, Any] = {
        "url": hit.url,
        "path": hit.path,
        "title": hit.title,
        "section": hit.section,
        "description": hit_description(hit),
        "kind": hit_kind(hit),
        "label": hit_label(hit),
        "recordKind": hit.kind,
        "package": hit.package,
        "symbol": hit.symbol,
        "external": hit.external,
        "score": round(hit.score, 4),
        "confidence": hit.confidence,
    }
    if hit.deprecated:
        data["deprecated"] = True
    return data


def searched_text(data: Mapping[str, Any], asked: str) -> str:
    """The text the ranker searched for a response_dict: its typo-corrected query, else the
    message lines of a pasted output or a long query's cut (`searched`), else `asked`."""
    return str(data.get("corrected") or data.get("searched") or asked)


def response_dict(response: SearchResponse) -> dict[str, Any]:
    """The whole answer: the query as asked, the corrected query when a typo was corrected."""
    data: dict[str, Any] = {"query": response.query}
    if response.searched:
        data["searched"] = response.searched
    if response.corrected:
        data["corrected"] = response.corrected
    data["count"] = len(response.results)
    data["results"] = [hit_dict(hit) for hit in response.results]
    data["weak"] = response.weak
    if response.miss is not None:
        data["miss"] = {"sections": response.miss.sections, "nearestTerms": response.miss.nearest_terms}
    return data

"""search_docs: the ranker's answer as the tool's structured result and its text.

Ranking is the ranker's alone: this module calls `ranker.Index.search` (the same function
`imq-search` calls) and restates no rule. It adds what an agent needs around the ranking:
the exclusive-pair advisory when the results or the question touch one side of a pair,
the miss guidance spelled out, each hit's confidence and a "Weak match" line when even the
best hit is low (ranker.confidence), and which corpus answered (live, or a snapshot and its
date).
"""

from __future__ import annotations

import re
from typing import Any

from .catalogue import exclusive_pair_advisory
from .corpus import CorpusKeeper

_WORD = re.compile(r"[@\w./-]+")


async def search_docs(keeper: CorpusKeeper, query: str, limit: int, package: str | None) -> dict[str, Any]:
    """The search_docs structured result (see schemas.SearchResult). ValueError for a bad filter."""
    corpus = await keeper.current()
    response = corpus.index.search(query, limit=limit, package=package)
    results = [
        {
            "title": hit.title,
            "section": hit.section,
            "description": hit.description,
            "url": hit.url,
            "symbol": hit.symbol,
            "confidence": hit.confidence,
        }
        for hit in response.results
    ]
    data: dict[str, Any] = {"query": query, "count": len(results), "results": results, "weak": response.weak}
    named = [hit.package for hit in response.results if hit.package]
    named += [package] if package else []
    named += _WORD.findall(query)
    advisory = exclusive_pair_advisory(named)
    if advisory:
        data["advisory"] = advisory
    if response.miss is not None:
        data["miss"] = {"sections": response.miss.sections, "nearestTerms": response.miss.nearest_terms}
    data["corpus"] = corpus.describe()
    return data


def render_search_text(data: dict[str, Any]) -> str:
    lines: list[str] = []
    if data["results"]:
        lines.append(f'{data["count"]} result(s) for "{data["query"]}", best first:')
        for number, result in enumerate(data["results"], 1):
            label = "API symbol" if result["symbol"] else ("section" if "#" in result["url"] else "page")
            where = f"{label}; {result['section']}; {result['confidence']} confidence"
            lines.append(f"{number}. {result['title']} ({where})")
            lines.append(f"   {result['url']}")
            if result["description"]:
                lines.append(f"   {result['description']}")
        if data["weak"]:
            lines.append(
                "Weak match: even the best result matches this query poorly; the docs may not cover it. "
                "Say so rather than rely on these, or search again with other words."
            )
        lines.append("Read a result with get_doc(url) before relying on it, and cite its URL.")
    else:
        lines.append(f'No results for "{data["query"]}".')
    miss = data.get("miss")
    if miss:
        lines.append(
            "This is a miss on these words, not proof the topic is undocumented. The corpus covers: "
            + "; ".join(miss["sections"])
            + "."
        )
        if miss["nearestTerms"]:
            lines.append(
                "Nearest indexed terms: " + ", ".join(miss["nearestTerms"]) + ". Search again with them."
            )
    if data.get("advisory"):
        lines.append("")
        lines.append("Advisory: " + data["advisory"])
    lines.append("")
    lines.append(corpus_line(data["corpus"]))
    return "\n".join(lines) + "\n"


def corpus_line(corpus: dict[str, str]) -> str:
    if corpus["source"] == "live":
        line = f"Corpus: the live sites, read {corpus['fetchedAt']}."
    else:
        line = f"Corpus: the snapshot {corpus['from']}, built {corpus['fetchedAt']}."
    if corpus.get("note"):
        line += f" Note: {corpus['note']}."
    return line

"""find_examples: the docs' fenced code blocks, ranked for a query by the docs' own ranker.

The examples come with the corpus (docsource/examples.py extracts them: from each host's
/llms-full.txt, and from every page when the snapshot was built with --pages), so they are
exactly as fresh as search_docs' corpus and labelled the same way (`corpus`: live or
snapshot, and its date). They are ranked by a `ranker.Index` of their own, built on first use
for each corpus (well under a second) in a worker thread: ranking is the ranker's alone, this
module restates no rule. The package filter keeps the examples that concern the package: the
one their page documents, or one their code imports or installs.

Failures, each a guided error in tools.py: a blank query (ValueError), a package that is not
an @imqueue package (CatalogueError), no corpus (CorpusUnavailable), a snapshot written before
examples were extracted (ExamplesUnavailable).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from imqueue_mcp.docsource.examples import Example, example_corpus
from imqueue_mcp.ranker import Index, rules
from imqueue_mcp.server.catalogue.packages import CATALOGUE, SCOPE, CatalogueError, normalize_package
from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper, CorpusUnavailable, LoadedCorpus
from imqueue_mcp.server.docs.errata import known_needs
from imqueue_mcp.server.docs.hit_passages import (
    PassageOptions,
    add_example_passages,
    passage_lines,
    source_for,
)
from imqueue_mcp.server.docs.search_docs import corpus_line

DEFAULT_LIMIT = 3
MAX_LIMIT = 10
DUPLICATE_HEADROOM = 3  # ranked per result asked for, so that repeated blocks can be skipped
MAX_CODE_CHARS = 6000  # a longer block is cut at a line end; its url has the whole of it
REBUILD_ACTION = (
    "Rebuild the snapshot with `imq-build-index` (or `imq-build-index --from DIR --out PATH` and start the "
    "server with --snapshot PATH), then call find_examples again."
)


class ExamplesUnavailable(CorpusUnavailable):
    """The corpus answering has no examples (a snapshot built before they were extracted)."""


# --- ranking ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RankedExamples:
    """One corpus's examples and the index over them."""

    examples: dict[str, Example]  # id -> example
    index: Index
    packages: frozenset[str]  # every package an example concerns


def rank_examples(examples: tuple[Example, ...], lemmas: dict[str, str]) -> RankedExamples:
    return RankedExamples(
        examples={example.id: example for example in examples},
        index=Index(example_corpus(examples, lemmas)),
        packages=frozenset(p for example in examples for p in example.packages),
    )


class ExampleFinder:
    """The ranked examples of the corpus answering now, rebuilt when the corpus is replaced."""

    def __init__(self, keeper: CorpusKeeper) -> None:
        self.keeper = keeper
        self._ranked: tuple[LoadedCorpus, RankedExamples] | None = None
        self._lock = asyncio.Lock()

    async def ranked(self) -> tuple[LoadedCorpus, RankedExamples]:
        corpus = await self.keeper.current()
        if corpus.examples is None:
            raise ExamplesUnavailable(
                f"The docs snapshot answering ({corpus.location}) has no code examples: it was built by an "
                "older imqueue-mcp. search_docs and get_doc work from it meanwhile."
            )
        async with self._lock:
            if self._ranked is None or self._ranked[0].examples is not corpus.examples:
                lemmas = corpus.index.corpus.lemmas
                ranked = await asyncio.to_thread(rank_examples, corpus.examples, lemmas)
                self._ranked = (corpus, ranked)
            return self._ranked


def package_filter(package: str | None, known: frozenset[str]) -> str | None:
    """The filter as '@imqueue/x', or CatalogueError naming the packages there are."""
    if package is None:
        return None
    name = normalize_package(package)
    names = known | {entry.name for entry in CATALOGUE}
    if name not in names:
        listing = ", ".join(sorted(n.removeprefix("@imqueue/") for n in names))
        raise CatalogueError(
            f"Unknown package {package!r}: it is not an @imqueue package. Known packages: {listing}. "
            "Omit package to search every example."
        )
    return name


async def find_examples(
    finder: ExampleFinder, query: str, limit: int, package: str | None, passages: PassageOptions | None = None
) -> dict[str, Any]:
    """The find_examples structured result (see schemas.ExampleResult); with `passages` (enabled),
    each block with the prose of its section that best answers the query (hit_passages.py)."""
    if not query.strip():
        raise ValueError(
            "query is blank: describe the code you want in a few words, e.g. 'expose a method' or "
            "'redis queue send'"
        )
    corpus, ranked = await finder.ranked()
    wanted = package_filter(package, ranked.packages)
    found, nearest = best_examples(ranked, query, limit, wanted)
    data: dict[str, Any] = {"query": query}
    if wanted:
        data["package"] = wanted
    data.update(count=len(found), results=[example_hit(example) for example in found])
    if not found:
        data["miss"] = {"nearestTerms": nearest}
        page = package_page(corpus, wanted)
        if page is not None:
            data["miss"]["packagePage"] = page
    if passages is not None and passages.enabled:
        add_example_passages(data, source_for(corpus), query, passages)
    data["corpus"] = corpus.describe()
    return data


def package_page(corpus: LoadedCorpus, package: str | None) -> str | None:
    """The package's API reference landing page when the corpus has it: its usage examples are in
    the corpus only when it was built with the pages (docs/find-examples.md), so a miss points there."""
    if package is None:
        return None
    path = f"/api/{package.removeprefix(SCOPE)}/latest/"
    return f"https://imqueue.org{path}" if corpus.holds("imqueue.org", path) else None


def best_examples(
    ranked: RankedExamples, query: str, limit: int, package: str | None = None
) -> tuple[list[Example], list[str]]:
    """The `limit` best examples for `query` (of `package` only, when given: '@imqueue/x'),
    and on a miss the indexed terms nearest the query. A block the docs repeat on several pages
    (`npm i -g @imqueue/cli`) is given once, where it ranks best. find_examples and the KPI call this."""
    depth = len(ranked.examples) if package else limit * DUPLICATE_HEADROOM
    response = ranked.index.search(query, limit=max(depth, 1), parent_cap=rules.EXAMPLE_PARENT_CAP)
    found: list[Example] = []
    shown: set[str] = set()
    for hit in response.results:
        example = ranked.examples[hit.path]
        code = " ".join(example.code.split())
        if (package and package not in example.packages) or code in shown:
            continue
        shown.add(code)
        found.append(example)
        if len(found) == limit:
            break
    return found, response.miss.nearest_terms if response.miss else []


def example_hit(example: Example) -> dict[str, Any]:
    hit: dict[str, Any] = {
        "id": example.id,
        "code": example.code,
        "language": example.language,
        "url": example.url,
        "title": example.title,
        "section": example.heading,
        "lead": example.lead,
        "packages": list(example.packages),
    }
    if example.version:
        hit["version"] = example.version
    needs = known_needs(example.code)
    if needs:
        hit["notes"] = needs
    if len(example.code) > MAX_CODE_CHARS:
        cut = example.code[:MAX_CODE_CHARS]
        hit["code"] = cut[: cut.rfind("\n")] if "\n" in cut else cut
        hit["truncated"] = True
    return hit


# --- the text an agent reads ----------------------------------------------------------------


def render_examples_text(data: dict[str, Any]) -> str:
    lines: list[str] = []
    where = f" in {data['package']}" if data.get("package") else ""
    if data["results"]:
        lines.append(f'{data["count"]} code example(s){where} for "{data["query"]}", best first:')
        for number, hit in enumerate(data["results"], 1):
            place = f"{hit['section']} — {hit['title']}" if hit["section"] else hit["title"]
            version = f" {hit['version']}" if hit.get("version") else ""
            packages = f"; {', '.join(hit['packages'])}{version}" if hit["packages"] else ""
            lines.append("")
            lines.append(f"{number}. {place} ({hit['language'] or 'code'}{packages})")
            lines.append(f"   {hit['url']}")
            if hit.get("passage"):
                lines.extend(passage_lines(hit["passage"]))
            elif hit["lead"]:
                lines.append(f"   {hit['lead']}")
            fence = code_fence(hit["code"])
            lines.append(f"{fence}{hit['language']}")
            lines.append(hit["code"])
            lines.append(fence)
            if hit.get("truncated"):
                lines.append(f"(cut at {MAX_CODE_CHARS} characters: get_doc({hit['url']}) has the rest)")
            lines.extend(f"   Note: {note}" for note in hit.get("notes", []))
        lines.append("")
        lines.append("Check an example against its page with get_doc(url) before adapting it; cite the url.")
    else:
        lines.append(f'No code examples{where} for "{data["query"]}" among the blocks this corpus holds.')
        miss = data.get("miss", {})
        nearest = miss.get("nearestTerms") or []
        if nearest:
            lines.append("Nearest indexed terms: " + ", ".join(nearest) + ". Search again with them.")
        if miss.get("packagePage"):
            lines.append(
                f"The package's API reference may show its usage: get_doc({miss['packagePage']}) "
                "(this corpus holds the examples of its pages only when built with them)."
            )
        lines.append("search_docs finds the pages and API symbols, with or without code.")
    lines.append("")
    lines.append(corpus_line(data["corpus"]))
    return "\n".join(lines) + "\n"


def code_fence(code: str) -> str:
    """A backtick fence longer than any backtick run inside the code."""
    longest = 0
    run = 0
    for char in code:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)

"""The installed-only symbols of a project's @imqueue packages, searched: the symbols its installed
declarations have and the docs' release does not (removed since, or never documented), ranked for
a query by the same ranker search_docs uses, over those symbols alone.

    InstalledOnlySearch().find(indexes, documented, generation, query)   the matches, best first

Its ranker Index is kept for the last few (packages, versions, corpus generation): search_docs asks
on every call with a project in reach, and the project and the docs rarely change between two.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from imqueue_mcp.ranker import Corpus, Document, Index
from imqueue_mcp.server.project.api_diff import cut
from imqueue_mcp.server.project.api_index import ApiSymbol, PackageIndex

LIMIT = 3  # installed-only symbols added to one answer
# A low-confidence match among a few dozen helper names is noise, not an answer.
KEPT_CONFIDENCE = frozenset({"high", "medium"})
KEPT_INDEXES = 8
NOTE = "Only in the installed version: the docs' release has no such symbol (removed, or never documented)."

Key = tuple[str, tuple[tuple[str, str], ...]]  # the corpus generation, (package, version) each


class InstalledOnlySearch:
    def __init__(self) -> None:
        self._kept: dict[Key, tuple[Index, dict[str, tuple[PackageIndex, ApiSymbol]]]] = {}

    def find(
        self,
        indexes: Mapping[str, PackageIndex],
        documented: Mapping[str, Collection[str]],
        generation: str,
        query: str,
    ) -> list[dict[str, Any]]:
        """The installed-only symbols of `indexes` (package -> installed index) matching `query`;
        `documented` is each package's names in the docs (a package the docs do not cover is left
        out: every symbol of it would be "installed only")."""
        covered = {name: index for name, index in sorted(indexes.items()) if documented.get(name)}
        if not covered or not query.strip():
            return []
        key: Key = (generation, tuple((name, index.version) for name, index in covered.items()))
        if key not in self._kept:
            if len(self._kept) >= KEPT_INDEXES:
                self._kept.pop(next(iter(self._kept)))
            self._kept[key] = _ranked(covered, documented)
        ranker, symbols = self._kept[key]
        if not symbols:
            return []
        found = []
        for hit in ranker.search(query, LIMIT).results:
            if hit.confidence in KEPT_CONFIDENCE:
                index, symbol = symbols[hit.path]
                found.append(_entry(index, symbol))
        return found


def _ranked(
    indexes: Mapping[str, PackageIndex], documented: Mapping[str, Collection[str]]
) -> tuple[Index, dict[str, tuple[PackageIndex, ApiSymbol]]]:
    symbols: dict[str, tuple[PackageIndex, ApiSymbol]] = {}
    for package, index in indexes.items():
        for name in sorted(set(index.symbols) - set(documented[package])):
            path = f"/api/{package.removeprefix('@imqueue/')}/installed/{name.lower()}/"
            symbols[path] = (index, index.symbols[name])
    documents = [_document(path, index.name, symbol) for path, (index, symbol) in symbols.items()]
    return Index(Corpus(documents=documents, lemmas={}, section_names=[])), symbols


def _document(path: str, package: str, symbol: ApiSymbol) -> Document:
    """An installed-only symbol as a ranker record (its path is a key here, never shown)."""
    owner, _, member = symbol.name.rpartition(".")
    parent = path.rsplit("/", 2)[0] + f"/{owner.lower()}/" if owner else path
    return Document(
        path=path,
        site="org",
        tier="symbol",
        title=symbol.name,
        kind=symbol.kind,
        summary=symbol.doc.summary,
        package=package,
        section=package,
        parent=parent,
        member=member if owner else "",
    )


def _entry(index: PackageIndex, symbol: ApiSymbol) -> dict[str, Any]:
    return {
        "kind": "installed-only",
        "name": symbol.name,
        "symbolKind": symbol.kind,
        "package": index.name,
        "version": index.version,
        "signature": cut(symbol.signature),
        "summary": symbol.doc.summary,
        "file": symbol.file,
        "note": NOTE,
    }

"""The project's installed @imqueue API joined with what the docs (the latest release) say of it:
get_api's docs side and api_diff's answer. The two rooms it joins never import each other:

    server/project    the installed declarations (api_index), the comparison (api_diff), the
                      answers' shapes (api_lookup)
    server/docs       the docs' API records and their pages' signatures (documented_api)

    documented_release(services, package)        the version the docs describe (status.json)
    package_asked(package, root)                 a package argument as npm writes it, checked
    with_latest(services, data, symbol, package) get_api's answer + `latest` and `difference`
    api_diff_answer(services, root, package)     api_diff's answer; CorpusUnavailable when no
                                                 docs corpus can be loaded
    marks_for(services, tool, arguments, data)   search_docs' and find_examples' marks for the
                                                 project in reach (the client's roots, else the
                                                 working directory): each API hit whose symbol
                                                 differs in, or is missing from, the installed
                                                 version, and the installed-only symbols that
                                                 match the query (ranked by the same ranker)

No MCP here: the adapter (server/mcp/api_tools.py) calls these and renders their answers.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from imqueue_mcp.server.catalogue.packages import (
    CATALOGUE,
    CatalogueError,
    api_page_package,
    normalize_package,
)
from imqueue_mcp.server.project import api_index
from imqueue_mcp.server.project import reader as project
from imqueue_mcp.server.project.api_diff import against_docs, compare, cut
from imqueue_mcp.server.project.api_lookup import beside_latest, package_index, scoped, versioned
from imqueue_mcp.server.project.roots import locate
from imqueue_mcp.server.services import Services

MARKED_TOOLS = frozenset({"search_docs", "find_examples"})


async def documented_release(services: Services, package: str) -> str | None:
    """The version the docs describe (status.json), or None when no facts are at hand."""
    facts = await services.facts.known()
    record = project.documented_versions(facts.status if facts else None).get(package)
    return str(record["version"]) if record else None


async def with_latest(services: Services, data: dict[str, Any], symbol: str, package: str | None) -> None:
    """Add the docs' record of the symbol beside the installed one (lookup's answer, `data`): from
    the installed symbol's package, else from the first package asked or installed that has it."""
    if data["found"]:
        candidates = [str(data["symbol"]["package"])]
    else:
        candidates = [scoped(package)] if package else list(data["packages"])
    wanted = data["symbol"]["name"] if data["found"] else symbol
    for name in candidates:
        if not data["found"] and _undeclared(data["problems"], name):
            continue  # no declarations read: "not in the installed version" could not be said
        documented = await services.documented.of(name)
        resolved = api_index.resolve_name(list(documented.symbols), wanted)
        if resolved is None and not data["found"]:
            continue
        if resolved is not None:
            documented = await services.documented.of(name, [resolved])
        record = documented.symbols.get(resolved) if resolved else None
        release = await documented_release(services, name) or documented.release
        beside_latest(data, name, record, release)
        data["problems"] += documented.unread[:5]
        return
    if not data["found"] and not package:
        await _elsewhere_in_the_docs(services, data, wanted, set(candidates))


async def _elsewhere_in_the_docs(
    services: Services, data: dict[str, Any], wanted: str, tried: set[str]
) -> None:
    """A symbol no installed package declares, named as the docs name it in a package the project
    has not installed (JobQueue in @imqueue/job): the docs' record, and the command that installs it."""
    for entry in CATALOGUE:
        if entry.name in tried:
            continue
        documented = await services.documented.of(entry.name)
        resolved = api_index.resolve_name(list(documented.symbols), wanted)
        if resolved is None:
            continue
        documented = await services.documented.of(entry.name, [resolved])
        release = await documented_release(services, entry.name) or documented.release
        beside_latest(data, entry.name, documented.symbols[resolved], release)
        data["difference"] = {
            "status": "not-installed",
            "text": f"The project has not installed {entry.name}, which the docs document it in.",
        }
        data["install"] = entry.install
        data["problems"] += documented.unread[:5]
        return


def _undeclared(problems: list[str], package: str) -> bool:
    return any(p.startswith(f"{package}@") and "ships no declaration files" in p for p in problems)


async def api_diff_answer(services: Services, root: Path, package: str) -> dict[str, Any]:
    """The installed `package` under root against the docs' release of it (ApiDiffAnswer's shape,
    less `via`)."""
    data: dict[str, Any] = {"found": False, "root": str(root), "package": package}
    index, problems, installed = await asyncio.to_thread(package_index, root, package)
    data |= {"packages": installed, "problems": problems[:20]}
    if index is None:
        return data
    data["installed"] = index.version
    if not index.symbols:  # every documented symbol would look added: say why instead
        data["problems"].append(
            f"no declarations of {package}@{index.version} could be read: nothing to compare"
        )
        return data
    documented = await services.documented.of(package, list(index.symbols))
    if not documented.symbols:
        data["problems"].append(f"the docs have no API reference of {package}: nothing to compare")
        return data
    latest = await documented_release(services, package) or documented.release
    data |= against_docs(index, documented.symbols, latest)
    data |= {"found": True, "corpus": documented.corpus, "unread": documented.unread[:20]}
    return data


def package_asked(package: str, root: Path | None) -> tuple[str, str | None]:
    """The package argument as npm may write it ('pg-pubsub', '@imqueue/pg-pubsub@1.10.0'): its
    scoped name and the version written, if any. CatalogueError (unknown_package) for a name that is
    neither an @imqueue package the docs list nor one installed in the project."""
    name, version = versioned(package)
    scoped_name = normalize_package(name)
    known = {entry.name for entry in CATALOGUE}
    if scoped_name in known:
        return scoped_name, version
    installed = {p.name for p in api_index.installed_packages(root)[0]} if root is not None else set()
    if scoped_name in installed:
        return scoped_name, version
    listed = ", ".join(sorted(known | installed))
    raise CatalogueError(
        f"Unknown package {scoped_name!r}: not an @imqueue package. Known packages: {listed}."
    )


def version_note(name: str, asked: str | None, installed: str | None) -> list[str]:
    """A line when the version written with the package is not the one installed (what is read)."""
    if asked is None or installed is None or asked.lstrip("v^~=") == installed:
        return []
    return [f"{name}@{asked} was asked for; the project has {installed} installed, and that is what is read"]


# --- search_docs and find_examples: marks against the installed version ------------------------


@dataclass(frozen=True)
class Marks:
    hits: dict[int, dict[str, Any]]  # a result's position -> its `installed` mark
    installed_only: list[dict[str, Any]]  # installed-only symbols matching the query, best first


async def marks_for(
    services: Services, tool: str, arguments: dict[str, Any], data: dict[str, Any]
) -> Marks | None:
    """The marks for a search_docs or find_examples answer (`data`), or None: no project in reach,
    no @imqueue package installed in it, nothing differs and nothing installed-only matches."""
    if tool not in MARKED_TOOLS or not isinstance(data.get("results"), list):
        return None
    folders, _ = await locate()
    found = await asyncio.to_thread(services.project_reader.find, folders)
    if found is None or not found.copies:
        return None
    indexes = await asyncio.to_thread(_installed_indexes, found)
    if not indexes:
        return None
    hits = await _hit_marks(services, data["results"], indexes)
    package = arguments.get("package")
    wanted = [scoped(package.strip().lower())] if isinstance(package, str) and package else list(indexes)
    only = await _installed_only(
        services, {n: i for n, i in indexes.items() if n in wanted}, str(data["query"])
    )
    return Marks(hits, only) if hits or only else None


def _installed_indexes(found: project.Project) -> dict[str, api_index.PackageIndex]:
    """The index of each installed @imqueue package: its hoisted copy, else the first found."""
    indexes = {}
    for name, copies in sorted(found.copies.items()):
        folder, version = next(((f, v) for f, v in copies if f.parent.parent.parent == found.root), copies[0])
        try:
            real = folder.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        index = api_index.index_package(api_index.InstalledPackage(name, version, real))
        if index.symbols:  # no declarations read: nothing can be said about what it lacks
            indexes[name] = index
    return indexes


async def _hit_marks(
    services: Services, results: list[Any], indexes: dict[str, api_index.PackageIndex]
) -> dict[int, dict[str, Any]]:
    """`installed: {version, status, signature?}` for each API hit whose symbol the installed
    version declares differently, or lacks; a hit the same in both is left as it is."""
    pages: dict[str, dict[int, str]] = {}  # package -> result position -> its API page
    for position, hit in enumerate(results):
        page = str(hit.get("url", "") if isinstance(hit, dict) else "").split("#", 1)[0]
        package = api_page_package(page)
        if package in indexes:
            pages.setdefault(package, {})[position] = page
    marks: dict[int, dict[str, Any]] = {}
    for package, at in pages.items():
        by_url = {s.url: s.name for s in (await services.documented.of(package)).symbols.values()}
        names = {position: by_url[page] for position, page in at.items() if page in by_url}
        documented = await services.documented.of(package, names.values())
        index = indexes[package]
        for position, name in names.items():
            mine = index.symbols.get(name)
            comparison = compare(mine, documented.symbols[name])
            if comparison is None or comparison.status == "same":
                continue
            mark = {"package": package, "version": index.version, "symbol": name, "status": comparison.status}
            marks[position] = mark | ({"signature": cut(mine.signature)} if mine is not None else {})
    return marks


async def _installed_only(
    services: Services, indexes: dict[str, api_index.PackageIndex], query: str
) -> list[dict[str, Any]]:
    """The installed symbols the docs do not have that match the query (project/api_search.py)."""
    documented: dict[str, list[str]] = {}
    generation = ""
    for package in indexes:
        api = await services.documented.of(package)
        documented[package], generation = list(api.symbols), api.generation
    return services.installed_only.find(indexes, documented, generation, query)

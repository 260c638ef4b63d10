"""The version note: a successful result of a tool that concerns a package the user's project
uses at another major than the docs describe says so, in one line.

    NOTED_TOOLS                              the tools whose results may carry it
    concerned_packages(name, args, data)     the packages a result concerns; None: every package
    note_for(name, args, data, reader, documented)   the note, or None (no project, no mismatch)

Which packages a result concerns: search_docs, the API pages among its hits (and its package
filter); get_doc, the API page it read; list_packages, every package; package_status, the
packages it reports; the scaffolds, @imqueue/rpc, which their code imports.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from imqueue_mcp.server.catalogue.packages import CatalogueError, api_page_package, normalize_package
from imqueue_mcp.server.project import reader as project
from imqueue_mcp.server.project.roots import locate

SCAFFOLD_PACKAGES = ("@imqueue/rpc",)
NOTED_TOOLS = frozenset(
    {"search_docs", "get_doc", "list_packages", "package_status", "scaffold_service", "scaffold_client"}
)


def concerned_packages(name: str, arguments: dict[str, Any], data: dict[str, Any]) -> set[str] | None:
    """The packages a result concerns; None for every package."""
    if name == "list_packages":
        return None
    if name == "package_status":
        return {str(record.get("scoped")) for record in data.get("packages", []) if isinstance(record, dict)}
    if name in ("scaffold_service", "scaffold_client"):
        return set(SCAFFOLD_PACKAGES)
    if name == "get_doc":
        return _api_package(str(data.get("url", "")))
    if name == "search_docs":
        packages: set[str] = set()
        if isinstance(arguments.get("package"), str):
            try:
                packages.add(normalize_package(arguments["package"]))
            except CatalogueError:
                pass  # search_docs itself has said what is wrong with it
        for hit in data.get("results", []):
            packages |= _api_package(str(hit.get("url", ""))) if isinstance(hit, dict) else set()
        return packages
    return set()


def _api_package(url: str) -> set[str]:
    """{'@imqueue/rpc'} for https://imqueue.org/api/rpc/latest/...; empty for any other page."""
    package = api_page_package(url)
    return {package} if package else set()


async def note_for(
    name: str,
    arguments: dict[str, Any],
    data: dict[str, Any],
    reader: project.ProjectReader,
    documented: Callable[[], Awaitable[dict[str, Any] | None]],
) -> str | None:
    """The note for this result, against the documented versions (status.json, which `documented`
    reads only once a project is found); None when there is nothing to say."""
    packages = concerned_packages(name, arguments, data)
    if packages is not None and not packages:
        return None
    folders, _ = await locate()
    # In a worker thread: a cached lookup is only stat calls, but a first read (or one after a
    # change) reads the user's files, and the event loop serves every other call meanwhile.
    found = await asyncio.to_thread(reader.find, folders)
    if found is None or not found.packages:
        return None
    status = await documented()
    if status is None:
        return None
    return project.version_note(project.major_mismatches(found, status, packages))

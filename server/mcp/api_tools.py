"""get_api and api_diff in the local server: the project's installed @imqueue API, beside what the
docs (the latest release) say of it.

Reads the project's node_modules/@imqueue/*/**/*.d.ts (server/project/api_index.py); "latest" is
the docs corpus this server answers from, the API pages' signatures read as get_doc reads pages
(server/docs/documented_api.py), the two joined in server/installed_api.py. Never in the hosted
server, which reads no disk. The records are in tools.py.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from mcp_types import CallToolResult, TextContent
from pydantic import Field

from imqueue_mcp.server import installed_api
from imqueue_mcp.server.catalogue.packages import CatalogueError
from imqueue_mcp.server.docs.corpus_keeper import CorpusUnavailable
from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.installed_api import package_asked, version_note
from imqueue_mcp.server.mcp.project_tools import ProjectPath, folders_for
from imqueue_mcp.server.project import reader as project
from imqueue_mcp.server.project.api_lookup import ApiAnswer, ApiDiffAnswer, lookup
from imqueue_mcp.server.project.api_text import render, render_diff, render_marks
from imqueue_mcp.server.services import Services
from imqueue_mcp.server.tool_results import error_result, structured_result

logger = logging.getLogger(__name__)

DESCRIPTION = (
    "Look up an @imqueue API symbol as the user's project has it installed: the declaration "
    "(signature) and doc comment (summary, @param, @returns, @deprecated, @defaultValue, @remarks) "
    "read from node_modules/@imqueue/*/**/*.d.ts of the installed version, which may be an older "
    "major than the docs describe; beside it, what the docs (latest release) say of the same symbol "
    "(latest: its page, summary, declaration) and the difference (same, signature-changed, "
    "deprecated-in-latest, not-installed, installed-only). symbol: a class, interface, function, type "
    "or member, dotted or spaced, any case ('IMQClientOptions.timeout', 'imqclientoptions timeout'); "
    "an unknown one gets the nearest names, or the package the docs document it in and its install "
    "command. package: e.g. '@imqueue/rpc' (default: every installed @imqueue package; a version "
    "written after it is not read, the installed one is). path: the project folder; omit it to use "
    "the client's roots, else the working directory. Reads files and the docs only."
)

DIFF_DESCRIPTION = (
    "Compare the API of an @imqueue package as the user's project has it installed with the latest "
    "release the docs describe: the symbols added (in the docs, not installed), removed (installed, "
    "not in the docs), changed (declared differently) and deprecated, each with its docs page URL, "
    "and the migration guide when the majors differ. The installed side is read from "
    "node_modules/@imqueue/NAME/**/*.d.ts; the latest from the docs' API reference (its records and "
    "each page's Signature). Call it when inspect_project reports an older major, before writing code "
    "against the docs. package: e.g. 'rpc' or '@imqueue/rpc'. path: the project folder; omit it to use "
    "the client's roots, else the working directory. Reads files and the docs only."
)

Package = Annotated[str, Field(min_length=1, max_length=100, description="e.g. 'rpc' or '@imqueue/rpc'")]


async def _root(path: str | None) -> tuple[Path | None, str, list[Path]] | CallToolResult:
    where = await folders_for(path)
    if isinstance(where, CallToolResult):
        return where
    folders, via = where
    return await asyncio.to_thread(project.find_root, folders), via, folders


def _no_project(folders: list[Path]) -> str:
    return "no package.json in " + ", ".join(map(str, folders)) + " or their parents: pass path"


# --- get_api ----------------------------------------------------------------------------------


def get_api_handler(services: Services) -> Callable[..., Awaitable[CallToolResult]]:
    async def get_api(
        symbol: Annotated[str, Field(min_length=1, max_length=200, description="The API name")],
        package: Annotated[
            str | None, Field(max_length=100, description="@imqueue package, e.g. '@imqueue/rpc'")
        ] = None,
        path: ProjectPath = None,
    ) -> Annotated[CallToolResult, ApiAnswer]:
        where = await _root(path)
        if isinstance(where, CallToolResult):
            return where
        root, via, folders = where
        asked: str | None = None
        if package is not None:
            try:
                package, asked = await asyncio.to_thread(package_asked, package, root)
            except CatalogueError as error:
                return error_result(ErrorCode.UNKNOWN_PACKAGE, str(error))
        if root is None:
            data: dict[str, Any] = {"found": False, "via": via, "root": None, "nearest": []}
            data["problems"] = [_no_project(folders)]
        else:
            data = {**await asyncio.to_thread(lookup, root, symbol, package), "via": via}
            if package is not None:
                data["problems"][:0] = version_note(package, asked, data["packages"].get(package))
            try:
                await installed_api.with_latest(services, data, symbol, package)
            except CorpusUnavailable as error:
                data["problems"].append(f"the docs' side was not read: {error}")
        text = render(data, symbol)
        return structured_result(data, text)

    return get_api


# --- api_diff ---------------------------------------------------------------------------------


def api_diff_handler(services: Services) -> Callable[..., Awaitable[CallToolResult]]:
    async def api_diff(
        package: Package, path: ProjectPath = None
    ) -> Annotated[CallToolResult, ApiDiffAnswer]:
        where = await _root(path)
        if isinstance(where, CallToolResult):
            return where
        root, via, folders = where
        try:
            name, asked = await asyncio.to_thread(package_asked, package, root)
        except CatalogueError as error:
            return error_result(ErrorCode.UNKNOWN_PACKAGE, str(error))
        if root is None:
            data: dict[str, Any] = {"found": False, "via": via, "root": None, "package": name}
            data["problems"] = [_no_project(folders)]
        else:
            try:
                data = {**await installed_api.api_diff_answer(services, root, name), "via": via}
            except CorpusUnavailable as error:
                return error_result(ErrorCode.CORPUS_UNAVAILABLE, str(error))
            data["problems"][:0] = version_note(name, asked, data.get("installed"))
        return structured_result(data, render_diff(data))

    return api_diff


# --- search_docs and find_examples against the installed version ------------------------------


async def marked(name: str, arguments: dict[str, Any], result: Any, services: Services) -> Any:
    """`result` with its API hits marked against the project's installed version (`installed`) and
    the installed-only symbols that match (`installedOnly`), in structuredContent and its text;
    as it was when there is no project in reach or nothing to mark (server/installed_api.py)."""
    if name not in installed_api.MARKED_TOOLS or not isinstance(result, CallToolResult) or result.is_error:
        return result
    data = result.structured_content
    if not isinstance(data, dict):
        return result
    try:
        marks = await installed_api.marks_for(services, name, arguments, data)
    except Exception:  # the marks are extra: they must never cost the answer
        logger.exception("installed-version marks for %s failed", name)
        return result
    if marks is None:
        return result
    hits = [
        hit | {"installed": marks.hits[i]} if i in marks.hits else hit
        for i, hit in enumerate(data["results"])
    ]
    data = {**data, "results": hits} | (
        {"installedOnly": marks.installed_only} if marks.installed_only else {}
    )
    lines = render_marks(hits, marks.installed_only)
    content = list(result.content)
    if content and isinstance(content[-1], TextContent):
        content[-1] = TextContent(type="text", text=content[-1].text.rstrip("\n") + "\n\n" + lines)
    else:
        content.append(TextContent(type="text", text=lines))
    return result.model_copy(update={"structured_content": data, "content": content})

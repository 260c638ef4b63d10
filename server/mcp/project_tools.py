"""The user's project in the local server, as MCP sees it: inspect_project's body, the version
note on other tools' results, and the client's roots asked over the session.

Local (stdio) only: it reads the user's disk. Where the project is:

    the `path` argument of inspect_project, when given;
    else the client's roots (roots/list), when the client offers them on this connection;
    else the server's working directory (and its parents, up to a package.json).

    asking_roots_of(request, roots)   for the life of one tool call, where the client's roots come from
    roots_changed                     notifications/roots/list_changed: ask again next time
    inspect_project_handler           the tool's body over server/project/report.py
    noted(name, args, result, ..)     a successful result that concerns a package the project uses
                                      at another major gets `versionNote` (structuredContent) and
                                      the same line in its text (server/project/version_notes.py)
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import CallToolResult, ClientCapabilities, RootsCapability, TextContent
from pydantic import Field

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.project import roots as project_roots
from imqueue_mcp.server.project.report import ProjectReport, folder_of, render_report_text, report
from imqueue_mcp.server.project.version_notes import NOTED_TOOLS, note_for
from imqueue_mcp.server.services import Services
from imqueue_mcp.server.tool_results import error_result, structured_result

logger = logging.getLogger(__name__)

# SEP-2577 deprecates roots from 2026-07-28 on; 2025-11-25 clients still offer them, and they are
# asked only then, so the SDK's warning would only add a line to stderr at the first call.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning, module=__name__)

ROOTS_TIMEOUT_SECONDS = 5.0


# --- where the project is ------------------------------------------------------------


@contextlib.contextmanager
def asking_roots_of(request: Any, cache: project_roots.RootsCache) -> Iterator[None]:
    """During one tool call, ask this request's client for its roots (if it offers any)."""
    with project_roots.asking(_roots_source(request, cache) if request is not None else None):
        yield


def roots_changed(cache: project_roots.RootsCache) -> Callable[[Any, Any], Awaitable[None]]:
    """notifications/roots/list_changed: the next call asks the client again."""

    async def forget(context: Any, params: Any) -> None:
        cache.forget()

    return forget


def _roots_source(request: Any, cache: project_roots.RootsCache) -> project_roots.RootsSource | None:
    session = request.session
    try:
        offered = session.check_client_capability(ClientCapabilities(roots=RootsCapability()))
    except Exception:  # a connection that cannot say: treat as not offered
        return None
    if not offered or not session.can_send_request:
        return None

    async def ask() -> list[Any]:
        async with asyncio.timeout(ROOTS_TIMEOUT_SECONDS):
            listed = await session.list_roots()
        local = (project_roots.local_path(str(root.uri)) for root in listed.roots)
        return [path for path in local if path is not None]

    async def roots() -> list[Any]:
        capabilities = session.client_capabilities
        announces = bool(capabilities and capabilities.roots and capabilities.roots.list_changed)
        return await cache.folders(session.client_params, announces, ask)

    return roots


# --- inspect_project -----------------------------------------------------------------


DESCRIPTION = (
    "Inspect the user's Node.js project: which @imqueue packages it uses and at which versions "
    "(package.json ranges, package-lock.json, node_modules), beside the versions the docs describe, "
    "and what the docs require of it: exactly one package of each exclusive pair, the Node.js floor "
    "(engines.node), the tsconfig.json settings and Redis. The decorator and module advice follows "
    "the major installed (1.x: legacy decorators; 3.x: standard ones, ES modules), so following it "
    "never breaks the build; duplicate @imqueue copies in node_modules are reported with the fix. "
    "Each finding carries the docs URL that states the rule. path: the project folder; omit "
    "it to use the client's roots, else the server's working directory. Reads files only."
)


ProjectPath = Annotated[
    str | None, Field(max_length=4096, description="The project folder (absolute); omit for the workspace")
]


async def folders_for(path: str | None) -> tuple[list[Path], str] | CallToolResult:
    """The folders to look for the project in and how they were chosen ('path', 'roots' or 'cwd');
    a guided error when `path` is not an absolute path to a folder here."""
    if path is None:
        return await project_roots.locate()
    folder = folder_of(path)
    if folder is None:
        return error_result(
            ErrorCode.INVALID_ARGUMENTS,
            f"{path!r} is not an absolute path to a folder on this machine.",
            "Pass the project folder's absolute path, or omit path to use the workspace.",
        )
    return [folder], "path"


def inspect_project_handler(services: Services) -> Callable[..., Awaitable[CallToolResult]]:
    """inspect_project's body (its record is in tools.py)."""

    async def inspect_project(path: ProjectPath = None) -> Annotated[CallToolResult, ProjectReport]:
        where = await folders_for(path)
        if isinstance(where, CallToolResult):
            return where
        folders, via = where

        async def documented() -> tuple[dict[str, Any], dict[str, str] | None] | None:
            facts = await services.facts.known()
            return (facts.status, facts.stored) if facts is not None else None

        data = await report(folders, via, documented)
        return structured_result(data, render_report_text(data))

    return inspect_project


# --- version notes on the other tools ------------------------------------------------


async def noted(name: str, arguments: dict[str, Any], result: Any, services: Services) -> Any:
    """`result` with the version note when it concerns a package used at another major."""
    if name not in NOTED_TOOLS or not isinstance(result, CallToolResult) or result.is_error:
        return result
    data = result.structured_content
    if not isinstance(data, dict):
        return result

    async def documented() -> dict[str, Any] | None:
        facts = await services.facts.known()
        return facts.status if facts is not None else None

    try:
        note = await note_for(name, arguments, data, services.project_reader, documented)
    except Exception:  # the note is extra: it must never cost the answer
        logger.exception("version note for %s failed", name)
        return result
    if note is None:
        return result
    line = f"Version note: {note}"
    content = list(result.content)
    first = content[0] if content else None
    if isinstance(first, TextContent):
        content[0] = TextContent(type="text", text=f"{line}\n\n{first.text}")
    else:
        content.insert(0, TextContent(type="text", text=line))
    return result.model_copy(update={"structured_content": {**data, "versionNote": note}, "content": content})

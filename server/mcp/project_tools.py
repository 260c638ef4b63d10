"""The user's project in the local server: inspect_project, and the version notes on other tools.

Local (stdio) only: it reads the user's disk. Where the project is:

    the `path` argument of inspect_project, when given;
    else the client's roots (roots/list), when the client offers them on this connection;
    else the server's working directory (and its parents, up to a package.json).

    asking_roots_of(request)   for the life of one tool call, where the client's roots come from
    locate()                   the folders to look in, in that order (never raises)
    inspect_project_handler    the tool's body: project.inspect over the facts catalogue.facts has
    noted(name, args, result)  a successful result of a tool that concerns a package the project
                               uses at another major gets `versionNote` (structuredContent)
                               and the same line in its text; with no project, nothing changes

Which packages a result concerns: search_docs, the API pages among its hits (and its package
filter); get_doc, the API page it read; list_packages, every package; package_status, the
packages it reports; the scaffolds, @imqueue/rpc, which their code imports.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import warnings
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote, urlsplit

from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import CallToolResult, ClientCapabilities, RootsCapability, TextContent
from pydantic import BaseModel, Field

from imqueue_mcp.server.catalogue.packages import CatalogueError, normalize_package
from imqueue_mcp.server.docs.search import api_page_package
from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.project import reader as project
from imqueue_mcp.server.services import Services
from imqueue_mcp.server.tool_results import error_result, structured_result

logger = logging.getLogger(__name__)

# SEP-2577 deprecates roots from 2026-07-28 on; 2025-11-25 clients still offer them, and they are
# asked only then, so the SDK's warning would only add a line to stderr at the first call.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning, module=__name__)

ROOTS_TIMEOUT_SECONDS = 5.0
SCAFFOLD_PACKAGES = ("@imqueue/rpc",)

READER = project.ProjectReader()  # one server process, one cache of the projects it has read

RootsSource = Callable[[], Awaitable[list[Path]]]
_roots: ContextVar[RootsSource | None] = ContextVar("imqueue_roots", default=None)


# --- where the project is ------------------------------------------------------------


@contextlib.contextmanager
def asking_roots_of(request: Any) -> Iterator[None]:
    """During one tool call, ask this request's client for its roots (if it offers any)."""
    source = _roots_source(request) if request is not None else None
    token = _roots.set(source)
    try:
        yield
    finally:
        _roots.reset(token)


class RootsCache:
    """The client's roots, kept while its connection lasts if it announces changes.

    A client that declares roots.listChanged sends notifications/roots/list_changed when they
    change (`forget`), so asking once per connection is enough; one that does not is asked on
    every call. The stdio server has one connection; the key (its initialize params, one object
    per connection) keeps a cache from ever answering for another."""

    def __init__(self) -> None:
        self._owner: object = None
        self._folders: list[Path] | None = None

    async def folders(self, session: Any, ask: RootsSource) -> list[Path]:
        owner = session.client_params
        capabilities = session.client_capabilities
        announces = bool(capabilities and capabilities.roots and capabilities.roots.list_changed)
        if announces and owner is not None and owner is self._owner and self._folders is not None:
            return self._folders
        folders = await ask()
        if announces and owner is not None:
            self._owner, self._folders = owner, folders
        return folders

    def forget(self) -> None:
        self._folders = None


ROOTS = RootsCache()


async def roots_changed(context: Any, params: Any) -> None:
    """notifications/roots/list_changed: the next call asks the client again."""
    ROOTS.forget()


def _roots_source(request: Any) -> RootsSource | None:
    session = request.session
    try:
        offered = session.check_client_capability(ClientCapabilities(roots=RootsCapability()))
    except Exception:  # a connection that cannot say: treat as not offered
        return None
    if not offered or not session.can_send_request:
        return None

    async def ask() -> list[Path]:
        async with asyncio.timeout(ROOTS_TIMEOUT_SECONDS):
            listed = await session.list_roots()
        return [path for root in listed.roots if (path := _local_path(str(root.uri))) is not None]

    async def roots() -> list[Path]:
        return await ROOTS.folders(session, ask)

    return roots


def _local_path(uri: str) -> Path | None:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parts.path))


async def locate() -> tuple[list[Path], str]:
    """The folders to look for the project in, and how they were chosen ('roots' or 'cwd')."""
    source = _roots.get()
    if source is not None:
        try:
            folders = await source()
        except Exception as error:  # a client that offers roots but fails to list them
            logger.info("roots/list failed (%s); looking in the working directory", error)
        else:
            if folders:
                return folders, "roots"
    return [Path(os.getcwd())], "cwd"


# --- inspect_project -----------------------------------------------------------------


class InspectedPackage(BaseModel):
    name: str
    declared: str | None = Field(description="The range in package.json")
    locked: str | None = Field(description="The version in package-lock.json")
    installed: str | None = Field(description="The version in node_modules/@imqueue/NAME/package.json")
    major: int | None = Field(description="The major in use: installed, else locked, else the range's lowest")
    documented: str | None = Field(description="The latest version, which the docs describe (status.json)")


class ProjectFinding(BaseModel):
    id: str = Field(
        description="exclusive-pair, other-major, node-floor, remove-comments, legacy-decorators, "
        "decorators-lib, esm (3.x), legacy-decorators-off (1.x and 2.x) or duplicate-package"
    )
    message: str
    url: str = Field(description="The docs page that states the requirement")
    package: str | None = None


class FrameworkInUse(BaseModel):
    major: int | None = Field(description="The @imqueue major the code compiles against: rpc's, else core's")
    decorators: Literal["legacy", "standard"] | None = Field(
        description="What that major compiles with, and so what the TypeScript advice follows: 'legacy' "
        "(before 3.x: experimentalDecorators on, CommonJS), 'standard' (3.x: TC39 decorators, ES modules)"
    )


class InstalledCopy(BaseModel):
    path: str
    version: str


class NodeRequirement(BaseModel):
    declared: str | None = Field(description="engines.node of package.json")
    floor: str | None = Field(description="The documented Node.js floor")


class RedisRequirement(BaseModel):
    required: str
    url: str
    checked: bool
    note: str


class ProjectReport(BaseModel):
    found: bool = Field(description="False when no package.json was found where the server looked")
    lookedIn: list[str] = Field(description="The folders searched (each and its parents)")
    via: str = Field(description="'path' (the argument), 'roots' (the client's) or 'cwd'")
    root: str | None = None
    packageJson: str | None = None
    lockfile: str | None = None
    tsconfig: str | None = None
    packages: list[InspectedPackage] = Field(default_factory=list)
    framework: FrameworkInUse | None = None
    copies: dict[str, list[InstalledCopy]] | None = Field(
        None, description="@imqueue packages installed more than once at different versions, each copy"
    )
    node: NodeRequirement | None = None
    redis: RedisRequirement | None = None
    findings: list[ProjectFinding] = Field(
        default_factory=list, description="Each requirement of the docs the project does not meet"
    )
    problems: list[str] = Field(default_factory=list, description="Files that could not be read, and why")
    facts: dict[str, str] | None = Field(
        None, description="Where the documented versions came from, when not read live just now"
    )
    factsUnavailable: bool | None = Field(
        None, description="True when no status.json was readable: versions were not compared"
    )


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


def inspect_project_handler(services: Services) -> Callable[..., Awaitable[CallToolResult]]:
    """inspect_project's body (its record is in tools.py)."""

    async def inspect_project(
        path: Annotated[
            str | None,
            Field(max_length=4096, description="The project folder (absolute); omit for the workspace"),
        ] = None,
    ) -> Annotated[CallToolResult, ProjectReport]:
        if path is not None:
            folder = _folder_of(path)
            if folder is None:
                return error_result(
                    ErrorCode.INVALID_ARGUMENTS,
                    f"{path!r} is not an absolute path to a folder on this machine.",
                    "Pass the project folder's absolute path, or omit path to inspect the workspace.",
                )
            folders, via = [folder], "path"
        else:
            folders, via = await locate()
        found = await asyncio.to_thread(project.find_project, folders)
        looked = [str(folder) for folder in folders]
        if found is None:
            data: dict[str, Any] = {
                "found": False,
                "lookedIn": looked,
                "via": via,
                "packages": [],
                "findings": [],
                "problems": [],
            }
            return structured_result(data, render_report_text(data))
        facts = await services.facts.known()
        data = {
            "found": True,
            "lookedIn": looked,
            "via": via,
            **project.inspect(found, facts.status if facts else None),
        }
        if facts is None:
            data["factsUnavailable"] = True
        elif facts.stored is not None:
            data["facts"] = facts.stored
        return structured_result(data, render_report_text(data))

    return inspect_project


def _folder_of(text: str) -> Path | None:
    """The absolute folder `text` names, or None (relative, missing, a file, unreadable)."""
    try:
        folder = Path(text).expanduser()
        return folder if folder.is_absolute() and folder.is_dir() else None
    except (OSError, ValueError, RuntimeError):  # a NUL, a name too long, an unknown ~user
        return None


def render_report_text(data: dict[str, Any]) -> str:
    if not data["found"]:
        return (
            "No Node.js project found: there is no package.json in "
            + ", ".join(data["lookedIn"])
            + " or their parents. Pass path with the project folder."
        )
    lines = [f"# Project {data['root']}", ""]
    if data["packages"]:
        lines.append("| Package | package.json | lockfile | installed | documented |")
        lines.append("| --- | --- | --- | --- | --- |")
        for package in data["packages"]:
            cells = [package[key] or "-" for key in ("declared", "locked", "installed", "documented")]
            lines.append(f"| {package['name']} | " + " | ".join(cells) + " |")
    else:
        lines.append("The project declares no @imqueue package.")
    framework = data.get("framework") or {}
    if framework.get("decorators"):
        lines += [
            "",
            f"Runs @imqueue {framework['major']}.x, which compiles with {framework['decorators']} decorators"
            + (" as ES modules" if framework["decorators"] == "standard" else "")
            + ": the TypeScript advice below is for that major.",
        ]
    lines.append("")
    findings = data["findings"]
    if findings:
        lines.append(f"## Findings ({len(findings)})")
        lines += [f"- **{item['id']}**: {item['message']} See {item['url']}" for item in findings]
    else:
        lines.append("No findings: the project meets what the docs require that can be checked here.")
    redis = data["redis"]
    lines += ["", f"Redis {redis['required']} is required ({redis['url']}); {redis['note']}"]
    if data["problems"]:
        lines += ["", "Not read:"] + [f"- {problem}" for problem in data["problems"]]
    if data.get("factsUnavailable"):
        lines += [
            "",
            "The documented versions are unknown (imqueue.org/status.json could not be read and no "
            "snapshot has a copy), so versions were not compared.",
        ]
    if data.get("facts"):
        stored = data["facts"]
        lines += ["", f"Documented versions from the snapshot of {stored['fetchedAt']}: {stored['note']}."]
    return "\n".join(lines) + "\n"


# --- version notes on the other tools ------------------------------------------------

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


async def noted(name: str, arguments: dict[str, Any], result: Any, services: Services) -> Any:
    """`result` with the version note when it concerns a package used at another major."""
    if name not in NOTED_TOOLS or not isinstance(result, CallToolResult) or result.is_error:
        return result
    data = result.structured_content
    if not isinstance(data, dict):
        return result
    try:
        note = await _note_for(name, arguments, data, services)
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


async def _note_for(
    name: str, arguments: dict[str, Any], data: dict[str, Any], services: Services
) -> str | None:
    packages = concerned_packages(name, arguments, data)
    if packages is not None and not packages:
        return None
    folders, _ = await locate()
    # In a worker thread: a cached lookup is only stat calls, but a first read (or one after a
    # change) reads the user's files, and the event loop serves every other call meanwhile.
    found = await asyncio.to_thread(READER.find, folders)
    if found is None or not found.packages:
        return None
    facts = await services.facts.known()
    if facts is None:
        return None
    return project.version_note(project.major_mismatches(found, facts.status, packages))

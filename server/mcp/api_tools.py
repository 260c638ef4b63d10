"""get_api in the local server: a symbol as the project's installed @imqueue version declares it.

Reads the project's node_modules/@imqueue/*/**/*.d.ts (server/project/api_index.py); never in
the hosted server, which reads no disk. The record is in tools.py, beside inspect_project's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import BaseModel, Field

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.mcp.project_tools import _folder_of, locate
from imqueue_mcp.server.mcp.results import error_result, structured_result
from imqueue_mcp.server.project import api_index
from imqueue_mcp.server.project import reader as project

DESCRIPTION = (
    "Look up an @imqueue API symbol as the user's project has it installed: the declaration "
    "(signature) and doc comment (summary, @param, @returns, @deprecated, @defaultValue, @remarks) "
    "read from node_modules/@imqueue/*/**/*.d.ts of the installed version, which may be an older "
    "major than the docs describe. symbol: a class, interface, function, type or member, dotted or "
    "spaced, any case ('IMQClientOptions.timeout', 'imqclientoptions timeout'); an unknown one gets "
    "the nearest names. package: e.g. '@imqueue/rpc' (default: every installed @imqueue package). "
    "path: the project folder; omit it to use the client's roots, else the working directory. "
    "Reads files only."
)


class InstalledSymbol(BaseModel):
    name: str
    kind: str
    signature: str
    doc: dict[str, Any]
    file: str
    package: str
    version: str


class ApiAnswer(BaseModel):
    found: bool
    root: str | None = None
    via: str
    symbol: InstalledSymbol | None = None
    nearest: list[str] = Field(default_factory=list, description="Names close to an unknown symbol")
    packages: dict[str, str] = Field(default_factory=dict, description="Installed @imqueue packages read")
    problems: list[str] = Field(default_factory=list, description="What could not be read, and why")


def _lookup(root: Path, symbol: str, package: str | None) -> dict[str, Any]:
    packages, problems = api_index.installed_packages(root)
    if package:
        wanted = package if package.startswith("@") else f"{api_index.SCOPE}/{package}"
        packages = [p for p in packages if p.name == wanted]
        if not packages and not problems:
            problems.append(f"{wanted} is not installed in {root}")
    data: dict[str, Any] = {"found": False, "root": str(root), "packages": {}, "nearest": []}
    nearest: list[str] = []
    for pkg in packages:
        index = api_index.index_package(pkg)
        data["packages"].setdefault(pkg.name, pkg.version)
        problems += [f"{pkg.name}@{pkg.version}: {p}" for p in index.problems[:10]]
        if data["found"]:
            continue
        sym, near = api_index.resolve(index, symbol)
        if sym is not None:
            data["found"] = True
            data["symbol"] = {**sym.as_dict(), "package": pkg.name, "version": pkg.version}
        else:
            nearest += [n for n in near if n not in nearest]
    if not data["found"]:
        data["nearest"] = nearest[:8]
    data["problems"] = problems[:20]
    return data


def render(data: dict[str, Any]) -> str:
    if data["found"]:
        sym = data["symbol"]
        doc = sym["doc"]
        lines = [
            f"# {sym['name']} ({sym['kind']}) in {sym['package']}@{sym['version']} as installed",
            "",
            "```ts",
            sym["signature"],
            "```",
            "",
            doc.get("summary") or "(no doc comment)",
        ]
        for name, text in doc.get("params", {}).items():
            lines.append(f"- @param {name}: {text}")
        for key in ("returns", "default", "deprecated", "remarks"):
            if key in doc:
                lines.append(f"- @{key}: {doc[key]}")
        lines.append(f"\nDeclared in {sym['file']}.")
    else:
        lines = [f"No installed @imqueue declaration named {data.get('query')!r} under {data['root']}."]
        if data["nearest"]:
            lines.append("Nearest names: " + ", ".join(data["nearest"]))
    if data["problems"]:
        lines += ["", "Not read:"] + [f"- {p}" for p in data["problems"]]
    return "\n".join(lines)


def get_api_handler() -> Callable[..., Awaitable[CallToolResult]]:
    async def get_api(
        symbol: Annotated[str, Field(min_length=1, max_length=200, description="The API name")],
        package: Annotated[
            str | None, Field(max_length=100, description="@imqueue package, e.g. '@imqueue/rpc'")
        ] = None,
        path: Annotated[
            str | None,
            Field(max_length=4096, description="The project folder (absolute); omit for the workspace"),
        ] = None,
    ) -> Annotated[CallToolResult, ApiAnswer]:
        if path is not None:
            folder = _folder_of(path)
            if folder is None:
                return error_result(
                    ErrorCode.INVALID_ARGUMENTS,
                    f"{path!r} is not an absolute path to a folder on this machine.",
                    "Pass the project folder's absolute path, or omit path to use the workspace.",
                )
            folders, via = [folder], "path"
        else:
            folders, via = await locate()
        root = await asyncio.to_thread(project.find_root, folders)
        if root is None:
            data: dict[str, Any] = {
                "found": False,
                "via": via,
                "root": None,
                "query": symbol,
                "nearest": [],
                "problems": [
                    "no package.json in " + ", ".join(map(str, folders)) + " or their parents: pass path"
                ],
            }
        else:
            data = {**await asyncio.to_thread(_lookup, root, symbol, package), "via": via, "query": symbol}
        text = render(data)
        data.pop("query", None)
        return structured_result(data, text)

    return get_api

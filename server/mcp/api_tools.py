"""get_api in the local server: a symbol as the project's installed @imqueue version declares it.

Reads the project's node_modules/@imqueue/*/**/*.d.ts (server/project/api_index.py); never in
the hosted server, which reads no disk. The record is in tools.py, beside inspect_project's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from imqueue_mcp.server.mcp.project_tools import ProjectPath, folders_for
from imqueue_mcp.server.project import reader as project
from imqueue_mcp.server.project.api_lookup import ApiAnswer, lookup
from imqueue_mcp.server.tool_results import structured_result

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
        path: ProjectPath = None,
    ) -> Annotated[CallToolResult, ApiAnswer]:
        where = await folders_for(path)
        if isinstance(where, CallToolResult):
            return where
        folders, via = where
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
            data = {**await asyncio.to_thread(lookup, root, symbol, package), "via": via, "query": symbol}
        text = render(data)
        data.pop("query", None)
        return structured_result(data, text)

    return get_api

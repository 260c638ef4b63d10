"""The project's installed @imqueue API joined with what the docs (the latest release) say of it:
api_diff's answer. The two rooms it joins never import each other:

    server/project    the installed declarations (api_index), the comparison (api_diff), the
                      answers' shapes (api_lookup)
    server/docs       the docs' API records and their pages' signatures (documented_api)

    documented_release(services, package)        the version the docs describe (status.json)
    api_diff_answer(services, root, package)     api_diff's answer; CorpusUnavailable when no
                                                 docs corpus can be loaded

No MCP here: the adapter (server/mcp/api_tools.py) calls these and renders their answers.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from imqueue_mcp.server.project import reader as project
from imqueue_mcp.server.project.api_diff import against_docs
from imqueue_mcp.server.project.api_lookup import package_index
from imqueue_mcp.server.services import Services


async def documented_release(services: Services, package: str) -> str | None:
    """The version the docs describe (status.json), or None when no facts are at hand."""
    facts = await services.facts.known()
    record = project.documented_versions(facts.status if facts else None).get(package)
    return str(record["version"]) if record else None


async def api_diff_answer(services: Services, root: Path, package: str) -> dict[str, Any]:
    """The installed `package` under root against the docs' release of it (ApiDiffAnswer's shape,
    less `via`)."""
    data: dict[str, Any] = {"found": False, "root": str(root), "package": package}
    index, problems, installed = await asyncio.to_thread(package_index, root, package)
    data |= {"packages": installed, "problems": problems[:20]}
    if index is None:
        return data
    data["installed"] = index.version
    documented = await services.documented.of(package, list(index.symbols))
    if not documented.symbols:
        data["problems"].append(f"the docs have no API reference of {package}: nothing to compare")
        return data
    latest = await documented_release(services, package) or documented.release
    data |= against_docs(index, documented.symbols, latest)
    data |= {"found": True, "corpus": documented.corpus, "unread": documented.unread[:20]}
    return data

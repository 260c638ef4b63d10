"""The project's installed @imqueue API joined with what the docs (the latest release) say of it:
get_api's docs side and api_diff's answer. The two rooms it joins never import each other:

    server/project    the installed declarations (api_index), the comparison (api_diff), the
                      answers' shapes (api_lookup)
    server/docs       the docs' API records and their pages' signatures (documented_api)

    documented_release(services, package)        the version the docs describe (status.json)
    with_latest(services, data, symbol, package) get_api's answer + `latest` and `difference`
    api_diff_answer(services, root, package)     api_diff's answer; CorpusUnavailable when no
                                                 docs corpus can be loaded

No MCP here: the adapter (server/mcp/api_tools.py) calls these and renders their answers.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from imqueue_mcp.server.project import api_index
from imqueue_mcp.server.project import reader as project
from imqueue_mcp.server.project.api_diff import against_docs
from imqueue_mcp.server.project.api_lookup import beside_latest, package_index, scoped
from imqueue_mcp.server.services import Services


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

"""list_packages and package_status: imqueue.org/status.json, read at call time.

When imqueue.org does not answer, or under --offline, both answer from the copy of
status.json stored with the docs corpus (package_facts.py), labelled with its date in
`stored`, as search_docs labels its corpus: a dated fact is not a stale one passed off as
current. With neither, the two differ on purpose (SPEC §3): list_packages still returns the
compiled-in catalogue, with factsUnavailable: true; package_status reports the failure.
"""

from __future__ import annotations

import logging
from typing import Any

from imqueue_mcp.server.catalogue import packages as catalogue
from imqueue_mcp.server.docs.package_facts import Facts, PackageFacts, StatusUnavailable

logger = logging.getLogger(__name__)


async def list_packages(facts: PackageFacts) -> dict[str, Any]:
    note = ""
    try:
        known: Facts | None = await facts.read()
    except StatusUnavailable as error:
        logger.info("list_packages without facts: %s", error)
        known = None
        note = f"{error} {getattr(error, 'next_step', '')}".strip()
    data = catalogue.merge_status(catalogue.CATALOGUE, known.status if known else None)
    if note and data.get("factsUnavailable"):
        data["factsNote"] = note
    if known is not None and known.stored is not None and not data.get("factsUnavailable"):
        data["stored"] = known.stored
    return data


async def package_status(facts: PackageFacts, package: str | None) -> dict[str, Any]:
    """Raises StatusUnavailable (no facts, live or stored: facts.FactsUnavailable says
    what to do next) or catalogue.CatalogueError (unknown package)."""
    known = await facts.read()
    data = catalogue.package_status(known.status, package)
    if known.stored is not None:
        data["stored"] = known.stored
    return data

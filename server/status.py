"""list_packages and package_status: imqueue.org/status.json, read at call time.

The two tools treat an unreachable feed differently, on purpose (SPEC §3):
list_packages still returns the compiled-in catalogue, with factsUnavailable: true;
package_status has no fallback and reports the failure, because a stale version stated
with confidence is exactly what it exists to prevent.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from . import catalogue
from .fetch import Fetcher, FetchError

logger = logging.getLogger(__name__)

STATUS_HOST, STATUS_PATH = "imqueue.org", "/status.json"


class StatusUnavailable(Exception):
    """status.json could not be read; the message says why and where else to look."""


async def read_status(fetcher: Fetcher) -> dict[str, Any]:
    try:
        fetched = await fetcher.get(STATUS_HOST, STATUS_PATH)
    except FetchError as error:
        raise StatusUnavailable(str(error)) from None
    if fetched.status != 200:
        raise StatusUnavailable(f"{fetched.url}: the site answered HTTP {fetched.status}")
    try:
        status = json.loads(fetched.body)
    except ValueError:
        raise StatusUnavailable(f"{fetched.url}: the body is not JSON") from None
    if not isinstance(status, dict):
        raise StatusUnavailable(f"{fetched.url}: expected a JSON object")
    return status


async def list_packages(fetcher: Fetcher) -> dict[str, Any]:
    try:
        status: dict[str, Any] | None = await read_status(fetcher)
    except StatusUnavailable as error:
        logger.info("list_packages without facts: %s", error)
        status = None
    return catalogue.merge_status(catalogue.CATALOGUE, status)


async def package_status(fetcher: Fetcher, package: str | None) -> dict[str, Any]:
    """Raises StatusUnavailable (feed down) or catalogue.CatalogueError (unknown package)."""
    try:
        status = await read_status(fetcher)
    except StatusUnavailable as error:
        raise StatusUnavailable(
            f"Package facts are unavailable: {error}. No stored copy is offered, because a stale "
            "version stated as current is worse than none. Try again later, or read "
            "https://imqueue.org/status/ yourself."
        ) from None
    return catalogue.package_status(status, package)

"""A /search-sections.json that is well-formed JSON but holds a bad range (issue 19 §4).

The map is checked in full when it is fetched (the builder's own check), so a bad range never
reaches the slicing: get_doc answers as for a page without a map (an outline for an anchor),
never internal_error. A refused or failed fetch keeps the last good map and is retried after
SECTIONS_RETRY_SECONDS, not after the hour a good map is kept. The origins are real loopback
servers of the mirror (fault_origin.py); the map keeper is the server's own, with short times.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from fault_origin import SITE, Fault, FaultyOrigins

from imqueue_mcp.server.docs.fetch import Fetcher
from imqueue_mcp.server.docs.read import SECTIONS_RETRY_SECONDS, SECTIONS_TTL_SECONDS, SectionRanges

from conftest import McpConnection, server_environment, stdio_connection

MAP = "/search-sections.json"
PAGE = "/get-started/"
ANCHOR = "prerequisites"  # fault_origin's bad_ranges breaks another anchor of the same page
BAD = Fault("bad_ranges", frozenset({MAP}))


@pytest.fixture
def origins() -> Iterator[FaultyOrigins]:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    served = FaultyOrigins()
    yield served
    served.close()


def test_a_bad_range_in_the_section_map_is_no_internal_error(origins: FaultyOrigins, tmp_path: Path) -> None:
    origins.inject(BAD)
    connection: McpConnection = stdio_connection(
        origins.origin_args(), server_environment(tmp_path), tmp_path, "legacy"
    )
    try:
        for request in (
            {"url": f"https://imqueue.org{PAGE}#{ANCHOR}"},
            {"url": f"https://imqueue.org{PAGE}", "outline": True},
            {"url": f"https://imqueue.org{PAGE}#1-install-the-cli"},
        ):
            result = connection.call("get_doc", request)
            assert not result.is_error, result.content[0].text
            assert "section" not in result.structured_content  # no slice from a map that was refused
        missed = connection.call("get_doc", {"url": f"https://imqueue.org{PAGE}#{ANCHOR}"})
        assert missed.structured_content["fragmentMiss"]["anchor"] == ANCHOR
    finally:
        connection.close()
    assert ("imqueue.org", MAP) in origins.requests


def test_a_refused_map_keeps_the_last_good_one(origins: FaultyOrigins) -> None:
    async def scenario() -> None:
        fetcher = Fetcher(origins.urls)
        keeper = SectionRanges(fetcher, ttl=0.2, retry=0.2)
        good = await keeper.for_page("imqueue.org", PAGE)
        assert good is not None and good[ANCHOR] == [9, 22]
        origins.inject(BAD)
        await asyncio.sleep(0.3)  # the good map is due for a refresh
        assert await keeper.for_page("imqueue.org", PAGE) == good
        assert origins.requests.count(("imqueue.org", MAP)) == 2  # it was fetched again, and refused
        await fetcher.aclose()

    asyncio.run(scenario())


def test_after_a_refused_map_the_next_fetch_comes_after_the_retry_time_not_the_hour(
    origins: FaultyOrigins,
) -> None:
    assert SECTIONS_RETRY_SECONDS * 10 <= SECTIONS_TTL_SECONDS

    async def scenario() -> None:
        fetcher = Fetcher(origins.urls)
        keeper = SectionRanges(fetcher, ttl=3600, retry=0.5)
        origins.inject(BAD)
        assert await keeper.for_page("imqueue.org", PAGE) is None
        origins.heal()
        assert await keeper.for_page("imqueue.org", PAGE) is None  # within the retry time: not fetched
        assert origins.requests.count(("imqueue.org", MAP)) == 1
        await asyncio.sleep(0.6)
        recovered = await keeper.for_page("imqueue.org", PAGE)
        assert recovered is not None and recovered[ANCHOR] == [9, 22]
        assert origins.requests.count(("imqueue.org", MAP)) == 2
        await fetcher.aclose()

    asyncio.run(scenario())

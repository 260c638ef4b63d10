"""Load: several uvicorn workers behind one port must give the same answers.

The soak's short profile (every tool from many clients at once, zero unexpected failures) is
tests/test_soak.py; the long runs and their figures are benchmarks/soak.py's (see
docs/reliability.md). Here only correctness under load is asserted, never a speed.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fault_origin import FaultyOrigins

from conftest import HttpServer, McpConnection, server_environment

pytestmark = pytest.mark.slow  # a long end-to-end run: CI, or IMQUEUE_MCP_SLOW=1 (conftest.py)

QUERY = "how do I expose a method"


@pytest.fixture
def origins() -> Iterator[FaultyOrigins]:
    served = FaultyOrigins()  # no fault: used for its request log
    yield served
    served.close()


def answer_without_date(result: Any) -> dict[str, Any]:
    """The structured answer, less the corpus's fetch time (each worker read the site itself)."""
    data = dict(result.structured_content)
    data["corpus"] = {key: value for key, value in data["corpus"].items() if key != "fetchedAt"}
    return data


def test_two_workers_behind_one_port_give_identical_answers(origins: FaultyOrigins, tmp_path: Path) -> None:
    server = HttpServer(["--workers", "2", *origins.origin_args()], server_environment(tmp_path), tmp_path)
    try:

        def one_client(_: int) -> list[dict[str, Any]]:
            # a client of its own, so a connection of its own: the kernel hands each to a worker
            connection = McpConnection(server.url + "/mcp", "legacy")
            try:
                return [
                    answer_without_date(connection.call("search_docs", {"query": QUERY})) for _ in range(3)
                ]
            finally:
                connection.close()

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = [answer for batch in pool.map(one_client, range(12)) for answer in batch]
    finally:
        server.close()
    assert len(answers) == 36
    assert all(answer == answers[0] for answer in answers)
    assert answers[0]["corpus"]["source"] == "live" and answers[0]["count"] > 0
    # Each worker reads the feeds once, for its own corpus: two reads, two workers served.
    feed_reads = [
        path for host, path in origins.requests if (host, path) == ("imqueue.org", "/search-index.json")
    ]
    assert len(feed_reads) == 2, origins.requests

"""Load: the soak benchmark's short profile must see zero errors, and several uvicorn workers
behind one port must give the same answers.

The long runs and their figures are benchmarks/soak.py's (see docs/reliability.md, the reliability
section); here only correctness under load is asserted, never a speed.
"""

from __future__ import annotations

import concurrent.futures
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fault_origin import FaultyOrigins

from conftest import REPO, HttpServer, McpConnection, server_environment

SOAK_SECONDS = 10
QUERY = "how do I expose a method"


def test_the_short_soak_serves_every_call_without_an_error() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.soak", "--seconds", str(SOAK_SECONDS)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    figures = json.loads(completed.stdout.strip().splitlines()[-1])
    runs = figures["runs"]
    assert set(runs) == {"hosted, 64 clients, 1w", "stdio, 1 client"}
    for name, run in runs.items():
        assert run["calls"] > 0 and run["errors"] == 0, (name, run["first_errors"])
    assert runs["hosted, 64 clients, 1w"]["clients"] == 64


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

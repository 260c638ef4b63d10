"""`imq-search --json Q` and `search_docs(Q)` give the same answer: one function shapes both.

The server may add only its own fields (the advisory, the corpus it answered from, the passages'
budget, and on each hit the size get_doc would return for it and its passage); everything
else, the corrected query of a typo included, must be equal, over the same snapshot.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from imqueue_mcp.build_index.search_cli import main as search_main

from conftest import McpConnection, built_snapshot, server_environment, stdio_connection

SERVER_ONLY = {"advisory", "advisories", "corpus", "passageBudget"}
# get_doc's answer size (server/docs/sizes.py) and the hit's passage (server/docs/hit_passages.py)
SERVER_ONLY_PER_HIT = {"tokens", "tokensBasis", "passage"}
CASES = [
    ("how do I expose a method", None),
    ("expose a methd", None),  # a typo: corrected to "expose a method"
    ("recieve messages", None),  # a typo
    ("lock", "rpc"),  # the package filter
    ("RedisQueue.send", None),  # an identifier
    ("pricing", None),  # imqueue.com
    ("datadog tracing", None),  # touches an exclusive pair: the server adds its advisory
    ("qzxwv blorp", None),  # a miss
]


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_snapshot(tmp_path_factory.mktemp("shape"), pages=False)


@pytest.fixture(scope="module")
def server(snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("shape-home")
    connection = stdio_connection(
        ["--offline", "--snapshot", str(snapshot)], server_environment(home), home, "legacy"
    )
    yield connection
    connection.close()


def cli_json(snapshot: Path, query: str, package: str | None) -> dict[str, Any]:
    out = io.StringIO()
    argv = [query, "--json", "--limit", "6", "--snapshot", str(snapshot)]
    argv += ["--package", package] if package else []
    assert search_main(argv, out=out) in (0, 1)
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


@pytest.mark.parametrize(("query", "package"), CASES)
def test_imq_search_json_and_search_docs_agree(
    server: McpConnection, snapshot: Path, query: str, package: str | None
) -> None:
    arguments: dict[str, Any] = {"query": query, "limit": 6}
    if package:
        arguments["package"] = package
    answer = server.call("search_docs", arguments)
    assert not answer.is_error, answer.content[0].text
    served = {key: value for key, value in answer.structured_content.items() if key not in SERVER_ONLY}
    served["results"] = [
        {key: value for key, value in hit.items() if key not in SERVER_ONLY_PER_HIT}
        for hit in served["results"]
    ]
    assert served == cli_json(snapshot, query, package)


def test_a_corrected_query_is_reported_in_text_and_structured_content(server: McpConnection) -> None:
    answer = server.call("search_docs", {"query": "expose a methd"})
    assert answer.structured_content["query"] == "expose a methd"
    assert answer.structured_content["corrected"] == "expose a method"
    assert 'Searched for "expose a method" (corrected from "expose a methd")' in answer.content[0].text


def test_the_server_adds_its_advisory_and_corpus_and_nothing_else(
    server: McpConnection, snapshot: Path
) -> None:
    answer = server.call("search_docs", {"query": "datadog tracing"})
    added = set(answer.structured_content) - set(cli_json(snapshot, "datadog tracing", None))
    assert added == {"advisory", "advisories", "corpus", "passageBudget"}

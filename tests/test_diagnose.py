"""search_docs reads system and npm error codes out of a pasted error and says what they mean
for an @imqueue project (server/docs/diagnose.py), beside the ranked pages it leaves untouched."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from imqueue_mcp.server.docs.diagnose import diagnose

from conftest import McpConnection, origin_args, server_environment, stdio_connection

SECTIONS = Path(__file__).resolve().parents[2] / "shared" / "site" / "imqueue.org" / "search-sections.json"


def codes(query: str) -> list[str]:
    return [diagnosis.code for diagnosis in diagnose(query)]


def test_a_refused_connection_on_redis_default_port_says_no_redis_listens() -> None:
    (diagnosis,) = diagnose("Error: connect ECONNREFUSED 127.0.0.1:6379\n    at TCPConnectWrap")

    assert "at 127.0.0.1:6379: no Redis is listening" in diagnosis.explanation
    assert "IMQ_REDIS" in diagnosis.explanation
    assert diagnosis.urls[0] == "https://imqueue.org/get-started/#prerequisites"


def test_a_refused_connection_elsewhere_names_the_port_and_keeps_an_ipv6_host_whole() -> None:
    (diagnosis,) = diagnose("connect ECONNREFUSED ::1:6380")

    assert "at ::1:6380: no process listens on port 6380" in diagnosis.explanation


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("npm error code ERESOLVE unable to resolve dependency tree", ["ERESOLVE"]),
        ("getaddrinfo ENOTFOUND redis.internal", ["ENOTFOUND"]),
        ("connect ETIMEDOUT 10.0.0.7:6379", ["ETIMEDOUT"]),
        ("listen EADDRINUSE: address already in use :::8080", ["EADDRINUSE"]),
        ("ECONNREFUSED then ERESOLVE", ["ECONNREFUSED", "ERESOLVE"]),
        ("how do I expose a method", []),
        ("econnrefused", []),  # a code is written in capitals; a lowercase word is just a word
    ],
)
def test_each_known_code_is_read_and_nothing_else(query: str, expected: list[str]) -> None:
    assert codes(query) == expected


def test_every_page_a_diagnosis_points_to_is_a_section_of_the_site() -> None:
    sections = json.loads(SECTIONS.read_text(encoding="utf-8"))["pages"]
    pasted = "ECONNREFUSED 1.2.3.4:5 ENOTFOUND h ETIMEDOUT EADDRINUSE ERESOLVE"
    urls = {url for diagnosis in diagnose(pasted) for url in diagnosis.urls}
    assert len(codes(pasted)) == 5
    for url in urls:
        path, _, anchor = url.removeprefix("https://imqueue.org").partition("#")
        assert path in sections, url
        assert not anchor or anchor in sections[path], url


@pytest.fixture(scope="module")
def local(site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("home")
    connection = stdio_connection(origin_args(site_origins), server_environment(home), home, "legacy")
    yield connection
    connection.close()


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def test_search_docs_puts_the_diagnosis_first_and_keeps_the_ranked_hits(local: McpConnection) -> None:
    result = local.call("search_docs", {"query": "Error: connect ECONNREFUSED 127.0.0.1:6379"})

    assert not result.is_error
    (diagnosis,) = result.structured_content["diagnosis"]
    assert diagnosis["code"] == "ECONNREFUSED"
    assert result.structured_content["results"]  # the ranking still answers beside it
    assert text_of(result).startswith("ECONNREFUSED: Nothing accepted a TCP connection at 127.0.0.1:6379")


def test_search_docs_without_an_error_code_has_no_diagnosis(local: McpConnection) -> None:
    result = local.call("search_docs", {"query": "expose a method"})

    assert "diagnosis" not in result.structured_content

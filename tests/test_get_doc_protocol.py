"""get_doc's budgets, cursors, outlines, sizes and site paths, through the SDK's client.

The same checks run against the real stdio server and the real hosted server (HTTP), both
reading the site mirror served on loopback; expected bodies are read from the mirror files
at run time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import SITE, HttpServer, McpConnection, origin_args, server_environment, stdio_connection

LONG_PAGE = "https://imqueue.org/api/faq/"  # the mirror's longest page: about 12,000 tokens
LONG_FILE = SITE / "imqueue.org" / "api" / "faq" / "index.md"
GET_STARTED = "https://imqueue.org/get-started/"
GET_STARTED_FILE = SITE / "imqueue.org" / "get-started" / "index.md"


@pytest.fixture(scope="module", params=[("stdio", "legacy"), ("http", "auto")], ids=["stdio", "http"])
def client(
    request: pytest.FixtureRequest, site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpConnection]:
    """stdio on protocol 2025-11-25 (initialize handshake), HTTP on 2026-07-28 (stateless)."""
    transport, mode = request.param
    home = tmp_path_factory.mktemp(f"get-doc-{transport}")
    if transport == "stdio":
        connection = stdio_connection(origin_args(site_origins), server_environment(home), home, mode)
        yield connection
        connection.close()
        return
    server = HttpServer(origin_args(site_origins), server_environment(home), home)
    connection = McpConnection(server.url + "/mcp", mode)
    yield connection
    connection.close()
    server.close()


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def read(client: McpConnection, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    result = client.call("get_doc", arguments)
    assert not result.is_error, text_of(result)
    return result.structured_content, text_of(result)


def guided_error(client: McpConnection, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    result = client.call("get_doc", arguments)
    assert result.is_error, text_of(result)
    error = result.structured_content["error"]
    assert error["message"] and error["suggestedAction"] and "Traceback" not in text_of(result)
    return error, text_of(result)


def test_a_long_page_read_through_next_cursor_to_the_end_equals_the_whole_page(
    client: McpConnection,
) -> None:
    whole = LONG_FILE.read_text("utf-8")
    parts: list[str] = []
    data, text = read(client, {"url": LONG_PAGE, "maxTokens": 1000})
    assert data["truncated"] is True and "cursor=" in text and data["nextCursor"] in text
    while True:
        parts.append(data["markdown"])
        assert data["tokens"] <= 1000 and data["totalTokens"] == (len(whole) + 3) // 4
        assert data["bytes"] == len(data["markdown"].encode("utf-8"))
        assert data["totalBytes"] == len(whole.encode("utf-8"))
        if not data["truncated"]:
            assert "nextCursor" not in data
            break
        data, text = read(client, {"url": LONG_PAGE, "maxTokens": 1000, "cursor": data["nextCursor"]})
        assert "Continued" in text
    assert len(parts) >= 12 and "".join(parts) == whole


def test_parts_end_at_a_section_or_paragraph_boundary(client: McpConnection) -> None:
    data, _ = read(client, {"url": LONG_PAGE, "maxTokens": 2000})
    rest, _ = read(client, {"url": LONG_PAGE, "maxTokens": 2000, "cursor": data["nextCursor"]})
    assert data["markdown"].endswith("\n\n") or rest["markdown"].startswith("#")


def test_the_default_budget_is_8000_tokens_and_the_page_says_how_big_it_is(client: McpConnection) -> None:
    data, _ = read(client, {"url": LONG_PAGE})
    assert data["truncated"] is True and 7000 < data["tokens"] <= 8000
    small, _ = read(client, {"url": GET_STARTED})
    expected = GET_STARTED_FILE.read_text("utf-8")
    assert small["markdown"] == expected and small["truncated"] is False and "nextCursor" not in small
    assert small["bytes"] == small["totalBytes"] == len(expected.encode("utf-8"))


def test_a_section_reports_its_own_bytes_beside_the_whole_documents(client: McpConnection) -> None:
    data, _ = read(client, {"url": GET_STARTED + "#prerequisites"})
    assert data["section"]["heading"] == "Prerequisites"
    assert data["bytes"] == len(data["markdown"].encode("utf-8")) < data["totalBytes"]
    assert data["totalBytes"] == GET_STARTED_FILE.stat().st_size
    assert data["tokens"] == data["totalTokens"] == (len(data["markdown"]) + 3) // 4


def test_a_long_file_reads_in_parts_under_the_200_kb_outer_limit(client: McpConnection) -> None:
    data, text = read(client, {"url": "https://imqueue.org/llms-full.txt", "maxTokens": 50_000})
    assert data["truncated"] is True and data["mimeType"] == "text/plain"
    assert data["bytes"] <= 200_000 < data["totalBytes"] and "Truncated" in text


def test_the_outline_lists_the_sections_without_the_body(client: McpConnection) -> None:
    data, text = read(client, {"url": GET_STARTED, "outline": True})
    assert data["markdown"] == "" and data["bytes"] == 0 and data["truncated"] is False
    outline = data["outline"]
    assert [entry["heading"] for entry in outline][:3] == [
        "Get started: Node.js microservices in minutes",
        "Prerequisites",
        "1. Install the CLI",
    ]
    assert [entry["level"] for entry in outline][:3] == [1, 2, 2]
    prerequisites = outline[1]
    assert prerequisites["url"] == GET_STARTED + "#prerequisites"
    section, _ = read(client, {"url": prerequisites["url"]})
    assert prerequisites["tokens"] == section["totalTokens"]
    assert all(entry["tokens"] > 0 for entry in outline)
    assert GET_STARTED + "#prerequisites" in text and "Outline" in text


def test_an_unknown_fragment_answers_with_the_outline(client: McpConnection) -> None:
    data, text = read(client, {"url": GET_STARTED + "#no-such-anchor"})
    assert data["fragmentMiss"]["anchor"] == "no-such-anchor"
    assert "prerequisites" in data["fragmentMiss"]["available"]
    assert data["markdown"] == "" and "section" not in data
    assert GET_STARTED + "#prerequisites" in [entry.get("url") for entry in data["outline"]]
    assert "outline follows" in text and "#prerequisites" in text


@pytest.mark.parametrize("path", ["/get-started", "get-started/", "/get-started/#prerequisites"])
def test_a_bare_site_path_reads_from_imqueue_org(client: McpConnection, path: str) -> None:
    data, _ = read(client, {"url": path})
    assert data["url"].startswith(GET_STARTED) and data["markdown"].startswith(("# Get started", "## Prereq"))


@pytest.mark.parametrize("text", ["evil.test/get-started/", "//evil.test/get-started/", "ftp://imqueue.org/"])
def test_neither_a_canonical_url_nor_a_plain_path_is_refused(client: McpConnection, text: str) -> None:
    error, message = guided_error(client, {"url": text})
    assert error["code"] == "url_refused" and "/get-started/" in message


def test_a_bad_cursor_is_a_guided_error(client: McpConnection) -> None:
    error, _ = guided_error(client, {"url": LONG_PAGE, "cursor": "not-a-cursor"})
    assert error["code"] == "invalid_arguments" and "nextCursor" in error["message"]
    assert "url alone" in error["suggestedAction"]


def test_a_cursor_for_another_url_is_a_guided_error(client: McpConnection) -> None:
    first, _ = read(client, {"url": LONG_PAGE, "maxTokens": 500})
    error, _ = guided_error(client, {"url": GET_STARTED, "cursor": first["nextCursor"]})
    assert error["code"] == "invalid_arguments" and LONG_PAGE in error["message"]
    assert "url alone" in error["suggestedAction"]
    both, _ = guided_error(client, {"url": LONG_PAGE, "cursor": first["nextCursor"], "outline": True})
    assert "outline" in both["message"]


@pytest.mark.parametrize("budget", [0, 99, 50_001])
def test_a_budget_out_of_range_is_refused_by_the_schema(client: McpConnection, budget: int) -> None:
    result = client.call("get_doc", {"url": GET_STARTED, "maxTokens": budget})
    assert result.is_error and "maxTokens" in text_of(result)


def test_the_tool_publishes_its_budget_arguments(client: McpConnection) -> None:
    tool = next(tool for tool in client.tools() if tool.name == "get_doc")
    properties = tool.input_schema["properties"]
    assert set(properties) == {"url", "maxTokens", "cursor", "outline"}
    assert properties["maxTokens"]["default"] == 8000
    assert "4 characters" in tool.description and "nextCursor" in tool.description


def test_search_hits_carry_the_tokens_get_doc_would_return(client: McpConnection) -> None:
    found = client.call("search_docs", {"query": "get started install the cli", "limit": 10})
    hits = found.structured_content["results"]
    sized = [hit for hit in hits if "tokens" in hit]
    assert sized and all(hit["tokensBasis"] in ("prose", "measured") for hit in sized)
    target = sized[0]
    data, _ = read(client, {"url": target["url"]})
    if target["tokensBasis"] == "prose":
        assert target["tokens"] <= data["totalTokens"]  # the prose is a lower bound
    again = client.call("search_docs", {"query": "get started install the cli", "limit": 10})
    measured = next(hit for hit in again.structured_content["results"] if hit["url"] == target["url"])
    assert measured["tokens"] == data["totalTokens"] and measured["tokensBasis"] == "measured"


def test_a_resource_read_keeps_the_whole_long_page_and_the_page_for_an_unknown_anchor(
    client: McpConnection,
) -> None:
    whole = LONG_FILE.read_text("utf-8")
    contents = client.run(lambda session: session.read_resource(LONG_PAGE)).contents
    assert [item.text for item in contents] == [whole]
    missed = client.run(lambda session: session.read_resource(GET_STARTED + "#no-such-anchor")).contents
    assert [item.text for item in missed] == [GET_STARTED_FILE.read_text("utf-8")]

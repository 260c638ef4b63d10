"""Parity with the server we replace, issue 14 §8: the hosted endpoint's HTTP edges.

Asked of `imqueue-mcp --http` (the `hosted` fixture, over the loopback site mirror) with plain
httpx, since these are answers no MCP client would provoke: a POST whose Accept names only
text/event-stream is refused with 406, and the 405 answers to the other methods on /mcp are
JSON-RPC error objects, both with a message saying what to send instead.
"""

from __future__ import annotations

import httpx
import pytest

from conftest import INITIALIZE, HttpServer


@pytest.mark.parametrize("version", [None, "2026-07-28"])
def test_a_post_accepting_only_event_streams_is_406_with_a_jsonrpc_error(
    hosted: HttpServer, version: str | None
) -> None:
    headers = {"Accept": "text/event-stream", "Content-Type": "application/json"}
    if version:
        headers["Mcp-Protocol-Version"] = version
    response = httpx.post(hosted.url + "/mcp", json=INITIALIZE, headers=headers, timeout=5)
    assert response.status_code == 406
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    assert body["error"]["code"] == -32600
    assert "application/json" in body["error"]["message"] and "text/event-stream" in body["error"]["message"]


@pytest.mark.parametrize(
    "accept",
    ["application/json, text/event-stream", "text/event-stream, */*", "text/event-stream;q=1, application/*"],
)
def test_an_event_stream_accept_that_also_covers_json_is_served(hosted: HttpServer, accept: str) -> None:
    response = httpx.post(hosted.url + "/mcp", json=INITIALIZE, headers={"Accept": accept}, timeout=5)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("method", ["GET", "PUT", "PATCH", "DELETE"])
def test_a_405_is_a_jsonrpc_error_saying_the_method_is_not_supported(hosted: HttpServer, method: str) -> None:
    response = httpx.request(method, hosted.url + "/mcp", timeout=5)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST, OPTIONS"
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None and body["error"]["code"] == -32600
    assert f"{method} is not supported" in body["error"]["message"] and "POST" in body["error"]["message"]


def test_a_head_405_keeps_its_allow_header_and_sends_no_body(hosted: HttpServer) -> None:
    response = httpx.head(hosted.url + "/mcp", timeout=5)
    assert response.status_code == 405 and response.headers["allow"] == "POST, OPTIONS"
    assert response.content == b""

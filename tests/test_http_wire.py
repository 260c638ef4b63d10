"""The hosted endpoint's wire edges, raw HTTP on the real server (issue 19 §6, §7, §10).

JSON-RPC over Streamable HTTP: a body that is no single JSON-RPC message is answered 400 with
the error JSON-RPC 2.0 names (-32700 for what is not JSON, -32600 for a batch, a non-message or
a request id that is not a string or an integer), never 202 with no body and never a -32602
that carries a library's validation dump. Host and Origin are read strictly: a port is digits.
A Host, an Origin or a Content-Type the endpoint refuses, and an MCP-Protocol-Version it does not
speak, are JSON-RPC errors saying what to send instead, never plain text or another revision's
complaint.
A client that gives up in the middle of its body is no server error: nothing at ERROR, no
traceback, and the server serves on.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

import httpx
import pytest

from conftest import INITIALIZE, HttpServer

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PARSE_ERROR, INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION = -32700, -32600, -32022
DUMP_WORDS = ("validation error", "input_value", "pydantic", "type=", "Traceback")


def post(server: HttpServer, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(server.url + "/mcp", content=body, headers={**HEADERS, **headers}, timeout=10)


def assert_jsonrpc_error(response: httpx.Response, code: int, request_id: Any = None) -> dict[str, Any]:
    assert response.status_code == 400, (response.status_code, response.text[:300])
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id, answer
    assert answer["error"]["code"] == code, answer
    message = answer["error"]["message"]
    assert message and not any(word in message for word in DUMP_WORDS), message
    return dict(answer)


@pytest.mark.parametrize("request_id", [None, True, False, 1.5, {}, {"id": 1}, []])
def test_a_request_whose_id_is_not_a_string_or_integer_is_invalid_request(
    hosted: HttpServer, request_id: Any
) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()
    answer = assert_jsonrpc_error(post(hosted, body), INVALID_REQUEST)
    assert "id" in answer["error"]["message"]


@pytest.mark.parametrize(
    "message",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        [],
        5,
        "ping",
        None,
        {},
        {"jsonrpc": "2.0"},
        {"jsonrpc": "2.0", "method": 7},
    ],
)
def test_a_batch_or_a_non_message_is_invalid_request_without_a_validation_dump(
    hosted: HttpServer, message: Any
) -> None:
    answer = assert_jsonrpc_error(post(hosted, json.dumps(message).encode()), INVALID_REQUEST)
    if isinstance(message, list):
        assert "batch" in answer["error"]["message"]


def test_a_malformed_request_with_a_readable_id_is_answered_with_that_id(hosted: HttpServer) -> None:
    for shape in ({"jsonrpc": "1.0", "id": 7, "method": "ping"}, {"jsonrpc": "2.0", "id": 7, "method": 42}):
        assert_jsonrpc_error(post(hosted, json.dumps(shape).encode()), INVALID_REQUEST, 7)


def test_a_body_of_more_arrays_and_objects_than_any_tool_takes_is_refused_before_it_is_parsed(
    hosted: HttpServer,
) -> None:
    # audit 11: 330,000 empty arrays (under 1 MB) cost about a second of CPU, parsed layer by layer
    junk = {"query": "expose a method", "junk": [[]] * 330_000}
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "search_docs", "arguments": junk},
        },
        separators=(",", ":"),
    ).encode()
    assert len(body) < 1_000_000  # under the body limit: the SDK would answer 413 first

    answer = assert_jsonrpc_error(post(hosted, body), INVALID_REQUEST, 7)

    assert "more than 20,000 JSON arrays and objects" in answer["error"]["message"]
    # the same values as a batch, or after a byte order mark, are refused as cheaply (audit 14)
    batch = b"[" + b",".join([b"[]"] * 330_000) + b"]"
    assert "batch" in assert_jsonrpc_error(post(hosted, batch), INVALID_REQUEST)["error"]["message"]
    assert_jsonrpc_error(post(hosted, b"\xef\xbb\xbf" + body), INVALID_REQUEST, 7)
    # the largest call a tool takes, a scaffold of 50 methods of 20 parameters each, is served
    params = [{"name": f"p{i}", "type": "string", "description": "[a] {b}"} for i in range(20)]
    methods = [{"name": f"m{m}", "params": params, "returns": "string[]"} for m in range(50)]
    from imqueue_mcp.server.hosting.wire import MAX_CONTAINERS, judge

    largest = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "tools/call",
            "params": {"name": "scaffold_service", "arguments": {"name": "big", "methods": methods}},
        }
    )
    assert largest.count("[") + largest.count("{") < MAX_CONTAINERS / 4
    assert judge(largest, ["scaffold_service"]).message.id == 8  # type: ignore[union-attr]


@pytest.mark.parametrize("body", [b"{not json", b"\xff\xfe", b"", b"   ", b"[" * 5000, b'{"id": 1,'])
def test_a_body_that_is_not_json_is_a_parse_error(hosted: HttpServer, body: bytes) -> None:
    assert_jsonrpc_error(post(hosted, body), PARSE_ERROR)


def test_valid_messages_are_served_as_before(hosted: HttpServer) -> None:
    assert post(hosted, json.dumps(INITIALIZE).encode()).status_code == 200
    ping = post(hosted, b'{"jsonrpc": "2.0", "id": "p", "method": "ping"}')
    assert ping.status_code == 200 and ping.json() == {"jsonrpc": "2.0", "id": "p", "result": {}}
    notification = post(hosted, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    assert notification.status_code == 202 and notification.content == b""


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:80@evil.test",
        "localhost:evil",
        "localhost:",
        "localhost:80:80",
        "localhost:99999",
        "localhost:80/x",
        "evil.test#localhost:80",
        "[::1]:80@evil.test",
        "localhost :80",
    ],
)
def test_a_host_header_that_is_not_host_and_numeric_port_is_421(hosted: HttpServer, host: str) -> None:
    response = post(hosted, json.dumps(INITIALIZE).encode(), Host=host)
    assert response.status_code == 421, (host, response.status_code)
    assert "HOST[:PORT]" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    "origin",
    [
        "http://localhost:evil",
        "http://localhost:80@evil.test",
        "http://127.0.0.1:80@evil.test",
        "http://localhost:8080/path",
        "http://localhost:",
        "javascript://localhost:80",
        "http://[::1]:x",
    ],
)
def test_an_origin_that_is_not_scheme_host_and_numeric_port_is_403(hosted: HttpServer, origin: str) -> None:
    response = post(hosted, json.dumps(INITIALIZE).encode(), Origin=origin)
    assert response.status_code == 403, (origin, response.status_code)


@pytest.mark.parametrize(
    ("headers", "status", "words"),
    [
        ({"Host": "evil.example"}, 421, ("Host header", "--allow-host")),
        ({"Host": "10.0.0.7:8000"}, 421, ("Host header", "--allow-host")),
        ({"Origin": "https://evil.example"}, 403, ("Origin header", "--allow-origin")),
        ({"Content-Type": "text/plain"}, 400, ("Content-Type", "application/json")),
    ],
)
def test_a_refused_host_origin_or_content_type_is_a_jsonrpc_error_saying_what_to_send(
    hosted: HttpServer, headers: dict[str, str], status: int, words: tuple[str, ...]
) -> None:
    """Well formed, but not allowed: these were plain text with no Content-Type ("Invalid Host
    header"), which an MCP client can only report as an opaque transport failure."""
    response = post(hosted, json.dumps(INITIALIZE).encode(), **headers)
    assert response.status_code == status, (headers, response.status_code)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] is None and answer["error"]["code"] == INVALID_REQUEST
    assert all(word in answer["error"]["message"] for word in words), answer


@pytest.mark.parametrize("version", ["1999-01-01", "garbage", "2026-07-29", ""])
def test_an_unknown_protocol_version_is_400_naming_the_supported_ones(
    hosted: HttpServer, version: str
) -> None:
    """It was read as 2026-07-28 and refused for lacking that revision's `_meta` envelope. Now the
    spec's -32022 with the supported revisions, so a client can pick one of them."""
    body = b'{"jsonrpc": "2.0", "id": 41, "method": "tools/list"}'
    response = post(hosted, body, **{"Mcp-Protocol-Version": version})
    assert response.status_code == 400 and response.headers["content-type"].startswith("application/json")
    assert response.json()["id"] == 41  # the request's own id, as every error answer carries it
    error = response.json()["error"]
    assert error["code"] == UNSUPPORTED_PROTOCOL_VERSION, error
    assert error["data"]["requested"] == version and {"2025-11-25", "2026-07-28"} <= set(
        error["data"]["supported"]
    )
    message = error["message"]
    assert "Unsupported protocol version" in message and "2025-11-25" in message and "_meta" not in message


@pytest.mark.parametrize("version", ["1999-01-01", ""])
def test_json_nested_past_the_parsers_depth_with_an_unknown_version_is_a_json_rpc_refusal(
    hosted: HttpServer, version: str
) -> None:
    """json.loads raises RecursionError, not ValueError, on 50,000 nested arrays: it was a plain-text
    500 with a traceback logged at ERROR for every such request."""
    deep = b"[" * 50_000 + b"]" * 50_000
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": ' + deep + b"}}"
    response = post(hosted, body, **{"Mcp-Protocol-Version": version})
    assert response.status_code == 400 and response.headers["content-type"].startswith("application/json")
    assert response.json()["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION


def test_the_endpoint_with_a_trailing_slash_answers_there_and_never_redirects(hosted: HttpServer) -> None:
    """Starlette answered /mcp/ with a 307 to an absolute http:// URL: behind a TLS terminator the
    client would re-send its POST in cleartext."""
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "ping"}'
    response = httpx.post(
        f"{hosted.url}/mcp/",
        content=body,
        headers={**HEADERS, "Mcp-Protocol-Version": "2025-11-25"},
        follow_redirects=False,
    )
    assert response.status_code == 200 and "location" not in response.headers
    assert response.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_an_unknown_version_with_the_2026_envelope_is_the_sdks_to_answer(hosted: HttpServer) -> None:
    """The envelope names the revision too: the SDK answers -32022 with the revisions of that era,
    as `server/discover` lists them (the conformance suite's stateless checks hold them equal)."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": "v999.0.0",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 301, "method": "server/discover", "params": {"_meta": meta}})
    response = post(
        hosted, body.encode(), **{"Mcp-Protocol-Version": "v999.0.0", "Mcp-Method": "server/discover"}
    )
    answer = response.json()
    assert response.status_code == 400 and answer["id"] == 301, answer
    assert answer["error"]["code"] == UNSUPPORTED_PROTOCOL_VERSION
    assert answer["error"]["data"]["requested"] == "v999.0.0"
    assert "2025-11-25" not in answer["error"]["data"]["supported"]  # the handshake era is not served here


def test_refused_params_are_answered_naming_the_param_over_http(hosted: HttpServer) -> None:
    params = {"name": "search_docs", "arguments": [1]}
    body = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).encode()
    answer = post(hosted, body, **{"Mcp-Protocol-Version": "2025-11-25"}).json()
    assert answer["error"]["code"] == -32602
    assert "arguments must be an object" in answer["error"]["message"], answer


def test_well_formed_hosts_and_origins_are_still_served(hosted: HttpServer) -> None:
    port = hosted.url.rsplit(":", 1)[1]
    for host in (f"127.0.0.1:{port}", "localhost", f"localhost:{port}", "[::1]:8000"):
        assert post(hosted, json.dumps(INITIALIZE).encode(), Host=host).status_code == 200, host
    for origin in ("http://localhost:8080", "http://127.0.0.1", "https://imqueue.org"):
        assert post(hosted, json.dumps(INITIALIZE).encode(), Origin=origin).status_code == 200, origin


ABORTS = 20


def test_a_client_that_aborts_mid_body_is_not_logged_as_a_server_error(hosted: HttpServer) -> None:
    port = int(hosted.url.rsplit(":", 1)[1])
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
    ).encode()
    for _ in range(ABORTS):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            client.sendall(head + b'{"jsonrpc": "2.0", "id": 1, "meth')
            time.sleep(0.05)  # the server is reading the body when the client leaves
    assert post(hosted, b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}').status_code == 200
    time.sleep(0.5)  # the last abort's log line, if any, is written
    log = hosted.stderr()
    assert "Traceback" not in log and "ClientDisconnect" not in log and " ERROR " not in log, log[-2000:]

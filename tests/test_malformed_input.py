"""Malformed get_doc input: every URL and cursor an agent can send gets a guided error, never
an internal one (issue 19 §5).

The inputs the attack found (bracketed hosts that are no IPv6 address, a 100 kB URL, a
cursor of 1,400 nested `[`) go to the real servers, stdio and hosted HTTP, through the
SDK's client. The two parsers behind them, parse_doc_url and Cursor.decode, are then
property-tested: whatever text comes in, the answer is a value or the parser's own error.
The property tests have a fixed budget and a fixed seed (derandomize), so CI runs the same
cases every time; IMQUEUE_MCP_FUZZ=long raises the budget for a longer hunt.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from imqueue_mcp.docsource.sites import HOSTS
from imqueue_mcp.server.docs.budget import Cursor, CursorError
from imqueue_mcp.server.docs.fetch import DocUrlError, parse_doc_url
from imqueue_mcp.server.docs.site_paths import is_safe_to_send

from conftest import HttpServer, McpConnection, offline_args, server_environment, stdio_connection

PROFILE = os.environ.get("IMQUEUE_MCP_FUZZ", "short")
EXAMPLES = {"short": 500, "long": 50_000}[PROFILE]
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    derandomize=PROFILE == "short",  # CI sees the same cases every run
    suppress_health_check=list(HealthCheck),
)

NESTED_CURSOR = base64.urlsafe_b64encode(b"[" * 1400).decode().rstrip("=")
MALFORMED_URLS = [
    "https://[imqueue.org]/",
    "http://[/",
    "https://imqueue.org]/intro/",
    "https://[::1/intro/",
    "https://imqueue.org/" + "a" * 100_000,
]


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def assert_invalid_arguments(result: Any, what: str) -> None:
    assert result.is_error, what
    error = result.structured_content["error"]
    assert error["code"] == "invalid_arguments", (what, error)
    assert error["message"] and error["suggestedAction"], error
    assert len(error["message"]) < 1000 and "Traceback" not in text_of(result), what


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("malformed")
    connection = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    yield connection
    connection.close()


def test_a_malformed_url_gets_invalid_arguments_from_the_stdio_server(local: McpConnection) -> None:
    for url in MALFORMED_URLS:
        assert_invalid_arguments(local.call("get_doc", {"url": url}), url[:60])
    assert not local.call("get_doc", {"url": "https://imqueue.org/intro/"}).is_error  # still serving


def test_a_deeply_nested_cursor_gets_invalid_arguments(local: McpConnection) -> None:
    result = local.call("get_doc", {"url": "https://imqueue.org/intro/", "cursor": NESTED_CURSOR})
    assert_invalid_arguments(result, "nested cursor")
    assert "nextCursor" in result.structured_content["error"]["message"]


def test_a_100_kb_url_gets_invalid_arguments_from_the_hosted_server(tmp_path: Path) -> None:
    server = HttpServer(offline_args(tmp_path), server_environment(tmp_path), tmp_path)
    try:
        connection = McpConnection(server.url + "/mcp", "legacy")
        try:
            for url in MALFORMED_URLS:
                assert_invalid_arguments(connection.call("get_doc", {"url": url}), url[:60])
        finally:
            connection.close()
        assert "Traceback" not in server.stderr()
    finally:
        server.close()


# --- the parsers, property-tested ------------------------------------------------------------

URL_PIECES = st.sampled_from(
    [
        "https://",
        "http://",
        "//",
        "imqueue.org",
        "imqueue.com",
        "[",
        "]",
        "[::1]",
        "[imqueue.org]",
        "@",
        ":",
        ":443",
        ":80x",
        "/",
        "..",
        "%2e",
        "%2f",
        "%25",
        "%",
        "#",
        "?",
        "\\",
        "\x00",
        " ",
        "ü",
        "\ufeff",
        "xn--",
        "intro/",
    ]
)
URLS = st.one_of(
    st.text(max_size=300),
    st.lists(URL_PIECES, max_size=14).map("".join),
    st.tuples(st.lists(URL_PIECES, max_size=6).map("".join), st.text(max_size=40)).map("".join),
)


@PROPERTY
@given(URLS)
def test_parse_doc_url_returns_a_canonical_url_or_its_own_error(text: str) -> None:
    try:
        url = parse_doc_url(text)
    except DocUrlError as error:
        assert str(error) and len(str(error)) < 2500
        return
    assert url.host in HOSTS
    assert url.canonical.startswith(f"https://{url.host}/")
    assert is_safe_to_send(url.path)


def encoded(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)
CURSORS = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200).map(encoded),
    JSON_VALUES.map(lambda value: encoded(json.dumps(value).encode())),
    st.fixed_dictionaries({"v": JSON_VALUES, "u": JSON_VALUES, "o": JSON_VALUES, "d": JSON_VALUES}).map(
        lambda fields: encoded(json.dumps(fields).encode())
    ),
    st.integers(1, 3000).map(lambda depth: encoded(b"[" * depth)),
    st.integers(1, 3000).map(lambda depth: encoded(b'{"a":' * depth)),
)


@PROPERTY
@given(CURSORS)
def test_cursor_decode_returns_a_cursor_or_its_own_error(token: str) -> None:
    try:
        cursor = Cursor.decode(token)
    except CursorError as error:
        assert str(error) and len(str(error)) < 500
        return
    assert isinstance(cursor.url, str) and type(cursor.offset) is int and cursor.offset > 0

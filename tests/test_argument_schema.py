"""What a tool's input schema says is what it accepts, on the real server (issue 26 §11, §12).

Every string argument of every tool has a maxLength in its schema, and every list a maxItems;
a longer one is `invalid_arguments` naming the argument, before the tool runs. Types are held
exactly (pydantic strict mode, no JSON pre-parse of strings): `limit: true`, `"6"` or `6.0`
where the schema says integer, `passages: "true"` or `1` where it says boolean, a list sent as
JSON text, are each refused with `invalid_arguments` naming the argument. A lone surrogate
escape in an argument ("\\ud800", well-formed JSON, no Unicode) is `invalid_arguments` too,
over stdio and HTTP, not a parse error of the whole message; sent to a tool the server lacks, it
is `unknown_tool`, the answer the name alone gets, and counted in /metrics as that is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_server_transport import RawStdio, initialize

from conftest import (
    HOSTED_TOOLS,
    LOCAL_TOOLS,
    HttpServer,
    McpConnection,
    offline_args,
    server_environment,
    stdio_connection,
)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("home")
    connection = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    yield connection
    connection.close()


def refusal(result: Any) -> str:
    """The message of an invalid_arguments result (asserts it is one)."""
    assert result.is_error, result
    error = result.structured_content["error"]
    assert error["code"] == "invalid_arguments", error
    return str(error["message"])


def string_fields(schema: dict[str, Any], defs: dict[str, Any], path: str = "") -> Iterator[tuple[str, Any]]:
    """(argument path, its schema) of every string and array inside an input schema."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    for option in schema.get("anyOf", []):
        yield from string_fields(option, defs, path)
    kind = schema.get("type")
    if kind in ("string", "array"):
        yield path, schema
    if kind == "array":
        yield from string_fields(schema.get("items", {}), defs, path + "[]")
    for name, field in schema.get("properties", {}).items():
        yield from string_fields(field, defs, f"{path}.{name}" if path else name)


def test_every_string_argument_has_a_max_length_and_every_list_max_items(local: McpConnection) -> None:
    tools = local.tools()
    assert {tool.name for tool in tools} == LOCAL_TOOLS
    unbounded = []
    for tool in tools:
        schema = tool.input_schema
        for path, field in string_fields(schema, schema.get("$defs", {})):
            bound = "maxItems" if field["type"] == "array" else "maxLength"
            if bound not in field and "enum" not in field:
                unbounded.append(f"{tool.name}.{path}")
    assert unbounded == []


def test_scaffold_service_refuses_a_200000_character_name_in_a_short_answer(local: McpConnection) -> None:
    result = local.call("scaffold_service", {"name": "A" * 200_000})

    message = refusal(result)
    assert "name" in message and "214" in message
    assert len(json.dumps(result.model_dump(mode="json"))) < 2_000


def test_a_name_of_214_characters_is_scaffolded(local: McpConnection) -> None:
    result = local.call("scaffold_service", {"name": "a" * 214})

    assert not result.is_error, result.content[0].text


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("search_docs", {"query": "expose", "limit": True}, "limit"),
        ("search_docs", {"query": "expose", "limit": "6"}, "limit"),
        ("search_docs", {"query": "expose", "limit": 6.0}, "limit"),
        ("search_docs", {"query": "expose", "passages": "true"}, "passages"),
        ("search_docs", {"query": "expose", "passages": 1}, "passages"),
        ("get_doc", {"url": "/get-started/", "outline": "false"}, "outline"),
        ("get_doc", {"url": "/get-started/", "maxTokens": "4000"}, "maxTokens"),
        ("find_examples", {"query": "expose", "limit": 2.0}, "limit"),
        ("logs", {"action": "dump", "services": '["a"]'}, "services"),
        (
            "scaffold_service",
            {"name": "user", "methods": [{"name": "get", "params": [{"name": "id", "optional": "yes"}]}]},
            "methods.0.params.0.optional",
        ),
        ("create_service", {"name": "x", "apply": "false"}, "apply"),
    ],
)
def test_a_value_of_another_type_than_the_schema_says_is_refused_naming_the_argument(
    local: McpConnection, tool: str, arguments: dict[str, Any], named: str
) -> None:
    message = refusal(local.call(tool, arguments))

    assert f"{named}:" in message, message


def test_the_values_the_schema_names_are_still_accepted(local: McpConnection) -> None:
    result = local.call("search_docs", {"query": "expose", "limit": 2, "passages": False})

    assert not result.is_error and result.structured_content["count"] <= 2


def surrogate_call(request_id: int, tool: str, arguments: str) -> str:
    """A tools/call line whose arguments are JSON text (so a lone escape stays as written)."""
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}'
    )


def stdio_answers(tmp_path: Path, *lines: str) -> list[dict[str, Any]]:
    """The stdio server's answers to tools/call lines sent one after another (ids 7, 8, ...)."""
    raw = RawStdio(offline_args(tmp_path / "snapshot"), server_environment(tmp_path), tmp_path)
    answers = []
    try:
        initialize(raw)
        for request_id, line in enumerate(lines, start=7):
            raw.send(line)
            answers.append(raw.answer(request_id))
    finally:
        raw.close()
    return answers


def test_a_lone_surrogate_in_an_argument_is_invalid_arguments_over_stdio(tmp_path: Path) -> None:
    answer, after = stdio_answers(
        tmp_path,
        surrogate_call(7, "search_docs", '{"query": "queue \\ud800 name"}'),
        surrogate_call(8, "search_docs", '{"query": "expose", "limit": 1}'),
    )

    result = answer["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "invalid_arguments"
    assert "'query'" in result["structuredContent"]["error"]["message"]
    assert after["result"].get("isError") is not True  # and it serves on


def test_a_lone_surrogate_in_an_argument_is_invalid_arguments_over_http(tmp_path: Path) -> None:
    server = HttpServer(offline_args(tmp_path / "snapshot"), server_environment(tmp_path), tmp_path)
    try:
        body = surrogate_call(3, "find_examples", '{"query": "\\udc00"}').encode()
        response = httpx.post(
            server.url + "/mcp",
            content=body,
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Mcp-Protocol-Version": "2025-11-25",
            },
            timeout=10,
        )
        connection = McpConnection(server.url + "/mcp", "auto")
        try:
            assert {tool.name for tool in connection.tools()} == HOSTED_TOOLS  # serves on
        finally:
            connection.close()
    finally:
        server.close()

    assert response.status_code == 200, response.text[:300]
    answer = response.json()
    assert answer["id"] == 3
    assert answer["result"]["structuredContent"]["error"]["code"] == "invalid_arguments"
    assert "'query'" in answer["result"]["structuredContent"]["error"]["message"]


def test_a_lone_surrogate_call_to_a_tool_the_server_lacks_is_unknown_tool_over_stdio(tmp_path: Path) -> None:
    """The name is what is wrong first: the same answer as the name alone, not invalid_arguments."""
    answer, name_alone = stdio_answers(
        tmp_path,
        surrogate_call(7, "no_such_tool", '{"q": "\\ud800"}'),
        surrogate_call(8, "no_such_tool", "{}"),
    )

    assert answer["result"]["structuredContent"]["error"]["code"] == "unknown_tool", answer
    assert answer["result"] == name_alone["result"]


def test_a_lone_surrogate_call_to_a_local_only_tool_is_unknown_tool_over_http_and_counted(
    tmp_path: Path,
) -> None:
    from test_hosted_operations import metric

    server = HttpServer(offline_args(tmp_path / "snapshot"), server_environment(tmp_path), tmp_path)
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": "2025-11-25",
    }
    try:
        answers = [
            httpx.post(
                server.url + "/mcp", content=surrogate_call(n, "inspect_project", arguments), headers=headers
            )
            for n, arguments in ((3, '{"path": "/tmp/\\udc00"}'), (4, "{}"))
        ]
        page = httpx.get(server.url + "/metrics", timeout=10).text
    finally:
        server.close()

    surrogate, name_alone = (response.json() for response in answers)
    assert answers[0].status_code == 200 and surrogate["id"] == 3, answers[0].text[:300]
    assert surrogate["result"]["structuredContent"]["error"]["code"] == "unknown_tool", surrogate
    assert surrogate["result"] == name_alone["result"]
    assert metric(page, "imqueue_mcp_tool_calls_total", tool="other", outcome="unknown_tool") == 2


ELSEWHERE = [
    # a lone surrogate outside a tool's arguments, as JSON.stringify writes a string cut inside an
    # emoji: the answer carries the request's id, so the client's call ends instead of waiting
    '{"jsonrpc": "2.0", "id": %d, "method": "prompts/get", '
    '"params": {"name": "build_imqueue_service", "arguments": {"name": "user\\ud800"}}}',
    '{"jsonrpc": "2.0", "id": %d, "method": "resources/read", "params": {"uri": "https://imqueue.org/\\ud800"}}',
    '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", '
    '"params": {"name": "search_docs\\ud800", "arguments": {}}}',
]


def test_a_lone_surrogate_elsewhere_and_deep_nesting_are_answered_with_the_request_id(tmp_path: Path) -> None:
    deep = '{"jsonrpc": "2.0", "id": %d, "method": "ping", "params": {"x": ' + "[" * 300 + "]" * 300 + "}}"
    lines = [line % number for number, line in enumerate([*ELSEWHERE, deep], start=7)]
    answers = stdio_answers(tmp_path, *lines, surrogate_call(11, "search_docs", '{"query": "expose"}'))
    for answer in answers[:3]:
        assert answer["error"]["code"] == -32602 and "lone UTF-16 surrogate" in answer["error"]["message"]
        assert "Send the text as UTF-8" in answer["error"]["message"]
    assert answers[3]["error"]["code"] == -32600 and "nests deeper" in answers[3]["error"]["message"]
    assert answers[4]["result"].get("isError") is not True  # and it serves on
    server = HttpServer(offline_args(tmp_path / "http"), server_environment(tmp_path), tmp_path)
    try:
        response = httpx.post(
            server.url + "/mcp",
            content=(ELSEWHERE[1] % 5).encode(),
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "Mcp-Protocol-Version": "2025-11-25",
            },
            timeout=10,
        )
    finally:
        server.close()
    assert response.status_code == 400 and response.json()["id"] == 5
    assert response.json()["error"]["code"] == -32602


def test_nesting_past_pythons_own_parser_or_an_over_long_integer_keeps_the_request_id(tmp_path: Path) -> None:
    # Both are JSON by its grammar; Python's parser stops at about 1,000 levels and 4,300 digits.
    head = '{"jsonrpc": "2.0", "id": "call-%d", "method": "tools/call", "params": {"name": "search_docs", '
    deep = head + '"arguments": {"query": "x", "deep": ' + "[" * 3000 + "]" * 3000 + "}}}"
    long_number = head + '"arguments": {"query": "x", "n": ' + "9" * 5000 + "}}}"
    broken = head + '"arguments": {"deep": ' + "[" * 3000 + "]" * 2999 + "}}}"  # not JSON: a parse error
    raw = RawStdio(offline_args(tmp_path / "snapshot"), server_environment(tmp_path), tmp_path)
    try:
        initialize(raw)
        raw.send(deep % 1)
        too_deep = raw.answer("call-1")
        raw.send(long_number % 2)
        too_long = raw.answer("call-2")
        raw.send(broken % 3)
        unreadable = raw.answer(None)
        served = raw.request(4, "ping")
    finally:
        raw.close()
    assert too_deep["error"]["code"] == -32600 and "nests deeper" in too_deep["error"]["message"]
    assert too_long["error"]["code"] == -32600 and "more than 4,300 digits" in too_long["error"]["message"]
    assert unreadable["error"]["code"] == -32700
    assert served["result"] == {}  # and it serves on

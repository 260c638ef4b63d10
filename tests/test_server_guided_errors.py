"""Guided errors through the SDK client: every tool's main failure says what happened and what
to do next, in the text and as structuredContent.error {code, message, suggestedAction}, over
stdio (the local tools, with the real imq 5.2.2 and no npm on PATH) and hosted HTTP (both protocol revisions).
Where a tool publishes an outputSchema, the error result conforms to it as well."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import test_server_http
from imq_real import IMQ, NODE_BIN, require_real_imq
from test_server_cli import isolated_environment

from conftest import (
    HttpServer,
    McpConnection,
    free_port,
    live_hosted,
    origin_args,
    server_environment,
    stdio_connection,
)

# The hosted server and a client of each protocol revision, as test_server_http sets them up.
hosted_client = test_server_http.hosted_client


@pytest.fixture(scope="module")
def hosted(site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """Live, not the offline snapshot: get_doc's page_not_found needs the sites to say 404."""
    yield from live_hosted(site_origins, tmp_path_factory)


# (tool, arguments, code, a word the suggested action must contain); every hosted tool appears.
Case = tuple[str, dict[str, Any], str, str]
SHARED_CASES: list[Case] = [
    ("search_docs", {"query": "rpc", "limt": 3}, "invalid_arguments", "inputSchema"),
    ("get_doc", {"url": "https://example.com/intro/"}, "url_refused", "search_docs"),
    ("get_doc", {"url": "https://imqueue.org/no-such-page/"}, "page_not_found", "search_docs"),
    ("list_packages", {"verbose": True}, "invalid_arguments", "inputSchema"),
    ("package_status", {"package": "no-such-package"}, "unknown_package", "list_packages"),
    ("scaffold_service", {"name": "123"}, "invalid_scaffold_input", "scaffold"),
    ("scaffold_client", {"service": "IMQService"}, "invalid_scaffold_input", "scaffold"),
    ("no_such_tool", {}, "unknown_tool", "tools/list"),
]
HOSTED_CASES: list[Case] = [("local_install_guide", {"format": "pdf"}, "invalid_arguments", "inputSchema")]
LOCAL_CASES: list[Case] = [
    ("cli_status", {"verbose": True}, "invalid_arguments", "inputSchema"),
    ("cli_help", {"command": "--all"}, "argument_refused", "nothing was run"),
    ("create_service", {"name": "-rf"}, "argument_refused", "nothing was run"),
    # nothing listens on a free port: told apart from a service that does not answer on a live broker
    (
        "generate_client",
        {"service": "NotRunning", "redis": f"127.0.0.1:{free_port()}"},
        "broker_unreachable",
        "Redis",
    ),
    ("cli_install", {"version": "any version"}, "argument_refused", "nothing was run"),
    ("cli_install", {}, "npm_not_installed", "Node.js"),
    ("fleet", {"action": "restart", "services": ["a,b"]}, "argument_refused", "nothing was run"),
    ("config", {"action": "init"}, "interactive_only", "action='set'"),
    ("logs", {"action": "dump", "services": ["-x"]}, "argument_refused", "nothing was run"),
]
IMQ_TOOLS = [
    ("cli_help", {}),
    ("create_service", {"name": "billing"}),
    ("generate_client", {"service": "UserService"}),
    ("fleet", {"action": "start"}),
    ("config", {"action": "check"}),
    ("logs", {"action": "dump"}),
]


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def assert_guided(
    connection: McpConnection, tool: str, arguments: dict[str, Any], code: str, hint: str
) -> None:
    result = connection.call(tool, arguments)
    assert result.is_error, text_of(result)
    error = result.structured_content["error"]
    assert error["code"] == code, error
    assert error["message"] and hint.lower() in error["suggestedAction"].lower(), error
    text = text_of(result)
    assert error["message"] in text and f"Next step: {error['suggestedAction']}" in text
    assert f"error code: {code}" in text
    schemas = {t.name: t.output_schema for t in connection.tools()}
    if schemas.get(tool):
        jsonschema.validate(result.structured_content, schemas[tool])


@pytest.fixture(scope="module")
def local(site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("guided-local")
    env = isolated_environment(home, IMQUEUE_MCP_IMQ=str(IMQ))
    env["PATH"] = os.pathsep.join([str(NODE_BIN), env["PATH"]])  # imq's own node; no npm anywhere
    connection = stdio_connection(origin_args(site_origins), env, home, "legacy")
    yield connection
    connection.close()


@pytest.mark.parametrize(("tool", "arguments", "code", "hint"), SHARED_CASES + LOCAL_CASES)
def test_every_local_tool_error_is_guided_over_stdio(
    local: McpConnection, tool: str, arguments: dict[str, Any], code: str, hint: str
) -> None:
    if code in ("imq_failed", "interactive_only"):  # imq ran, or was found before the refusal
        require_real_imq()
    assert_guided(local, tool, arguments, code, hint)


@pytest.mark.parametrize(("tool", "arguments", "code", "hint"), SHARED_CASES + HOSTED_CASES)
def test_every_hosted_tool_error_is_guided_over_http(
    hosted_client: McpConnection, tool: str, arguments: dict[str, Any], code: str, hint: str
) -> None:
    assert_guided(hosted_client, tool, arguments, code, hint)


def test_an_argument_error_names_the_argument_and_the_accepted_ones(local: McpConnection) -> None:
    error = local.call("search_docs", {"query": "rpc", "limt": 3}).structured_content["error"]
    assert "'limt'" in error["message"] and "limit" in error["message"] and "query" in error["message"]
    wrong_type = local.call("search_docs", {"query": "rpc", "limit": 99}).structured_content["error"]
    assert wrong_type["code"] == "invalid_arguments" and "limit" in wrong_type["message"]


def test_the_docs_list_every_error_code_with_its_default_next_step() -> None:
    from imqueue_mcp.server.errors import ACTIONS, ErrorCode

    table = (Path(__file__).resolve().parents[1] / "docs" / "protocol.md").read_text("utf-8")
    for code in ErrorCode:
        assert f"| `{code.value}` |" in table and ACTIONS[code] in table, code


def test_output_schemas_accept_both_the_result_and_the_error(local: McpConnection) -> None:
    schemas = {tool.name: tool.output_schema for tool in local.tools()}
    scaffold = local.call("scaffold_service", {"name": "billing"})
    assert not scaffold.is_error
    jsonschema.validate(scaffold.structured_content, schemas["scaffold_service"])
    for name, schema in schemas.items():
        if schema is None:
            continue
        assert schema["type"] == "object" and "error" in schema["properties"], name
        unknown_code = {"error": {"code": "not_a_code", "message": "m", "suggestedAction": "a"}}
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(unknown_code, schema)


def test_without_imq_every_imq_tool_suggests_cli_install_or_the_scaffolds(tmp_path: Path) -> None:
    absent = stdio_connection([], isolated_environment(tmp_path), tmp_path, "legacy")
    try:
        for tool, arguments in IMQ_TOOLS:
            assert_guided(absent, tool, arguments, "imq_not_installed", "cli_install")
            error = absent.call(tool, arguments).structured_content["error"]
            assert "scaffold_service" in error["suggestedAction"]
    finally:
        absent.close()


def test_without_a_corpus_search_suggests_building_a_snapshot(tmp_path: Path) -> None:
    args = ["--offline", "--snapshot", str(tmp_path / "missing.msgpack")]
    offline = stdio_connection(args, server_environment(tmp_path), tmp_path, "legacy")
    try:
        assert_guided(offline, "search_docs", {"query": "rpc"}, "corpus_unavailable", "imq-build-index")
        assert_guided(offline, "get_doc", {"url": "https://imqueue.org/intro/"}, "offline", "--offline")
    finally:
        offline.close()

"""The hosted endpoint: `imqueue-mcp --http` in a subprocess on a free loopback port."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from conftest import (
    HOSTED_TOOLS,
    INITIALIZE,
    LOCAL_TOOLS,
    SHARED_TOOLS,
    HttpServer,
    McpConnection,
    origin_args,
    server_environment,
)

OPEN_WORLD = {"search_docs", "get_doc", "find_examples", "list_packages", "package_status"}


@pytest.fixture(
    scope="module",
    params=[("legacy", "2025-11-25"), ("auto", "2026-07-28")],
    ids=["2025-11-25", "2026-07-28"],
)
def hosted_client(request: pytest.FixtureRequest, hosted: HttpServer) -> Iterator[McpConnection]:
    mode, version = request.param
    connection = McpConnection(hosted.url + "/mcp", mode)
    assert connection.client.protocol_version == version
    yield connection
    connection.close()


def test_exactly_the_hosted_read_only_tools(hosted_client: McpConnection) -> None:
    tools = hosted_client.tools()
    assert {tool.name for tool in tools} == HOSTED_TOOLS
    for tool in tools:
        hints = tool.annotations
        assert tool.title
        assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint) == (True, False, True)
        assert hints.open_world_hint is (tool.name in OPEN_WORLD)
        assert tool.input_schema.get("additionalProperties") is False
    assert {tool.name for tool in tools if tool.output_schema} == SHARED_TOOLS


def test_search_then_read_over_http(hosted_client: McpConnection) -> None:
    result = hosted_client.call("search_docs", {"query": "generate a typed client"})
    assert not result.is_error, result.content[0].text
    found = result.structured_content
    page = hosted_client.call("get_doc", {"url": found["results"][0]["url"]}).structured_content
    assert page["markdown"].strip() and page["url"].startswith("https://imqueue.org/")


def test_search_over_http_reports_confidence_and_a_weak_answer(hosted_client: McpConnection) -> None:
    strong = hosted_client.call("search_docs", {"query": "watcherCheckDelay"}).structured_content
    assert strong["weak"] is False and strong["results"][0]["confidence"] == "high"
    weak = hosted_client.call("search_docs", {"query": "weather forecast tomorrow"})
    assert weak.structured_content["weak"] is True
    assert "Weak match" in weak.content[0].text


def test_local_install_guide_gives_an_install_that_works_today_and_three_clients(
    hosted_client: McpConnection,
) -> None:
    text = hosted_client.call("local_install_guide").content[0].text
    # What tests/test_packaging.py runs from a built wheel; uvx/pipx only as the published form.
    assert "python3 -m venv ~/.imqueue-mcp" in text and "bin/pip install ./imqueue-mcp" in text
    assert "not on PyPI yet" in text and "Once the package is published on PyPI, `uvx imqueue-mcp`" in text
    assert "claude mcp add" in text and "Cursor" in text and "VS Code" in text
    # the user's own flags: the command that prints snippets carrying them, and where they go
    assert "imqueue-mcp --client-config" in text and '"args": ["--offline", "--snapshot",' in text


@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE", "PUT", "PATCH"])
def test_only_post_is_served_on_the_endpoint(hosted: HttpServer, method: str) -> None:
    response = httpx.request(method, hosted.url + "/mcp", timeout=5)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST, OPTIONS"


def test_preflight_is_answered_with_cors(hosted: HttpServer) -> None:
    response = httpx.options(
        hosted.url + "/mcp",
        headers={"Origin": "https://imqueue.org", "Access-Control-Request-Method": "POST"},
        timeout=5,
    )
    assert response.status_code == 204
    assert response.headers["access-control-allow-origin"] == "https://imqueue.org"
    assert "POST" in response.headers["access-control-allow-methods"]


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_the_root_is_a_short_plain_text_landing(hosted: HttpServer, method: str) -> None:
    response = httpx.request(method, hosted.url + "/", timeout=5)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    if method == "GET":
        assert "POST /mcp" in response.text and len(response.text) < 2000
        # The install it names works today; uvx only as the published form, named as such.
        assert "bin/pip install ./imqueue-mcp" in response.text
        assert "once published on PyPI, uvx imqueue-mcp" in response.text.replace("\n", " ")


def test_anything_else_is_404(hosted: HttpServer) -> None:
    assert httpx.get(hosted.url + "/sse", timeout=5).status_code == 404


def test_a_foreign_origin_is_refused_and_no_origin_is_fine(hosted: HttpServer) -> None:
    refused = httpx.post(
        hosted.url + "/mcp", json=INITIALIZE, headers={"Origin": "https://evil.example"}, timeout=5
    )
    assert refused.status_code == 403
    allowed = httpx.post(
        hosted.url + "/mcp", json=INITIALIZE, headers={"Origin": "https://imqueue.org"}, timeout=5
    )
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "https://imqueue.org"
    assert httpx.post(hosted.url + "/mcp", json=INITIALIZE, timeout=5).status_code == 200


def test_an_unknown_host_header_is_421(hosted: HttpServer) -> None:
    response = httpx.post(
        hosted.url + "/mcp", json=INITIALIZE, headers={"Host": "attacker.example"}, timeout=5
    )
    assert response.status_code == 421


def test_a_body_over_the_limit_is_413(hosted: HttpServer) -> None:
    body = b'{"pad": "' + b"x" * 1_100_000 + b'"}'
    response = httpx.post(
        hosted.url + "/mcp", content=body, headers={"Content-Type": "application/json"}, timeout=10
    )
    assert response.status_code == 413


@pytest.mark.parametrize("accept", ["application/json", None])
def test_json_only_clients_are_served(hosted: HttpServer, accept: str | None) -> None:
    headers = {"Accept": accept} if accept else {"Accept": ""}
    response = httpx.post(hosted.url + "/mcp", json=INITIALIZE, headers=headers, timeout=5)
    assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["serverInfo"]["name"] == "imqueue"


@pytest.mark.slow  # over 3.5 s in the README's fast run (docs/testing.md): CI runs it
def test_several_workers_serve_the_same_tools(site_origins: dict[str, str], tmp_path: Path) -> None:
    server = HttpServer(
        ["--workers", "2", *origin_args(site_origins)], server_environment(tmp_path), tmp_path
    )
    try:
        connection = McpConnection(server.url + "/mcp", "legacy")
        try:
            assert {tool.name for tool in connection.tools()} == HOSTED_TOOLS
        finally:
            connection.close()
    finally:
        server.close()


def test_the_hosted_surface_names_local_tools_only_as_the_local_servers(hosted_client: McpConnection) -> None:
    """A hosted agent is never sent to a tool it cannot call: the instructions name no local tool,
    an answer that does (a scaffold's next step, a diagnosis) says whose tool it is and how to get
    it, and calling one says the same (audit 5: 14 places named generate_client and the like)."""
    local_only = {"generate_client", "create_service", "inspect_project"}
    instructions = hosted_client.client.instructions or ""
    assert not {name for name in local_only if name in instructions} and "local_install_guide" in instructions
    assert len(instructions.split()) <= 150
    descriptions = " ".join(tool.description or "" for tool in hosted_client.tools())
    for name in local_only:
        assert f"use {name}" not in descriptions
    scaffold = hosted_client.call("scaffold_service", {"name": "user", "calls": ["AuthService"]})
    note = scaffold.content[-1].text
    assert note.startswith("Note: generate_client") and "local_install_guide" in note
    diagnosed = hosted_client.call("search_docs", {"query": "npm ERR! code ERESOLVE"})
    assert "create_service is a tool of the local imqueue-mcp server" in diagnosed.content[-1].text
    called = hosted_client.call("generate_client", {"service": "UserService"})
    error = called.structured_content["error"]
    assert error["code"] == "unknown_tool" and "local imqueue-mcp server" in error["message"]
    assert "local_install_guide" in error["suggestedAction"]
    unknown = hosted_client.call("no_such_tool", {}).structured_content["error"]
    assert "There is no tool named 'no_such_tool'" in unknown["message"]


def test_the_install_guide_counts_the_tools_the_local_server_lists(hosted_client: McpConnection) -> None:
    """LOCAL_TOOLS is what tests/test_server_stdio.py finds the local server listing."""
    text = hosted_client.call("local_install_guide").content[0].text
    assert f"lists {len(LOCAL_TOOLS)} tools" in text
    for name in ("inspect_project", "get_api", "api_diff", "generate_client"):
        assert name in text


def test_hosted_offline_get_doc_never_hands_the_client_the_operators_advice(
    hosted_client: McpConnection,
) -> None:
    """The hosted fixture serves offline from a snapshot with its pages: llms-full.txt is a page
    the docs link but no saved copy holds, and a mistyped URL is no page at all (audit 5, 03/04)."""
    missing = hosted_client.call("get_doc", {"url": "https://imqueue.org/no-such-page-here/"})
    assert missing.structured_content["error"]["code"] == "page_not_found"
    unsaved = hosted_client.call("get_doc", {"url": "https://imqueue.org/llms-full.txt"})
    error = unsaved.structured_content["error"]
    assert error["code"] == "offline" and "no saved copy" in error["message"], error
    for said in (error["message"], error["suggestedAction"]):
        assert "--offline" not in said and "Restart" not in said and "imq-build-index" not in said

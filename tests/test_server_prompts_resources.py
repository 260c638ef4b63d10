"""The prompt and the docs resources, on a real server through the SDK's client.

The local server runs over stdio at both protocol revisions (docs from the loopback mirror
of ../shared/site, as in test_server_stdio.py). The hosted HTTP server must offer the same
prompt and resources, and an --offline local server over a snapshot of the mirror must list
exactly the resources the live corpus gives.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import SITE, HttpServer, McpConnection, origin_args, server_environment, stdio_connection
from mcp.shared.exceptions import MCPError

MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}
PROMPT = "build_imqueue_service"
TUTORIAL = "https://imqueue.org/tutorial/user-service/"
TUTORIAL_TITLE = "Build your first TypeScript RPC service"  # its link text in the mirror's llms.txt


@pytest.fixture(scope="module", params=sorted(MODES))
def local(
    request: pytest.FixtureRequest, site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("home")
    connection = stdio_connection(origin_args(site_origins), server_environment(home), home, request.param)
    assert connection.client.protocol_version == MODES[request.param]
    yield connection
    connection.close()


def get_prompt(connection: McpConnection, arguments: dict[str, str]) -> Any:
    return connection.run(lambda client: client.get_prompt(PROMPT, arguments))


def prompt_error(connection: McpConnection, arguments: dict[str, str]) -> Any:
    with pytest.raises(MCPError) as raised:
        get_prompt(connection, arguments)
    return raised.value.error


def list_resources(connection: McpConnection) -> list[Any]:
    return connection.run(lambda client: client.list_resources()).resources


def read_resource(connection: McpConnection, uri: str) -> Any:
    return connection.run(lambda client: client.read_resource(uri))


# --- the prompt ------------------------------------------------------------------------


def test_exactly_one_prompt_with_its_two_arguments(local: McpConnection) -> None:
    prompts = local.run(lambda client: client.list_prompts()).prompts
    assert [(prompt.name, prompt.title) for prompt in prompts] == [(PROMPT, "Build an @imqueue service")]
    arguments = {argument.name: argument for argument in prompts[0].arguments}
    assert set(arguments) == {"name", "purpose"}
    assert arguments["name"].required is True and not arguments["purpose"].required
    assert arguments["name"].description and arguments["purpose"].description


def test_the_prompt_renders_the_normalised_name_and_the_workflow(local: McpConnection) -> None:
    result = get_prompt(local, {"name": "user-service", "purpose": "Keeps user accounts."})
    assert [message.role for message in result.messages] == ["user"]
    text = result.messages[0].content.text
    assert "UserService" in text and "user-service" not in text
    assert "Keeps user accounts." in text
    for needle in (
        "search_docs",
        "scaffold_service",
        "create_service",
        "@expose()",
        "removeComments",
        "@classType()",
        "list_packages",
        "imq client generate UserService",
    ):
        assert needle in text, needle
    assert len(text.split()) < 250


def test_the_purpose_is_optional(local: McpConnection) -> None:
    text = get_prompt(local, {"name": "Billing"}).messages[0].content.text
    assert "BillingService" in text and "What it does" not in text


@pytest.mark.parametrize("name", ["9lives", "user/service", "Service", "   "])
def test_a_bad_name_is_invalid_params_saying_what_is_allowed(local: McpConnection, name: str) -> None:
    error = prompt_error(local, {"name": name})
    assert error.code == -32602 and ("letter" in error.message or "Service" in error.message)


def test_a_missing_name_or_an_unknown_argument_is_invalid_params(local: McpConnection) -> None:
    missing = prompt_error(local, {"purpose": "x"})
    assert missing.code == -32602 and "name" in missing.message
    unknown = prompt_error(local, {"name": "user", "language": "go"})
    assert unknown.code == -32602 and "language" in unknown.message


def test_an_unknown_prompt_is_still_invalid_params(local: McpConnection) -> None:
    with pytest.raises(MCPError) as raised:
        local.run(lambda client: client.get_prompt("build_service", {"name": "user"}))
    assert raised.value.error.code == -32602


# --- the resources ---------------------------------------------------------------------


def test_the_curated_pages_are_listed_sorted_with_their_llms_txt_titles(local: McpConnection) -> None:
    resources = list_resources(local)
    uris = [resource.uri for resource in resources]
    assert uris == sorted(uris) and len(uris) == len(set(uris))
    assert 50 < len(resources) <= 500
    tutorial = next(resource for resource in resources if resource.uri == TUTORIAL)
    assert tutorial.name == tutorial.title == TUTORIAL_TITLE
    assert tutorial.description and tutorial.mime_type == "text/markdown"
    assert all(resource.mime_type == "text/markdown" for resource in resources)
    assert all(uri.startswith(("https://imqueue.org/", "https://imqueue.com/")) for uri in uris)
    assert all(uri.endswith("/") for uri in uris)  # pages only: llms-full.txt and feeds stay get_doc's
    assert "https://imqueue.com/pricing/" in uris


def test_reading_a_resource_returns_what_get_doc_returns(local: McpConnection) -> None:
    contents = read_resource(local, TUTORIAL).contents
    assert len(contents) == 1
    assert contents[0].uri == TUTORIAL and contents[0].mime_type == "text/markdown"
    assert contents[0].text.startswith("# ")
    assert contents[0].text == local.call("get_doc", {"url": TUTORIAL}).structured_content["markdown"]


@pytest.mark.parametrize(
    "uri", ["https://evil.com/tutorial/", "file:///etc/passwd", "https://imqueue.org.evil.com/"]
)
def test_a_foreign_uri_is_an_error_naming_the_fix(local: McpConnection, uri: str) -> None:
    with pytest.raises(MCPError) as raised:
        read_resource(local, uri)
    message = raised.value.error.message
    assert "https://imqueue.org/" in message and "resources/list" in message


def test_a_missing_page_is_an_error_pointing_at_search(local: McpConnection) -> None:
    with pytest.raises(MCPError) as raised:
        read_resource(local, "https://imqueue.org/no-such-page/")
    assert "search_docs" in raised.value.error.message


# --- the hosted server, and a local one over a snapshot --------------------------------


@pytest.fixture(scope="module")
def hosted(site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("http")
    server = HttpServer(origin_args(site_origins), server_environment(home), home)
    try:
        connection = McpConnection(server.url + "/mcp", "legacy")
        yield connection
        connection.close()
    finally:
        server.close()


def test_the_hosted_server_offers_the_prompt_and_the_resources(hosted: McpConnection) -> None:
    prompts = hosted.run(lambda client: client.list_prompts()).prompts
    assert [prompt.name for prompt in prompts] == [PROMPT]
    assert {argument.name for argument in prompts[0].arguments} == {"name", "purpose"}
    text = get_prompt(hosted, {"name": "user"}).messages[0].content.text
    assert "imq client generate UserService" in text
    assert "create_service" not in text and "generate_client" not in text  # no CLI tools when hosted
    assert prompt_error(hosted, {"name": "user!"}).code == -32602
    assert TUTORIAL in [resource.uri for resource in list_resources(hosted)]
    assert read_resource(hosted, TUTORIAL).contents[0].text.startswith("# ")


def test_a_local_server_over_a_snapshot_lists_what_the_hosted_one_does(
    hosted: McpConnection, site_origins: dict[str, str], tmp_path: Path
) -> None:
    import build_index

    snapshot = tmp_path / "snapshot.msgpack"
    build_index.save_snapshot(build_index.build(mirror=SITE), snapshot)
    args = ["--offline", "--snapshot", str(snapshot), *origin_args(site_origins)]
    offline = stdio_connection(args, server_environment(tmp_path), tmp_path, "legacy")
    try:
        assert list_resources(offline) == list_resources(hosted)
        assert (
            offline.run(lambda client: client.list_prompts()).prompts
            == hosted.run(lambda client: client.list_prompts()).prompts
        )
    finally:
        offline.close()

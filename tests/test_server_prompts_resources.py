"""Prompts, resources, resource templates, completions and provenance, on real servers.

Every test here runs four ways through the SDK's client: the local server over stdio and the
hosted server over HTTP, each at both protocol revisions (2025-11-25 handshake, 2026-07-28
stateless). Docs come from the loopback mirror of ../shared/site. The list_changed tests run a
local server over a mirror whose imqueue.org/llms.txt the test edits, with a one-second refresh
interval (IMQUEUE_MCP_REFRESH_SECONDS), and wait for the announcement a real refresh sends.
"""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import PromptReference, ResourceTemplateReference

from conftest import (
    SITE,
    WAIT_SECONDS,
    HttpServer,
    McpConnection,
    SiteServer,
    built_snapshot,
    live_hosted,
    origin_args,
    server_environment,
    stdio_connection,
)

VERSIONS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
BUILD = "build_imqueue_service"
CHOOSE = "choose_imqueue_packages"
TUTORIAL = "https://imqueue.org/tutorial/user-service/"
TUTORIAL_TITLE = "Build your first TypeScript RPC service"  # its link text in the mirror's llms.txt
ORG_PAGES = "https://imqueue.org/{+path}"
COM_PAGES = "https://imqueue.com/{+path}"
API_PAGES = "https://imqueue.org/api/{package}/latest/"
ISO_SECOND = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture(scope="module")
def hosted(site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """Live, as the stdio side is: resources read pages the snapshot lacks and say they came live."""
    yield from live_hosted(site_origins, tmp_path_factory)


@pytest.fixture(
    scope="module",
    params=["stdio-legacy", "stdio-auto", "http-legacy", "http-auto"],
)
def server(
    request: pytest.FixtureRequest,
    site_origins: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[McpConnection]:
    transport, mode = request.param.split("-")
    if transport == "stdio":
        home = tmp_path_factory.mktemp("home")
        connection = stdio_connection(origin_args(site_origins), server_environment(home), home, mode)
    else:
        http_server: HttpServer = request.getfixturevalue("hosted")
        connection = McpConnection(http_server.url + "/mcp", mode)
    assert connection.client.protocol_version == VERSIONS[mode]
    connection.hosted = transport == "http"  # type: ignore[attr-defined]
    yield connection
    connection.close()


def is_hosted(connection: McpConnection) -> bool:
    return bool(getattr(connection, "hosted", False))


def get_prompt(connection: McpConnection, name: str, arguments: dict[str, str]) -> Any:
    return connection.run(lambda client: client.get_prompt(name, arguments))


def prompt_text(connection: McpConnection, name: str, arguments: dict[str, str]) -> str:
    result = get_prompt(connection, name, arguments)
    assert [message.role for message in result.messages] == ["user"]
    return str(result.messages[0].content.text)


def refused(connection: McpConnection, work: Any) -> Any:
    with pytest.raises(MCPError) as raised:
        connection.run(work)
    return raised.value.error


def prompt_error(connection: McpConnection, name: str, arguments: dict[str, str]) -> Any:
    return refused(connection, lambda client: client.get_prompt(name, arguments))


def list_resources(connection: McpConnection) -> list[Any]:
    resources: list[Any] = connection.run(lambda client: client.list_resources()).resources
    return resources


def read_resource(connection: McpConnection, uri: str) -> Any:
    return connection.run(lambda client: client.read_resource(uri))


def complete(connection: McpConnection, ref: Any, name: str, value: str) -> Any:
    return connection.run(lambda client: client.complete(ref, {"name": name, "value": value})).completion


# --- prompts ---------------------------------------------------------------------------


def test_two_prompts_with_their_arguments(server: McpConnection) -> None:
    prompts = {prompt.name: prompt for prompt in server.run(lambda client: client.list_prompts()).prompts}
    assert set(prompts) == {BUILD, CHOOSE}
    assert prompts[BUILD].title == "Build an @imqueue service"
    assert prompts[CHOOSE].title == "Choose @imqueue packages"
    expected = {BUILD: {"name": True, "purpose": False}, CHOOSE: {"need": True, "using": False}}
    for name, arguments in expected.items():
        declared = {argument.name: argument for argument in prompts[name].arguments}
        assert {key: bool(argument.required) for key, argument in declared.items()} == arguments
        assert all(argument.description for argument in declared.values())
        assert prompts[name].description


def test_the_service_prompt_walks_through_docs_scaffold_rules_and_clients(server: McpConnection) -> None:
    text = prompt_text(server, BUILD, {"name": "user-service", "purpose": "Keeps user accounts."})
    assert "UserService" in text and "user-service" not in text
    assert "Keeps user accounts." in text
    for needle in (
        "search_docs",
        "scaffold_service",
        "@expose()",
        "JSDoc",
        "removeComments",
        "@classType()",
        "@property()",
        "list_packages",
        "imq client generate UserService",
    ):
        assert needle in text, needle
    assert len(text.split()) < 250
    # The hosted server has no CLI tools, so its prompt names none.
    assert ("create_service" in text) is not is_hosted(server)
    assert ("generate_client" in text) is not is_hosted(server)


def test_the_purpose_is_optional(server: McpConnection) -> None:
    text = prompt_text(server, BUILD, {"name": "Billing"})
    assert "BillingService" in text and "What it does" not in text


@pytest.mark.parametrize("name", ["9lives", "user/service", "Service", "   "])
def test_a_bad_service_name_is_invalid_params_naming_the_argument(server: McpConnection, name: str) -> None:
    error = prompt_error(server, BUILD, {"name": name})
    assert error.code == -32602 and error.message.startswith("name: ")


def test_a_missing_name_or_an_unknown_argument_is_invalid_params(server: McpConnection) -> None:
    missing = prompt_error(server, BUILD, {"purpose": "x"})
    assert missing.code == -32602 and "name" in missing.message
    unknown = prompt_error(server, BUILD, {"name": "user", "language": "go"})
    assert unknown.code == -32602 and "language" in unknown.message
    long = prompt_error(server, BUILD, {"name": "user", "purpose": "word " * 100})
    assert long.code == -32602 and long.message.startswith("purpose is ")


def test_the_choice_prompt_walks_through_the_catalogue_docs_and_pairs(server: McpConnection) -> None:
    arguments = {"need": "  cache   Postgres reads ", "using": "rpc, @imqueue/PG-Prisma"}
    text = prompt_text(server, CHOOSE, arguments)
    assert "cache Postgres reads" in text
    assert "Already in the project: @imqueue/rpc, @imqueue/pg-prisma." in text
    for needle in ("list_packages", "search_docs", "get_doc", "package_status", "exactly one", "sequelize"):
        assert needle in text, needle
    assert len(text.split()) < 250
    assert "Already in the project" not in prompt_text(server, CHOOSE, {"need": "trace calls"})


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({}, "need"),
        ({"need": "   "}, "need"),
        ({"need": "x" * 400}, "need"),
        ({"need": "queues", "using": "rpc, no-such-package"}, "using"),
        ({"need": "queues", "using": "@other/rpc"}, "using"),
        ({"need": "queues", "extra": "1"}, "extra"),
    ],
)
def test_bad_choice_arguments_are_invalid_params_naming_the_argument(
    server: McpConnection, arguments: dict[str, str], named: str
) -> None:
    error = prompt_error(server, CHOOSE, arguments)
    assert error.code == -32602 and named in error.message


def test_an_unknown_prompt_is_invalid_params(server: McpConnection) -> None:
    assert prompt_error(server, "build_service", {"name": "user"}).code == -32602


# --- resources -------------------------------------------------------------------------


def test_the_curated_pages_indexes_and_catalogue_are_listed(server: McpConnection) -> None:
    resources = list_resources(server)
    uris = [str(resource.uri) for resource in resources]
    assert len(uris) == len(set(uris))
    pages = [resource for resource in resources if resource.mime_type == "text/markdown"]
    page_uris = [str(resource.uri) for resource in pages]
    assert page_uris == sorted(page_uris) and 50 < len(pages) <= 500
    assert all(uri.startswith(("https://imqueue.org/", "https://imqueue.com/")) for uri in page_uris)
    assert all(uri.endswith("/") for uri in page_uris)  # pages: llms-full.txt and feeds stay get_doc's
    assert "https://imqueue.com/pricing/" in page_uris
    tutorial = next(resource for resource in pages if resource.uri == TUTORIAL)
    assert tutorial.name == tutorial.title == TUTORIAL_TITLE and tutorial.description
    others = {str(resource.uri): resource for resource in resources if resource not in pages}
    assert set(others) == {
        "https://imqueue.org/llms.txt",
        "https://imqueue.com/llms.txt",
        "imqueue://packages",
    }
    assert others["imqueue://packages"].mime_type == "application/json"
    assert all(resource.title and resource.description for resource in others.values())


def test_reading_a_page_returns_what_get_doc_returns_and_says_where_from(
    server: McpConnection, request: pytest.FixtureRequest
) -> None:
    contents = read_resource(server, TUTORIAL).contents
    assert len(contents) == 1
    assert contents[0].uri == TUTORIAL and contents[0].mime_type == "text/markdown"
    assert contents[0].text.startswith("# ")
    doc = server.call("get_doc", {"url": TUTORIAL}).structured_content
    assert contents[0].text == doc["markdown"]
    source = contents[0].meta["imqueue.org/source"]
    # where get_doc says it read the page (each read is its own fetch: its second may differ)
    assert {**source, "fetchedAt": ""} == {**doc["source"], "fetchedAt": ""}
    # the local user is told the mirror it runs against; a hosted client the site it stands for
    origin = (
        "http://127.0.0.1:"
        if request.node.callspec.params["server"].startswith("stdio")
        else "https://imqueue.org"
    )
    assert source["source"] == "live" and source["from"].startswith(origin), source
    assert ISO_SECOND.match(source["fetchedAt"])


def test_the_llms_txt_indexes_read_as_text(server: McpConnection) -> None:
    for host in ("imqueue.org", "imqueue.com"):
        content = read_resource(server, f"https://{host}/llms.txt").contents[0]
        assert content.mime_type == "text/plain"
        assert content.text == (SITE / host / "llms.txt").read_text("utf-8")


def test_the_catalogue_is_one_json_document_with_facts_and_requirements(server: McpConnection) -> None:
    content = read_resource(server, "imqueue://packages").contents[0]
    assert content.mime_type == "application/json"
    data = json.loads(content.text)
    names = [package["name"] for package in data["packages"]]
    assert names[0] == "@imqueue/rpc" and "@imqueue/pg-prisma" in names
    assert all(package["version"] and package["install"] for package in data["packages"])
    assert data["framework"]["node"] and data["framework"]["redis"] and data["framework"]["license"]
    assert any(package.get("pick") for package in data["packages"])
    assert data["source"]["source"] == "live" and data["source"]["from"].endswith("/status.json")
    assert data == {**server.call("list_packages").structured_content, "source": data["source"]}


def test_the_templates_cover_any_page_and_a_package_api(server: McpConnection) -> None:
    templates = server.run(lambda client: client.list_resource_templates()).resource_templates
    assert {template.uri_template for template in templates} == {ORG_PAGES, COM_PAGES, API_PAGES}
    assert all(template.title and template.description and template.mime_type for template in templates)
    # A page no llms.txt lists (an API symbol) reads through the template like any other.
    symbol = "https://imqueue.org/api/rpc/latest/rpc.expose/"
    listed = {str(resource.uri) for resource in list_resources(server)}
    assert symbol not in listed
    assert (
        read_resource(server, symbol).contents[0].text
        == server.call("get_doc", {"url": symbol}).structured_content["markdown"]
    )
    api = read_resource(server, API_PAGES.replace("{package}", "core")).contents[0]
    assert api.text.startswith("# ") and "core" in api.text.split("\n", 1)[0].lower()


@pytest.mark.parametrize(
    "uri",
    [
        "https://evil.com/tutorial/",
        "file:///etc/passwd",
        "https://imqueue.org.evil.com/",
        "test://nonexistent-resource-for-conformance-testing",
        "imqueue://nothing",
    ],
)
def test_a_foreign_uri_is_not_found_naming_the_fix(server: McpConnection, uri: str) -> None:
    error = refused(server, lambda client: client.read_resource(uri))
    assert error.code == -32602 and error.data == {"uri": uri}
    assert "https://imqueue.org/" in error.message and "resources/list" in error.message


@pytest.mark.parametrize(
    "uri",
    [
        "https://imqueue.org/no-such-page/",
        API_PAGES.replace("{package}", "no-such-package"),  # a template variable naming nothing
        ORG_PAGES.replace("{+path}", "api/rpc/latest/no.such.symbol/"),
    ],
)
def test_a_missing_page_is_not_found_pointing_at_search(server: McpConnection, uri: str) -> None:
    error = refused(server, lambda client: client.read_resource(uri))
    assert error.code == -32602 and error.data == {"uri": uri}
    assert "search_docs" in error.message


def test_list_changed_is_stated_only_where_it_is_announced(server: McpConnection) -> None:
    capabilities = server.client.server_capabilities
    assert capabilities.completions is not None
    assert bool(capabilities.resources.list_changed) is not is_hosted(server)


# --- completions -----------------------------------------------------------------------


def test_page_paths_complete_by_prefix_capped(server: McpConnection) -> None:
    ref = ResourceTemplateReference(uri=ORG_PAGES)
    found = complete(server, ref, "path", "tutorial/")
    assert found.values[0] == "tutorial/"  # the page itself before the pages under it
    assert all(value.startswith("tutorial/") for value in found.values)
    assert "tutorial/user-service/" in found.values
    every = complete(server, ref, "path", "")
    assert len(every.values) == 20 and every.has_more and every.total > 100
    assert every.values[0] == ""  # the home page is the shallowest
    blog = complete(server, ref, "path", "backpressure")
    assert blog.values and all("backpressure" in value for value in blog.values)
    com = complete(server, ResourceTemplateReference(uri=COM_PAGES), "path", "pri")
    assert com.values[0] == "pricing/"


def test_package_names_complete_for_the_api_template_and_the_choice_prompt(server: McpConnection) -> None:
    api = complete(server, ResourceTemplateReference(uri=API_PAGES), "package", "pg")
    assert api.values[:2] == ["pg-cache", "pg-prisma"] and "pg-sequelize" in api.values
    assert all(value.startswith("pg") for value in api.values)
    assert api.total == len(api.values) and not api.has_more
    using = complete(server, PromptReference(name=CHOOSE), "using", "rpc, @imqueue/pg-pr")
    assert using.values == ["rpc, pg-prisma"]
    first = complete(server, PromptReference(name=CHOOSE), "using", "")
    assert "rpc" in first.values and len(first.values) <= 20


def test_an_unknown_ref_or_argument_completes_to_nothing(server: McpConnection) -> None:
    for ref, argument in (
        (PromptReference(name="test_prompt_with_arguments"), "arg1"),
        (PromptReference(name=BUILD), "name"),
        (PromptReference(name=CHOOSE), "need"),
        (ResourceTemplateReference(uri="https://example.com/{x}"), "x"),
        (ResourceTemplateReference(uri=API_PAGES), "path"),
    ):
        found = complete(server, ref, argument, "te")
        assert found.values == [] and found.total == 0 and not found.has_more
    # The server goes on answering.
    assert complete(server, ResourceTemplateReference(uri=API_PAGES), "package", "rp").values == ["rpc"]


def test_a_typed_value_past_any_real_list_completes_to_nothing(server: McpConnection) -> None:
    """Each `using` suggestion repeats what was typed: a 990 kB value came back as 16.8 MB. Past
    MAX_TYPED characters there is nothing to suggest; at the bound, the suggestions still come."""
    from imqueue_mcp.server.docs.suggest import MAX_TYPED

    padded = "rpc," * ((MAX_TYPED - 3) // 4)
    assert len(padded) <= MAX_TYPED
    near = complete(server, PromptReference(name=CHOOSE), "using", padded)
    assert near.values and all(value.startswith(padded.rstrip(",")) for value in near.values)
    for typed in ("rpc," * (MAX_TYPED // 4 + 1), "," * 100_000):
        flood = complete(server, PromptReference(name=CHOOSE), "using", typed)
        assert flood.values == [] and flood.total == 0 and not flood.has_more
    path = complete(server, ResourceTemplateReference(uri=ORG_PAGES), "path", "t" * (MAX_TYPED + 1))
    assert path.values == []


# --- provenance ------------------------------------------------------------------------


def test_every_docs_answer_says_where_and_when_it_came_from(server: McpConnection) -> None:
    found = server.call("search_docs", {"query": "expose a method"})
    corpus = found.structured_content["corpus"]
    assert corpus["source"] == "live" and corpus["fetchedAt"] and corpus["from"]
    assert f"Corpus: the live sites, read {corpus['fetchedAt']}." in found.content[0].text
    doc = server.call("get_doc", {"url": TUTORIAL})
    source = doc.structured_content["source"]
    assert source["source"] == "live" and ISO_SECOND.match(source["fetchedAt"])
    assert f"Read live from {source['from']} at {source['fetchedAt']}." in doc.content[0].text


# --- list_changed after a refresh ------------------------------------------------------

EXTRA = "https://imqueue.org/api/rpc/latest/rpc.expose/"


class _EditableHandler(http.server.SimpleHTTPRequestHandler):
    overrides: dict[str, bytes] = {}

    def do_GET(self) -> None:
        body = self.overrides.get(self.path.split("?")[0])
        if body is None:
            super().do_GET()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class EditableSite:
    """imqueue.org's mirror on loopback, whose /llms.txt a test can replace while it serves."""

    def __init__(self) -> None:
        self.overrides: dict[str, bytes] = {}
        handler = type("Handler", (_EditableHandler,), {"overrides": self.overrides})
        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(SITE / "imqueue.org"))
        )
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def list_extra_page(self, listed: bool) -> None:
        original = (SITE / "imqueue.org" / "llms.txt").read_bytes()
        extra = f"\n## Extra\n\n- [The expose decorator]({EXTRA}): marks a method remote\n".encode()
        if listed:
            self.overrides["/llms.txt"] = original + extra
        else:
            self.overrides.pop("/llms.txt", None)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def editable(tmp_path: Path) -> Iterator[tuple[EditableSite, list[str], dict[str, str]]]:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    org = EditableSite()
    com = SiteServer("imqueue.com")
    try:
        args = origin_args({"imqueue.org": org.url, "imqueue.com": com.url})
        yield org, args, server_environment(tmp_path, IMQUEUE_MCP_REFRESH_SECONDS="1")
    finally:
        org.close()
        com.close()


def uris_of(connection: McpConnection) -> set[str]:
    return {str(resource.uri) for resource in list_resources(connection)}


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_refresh_that_changes_the_list_is_announced_to_a_handshake_client(
    editable: tuple[EditableSite, list[str], dict[str, str]], tmp_path: Path
) -> None:
    site, args, env = editable
    announced: list[str] = []
    heard = threading.Event()

    async def on_message(message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if method == "notifications/resources/list_changed":
            announced.append(method)
            heard.set()

    connection = stdio_connection(args, env, tmp_path, "legacy", message_handler=on_message)
    try:
        assert connection.client.server_capabilities.resources.list_changed is True
        assert EXTRA not in uris_of(connection)
        for listed, count in ((True, 1), (False, 2)):
            site.list_extra_page(listed)
            heard.clear()
            deadline = time.monotonic() + WAIT_SECONDS
            while not heard.wait(1.2):  # each list call past the interval starts a refresh
                assert time.monotonic() < deadline, "no notifications/resources/list_changed arrived"
                uris_of(connection)
            assert (EXTRA in uris_of(connection)) is listed
            assert len(announced) == count  # one announcement per change, none for an unchanged refresh
    finally:
        connection.close()


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_refresh_that_changes_the_list_reaches_a_listening_stateless_client(
    editable: tuple[EditableSite, list[str], dict[str, str]], tmp_path: Path
) -> None:
    site, args, env = editable
    connection = stdio_connection(args, env, tmp_path, "auto")

    async def listen_across_a_change(client: Any) -> list[str]:
        before = {str(resource.uri) for resource in (await client.list_resources()).resources}
        async with client.listen(resources_list_changed=True) as subscription:
            site.list_extra_page(True)
            events: list[Any] = []
            with anyio.fail_after(WAIT_SECONDS):
                while not events:
                    await anyio.sleep(1.2)
                    await client.list_resources()  # past the interval: starts a refresh
                    with anyio.move_on_after(0.5):
                        events.append(type(await subscription.__anext__()).__name__)
        after = {str(resource.uri) for resource in (await client.list_resources()).resources}
        assert EXTRA not in before and after - before == {EXTRA}
        return events

    try:
        assert connection.client.server_capabilities.resources.list_changed is True
        assert connection.run(listen_across_a_change) == ["ResourcesListChanged"]
    finally:
        connection.close()


# --- a local server over a snapshot ----------------------------------------------------


def test_a_local_server_over_a_snapshot_lists_what_the_hosted_one_does(
    request: pytest.FixtureRequest, site_origins: dict[str, str], tmp_path: Path
) -> None:

    http_server: HttpServer = request.getfixturevalue("hosted")

    snapshot = built_snapshot(tmp_path, pages=False)
    args = ["--offline", "--snapshot", str(snapshot), *origin_args(site_origins)]
    offline = stdio_connection(args, server_environment(tmp_path), tmp_path, "legacy")
    remote = McpConnection(http_server.url + "/mcp", "legacy")
    try:
        assert list_resources(offline) == list_resources(remote)
        assert (
            offline.run(lambda client: client.list_prompts()).prompts
            == remote.run(lambda client: client.list_prompts()).prompts
        )
    finally:
        offline.close()
        remote.close()


def test_offline_a_page_the_docs_do_not_have_is_not_found_not_a_server_failure(
    site_origins: dict[str, str], tmp_path: Path
) -> None:
    """Offline, a page missing from the saved pages was -32603 (a failure a client may retry, with
    advice to restart the server); a page the docs this server holds do not have is -32602."""
    snapshot = built_snapshot(tmp_path, pages=False)
    args = ["--offline", "--snapshot", str(snapshot), *origin_args(site_origins)]
    offline = stdio_connection(args, server_environment(tmp_path), tmp_path, "legacy")
    try:
        uri = "https://imqueue.org/no-such-page-here/"
        error = refused(offline, lambda client: client.read_resource(uri))
        assert error.code == -32602 and error.data == {"uri": uri}
        assert "search_docs" in error.message and "--offline" not in error.message
        held = refused(offline, lambda client: client.read_resource("https://imqueue.org/get-started/"))
        # the page exists, with no copy here: not served, which is no server failure either
        assert held.code == -32602 and "no saved copy" in held.message and "search_docs" in held.message
        result = offline.call("get_doc", {"url": uri})
        error = result.structured_content["error"]
        assert result.is_error and error["code"] == "page_not_found", error
        assert "index.md" not in error["message"] and "search_docs" in error["suggestedAction"]
    finally:
        offline.close()

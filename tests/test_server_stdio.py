"""The local server over stdio, through the SDK's client, at both protocol revisions.

Docs come from the loopback mirror of ../shared/site; no test here runs imq, so none is on
PATH. One server process per revision serves every test in this module.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from conftest import (
    LOCAL_TOOLS,
    REPO,
    SHARED_TOOLS,
    SITE,
    McpConnection,
    origin_args,
    server_environment,
    stdio_connection,
)

# SPEC §3a, pinned here independently of the server's own table:
# (readOnlyHint, destructiveHint, idempotentHint, openWorldHint)
SPEC_HINTS = {
    "search_docs": (True, False, True, True),
    "get_doc": (True, False, True, True),
    "find_examples": (True, False, True, True),
    "list_packages": (True, False, True, True),
    "package_status": (True, False, True, True),
    "scaffold_service": (True, False, True, False),
    "scaffold_client": (True, False, True, False),
    "local_install_guide": (True, False, True, False),
    "cli_status": (True, False, True, False),
    "cli_help": (True, False, True, False),
    "create_service": (False, False, False, True),
    "generate_client": (False, False, True, True),
    "cli_install": (False, True, True, True),
    "fleet": (False, True, False, False),
    "config": (False, True, False, False),
    "logs": (False, True, False, False),
    "inspect_project": (True, False, True, False),
    "get_api": (True, False, True, True),
    "api_diff": (True, False, True, True),
}

# Where the local server departs from SPEC §3a, and why: with path, the local scaffold_* write
# the files (issue 28 item 4), so they cannot say read-only; the hosted records keep SPEC's hints
# (tests/test_server_http.py). Not destructive: an existing file is replaced only with overwrite.
# create_service (apply: a project, over existing files with imq's -f, and a repository) and
# generate_client (overwrite: the client file replaced, no copy kept) are destructive, so a host
# asks first (SECURITY.md), where SPEC has them not.
LOCAL_HINTS = SPEC_HINTS | {
    "scaffold_service": (False, False, True, False),
    "scaffold_client": (False, False, True, False),
    "create_service": (False, True, False, True),
    "generate_client": (False, True, True, True),
}

MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}


@pytest.fixture(scope="module", params=sorted(MODES))
def local(
    request: pytest.FixtureRequest, site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("home")
    env = server_environment(home)  # no test here runs imq
    connection = stdio_connection(origin_args(site_origins), env, home, request.param)
    assert connection.client.protocol_version == MODES[request.param]
    yield connection
    connection.close()


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


# --- handshake and tool list -----------------------------------------------------------


def test_server_identifies_itself_with_instructions(local: McpConnection) -> None:
    from imqueue_mcp.server import server_version

    instructions = local.client.instructions or ""
    assert "search_docs" in instructions and "@expose()" in instructions and "@classType()" in instructions
    assert len(instructions.split()) <= 150
    info = local.client.server_info
    if info is not None:  # always present on a handshake connection; optional at 2026-07-28
        assert (info.name, info.title, info.version) == ("imqueue", "@imqueue", server_version())


def test_exactly_the_local_tools(local: McpConnection) -> None:
    assert {tool.name for tool in local.tools()} == LOCAL_TOOLS


def test_every_tool_has_a_title_and_all_four_hints_as_the_spec_says_or_departs(local: McpConnection) -> None:
    for tool in local.tools():
        hints = tool.annotations
        assert tool.title, tool.name
        assert tool.description and len(tool.description) > 80, tool.name
        assert (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        ) == (LOCAL_HINTS[tool.name]), tool.name


def test_output_schemas_on_exactly_the_shared_tools_and_generate_client(local: McpConnection) -> None:
    # generate_client returns the client file it generated (issue 4 §2); the other CLI tools text;
    # inspect_project its report (issue 13 §4).
    with_schema = SHARED_TOOLS | {"generate_client", "inspect_project", "get_api", "api_diff"}
    assert {tool.name for tool in local.tools() if tool.output_schema} == with_schema


def test_every_input_schema_is_closed(local: McpConnection) -> None:
    for tool in local.tools():
        assert tool.input_schema.get("additionalProperties") is False, tool.name


def test_local_scaffolders_say_when_they_write(local: McpConnection) -> None:
    # The hosted records open READ-ONLY (tests/test_scaffold.py); the local ones write only with path,
    # and only once asked (dry_run is true by default).
    scaffolders = [tool for tool in local.tools() if tool.name.startswith("scaffold_")]
    assert len(scaffolders) == 2
    for tool in scaffolders:
        assert "WRITES only with path" in tool.description and "dry_run true (default)" in tool.description
        properties = tool.input_schema["properties"]
        assert properties["dry_run"]["default"] is True and properties["overwrite"]["default"] is False


@pytest.mark.parametrize(
    ("tool", "arguments", "unknown"),
    [
        ("search_docs", {"query": "expose", "limt": 3}, "limt"),
        ("list_packages", {"verbose": True}, "verbose"),
        ("get_doc", {"url": "https://imqueue.org/", "section": "x"}, "section"),
        ("cli_status", {"force": True}, "force"),
    ],
)
def test_an_unknown_argument_is_an_error_naming_it(
    local: McpConnection, tool: str, arguments: dict[str, Any], unknown: str
) -> None:
    result = local.call(tool, arguments)
    assert result.is_error and repr(unknown) in text_of(result)


def test_argument_bounds_are_enforced(local: McpConnection) -> None:
    assert local.call("search_docs", {"query": "x", "limit": 21}).is_error
    assert local.call("search_docs", {"query": ""}).is_error


def test_unknown_prompt_is_invalid_params(local: McpConnection) -> None:
    with pytest.raises(MCPError) as raised:
        local.run(lambda client: client.get_prompt("no-such-prompt", {}))
    assert raised.value.error.code == -32602


# --- docs ------------------------------------------------------------------------------


def test_search_then_read_on_structured_content_alone(local: McpConnection) -> None:
    found = local.call("search_docs", {"query": "how do I expose a method", "limit": 5}).structured_content
    assert found["count"] == len(found["results"]) > 0
    assert found["corpus"]["source"] == "live"
    first = found["results"][0]
    assert set(first) >= {"title", "section", "description", "url", "symbol"}
    assert all(
        result["url"].startswith(("https://imqueue.org/", "https://imqueue.com/"))
        for result in found["results"]
    )
    page = local.call("get_doc", {"url": first["url"]}).structured_content
    assert page["url"].startswith(first["url"].split("#")[0])
    assert page["markdown"].strip() and page["truncated"] is False


def test_each_hit_carries_a_confidence_and_a_strong_answer_is_not_weak(local: McpConnection) -> None:
    result = local.call("search_docs", {"query": "watcherCheckDelay", "limit": 3})
    found = result.structured_content
    assert [hit["confidence"] for hit in found["results"]][0] == "high"
    assert all(hit["confidence"] in {"high", "medium", "low"} for hit in found["results"])
    assert found["weak"] is False
    assert "high confidence" in text_of(result) and "Weak match" not in text_of(result)


def test_an_answer_whose_best_hit_is_weak_says_so(local: McpConnection) -> None:
    result = local.call("search_docs", {"query": "weather forecast tomorrow"})
    found = result.structured_content
    assert found["count"] > 0 and found["weak"] is True
    assert found["results"][0]["confidence"] == "low"
    assert "Weak match: even the best result matches this query poorly" in text_of(result)


def test_a_fragment_read_is_one_section_with_its_heading_path(local: McpConnection) -> None:
    url = "https://imqueue.org/agents/delayed-scheduled-work/"
    whole = local.call("get_doc", {"url": url}).structured_content
    result = local.call("get_doc", {"url": url + "#verify"})
    part = result.structured_content
    assert part["url"] == url + "#verify"
    assert part["markdown"].startswith("## Verify")
    assert len(part["markdown"]) < len(whole["markdown"])
    assert part["section"]["heading"] == "Verify"
    assert part["section"]["ancestors"] == ["Agent recipe: delayed & scheduled work"]
    assert 1 <= part["section"]["index"] <= part["section"]["total"]
    assert "Section " in text_of(result) and part["markdown"].strip() in text_of(result)


def test_a_fragment_miss_returns_the_outline_and_lists_the_anchors(local: McpConnection) -> None:
    result = local.call(
        "get_doc", {"url": "https://imqueue.org/agents/delayed-scheduled-work/#no-such-anchor"}
    )
    data = result.structured_content
    assert data["fragmentMiss"]["anchor"] == "no-such-anchor"
    assert "verify" in data["fragmentMiss"]["available"]
    assert "section" not in data and data["markdown"] == ""
    assert data["outline"][0]["heading"].startswith("Agent recipe")
    assert "#verify" in text_of(result)


def test_llms_full_is_truncated_and_says_so(local: McpConnection) -> None:
    result = local.call("get_doc", {"url": "https://imqueue.org/llms-full.txt"})
    data = result.structured_content
    assert data["truncated"] is True and data["mimeType"] == "text/plain"
    assert len(data["markdown"].encode()) == data["bytes"] <= 200_000 < data["totalBytes"]
    assert "Truncated" in text_of(result)


def test_an_imqueue_com_page_reads_and_one_without_mirror_is_a_pointer(local: McpConnection) -> None:
    pricing = local.call("get_doc", {"url": "https://imqueue.com/pricing/"})
    assert not pricing.is_error and "imqueue.com" in pricing.structured_content["markdown"]
    pointer = local.call("get_doc", {"url": "https://imqueue.com/enterprise-quote/"})
    assert not pointer.is_error
    assert "no markdown mirror" in pointer.structured_content["markdown"]


def test_a_missing_imqueue_org_page_is_an_error_with_the_next_step(local: McpConnection) -> None:
    result = local.call("get_doc", {"url": "https://imqueue.org/no-such-page/"})
    assert result.is_error and "search_docs" in text_of(result)


@pytest.mark.parametrize(
    "url", ["https://imqueue.org.evil.com/intro/", "https://imqueue.org@evil.com/", "https://evil.com/"]
)
def test_a_look_alike_host_is_refused(local: McpConnection, url: str) -> None:
    result = local.call("get_doc", {"url": url})
    assert result.is_error and "imqueue.org or imqueue.com" in text_of(result)


def test_the_advisory_fires_for_datadog_and_not_for_core(local: McpConnection) -> None:
    datadog = local.call("search_docs", {"query": "datadog tracing"})
    assert "@imqueue/opentelemetry" in datadog.structured_content["advisory"]
    assert "Advisory:" in text_of(datadog)
    core = local.call("search_docs", {"query": "core message queue", "package": "core"})
    assert "advisory" not in core.structured_content


def test_a_miss_gives_sections_and_nearest_terms(local: McpConnection) -> None:
    result = local.call("search_docs", {"query": "zzqxv wqpfk"})
    data = result.structured_content
    assert data["count"] == 0 and data["miss"]["sections"]
    assert "No results" in text_of(result) and "corpus covers" in text_of(result)


def test_a_bad_package_filter_is_an_error_not_a_crash(local: McpConnection) -> None:
    result = local.call("search_docs", {"query": "expose", "package": "   "})
    assert result.is_error and "package" in text_of(result)


def test_an_unknown_package_filter_is_an_error_naming_the_packages_it_takes(local: McpConnection) -> None:
    result = local.call("search_docs", {"query": "expose", "package": "nosuch"})
    assert result.is_error
    assert "unknown package '@imqueue/nosuch'" in text_of(result) and "rpc" in text_of(result)


def test_the_package_filter_takes_every_listed_package_the_cli_and_mcp_by_their_guides(
    local: McpConnection,
) -> None:
    """list_packages lists @imqueue/cli, and the docs name @imqueue/mcp; neither has an API
    reference: the filter takes them too, and keeps their guides (/cli/, /mcp/) and nothing else."""
    listed = {entry["name"] for entry in local.call("list_packages").structured_content["packages"]}
    assert "@imqueue/cli" in listed
    for package, guide in (("cli", "https://imqueue.org/cli/"), ("@imqueue/mcp", "https://imqueue.org/mcp/")):
        result = local.call("search_docs", {"query": "generate a typed client", "package": package})
        assert not result.is_error, text_of(result)
        urls = [hit["url"] for hit in result.structured_content["results"]]
        assert urls and all(url.startswith(guide) for url in urls), urls
    refused = local.call("search_docs", {"query": "expose", "package": "nosuch"})
    assert "cli" in text_of(refused) and "mcp" in text_of(refused)


def test_package_facts_come_from_status_json(local: McpConnection) -> None:
    listed = local.call("list_packages").structured_content
    assert "factsUnavailable" not in listed
    rpc = next(entry for entry in listed["packages"] if entry["name"] == "@imqueue/rpc")
    assert rpc["version"] and rpc["license"]
    status = local.call("package_status", {"package": "rpc"}).structured_content
    assert [entry["scoped"] for entry in status["packages"]] == ["@imqueue/rpc"]
    assert status["framework"]["redis"]
    every = local.call("package_status").structured_content
    assert {"@imqueue/cli", "@imqueue/mcp"} <= {entry["scoped"] for entry in every["packages"]}


def test_an_unknown_package_is_an_error_listing_known_ones(local: McpConnection) -> None:
    result = local.call("package_status", {"package": "nonexistent"})
    assert result.is_error and "@imqueue/rpc" in text_of(result)


# --- scaffolding -----------------------------------------------------------------------


def test_scaffold_service_emits_the_pinned_identifiers(local: McpConnection) -> None:
    methods = [{"name": "getUser", "params": [{"name": "id", "type": "string"}], "returns": "User"}]
    result = local.call("scaffold_service", {"name": "user", "methods": methods})
    data = result.structured_content
    assert data["service"] == "UserService" and data["types"] == ["User"]
    files = {file["path"]: file["content"] for file in data["files"]}
    assert "export class UserService extends IMQService" in files["src/UserService.ts"]
    assert "@expose()" in files["src/UserService.ts"] and "@param {string} id" in files["src/UserService.ts"]
    assert "@classType()" in files["src/types.ts"]
    assert "imq service create" in data["cliAlternative"]
    assert "UserService" in text_of(result)


def test_scaffold_client_emits_the_pinned_identifiers(local: McpConnection) -> None:
    data = local.call("scaffold_client", {"service": "user"}).structured_content
    assert data["service"] == "UserService"
    assert data["client"] == "UserClient" and data["namespace"] == "userService"
    assert data["generateCommand"] == "imq client generate UserService ./src/clients"
    assert data["output"] == "./src/clients/UserService.ts"


def test_a_bad_method_name_is_an_error_saying_why(local: McpConnection) -> None:
    result = local.call("scaffold_service", {"name": "user", "methods": [{"name": "not valid"}]})
    assert result.is_error and "name" in text_of(result)


PARITY_QUERIES = ("how do I expose a method", "datadog tracing")


@pytest.fixture(scope="module")
def imq_search_urls() -> dict[str, list[str]]:
    """What `imq-search QUERY --json` ranks for each parity query, run side by side."""
    processes = {
        query: subprocess.Popen(
            [
                sys.executable,
                "-m",
                "imqueue_mcp.build_index.search_cli",
                query,
                "--json",
                "--limit",
                "6",
                "--from",
                str(SITE),
            ],
            cwd=REPO,
            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for query in PARITY_QUERIES
    }
    urls = {}
    for query, process in processes.items():
        stdout, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr
        urls[query] = [result["url"] for result in json.loads(stdout)["results"]]
    return urls


@pytest.mark.parametrize("query", PARITY_QUERIES)
def test_search_docs_ranks_exactly_as_imq_search_does(
    local: McpConnection, imq_search_urls: dict[str, list[str]], query: str
) -> None:
    found = local.call("search_docs", {"query": query, "limit": 6}).structured_content
    assert [result["url"] for result in found["results"]] == imq_search_urls[query]

"""find_examples through the SDK's client: the real server over stdio and over HTTP.

The docs come from the loopback mirror of ../shared/site (the live path: examples from each
host's llms-full.txt), or from a snapshot built from it and read with --offline; an older
snapshot (no examples in its body) is made by rewriting a real one without them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import msgpack  # type: ignore[import-untyped]
import pytest

from imqueue_mcp.docsource.files import wrap
from imqueue_mcp.docsource.snapshot import FORMAT_VERSION

from conftest import (
    HttpServer,
    McpConnection,
    built_snapshot,
    origin_args,
    server_environment,
    stdio_connection,
)

MODES = {"legacy": "2025-11-25", "auto": "2026-07-28"}


@pytest.fixture(scope="module", params=sorted(MODES))
def local(
    request: pytest.FixtureRequest, site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("examples-home")
    connection = stdio_connection(origin_args(site_origins), server_environment(home), home, request.param)
    assert connection.client.protocol_version == MODES[request.param]
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def hosted_client(hosted: HttpServer) -> Iterator[McpConnection]:
    connection = McpConnection(hosted.url + "/mcp", "auto")
    yield connection
    connection.close()


def tool(connection: McpConnection, name: str = "find_examples") -> Any:
    return next(found for found in connection.tools() if found.name == name)


def answer(connection: McpConnection, arguments: dict[str, Any]) -> dict[str, Any]:
    result = connection.call("find_examples", arguments)
    assert not result.is_error, result.content[0].text
    jsonschema.validate(result.structured_content, tool(connection).output_schema)
    return dict(result.structured_content)


def error(connection: McpConnection, arguments: dict[str, Any]) -> dict[str, Any]:
    result = connection.call("find_examples", arguments)
    assert result.is_error
    jsonschema.validate(result.structured_content, tool(connection).output_schema)
    detail = dict(result.structured_content["error"])
    text = result.content[0].text
    assert detail["message"] in text and detail["suggestedAction"] in text  # the text reads whole
    return detail


# --- the tool as listed ------------------------------------------------------------------


def test_find_examples_is_listed_read_only_with_a_closed_input_schema(local: McpConnection) -> None:
    listed = tool(local)
    hints = listed.annotations
    assert (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint) == (
        True,
        False,
        True,
        True,
    )
    schema = listed.input_schema
    assert schema["additionalProperties"] is False and schema["required"] == ["query"]
    assert (schema["properties"]["limit"]["minimum"], schema["properties"]["limit"]["maximum"]) == (1, 10)
    assert listed.output_schema is not None
    assert "find_examples" in (local.client.instructions or "")  # the agent hears of it at initialize


# --- answers ---------------------------------------------------------------------------


def test_an_example_comes_with_its_code_language_anchor_url_page_and_provenance(local: McpConnection) -> None:
    data = answer(local, {"query": "expose a service method so it can be called remotely", "limit": 3})
    assert data["count"] == len(data["results"]) == 3
    best = data["results"][0]
    assert "@expose()" in best["code"] and best["language"] == "typescript"
    assert best["url"].startswith("https://imqueue.org/") and "#" in best["url"]
    assert best["title"] and best["section"] and "@imqueue/rpc" in best["packages"]
    assert best["id"].split("~")[0] == best["url"].removeprefix("https://imqueue.org")
    assert data["corpus"]["source"] == "live" and data["corpus"]["fetchedAt"]


def test_the_text_shows_each_example_as_a_fenced_block_with_its_url(local: McpConnection) -> None:
    result = local.call("find_examples", {"query": "install the imq cli globally", "limit": 1})
    text = result.content[0].text
    hit = result.structured_content["results"][0]
    assert f"```{hit['language']}\n{hit['code']}\n```" in text and hit["url"] in text
    assert "Corpus: the live sites" in text


def test_the_package_filter_keeps_that_packages_examples_only(local: McpConnection) -> None:
    data = answer(local, {"query": "check an ip address against networks", "package": "net", "limit": 5})
    assert data["package"] == "@imqueue/net" and data["results"]
    assert all("@imqueue/net" in hit["packages"] for hit in data["results"])


def test_a_query_nothing_matches_is_an_empty_answer_with_guidance(local: McpConnection) -> None:
    data = answer(local, {"query": "qqqzzzxxy"})
    assert (data["count"], data["results"]) == (0, []) and "miss" in data
    text = local.call("find_examples", {"query": "qqqzzzxxy"}).content[0].text
    assert "No code examples" in text and "search_docs" in text


def test_a_package_miss_points_to_its_api_reference(local: McpConnection) -> None:
    """The live corpus holds llms-full.txt's examples, not the generated API pages': @imqueue/datadog's
    usage (tracer.init()) is on its API landing page only, and the miss says where."""
    arguments = {"query": "datadog tracer init", "package": "datadog"}
    data = answer(local, arguments)
    assert data["count"] == 0 and data["miss"]["packagePage"] == "https://imqueue.org/api/datadog/latest/"
    text = local.call("find_examples", arguments).content[0].text
    assert "get_doc(https://imqueue.org/api/datadog/latest/)" in text


# --- guided errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "code", "named"),
    [
        ({"query": "   "}, "invalid_arguments", "blank"),
        ({"query": ""}, "invalid_arguments", "query"),
        ({"query": "expose", "limit": 0}, "invalid_arguments", "limit"),
        ({"query": "expose", "limit": 11}, "invalid_arguments", "limit"),
        ({"query": "expose", "package": "left-pad"}, "unknown_package", "Known packages"),
        ({"query": "expose", "package": "@other/rpc"}, "unknown_package", "not an @imqueue package"),
        ({"query": "expose", "lang": "ts"}, "invalid_arguments", "'lang'"),
    ],
)
def test_bad_input_is_a_guided_error_naming_what_to_fix(
    local: McpConnection, arguments: dict[str, Any], code: str, named: str
) -> None:
    detail = error(local, arguments)
    assert detail["code"] == code and named in detail["message"]
    assert detail["suggestedAction"]


# --- hosted ------------------------------------------------------------------------------


def test_the_hosted_endpoint_answers_find_examples_over_http(hosted_client: McpConnection) -> None:
    data = answer(hosted_client, {"query": "generate a typed client for a running service", "limit": 2})
    assert data["count"] == 2 and all(hit["code"] for hit in data["results"])
    assert any("imq client generate" in hit["code"] for hit in data["results"])
    assert error(hosted_client, {"query": "x", "package": "nope"})["code"] == "unknown_package"


# --- snapshots -----------------------------------------------------------------------------


def snapshot_file(folder: Path, *, with_examples: bool) -> Path:
    path = built_snapshot(folder, pages=False)
    if not with_examples:  # as an imqueue-mcp from before examples wrote it
        outer = msgpack.unpackb(path.read_bytes(), raw=False)
        body = msgpack.unpackb(outer["body"], raw=False)
        del body["examples"]
        header = {k: v for k, v in outer["header"].items() if k not in ("format", "body_sha256")}
        path.write_bytes(wrap(header, msgpack.packb(body, use_bin_type=True), FORMAT_VERSION))
    return path


def test_offline_the_snapshots_examples_answer_labelled_with_its_date(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, with_examples=True)
    offline = stdio_connection(
        ["--offline", "--snapshot", str(path)], server_environment(tmp_path), tmp_path, "legacy"
    )
    try:
        data = answer(offline, {"query": "enable shell completions"})
        assert (
            data["results"] and data["corpus"]["source"] == "snapshot" and data["corpus"]["from"] == str(path)
        )
    finally:
        offline.close()


def test_an_older_snapshot_without_examples_says_to_rebuild_while_search_still_works(tmp_path: Path) -> None:
    path = snapshot_file(tmp_path, with_examples=False)
    offline = stdio_connection(
        ["--offline", "--snapshot", str(path)], server_environment(tmp_path), tmp_path, "legacy"
    )
    try:
        detail = error(offline, {"query": "expose a method"})
        assert detail["code"] == "corpus_unavailable" and "no code examples" in detail["message"]
        assert "imq-build-index" in detail["suggestedAction"] and "find_examples" in detail["suggestedAction"]
        assert not offline.call("search_docs", {"query": "expose a method"}).is_error
    finally:
        offline.close()

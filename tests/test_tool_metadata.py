"""What a client of any protocol revision reads about each tool, over stdio and HTTP.

- `annotations.title` equals `title` on every tool: clients on 2025-03-26 read only the former.
- A published outputSchema is one object schema whose `properties` are the result's fields,
  with the guided error as an optional `error` property: a client reading
  `outputSchema.properties` sees the result, and success and error results both conform.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from conftest import HttpServer, McpConnection, offline_args, server_environment, stdio_connection


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("metadata-local")
    connection = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def remote(hosted: HttpServer) -> Iterator[McpConnection]:
    connection = McpConnection(hosted.url + "/mcp", "legacy")
    yield connection
    connection.close()


@pytest.fixture(params=["stdio", "http"])
def connection(request: pytest.FixtureRequest) -> McpConnection:
    return request.getfixturevalue("local" if request.param == "stdio" else "remote")  # type: ignore[no-any-return]


def test_every_tool_has_an_annotation_title_equal_to_its_title(connection: McpConnection) -> None:
    tools = connection.tools()
    assert tools
    for tool in tools:
        assert tool.title, tool.name
        assert tool.annotations is not None and tool.annotations.title == tool.title, tool.name


def test_output_schemas_publish_the_result_fields_as_top_level_properties(connection: McpConnection) -> None:
    published = [tool for tool in connection.tools() if tool.output_schema is not None]
    assert {tool.name for tool in published} >= {"search_docs", "get_doc", "list_packages", "package_status"}
    for tool in published:
        schema = tool.output_schema
        properties = schema.get("properties", {})
        assert schema["type"] == "object", tool.name
        assert "error" in properties and "error" not in schema.get("required", []), tool.name
        assert len(properties) > 1, f"{tool.name}: only `error` is published"


def test_search_results_and_errors_both_conform_to_the_published_schema(connection: McpConnection) -> None:
    schema: dict[str, Any] = next(t.output_schema for t in connection.tools() if t.name == "search_docs")
    result = connection.call("search_docs", {"query": "expose a method", "limit": 3})
    assert not result.is_error
    assert set(result.structured_content) <= set(schema["properties"])
    jsonschema.validate(result.structured_content, schema)

    refused = connection.call("search_docs", {"query": "expose", "package": "   "})
    assert refused.is_error and "error" in refused.structured_content
    jsonschema.validate(refused.structured_content, schema)

    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({}, schema)  # neither the result's required fields nor an error


def test_a_doc_read_conforms_and_its_fields_are_the_published_ones(
    connection: McpConnection, tmp_path: Path
) -> None:
    schema: dict[str, Any] = next(t.output_schema for t in connection.tools() if t.name == "get_doc")
    page = connection.call("get_doc", {"url": "https://imqueue.org/tutorial/user-service/"})
    assert not page.is_error
    assert set(page.structured_content) <= set(schema["properties"])
    jsonschema.validate(page.structured_content, schema)

"""Passages through the SDK's client: the real server over stdio, offline on the two snapshots a
build of ../shared/site writes: with `--pages` (every page's own markdown) and without (the
llms-full.txt pages' markdown). A live server cuts its passages from the text its corpus was
built with too (docs/passages.md), so where the corpus came from is not this module's subject."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from conftest import McpConnection, built_snapshot, offline_args, server_environment, stdio_connection

QUESTION = "how long does a leased message stay in a worker key before it is swept back"


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    """On the `--pages` snapshot."""
    home = tmp_path_factory.mktemp("passages-home")
    connection = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    folder = tmp_path_factory.mktemp("passages-offline")
    snapshot = built_snapshot(folder, pages=False)
    home = folder / "home"
    home.mkdir()
    connection = stdio_connection(
        ["--offline", "--snapshot", str(snapshot)], server_environment(home), home, "legacy"
    )
    yield connection
    connection.close()


def call(connection: McpConnection, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    result = connection.call(tool, arguments)
    text = result.content[0].text
    assert not result.is_error, text
    schema = next(t.output_schema for t in connection.tools() if t.name == tool)
    jsonschema.validate(result.structured_content, schema)
    return dict(result.structured_content), text


def test_every_search_hit_carries_a_passage_with_its_anchor_url_and_tokens(paged: McpConnection) -> None:
    data, text = call(paged, "search_docs", {"query": QUESTION})
    passages = [hit["passage"] for hit in data["results"]]
    assert len(passages) == data["count"] > 0
    for passage in passages:
        assert passage["url"].startswith("https://imqueue.")
        assert 0 < passage["tokens"] <= 120 and passage["basis"] in ("markdown", "prose", "summary")
    assert sum(p["tokens"] for p in passages) == data["passageBudget"]["tokens"] <= 1500
    assert "safeDeliveryTtl" in " ".join(p["text"] for p in passages[:3])  # the answer, in the reply
    assert f"Passage ({passages[0]['tokens']} tokens) from {passages[0]['url']}:" in text
    assert passages[0]["text"].split("\n")[0] in text


def test_passages_false_leaves_them_out(paged: McpConnection) -> None:
    data, text = call(paged, "search_docs", {"query": QUESTION, "passages": False})
    assert data["count"] > 0 and all("passage" not in hit for hit in data["results"])
    assert "passageBudget" not in data and "Passage (" not in text


def test_passage_tokens_and_max_tokens_bound_each_passage_and_the_reply(paged: McpConnection) -> None:
    data, text = call(
        paged, "search_docs", {"query": QUESTION, "limit": 6, "passageTokens": 30, "maxTokens": 60}
    )
    given = [hit["passage"] for hit in data["results"] if "passage" in hit]
    assert given and all(p["tokens"] <= 30 for p in given) and sum(p["tokens"] for p in given) <= 60
    assert data["passageBudget"]["omitted"] == data["count"] - len(given) > 0
    assert "carry no passage: maxTokens (60) was spent" in text


def test_the_passage_arguments_are_published_strict_and_bounded(paged: McpConnection) -> None:
    for name in ("search_docs", "find_examples"):
        schema = next(t.input_schema for t in paged.tools() if t.name == name)
        assert schema["additionalProperties"] is False
        properties = schema["properties"]
        assert properties["passages"]["type"] == "boolean" and properties["passages"]["default"] is True
        assert (properties["passageTokens"]["minimum"], properties["passageTokens"]["default"]) == (20, 120)
        assert properties["maxTokens"]["default"] == 1500
    refused = paged.call("search_docs", {"query": QUESTION, "passageTokens": 5})
    assert refused.is_error and "passageTokens" in refused.content[0].text


def test_offline_passages_come_from_the_snapshot_markdown(offline: McpConnection) -> None:
    data, _text = call(
        offline, "search_docs", {"query": "does imqueue need a load balancer for internal calls"}
    )
    assert data["corpus"]["source"] == "snapshot"
    assert any(hit["passage"]["basis"] == "markdown" for hit in data["results"])


def test_find_examples_hits_carry_the_prose_of_their_section_without_the_code(paged: McpConnection) -> None:
    data, text = call(
        paged, "find_examples", {"query": "expose a service method so it can be called remotely"}
    )
    for hit in data["results"]:
        passage = hit["passage"]
        assert passage["url"].split("#")[0] == hit["url"].split("#")[0] and passage["tokens"] <= 120
        assert hit["code"] not in passage["text"]
    assert "Passage (" in text


def test_an_api_hit_without_saved_pages_shows_its_remarks(offline: McpConnection) -> None:
    """The build reads each symbol's reference page for its doc comment (Document.doc): the
    snapshot without --pages still answers with the option's remarks."""
    data, _text = call(offline, "search_docs", {"query": "pending call keeps the process alive timer"})
    top = data["results"][0]
    assert top["url"] == "https://imqueue.org/api/rpc/latest/rpc.imqclientoptions.calltimeout/"
    assert top["passage"]["basis"] == "prose"
    assert "unref'd" in top["passage"]["text"] and top["passage"]["text"] != top["description"]

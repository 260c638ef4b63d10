"""With imqueue.org/status.json down: the catalogue still lists, package facts fail honestly."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from conftest import McpConnection, free_port, origin_args, server_environment, stdio_connection


@pytest.fixture(scope="module", params=["status-404", "site-unreachable"])
def feed_down(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpConnection]:
    if request.param == "status-404":
        origins = request.getfixturevalue("status_down_origins")
    else:
        dead = f"http://127.0.0.1:{free_port()}"
        origins = {"imqueue.org": dead, "imqueue.com": dead}
    home = tmp_path_factory.mktemp("home")
    connection = stdio_connection(origin_args(origins), server_environment(home), home, "legacy")
    yield connection
    connection.close()


def test_list_packages_still_lists_the_catalogue_and_says_facts_are_unavailable(
    feed_down: McpConnection,
) -> None:
    result = feed_down.call("list_packages")
    data = result.structured_content
    assert not result.is_error and data["factsUnavailable"] is True
    names = {entry["name"] for entry in data["packages"]}
    assert {"@imqueue/rpc", "@imqueue/core"} <= names
    assert all("version" not in entry for entry in data["packages"])
    assert "unavailable" in result.content[0].text.lower()


def test_package_status_fails_and_says_why(feed_down: McpConnection) -> None:
    result = feed_down.call("package_status", {"package": "rpc"})
    # No facts at all, stale or otherwise: the structured answer is the guided error alone.
    assert result.is_error and set(result.structured_content) == {"error"}
    assert result.structured_content["error"]["code"] == "facts_unavailable"
    text = result.content[0].text
    assert (
        "unavailable" in text and "imqueue.org/status.json" in text and "https://imqueue.org/status/" in text
    )


def test_search_still_answers_from_the_live_sites_when_only_status_json_is_down(
    status_down_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    home = tmp_path_factory.mktemp("home")
    connection = stdio_connection(origin_args(status_down_origins), server_environment(home), home, "legacy")
    try:
        result = connection.call("search_docs", {"query": "watcherCheckDelay"})
        data = result.structured_content
        assert not result.is_error
        assert (
            data["results"][0]["url"]
            == "https://imqueue.org/api/core/latest/core.imqoptions.watchercheckdelay/"
        )
        assert data["corpus"]["source"] == "live"
    finally:
        connection.close()

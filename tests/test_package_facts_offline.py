"""list_packages and package_status from the snapshot's status.json: offline, and when imqueue.org
does not answer; over stdio and over HTTP (both tools are hosted).

The snapshot is built once for the module from the site mirror (../shared/site, read at run
time). Every answer from it is labelled with the snapshot's date, as search_docs labels its
corpus; with no copy at all the error says what to do in that situation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from imqueue_mcp import docsource

from conftest import (
    SITE,
    HttpServer,
    McpConnection,
    built_snapshot,
    free_port,
    origin_args,
    server_environment,
    stdio_connection,
)

MIRROR_STATUS = SITE / "imqueue.org" / "status.json"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    return built_snapshot(tmp_path_factory.mktemp("facts"), pages=False)


@pytest.fixture(scope="module")
def fetched_at(snapshot: Path) -> str:
    return docsource.load_snapshot(snapshot).fetched_at


@pytest.fixture(scope="module")
def without_status(snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same snapshot with no copy of status.json, as the live corpus stores one when the
    feed was missing: still loadable, still searchable."""
    stored = docsource.load_snapshot(snapshot)
    stored.status = None
    path = tmp_path_factory.mktemp("nostatus") / "snapshot.msgpack"
    docsource.save_snapshot(stored, path)
    return path


def dead_origins() -> dict[str, str]:
    dead = f"http://127.0.0.1:{free_port()}"
    return {"imqueue.org": dead, "imqueue.com": dead}


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def mirror_version(package: str) -> str:
    status = json.loads(MIRROR_STATUS.read_text("utf-8"))
    return str(next(record["version"] for record in status["packages"] if record["scoped"] == package))


# --- the servers ---------------------------------------------------------------------

SITUATIONS = {
    "offline": lambda snapshot: ["--offline", "--snapshot", str(snapshot)],
    "origin-down": lambda snapshot: [*origin_args(dead_origins()), "--snapshot", str(snapshot)],
}
NOTES = {"offline": "the server runs with --offline", "origin-down": "could not be read"}


@pytest.fixture(scope="module", params=sorted(SITUATIONS))
def stdio(
    request: pytest.FixtureRequest, snapshot: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, McpConnection]]:
    home = tmp_path_factory.mktemp("stdio")
    args = SITUATIONS[request.param](snapshot)
    connection = stdio_connection(args, server_environment(home), home, "legacy")
    yield request.param, connection
    connection.close()


@pytest.fixture(scope="module", params=sorted(SITUATIONS))
def http(
    request: pytest.FixtureRequest, snapshot: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, McpConnection]]:
    home = tmp_path_factory.mktemp("http")
    server = HttpServer(SITUATIONS[request.param](snapshot), server_environment(home), home)
    connection = McpConnection(server.url + "/mcp", "auto")
    yield request.param, connection
    connection.close()
    server.close()


def assert_labelled(data: dict[str, Any], situation: str, snapshot: Path | str, fetched_at: str) -> None:
    stored = data["stored"]
    assert stored["source"] == "snapshot" and stored["from"] == str(snapshot)
    assert stored["fetchedAt"] == fetched_at and NOTES[situation] in stored["note"]


def check_both_tools(
    connection: McpConnection, situation: str, snapshot: Path | str, fetched_at: str
) -> None:
    listed = connection.call("list_packages")
    assert not listed.is_error, text_of(listed)
    data = listed.structured_content
    assert "factsUnavailable" not in data and data["framework"]["node"]
    rpc = next(entry for entry in data["packages"] if entry["name"] == "@imqueue/rpc")
    assert rpc["version"] == mirror_version("@imqueue/rpc")
    assert_labelled(data, situation, snapshot, fetched_at)
    assert text_of(listed).startswith(f"Package facts from the snapshot of {fetched_at} ({snapshot})")

    status = connection.call("package_status", {"package": "rpc"})
    assert not status.is_error, text_of(status)
    data = status.structured_content
    assert [record["version"] for record in data["packages"]] == [mirror_version("@imqueue/rpc")]
    assert_labelled(data, situation, snapshot, fetched_at)
    assert f"Package facts from the snapshot of {fetched_at}" in text_of(status)


def test_stdio_answers_package_facts_from_the_snapshot_labelled_with_its_date(
    stdio: tuple[str, McpConnection], snapshot: Path, fetched_at: str
) -> None:
    situation, connection = stdio
    check_both_tools(connection, situation, snapshot, fetched_at)


def test_http_answers_package_facts_from_the_snapshot_labelled_with_its_date(
    http: tuple[str, McpConnection], snapshot: Path, fetched_at: str
) -> None:
    situation, connection = http
    # The hosted endpoint names its snapshot without the operator's path (server/mcp/redact.py).
    check_both_tools(connection, situation, "the server's snapshot", fetched_at)


def test_an_unknown_package_is_still_refused_from_the_stored_copy(stdio: tuple[str, McpConnection]) -> None:
    _, connection = stdio
    result = connection.call("package_status", {"package": "no-such-package"})
    assert result.is_error and result.structured_content["error"]["code"] == "unknown_package"


def test_live_facts_carry_no_stored_label(
    site_origins: dict[str, str], snapshot: Path, tmp_path: Path
) -> None:
    args = [*origin_args(site_origins), "--snapshot", str(snapshot)]
    connection = stdio_connection(args, server_environment(tmp_path), tmp_path, "legacy")
    try:
        listed = connection.call("list_packages").structured_content
        status = connection.call("package_status", {"package": "core"}).structured_content
    finally:
        connection.close()
    assert "stored" not in listed and "stored" not in status
    assert status["packages"][0]["version"] == mirror_version("@imqueue/core")


# --- no stored copy: what the user is told -------------------------------------------


def offline_error(args: list[str], home: Path) -> tuple[dict[str, Any], str, dict[str, Any]]:
    connection = stdio_connection(args, server_environment(home), home, "legacy")
    try:
        failed = connection.call("package_status", {"package": "rpc"})
        listed = connection.call("list_packages")
    finally:
        connection.close()
    assert failed.is_error and failed.structured_content["error"]["code"] == "facts_unavailable"
    # list_packages still lists, and says the same thing about the missing facts
    note = listed.structured_content["factsNote"]
    assert note.startswith(failed.structured_content["error"]["message"]) and "imq-build-index" in note
    assert note in text_of(listed) and "retry" not in text_of(listed).lower()
    return failed.structured_content["error"], text_of(failed), listed.structured_content


def assert_says_what_to_do_offline(error: dict[str, Any], text: str) -> None:
    assert ".." not in text and "read pages" not in text
    assert "Retry later" not in text and "Try again" not in text  # no help while offline
    assert "imq-build-index" in error["suggestedAction"] and "while online" in error["suggestedAction"]
    assert "--offline" in error["suggestedAction"]
    assert error["message"].startswith("Package facts are unavailable: the server runs with --offline")


def test_offline_without_a_snapshot_says_how_to_get_facts_offline(tmp_path: Path) -> None:
    error, text, listed = offline_error(["--offline", "--snapshot", str(tmp_path / "none.msgpack")], tmp_path)
    assert_says_what_to_do_offline(error, text)
    assert "no docs snapshot could be loaded" in error["message"]
    assert listed["factsUnavailable"] is True and listed["packages"]


def test_a_snapshot_without_status_json_still_loads_and_says_it_has_no_copy(
    without_status: Path, tmp_path: Path
) -> None:
    error, text, listed = offline_error(["--offline", "--snapshot", str(without_status)], tmp_path)
    assert_says_what_to_do_offline(error, text)
    assert f"{without_status} carries no copy of status.json" in error["message"]
    assert listed["factsUnavailable"] is True
    connection = stdio_connection(
        ["--offline", "--snapshot", str(without_status)], server_environment(tmp_path), tmp_path, "legacy"
    )
    try:  # the rest of the snapshot answers as before
        search = connection.call("search_docs", {"query": "IMQService"})
    finally:
        connection.close()
    assert not search.is_error and search.structured_content["results"]


def test_online_with_the_site_down_and_no_copy_says_to_try_again(tmp_path: Path) -> None:
    args = [*origin_args(dead_origins()), "--snapshot", str(tmp_path / "none.msgpack")]
    connection = stdio_connection(args, server_environment(tmp_path), tmp_path, "legacy")
    try:
        failed = connection.call("package_status", {"package": "rpc"})
    finally:
        connection.close()
    error = failed.structured_content["error"]
    assert failed.is_error and error["code"] == "facts_unavailable"
    assert "https://imqueue.org/status.json could not be read" in error["message"]
    assert "https://imqueue.org/status/" in error["suggestedAction"] and ".." not in text_of(failed)

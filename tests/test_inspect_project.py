"""inspect_project and the version notes, through the SDK's client over stdio against the real server.

The three fixture projects (fixtures/projects.py) are written into temp folders; the server
finds them through the client's roots (roots/list, on a 2025-11-25 connection whose client
offers them), through its working directory (no roots offered, or a 2026-07-28 connection,
which has none), or through the path argument. Documented versions come from the site
mirror's status.json, served on loopback.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_types import ListRootsResult, Root
from pydantic import FileUrl

from conftest import McpConnection, offline_args, server_environment, stdio_connection
from fixtures.projects import FINDINGS, PROJECTS, write_project


def findings_of(data: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(finding["id"], finding.get("package")) for finding in data["findings"]}


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def roots_of(*folders: Path) -> Any:
    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(
            roots=[Root(uri=FileUrl(folder.as_uri()), name=folder.name) for folder in folders]
        )

    return list_roots


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("projects")
    return {name: write_project(name, base / name) for name in PROJECTS}


def serve(home: Path, cwd: Path, mode: str = "legacy", **options: Any) -> McpConnection:
    """A stdio server on the mirror's snapshot (its subject is the project, not the live read),
    the snapshot in a folder beside `home`, so that `cwd` holds only what the test put there."""
    snapshot = offline_args(home.with_name(home.name + "-snapshot"))
    return stdio_connection(snapshot, server_environment(home), cwd, mode, **options)


# --- finding the project ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_inspect_project_through_the_clients_roots_reports_exactly_its_findings(
    name: str, projects: dict[str, Path], tmp_path: Path
) -> None:
    # The server runs elsewhere (an empty folder): only the roots lead it to the project.
    connection = serve(tmp_path, tmp_path, list_roots_callback=roots_of(projects[name]))
    try:
        result = connection.call("inspect_project")
    finally:
        connection.close()
    data = result.structured_content
    assert not result.is_error, text_of(result)
    assert data["found"] is True and data["via"] == "roots"
    assert data["root"] == str(projects[name].resolve())
    assert findings_of(data) == FINDINGS[name]
    for finding in data["findings"]:
        assert finding["url"] in text_of(result) and finding["url"].startswith("https://imqueue.org/")


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # roots: 2025-11-25
def test_changed_roots_are_followed_once_the_client_announces_them(
    projects: dict[str, Path], tmp_path: Path
) -> None:
    offered = [projects["current"]]
    asked: list[int] = []

    async def list_roots(context: Any) -> ListRootsResult:
        asked.append(1)
        return ListRootsResult(roots=[Root(uri=FileUrl(folder.as_uri())) for folder in offered])

    connection = serve(tmp_path, tmp_path, list_roots_callback=list_roots)
    try:
        first = connection.call("inspect_project").structured_content
        again = connection.call("inspect_project").structured_content
        offered[:] = [projects["both_tracers"]]
        connection.run(lambda client: client.send_roots_list_changed())
        moved = connection.call("inspect_project").structured_content
    finally:
        connection.close()
    assert first["root"] == again["root"] == str(projects["current"].resolve())
    assert len(asked) == 2  # once per connection, and once more after the announcement
    assert moved["root"] == str(projects["both_tracers"].resolve())
    assert findings_of(moved) == FINDINGS["both_tracers"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_without_roots_the_working_directory_is_the_project(
    mode: str, projects: dict[str, Path], tmp_path: Path
) -> None:
    connection = serve(tmp_path, projects["rpc_one"], mode)
    try:
        result = connection.call("inspect_project")
    finally:
        connection.close()
    data = result.structured_content
    assert data["via"] == "cwd" and data["root"] == str(projects["rpc_one"].resolve())
    assert findings_of(data) == FINDINGS["rpc_one"]
    rpc = next(package for package in data["packages"] if package["name"] == "@imqueue/rpc")
    assert (rpc["declared"], rpc["locked"], rpc["installed"], rpc["documented"]) == (
        "^1.10.0",
        "1.10.3",
        "1.10.3",
        "3.7.2",
    )
    assert "| @imqueue/rpc | ^1.10.0 | 1.10.3 | 1.10.3 | 3.7.2 |" in text_of(result)


@pytest.fixture(scope="module")
def nowhere(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[McpConnection]:
    """A server in an empty folder, with a client that offers no roots: no project anywhere."""
    home = tmp_path_factory.mktemp("nowhere")
    connection = serve(home, home)
    yield connection
    connection.close()


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_inspect_project_with_a_path_reports_exactly_its_findings(
    name: str, projects: dict[str, Path], nowhere: McpConnection
) -> None:
    result = nowhere.call("inspect_project", {"path": str(projects[name])})
    data = result.structured_content
    assert data["via"] == "path" and data["lookedIn"] == [str(projects[name])]
    assert findings_of(data) == FINDINGS[name]


def test_no_project_found_is_an_answer_not_an_error(nowhere: McpConnection) -> None:
    result = nowhere.call("inspect_project")
    data = result.structured_content
    assert not result.is_error
    assert data["found"] is False and data["via"] == "cwd" and data["findings"] == []
    assert "No Node.js project found" in text_of(result)


def test_no_project_found_leaves_other_results_unchanged(nowhere: McpConnection) -> None:
    search = nowhere.call("search_docs", {"query": "IMQService expose"})
    assert not search.is_error and "versionNote" not in search.structured_content
    assert not text_of(search).startswith("Version note")
    listed = nowhere.call("list_packages")
    assert "versionNote" not in listed.structured_content


@pytest.mark.parametrize("path", ["relative/folder", "/no/such/folder/anywhere", "/etc/hostname"])
def test_a_path_that_is_not_a_folder_gets_a_guided_error(nowhere: McpConnection, path: str) -> None:
    result = nowhere.call("inspect_project", {"path": path})
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "invalid_arguments" and "absolute path" in error["message"]
    assert "omit path" in error["suggestedAction"]


def test_inspect_project_schema_is_strict(nowhere: McpConnection) -> None:
    tool = next(tool for tool in nowhere.tools() if tool.name == "inspect_project")
    assert tool.input_schema["additionalProperties"] is False
    assert tool.annotations.read_only_hint is True and tool.annotations.destructive_hint is False
    result = nowhere.call("inspect_project", {"folder": "/tmp"})
    assert result.is_error and result.structured_content["error"]["code"] == "invalid_arguments"


# --- the version notes -----------------------------------------------------------------


@pytest.fixture(scope="module")
def legacy_project(
    projects: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpConnection]:
    """A server whose client's root is the @imqueue/rpc 1.x project."""
    home = tmp_path_factory.mktemp("legacy")
    connection = serve(home, home, list_roots_callback=roots_of(projects["rpc_one"]))
    yield connection
    connection.close()


def assert_noted(result: Any) -> None:
    assert not result.is_error, text_of(result)
    note = result.structured_content["versionNote"]
    assert "\n" not in note and "@imqueue/rpc 1.10.3" in note and "3.7.2" in note
    assert text_of(result).startswith(f"Version note: {note}\n")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search_docs", {"query": "IMQService expose decorator"}),
        ("search_docs", {"query": "options", "package": "rpc", "limit": 1}),
        ("get_doc", {"url": "https://imqueue.org/api/rpc/latest/"}),
        ("get_doc", {"url": "https://imqueue.org/api/rpc/latest/rpc.expose/"}),
        ("list_packages", {}),
        ("package_status", {"package": "rpc"}),
        ("package_status", {}),
        ("scaffold_service", {"name": "user"}),
        ("scaffold_client", {"service": "user"}),
    ],
)
def test_results_about_a_package_used_at_another_major_say_so_with_both_versions(
    legacy_project: McpConnection, tool: str, arguments: dict[str, Any]
) -> None:
    assert_noted(legacy_project.call(tool, arguments))


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("get_doc", {"url": "https://imqueue.org/get-started/"}),
        ("get_doc", {"url": "https://imqueue.org/api/core/latest/"}),
        ("package_status", {"package": "core"}),
        ("search_docs", {"query": "pg-cache cacheWith"}),
    ],
)
def test_results_about_other_packages_carry_no_note(
    legacy_project: McpConnection, tool: str, arguments: dict[str, Any]
) -> None:
    result = legacy_project.call(tool, arguments)
    assert not result.is_error, text_of(result)
    if tool == "search_docs":
        assert not any("/api/rpc/" in hit["url"] for hit in result.structured_content["results"])
    assert "versionNote" not in result.structured_content
    assert "Version note" not in text_of(result)


def test_a_project_at_the_documented_majors_gets_no_notes(projects: dict[str, Path], tmp_path: Path) -> None:
    connection = serve(tmp_path, projects["current"])
    try:
        results = [
            connection.call("get_doc", {"url": "https://imqueue.org/api/rpc/latest/"}),
            connection.call("list_packages"),
            connection.call("scaffold_service", {"name": "user"}),
        ]
    finally:
        connection.close()
    for result in results:
        assert not result.is_error and "versionNote" not in result.structured_content


def test_without_any_package_facts_versions_are_not_compared_and_it_says_so(
    projects: dict[str, Path], tmp_path: Path
) -> None:
    args = ["--offline", "--snapshot", str(tmp_path / "no-snapshot.msgpack")]
    connection = stdio_connection(args, server_environment(tmp_path), projects["rpc_one"], "legacy")
    try:
        report = connection.call("inspect_project")
        search = connection.call("scaffold_service", {"name": "user"})
    finally:
        connection.close()
    data = report.structured_content
    assert data["factsUnavailable"] is True
    assert findings_of(data) == {("remove-comments", None), ("legacy-decorators-off", None)}
    assert "versions were not compared" in text_of(report)
    assert not search.is_error and "versionNote" not in search.structured_content

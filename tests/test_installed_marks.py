"""search_docs and find_examples with a project in reach (the client's roots, else the working
directory), through the SDK's client against the real server: API hits whose symbol the installed
version declares differently, or lacks, carry `installed`; installed-only symbols that match the
query come back as `installedOnly`. On the two real installs (tests/framework1: rpc 1.17.0 and
core 2.0.26 from the registry; the 3.x runtime from ../shared/vendor), checked against their .d.ts
files. Without a project, and on the hosted server, the answers are as they were."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from imq_real import CORE1, FRAMEWORK1, INSTALL, RPC1, RPC3, RPC_API, SERVICE_RUNTIME
from mcp_types import ListRootsResult, Root
from pydantic import FileUrl

from conftest import (
    HttpServer,
    McpConnection,
    built_snapshot,
    offline_args,
    require_external,
    server_environment,
    stdio_connection,
)
from fixtures.projects import write_project


@pytest.fixture(scope="module")
def installs() -> None:
    require_external(RPC1.is_dir(), "tests/framework1", "bash .ci/install-framework.sh")
    require_external(RPC3.is_dir(), "the 3.x service runtime", INSTALL)


@pytest.fixture(scope="module")
def in_1x(installs: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    """A server whose working directory is the 1.x project (its client offers no roots)."""
    home = tmp_path_factory.mktemp("home")
    args = offline_args(home / "snapshot")
    connection = stdio_connection(args, server_environment(home), FRAMEWORK1, "legacy")
    yield connection
    connection.close()


def declarations(folder: Path) -> str:
    return " ".join(
        " ".join(p.read_text(encoding="utf-8").split())
        for p in sorted(folder.rglob("*.d.ts"))
        if "node_modules" not in p.relative_to(folder).parts
    )


def hit_at(data: dict[str, Any], url: str) -> dict[str, Any]:
    return next(hit for hit in data["results"] if hit["url"] == url)


def roots_of(folder: Path) -> Any:
    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl(folder.as_uri()), name=folder.name)])

    return list_roots


def test_an_api_hit_declared_differently_where_installed_is_marked(in_1x: McpConnection) -> None:
    result = in_1x.call("search_docs", {"query": "remote decorator", "limit": 4})
    assert not result.is_error
    mark = hit_at(result.structured_content, RPC_API + "rpc.remote/")["installed"]
    assert (mark["package"], mark["version"], mark["symbol"]) == ("@imqueue/rpc", "1.17.0", "remote")
    assert mark["status"] == "signature-changed"
    assert mark["signature"].startswith("function remote(): (target: any")
    assert "remote(): (target: any, methodName: string" in declarations(RPC1)
    assert "export declare function remote(): any" in declarations(RPC3)
    assert "## Against the version your project has installed" in result.content[-1].text


def test_an_api_hit_missing_from_the_installed_version_is_marked(in_1x: McpConnection) -> None:
    data = in_1x.call("search_docs", {"query": "per-call timeout of a client", "limit": 4}).structured_content
    mark = hit_at(data, RPC_API + "rpc.imqclientoptions.calltimeout/")["installed"]
    assert mark == {
        "package": "@imqueue/rpc",
        "version": "1.17.0",
        "symbol": "IMQClientOptions.callTimeout",
        "status": "not-installed",
    }
    assert "callTimeout" not in declarations(RPC1) and "callTimeout?: number" in declarations(RPC3)


def test_installed_only_symbols_matching_the_query_are_hits_of_their_own(in_1x: McpConnection) -> None:
    result = in_1x.call("search_docs", {"query": "promisify an object", "limit": 3})
    data = result.structured_content
    assert all(hit["title"] != "promisify" for hit in data["results"])  # the docs have no such symbol
    only = {entry["name"]: entry for entry in data["installedOnly"]}
    promisify = only["promisify"]
    assert promisify["kind"] == "installed-only" and promisify["symbolKind"] == "function"
    assert (promisify["package"], promisify["version"]) == ("@imqueue/core", "2.0.26")
    assert promisify["signature"] in declarations(CORE1)
    assert promisify["summary"] == "Makes given object methods promise-like"
    assert "## Only in the version your project has installed" in result.content[-1].text
    # the package filter keeps to one package's symbols
    rpc_only = in_1x.call(
        "search_docs", {"query": "promisify an object", "package": "rpc"}
    ).structured_content
    assert "promisify" not in {entry["name"] for entry in rpc_only.get("installedOnly", [])}
    # and a query no installed-only symbol answers adds none
    assert "installedOnly" not in in_1x.call("search_docs", {"query": "remote decorator"}).structured_content


def test_the_clients_roots_bring_the_project_into_reach(installs: None, tmp_path: Path) -> None:
    connection = stdio_connection(
        offline_args(tmp_path / "snapshot"),
        server_environment(tmp_path),
        tmp_path,  # the server runs in an empty folder: only the roots lead to the project
        "legacy",
        list_roots_callback=roots_of(FRAMEWORK1),
    )
    try:
        data = connection.call("search_docs", {"query": "remote decorator", "limit": 4}).structured_content
        assert hit_at(data, RPC_API + "rpc.remote/")["installed"]["status"] == "signature-changed"
    finally:
        connection.close()


def test_the_docs_release_installed_marks_nothing(installs: None, tmp_path: Path) -> None:
    project = SERVICE_RUNTIME.parent
    connection = stdio_connection(
        offline_args(tmp_path / "snapshot"), server_environment(tmp_path), project, "legacy"
    )
    try:
        data = connection.call("search_docs", {"query": "remote decorator", "limit": 4}).structured_content
        assert "installed" not in hit_at(data, RPC_API + "rpc.remote/")
        assert all("installed" not in hit for hit in data["results"])
    finally:
        connection.close()


def test_without_a_project_nothing_changes(installs: None, tmp_path: Path) -> None:
    connection = stdio_connection(
        offline_args(tmp_path / "snapshot"), server_environment(tmp_path), tmp_path, "legacy"
    )
    try:
        data = connection.call(
            "search_docs", {"query": "promisify an object remote decorator"}
        ).structured_content
        assert "installedOnly" not in data and all("installed" not in hit for hit in data["results"])
    finally:
        connection.close()


def test_the_hosted_server_marks_nothing_even_from_a_project_folder(installs: None, tmp_path: Path) -> None:
    server = HttpServer(offline_args(tmp_path / "snapshot"), server_environment(tmp_path), FRAMEWORK1)
    try:
        connection = McpConnection(server.url + "/mcp", "auto")
        try:
            data = connection.call(
                "search_docs", {"query": "remote decorator", "limit": 4}
            ).structured_content
            assert all("installed" not in hit for hit in data["results"]) and "installedOnly" not in data
            assert "remote" in {hit["title"] for hit in data["results"]}
        finally:
            connection.close()
    finally:
        server.close()


def test_find_examples_marks_an_api_pages_example_from_the_saved_pages(
    installs: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("snapshot")
    snapshot = built_snapshot(folder, pages=True)  # API pages' examples and signatures, no network
    home = tmp_path_factory.mktemp("home")
    args = ["--offline", "--snapshot", str(snapshot)]
    connection = stdio_connection(args, server_environment(home), FRAMEWORK1, "legacy")
    try:
        result = connection.call("find_examples", {"query": "classType function", "package": "rpc"})
        mark = hit_at(result.structured_content, RPC_API + "rpc.classtype/")["installed"]
        assert (mark["symbol"], mark["status"]) == ("classType", "not-installed")
        assert "classType" not in declarations(RPC1) and "classType" in declarations(RPC3)
        assert "## Against the version your project has installed" in result.content[-1].text
        changed = connection.call("find_examples", {"query": "expose decorator example", "limit": 6})
        changed = changed.structured_content
        mark = hit_at(changed, RPC_API + "rpc.expose/")["installed"]  # its signature from the saved page
        assert (
            mark["status"] == "signature-changed"
            and mark["signature"] == "function expose(): (...args: any[]) => any"
        )
        assert "function expose(): (...args: any[]) => any" in declarations(RPC1)
        only = connection.call("find_examples", {"query": "promisify an object"}).structured_content
        assert "promisify" in {entry["name"] for entry in only["installedOnly"]}
    finally:
        connection.close()


def test_a_package_without_declarations_marks_nothing_and_diffs_nothing(tmp_path: Path) -> None:
    """fixtures' rpc_one installs @imqueue/rpc 1.10.3 as a package.json alone: no .d.ts to read,
    so nothing can be said to be missing from it."""
    project = write_project("rpc_one", tmp_path / "project")
    assert not list((project / "node_modules" / "@imqueue" / "rpc").rglob("*.d.ts"))
    connection = stdio_connection(
        offline_args(tmp_path / "snapshot"), server_environment(tmp_path), project, "legacy"
    )
    try:
        data = connection.call("search_docs", {"query": "per-call timeout of a client"}).structured_content
        assert "versionNote" in data  # the project is in reach
        assert all("installed" not in hit for hit in data["results"]) and "installedOnly" not in data
        diff = connection.call("api_diff", {"package": "rpc"}).structured_content
        assert diff["found"] is False and diff["installed"] == "1.10.3"
        assert "nothing to compare" in diff["problems"][-1]
        api = connection.call("get_api", {"symbol": "IMQClientOptions.callTimeout"}).structured_content
        assert api["found"] is False and "difference" not in api
    finally:
        connection.close()

"""get_api through the SDK's client over stdio against the real server, on the two real
installs (tests/framework1: rpc 1.17.0 from the registry; the 3.x runtime built from
../shared/vendor): the installed signature and doc comment, fuzzy names, guided errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from imq_real import INSTALL, SERVICE_RUNTIME

from conftest import McpConnection, offline_args, require_external, server_environment, stdio_connection

REPO = Path(__file__).resolve().parent.parent
FRAMEWORK1 = REPO / "tests" / "framework1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("home")
    connection = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    yield connection
    connection.close()


def test_get_api_answers_from_the_installed_1x(server: McpConnection) -> None:
    require_external(
        (FRAMEWORK1 / "node_modules" / "@imqueue" / "rpc").is_dir(),
        "tests/framework1",
        "bash .ci/install-framework.sh",
    )
    result = server.call("get_api", {"symbol": "IMQClient.create", "path": str(FRAMEWORK1)})
    assert not result.is_error
    data = result.structured_content
    assert data["found"] and data["via"] == "path"
    sym = data["symbol"]
    assert (sym["package"], sym["version"]) == ("@imqueue/rpc", "1.17.0")
    assert (
        sym["signature"] == "static create(name: string, options?: Partial<IMQClientOptions>): Promise<any>"
    )
    assert sym["doc"]["summary"] == "Creates client for a service with the given name"
    text = (FRAMEWORK1 / "node_modules" / "@imqueue" / "rpc" / sym["file"]).read_text(encoding="utf-8")
    assert "Creates client for a service with the given name" in text
    # a name only the 3.x has: not found in 1.x, with the nearest names
    missing = server.call("get_api", {"symbol": "IMQClientOptions.callTimeout", "path": str(FRAMEWORK1)})
    assert not missing.is_error and missing.structured_content["found"] is False
    assert "IMQClientOptions" in " ".join(missing.structured_content["nearest"])


def test_get_api_answers_from_the_installed_3x(server: McpConnection) -> None:
    require_external((SERVICE_RUNTIME / "@imqueue" / "rpc").is_dir(), "the 3.x service runtime", INSTALL)
    result = server.call(
        "get_api",
        {"symbol": "imqclientoptions timeout", "package": "rpc", "path": str(SERVICE_RUNTIME.parent)},
    )
    data = result.structured_content
    assert data["found"] and data["symbol"]["name"] == "IMQClientOptions.timeout"
    assert data["symbol"]["version"] == "3.7.2" and data["symbol"]["doc"]["default"] == "30000"
    assert "```ts\ntimeout: number\n```" in result.content[0].text


def test_a_bad_path_is_refused_with_what_to_pass(server: McpConnection, tmp_path: Path) -> None:
    result = server.call("get_api", {"symbol": "IMQService", "path": "relative/dir"})
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "invalid_arguments" and "absolute path" in error["suggestedAction"]
    (tmp_path / "package.json").write_text("{}")
    empty = server.call("get_api", {"symbol": "IMQService", "path": str(tmp_path)})
    assert not empty.is_error and empty.structured_content["found"] is False
    assert "npm install" in empty.structured_content["problems"][0]


def test_without_a_project_in_reach_get_api_says_so_and_what_to_pass(server: McpConnection) -> None:
    """The server's folder (the test's home) holds no project: the answer says there is none in
    reach (it once read "under None") and the problem says where it looked and what to pass."""
    result = server.call("get_api", {"symbol": "IMQClient"})
    data = result.structured_content
    assert data["found"] is False and data["root"] is None
    first = result.content[0].text.splitlines()[0]
    expected = "No installed @imqueue declaration named 'IMQClient' (no project in reach: see below)."
    assert first == expected, first
    assert "None" not in result.content[0].text and data["problems"], result.content[0].text


def test_package_names_as_npm_writes_them_and_unknown_ones(server: McpConnection) -> None:
    """'@imqueue/rpc@3.7.2' is the installed rpc; another version written is named and the installed
    one read; a name that is no @imqueue package is refused with the known ones (unknown_package),
    by get_api and api_diff alike."""
    require_external((SERVICE_RUNTIME / "@imqueue" / "rpc").is_dir(), "the 3.x service runtime", INSTALL)
    path = str(SERVICE_RUNTIME.parent)
    exact = server.call("get_api", {"symbol": "IMQClient", "package": "@imqueue/rpc@3.7.2", "path": path})
    assert exact.structured_content["found"] and exact.structured_content["symbol"]["version"] == "3.7.2"
    other = server.call("get_api", {"symbol": "IMQClient", "package": "rpc@^1.17.0", "path": path})
    assert other.structured_content["found"]
    assert (
        "rpc@^1.17.0 was asked for; the project has 3.7.2 installed"
        in other.structured_content["problems"][0]
    )
    diff = server.call("api_diff", {"package": "@imqueue/core@3.4.2", "path": path})
    assert diff.structured_content["found"] and diff.structured_content["installed"] == "3.4.2"
    for tool, arguments in (("get_api", {"symbol": "IMQClient"}), ("api_diff", {})):
        refused = server.call(tool, {**arguments, "package": "nope", "path": path})
        assert refused.is_error, tool
        error = refused.structured_content["error"]
        assert error["code"] == "unknown_package" and "@imqueue/rpc" in error["message"], error


def test_a_symbol_of_a_package_the_project_lacks_names_the_package_and_its_install(
    server: McpConnection,
) -> None:
    """The 3.x runtime has rpc and core only: JobQueue is documented in @imqueue/job."""
    require_external((SERVICE_RUNTIME / "@imqueue" / "rpc").is_dir(), "the 3.x service runtime", INSTALL)
    result = server.call("get_api", {"symbol": "JobQueue", "path": str(SERVICE_RUNTIME.parent)})
    data = result.structured_content
    assert data["found"] is False and data["install"] == "npm install @imqueue/job"
    assert data["latest"]["package"] == "@imqueue/job" and data["latest"]["url"].startswith(
        "https://imqueue.org/api/job/"
    )
    assert data["difference"]["status"] == "not-installed"
    assert "`npm install @imqueue/job`" in result.content[0].text

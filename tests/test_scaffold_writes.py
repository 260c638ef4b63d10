"""scaffold_service and scaffold_client writing their files (issue 28 item 4), through the SDK's
client over stdio against the real server: a dry run by default, the files the reply lists and
nothing else, never over a file without overwrite, only inside the client's roots (else the
server's working directory), never through a symlink; and the hosted records take no folder.

The wired services themselves are built with tsc and run on Redis in benchmarks/journeys.py
(journey e), which tests/test_journeys_smoke.py runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_types import ListRootsResult, Root
from pydantic import FileUrl

from conftest import HttpServer, McpConnection, offline_args, server_environment, stdio_connection

METHODS = [{"name": "reserve", "params": [{"name": "sku", "type": "string"}], "returns": "boolean"}]


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def files_under(folder: Path) -> set[str]:
    return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspace")


@pytest.fixture(scope="module")
def local(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    """A client offering no roots: the server's working directory (`workspace`) is the allowed folder."""
    home = tmp_path_factory.mktemp("home")
    connection = stdio_connection(offline_args(home), server_environment(home), workspace, "auto")
    yield connection
    connection.close()


def test_with_a_folder_the_reply_is_a_dry_run_and_nothing_is_written(
    local: McpConnection, workspace: Path
) -> None:
    target = workspace / "dry"
    result = local.call("scaffold_service", {"name": "inventory", "methods": METHODS, "path": str(target)})
    assert not result.is_error, text_of(result)
    written = result.structured_content["written"]
    assert written["dryRun"] is True and written["path"] == str(target)
    listed = [file["path"] for file in result.structured_content["files"]]
    assert [each["path"] for each in written["files"]] == listed
    assert {each["action"] for each in written["files"]} == {"create"}
    assert not target.exists()
    assert "Dry run: nothing was written" in text_of(result) and "dry_run: false" in text_of(result)


def test_a_write_puts_exactly_the_listed_files_and_a_second_refuses_to_replace_an_edit(
    local: McpConnection, workspace: Path
) -> None:
    target = workspace / "inventory"
    arguments = {"name": "inventory", "methods": METHODS, "path": str(target), "dry_run": False}
    result = local.call("scaffold_service", arguments)
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert data["written"]["dryRun"] is False
    assert files_under(target) == {file["path"] for file in data["files"]}
    for file in data["files"]:
        assert (target / file["path"]).read_text() == file["content"]
    assert f"Written to {target}" in text_of(result)

    # The same call again changes nothing and says so.
    again = local.call("scaffold_service", arguments)
    assert {each["action"] for each in again.structured_content["written"]["files"]} == {"unchanged"}

    # The user edits the service; a scaffold without overwrite refuses, and writes nothing at all.
    service = target / "src" / "InventoryService.ts"
    service.write_text("// my own code\n")
    (target / "tsconfig.json").unlink()
    refused = local.call("scaffold_service", arguments)
    assert refused.is_error
    assert refused.structured_content["error"]["code"] == "argument_refused"
    assert str(service) in text_of(refused) and "overwrite: true" in text_of(refused)
    assert service.read_text() == "// my own code\n" and not (target / "tsconfig.json").exists()
    # A dry run shows the conflict instead of refusing.
    dry = local.call("scaffold_service", {**arguments, "dry_run": True})
    actions = {each["path"]: each["action"] for each in dry.structured_content["written"]["files"]}
    assert actions["src/InventoryService.ts"] == "conflict" and actions["tsconfig.json"] == "create"
    assert "copy the new methods" in text_of(refused)  # adding a method need not replace the class
    # overwrite: true replaces it, and keeps what it held beside it: the user's code is not lost.
    backup = target / "src" / "InventoryService.ts.orig"
    dry = local.call("scaffold_service", {**arguments, "dry_run": True, "overwrite": True})
    placed = {each["path"]: each for each in dry.structured_content["written"]["files"]}
    assert placed["src/InventoryService.ts"]["backup"] == str(backup) and not backup.exists()
    assert "what it holds would be kept as InventoryService.ts.orig" in text_of(dry)
    replaced = local.call("scaffold_service", {**arguments, "overwrite": True})
    assert not replaced.is_error, text_of(replaced)
    assert service.read_text() == file_content(replaced.structured_content, "src/InventoryService.ts")
    assert backup.read_text() == "// my own code\n"
    assert "what it held is kept as InventoryService.ts.orig" in text_of(replaced)
    # A second overwrite keeps that backup and puts the next one beside it.
    service.write_text("// my second edit\n")
    local.call("scaffold_service", {**arguments, "overwrite": True})
    assert backup.read_text() == "// my own code\n"
    assert (target / "src" / "InventoryService.ts.orig-2").read_text() == "// my second edit\n"


def file_content(data: dict[str, Any], path: str) -> str:
    return str(next(file["content"] for file in data["files"] if file["path"] == path))


@pytest.mark.parametrize(
    "where",
    ["relative/folder", "outside", "through-a-link", "nul", "symlink-loop"],
)
def test_a_folder_outside_the_allowed_one_is_refused_and_nothing_is_written(
    local: McpConnection, workspace: Path, tmp_path: Path, where: str
) -> None:
    outside = tmp_path / "outside"
    if where == "outside":
        path = str(outside)
    elif where == "through-a-link":
        os.symlink(tmp_path, workspace / "link-out", target_is_directory=True)
        path = str(workspace / "link-out" / "outside")
    elif where == "nul":
        path = str(workspace / "a\x00b")
    elif where == "symlink-loop":
        os.symlink(workspace / "loop-b", workspace / "loop-a")
        os.symlink(workspace / "loop-a", workspace / "loop-b")
        path = str(workspace / "loop-a" / "x")
    else:
        path = where
    for tool, arguments in [
        ("scaffold_service", {"name": "inventory", "path": path, "dry_run": False}),
        ("scaffold_client", {"service": "inventory", "path": path, "dry_run": False}),
    ]:
        result = local.call(tool, arguments)
        assert result.is_error, (tool, where)
        error = result.structured_content["error"]
        assert error["code"] == "argument_refused"
        assert "nothing was written" in error["message"], error
        assert where == "symlink-loop" or str(workspace) in error["suggestedAction"], error
    assert not outside.exists()


def test_a_symlinked_file_or_folder_inside_the_target_is_never_written_through(
    local: McpConnection, workspace: Path, tmp_path: Path
) -> None:
    target = workspace / "linked"
    (target / "src").mkdir(parents=True)
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    os.symlink(secret, target / "package.json")
    result = local.call(
        "scaffold_service", {"name": "linked", "path": str(target), "dry_run": False, "overwrite": True}
    )
    assert result.is_error and "symbolic link" in text_of(result)
    assert secret.read_text() == "{}" and files_under(target) == {"package.json"}

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = workspace / "linked-src"
    other.mkdir()
    os.symlink(elsewhere, other / "src", target_is_directory=True)
    result = local.call("scaffold_service", {"name": "linked", "path": str(other), "dry_run": False})
    assert result.is_error and "symbolic link" in text_of(result)
    assert list(elsewhere.iterdir()) == [] and files_under(other) == set()


@pytest.mark.parametrize(
    ("tool", "dry_run", "name"),
    [
        ("scaffold_service", True, "a" * 300),
        ("scaffold_service", False, "\u00e9" * 130),  # 130 characters, 260 bytes
        ("scaffold_client", True, "\u00e9" * 130),
        ("scaffold_client", False, "a" * 300),
    ],
)
def test_a_folder_name_over_name_max_is_refused_up_front_naming_it_dry_run_or_not(
    local: McpConnection, workspace: Path, tool: str, dry_run: bool, name: str
) -> None:
    """No file system takes a name over 255 bytes: the refusal comes before any look at the disk,
    so a dry run is not told that files written before it stay."""
    subject = {"scaffold_service": "name", "scaffold_client": "service"}[tool]
    path = str(workspace / name / "svc")
    result = local.call(tool, {subject: "inventory", "path": path, "dry_run": dry_run})
    assert result.is_error
    error = result.structured_content["error"]
    assert error["code"] == "invalid_scaffold_input"
    assert f"folder name '{name[:40]}...' is {len(name.encode())} bytes" in error["message"], error
    assert "nothing was written" in error["message"] and "written before" not in error["message"]
    assert not any(entry.name.startswith(name[:40]) for entry in workspace.iterdir())


def test_the_client_scaffold_writes_its_caller_project_and_names_the_generate_call(
    local: McpConnection, workspace: Path
) -> None:
    target = workspace / "caller"
    result = local.call(
        "scaffold_client",
        {
            "service": "InventoryService",
            "methods": METHODS,
            "call_timeout_ms": 2500,
            "path": str(target),
            "dry_run": False,
        },
    )
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert (
        files_under(target)
        == {file["path"] for file in data["files"]}
        == {"src/caller.ts", "package.json", "tsconfig.json"}
    )
    assert "callTimeout: 2500" in (target / "src" / "caller.ts").read_text()
    generate = data["generate"]["arguments"]
    assert generate == {"service": "InventoryService", "path": f"{target}/src/clients"}
    assert f"path: '{target}/src/clients'" in text_of(result)


def test_calls_wire_the_client_in_and_name_the_generate_call_for_it(
    local: McpConnection, workspace: Path
) -> None:
    target = workspace / "order"
    result = local.call(
        "scaffold_service",
        {"name": "OrderService", "calls": ["inventory"], "call_timeout_ms": 4000, "path": str(target)},
    )
    assert not result.is_error, text_of(result)
    data = result.structured_content
    (called,) = data["calls"]
    assert called["service"] == called["queue"] == "InventoryService"
    assert called["generate"] == {
        "tool": "generate_client",
        "arguments": {"service": "InventoryService", "path": f"{target}/src/clients"},
    }
    source = file_content(data, "src/OrderService.ts")
    assert "import { inventoryService } from './clients/InventoryService.js';" in source
    assert "new inventoryService.InventoryClient(clientOptions, 'InventoryService')" in source
    assert (
        "await this.inventoryClient.start();" in source and "await this.inventoryClient.destroy();" in source
    )
    assert "callTimeout: 4000" in file_content(data, "src/config.ts")
    assert data["callTimeoutMs"] == 4000 and data["callTimeoutDefaulted"] is False
    # Wiring mistakes are named, not scaffolded.
    itself = local.call("scaffold_service", {"name": "OrderService", "calls": ["order"]})
    assert itself.is_error and "cannot list itself" in text_of(itself)
    lone_timeout = local.call("scaffold_service", {"name": "OrderService", "call_timeout_ms": 10})
    assert lone_timeout.is_error and "pass calls" in text_of(lone_timeout)


def test_the_clients_roots_are_the_allowed_folders_when_it_offers_them(tmp_path: Path) -> None:
    root, cwd = tmp_path / "root", tmp_path / "cwd"
    root.mkdir()
    cwd.mkdir()

    async def list_roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl(root.as_uri()))])

    connection = stdio_connection(
        offline_args(tmp_path / "home"),
        server_environment(tmp_path / "home"),
        cwd,
        "legacy",
        list_roots_callback=list_roots,
    )
    try:
        inside = connection.call("scaffold_service", {"name": "a", "path": str(root / "a"), "dry_run": False})
        assert not inside.is_error, text_of(inside)
        assert (root / "a" / "package.json").is_file()
        refused = connection.call("scaffold_service", {"name": "a", "path": str(cwd / "a"), "dry_run": False})
        assert refused.is_error and str(root) in text_of(refused) and not (cwd / "a").exists()
        generate = connection.call("generate_client", {"service": "AService", "path": str(cwd / "clients")})
        assert generate.is_error and generate.structured_content["error"]["code"] == "argument_refused"
        # The same folders spelled relative to the server's working directory, or left to its default.
        for tool, arguments in (
            ("generate_client", {"service": "AService", "path": "clients"}),
            ("generate_client", {"service": "AService", "path": "../root/../cwd/clients"}),
            ("generate_client", {"service": "AService"}),
            ("create_service", {"name": "svc", "path": "../cwd", "apply": True}),
            ("create_service", {"name": "svc", "path": str(cwd), "apply": True}),
            ("create_service", {"name": "svc", "apply": True}),
        ):
            refused = connection.call(tool, arguments)
            assert refused.is_error, (tool, arguments, text_of(refused))
            assert refused.structured_content["error"]["code"] == "argument_refused", text_of(refused)
            assert "outside the folders this server may write in" in text_of(refused)
        assert sorted(path.name for path in cwd.iterdir()) == []  # nothing was written there
        inside = connection.call("create_service", {"name": "svc", "path": str(root), "apply": False})
        assert "outside the folders" not in text_of(inside)  # imq's own dry run (or its absence) answers
    finally:
        connection.close()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_hosted_scaffolders_take_no_folder(hosted: HttpServer) -> None:
    connection = McpConnection(hosted.url + "/mcp", "auto")
    try:
        tools = {tool.name: tool for tool in connection.tools()}
        for name in ("scaffold_service", "scaffold_client"):
            assert tools[name].annotations.read_only_hint is True
            assert {"path", "dry_run", "overwrite"}.isdisjoint(tools[name].input_schema["properties"])
        assert "calls" in tools["scaffold_service"].input_schema["properties"]
        result = connection.call("scaffold_service", {"name": "a", "path": "/tmp/a"})
        assert result.is_error and "path" in text_of(result)
    finally:
        connection.close()


def test_a_dry_run_the_disk_refuses_says_nothing_was_written(local: McpConnection, workspace: Path) -> None:
    """A path past PATH_MAX (4,096 bytes) whose every name fits: the dry run's look at the disk
    fails (ENAMETOOLONG), and it is not told that files written before it stay."""
    path = str(workspace)
    while len(path) < 4096 - 201:
        path += "/" + "a" * 200
    path += "/" + "b" * (4096 - len(path) - 1)
    result = local.call("scaffold_service", {"name": "inventory", "path": path, "dry_run": True})
    assert result.is_error
    message = result.structured_content["error"]["message"]
    assert "for a dry run failed" in message and "nothing was written" in message, message
    assert "written before" not in message and not (workspace / ("a" * 200)).exists()


def test_a_service_class_the_workspace_declares_by_the_exact_name_keeps_that_name(
    local: McpConnection, workspace: Path
) -> None:
    """imq's template names the class after the project (greeter: class Greeter, queue 'Greeter');
    read as the scaffolds read names, the client called GreeterService, where nobody listens."""
    service = workspace / "greeter" / "src"
    service.mkdir(parents=True)
    (service / "Greeter.ts").write_text(
        "import { IMQService, expose } from '@imqueue/rpc';\nexport class Greeter extends IMQService {}\n"
    )
    greeter = local.call("scaffold_client", {"service": "Greeter"}).structured_content
    assert greeter["service"] == "Greeter" and greeter["namespace"] == "greeter"
    assert greeter["generate"]["arguments"]["service"] == "Greeter"
    assert greeter["declaredIn"] == str(service / "Greeter.ts")
    assert "new greeter.GreeterClient(clientOptions, 'Greeter')" in greeter["example"]["content"]
    other = local.call("scaffold_client", {"service": "Billing"}).structured_content
    assert other["service"] == "BillingService" and "declaredIn" not in other  # the scaffolds' name

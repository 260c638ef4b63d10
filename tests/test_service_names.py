"""A service name is a name, never a path (issue 26 §4), on the real stdio server and real imq.

`logs(action: "dump", services: ["../../../outside/secret"])` returned a .log file outside imq's
log folder, and generate_client took `../x` as a service name. Every tool that takes a service
name (create_service, generate_client, fleet, logs; the scaffolders allow letters, digits,
spaces, '-' and '_' only) refuses a separator, '.', '..' and an absolute path before anything
runs, and a name whose file in its folder (imq's <var>/<name>.log, the client's <name>.ts, a
service folder under fleet's path) is a symlink leading out of that folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from imq_real import real_imq_environment, require_real_imq

from conftest import McpConnection, origin_args, stdio_connection

SECRET = "TOP-SECRET-LINE-OUTSIDE-THE-LOG-FOLDER"


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A home with imq's log folder (one honest log, one symlink out), a secret beside it, and a
    workspace with a service folder linked out of it and a client file linked out of it."""
    home = tmp_path_factory.mktemp("names-home")
    outside = home / "outside"
    outside.mkdir()
    (outside / "secret.log").write_text(SECRET + "\n")
    (outside / "service").mkdir()
    (outside / "Target.ts").write_text("// not the server's to write\n")
    var = home / "imq" / ".imq" / "var"
    var.mkdir(parents=True)
    (var / "user.log").write_text("user service started\n")
    (var / "evil.log").symlink_to(outside / "secret.log")
    work = home / "work"
    work.mkdir()
    (work / "linked").symlink_to(outside / "service")
    (work / "Linked.ts").symlink_to(outside / "Target.ts")
    return {"home": home, "work": work, "outside": outside}


@pytest.fixture(scope="module")
def local(site_origins: dict[str, str], machine: dict[str, Path]) -> Iterator[McpConnection]:
    require_real_imq()
    env = real_imq_environment(machine["home"])
    connection = stdio_connection(origin_args(site_origins), env, machine["work"], "legacy")
    yield connection
    connection.close()


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def refused(result: Any) -> str:
    assert result.is_error, text_of(result)
    assert result.structured_content["error"]["code"] == "argument_refused", result.structured_content
    return text_of(result)


@pytest.mark.parametrize("name", ["../../../outside/secret", "/etc/passwd", "..", ".", "a\\b", "x/y"])
def test_logs_refuses_a_service_name_that_is_a_path(local: McpConnection, name: str) -> None:
    text = refused(local.call("logs", {"action": "dump", "services": [name]}))

    assert SECRET not in text and "Nothing was run" in text


def test_logs_refuses_a_log_that_links_out_of_imqs_log_folder(local: McpConnection) -> None:
    text = refused(local.call("logs", {"action": "dump", "services": ["evil"]}))

    assert SECRET not in text and "is a symlink to" in text


def test_logs_still_dumps_a_log_in_its_folder(local: McpConnection) -> None:
    result = local.call("logs", {"action": "dump", "services": ["user"]})

    assert not result.is_error, text_of(result)
    assert "user service started" in text_of(result)


@pytest.mark.parametrize("name", ["../x", "/tmp/x", "..", "a/b"])
def test_generate_client_refuses_a_service_name_that_is_a_path(local: McpConnection, name: str) -> None:
    text = refused(local.call("generate_client", {"service": name}))

    assert "path" in text or "folder" in text


def test_generate_client_refuses_a_client_file_that_links_out_of_its_folder(
    local: McpConnection, machine: dict[str, Path]
) -> None:
    text = refused(local.call("generate_client", {"service": "Linked", "overwrite": True}))

    assert "is a symlink to" in text
    assert (machine["outside"] / "Target.ts").read_text() == "// not the server's to write\n"


@pytest.mark.parametrize("name", ["../outside", "/etc", ".."])
def test_fleet_refuses_a_service_name_that_is_a_path(local: McpConnection, name: str) -> None:
    refused(local.call("fleet", {"action": "status", "services": [name]}))


def test_fleet_refuses_a_service_folder_that_links_out_of_its_path(local: McpConnection) -> None:
    text = refused(local.call("fleet", {"action": "stop", "services": ["linked"]}))

    assert "is a symlink to" in text


@pytest.mark.parametrize("name", ["../escape", "/tmp/escape", "a/b"])
def test_create_service_refuses_a_name_that_is_a_path(
    local: McpConnection, machine: dict[str, Path], name: str
) -> None:
    refused(local.call("create_service", {"name": name, "flags": ["-e", "you@example.com"]}))

    assert not (machine["home"] / "escape").exists() and not Path("/tmp/escape").exists()

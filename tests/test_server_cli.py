"""The CLI-bridge tools over stdio, against the imq stand-in (fixtures/imq/imq).

PATH holds only the stand-in and this Python, so no real npm or imq is ever reached. A
second server, whose imq sleeps before doing anything, starts its call when this module's
fixture is set up, so the timeout test mostly waits while the others run.
"""

from __future__ import annotations

import concurrent.futures
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import IMQ_STANDIN_DIR, McpConnection, server_environment, stdio_connection

BRIDGE_TIMEOUT_SECONDS = 15  # cli_bridge.STATUS_TIMEOUT_SECONDS, the shortest fixed timeout


@dataclass
class Bridge:
    cli: McpConnection
    home: Path
    hanging: concurrent.futures.Future[Any]
    hanging_started: float


def isolated_environment(home: Path, *, with_imq: bool = True, **extra: str) -> dict[str, str]:
    env = server_environment(home, **extra)
    dirs = [str(Path(sys.executable).parent)]
    env["PATH"] = os.pathsep.join([str(IMQ_STANDIN_DIR), *dirs] if with_imq else dirs)
    return env


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    home = tmp_path_factory.mktemp("cli")
    (home / "fleet" / "billing").mkdir(parents=True)
    (home / "fleet" / "billing" / "package.json").write_text('{"name": "billing", "scripts": {"dev": "x"}}')
    slow_home = tmp_path_factory.mktemp("slow")
    slow = stdio_connection([], isolated_environment(slow_home, IMQ_STANDIN_SLEEP="120"), slow_home, "legacy")
    started = time.monotonic()
    hanging = slow.submit(lambda client: client.call_tool("cli_help", {"command": "ctl"}))  # collected last
    cli = stdio_connection([], isolated_environment(home, IMQ_STANDIN_SERVICES="UserService"), home, "legacy")
    yield Bridge(cli, home, hanging, started)
    cli.close()
    hanging.result(90)
    slow.close()


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def test_cli_status_reports_the_installed_version(bridge: Bridge) -> None:
    result = bridge.cli.call("cli_status")
    assert not result.is_error and "5.2.2" in text_of(result)


def test_cli_help_prints_the_flags_of_a_command(bridge: Bridge) -> None:
    result = bridge.cli.call("cli_help", {"command": "service create"})
    assert not result.is_error and "--email" in text_of(result)
    assert "\x1b[" not in text_of(result)


def test_create_service_is_a_dry_run_by_default(bridge: Bridge) -> None:
    target = bridge.home / "orders"
    result = bridge.cli.call("create_service", {"name": "orders", "path": str(target)})
    assert not result.is_error and "--dry-run" in text_of(result)
    assert not target.exists()


def test_create_service_writes_only_with_apply(bridge: Bridge) -> None:
    target = bridge.home / "payments"
    arguments = {"name": "payments", "path": str(target), "apply": True, "flags": ["--email=dev@example.com"]}
    result = bridge.cli.call("create_service", arguments)
    assert not result.is_error and "--dry-run" not in text_of(result)
    assert (target / "package.json").is_file()


def test_a_value_imq_would_prompt_for_fails_fast_with_the_flag_to_pass(bridge: Bridge) -> None:
    result = bridge.cli.call(
        "create_service", {"name": "audit", "path": str(bridge.home / "audit"), "apply": True}
    )
    assert result.is_error and "--email" in text_of(result)
    assert not (bridge.home / "audit").exists()


def test_generate_client_writes_then_asks_before_overwriting(bridge: Bridge) -> None:
    arguments = {"service": "UserService", "path": str(bridge.home / "clients")}
    first = bridge.cli.call("generate_client", arguments)
    written = bridge.home / "clients" / "UserService.ts"
    assert not first.is_error and written.is_file()
    assert first.structured_content["path"] == str(written)
    assert first.structured_content["content"] == written.read_text(encoding="utf-8")
    assert (first.structured_content["namespace"], first.structured_content["client"]) == (
        "userService",
        "UserClient",
    )
    again = bridge.cli.call("generate_client", arguments)
    assert again.is_error and "overwrite" in text_of(again)
    forced = bridge.cli.call("generate_client", {**arguments, "overwrite": True})
    assert not forced.is_error


def test_generate_client_for_a_service_that_is_not_running_says_so(bridge: Bridge) -> None:
    result = bridge.cli.call("generate_client", {"service": "Nowhere", "path": str(bridge.home / "clients")})
    assert result.is_error and "running" in text_of(result)


def test_config_set_then_get(bridge: Bridge) -> None:
    assert not bridge.cli.call("config", {"action": "set", "option": "author", "value": "Ann"}).is_error
    result = bridge.cli.call("config", {"action": "get", "option": "author"})
    assert not result.is_error and "Ann" in text_of(result)


def test_config_init_is_refused_because_it_prompts(bridge: Bridge) -> None:
    result = bridge.cli.call("config", {"action": "init"})
    assert result.is_error and "set" in text_of(result)


def test_fleet_status_then_start_then_logs(bridge: Bridge) -> None:
    fleet = str(bridge.home / "fleet")
    status = bridge.cli.call("fleet", {"action": "status", "path": fleet})
    assert not status.is_error and "billing" in text_of(status)
    assert not bridge.cli.call("fleet", {"action": "start", "path": fleet}).is_error
    dumped = bridge.cli.call("logs", {"action": "dump"})
    assert not dumped.is_error and "billing" in text_of(dumped) and "--no-follow" in text_of(dumped)
    assert not bridge.cli.call("fleet", {"action": "stop", "path": fleet}).is_error
    cleaned = bridge.cli.call("logs", {"action": "clean"})
    assert not cleaned.is_error and "--clean" in text_of(cleaned)


def test_an_action_outside_the_enum_is_refused_by_the_schema(bridge: Bridge) -> None:
    result = bridge.cli.call("fleet", {"action": "destroy"})
    assert result.is_error and "destroy" in text_of(result)


def test_cli_install_without_npm_says_what_to_install(bridge: Bridge) -> None:
    result = bridge.cli.call("cli_install")
    assert result.is_error and "npm" in text_of(result)


def test_without_imq_the_tools_return_an_install_hint(tmp_path: Path) -> None:
    absent = stdio_connection([], isolated_environment(tmp_path, with_imq=False), tmp_path, "legacy")
    try:
        status = absent.call("cli_status")
        assert not status.is_error and "cli_install" in text_of(status)
        help_result = absent.call("cli_help")
        assert help_result.is_error and "cli_install" in text_of(help_result)
        assert not absent.call("scaffold_client", {"service": "user"}).is_error
    finally:
        absent.close()


def test_a_command_that_hangs_is_stopped_at_its_timeout(bridge: Bridge) -> None:
    result = bridge.hanging.result(90)
    elapsed = time.monotonic() - bridge.hanging_started
    assert result.is_error and "Timed out" in text_of(result)
    assert BRIDGE_TIMEOUT_SECONDS <= elapsed < 60

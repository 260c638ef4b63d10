"""The CLI-bridge tools over stdio: ordinary behaviour on the real imq 5.2.2, faults on a stand-in.

The ordinary cases run the imq that .ci/install-imq.sh built (tests/imq_real.py), with a
temporary HOME, imq home and working folder; they skip naming the install command when it is
missing and fail in CI (IMQUEUE_MCP_CI=1). The full fleet/client-generate story on a running
service (Redis on 6379) lives in tests/test_imq_real_bridge.py.

Only the fault that real imq cannot be made to show stays on the stand-in (fixtures/imq/imq):
an imq that hangs. Its server starts its call when this module's first fixture is set up, so
the timeout test mostly waits while the others run. PATH of that server holds only the
stand-in and this Python, so no real npm or imq is reached there.
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
from imq_real import TEMPLATE, real_imq_environment, require_real_imq

from conftest import IMQ_STANDIN_DIR, McpConnection, server_environment, stdio_connection

BRIDGE_TIMEOUT_SECONDS = 15  # cli_bridge.STATUS_TIMEOUT_SECONDS, the shortest fixed timeout
EMAIL = ["--email=dev@example.com"]
OFFLINE = ["--no-use-git", "--no-install"]  # no git repository, no npm install


@dataclass
class Hanging:
    call: concurrent.futures.Future[Any]
    started: float


@dataclass
class Bridge:
    cli: McpConnection
    home: Path  # the server's working directory and HOME
    imq_home: Path  # IMQ_CLI_HOME


def isolated_environment(home: Path, *, standin: bool = False, **extra: str) -> dict[str, str]:
    """PATH holds this Python and nothing else, or the imq stand-in too when standin=True."""
    env = server_environment(home, **extra)
    dirs = [str(Path(sys.executable).parent)]
    env["PATH"] = os.pathsep.join([str(IMQ_STANDIN_DIR), *dirs] if standin else dirs)
    return env


@pytest.fixture(scope="module")
def hanging(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hanging]:
    """A server whose (stand-in) imq sleeps before doing anything; its call is collected last."""
    slow_home = tmp_path_factory.mktemp("slow")
    env = isolated_environment(slow_home, standin=True, IMQ_STANDIN_SLEEP="120")
    slow = stdio_connection([], env, slow_home, "legacy")
    started = time.monotonic()
    call = slow.submit(lambda client: client.call_tool("cli_help", {"command": "ctl"}))
    yield Hanging(call, started)
    call.result(90)
    slow.close()


@pytest.fixture(scope="module")
def bridge(hanging: Hanging, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    require_real_imq()
    home = tmp_path_factory.mktemp("cli")
    (home / "fleet" / "billing").mkdir(parents=True)
    (home / "fleet" / "billing" / "package.json").write_text('{"name": "billing", "scripts": {"dev": "x"}}')
    cli = stdio_connection([], real_imq_environment(home), home, "legacy")
    yield Bridge(cli, home, home / "imq")
    cli.close()


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
    arguments = {"name": "orders", "path": str(target), "flags": [*EMAIL, *OFFLINE]}
    result = bridge.cli.call("create_service", arguments)
    assert not result.is_error and "--dry-run" in text_of(result)
    assert "Dry run - no changes made" in text_of(result)
    assert not target.exists()


def test_create_service_writes_only_with_apply(bridge: Bridge) -> None:
    target = bridge.home / "payments"
    flags = [*EMAIL, *OFFLINE, "-t", str(TEMPLATE)]
    arguments = {"name": "payments", "path": str(target), "apply": True, "flags": flags}
    result = bridge.cli.call("create_service", arguments)
    assert not result.is_error and "--dry-run" not in text_of(result)
    assert (target / "package.json").is_file()


def test_a_value_imq_would_prompt_for_fails_fast_with_the_flag_to_pass(bridge: Bridge) -> None:
    flags = [*OFFLINE, "-t", str(TEMPLATE)]
    result = bridge.cli.call(
        "create_service", {"name": "audit", "path": str(bridge.home / "audit"), "apply": True, "flags": flags}
    )
    assert result.is_error and "--email" in text_of(result)
    assert "Author's email is required, but was not given!" in text_of(result)
    assert not (bridge.home / "audit").exists()


def test_generate_client_for_a_service_that_is_not_running_says_so(bridge: Bridge) -> None:
    """Real imq fails at once (ECONNREFUSED) without Redis on 6379, or after its 30 s wait with it."""
    result = bridge.cli.call("generate_client", {"service": "Nowhere", "path": str(bridge.home / "clients")})
    assert result.is_error and "running" in text_of(result)
    assert not (bridge.home / "clients" / "Nowhere.ts").exists()


def test_config_set_then_get(bridge: Bridge) -> None:
    assert not bridge.cli.call("config", {"action": "set", "option": "author", "value": "Ann"}).is_error
    result = bridge.cli.call("config", {"action": "get", "option": "author"})
    assert not result.is_error and "Ann" in text_of(result)


def test_config_init_is_refused_because_it_prompts(bridge: Bridge) -> None:
    result = bridge.cli.call("config", {"action": "init"})
    assert result.is_error and "set" in text_of(result)


def test_fleet_and_logs_on_a_folder_without_an_imqueue_service(bridge: Bridge) -> None:
    """Real imq counts as a service only a folder whose src/ holds an IMQService class."""
    fleet = str(bridge.home / "fleet")
    status = bridge.cli.call("fleet", {"action": "status", "path": fleet})
    assert not status.is_error and "No services are currently tracked as running." in text_of(status)
    started = bridge.cli.call("fleet", {"action": "start", "path": fleet})
    assert started.is_error and "No @imqueue services found under" in text_of(started)
    dumped = bridge.cli.call("logs", {"action": "dump"})
    assert not dumped.is_error and "--no-follow" in text_of(dumped)
    assert "No service logs found." in text_of(dumped)
    stopped = bridge.cli.call("fleet", {"action": "stop", "path": fleet})
    assert not stopped.is_error and "Nothing to stop" in text_of(stopped)
    cleaned = bridge.cli.call("logs", {"action": "clean"})
    assert not cleaned.is_error and "--clean" in text_of(cleaned)
    assert "Removed 0 log file(s)." in text_of(cleaned)


def test_an_action_outside_the_enum_is_refused_by_the_schema(bridge: Bridge) -> None:
    result = bridge.cli.call("fleet", {"action": "destroy"})
    assert result.is_error and "destroy" in text_of(result)


def test_cli_install_without_npm_says_what_to_install(tmp_path: Path) -> None:
    bare = stdio_connection([], isolated_environment(tmp_path), tmp_path, "legacy")
    try:
        result = bare.call("cli_install")
        assert result.is_error and "npm" in text_of(result)
    finally:
        bare.close()


def test_without_imq_the_tools_return_an_install_hint(tmp_path: Path) -> None:
    absent = stdio_connection([], isolated_environment(tmp_path), tmp_path, "legacy")
    try:
        status = absent.call("cli_status")
        assert not status.is_error and "cli_install" in text_of(status)
        help_result = absent.call("cli_help")
        assert help_result.is_error and "cli_install" in text_of(help_result)
        assert not absent.call("scaffold_client", {"service": "user"}).is_error
    finally:
        absent.close()


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_command_that_hangs_is_stopped_at_its_timeout(hanging: Hanging) -> None:
    result = hanging.call.result(90)
    elapsed = time.monotonic() - hanging.started
    assert result.is_error and "Timed out" in text_of(result)
    assert BRIDGE_TIMEOUT_SECONDS <= elapsed < 60

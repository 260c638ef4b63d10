"""The imq CLI bridge, driven end to end against the stand-in imq in fixtures/imq.

Every test runs the real stand-in executable through PATH (or hides it), with a private
IMQ_CLI_HOME and working directory under tmp_path, so nothing touches the developer's ~/.imq.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from imqueue_mcp.server.imq.arguments import refuse_unsafe_flags
from imqueue_mcp.server.imq.bridge import (
    cli_help,
    cli_install,
    cli_status,
    config,
    create_service,
    fleet,
    generate_client,
    logs,
)
from imqueue_mcp.server.imq.generated_client import attach_generated_client
from imqueue_mcp.server.imq.runner import OUTPUT_CAP_BYTES, BridgeResult, ImqRunner

STAND_IN_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "imq"
# The stand-in's `#!/usr/bin/env python3` finds this interpreter: it starts fast and exists
# even on machines whose python3 is a slow shim.
INTERPRETER_DIR = str(Path(sys.executable).parent)
STAND_IN_KNOBS = (
    "IMQ_STANDIN_SERVICES",
    "IMQ_STANDIN_SLEEP",
    "IMQ_STANDIN_CHILD_PIDFILE",
    "IMQ_STANDIN_IGNORE_SIGTERM",
    "IMQ_STANDIN_BIG",
    "IMQUEUE_MCP_IMQ",
)

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


@pytest.fixture(autouse=True)
def cli_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    home = tmp_path / "imq-home"
    monkeypatch.setenv("IMQ_CLI_HOME", str(home))
    for knob in STAND_IN_KNOBS:
        monkeypatch.delenv(knob, raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join([str(STAND_IN_DIR), INTERPRETER_DIR, os.environ["PATH"]]))
    return home


@pytest.fixture
def work(tmp_path: Path) -> Path:
    directory = tmp_path / "work"
    directory.mkdir()
    return directory


@pytest.fixture
def runner(work: Path) -> ImqRunner:
    return ImqRunner(working_directory=str(work))


def hide_imq(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(empty))


def process_is_gone(pid: int) -> bool:
    """True once pid has exited; an unreaped zombie counts as gone (it runs nothing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def make_service_dirs(root: Path, *names: str) -> None:
    for name in names:
        (root / name).mkdir()
        (root / name / "package.json").write_text(json.dumps({"name": name}))


# --------------------------------------------------------------------------- status and help


def test_cli_status_reports_version_and_where_imq_is(runner: ImqRunner) -> None:
    result = run(cli_status(runner=runner))

    assert not result.is_error
    assert result.exit_code == 0
    assert f"imq 5.2.2 is installed at {STAND_IN_DIR / 'imq'}" in result.text
    assert result.command[1:] == ["--version"]


def test_cli_status_without_imq_says_not_installed_without_being_an_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hide_imq(monkeypatch, tmp_path)

    result = run(cli_status())

    assert not result.is_error
    assert "not installed" in result.text
    assert "npm install -g @imqueue/cli" in result.text
    assert result.command == []


def test_imq_path_from_environment_override_is_used_when_not_on_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", INTERPRETER_DIR)
    monkeypatch.setenv("IMQUEUE_MCP_IMQ", str(STAND_IN_DIR / "imq"))

    result = run(cli_status())

    assert not result.is_error
    assert result.command[0] == str(STAND_IN_DIR / "imq")
    assert "imq 5.2.2 is installed" in result.text


def test_cli_help_of_a_command_lists_its_subcommands(runner: ImqRunner) -> None:
    result = run(cli_help("service", runner=runner))

    assert not result.is_error
    assert result.command[1:] == ["service", "--help"]
    assert "imq service create" in result.text


def test_cli_help_of_a_subcommand_lists_the_flags_to_pass(runner: ImqRunner) -> None:
    result = run(cli_help("service create", runner=runner))

    assert not result.is_error
    assert "--email" in result.text and "--dry-run" in result.text


def test_cli_help_of_unknown_command_is_an_error_from_imq(runner: ImqRunner) -> None:
    result = run(cli_help("deploy", runner=runner))

    assert result.is_error
    assert result.exit_code == 1
    assert "Unknown command: deploy" in result.text


# --------------------------------------------------------------------------- create_service


# What real imq does with create_service's flags (dry run, apply, the email it requires) is in
# test_imq_real_bridge.py; here only what the bridge refuses before imq runs.


def test_create_service_refuses_a_name_starting_with_dash_without_running_imq(
    runner: ImqRunner, work: Path
) -> None:
    result = run(create_service("--help", apply=True, runner=runner))

    assert result.is_error
    assert result.command == [] and result.exit_code is None
    assert "starts with '-'" in result.text
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        (["email=x"], "no option before it"),  # imq would read it as a positional: the path
        (["--no-install", "elsewhere"], "no option before it"),  # a --no-x takes no value
        (["--email=a@b.c", "elsewhere"], "no option before it"),  # an inline value is complete
        (["--email x"], "not an option imq can read"),
        (["-e", "a@b.c", "--author", "-Bob Smith"], "not an option imq can read"),
        (["--"], "positional"),
        (["-e", "a\nb"], "control characters"),
        (["--dry-run"], "apply=false"),
        (["--no-dry-run"], "apply=false"),
        (["--path=/elsewhere"], "as path"),
        (["--name", "other"], "as name"),
        (["--help"], "cli_help"),
    ],
)
def test_create_service_refuses_unsafe_flags_without_running_imq(
    runner: ImqRunner, work: Path, flags: list[str], reason: str
) -> None:
    result = run(create_service("billing", flags=flags, apply=True, runner=runner))

    assert result.is_error
    assert result.command == [] and result.exit_code is None
    assert reason in result.text
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(
    "flags",
    [
        ["-e", "a@b.c", "-a", "A", "--no-use-git", "--no-install"],  # short, value as next item
        ["--email", "a@b.c", "--author", "A"],  # long, value as next item
        ["--email=a@b.c", "--author=-A-", "--description="],  # inline, even one starting with '-'
        ["-yf", "-N", "acme", "--dockerNamespace", "acme", "-g"],  # grouped, camelCase, boolean last
    ],
)
def test_flags_are_passed_through_as_imq_parses_them(flags: list[str]) -> None:
    assert refuse_unsafe_flags(flags) is None


# --------------------------------------------------------------------------- generate_client


def test_generate_client_returns_the_written_file_and_what_to_import(
    monkeypatch: pytest.MonkeyPatch, runner: ImqRunner, work: Path
) -> None:
    monkeypatch.setenv("IMQ_STANDIN_SERVICES", "UserService")

    result = run(generate_client("UserService", "clients", runner=runner))

    written = work / "clients" / "UserService.ts"
    assert result.structured == {
        "service": "UserService",
        "path": str(written),
        "namespace": "userService",
        "client": "UserClient",
        "content": written.read_text(encoding="utf-8"),
    }
    assert written.read_text(encoding="utf-8").rstrip() in result.text
    assert "new userService.UserClient(options, 'UserService')" in result.text


def test_a_successful_run_that_left_no_client_file_is_an_error_naming_the_path(work: Path) -> None:
    succeeded = BridgeResult(text="imq: done", is_error=False, exit_code=0, command=["imq"])
    file = work / "clients" / "UserService.ts"

    result = attach_generated_client(succeeded, file, "UserService")

    assert result.is_error and result.structured is None
    assert f"{file} does not exist" in result.text and "generate_client again" in result.next_step


def test_generate_client_of_a_stopped_service_says_it_must_be_running(runner: ImqRunner) -> None:
    result = run(generate_client("UserService", runner=runner))

    assert result.is_error
    assert result.exit_code == 1
    assert "did not answer describe()" in result.text
    assert "must be running" in result.text


def test_generate_client_over_an_existing_file_fails_fast_and_names_overwrite(
    monkeypatch: pytest.MonkeyPatch, runner: ImqRunner, work: Path
) -> None:
    monkeypatch.setenv("IMQ_STANDIN_SERVICES", "UserService")
    assert not run(generate_client("UserService", "clients", runner=runner)).is_error

    started = time.monotonic()
    prompted = run(generate_client("UserService", "clients", runner=runner))

    assert time.monotonic() - started < 5
    assert prompted.is_error
    assert prompted.exit_code == 130
    assert "Overwrite? [y/N]" in prompted.text
    assert "overwrite=true" in prompted.text

    replaced = run(generate_client("UserService", "clients", overwrite=True, runner=runner))
    assert not replaced.is_error
    assert replaced.command[-1] == "-o"


# --------------------------------------------------------------------------- fleet


def test_fleet_status_strips_colours_and_passes_the_working_directory_as_path(
    runner: ImqRunner, work: Path
) -> None:
    make_service_dirs(work, "billing", "users")

    result = run(fleet("status", runner=runner))

    assert not result.is_error, result.text
    assert result.command[1:5] == ["ctl", "status", "-p", str(work.resolve())]
    assert "\x1b" not in result.text
    assert "billing" in result.stdout and "stopped" in result.stdout
    assert "server's working directory" in result.text


def test_fleet_start_of_one_service_shows_it_running_in_status(runner: ImqRunner, work: Path) -> None:
    make_service_dirs(work, "billing", "users")

    started = run(fleet("start", str(work), services=["billing"], verbose=True, runner=runner))
    status = run(fleet("status", str(work), runner=runner))

    assert not started.is_error, started.text
    assert started.command[-3:] == ["-s", "billing", "-v"]
    states = {line.split()[0]: line.split()[1] for line in status.stdout.splitlines()[1:]}
    assert states == {"billing": "running", "users": "stopped"}
    assert "server's working directory" not in status.text


def test_fleet_rejects_an_unknown_action_listing_the_allowed_ones(runner: ImqRunner) -> None:
    result = run(fleet("nuke", runner=runner))

    assert result.is_error
    assert result.command == []
    assert "start, stop, restart, status" in result.text


def test_fleet_refuses_a_service_name_starting_with_dash(runner: ImqRunner) -> None:
    result = run(fleet("stop", services=["--all"], runner=runner))

    assert result.is_error
    assert result.command == []


# --------------------------------------------------------------------------- config


def test_config_set_then_get_round_trips_through_cli_home(runner: ImqRunner, cli_home: Path) -> None:
    stored = run(config("set", "email", "dev@example.com", runner=runner))
    read = run(config("get", "email", runner=runner))

    assert not stored.is_error, stored.text
    assert read.stdout == "dev@example.com"
    assert json.loads((cli_home / "config.json").read_text()) == {"email": "dev@example.com"}


def test_config_get_of_an_unset_option_is_an_error_from_imq(runner: ImqRunner) -> None:
    result = run(config("get", "author", runner=runner))

    assert result.is_error
    assert "'author' is not set" in result.text


def test_config_init_is_explained_and_not_run(runner: ImqRunner, cli_home: Path) -> None:
    result = run(config("init", runner=runner))

    assert result.is_error
    assert result.command == []
    assert "action='set'" in result.text
    assert not (cli_home / "config.json").exists()


def test_config_refuses_a_value_starting_with_dash(runner: ImqRunner, cli_home: Path) -> None:
    result = run(config("set", "email", "-x", runner=runner))

    assert result.is_error
    assert result.command == []
    assert not (cli_home / "config.json").exists()


# --------------------------------------------------------------------------- logs


def write_log(cli_home: Path, service: str, *lines: str) -> Path:
    (cli_home / "logs").mkdir(parents=True, exist_ok=True)
    path = cli_home / "logs" / f"{service}.log"
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def test_logs_dump_prints_service_logs_without_following(runner: ImqRunner, cli_home: Path) -> None:
    write_log(cli_home, "billing", "billing ready")
    write_log(cli_home, "users", "users ready")

    prefixed = run(logs("dump", runner=runner))
    plain = run(logs("dump", ["billing"], prefix=False, runner=runner))

    assert not prefixed.is_error, prefixed.text
    assert "--no-follow" in prefixed.command
    assert "[billing] billing ready" in prefixed.stdout and "[users] users ready" in prefixed.stdout
    assert plain.command[1:] == ["log", "billing", "--no-follow", "--no-prefix"]
    assert plain.stdout == "billing ready"


def test_logs_clean_deletes_only_the_named_services_logs(runner: ImqRunner, cli_home: Path) -> None:
    billing = write_log(cli_home, "billing", "old line")
    users = write_log(cli_home, "users", "old line")

    result = run(logs("clean", ["billing"], runner=runner))

    assert not result.is_error, result.text
    assert result.command[1:] == ["log", "billing", "--clean"]
    assert not billing.exists() and users.exists()


def test_logs_rejects_follow_as_an_action(runner: ImqRunner) -> None:
    result = run(logs("follow", runner=runner))

    assert result.is_error
    assert "dump, clean" in result.text


# --------------------------------------------------------------------------- imq absent, npm

IMQ_OPERATIONS: dict[str, Callable[[], Awaitable[BridgeResult]]] = {
    "cli_help": lambda: cli_help("service"),
    "create_service": lambda: create_service("billing"),
    "generate_client": lambda: generate_client("UserService"),
    "fleet": lambda: fleet("status"),
    "config get": lambda: config("get", "email"),
    "config init": lambda: config("init"),
    "logs": lambda: logs("dump"),
}


async def _await(operation: Callable[[], Awaitable[BridgeResult]]) -> BridgeResult:
    return await operation()


@pytest.mark.parametrize("operation", IMQ_OPERATIONS.values(), ids=IMQ_OPERATIONS.keys())
def test_every_operation_without_imq_returns_the_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, operation: Callable[[], Awaitable[BridgeResult]]
) -> None:
    hide_imq(monkeypatch, tmp_path)

    result = run(_await(operation))

    assert result.is_error
    assert result.command == []
    assert "npm install -g @imqueue/cli" in result.text and "cli_install" in result.text
    assert "scaffold_service" in result.text


def test_cli_install_without_npm_says_npm_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hide_imq(monkeypatch, tmp_path)

    result = run(cli_install())

    assert result.is_error
    assert "npm is not on PATH" in result.text


def test_cli_install_runs_npm_install_global_with_the_version(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    npm_dir = tmp_path / "npm-bin"
    npm_dir.mkdir()
    (npm_dir / "npm").write_text('#!/bin/sh\necho "npm stand-in: $*"\n')
    (npm_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(npm_dir), os.environ["PATH"]]))

    result = run(cli_install("5.2.2"))

    assert not result.is_error, result.text
    assert result.command == [str(npm_dir / "npm"), "install", "-g", "@imqueue/cli@5.2.2"]
    assert "npm stand-in: install -g @imqueue/cli@5.2.2" in result.text
    assert "imq is now at" in result.text


def test_cli_install_refuses_a_version_that_is_not_semver(runner: ImqRunner) -> None:
    result = run(cli_install("5.2.2 && rm -rf /", runner=runner))

    assert result.is_error
    assert result.command == []


# --------------------------------------------------------------------------- timeouts and output cap


def test_slow_command_times_out_stops_its_process_group_and_names_the_flag(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, work: Path
) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("IMQ_STANDIN_SLEEP", "30")
    monkeypatch.setenv("IMQ_STANDIN_CHILD_PIDFILE", str(pidfile))
    runner = ImqRunner(working_directory=str(work), timeout_seconds=1)

    started = time.monotonic()
    result = run(create_service("billing", apply=True, runner=runner))

    assert time.monotonic() - started < 5
    assert result.is_error and result.timed_out
    assert "Timed out after 1 s" in result.text
    assert "waiting for input" in result.text and "--email=" in result.text
    imq_pid, child_pid = map(int, pidfile.read_text().split())
    assert process_is_gone(imq_pid) and process_is_gone(child_pid)


def test_timeout_escalates_to_sigkill_when_imq_ignores_sigterm(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, work: Path
) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("IMQ_STANDIN_SLEEP", "30")
    monkeypatch.setenv("IMQ_STANDIN_CHILD_PIDFILE", str(pidfile))
    monkeypatch.setenv("IMQ_STANDIN_IGNORE_SIGTERM", "1")
    runner = ImqRunner(working_directory=str(work), timeout_seconds=1, kill_grace_seconds=0.5)

    started = time.monotonic()
    result = run(cli_help(runner=runner))

    assert time.monotonic() - started < 5
    assert result.timed_out
    imq_pid, child_pid = map(int, pidfile.read_text().split())
    assert process_is_gone(imq_pid) and process_is_gone(child_pid)


def test_cancelled_call_kills_imq_and_its_children(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, runner: ImqRunner
) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("IMQ_STANDIN_SLEEP", "30")
    monkeypatch.setenv("IMQ_STANDIN_CHILD_PIDFILE", str(pidfile))

    async def cancel_while_running() -> None:
        call = asyncio.ensure_future(fleet("status", runner=runner))
        for _ in range(100):  # until the stand-in has started its child, at most 5 s
            if pidfile.exists() and len(pidfile.read_text().split()) == 2:
                break
            await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.sleep(0.2)  # SIGKILL lands asynchronously

    run(cancel_while_running())

    imq_pid, child_pid = map(int, pidfile.read_text().split())
    assert process_is_gone(imq_pid) and process_is_gone(child_pid)


def test_output_over_the_cap_keeps_the_tail_and_says_how_much_was_cut(
    monkeypatch: pytest.MonkeyPatch, runner: ImqRunner
) -> None:
    monkeypatch.setenv("IMQ_STANDIN_BIG", "20000")

    result = run(cli_status(runner=runner))

    assert not result.is_error
    assert "bytes of earlier output cut" in result.text
    assert "noise line 0019999" in result.text
    assert "noise line 0000000" not in result.text
    assert "imq 5.2.2 is installed" in result.text
    assert len(result.stdout.encode()) < OUTPUT_CAP_BYTES + 200

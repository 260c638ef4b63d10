"""The imq CLI bridge's Python API (server/imq/bridge.py, runner.py), driven end to end.

Ordinary cases run the real imq 5.2.2 that .ci/install-imq.sh built (tests/imq_real.py), with a
temporary HOME, IMQ_CLI_HOME and working directory, and --dry-run or --no-install --no-use-git
with the built template wherever imq would otherwise reach the network; they skip naming the
install command when the build is missing (and fail in CI). They check what the bridge builds
and returns - the argv, exit code, cleaned output, notes - against what real imq did. What the
same tools do over MCP, and the story of a running service (fleet, client generation and logs on
Redis at 6379), is tests/test_imq_real_bridge.py and tests/test_server_cli.py.

Refusals run no imq at all. Only faults the real imq cannot be made to show run on stand-ins
(docs/imq-standin.md): fixtures/hanging_imq (past the timeout, cancelled with children) and
fixtures/imq/imq (output over the cap on a run that succeeds); cli_install runs an `npm` that
only echoes, since the real one would install globally from the registry.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from imq_real import IMQ, TEMPLATE, require_real_imq, use_real_imq_home
from test_faults_cli_bridge import HANGING_IMQ, still_running

from imqueue_mcp.server.errors import ErrorCode
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

STAND_IN = Path(__file__).resolve().parents[1] / "fixtures" / "imq" / "imq"
OFFLINE = ["--email=dev@example.com", "--no-use-git", "--no-install", "-t", str(TEMPLATE)]
STOP_SECONDS = 20.0

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


@pytest.fixture(autouse=True)
def cli_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A temporary HOME and IMQ_CLI_HOME; imq keeps its state in <IMQ_CLI_HOME>/.imq.

    PATH: the real imq's folder and its Node first, then the usual PATH (npm for `npm run dev`)."""
    return use_real_imq_home(monkeypatch, tmp_path)


@pytest.fixture
def real_imq() -> None:
    require_real_imq()


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


# --------------------------------------------------------------------------- status and help


def test_cli_status_reports_the_version_and_where_imq_is_on_path(real_imq: None, runner: ImqRunner) -> None:
    result = run(cli_status(runner=runner))

    assert not result.is_error, result.text
    assert result.exit_code == 0
    assert result.command == [str(IMQ), "--version"]
    assert f"imq 5.2.2 is installed at {IMQ}" in result.text


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
    real_imq: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hide_imq(monkeypatch, tmp_path)
    monkeypatch.setenv("IMQUEUE_MCP_IMQ", str(IMQ))

    result = run(cli_status())

    assert not result.is_error, result.text
    assert result.command[0] == str(IMQ)
    assert "imq 5.2.2 is installed" in result.text


def test_cli_help_of_a_command_lists_its_subcommands(real_imq: None, runner: ImqRunner) -> None:
    result = run(cli_help("service", runner=runner))

    assert not result.is_error, result.text
    assert result.command[1:] == ["service", "--help"]
    assert "imq service create [name] [path]" in result.text


def test_cli_help_of_an_unknown_command_shows_imqs_own_list_of_commands(
    real_imq: None, runner: ImqRunner
) -> None:
    """imq 5.2.2 answers `imq deploy --help` with its top-level help, exit code 0."""
    result = run(cli_help("deploy", runner=runner))

    assert not result.is_error, result.text
    assert result.command[1:] == ["deploy", "--help"]
    assert "imq service" in result.stdout and "imq ctl <action>" in result.stdout


# --------------------------------------------------------------------------- create_service


def test_create_service_is_a_dry_run_unless_applied(real_imq: None, runner: ImqRunner, work: Path) -> None:
    dry = run(create_service("billing", "billing", flags=OFFLINE, runner=runner))

    assert not dry.is_error, dry.text
    assert dry.command[1:] == ["service", "create", "billing", "billing", *OFFLINE, "--dry-run"]
    assert "Dry run - no changes made." in dry.stdout  # real imq's own words
    assert "nothing was written" in dry.text
    assert list(work.iterdir()) == []

    applied = run(create_service("billing", "billing", flags=OFFLINE, apply=True, runner=runner))

    assert not applied.is_error, applied.text
    assert applied.command[1:] == ["service", "create", "billing", "billing", *OFFLINE]
    assert f"Created service billing in {work / 'billing'}." in applied.text
    assert json.loads((work / "billing" / "package.json").read_text())["name"] == "billing"


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
# A client generated from a running service (its file, namespace, class, the overwrite
# refusal) is tests/test_imq_real_bridge.py: it needs Redis on 6379 and a started service.


def test_a_successful_run_that_left_no_client_file_is_an_error_naming_the_path(work: Path) -> None:
    succeeded = BridgeResult(text="imq: done", is_error=False, exit_code=0, command=["imq"])
    file = work / "clients" / "UserService.ts"

    result = attach_generated_client(succeeded, file, "UserService")

    assert result.is_error and result.structured is None
    assert f"{file} does not exist" in result.text and "generate_client again" in result.next_step


# --------------------------------------------------------------------------- fleet


def make_services(root: Path, *names: str) -> None:
    """Folders `imq ctl -s NAME` starts with `npm run dev`: here a sleep the stop must end."""
    for name in names:
        (root / name).mkdir()
        package = {"name": name, "scripts": {"dev": "sleep 120"}}
        (root / name / "package.json").write_text(json.dumps(package))


def test_fleet_status_passes_the_working_directory_as_path_and_says_so(
    real_imq: None, runner: ImqRunner, work: Path
) -> None:
    result = run(fleet("status", runner=runner))

    assert not result.is_error, result.text
    assert result.command[1:] == ["ctl", "status", "-p", str(work.resolve())]
    assert result.stdout == "No services are currently tracked as running."
    assert "server's working directory" in result.text


def test_fleet_start_of_one_named_service_runs_only_it_until_stop(
    real_imq: None, runner: ImqRunner, work: Path
) -> None:
    make_services(work, "billing", "users")
    started = run(fleet("start", str(work), services=["billing"], verbose=True, runner=runner))
    try:
        assert not started.is_error, started.text
        assert started.command[1:] == ["ctl", "start", "-p", str(work), "-s", "billing", "-v"]
        status = run(fleet("status", str(work), runner=runner))
        pid = int(status.stdout.split("billing: running (pid ", 1)[1].split(")", 1)[0])
        assert Path(f"/proc/{pid}").is_dir()
        assert "users" not in status.stdout
        assert "server's working directory" not in status.text
    finally:
        stopped = run(fleet("stop", str(work), runner=runner))

    assert not stopped.is_error and "Stopped 1 service(s)." in stopped.stdout, stopped.text
    deadline = time.monotonic() + STOP_SECONDS
    while Path(f"/proc/{pid}").is_dir() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not Path(f"/proc/{pid}").is_dir()


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


def test_config_get_set_get_round_trips_through_the_imq_home(
    real_imq: None, runner: ImqRunner, cli_home: Path
) -> None:
    unset = run(config("get", "email", runner=runner))
    stored = run(config("set", "email", "dev@example.com", runner=runner))
    read = run(config("get", "email", runner=runner))

    assert unset.is_error and unset.exit_code == 1
    assert 'Option "email" is not set.' in unset.text
    assert not stored.is_error, stored.text
    assert read.stdout == '"dev@example.com"'
    assert json.loads((cli_home / ".imq" / "config.json").read_text()) == {"email": "dev@example.com"}


def test_config_init_is_explained_and_not_run(real_imq: None, runner: ImqRunner, cli_home: Path) -> None:
    result = run(config("init", runner=runner))

    assert result.is_error
    assert result.command == []
    assert "action='set'" in result.text
    assert not (cli_home / ".imq").exists()


def test_config_refuses_a_value_starting_with_dash(runner: ImqRunner, cli_home: Path) -> None:
    result = run(config("set", "email", "-x", runner=runner))

    assert result.is_error
    assert result.command == []
    assert not (cli_home / ".imq").exists()


# --------------------------------------------------------------------------- logs


def write_log(cli_home: Path, service: str, *lines: str) -> Path:
    """A log where `imq ctl start` writes one: <IMQ_CLI_HOME>/.imq/var/<service>.log."""
    (cli_home / ".imq" / "var").mkdir(parents=True, exist_ok=True)
    path = cli_home / ".imq" / "var" / f"{service}.log"
    path.write_text("".join(f"{line}\n" for line in lines))
    return path


def test_logs_dump_prints_service_logs_without_following(
    real_imq: None, runner: ImqRunner, cli_home: Path
) -> None:
    write_log(cli_home, "billing", "billing ready")
    write_log(cli_home, "users", "users ready")

    prefixed = run(logs("dump", runner=runner))
    plain = run(logs("dump", ["billing"], prefix=False, runner=runner))

    assert not prefixed.is_error, prefixed.text
    assert prefixed.command[1:] == ["log", "--no-follow"]
    assert prefixed.stdout.splitlines() == ["[billing] billing ready", "[users] users ready"]
    assert plain.command[1:] == ["log", "billing", "--no-follow", "--no-prefix"]
    assert plain.stdout == "billing ready"


def test_logs_clean_deletes_only_the_named_services_logs(
    real_imq: None, runner: ImqRunner, cli_home: Path
) -> None:
    billing = write_log(cli_home, "billing", "old line")
    users = write_log(cli_home, "users", "old line")

    result = run(logs("clean", ["billing"], runner=runner))

    assert not result.is_error, result.text
    assert result.command[1:] == ["log", "billing", "--clean"]
    assert "Removed 1 log file(s) for billing." in result.stdout
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
    """An echoing npm that, like the real one, puts an `imq` into its global bin (its own folder
    here): the real one would install from the registry. The test needs no imq, node or npm."""
    npm_dir = tmp_path / "npm-bin"
    npm_dir.mkdir()
    (npm_dir / "npm").write_text(
        '#!/bin/sh\necho "npm stand-in: $*"\n'
        'printf \'#!/bin/sh\\necho 5.2.2\\n\' > "$(dirname "$0")/imq"\nchmod 755 "$(dirname "$0")/imq"\n'
    )
    (npm_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(npm_dir), os.environ["PATH"]]))

    result = run(cli_install("5.2.2"))

    assert not result.is_error, result.text
    assert result.command == [str(npm_dir / "npm"), "install", "-g", "@imqueue/cli@5.2.2"]
    assert "npm stand-in: install -g @imqueue/cli@5.2.2" in result.text
    assert f"imq is now at {npm_dir / 'imq'}" in result.text


def test_cli_install_refuses_a_version_that_is_not_semver(runner: ImqRunner) -> None:
    result = run(cli_install("5.2.2 && rm -rf /", runner=runner))

    assert result.is_error
    assert result.command == []


@pytest.mark.parametrize("version", ["\u0661\u0662", "\uff15.2.2", "5.2.\u0662"])
def test_cli_install_refuses_a_version_of_digits_other_than_ascii_before_npm_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, version: str
) -> None:
    """A npm on PATH that notes each run: a refused version must not reach it (the real one
    would be asked for '@imqueue/cli@١٢' and fail with EINVALIDTAGNAME)."""
    npm_dir = tmp_path / "npm-bin"
    npm_dir.mkdir()
    (npm_dir / "npm").write_text(f'#!/bin/sh\necho "$*" >> {npm_dir / "runs.txt"}\n')
    (npm_dir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(npm_dir), os.environ["PATH"]]))

    result = run(cli_install(version))

    assert result.is_error and result.error_code == ErrorCode.ARGUMENT_REFUSED and result.command == []
    assert repr(version) in result.text and "Nothing was run." in result.text
    assert not (npm_dir / "runs.txt").exists()


# --------------------------------------------------------------------------- faults


def processes_in(directory: Path) -> list[int]:
    """Live processes whose working directory is `directory`."""
    found = []
    for cwd in Path("/proc").glob("[0-9]*/cwd"):
        try:
            if cwd.resolve(strict=True) == directory.resolve() and state_of(int(cwd.parent.name)) != "Z":
                found.append(int(cwd.parent.name))
        except OSError:
            continue  # ended while we looked, or not ours to read
    return found


def state_of(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_a_real_imq_that_does_not_finish_is_stopped_at_the_timeout(
    real_imq: None, cli_home: Path, work: Path
) -> None:
    """`imq log` without --no-follow tails the logs forever (the bridge never runs it so)."""
    write_log(cli_home, "billing", "billing ready")
    runner = ImqRunner(working_directory=str(work), timeout_seconds=3, kill_grace_seconds=0.5)

    started = time.monotonic()
    outcome = run(runner.run_imq(["log"], 60))

    assert time.monotonic() - started < 15
    assert not isinstance(outcome, BridgeResult) and outcome.timed_out
    assert outcome.stdout == "billing ready"  # what it printed before it was stopped
    assert processes_in(work) == []


# --------------------------------------------------------------------------- faults (stand-ins)
# SIGTERM ignored, a flood of output and a prompt with stdin closed, each stopped at the timeout
# with everything it started: tests/test_faults_cli_bridge.py.


def hanging_runner(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, work: Path, mode: str, timeout: float = 1
) -> tuple[ImqRunner, Path]:
    """A runner of fixtures/hanging_imq in `mode`, and the file where it lists its pids."""
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("IMQ_HANG", mode)
    monkeypatch.setenv("IMQ_HANG_PIDFILE", str(pidfile))
    runner = ImqRunner(
        imq_path=str(HANGING_IMQ),
        working_directory=str(work),
        timeout_seconds=timeout,
        kill_grace_seconds=0.5,
    )
    return runner, pidfile


def test_a_create_that_waits_for_input_times_out_and_names_the_flag_to_pass(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, work: Path
) -> None:
    runner, _ = hanging_runner(monkeypatch, tmp_path, work, "prompt")

    started = time.monotonic()
    result = run(create_service("billing", apply=True, runner=runner))

    assert time.monotonic() - started < 10
    assert result.is_error and result.timed_out
    assert "Timed out after 1 s" in result.text
    assert "waiting for input" in result.text and "--email=" in result.text


def test_a_cancelled_call_kills_imq_and_everything_it_started(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, work: Path
) -> None:
    # the cancellation, not the timeout, must stop it
    runner, pidfile = hanging_runner(monkeypatch, tmp_path, work, "tree", timeout=60)

    async def cancel_while_running() -> None:
        call = asyncio.ensure_future(fleet("status", runner=runner))
        for _ in range(200):  # until the tree is up (9 processes), at most 10 s
            if pidfile.exists() and len(pidfile.read_text().split()) == 9:
                break
            await asyncio.sleep(0.05)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        pids = [int(line) for line in pidfile.read_text().split()]
        for _ in range(50):  # SIGKILL lands asynchronously; the loop reaps imq meanwhile
            if not still_running(pids, group=pids[0]):
                break
            await asyncio.sleep(0.1)

    run(cancel_while_running())

    pids = [int(line) for line in pidfile.read_text().split()]
    assert len(pids) == 9
    assert still_running(pids, group=pids[0]) == []


@pytest.mark.parametrize("turns", [0, 1, 2, 3, 5, 8])
def test_a_call_cancelled_while_imq_starts_leaves_nothing_running(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, work: Path, turns: int
) -> None:
    """Cancelled a few turns of the loop after it began, the call may still be inside the process's
    start (a busy loop takes longer to finish it than imq takes to start its children): whatever
    had started by then is killed, the children too, not the leader alone."""
    runner, pidfile = hanging_runner(monkeypatch, tmp_path, work, "tree", timeout=60)

    async def cancel_early() -> list[int]:
        call = asyncio.ensure_future(fleet("status", runner=runner))
        for _ in range(turns):
            await asyncio.sleep(0)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.sleep(1.5)  # anything that escaped would have written its pid by now
        pids = [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []
        for _ in range(50):
            if not pids or not still_running(pids, group=pids[0]):
                break
            await asyncio.sleep(0.1)
        return pids

    pids = run(cancel_early())
    assert not pids or still_running(pids, group=pids[0]) == []


def test_output_over_the_cap_keeps_the_tail_and_says_how_much_was_cut(
    monkeypatch: pytest.MonkeyPatch, work: Path
) -> None:
    monkeypatch.setenv("IMQ_STANDIN_BIG", "20000")
    runner = ImqRunner(imq_path=str(STAND_IN), working_directory=str(work))

    result = run(cli_status(runner=runner))

    assert not result.is_error, result.text[-2000:]
    assert "bytes of earlier output cut" in result.text
    assert "noise line 0019999" in result.text
    assert "noise line 0000000" not in result.text
    assert "imq 5.2.2 is installed" in result.text
    assert len(result.stdout.encode()) < OUTPUT_CAP_BYTES + 200

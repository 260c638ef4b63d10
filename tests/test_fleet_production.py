"""fleet's production start (mode='production'), through the bridge's Python API, on the real imq.

The services here are tiny folders whose npm scripts are one-line node programs (a build that
writes a file or fails as tsc does, a start that prints imq's ready line and stays up, or ends
at once), so each test takes seconds; real npm runs them. imq 5.2.2 itself (tests/imq_real.py)
does the status and the stop, reading the records the production start wrote where imq ctl
writes its own. The whole story on a scaffolded @imqueue 3.x service, a real Redis and a call
through its client is tests/test_fleet_production_e2e.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from imq_real import IMQ, process_group, require_real_imq, use_real_imq_home

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.imq.bridge import fleet
from imqueue_mcp.server.imq.production import MODES_FILE, process_alive, read_pids, write_pids
from imqueue_mcp.server.imq.runner import BridgeResult, ImqRunner

from conftest import free_port

T = TypeVar("T")
STOP_SECONDS = 20.0
READY = "reader channel connected"
# Stays up after printing imq's ready line, as an @imqueue service does once connected. The line
# is printed in two parts, since npm echoes the script into the log first.
SERVE = "node -e \"console.log('Alpha: reader ' + 'channel connected'); setInterval(() => {}, 1000)\""


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coroutine)


@pytest.fixture(scope="module")
def real_imq() -> None:
    require_real_imq()


@pytest.fixture(autouse=True)
def imq_home(real_imq: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return use_real_imq_home(monkeypatch, tmp_path)


@pytest.fixture
def var(imq_home: Path) -> Path:
    return imq_home / ".imq" / "var"


@pytest.fixture
def work(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "work"
    directory.mkdir()
    yield directory
    # whatever a test left running, imq stops (every tracked pid: nothing under work is discovered)
    run(fleet("stop", str(tmp_path), runner=ImqRunner(working_directory=str(tmp_path))))


@pytest.fixture
def runner(work: Path) -> ImqRunner:
    return ImqRunner(working_directory=str(work))


def make_service(root: Path, name: str, scripts: dict[str, str]) -> Path:
    """A folder imq ctl counts as a service (a class extending IMQService in src/) with these scripts."""
    folder = root / name
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "Alpha.ts").write_text("export class Alpha extends IMQService {}\n")
    (folder / "package.json").write_text(json.dumps({"name": name, "scripts": scripts}))
    return folder


def counting_build(folder: Path) -> str:
    """A build that appends a line to builds.txt each time it runs."""
    return f"node -e \"require('fs').appendFileSync('{folder / 'builds.txt'}', 'built\\\\n')\""


def processes_in(folder: Path) -> set[int]:
    """The processes whose working directory is folder (a service's npm and node)."""
    found = set()
    for cwd in Path("/proc").glob("[0-9]*/cwd"):
        try:
            if cwd.readlink() == folder:
                found.add(int(cwd.parent.name))
        except OSError:
            continue
    return found


def wait_for_no_members(group: int) -> set[int]:
    deadline = time.monotonic() + STOP_SECONDS
    while process_group(group) and time.monotonic() < deadline:
        time.sleep(0.2)
    return process_group(group)


def production_start(runner: ImqRunner, **options: Any) -> BridgeResult:
    return run(fleet("start", mode="production", runner=runner, **options))


def read_pids_after(started: BridgeResult, runner: ImqRunner) -> int:
    assert not started.is_error, started.text
    return read_pids(Path(os.environ["IMQ_CLI_HOME"]) / ".imq" / "var")["alpha"]


def test_production_start_builds_starts_detached_and_is_tracked_where_imq_ctl_looks(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    folder = make_service(work, "alpha", {"build": counting_build(work / "alpha"), "start": SERVE})

    started = production_start(runner)

    assert not started.is_error, started.text
    assert (folder / "builds.txt").read_text() == "built\n"
    pid = read_pids(var)["alpha"]  # imq's own .pids file
    assert f"pid {pid}" in started.text and "ready" in started.text
    assert os.getpgid(pid) == pid  # leads its own process group, which imq ctl stop signals
    assert os.getsid(pid) == pid  # and its own session: nothing ties it to the server
    assert READY in (var / "alpha.log").read_text()  # imq log's folder
    assert json.loads((var / MODES_FILE).read_text())["alpha"]["pid"] == pid


def test_status_from_real_imq_shows_the_production_service_running_with_its_mode(
    runner: ImqRunner, work: Path
) -> None:
    make_service(work, "alpha", {"build": "node -e 0", "start": SERVE})
    pid = read_pids_after(production_start(runner), runner)

    status = run(fleet("status", runner=runner))

    assert not status.is_error, status.text
    assert f"alpha: running (pid {pid})" in status.stdout  # real imq's own line
    assert f"- alpha: running (pid {pid}), mode production (`npm start`" in status.text


def test_stop_by_real_imq_ends_the_whole_production_group_and_forgets_its_mode(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    make_service(work, "alpha", {"build": "node -e 0", "start": SERVE})
    pid = read_pids_after(production_start(runner), runner)
    assert len(process_group(pid)) >= 2  # npm and the node it started

    stopped = run(fleet("stop", str(work), runner=runner))

    assert not stopped.is_error and "Stopped 1 service(s)." in stopped.stdout, stopped.text
    assert wait_for_no_members(pid) == set()
    assert "alpha" not in read_pids(var)
    assert "alpha" not in json.loads((var / MODES_FILE).read_text())
    status = run(fleet("status", runner=runner))
    assert "No services are currently tracked as running." in status.stdout


def test_a_second_production_start_leaves_the_running_service_as_it_is(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    folder = make_service(work, "alpha", {"build": counting_build(work / "alpha"), "start": SERVE})
    pid = read_pids_after(production_start(runner), runner)

    again = production_start(runner)

    assert not again.is_error, again.text
    assert f"already running in production (pid {pid}" in again.text
    assert read_pids(var)["alpha"] == pid
    assert (folder / "builds.txt").read_text() == "built\n"  # not even rebuilt
    dev = run(fleet("start", str(work), runner=runner))  # imq ctl start does not double-start it either
    assert f"alpha is already running (pid {pid})" in dev.stdout
    assert read_pids(var)["alpha"] == pid


def test_two_production_starts_at_once_start_the_service_once(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    folder = make_service(work, "alpha", {"build": counting_build(work / "alpha"), "start": SERVE})

    async def both() -> list[BridgeResult]:
        return list(await asyncio.gather(*(fleet("start", mode="production", runner=runner) for _ in "ab")))

    results = run(both())

    assert not any(result.is_error for result in results), [result.text for result in results]
    pid = read_pids(var)["alpha"]
    assert sorted("already running in production" in result.text for result in results) == [False, True]
    assert (folder / "builds.txt").read_text() == "built\n"
    assert processes_in(folder) == process_group(pid)  # every process there is of one group


@pytest.mark.slow  # over 3.5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_dev_started_service_is_not_started_again_and_restart_switches_it_to_production(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    make_service(work, "alpha", {"dev": "sleep 120", "build": "node -e 0", "start": SERVE})
    dev = run(fleet("start", str(work), runner=runner))
    assert not dev.is_error, dev.text
    dev_pid = read_pids(var)["alpha"]

    refused = production_start(runner)

    assert refused.is_error and refused.error_code == ErrorCode.ARGUMENT_REFUSED
    assert f"already running under imq ctl in dev mode (`npm run dev`, pid {dev_pid})" in refused.text
    assert "fleet(action='restart', mode='production'" in refused.next_step
    assert read_pids(var)["alpha"] == dev_pid

    restarted = run(fleet("restart", mode="production", runner=runner))

    assert not restarted.is_error, restarted.text
    assert "Stopped 1 service(s)." in restarted.text
    production_pid = read_pids(var)["alpha"]
    assert production_pid != dev_pid and wait_for_no_members(dev_pid) == set()
    status = run(fleet("status", runner=runner))
    assert f"- alpha: running (pid {production_pid}), mode production" in status.text


def test_a_failed_build_is_an_error_carrying_the_compilers_output_and_starts_nothing(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    tsc_like = (
        "node -e \"console.log(\\\"src/Alpha.ts(3,7): error TS2322: Type 'string' is not assignable "
        "to type 'number'.\\\"); process.exit(2)\""
    )
    make_service(work, "alpha", {"build": tsc_like, "start": SERVE})

    result = production_start(runner)

    assert result.is_error and result.error_code == ErrorCode.IMQ_FAILED
    assert "src/Alpha.ts(3,7): error TS2322" in result.text
    assert "`npm run build` failed; not started" in result.text
    assert "Fix what the compiler reports" in result.next_step
    assert "alpha" not in read_pids(var) and not (var / "alpha.log").exists()


def test_a_service_without_a_build_script_is_refused_naming_what_to_add(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    make_service(work, "alpha", {"start": SERVE, "dev": "sleep 1"})

    result = production_start(runner)

    assert result.is_error and result.error_code == ErrorCode.ARGUMENT_REFUSED
    assert "alpha has no build script in its package.json" in result.text
    assert '"build": "tsc"' in result.next_step
    assert "alpha" not in read_pids(var)


def test_a_service_that_ends_before_it_is_ready_is_an_error_with_its_output_and_is_not_tracked(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    crash = "node -e \"console.error('Error: connect ECONNREFUSED 127.0.0.1:1'); process.exit(1)\""
    make_service(work, "alpha", {"build": "node -e 0", "start": crash})

    started = time.monotonic()
    result = production_start(runner)

    assert time.monotonic() - started < 20  # its end is seen, not waited out
    assert result.is_error and result.error_code == ErrorCode.IMQ_FAILED
    assert "`npm start`" in result.text and "before it was ready" in result.text
    assert "ECONNREFUSED 127.0.0.1:1" in result.text  # its own output, from the log
    assert "alpha" not in read_pids(var)
    assert "alpha" not in json.loads((var / MODES_FILE).read_text())


def test_only_the_named_services_start_and_an_unknown_one_is_an_error_beside_them(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    make_service(work, "alpha", {"build": "node -e 0", "start": SERVE})
    make_service(work, "beta", {"build": "node -e 0", "start": SERVE})

    result = production_start(runner, services=["alpha", "gamma"])

    assert result.is_error
    assert "1 of 2 service(s) running in production" in result.text
    assert "gamma: no folder" in result.text
    assert set(read_pids(var)) == {"alpha"}


def test_with_no_service_folder_under_path_nothing_runs(runner: ImqRunner, work: Path) -> None:
    (work / "plain").mkdir()  # a folder, but no service class in a src/
    result = production_start(runner)

    assert result.is_error and result.command == []
    assert f"No @imqueue services found under {work}" in result.text


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"action": "stop", "mode": "production"}, "mode 'production' is for start and restart"),
        ({"action": "status", "mode": "production"}, "mode 'production' is for start and restart"),
        ({"action": "start", "mode": "production", "update": True}, "update (git pull first)"),
        ({"action": "start", "mode": "prod"}, "Unknown fleet mode 'prod'; use one of: dev, production"),
        (
            {"action": "start", "mode": "production", "services": ["../alpha"]},
            "a service name is a name, not a path",
        ),
    ],
)
def test_mode_misuse_is_refused_with_what_to_do_instead(
    runner: ImqRunner, work: Path, var: Path, arguments: dict[str, Any], says: str
) -> None:
    make_service(work, "alpha", {"build": "node -e 0", "start": SERVE})

    result = run(fleet(runner=runner, **arguments))

    assert result.is_error and says in result.text
    assert result.error_code == ErrorCode.ARGUMENT_REFUSED
    assert read_pids(var) == {}


def test_without_imq_a_production_service_is_still_shown_and_stopped_as_imq_would(
    monkeypatch: pytest.MonkeyPatch, runner: ImqRunner, work: Path, var: Path
) -> None:
    """A production start needs npm, not imq; so stop and status fall back to imq's own steps."""
    without_imq = [folder for folder in os.environ["PATH"].split(os.pathsep) if folder != str(IMQ.parent)]
    monkeypatch.setenv("PATH", os.pathsep.join(without_imq))
    assert runner.find_imq() is None
    make_service(work, "alpha", {"build": "node -e 0", "start": SERVE})
    pid = read_pids_after(production_start(runner), runner)

    status = run(fleet("status", runner=runner))
    assert not status.is_error, status.text
    assert f"- alpha: running (pid {pid}), mode production" in status.text
    assert "imq is not installed here" in status.text

    stopped = run(fleet("stop", str(work), runner=runner))

    assert not stopped.is_error, stopped.text
    assert "Stopped 1 service(s): alpha" in stopped.text
    assert process_group(pid) == set()  # the stop returns once the group is gone
    assert read_pids(var) == {}
    assert run(fleet("status", runner=runner)).error_code == ErrorCode.IMQ_NOT_INSTALLED  # nothing tracked


# --------------------------------------------------------------------------- redis


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """For conftest's redis_port: a real redis-server on a free loopback port."""
    return tmp_path_factory.mktemp("redis")


# Prints the broker it was given, then stays up as a ready service does.
SERVE_BROKER = SERVE.replace(
    "console.log(", "console.log('broker=' + process.env.IMQ_REDIS); console.log(", 1
)


@pytest.mark.parametrize("mode", ["production", "dev"])
def test_redis_reaches_the_started_services_as_imq_redis_in_either_mode(
    runner: ImqRunner, work: Path, var: Path, redis_port: int, mode: str
) -> None:
    make_service(work, "alpha", {"build": "node -e 0", "start": SERVE_BROKER, "dev": SERVE_BROKER})
    broker = f"127.0.0.1:{redis_port}"

    started = run(fleet("start", str(work), mode=mode, redis=broker, runner=runner))

    assert not started.is_error, started.text
    log = var / "alpha.log"
    deadline = time.monotonic() + STOP_SECONDS
    while READY not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert f"broker={broker}" in log.read_text()
    if mode == "production":
        status = run(fleet("status", runner=runner))
        assert f"IMQ_REDIS={broker})" in status.text


def ready_log(var: Path, name: str) -> str:
    log = var / f"{name}.log"
    deadline = time.monotonic() + STOP_SECONDS
    while READY not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.2)
    return log.read_text() if log.exists() else ""


def started_on_broker(runner: ImqRunner, work: Path, redis_port: int, mode: str, script: str) -> str:
    """Service alpha, whose start and dev scripts are `script`, started by fleet on the test's Redis."""
    make_service(work, "alpha", {"build": "node -e 0", "start": script, "dev": script})
    broker = f"127.0.0.1:{redis_port}"
    assert not run(fleet("start", str(work), mode=mode, redis=broker, runner=runner)).is_error
    return broker


@pytest.mark.parametrize("mode", ["production", "dev"])
def test_a_restart_without_redis_keeps_the_broker_fleet_started_the_service_on(
    runner: ImqRunner, work: Path, var: Path, redis_port: int, mode: str
) -> None:
    broker = started_on_broker(runner, work, redis_port, mode, SERVE_BROKER)
    first_pid = read_pids(var)["alpha"]
    assert f"broker={broker}" in ready_log(var, "alpha")

    restarted = run(fleet("restart", str(work), services=["alpha"], mode=mode, runner=runner))

    assert not restarted.is_error, restarted.text
    assert read_pids(var)["alpha"] != first_pid
    assert f"broker={broker}" in ready_log(var, "alpha")  # not this server's environment: localhost
    assert "No redis was given" in restarted.text and f"IMQ_REDIS={broker}" in restarted.text
    status = run(fleet("status", runner=runner))
    assert f"IMQ_REDIS={broker})" in status.text  # both modes say which broker


# Ready, then a crash 1.5 s later: what a service that fails after connecting does.
CRASH_AFTER_READY = SERVE_BROKER.replace(
    "setInterval(() => {}, 1000)", "setTimeout(() => process.exit(1), 1500)"
)


@pytest.mark.parametrize("mode", ["production", "dev"])
def test_a_service_that_crashed_after_ready_keeps_its_broker_through_status_and_restart(
    runner: ImqRunner, work: Path, var: Path, redis_port: int, mode: str
) -> None:
    # audit 13: imq ctl status prunes the dead run from .pids, and fleet's record went with it
    broker = started_on_broker(runner, work, redis_port, mode, CRASH_AFTER_READY)
    pid = read_pids(var)["alpha"]
    deadline = time.monotonic() + STOP_SECONDS
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)

    assert not process_alive(pid), "did not end"
    # imq ctl status prunes a dead run from .pids. This machine's PID 1 does not reap orphans, so
    # the ended run lingers as a zombie that imq counts alive: its prune is made here as imq makes it.
    write_pids(var, {name: each for name, each in read_pids(var).items() if name != "alpha"})

    status = run(fleet("status", runner=runner))

    assert f"- alpha: EXITED (its run, pid {pid}, ended" in status.text
    assert f"IMQ_REDIS={broker}" in status.text and "logs(action='dump')" in status.text
    restarted = run(fleet("restart", str(work), services=["alpha"], mode=mode, runner=runner))
    assert "No redis was given" in restarted.text and f"IMQ_REDIS={broker}" in restarted.text, restarted.text
    assert f"broker={broker}" in ready_log(var, "alpha")
    # a stop forgets it: the next restart has nothing to reuse
    run(fleet("stop", str(work), services=["alpha"], runner=runner))
    assert "EXITED" not in run(fleet("status", runner=runner)).text


def test_a_later_start_without_redis_and_another_projects_run_never_speak_for_a_service(
    runner: ImqRunner, work: Path, var: Path, redis_port: int, tmp_path: Path
) -> None:
    # audit 14: an old production run's record came back after a dev start without redis ended,
    # and an exited run of a project since deleted was listed in every status
    broker = started_on_broker(runner, work, redis_port, "production", CRASH_AFTER_READY)
    first = read_pids(var)["alpha"]
    while process_alive(first):
        time.sleep(0.2)
    write_pids(var, {})  # imq ctl status's prune (see the crash test: PID 1 here reaps no orphans)
    assert not run(fleet("start", str(work), mode="dev", runner=runner)).is_error  # no redis this time
    second = read_pids(var)["alpha"]
    while process_alive(second):
        time.sleep(0.2)
    write_pids(var, {})

    status = run(fleet("status", str(work), runner=runner)).text
    assert f"EXITED (its run, pid {second}" in status and broker not in status
    restarted = run(fleet("restart", str(work), services=["alpha"], runner=runner))
    assert "No redis was given" not in restarted.text
    run(fleet("stop", str(work), runner=runner))
    gone = tmp_path / "gone"
    make_service(gone, "beta", {"build": "node -e 0", "start": CRASH_AFTER_READY, "dev": CRASH_AFTER_READY})
    assert not run(fleet("start", str(gone), mode="production", redis=broker, runner=runner)).is_error
    beta = read_pids(var)["beta"]
    while process_alive(beta):
        time.sleep(0.2)
    write_pids(var, {name: pid for name, pid in read_pids(var).items() if name != "beta"})
    assert "beta: EXITED" in run(fleet("status", str(gone), runner=runner)).text
    assert "beta" not in run(fleet("status", str(work), runner=runner)).text  # another project's


def test_a_restart_with_redis_moves_the_service_and_the_next_restart_keeps_that(
    runner: ImqRunner, work: Path, var: Path, redis_port: int
) -> None:
    make_service(work, "alpha", {"build": "node -e 0", "start": SERVE_BROKER, "dev": SERVE_BROKER})
    assert not run(fleet("start", str(work), redis=f"127.0.0.1:{redis_port}", runner=runner)).is_error
    ready_log(var, "alpha")
    other = f"localhost:{redis_port}"  # the same Redis by another address: what the service is given

    moved = run(fleet("restart", str(work), redis=other, runner=runner))
    assert not moved.is_error and "No redis was given" not in moved.text, moved.text
    assert f"broker={other}" in ready_log(var, "alpha")
    again = run(fleet("restart", str(work), runner=runner))

    assert f"broker={other}" in ready_log(var, "alpha"), again.text


def test_a_dev_restart_of_services_fleet_started_on_different_brokers_is_refused_without_redis(
    runner: ImqRunner, work: Path, var: Path, redis_port: int
) -> None:
    for name in ("alpha", "beta"):
        make_service(work, name, {"build": "node -e 0", "start": SERVE_BROKER, "dev": SERVE_BROKER})
    for name, host in (("alpha", "127.0.0.1"), ("beta", "localhost")):
        started = run(fleet("start", str(work), [name], redis=f"{host}:{redis_port}", runner=runner))
        assert not started.is_error, started.text
    pids = read_pids(var)

    refused = run(fleet("restart", str(work), runner=runner))

    assert refused.is_error and refused.error_code == ErrorCode.ARGUMENT_REFUSED
    assert "different brokers" in refused.text and "Nothing was run" in refused.text
    assert f"alpha: IMQ_REDIS=127.0.0.1:{redis_port}" in refused.text
    assert read_pids(var) == pids  # nothing was restarted


def test_redis_where_nothing_answers_is_broker_unreachable_and_nothing_runs(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    make_service(work, "alpha", {"build": counting_build(work / "alpha"), "start": SERVE})

    result = production_start(runner, redis=f"127.0.0.1:{free_port()}")

    assert result.is_error and result.error_code == ErrorCode.BROKER_UNREACHABLE
    assert not (work / "alpha" / "builds.txt").exists() and read_pids(var) == {}


@pytest.mark.parametrize(("action", "mode"), [("start", "dev"), ("restart", "production")])
def test_redis_where_nothing_answers_is_explained_as_what_the_started_services_need(
    runner: ImqRunner, work: Path, var: Path, action: str, mode: str
) -> None:
    """The refusal says what fleet needs the broker for (generate_client's words are its own)
    and holds for restart too: the running service is not stopped."""
    make_service(work, "alpha", {"build": "node -e 0", "start": SERVE, "dev": SERVE})
    running = read_pids_after(production_start(runner), runner) if action == "restart" else None
    broker = f"127.0.0.1:{free_port()}"

    result = run(fleet(action, str(work), mode=mode, redis=broker, runner=runner))

    assert result.is_error and result.error_code == ErrorCode.BROKER_UNREACHABLE and result.command == []
    assert f"No broker at {broker} (the redis argument)" in result.text
    assert f"fleet {action} gives the services it starts IMQ_REDIS={broker}" in result.text
    assert "describe itself" not in result.text and "fleet(action='status')" not in result.next_step
    assert f"Start Redis at {broker}" in result.next_step and "leave redis out" in result.next_step
    if running is None:
        assert "nothing was started" in result.text and read_pids(var) == {}
    else:
        assert "nothing was stopped or started" in result.text
        assert read_pids(var) == {"alpha": running} and process_group(running)


def test_a_pids_line_whose_pid_is_not_ascii_digits_is_skipped_as_imq_skips_it(var: Path) -> None:
    """imq's Number() reads no digits but ASCII; str.isdigit takes these, and int() fails on '²'."""
    var.mkdir(parents=True, exist_ok=True)
    (var / ".pids").write_text("alpha:\u00b2\nbeta:\u0661\u0662\ngamma:\uff14\uff12\ndelta:42\n")

    assert read_pids(var) == {"delta": 42}


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"action": "status", "redis": "127.0.0.1:6379"}, "status starts none"),
        ({"action": "start", "redis": "no port"}, "which is not a broker address"),
    ],
)
def test_redis_misuse_is_refused_before_anything_runs(
    runner: ImqRunner, arguments: dict[str, Any], says: str
) -> None:
    result = run(fleet(runner=runner, **arguments))

    assert result.is_error and result.error_code == ErrorCode.ARGUMENT_REFUSED
    assert says in result.text and result.command == []


# --- the previous runs' logs, kept at each start ----------------------------------------


def counted_serve(folder: Path) -> str:
    """Like SERVE, but each run prints its number (kept in runs.txt), so runs are told apart."""
    runs = folder / "runs.txt"
    return (
        f"node -e \"const fs=require('fs');const f='{runs}';"
        "const n=(fs.existsSync(f)?+fs.readFileSync(f,'utf8'):0)+1;fs.writeFileSync(f,String(n));"
        "console.log('run '+n+' Alpha: reader '+'channel connected');setInterval(()=>{},1000)\""
    )


def wait_for_text(path: Path, text: str, seconds: float = 60) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.is_file() and text in (shown := path.read_text(errors="replace")):
            return shown
        time.sleep(0.2)
    raise AssertionError(f"{text!r} not in {path} within {seconds} s")


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_production_restart_keeps_the_previous_runs_log_and_says_where(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    folder = make_service(work, "alpha", {"build": "node -e 0", "start": counted_serve(work / "alpha")})
    first = production_start(runner)
    assert not first.is_error and "previous run's log" not in first.text, first.text  # none yet
    wait_for_text(var / "alpha.log", "run 1 Alpha")

    restarted = run(fleet("restart", str(work), mode="production", runner=runner))

    assert not restarted.is_error, restarted.text
    assert f"The previous run's log: {var / 'alpha.log.1'}." in restarted.text
    assert "run 1 Alpha" in (var / "alpha.log.1").read_text()
    assert "run 1" not in wait_for_text(var / "alpha.log", "run 2 Alpha")
    for _ in range(3):  # runs 3, 4, 5: only the last three earlier runs are kept
        assert not run(fleet("restart", str(work), mode="production", runner=runner)).is_error
    wait_for_text(var / "alpha.log", "run 5 Alpha")
    kept = sorted(path.name for path in var.glob("alpha.log*"))
    assert kept == ["alpha.log", "alpha.log.1", "alpha.log.2", "alpha.log.3"]
    assert [
        f"run {n} Alpha" in (var / f"alpha.log.{k}").read_text() for k, n in ((1, 4), (2, 3), (3, 2))
    ] == [True] * 3

    from imqueue_mcp.server.imq.bridge import logs

    dumped = run(logs("dump", ["alpha"], runner=runner))  # real `imq log`: the current run only
    assert not dumped.is_error and "run 5 Alpha" in dumped.stdout and "run 4" not in dumped.stdout
    assert f"- alpha: {var / 'alpha.log.1'}, {var / 'alpha.log.2'}, {var / 'alpha.log.3'}" in dumped.text
    assert (folder / "runs.txt").read_text() == "5"
    cleaned = run(logs("clean", ["alpha"], runner=runner))
    assert not cleaned.is_error and "and 3 kept log(s) of earlier runs." in cleaned.text, cleaned.text
    assert not list(var.glob("alpha.log.*"))


def test_a_dev_start_by_real_imq_keeps_the_log_of_a_service_that_died(
    runner: ImqRunner, work: Path, var: Path
) -> None:
    """imq ctl start truncates the log (ctl.ts opens it with 'w'); the one before is kept first."""
    died = (
        "node -e \"console.log('Alpha: reader ' + 'channel connected'); "
        "console.error('FATAL: out of cheese'); process.exit(3)\""
    )
    make_service(work, "alpha", {"dev": died})
    started = run(fleet("start", str(work), runner=runner))
    assert not started.is_error, started.text
    wait_for_text(var / "alpha.log", "FATAL: out of cheese")
    (work / "alpha" / "package.json").write_text(json.dumps({"name": "alpha", "scripts": {"dev": SERVE}}))
    deadline = time.monotonic() + STOP_SECONDS  # imq's record of the dead pid stays; it is not alive
    while any(pid and Path(f"/proc/{pid}").is_dir() for pid in [read_pids(var).get("alpha")]):
        assert time.monotonic() < deadline
        time.sleep(0.2)

    again = run(fleet("start", str(work), runner=runner))

    assert not again.is_error, again.text
    assert f"alpha: {var / 'alpha.log.1'}" in again.text and "previous run's log" in again.text
    assert "FATAL: out of cheese" in (var / "alpha.log.1").read_text()
    assert "FATAL" not in wait_for_text(var / "alpha.log", READY)  # imq's new run, truncated


def test_a_kept_log_holds_the_last_mebibyte_on_whole_lines(tmp_path: Path) -> None:
    from imqueue_mcp.server.imq.log_rotation import KEPT_BYTES, keep_previous_log

    lines = [f"line {n:07d}\n" for n in range(KEPT_BYTES // 10)]  # 13 bytes each: ~1.3 MiB
    (tmp_path / "big.log").write_text("".join(lines))
    kept = keep_previous_log(tmp_path, "big")
    assert kept == tmp_path / "big.log.1"
    text = kept.read_text()
    assert len(text.encode()) <= KEPT_BYTES + 100 and text.endswith(lines[-1])
    head, first, *_ = text.splitlines()
    assert head.startswith("[... the first ") and head.endswith(" bytes of this run's output were not kept]")
    assert first + "\n" in lines  # a whole line
    assert keep_previous_log(tmp_path, "big") == kept and not (tmp_path / "big.log.2").exists()  # once
    assert keep_previous_log(tmp_path, "none") is None


def test_the_ready_check_reads_a_huge_log_a_chunk_at_a_time_and_only_what_it_gained(tmp_path: Path) -> None:
    import tracemalloc

    from imqueue_mcp.server.imq import production

    log = tmp_path / "alpha.log"
    chunk = production._ReadyScan.CHUNK
    junk = b"x" * (64 * chunk - 5)  # the ready line then straddles two chunks
    log.write_bytes(junk)
    scan = production._ReadyScan(log)
    tracemalloc.start()
    try:
        assert not scan.found()
        with log.open("ab") as file:
            file.write(READY.encode() + b"\n")
        assert scan.found()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * chunk  # one chunk at a time, never the 64 MiB log
    assert scan.offset == log.stat().st_size  # the second look read only what the log gained
    assert production._ReadyScan(log).found()  # read at once: the line straddles chunks 64 and 65
    log.write_bytes(b"a new run\n")  # truncated by the next start: read from its start again
    assert not scan.found() and scan.offset == 10
    assert production.log_tail(log) == "a new run"


def test_a_dev_service_that_crashes_under_nodemon_is_reported_crashed_not_started(
    runner: ImqRunner, work: Path
) -> None:
    """imq's template runs a dev service under nodemon, which outlives a service that crashed ("app
    crashed - waiting for file changes"): imq ctl start succeeded and status said running."""
    from imq_real import SERVICE_RUNTIME

    nodemon = "./node_modules/nodemon/bin/nodemon.js --watch src -e ts --exec 'node index.js'"
    for name, body in (("crasher", "throw new Error('boom at start-up');"), ("alpha", SERVE_SCRIPT)):
        folder = make_service(work, name, {"build": "node -e 0", "start": "node index.js", "dev": nodemon})
        (folder / "index.js").write_text(body + "\n")
        (folder / "node_modules").symlink_to(SERVICE_RUNTIME, target_is_directory=True)

    started = run(fleet("start", str(work), runner=runner))

    assert started.is_error and started.error_code == ErrorCode.IMQ_FAILED, started.text
    assert "- crasher: CRASHED at start" in started.text and "boom at start-up" in started.text
    assert "- alpha: ready" in started.text
    assert "crasher crashed at start" in started.next_step
    status = run(fleet("status", str(work), runner=runner))
    (line,) = [line for line in status.text.splitlines() if line.startswith("- crasher:")]
    assert "CRASHED" in line and "nodemon" in line
    (alpha,) = [line for line in status.text.splitlines() if line.startswith("- alpha:")]
    assert "running (pid" in alpha


# What SERVE runs, as a file: prints imq's ready line and stays up.
SERVE_SCRIPT = "console.log('Alpha: reader ' + 'channel connected'); setInterval(() => {}, 1000);"


@pytest.mark.parametrize("mode", ["production", "dev"])
def test_a_start_given_redis_warns_of_the_services_that_never_read_imq_redis(
    runner: ImqRunner, work: Path, redis_port: int, mode: str
) -> None:
    """imq's own template: its config.ts names no broker, so fleet's redis reached the service's
    environment and the service still connected to localhost:6379."""
    make_service(work, "alpha", {"build": "node -e 0", "start": SERVE, "dev": SERVE})  # never reads it
    make_service(work, "beta", {"build": "node -e 0", "start": SERVE_BROKER, "dev": SERVE_BROKER})

    started = run(fleet("start", str(work), mode=mode, redis=f"127.0.0.1:{redis_port}", runner=runner))

    assert started.text.startswith("WARNING: alpha never read IMQ_REDIS"), started.text[:300]
    assert "beta" not in started.text.split("\n", 1)[0]
    assert "process.env.IMQ_REDIS" in started.text
    unasked = run(fleet("restart", str(work), services=["beta"], mode=mode, runner=runner))
    assert "WARNING" not in unasked.text

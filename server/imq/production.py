"""fleet's production start: `npm run build`, then `npm start` detached, tracked where imq ctl tracks.

imq ctl start (5.2.2) runs `npm run dev` in each service (in imq's template: nodemon, which
restarts the service on every file written into src/) and has no production mode. This module
starts a service the way it runs in production and records it exactly as imq ctl records its
own (imq's src/ctl.ts and lib/services.ts), so imq's status, stop, restart and log treat both
kinds alike:

- `<imq home>/var/.pids`: one `service:pid` line per started service. The pid leads the
  service's own process group: imq ctl stop sends SIGTERM to the group, waits about 5 s, then
  SIGKILL; imq ctl start skips a service whose pid is alive.
- `<imq home>/var/<service>.log`: the service's stdout and stderr, truncated at each start,
  which imq log (the logs tool) reads; the previous runs' are kept first (log_rotation.py).
- A service is what imq ctl would start: a named sub-folder of the path, else each sub-folder
  whose src/ has a .ts file with a class extending IMQService or IMQClient.

What imq does not know, the mode, is kept beside them in `.imqueue-mcp-modes.json` (service ->
the pid started in production, when, and the environment fleet gave it; a dev run fleet gave a
redis is recorded too, so a restart gives it the same broker). A record counts while .pids holds
that same pid, so a service imq ctl restarts (in dev mode) is reported as dev again; and after its
run ended and imq's status pruned it (a crash), until fleet stops or starts that service again: its
status says EXITED, and a restart gives it what it was given.

    var_home()                                   imq's runtime folder, as imq computes it
    start_production(root, names, runner)        per service: build, start, wait -> BridgeResult
    recorded_environments(root, names)           what each was last started with, for a restart
    record_dev_starts(root, before, environment) the same kept for the ones imq ctl started
    describe_modes(root, names)                  per tracked service: running or not, and its mode
    forget_stopped(root, names)                  drops the stopped ones' records (a crashed run's stay)
    stop_tracked(root, names)                    imq ctl stop's own steps, for a server without imq

The service is launched by a short Python process that starts `npm start` in a new session and
exits at once, as imq's own process exits after spawning `npm run dev`: the service never is a
child of the server, so no zombie of it outlives it here and imq sees it end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import fcntl
import json
import os
import re
import shutil
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from imqueue_mcp.server import progress
from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.imq.arguments import refused
from imqueue_mcp.server.imq.log_rotation import keep_previous_log
from imqueue_mcp.server.imq.runner import (
    BridgeResult,
    ImqRunner,
    RunOutcome,
    group_alive,
    signal_group,
    word_outcome,
)
from imqueue_mcp.server.user_files import MANIFEST_BYTES, read_text_capped

__all__ = [
    "BUILD_TIMEOUT_SECONDS",
    "LAUNCH_TIMEOUT_SECONDS",
    "READY_MARKER",
    "STARTUP_SECONDS",
    "describe_modes",
    "discover_services",
    "forget_stopped",
    "log_tail",
    "record_dev_starts",
    "said_environment",
    "recorded_environments",
    "start_production",
    "stop_tracked",
    "var_home",
    "watch_dev_starts",
]

STOP_TERM_SECONDS = 5.0  # imq ctl stop: 20 polls of 250 ms after SIGTERM, then SIGKILL
STOP_KILL_SECONDS = 2.0  # and 8 more after SIGKILL
READY_MARKER = "reader channel connected"  # the line imq ctl --calm waits for (src/ctl.ts)
BUILD_TIMEOUT_SECONDS = 180.0  # one service's `npm run build` (tsc)
LAUNCH_TIMEOUT_SECONDS = 20.0  # the launcher only spawns npm and prints its pid
STARTUP_SECONDS = 30.0  # for the ready line; a service that ends before it is reported failed
POLL_SECONDS = 0.2
LOCK_SECONDS = 600.0  # another production start of the same imq home holds the lock meanwhile
LOG_TAIL_BYTES = 4000  # of a service that ended before it was ready, shown in the error
MODES_FILE = ".imqueue-mcp-modes.json"
PRODUCTION = "production"

# imq's lib/services.ts: what makes a folder a service for imq ctl.
_SERVICE_MARKER = re.compile(r"extends\s+(?:[\w$]+\.)?IMQ(?:Service|Client)\b")

# Starts argv[3:] in argv[2] in a new session, output to the log argv[1], prints its pid, exits.
_LAUNCHER = (
    "import subprocess, sys\n"
    "log = open(sys.argv[1], 'wb')\n"
    "child = subprocess.Popen(sys.argv[3:], cwd=sys.argv[2], stdin=subprocess.DEVNULL, stdout=log,\n"
    "                         stderr=subprocess.STDOUT, start_new_session=True)\n"
    "print(child.pid)\n"
)


# --------------------------------------------------------------------------- imq's own records


def var_home() -> Path:
    """imq's runtime folder: $IMQ_CLI_HOME/.imq/var, else the OS home's (lib/constants.ts)."""
    home = os.environ.get("IMQ_CLI_HOME") or str(Path.home())
    return Path(home) / ".imq" / "var"


def read_pids(var: Path) -> dict[str, int]:
    """imq's .pids: `service:pid` per line; blank and malformed lines are skipped, as imq does
    (its Number() reads ASCII digits only, where str.isdigit takes '١٢' and '²' too)."""
    try:
        text = (var / ".pids").read_text("utf-8", errors="replace")  # imq reads it as Node does
    except OSError:
        return {}
    pids: dict[str, int] = {}
    for line in text.splitlines():
        service, colon, pid = line.strip().rpartition(":")
        if colon and service and pid.isascii() and pid.isdigit() and int(pid) > 0:
            pids[service] = int(pid)
    return pids


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(text, "utf-8")
    temporary.replace(path)


def write_pids(var: Path, pids: dict[str, int]) -> None:
    body = "".join(f"{service}:{pid}\n" for service, pid in pids.items())
    _write_atomically(var / ".pids", body)


def read_modes(var: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads((var / MODES_FILE).read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): v for k, v in data.items() if isinstance(v, dict) and isinstance(v.get("pid"), int)}


def write_modes(var: Path, modes: dict[str, dict[str, Any]]) -> None:
    _write_atomically(var / MODES_FILE, json.dumps(modes, indent=2, sort_keys=True) + "\n")


def process_alive(pid: int) -> bool:
    """Whether pid runs; a zombie (ended, not yet reaped by init) does not count where /proc shows it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, another user's
    if not Path("/proc").is_dir():
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False  # it ended while we looked
    return state != "Z"


def recorded_pid(modes: dict[str, dict[str, Any]], pids: dict[str, int], service: str) -> int | None:
    """The pid of `service` when it is tracked by imq AND its record here is of that same run."""
    record = modes.get(service)
    pid = pids.get(service)
    return pid if record is not None and pid is not None and record.get("pid") == pid else None


def production_pid(modes: dict[str, dict[str, Any]], pids: dict[str, int], service: str) -> int | None:
    """The pid of `service` when it is tracked by imq AND was started here in production."""
    pid = recorded_pid(modes, pids, service)
    return pid if pid is not None and modes[service].get("mode", PRODUCTION) == PRODUCTION else None


def exited_pid(modes: dict[str, dict[str, Any]], pids: dict[str, int], service: str) -> int | None:
    """The pid of `service`'s recorded run when imq tracks no run of it any more: the run ended and
    imq ctl status pruned it (a crash after it was ready), or something stopped it outside fleet.
    Its record still says what it was given, for a restart."""
    record = modes.get(service)
    return record["pid"] if record is not None and service not in pids else None


def forget_stopped(root: Path, names: list[str] | None) -> None:
    """After a stop (or restart) of `names` (else of every service under root): drops their records
    that no longer match a tracked run, and anyone's that a run fleet did not start replaced (imq
    ctl restarted it in dev). Another service's run that imq's status pruned keeps its record."""
    var = var_home()
    modes = read_modes(var)
    if not modes:
        return
    pids = read_pids(var)
    scope = set(names or discover_services(root))
    kept = {
        name: record
        for name, record in modes.items()
        if recorded_pid(modes, pids, name)
        or (name not in scope and exited_pid(modes, pids, name) and Path(str(record.get("folder"))).is_dir())
    }
    if kept != modes:
        with contextlib.suppress(OSError):
            write_modes(var, kept)


def said_environment(environment: dict[str, str]) -> str:
    """`IMQ_REDIS=127.0.0.1:6380, ...`: what a service was given, as status and fleet's replies say it."""
    return ", ".join(f"{key}={value}" for key, value in sorted(environment.items()))


def recorded_environments(root: Path, names: list[str] | None) -> dict[str, dict[str, str]]:
    """The environment (fleet's redis) each service under root, or each named one, was last started
    with by fleet, while imq still tracks that run: a restart gives it the same again."""
    var = var_home()
    modes, pids = read_modes(var), read_pids(var)
    recorded: dict[str, dict[str, str]] = {}
    for name, record in modes.items():
        given = record.get("environment")
        if (names and name not in names) or record.get("folder") != str(root / name) or not given:
            continue
        current = recorded_pid(modes, pids, name) or exited_pid(modes, pids, name)
        if current is not None and isinstance(given, dict):
            recorded[name] = {str(key): str(value) for key, value in given.items()}
    return recorded


def _beside(given: dict[str, str] | None) -> str:
    """`, IMQ_REDIS=...` after a mode, when the run was given an environment."""
    return f", {said_environment(given)}" if given else ""


def _folder_under(record: dict[str, Any], root: Path) -> bool:
    """Whether the record's service folder is still there, in root."""
    folder = Path(str(record.get("folder")))
    with contextlib.suppress(OSError, RuntimeError):
        return folder.is_dir() and folder.resolve().parent == root.resolve()
    return False


def describe_modes(root: Path, names: list[str] | None) -> str:
    """Per service imq tracks (or the named ones): running or not, and in which mode; and each of
    root's services whose recorded run has ended (EXITED), while its folder is there."""
    var = var_home()
    pids, modes = read_pids(var), read_modes(var)
    shown = [name for name in pids if not names or name in names]
    exited = [
        name
        for name, record in modes.items()
        if (not names or name in names) and exited_pid(modes, pids, name) and _folder_under(record, root)
    ]
    if not shown and not exited:
        return ""
    lines = ["Mode of each tracked service:"]
    for name in shown:
        pid = pids[name]
        state = f"running (pid {pid})" if process_alive(pid) else f"not running (stale pid {pid})"
        if production_pid(modes, pids, name) is not None:
            record = modes[name]
            started, folder = record.get("started", "?"), record.get("folder")
            given = record.get("environment") or {}
            extra = _beside(given)
            mode = f"production (`npm start`, started {started}, folder {folder}{extra})"
        else:
            given = (modes.get(name) or {}).get("environment") if recorded_pid(modes, pids, name) else None
            extra = _beside(given)
            mode = f"dev (imq ctl start: `npm run dev`{extra})"
            if process_alive(pid) and dev_crashed(var / f"{name}.log"):
                state = (
                    f"CRASHED (nodemon, pid {pid}, is alive and waits for a file change: the service "
                    "itself is not running; logs(action='dump') shows why)"
                )
        lines.append(f"- {name}: {state}, mode {mode}; log {var / f'{name}.log'}")
    for name in exited:
        record = modes[name]
        given = record.get("environment") or {}
        extra = _beside(given)
        lines.append(
            f"- {name}: EXITED (its run, pid {record['pid']}, ended and imq no longer tracks it: "
            f"logs(action='dump') shows why), last started in {record.get('mode', PRODUCTION)} mode "
            f"{record.get('started', '?')} in {record.get('folder')}{extra}; log {var / f'{name}.log'}. "
            "fleet(action='restart') starts it again with the same environment."
        )
    return "\n".join(lines)


def discover_services(root: Path) -> list[str]:
    """The sub-folders imq ctl starts under root: those whose src/ has a service class (imq's rule)."""
    try:
        entries = sorted(entry for entry in root.iterdir() if entry.is_dir())
    except OSError:
        return []
    return [entry.name for entry in entries if _has_service_class(entry / "src")]


def _has_service_class(source: Path) -> bool:
    try:
        files = [path for path in source.rglob("*.ts") if path.is_file()]
    except OSError:
        return False
    for path in files:
        try:
            if _SERVICE_MARKER.search(read_text_capped(path, MANIFEST_BYTES, errors="replace")):
                return True
        except OSError:
            continue
    return False


# --------------------------------------------------------------------------- one service


@dataclass
class ServiceStart:
    """What happened to one service: a line for the agent, and the error when it failed."""

    name: str
    text: str
    error_code: ErrorCode | None = None
    next_step: str = ""


def _refuse_name(name: str) -> str:
    if "/" in name or name in (".", ".."):
        return (
            f"service name {name!r} is not a folder name: pass the name of a sub-folder of path "
            "(no '/', not '.' or '..')."
        )
    return ""


def _scripts(folder: Path) -> dict[str, str] | str:
    """The package.json scripts of folder, or why they cannot be read."""
    manifest = folder / "package.json"
    try:
        data = json.loads(read_text_capped(manifest, MANIFEST_BYTES))
    except FileNotFoundError:
        return f"{folder} has no package.json"
    except (OSError, ValueError) as error:
        return f"{manifest} cannot be read as JSON ({error})"
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return {str(k): str(v) for k, v in scripts.items()} if isinstance(scripts, dict) else {}


_ADD_SCRIPTS = (
    'Add the missing scripts to its package.json (a scaffold_service project has "build": "tsc" and '
    '"start": "node dist/index.js"; imq\'s template has both), or start it in dev mode with '
    "fleet(action='start')."
)


def _missing_scripts(name: str, scripts: dict[str, str]) -> str:
    missing = [script for script in ("build", "start") if script not in scripts]
    if not missing:
        return ""
    return (
        f"{name} has no {' and no '.join(missing)} script in its package.json, and a production start "
        "runs `npm run build`, then `npm start`. Nothing was run for it."
    )


def log_tail(log: Path) -> str:
    """The log's last LOG_TAIL_BYTES, read from there: a service may have written gigabytes."""
    try:
        with log.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - LOG_TAIL_BYTES))
            data = file.read(LOG_TAIL_BYTES)
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace").strip()
    return f"[... earlier output in {log}]\n{text}" if size > LOG_TAIL_BYTES else text


class _ReadyScan:
    """Looks for imq's ready line (or another of `markers`) in what the log gained since the last
    look, a chunk at a time (a service may write gigabytes before it, or instead of it): memory
    stays one chunk. `which`: the marker found first."""

    CHUNK = 1 << 20

    def __init__(self, log: Path, markers: tuple[str, ...] = (READY_MARKER,)) -> None:
        self.log, self.offset, self.carry = log, 0, b""
        self.markers = [marker.encode() for marker in markers]
        self.which: str | None = None

    def found(self) -> bool:
        keep = max(len(marker) for marker in self.markers) - 1
        try:
            with self.log.open("rb") as file:
                if file.seek(0, os.SEEK_END) < self.offset:  # truncated: a new run
                    self.offset, self.carry = 0, b""
                file.seek(self.offset)
                while chunk := file.read(self.CHUNK):
                    self.offset += len(chunk)
                    seen = self.carry + chunk
                    at = {found: marker for marker in self.markers if (found := seen.find(marker)) >= 0}
                    if at:
                        self.which = at[min(at)].decode()
                        return True
                    self.carry = seen[-keep:] if keep else b""
        except OSError:
            pass
        return False


# nodemon (imq's template runs the service under it in dev mode) outlives a service that crashed:
# the pid imq tracks stays alive, waiting for a file to change, and the log says this.
DEV_CRASHED = "[nodemon] app crashed"
DEV_RESTARTING = "[nodemon] starting"
DEV_WATCH_SECONDS = 8.0  # how long a dev start watches each new run's log for its ready line or a crash


async def watch_dev_starts(before: dict[str, int]) -> dict[str, str]:
    """Each service imq ctl just started (its pid new since `before`): 'ready', 'crashed' (nodemon's
    crash line, or the process gone) or 'starting' after DEV_WATCH_SECONDS; watched together."""
    var = var_home()
    started = {name: pid for name, pid in read_pids(var).items() if before.get(name) != pid}

    async def watch(name: str, pid: int) -> tuple[str, str]:
        scan = _ReadyScan(var / f"{name}.log", (READY_MARKER, DEV_CRASHED))
        deadline = time.monotonic() + DEV_WATCH_SECONDS
        while time.monotonic() < deadline:
            if await asyncio.to_thread(scan.found):
                return name, "ready" if scan.which == READY_MARKER else "crashed"
            if not process_alive(pid):
                return name, "crashed"
            await asyncio.sleep(POLL_SECONDS)
        return name, "starting"

    return dict(await asyncio.gather(*(watch(name, pid) for name, pid in started.items())))


def dev_crashed(log: Path) -> bool:
    """Whether the log's last run under nodemon crashed and waits for a file change."""
    tail = log_tail(log)
    crashed = tail.rfind(DEV_CRASHED)
    return crashed >= 0 and crashed > max(tail.rfind(DEV_RESTARTING), tail.rfind(READY_MARKER))


async def _wait_until_ready(pid: int, log: Path, seconds: float) -> str:
    """'ready' once the log has imq's ready line, 'ended' when the process ends, else 'waiting'.
    The log is read off the event loop, only what it gained since the last poll."""
    deadline = time.monotonic() + seconds
    scan = _ReadyScan(log)
    while True:
        ready = await asyncio.to_thread(scan.found)
        if not process_alive(pid):
            return "ended"
        if ready:
            return "ready"
        if time.monotonic() >= deadline:
            return "waiting"
        await asyncio.sleep(POLL_SECONDS)


async def _launch(
    runner: ImqRunner, npm: str, folder: Path, log: Path, environment: dict[str, str]
) -> int | BridgeResult:
    """Starts `npm start` in folder, detached in its own session; its pid, or what went wrong."""
    argv = [sys.executable, "-c", _LAUNCHER, str(log), str(folder), npm, "start"]
    outcome = await runner.run_program(argv, LAUNCH_TIMEOUT_SECONDS, cwd=folder, environment=environment)
    if isinstance(outcome, RunOutcome) and outcome.succeeded and outcome.stdout.strip().isdigit():
        return int(outcome.stdout.strip())
    return word_outcome(outcome, failure_hint=f"npm start could not be launched in {folder}.")


def _not_startable(folder: Path, name: str, var: Path) -> ServiceStart | None:
    """Why name is not to be built and started now (no folder or scripts, already running), or None."""
    if not folder.is_dir():
        return ServiceStart(
            name,
            f"{name}: no folder {folder}.",
            ErrorCode.ARGUMENT_REFUSED,
            "Pass the name of a service folder under path; fleet(action='status') lists the running ones.",
        )
    scripts = _scripts(folder)
    if isinstance(scripts, str):
        return ServiceStart(name, f"{name}: {scripts}.", ErrorCode.ARGUMENT_REFUSED, "Fix package.json.")
    missing = _missing_scripts(name, scripts)
    if missing:
        return ServiceStart(name, missing, ErrorCode.ARGUMENT_REFUSED, _ADD_SCRIPTS)
    pids, modes = read_pids(var), read_modes(var)
    running = pids.get(name)
    if running is None or not process_alive(running):
        return None
    if production_pid(modes, pids, name) is not None:
        return ServiceStart(
            name,
            f"{name}: already running in production (pid {running}, started "
            f"{modes[name].get('started', '?')}); left as it is, nothing was started twice. "
            f"To rebuild and start it again, call fleet(action='restart', mode='production').",
        )
    return ServiceStart(
        name,
        f"{name}: already running under imq ctl in dev mode (`npm run dev`, pid {running}), where "
        "nodemon may restart it on every file written into src/; nothing was started twice.",
        ErrorCode.ARGUMENT_REFUSED,
        f"To run it in production instead, call fleet(action='restart', mode='production', "
        f"services=['{name}']): it stops the dev one, builds and starts it.",
    )


def _track(var: Path, name: str, pid: int, folder: Path, environment: dict[str, str]) -> None:
    """The pid in imq's .pids, and its mode (and the environment it was given) beside it."""
    write_pids(var, {**read_pids(var), name: pid})
    write_modes(var, {**read_modes(var), name: _record(pid, PRODUCTION, folder, environment)})


def _record(pid: int, mode: str, folder: Path, environment: dict[str, str]) -> dict[str, Any]:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"pid": pid, "mode": mode, "started": stamp, "folder": str(folder), "environment": environment}


def record_dev_starts(root: Path, before: dict[str, int], environment: dict[str, str]) -> None:
    """After imq ctl start/restart: each service it started (a pid new since `before`) recorded
    in dev mode with the environment fleet gave it (fleet's redis, or none), so status shows it,
    a restart without redis gives it again, and an older run's record never speaks for it."""
    var = var_home()
    pids, modes = read_pids(var), read_modes(var)
    started = {
        name: _record(pid, "dev", root / name, environment)
        for name, pid in pids.items()
        if before.get(name) != pid and (root / name).is_dir()
    }
    if started:
        with contextlib.suppress(OSError):
            write_modes(var, {**modes, **started})


async def _start_one(
    runner: ImqRunner, npm: str, root: Path, name: str, var: Path, environment: dict[str, str]
) -> ServiceStart:
    folder = root / name
    refusal = _not_startable(folder, name, var)
    if refusal is not None:
        return refusal
    build_started = time.monotonic()
    built = await runner.run_program(
        [npm, "run", "build"], BUILD_TIMEOUT_SECONDS, cwd=folder, environment=environment
    )
    build_failed = word_outcome(
        built,
        failure_hint=(
            f"The build of {name} failed, so it was not started. Fix what the compiler reports above "
            "(file and line), then call fleet(action='start', mode='production') again."
        ),
    )
    if build_failed.is_error:
        return ServiceStart(
            name,
            f"{name}: `npm run build` failed; not started.\n{build_failed.text}",
            build_failed.error_code,
            build_failed.next_step,
        )
    build_seconds = time.monotonic() - build_started
    log = var / f"{name}.log"
    kept = keep_previous_log(var, name)  # the launcher truncates the log, as imq ctl does
    previous = f" The previous run's log: {kept}." if kept else ""
    launched = await _launch(runner, npm, folder, log, environment)
    if isinstance(launched, BridgeResult):
        return ServiceStart(name, f"{name}: {launched.text}", launched.error_code, launched.next_step)
    pid = launched
    try:  # before the wait, as imq ctl does: a call cut short still leaves it stoppable
        _track(var, name, pid, folder, environment)
    except OSError as error:
        signal_group(pid, signal.SIGKILL)  # untracked, nothing could stop it later
        return ServiceStart(
            name,
            f"{name}: started, but its pid could not be recorded in {var} ({error.strerror or error}), so "
            "it was stopped again.",
            ErrorCode.IMQ_FAILED,
            f"Make {var} writable (or set IMQ_CLI_HOME for the server), then call again.",
        )
    launched_at = time.monotonic()
    seconds = runner.timeout_seconds if runner.timeout_seconds is not None else STARTUP_SECONDS
    state = await _wait_until_ready(pid, log, seconds)
    if state == "ended":
        _untrack(var, name, pid)
        return ServiceStart(
            name,
            f"{name}: built in {build_seconds:.1f} s, but `npm start` (pid {pid}) ended after "
            f"{time.monotonic() - launched_at:.1f} s, before it was ready.{previous} Its output ({log}):\n"
            f"{log_tail(log) or '(none)'}",
            ErrorCode.IMQ_FAILED,
            "Fix what its output above reports (a missing compiled entry point, an exception at startup, "
            "or a broker it cannot reach: fleet's redis='host:port' gives it IMQ_REDIS), then call "
            "fleet(action='start', mode='production') again.",
        )
    readiness = (
        "ready (its log says 'reader channel connected')"
        if state == "ready"
        else f"still starting after {seconds:g} s (no 'reader channel connected' in its log yet: check "
        f"logs(action='dump', services=['{name}']))"
    )
    return ServiceStart(
        name,
        f"{name}: built in {build_seconds:.1f} s (`npm run build`), started in production with `npm start`, "
        f"pid {pid} (its own process group), {readiness}. Log: {log}.{previous} No watcher: files "
        "written into its src/ do not restart it.",
    )


def _untrack(var: Path, name: str, pid: int) -> None:
    pids = read_pids(var)
    if pids.get(name) == pid:
        del pids[name]
        write_pids(var, pids)
    modes = read_modes(var)
    if modes.pop(name, None) is not None:
        write_modes(var, modes)


# --------------------------------------------------------------------------- the operation


@contextlib.asynccontextmanager
async def _production_lock(var: Path) -> AsyncIterator[bool]:
    """One production start per imq home at a time (across servers), so none starts a service twice."""
    with (var / ".imqueue-mcp.lock").open("a") as handle:
        deadline = time.monotonic() + LOCK_SECONDS
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                await asyncio.sleep(POLL_SECONDS)
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _refused(text: str, code: ErrorCode, next_step: str = "") -> BridgeResult:
    return dataclasses.replace(refused(text, code), next_step=next_step)


async def start_production(
    root: Path,
    names: list[str] | None,
    runner: ImqRunner,
    environment: dict[str, str] | None = None,
    recorded: dict[str, dict[str, str]] | None = None,
) -> BridgeResult:
    """Builds and starts each service (the named ones, else the ones imq ctl would find under root),
    with `environment` added to what it inherits from the server (IMQ_REDIS, when fleet's redis);
    without one, a service in `recorded` (a restart's) gets what it was last started with."""
    npm = shutil.which("npm")
    if npm is None:
        return _refused(
            "npm is not on this server's PATH, and a production start runs `npm run build` and "
            "`npm start`. Install Node.js (it ships npm) and restart the server. Nothing was run.",
            ErrorCode.NPM_NOT_INSTALLED,
        )
    refusal = next((_refuse_name(name) for name in names or [] if _refuse_name(name)), "")
    if refusal:
        return _refused(f"{refusal} Nothing was run.", ErrorCode.ARGUMENT_REFUSED)
    services = list(dict.fromkeys(names)) if names else discover_services(root)
    if not services:
        return _refused(
            f"No @imqueue services found under {root}: a service is a sub-folder whose src/ has a class "
            "extending IMQService or IMQClient. Nothing was run.",
            ErrorCode.ARGUMENT_REFUSED,
            "Pass path as the folder that holds the service folders, or name them in services.",
        )
    var = var_home()
    try:
        var.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return _refused(
            f"imq's runtime folder {var} cannot be created ({error.strerror or error}), and the started "
            "services are recorded there. Nothing was run.",
            ErrorCode.IMQ_FAILED,
            "Make it writable, or set IMQ_CLI_HOME for the server to a writable folder.",
        )
    async with _production_lock(var) as locked:
        if not locked:
            return _refused(
                f"Another production start holds {var / '.imqueue-mcp.lock'} for over {LOCK_SECONDS:g} s. "
                "Nothing was run.",
                ErrorCode.IMQ_TIMED_OUT,
                "Wait for it to finish, then call again.",
            )
        # One progress story for the whole call (values must rise across it): each service's
        # limit is its build, its launch and its wait for the ready line.
        limit = len(services) * (BUILD_TIMEOUT_SECONDS + LAUNCH_TIMEOUT_SECONDS + STARTUP_SECONDS)
        async with progress.ticking(f"production start of {', '.join(services)}", limit):
            outcomes = [
                await _start_one(runner, npm, root, name, var, environment or (recorded or {}).get(name, {}))
                for name in services
            ]
    failed = [outcome for outcome in outcomes if outcome.error_code is not None]
    ok = len(outcomes) - len(failed)
    lines = [
        f"Production start under {root} (`npm run build`, then `npm start` detached, recorded in {var} "
        f"where imq ctl keeps its own): {ok} of {len(outcomes)} service(s) running in production.",
        *(outcome.text for outcome in outcomes),
        "fleet(action='status') shows each with its mode; fleet(action='stop') stops them (SIGTERM to "
        "the group, then SIGKILL); logs(action='dump') shows their output.",
    ]
    first = failed[0] if failed else None
    return BridgeResult(
        text="\n\n".join(lines),
        is_error=first is not None,
        exit_code=None,
        command=[npm, "start"],
        error_code=first.error_code if first else None,
        next_step=first.next_step if first else "",
    )


# --------------------------------------------------------------------------- stop without imq


async def _wait_for_groups(groups: list[int], seconds: float) -> list[int]:
    """The groups still alive after up to `seconds`."""
    deadline = time.monotonic() + seconds
    alive = [group for group in groups if group_alive(group)]
    while alive and time.monotonic() < deadline:
        await asyncio.sleep(POLL_SECONDS)
        alive = [group for group in alive if group_alive(group)]
    return alive


async def stop_tracked(root: Path, names: list[str] | None) -> BridgeResult:
    """What imq ctl stop does, for a server where imq is not installed: the tracked services (the
    named ones, else those found under root, else every one) get SIGTERM to their group, up to 5 s,
    then SIGKILL; the stopped leave .pids. Both modes alike, as imq's own stop."""
    var = var_home()
    pids = read_pids(var)
    scope = set(names or discover_services(root)) or set(pids)
    targets = {name: pid for name, pid in pids.items() if name in scope}
    if not targets:
        return BridgeResult(
            text="Nothing to stop: no matching service is tracked as running.",
            is_error=False,
            exit_code=None,
            command=[],
        )
    for pid in targets.values():
        signal_group(pid, signal.SIGTERM)
    alive = await _wait_for_groups(list(targets.values()), STOP_TERM_SECONDS)
    for pid in alive:
        signal_group(pid, signal.SIGKILL)
    alive = await _wait_for_groups(alive, STOP_KILL_SECONDS)
    stopped = [name for name, pid in targets.items() if pid not in alive]
    write_pids(var, {name: pid for name, pid in pids.items() if name not in stopped})
    forget_stopped(root, names)
    text = (
        f"Stopped {len(stopped)} service(s): {', '.join(stopped)} (SIGTERM to each group, SIGKILL after 5 s)."
    )
    if alive:
        refusing = [name for name, pid in targets.items() if pid in alive]
        text += f" {', '.join(refusing)} did not end even on SIGKILL and stay tracked."
    return BridgeResult(
        text=text,
        is_error=bool(alive),
        exit_code=None,
        command=[],
        error_code=ErrorCode.IMQ_FAILED if alive else None,
        next_step="Check those processes (ps -g PID) and their owner; call fleet(action='stop') again."
        if alive
        else "",
    )

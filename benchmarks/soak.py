"""Soak: every tool, resource, prompt and completion at once, from many SDK clients, counting the
answers that should not have happened and the errors the server logged.

    python -m benchmarks.soak [--seconds 60] [--clients 16] [--workers 1] [--stdio-clients 3]
                              [--in-flight 4] [--mode both|http|stdio] [--seed 1]

Two runs, each against servers spawned fresh (caches empty) reading ../shared/site from loopback
origins, driven from this process by the `mcp` SDK's own client (benchmarks/soak_calls.py has
the calls and the verdicts):

    http    `imqueue-mcp --http --workers N`: `--clients` sessions of the Streamable HTTP client,
            half speaking 2025-11-25 (initialize) and half 2026-07-28 (discover), each opened
            as soon as the port answers. Every session first sends every cold call at once (all
            sessions together, while the corpus may still be loading), then one call at a time
            from the hosted mix until the time is up, opening a new session every 10-40 calls.
    stdio   `--stdio-clients` servers `imqueue-mcp` on pipes, one client each with `--in-flight`
            requests outstanding at once on its session: the same cold burst, then the local mix
            (the hosted tools plus inspect_project, cli_status and cli_help, none of which writes).

About one call in six carries invalid arguments (and must come back as a guided error); get_doc
cursors are followed to the end and the parts checked against the page read whole; lists are
walked through their cursors. Per run: calls, ok, guided errors (expected), UNEXPECTED failures
(internal errors, protocol errors, timeouts, lost connections, wrong answers: the first ten are
printed), and the lines of the server's stderr that say ERROR, CRITICAL or Traceback; then the
same per call kind; calls/s and p50/p99 at the client; the server's RSS (whole process tree)
at the first sample past minute 1 (or the first sample, on runs under two minutes) and at the
end. Prints the tables and one JSON line with the machine and its load average. It measures and
never asserts: tests/test_soak.py runs a short profile and asserts zero unexpected failures and
zero error lines.

The long run:  python -m benchmarks.soak --seconds 600 --clients 32 --workers 2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TextIO

import httpx
from mcp.shared.exceptions import MCPDeprecationWarning

from imqueue_mcp.build_index.cli import main as build_main

from .bench_server import SITE, environment, free_port, origin_args, percentile, site_origins
from .machine import machine
from .processes import stop
from .soak_calls import (
    CALL_TIMEOUT,
    Call,
    Mix,
    Verdict,
    cold_calls,
    describe,
    mirror_words,
    perform,
    random_call,
)
from .stack import IMQ, NODE_BIN

RSS_SAMPLE_SECONDS = 5.0
MINUTE = 60.0
READY_SECONDS = 60.0
SESSION_CALLS = (10, 40)  # a client opens a new session after this many calls (random in range)
PROBLEM_LINE = re.compile(r"\bERROR\b|\bCRITICAL\b|Traceback")
FIRST_UNEXPECTED = 10


# --- counting ----------------------------------------------------------------------------


@dataclass
class Row:
    calls: int = 0
    ok: int = 0
    guided: int = 0
    unexpected: int = 0


@dataclass
class Tally:
    """Outcomes per call label, latencies, and the first unexpected failures, for one run."""

    call_timeout: float = CALL_TIMEOUT  # the bound on each call of the run
    rows: dict[str, Row] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    first_unexpected: list[str] = field(default_factory=list)
    progress_notifications: int = 0
    log_notifications: int = 0

    async def heard_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress_notifications += 1

    async def heard_log(self, params: Any) -> None:
        self.log_notifications += 1

    def record(self, call: Call, verdict: Verdict, seconds: float, where: str = "") -> None:
        row = self.rows.setdefault(call.label, Row())
        row.calls += 1
        setattr(row, verdict.outcome, getattr(row, verdict.outcome) + 1)
        self.latencies.append(seconds)
        if verdict.outcome == "unexpected" and len(self.first_unexpected) < FIRST_UNEXPECTED:
            self.first_unexpected.append(
                f"{call.label} [{where}]: {verdict.detail}" if where else f"{call.label}: {verdict.detail}"
            )

    def unexpected_failure(self, what: str, detail: str) -> None:
        """A failure outside any call (a session that would not open)."""
        self.record(Call("list", what), Verdict("unexpected", detail), 0.0)

    def figures(self, elapsed: float) -> dict[str, Any]:
        total = Row()
        for row in self.rows.values():
            for name in ("calls", "ok", "guided", "unexpected"):
                setattr(total, name, getattr(total, name) + getattr(row, name))
        return {
            **vars(total),
            "seconds": elapsed,
            "calls_per_second": total.calls / elapsed if elapsed else 0.0,
            "p50_ms": percentile(self.latencies, 0.5) * 1000 if self.latencies else 0.0,
            "p99_ms": percentile(self.latencies, 0.99) * 1000 if self.latencies else 0.0,
            "first_unexpected": self.first_unexpected,
            "progress_notifications": self.progress_notifications,
            "log_notifications": self.log_notifications,
            "by_call": {label: vars(row) for label, row in sorted(self.rows.items())},
        }


async def timed(client: Any, call: Call, tally: Tally, where: str) -> None:
    """The call made, bounded, judged and counted; `where` (the session's protocol and phase) is
    said beside an unexpected one."""
    started = time.perf_counter()
    verdict = await perform(client, call, tally.heard_progress, tally.call_timeout)
    tally.record(call, verdict, time.perf_counter() - started, where)


# --- the server's side: its log and its memory --------------------------------------------


def log_problems(log: IO[Any]) -> list[str]:
    """The lines of a server's stderr that report an error, and each traceback as its exception line."""
    log.flush()
    log.seek(0)
    text = log.read()
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    problems: list[str] = []
    in_traceback = False
    for line in text.splitlines():
        if line.startswith("Traceback"):
            in_traceback = True
        elif in_traceback and line and not line.startswith((" ", "During handling", "The above exception")):
            problems.append(f"Traceback ending in {line}")  # the exception itself, the line that names it
            in_traceback = False
        elif PROBLEM_LINE.search(line) and not in_traceback:
            problems.append(line)
    if in_traceback:
        problems.append("Traceback (cut off)")
    return problems


def process_tree_rss(roots: list[int]) -> int:
    """Resident bytes of the `roots` and all their descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            status = (entry / "status").read_text()
        except OSError:
            continue
        pid = int(entry.name)
        children.setdefault(int(stat[1]), []).append(pid)
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                rss[pid] = int(line.split()[1]) * 1024
    total, pending = 0, list(roots)
    while pending:
        pid = pending.pop()
        total += rss.get(pid, 0)
        pending.extend(children.get(pid, []))
    return total


def server_pids() -> list[int]:
    """This process's children that run the server (the stdio servers the SDK's client spawned)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                not entry.name.isdigit()
                or int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) != os.getpid()
            ):
                continue
            if b"imqueue_mcp.server" in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


class MemoryWatch:
    """Samples the RSS of the process trees `roots()` names, every RSS_SAMPLE_SECONDS, in a thread."""

    def __init__(self, roots: Callable[[], list[int]]):
        self.roots = roots
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(RSS_SAMPLE_SECONDS):
            rss = process_tree_rss(self.roots())
            if rss:  # no server between rounds: nothing to sample
                self.samples.append((time.monotonic() - self._started, rss))

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        final = process_tree_rss(self.roots())
        if final or not self.samples:  # the stdio servers may have exited already: keep the last one seen
            self.samples.append((time.monotonic() - self._started, final))
        total = self.samples[-1][0]
        mark = MINUTE if total >= 2 * MINUTE else 0.0  # minute 1 on a long run, else the first sample
        first = next((sample for sample in self.samples if sample[0] >= mark), self.samples[-1])
        last = self.samples[-1]
        return {
            "rss_first_at_s": round(first[0], 1),
            "rss_first_mb": first[1] / 2**20,
            "rss_end_mb": last[1] / 2**20,
            "rss_growth_pct": (last[1] - first[1]) / first[1] * 100 if first[1] else 0.0,
        }


# --- what both runs share: the docs, a snapshot on disk, the servers' environment ----------------


@dataclass(frozen=True)
class Setup:
    """The loopback docs, the snapshot a server finds on disk at start (it answers from it while
    it reads the live docs), and how often the live corpus is rebuilt: the hourly refresh
    compressed into seconds, so that rebuilds in worker threads run beside the calls again and
    again, not once an hour."""

    origins: dict[str, str]
    snapshot: Path
    refresh_seconds: float
    round_seconds: float  # each round on fresh servers, caches empty; 0: one round for the whole run
    call_timeout: float  # a call not answered within this is a failure
    words: tuple[str, ...]
    seed: int

    def rounds(self, seconds: float) -> tuple[int, float]:
        """How many rounds `seconds` of load make, and each one's seconds: round_seconds each, a
        remainder under half a round folded in. Counted up front, so a round that overruns (a cold
        burst on a busy machine) never takes the next round's fresh start away."""
        if not self.round_seconds:
            return 1, seconds
        count = max(1, round(seconds / self.round_seconds))
        return count, seconds / count

    def environment(self, home: Path) -> dict[str, str]:
        home.mkdir(parents=True, exist_ok=True)
        return {
            **environment(home),
            "HOME": str(home),  # imq and Node write nothing into the user's home either
            "IMQUEUE_MCP_SNAPSHOT": str(self.snapshot),
            "IMQUEUE_MCP_REFRESH_SECONDS": repr(self.refresh_seconds),
        }


def build_snapshot(out: Path) -> Path:
    """`imq-build-index --from ../shared/site --pages` into `out`."""
    if build_main(["--from", str(SITE), "--out", str(out), "--pages", "--quiet"]) != 0:
        raise RuntimeError(f"imq-build-index could not build {out} from {SITE}")
    return out


# --- http ----------------------------------------------------------------------------------


@contextlib.contextmanager
def hosted_server(workers: int, setup: Setup, home: Path, log: IO[bytes]) -> Iterator[tuple[str, int]]:
    """`imqueue-mcp --http --workers N`, its stderr in `log`, yielded as soon as its port answers
    /healthz: the corpus may still be loading, so the first calls find every cache empty."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "imqueue_mcp.server",
        "--http",
        "--port",
        str(port),
        "--workers",
        str(workers),
    ]
    process = subprocess.Popen(
        [*command, *origin_args(setup.origins)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
        env=setup.environment(home),
        cwd=home,
    )
    try:
        deadline = time.monotonic() + READY_SECONDS
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"the hosted server did not start: {log_problems(log)[-5:]}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", process.pid
    finally:
        stop(process)


def client_options(mode: str, verbose: bool, tally: Tally) -> dict[str, Any]:
    """The SDK client's options: the protocol, the call timeout, and, for a verbose client, the
    server's log messages at debug (on 2026-07-28 the opt-in rides on every request)."""
    options: dict[str, Any] = {"mode": mode, "read_timeout_seconds": tally.call_timeout}
    if verbose:
        options["logging_callback"] = tally.heard_log
        if mode != "legacy":
            options["log_level"] = "debug"
    return options


async def opt_in(client: Any, mode: str, verbose: bool, timeout: float) -> None:
    """A verbose 2025-11-25 client asks for the server's log messages with logging/setLevel
    (deprecated from 2026-07-28 on, and still what those clients send)."""
    if verbose and mode == "legacy":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await asyncio.wait_for(client.set_logging_level("debug"), timeout)


async def http_session_loop(
    url: str, number: int, stop_at: float, tally: Tally, start: asyncio.Barrier, mix: Mix
) -> None:
    """One client: sessions one after another until stop_at, the first opening with the cold burst."""
    from mcp.client import Client

    rng = random.Random(number)
    mode = "legacy" if number % 2 == 0 else "auto"
    first = True
    while time.perf_counter() < stop_at:
        try:
            verbose = rng.random() < 0.5
            async with Client(url, **client_options(mode, verbose, tally)) as client:
                await opt_in(client, mode, verbose, tally.call_timeout)
                if first:
                    first = False
                    await start.wait()
                    burst = cold_calls("hosted")
                    rng.shuffle(burst)
                    await asyncio.gather(*(timed(client, call, tally, f"{mode}, cold") for call in burst))
                for _ in range(rng.randint(*SESSION_CALLS)):
                    if time.perf_counter() >= stop_at:
                        break
                    await timed(client, random_call(rng, mix), tally, mode)
        except Exception as error:  # a session that would not open or close: counted, then a new one
            tally.unexpected_failure("session", describe(error))
            await asyncio.sleep(0.5)


def soak_http(seconds: float, clients: int, workers: int, setup: Setup, home: Path) -> dict[str, Any]:
    """Rounds of `setup.round_seconds` on a fresh server each, until `seconds` of load."""
    mix = Mix("hosted", setup.words)
    tally = Tally(setup.call_timeout)
    pids: list[int] = []

    async def drive(url: str, round_number: int, stop_at: float) -> None:
        start = asyncio.Barrier(clients)
        numbers = [setup.seed * 100_000 + round_number * 1000 + number for number in range(clients)]
        await asyncio.gather(*(http_session_loop(url, n, stop_at, tally, start, mix) for n in numbers))

    watch = MemoryWatch(lambda: pids[-1:])
    loaded = 0.0  # seconds of load, the servers' starts not counted: the run's elapsed figure
    count, each = setup.rounds(seconds)
    with tempfile.TemporaryFile() as log:
        for round_number in range(count):
            with hosted_server(workers, setup, home, log) as (url, pid):
                pids.append(pid)
                started = time.perf_counter()
                asyncio.run(drive(url, round_number, started + each))
                loaded += time.perf_counter() - started
        memory = watch.stop()
        problems = log_problems(log)
    elapsed = loaded
    return {
        "clients": clients,
        "workers": workers,
        "rounds": len(pids),
        **run_figures(tally, elapsed, problems),
        **memory,
    }


def run_figures(tally: Tally, elapsed: float, problems: list[str]) -> dict[str, Any]:
    return {
        **tally.figures(elapsed),
        "log_problems": len(problems),
        "first_log_problems": problems[:FIRST_UNEXPECTED],
    }


# --- stdio ---------------------------------------------------------------------------------


async def stdio_client_loop(
    number: int, in_flight: int, seconds: float, tally: Tally, setup: Setup, home: Path, log: TextIO
) -> tuple[int, float]:
    """One client: stdio servers one after another, each for a round of its own (the cold burst,
    then `in_flight` callers at once on the session), until `seconds` of load; its rounds and
    the seconds of load (a server's start is not counted)."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    project = home / "project"
    env = setup.environment(home / f"client-{number}")
    if IMQ.exists():  # the real imq for cli_status and cli_help, as .ci/install-imq.sh builds it
        env["IMQUEUE_MCP_IMQ"] = str(IMQ)
        env["PATH"] = os.pathsep.join([str(NODE_BIN), env.get("PATH", "")])
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "imqueue_mcp.server", *origin_args(setup.origins)],
        env=env,
        cwd=project,
    )
    mix = Mix("local", setup.words, str(project))
    rng = random.Random(number)
    loaded = 0.0
    rounds, each = setup.rounds(seconds)
    for _ in range(rounds):
        mode, verbose = rng.choice(["legacy", "auto"]), rng.random() < 0.5
        started = time.perf_counter()
        try:
            async with Client(
                stdio_client(parameters, errlog=log), **client_options(mode, verbose, tally)
            ) as client:
                started = time.perf_counter()
                round_ends = started + each
                await opt_in(client, mode, verbose, tally.call_timeout)
                burst = cold_calls("local")
                rng.shuffle(burst)
                await asyncio.gather(*(timed(client, call, tally, f"{mode}, cold") for call in burst))

                async def caller(caller_rng: random.Random, until: float, where: str) -> None:
                    while time.perf_counter() < until:
                        await timed(client, random_call(caller_rng, mix), tally, where)

                await asyncio.gather(
                    *(caller(random.Random(rng.random()), round_ends, mode) for _ in range(in_flight))
                )
        except Exception as error:
            tally.unexpected_failure("session", f"stdio: {describe(error)}")
            await asyncio.sleep(0.5)
        loaded += time.perf_counter() - started
    return rounds, loaded


def soak_stdio(seconds: float, servers: int, in_flight: int, setup: Setup, home: Path) -> dict[str, Any]:
    project = home / "project"  # what inspect_project reads: a small @imqueue service, never written
    project.mkdir(parents=True, exist_ok=True)
    (project / "package.json").write_text(
        json.dumps({"name": "soak", "type": "module", "dependencies": {"@imqueue/rpc": "^3.7.2"}})
    )
    tally = Tally(setup.call_timeout)

    async def drive(log: TextIO) -> list[tuple[int, float]]:
        loops = [
            stdio_client_loop(setup.seed * 1000 + number, in_flight, seconds, tally, setup, home, log)
            for number in range(servers)
        ]
        return await asyncio.gather(*loops)

    with tempfile.TemporaryFile("w+") as log:
        watch = MemoryWatch(server_pids)
        rounds, loads = zip(*asyncio.run(drive(log)), strict=True)
        memory = watch.stop()
        problems = log_problems(log)
    elapsed = max(loads)
    figures = run_figures(tally, elapsed, problems)
    # rounds: the fewest servers any one client started, each cold
    return {"clients": servers, "in_flight": in_flight, "rounds": min(rounds), **figures, **memory}


# --- report --------------------------------------------------------------------------------


def report(figures: dict[str, Any]) -> None:
    host = figures["machine"]
    print(
        f"Machine: {host['platform']}, {host['cpus']} CPUs, Python {host['python']}, "
        f"load average {host['load_average']:.2f} at the start"
    )
    print(f"Soak, {figures['seconds']:g} s per run, seed {figures['seed']}\n")
    print(
        f"  {'run':<34}{'calls':>7}{'ok':>7}{'guided':>8}{'UNEXPECTED':>12}{'log errors':>12}"
        f"{'calls/s':>9}{'p50 ms':>8}{'p99 ms':>8}{'RSS MB':>15}"
    )
    for name, run in figures["runs"].items():
        print(
            f"  {name:<34}{run['calls']:>7}{run['ok']:>7}{run['guided']:>8}{run['unexpected']:>12}"
            f"{run['log_problems']:>12}{run['calls_per_second']:>9.0f}{run['p50_ms']:>8.0f}{run['p99_ms']:>8.0f}"
            f"{run['rss_first_mb']:>7.0f} ->{run['rss_end_mb']:>5.0f}"
        )
        print(
            f"      {run['rounds']} round(s) of fresh servers, heard {run['progress_notifications']}"
            f" progress and {run['log_notifications']} log notifications"
        )
        for line in run["first_unexpected"]:
            print(f"      unexpected: {line}")
        for line in run["first_log_problems"]:
            print(f"      server log: {line[:200]}")
    for name, run in figures["runs"].items():
        print(f"\n  {name}, per call kind:")
        print(f"    {'call':<34}{'calls':>7}{'ok':>7}{'guided':>8}{'UNEXPECTED':>12}")
        for label, row in run["by_call"].items():
            print(f"    {label:<34}{row['calls']:>7}{row['ok']:>7}{row['guided']:>8}{row['unexpected']:>12}")
    print()
    print(json.dumps(figures, sort_keys=True))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=60.0, help="load duration of each run")
    parser.add_argument("--clients", type=int, default=16, help="concurrent Streamable HTTP clients")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers of the HTTP server")
    parser.add_argument("--stdio-clients", type=int, default=3, help="stdio servers, one client each")
    parser.add_argument("--in-flight", type=int, default=4, help="requests outstanding on each stdio session")
    parser.add_argument(
        "--refresh-seconds", type=float, default=5.0, help="the servers' live corpus rebuild period"
    )
    parser.add_argument(
        "--round-seconds", type=float, default=20.0, help="fresh servers every so often (0: one for the run)"
    )
    parser.add_argument(
        "--call-timeout",
        type=float,
        default=CALL_TIMEOUT,
        help="seconds a call may take before it counts as failed",
    )
    parser.add_argument("--mode", choices=("both", "http", "stdio"), default="both")
    parser.add_argument("--seed", type=int, default=1, help="the random mix's seed (same seed, same calls)")
    args = parser.parse_args(argv)
    if not SITE.is_dir():
        sys.exit(f"soak: the site mirror is not at {SITE}")
    load_average = os.getloadavg()[0]
    runs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="soak-") as temp, site_origins() as origins:
        home = Path(temp)
        snapshot = build_snapshot(home / "snapshot.msgpack")
        words = mirror_words(SITE)
        setup = Setup(
            origins, snapshot, args.refresh_seconds, args.round_seconds, args.call_timeout, words, args.seed
        )
        if args.mode in ("both", "http"):
            name = f"http, {args.clients} clients, {args.workers} worker(s)"
            runs[name] = soak_http(args.seconds, args.clients, args.workers, setup, home / "http")
        if args.mode in ("both", "stdio"):
            name = f"stdio, {args.stdio_clients} servers x {args.in_flight} in flight"
            runs[name] = soak_stdio(args.seconds, args.stdio_clients, args.in_flight, setup, home / "stdio")
    figures = {
        "benchmark": "soak",
        "machine": {**machine(), "load_average": load_average, "load_average_end": os.getloadavg()[0]},
        "seconds": args.seconds,
        "refresh_seconds": args.refresh_seconds,
        "round_seconds": args.round_seconds,
        "call_timeout": args.call_timeout,
        "seed": args.seed,
        "runs": runs,
    }
    report(figures)


if __name__ == "__main__":
    main()

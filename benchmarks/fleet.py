"""Fleet: 1, 2 and 3 `imqueue-mcp --http` instances behind a real HAProxy, under load, through a
rolling restart and a snapshot generation switch. The figure that matters is 0 failed calls.

    python -m benchmarks.fleet [--instances 1,2,3] [--clients 8] [--steady-seconds 10]
                               [--drain-seconds 3] [--shared PATH]

For each instance count N, everything on 127.0.0.1:

    builder    `imq-build-index --from ../shared/site --pages` publishes the snapshot into a folder
               that a plain HTTP server serves: one builder, many servers
    instances  N x `imqueue-mcp --http --offline --snapshot-url URL --drain-seconds D`
    balancer   HAProxy with deploy/compose/haproxy.cfg itself (round robin, `option httpchk GET
               /readyz`), its bind and its server lines rewritten for loopback (`balancer_config`)
    load       `--clients` sessions at once through HAProxy, each with the SDK's Streamable HTTP
               client: initialize, search_docs, get_doc of the top hit in parts of PART_TOKENS
               following nextCursor (the parts, joined, must equal the page read whole: round
               robin sends each part to another instance), find_examples; then a new session

Two phases per N, the load running throughout each:

    steady     `--steady-seconds` with nothing happening: the throughput figures
    rolling    each instance in turn is SIGTERMed (it drains for D seconds, then exits 0) and
               started again on its port, the next only once HAProxy has it UP again; then the
               builder publishes a new generation, every instance is sent SIGHUP, and the phase
               ends once every instance's /readyz names the new generation. With N = 1 there is
               no other instance to take the calls, so the replacement is started first on a
               spare port (a surge, as a Deployment with maxSurge 1 does) and the old one
               SIGTERMed once HAProxy has the new one UP.

A failed call is an exception from the client (HTTP error, timeout, lost connection) or an
isError answer, or a page whose parts do not join up to the page. HAProxy's own retries of
connections that never reached a server (`retry-on conn-failure`) are counted from its stats and
shown. Prints a table, then one JSON line. It measures and never asserts; tests/test_fleet.py
runs a small version and asserts 0 failed calls.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import functools
import http.server
import io
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .bench_server import QuietHandler, free_port
from .machine import machine
from .paths import REPO, shared_dir, site_dir
from .processes import stop

HAPROXY_CFG = REPO / "deploy" / "compose" / "haproxy.cfg"
BACKEND = "imqueue_mcp"
PUBLIC_FRONTEND = "mcp"  # the frontend MCP clients reach; any other is the operator's
NORMAL_REQUEST = re.compile(r" [23]\d\d \d+ \S+ \S+ ---- ")  # httplog: status, bytes, cookies, state
QUERIES = (
    "expose decorator",
    "redis connection options",
    "generate a client",
    "service discovery",
    "classType property",
    "logger configuration",
    "broadcast events",
    "graceful shutdown",
)
CHANGED_PAGE = "imqueue.org/license/index.md"  # what a new generation changes: a page no query here reads
PART_TOKENS = 600  # small parts, so most pages are read through several cursors
CALL_TIMEOUT = 30.0
READY_TIMEOUT = 60.0
PHASE_LIMIT = 300.0  # no phase runs longer than this, whatever happens


# --- the parts: builder, instances, balancer ----------------------------------------------


class Builder:
    """Publishes snapshot generations into a folder, and serves that folder on loopback.

    It builds from its own copy of the site mirror (in the scratch folder), so that each
    generation can differ: a generation is named by a hash of its content, and a rebuild of
    unchanged docs is the same generation. Each publish after the first adds a line to one page
    that no session reads (CHANGED_PAGE), as an edit to the docs would."""

    def __init__(self, site: Path, folder: Path):
        self.mirror = folder / "mirror"
        shutil.copytree(site, self.mirror)
        self.published = folder / "published"
        self.published.mkdir()
        self.count = 0
        handler = functools.partial(QuietHandler, directory=str(self.published))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/snapshot.msgpack"

    def publish(self) -> float:
        """Build the next generation onto the published path (imq-build-index writes it atomically);
        the build's seconds."""
        self.count += 1
        if self.count > 1:
            with (self.mirror / CHANGED_PAGE).open("a") as page:
                page.write(f"\n\nPublished as generation {self.count}.\n")
        started = time.perf_counter()
        subprocess.run(
            [
                Path(sys.executable).parent / "imq-build-index",
                "--from",
                str(self.mirror),
                "--pages",
                "--quiet",
                "--out",
                str(self.published / "snapshot.msgpack"),
            ],
            check=True,
            timeout=300,
        )
        return time.perf_counter() - started

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Instance:
    """One `imqueue-mcp --http` process on a fixed loopback port (None when not running)."""

    port: int
    args: list[str]
    home: Path
    process: subprocess.Popen[bytes] | None = None
    log: Any = None
    errors: list[str] = field(default_factory=list)  # what each run of it logged at ERROR, kept past close

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        command = [sys.executable, "-m", "imqueue_mcp.server", "--http", "--port", str(self.port), *self.args]
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CACHE_HOME": str(self.home / "cache"),
            "PYTHONUNBUFFERED": "1",
        }
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            command,
            cwd=self.home,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )

    def ready(self) -> dict[str, Any] | None:
        """/readyz's answer when it is 200, else None."""
        try:
            response = httpx.get(self.url + "/readyz", timeout=2.0)
        except httpx.HTTPError:
            return None
        return dict(response.json()) if response.status_code == 200 else None

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"instance on port {self.port} exited: {self.stderr()[-2000:]}")
            answer = self.ready()
            if answer is not None:
                return answer
            time.sleep(0.1)
        raise RuntimeError(f"instance on port {self.port} was not ready within {timeout:g} s")

    def terminate_and_wait(self, timeout: float) -> int:
        """SIGTERM, then wait for the drain to end; the exit status."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        finally:
            self.close()

    def hang_up(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGHUP)

    def stderr(self) -> str:
        if self.log is None:
            return ""
        self.log.seek(0)
        return str(self.log.read().decode("utf-8", errors="replace"))

    def close(self) -> None:
        if self.process is not None:
            stop(self.process, grace=30)
            self.process = None
        if self.log is not None:
            self.errors += logged_errors(self.stderr())
            self.log.close()
            self.log = None


def logged_errors(stderr: str) -> list[str]:
    """Each ERROR record of a server's stderr with its traceback, joined into one line."""
    blocks: list[list[str]] = []
    for line in stderr.splitlines():
        if " ERROR " in line or line.startswith("ERROR"):
            blocks.append([line])
        elif blocks and (line.startswith((" ", "Traceback")) or (line and line[0].isupper() and ":" in line)):
            blocks[-1].append(line.strip())
    return [" | ".join(block)[:3000] for block in blocks]


def balancer_config(
    text: str, bind_port: int, server_ports: list[int], stats_socket: Path, operator_port: int | None = None
) -> str:
    """deploy/compose/haproxy.cfg for loopback: the public frontend (`frontend mcp`) bound to
    127.0.0.1:bind_port and any other (the operator's) to 127.0.0.1:operator_port (a free port when
    None), one `server` line per port in place of the `server-template` (the container engine's
    DNS is not here), no resolvers section, and a stats socket to read server states and retries
    from."""
    lines: list[str] = []
    in_resolvers = False
    frontend = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("resolvers "):
            in_resolvers = True
            continue
        if in_resolvers:
            if stripped and not line[0].isspace():
                in_resolvers = False
            else:
                continue
        if stripped and not line[0].isspace():  # a section starts
            words = stripped.split()
            frontend = words[1] if words[0] == "frontend" and len(words) > 1 else ""
        if stripped == "global":
            lines += [line, f"    stats socket {stats_socket} mode 600 level admin"]
            continue
        if stripped.startswith("bind "):
            if frontend == PUBLIC_FRONTEND:
                lines.append(f"    bind 127.0.0.1:{bind_port}")
            else:
                if operator_port is None:
                    operator_port = free_port()
                lines.append(f"    bind 127.0.0.1:{operator_port}")
            continue
        if stripped.startswith("server-template "):
            lines += [f"    server mcp{i} 127.0.0.1:{port}" for i, port in enumerate(server_ports, 1)]
            continue
        lines.append(line)
    config = "\n".join(lines) + "\n"
    if "server mcp1 " not in config or f"bind 127.0.0.1:{bind_port}" not in config:
        raise ValueError(f"{HAPROXY_CFG} has no `bind` or no `server-template` line to rewrite")
    return config


class Balancer:
    """HAProxy in the foreground, on deploy/compose/haproxy.cfg rewritten for loopback."""

    def __init__(self, server_ports: list[int], folder: Path):
        self.port = free_port()
        self.operator_port = free_port()  # `frontend operator`: /stats and the instances' probes and /metrics
        self.socket = folder / "haproxy.sock"
        config = folder / "haproxy.cfg"
        config.write_text(
            balancer_config(HAPROXY_CFG.read_text(), self.port, server_ports, self.socket, self.operator_port)
        )
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [haproxy_binary(), "-db", "-f", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
        )
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def stats(self) -> list[dict[str, str]]:
        """`show stat` from the stats socket: one row per frontend, server and backend."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(5)
            sock.connect(str(self.socket))
            sock.sendall(b"show stat\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        text = b"".join(chunks).decode().lstrip("# ")
        return list(csv.DictReader(io.StringIO(text)))

    def server_states(self) -> dict[str, str]:
        return {
            row["svname"]: row["status"]
            for row in self.stats()
            if row["pxname"] == BACKEND and row["svname"] not in ("FRONTEND", "BACKEND")
        }

    def counters(self) -> dict[str, int]:
        """The backend's retries, redispatches and errors, and the requests each server was sent."""
        rows = [row for row in self.stats() if row["pxname"] == BACKEND]
        (backend,) = [row for row in rows if row["svname"] == "BACKEND"]
        counts = {key: int(backend[key] or 0) for key in ("wretr", "wredis", "hrsp_5xx", "econ", "eresp")}
        return counts | {
            row["svname"]: int(row["stot"] or 0) for row in rows if row["svname"].startswith("mcp")
        }

    def wait_state(self, server: str, state: str, timeout: float = READY_TIMEOUT) -> float:
        """Wait until HAProxy reports `server` in `state` (UP, DOWN...); the seconds it took."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                self.log.seek(0)
                raise RuntimeError(f"haproxy exited: {self.log.read().decode(errors='replace')[-2000:]}")
            with contextlib.suppress(OSError):
                if self.server_states().get(server, "").startswith(state):
                    return time.monotonic() - started
            time.sleep(0.1)
        raise RuntimeError(
            f"haproxy did not see {server} {state} within {timeout:g} s: {self.server_states()}"
        )

    def errors(self) -> list[str]:
        """HAProxy's log: requests that failed or were retried (option log-separate-errors)."""
        self.log.seek(0)
        lines = self.log.read().decode(errors="replace").splitlines()
        # HAProxy prints each server state change twice: once as its own [WARNING], once as a log
        # line; and a request answered 2xx/3xx with termination state ---- (normal) is no news.
        return [
            line
            for line in lines
            if line.strip()
            and not line.startswith(("[WARNING]", "[NOTICE]"))
            and not NORMAL_REQUEST.search(line)
        ]

    def close(self) -> None:
        stop(self.process, grace=10)
        self.log.close()


def haproxy_binary() -> str:
    found = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").is_file() else None)
    if found is None:
        raise SystemExit("benchmarks.fleet: HAProxy is not installed; run bash .ci/install-fleet.sh")
    return found


# --- the load -------------------------------------------------------------------------------


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)  # seconds, per answered call
    failures: list[str] = field(default_factory=list)
    sessions: int = 0
    cursors_followed: int = 0

    def record(self, started: float) -> None:
        self.latencies.append(time.perf_counter() - started)

    def figures(self, seconds: float) -> dict[str, Any]:
        ordered = sorted(self.latencies)
        calls = len(ordered) + len(self.failures)

        def at(share: float) -> float:
            return (
                round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 1) if ordered else 0.0
            )

        return {
            "calls": calls,
            "failed": len(self.failures),
            "sessions": self.sessions,
            "cursors_followed": self.cursors_followed,
            "seconds": round(seconds, 1),
            "calls_per_second": round(calls / seconds, 1) if seconds else 0.0,
            "p50_ms": at(0.50),
            "p99_ms": at(0.99),
            "mean_ms": round(statistics.fmean(ordered) * 1000, 1) if ordered else 0.0,
            "failures": sorted(set(self.failures))[:10],
        }


async def timed_call(tally: Tally, client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    started = time.perf_counter()
    try:
        result = await asyncio.wait_for(client.call_tool(tool, arguments), CALL_TIMEOUT)
    except Exception as error:  # any client-side failure is a failed call, with its kind named
        tally.failures.append(f"{tool}: {type(error).__name__}: {str(error)[:120]}")
        return None
    if result.is_error:
        text = result.content[0].text if result.content else ""
        tally.failures.append(f"{tool}: isError: {text[:160]}")
        return None
    tally.record(started)
    return result


async def one_session(url: str, number: int, tally: Tally, pages: dict[str, str]) -> None:
    from mcp.client import Client

    query = QUERIES[number % len(QUERIES)]
    started = time.perf_counter()
    try:
        client_context = Client(url, mode="legacy", read_timeout_seconds=CALL_TIMEOUT)
        client = await asyncio.wait_for(client_context.__aenter__(), CALL_TIMEOUT)
    except Exception as error:
        tally.failures.append(f"initialize: {type(error).__name__}: {str(error)[:120]}")
        return
    tally.record(started)  # initialize is a call too
    try:
        found = await timed_call(tally, client, "search_docs", {"query": query, "limit": 5})
        if found is not None and found.structured_content["results"]:
            page_url = found.structured_content["results"][0]["url"]
            await read_in_parts(tally, client, page_url, pages)
        await timed_call(tally, client, "find_examples", {"query": query, "limit": 3})
        tally.sessions += 1
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client_context.__aexit__(None, None, None), CALL_TIMEOUT)


async def read_in_parts(tally: Tally, client: Any, page_url: str, pages: dict[str, str]) -> None:
    """get_doc in PART_TOKENS parts, following nextCursor; the joined parts must be the whole page."""
    parts: list[str] = []
    arguments: dict[str, Any] = {"url": page_url, "maxTokens": PART_TOKENS}
    for _ in range(200):
        answer = await timed_call(tally, client, "get_doc", arguments)
        if answer is None:
            return
        data = answer.structured_content
        parts.append(data["markdown"])
        if not data.get("nextCursor"):
            break
        tally.cursors_followed += 1
        arguments = {"url": page_url, "cursor": data["nextCursor"], "maxTokens": PART_TOKENS}
    if page_url not in pages:
        whole = await timed_call(tally, client, "get_doc", {"url": page_url, "maxTokens": 50_000})
        if whole is None:
            return
        pages[page_url] = whole.structured_content["markdown"]
    if "".join(parts) != pages[page_url]:
        tally.failures.append(f"get_doc: the parts of {page_url} do not join up to the page")


async def drive(url: str, clients: int, stop: threading.Event, tally: Tally, pages: dict[str, str]) -> float:
    """`clients` sessions at once, each followed by a new one, until `stop` is set; the seconds run."""
    started = time.perf_counter()
    numbers = iter(range(10**9))

    async def client_loop() -> None:
        while not stop.is_set() and time.perf_counter() - started < PHASE_LIMIT:
            await one_session(url, next(numbers), tally, pages)

    await asyncio.gather(*(client_loop() for _ in range(clients)))
    return time.perf_counter() - started


class Load:
    """`drive` on its own thread and event loop, so the restarts run here meanwhile."""

    def __init__(self, url: str, clients: int, pages: dict[str, str]):
        self.tally = Tally()
        self.stop = threading.Event()
        self.seconds = 0.0

        def run() -> None:
            self.seconds = asyncio.run(drive(url, clients, self.stop, self.tally, pages))

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def finish(self) -> dict[str, Any]:
        self.stop.set()
        self.thread.join(CALL_TIMEOUT * 4)
        return self.tally.figures(self.seconds)


# --- one instance count ---------------------------------------------------------------------


@dataclass
class Fleet:
    instances: list[Instance]
    spare: Instance  # the port a surge replacement starts on (N = 1)
    balancer: Balancer

    @property
    def running(self) -> list[Instance]:
        return [instance for instance in self.instances if instance.process is not None]


@contextlib.contextmanager
def fleet(count: int, builder: Builder, drain_seconds: float, folder: Path) -> Iterator[Fleet]:
    # --offline: get_doc answers from the pages in the followed snapshot, never from the live site
    # (without it, a page is read from imqueue.org first). The snapshot URL is on loopback.
    args = ["--offline", "--snapshot-url", builder.url, "--snapshot-poll-seconds", "0"]
    args += ["--drain-seconds", f"{drain_seconds:g}"]
    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    instances = [Instance(free_port(), args, home) for _ in range(count)]
    spare = Instance(free_port(), args, home)
    balancer: Balancer | None = None
    try:
        for instance in instances:
            instance.start()
        for instance in instances:
            instance.wait_ready()
        balancer = Balancer([instance.port for instance in [*instances, spare]], folder)
        for number in range(1, count + 1):
            balancer.wait_state(f"mcp{number}", "UP")
        yield Fleet(instances, spare, balancer)
    finally:
        for instance in [*instances, spare]:
            instance.close()
        if balancer is not None:
            balancer.close()


def server_name(fleet: Fleet, instance: Instance) -> str:
    ports = [member.port for member in [*fleet.instances, fleet.spare]]
    return f"mcp{ports.index(instance.port) + 1}"


def rolling_restart(fleet: Fleet, drain_seconds: float) -> list[dict[str, Any]]:
    """Each instance in turn: SIGTERM, drained exit, started again and UP in HAProxy (a surge when
    it is the only one). What each step took, and each drained exit's status."""
    steps = []
    for index, instance in enumerate(list(fleet.instances)):
        step: dict[str, Any] = {"instance": index + 1}
        started = time.monotonic()
        if len(fleet.instances) == 1:
            replacement = fleet.spare
            replacement.start()
            replacement.wait_ready()
            fleet.balancer.wait_state(server_name(fleet, replacement), "UP")
            step["exit_status"] = instance.terminate_and_wait(drain_seconds + 30)
            fleet.instances[index], fleet.spare = replacement, instance
        else:
            step["exit_status"] = instance.terminate_and_wait(drain_seconds + 30)
            instance.start()
            instance.wait_ready()
            fleet.balancer.wait_state(server_name(fleet, instance), "UP")
        step["seconds"] = round(time.monotonic() - started, 1)
        steps.append(step)
    return steps


def generations(fleet: Fleet) -> list[str]:
    return [
        str((instance.ready() or {}).get("corpus", {}).get("generation", "")) for instance in fleet.instances
    ]


def switch_generation(fleet: Fleet, builder: Builder) -> dict[str, Any]:
    """Publish a new generation, SIGHUP every instance, wait until every /readyz names it."""
    before = set(generations(fleet))
    build_seconds = builder.publish()
    started = time.monotonic()
    for instance in fleet.instances:
        instance.hang_up()
    while time.monotonic() - started < READY_TIMEOUT:
        now = generations(fleet)
        if len(set(now)) == 1 and now[0] and now[0] not in before:
            return {
                "from": sorted(before),
                "to": now[0],
                "build_seconds": round(build_seconds, 1),
                "switch_seconds": round(time.monotonic() - started, 1),
            }
        time.sleep(0.1)
    raise RuntimeError(f"the instances did not all switch to a new generation: {generations(fleet)}")


def measure(count: int, builder: Builder, args: argparse.Namespace, folder: Path) -> dict[str, Any]:
    pages: dict[str, str] = {}
    with fleet(count, builder, args.drain_seconds, folder) as running:
        load = Load(running.balancer.url, args.clients, pages)
        time.sleep(args.steady_seconds)
        steady = load.finish()
        before = running.balancer.counters()
        load = Load(running.balancer.url, args.clients, pages)
        restarts = rolling_restart(running, args.drain_seconds)
        switch = switch_generation(running, builder)
        time.sleep(1.0)  # a few calls on the new generation
        rolling = load.finish()
        after = running.balancer.counters()
        balancer_log = running.balancer.errors()
    instance_errors = [error for instance in [*running.instances, running.spare] for error in instance.errors]
    return {
        "instances": count,
        "restart": "surge" if count == 1 else "in place",
        "steady": steady,
        "rolling": rolling,
        "restarts": restarts,
        "switch": switch,
        "haproxy": {key: after[key] - before.get(key, 0) for key in after},
        "haproxy_log": balancer_log[-20:],
        "instance_errors": instance_errors[:10],
    }


# --- the report -----------------------------------------------------------------------------


def run(args: argparse.Namespace) -> dict[str, Any]:
    site = site_dir(shared_dir(args.shared))
    haproxy_binary()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="imq-fleet-") as scratch:
        builder = Builder(site, Path(scratch))
        try:
            builder.publish()
            runs = []
            for count in args.instances:
                folder = Path(scratch) / f"fleet-{count}"
                folder.mkdir()
                runs.append(measure(count, builder, args, folder))
        finally:
            builder.close()
    failed = sum(run["steady"]["failed"] + run["rolling"]["failed"] for run in runs)
    return {
        "benchmark": "fleet",
        "machine": machine(),
        "haproxy": haproxy_version(),
        "clients": args.clients,
        "drain_seconds": args.drain_seconds,
        "part_tokens": PART_TOKENS,
        "failed": failed,
        # other work on the machine shares its CPUs with the fleet and the load: say how much
        "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "runs": runs,
    }


def haproxy_version() -> str:
    done = subprocess.run([haproxy_binary(), "-v"], capture_output=True, text=True, timeout=30)
    found = re.search(r"version (\S+)", done.stdout)
    return found[1] if found else "unknown"


COLUMNS = ("instances", "phase", "calls", "failed", "calls/s", "p50 ms", "p99 ms", "cursors", "retries")


def report(figures: dict[str, Any]) -> None:
    m = figures["machine"]
    print(
        f"fleet: HAProxy {figures['haproxy']} round robin, {figures['clients']} clients, drain "
        f"{figures['drain_seconds']:g} s; {m['platform']}, {m['cpus']} CPUs, Python {m['python']}; "
        f"load average {figures['load_average'][0]} at the start, {figures['load_average'][1]} at the end"
    )
    print(" ".join(f"{name:>9}" for name in COLUMNS))
    for run in figures["runs"]:
        balancer = run["haproxy"]
        for phase in ("steady", "rolling"):
            f = run[phase]
            retries = balancer["wretr"] + balancer["wredis"] if phase == "rolling" else ""
            row = (
                run["instances"],
                phase,
                f["calls"],
                f["failed"],
                f["calls_per_second"],
                f["p50_ms"],
                f["p99_ms"],
                f["cursors_followed"],
                retries,
            )
            print(" ".join(f"{value!s:>9}" for value in row))
        restarts = ", ".join(
            f"#{step['instance']} {step['seconds']} s, exit {step['exit_status']}" for step in run["restarts"]
        )
        spread = ", ".join(f"{name} {count}" for name, count in balancer.items() if name.startswith("mcp"))
        print(f"{'':>9} restarts ({run['restart']}): {restarts}")
        print(
            f"{'':>9} generation switch: every instance on it {run['switch']['switch_seconds']} s after "
            f"publishing; requests per server while rolling: {spread}"
        )
        for failure in run["steady"]["failures"] + run["rolling"]["failures"]:
            print(f"{'':>9} failed: {failure}")
        for error in run["instance_errors"]:
            print(f"{'':>9} an instance logged: {error}")
        for line in run["haproxy_log"]:
            print(f"{'':>9} haproxy: {line}")
    print(f"failed calls in all: {figures['failed']}")


def parse_counts(text: str) -> list[int]:
    counts = [int(part) for part in text.split(",") if part.strip()]
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError("a comma-separated list of instance counts, each at least 1")
    return counts


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fleet", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--instances", type=parse_counts, default=[1, 2, 3], help="instance counts (default 1,2,3)"
    )
    parser.add_argument("--clients", type=int, default=8, help="concurrent sessions (default 8)")
    parser.add_argument("--steady-seconds", type=float, default=10.0, help="the steady phase (default 10)")
    parser.add_argument("--drain-seconds", type=float, default=5.0, help="each instance's drain (default 5)")
    parser.add_argument("--shared", help="the shared folder (default ../shared)")
    return parser


def main(argv: list[str] | None = None) -> None:
    figures = run(parser().parse_args(argv))
    report(figures)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()

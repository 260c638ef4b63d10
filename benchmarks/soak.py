"""Soak: the server under sustained load, counting errors and watching its memory.

    python -m benchmarks.soak [--seconds 60] [--clients 64] [--workers 1] [--mode both|http|stdio]

Two runs, each against a freshly spawned server reading ../shared/site from loopback origins:

    http    `imqueue-mcp --http` (N workers) driven by this process: `--clients` concurrent
            clients, each posting tools/call requests in a loop, mixing search_docs (half),
            get_doc and list_packages (a quarter each)
    stdio   `imqueue-mcp` (stdio) driven by one client at full speed, the same mix

The load comes from this process, the server runs in another. An error is any answer that is
not HTTP 200 with a JSON-RPC result whose isError is false (or, over stdio, a frame with an
error or isError). Latency is per call, measured at the client. RSS is the server's whole
process tree (uvicorn's supervisor and its workers), sampled every few seconds; the table shows
it at minute 1 (or at the first sample, on runs shorter than two minutes) and at the end, and
the growth between them. Prints the table, then one JSON line. It measures and never asserts:
tests/test_soak.py runs a short profile and asserts zero errors.

The long run reported in the README:  python -m benchmarks.soak --seconds 660
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from .bench_server import (
    QUERIES,
    add_load_arguments,
    environment,
    free_port,
    origin_args,
    percentile,
    running,
    site_origins,
    stdio_server,
)
from .machine import machine
from .paths import REPO
from .processes import stop

PAGES = [
    "https://imqueue.org/agents/delayed-scheduled-work",
    "https://imqueue.org/agents.md",
    "https://imqueue.org/cli",
    "https://imqueue.org/api",
    "https://imqueue.org/compare",
]
RSS_SAMPLE_SECONDS = 5.0
MINUTE = 60.0
HEADERS = {
    "Accept": "application/json",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def call_for(number: int) -> dict[str, Any]:
    """The number-th request of the mix: search_docs, get_doc, search_docs, list_packages, ..."""
    kind = number % 4
    if kind in (0, 2):
        name, arguments = "search_docs", {"query": QUERIES[(number // 2) % len(QUERIES)]}
    elif kind == 1:
        name, arguments = "get_doc", {"url": PAGES[(number // 4) % len(PAGES)]}
    else:
        name, arguments = "list_packages", {}
    return {
        "jsonrpc": "2.0",
        "id": number,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def answer_error(frame: dict[str, Any]) -> str:
    """Why a JSON-RPC answer counts as an error; empty when it is a good result."""
    if "error" in frame:
        return f"JSON-RPC error {frame['error'].get('code')}: {frame['error'].get('message')}"
    result = frame.get("result") or {}
    if result.get("isError"):
        content = result.get("content") or [{}]
        return f"isError: {str(content[0].get('text', ''))[:200]}"
    return ""


# --- memory ----------------------------------------------------------------------------


def process_tree_rss(root: int) -> int:
    """Resident bytes of `root` and all its descendants, from /proc."""
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
    total, pending = 0, [root]
    while pending:
        pid = pending.pop()
        total += rss.get(pid, 0)
        pending.extend(children.get(pid, []))
    return total


@dataclass
class MemoryWatch:
    """Samples a process tree's RSS in a thread every RSS_SAMPLE_SECONDS: (seconds, bytes)."""

    pid: int
    samples: list[tuple[float, int]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._started = time.monotonic()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            self.samples.append((time.monotonic() - self._started, process_tree_rss(self.pid)))
            if self._stop.wait(RSS_SAMPLE_SECONDS):
                return

    def stop(self) -> dict[str, Any]:
        self._stop.set()
        self._thread.join()
        self.samples.append((time.monotonic() - self._started, process_tree_rss(self.pid)))
        total = self.samples[-1][0]
        # Minute 1 on a long run; on a short one, the first sample after the warm-up call.
        mark = MINUTE if total >= 2 * MINUTE else 0.0
        first = next((s for s in self.samples if s[0] >= mark), self.samples[-1])
        last = self.samples[-1]
        return {
            "rss_first_at_s": round(first[0], 1),
            "rss_first_mb": first[1] / 2**20,
            "rss_end_at_s": round(last[0], 1),
            "rss_end_mb": last[1] / 2**20,
            "rss_growth_pct": (last[1] - first[1]) / first[1] * 100 if first[1] else 0.0,
            "rss_samples_mb": [round(b / 2**20, 1) for _, b in self.samples],
        }


# --- hosted ----------------------------------------------------------------------------


@contextmanager
def hosted_server(workers: int, origins: dict[str, str], home: Path) -> Iterator[tuple[str, int]]:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    port = url.rsplit(":", 1)[1].split("/")[0]
    command = [
        sys.executable,
        "-m",
        "imqueue_mcp.server",
        "--http",
        "--port",
        port,
        "--workers",
        str(workers),
    ]
    with running([*command, *origin_args(origins)], environment(home), home, url) as process:
        yield url, process.pid


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_errors: list[str] = field(default_factory=list)  # the first few, to say what went wrong

    def record(self, seconds: float, error: str) -> None:
        self.latencies.append(seconds)
        if error:
            self.errors += 1
            if len(self.first_errors) < 5:
                self.first_errors.append(error)

    def figures(self, elapsed: float) -> dict[str, Any]:
        calls = len(self.latencies)
        return {
            "calls": calls,
            "errors": self.errors,
            "first_errors": self.first_errors,
            "calls_per_second": calls / elapsed if elapsed else 0.0,
            "p50_ms": percentile(self.latencies, 0.5) * 1000 if calls else 0.0,
            "p99_ms": percentile(self.latencies, 0.99) * 1000 if calls else 0.0,
            "max_ms": max(self.latencies) * 1000 if calls else 0.0,
        }


async def drive_http(url: str, clients: int, seconds: float) -> tuple[Tally, float]:
    tally = Tally()
    counter = iter(range(1, 1 << 62))

    async def client_loop(client: httpx.AsyncClient, stop_at: float) -> None:
        while time.perf_counter() < stop_at:
            body = call_for(next(counter))
            started = time.perf_counter()
            try:
                response = await client.post(url, json=body, headers=HEADERS)
                error = (
                    f"HTTP {response.status_code}"
                    if response.status_code != 200
                    else answer_error(response.json())
                )
            except (httpx.HTTPError, ValueError) as failure:
                error = f"{type(failure).__name__}: {failure}"
            tally.record(time.perf_counter() - started, error)

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        started = time.perf_counter()
        stop_at = started + seconds
        await asyncio.gather(*(client_loop(client, stop_at) for _ in range(clients)))
        return tally, time.perf_counter() - started


def soak_http(
    seconds: float, clients: int, workers: int, origins: dict[str, str], home: Path
) -> dict[str, Any]:
    with hosted_server(workers, origins, home) as (url, pid):
        for warm in range(4 * workers):  # builds the corpus, reads status.json and a page, untimed
            httpx.post(url, json=call_for(warm), headers=HEADERS, timeout=60)
        watch = MemoryWatch(pid)
        tally, elapsed = asyncio.run(drive_http(url, clients, seconds))
        memory = watch.stop()
    return {"clients": clients, "workers": workers, "seconds": elapsed, **tally.figures(elapsed), **memory}


# --- stdio -----------------------------------------------------------------------------


def soak_stdio(seconds: float, origins: dict[str, str], home: Path) -> dict[str, Any]:
    process = stdio_server(origins, home)
    assert process.stdin is not None and process.stdout is not None
    pipe_in, pipe_out = process.stdin, process.stdout

    def send(message: dict[str, Any]) -> None:
        pipe_in.write(json.dumps(message).encode() + b"\n")
        pipe_in.flush()

    def call(message: dict[str, Any]) -> str:
        send(message)
        while True:
            raw = pipe_out.readline()
            if not raw:
                return "the server closed stdout"
            frame = json.loads(raw)
            if frame.get("id") == message["id"]:
                return answer_error(frame)

    tally = Tally()
    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "soak", "version": "1"},
                },
            }
        )
        pipe_out.readline()
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for warm in range(1, 5):
            call(call_for(warm))
        watch = MemoryWatch(process.pid)
        number = 5
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            before = time.perf_counter()
            error = call(call_for(number))
            tally.record(time.perf_counter() - before, error)
            number += 1
        elapsed = time.perf_counter() - started
        memory = watch.stop()
    finally:
        pipe_in.close()
        stop(process, terminate=False)
    return {"clients": 1, "seconds": elapsed, **tally.figures(elapsed), **memory}


# --- report ----------------------------------------------------------------------------


def report(figures: dict[str, Any]) -> None:
    host = figures["machine"]
    print(f"Machine: {host['platform']}, {host['cpus']} CPUs, Python {host['python']}")
    print(f"Soak, {figures['seconds']:g} s per run; mix: search_docs 1/2, get_doc 1/4, list_packages 1/4\n")
    header = (
        f"  {'run':<26}{'calls':>8}{'errors':>8}{'calls/s':>9}{'p50 ms':>9}{'p99 ms':>9}"
        f"{'RSS first MB':>14}{'RSS end MB':>12}{'growth':>8}"
    )
    print(header)
    for name, row in figures["runs"].items():
        print(
            f"  {name:<26}{row['calls']:>8}{row['errors']:>8}{row['calls_per_second']:>9.0f}"
            f"{row['p50_ms']:>9.1f}{row['p99_ms']:>9.1f}"
            f"{row['rss_first_mb']:>9.1f} @{row['rss_first_at_s']:>3.0f}s"
            f"{row['rss_end_mb']:>12.1f}{row['rss_growth_pct']:>7.1f}%"
        )
        for error in row["first_errors"]:
            print(f"      error: {error}")
    print()
    print(json.dumps(figures, sort_keys=True))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_load_arguments(parser, seconds=60.0, clients=64)
    parser.add_argument("--mode", choices=("both", "http", "stdio"), default="both")
    args = parser.parse_args(argv)
    if not (REPO.parent / "shared" / "site").is_dir():
        sys.exit(f"soak: the site mirror is not at {REPO.parent / 'shared' / 'site'}")
    runs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="soak-") as temp, site_origins() as origins:
        home = Path(temp)
        if args.mode in ("both", "http"):
            name = f"hosted, {args.clients} clients, {args.workers}w"
            runs[name] = soak_http(args.seconds, args.clients, args.workers, origins, home)
        if args.mode in ("both", "stdio"):
            runs["stdio, 1 client"] = soak_stdio(args.seconds, origins, home)
    figures = {
        "benchmark": "soak",
        "machine": {**machine(), "load_average": os.getloadavg()[0]},
        "seconds": args.seconds,
        "runs": runs,
    }
    report(figures)


if __name__ == "__main__":
    main()

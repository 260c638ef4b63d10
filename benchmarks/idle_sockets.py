"""An idle-socket attack on the hosted server, on loopback: what it holds and whether it serves.

The server (`imqueue-mcp --http --offline`, one worker) runs with a descriptor limit of
--limit (1,024 by default, soft and hard, so it cannot raise it). The attacker opens --sockets
connections (1,100) at once: half send nothing, half send a partial request line and headers.
While they are open, a real client asks GET /healthz and makes one MCP tools/call (search_docs)
on a fresh connection, at --probe-at seconds; the server's open descriptors are counted from
/proc at each --sample-at second. Every request loop is bounded; everything is 127.0.0.1.

    .venv/bin/python -m benchmarks.idle_sockets [--sockets 1100] [--limit 1024] [--seconds 16]
        [--python PATH --pythonpath DIR]   # run another tree's server (e.g. the code before the guard)

Prints a table, then one JSON line. It measures and never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from .bench_server import INITIALIZE, free_port
from .machine import machine
from .processes import stop

REPO = Path(__file__).resolve().parents[1]
SITE = REPO.parent / "shared" / "site"


def descriptors(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return -1


def probe(url: str) -> dict[str, Any]:
    """A real client's two requests on fresh connections: the probe, and initialize + tools/call."""
    outcome: dict[str, Any] = {}
    started = time.perf_counter()
    try:
        outcome["healthz"] = httpx.get(url + "/healthz", timeout=10).status_code
    except httpx.HTTPError as error:
        outcome["healthz"] = type(error).__name__
    headers = {"Accept": "application/json, text/event-stream"}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "search_docs", "arguments": {"query": "expose a method"}},
    }
    try:
        with httpx.Client(timeout=10, headers=headers) as client:
            client.post(url + "/mcp", json=INITIALIZE).raise_for_status()
            answer = client.post(url + "/mcp", json=call)
            outcome["tools_call"] = answer.status_code if "result" in answer.json() else answer.text[:80]
    except (httpx.HTTPError, ValueError) as error:
        outcome["tools_call"] = type(error).__name__
    outcome["seconds"] = round(time.perf_counter() - started, 3)
    return outcome


def attack(port: int, count: int) -> list[socket.socket]:
    sockets = []
    for number in range(count):
        try:
            client = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            break
        if number % 2:
            client.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        sockets.append(client)
    return sockets


def closed_by_server(sockets: list[socket.socket]) -> int:
    closed = 0
    for client in sockets:
        client.setblocking(False)
        try:
            if client.recv(1) == b"":
                closed += 1
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed


def run(args: argparse.Namespace) -> dict[str, Any]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.sockets + 256)), hard))
    home = Path(tempfile.mkdtemp(prefix="idle-sockets-"))
    snapshot = home / "snapshot.msgpack"
    python = args.python or sys.executable
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(home / "cache"),
        "IMQUEUE_MCP_DRAIN_SECONDS": "0",
        **({"PYTHONPATH": args.pythonpath} if args.pythonpath else {}),
    }
    subprocess.run(
        [python, "-m", "imqueue_mcp.build_index.cli", "--from", str(SITE), "--out", str(snapshot), "--quiet"],
        env=env,
        check=True,
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    limit = args.limit

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    command = [python, "-m", "imqueue_mcp.server", "--http", "--port", str(port), "--offline"]
    server = subprocess.Popen(
        [*command, "--snapshot", str(snapshot)],
        env=env,
        preexec_fn=limited,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        baseline = descriptors(server.pid)
        before = probe(url)
        started = time.monotonic()
        sockets = attack(port, args.sockets)
        opened = time.monotonic() - started
        samples: dict[str, int] = {}
        probes: dict[str, Any] = {}
        for second in sorted({*args.sample_at, *args.probe_at}):
            while time.monotonic() - started < second:
                time.sleep(0.05)
            if second in args.sample_at:
                samples[f"{second:g}"] = descriptors(server.pid)
            if second in args.probe_at:
                probes[f"{second:g}"] = probe(url)
        closed = closed_by_server(sockets)
        for client in sockets:
            client.close()
        return {
            "sockets_opened": len(sockets),
            "open_seconds": round(opened, 2),
            "descriptor_limit": limit,
            "server_descriptors_idle": baseline,
            "server_descriptors": samples,
            "closed_by_server": closed,
            "probe_before": before,
            "probes": probes,
        }
    finally:
        stop(server)
        assert server.stderr is not None
        warnings = [
            line for line in server.stderr.read().decode(errors="replace").splitlines() if "cap" in line
        ]
        if warnings:
            sys.stderr.write("\n".join(warnings[:3]) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", type=int, default=1100)
    parser.add_argument("--limit", type=int, default=1024)
    parser.add_argument("--sample-at", type=float, nargs="*", default=[1, 5, 12, 15])
    parser.add_argument("--probe-at", type=float, nargs="*", default=[2, 13])
    parser.add_argument("--python", help="the interpreter of the server under test (default: this one)")
    parser.add_argument("--pythonpath", help="PYTHONPATH for it (another tree's imqueue_mcp)")
    parser.add_argument("--label", default="this tree")
    args = parser.parse_args()
    result = {"benchmark": "idle_sockets", "label": args.label, "machine": machine(), **run(args)}
    print(f"idle-socket attack on 127.0.0.1 ({result['label']}), {platform.python_version()}")
    print(
        f"  {result['sockets_opened']} sockets opened in {result['open_seconds']} s, "
        f"server limit {args.limit}"
    )
    print(f"  server descriptors idle: {result['server_descriptors_idle']}")
    for second, count in result["server_descriptors"].items():
        print(f"  server descriptors at {second:>4} s: {count}")
    print(f"  attack sockets closed by the server by the end: {result['closed_by_server']}")
    print(f"  real client before: {result['probe_before']}")
    for second, outcome in result["probes"].items():
        print(f"  real client at {second:>4} s: {outcome}")
    print(json.dumps(result, separators=(",", ":")))


if __name__ == "__main__":
    main()

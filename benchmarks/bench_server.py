"""Server benchmarks, each side by side with a bare baseline in the same run.

    cold start      spawn -> initialize answer: imqueue-mcp (stdio) beside a bare SDK server
                    with one trivial tool, alternating runs (target ratio <= 1.3)
    first answer    spawn -> initialize answer beside spawn -> first search_docs answer (sent
                    right after initialize), with a snapshot on disk and a live origin that
                    answers SLOW_ORIGIN_SECONDS late (target: first answer <= 150 ms after the
                    initialize answer); the first answer's corpus source is reported too
    search latency  search_docs round trips over stdio (raw JSON-RPC on pipes), p50 / p99,
                    after the first call has built the corpus
    hosted load     calls/s with 8 concurrent clients, same uvicorn settings throughout:
                    imqueue-mcp --http (search_docs: one query repeated, and a new query each
                    call), beside the same app factory with one SDK echo tool added (echo, and
                    search_docs on that same process), and a bare Starlette JSON endpoint; the
                    three servers run at once and are loaded in turn, in short alternating
                    windows (target: search_docs >= 0.8x the echo's calls/s)

Docs are served from ../shared/site on loopback (read at run time). Prints a readable
table, then one JSON line. It measures and never asserts: shared machines drift, which is
why every figure has its baseline next to it.

    .venv/bin/python -m benchmarks.bench_server [--runs 15] [--queries 300] [--seconds 5] [--workers 1]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import http.server
import importlib.util
import itertools
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from .processes import stop

REPO = Path(__file__).resolve().parents[1]
SITE = REPO.parent / "shared" / "site"
PYTHON = sys.executable

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

BARE_SDK_SERVER = """\
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def ping() -> str:
    \"\"\"Answer pong.\"\"\"
    return "pong"


server.run()
"""

BARE_STARLETTE_APP = """\
import json

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


async def endpoint(request: Request) -> JSONResponse:
    message = json.loads(await request.body())
    return JSONResponse({"jsonrpc": "2.0", "id": message.get("id"), "result": {"content": []}})


app = Starlette(routes=[Route("/mcp", endpoint, methods=["POST"])])
"""

# The hosted app exactly as `imqueue-mcp --http` builds it (server/serve.py: hosted_server +
# hosted_app), plus one echo tool: the same server stack, so search_docs can be compared with a
# tool that does nothing.
ECHO_APP = """\
from imqueue_mcp.server.config import config_from_environment
from imqueue_mcp.server.hosting.http import hosted_app
from imqueue_mcp.server.serve import hosted_server


def create_app():
    config = config_from_environment()
    server, services = hosted_server(config)

    @server.tool(name="echo")
    async def echo(text: str) -> str:  # async like our tools: a sync tool would pay a thread hop
        \"\"\"Answer the text it was given.\"\"\"
        return text

    return hosted_app(server, services, config, [("echo", "Echo")])
"""

SLOW_ORIGIN_SECONDS = 3.0  # the live sites' answer comes this late (within the 5 s fetch timeout)

QUERIES = [
    "how do I expose a method",
    "generate a typed client",
    "delayed job retry",
    "redis connection options",
    "IMQService",
    "cache a method result",
    "opentelemetry tracing",
    "pg-prisma",
    "validate arguments",
    "graceful shutdown",
    "logger",
    "imq ctl start",
    "commercial licence",
    "node version",
    "lock decorator",
    "publish subscribe events",
    "MigrateDownOptions",
    "rate limit",
    "scale workers",
    "how to test a service",
]


# --- helpers ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Slow(QuietHandler):
    def do_GET(self) -> None:
        time.sleep(SLOW_ORIGIN_SECONDS)
        super().do_GET()


@contextmanager
def site_origins(handler: type[QuietHandler] = QuietHandler) -> Iterator[dict[str, str]]:
    """Both hosts of the mirror on loopback; with handler=_Slow each answer comes late."""
    servers = []
    origins = {}
    for host in ("imqueue.org", "imqueue.com"):
        httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(SITE / host))
        )
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        origins[host] = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield origins
    finally:
        for httpd in servers:
            httpd.shutdown()
            httpd.server_close()


def origin_args(origins: dict[str, str]) -> list[str]:
    return [arg for host, url in origins.items() for arg in ("--origin", f"{host}={url}")]


def environment(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "XDG_CACHE_HOME": str(home / "cache"),
        "IMQ_CLI_HOME": str(home / "imq"),
        "IMQUEUE_MCP_DRAIN_SECONDS": "0",  # stopped at once between runs: no load balancer to tell
    }


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


# --- cold start ------------------------------------------------------------------------


def time_to_initialize(command: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(line(INITIALIZE))
    process.stdin.flush()
    answer = process.stdout.readline()
    elapsed = time.perf_counter() - started
    process.stdin.close()
    process.wait(30)
    if json.loads(answer).get("id") != 1:
        raise RuntimeError(f"unexpected first frame: {answer[:200]!r}")
    return elapsed


def bench_cold_start(runs: int, home: Path) -> dict[str, Any]:
    bare_script = home / "bare_sdk_server.py"
    bare_script.write_text(BARE_SDK_SERVER)
    env = environment(home)
    commands = {
        "imqueue-mcp": [PYTHON, "-m", "imqueue_mcp.server", "--offline"],
        "bare SDK server": [PYTHON, str(bare_script)],
    }
    for command in commands.values():  # warm the OS file cache once, untimed
        time_to_initialize(command, env, home)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():  # alternating, so drift hits both alike
            samples[name].append(time_to_initialize(command, env, home))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    return {
        "runs": runs,
        "ours_median_ms": medians["imqueue-mcp"] * 1000,
        "bare_median_ms": medians["bare SDK server"] * 1000,
        "ours_p90_ms": percentile(samples["imqueue-mcp"], 0.9) * 1000,
        "bare_p90_ms": percentile(samples["bare SDK server"], 0.9) * 1000,
        "ratio": medians["imqueue-mcp"] / medians["bare SDK server"],
    }


# --- launch to first search answer ------------------------------------------------------


def time_to_first_answer(command: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Spawn, initialize, then at once one search_docs: both answers' times from the spawn."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(line(INITIALIZE))
        process.stdin.flush()
        if json.loads(process.stdout.readline()).get("id") != 1:
            raise RuntimeError("the first frame was not the initialize answer")
        initialized = time.perf_counter() - started
        search = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search_docs", "arguments": {"query": QUERIES[0]}},
        }
        process.stdin.write(line(INITIALIZED) + line(search))
        process.stdin.flush()
        while True:
            frame = json.loads(process.stdout.readline())
            if frame.get("id") == 2:
                break
        answered = time.perf_counter() - started
    finally:
        stop(process)  # its background refresh waits on the slow origin: not worth waiting for
    result = frame["result"]
    if result.get("isError"):
        raise RuntimeError(result["content"][0]["text"])
    return {
        "initialize": initialized,
        "first_answer": answered,
        "source": result["structuredContent"]["corpus"]["source"],
    }


def bench_first_answer(runs: int, slow_origins: dict[str, str], snapshot: Path, home: Path) -> dict[str, Any]:
    command = [PYTHON, "-m", "imqueue_mcp.server", "--snapshot", str(snapshot), *origin_args(slow_origins)]
    env = environment(home)
    time_to_first_answer(command, env, home)  # warm the OS file cache once, untimed
    samples = [time_to_first_answer(command, env, home) for _ in range(runs)]
    gaps = [sample["first_answer"] - sample["initialize"] for sample in samples]
    return {
        "runs": runs,
        "slow_origin_seconds": SLOW_ORIGIN_SECONDS,
        "initialize_median_ms": statistics.median(s["initialize"] for s in samples) * 1000,
        "first_answer_median_ms": statistics.median(s["first_answer"] for s in samples) * 1000,
        "after_initialize_median_ms": statistics.median(gaps) * 1000,
        "after_initialize_max_ms": max(gaps) * 1000,
        "sources": sorted({sample["source"] for sample in samples}),
    }


# --- search round trips over stdio -----------------------------------------------------


def stdio_server(origins: dict[str, str], home: Path) -> subprocess.Popen[bytes]:
    """`python -m server` on pipes, reading the docs from `origins`; its stderr discarded."""
    return subprocess.Popen(
        [PYTHON, "-m", "imqueue_mcp.server", *origin_args(origins)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment(home),
        cwd=home,
    )


def bench_search(queries: int, origins: dict[str, str], home: Path) -> dict[str, Any]:
    process = stdio_server(origins, home)
    assert process.stdin is not None and process.stdout is not None

    def call(request_id: int, query: str) -> dict[str, Any]:
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "search_docs", "arguments": {"query": query}},
        }
        process.stdin.write(line(message))  # type: ignore[union-attr]
        process.stdin.flush()  # type: ignore[union-attr]
        while True:
            frame = json.loads(process.stdout.readline())  # type: ignore[union-attr]
            if frame.get("id") == request_id:
                return dict(frame)

    try:
        process.stdin.write(line(INITIALIZE))
        process.stdin.flush()
        process.stdout.readline()
        process.stdin.write(line(INITIALIZED))
        started = time.perf_counter()
        first = call(2, QUERIES[0])
        first_ms = (time.perf_counter() - started) * 1000
        if first["result"].get("isError"):
            raise RuntimeError(first["result"]["content"][0]["text"])
        samples = []
        for number in range(queries):
            started = time.perf_counter()
            call(3 + number, QUERIES[number % len(QUERIES)])
            samples.append(time.perf_counter() - started)
    finally:
        process.stdin.close()
        process.wait(30)
    return {
        "queries": queries,
        "first_call_ms": first_ms,
        "p50_ms": percentile(samples, 0.5) * 1000,
        "p99_ms": percentile(samples, 0.99) * 1000,
        "mean_ms": statistics.fmean(samples) * 1000,
    }


# --- hosted throughput -----------------------------------------------------------------


@contextmanager
def running(
    command: list[str], env: dict[str, str], cwd: Path, url: str
) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "ping"}, timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"{command[:4]} did not start") from None
                time.sleep(0.05)
        yield process
    finally:
        stop(process)


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def distinct_searches(number: int) -> dict[str, Any]:
    """A search no earlier call asked (a bench query with the call's number added): always ranked."""
    return tool_call("search_docs", {"query": f"{QUERIES[number % len(QUERIES)]} {number}"})


async def load_window(
    url: str, body: dict[str, Any] | Callable[[int], dict[str, Any]], clients: int, seconds: float
) -> tuple[list[float], int, float]:
    """`clients` concurrent clients posting `body` (or body(n) for call n) for `seconds`, after one
    untimed warm-up call: each call's latency, the errors, and the time the window took."""
    headers = {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    make = body if callable(body) else lambda _: body
    fixed = None if callable(body) else json.dumps(body).encode()
    calls = itertools.count()

    def payload() -> bytes:
        return fixed if fixed is not None else json.dumps(make(next(calls))).encode()

    latencies: list[float] = []
    errors = 0
    stop_at = 0.0  # set once the warm-up call has answered

    async def client_loop(client: httpx.AsyncClient) -> None:
        nonlocal errors
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            response = await client.post(url, content=payload(), headers=headers)
            if response.status_code != 200 or "error" in (answer := response.json()):
                errors += 1
            elif answer["result"].get("isError"):
                errors += 1
            latencies.append(time.perf_counter() - started)

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        await client.post(url, content=payload(), headers=headers)  # warm: builds our corpus
        started = time.perf_counter()
        stop_at = started + seconds
        await asyncio.gather(*(client_loop(client) for _ in range(clients)))
        elapsed = time.perf_counter() - started
    return latencies, errors, elapsed


def load_alternating(
    targets: dict[str, tuple[str, dict[str, Any] | Callable[[int], dict[str, Any]]]],
    clients: int,
    seconds: float,
    rounds: int,
) -> dict[str, dict[str, Any]]:
    """Each target (name -> url, body) loaded for `seconds` in all, in `rounds` short windows taken
    in turn, so that a shared machine's drift hits every target alike."""
    samples: dict[str, list[float]] = {name: [] for name in targets}
    errors = dict.fromkeys(targets, 0)
    elapsed = dict.fromkeys(targets, 0.0)
    for _ in range(rounds):
        for name, (url, body) in targets.items():
            latencies, failed, took = asyncio.run(load_window(url, body, clients, seconds / rounds))
            samples[name] += latencies
            errors[name] += failed
            elapsed[name] += took
    return {
        name: {
            "calls": len(samples[name]),
            "calls_per_second": len(samples[name]) / elapsed[name],
            "p50_ms": percentile(samples[name], 0.5) * 1000,
            "p99_ms": percentile(samples[name], 0.99) * 1000,
            "errors": errors[name],
        }
        for name in targets
    }


def bench_hosted(
    seconds: float, workers: int, clients: int, origins: dict[str, str], home: Path, rounds: int = 5
) -> dict[str, Any]:
    env = environment(home)
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    (home / "bare_starlette.py").write_text(BARE_STARLETTE_APP)
    (home / "echo_app.py").write_text(ECHO_APP)
    search = tool_call("search_docs", {"query": "how do I expose a method"})
    echo = tool_call("echo", {"text": "how do I expose a method"})
    uvicorn_options = [
        "--workers",
        str(workers),
        "--loop",
        loop,
        "--log-level",
        "warning",
        "--no-server-header",
        "--timeout-keep-alive",
        "75",
    ]
    ours = [PYTHON, "-m", "imqueue_mcp.server", "--http", "--workers", str(workers), *origin_args(origins)]
    # What `imqueue-mcp --http` passes its workers (config.to_environment): the same origins.
    echo_env = {**env, "IMQUEUE_MCP_ORIGINS": ",".join(f"{host}={url}" for host, url in origins.items())}
    echo_app = [PYTHON, "-m", "uvicorn", "--factory", "--app-dir", str(home), "echo_app:create_app"]
    bare = [PYTHON, "-m", "uvicorn", "--app-dir", str(home), "bare_starlette:app"]
    urls = {name: f"http://127.0.0.1:{free_port()}/mcp" for name in ("ours", "echo", "bare")}

    def port_of(name: str) -> list[str]:
        return ["--port", urls[name].rsplit(":", 1)[1].removesuffix("/mcp")]

    with contextlib.ExitStack() as servers:  # all three up at once; idle ones cost nothing
        servers.enter_context(running([*ours, *port_of("ours")], env, home, urls["ours"]))
        servers.enter_context(
            running([*echo_app, *port_of("echo"), *uvicorn_options], echo_env, home, urls["echo"])
        )
        servers.enter_context(running([*bare, *port_of("bare"), *uvicorn_options], env, home, urls["bare"]))
        targets: dict[str, tuple[str, dict[str, Any] | Callable[[int], dict[str, Any]]]] = {
            "imqueue-mcp search_docs": (urls["ours"], search),
            "imqueue-mcp search_docs, new queries": (urls["ours"], distinct_searches),
            "same stack: SDK echo tool": (urls["echo"], echo),
            "same stack: search_docs": (urls["echo"], search),
            "bare Starlette endpoint": (urls["bare"], search),
        }
        results = load_alternating(targets, clients, seconds, rounds)
    echo_rate = results["same stack: SDK echo tool"]["calls_per_second"]
    return {
        "clients": clients,
        "workers": workers,
        "seconds": seconds,
        "rounds": rounds,
        "loop": loop,
        "results": results,
        "search_to_echo_ratio": results["imqueue-mcp search_docs"]["calls_per_second"] / echo_rate,
        "new_query_search_to_echo_ratio": (
            results["imqueue-mcp search_docs, new queries"]["calls_per_second"] / echo_rate
        ),
    }


# --- report ----------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def report(figures: dict[str, Any]) -> None:
    host = figures["machine"]
    print(
        f"Machine: {host['platform']}, {host['cpus']} CPUs, Python {host['python']}, "
        f"load average {host['load_average']:.2f}"
    )
    cold = figures["cold_start"]
    print(f"\nCold start, spawn -> initialize answer ({cold['runs']} alternating runs)")
    print(f"  {'':<20}{'median ms':>12}{'p90 ms':>10}")
    print(f"  {'imqueue-mcp':<20}{cold['ours_median_ms']:>12.0f}{cold['ours_p90_ms']:>10.0f}")
    print(f"  {'bare SDK server':<20}{cold['bare_median_ms']:>12.0f}{cold['bare_p90_ms']:>10.0f}")
    print(f"  ratio {cold['ratio']:.2f} (target <= 1.3)")
    first = figures["first_answer"]
    print(
        f"\nLaunch to first search answer, snapshot on disk, live origin "
        f"{first['slow_origin_seconds']:g} s slow ({first['runs']} runs; answered from: "
        f"{', '.join(first['sources'])})"
    )
    print(f"  spawn -> initialize answer      median {first['initialize_median_ms']:>6.0f} ms")
    print(f"  spawn -> first search answer    median {first['first_answer_median_ms']:>6.0f} ms")
    print(
        f"  first answer after initialize   median {first['after_initialize_median_ms']:>6.0f} ms, "
        f"max {first['after_initialize_max_ms']:.0f} ms (target <= 150)"
    )
    search = figures["search"]
    print(
        f"\nsearch_docs over stdio ({search['queries']} round trips; first call, which builds the corpus: "
        f"{search['first_call_ms']:.0f} ms)"
    )
    print(
        f"  p50 {search['p50_ms']:.2f} ms   p99 {search['p99_ms']:.2f} ms   mean {search['mean_ms']:.2f} ms"
    )
    hosted = figures["hosted"]
    print(
        f"\nHosted, {hosted['clients']} concurrent clients, {hosted['workers']} worker(s), "
        f"{hosted['loop']}, {hosted['seconds']:g} s each in {hosted['rounds']} alternating rounds"
    )
    print(f"  {'':<38}{'calls/s':>10}{'p50 ms':>10}{'p99 ms':>10}{'errors':>8}")
    for name, row in hosted["results"].items():
        print(
            f"  {name:<38}{row['calls_per_second']:>10.0f}{row['p50_ms']:>10.1f}{row['p99_ms']:>10.1f}"
            f"{row['errors']:>8}"
        )
    print(
        f"  search_docs / echo: {hosted['search_to_echo_ratio']:.2f}x one query repeated (answer cache), "
        f"{hosted['new_query_search_to_echo_ratio']:.2f}x a new query each call (target >= 0.8)"
    )
    print()
    print(json.dumps(figures, sort_keys=True))


def write_snapshot(home: Path) -> Path:
    """A snapshot of the mirror, where only --snapshot points (never the cache the other runs use)."""
    from imqueue_mcp import docsource

    path = home / "snapshot" / "snapshot.msgpack"
    path.parent.mkdir()
    docsource.save_snapshot(docsource.build(mirror=SITE), path)
    return path


def add_load_arguments(parser: argparse.ArgumentParser, *, seconds: float, clients: int) -> None:
    """--seconds, --clients and --workers: how long, how wide and on how many workers a load runs."""
    parser.add_argument("--seconds", type=float, default=seconds, help="load duration of each run")
    parser.add_argument("--clients", type=int, default=clients, help="concurrent HTTP clients")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers of each HTTP server")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15, help="cold-start runs per server")
    parser.add_argument("--queries", type=int, default=300, help="search_docs round trips")
    add_load_arguments(parser, seconds=5.0, clients=8)
    args = parser.parse_args(argv)
    if not SITE.is_dir():
        sys.exit(f"bench_server: the site mirror is not at {SITE}; clone next to ../shared")
    with (
        tempfile.TemporaryDirectory(prefix="bench-server-") as temp,
        site_origins() as origins,
        site_origins(_Slow) as slow_origins,
    ):
        home = Path(temp)
        snapshot = write_snapshot(home)
        figures = {
            "benchmark": "server",
            "machine": machine(),
            "cold_start": bench_cold_start(args.runs, home),
            "first_answer": bench_first_answer(args.runs, slow_origins, snapshot, home),
            "search": bench_search(args.queries, origins, home),
            "hosted": bench_hosted(args.seconds, args.workers, args.clients, origins, home),
        }
    report(figures)


if __name__ == "__main__":
    main()

"""Shared test fixtures: the site mirror on loopback, and real servers driven by the SDK's client.

The docs are served by plain `http.server` threads over ../shared/site (read at run time,
never copied), one per canonical host, passed to servers with --origin. The builder's own
tests read the tiny hand-written mirror instead (fixtures/tiny_site.py), which `tiny_site()`
writes out once per session. Protocol tests spawn the real server (`python -m server`) and
talk to it with `mcp.client.Client`; since tests are synchronous, `McpConnection` runs that
client on an event loop in a thread and hands back plain results, with every wait bounded.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import functools
import http.server
import math
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    import httpx

# The tool lists, pinned here independently of the server's own tables (SPEC §1, §3a, §4).
SHARED_TOOLS = frozenset(
    {
        "search_docs",
        "get_doc",
        "find_examples",
        "list_packages",
        "package_status",
        "scaffold_service",
        "scaffold_client",
    }
)
HOSTED_TOOLS = SHARED_TOOLS | {"local_install_guide"}
LOCAL_TOOLS = SHARED_TOOLS | {
    "cli_status",
    "cli_install",
    "cli_help",
    "create_service",
    "generate_client",
    "fleet",
    "config",
    "logs",
    "inspect_project",
    "get_api",
    "api_diff",
}


# A raw 2025-11-25 initialize request, for the tests that speak HTTP without the SDK's client.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(__file__).resolve().parents[2] / "shared"
SITE = SHARED / "site"
IMQ_STANDIN_DIR = REPO / "fixtures" / "imq"
WAIT_SECONDS = 60.0

if str(REPO) not in sys.path:  # the tests import the server package from the source tree
    sys.path.insert(0, str(REPO))


# --- the site mirrors ------------------------------------------------------------------


@functools.cache
def tiny_site() -> Path:
    """fixtures/tiny_site.py written out once per session, in a temporary folder removed at exit."""
    from fixtures.tiny_site import write_site

    root = Path(tempfile.mkdtemp(prefix="imq-tiny-site-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return write_site(root)


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    missing: frozenset[str] = frozenset()
    protocol_version = "HTTP/1.1"  # keep-alive: a live build reads ~2,300 API pages over one pool
    disable_nagle_algorithm = True  # headers and body go out as two writes: no 40 ms ACK waits

    def do_GET(self) -> None:
        if self.path.split("?")[0] in self.missing:
            self.send_error(404)
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class SiteServer:
    """One canonical host's mirror folder on 127.0.0.1, in a daemon thread."""

    def __init__(self, host: str, missing: frozenset[str] = frozenset()):
        handler = type("Handler", (_SiteHandler,), {"missing": missing})
        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(SITE / host))
        )
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _serve_site(missing: frozenset[str] = frozenset()) -> Iterator[dict[str, str]]:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    servers = {host: SiteServer(host, missing) for host in ("imqueue.org", "imqueue.com")}
    try:
        yield {host: server.url for host, server in servers.items()}
    finally:
        for server in servers.values():
            server.close()


@pytest.fixture(scope="session")
def site_origins() -> Iterator[dict[str, str]]:
    """{'imqueue.org': 'http://127.0.0.1:P', 'imqueue.com': 'http://127.0.0.1:Q'}."""
    yield from _serve_site()


@pytest.fixture(scope="session")
def status_down_origins() -> Iterator[dict[str, str]]:
    """The same mirror, except that imqueue.org/status.json answers 404."""
    yield from _serve_site(frozenset({"/status.json"}))


def origin_args(origins: dict[str, str]) -> list[str]:
    return [arg for host, url in origins.items() for arg in ("--origin", f"{host}={url}")]


# httpx builds a new SSL context for every top-level call, loading the CA bundle (~22 ms of CPU),
# even for an http:// URL; a readiness poll makes dozens of calls per server. Handed this one,
# built once, a call costs ~0.5 ms (issue 25: the suite's CPU time).
LOOPBACK_TLS = ssl.create_default_context()


def loopback_get(url: str, **options: Any) -> httpx.Response:
    """httpx.get(url, **options) with the context above: for the polls of loopback servers."""
    import httpx

    return httpx.get(url, verify=LOOPBACK_TLS, **options)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- things installed outside pip (Redis, Node packages) --------------------------------

CI = os.environ.get("IMQUEUE_MCP_CI") == "1"  # set by .ci/run, which installs every external
# The long end-to-end tests (marked `slow`) run in CI, or when asked for; the README's test
# command alone stays quick enough to run after every change.
RUN_SLOW = CI or os.environ.get("IMQUEUE_MCP_SLOW") == "1"


# `-n auto` (pyproject's addopts) starts workers_per_cpu() xdist workers per CPU. The fast run is
# CPU-bound (every server start imports the SDK and builds or loads an index): on 2 CPUs it took
# 549 s with two workers each and 423 s with one (11.5 user CPU-minutes, not 16.3), and with
# `--dist loadscope` 246 s on three against 248 s on two. The slow tier is not: its end-to-end tests
# wait on processes, signals and deadlines, and with one worker per CPU a fifth of the CPUs sat idle
# (vmstat; 646-685 s). Half a worker more per CPU fills it: 576 s on 3 workers, 4 % idle, every
# test passing (docs/testing.md). `-n N` still overrides it; IMQUEUE_MCP_WORKERS_PER_CPU sets the
# factor (1 for the fast run, 1.5 with the slow tier).
def workers_per_cpu() -> float:
    said = os.environ.get("IMQUEUE_MCP_WORKERS_PER_CPU", "1.5" if RUN_SLOW else "1")
    try:
        factor = float(said)
    except ValueError:
        factor = 0.0
    if not 0 < factor <= 16:
        raise pytest.UsageError(
            f"IMQUEUE_MCP_WORKERS_PER_CPU={said!r}: give a number of workers per CPU, e.g. 1"
        )
    return factor


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return max(1, math.ceil((os.cpu_count() or 1) * workers_per_cpu()))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "slow: a long end-to-end test; runs when IMQUEUE_MCP_CI=1 or IMQUEUE_MCP_SLOW=1"
    )


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    if not RUN_SLOW:
        skip = pytest.mark.skip(
            reason="slow end-to-end test: set IMQUEUE_MCP_SLOW=1 (or IMQUEUE_MCP_CI=1) to run it"
        )
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip)
    yield  # pytest's own ordering (by fixture parameters), xdist's
    items[:] = scheduled(items)


def scheduled(items: list[pytest.Item]) -> list[pytest.Item]:
    """The tests in the order xdist hands them out: a module at a time (pyproject: `--dist
    loadscope`), its tests in pytest's order, so a module-scoped fixture (a server, a built
    project) is set up once, by one worker. Spread test by test over 2 workers, every module's
    shared server started twice. (`--dist loadgroup` with a group per module was meant to do this,
    but pytest 9.2 computes `nodeid` afresh, so xdist 3.8's group suffix never lands and each
    module was split.) The modules go out longest first: those holding a slow test (when the slow
    tier runs), then by the number of tests that run, so the small ones fill the workers at the end.
    xdist keeps this order only under `--no-loadscope-reorder` (pyproject): by default it sorts the
    modules by size alone, and the single-test slow ones (a fleet, a benchmark run) came last."""
    first: dict[str, int] = {}
    size: dict[str, int] = {}
    slow: set[str] = set()
    for index, item in enumerate(items):
        module = item.nodeid.split("::")[0]
        first.setdefault(module, index)
        is_slow = "slow" in item.keywords
        if RUN_SLOW or not is_slow:  # a test that runs
            size[module] = size.get(module, 0) + 1
        if RUN_SLOW and is_slow:
            slow.add(module)
    order = {item.nodeid: index for index, item in enumerate(items)}

    def key(item: pytest.Item) -> tuple[bool, int, int, int]:
        module = item.nodeid.split("::")[0]
        return (module not in slow, -size.get(module, 0), first[module], order[item.nodeid])

    return sorted(items, key=key)


def require_external(present: bool, what: str, install: str) -> None:
    """Skip a test whose external dependency is missing, saying how to install it; in CI
    (IMQUEUE_MCP_CI=1, where .ci/run has installed everything) a missing one is a failure."""
    if present:
        return
    message = f"{what} is not installed here: run {install}"
    if CI:
        pytest.fail(message)
    pytest.skip(message)


def built_snapshot(folder: Path, *, pages: bool = True) -> Path:
    """What `imq-build-index --from ../shared/site [--pages]` writes, as folder/snapshot.msgpack
    (skips the test when the mirror is missing). The build runs once per test process (an xdist
    worker) for each `pages`; every caller gets its own copy, free to damage or replace."""
    folder.mkdir(parents=True, exist_ok=True)  # as imq-build-index --out makes it
    path = folder / "snapshot.msgpack"
    shutil.copyfile(_mirror_snapshot(pages), path)
    return path


def offline_args(folder: Path, *, pages: bool = True) -> list[str]:
    """A server's flags to serve built_snapshot(folder) offline: for tests whose subject is not
    the live read, which costs every start the ~2,300 API reference pages (docs/testing.md)."""
    return ["--offline", "--snapshot", str(built_snapshot(folder, pages=pages))]


@functools.cache
def _mirror_snapshot(pages: bool) -> Path:
    """The mirror's snapshot, built by the real `imq-build-index` into a temporary folder removed
    at exit. Building is quick (~0.1 s); writing it is not (~1.4 s: the index), and ~30 tests and
    fixtures need one only to have one."""
    from imqueue_mcp.build_index.cli import main as build_main

    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    folder = Path(tempfile.mkdtemp(prefix="imq-mirror-snapshot-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = folder / "snapshot.msgpack"
    flags = ["--pages"] if pages else []
    assert build_main(["--from", str(SITE), "--out", str(path), *flags, "--quiet"]) == 0
    return path


# --- environment of a spawned server ---------------------------------------------------


def server_environment(home: Path, **extra: str) -> dict[str, str]:
    """PATH, an isolated cache, HOME and imq home for a spawned server.

    No imq is on this PATH: a server that runs imq gets the real one from
    imq_real.real_imq_environment, and the fault tests put the stand-in there themselves."""
    path_dirs = [str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"]
    env = {
        "PATH": os.pathsep.join(path_dirs),
        "PYTHONPATH": str(REPO),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "IMQ_CLI_HOME": str(home / "imq"),
        "PYTHONUNBUFFERED": "1",
        # A hosted server stops at once on SIGTERM in tests; test_hosted_operations.py drains it.
        "IMQUEUE_MCP_DRAIN_SECONDS": "0",
    }
    env.update(extra)
    return env


# --- a real MCP client, usable from synchronous tests ----------------------------------


class McpConnection:
    """An `mcp.client.Client` connected to `target`, running on its own event loop thread;
    `client_options` go to the Client as they are (e.g. a message_handler)."""

    def __init__(self, target: Any, mode: str, timeout: float = WAIT_SECONDS, **client_options: Any):
        from mcp.client import Client

        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._stop: asyncio.Event | None = None

        async def hold() -> None:
            self._stop = asyncio.Event()
            try:
                async with Client(target, mode=mode, **client_options) as client:
                    self._ready.set_result(client)
                    await self._stop.wait()
            except BaseException as error:
                if not self._ready.done():
                    self._ready.set_exception(error)
                raise

        self._held = asyncio.run_coroutine_threadsafe(hold(), self._loop)
        try:
            self.client = self._ready.result(timeout)
        except BaseException:
            self._shutdown_loop()
            raise

    def submit(self, work: Callable[[Any], Awaitable[Any]]) -> concurrent.futures.Future[Any]:
        """Start `work(client)` on the client's loop; the future holds its result."""

        async def job() -> Any:
            return await work(self.client)

        return asyncio.run_coroutine_threadsafe(job(), self._loop)

    def run(self, work: Callable[[Any], Awaitable[Any]], timeout: float = WAIT_SECONDS) -> Any:
        return self.submit(work).result(timeout)

    def call(self, name: str, arguments: dict[str, Any] | None = None, timeout: float = WAIT_SECONDS) -> Any:
        return self.run(lambda client: client.call_tool(name, arguments or {}), timeout)

    def tools(self) -> list[Any]:
        tools: list[Any] = self.run(lambda client: client.list_tools()).tools
        return tools

    def close(self) -> None:
        if self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        try:
            self._held.result(30)
        except Exception:
            pass
        finally:
            self._shutdown_loop()

    def _shutdown_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def stdio_connection(
    args: list[str], env: dict[str, str], cwd: Path, mode: str, **client_options: Any
) -> McpConnection:
    from mcp.client.stdio import StdioServerParameters

    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "imqueue_mcp.server", *args], env=env, cwd=cwd
    )
    return McpConnection(parameters, mode, **client_options)


class HttpServer:
    """`python -m server --http` on a free loopback port, ready when GET / answers."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "imqueue_mcp.server", "--http", "--port", str(self.port), *args],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=self.log,
        )
        self._wait_until_ready()

    def _wait_until_ready(self) -> None:
        import httpx

        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the HTTP server exited: {self.stderr()}")
            try:
                if loopback_get(self.url + "/", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        self.close()
        raise RuntimeError("the HTTP server did not answer within the deadline")

    def stderr(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", errors="replace")

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        self.log.close()


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """`imqueue-mcp --http` over the site mirror's built snapshot, offline, one per test module (a
    module may override it; the live read has tests of its own, and costs a start ~2 s of CPU)."""
    home = tmp_path_factory.mktemp("http")
    server = HttpServer(offline_args(home), server_environment(home), home)
    yield server
    server.close()


def live_hosted(origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """`imqueue-mcp --http` reading the live sites at `origins`: for a module whose subject needs
    them (a page the snapshot lacks, a refresh), as its own `hosted` fixture."""
    home = tmp_path_factory.mktemp("http-live")
    server = HttpServer(origin_args(origins), server_environment(home), home)
    yield server
    server.close()


@pytest.fixture(scope="module")
def redis_port(workspace: Path) -> Iterator[int]:
    """A redis-server on a free 127.0.0.1 port for a module's framework tests, its files in the
    module's own `workspace` fixture; stopped after the module."""
    from benchmarks.stack import redis_server

    port = free_port()
    with redis_server(port, workspace / "redis"):
        yield port

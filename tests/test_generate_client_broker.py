"""generate_client on any Redis: the broker address, its two failures, and generation through
the project's own @imqueue/rpc where imq cannot reach the broker (imq knows localhost:6379 only).

Real parts throughout: a redis-server started here on a free port, node, and an installed
@imqueue runtime: the node_modules folder $IMQUEUE_MCP_RPC_RUNTIME names, else the 3.x service
runtime .ci/install-imq.sh builds (with its Node 22), else tests/framework/node_modules. The
bridge is called in process; the tool's schema is checked through the real server.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from imq_real import NODE_BIN, SERVICE_RUNTIME

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.imq import bridge
from imqueue_mcp.server.imq.broker import IMQ_BROKER, broker_address, probe_broker, queue_readers
from imqueue_mcp.server.imq.runner import ImqRunner
from imqueue_mcp.server.scaffold.templates import scaffold_client, scaffold_service

from conftest import REPO, free_port, require_external

REDIS_START_SECONDS = 10.0
NODE_FLOOR_FOR_3X = 22


# --- the address ------------------------------------------------------------------------


def test_the_address_is_the_argument_else_imq_redis_else_localhost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IMQ_REDIS", raising=False)
    assert broker_address(None) == IMQ_BROKER and IMQ_BROKER.is_imq_default
    monkeypatch.setenv("IMQ_REDIS", "redis.internal:6380,redis2.internal:6380")  # a cluster: the first
    configured = broker_address(None)
    assert (str(configured), configured.origin, configured.is_imq_default) == (
        "redis.internal:6380",
        "IMQ_REDIS",
        False,
    )
    given = broker_address("127.0.0.1:6379")
    assert given.origin == "argument" and given.is_imq_default


@pytest.mark.parametrize("bad", ["localhost", "localhost:", ":6379", "host:0", "host:70000", "a b:1", "-x:1"])
def test_a_malformed_address_is_refused_naming_the_form(bad: str) -> None:
    with pytest.raises(ValueError, match="host:port"):
        broker_address(bad)


@pytest.mark.parametrize("port", ["\u0666\u0663\u0667\u0669", "\uff16\uff13\uff17\uff19", "\u00b2"])
def test_a_port_of_digits_other_than_ascii_is_refused_naming_the_form(port: str) -> None:
    """str.isdigit takes Arabic-Indic, fullwidth and superscript digits; the services' Node does not."""
    with pytest.raises(ValueError, match="which is not a broker address"):
        broker_address(f"localhost:{port}")


def test_a_malformed_address_reaches_the_agent_as_a_refusal_and_runs_nothing(tmp_path: Path) -> None:
    result = asyncio.run(
        bridge.generate_client(
            "UserService", redis="nowhere", runner=ImqRunner(working_directory=str(tmp_path))
        )
    )
    assert result.is_error and result.error_code == ErrorCode.ARGUMENT_REFUSED and result.command == []
    assert "host:port" in result.text


@pytest.mark.parametrize("suffix", [".ts", ".js"])
def test_a_client_file_planted_as_a_symlink_out_of_the_folder_is_refused_before_anything_runs(
    tmp_path: Path, suffix: str
) -> None:
    # The generator through the project's rpc writes <Service>.ts and the compiled <Service>.js.
    outside, folder = tmp_path / "outside", tmp_path / "work" / "clients"
    outside.mkdir()
    folder.mkdir(parents=True)
    (outside / "important.js").write_text("keep me\n")
    (folder / f"EchoService{suffix}").symlink_to(outside / "important.js")

    result = asyncio.run(
        bridge.generate_client(
            "EchoService",
            path="clients",
            redis=f"127.0.0.1:{free_port()}",
            runner=ImqRunner(working_directory=str(tmp_path / "work")),
        )
    )

    assert result.is_error and result.error_code == ErrorCode.ARGUMENT_REFUSED and result.command == []
    assert f"EchoService{suffix} is a symlink to {outside / 'important.js'}" in result.text
    assert (outside / "important.js").read_text() == "keep me\n"


# --- a real Redis -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    server = shutil.which("redis-server")
    require_external(server is not None, "redis-server", "bash .ci/install-framework.sh")
    assert server is not None
    port = free_port()
    folder = tmp_path_factory.mktemp("redis")
    process = subprocess.Popen(
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + REDIS_START_SECONDS
        while asyncio.run(probe_broker(broker_address(f"127.0.0.1:{port}"))) is not None:
            assert process.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(10)


def test_nothing_listening_is_no_broker_at_that_address_and_nothing_runs(tmp_path: Path) -> None:
    port = free_port()  # free: nothing listens
    result = asyncio.run(
        bridge.generate_client(
            "UserService", redis=f"127.0.0.1:{port}", runner=ImqRunner(working_directory=str(tmp_path))
        )
    )
    assert result.is_error and result.error_code == ErrorCode.BROKER_UNREACHABLE
    assert f"No broker at 127.0.0.1:{port}" in result.text and "connection refused" in result.text
    assert result.command == [] and "redis='host:port'" in result.next_step


def test_a_listener_that_is_not_redis_is_no_broker_either(tmp_path: Path) -> None:
    async def scenario() -> str | None:
        async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(greet, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            return await probe_broker(broker_address(f"127.0.0.1:{port}"))

    assert "did not answer PING" in (asyncio.run(scenario()) or "")


def test_the_broker_answering_is_told_apart_by_a_ping(redis_port: int) -> None:
    assert asyncio.run(probe_broker(broker_address(f"127.0.0.1:{redis_port}"))) is None


def test_the_queues_read_on_a_broker_are_told_by_the_names_core_gives_its_connections(
    redis_port: int,
) -> None:
    """@imqueue/core names a reader connection <prefix>:<queue>:reader:pid:<pid>:host:<host>."""
    import socket

    address = broker_address(f"127.0.0.1:{redis_port}")
    named = []
    for name in ("imq:FakeService:reader:pid:1:host:h", "imq:FakeService:writer:pid:1:host:h", "other"):
        connection = socket.create_connection(("127.0.0.1", redis_port), timeout=5)
        connection.sendall(f"CLIENT SETNAME {name}\r\n".encode())
        assert connection.recv(64).startswith(b"+OK")
        named.append(connection)
    try:
        assert asyncio.run(queue_readers(address)) == frozenset({"FakeService"})
    finally:
        for connection in named:
            connection.close()
    assert asyncio.run(queue_readers(broker_address(f"127.0.0.1:{free_port()}"))) is None  # nothing there


def test_the_name_asked_for_is_read_as_the_queue_a_process_reads(redis_port: int) -> None:
    """The scaffolds read 'Greeter' as GreeterService; imq's template names the class Greeter
    itself. Whichever of the two a process reads on the broker is the one meant, and said."""
    import socket

    from imqueue_mcp.server.imq.bridge import _reading_name

    address = broker_address(f"127.0.0.1:{redis_port}")
    connections = []
    for name in ("imq:Greeter:reader:pid:1:host:h", "imq:UserService:reader:pid:1:host:h"):
        connection = socket.create_connection(("127.0.0.1", redis_port), timeout=5)
        connection.sendall(f"CLIENT SETNAME {name}\r\n".encode())
        assert connection.recv(64).startswith(b"+OK")
        connections.append(connection)
    try:
        greeter, told = asyncio.run(_reading_name("GreeterService", address))
        assert greeter == "Greeter" and "imq's template" in told and "queue name 'Greeter'" in told
        assert asyncio.run(_reading_name("Greeter", address)) == ("Greeter", "")
        user, told = asyncio.run(_reading_name("User", address))
        assert user == "UserService" and "the name the scaffolds give" in told
        assert asyncio.run(_reading_name("OrderService", address)) == ("OrderService", "")  # nobody: as given
    finally:
        for connection in connections:
            connection.close()


# --- through the project's own @imqueue/rpc ---------------------------------------------


def rpc_runtime() -> tuple[Path, int]:
    """An installed node_modules with @imqueue/rpc, and rpc's major; skips (fails in CI) without."""
    override = os.environ.get("IMQUEUE_MCP_RPC_RUNTIME")
    candidates = (
        [Path(override)] if override else [SERVICE_RUNTIME, REPO / "tests" / "framework" / "node_modules"]
    )
    folder = next(
        (c for c in candidates if (c / "@imqueue" / "rpc" / "package.json").is_file()), candidates[0]
    )
    manifest = folder / "@imqueue" / "rpc" / "package.json"
    require_external(manifest.is_file(), f"@imqueue/rpc installed in {folder}", "bash .ci/install-imq.sh")
    version = json.loads(manifest.read_text("utf-8"))["version"]
    return folder, int(version.split(".")[0])


@pytest.fixture(autouse=True)
def imq_node_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Node 22 .ci/install-imq.sh brings, when it is there: @imqueue 3.x needs 22.12+."""
    if NODE_BIN.is_dir():
        monkeypatch.setenv("PATH", os.pathsep.join([str(NODE_BIN), os.environ["PATH"]]))


def node_major() -> int:
    node = shutil.which("node")
    require_external(node is not None, "Node.js (node)", "apt-get install -y nodejs")
    assert node is not None
    return int(
        subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
        .stdout.lstrip("v")
        .split(".")[0]
    )


def project_on(runtime: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text('{"name": "caller", "private": true}\n')
    (folder / "node_modules").symlink_to(runtime, target_is_directory=True)
    return folder


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_service_that_does_not_answer_on_a_live_broker_is_no_such_service(
    redis_port: int, tmp_path: Path
) -> None:
    runtime, major = rpc_runtime()
    if major >= 3:
        require_external(
            node_major() >= NODE_FLOOR_FOR_3X, "Node.js 22.12+ for @imqueue 3.x", "Node 22 on PATH"
        )
    project = project_on(runtime, tmp_path / "caller")
    runner = ImqRunner(working_directory=str(project), timeout_seconds=8)
    result = asyncio.run(
        bridge.generate_client(
            "NobodyService", path="src/clients", redis=f"127.0.0.1:{redis_port}", runner=runner
        )
    )
    assert result.is_error and result.error_code == ErrorCode.SERVICE_NOT_ANSWERING, result.text
    assert f"No service NobodyService on the broker at 127.0.0.1:{redis_port}" in result.text
    assert "the broker is up" in result.text and f"IMQ_REDIS=127.0.0.1:{redis_port}" in result.next_step
    assert result.command[0].endswith("node") and "<IMQClient.create script>" in result.text
    assert not (project / "src" / "clients" / "NobodyService.ts").exists()


def test_no_installed_rpc_says_where_it_looked_and_runs_nothing(redis_port: int, tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text("{}")
    runner = ImqRunner(working_directory=str(tmp_path))
    result = asyncio.run(
        bridge.generate_client("UserService", redis=f"127.0.0.1:{redis_port}", runner=runner)
    )
    assert result.is_error and result.command == [] and result.error_code == ErrorCode.ARGUMENT_REFUSED
    assert "only reaches localhost:6379" in result.text and "npm install" in result.text


@pytest.mark.slow
def test_a_scaffolded_service_on_a_non_default_redis_gets_its_client_through_the_projects_rpc(
    redis_port: int, tmp_path: Path
) -> None:
    """scaffold_service's own files, built and started with IMQ_REDIS on this port, answer
    generate_client(redis=...) with a client written through the caller project's @imqueue/rpc."""
    runtime, major = rpc_runtime()
    if major < 3:
        pytest.skip(f"the scaffold is @imqueue 3.x code; the installed runtime is {major}.x")
    require_external(node_major() >= NODE_FLOOR_FOR_3X, "Node.js 22.12+ for @imqueue 3.x", "Node 22 on PATH")
    tsc = runtime / "typescript" / "bin" / "tsc"
    require_external(tsc.is_file(), f"typescript in {runtime}", "bash .ci/install-framework.sh")
    service_dir = tmp_path / "user-service"
    methods = [{"name": "getUser", "params": [{"name": "id", "type": "string"}], "returns": "string"}]
    for file in scaffold_service("user", methods)["files"]:
        target = service_dir / file["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file["content"])
    (service_dir / "node_modules").symlink_to(runtime, target_is_directory=True)
    node = shutil.which("node")
    assert node is not None
    subprocess.run([node, str(tsc), "-p", str(service_dir)], check=True, capture_output=True, timeout=120)
    environment = dict(os.environ, IMQ_REDIS=f"127.0.0.1:{redis_port}")
    service = subprocess.Popen(
        [node, "dist/index.js"],
        cwd=service_dir,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        project = project_on(runtime, tmp_path / "caller")
        runner = ImqRunner(working_directory=str(project), timeout_seconds=60)
        result = asyncio.run(
            bridge.generate_client(
                "UserService", path="src/clients", redis=f"127.0.0.1:{redis_port}", runner=runner
            )
        )
        assert not result.is_error, result.text
        assert (
            "through the project's own @imqueue/rpc" in result.text
            and "only reaches localhost:6379" in result.text
        )
        assert result.structured is not None and result.structured["namespace"] == "userService"
        assert (
            "public async getUser(id: string" in (project / "src" / "clients" / "UserService.ts").read_text()
        )
        # Asked for as the scaffolds take it ('user'), the service they named UserService is meant.
        started = time.monotonic()
        named = asyncio.run(
            bridge.generate_client("user", path="by-name", redis=f"127.0.0.1:{redis_port}", runner=runner)
        )
        assert not named.is_error, named.text
        assert "UserService does, the name the scaffolds give a service asked for as 'user'" in named.text
        assert (project / "by-name" / "UserService.ts").is_file() and time.monotonic() - started < 20

        # scaffold_client's caller, as written, beside the generated client: builds, calls, exits.
        # files[] lists every file the answer shows, the caller among them.
        caller = scaffold_client("user", methods, call_timeout_ms=3000)
        assert caller["example"] in caller["files"]
        for file in caller["files"]:
            target = project / file["path"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(file["content"])
        subprocess.run([node, str(tsc), "-p", str(project)], check=True, capture_output=True, timeout=120)
        called = subprocess.run(
            [node, "dist/caller.js"], cwd=project, env=environment, capture_output=True, text=True, timeout=60
        )
        # the scaffold's method body throws until implemented: the call reached the service
        assert called.returncode == 1, called.stdout + called.stderr
        assert "UserService.getUser() is not implemented yet" in called.stderr, called.stdout + called.stderr

        # With the service gone, the caller's callTimeout rejects the call instead of waiting forever.
        service.terminate()
        service.wait(10)
        started = time.monotonic()
        unanswered = subprocess.run(
            [node, "dist/caller.js"], cwd=project, env=environment, capture_output=True, text=True, timeout=60
        )
        assert unanswered.returncode == 1, unanswered.stdout + unanswered.stderr
        assert "timed out after 3000 ms" in unanswered.stderr, unanswered.stdout + unanswered.stderr
        assert time.monotonic() - started < 30
    finally:
        service.terminate()
        service.wait(10)


@pytest.mark.slow
def test_an_object_literal_return_reaches_the_generated_client_as_its_class(
    redis_port: int, tmp_path: Path
) -> None:
    """Issue 28: a method returning { sku: string; reserved: number } is scaffolded with a
    generated @classType() class, so the running service describes it and the client generated
    from it keeps the type (an object literal would be described as any)."""
    runtime, major = rpc_runtime()
    if major < 3:
        pytest.skip(f"the scaffold is @imqueue 3.x code; the installed runtime is {major}.x")
    require_external(node_major() >= NODE_FLOOR_FOR_3X, "Node.js 22.12+ for @imqueue 3.x", "Node 22 on PATH")
    tsc = runtime / "typescript" / "bin" / "tsc"
    require_external(tsc.is_file(), f"typescript in {runtime}", "bash .ci/install-framework.sh")
    service_dir = tmp_path / "inventory-service"
    methods = [
        {
            "name": "reserve",
            "params": [{"name": "sku", "type": "string"}, {"name": "count", "type": "number"}],
            "returns": "{ sku: string; reserved: number }",
        }
    ]
    for file in scaffold_service("inventory", methods)["files"]:
        target = service_dir / file["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(file["content"])
    (service_dir / "node_modules").symlink_to(runtime, target_is_directory=True)
    node = shutil.which("node")
    assert node is not None
    subprocess.run([node, str(tsc), "-p", str(service_dir)], check=True, capture_output=True, timeout=120)
    environment = dict(os.environ, IMQ_REDIS=f"127.0.0.1:{redis_port}")
    service = subprocess.Popen(
        [node, "dist/index.js"],
        cwd=service_dir,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        project = project_on(runtime, tmp_path / "caller")
        runner = ImqRunner(working_directory=str(project), timeout_seconds=60)
        result = asyncio.run(
            bridge.generate_client(
                "InventoryService", path="src/clients", redis=f"127.0.0.1:{redis_port}", runner=runner
            )
        )
        assert not result.is_error, result.text
        client = (project / "src" / "clients" / "InventoryService.ts").read_text()
        assert "ReserveResult" in client, client
        assert re.search(r"sku\??: string", client) and re.search(r"reserved\??: number", client), client
        assert re.search(r"reserve\([^)]*\): Promise<ReserveResult>", client), client
        assert result.structured is not None and "undeclared" not in result.structured  # it compiles
    finally:
        service.terminate()
        service.wait(10)

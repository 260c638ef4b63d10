"""Scaffolds run on the real @imqueue framework (issue 4 §1) and generate_client returns the
client the framework itself generated (§2).

scaffold_service is called through the SDK's client on the real stdio server; its files are
compiled with tsc against @imqueue/rpc 1.x (tests/framework, installed by
.ci/install-framework.sh), the service runs with node against a redis-server started here on
a free loopback port, and the Node glue in tests/framework reads its self-description, calls
it through a generated client, and stands in for `imq client generate`.

The scaffold targets the documented 3.x API, and 1.x differs where this test must bridge it:
1.x is CommonJS with legacy decorators (tests/framework/tsconfig.json replaces the scaffold's
ESM tsconfig), and the scaffold's bootstrap (src/index.ts: top-level await, Redis on port
6379) is replaced by run-service.js. The service class itself is compiled as scaffolded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import processes
from conftest import REPO, free_port, require_external, server_environment, stdio_connection

FRAMEWORK = REPO / "tests" / "framework"
NODE_MODULES = FRAMEWORK / "node_modules"
TSC = NODE_MODULES / "typescript" / "bin" / "tsc"
INSTALL = "bash .ci/install-framework.sh (apt-get install -y redis-server; npm ci in tests/framework)"
STARTUP_SECONDS = 30.0

SERVICE = "NotesService"
# What the agent asks for: required and optional parameters of every primitive kind and
# arrays, non-void returns, a method without parameters and two void ones.
METHODS: list[dict[str, Any]] = [
    {
        "name": "addNote",
        "description": "Stores a note and returns its id.",
        "params": [
            {"name": "title", "type": "string", "description": "shown in lists"},
            {"name": "tags", "type": "string[]", "optional": True},
            {"name": "pinned", "type": "boolean", "optional": True},
        ],
        "returns": "number",
    },
    {
        "name": "findNotes",
        "params": [
            {"name": "query", "type": "string"},
            {"name": "limit", "type": "number", "optional": True},
        ],
        "returns": "string[]",
    },
    {"name": "countNotes", "returns": "number"},
    {"name": "archiveNotes", "params": [{"name": "ids", "type": "number[]"}], "returns": "void"},
    {"name": "touchNote", "params": [{"name": "id", "type": "number"}], "returns": "void"},
]
# The one method whose body the test writes, as a user would: a void method that returns.
IMPLEMENTED = "touchNote"


def not_implemented_message(method: str) -> str:
    return f"{SERVICE}.{method}() is not implemented yet"


# --- externals: Redis and the Node packages ----------------------------------------------


@pytest.fixture(scope="module")
def framework_installed() -> None:
    require_external(shutil.which("redis-server") is not None, "redis-server", INSTALL)
    require_external(shutil.which("node") is not None, "Node.js (node)", "apt-get install -y nodejs")
    require_external((NODE_MODULES / "@imqueue" / "rpc").is_dir() and TSC.is_file(), "@imqueue/rpc", INSTALL)


def wait_for_redis(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with code {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"redis-server did not answer PING on port {port} within {STARTUP_SECONDS} s")


def stop(process: subprocess.Popen[Any]) -> None:
    processes.stop(process, 10)


@pytest.fixture(scope="module")
def workspace(framework_installed: None) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="imq-framework-"))
    (root / "tmp").mkdir()  # TMPDIR of every node process: @imqueue keeps pid files there
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def redis_port(workspace: Path) -> Iterator[int]:
    port = free_port()
    data = workspace / "redis"
    data.mkdir()
    process = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
        + ["--dir", str(data), "--daemonize", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_redis(port, process)
        yield port
    finally:
        stop(process)


def node_environment(workspace: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(workspace / "tmp"), **extra}


# --- the scaffold, compiled and running ---------------------------------------------------


@pytest.fixture(scope="module")
def scaffold(workspace: Path) -> dict[str, Any]:
    home = workspace / "mcp-home"
    home.mkdir()
    connection = stdio_connection([], server_environment(home), home, "legacy")
    try:
        result = connection.call("scaffold_service", {"name": "notes", "methods": METHODS})
    finally:
        connection.close()
    assert not result.is_error, result.content
    return dict(result.structured_content)


@pytest.fixture(scope="module")
def compiled_service(workspace: Path, scaffold: dict[str, Any]) -> Path:
    project = workspace / "service"
    for file in scaffold["files"]:
        destination = project / file["path"]
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(file["content"], encoding="utf-8")
    implement_void_method(project / "src" / f"{SERVICE}.ts", IMPLEMENTED)
    (project / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    sources = [f"src/{SERVICE}.ts"] + (["src/types.ts"] if scaffold["types"] else [])
    (project / "tsconfig.json").write_text(  # the scaffold's own is 3.x ESM: see the module docstring
        json.dumps(
            {
                "extends": str(FRAMEWORK / "tsconfig.json"),
                "compilerOptions": {"rootDir": "src", "outDir": "dist"},
                "files": sources,
            }
        ),
        encoding="utf-8",
    )
    compiled = subprocess.run(
        ["node", str(TSC), "-p", str(project)], capture_output=True, text=True, timeout=120
    )
    assert compiled.returncode == 0, f"tsc failed on the scaffold:\n{compiled.stdout}{compiled.stderr}"
    return project / "dist" / f"{SERVICE}.js"


def implement_void_method(source: Path, method: str) -> None:
    text = source.read_text(encoding="utf-8")
    placeholder = f"throw new Error('{not_implemented_message(method)}');"
    assert placeholder in text, f"the scaffold's body of {method}() changed"
    source.write_text(text.replace(placeholder, "return;"), encoding="utf-8")


@pytest.fixture(scope="module")
def running_service(workspace: Path, redis_port: int, compiled_service: Path) -> Iterator[int]:
    log = (workspace / "service.log").open("w+b")
    process = subprocess.Popen(
        ["node", str(FRAMEWORK / "run-service.js"), str(compiled_service), SERVICE, str(redis_port)],
        stdout=subprocess.PIPE,
        stderr=log,
        env=node_environment(workspace),
    )
    try:
        wait_for_ready(process, log)
        yield redis_port
    finally:
        stop(process)
        log.close()


def wait_for_ready(process: subprocess.Popen[bytes], log: Any) -> None:
    assert process.stdout is not None
    os.set_blocking(process.stdout.fileno(), False)
    deadline = time.monotonic() + STARTUP_SECONDS
    seen = b""
    while time.monotonic() < deadline and process.poll() is None:
        seen += process.stdout.read() or b""
        if b"ready" in seen:
            return
        time.sleep(0.05)
    log.seek(0)
    raise RuntimeError(f"the scaffolded service did not start:\n{log.read().decode(errors='replace')}")


def run_node(workspace: Path, script: str, *args: str) -> Any:
    finished = subprocess.run(
        ["node", str(FRAMEWORK / script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=node_environment(workspace),
    )
    assert finished.returncode == 0, f"{script} failed:\n{finished.stderr}"
    return json.loads(finished.stdout)


# --- §1: the running service describes itself as asked, and answers calls -----------------


def expected_signature(method: dict[str, Any]) -> dict[str, Any]:
    return {
        "arguments": [
            (param["name"], param["type"], param.get("optional", False)) for param in method.get("params", [])
        ],
        "returns": f"Promise<{method['returns']}>",
    }


def published_signature(description: dict[str, Any]) -> dict[str, Any]:
    return {
        "arguments": [(arg["name"], arg["tsType"], arg["isOptional"]) for arg in description["arguments"]],
        "returns": description["returns"]["tsType"],
    }


def test_running_service_describes_every_scaffolded_method_as_asked(
    workspace: Path, running_service: int
) -> None:
    description = run_node(workspace, "describe-service.js", SERVICE, str(running_service))

    assert description["service"]["name"] == SERVICE
    published = description["service"]["methods"]
    assert set(published) - {"describe"} == {method["name"] for method in METHODS}
    for method in METHODS:
        assert published_signature(published[method["name"]]) == expected_signature(method), method["name"]


def test_running_service_publishes_no_type_as_any(workspace: Path, running_service: int) -> None:
    description = run_node(workspace, "describe-service.js", SERVICE, str(running_service))

    for name, method in description["service"]["methods"].items():
        types = [method["returns"]["tsType"], *(arg["tsType"] for arg in method["arguments"])]
        assert not [t for t in types if re.search(r"\bany\b", t) or not t.strip()], (name, types)
    assert description["service"]["methods"]["addNote"]["description"] == METHODS[0]["description"]


def test_calls_through_a_generated_client_reach_the_scaffolded_methods(
    workspace: Path, running_service: int
) -> None:
    calls = [
        ["addNote", ["groceries", ["home"], True]],
        ["findNotes", ["milk"]],
        ["countNotes", []],
        ["archiveNotes", [[1, 2]]],
        [IMPLEMENTED, [7]],
    ]

    answer = run_node(workspace, "call-service.js", SERVICE, str(running_service), json.dumps(calls))

    assert answer["client"] == "NotesClient"
    results = {result["method"]: result for result in answer["results"]}
    for method in ("addNote", "findNotes", "countNotes", "archiveNotes"):
        assert results[method].get("error", {}).get("message") == not_implemented_message(method)
    assert results[IMPLEMENTED] == {"method": IMPLEMENTED, "value": None}


# --- §2: generate_client hands back the file the framework's generator wrote ---------------


def test_generate_client_returns_the_client_the_framework_generated(
    workspace: Path, running_service: int
) -> None:
    home = workspace / "generate-home"
    home.mkdir()
    env = server_environment(
        home, with_imq=False, TMPDIR=str(workspace / "tmp"), IMQ_SHIM_REDIS_PORT=str(running_service)
    )
    env["PATH"] = os.pathsep.join([str(FRAMEWORK / "bin"), env["PATH"]])
    connection = stdio_connection([], env, home, "legacy")
    try:
        result = connection.call("generate_client", {"service": SERVICE, "path": "clients"}, timeout=120)
    finally:
        connection.close()

    assert not result.is_error, result.content
    generated = result.structured_content
    written = home / "clients" / f"{SERVICE}.ts"
    assert generated["path"] == str(written)
    assert generated["content"] == written.read_text(encoding="utf-8")
    assert (generated["namespace"], generated["client"]) == ("notesService", "NotesClient")
    assert "export namespace notesService {" in generated["content"]
    assert "public async addNote(title: string, tags?: string[], pinned?: boolean" in generated["content"]
    assert "public async countNotes(imqMetadata?: IMQMetadata" in generated["content"]

"""Scaffolds run on the real @imqueue 3.x framework, as scaffolded (issues 4 and 18).

scaffold_service is called through the SDK's client on the real stdio server. Its files are
written as returned - its package.json ("type": "module"), its tsconfig (nodenext, standard
decorators) and its bootstrap (the broker from IMQ_REDIS, as the docs' tutorial has it) - and
nothing is replaced: the project's node_modules is the 3.x runtime .ci/install-imq.sh built from
../shared/vendor (@imqueue/rpc 3.7.2 on @imqueue/core 3.4.2, tests/imq_real.py), tsc compiles it
and Node 22 runs it against a redis-server started here on a free loopback port. The ES-module
glue in tests/framework reads the running service's self-description and calls it through the
client the framework's own generator builds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from imq_real import INSTALL, NODE, NODE_BIN, SERVICE_RUNTIME, TSC

from benchmarks.stack import stop_group
from conftest import REPO, require_external, server_environment, stdio_connection

pytestmark = pytest.mark.slow  # a long end-to-end run: CI, or IMQUEUE_MCP_SLOW=1 (conftest.py)

GLUE = REPO / "tests" / "framework"
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
# The one method whose body the test writes, as a user would: a void method that returns. The
# user also caches it with @cache(), as the docs' caching section shows.
IMPLEMENTED = "touchNote"


def not_implemented_message(method: str) -> str:
    return f"{SERVICE}.{method}() is not implemented yet"


# --- externals: Redis and the Node packages ----------------------------------------------


@pytest.fixture(scope="module")
def framework_installed() -> None:
    require_external(
        shutil.which("redis-server") is not None, "redis-server", "apt-get install -y redis-server"
    )
    rpc = SERVICE_RUNTIME / "@imqueue" / "rpc" / "package.json"
    version = json.loads(rpc.read_text())["version"] if rpc.is_file() else None
    require_external(NODE.is_file() and TSC.is_file() and version == "3.7.2", "@imqueue/rpc 3.7.2", INSTALL)


@pytest.fixture(scope="module")
def workspace(framework_installed: None) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="imq-framework-"))
    (root / "tmp").mkdir()  # TMPDIR of every node process: @imqueue keeps pid files there
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def node_environment(workspace: Path, **extra: str) -> dict[str, str]:
    """Node 22 first on PATH (3.x needs >= 22.12); @imqueue keeps pid files in TMPDIR."""
    path = os.pathsep.join([str(NODE_BIN), os.environ.get("PATH", "")])
    return {**os.environ, "PATH": path, "TMPDIR": str(workspace / "tmp"), **extra}


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
    """The scaffold's files written as returned, compiled by tsc with its own tsconfig."""
    project = workspace / "service"
    for file in scaffold["files"]:
        destination = project / file["path"]
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(file["content"], encoding="utf-8")
    implement_void_method(project / "src" / f"{SERVICE}.ts", IMPLEMENTED)
    (project / "node_modules").symlink_to(SERVICE_RUNTIME, target_is_directory=True)
    for glue in GLUE.glob("*.mjs"):  # beside the project's node_modules, so imports resolve there
        shutil.copy(glue, project / glue.name)
    compiled = subprocess.run(
        [str(NODE), str(TSC), "-p", str(project)], capture_output=True, text=True, timeout=120
    )
    assert compiled.returncode == 0, f"tsc failed on the scaffold:\n{compiled.stdout}{compiled.stderr}"
    return project


def implement_void_method(source: Path, method: str) -> None:
    """The method's body written, and @cache() put on it (imported beside expose) as the docs do."""
    text = source.read_text(encoding="utf-8")
    placeholder = f"throw new Error('{not_implemented_message(method)}');"
    exposed = f"@expose()\n    public async {method}("
    assert placeholder in text and exposed in text, f"the scaffold's {method}() changed"
    assert "import { IMQService, expose } from '@imqueue/rpc';" in text, "the scaffold's import changed"
    text = text.replace(placeholder, "return;").replace(exposed, f"@cache()\n    {exposed}")
    text = text.replace("import { IMQService, expose }", "import { IMQService, cache, expose }")
    source.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def running_service(workspace: Path, redis_port: int, compiled_service: Path) -> Iterator[str]:
    """The scaffold's own compiled bootstrap, `npm start` as its package.json says, on IMQ_REDIS."""
    broker = f"127.0.0.1:{redis_port}"
    log_path = workspace / "service.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            ["npm", "start"],
            cwd=compiled_service,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=node_environment(workspace, IMQ_REDIS=broker),
            start_new_session=True,  # npm's child node gets the stop signal too
        )
        try:
            wait_for_ready(process, log_path)
            yield broker
        finally:
            stop_group(process)


def wait_for_ready(process: subprocess.Popen[bytes], log_path: Path) -> None:
    """The service has started once its reader channel is connected to the broker."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline and process.poll() is None:
        if f"{SERVICE}: reader channel connected".encode() in log_path.read_bytes():
            return
        time.sleep(0.1)
    log = log_path.read_text(errors="replace")
    raise RuntimeError(f"the scaffolded service did not start (exit {process.poll()}):\n{log[-4000:]}")


def run_node(workspace: Path, broker: str, script: str, *args: str) -> Any:
    finished = subprocess.run(
        [str(NODE), script, *args],
        cwd=workspace / "service",
        capture_output=True,
        text=True,
        timeout=60,
        env=node_environment(workspace, IMQ_REDIS=broker),
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
    workspace: Path, running_service: str
) -> None:
    description = run_node(workspace, running_service, "describe-service.mjs", SERVICE)

    assert description["service"]["name"] == SERVICE
    published = description["service"]["methods"]
    assert set(published) - {"describe"} == {method["name"] for method in METHODS}
    for method in METHODS:
        assert published_signature(published[method["name"]]) == expected_signature(method), method["name"]


def test_running_service_publishes_no_type_as_any(workspace: Path, running_service: str) -> None:
    description = run_node(workspace, running_service, "describe-service.mjs", SERVICE)

    published = description["service"]["methods"]
    for name in (method["name"] for method in METHODS):  # 3.x's own describe() returns `any`
        types = [
            published[name]["returns"]["tsType"],
            *(arg["tsType"] for arg in published[name]["arguments"]),
        ]
        assert not [t for t in types if re.search(r"\bany\b", t) or not t.strip()], (name, types)
    assert description["service"]["methods"]["addNote"]["description"] == METHODS[0]["description"]


def test_calls_through_a_generated_client_reach_the_scaffolded_methods(
    workspace: Path, running_service: str
) -> None:
    calls = [
        ["addNote", ["groceries", ["home"], True]],
        ["findNotes", ["milk"]],
        ["countNotes", []],
        ["archiveNotes", [[1, 2]]],
        [IMPLEMENTED, [7]],
    ]

    answer = run_node(workspace, running_service, "call-service.mjs", SERVICE, json.dumps(calls))

    assert answer["client"] == "NotesClient"
    results = {result["method"]: result for result in answer["results"]}
    for method in ("addNote", "findNotes", "countNotes", "archiveNotes"):
        assert results[method].get("error", {}).get("message") == not_implemented_message(method)
    assert results[IMPLEMENTED] == {"method": IMPLEMENTED, "value": None}


def test_a_cached_method_keeps_its_cache_on_the_services_own_broker(
    workspace: Path, running_service: str
) -> None:
    """@cache() reuses the service's connection only when the service was given one broker as
    host and port: as a cluster of one it opened its own at localhost:6379 (refused here, or an
    unrelated Redis), and the calls after the first hung until their timeout."""
    calls = [[IMPLEMENTED, [8]], [IMPLEMENTED, [8]]]
    answer = run_node(workspace, running_service, "call-service.mjs", SERVICE, json.dumps(calls))
    assert [result.get("value", result.get("error")) for result in answer["results"]] == [None, None]
    log = (workspace / "service.log").read_text(errors="replace")
    assert "Re-using given connection for cache." in log and ":6379" not in log


# --- generate_client: the framework's generator, on a broker imq cannot reach ---------------


def test_generate_client_on_another_broker_returns_the_client_the_framework_generated(
    workspace: Path, compiled_service: Path, running_service: str
) -> None:
    """imq's own generator reaches only localhost:6379; on the test's broker generate_client runs
    the same generator through the project's installed @imqueue/rpc 3.7.2, and says so."""
    home = workspace / "generate-home"
    home.mkdir()
    env = server_environment(home, TMPDIR=str(workspace / "tmp"))
    env["PATH"] = os.pathsep.join([str(NODE_BIN), env["PATH"]])
    connection = stdio_connection([], env, compiled_service, "legacy")
    try:
        arguments = {"service": SERVICE, "path": "src/clients", "redis": running_service}
        result = connection.call("generate_client", arguments, timeout=120)
    finally:
        connection.close()

    assert not result.is_error, result.content
    generated = result.structured_content
    written = compiled_service / "src" / "clients" / f"{SERVICE}.ts"
    assert generated["path"] == str(written)
    assert generated["content"] == written.read_text(encoding="utf-8")
    assert (generated["namespace"], generated["client"]) == ("notesService", "NotesClient")
    assert "public async addNote(title: string, tags?: string[], pinned?: boolean" in generated["content"]
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    assert running_service in text and "@imqueue/rpc 3.7.2" in text
    recompiled = subprocess.run(  # the generated client is part of the project now: it compiles with it
        [str(NODE), str(TSC), "-p", str(compiled_service)], capture_output=True, text=True, timeout=120
    )
    assert recompiled.returncode == 0, f"tsc failed with the generated client:\n{recompiled.stdout}"

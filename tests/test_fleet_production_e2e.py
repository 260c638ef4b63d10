"""fleet's production start on the real stack, through the SDK's client on the real stdio server.

Two services scaffolded by scaffold_service (files written as returned, one method given a body)
on @imqueue 3.x (the runtime .ci/install-imq.sh built, tests/imq_real.py), a redis-server on a
free NON-default loopback port that the services reach through IMQ_REDIS (given by fleet's
redis argument: the server itself has no IMQ_REDIS), and the real imq 5.2.2 for status, stop
and logs. One story, in order: notes starts in production and answers a call through the
client the framework generates; billing starts in dev mode by imq ctl, its dev script a nodemon
watching src/ as in imq's template; a file written into each src/ restarts billing (a second
ready line: the check sees a restart) and nothing of notes (every process of its group stays,
one ready line, the call still answered); status shows both running, each with its mode; a
second production start of notes starts nothing; logs dump shows notes' output; stop ends both
groups and nothing of them is left.
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
from imq_real import NODE, SERVICE_RUNTIME, process_group, real_imq_environment, require_real_imq

from conftest import REPO, McpConnection, require_external, stdio_connection

pytestmark = pytest.mark.slow  # a long end-to-end run: CI, or IMQUEUE_MCP_SLOW=1 (conftest.py)

GLUE = REPO / "tests" / "framework"
READY = "reader channel connected"
STOP_SECONDS = 20.0
METHODS: list[dict[str, Any]] = [{"name": "ping", "returns": "string"}]


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    require_external(
        shutil.which("redis-server") is not None, "redis-server", "apt-get install -y redis-server"
    )
    require_real_imq()
    root = Path(tempfile.mkdtemp(prefix="imq-production-"))
    (root / "tmp").mkdir()  # TMPDIR of the services: @imqueue keeps pid files there
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def scaffold(connection: McpConnection, folder: Path, name: str) -> str:
    """scaffold_service's files written into folder as returned; ping() given a body. Its class name."""
    result = connection.call("scaffold_service", {"name": name, "methods": METHODS})
    assert not result.is_error, text_of(result)
    for file in result.structured_content["files"]:
        destination = folder / file["path"]
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(file["content"], encoding="utf-8")
    (service_file,) = (folder / "src").glob("*Service.ts")
    service = service_file.stem
    source = service_file.read_text(encoding="utf-8")
    placeholder = f"throw new Error('{service}.ping() is not implemented yet');"
    assert placeholder in source, "the scaffold's body of ping() changed"
    service_file.write_text(source.replace(placeholder, "return 'pong';"), encoding="utf-8")
    (folder / "node_modules").symlink_to(SERVICE_RUNTIME, target_is_directory=True)  # `npm install`
    for glue in GLUE.glob("*.mjs"):  # beside its node_modules, so the imports resolve there
        shutil.copy(glue, folder / glue.name)
    return service


def call_ping(folder: Path, service: str, env: dict[str, str]) -> Any:
    finished = subprocess.run(
        [str(NODE), "call-service.mjs", service, json.dumps([["ping", []]])],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert finished.returncode == 0, f"call-service.mjs failed:\n{finished.stderr}"
    return json.loads(finished.stdout)["results"]


def watch_like_the_template(folder: Path) -> None:
    """`npm run dev` = nodemon watching src/ (.ts), as imq's default template has it."""
    manifest = json.loads((folder / "package.json").read_text())
    manifest["scripts"]["dev"] = "nodemon"
    (folder / "package.json").write_text(json.dumps(manifest, indent=2))
    nodemon = {"watch": ["src"], "ext": "ts", "exec": manifest["scripts"]["build"] + " && node dist/index.js"}
    (folder / "nodemon.json").write_text(json.dumps(nodemon))


def ready_lines(log: Path) -> int:
    return log.read_text(errors="replace").count(READY) if log.is_file() else 0


def wait_for(predicate: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.3)
    return bool(predicate())


def test_production_start_answers_calls_survives_src_writes_and_is_stopped_with_the_dev_fleet(
    workspace: Path, redis_port: int
) -> None:
    broker = f"127.0.0.1:{redis_port}"
    home = workspace / "home"
    env = real_imq_environment(home, TMPDIR=str(workspace / "tmp"))  # no IMQ_REDIS: fleet's redis gives it
    var = home / "imq" / ".imq" / "var"  # IMQ_CLI_HOME is home/imq (conftest.server_environment)
    fleet_root = workspace / "fleet"
    connection = stdio_connection([], env, workspace, "legacy")
    groups: list[int] = []
    try:
        notes_service = scaffold(connection, fleet_root / "notes", "notes")
        scaffold(connection, fleet_root / "billing", "billing")

        # production start: built, detached, ready, and tracked in imq's own .pids
        started = connection.call(
            "fleet",
            {
                "action": "start",
                "mode": "production",
                "path": "fleet",
                "services": ["notes"],
                "redis": broker,
            },
            timeout=300,
        )
        assert not started.is_error, text_of(started)
        assert "ready (its log says 'reader channel connected')" in text_of(started)
        assert (fleet_root / "notes" / "dist" / "index.js").is_file()  # npm run build ran tsc
        notes_pid = int(re.findall(r"^notes:(\d+)$", (var / ".pids").read_text(), re.M)[0])
        groups.append(notes_pid)
        assert f"pid {notes_pid}" in text_of(started)

        # a call answered through the client the framework generates from the running service
        node_env = {**os.environ, **env, "IMQ_REDIS": broker}
        assert call_ping(fleet_root / "notes", notes_service, node_env) == [
            {"method": "ping", "value": "pong"}
        ]

        # billing in dev mode by imq ctl start, its dev script a nodemon on src/ as in imq's template
        watch_like_the_template(fleet_root / "billing")
        dev = connection.call(
            "fleet",
            {"action": "start", "path": "fleet", "services": ["billing"], "redis": broker},
            timeout=300,
        )
        assert not dev.is_error, text_of(dev)
        assert "nodemon watches src and RESTARTS the service" in text_of(dev)
        billing_pid = int(re.findall(r"^billing:(\d+)$", (var / ".pids").read_text(), re.M)[0])
        groups.append(billing_pid)
        assert wait_for(lambda: ready_lines(var / "billing.log") == 1, 90)

        # a file written into src/ (as generate_client writes one): the dev service restarts, the
        # production one does not (every process of its group stays, no second ready line)
        processes = process_group(notes_pid)
        assert len(processes) >= 2, processes  # npm and the node it started
        for folder in (fleet_root / "notes", fleet_root / "billing"):
            (folder / "src" / "clients").mkdir()
            (folder / "src" / "clients" / "Other.ts").write_text("export const other = 1;\n")
        assert wait_for(lambda: ready_lines(var / "billing.log") == 2, 90), "the dev service did not restart"
        assert process_group(notes_pid) == processes
        assert ready_lines(var / "notes.log") == 1
        assert call_ping(fleet_root / "notes", notes_service, node_env)[0]["value"] == "pong"

        status = text_of(connection.call("fleet", {"action": "status"}))
        assert f"notes: running (pid {notes_pid})" in status  # real imq's own line
        assert f"billing: running (pid {billing_pid})" in status
        assert f"- notes: running (pid {notes_pid}), mode production (`npm start`" in status
        assert f"IMQ_REDIS={broker})" in status
        assert f"- billing: running (pid {billing_pid}), mode dev (imq ctl start" in status

        # a second production start starts nothing; neither does imq ctl start
        again = connection.call(
            "fleet", {"action": "start", "mode": "production", "path": "fleet", "services": ["notes"]}
        )
        assert not again.is_error, text_of(again)
        assert f"already running in production (pid {notes_pid}" in text_of(again)
        assert process_group(notes_pid) == processes

        dumped = connection.call("logs", {"action": "dump", "services": ["notes"]})
        assert f"{notes_service}: {READY}" in text_of(dumped)
    finally:
        stopped = connection.call("fleet", {"action": "stop", "path": "fleet"}, timeout=120)
        connection.close()
    assert "Stopped 2 service(s)." in text_of(stopped), text_of(stopped)
    for group in groups:
        assert wait_for(lambda: not process_group(group), STOP_SECONDS), group  # noqa: B023 (waited here)
    assert (var / ".pids").read_text() == ""

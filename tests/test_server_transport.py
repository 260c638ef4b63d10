"""The stdio wire itself (raw bytes, no SDK client) and running offline from a snapshot."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from imq_real import real_imq_environment, require_real_imq

from conftest import (
    LOCAL_TOOLS,
    REPO,
    WAIT_SECONDS,
    built_snapshot,
    free_port,
    origin_args,
    server_environment,
    stdio_connection,
)


class RawStdio:
    """`python -m server` on pipes: send lines, wait (bounded) for the answer with a given id."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "imqueue_mcp.server", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: list[bytes] = []
        self.stderr = b""
        self._answers: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read_stdout, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)
            self._answers.put(line)

    def send(self, message: dict[str, Any] | str) -> None:
        text = message if isinstance(message, str) else json.dumps(message)
        assert self.process.stdin is not None
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()

    def next_frame(self) -> dict[str, Any]:
        return dict(json.loads(self._answers.get(timeout=WAIT_SECONDS)))

    def answer(self, request_id: Any) -> dict[str, Any]:
        while True:
            frame = self.next_frame()
            if frame.get("id") == request_id and ("result" in frame or "error" in frame):
                return dict(frame)

    def request(self, request_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.send(
            {"jsonrpc": "2.0", "id": request_id, "method": method, **({"params": params} if params else {})}
        )
        return self.answer(request_id)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(WAIT_SECONDS)
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()


def initialize(raw: RawStdio) -> dict[str, Any]:
    answer = raw.request(
        1,
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    )
    raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return answer


def test_every_stdout_line_is_json_rpc_and_malformed_lines_get_errors(tmp_path: Path) -> None:
    require_real_imq()  # cli_status runs it: imq's own output must not reach stdout either
    dead = f"http://127.0.0.1:{free_port()}"  # a failing refresh makes the server log: to stderr only
    env = real_imq_environment(tmp_path)
    raw = RawStdio(origin_args({"imqueue.org": dead, "imqueue.com": dead}), env, tmp_path)
    try:
        raw.send("this is not json")
        parse_error = raw.next_frame()
        assert parse_error == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32700, "message": "Parse error"},
        }
        info = initialize(raw)["result"]
        assert info["serverInfo"]["name"] == "imqueue" and info["capabilities"]["logging"] == {}
        raw.send('{"jsonrpc": "2.0", "id": 5, "method": ')
        raw.send('{"jsonrpc": "1.0", "id": 6}')
        assert raw.answer(6)["error"]["code"] == -32600
        tools = raw.request(2, "tools/list")["result"]["tools"]
        assert len(tools) == len(LOCAL_TOOLS)
        searched = raw.request(3, "tools/call", {"name": "search_docs", "arguments": {"query": "expose"}})
        assert (
            searched["result"]["isError"] is True
            and "imq-build-index" in searched["result"]["content"][0]["text"]
        )
        imq = raw.request(4, "tools/call", {"name": "cli_status", "arguments": {}})
        assert "5.2.2" in imq["result"]["content"][0]["text"]
        assert raw.request(7, "ping") == {"jsonrpc": "2.0", "id": 7, "result": {}}
    finally:
        raw.close()
    assert raw.lines and all(isinstance(json.loads(line), dict) for line in raw.lines)
    assert b"live docs refresh failed" in raw.stderr


@pytest.fixture(scope="module")
def snapshot_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_snapshot(tmp_path_factory.mktemp("snapshot"), pages=False)


def test_offline_serves_search_from_the_snapshot_and_labels_it(
    snapshot_file: Path, site_origins: dict[str, str], tmp_path: Path
) -> None:
    args = ["--offline", "--snapshot", str(snapshot_file), *origin_args(site_origins)]
    connection = stdio_connection(args, server_environment(tmp_path), tmp_path, "legacy")
    try:
        found = connection.call("search_docs", {"query": "expose a method"})
        assert not found.is_error and found.structured_content["count"] > 0
        assert found.structured_content["corpus"]["source"] == "snapshot"
        assert str(snapshot_file) in found.content[0].text
        page = connection.call("get_doc", {"url": "https://imqueue.org/intro/"})
        assert page.is_error and "--offline" in page.content[0].text
        # package facts come from the snapshot's status.json, labelled as such (issue 13 §5)
        listed = connection.call("list_packages").structured_content
        assert "factsUnavailable" not in listed and listed["stored"]["from"] == str(snapshot_file)
        status = connection.call("package_status")
        assert not status.is_error and status.structured_content["stored"]["source"] == "snapshot"
    finally:
        connection.close()


def test_offline_without_a_snapshot_says_how_to_build_one(tmp_path: Path) -> None:
    env = server_environment(tmp_path, IMQUEUE_MCP_OFFLINE="1")
    connection = stdio_connection([], env, tmp_path, "legacy")
    try:
        result = connection.call("search_docs", {"query": "expose"})
        text = result.content[0].text
        assert result.is_error and "imq-build-index" in text and "--offline" in text
        assert str(tmp_path / "cache" / "imqueue-mcp") in text  # the default path, under XDG_CACHE_HOME
    finally:
        connection.close()


def test_python_dash_m_server_help_goes_to_stdout_and_exits_0() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "imqueue_mcp.server", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
    )
    assert completed.returncode == 0 and "--origin" in completed.stdout and "--offline" in completed.stdout

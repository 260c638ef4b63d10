"""deploy/compose/haproxy.cfg's answers of its own, on a real HAProxy in front of real instances.

HAProxy runs on the shipped file as benchmarks/fleet.py loads it (`balancer_config`: loopback binds
and `server` lines), in front of `imqueue-mcp --http --offline` instances started as fleet.py
starts them. What is checked is what an MCP client and an outsider meet through it:

- the failures of the fleet that HAProxy answers itself are JSON-RPC error objects, as every refusal
  of the server's own is, not HAProxy's HTML pages: 502 when the instance holding a request dies
  with the request half sent (`retry-on` cannot resend it), 503 when no instance is UP, 504 when
  the instance does not answer within `timeout server`;
- the public frontend does not serve the operator's paths (/metrics, /readyz, /healthz; they
  answer any Host on the instances), %-escaped or not, and still serves MCP;
- the operator's frontend (published on the host's loopback only) serves them, and /stats.
"""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from benchmarks import fleet
from conftest import free_port, offline_args, require_external

PUBLIC_HOST = "mcp.example.org"  # a name no instance allows: the refusals come before the Host lock
OPERATOR_PATHS = ("/metrics", "/readyz", "/healthz")


def haproxy() -> str:
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    require_external(found is not None, "HAProxy", "bash .ci/install-fleet.sh")
    assert found is not None
    return found


def json_rpc_error(
    response: httpx.Response | tuple[int, dict[str, str], bytes], status: int
) -> dict[str, Any]:
    """The JSON-RPC error object of an answer that must be `status`, application/json."""
    if isinstance(response, httpx.Response):
        code, headers, body = response.status_code, dict(response.headers), response.content
    else:
        code, headers, body = response
    assert code == status, (code, body[:300])
    assert headers.get("content-type") == "application/json", headers
    message = json.loads(body)
    assert message["jsonrpc"] == "2.0" and message["id"] is None, message
    assert set(message) == {"jsonrpc", "id", "error"}
    assert isinstance(message["error"]["code"], int) and message["error"]["message"], message
    return dict(message["error"])


class Started:
    """Instances (fleet.Instance) and HAProxy on the shipped config (fleet.Balancer) over loopback."""

    def __init__(self, folder: Path, count: int, *extra: str) -> None:
        args = [*offline_args(folder / "snapshot"), "--drain-seconds", "0", *extra]
        (folder / "home").mkdir(parents=True, exist_ok=True)
        self.instances = [fleet.Instance(free_port(), args, folder / "home") for _ in range(count)]
        self.balancer: fleet.Balancer | None = None
        self.folder = folder

    def start(self) -> fleet.Balancer:
        for instance in self.instances:
            instance.start()
        for instance in self.instances:
            instance.wait_ready()
        self.balancer = fleet.Balancer([instance.port for instance in self.instances], self.folder)
        for number in range(1, len(self.instances) + 1):
            self.balancer.wait_state(f"mcp{number}", "UP")
        return self.balancer

    def close(self) -> None:
        if self.balancer is not None:
            self.balancer.close()
        for instance in self.instances:
            if instance.process is not None and instance.process.poll() is None:
                instance.process.send_signal(signal.SIGCONT)  # one the test froze
            instance.close()


@pytest.fixture
def started(tmp_path: Path) -> Iterator[Started]:
    haproxy()
    made = Started(tmp_path, 1)
    try:
        yield made
    finally:
        made.close()


def mcp_request(port: int) -> tuple[bytes, bytes]:
    """An MCP call through the balancer as raw HTTP/1.1: its head and its body."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "search_docs", "arguments": {"query": "expose decorator"}},
        }
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    return head, body


def read_answer(sock: socket.socket, timeout: float = 20) -> tuple[int, dict[str, str], bytes]:
    sock.settimeout(timeout)
    data = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            break
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines and lines[0].startswith("HTTP/1.1 "), data[:300]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


def test_every_error_the_shipped_config_answers_itself_is_a_json_rpc_error() -> None:
    """The `http-error` and `deny` bodies parse, and name what happened; 5xx may be retried."""
    config = fleet.HAPROXY_CFG.read_text()
    answer = (
        r"^\s*(?:http-error status|http-request deny deny_status) (\d{3}) content-type (\S+) string '([^']*)'"
    )
    answers = re.findall(answer, config, re.MULTILINE)
    statuses = {status for status, _type, _body in answers}
    assert {"404", "500", "502", "503", "504"} <= statuses, statuses
    for status, content_type, body in answers:
        assert content_type == "application/json"
        error = json.loads(body)["error"]
        assert error["code"] == (-32603 if status.startswith("5") else -32600)
        assert error["message"].split(":")[0] in (
            "Not Found",
            "Internal error in the load balancer",
            "Bad Gateway",
            "Service Unavailable",
            "Gateway Timeout",
        )
        if status.startswith("5"):
            assert "Retry" in error["message"], error


def test_the_public_frontend_serves_mcp_but_not_the_operator_paths_which_the_operator_port_serves(
    started: Started,
) -> None:
    balancer = started.start()
    public = f"http://127.0.0.1:{balancer.port}"
    for path in (*OPERATOR_PATHS, "/%6detrics", "/%72eadyz", "/health%7A"):
        for method in ("GET", "HEAD", "POST"):
            refused = httpx.request(method, public + path, headers={"Host": PUBLIC_HOST}, timeout=10)
            assert refused.status_code == 404, (method, path, refused.text[:300])
            if method != "HEAD":
                error = json_rpc_error(refused, 404)
                assert "/metrics" in error["message"] and "/mcp" in error["message"]
    # the instance's own /metrics is not a page of the public endpoint, whatever it is called
    assert "imqueue_mcp_" not in httpx.get(public + "/metrics/", timeout=10, follow_redirects=True).text
    # MCP itself still flows through it
    head, body = mcp_request(balancer.port)
    with socket.create_connection(("127.0.0.1", balancer.port)) as sock:
        sock.sendall(head + body)
        status, headers, answer = read_answer(sock)
    assert status == 200, answer[:300]
    assert b'"id":7' in answer and b'"result"' in answer

    operator = f"http://127.0.0.1:{balancer.operator_port}"
    metrics = httpx.get(operator + "/metrics", timeout=10)
    assert metrics.status_code == 200 and "imqueue_mcp_tool_calls_total" in metrics.text
    assert httpx.get(operator + "/readyz", timeout=10).json()["status"] == "ready"
    assert httpx.get(operator + "/healthz", timeout=10).text == "ok\n"
    stats = httpx.get(operator + "/stats;csv", timeout=10)
    assert stats.status_code == 200 and "imqueue_mcp,mcp1," in stats.text


def test_an_instance_dying_mid_request_and_no_instance_up_are_json_rpc_errors(started: Started) -> None:
    balancer = started.start()
    (instance,) = started.instances
    assert instance.process is not None
    head, body = mcp_request(balancer.port)
    # 502: the instance holding the request dies with the body half sent, so it cannot be retried
    with socket.create_connection(("127.0.0.1", balancer.port)) as sock:
        sock.sendall(head + body[:20])
        time.sleep(0.5)  # HAProxy has connected to the instance and forwarded what it had
        instance.process.kill()
        instance.process.wait(10)
        time.sleep(0.3)
        try:
            sock.sendall(body[20:])
        except OSError:
            pass
        bad_gateway = read_answer(sock)
    assert "Retry" in json_rpc_error(bad_gateway, 502)["message"]
    # 503: no instance UP
    balancer.wait_state("mcp1", "DOWN")
    with socket.create_connection(("127.0.0.1", balancer.port)) as sock:
        sock.sendall(head + body)
        unavailable = read_answer(sock)
    assert "Retry" in json_rpc_error(unavailable, 503)["message"]
    assert unavailable[1].get("retry-after") == "2"


def test_an_instance_that_does_not_answer_in_time_is_a_json_rpc_504(
    started: Started, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped config, its `timeout server` shortened from 60 s so the test does not wait it."""
    shipped = fleet.HAPROXY_CFG.read_text()
    assert "    timeout server 60s\n" in shipped
    edited = tmp_path / "shipped-timeout-server-2s.cfg"
    edited.write_text(shipped.replace("    timeout server 60s\n", "    timeout server 2s\n"))
    monkeypatch.setattr(fleet, "HAPROXY_CFG", edited)  # what fleet.Balancer loads
    balancer = started.start()
    (instance,) = started.instances
    assert instance.process is not None
    head, body = mcp_request(balancer.port)
    with socket.create_connection(("127.0.0.1", balancer.port)) as sock:
        instance.process.send_signal(signal.SIGSTOP)  # accepts nothing more and answers nothing
        try:
            sock.sendall(head + body)
            timed_out = read_answer(sock)
        finally:
            instance.process.send_signal(signal.SIGCONT)
    assert "Retry" in json_rpc_error(timed_out, 504)["message"]


def test_the_loopback_config_binds_the_public_and_the_operator_frontend_apart(tmp_path: Path) -> None:
    config = fleet.balancer_config(fleet.HAPROXY_CFG.read_text(), 18080, [18001], tmp_path / "s.sock", 18404)
    sections = re.split(r"^(?=\S)", config, flags=re.MULTILINE)
    (public,) = [section for section in sections if section.startswith("frontend mcp\n")]
    (operator,) = [section for section in sections if section.startswith("frontend operator\n")]
    assert "    bind 127.0.0.1:18080\n" in public and "    bind 127.0.0.1:18404\n" in operator
    assert "/metrics" in public and "http-request deny" in public
    (tmp_path / "haproxy.cfg").write_text(config)
    done = subprocess.run(
        [haproxy(), "-c", "-f", str(tmp_path / "haproxy.cfg")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


BURST = 300


def test_a_burst_past_an_instances_connection_cap_waits_in_the_balancers_queue_and_every_call_is_answered(
    tmp_path: Path,
) -> None:
    """The shipped config holds each instance to `maxconn` requests at a time; a burst of BURST
    calls on one instance capped at 40 connections is queued in HAProxy, not refused."""
    import asyncio

    haproxy()
    made = Started(tmp_path, 1, "--max-connections", "40")
    try:
        balancer = made.start()
        url = f"http://127.0.0.1:{balancer.port}/mcp"
        head, body = mcp_request(balancer.port)
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        headers["MCP-Protocol-Version"] = "2025-11-25"

        async def burst() -> list[int]:
            limits = httpx.Limits(max_connections=BURST, max_keepalive_connections=0)
            async with httpx.AsyncClient(timeout=60, limits=limits) as client:
                answers = await asyncio.gather(
                    *(client.post(url, content=body, headers=headers) for _ in range(BURST)),
                    return_exceptions=True,
                )
            return [answer.status_code if isinstance(answer, httpx.Response) else -1 for answer in answers]

        statuses = asyncio.run(burst())
        stats = httpx.get(f"http://127.0.0.1:{balancer.operator_port}/stats;csv", timeout=10).text
    finally:
        made.close()
    assert statuses.count(200) == BURST, sorted(set(statuses))
    columns = next(line.lstrip("# ").split(",") for line in stats.splitlines() if line.startswith("# "))
    rows = {
        line.split(",")[1]: line.split(",") for line in stats.splitlines() if line.startswith("imqueue_mcp,")
    }
    assert int(rows["BACKEND"][columns.index("qmax")]) > 0  # the burst waited in HAProxy's queue
    assert int(rows["mcp1"][columns.index("smax")]) <= 32  # never more at once than maxconn
    assert rows["mcp1"][columns.index("status")].startswith("UP")

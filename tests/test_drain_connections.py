"""The end of a drain as clients on kept-alive connections, and a balancer, see it (issue 26 item 8).

The real `imqueue-mcp --http` (one worker or two) is spoken to over raw sockets, so that what the
client's kernel reports is seen as it is: a complete response, a clean end of the connection
(FIN: recv gives b"") or a reset (ECONNRESET), which an HTTP library would blur into one error.
A balancer (or a client's pool) can send a call again elsewhere when its connection was refused,
or had been closed with a FIN (the server took none of it in); a reset after the call was sent
leaves it unknown whether the call ran.
"""

from __future__ import annotations

import concurrent.futures
import errno
import json
import select
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import HttpServer, built_snapshot, server_environment

DRAIN_SECONDS = 2.0
PROTOCOL = "2025-11-25"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_snapshot(tmp_path_factory.mktemp("drain-connections"))


@dataclass
class Outcome:
    """What one call came to: "answered" (a whole response), "closed" (a clean end of the connection
    before any byte of a response), "refused" (no connection), "reset", "partial" or "silent"."""

    kind: str
    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    detail: str = ""


def request_bytes(port: int, request_id: int, method: str, params: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {PROTOCOL}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def read_response(sock: socket.socket, timeout: float) -> Outcome:
    """One HTTP/1.1 response with a Content-Length, read whole, or what happened instead."""
    sock.settimeout(timeout)
    received = b""
    try:
        while b"\r\n\r\n" not in received:
            chunk = sock.recv(65536)
            if not chunk:
                return Outcome("closed" if not received else "partial", detail=repr(received[:200]))
            received += chunk
        head, _, rest = received.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {
            name.strip().lower(): value.strip() for name, value in (line.split(":", 1) for line in lines[1:])
        }
        length = int(headers["content-length"])
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                return Outcome("partial", detail=f"{len(rest)} of {length} body bytes")
            rest += chunk
    except (ConnectionResetError, BrokenPipeError) as error:
        return Outcome("reset", detail=f"{error!r} after {len(received)} bytes")
    except TimeoutError:
        return Outcome("silent", detail=f"nothing more after {len(received)} bytes in {timeout} s")
    return Outcome("answered", int(lines[0].split()[1]), headers, json.loads(rest[:length]))


def call(sock: socket.socket, port: int, request_id: int, method: str, params: dict[str, Any]) -> Outcome:
    """Send one request without first looking whether the server has closed the connection (as a
    client that reuses a connection the moment it wants to), its headers and its body 50 ms apart
    (as a larger request arrives), then read what comes back."""
    request = request_bytes(port, request_id, method, params)
    head, _, body = request.partition(b"\r\n\r\n")
    try:
        sock.sendall(head + b"\r\n\r\n")
        time.sleep(0.05)
        sock.sendall(body)
    except (ConnectionResetError, BrokenPipeError) as error:
        return Outcome("reset", detail=f"on send: {error!r}")
    return read_response(sock, timeout=30)


def search(sock: socket.socket, port: int, request_id: int) -> Outcome:
    return call(
        sock,
        port,
        request_id,
        "tools/call",
        {"name": "search_docs", "arguments": {"query": "expose a method"}},
    )


def kept_alive(port: int) -> socket.socket:
    """A connection that has done what a client does first (initialize, one call) and stays open."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    initialize = {
        "protocolVersion": PROTOCOL,
        "capabilities": {},
        "clientInfo": {"name": "drain", "version": "1"},
    }
    for outcome in (call(sock, port, 1, "initialize", initialize), search(sock, port, 2)):
        assert outcome.kind == "answered" and outcome.status == 200, outcome
        assert "connection" not in outcome.headers, outcome.headers
    return sock


def end_of(sock: socket.socket) -> str:
    """How the server ends a connection after its last response: "fin" (recv gives b""), "reset",
    or "open" when it has not within 10 s."""
    ready, _, _ = select.select([sock], [], [], 10)
    if not ready:
        return "open"
    try:
        return "fin" if sock.recv(1) == b"" else "data"
    except ConnectionResetError:
        return "reset"


def call_on_kept_alive(
    sock: socket.socket, port: int, at: float, signalled: float
) -> tuple[float, Outcome, str]:
    time.sleep(max(0.0, signalled + at - time.monotonic()))
    outcome = search(sock, port, 3)
    end = end_of(sock) if outcome.kind == "answered" else ""
    sock.close()
    return at, outcome, end


def call_on_new(port: int, at: float, signalled: float) -> tuple[float, Outcome, str]:
    time.sleep(max(0.0, signalled + at - time.monotonic()))
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    except ConnectionRefusedError:
        return at, Outcome("refused"), ""
    except OSError as error:
        if error.errno == errno.ECONNRESET:
            return at, Outcome("reset", detail="on connect"), ""
        raise
    with sock:
        outcome = search(sock, port, 1)
        return at, outcome, end_of(sock) if outcome.kind == "answered" else ""


def call_on_new_sent_later(
    port: int, at: float, sent_at: float, signalled: float
) -> tuple[float, Outcome, str]:
    """A connection opened at `at` whose request comes at `sent_at` (a balancer's, just as the drain ends)."""
    time.sleep(max(0.0, signalled + at - time.monotonic()))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        time.sleep(max(0.0, signalled + sent_at - time.monotonic()))
        outcome = search(sock, port, 1)
        return at, outcome, end_of(sock) if outcome.kind == "answered" else ""


def answered_and_closed(outcome: Outcome, end: str) -> bool:
    """A whole JSON-RPC answer marked `Connection: close`, then a clean end of the connection."""
    return (
        outcome.kind == "answered"
        and outcome.status == 200
        and "result" in outcome.body
        and outcome.headers.get("connection") == "close"
        and end == "fin"
    )


@pytest.mark.slow  # 12-20 s a worker count on 2 shared CPUs
@pytest.mark.parametrize("workers", [1, 2])
def test_calls_on_kept_alive_connections_at_the_end_of_a_drain_are_answered_or_cleanly_refused(
    snapshot: Path, tmp_path: Path, workers: int
) -> None:
    """Keep-alive connections opened before SIGTERM each carry one more call. Inside the drain
    (1-1.6 s; with two workers the supervisor passes SIGTERM on within its 0.5 s poll) it is
    answered with `Connection: close`, and the connection then ends with a FIN. After the drain
    (+0.5 s and +1 s, as the outside suite sent them) it is answered, or it meets the FIN the
    server sent at the drain's end, and its bytes are dropped without a reset. New connections
    after the drain are refused, never taken into a queue and reset; one opened just before the
    drain's end whose request comes just after it is answered."""
    inside, after = (1.0, 1.3, 1.6), (DRAIN_SECONDS + 0.5,) * 4 + (DRAIN_SECONDS + 1.0,) * 2
    server = HttpServer(
        ["--offline", "--snapshot", str(snapshot), "--workers", str(workers)],
        server_environment(tmp_path, IMQUEUE_MCP_DRAIN_SECONDS=str(DRAIN_SECONDS)),
        tmp_path,
    )
    try:
        connections = [kept_alive(server.port) for _ in range(len(inside) + len(after))]
        server.process.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(len(connections) + 5) as pool:
            kept = [
                pool.submit(call_on_kept_alive, sock, server.port, at, signalled)
                for sock, at in zip(connections, inside + after, strict=True)
            ]
            new = [
                pool.submit(call_on_new, server.port, at, signalled)
                for at in (1.0, 1.5, DRAIN_SECONDS + 0.5, DRAIN_SECONDS + 1.0)
            ]
            straddling = pool.submit(
                call_on_new_sent_later, server.port, DRAIN_SECONDS - 0.3, DRAIN_SECONDS + 0.3, signalled
            )
            results = [future.result(60) for future in kept], [future.result(60) for future in new]
            _at, late, late_end = straddling.result(60)
        exit_code = server.process.wait(30)
        logged = server.stderr()  # read before close() closes the log
    finally:
        server.close()
    on_kept, on_new = results
    report = "\n".join(
        f"{what} {at:4.1f} s: {outcome.kind} {outcome.status or ''} "
        f"connection={outcome.headers.get('connection', '-')} end={end or '-'} {outcome.detail}"
        for what, (at, outcome, end) in [
            *(("kept", result) for result in on_kept),
            *(("new", result) for result in on_new),
            ("opened, sent 0.6 s later", (DRAIN_SECONDS - 0.3, late, late_end)),
        ]
    )
    for at, outcome, end in on_kept:
        if at < DRAIN_SECONDS:
            assert answered_and_closed(outcome, end), report
        else:
            assert answered_and_closed(outcome, end) or outcome.kind == "closed", report
    for at, outcome, end in on_new:
        if at < DRAIN_SECONDS:
            assert answered_and_closed(outcome, end), report
        else:
            assert answered_and_closed(outcome, end) or outcome.kind == "refused", report
    # Opened inside the drain, its request sent after it: the worker took the connection, so it answers.
    assert answered_and_closed(late, late_end), report
    assert exit_code == 0, logged

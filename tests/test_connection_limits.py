"""Hosted connections that send nothing, half a request or too many keep their socket no longer
than the limits say (connections.py), and a real client is served all the while.

One real `imqueue-mcp --http --offline` per module with short limits, raw sockets on loopback
for the misbehaving clients, the SDK's client for the well-behaved one.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator

import httpx
import pytest
from test_hosted_operations import offline_server, search_once, wait_ready

from conftest import HttpServer, built_snapshot

HEADER_TIMEOUT = 1.0
BODY_TIMEOUT = 1.0
MAX_CONNECTIONS = 20
KEEP_ALIVE_REQUESTS = 3
SLACK = 4.0  # a loaded 2-CPU machine: the close comes within the timeout plus this


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    folder = tmp_path_factory.mktemp("limits")
    snapshot = built_snapshot(folder, pages=False)
    server = offline_server(
        snapshot,
        folder,
        *("--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT)),
        *("--max-connections", str(MAX_CONNECTIONS), "--keep-alive-requests", str(KEEP_ALIVE_REQUESTS)),
    )
    wait_ready(server)
    yield server
    server.close()


def connect(server: HttpServer) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    return client


def seconds_until_closed(client: socket.socket) -> float:
    """How long until the server closes the connection (EOF or reset); the socket is closed after."""
    started = time.monotonic()
    try:
        while client.recv(65536):
            pass
    except (ConnectionResetError, TimeoutError):
        pass
    finally:
        client.close()
    return time.monotonic() - started


def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(limited: HttpServer) -> None:
    assert seconds_until_closed(connect(limited)) < HEADER_TIMEOUT + SLACK


def test_partial_headers_are_closed_after_the_header_timeout(limited: HttpServer) -> None:
    client = connect(limited)
    client.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: app")
    started = time.monotonic()
    for _ in range(3):  # trickling more header bytes does not reset the deadline
        time.sleep(HEADER_TIMEOUT / 4)
        client.sendall(b"x")
    waited = seconds_until_closed(client) + (time.monotonic() - started)
    assert waited < HEADER_TIMEOUT + SLACK + 1


def test_a_body_that_stops_arriving_is_closed_after_the_body_timeout(limited: HttpServer) -> None:
    client = connect(limited)
    client.sendall(
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b'Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{"jsonrpc"'
    )
    assert seconds_until_closed(client) < BODY_TIMEOUT + SLACK


def test_an_idle_keep_alive_connection_is_not_cut_by_the_header_timeout(limited: HttpServer) -> None:
    with httpx.Client(timeout=10) as client:
        first = client.get(limited.url + "/healthz")
        time.sleep(HEADER_TIMEOUT + 1)  # idle between requests: the idle timeout (75 s) applies
        second = client.get(limited.url + "/healthz")
    assert first.status_code == second.status_code == 200
    assert first.extensions["network_stream"] is second.extensions["network_stream"]


def test_a_connection_closes_after_its_keep_alive_request_limit(limited: HttpServer) -> None:
    with httpx.Client(timeout=10) as client:
        answers = [client.get(limited.url + "/healthz") for _ in range(KEEP_ALIVE_REQUESTS + 1)]
    assert [a.headers.get("connection") for a in answers] == [None, None, "close", None]


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_idle_sockets_past_the_cap_make_room_and_a_real_client_is_served(limited: HttpServer) -> None:
    from imqueue_mcp.server.hosting.connections import BUSY_LINGER_SECONDS, FIRST_REQUEST_SECONDS

    before = open_descriptors(limited.process.pid)
    idle = [connect(limited) for _ in range(3 * MAX_CONNECTIONS)]
    try:
        # past the cap each waits a second for its request line, is answered 503, then closed cleanly
        time.sleep(FIRST_REQUEST_SECONDS + BUSY_LINGER_SECONDS + 1.0)
        held = open_descriptors(limited.process.pid)
        assert held - before <= MAX_CONNECTIONS + 2, (before, held)
        result = search_once(limited)
        assert not result.is_error, result.content[0].text
    finally:
        for client in idle:
            client.close()


PIPELINED = 40


def pipelining_non_reader(server: HttpServer, requests: int = PIPELINED) -> socket.socket:
    """A client that sends many requests at once on one connection and reads none of the answers:
    the server's writes stall once the socket buffers fill."""
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    client.settimeout(30)
    client.connect(("127.0.0.1", server.port))
    body = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
    request = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    client.sendall(request * requests)
    return client


@pytest.fixture(scope="module")
def pipelining(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """A server that takes many requests on one connection (the default keep-alive limit), a
    small cap and a short body timeout."""
    folder = tmp_path_factory.mktemp("stalls")
    snapshot = built_snapshot(folder, pages=False)
    server = offline_server(
        snapshot, folder, "--body-timeout", str(BODY_TIMEOUT), "--max-connections", str(STALLED_CAP)
    )
    wait_ready(server)
    yield server
    server.close()


STALLED_CAP = 10
QUEUED_WORK = 20.0


@pytest.mark.slow  # over 5 s: it waits out the stalls
def test_clients_that_read_none_of_their_answers_cannot_lock_out_the_probes(pipelining: HttpServer) -> None:
    """A stalled response counts against the cap only until body_timeout: then the connection is
    aborted; and past the cap, a stalled connection makes room as an idle one does."""
    limited = pipelining
    stalled = [pipelining_non_reader(limited) for _ in range(STALLED_CAP + 2)]
    try:
        # the pipelined requests fill the socket buffers first: 480 tools/list, about 2 s of CPU on
        # this 2-CPU machine alone and over 5 s beside the CI's other lanes; a lockout is for good
        deadline = time.monotonic() + BODY_TIMEOUT + SLACK + QUEUED_WORK
        answered: list[int] = []
        while time.monotonic() < deadline and len(answered) < 3:
            try:
                answered.append(httpx.get(f"http://127.0.0.1:{limited.port}/healthz", timeout=5).status_code)
            except httpx.TransportError:  # refused while every connection is busy
                time.sleep(0.2)
        assert answered == [200, 200, 200]
        time.sleep(BODY_TIMEOUT + SLACK)
        aborted = served = 0
        settled = time.monotonic() + QUEUED_WORK  # beside the CI's lanes the server may still be
        for client in stalled:  # working through a connection's 40 requests: each ends one way
            client.settimeout(0.5)
            received = b""
            while True:
                try:  # the connection is gone: what was buffered drains, then EOF or a reset
                    while chunk := client.recv(1 << 20):
                        received += chunk
                    aborted += 1
                except ConnectionResetError:
                    aborted += 1
                except TimeoutError:  # still open: only if every answer went out (the kernel's
                    # buffers held them all, so its writes never stalled), a served keep-alive one
                    if received.count(b"HTTP/1.1 200 OK") < PIPELINED and time.monotonic() < settled:
                        continue  # still being answered (or about to be aborted): look again
                    served += received.count(b"HTTP/1.1 200 OK") == PIPELINED
                break
        assert aborted + served == len(stalled) and aborted >= len(stalled) // 2, (aborted, served)
    finally:
        for client in stalled:
            client.close()


def cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_body_in_a_million_one_byte_chunks_is_refused_before_it_costs_seconds(
    limited: HttpServer,
) -> None:
    """Parsing costs per chunk: a 1 MB body sent as one-byte chunks held the event loop over 5 s.
    Past MAX_BODY_PIECES the request is refused (400, closed) and the rest is never parsed."""
    from imqueue_mcp.server.hosting.connections import MAX_BODY_PIECES

    before = cpu_seconds(limited.process.pid)
    client = connect(limited)
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{limited.port}\r\nContent-Type: application/json\r\n"
        "Accept: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode()
    answer = b""
    try:
        client.sendall(head)
        for _ in range(100):  # 10,000 chunks at a time, up to a million, until refused
            client.sendall(b"1\r\n \r\n" * 10_000)
        answer = client.recv(65536)
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        client.close()
    assert answer == b"" or answer.startswith(b"HTTP/1.1 400")
    assert cpu_seconds(limited.process.pid) - before < 1.0 + MAX_BODY_PIECES / 10_000
    assert httpx.get(f"http://127.0.0.1:{limited.port}/readyz", timeout=5).status_code == 200


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """A small cap, and bodies given long enough to arrive that a connection stays busy meanwhile."""
    folder = tmp_path_factory.mktemp("busy")
    snapshot = built_snapshot(folder, pages=False)
    server = offline_server(snapshot, folder, "--body-timeout", "30", "--max-connections", str(BUSY_CAP))
    wait_ready(server)
    yield server
    server.close()


BUSY_CAP = 5


def test_past_the_cap_with_every_connection_busy_a_request_gets_503_retry_after_and_a_probe_is_served(
    busy: HttpServer,
) -> None:
    from imqueue_mcp.server.hosting.connections import BUSY_ROOM

    working = []
    for _ in range(BUSY_CAP):  # each is mid-request: headers in, its body still coming
        client = connect(busy)
        client.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Accept: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc"'
        )
        working.append(client)
    try:
        time.sleep(0.3)
        call = httpx.post(
            busy.url + "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
            timeout=10,
        )
        assert call.status_code == 503 and call.headers["retry-after"] == "1"
        assert call.json()["error"]["code"] == -32603 and "Retry" in call.json()["error"]["message"]
        assert httpx.get(busy.url + "/healthz", timeout=10).status_code == 200  # probes get through
        assert httpx.get(busy.url + "/readyz", timeout=10).status_code == 200
        silent = [connect(busy) for _ in range(BUSY_CAP * BUSY_ROOM + 4)]  # past the room too: refused
        try:
            silent[0].settimeout(SLACK)
            assert silent[0].recv(4096).startswith(b"HTTP/1.1 503")  # no request came: answered busy
            assert seconds_until_closed(silent[-1]) < SLACK
        finally:
            for client in silent:
                client.close()
    finally:
        for client in working:
            client.close()
    time.sleep(0.3)
    assert httpx.get(busy.url + "/readyz", timeout=10).status_code == 200

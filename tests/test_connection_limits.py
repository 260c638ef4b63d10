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
    before = open_descriptors(limited.process.pid)
    idle = [connect(limited) for _ in range(3 * MAX_CONNECTIONS)]
    try:
        time.sleep(0.5)
        held = open_descriptors(limited.process.pid)
        assert held - before <= MAX_CONNECTIONS + 2, (before, held)
        result = search_once(limited)
        assert not result.is_error, result.content[0].text
    finally:
        for client in idle:
            client.close()

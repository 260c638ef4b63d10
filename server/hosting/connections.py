"""Connection hygiene for the hosted endpoint: timeouts, a connection cap, keep-alive limits.

uvicorn's h11 protocol closes an idle keep-alive connection (timeout_keep_alive) but puts no
limit on a connection that has sent nothing, or half a request: each such socket is held for
ever, so 1,100 of them exhaust a 1,024-descriptor process and new clients are reset. This
protocol is uvicorn's, with these added (the settings are Config's, read from the environment
once per worker process):

    header_timeout       a request's line and headers must arrive within this many seconds of
                         the connection opening, or of the request's first byte on a reused one
    body_timeout         its body within this many seconds of its headers
    idle_timeout         uvicorn's timeout_keep_alive: an idle connection between requests
    max_connections      open connections per process; a connection past it closes the
                         longest-idle connection (no request in progress) to make room, or
                         itself when every connection is busy. The process's soft descriptor
                         limit is raised (up to the hard one) to hold the cap plus a reserve
    keep_alive_requests  requests on one connection, then `Connection: close`

(and, while the process drains, lifecycle.py adds `Connection: close` to every response).
Nothing here runs the application: a connection closed for a timeout has no request in
progress, and the application's own work has its own limits.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import resource
import time
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from imqueue_mcp.server.config import Config, config_from_environment
from imqueue_mcp.server.hosting.lifecycle import CLOSE

logger = logging.getLogger(__name__)

# Descriptors kept free beside the connections: the listener, snapshot and page files, outgoing
# fetches to the docs origins, logging, the event loop's own.
DESCRIPTOR_RESERVE = 64
PROTOCOL = "imqueue_mcp.server.hosting.connections:GuardedH11Protocol"  # uvicorn's `http` setting


@functools.cache
def settings() -> Config:
    """This worker's configuration (the hosted launch exported it to the environment)."""
    return config_from_environment()


def fit_descriptor_limit(max_connections: int) -> int:
    """Raise the soft descriptor limit to hold `max_connections` plus the reserve, as far as the hard
    limit allows; the connection cap that fits (lower than asked, with a warning, if it cannot)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max_connections + DESCRIPTOR_RESERVE
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError) as error:
            logger.warning("cannot raise the descriptor limit to %d: %s", raised, error)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return max_connections
    fitted = max(1, soft - DESCRIPTOR_RESERVE)
    logger.warning(
        "--max-connections %d does not fit the descriptor limit (%d, hard %d): serving at most %d "
        "connections per process; raise `ulimit -n` to allow more",
        max_connections,
        soft,
        hard,
        fitted,
    )
    return fitted


@functools.cache
def connection_cap() -> int:
    return fit_descriptor_limit(settings().max_connections)


class GuardedH11Protocol(H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        config = settings()
        self.header_timeout = config.header_timeout
        self.body_timeout = config.body_timeout
        self.keep_alive_requests = config.keep_alive_requests
        self.cap = connection_cap()
        self.requests = 0
        self.idle_since = time.monotonic()
        self.deadline: asyncio.TimerHandle | None = None
        self.deadline_for: str = ""  # "headers" | "body": what the armed deadline waits for
        self.guarded_cycle: object = None  # the request cycle the deadline and counters last saw

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.cap and not self._make_room():
            logger.warning("connection cap (%d) reached and every connection is busy: refused one", self.cap)
            transport.abort()
            return
        self._arm("headers", self.header_timeout)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow_request()

    def on_response_complete(self) -> None:
        self._disarm()
        self.idle_since = time.monotonic()
        super().on_response_complete()  # arms uvicorn's keep-alive (idle) timer, or runs a pipelined request
        self._follow_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def busy(self) -> bool:
        """A request is in progress: its headers are in and its response is not complete."""
        return self.cycle is not None and not self.cycle.response_complete

    def _follow_request(self) -> None:
        """After bytes arrived or a response completed: which deadline applies now."""
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and cycle is not self.guarded_cycle:  # a new request's headers arrived
            self.guarded_cycle = cycle
            self.requests += 1
            if self.requests >= self.keep_alive_requests:
                # The response says Connection: close (h11 then closes the connection after it).
                cycle.default_headers = [*cycle.default_headers, CLOSE]
            self._disarm()
        if self.busy():
            if cycle is not None and cycle.more_body and self.deadline_for != "body":
                self._arm("body", self.body_timeout)
            elif cycle is not None and not cycle.more_body:
                self._disarm()  # the whole request is in: the application has it
        elif self.timeout_keep_alive_task is None and self.deadline_for != "headers":
            self._arm("headers", self.header_timeout)  # bytes of a next request, not complete yet

    def _arm(self, what: str, seconds: float) -> None:
        self._disarm()
        self.deadline_for = what
        self.deadline = self.loop.call_later(seconds, self._expire, what)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline = None
        self.deadline_for = ""

    def _expire(self, what: str) -> None:
        self.deadline = None
        self.deadline_for = ""
        if self.transport.is_closing():
            return
        logger.info("closed a connection whose request %s did not arrive in time (%s)", what, self.client)
        if what == "body" and self.cycle is not None:
            self.cycle.disconnected = True  # the application's receive() answers http.disconnect
            self.cycle.message_event.set()
        self.transport.close()

    def _make_room(self) -> bool:
        """Close the longest-idle other connection; False when every other one is busy."""
        idle = [
            connection
            for connection in self.connections
            if connection is not self
            and isinstance(connection, GuardedH11Protocol)
            and not connection.busy()
            and not connection.transport.is_closing()
        ]
        if not idle:
            return False
        oldest = min(idle, key=lambda connection: connection.idle_since)
        oldest.transport.close()
        return True

"""Connection hygiene for the hosted endpoint: timeouts, a connection cap, keep-alive limits.

uvicorn's h11 protocol closes an idle keep-alive connection (timeout_keep_alive) but puts no
limit on a connection that has sent nothing, or half a request: each such socket is held for
ever, so 1,100 of them exhaust a 1,024-descriptor process and new clients are reset. This
protocol is uvicorn's, with these added (the settings are Config's, read from the environment
once per worker process):

    header_timeout       a request's line and headers must arrive within this many seconds of
                         the connection opening, or of the request's first byte on a reused one
    body_timeout         its body within this many seconds of its headers; and a response the
                         client takes nothing of (its writes paused: the client reads nothing,
                         pipelining requests) for this many seconds aborts the connection
    idle_timeout         uvicorn's timeout_keep_alive: an idle connection between requests
    max_connections      open connections per process; a connection past it closes the
                         longest-idle connection (no request in progress, idle a second at least:
                         one just answered may be carrying its client's next request) to make
                         room, else the longest-stalled one (a response its client does not
                         read). With none, while descriptors last (BUSY_ROOM times the cap at
                         most) the connection's request line is read: a probe (/healthz,
                         /readyz) is served, anything else answered 503 with Retry-After and a
                         JSON-RPC error, then closed cleanly; past that, refused. The process's
                         soft descriptor limit is raised (up to the hard one) to hold the cap,
                         the busy answers' room and a reserve
    keep_alive_requests  requests on one connection, then `Connection: close`

and a request's body may arrive in at most MAX_BODY_PIECES pieces (chunks, or reads): parsing
costs per piece, and a 1 MB body sent as a million one-byte chunks held the event loop (and
every other client's probe) for over 5 s. Past it, the request is answered 400 and closed.

(and, while the process drains, lifecycle.py adds `Connection: close` to every response).
Nothing here runs the application: a connection closed for a timeout has no request in
progress, and the application's own work has its own limits.

At the drain's end uvicorn asks each connection to shut down; here no request it has taken in
is dropped, and no connection is reset:

    a request in progress      answered, with `Connection: close`, then the connection closes
    a request partly arrived,  awaited (the header and body timeouts still apply), answered
    or a new connection        with `Connection: close`; a new connection that brings nothing
    (FIRST_REQUEST_SECONDS)    within FIRST_REQUEST_SECONDS of opening is closed as an idle one
    an idle connection         closed cleanly: a FIN at once, then whatever the client still
                               sends (a request that crossed the FIN) is read and dropped until
                               it closes its side, LINGER_SECONDS at most. Closing a socket with
                               unread bytes would send a reset instead, and so would the kernel
                               for bytes that reach a closed socket: the client could not tell
                               whether its request ran. After a FIN it knows it did not.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from imqueue_mcp.server.config import Config, config_from_environment
from imqueue_mcp.server.hosting.lifecycle import CLOSE

logger = logging.getLogger(__name__)

# Descriptors kept free beside the connections: the listener, snapshot and page files, outgoing
# fetches to the docs origins, logging, the event loop's own.
DESCRIPTOR_RESERVE = 64
PROTOCOL = "imqueue_mcp.server.hosting.connections:GuardedH11Protocol"  # uvicorn's `http` setting
# At shutdown: how long a connection opened just before may take to send its first request (a
# balancer sends it at once), and how long a closed idle connection's late bytes are read and dropped.
FIRST_REQUEST_SECONDS = 1.0
LINGER_SECONDS = 3.0
# Past the cap, with no connection to close for room, a connection is still answered while the
# process has descriptors for it (up to `connection_ceiling`: room for BUSY_ROOM times the cap, in
# the reserve's keeping): its request line is read (FIRST_REQUEST_SECONDS at most) and a probe (GET
# or HEAD /healthz or /readyz) is served; any other request is answered 503 with Retry-After, so
# the client knows to retry, and closed cleanly (FIN, its last bytes read and dropped: a second at
# most). Past the ceiling, a connection is refused.
BUSY_ROOM = 4
BUSY_LINGER_SECONDS = 1.0
# A connection idle for less than this has just been answered and its client may be sending its
# next request on it now: closing it for room would lose that request. Idle longer, it may go.
EVICTABLE_IDLE_SECONDS = 1.0
_PROBE_LINE = re.compile(rb"^(?:GET|HEAD) /(?:healthz|readyz)(?:\?\S*)? HTTP/1\.[01]$")
_BUSY_BODY = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Service Unavailable: every '
    b'connection of this MCP server instance is busy. Retry in a second."}}'
)
BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
    b"Connection: close\r\nContent-Length: " + str(len(_BUSY_BODY)).encode() + b"\r\n\r\n" + _BUSY_BODY
)
# Pieces (h11 Data events: a chunk, or what one read brought) of one request's body. A 1 MB body
# (the limit) in 4,096 pieces averages 256 bytes a piece, far under a TCP segment.
MAX_BODY_PIECES = 4096


@functools.cache
def settings() -> Config:
    """This worker's configuration (the hosted launch exported it to the environment)."""
    return config_from_environment()


def fit_descriptor_limit(max_connections: int) -> int:
    """Raise the soft descriptor limit to hold `max_connections` plus the reserve (and the busy
    answers' room beside them, BUSY_ROOM times as many), as far as the hard limit allows; the
    connection cap that fits (lower than asked, with a warning, if it cannot)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max_connections + DESCRIPTOR_RESERVE
    roomy = max_connections * (1 + BUSY_ROOM) + DESCRIPTOR_RESERVE
    if soft != resource.RLIM_INFINITY and soft < roomy:
        raised = roomy if hard == resource.RLIM_INFINITY else min(roomy, hard)
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


@functools.cache
def connection_ceiling() -> int:
    """Open connections this process answers at all: the cap's, and past it busy answers while
    descriptors last (the soft limit, less the reserve; the cap's room times BUSY_ROOM at most)."""
    cap = connection_cap()
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = cap * BUSY_ROOM if soft == resource.RLIM_INFINITY else soft - DESCRIPTOR_RESERVE - cap
    return cap + max(0, min(room, cap * BUSY_ROOM))


class GuardedH11Protocol(H11Protocol):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        config = settings()
        self.header_timeout = config.header_timeout
        self.body_timeout = config.body_timeout
        self.keep_alive_requests = config.keep_alive_requests
        self.cap = connection_cap()
        self.ceiling = connection_ceiling()
        self.requests = 0
        self.idle_since = time.monotonic()
        self.deadline: asyncio.TimerHandle | None = None
        self.deadline_for: str = ""  # "headers" | "body": what the armed deadline waits for
        self.guarded_cycle: object = None  # the request cycle the deadline and counters last saw
        self.opened = time.monotonic()
        self.stalled_since: float | None = None  # writing paused: the client has not read its response
        self.stall_deadline: asyncio.TimerHandle | None = None
        self.closing = False  # shutting down: the request awaited is the last, then the connection closes
        self.lingering = False  # closed for writing (FIN sent): what arrives is dropped; the client's
        # own close ends it (uvicorn's eof_received lets the transport close)
        self.body_pieces = 0
        self.over_cap = False  # past the cap: its request line decides (a probe is served)
        self.held = b""  # what arrived meanwhile
        parse = self.conn.next_event
        self.conn.next_event = functools.partial(self._counted_event, parse)  # type: ignore[method-assign]

    def _counted_event(self, parse: Any) -> Any:
        """h11's next event, counting a request's body pieces: past MAX_BODY_PIECES the request is
        refused as malformed (uvicorn answers 400 and closes), its application told it is gone."""
        event = parse()
        if isinstance(event, h11.Request):
            self.body_pieces = 0
        elif isinstance(event, h11.Data):
            self.body_pieces += 1
            if self.body_pieces > MAX_BODY_PIECES:
                logger.info("refused a body in over %d pieces (%s)", MAX_BODY_PIECES, self.client)
                if self.cycle is not None:
                    self.cycle.disconnected = True
                    self.cycle.message_event.set()
                raise h11.RemoteProtocolError(f"request body in over {MAX_BODY_PIECES} pieces")
        return event

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.cap and not self._make_room():
            if len(self.connections) > self.ceiling:
                logger.warning("connection cap (%d) and the descriptors past it used: refused one", self.cap)
                transport.abort()
                return
            self.over_cap = True
            self._arm("over cap", FIRST_REQUEST_SECONDS)
            return
        self._arm("headers", self.header_timeout)

    def data_received(self, data: bytes) -> None:
        if self.lingering:
            return
        if self.over_cap:
            self._read_request_line(data)
            return
        super().data_received(data)
        self._follow_request()

    def _read_request_line(self, data: bytes) -> None:
        """Past the cap: a probe's request is served as any other; any other is answered busy."""
        self.held += data
        line, found, _ = self.held.partition(b"\r\n")
        if not found and len(self.held) < 256:
            return
        if found and _PROBE_LINE.match(line):
            self.over_cap = False
            self._arm("headers", self.header_timeout)
            held, self.held = self.held, b""
            self.data_received(held)
            return
        self.refuse_busy()

    def refuse_busy(self) -> None:
        """503 with Retry-After (before the request is read: HTTP lets a server answer early), then
        a clean close, its descriptor held a second at most."""
        logger.info("connection cap (%d) reached and every connection is busy: answered 503", self.cap)
        self.over_cap = False
        self.held = b""
        self.transport.write(BUSY_RESPONSE)
        self.linger(BUSY_LINGER_SECONDS)

    def shutdown(self) -> None:
        """uvicorn's graceful shutdown, for this connection (the module's docstring says what)."""
        if self.transport.is_closing() or self.lingering:
            return
        if self.busy():
            super().shutdown()  # the response says Connection: close, and the connection closes after it
            return
        self.closing = True
        if self.conn.trailing_data[0]:
            return  # a request partly arrived: its header deadline is armed
        first_request_left = self.opened + FIRST_REQUEST_SECONDS - time.monotonic()
        if self.requests == 0 and first_request_left > 0:
            self._arm("first request", first_request_left)
        else:
            self.linger()

    def linger(self, seconds: float = LINGER_SECONDS) -> None:
        """A clean close: a FIN now; what arrives is dropped until the client closes, or `seconds`."""
        self._disarm()
        self._unset_keepalive_if_required()
        if not self.transport.can_write_eof():
            self.transport.close()
            return
        self.lingering = True
        self.transport.write_eof()
        self.transport.resume_reading()
        self.deadline_for = "linger"
        self.deadline = self.loop.call_later(seconds, self.transport.close)

    def on_response_complete(self) -> None:
        self._disarm()
        self.idle_since = time.monotonic()
        super().on_response_complete()  # arms uvicorn's keep-alive (idle) timer, or runs a pipelined request
        self._follow_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._unstall()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        """The transport's buffer is full: the client is not reading. It has body_timeout seconds
        to take some of the response, or the connection is aborted (uvicorn would wait for ever,
        and the connection would count against the cap for good)."""
        super().pause_writing()
        if self.stall_deadline is None:
            self.stalled_since = time.monotonic()
            self.stall_deadline = self.loop.call_later(self.body_timeout, self._abort_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._unstall()

    def _unstall(self) -> None:
        if self.stall_deadline is not None:
            self.stall_deadline.cancel()
        self.stall_deadline = None
        self.stalled_since = None

    def _abort_stalled(self) -> None:
        self.stall_deadline = None
        if self.transport.is_closing():
            return
        logger.info("aborted a connection whose client read none of its response in time (%s)", self.client)
        self.transport.abort()  # close() would wait to write what the client does not take

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
            if self.requests >= self.keep_alive_requests or self.closing:
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
        if what == "first request":
            self.linger()
            return
        if what == "over cap":
            self.refuse_busy()
            return
        logger.info("closed a connection whose request %s did not arrive in time (%s)", what, self.client)
        if what == "body" and self.cycle is not None:
            self.cycle.disconnected = True  # the application's receive() answers http.disconnect
            self.cycle.message_event.set()
        self.transport.close()

    def _make_room(self) -> bool:
        """Close the longest-idle other connection (idle EVICTABLE_IDLE_SECONDS at least), else abort
        the longest-stalled one (a response its client does not read); False when there is none."""
        others = [
            connection
            for connection in self.connections
            if connection is not self
            and isinstance(connection, GuardedH11Protocol)
            and not connection.transport.is_closing()
        ]
        now = time.monotonic()
        idle = [
            connection
            for connection in others
            if not connection.busy()
            and not connection.over_cap
            and not connection.lingering
            and now - connection.idle_since >= EVICTABLE_IDLE_SECONDS
        ]
        if idle:
            min(idle, key=lambda connection: connection.idle_since).transport.close()
            return True
        stalled = [connection for connection in others if connection.stalled_since is not None]
        if stalled:
            oldest = min(stalled, key=lambda connection: connection.stalled_since or 0.0)
            logger.info("aborted a connection whose client reads none of its response, to make room")
            oldest.transport.abort()
            return True
        return False

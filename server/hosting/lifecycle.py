"""A hosted process's life: ready, draining, stopped; the probes that report it and the signals
that move it.

    Lifecycle          one served app's state: draining or not, calls in flight; made with the app
                       (operations.operated), one per worker process, read by the probes and moved
                       by the signal handlers that take_over_signals installs
    operations(...)    ASGI in front of everything else: GET/HEAD /healthz, /readyz and /metrics,
                       answered before the Host/Origin guard (a load balancer's probe names the
                       backend's address as Host, e.g. 10.0.0.7:8000, and that must not be 421)
    take_over_signals  SIGTERM starts the drain, SIGHUP asks for a new snapshot generation

The probes:

    /healthz   200 "ok" while the process answers at all (liveness: restart it when this fails)
    /readyz    200 when a docs corpus is loaded and the process takes calls; 503 while the corpus
               is still loading, or once the drain has begun (readiness: send it no new traffic)

The drain. uvicorn's own SIGTERM stops accepting at once, which fails every call a load balancer
sends before it has noticed. Here SIGTERM only marks the process draining: /readyz turns 503 at
once, every response carries `Connection: close` (connections.py) so clients stop reusing this
instance's connections, and calls are still served for drain_seconds. Then uvicorn's own graceful
shutdown runs: the listener closes (with N workers, as the last one stops accepting: the
supervisor has let go of its copy, operations.py), calls in flight or on their way in on a taken
connection finish, idle connections end with a FIN rather than a reset (connections.py), all
within IN_FLIGHT_GRACE_SECONDS, and the process exits 0. A second SIGTERM during the drain
changes nothing (a supervisor that signals the whole process group must not cut it short).
Ctrl-C (SIGINT) drains the same way, saying on stderr each second how many calls are in flight
and how long is left; a second Ctrl-C stops at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from types import FrameType
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

EXIT_INTERRUPTED = 130  # a shell's status for a process ended by Ctrl-C
IN_FLIGHT_GRACE_SECONDS = 15  # after the drain: how long in-flight calls may take before they are cancelled
PROBE_PATHS = ("/healthz", "/readyz", "/metrics")


@dataclass
class Lifecycle:
    draining: bool = False
    drain_started: float | None = None  # time.monotonic()
    in_flight: int = 0  # requests being answered now (not the probes)


Readiness = Callable[[], dict[str, Any] | None]  # the loaded corpus, described; None while loading
MetricsPage = Callable[[], tuple[bytes, str]]  # the exposition and its content type


def operations(app: ASGIApp, readiness: Readiness, metrics: MetricsPage, state: Lifecycle) -> ASGIApp:
    """`app`, with the probe paths answered first (GET and HEAD only, no CORS: they are for the
    operator's machinery, not for browsers); `state` counts its calls and says when it drains."""

    async def serve(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            send = closing_while_draining(send, state)
        if scope["type"] != "http" or scope["path"] not in PROBE_PATHS:
            state.in_flight += scope["type"] == "http"
            try:
                await app(scope, receive, send)
            finally:
                state.in_flight -= scope["type"] == "http"
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _answer(send, scope, 405, b"only GET and HEAD\n", "text/plain", [(b"allow", b"GET, HEAD")])
            return
        if scope["path"] == "/healthz":
            await _answer(send, scope, 200, b"ok\n", "text/plain")
        elif scope["path"] == "/readyz":
            status, body = ready(readiness, state)
            await _answer(send, scope, status, body, "application/json")
        else:
            page, content_type = metrics()
            await _answer(send, scope, 200, page, content_type)

    return serve


CLOSE = (b"connection", b"close")


def closing_while_draining(send: Send, state: Lifecycle) -> Send:
    """`send`, adding `Connection: close` to a response that starts while the process drains: the
    client then opens its next connection elsewhere instead of reusing this one until it closes."""

    async def sending(message: Message) -> None:
        if state.draining and message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            if CLOSE not in headers:
                message = {**message, "headers": [*headers, CLOSE]}
        await send(message)

    return sending


def ready(readiness: Readiness, state: Lifecycle) -> tuple[int, bytes]:
    """/readyz's status and JSON body."""
    corpus = readiness()
    answer: dict[str, Any]
    if state.draining:
        answer = {"status": "draining", "reason": "SIGTERM received: finishing calls before exit"}
    elif corpus is None:
        answer = {"status": "loading", "reason": "no docs corpus is loaded yet"}
    else:
        answer = {"status": "ready"}
    if corpus is not None:
        answer["corpus"] = corpus
    code = 200 if answer["status"] == "ready" else 503
    return code, json.dumps(answer, separators=(",", ":")).encode() + b"\n"


async def _answer(
    send: Send,
    scope: Scope,
    status: int,
    body: bytes,
    content_type: str,
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", b"%d" % len(body)),
        (b"cache-control", b"no-store"),
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else body})


def take_over_signals(
    state: Lifecycle,
    drain_seconds: float,
    on_hangup: Callable[[], Coroutine[Any, Any, object]],
    on_drain: Callable[[], None] = lambda: None,
) -> bool:
    """Put the drain in front of uvicorn's SIGTERM handling (moving `state`), and `on_hangup` on
    SIGHUP. Called from the lifespan's startup (uvicorn has installed its handlers by then, on the
    main thread). False, with nothing changed, when the process is not served by a uvicorn Server
    (its handler is how the server is found: uvicorn installs its bound `handle_exit`)."""
    handler = signal.getsignal(signal.SIGTERM)
    server = getattr(handler, "__self__", None)
    if server is None or not hasattr(server, "should_exit"):
        logger.info("no uvicorn server owns SIGTERM here: the drain is not installed")
        return False
    loop = asyncio.get_running_loop()

    def stop() -> None:
        logger.warning("drain over: closing the listener and finishing in-flight calls")
        server.should_exit = True

    def begin_drain(why: str) -> None:
        logger.warning("%s: draining (/readyz 503) and serving for %g s more", why, drain_seconds)
        on_drain()  # e.g. a snapshot download in flight ends: it would only hold the exit
        loop.call_later(drain_seconds, stop)
        tell_drain(drain_seconds)

    def tell_drain(left: float) -> None:
        """A line a second on stderr while draining: what is left, and how to stop at once."""
        if server.should_exit or left <= 0:
            return
        say(
            f"draining: {state.in_flight} call(s) in flight, {left:.0f} s left "
            "(Ctrl-C again stops now, dropping them)"
        )
        loop.call_later(1.0, tell_drain, left - 1.0)

    def draining_on(why: str) -> Callable[[int, FrameType | None], None]:
        def on_signal(signum: int, frame: FrameType | None) -> None:
            # Only flags here: a signal handler may interrupt the logging module mid-write.
            if state.draining:
                if signum == signal.SIGINT:  # a second Ctrl-C: the operator wants out now
                    say(f"stopped at once (pid {os.getpid()}), {state.in_flight} call(s) dropped")
                    os._exit(EXIT_INTERRUPTED)  # uvicorn's forced exit cancels the lifespan with a traceback
                return
            state.draining = True
            state.drain_started = time.monotonic()
            loop.call_soon_threadsafe(begin_drain, why)

        return on_signal

    hangups: set[asyncio.Task[object]] = set()

    def hang_up() -> None:
        task = loop.create_task(on_hangup())
        hangups.add(task)
        task.add_done_callback(hangups.discard)

    signal.signal(signal.SIGTERM, draining_on("SIGTERM"))
    signal.signal(signal.SIGINT, draining_on("Ctrl-C (SIGINT)"))
    signal.signal(signal.SIGHUP, lambda signum, frame: loop.call_soon_threadsafe(hang_up))
    return True


def say(line: str) -> None:
    """One line for the operator on stderr, whatever the log level: what the server is doing."""
    sys.stderr.write(f"imqueue-mcp: {line}\n")
    sys.stderr.flush()

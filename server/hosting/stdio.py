"""The stdio transport: the SDK's writer, our own reader, and an answer for every line.

The SDK's stdio reader turns a line that is not a JSON-RPC message into an exception item
that the serving loop drops silently, decodes a whole line to text however long it is (a
50 MB line of invalid UTF-8 peaked at 543 MB), and when stdin closes it cancels every
request still in flight, so most of a queue of pings went unanswered. So this module reads
stdin itself:

    bytes, a chunk at a time; a line is judged (wire.py: parse error, invalid request, or
    the message for the SDK's session) on its bytes, never decoded to text first
    a line over MAX_LINE_BYTES is dropped as it streams in (memory stays flat) and
    answered with a parse error that names the limit
    at end of input, every request already read is answered before the server exits:
    the session goes on until each has its answer, for at most DRAIN_SECONDS; the SDK then
    cancels what is left, and any request still without an answer gets a -32000
    "Connection closed" error from here, so none is left unanswered. A request the client
    cancelled (notifications/cancelled) is not waited for: the SDK never answers it, and MCP
    says it should not be. A subscriptions/listen stream never ends by itself, so each is
    closed at end of input and ends with its result, as the SDK's graceful close sends it
    an answer is queued for the SDK's writer, never handed over by a send that a cancel can
    interrupt (WatchedWrites): one so interrupted was withdrawn unsent while the SDK counted it
    sent, which lost answers on a loaded machine; the queue is written out while the writer
    keeps taking it, and given up only after WRITE_SECONDS with no progress (a client that
    stopped reading), so the exit never hangs

Like the SDK, it claims fd 0: the wire is read from a private duplicate and fd 0 points at
the null device, so child processes read EOF. stdout carries only protocol frames: the SDK
points fd 1 at stderr while serving, and all logging goes to stderr.
"""

from __future__ import annotations

import io
import os
import sys
from collections import deque
from collections.abc import AsyncIterator, Collection, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, BinaryIO

import anyio
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import SUBSCRIPTION_ID_META_KEY, ListenHandler
from mcp.shared._stream_protocols import WriteStream
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from mcp_types import (
    CONNECTION_CLOSED,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
)

from imqueue_mcp.server.hosting.invalid_params import GuidedParams
from imqueue_mcp.server.hosting.wire import judge, parse_error

MAX_LINE_BYTES = 4 * 2**20  # the SDK's own HTTP body limit; the hosted endpoint takes 1 MB
READ_BYTES = 2**16  # one read of the wire
DRAIN_SECONDS = 10.0  # after stdin closes, how long requests already read may take to finish
WRITE_SECONDS = 5.0  # at the end, how long the writer may take no message before the rest is dropped
CANCELLED = "notifications/cancelled"
LISTEN = "subscriptions/listen"
LISTEN_ACKNOWLEDGED = "notifications/subscriptions/acknowledged"  # the first frame of an open stream
LINE_TOO_LONG = (
    f"Parse error: the line is over {MAX_LINE_BYTES // 2**20} MiB, more than this server reads as one "
    "message, so it was dropped unread; send a smaller message"
)
STDIN_CLOSED = (
    f"Connection closed: stdin closed and this request had not finished within {DRAIN_SECONDS:g} s, "
    "so it was cancelled; send it again on a new connection"
)


class TooLong:
    """A line that went over MAX_LINE_BYTES: its bytes were dropped as they came."""


async def wire_lines(wire: BinaryIO, limit: int = MAX_LINE_BYTES) -> AsyncIterator[bytes | TooLong]:
    """Each line of `wire` without its newline, or TooLong for one over `limit` bytes; the
    last line counts even without a newline. At most `limit` + one read is ever held."""
    pending = bytearray()
    dropping = False  # inside a line already over the limit: skip to its newline
    while True:
        chunk = await anyio.to_thread.run_sync(wire.read1, READ_BYTES)  # type: ignore[attr-defined]
        if not chunk:
            break
        start = 0
        while (newline := chunk.find(b"\n", start)) != -1:
            if dropping:
                dropping = False
                yield TooLong()
            elif len(pending) + newline - start > limit:
                pending.clear()
                yield TooLong()
            else:
                pending += chunk[start:newline]
                yield bytes(pending)
                pending.clear()
            start = newline + 1
        if not dropping:
            pending += chunk[start:]
            if len(pending) > limit:
                pending.clear()
                dropping = True
    if dropping:
        yield TooLong()
    elif pending:
        yield bytes(pending)


def read_line(
    line: bytes | TooLong, tools: Collection[str]
) -> SessionMessage | JSONRPCError | JSONRPCResponse | None:
    """The message on one stdin line (for the session), or the error that answers the line, or
    None for a blank line. `tools`: the names of the server's tools (wire.judge)."""
    return parse_error(LINE_TOO_LONG) if isinstance(line, TooLong) else judge(line, tools)


class Unanswered:
    """The requests read from stdin that have no answer yet, kept by watching the writes.

    A request counts as answered once its response or error is queued for the writer
    (WatchedWrites), which writes out everything queued before the server exits. A request the
    client cancels is forgotten unanswered: the SDK drops its answer (matching the id as it
    does, "7" and 7 alike), so there is nothing to wait for. A subscriptions/listen request is
    answered only when its stream is closed, which reaches it once the stream is open: once its
    acknowledgement went out (`listens`).
    """

    def __init__(self) -> None:
        self.ids: dict[Any, None] = {}  # insertion-ordered: leftovers are answered in reading order
        self.listens: dict[Any, bool] = {}  # the listen requests among them: whether their stream is open
        self._changed = anyio.Event()  # set, and replaced, whenever `ids` shrinks or a stream opens

    def read(self, request_id: Any, *, listen: bool = False) -> None:
        self.ids[request_id] = None
        if listen:
            self.listens[request_id] = False

    def opened(self, request_id: Any) -> None:
        if request_id in self.listens:
            self.listens[request_id] = True
            self._change()

    def answered(self, request_id: Any) -> None:
        if request_id in self.ids:
            self._forget(request_id)

    def cancelled(self, request_id: Any) -> None:
        cancelled = coerce_request_id(request_id)
        for read in [read for read in self.ids if coerce_request_id(read) == cancelled]:
            self._forget(read)

    def _forget(self, request_id: Any) -> None:
        del self.ids[request_id]
        self.listens.pop(request_id, None)
        self._change()

    def _change(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def streams_open(self) -> None:
        """Until every listen request still unanswered has its stream open."""
        while not all(self.listens.values()):
            await self._changed.wait()

    async def settled(self) -> None:
        while self.ids:
            await self._changed.wait()


class WatchedWrites:
    """The session's write stream, as a queue in front of the SDK's writer: a send queues the
    message at once (nothing to cancel halfway) and marks its request answered; `pump` hands the
    queue to the writer in order. The session's close is held back, so that the leftovers can
    still be answered after it ends; `finish` writes out the rest."""

    def __init__(self, inner: WriteStream[SessionMessage], unanswered: Unanswered):
        self.inner = inner
        self.unanswered = unanswered
        self.queue: deque[SessionMessage] = deque()
        self.wake = anyio.Event()
        self.written = 0  # messages the writer has taken
        self.closing = False
        self.done = anyio.Event()  # the pump ended: the queue went out, or the writer is gone

    async def send(self, item: SessionMessage, /) -> None:
        self.put(item)

    def put(self, item: SessionMessage) -> None:
        self.queue.append(item)
        message = item.message
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self.unanswered.answered(message.id)
        elif isinstance(message, JSONRPCNotification) and message.method == LISTEN_ACKNOWLEDGED:
            meta = (message.params or {}).get("_meta")
            if isinstance(meta, dict):
                self.unanswered.opened(meta.get(SUBSCRIPTION_ID_META_KEY))
        self.wake.set()

    async def pump(self) -> None:
        try:
            while True:
                while self.queue:
                    await self.inner.send(self.queue[0])
                    self.queue.popleft()
                    self.written += 1
                if self.closing:
                    return
                self.wake = anyio.Event()
                await self.wake.wait()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # the writer is gone: nothing more can go out
        finally:
            self.done.set()

    async def finish(self) -> None:
        """Write out what is queued while the writer keeps taking it; stop waiting once it has
        taken nothing for WRITE_SECONDS (the client stopped reading)."""
        self.closing = True
        self.wake.set()
        while not self.done.is_set():
            before = self.written
            with anyio.move_on_after(WRITE_SECONDS):
                await self.done.wait()
            if self.written == before:
                return

    async def aclose(self) -> None:
        pass  # serve_stdio closes the real stream, after the leftovers

    async def __aenter__(self) -> WatchedWrites:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        return None


@contextmanager
def claimed_stdin() -> Iterator[BinaryIO]:
    """The wire on fd 0 as a private binary file, while fd 0 itself reads the null device.
    Where fd 0 cannot be duplicated or diverted, the wire is read in place."""
    try:
        private = os.dup(0)  # not inheritable: children never see the wire
    except OSError:
        yield sys.stdin.buffer
        return
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    except OSError:
        os.close(private)
        yield sys.stdin.buffer
        return
    try:
        # closefd=False: a worker thread may still block on it after the loop ends.
        yield os.fdopen(private, "rb", closefd=False)
    finally:
        os.dup2(private, 0)


def close_listen_streams(server: MCPServer[Any]) -> None:
    """End every open subscriptions/listen stream with its result (the SDK's graceful close)."""
    entry = server._lowlevel_server.get_request_handler(LISTEN)
    if entry is not None and isinstance(entry.handler, ListenHandler):
        entry.handler.close()


async def serve_stdio(server: MCPServer[Any]) -> None:
    lowlevel = server._lowlevel_server  # the same object MCPServer.run_stdio_async serves
    nothing = anyio.wrap_file(io.StringIO())  # the SDK's reader gets no input: we read fd 0 ourselves
    unanswered = Unanswered()
    tools = {tool.name for tool in await server.list_tools()}
    server.middleware.append(GuidedParams())  # innermost: refused params answered with what to fix
    with claimed_stdin() as wire:
        async with stdio_server(stdin=nothing) as (_, write_stream):
            usable_send, usable_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
            writes = WatchedWrites(write_stream, unanswered)

            async def sift() -> None:
                async with usable_send:
                    async for line in wire_lines(wire):
                        read = read_line(line, tools)
                        if read is None:
                            continue
                        try:
                            if isinstance(read, SessionMessage):
                                note(read.message)  # before the session can answer it
                                await usable_send.send(read)
                            else:
                                await write_stream.send(SessionMessage(read))
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return
                    with anyio.move_on_after(DRAIN_SECONDS):  # end of input: let what was read finish
                        await unanswered.streams_open()
                        close_listen_streams(server)  # a listen stream never ends by itself
                        await unanswered.settled()

            def note(message: Any) -> None:
                """Keep count of a request the session took, or forget one the client cancelled."""
                if isinstance(message, JSONRPCRequest):
                    unanswered.read(message.id, listen=message.method == LISTEN)
                elif isinstance(message, JSONRPCNotification) and message.method == CANCELLED:
                    request_id = cancelled_request_id_from_params(message.params)
                    if request_id is not None:
                        unanswered.cancelled(request_id)

            try:
                async with anyio.create_task_group() as pumping:
                    pumping.start_soon(writes.pump)
                    async with anyio.create_task_group() as group:
                        group.start_soon(sift)
                        # app.py announces a changed docs resource list on this connection, so say it will.
                        options = lowlevel.create_initialization_options(
                            NotificationOptions(resources_changed=True)
                        )
                        await lowlevel.run(usable_receive, writes, options)
                        group.cancel_scope.cancel()
                    for request_id in list(unanswered.ids):
                        error = ErrorData(code=CONNECTION_CLOSED, message=STDIN_CLOSED)
                        writes.put(SessionMessage(JSONRPCError(jsonrpc="2.0", id=request_id, error=error)))
                    await writes.finish()
                    pumping.cancel_scope.cancel()
            finally:
                await write_stream.aclose()

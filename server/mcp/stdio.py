"""The stdio transport: the SDK's writer, our own reader, and an answer for every line.

The SDK's stdio reader turns a line that is not a JSON-RPC message into an exception item
that the serving loop drops silently, and it reads a request whose id is not a string or
an integer (null, true, 1.5, {}) as a notification, because the notification model ignores
unknown keys: either way the client waits for an answer that never comes. So this module
reads stdin itself, one line at a time, and answers per JSON-RPC 2.0 and MCP:

    not JSON (or not UTF-8, or nested too deep)  -32700 Parse error, id null
    JSON that is not a message                  -32600 Invalid Request, with the id when one
                                                can be read, else null
    a request whose id is not a string/integer  -32600 Invalid Request, id null
    a blank line                                ignored
    anything else                               to the SDK's session, which answers unknown
                                                methods with -32601 and bad params with -32602;
                                                notifications and responses get no answer

Like the SDK, it claims fd 0: the wire is read from a private duplicate and fd 0 points at
the null device, so child processes read EOF. stdout carries only protocol frames: the SDK
points fd 1 at stderr while serving, and all logging goes to stderr.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

INVALID_MESSAGE = "Invalid Request: not a JSON-RPC 2.0 message"
INVALID_ID = "Invalid Request: a request id must be a string or an integer"


def read_line(line: str) -> SessionMessage | JSONRPCError | None:
    """The message on one stdin line (for the session), or the error that answers the line, or
    None for a blank line. A client's own error response is a message, never an answer."""
    if not line.strip():
        return None
    try:
        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as error:
        return error_for(error)
    except ValueError:  # not UTF-8 after all, or otherwise unreadable
        return _parse_error()
    if isinstance(message, JSONRPCNotification) and _has_id(line):
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=INVALID_REQUEST, message=INVALID_ID))
    return SessionMessage(message)


def error_for(item: Exception) -> JSONRPCError | None:
    """The JSON-RPC error answering an unusable line, or None for a blank line."""
    errors = item.errors() if isinstance(item, ValidationError) else []
    invalid_json = [error for error in errors if error["type"] == "json_invalid"]
    if invalid_json:
        line = invalid_json[0].get("input")
        if isinstance(line, str) and not line.strip():
            return None
        return _parse_error()
    return JSONRPCError(
        jsonrpc="2.0", id=_request_id(errors), error=ErrorData(code=INVALID_REQUEST, message=INVALID_MESSAGE)
    )


def _parse_error() -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error"))


def _has_id(line: str) -> bool:
    """Whether a line the SDK read as a notification carried an "id" member (of a type it dropped)."""
    if '"id"' not in line:  # the common notification: no second parse
        return False
    try:
        raw = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(raw, dict) and "id" in raw


def _request_id(errors: list[Any]) -> str | int | None:
    for error in errors:
        message = error.get("input")
        if isinstance(message, dict):
            request_id = message.get("id")
            if isinstance(request_id, str | int) and not isinstance(request_id, bool):
                return request_id
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


async def serve_stdio(server: MCPServer[Any]) -> None:
    lowlevel = server._lowlevel_server  # the same object MCPServer.run_stdio_async serves
    nothing = anyio.wrap_file(io.StringIO())  # the SDK's reader gets no input: we read fd 0 ourselves
    with claimed_stdin() as wire:
        lines = anyio.wrap_file(io.TextIOWrapper(wire, encoding="utf-8", errors="replace"))
        async with stdio_server(stdin=nothing) as (_, write_stream):
            usable_send, usable_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

            async def sift() -> None:
                async with usable_send:
                    async for line in lines:
                        read = read_line(line)
                        if read is None:
                            continue
                        try:
                            if isinstance(read, SessionMessage):
                                await usable_send.send(read)
                            else:
                                await write_stream.send(SessionMessage(read))
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return

            async with anyio.create_task_group() as group:
                group.start_soon(sift)
                # app.py announces a changed docs resource list on this connection, so say it will.
                options = lowlevel.create_initialization_options(NotificationOptions(resources_changed=True))
                await lowlevel.run(usable_receive, write_stream, options)
                group.cancel_scope.cancel()

"""The stdio transport: the SDK's, plus an answer for every line it cannot use.

The SDK's stdio reader turns a line that is not a JSON-RPC message into an exception item
and the serving loop drops it silently, so a client that sent a broken line waits for an
answer that never comes. Here such items are answered per JSON-RPC 2.0: -32700 Parse
error for text that is not JSON, -32600 Invalid Request for JSON that is not a message
(with the request's id when one can be read), and the server keeps serving. Blank lines
are ignored.

stdout carries only protocol frames: the SDK points fd 1 at stderr while serving, and
all logging goes to stderr.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.lowlevel import NotificationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError


def error_for(item: Exception) -> JSONRPCError | None:
    """The JSON-RPC error answering an unusable line, or None for a blank line."""
    errors = item.errors() if isinstance(item, ValidationError) else []
    invalid_json = [error for error in errors if error["type"] == "json_invalid"]
    if invalid_json:
        line = invalid_json[0].get("input")
        if isinstance(line, str) and not line.strip():
            return None
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message="Parse error"))
    return JSONRPCError(
        jsonrpc="2.0",
        id=_request_id(errors),
        error=ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC 2.0 message"),
    )


def _request_id(errors: list[Any]) -> str | int | None:
    for error in errors:
        message = error.get("input")
        if isinstance(message, dict):
            request_id = message.get("id")
            if isinstance(request_id, str | int) and not isinstance(request_id, bool):
                return request_id
    return None


async def serve_stdio(server: MCPServer[Any]) -> None:
    lowlevel = server._lowlevel_server  # the same object MCPServer.run_stdio_async serves
    async with stdio_server() as (read_stream, write_stream):
        usable_send, usable_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def sift() -> None:
            async with usable_send:
                async for item in read_stream:
                    if not isinstance(item, Exception):
                        await usable_send.send(item)
                        continue
                    answer = error_for(item)
                    if answer is not None:
                        try:
                            await write_stream.send(SessionMessage(answer))
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return

        async with anyio.create_task_group() as group:
            group.start_soon(sift)
            # app.py announces a changed docs resource list on this connection, so say it will.
            options = lowlevel.create_initialization_options(NotificationOptions(resources_changed=True))
            await lowlevel.run(usable_receive, write_stream, options)
            group.cancel_scope.cancel()

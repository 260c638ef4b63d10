"""create_server: the MCPServer for one transport, apart from the transport itself.

Also the protocol-level fixes DESIGN.md lists for the SDK:

- prompts/get with an unknown name answers JSON-RPC -32602 (invalid params), not the
  SDK's code 0 / -32603, via `PromptNameMiddleware`;
- a logging/setLevel handler is registered, so the logging capability is advertised on
  handshake-era connections (the level is recorded; diagnostics still go to stderr).
"""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, EmptyResult, SetLevelRequestParams

from . import server_version
from .config import Config
from .instructions import INSTRUCTIONS
from .tools import Services, hosted_tools, local_tools

logger = logging.getLogger("server")

SERVER_NAME = "imqueue"
SERVER_TITLE = "@imqueue"


class PromptNameMiddleware:
    """An unknown prompt name is the caller's mistake: report it as invalid params."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "prompts/get":
            return await call_next(ctx)
        try:
            return await call_next(ctx)
        except MCPError:
            raise
        except ValueError as error:
            raise MCPError(code=INVALID_PARAMS, message=str(error)) from None


async def _set_logging_level(
    ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams
) -> EmptyResult:
    logger.info("client asked for log level %s", params.level)
    return EmptyResult()


def create_server(config: Config, *, hosted: bool) -> tuple[MCPServer[Any], Services]:
    """The server with the local fourteen tools, or the hosted seven; plus its shared services."""
    services = Services.from_config(config)
    tools = hosted_tools(services) if hosted else local_tools(services)
    server: MCPServer[Any] = MCPServer(
        SERVER_NAME,
        title=SERVER_TITLE,
        version=server_version(),
        instructions=INSTRUCTIONS,
        website_url="https://imqueue.org/mcp/",
        tools=tools,
        log_level="WARNING",
        middleware=[PromptNameMiddleware()],
    )
    # MCPServer has no public hook for this method; the low-level server's registry is the SDK's own.
    server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, _set_logging_level)
    return server, services

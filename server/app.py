"""create_server: the MCPServer for one transport, apart from the transport itself.

Both transports get the same prompts (prompts.py), resources and resource templates
(resources.py) and completions (completions.py). The resources are the curated pages of the
corpus the server keeps, which changes hourly, so `ImqueueServer` answers resources/list,
resources/templates/list and resources/read itself: MCPServer's own resource registry is static.

When a refresh changes the listed URIs, `ResourceListAnnouncer` says so: on the subscription
bus (2026-07-28 clients listening with subscriptions/listen) and as
notifications/resources/list_changed on the handshake-era (2025-11-25) connection.
Only the local (stdio) server states resources.listChanged; the hosted endpoint is stateless
with JSON responses, so it has no stream to announce anything on and serves no
subscriptions/listen: its capabilities say listChanged false, which is the truth.

Also the protocol-level fixes DESIGN.md lists for the SDK:

- prompts/get with an unknown name, or arguments the prompt refuses, answers JSON-RPC -32602
  (invalid params), not the SDK's code 0 / -32603, via `PromptNameMiddleware`, which also
  names the offending argument where the SDK says only "Error rendering prompt";
- a logging/setLevel handler is registered, so the logging capability is advertised on
  handshake-era connections (the level is recorded; diagnostics still go to stderr).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CompleteRequestParams,
    CompleteResult,
    EmptyResult,
    InputRequiredResult,
    Resource,
    ResourceTemplate,
    SetLevelRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyUrl, ValidationError

from . import completions, resources, server_version
from .config import Config
from .corpus import LoadedCorpus
from .instructions import INSTRUCTIONS
from .prompts import service_prompts
from .tools import Services, hosted_tools, local_tools

logger = logging.getLogger("server")

SERVER_NAME = "imqueue"
SERVER_TITLE = "@imqueue"


class PromptNameMiddleware:
    """An unknown prompt name or a refused argument is the caller's mistake: report it as invalid params."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "prompts/get":
            return await call_next(ctx)
        try:
            return await call_next(ctx)
        except MCPError:
            raise
        except ValueError as error:
            raise MCPError(code=INVALID_PARAMS, message=_prompt_error_message(error)) from None


def _prompt_error_message(error: ValueError) -> str:
    """The SDK's message, plus each argument its validation refused (names and reasons, no values)."""
    cause: BaseException | None = error
    while cause is not None and not isinstance(cause, ValidationError):
        cause = cause.__cause__
    if cause is None:
        return str(error)
    problems = "; ".join(
        f"{'.'.join(str(part) for part in problem['loc']) or 'arguments'}: {problem['msg']}"
        for problem in cause.errors()
    )
    return f"{error}: {problems}"


async def _set_logging_level(
    ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams
) -> EmptyResult:
    logger.info("client asked for log level %s", params.level)
    return EmptyResult()


class ResourceListAnnouncer:
    """Announces a changed resource list to the client, whichever era it speaks (see the module doc).

    As middleware it keeps the latest handshake-era request's session (the stdio server has one
    connection, and a session sends on its connection's standalone channel); as a corpus
    watcher it compares the listed URIs of the old and the new corpus."""

    def __init__(self, bus: InMemorySubscriptionBus):
        self.bus = bus
        self.session: ServerSession | None = None

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self.session = ctx.session
        return await call_next(ctx)

    async def corpus_replaced(self, old: LoadedCorpus | None, new: LoadedCorpus) -> None:
        if old is None or resources.listed_uris(old) == resources.listed_uris(new):
            return
        logger.info("the docs resource list changed; announcing it")
        await self.bus.publish(ResourcesListChanged())
        if self.session is not None:
            try:
                await self.session.send_resource_list_changed()
            except Exception as error:  # a closed connection has nobody to tell
                logger.info("could not announce the resource list change: %s", error)
                self.session = None


class ImqueueServer(MCPServer[Any]):
    """MCPServer whose resources are the curated docs pages of the corpus `services` keeps."""

    def __init__(self, services: Services, **settings: Any):
        super().__init__(**settings)
        self.services = services

    async def list_resources(self) -> list[Resource]:
        return await resources.list_resources(self.services.corpus)

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return list(resources.TEMPLATES)

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        return await resources.read_resource(str(uri), self.services)


def create_server(config: Config, *, hosted: bool) -> tuple[MCPServer[Any], Services]:
    """The server with the local fourteen tools, or the hosted seven, the prompts, the docs
    resources and completions; plus its shared services."""
    services = Services.from_config(config)
    tools = hosted_tools(services) if hosted else local_tools(services)
    bus = InMemorySubscriptionBus()
    announcer = ResourceListAnnouncer(bus)
    server = ImqueueServer(
        services,
        name=SERVER_NAME,
        title=SERVER_TITLE,
        version=server_version(),
        instructions=INSTRUCTIONS,
        website_url="https://imqueue.org/mcp/",
        tools=tools,
        log_level="WARNING",
        middleware=[PromptNameMiddleware()] if hosted else [PromptNameMiddleware(), announcer],
        subscriptions=False if hosted else bus,
    )
    for prompt in service_prompts(hosted=hosted):
        server.add_prompt(prompt)
    if not hosted:
        services.corpus.watch(announcer.corpus_replaced)

    async def complete(ctx: ServerRequestContext[Any, Any], params: CompleteRequestParams) -> CompleteResult:
        completion = await completions.complete(params.ref, params.argument, services.corpus)
        return CompleteResult(completion=completion)

    # MCPServer.completion() is an untyped decorator; the low-level registry is the same one it uses.
    server._lowlevel_server.add_request_handler("completion/complete", CompleteRequestParams, complete)

    # MCPServer has no public hook for this method; the low-level server's registry is the SDK's own.
    server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, _set_logging_level)
    return server, services

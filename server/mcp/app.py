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
  handshake-era connections; the level it sets is honoured (see below).

Every tool call goes through `ImqueueServer.call_tool`, which adds what the SDK leaves out:

- guided errors (errors.py) for what fails before a tool body runs: arguments the strict
  schema refuses, an unknown tool name, and a crash (its text stays on stderr);
- progress: the call's Context is the reporter for long operations below it (progress.py);
- diagnostics: the server's log records emitted during the call go to stderr at the user's
  level and to the client as notifications/message at or above the client's level: the one
  logging/setLevel set on a handshake-era stdio connection (warning until it is set; the
  stateless hosted endpoint keeps no level, so warning there), the per-request `_meta` opt-in
  on 2026-07-28 ones (which the SDK enforces);
- one JSON line on stderr per call (observe.py).
"""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolResult,
    CompleteRequestParams,
    CompleteResult,
    EmptyResult,
    InputRequiredResult,
    LoggingLevel,
    NotificationParams,
    Resource,
    ResourceTemplate,
    SetLevelRequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import AnyUrl, ValidationError

from imqueue_mcp.server import observe, progress, server_version
from imqueue_mcp.server.config import Config
from imqueue_mcp.server.docs.corpus_keeper import LoadedCorpus
from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.mcp import api_tools, completions, project_tools, resources
from imqueue_mcp.server.mcp.instructions import HOSTED_INSTRUCTIONS, INSTRUCTIONS
from imqueue_mcp.server.mcp.prompts import service_prompts
from imqueue_mcp.server.mcp.tools import hosted_tools, local_tools
from imqueue_mcp.server.services import Services
from imqueue_mcp.server.tool_results import error_of, error_result, refused_call

logger = logging.getLogger(__name__)
HOSTED_DIAGNOSTICS = "imqueue_mcp.server.mcp."  # the loggers whose records a hosted client may hear

# SEP-2577 deprecates logging from 2026-07-28 on; handshake-era clients still rely on it, and
# the SDK's warning would land on stderr at the first notification of every session.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning, module=__name__)

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


DEFAULT_CLIENT_LOG_LEVEL: LoggingLevel = "warning"  # handshake-era connections, until logging/setLevel


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


class Scrubber(Protocol):
    """What the hosted endpoint rewrites before a client hears it: the operator's origins, snapshot
    and folders (server/hosting/redact.py's Redactor, handed in by the composition root)."""

    def result(self, result: CallToolResult) -> CallToolResult: ...

    def text(self, value: str) -> str: ...

    def middleware(self) -> ServerMiddleware[Any]:
        """What rewrites every other answer and error (resources, prompts, completions)."""
        ...


class Surface(Protocol):
    """What a hosted client hears of what only the local server has (server/hosting/surface.py's
    HostedSurface, handed in by the composition root)."""

    def tool_result(self, name: str, arguments: dict[str, Any], result: CallToolResult) -> CallToolResult: ...

    def refusal(self, name: str) -> CallToolResult | None: ...


class ImqueueServer(MCPServer[Any]):
    """MCPServer whose resources are the curated docs pages of the corpus `services` keeps, and
    whose tool calls carry guided errors, progress, client diagnostics and a log line."""

    def __init__(
        self,
        services: Services,
        *,
        hosted: bool,
        redactor: Scrubber | None,
        surface: Surface | None = None,
        **settings: Any,
    ):
        super().__init__(**settings)
        self.services = services
        self.hosted = hosted
        self.surface = surface
        # Hosted: the operator's origins, snapshot and folders never reach a client.
        if hosted and redactor is None:
            raise ValueError("a hosted server needs a redactor: the operator's places must not reach clients")
        self.redactor = redactor
        # On stdio one process serves one connection, so the level is the connection's.
        self.client_log_level: LoggingLevel = DEFAULT_CLIENT_LOG_LEVEL
        # Hosted: metrics.Metrics.call, counting each call by tool and outcome (None: not counted).
        self.meter: Callable[[str], AbstractContextManager[Callable[[str], None]]] | None = None

    async def set_logging_level(
        self, ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams
    ) -> EmptyResult:
        if self.hosted:
            # Stateless HTTP has no session to keep a level in, and one client's choice must not
            # become every client's: answered, not stored (2026-07-28 clients opt in per request).
            logger.debug("logging/setLevel %s not kept: the hosted endpoint is stateless", params.level)
            return EmptyResult()
        self.client_log_level = params.level
        logger.info("client log level set to %s", params.level)
        return EmptyResult()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if self.meter is None:
            return await self._call_tool(name, arguments, context)
        with self.meter(name) as finish:
            result = await self._call_tool(name, arguments, context)
            detail = error_of(result) if isinstance(result, CallToolResult) and result.is_error else None
            finish(str((detail or {}).get("code", "error")) if detail is not None else "ok")
            return result

    async def _call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None
    ) -> CallToolResult | InputRequiredResult:
        started = time.perf_counter()
        records: list[logging.LogRecord] = []
        request = _request_of(context)
        reporter = context.report_progress if context is not None and request is not None else None
        roots = project_tools.asking_roots_of(None if self.hosted else request, self.services.roots)
        with progress.reporting_to(reporter), observe.collecting(records), roots:
            try:
                result = await super().call_tool(name, arguments, context)
            except UnexpectedToolError as error:
                logger.error("tool %s crashed", name, exc_info=error.__cause__ or error)
                result = error_result(
                    ErrorCode.INTERNAL_ERROR,
                    f"{name} failed unexpectedly; nothing was changed by the server itself.",
                )
            except ToolError as error:
                result = refused_call(name, error)
                if self.surface is not None and str(error).startswith("Unknown tool"):
                    result = self.surface.refusal(name) or result
            if not self.hosted:  # the user's project is on the local server's disk only
                result = await project_tools.noted(name, arguments, result, self.services)
                result = await api_tools.marked(name, arguments, result, self.services)
            if isinstance(result, CallToolResult) and result.is_error:
                detail = error_of(result) or {}
                code, message = str(detail.get("code", "error")), str(detail.get("message", ""))
                shown = observe.logged(name), observe.logged(message, 4 * observe.LOGGED_CHARACTERS)
                logger.info("%s: %s: %s", shown[0], code, shown[1])
            if self.redactor is not None and isinstance(result, CallToolResult):
                result = self.redactor.result(result)
            if self.surface is not None and isinstance(result, CallToolResult):
                result = self.surface.tool_result(name, arguments, result)
        if request is not None:
            await self._send_diagnostics(request, records)
        observe.log_tool_call(name, result, request, time.perf_counter() - started)
        return result

    async def _send_diagnostics(
        self, request: ServerRequestContext[Any, Any], records: list[logging.LogRecord]
    ) -> None:
        if request.protocol_version in MODERN_PROTOCOL_VERSIONS:
            threshold = logging.DEBUG  # the request's own _meta opt-in filters, in the SDK
        else:
            threshold = observe.python_level(self.client_log_level)
        for record in records:
            if record.levelno < threshold:
                continue
            message = record.getMessage()
            if self.redactor is not None:
                # Hosted: only the call's own diagnostics (this layer's), never a domain module's
                # account of the operator's sources, and those with the operator's places redacted.
                if not record.name.startswith(HOSTED_DIAGNOSTICS):
                    continue
                message = self.redactor.text(message)
            try:
                await request.session.send_log_message(  # pyright: ignore[reportDeprecated]
                    level=observe.mcp_level(record.levelno),
                    data=message,
                    logger=record.name,
                    related_request_id=request.request_id,
                )
            except Exception as error:  # a closed stream must not turn a result into a failure
                logger.debug("log notification not sent: %s", error)
                return

    async def list_resources(self) -> list[Resource]:
        return await resources.list_resources(self.services.corpus)

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        return list(resources.TEMPLATES)

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        return await resources.read_resource(str(uri), self.services)


def _request_of(context: Context[Any, Any] | None) -> ServerRequestContext[Any, Any] | None:
    if context is None:
        return None
    try:
        return context.request_context
    except ValueError:  # called outside a request (a test calling the server in-process)
        return None


def create_server(
    config: Config,
    *,
    hosted: bool,
    redactor: Callable[[Services], Scrubber] | None = None,
    surface: Surface | None = None,
) -> tuple[MCPServer[Any], Services]:
    """The server with the local tools, or the hosted eight, the prompts, the docs
    resources and completions; plus its shared services. Hosted, `redactor(services)` makes what
    rewrites every result and log message a client hears."""
    services = Services.from_config(config)
    if hosted:
        tools = hosted_tools(services)
    else:
        tools = local_tools(services)
    bus = InMemorySubscriptionBus()
    announcer = ResourceListAnnouncer(bus)
    scrubber = redactor(services) if hosted and redactor is not None else None
    middleware: list[ServerMiddleware[Any]] = [PromptNameMiddleware()]
    if not hosted:
        middleware.append(announcer)
    if scrubber is not None:
        middleware.insert(0, scrubber.middleware())  # outermost: it hears every answer and error last
    server = ImqueueServer(
        services,
        hosted=hosted,
        redactor=scrubber,
        surface=surface,
        name=SERVER_NAME,
        title=SERVER_TITLE,
        version=server_version(),
        instructions=HOSTED_INSTRUCTIONS if hosted else INSTRUCTIONS,
        website_url="https://imqueue.org/mcp/",
        tools=tools,
        log_level="WARNING",
        middleware=middleware,
        subscriptions=False if hosted else bus,
    )
    for prompt in service_prompts(hosted=hosted):
        server.add_prompt(prompt)
    if not hosted:
        services.corpus.watch(announcer.corpus_replaced)
        # The client's roots are asked once per connection and forgotten when it says they changed.
        server._lowlevel_server.add_notification_handler(
            "notifications/roots/list_changed",
            NotificationParams,
            project_tools.roots_changed(services.roots),
        )

    async def complete(ctx: ServerRequestContext[Any, Any], params: CompleteRequestParams) -> CompleteResult:
        completion = await completions.complete(params.ref, params.argument, services.corpus)
        return CompleteResult(completion=completion)

    # MCPServer.completion() is an untyped decorator; the low-level registry is the same one it uses.
    server._lowlevel_server.add_request_handler("completion/complete", CompleteRequestParams, complete)

    # MCPServer has no public hook for this method; the low-level server's registry is the SDK's own.
    server._lowlevel_server.add_request_handler(
        "logging/setLevel", SetLevelRequestParams, server.set_logging_level
    )
    return server, services

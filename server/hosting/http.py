"""The hosted endpoint: Streamable HTTP at POST /mcp, stateless, JSON responses (SSE only for a
call that streams progress or log messages, see McpEndpoint).

Only the eight read-only tools are registered here (the CLI bridge acts on the machine the
server runs on, which for a hosted server is nobody's). The HTTP surface, in full:

    POST    /mcp   MCP JSON-RPC (both protocol revisions the SDK speaks); JSON answers, except
                   a call that sends progress (or 2026-07-28 log) notifications: SSE
    OPTIONS /mcp   204, CORS preflight          OPTIONS /   204
    GET, HEAD /    200, a short plain-text landing
    any other method on /mcp   405, Allow: POST, OPTIONS, with a JSON-RPC error body saying
                               the method is not supported (GET would otherwise open an SSE
                               stream that never ends in stateless mode)
    GET, HEAD /healthz, /readyz, /metrics   the operator's probes and metrics (lifecycle.py),
                               answered before the Host/Origin checks below
    any other path             404

In front of all of it, for every path: the Host header must be allowed (421 otherwise) and
a browser Origin, when present, must be allowed (403 otherwise); a request without Origin
is fine. Both are read strictly first (host_origin.py: HOST[:PORT] with a numeric port).
A POST to /mcp must say Content-Type: application/json (400 otherwise), and an
MCP-Protocol-Version header must name a revision the SDK speaks (400 otherwise, -32022 with
the supported ones, which a client can fall back to). Each of these refusals is a JSON-RPC
error saying what to send instead, which an MCP client can show; the SDK's were plain text,
and an unknown revision was read as 2026-07-28 and refused for lacking its envelope.
Bodies over MAX_BODY_BYTES get 413, with a JSON-RPC -32602 error naming the limit. A body
that is no single JSON-RPC message gets 400 with -32700 (not JSON) or -32600 (a batch, a
non-message, a request id that is not a string or an integer), as wire.py judges it. A
client that disconnects before its whole body came is logged at INFO, not as a server error.
A client that accepts only application/json (or sends no Accept) is served: every answer
here is JSON, so the Accept header is completed rather than refused with 406. A POST whose
Accept names text/event-stream but nothing that covers application/json is refused with 406
and a JSON-RPC error: the transport requires a client to accept both, and such a client has
said it cannot read the JSON answers this endpoint gives.

`create_app` is an app factory: `uvicorn --factory server.http:create_app` works, and
`imqueue-mcp --http --workers N` starts N such processes. Worker processes read their
configuration from the same environment variables as the command line (config.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PROTOCOL_VERSION_META_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCError,
    JSONRPCResponse,
    UnsupportedProtocolVersionErrorData,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from imqueue_mcp.server import server_version
from imqueue_mcp.server.config import DEFAULT_ALLOWED_HOSTS, Config
from imqueue_mcp.server.docs.search_docs import PASTE_CHARACTERS
from imqueue_mcp.server.hosting import operations as hosting
from imqueue_mcp.server.hosting.host_origin import malformed_header
from imqueue_mcp.server.hosting.invalid_params import GuidedParams
from imqueue_mcp.server.hosting.lifecycle import Lifecycle
from imqueue_mcp.server.hosting.wire import Reread, judge, parse_error
from imqueue_mcp.server.services import Services

logger = logging.getLogger(__name__)

ENDPOINT = "/mcp"
MAX_BODY_BYTES = 1_000_000
ALLOWED_METHODS = {ENDPOINT: "POST, OPTIONS", "/": "GET, HEAD, OPTIONS"}
CORS_MAX_AGE = "86400"
CORS_HEADERS = (
    "Content-Type, Accept, Authorization, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Last-Event-ID"
)
CORS_EXPOSE = "Mcp-Session-Id, Mcp-Protocol-Version"
# The revisions an MCP-Protocol-Version header may name: the SDK's, of both eras.
PROTOCOL_VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)
JSON = "application/json"
HOST_REFUSED = (
    "Misdirected Request: this server does not answer to the host the Host header names; reach it "
    "by a host name it serves (its operator adds one with --allow-host or IMQUEUE_MCP_ALLOWED_HOSTS)."
)
ORIGIN_REFUSED = (
    "Forbidden: a browser page from the origin the Origin header names may not call this server; "
    "call it from an allowed page or from a client that sends no Origin (its operator adds an "
    "origin with --allow-origin or IMQUEUE_MCP_ALLOWED_ORIGINS)."
)
NOT_JSON = (
    "Bad Request: the Content-Type header must be application/json; send the MCP JSON-RPC message "
    "as JSON with Content-Type: application/json."
)
UNSUPPORTED_VERSION = (
    "Unsupported protocol version: the MCP-Protocol-Version header names a revision this server "
    f"does not speak; send one of {', '.join(PROTOCOL_VERSIONS)}."
)


def landing_text(tools: Sequence[tuple[str, str]]) -> str:
    """The plain-text page at `/`: what this endpoint is, its tools (name, title), how to run it locally."""
    listed = "\n".join(f"  {name:<20} {title}" for name, title in tools)
    return (
        f"imqueue-mcp {server_version()}: the @imqueue MCP server, hosted and read-only.\n\n"
        f"MCP endpoint: POST {ENDPOINT} (Streamable HTTP, stateless; JSON responses, SSE when a call streams "
        "progress).\n"
        f"Tools:\n{listed}\n\n"
        "Docs: https://imqueue.org/mcp/\n"
        "Run it locally, with the imq CLI tools as well (local_install_guide says more), from a clone\n"
        "of the source in ./imqueue-mcp:\n"
        "  python3 -m venv ~/.imqueue-mcp && ~/.imqueue-mcp/bin/pip install ./imqueue-mcp\n"
        "and, once published on PyPI, uvx imqueue-mcp\n"
    )


def landing(tools: Sequence[tuple[str, str]]) -> Callable[[Request], Awaitable[Response]]:
    text = landing_text(tools)

    async def answer(request: Request) -> Response:
        return PlainTextResponse(text)

    return answer


class McpEndpoint:
    """POST goes to the SDK's session manager; every other method is refused with 405.

    Notifications need a stream, so two requests from a client that accepts text/event-stream go
    to `streaming`: any 2026-07-28 request (answered as plain JSON unless the call sends progress
    or log notifications before its result, then as SSE) and a 2025-11-25 request that carries a
    progressToken (answered as SSE). Every other request is answered as JSON.
    """

    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        streaming: StreamableHTTPSessionManager,
        tools: Collection[str],
    ):
        self.manager = manager
        self.streaming = streaming
        self.tools = tools  # the names of the server's tools (wire.judge)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await method_not_allowed(scope["method"])(scope, receive, send)
            return
        if not _header(scope, b"content-type").lower().startswith(JSON.encode()):  # as the SDK reads it
            await jsonrpc_error(400, NOT_JSON)(scope, receive, send)
            return
        if _refuses_json(scope):
            await event_stream_only()(scope, receive, send)
            return
        send = body_limit_as_json(send)
        messages, body = await _read_body(receive)
        if messages[-1]["type"] == "http.disconnect":  # the client left mid-body: its choice, not an error
            logger.info("a client disconnected mid-body (%d bytes of the request came)", len(body))
            return
        unsupported = _unsupported_version(scope)
        if unsupported is not None:
            request = _request_of(body)
            if not _enveloped(request):  # a 2026-07-28 envelope: the SDK answers it, -32022 with its versions
                await unsupported_version(unsupported, request.get("id"))(scope, receive, send)
                return
        judged = judged_body(messages, body, self.tools)
        if isinstance(judged, Reread):  # the SDK reads the message as wire.py reread it, not the body
            body = judged.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
            messages = [{"type": "http.request", "body": body, "more_body": False}]
        elif judged is not None:
            await judged(scope, _replay(messages, receive), send)
            return
        receive = _replay(messages, receive)
        if _accepts_event_stream(scope) and (_modern(scope) or _asks_for_progress(body)):
            await self.streaming.handle_request(scope, receive, send)
            return
        await self.manager.handle_request(with_json_accepted(scope), receive, send)


def judged_body(messages: list[Message], body: bytes, tools: Collection[str]) -> Response | Reread | None:
    """400 with the JSON-RPC error that answers a whole body which is no single valid message
    (wire.judge: -32700, or -32600 for a batch, a non-message or a request id of the wrong
    type), where the SDK would answer 202 or -32602 with a validation dump; a tool call refused
    for its arguments, or the message wire.judge reread for the SDK (wire.py); None for a body
    the SDK reads as it is. A body over the limit is left to the SDK (413)."""
    last = messages[-1] if messages else {}
    if last.get("type") != "http.request" or last.get("more_body") or len(body) > MAX_BODY_BYTES:
        return None
    judged = judge(body, tools) if body.strip() else parse_error()
    if isinstance(judged, Reread):
        return judged
    if isinstance(judged, JSONRPCResponse):  # a tool call refused for its arguments (wire.py)
        return JSONResponse(judged.model_dump(mode="json", by_alias=True, exclude_unset=True))
    if not isinstance(judged, JSONRPCError):
        return None
    return JSONResponse(judged.model_dump(mode="json", by_alias=True, exclude_unset=True), status_code=400)


BODY_TOO_LARGE = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": INVALID_PARAMS,
            "message": f"Request body too large: this endpoint takes at most {MAX_BODY_BYTES:,} bytes per "
            f"request. Send shorter arguments (a search query, pasted output included, is at most "
            f"{PASTE_CHARACTERS:,} characters).",
        },
    }
).encode()


def jsonrpc_error(
    status: int,
    message: str,
    headers: dict[str, str] | None = None,
    *,
    code: int = INVALID_REQUEST,
    data: dict[str, Any] | None = None,
    request_id: str | int | None = None,
) -> Response:
    """An HTTP refusal whose body is a JSON-RPC error object, which MCP clients can show; it
    carries the request's id when the body could be read."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = {"jsonrpc": "2.0", "id": request_id, "error": error}
    return JSONResponse(body, status_code=status, headers=headers)


def method_not_allowed(method: str) -> Response:
    return jsonrpc_error(
        405,
        f"Method Not Allowed: {method} is not supported on {ENDPOINT}; send MCP JSON-RPC with POST "
        "(stateless Streamable HTTP, no SSE stream).",
        {"Allow": ALLOWED_METHODS[ENDPOINT]},
    )


def event_stream_only() -> Response:
    return jsonrpc_error(
        406,
        "Not Acceptable: the client must accept both application/json and text/event-stream; "
        "send Accept: application/json, text/event-stream.",
    )


def unsupported_version(requested: str, request_id: Any = None) -> Response:
    """The spec's answer to an unknown revision (-32022 with `supported`), to a request without
    the 2026-07-28 envelope: a client that proposed a newer one picks one of these, where the SDK
    answered as if it were 2026-07-28 and asked for that revision's envelope."""
    data = UnsupportedProtocolVersionErrorData(supported=list(PROTOCOL_VERSIONS), requested=requested)
    return jsonrpc_error(
        400,
        UNSUPPORTED_VERSION,
        code=UNSUPPORTED_PROTOCOL_VERSION,
        data=data.model_dump(mode="json"),
        request_id=request_id
        if isinstance(request_id, str | int) and not isinstance(request_id, bool)
        else None,
    )


def body_limit_as_json(send: Send) -> Send:
    """The SDK answers an oversized body with a plain-text 413, which MCP clients can only report
    as an opaque internal error; answer the same 413 with a JSON-RPC error they can show."""
    replacing = False

    async def send_json_413(message: Message) -> None:
        nonlocal replacing
        if message["type"] == "http.response.start" and message["status"] == 413:
            replacing = True
            kept = [
                (name, value)
                for name, value in message.get("headers", [])
                if name not in (b"content-type", b"content-length")
            ]
            headers = [
                *kept,
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(BODY_TOO_LARGE)),
            ]
            await send({**message, "headers": headers})
        elif replacing and message["type"] == "http.response.body":
            if not message.get("more_body", False):
                await send({"type": "http.response.body", "body": BODY_TOO_LARGE})
        else:
            await send(message)

    return send_json_413


async def _read_body(receive: Receive) -> tuple[list[Message], bytes]:
    """The request's messages up to MAX_BODY_BYTES (the SDK refuses a longer body), and its body."""
    messages: list[Message] = []
    body = bytearray()
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        if not message.get("more_body") or len(body) > MAX_BODY_BYTES:
            break
    return messages, bytes(body)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        return pending.pop(0) if pending else await receive()

    return replayed


def _asks_for_progress(body: bytes) -> bool:
    """A JSON-RPC request whose params._meta has a progressToken."""
    if b"progressToken" not in body:
        return False
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return False
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and meta.get("progressToken") is not None


def _header(scope: Scope, name: bytes) -> bytes:
    return b", ".join(value for key, value in scope["headers"] if key == name)


def _unsupported_version(scope: Scope) -> str | None:
    """The first MCP-Protocol-Version value that names no revision the SDK speaks, if any."""
    versions = (
        value.decode("latin-1").strip() for key, value in scope["headers"] if key == b"mcp-protocol-version"
    )
    return next((version for version in versions if version not in PROTOCOL_VERSIONS), None)


def _request_of(body: bytes) -> dict[str, Any]:
    """The body's JSON-RPC object, or {} when it is none (wire.judge answers that)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return {}
    return message if isinstance(message, dict) else {}


def _enveloped(request: dict[str, Any]) -> bool:
    """The request carries the 2026-07-28 envelope (`_meta` with the protocol-version key)."""
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and PROTOCOL_VERSION_META_KEY in meta


def _modern(scope: Scope) -> bool:
    version = _header(scope, b"mcp-protocol-version").decode("latin-1").strip()
    return bool(version) and version not in HANDSHAKE_PROTOCOL_VERSIONS


def _accepts_event_stream(scope: Scope) -> bool:
    return b"text/event-stream" in _header(scope, b"accept").lower()


def _accepted_types(scope: Scope) -> set[bytes]:
    accept = _header(scope, b"accept")
    return {part.split(b";")[0].strip().lower() for part in accept.split(b",")} - {b""}


def _refuses_json(scope: Scope) -> bool:
    """Accept names text/event-stream and nothing that covers application/json."""
    types = _accepted_types(scope)
    return b"text/event-stream" in types and not types & {b"application/json", b"application/*", b"*/*"}


def with_json_accepted(scope: Scope) -> Scope:
    """The scope, with application/json added to an Accept header that lacks it."""
    values = [value for key, value in scope["headers"] if key == b"accept"]
    accept = b", ".join(values).strip()
    types = {part.split(b";")[0].strip().lower() for part in accept.split(b",")}
    if types & {b"application/json", b"application/*", b"*/*"}:
        return scope
    completed = accept + b", application/json" if accept else b"application/json"
    headers = [(key, value) for key, value in scope["headers"] if key != b"accept"]
    return {**scope, "headers": [*headers, (b"accept", completed)]}


class Guard:
    """Host and Origin checks for every path, CORS preflight and CORS response headers."""

    def __init__(self, app: ASGIApp, security: TransportSecuritySettings):
        self.app = app
        self.checks = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        malformed = malformed_header(scope["headers"])  # strict syntax first, then the allow-list
        if malformed is not None:
            await jsonrpc_error(*malformed)(scope, receive, send)
            return
        request = Request(scope)
        refusal = await self.checks.validate_request(request)  # the SDK's allow-lists: 421 or 403
        if refusal is not None:
            message = HOST_REFUSED if refusal.status_code == 421 else ORIGIN_REFUSED
            await jsonrpc_error(refusal.status_code, message)(scope, receive, send)
            return
        origin = request.headers.get("origin")
        allowed = ALLOWED_METHODS.get(scope["path"])
        if scope["method"] == "OPTIONS" and allowed is not None:
            headers = {
                "Allow": allowed,
                "Access-Control-Allow-Methods": allowed,
                "Access-Control-Allow-Headers": request.headers.get("access-control-request-headers")
                or CORS_HEADERS,
                "Access-Control-Max-Age": CORS_MAX_AGE,
            }
            if origin:
                headers |= {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
            await Response(status_code=204, headers=headers)(scope, receive, send)
            return
        if not origin:
            await self.app(scope, receive, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    (b"access-control-allow-origin", origin.encode("latin-1")),
                    (b"access-control-expose-headers", CORS_EXPOSE.encode()),
                    (b"vary", b"Origin"),
                ]
            await send(message)

        await self.app(scope, receive, send_with_cors)


def hosted_app(
    server: MCPServer[Any], services: Services, config: Config, tools: Sequence[tuple[str, str]]
) -> ASGIApp:
    """`server` (the adapter's hosted MCPServer, server/serve.py) behind the HTTP surface above;
    `tools` (name, title) are listed on the landing page."""
    server.middleware.append(GuidedParams())  # innermost: refused params answered with what to fix
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(config.allowed_hosts),
        allowed_origins=list(config.allowed_origins),
    )
    # Called for its session manager; the SDK's own routes are replaced by the table above.
    server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=security,
        max_request_body_size=MAX_BODY_BYTES,
    )
    manager = server.session_manager
    streaming = StreamableHTTPSessionManager(
        app=manager.app,
        json_response=False,
        stateless=True,
        security_settings=security,
        max_request_body_size=MAX_BODY_BYTES,
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # A mounted sub-app's lifespan never runs, so the managers are entered here.
        # hosting.operating loads the corpus (the first search answers at once) and takes the signals.
        async with manager.run(), streaming.run(), hosting.operating(services, config, metrics, state):
            try:
                yield
            finally:
                await services.fetcher.aclose()

    endpoint = McpEndpoint(manager, streaming, frozenset(name for name, _title in tools))
    routes = [
        Route("/", landing(tools), methods=["GET", "HEAD"]),
        Route(ENDPOINT, endpoint),
        # /mcp/ too: Starlette would redirect it (307) to an absolute http:// URL, which behind a
        # TLS terminator sends the client's POST back over cleartext
        Route(f"{ENDPOINT}/", endpoint),
    ]
    guarded = Guard(Starlette(routes=routes, lifespan=lifespan), security)
    state = Lifecycle()  # this app's (one worker process's): draining or not, calls in flight
    app, metrics = hosting.operated(guarded, server, services, [name for name, _title in tools], state)
    return app


def warn_on_default_hosts(config: Config, host: str) -> None:
    """A public bind with the loopback-only Host allowlist would answer every request 421: say so."""
    if host not in ("127.0.0.1", "localhost", "::1") and config.allowed_hosts == DEFAULT_ALLOWED_HOSTS:
        logging.getLogger(__name__).warning(
            "serving on %s, but only these Host headers are accepted: %s; add yours with --allow-host",
            host,
            ", ".join(config.allowed_hosts),
        )

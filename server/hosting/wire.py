"""One JSON-RPC message read and judged before the SDK sees it, the same way on stdio and HTTP.

The SDK reads a request whose id is not a string or an integer (null, true, 1.5, {}) as a
notification, because the notification model ignores unknown keys, so nobody answers it; and
over HTTP it answers a batch or a non-message with -32602 and a pydantic validation dump.
`judge` answers those itself, per JSON-RPC 2.0 and MCP:

    not JSON (or not UTF-8)                     -32700 Parse error, id null
    JSON the SDK's parser refuses: a lone UTF-16 -32602 (a surrogate) or -32600 (too deep), with
    surrogate outside a tool's arguments, or    its id: the client matches the answer to its
    nesting past ~200 levels                    call (readable_refusal)
    a batch (a JSON array)                      -32600 Invalid Request: MCP has no batches
    JSON that is not a message                  -32600 Invalid Request, with the id when one
                                                can be read, else null
    a request whose id is not a string/integer  -32600 Invalid Request, id null
    a blank message                             None: nothing to answer
    a tools/call whose arguments carry a lone   the tool's invalid_arguments result, naming the
    UTF-16 surrogate escape ("\\ud800")           argument: the JSON is well formed, its text is no
                                                Unicode, and the tool is not run; for a name no
                                                tool has, the call without its arguments, for
                                                the session (a Reread): it answers unknown_tool,
                                                as to the name alone, and counts the call
    anything else                               the message as a SessionMessage, for the SDK's
                                                session (a client's own error response too)

The stdio reader (stdio.py) and the hosted endpoint (http.py) both call it, with the names of
the tools their server has; neither message text carries a library's wording.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.tool_results import error_result

INVALID_MESSAGE = (
    'Invalid Request: not a JSON-RPC 2.0 message; send one object with "jsonrpc": "2.0", a '
    'string "method" and, for a request, a string or integer "id"'
)
INVALID_ID = "Invalid Request: a request id must be a string or an integer"
BATCH_REFUSED = "Invalid Request: MCP does not take JSON-RPC batches (arrays); send each message on its own"


class Reread(SessionMessage):
    """A message for the session that the SDK could not read as it was sent: the HTTP endpoint
    hands the SDK this message instead of the body."""


def judge(raw: bytes | str, tools: Collection[str]) -> SessionMessage | JSONRPCError | JSONRPCResponse | None:
    """The message in `raw` for the SDK's session, the error that answers it, or None for a
    blank one. A client's own error response is a SessionMessage, never an answer. `tools`:
    the names of the tools the server has."""
    if not raw.strip():
        return None
    try:
        message = jsonrpc_message_adapter.validate_json(raw, by_name=False)
    except ValidationError as error:
        return lone_surrogate_call(raw, tools) or error_for(raw, error)
    except ValueError:  # unreadable in some way pydantic does not wrap
        return parse_error()
    if isinstance(message, JSONRPCNotification) and _has_id(raw):
        return invalid_request(INVALID_ID)
    return SessionMessage(message)


def error_for(raw: bytes | str, error: ValidationError) -> JSONRPCError:
    errors = error.errors()
    if any(item["type"] == "json_invalid" for item in errors):
        return readable_refusal(raw) or parse_error()
    if raw.lstrip()[:1] in ("[", b"["):
        return invalid_request(BATCH_REFUSED)
    return invalid_request(INVALID_MESSAGE, _request_id(errors))


def parse_error(message: str = "Parse error") -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=PARSE_ERROR, message=message))


def invalid_request(message: str, request_id: str | int | None = None) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=INVALID_REQUEST, message=message))


def _has_id(raw: bytes | str) -> bool:
    """Whether a message the SDK read as a notification carried an "id" member (of a type it dropped)."""
    text = raw if isinstance(raw, str) else raw.decode("utf-8", errors="replace")
    if '"id"' not in text:  # the common notification: no second parse
        return False
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return False
    return isinstance(message, dict) and "id" in message


def _request_id(errors: list[Any]) -> str | int | None:
    for error in errors:
        message = error.get("input")
        if isinstance(message, dict):
            request_id = message.get("id")
            if isinstance(request_id, str | int) and not isinstance(request_id, bool):
                return request_id
    return None


_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
LONE_SURROGATE_TEXT = (
    "holds a lone UTF-16 surrogate escape (\\ud800-\\udfff alone), which is no Unicode character. Send "
    "the text as UTF-8, or escape a character outside the BMP as its surrogate pair"
)
TOO_DEEP = "Invalid Request: the message nests deeper than this server reads (about 200 levels)"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def readable_refusal(raw: bytes | str) -> JSONRPCError | None:
    """A request the SDK's parser refused whole that JSON itself reads, answered with its id, so
    the client can match the answer to its call: a lone surrogate escape outside a tool's
    arguments (-32602, saying what to send), or nesting past the parser's depth (-32600). None
    for text that is not JSON (NaN and Infinity included) or a message with no usable id: a
    parse error."""
    try:
        message = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    request_id = message.get("id")
    if (
        not isinstance(request_id, str | int)
        or isinstance(request_id, bool)
        or _LONE_SURROGATE.search(str(request_id))
    ):
        return None
    try:
        dumped = json.dumps(message, ensure_ascii=False)
    except RecursionError:
        dumped = None
    if dumped is not None and _LONE_SURROGATE.search(dumped):
        method = message.get("method")
        shown = (
            f"{method} request"
            if isinstance(method, str) and not _LONE_SURROGATE.search(method)
            else "request"
        )
        text = f"Invalid params: the {shown[:80]} {LONE_SURROGATE_TEXT}."
        return JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=INVALID_PARAMS, message=text))
    return invalid_request(TOO_DEEP, request_id)


def lone_surrogate_call(raw: bytes | str, tools: Collection[str]) -> JSONRPCResponse | Reread | None:
    """The invalid_arguments answer to a tools/call whose argument text holds a lone surrogate
    escape: JSON's grammar admits "\\ud800", Unicode does not, and the SDK's parser refuses the
    whole message (a parse error would blame the client's JSON, not the one argument). A call to
    a tool not in `tools` is reread without its arguments, so the session answers and counts it
    as it does the name alone: the name is what is wrong first. None for any other message: a
    lone surrogate anywhere else stays a parse error."""
    try:
        message = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if (
        not isinstance(message, dict)
        or message.get("jsonrpc") != "2.0"
        or message.get("method") != "tools/call"
    ):
        return None
    request_id, params = message.get("id"), message.get("params")
    if not isinstance(request_id, str | int) or isinstance(request_id, bool) or not isinstance(params, dict):
        return None
    name, arguments = params.get("name"), params.get("arguments")
    if not isinstance(name, str) or len(name) > 128 or _LONE_SURROGATE.search(name):
        return None
    if not isinstance(arguments, dict):
        return None
    outside = {key: value for key, value in message.items() if key != "params"}
    outside_params = {key: value for key, value in params.items() if key != "arguments"}
    if _LONE_SURROGATE.search(json.dumps([outside, outside_params], ensure_ascii=False)):
        return None
    refused = sorted(
        ascii(key)[:130]
        for key, value in arguments.items()
        if _LONE_SURROGATE.search(json.dumps([key, value], ensure_ascii=False))
    )[:10]
    if not refused:
        return None
    if name not in tools:
        call = JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call", params=outside_params)
        return Reread(call)
    result = error_result(
        ErrorCode.INVALID_ARGUMENTS,
        f"{name} was not run: invalid arguments: {', '.join(refused)}: the text {LONE_SURROGATE_TEXT}.",
    )
    return JSONRPCResponse(
        jsonrpc="2.0", id=request_id, result=result.model_dump(mode="json", by_alias=True, exclude_none=True)
    )

"""One JSON-RPC message read and judged before the SDK sees it, the same way on stdio and HTTP.

The SDK reads a request whose id is not a string or an integer (null, true, 1.5, {}) as a
notification, because the notification model ignores unknown keys, so nobody answers it; and
over HTTP it answers a batch or a non-message with -32602 and a pydantic validation dump.
`judge` answers those itself, per JSON-RPC 2.0 and MCP:

    not JSON (or not UTF-8)                     -32700 Parse error, id null
    JSON the SDK's parser refuses: a lone UTF-16 -32602 (a surrogate) or -32600 (too deep, or a
    surrogate outside a tool's arguments,       number too long), with its id: the client matches
    nesting past ~200 levels, or an integer of  the answer to its call (readable_refusal; past
    over 4,300 digits                           Python's own depth, up to 64 KiB of message)
    more arrays and objects than any tool takes -32600 (with the id an object writes before its
    (MAX_CONTAINERS, counted before parsing)    first nested value; a batch's answer for an array):
                                                each layer would build them again
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
    if _containers(raw) > MAX_CONTAINERS:
        return _too_many_values(raw)
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


SHALLOW_CHARACTERS = 64 * 1024  # about 15 ms of skipping; a deep request is rarely longer
# Arrays and objects a message may hold, counted as its bracket characters (strings' own
# included, so the count is an upper bound), before anything parses it: every layer (the SDK's
# parser and models, the tool's arguments) builds each value again, about a second of CPU per MB
# of `[],` (audit 11). The largest message a tool takes, a scaffold of 50 methods of 20 parameters,
# holds about 1,200.
MAX_CONTAINERS = 20_000
TOO_MANY_VALUES = (
    f"Invalid Request: the message holds more than {MAX_CONTAINERS:,} JSON arrays and objects; no tool "
    "takes that many: send only the arguments the tool's schema names"
)
_LEADING_ID = re.compile(r'"id"\s*:\s*("(?:[^"\\\x00-\x1f]|\\.){0,200}"|-?\d{1,18})\s*[,}]')


def _too_many_values(raw: bytes | str) -> JSONRPCError:
    """The answer to a message of more than MAX_CONTAINERS arrays and objects, read no further: an
    object's (with the id it writes first), an array's (MCP has no batches, whatever it holds), a
    parse error for anything else. A byte order mark before it is looked past."""
    if isinstance(raw, bytes):
        first: bytes | str = raw.lstrip()[:4].removeprefix(b"\xef\xbb\xbf").lstrip()[:1]
    else:
        first = raw.lstrip()[:2].removeprefix("\ufeff").lstrip()[:1]
    if first in ("{", b"{"):
        return invalid_request(TOO_MANY_VALUES, _leading_id(raw))
    if first in ("[", b"["):
        return invalid_request(BATCH_REFUSED)
    return parse_error()


def _containers(raw: bytes | str) -> int:
    if isinstance(raw, bytes):
        return raw.count(b"[") + raw.count(b"{")
    return raw.count("[") + raw.count("{")


def _leading_id(raw: bytes | str) -> str | int | None:
    """The id of a message that writes it before its first nested value (`{"jsonrpc": "2.0",
    "id": 7, "method": ...`), read without parsing the rest; None when it comes later."""
    head = raw[:4096] if isinstance(raw, str) else raw[:4096].decode("utf-8", errors="replace")
    opening = head.find("{")
    nested = min((at for at in (head.find("{", opening + 1), head.find("[")) if at >= 0), default=len(head))
    found = _LEADING_ID.search(head, 0, nested)
    if found is None:
        return None
    try:
        request_id = json.loads(found.group(1))
    except ValueError:
        return None
    return request_id if _answerable_id(request_id) else None


TOO_LONG_NUMBER = (
    "Invalid Request: the message holds an integer of more than 4,300 digits, more than this server "
    "reads; send it as a string"
)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unread_refusal(raw: bytes | str, text: str) -> JSONRPCError | None:
    """-32600 `text` with the id of a message JSON's grammar admits but Python's parser cannot
    hold whole: its top-level members are read, the others only skipped. None when it is no
    well-formed request object, or longer than SHALLOW_CHARACTERS: the skipping is Python's own
    work, and a parse error costs a hostile sender the same as it costs the server."""
    if len(raw) > SHALLOW_CHARACTERS:
        return None
    fields = shallow_members(raw if isinstance(raw, str) else raw.decode("utf-8", errors="replace"))
    if fields is None or fields.get("jsonrpc") != "2.0":
        return None
    request_id = fields.get("id")
    return invalid_request(text, request_id) if _answerable_id(request_id) else None


def _answerable_id(request_id: Any) -> bool:
    """A string or an integer id (not a boolean) with no lone surrogate: one an answer can carry."""
    return (
        isinstance(request_id, str | int)
        and not isinstance(request_id, bool)
        and not _LONE_SURROGATE.search(str(request_id))
    )


_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_SPACE = re.compile(r"[ \t\n\r]*")
_READ_MEMBERS = frozenset({"jsonrpc", "id", "method"})


def shallow_members(text: str) -> dict[str, Any] | None:
    """jsonrpc, id and method of the JSON object `text`, every other member's value checked
    against JSON's grammar and skipped without being built (no recursion, no int conversion).
    None when `text` is not one well-formed JSON object."""
    at = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    if text[at : at + 1] != "{":
        return None
    at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    members: dict[str, Any] = {}
    if text[at : at + 1] == "}":
        return members if not text[at + 1 :].strip(" \t\n\r") else None
    while True:
        key = _STRING.match(text, at)
        if key is None:
            return None
        at = _SPACE.match(text, key.end()).end()  # type: ignore[union-attr]
        if text[at : at + 1] != ":":
            return None
        at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
        name = json.loads(key.group())
        start, at = at, _skip_value(text, at)
        if at < 0:
            return None
        if name in _READ_MEMBERS:
            try:
                members[name] = json.loads(text[start:at])
            except (ValueError, RecursionError):
                return None
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
        if text[at : at + 1] == "}":
            return members if not text[at + 1 :].strip(" \t\n\r") else None
        if text[at : at + 1] != ",":
            return None
        at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]


def _past_key(text: str, at: int) -> int:
    """Where the value after the member name at `at` (a string, then a colon) starts; -1 if none."""
    key = _STRING.match(text, at)
    if key is None:
        return -1
    at = _SPACE.match(text, key.end()).end()  # type: ignore[union-attr]
    return at + 1 if text[at : at + 1] == ":" else -1


def _skip_value(text: str, at: int) -> int:
    """Where the JSON value at `at` ends, or -1 when it is not one; nesting is counted, not recursed."""
    closers: list[str] = []
    expect_value = True
    while True:
        at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
        char = text[at : at + 1]
        if expect_value:
            if char in ("{", "["):
                closers.append("}" if char == "{" else "]")
                at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
                if text[at : at + 1] == closers[-1]:
                    closers.pop()
                    at += 1
                    expect_value = False
                    if not closers:
                        return at
                    continue
                if closers[-1] == "}":
                    at = _past_key(text, at)
                    if at < 0:
                        return -1
                continue
            found = _STRING.match(text, at) or _SCALAR.match(text, at)
            if found is None:
                return -1
            at, expect_value = found.end(), False
            if not closers:
                return at
            continue
        if char == ",":
            at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
            if closers[-1] == "}":
                at = _past_key(text, at)
                if at < 0:
                    return -1
            expect_value = True
            continue
        if char == closers[-1]:
            closers.pop()
            at += 1
            if not closers:
                return at
            continue
        return -1


def readable_refusal(raw: bytes | str) -> JSONRPCError | None:
    """A request the SDK's parser refused whole that JSON itself reads, answered with its id, so
    the client can match the answer to its call: a lone surrogate escape outside a tool's
    arguments (-32602, saying what to send), or nesting past the parser's depth (-32600). None
    for text that is not JSON (NaN and Infinity included) or a message with no usable id: a
    parse error."""
    try:
        message = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:  # deeper than Python's own parser goes (about 1,000 levels)
        return _unread_refusal(raw, TOO_DEEP)
    except ValueError as error:
        if "integer string conversion" in str(error):  # a number of more than 4,300 digits
            return _unread_refusal(raw, TOO_LONG_NUMBER)
        return None
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    request_id = message.get("id")
    if not _answerable_id(request_id):
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

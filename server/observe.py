"""Observability: the stderr logging set-up, the per-call JSON line, diagnostics to the client.

    configure_logging(level)   stderr at the user's level (IMQUEUE_MCP_LOG_LEVEL, --log-level);
                               the server's own loggers record everything, so a client may ask
                               for more detail than stderr shows
    log_tool_call(...)         one JSON line per tool call on stderr (logger "server.calls", INFO)
    collecting(records)        the server's log records emitted during one tool call, gathered
                               for app.py to send as notifications/message
    mcp_level / python_level   the MCP and Python level scales, one onto the other

The JSON line (keys stable, documented in the README):

    {"event": "tool_call", "tool": "search_docs", "durationMs": 12.3, "isError": false,
     "errorCode": null, "resultCount": 6, "client": {"name": "...", "version": "..."},
     "protocol": "2025-11-25"}

stdout is never written: on stdio it is the protocol channel.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from mcp_types import CallToolResult, LoggingLevel

from imqueue_mcp.server.tool_results import error_of

# The package's loggers (each module's __name__): what a client may ask to hear. Named after the
# import name, so a module's records reach the collector: under another name they never do.
SERVER_LOGGER = "imqueue_mcp.server"
CALLS_LOGGER = "server.calls"
STDERR_FORMAT = "imqueue-mcp %(levelname)s %(name)s: %(message)s"


# MCP's syslog scale -> the Python level a record needs to reach it.
_PYTHON_LEVELS: dict[LoggingLevel, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 10,
    "emergency": logging.CRITICAL + 20,
}


def python_level(mcp_level: LoggingLevel) -> int:
    return _PYTHON_LEVELS[mcp_level]


def mcp_level(levelno: int) -> LoggingLevel:
    """The MCP level of a Python record: the highest MCP level it reaches."""
    reached = [name for name, number in _PYTHON_LEVELS.items() if levelno >= number]
    return reached[-1] if reached else "debug"


_collected: ContextVar[list[logging.LogRecord] | None] = ContextVar("imqueue_mcp_records", default=None)


class _Collector(logging.Handler):
    """Appends each record to the list of the tool call it was emitted in, if any."""

    def emit(self, record: logging.LogRecord) -> None:
        records = _collected.get()
        if records is not None:
            records.append(record)


@contextlib.contextmanager
def collecting(records: list[logging.LogRecord]) -> Iterator[None]:
    token = _collected.set(records)
    try:
        yield
    finally:
        _collected.reset(token)


SDK_TRANSPORT_LOGGER = "mcp.server.streamable_http"


def configure_logging(level: str) -> None:
    """stderr at `level` for everything; the server's records all reach the client collector."""
    root = logging.getLogger()
    if not any(getattr(handler, "_imqueue_mcp", False) for handler in root.handlers):
        stderr = logging.StreamHandler(sys.stderr)
        stderr.setFormatter(logging.Formatter(STDERR_FORMAT))
        stderr._imqueue_mcp = True  # type: ignore[attr-defined]
        root.addHandler(stderr)
        collector = _Collector(logging.DEBUG)
        logging.getLogger(SERVER_LOGGER).addHandler(collector)
        calls = logging.StreamHandler(sys.stderr)
        calls.setFormatter(logging.Formatter("%(message)s"))  # the line is JSON, nothing around it
        calls._imqueue_mcp = True  # type: ignore[attr-defined]
        calls_logger = logging.getLogger(CALLS_LOGGER)
        calls_logger.addHandler(calls)
        calls_logger.propagate = False  # neither a second stderr copy nor a client notification
    for handler in [*root.handlers, *logging.getLogger(CALLS_LOGGER).handlers]:
        if getattr(handler, "_imqueue_mcp", False):
            handler.setLevel(level)
    root.setLevel(level)  # the SDK and libraries: only what the user asked to see
    logging.getLogger(SERVER_LOGGER).setLevel(logging.DEBUG)  # ours: what a client may ask for too
    # The SDK's transport says each request's end at INFO ("Terminating session: None", for every
    # stateless HTTP request): at INFO that was most of a fleet's log. Shown from DEBUG on.
    chatty = logging.DEBUG if logging.getLevelName(level) == logging.DEBUG else logging.WARNING
    logging.getLogger(SDK_TRANSPORT_LOGGER).setLevel(chatty)


LOGGED_CHARACTERS = 200  # of a value a client chose, in a log line


def logged(text: str, limit: int = LOGGED_CHARACTERS) -> str:
    """A value a client chose (a tool name, a message quoting its arguments) as a log line may hold
    it: escaped (a line break cannot forge a line of its own) and cut to `limit` characters (a
    900 kB tool name is not written whole)."""
    cut = text if len(text) <= limit else f"{text[:limit]}..."
    return ascii(cut)[1:-1]


def result_count(structured: Any) -> int | None:
    """How many things a result holds, where that means something (hits, packages, files)."""
    if not isinstance(structured, dict) or "error" in structured:
        return None
    if isinstance(structured.get("count"), int):
        return int(structured["count"])
    for key in ("packages", "files"):
        if isinstance(structured.get(key), list):
            return len(structured[key])
    return None


def log_tool_call(name: str, result: Any, request: Any, seconds: float) -> None:
    """The per-call JSON line (at INFO) for the call of tool `name` that gave `result` in `seconds`,
    made by `request` (the SDK's request context: its client and protocol; None when unknown)."""
    calls = logging.getLogger(CALLS_LOGGER)
    if not calls.isEnabledFor(logging.INFO):
        return
    is_error = isinstance(result, CallToolResult) and bool(result.is_error)
    detail = error_of(result) if isinstance(result, CallToolResult) else None
    params = request.session.client_params if request is not None else None
    client_info = params.client_info if params is not None else None
    line = {
        "event": "tool_call",
        "tool": name if len(name) <= LOGGED_CHARACTERS else f"{name[:LOGGED_CHARACTERS]}...",
        "durationMs": round(seconds * 1000, 1),
        "isError": is_error,
        "errorCode": detail.get("code") if detail else None,
        "resultCount": None if is_error else result_count(getattr(result, "structured_content", None)),
        "client": {
            "name": client_info.name if client_info else None,
            "version": client_info.version if client_info else None,
        },
        "protocol": request.protocol_version if request is not None else None,
    }
    calls.info(json.dumps(line, ensure_ascii=False, separators=(",", ":")))

"""What the hosted endpoint keeps to itself: the operator's origins, snapshot and folders.

A local server tells its user everything (the paths are the user's own). A hosted one answers
anonymous clients, and its guided errors and diagnostics would otherwise name where its mirror
lives (`--origin imqueue.org=http://10.0.0.5:8080`), the snapshot it follows, and its file
paths. Redactor rewrites every string a hosted tool result or log notification carries:

    a mirror origin URL      -> the canonical site it stands for (https://imqueue.org)
    the followed snapshot URL -> "the published snapshot"
    the snapshot path        -> "the server's snapshot" (an older version's pages file beside
                                it: "the server's saved pages")
    its folder, $HOME        -> "the server's cache folder", "~"

Longest first, so a path inside the cache folder is named as the snapshot, not half-rewritten.
The operator still sees everything on stderr.

A tool call's result is rewritten where it is made (app.ImqueueServer._call_tool, with its own
types); RedactingMiddleware rewrites every other answer and every error: resources/read (a page's
`_meta` source, the catalogue's), resources/list, prompts, completions.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, CallToolResult, TextContent
from pydantic import ValidationError

from imqueue_mcp.docsource import pages as source_pages
from imqueue_mcp.server.config import Config

logger = logging.getLogger(__name__)


class Redactor:
    def __init__(self, config: Config, snapshot_path: Path):
        pairs: dict[str, str] = {}
        for host, url in config.origin_overrides.items():
            pairs[url.rstrip("/")] = f"https://{host}"
        if config.snapshot_url is not None:
            pairs[config.snapshot_url] = "the published snapshot"
        for path, name in (
            (snapshot_path, "the server's snapshot"),
            (source_pages.pages_path(snapshot_path), "the server's saved pages"),  # an older version's
            (snapshot_path.parent, "the server's cache folder"),
        ):
            pairs[str(path)] = name
            pairs[str(path.resolve())] = name
        home = os.environ.get("HOME", "")
        if len(home) > 1:
            pairs[home.rstrip("/")] = "~"
        self._pairs = sorted(((k, v) for k, v in pairs.items() if k), key=lambda kv: -len(kv[0]))
        # each secret as it reads inside a JSON string: JSON escapes character by character, so a
        # string holding a secret holds its escaped form once dumped
        self._escaped = [json.dumps(secret, ensure_ascii=False)[1:-1] for secret, _ in self._pairs]

    def text(self, value: str) -> str:
        for secret, shown in self._pairs:
            if secret in value:
                value = value.replace(secret, shown)
        return value

    def value(self, value: Any) -> Any:
        """Every string inside a JSON-like value, rewritten (keys included).

        Most answers name none of the secrets (tools/list is 54 kB of our own schemas): one dump
        in C and a substring test per secret tell, where walking every string cost 6 ms a list.
        A value that is not plain JSON is walked."""
        try:
            dumped = json.dumps(value, ensure_ascii=False, check_circular=False)
        except (TypeError, ValueError, RecursionError):
            return _walk(value, self.text)
        if not any(secret in dumped for secret in self._escaped):
            return value
        return _walk(value, self.text)

    def middleware(self) -> RedactingMiddleware:
        return RedactingMiddleware(self)

    def result(self, result: CallToolResult) -> CallToolResult:
        content = [
            block.model_copy(update={"text": self.text(block.text)})
            if isinstance(block, TextContent)
            else block
            for block in result.content
        ]
        update: dict[str, Any] = {"content": content}
        if result.structured_content is not None:
            update["structured_content"] = self.value(result.structured_content)
        return result.model_copy(update=update)


class RedactingMiddleware:
    """Every answer but a tool call's, and every error, with the operator's places rewritten.

    An exception that is neither an MCP error nor a refused parameter (the SDK answers those
    itself, with no text of ours) would reach the wire as its own text; it is logged here and
    answered as an internal error, its text rewritten too."""

    def __init__(self, redactor: Redactor):
        self.redactor = redactor

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            result = await call_next(ctx)
        except MCPError as error:
            raise MCPError(
                error.code, self.redactor.text(error.message), self.redactor.value(error.data)
            ) from None
        except ValidationError:
            raise
        except Exception as error:
            logger.exception("%s failed", ctx.method)
            raise MCPError(INTERNAL_ERROR, self.redactor.text(str(error))) from None
        if ctx.method == "tools/call" or result is None:
            return result  # a tool's result is rewritten where it is made, in its own types
        wire = (
            result
            if isinstance(result, dict)
            else result.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
        redacted: dict[str, Any] = self.redactor.value(wire)
        return redacted


def _walk(value: Any, rewrite: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, dict):
        return {_walk(k, rewrite): _walk(v, rewrite) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, rewrite) for v in value]
    return value

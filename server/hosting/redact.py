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
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_types import CallToolResult, TextContent

from imqueue_mcp.docsource import pages as source_pages
from imqueue_mcp.server.config import Config


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

    def text(self, value: str) -> str:
        for secret, shown in self._pairs:
            if secret in value:
                value = value.replace(secret, shown)
        return value

    def value(self, value: Any) -> Any:
        """Every string inside a JSON-like value, rewritten (keys included)."""
        return _walk(value, self.text)

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


def _walk(value: Any, rewrite: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, dict):
        return {_walk(k, rewrite): _walk(v, rewrite) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, rewrite) for v in value]
    return value

"""What a hosted client hears of what only the local server has: the tools that act on the user's
machine (the imq bridge, the project tools) and the pages the operator did not save.

The answers the two servers share name the local tools where they are the next step (a scaffold
names generate_client; a diagnosis, create_service or inspect_project). A hosted client cannot
call them, and a bare "no tool named ..." would be a dead end; nor can it rebuild or restart the
operator's server. HostedSurface, handed in by the composition root (serve.py), words both:

    tool_result(name, arguments, result)  a hosted get_doc of a page with no saved copy, said in
                                          the URL's words; an answer naming local-only tools,
                                          one more text block saying whose they are
    refusal(name)                         a call of a local-only tool: whose it is, and
                                          local_install_guide; None for any other name
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from mcp_types import CallToolResult, TextContent

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.tool_results import error_of, error_result


class HostedSurface:
    def __init__(self, local_only: Collection[str]):
        self.local_only = frozenset(local_only)
        # made once: every hosted tool result is read for these names. Only the names no prose uses
        # (generate_client, not config, fleet or logs, which are words too)
        names = "|".join(sorted(re.escape(n) for n in self.local_only if "_" in n)) or r"(?!)"
        self._named = re.compile(rf"(?<![\w-])({names})(?![\w-])")

    def tool_result(self, name: str, arguments: dict[str, Any], result: CallToolResult) -> CallToolResult:
        if name == "get_doc":
            result = unsaved_page(arguments, result)
        return self.pointer(result)

    def pointer(self, result: CallToolResult) -> CallToolResult:
        """The result, and when its text names local-only tools, a note on whose they are."""
        named: list[str] = []
        for block in result.content:
            if isinstance(block, TextContent):
                named += self._named.findall(block.text)
        named = list(dict.fromkeys(named))
        if not named:
            return result
        which = "is a tool" if len(named) == 1 else "are tools"
        note = (
            f"Note: {', '.join(named)} {which} of the local imqueue-mcp server, which runs on the user's "
            "machine, not of this hosted endpoint: local_install_guide says how to add it. Here, give "
            "the user the imq commands shown to run themselves."
        )
        return result.model_copy(update={"content": [*result.content, TextContent(type="text", text=note)]})

    def refusal(self, name: str) -> CallToolResult | None:
        if name not in self.local_only:
            return None
        return error_result(
            ErrorCode.UNKNOWN_TOOL,
            f"{name} is a tool of the local imqueue-mcp server (it acts on the user's machine); this "
            "hosted endpoint has only the read-only tools tools/list names.",
            "Call local_install_guide for how to run the local server, or use the command scaffold_client "
            "and scaffold_service give, run by the user.",
        )


def unsaved_page(arguments: dict[str, Any], result: CallToolResult) -> CallToolResult:
    """get_doc's offline error (a page with no saved copy), without the operator's flags, files and
    advice to rebuild or restart, which are theirs."""
    detail = error_of(result)
    if detail is None or detail.get("code") != ErrorCode.OFFLINE.value:
        return result
    url = str(arguments.get("url", "the page"))[:300]
    return error_result(
        ErrorCode.OFFLINE,
        f"{url} has no saved copy here: this endpoint answers from its docs snapshot and the pages saved "
        "with it.",
        "Call search_docs: its passages quote what the docs say, and the pages it finds can be read.",
    )

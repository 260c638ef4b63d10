"""The most a tool's reply may hold, whatever its arguments: the documented maximum (SECURITY.md).

A reply is the JSON of the tool's result (text and structuredContent, which carries the same
facts again). It is at most REPLY_BYTES[tool] plus four times the request's own bytes: a
scaffold repeats the names and descriptions it is given (in the code, the client example and
the text), nothing else repeats its request. tests/test_fuzz_tools.py holds every tool to it
on the real servers. Where each bound comes from:

    get_doc          the page part: MAX_DOC_BYTES (200,000) of markdown, in the text and again in
                     structuredContent, JSON-escaped, plus the outline and the source
    search_docs,     20 hits (10 examples) with passages of at most MAX_REPLY_TOKENS (20,000
    find_examples    tokens, 80 kB) in all, twice, plus titles, descriptions and URLs
    bridge tools     imq's output, capped at 64 kB per stream (runner.OUTPUT_CAP_BYTES), JSON-
                     escaped, plus the bridge's own notes; generate_client also returns the
                     generated file, at most MAX_CLIENT_BYTES (2 MiB), twice
    get_api          one declaration (a signature and its doc comment, as a .d.ts of at most 2 MB
                     holds them), the docs' record of it (a summary, a declaration cut at 400
                     characters), 8 nearest names, 20 problems, the packages read, twice
    api_diff         at most 100 entries in each of its four lists (api_diff.MAX_LISTED), each
                     declaration cut at 400 characters (MAX_SIGNATURE_CHARS), summaries and URLs as
                     the docs give them, 20 problems and unread notes, twice (text and structure)
    inspect_project  at most 100 packages, 20 copies each, 20 problems, each value cut at 214
                     characters (project/reader.py), the findings they give, twice
    the rest         fixed text, or text of the size of their arguments
"""

from __future__ import annotations

from imqueue_mcp.server.docs.budget import MAX_DOC_BYTES
from imqueue_mcp.server.imq.generated_client import MAX_CLIENT_BYTES

KB = 1024
REQUEST_FACTOR = 4

REPLY_BYTES: dict[str, int] = {
    "search_docs": 256 * KB,
    "get_doc": 2 * MAX_DOC_BYTES + 128 * KB,
    "find_examples": 256 * KB,
    "list_packages": 64 * KB,
    "package_status": 64 * KB,
    "scaffold_service": 64 * KB,
    "scaffold_client": 64 * KB,
    "local_install_guide": 16 * KB,
    "cli_status": 1024 * KB,
    "cli_install": 1024 * KB,
    "cli_help": 1024 * KB,
    "create_service": 1024 * KB,
    "generate_client": 2 * MAX_CLIENT_BYTES + 1024 * KB,
    "fleet": 1024 * KB,
    "config": 1024 * KB,
    "logs": 1024 * KB,
    "inspect_project": 512 * KB,
    "get_api": 256 * KB,
    "api_diff": 1024 * KB,
}


def reply_limit(tool: str, request_bytes: int) -> int:
    """The most bytes a reply of `tool` to a request of `request_bytes` may hold."""
    return REPLY_BYTES[tool] + REQUEST_FACTOR * request_bytes

"""Guided tool errors: one table of stable error codes, each with the next step for an agent.

Every tool error leaves the server the same way: `isError: true`, a text block that says
what happened and then what to do next, and `structuredContent.error` with

    {"code": <ErrorCode>, "message": <what happened>, "suggestedAction": <what to do next>}

The codes are stable API (the README lists them): an agent or a host may branch on them.
A code's default next step is in ACTIONS; a caller that knows better (the imq bridge knows
which flag was missing) passes its own. Tools that publish an outputSchema publish it as
"the result, or {error}", so an error result conforms to it too.

This module knows no MCP transport and no tool: the domain packages name their failures with
these codes, and the adapter (server/tool_results.py) turns a code into the isError result.
"""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    INVALID_ARGUMENTS = "invalid_arguments"
    UNKNOWN_TOOL = "unknown_tool"
    URL_REFUSED = "url_refused"
    PAGE_NOT_FOUND = "page_not_found"
    SITE_UNREACHABLE = "site_unreachable"
    OFFLINE = "offline"
    CORPUS_UNAVAILABLE = "corpus_unavailable"
    UNKNOWN_PACKAGE = "unknown_package"
    FACTS_UNAVAILABLE = "facts_unavailable"
    INVALID_SCAFFOLD_INPUT = "invalid_scaffold_input"
    IMQ_NOT_INSTALLED = "imq_not_installed"
    NPM_NOT_INSTALLED = "npm_not_installed"
    ARGUMENT_REFUSED = "argument_refused"
    INTERACTIVE_ONLY = "interactive_only"
    IMQ_FAILED = "imq_failed"
    IMQ_TIMED_OUT = "imq_timed_out"
    BROKER_UNREACHABLE = "broker_unreachable"
    SERVICE_NOT_ANSWERING = "service_not_answering"
    INTERNAL_ERROR = "internal_error"


# What happened (for the README) and the default next step, code by code.
MEANINGS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_ARGUMENTS: "the arguments do not match the inputSchema (unknown, missing or wrong)",
    ErrorCode.UNKNOWN_TOOL: "no tool has that name on this server",
    ErrorCode.URL_REFUSED: "get_doc was given a URL outside https://imqueue.org/ and https://imqueue.com/",
    ErrorCode.PAGE_NOT_FOUND: "the site has no page at that URL (HTTP 404)",
    ErrorCode.SITE_UNREACHABLE: "the site did not answer, or answered with an HTTP error",
    ErrorCode.OFFLINE: "the server runs with --offline and the saved pages have no copy",
    ErrorCode.CORPUS_UNAVAILABLE: "no docs corpus: the live sites failed and there is no usable snapshot",
    ErrorCode.UNKNOWN_PACKAGE: "the package name is not an @imqueue package",
    ErrorCode.FACTS_UNAVAILABLE: "imqueue.org/status.json (package versions, licences) could not be read",
    ErrorCode.INVALID_SCAFFOLD_INPUT: "a service, method, parameter or type name cannot be scaffolded",
    ErrorCode.IMQ_NOT_INSTALLED: "the imq CLI (@imqueue/cli) is not installed where the server looks",
    ErrorCode.NPM_NOT_INSTALLED: "npm is not on PATH, so imq cannot be installed",
    ErrorCode.ARGUMENT_REFUSED: "a value was refused before anything ran (imq would misread it)",
    ErrorCode.INTERACTIVE_ONLY: "the imq command only works on a terminal, so it was not run",
    ErrorCode.IMQ_FAILED: "imq (or npm) ran and failed",
    ErrorCode.IMQ_TIMED_OUT: "imq (or npm) ran past its time limit and was stopped",
    ErrorCode.BROKER_UNREACHABLE: "no Redis answers at the broker address (nothing listens, or not Redis)",
    ErrorCode.SERVICE_NOT_ANSWERING: "the broker answers, but no service of that name answered describe",
    ErrorCode.INTERNAL_ERROR: "the server failed unexpectedly",
}

ACTIONS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_ARGUMENTS: "Correct the arguments the message names (see inputSchema) and call again.",
    ErrorCode.UNKNOWN_TOOL: "Call tools/list and use one of the names it returns.",
    ErrorCode.URL_REFUSED: "Call search_docs to find the page, then call get_doc with the url it returns.",
    ErrorCode.PAGE_NOT_FOUND: "Call search_docs to find the page's current URL, then call get_doc with it.",
    ErrorCode.SITE_UNREACHABLE: "Retry later; search_docs keeps answering from its corpus meanwhile.",
    ErrorCode.OFFLINE: "Call search_docs for a page the snapshot has, or run the server without --offline.",
    ErrorCode.CORPUS_UNAVAILABLE: (
        "Build a docs snapshot with `imq-build-index` (or `imq-build-index --from DIR --out PATH` and "
        "start the server with --snapshot PATH), then call search_docs again."
    ),
    ErrorCode.UNKNOWN_PACKAGE: "Call list_packages for the package names, then retry with one of them.",
    ErrorCode.FACTS_UNAVAILABLE: (
        "Retry later; list_packages still lists the packages (without versions) meanwhile."
    ),
    ErrorCode.INVALID_SCAFFOLD_INPUT: "Rename what the message names and call the scaffold tool again.",
    ErrorCode.IMQ_NOT_INSTALLED: (
        "Call cli_install to install imq; or use scaffold_service and scaffold_client, which need no imq."
    ),
    ErrorCode.NPM_NOT_INSTALLED: (
        "Install Node.js (it ships npm), then call cli_install; scaffold_service and scaffold_client "
        "work meanwhile."
    ),
    ErrorCode.ARGUMENT_REFUSED: "Change the value the message names and call again; nothing was run.",
    ErrorCode.INTERACTIVE_ONLY: "Use config(action='set', option=..., value=...) for each option instead.",
    ErrorCode.IMQ_FAILED: "Read imq's output in the message, check the flags with cli_help, and retry.",
    ErrorCode.IMQ_TIMED_OUT: (
        "If imq was waiting for input, pass that value as a flag (cli_help lists them); otherwise retry."
    ),
    ErrorCode.BROKER_UNREACHABLE: (
        "Start Redis at that address, or pass redis='host:port' where the service's Redis runs "
        "(its IMQ_REDIS)."
    ),
    ErrorCode.SERVICE_NOT_ANSWERING: (
        "Start the service on that broker (fleet(action='start'), or npm start with the same IMQ_REDIS) "
        "and pass its class name, which is its queue name; then call again."
    ),
    ErrorCode.INTERNAL_ERROR: "Retry once; if it fails again, report it to the imqueue-mcp maintainers.",
}

"""Property-based fuzzing of every tool's arguments, through the SDK's client, on the real servers.

Arguments are drawn from each tool's own published input schema (tools/list), then bent:
values of the wrong type, missing required fields, unknown extra fields, strings with
control characters, huge strings, unicode edge cases and '-'-prefixed values (which imq
would read as options). The local tools run over stdio on the real imq 5.2.2 that
.ci/install-imq.sh built (tests/imq_real.py), with a temporary HOME and imq home; the hosted
tools run over Streamable HTTP. Every call is bounded in time.

Nothing reaches beyond loopback: imq's dry runs and its config, ctl, log and help commands are
local; a create with apply: true would clone templates, run git and npm, or look up Node
versions on nodejs.org for a fuzzed flag such as -D, so those cases run with the fixed flags
OFFLINE (the built template, --no-use-git, --no-install) in place of the drawn ones - the flags
themselves are fuzzed in the dry runs, where the bridge checks them the same way. `npm` on the
server's PATH only echoes, so cli_install and the `npm run dev` of `fleet start` never reach a
registry or start anything. imq's client generator talks to Redis on localhost:6379 only; when
a Redis is there (another test's), a call for a service that does not answer takes imq's own
30 s wait, so generate_client gets a longer bound. A `redis` address argument is drawn on
loopback only.

The property, per call: an answer comes back (no hang, no lost connection), and a failure
is either an isError result or a -32602 error, whose message is readable: non-empty, no
traceback, no "Internal error", never the internal_error code. The reply (the result's JSON,
or the error's) is at most four times the request plus the tool's documented maximum
(server/reply_limits.py). And create_service without apply: true writes nothing.

Profiles: IMQUEUE_MCP_FUZZ=short (default, CI) or long (at least 2,000 cases per tool).
With -s the module prints a table of cases, failure kinds and time per tool, and one JSON line:

    IMQUEUE_MCP_FUZZ=long .venv/bin/python -m pytest -q -s tests/test_fuzz_tools.py
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from imq_real import TEMPLATE, real_imq_environment, require_real_imq
from mcp.shared.exceptions import MCPError

from imqueue_mcp.server.reply_limits import REPLY_BYTES, reply_limit

from conftest import (
    HOSTED_TOOLS,
    LOCAL_TOOLS,
    HttpServer,
    McpConnection,
    offline_args,
    origin_args,
    server_environment,
    stdio_connection,
)

pytestmark = pytest.mark.slow  # a long end-to-end run: CI, or IMQUEUE_MCP_SLOW=1 (conftest.py)

PROFILE = os.environ.get("IMQUEUE_MCP_FUZZ", "short")
CASES = {"short": 25, "long": 2000}.get(PROFILE)
if CASES is None:
    raise pytest.UsageError(f"IMQUEUE_MCP_FUZZ={PROFILE!r}: use short or long")
CALL_SECONDS = 30.0  # far above any honest answer here; the bridge's own timeouts are longer
# imq client generate waits 30 s for a service that does not answer, when Redis is on 6379
TOOL_CALL_SECONDS = {"generate_client": 60.0}
OFFLINE = ["--email=fuzz@example.com", "--no-use-git", "--no-install", "-t", str(TEMPLATE)]
HTTP_STRING_CAP = 200_000  # the hosted endpoint refuses bodies over 1 MB with 413, by design
UNREADABLE = ("Traceback", 'File "', "Internal error", "internal error")

FUZZ_SETTINGS = settings(
    max_examples=CASES,
    deadline=None,
    database=None,
    derandomize=PROFILE == "short",  # CI sees the same cases every run
    suppress_health_check=list(HealthCheck),
)


# --- values --------------------------------------------------------------------------------

EDGE_STRINGS = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\n\r\t",
    "\x1b[31mred\x1b[0m",
    "\u202eevil\u202c",
    "\ufeffbom",
    "\u200b",
    "e\u0301",
    "\U0001d55a\U0001d55e\U0001d562",
    "🦄" * 50,
    "İstanbul",
    "ǅ",
    "..",
    "../../etc/passwd",
    "%2e%2e%2f",
    "; rm -rf ~",
    "$(id)",
    "`id`",
    "| cat /etc/passwd",
    "https://imqueue.org@evil.test/",
    "file:///etc/passwd",
    "null",
    "true",
    "{}",
    "9" * 400,
]
DASHED = ["-", "--", "-h", "--help", "--version", "-rf", "--dry-run=false", "--force", "-o", "--path=/"]


def strings(cap: int) -> st.SearchStrategy[str]:
    text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)
    control = st.text(st.characters(max_codepoint=0x9F, categories=["Cc"]), min_size=1, max_size=20)
    huge = st.integers(min(1_000, cap), cap).map(lambda size: ("x\x01é-" * (size // 4 + 1))[:size])
    return st.one_of(
        text,
        control,
        st.sampled_from(EDGE_STRINGS),
        st.sampled_from(DASHED),
        text.map(lambda value: "-" + value),
        text.map(lambda value: "--" + value),
        huge,
    )


def wrong_types(cap: int) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        strings(cap),
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=8,
    )


def safe_path(value: str) -> str:
    """A path value kept inside the server's scratch folder: the real imq writes there."""
    return value.replace("..", "__").lstrip("/") or "x"


def loopback_address(value: str) -> str:
    """A broker address whose host is loopback, whatever its (fuzzed) port part."""
    return "127.0.0.1:" + value


def values_for(
    schema: dict[str, Any], defs: dict[str, Any], cap: int, name: str = ""
) -> st.SearchStrategy[Any]:
    """Mostly values of the schema's own shape (so the code behind the check runs), often not."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    kind = schema.get("type")
    if "enum" in schema:
        typed: st.SearchStrategy[Any] = st.sampled_from(schema["enum"])
    elif "anyOf" in schema:
        typed = st.one_of([values_for(option, defs, cap, name) for option in schema["anyOf"]])
    elif kind == "string" and name == "path":
        typed = strings(cap).map(safe_path)
    elif kind == "string" and name == "redis":
        typed = st.one_of(st.integers(-5, 70_000).map(str), strings(200)).map(loopback_address)
    elif kind == "string" and name == "url":  # past the host lock now and then, into the fetch
        typed = st.one_of(strings(cap), strings(200).map(lambda tail: "https://imqueue.org/" + tail))
    elif kind == "string":
        typed = strings(cap)
    elif kind == "integer":
        typed = st.one_of(st.integers(-5, 30), st.integers(min_value=-(2**70), max_value=2**70))
    elif kind == "boolean":
        typed = st.booleans()
    elif kind == "array":
        typed = st.lists(values_for(schema.get("items", {}), defs, cap, name), max_size=5)
    elif kind == "object":
        typed = arguments_for(schema, defs, cap)
    else:
        typed = wrong_types(cap)
    if name in ("path", "redis"):
        return typed  # wrong types, yes; but no path outside the scratch folder, no broker off loopback
    return st.one_of(typed, typed, typed, wrong_types(cap))


def arguments_for(
    schema: dict[str, Any], defs: dict[str, Any], cap: int
) -> st.SearchStrategy[dict[str, Any]]:
    """Required fields usually present, optional ones sometimes, unknown extra ones now and then."""
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    fields = {key: values_for(value, defs, cap, key) for key, value in properties.items()}
    complete = st.fixed_dictionaries(
        {key: fields[key] for key in required},
        optional={key: fields[key] for key in fields if key not in required},
    )
    anything = st.fixed_dictionaries({}, optional=fields)
    extras = st.dictionaries(
        st.one_of(st.sampled_from(["limt", "apply ", "__proto__", "", "-x"]), st.text(max_size=12)),
        wrong_types(cap),
        max_size=2,
    )
    base = st.one_of(complete, complete, complete, anything)
    return st.one_of(base, st.tuples(base, extras).map(lambda pair: {**pair[1], **pair[0]}))


# Values inside the schema: the tools' success paths, where the largest replies are.
QUERIES = [
    "expose a method on a service",
    "IMQ_REDIS host and port",
    "imq client generate",
    "connect ECONNREFUSED 127.0.0.1:6380",
    "decorators tsconfig",
    "pg-prisma or pg-sequelize",
    "llms",
]
DOC_URLS = [
    "/get-started/",
    "/api/",
    "/tutorial/user-service/",
    "https://imqueue.org/llms-full.txt",
    "https://imqueue.org/llms.txt",
    "https://imqueue.com/",
    "/cli/creating-services/#what-a-run-does-pipeline",
]
TYPES = ["string", "number", "boolean", "User", "User[]", "{ id: string; tags: string[] }", "Promise<void>"]


def within(schema: dict[str, Any], defs: dict[str, Any], name: str = "") -> st.SearchStrategy[Any]:
    """Values the schema admits (bounds, enums, required fields), shaped to get past the checks
    behind it often: identifiers for names, pages of the site for url, loopback for redis."""
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([within(option, defs, name) for option in schema["anyOf"]])
    kind = schema.get("type")
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength", 4096)
        longest = st.just("a" * high)
        plain = st.text(
            st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=low, max_size=min(high, 40)
        )
        if name == "path":
            return plain.map(safe_path)
        if name == "redis":
            return st.integers(1, 65535).map(lambda port: loopback_address(str(port)))
        if name == "url":
            return st.sampled_from(DOC_URLS)
        if name == "query":
            return st.one_of(st.sampled_from(QUERIES), plain, longest)
        if name in ("name", "service"):
            return st.one_of(st.from_regex(r"[a-z][A-Za-z0-9]{0,30}", fullmatch=True), longest)
        if name in ("type", "returns"):
            return st.sampled_from(TYPES)
        return st.one_of(plain, longest)
    if kind == "integer":
        return st.integers(schema.get("minimum", -5), schema.get("maximum", 100))
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(within(schema.get("items", {}), defs, name), max_size=schema.get("maxItems", 8))
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        return st.fixed_dictionaries(
            {key: within(properties[key], defs, key) for key in required},
            optional={
                key: within(value, defs, key) for key, value in properties.items() if key not in required
            },
        )
    return st.none()


# --- the property ------------------------------------------------------------------------


class Tally:
    """Per transport and tool: cases, how each ended, the failures seen, time spent."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], dict[str, Any]] = {}

    def row(self, transport: str, tool: str) -> dict[str, Any]:
        return self.rows.setdefault(
            (transport, tool),
            {
                "cases": 0,
                "ok": 0,
                "isError": 0,
                "invalidParams": 0,
                "failures": [],
                "seconds": 0.0,
                "largestRatio": 0.0,
            },
        )

    def report(self) -> str:
        lines = [
            f"{'transport':<6} {'tool':<20} {'cases':>6} {'ok':>6} {'isError':>8} {'-32602':>7} "
            f"{'fail':>5} {'seconds':>8} {'reply/limit':>11}"
        ]
        for (transport, tool), row in sorted(self.rows.items()):
            lines.append(
                f"{transport:<6} {tool:<20} {row['cases']:>6} {row['ok']:>6} {row['isError']:>8} "
                f"{row['invalidParams']:>7} {len(row['failures']):>5} {row['seconds']:>8.1f} "
                f"{row['largestRatio']:>11.3f}"
            )
        total = {
            "profile": PROFILE,
            "tools": len(self.rows),
            "cases": sum(row["cases"] for row in self.rows.values()),
            "minCasesPerTool": min((row["cases"] for row in self.rows.values()), default=0),
            "failures": sum(len(row["failures"]) for row in self.rows.values()),
            "seconds": round(sum(row["seconds"] for row in self.rows.values()), 1),
            "largestReplyToLimit": round(
                max((row["largestRatio"] for row in self.rows.values()), default=0.0), 3
            ),
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
        }
        return "\n".join(lines) + "\n" + json.dumps(total)


TALLY = Tally()


@pytest.fixture(scope="module", autouse=True)
def figures() -> Iterator[None]:
    yield
    if TALLY.rows:
        print("\n" + TALLY.report())


def readable(message: str) -> bool:
    return bool(message.strip()) and not any(marker in message for marker in UNREADABLE)


def outcome_of(connection: McpConnection, tool: str, arguments: dict[str, Any]) -> tuple[str, str, int]:
    """('ok' | 'isError' | 'invalidParams', message, reply bytes), or a failure kind: hang, crash,
    unreadable, internal, code."""
    bound = TOOL_CALL_SECONDS.get(tool, CALL_SECONDS)
    try:
        result = connection.call(tool, arguments, timeout=bound)
    except concurrent.futures.TimeoutError:
        return "hang", f"no answer within {bound:g} s", 0
    except MCPError as error:
        size = len(json.dumps(error.error.model_dump(mode="json", exclude_none=True)))
        if error.error.code != -32602:
            return "code", f"JSON-RPC {error.error.code}: {error.error.message}", size
        message = f"{error.error.message} {error.error.data or ''}"
        return (
            ("invalidParams", message, size)
            if readable(error.error.message)
            else ("unreadable", message, size)
        )
    except Exception as error:  # the connection itself failed: the server died or broke the wire
        return "crash", f"{type(error).__name__}: {error}", 0
    size = len(json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True)))
    text = "\n".join(block.text for block in result.content if block.type == "text")
    if not result.is_error:
        return "ok", "", size
    code = (result.structured_content or {}).get("error", {}).get("code")
    if code == "internal_error":
        return "internal", text, size
    return ("isError", text, size) if readable(text) else ("unreadable", text, size)


def check(
    connection: McpConnection, transport: str, tool: str, arguments: dict[str, Any], scratch: Path | None
) -> None:
    row = TALLY.row(transport, tool)
    before = tree(scratch) if scratch is not None and tool == "create_service" else None
    started = time.monotonic()
    kind, message, reply_bytes = outcome_of(connection, tool, arguments)
    row["seconds"] += time.monotonic() - started
    row["cases"] += 1
    request_bytes = len(json.dumps({"name": tool, "arguments": arguments}))
    limit = reply_limit(tool, request_bytes)
    row["largestRatio"] = max(row["largestRatio"], reply_bytes / limit)
    if kind in ("ok", "isError", "invalidParams"):
        row[kind] += 1
    else:
        row["failures"].append((kind, message[:300], repr(arguments)[:300]))
    assert kind in ("ok", "isError", "invalidParams"), f"{tool}: {kind}: {message[:500]}"
    assert reply_bytes <= limit, (
        f"{tool}: a {reply_bytes:,}-byte reply to {request_bytes:,} bytes: {arguments!r:.300}"
    )
    if before is not None and arguments.get("apply") is not True:
        assert tree(scratch) == before, f"create_service wrote files without apply: true: {arguments!r:.300}"


def tree(root: Path | None) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")} if root is not None else set()


# --- the servers -------------------------------------------------------------------------


def npm_standin(folder: Path) -> Path:
    """An `npm` that only echoes: neither cli_install's `npm install -g` nor the `npm run dev`
    of `imq ctl start` may reach a registry or start a service from a test."""
    folder.mkdir(parents=True, exist_ok=True)
    npm = folder / "npm"
    npm.write_text('#!/bin/sh\necho "npm stand-in: $*"\n')
    npm.chmod(0o755)
    return folder


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-work")


@pytest.fixture(scope="module")
def local(
    site_origins: dict[str, str], scratch: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpConnection]:
    require_real_imq()
    home = tmp_path_factory.mktemp("fuzz-home")
    env = real_imq_environment(home)
    env["PATH"] = os.pathsep.join([str(npm_standin(home / "npm-bin")), env["PATH"]])
    connection = stdio_connection(origin_args(site_origins), env, scratch, "legacy")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("fuzz-http")
    server = HttpServer(offline_args(home), server_environment(home), home)
    connection = McpConnection(server.url + "/mcp", "auto")
    yield connection
    connection.close()
    server.close()


def offline_when_applied(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A create with apply: true runs imq's whole pipeline: with OFFLINE flags it stays local."""
    if tool == "create_service" and arguments.get("apply") is True:
        return {**arguments, "flags": OFFLINE}
    return arguments


def schemas(connection: McpConnection) -> dict[str, dict[str, Any]]:
    return {tool.name: tool.input_schema for tool in connection.tools()}


@pytest.mark.parametrize("tool", sorted(LOCAL_TOOLS))
def test_every_local_tool_answers_any_arguments_readably_over_stdio(
    local: McpConnection, scratch: Path, tool: str
) -> None:
    schema = schemas(local)[tool]
    strategy = arguments_for(schema, schema.get("$defs", {}), 1_000_000)

    @FUZZ_SETTINGS
    @given(arguments=strategy)
    def fuzz(arguments: dict[str, Any]) -> None:
        check(local, "stdio", tool, offline_when_applied(tool, arguments), scratch)

    fuzz()
    assert {found.name for found in local.tools()} == LOCAL_TOOLS  # still serving


@pytest.mark.parametrize("tool", sorted(HOSTED_TOOLS))
def test_every_hosted_tool_answers_any_arguments_readably_over_http(hosted: McpConnection, tool: str) -> None:
    schema = schemas(hosted)[tool]
    strategy = arguments_for(schema, schema.get("$defs", {}), HTTP_STRING_CAP)

    @FUZZ_SETTINGS
    @given(arguments=strategy)
    def fuzz(arguments: dict[str, Any]) -> None:
        check(hosted, "http", tool, arguments, None)

    fuzz()
    assert {found.name for found in hosted.tools()} == HOSTED_TOOLS


@pytest.mark.parametrize("tool", sorted(LOCAL_TOOLS))
def test_every_local_tool_answers_arguments_within_its_schema_in_bounds_over_stdio(
    local: McpConnection, scratch: Path, tool: str
) -> None:
    schema = schemas(local)[tool]

    @FUZZ_SETTINGS
    @given(arguments=within(schema, schema.get("$defs", {})))
    def fuzz(arguments: dict[str, Any]) -> None:
        check(local, "stdio+", tool, offline_when_applied(tool, arguments), scratch)

    fuzz()


@pytest.mark.parametrize("tool", sorted(HOSTED_TOOLS))
def test_every_hosted_tool_answers_arguments_within_its_schema_in_bounds_over_http(
    hosted: McpConnection, tool: str
) -> None:
    schema = schemas(hosted)[tool]

    @FUZZ_SETTINGS
    @given(arguments=within(schema, schema.get("$defs", {})))
    def fuzz(arguments: dict[str, Any]) -> None:
        check(hosted, "http+", tool, arguments, None)

    fuzz()


def test_every_tool_has_a_documented_reply_maximum(local: McpConnection, hosted: McpConnection) -> None:
    assert {tool.name for tool in [*local.tools(), *hosted.tools()]} == set(REPLY_BYTES)


def test_an_oversized_request_over_http_is_a_readable_invalid_params_error(hosted: McpConnection) -> None:
    kind, message, _ = outcome_of(hosted, "search_docs", {"query": "q" * 1_100_000})
    assert (kind, "1,000,000 bytes" in message) == ("invalidParams", True), message
    assert outcome_of(hosted, "search_docs", {"query": "expose"})[0] == "ok"  # and it keeps serving

"""The soak's calls: what a client asks of the server, what each answer should be, and the verdict.

    Call                  one request: tools/call, resources/*, prompts/*, completion/complete or
                          a list walked through its cursors, with what its answer must be
    cold_calls(surface)   the first calls every client makes at once, right after the server
                          started: every cache-filling path, all clients together
    random_call(rng, surface)  one call of the steady mix: every tool, resource, prompt and
                          completion of the surface, realistic arguments, about one in six invalid
    perform(client, call) the call made through the SDK's client, and its Verdict

What counts as what:

    ok          an answer that is not an error, for a call that should succeed (or may fail)
    guided      an isError result whose structuredContent.error has a code other than
                internal_error, for a call whose arguments are wrong (or that may fail, as the
                imq tools do without imq); a protocol error -32602 for an unknown resource or
                prompt
    unexpected  everything else: internal_error ("failed unexpectedly"), a protocol error where a
                result was due, a success for invalid arguments, a timeout, a lost connection,
                a get_doc cursor walk whose parts do not join up to the page read whole
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, PromptReference, ResourceTemplateReference, TextContent

from imqueue_mcp.server.docs.search_docs import PASTE_CHARACTERS

from .bench_server import QUERIES  # the known questions: the server benchmark's

Expect = Literal["ok", "guided", "either", "refused"]
Kind = Literal["tool", "read", "prompt", "complete", "list", "walk", "cancel"]
Surface = Literal["hosted", "local"]

WORD = re.compile(r"\b[a-z][a-z-]{3,15}\b")
IMQ_SHARE = 0.04  # of the local mix: each runs imq (Node), which costs as much as a hundred searches
CALL_TIMEOUT = 30.0  # seconds, by default; a call slower than this under the soak's load is a failure
INVALID_PARAMS = -32602

PACKAGES = (None, None, "rpc", "core", "@imqueue/pg-prisma", "job")  # search filters: documented ones
STATUS_PACKAGES = (*PACKAGES, "cli", "@imqueue/mcp")  # package_status also knows the published tools
PAGES = (
    "https://imqueue.org/get-started",
    "/get-started/",
    "https://imqueue.org/get-started#prerequisites",
    "https://imqueue.org/get-started#no-such-section",  # an unknown anchor: the outline, not an error
    "https://imqueue.org/cli",
    "https://imqueue.org/api/core/latest/",
    "https://imqueue.org/api/rpc/latest/",
    "https://imqueue.org/agents.md",
    "https://imqueue.org/llms.txt",
    "https://imqueue.com/pricing",
    "http://imqueue.org/compare",  # read as https
)
RESOURCES = (
    "imqueue://packages",
    "https://imqueue.org/llms.txt",
    "https://imqueue.com/llms.txt",
    "https://imqueue.org/get-started",
    "https://imqueue.org/api/core/latest/",
    "https://imqueue.com/pricing",
)
SERVICE_NAMES = ("user", "OrderService", "billing-service", "auth")
METHODS = (
    None,
    [{"name": "getUser", "params": [{"name": "id", "type": "string"}], "returns": "User | null"}],
    [
        {"name": "createOrder", "params": [{"name": "items", "type": "string[]"}], "returns": "string"},
        {"name": "cancel", "params": [{"name": "id", "type": "string", "optional": True}]},
    ],
)
COMPLETIONS = (
    (PromptReference(type="ref/prompt", name="choose_imqueue_packages"), "using", "pg"),
    (PromptReference(type="ref/prompt", name="choose_imqueue_packages"), "using", "rpc, op"),
    (
        ResourceTemplateReference(type="ref/resource", uri="https://imqueue.org/api/{package}/latest/"),
        "package",
        "c",
    ),
    (ResourceTemplateReference(type="ref/resource", uri="https://imqueue.org/{+path}"), "path", "api/co"),
    (ResourceTemplateReference(type="ref/resource", uri="https://imqueue.com/{+path}"), "path", "pri"),
    (PromptReference(type="ref/prompt", name="no_such_prompt"), "x", "y"),  # nothing, not an error
)


# list method -> the client's method and the field of its answer that holds the items
LISTS = {
    "tools/list": ("list_tools", "tools"),
    "resources/list": ("list_resources", "resources"),
    "resources/templates/list": ("list_resource_templates", "resource_templates"),
    "prompts/list": ("list_prompts", "prompts"),
}


@dataclass(frozen=True)
class Call:
    kind: Kind
    name: str  # the tool, URI, prompt, list or walk
    arguments: dict[str, Any] = field(default_factory=dict)
    expect: Expect = "ok"
    progress: bool = False  # sends a progressToken: the server reports a corpus load it waits for

    @property
    def label(self) -> str:
        """The row of the table it counts in."""
        names = {
            "tool": self.name,
            "read": "resources/read",
            "prompt": "prompts/get",
            "cancel": "cancelled call",
        }
        what = names.get(self.kind, self.name)
        return f"{what} (invalid)" if self.expect in ("guided", "refused") else what


@dataclass(frozen=True)
class Verdict:
    outcome: Literal["ok", "guided", "unexpected"]
    detail: str = ""  # why, for an unexpected one


def tool(name: str, expect: Expect = "ok", /, **arguments: Any) -> Call:
    return Call("tool", name, arguments, expect)


def tracked(call: Call) -> Call:
    """The call with a progressToken."""
    return Call(call.kind, call.name, call.arguments, call.expect, progress=True)


# --- the mix -----------------------------------------------------------------------------


def cold_calls(surface: Surface) -> list[Call]:
    """Every path that fills a cache on first use, each once: a client sends them all at once.
    With them a cursor walk and an invalid call, so that every client exercises each kind of
    call once however few calls a loaded machine lets the run make after this burst."""
    calls = [
        Call("walk", "get_doc cursor walk", {"url": "https://imqueue.org/get-started", "maxTokens": 600}),
        tool("search_docs", "guided", query=""),
        tracked(tool("search_docs", query="how do I expose a method")),
        tool("search_docs", query="delayed job retry", passages=False),
        tracked(tool("find_examples", query="generate a typed client", limit=3)),
        tool("find_examples", query="lock decorator", package="rpc"),
        tool("get_doc", url="https://imqueue.org/get-started", maxTokens=600),
        tool("get_doc", url="https://imqueue.org/cli", outline=True),
        tool("list_packages"),
        tool("package_status", package="rpc"),
        tool("scaffold_service", name="user", methods=METHODS[1]),
        tool("scaffold_client", service="user"),
        Call("read", "imqueue://packages"),
        Call("read", "https://imqueue.org/get-started"),
        Call("prompt", "choose_imqueue_packages", {"need": "cache Postgres reads"}),
        Call("complete", "completion/complete", {"index": 3}),
        Call("list", "resources/list"),
        Call("list", "tools/list"),
    ]
    if surface == "local":
        calls += [tool("inspect_project", "either"), tool("cli_status", "either")]
    else:
        calls.append(tool("local_install_guide"))
    return calls


def mirror_words(site: Path, pages: int = 400) -> tuple[str, ...]:
    """Words of the mirror's markdown (read at run time), for queries no cache has seen: a new
    word is stemmed and ranked from scratch, as the agents' own queries are."""
    words: set[str] = set()
    for path in sorted(site.rglob("*.md"))[:pages]:
        words.update(WORD.findall(path.read_text(encoding="utf-8", errors="replace").lower()))
    return tuple(sorted(words))


def made_up_query(rng: random.Random, words: tuple[str, ...]) -> str:
    """Two to five words of the docs, sometimes with a typo or a question around them."""
    picked = [rng.choice(words) for _ in range(rng.randint(2, 5))]
    if rng.random() < 0.2:
        word = picked[0]
        cut = rng.randrange(1, len(word))
        picked[0] = word[:cut] + word[cut + 1 :]  # a dropped letter
    query = " ".join(picked)
    return f"how do I {query}?" if rng.random() < 0.3 else query


@dataclass(frozen=True)
class Mix:
    """What a client's calls draw on: its surface, the words for new queries, and (stdio) the
    project folder inspect_project may read."""

    surface: Surface
    words: tuple[str, ...] = ()
    project: str | None = None


def random_call(rng: random.Random, mix: Mix) -> Call:
    """One call of the steady mix."""
    if rng.random() < 1 / 6:
        return rng.choice(invalid_calls(mix.surface))
    choices: list[Callable[[random.Random, Mix], Call]] = [
        *[_search] * 6,
        *[_example] * 3,
        *[_page] * 4,
        _walk,
        _packages,
        _status,
        _scaffold,
        _client_scaffold,
        _resource,
        _resource,
        _prompt,
        _completion,
        _listing,
        _cancelled,
    ]
    if mix.surface == "local":
        choices += [_project] * 2
        if rng.random() < IMQ_SHARE:
            return _imq(rng)
    else:
        choices.append(_install_guide)
    return rng.choice(choices)(rng, mix)


def _project(rng: random.Random, mix: Mix) -> Call:
    return tool("inspect_project", "either", **({"path": mix.project} if mix.project else {}))


def _install_guide(rng: random.Random, mix: Mix) -> Call:
    return tool("local_install_guide")


def _imq(rng: random.Random) -> Call:
    if rng.random() < 0.5:
        return tool("cli_status", "either")
    return tool("cli_help", "either", command=rng.choice(["service create", "ctl start", "client generate"]))


def _package(rng: random.Random, packages: tuple[str | None, ...] = PACKAGES) -> dict[str, Any]:
    package = rng.choice(packages)
    return {} if package is None else {"package": package}


def _query(rng: random.Random, mix: Mix) -> str:
    """A known question half the time (its answer cached after the first), else a new one."""
    return rng.choice(QUERIES) if rng.random() < 0.5 or not mix.words else made_up_query(rng, mix.words)


def _search(rng: random.Random, mix: Mix) -> Call:
    arguments: dict[str, Any] = {"query": _query(rng, mix), "limit": rng.randint(1, 12), **_package(rng)}
    if rng.random() < 0.2:
        arguments["passages"] = False
    elif rng.random() < 0.4:
        arguments["passageTokens"] = rng.randint(60, 400)
        arguments["maxTokens"] = rng.randint(400, 3000)
    return (
        tracked(tool("search_docs", **arguments)) if rng.random() < 0.1 else tool("search_docs", **arguments)
    )


def _example(rng: random.Random, mix: Mix) -> Call:
    arguments = {"query": _query(rng, mix), "limit": rng.randint(1, 10), **_package(rng)}
    if rng.random() < 0.3:
        arguments["passages"] = False
    return tool("find_examples", **arguments)


def _page(rng: random.Random, mix: Mix) -> Call:
    arguments: dict[str, Any] = {"url": rng.choice(PAGES)}
    if rng.random() < 0.3:
        arguments["outline"] = True
    elif rng.random() < 0.5:
        arguments["maxTokens"] = rng.choice([300, 1000, 4000, 20000])
    return tool("get_doc", **arguments)


def _walk(rng: random.Random, mix: Mix) -> Call:
    url = rng.choice(
        ["https://imqueue.org/get-started", "https://imqueue.org/cli", "https://imqueue.org/compare"]
    )
    return Call("walk", "get_doc cursor walk", {"url": url, "maxTokens": rng.choice([300, 600, 1500])})


def _packages(rng: random.Random, mix: Mix) -> Call:
    return tool("list_packages")


def _status(rng: random.Random, mix: Mix) -> Call:
    return tool("package_status", **_package(rng, STATUS_PACKAGES))


def _scaffold(rng: random.Random, mix: Mix) -> Call:
    methods = rng.choice(METHODS)
    return tool(
        "scaffold_service", name=rng.choice(SERVICE_NAMES), **({"methods": methods} if methods else {})
    )


def _client_scaffold(rng: random.Random, mix: Mix) -> Call:
    methods = rng.choice(METHODS)
    return tool(
        "scaffold_client", service=rng.choice(SERVICE_NAMES), **({"methods": methods} if methods else {})
    )


def _resource(rng: random.Random, mix: Mix) -> Call:
    return Call("read", rng.choice(RESOURCES))


def _prompt(rng: random.Random, mix: Mix) -> Call:
    if rng.random() < 0.5:
        return Call(
            "prompt", "build_imqueue_service", {"name": rng.choice(SERVICE_NAMES), "purpose": "keeps users"}
        )
    return Call("prompt", "choose_imqueue_packages", {"need": "trace calls", "using": "rpc, pg-prisma"})


def _completion(rng: random.Random, mix: Mix) -> Call:
    return Call("complete", "completion/complete", {"index": rng.randrange(len(COMPLETIONS))})


def _listing(rng: random.Random, mix: Mix) -> Call:
    return Call("list", rng.choice(sorted(LISTS)))


def _cancelled(rng: random.Random, mix: Mix) -> Call:
    """A docs call the client gives up on after a few milliseconds (the SDK then sends
    notifications/cancelled, or at 2026-07-28 drops the request); the session must go on
    answering."""
    inner = rng.choice([_search, _example, _page])(rng, mix)
    return Call("cancel", inner.name, {"arguments": inner.arguments, "after": rng.uniform(0.001, 0.05)})


def invalid_calls(surface: Surface) -> list[Call]:
    """Wrong arguments an agent really sends; each must come back as a guided error
    (tests/test_soak.py sends every one, so a bound that moves cannot hide behind sampling)."""
    invalid = [
        tool("search_docs", "guided", query=""),
        tool("search_docs", "guided", query="redis", limit=0),
        tool("search_docs", "guided", query="redis", bogus=True),
        tool("search_docs", "guided", query="x" * (PASTE_CHARACTERS + 1)),
        tool("search_docs", "guided", query="redis", passageTokens=5),
        tool("find_examples", "guided", query="redis", limit=99),
        tool("find_examples", "guided", query=42),
        tool("get_doc", "guided", url="https://example.com/page"),
        tool("get_doc", "guided", url="https://imqueue.org/no-such-page-here"),
        tool("get_doc", "guided", url="https://imqueue.org/get-started", cursor="not-a-cursor"),
        tool("get_doc", "guided", url="https://imqueue.org/get-started", maxTokens=1),
        tool("get_doc", "guided"),
        tool("package_status", "guided", package="no-such-package"),
        tool("scaffold_service", "guided", name="123 not a name!"),
        tool("scaffold_client", "guided", service="user", methods=[{"name": "constructor"}]),
        tool("list_packages", "guided", verbose=True),
        tool("no_such_tool", "guided"),
        Call("read", "https://example.com/elsewhere", expect="refused"),
        Call("read", "imqueue://nothing-here", expect="refused"),
        Call("prompt", "no_such_prompt", {}, expect="refused"),
    ]
    if surface == "local":
        invalid.append(tool("inspect_project", "guided", path="relative/folder"))
    else:
        invalid.append(tool("cli_status", "guided"))  # a local tool: unknown on the hosted surface
    return invalid


# --- making a call -----------------------------------------------------------------------


async def perform(
    client: Any, call: Call, on_progress: ProgressFnT | None = None, timeout: float = CALL_TIMEOUT
) -> Verdict:
    """`call` through the SDK's client, bounded by `timeout` seconds, and its verdict;
    `on_progress` hears its progress notifications when it asks for them."""
    try:
        return await asyncio.wait_for(_perform(client, call, on_progress), timeout)
    except TimeoutError:
        return Verdict("unexpected", f"timed out after {timeout:g} s")
    except MCPError as error:
        if call.expect == "refused" and error.error.code == INVALID_PARAMS:
            return Verdict("guided")
        data = f" ({str(error.error.data)[:100]})" if error.error.data else ""
        return Verdict("unexpected", f"protocol error {error.error.code}: {error.error.message[:200]}{data}")
    except Exception as error:  # a lost connection or a broken answer: what the soak is for
        return Verdict("unexpected", describe(error))


def describe(error: BaseException) -> str:
    """The exception's innermost causes, named: a task group's wrapper says nothing by itself."""
    if isinstance(error, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in error.exceptions[:3])
    return f"{type(error).__name__}: {str(error)[:200]}"


async def _perform(client: Any, call: Call, on_progress: ProgressFnT | None) -> Verdict:
    if call.kind == "tool":
        listener = on_progress if call.progress else None
        return tool_verdict(
            call, await client.call_tool(call.name, call.arguments, progress_callback=listener)
        )
    if call.kind == "walk":
        return await _walk_pages(client, call)
    if call.kind == "cancel":
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(
                client.call_tool(call.name, call.arguments["arguments"]), call.arguments["after"]
            )
        # The session still answers (a real call: 2026-07-28 has no ping)
        return tool_verdict(call, await client.call_tool("scaffold_client", {"service": "user"}))
    if call.kind == "read":
        result = await client.read_resource(call.name)
        return _success(call, bool(result.contents), "resources/read returned no contents")
    if call.kind == "prompt":
        result = await client.get_prompt(call.name, call.arguments)
        return _success(call, bool(result.messages), "prompts/get returned no messages")
    if call.kind == "complete":
        ref, argument, typed = COMPLETIONS[call.arguments["index"]]
        result = await client.complete(ref, {"name": argument, "value": typed})
        wanted = ref.type == "ref/prompt" and ref.name == "no_such_prompt"
        return _success(call, wanted or bool(result.completion.values), f"no completion for {typed!r}")
    return await _walk_list(client, call)


def tool_verdict(call: Call, result: CallToolResult) -> Verdict:
    if not result.is_error:
        if call.expect in ("ok", "either"):
            return Verdict("ok")
        return Verdict("unexpected", f"{call.name} accepted invalid arguments {call.arguments}")
    error = (result.structured_content or {}).get("error")
    code = str(error.get("code", "")) if isinstance(error, dict) else ""
    text = result.content[0].text if result.content and isinstance(result.content[0], TextContent) else ""
    if call.expect in ("guided", "either") and code and code != "internal_error":
        return Verdict("guided")
    first_line = text.strip().splitlines()[0] if text.strip() else ""
    return Verdict(
        "unexpected", f"{call.name} {call.arguments}: isError ({code or 'no code'}): {first_line[:200]}"
    )


def _success(call: Call, good: bool, problem: str) -> Verdict:
    if call.expect == "refused":
        return Verdict("unexpected", f"{call.kind} {call.name} was answered, not refused")
    return Verdict("ok") if good else Verdict("unexpected", problem)


async def _walk_list(client: Any, call: Call) -> Verdict:
    """A list read to its end through nextCursor (at most 50 pages); it must not be empty."""
    method, field_name = LISTS[call.name]
    lister = getattr(client, method)
    items, cursor = 0, None
    for _ in range(50):
        page = await lister(cursor=cursor)
        items += len(getattr(page, field_name))
        cursor = page.next_cursor
        if not cursor:
            return _success(call, items > 0, f"{call.name} listed nothing")
    return Verdict("unexpected", f"{call.name} had more than 50 pages")


async def _walk_pages(client: Any, call: Call) -> Verdict:
    """get_doc read in parts through nextCursor, then whole: the parts must join up to the page."""
    url, size = call.arguments["url"], call.arguments["maxTokens"]
    parts: list[str] = []
    arguments: dict[str, Any] = {"url": url, "maxTokens": size}
    for _ in range(200):
        result = await client.call_tool("get_doc", arguments)
        verdict = tool_verdict(call, result)
        if verdict.outcome != "ok":
            return verdict
        parts.append(result.structured_content["markdown"])
        cursor = result.structured_content.get("nextCursor")
        if not cursor:
            break
        arguments = {"url": url, "maxTokens": size, "cursor": cursor}
    whole = await client.call_tool("get_doc", {"url": url, "maxTokens": 50_000})
    verdict = tool_verdict(call, whole)
    if verdict.outcome != "ok":
        return verdict
    if "".join(parts) != whole.structured_content["markdown"]:
        return Verdict("unexpected", f"the {len(parts)} parts of {url} do not join up to the page")
    return Verdict("ok")

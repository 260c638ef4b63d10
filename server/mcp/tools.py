"""The tools, one record each: name, title, SPEC §3a hints, where it is offered, description,
and the handler whose signature is the strict input schema and whose return annotation is the
output schema.

    @tool(title=..., hints=..., where=...)   declares a record; the handler factory below it takes
                                             the Services and returns the tool's body
    TOOLS                                    every record, in the order tools/list gives them
    local_tools(services) / hosted_tools(services)   the stdio tools / the hosted read-only ones

Each body calls one function of the domain package that owns the behaviour (docs, catalogue,
scaffold, imq, project) and turns its answer into a result (results.py): structuredContent plus
its text for the tools with an output schema, text alone for the rest. Something expected that
went wrong is a guided error (errors.py's code and next step): `failed`, `bridged`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from imqueue_mcp.server.catalogue.packages import (
    CatalogueError,
    render_packages_markdown,
    render_status_markdown,
)
from imqueue_mcp.server.docs import example_finder as examples
from imqueue_mcp.server.docs import package_status as status
from imqueue_mcp.server.docs import read as docs
from imqueue_mcp.server.docs import search_docs as search
from imqueue_mcp.server.docs.corpus_keeper import CorpusUnavailable
from imqueue_mcp.server.docs.errata import code_blocks, known_needs
from imqueue_mcp.server.docs.fetch import DocUrlError, FetchError, MalformedDocUrl, OfflineError
from imqueue_mcp.server.docs.hit_passages import (
    DEFAULT_PASSAGE_TOKENS,
    DEFAULT_REPLY_TOKENS,
    MAX_PASSAGE_TOKENS,
    MAX_REPLY_TOKENS,
    MIN_PASSAGE_TOKENS,
    PassageOptions,
)
from imqueue_mcp.server.docs.package_facts import FactsUnavailable, StatusUnavailable, stored_line
from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.imq import bridge
from imqueue_mcp.server.imq.runner import BridgeResult
from imqueue_mcp.server.mcp import api_tools, project_tools, scaffold_writes
from imqueue_mcp.server.mcp.instructions import LOCAL_INSTALL_GUIDE
from imqueue_mcp.server.mcp.strict import strict_tool
from imqueue_mcp.server.project import service_classes
from imqueue_mcp.server.result_shapes import (
    ClientScaffold,
    DocResult,
    ExampleResult,
    GeneratedClient,
    PackageList,
    PackageStatus,
    SearchResult,
    ServiceScaffold,
)
from imqueue_mcp.server.scaffold import placement
from imqueue_mcp.server.scaffold import templates as scaffold
from imqueue_mcp.server.scaffold.types import MAX_METHODS, Method, ScaffoldError
from imqueue_mcp.server.scaffold.wiring import MAX_CALLS
from imqueue_mcp.server.services import Services
from imqueue_mcp.server.tool_results import error_result, structured_result, text_result

Handler = Callable[..., Awaitable[CallToolResult]]
Where = Literal["both", "local", "hosted"]


@dataclass(frozen=True)
class Hints:
    """SPEC §3a's four annotations, in its column order."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool


# The kinds of tool SPEC §3a distinguishes, each named once.
READS_THE_WEB = Hints(read_only=True, destructive=False, idempotent=True, open_world=True)
READS_LOCALLY = Hints(read_only=True, destructive=False, idempotent=True, open_world=False)
# imq service create with apply: a project folder (over existing files with imq's -f), a git
# repository and, with imq's flags, a remote one: the host asks first.
CREATES_PROJECTS = Hints(read_only=False, destructive=True, idempotent=False, open_world=True)
WRITES_LOCAL_FILES = Hints(read_only=False, destructive=False, idempotent=True, open_world=False)
REPLACES_OVER_NETWORK = Hints(read_only=False, destructive=True, idempotent=True, open_world=True)
CHANGES_LOCAL_STATE = Hints(read_only=False, destructive=True, idempotent=False, open_world=False)


@dataclass(frozen=True)
class ToolRecord:
    name: str
    title: str
    hints: Hints
    where: Where
    description: str
    make: Callable[[Services], Handler]

    def annotations(self) -> ToolAnnotations:
        # The title twice, equal: 2025-06-18 and later clients read `title`, 2025-03-26 clients
        # read only `annotations.title`.
        return ToolAnnotations(
            title=self.title,
            read_only_hint=self.hints.read_only,
            destructive_hint=self.hints.destructive,
            idempotent_hint=self.hints.idempotent,
            open_world_hint=self.hints.open_world,
        )

    def build(self, services: Services) -> Tool:
        return strict_tool(
            self.make(services),
            name=self.name,
            title=self.title,
            description=self.description,
            annotations=self.annotations(),
        )


TOOLS: list[ToolRecord] = []


SERVES = {"both": {"local", "hosted"}, "local": {"local"}, "hosted": {"hosted"}}


def tool(
    *, title: str, hints: Hints, where: Where, description: str, name: str | None = None
) -> Callable[[Callable[[Services], Handler]], Callable[[Services], Handler]]:
    """Declare the tool whose handler factory follows; its name is `name`, else the factory's.
    One name may have a local and a hosted record (scaffold_* write files only locally)."""

    def register(make: Callable[[Services], Handler]) -> Callable[[Services], Handler]:
        called = name or make.__name__
        if any(record.name == called and SERVES[record.where] & SERVES[where] for record in TOOLS):
            raise ValueError(f"a tool named {called!r} is declared twice for one server")
        TOOLS.append(ToolRecord(called, title, hints, where, description, make))
        return make

    return register


def local_tools(services: Services) -> list[Tool]:
    return [record.build(services) for record in TOOLS if record.where in ("both", "local")]


def hosted_tools(services: Services) -> list[Tool]:
    return [record.build(services) for record in TOOLS if record.where in ("both", "hosted")]


def hosted_records() -> list[ToolRecord]:
    """The hosted tools' records, for what needs their names and titles but no Services."""
    return [record for record in TOOLS if record.where in ("both", "hosted")]


def local_only_names() -> frozenset[str]:
    """The tools only the local server has (the CLI bridge, the project tools): what a hosted
    answer may name but a hosted client cannot call."""
    hosted = {record.name for record in hosted_records()}
    return frozenset(record.name for record in TOOLS if record.where == "local" and record.name not in hosted)


def record_of(name: str) -> ToolRecord:
    """The record of `name`; the local one where a name has a local and a hosted record."""
    return next(record for record in TOOLS if record.name == name and record.where != "hosted")


# --- failures -> guided errors ------------------------------------------------------------

# Expected failures of the docs and scaffold tools -> their code in errors.py; first match wins.
FAILURE_CODES: tuple[tuple[type[Exception], ErrorCode], ...] = (
    (MalformedDocUrl, ErrorCode.INVALID_ARGUMENTS),
    (DocUrlError, ErrorCode.URL_REFUSED),
    (docs.PageNotFound, ErrorCode.PAGE_NOT_FOUND),
    (OfflineError, ErrorCode.OFFLINE),
    (FetchError, ErrorCode.SITE_UNREACHABLE),
    (docs.DocError, ErrorCode.SITE_UNREACHABLE),
    (CorpusUnavailable, ErrorCode.CORPUS_UNAVAILABLE),
    (StatusUnavailable, ErrorCode.FACTS_UNAVAILABLE),
    (CatalogueError, ErrorCode.UNKNOWN_PACKAGE),
    (ScaffoldError, ErrorCode.INVALID_SCAFFOLD_INPUT),
    (ValueError, ErrorCode.INVALID_ARGUMENTS),
)


async def offline_miss(url: str, error: OfflineError, services: Services) -> CallToolResult:
    """get_doc offline of a page with no saved copy: not found when the docs this server holds do
    not have it either (a mistyped URL), else the offline error, which says how to save the pages
    (hosted_offline words it for a client that cannot). With no docs at all, the offline error."""
    try:
        corpus = await services.corpus.current()
    except CorpusUnavailable:
        return failed(error)
    if await services.corpus.holds_page(url):
        return failed(error)
    return error_result(
        ErrorCode.PAGE_NOT_FOUND,
        f"{url} is not a page of the docs this server holds (the {corpus.source} of {corpus.fetched_at}).",
        "Call search_docs to find the page, then get_doc its URL.",
    )


def failed(error: Exception) -> CallToolResult:
    """An expected failure as a guided error: its message, its code's next step."""
    code = next((code for kind, code in FAILURE_CODES if isinstance(error, kind)), ErrorCode.INTERNAL_ERROR)
    return error_result(code, str(error), getattr(error, "action", ""))


def bridged(result: BridgeResult) -> CallToolResult:
    """An imq bridge result as a tool result, with its structured content when it has any;
    an error as a guided error."""
    if not result.is_error:
        if result.structured is not None:
            return structured_result(result.structured, result.text)
        return text_result(result.text)
    message, next_step = result.text, result.next_step
    if next_step and message.endswith(next_step):  # word_outcome appends it; say it once
        message = message.removesuffix(next_step).rstrip()
    return error_result(result.error_code or ErrorCode.IMQ_FAILED, message, next_step)


def _with_stored_line(data: dict[str, Any], text: str) -> str:
    """Facts from the snapshot say so first, with their date, as search_docs labels its corpus."""
    stored = data.get("stored")
    return f"{stored_line(stored)}\n\n{text}" if stored else text


# --- argument types shared by several tools -------------------------------------------

# Every string argument has a maximum length, and every list a maximum count, in its schema
# (SECURITY.md): a longer one is invalid_arguments before the tool runs. A name is at most
# npm's 214 characters (a service name becomes a package and a folder name); a path is at most
# Linux's PATH_MAX; free text (a query) what a question needs, and search_docs' query what a
# pasted error output needs (below).
NAME_CHARACTERS = 214
PATH_CHARACTERS = 4096
URL_CHARACTERS = 2048
VALUE_CHARACTERS = 4096
MAX_FLAGS = 64
MAX_SERVICES = 100

Query = Annotated[
    str, Field(min_length=1, max_length=200, description="What you want to know, in plain words")
]
SearchQuery = Annotated[
    str,
    Field(
        min_length=1,
        max_length=search.PASTE_CHARACTERS,
        description="What you want to know, in plain words; or an error output pasted whole (its stack "
        "frames, markers and file locations are left out of the search)",
    ),
]
Limit = Annotated[int, Field(ge=1, le=20, description="How many results, 1-20")]
ExampleLimit = Annotated[
    int, Field(ge=1, le=examples.MAX_LIMIT, description=f"How many examples, 1-{examples.MAX_LIMIT}")
]
PackageFilter = Annotated[
    str | None,
    Field(
        max_length=NAME_CHARACTERS, description="Limit to one package: 'rpc' or '@imqueue/rpc'. Omit for all."
    ),
]
DocLink = Annotated[
    str,
    Field(
        max_length=URL_CHARACTERS,
        description="https://imqueue.org/... or https://imqueue.com/... URL, or a path on imqueue.org "
        "('/get-started/'); #anchor allowed",
    ),
]
MaxTokens = Annotated[
    int,
    Field(
        ge=docs.MIN_MAX_TOKENS,
        le=docs.MAX_MAX_TOKENS,
        description="Most tokens to return (1 token = 4 characters); the rest comes through nextCursor",
    ),
]
DocCursor = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=2000,
        description="nextCursor of the previous get_doc answer for the same url; omit to start",
    ),
]
OutlineOnly = Annotated[
    bool, Field(description="true: the page's sections (heading, level, anchor URL, tokens), no body")
]
PassagesOn = Annotated[
    bool, Field(description="false: no passages, only titles, descriptions and URLs (the smallest reply)")
]
PassageTokens = Annotated[
    int,
    Field(
        ge=MIN_PASSAGE_TOKENS,
        le=MAX_PASSAGE_TOKENS,
        description="Most tokens in one result's passage (1 token = 4 characters)",
    ),
]
PassagesMaxTokens = Annotated[
    int,
    Field(
        ge=MIN_PASSAGE_TOKENS,
        le=MAX_REPLY_TOKENS,
        description="Most tokens in all the passages of the reply together; later results go without",
    ),
]
Methods = Annotated[
    list[Method] | None,
    Field(max_length=MAX_METHODS, description="The exposed methods; omit for a starter template"),
]
ServiceName = Annotated[str, Field(min_length=1, max_length=NAME_CHARACTERS)]
ServiceNames = Annotated[
    list[ServiceName] | None,
    Field(max_length=MAX_SERVICES, description="Service names (folder names, no path); omit for all"),
]


# --- docs -------------------------------------------------------------------------------


@tool(
    title="Search the @imqueue docs",
    hints=READS_THE_WEB,
    where="both",
    description=(
        "Search the @imqueue documentation: imqueue.org (framework guides, tutorial, CLI guide, API "
        "reference of every package) and imqueue.com (licensing, pricing, support). Returns ranked "
        "results with title, section, description, canonical URL and what each is (kind and label, "
        "e.g. 'API · @imqueue/core method'); a deprecated API's description starts 'DEPRECATED'. "
        "Call it before writing or changing @imqueue code, then read the best hits with get_doc. "
        "An error output can be pasted whole: its message lines are searched (stack frames, markers "
        "and file locations left out; `searched` shows the text), and a known error code gets a "
        "diagnosis[] first. "
        "package (e.g. 'rpc' or '@imqueue/pg-prisma') limits results to one package. A miss lists "
        "the sections the corpus covers and the nearest indexed terms: search again with those "
        "instead of concluding the topic is undocumented. When results involve one of two mutually "
        "exclusive packages, an advisory says how to pick exactly one, and advisories[] give the "
        "default's install command. Each result carries a passage: the part of its section that best "
        f"answers the query (whole sentences, code blocks whole or cut with a marker), its #anchor URL "
        f"and tokens; at most passageTokens (default {DEFAULT_PASSAGE_TOKENS}) each and maxTokens "
        f"(default {DEFAULT_REPLY_TOKENS}) in all; passages: false leaves them out. A passage often "
        "answers outright; read the section with get_doc(passage.url) before relying on more. Local "
        "server with a project in reach: an API hit the installed version declares differently, or "
        "lacks, carries installed {version, status, signature}; installedOnly lists matching symbols "
        "only the installed version has."
    ),
)
def search_docs(services: Services) -> Handler:
    async def search_docs(
        query: SearchQuery,
        limit: Limit = 6,
        package: PackageFilter = None,
        passages: PassagesOn = True,
        passageTokens: PassageTokens = DEFAULT_PASSAGE_TOKENS,  # the argument's published name
        maxTokens: PassagesMaxTokens = DEFAULT_REPLY_TOKENS,
    ) -> Annotated[CallToolResult, SearchResult]:
        wanted = PassageOptions(passages, passageTokens, maxTokens)
        try:
            data = await search.search_docs(
                services.corpus,
                query,
                limit,
                package,
                services.sizes,
                wanted,
                answers=services.answers,
                replies=services.replies,
            )
        except (CorpusUnavailable, ValueError) as error:
            return failed(error)
        return structured_result(data, search.render_search_text(data))

    return search_docs


@tool(
    title="Read an @imqueue docs page",
    hints=READS_THE_WEB,
    where="both",
    description=(
        "Read one imqueue.org or imqueue.com page as markdown, to read or quote it. Pass a URL from "
        "search_docs (or its path: '/get-started/' reads https://imqueue.org/get-started/). With a "
        "#anchor it returns just that section, with its heading path and its position in the page; "
        "an unknown anchor returns the page's outline (its sections and their anchor URLs) instead. "
        "outline: true returns that outline (heading, level, anchor URL, tokens) without the body. "
        "At most maxTokens (default 8000; a token is 4 characters) come back, cut at a section or "
        "paragraph boundary, with truncated: true and a nextCursor: call get_doc with the same url "
        "and cursor: nextCursor to read on, nothing lost or repeated. A URL naming a file "
        "(https://imqueue.org/llms-full.txt, /blog/feed.xml, /page.md) is returned as is. Only "
        "https://imqueue.org/... and https://imqueue.com/... are read (http:// on those hosts is read "
        "as https); any other host is refused. Cite the returned url."
    ),
)
def get_doc(services: Services) -> Handler:
    async def get_doc(
        url: DocLink,
        maxTokens: MaxTokens = docs.DEFAULT_MAX_TOKENS,  # the argument's published name
        cursor: DocCursor = None,
        outline: OutlineOnly = False,
    ) -> Annotated[CallToolResult, DocResult]:
        request = docs.DocRequest(max_tokens=maxTokens, cursor=cursor, outline=outline)
        try:
            data = await docs.read_doc(url, services.fetcher, services.sections, services.saved, request)
        except docs.CursorError as error:
            return error_result(ErrorCode.INVALID_ARGUMENTS, str(error), docs.CURSOR_NEXT_STEP)
        except OfflineError as error:
            return await offline_miss(url, error, services)
        except (DocUrlError, FetchError, docs.DocError) as error:
            return failed(error)
        services.sizes.record(data)
        needs = [note for code in code_blocks(data["markdown"]) for note in known_needs(code)]
        if needs:
            data["notes"] = list(dict.fromkeys(needs))
        return structured_result(data, docs.render_doc_text(data))

    return get_doc


@tool(
    title="Find @imqueue code examples in the docs",
    hints=READS_THE_WEB,
    where="both",
    description=(
        "Find code examples in the @imqueue documentation: the fenced code blocks of imqueue.org's "
        "guides, tutorial, CLI guide, articles and API pages, ranked for your query by the same "
        "ranker as search_docs, with the words of the section around each block as context. Each "
        "result gives the code, its language, the canonical URL of its section (#anchor), the page "
        "title and section heading, the sentence introducing it, and the @imqueue packages it "
        "concerns (with the documented version when the page states one). package (e.g. 'rpc') keeps "
        "the examples of one package: those its page documents or its code imports or installs. "
        "limit is 1-10 (default 3). Each result carries a passage: the prose of its section that best "
        "answers the query, the sentences beside the block first, within passageTokens each and "
        "maxTokens in all (passages: false leaves them out). Read the section with get_doc before "
        "adapting an example. Local server with a project in reach: examples of an API symbol the "
        "installed version declares differently, or lacks, carry installed; installedOnly as in "
        "search_docs."
    ),
)
def find_examples(services: Services) -> Handler:
    async def find_examples(
        query: Query,
        limit: ExampleLimit = examples.DEFAULT_LIMIT,
        package: PackageFilter = None,
        passages: PassagesOn = True,
        passageTokens: PassageTokens = DEFAULT_PASSAGE_TOKENS,
        maxTokens: PassagesMaxTokens = DEFAULT_REPLY_TOKENS,
    ) -> Annotated[CallToolResult, ExampleResult]:
        wanted = PassageOptions(passages, passageTokens, maxTokens)
        try:
            data = await examples.find_examples(services.examples, query, limit, package, wanted)
        except examples.ExamplesUnavailable as error:
            return error_result(ErrorCode.CORPUS_UNAVAILABLE, str(error), examples.REBUILD_ACTION)
        except (CorpusUnavailable, ValueError) as error:
            return failed(error)
        return structured_result(data, examples.render_examples_text(data))

    return find_examples


# --- packages ---------------------------------------------------------------------------


@tool(
    title="List @imqueue packages",
    hints=READS_THE_WEB,
    where="both",
    description=(
        "List every documented @imqueue package with a one-line summary and its install command, plus "
        "its current version, licence, Node.js floor and release date read now from "
        "imqueue.org/status.json. Call it before adding an @imqueue dependency. Where two packages "
        "cover the same ground (pg-prisma / pg-sequelize, opentelemetry / datadog) the entry carries a "
        "pick rule: install exactly one of the pair. If imqueue.org does not answer, or offline, the facts "
        "come from the docs snapshot, labelled with its date (stored); with neither, the list still "
        "comes back, with factsUnavailable: true and no versions."
    ),
)
def list_packages(services: Services) -> Handler:
    async def list_packages() -> Annotated[CallToolResult, PackageList]:
        data = await status.list_packages(services.facts)
        return structured_result(data, _with_stored_line(data, render_packages_markdown(data)))

    return list_packages


@tool(
    title="@imqueue package versions and licences",
    hints=READS_THE_WEB,
    where="both",
    description=(
        "Current version, licence, engines.node floor and last release date of one published @imqueue "
        "package (package: 'rpc' or '@imqueue/rpc'), or of all of them when package is omitted, plus "
        "the framework-wide licence, Node.js and Redis requirements. Read live from "
        "imqueue.org/status.json; covers @imqueue/cli and @imqueue/mcp too. Use it instead of a web "
        "search for version and licence questions. If imqueue.org does not answer, or offline, it answers "
        "from the docs snapshot's copy, labelled with its date (stored); with neither, the call fails "
        "and says so rather than answering with unlabelled stale numbers."
    ),
)
def package_status(services: Services) -> Handler:
    async def package_status(
        package: Annotated[
            str | None,
            Field(
                max_length=NAME_CHARACTERS,
                description="'rpc' or '@imqueue/rpc' (scope optional); omit for every package",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, PackageStatus]:
        try:
            data = await status.package_status(services.facts, package)
        except FactsUnavailable as error:
            return error_result(ErrorCode.FACTS_UNAVAILABLE, str(error), error.next_step)
        except (StatusUnavailable, CatalogueError) as error:
            return failed(error)
        return structured_result(data, _with_stored_line(data, render_status_markdown(data)))

    return package_status


# --- scaffolds --------------------------------------------------------------------------


CallsArgument = Annotated[
    list[ServiceName] | None,
    Field(
        max_length=MAX_CALLS,
        description="Services this one calls (e.g. ['InventoryService']): each one's client is wired "
        "in (import, a client on its queue, started and destroyed with the service)",
    ),
]
CallTimeout = Annotated[
    int | None,
    Field(
        ge=1,
        le=scaffold.MAX_CALL_TIMEOUT_MS,
        strict=True,
        description="Per-call timeout (callTimeout) in milliseconds of the clients made; omit for the "
        f"scaffold's default of {scaffold.DEFAULT_CALL_TIMEOUT_MS} (rpc's own is none)",
    ),
]
ScaffoldName = Annotated[
    str,
    Field(min_length=1, max_length=NAME_CHARACTERS, description="Service name, e.g. 'user' or 'UserService'"),
]
CalledService = Annotated[
    str,
    Field(min_length=1, max_length=NAME_CHARACTERS, description="The service's name or class name"),
]


async def _scaffolded(
    make: Callable[[], dict[str, Any]],
    path: str | None,
    dry_run: bool,
    overwrite: bool,
    render: Callable[..., str],
) -> CallToolResult:
    """A scaffold's result; with `path` (local server only), its files placed there first."""
    try:
        data = make()
    except ScaffoldError as error:
        return failed(error)
    if path is None:
        return structured_result(data, render(data))
    refused = await scaffold_writes.place(data, path, dry_run, overwrite)
    if refused is not None:
        return refused
    return structured_result(data, render(data, placement.render_placement(data["written"])))


async def _service_scaffold(
    name: str,
    methods: list[Method] | None,
    calls: list[str] | None,
    call_timeout_ms: int | None,
    path: str | None,
    dry_run: bool,
    overwrite: bool,
) -> CallToolResult:
    def make() -> dict[str, Any]:
        return scaffold.scaffold_service(name, methods, calls, call_timeout_ms, path)

    return await _scaffolded(make, path, dry_run, overwrite, scaffold.render_service_markdown)


async def _client_scaffold(
    service: str,
    methods: list[Method] | None,
    call_timeout_ms: int | None,
    path: str | None,
    dry_run: bool,
    overwrite: bool,
    declared_in: str | None = None,
) -> CallToolResult:
    def make() -> dict[str, Any]:
        return scaffold.scaffold_client(service, methods, call_timeout_ms, path, declared_in)

    return await _scaffolded(make, path, dry_run, overwrite, scaffold.render_client_markdown)


@tool(
    title="Scaffold an @imqueue service (returns text)",
    hints=READS_LOCALLY,
    where="hosted",
    description=scaffold.SCAFFOLD_SERVICE_DESCRIPTION,
)
def scaffold_service(services: Services) -> Handler:
    async def scaffold_service(
        name: ScaffoldName,
        methods: Methods = None,
        calls: CallsArgument = None,
        call_timeout_ms: CallTimeout = None,
    ) -> Annotated[CallToolResult, ServiceScaffold]:
        return await _service_scaffold(name, methods, calls, call_timeout_ms, None, True, False)

    return scaffold_service


@tool(
    name="scaffold_service",
    title="Scaffold an @imqueue service (text, or files written with path)",
    hints=WRITES_LOCAL_FILES,
    where="local",
    description=scaffold.SCAFFOLD_SERVICE_LOCAL_DESCRIPTION,
)
def scaffold_service_here(services: Services) -> Handler:
    async def scaffold_service(
        name: ScaffoldName,
        methods: Methods = None,
        calls: CallsArgument = None,
        call_timeout_ms: CallTimeout = None,
        path: scaffold_writes.TargetPath = None,
        dry_run: scaffold_writes.DryRun = True,
        overwrite: scaffold_writes.Overwrite = False,
    ) -> Annotated[CallToolResult, ServiceScaffold]:
        return await _service_scaffold(name, methods, calls, call_timeout_ms, path, dry_run, overwrite)

    return scaffold_service


@tool(
    title="Scaffold an @imqueue client (returns text)",
    hints=READS_LOCALLY,
    where="hosted",
    description=scaffold.SCAFFOLD_CLIENT_DESCRIPTION,
)
def scaffold_client(services: Services) -> Handler:
    async def scaffold_client(
        service: CalledService, methods: Methods = None, call_timeout_ms: CallTimeout = None
    ) -> Annotated[CallToolResult, ClientScaffold]:
        return await _client_scaffold(service, methods, call_timeout_ms, None, True, False)

    return scaffold_client


@tool(
    name="scaffold_client",
    title="Scaffold an @imqueue client (text, or files written with path)",
    hints=WRITES_LOCAL_FILES,
    where="local",
    description=scaffold.SCAFFOLD_CLIENT_LOCAL_DESCRIPTION,
)
def scaffold_client_here(services: Services) -> Handler:
    async def scaffold_client(
        service: CalledService,
        methods: Methods = None,
        call_timeout_ms: CallTimeout = None,
        path: scaffold_writes.TargetPath = None,
        dry_run: scaffold_writes.DryRun = True,
        overwrite: scaffold_writes.Overwrite = False,
    ) -> Annotated[CallToolResult, ClientScaffold]:
        declared = await service_classes.declared_in(service, await scaffold_writes.allowed_folders())
        return await _client_scaffold(service, methods, call_timeout_ms, path, dry_run, overwrite, declared)

    return scaffold_client


@tool(
    title="How to run this server locally",
    hints=READS_LOCALLY,
    where="hosted",
    description=(
        "READ-ONLY: returns how to install and run this MCP server on your own machine and the "
        "configuration snippets for Claude Code, Cursor and VS Code; installs nothing. The local "
        "server adds the imq CLI tools (create_service, generate_client, fleet, config, logs, ...), "
        "which this hosted endpoint cannot offer because they act on the caller's machine."
    ),
)
def local_install_guide(services: Services) -> Handler:
    async def local_install_guide() -> CallToolResult:
        count = sum(1 for record in TOOLS if record.where in ("both", "local"))
        return text_result(LOCAL_INSTALL_GUIDE.replace("{local_tool_count}", str(count)))

    return local_install_guide


# --- the imq CLI bridge (local only: it acts on the caller's machine) --------------------


@tool(
    title="imq CLI status",
    hints=READS_LOCALLY,
    where="local",
    description=(
        "Report whether the imq CLI (@imqueue/cli) is installed on this machine, and its version. Call "
        "it before the other CLI tools. If imq is absent, cli_install installs it; scaffold_service "
        "and scaffold_client work without it."
    ),
)
def cli_status(services: Services) -> Handler:
    async def cli_status() -> CallToolResult:
        return bridged(await bridge.cli_status())

    return cli_status


@tool(
    title="Install the imq CLI (npm install -g @imqueue/cli)",
    hints=REPLACES_OVER_NETWORK,
    where="local",
    description=(
        "Install or update the imq CLI globally: npm install -g @imqueue/cli (optionally @version). "
        "Downloads from the npm registry and replaces any installed imq; needs Node.js and npm on "
        "this machine. Check cli_status first."
    ),
)
def cli_install(services: Services) -> Handler:
    async def cli_install(
        version: Annotated[
            str | None,
            Field(
                max_length=NAME_CHARACTERS, description="A version or dist-tag, e.g. '5.2.2'; omit for latest"
            ),
        ] = None,
    ) -> CallToolResult:
        return bridged(await bridge.cli_install(version=version))

    return cli_install


@tool(
    title="imq CLI help",
    hints=READS_LOCALLY,
    where="local",
    description=(
        "Show the help of an imq command (imq <command> --help), which prints and exits, e.g. command "
        "'service create' or 'ctl start'; omit command for the top level. Use it to find the exact "
        "flags that make a command run without prompting: every CLI tool here runs imq with stdin "
        "closed and a timeout, so a command that would prompt fails instead."
    ),
)
def cli_help(services: Services) -> Handler:
    async def cli_help(
        command: Annotated[
            str | None,
            Field(
                max_length=NAME_CHARACTERS,
                description="e.g. 'service create', 'client generate', 'ctl start'; omit for all",
            ),
        ] = None,
    ) -> CallToolResult:
        return bridged(await bridge.cli_help(command=command))

    return cli_help


async def refuse_outside_workspace(path: str | None) -> CallToolResult | None:
    """The folder an imq command writes into, held to the client's roots (else the working
    directory) as the scaffolds' is: a relative path or none at all is the server's working directory's."""
    folder = Path.cwd() / path if path is not None else Path.cwd()
    return await scaffold_writes.refuse_outside(str(folder), "path")


@tool(
    title="Create an @imqueue service project (imq service create)",
    hints=CREATES_PROJECTS,
    where="local",
    description=(
        "Create an @imqueue service project with imq service create NAME [PATH]. DRY RUN BY DEFAULT: "
        "without apply: true it passes --dry-run, writes nothing and shows what would be created. "
        "apply: true writes the project and, depending on flags and the imq config, may initialise "
        "git, create a remote repository, wire CI and push: set it only when the user asked for a "
        "real project. Put imq's flags in flags as imq takes them, short or long, the value inline or "
        "as the next item, e.g. ['-e', 'you@example.com', '-a', 'Your Name', '--no-use-git', "
        "'--no-install']; imq needs the author's email even for a dry run (see cli_help 'service "
        "create'). The result names the dependencies the template leaves unpinned (imq's default "
        "pins none, so npm install fails with ERESOLVE) and the fix; pin: true (with apply) writes "
        "known-good ranges into the created package.json. For service code without a project, use "
        "scaffold_service."
    ),
)
def create_service(services: Services) -> Handler:
    async def create_service(
        name: Annotated[
            str,
            Field(
                min_length=1,
                max_length=NAME_CHARACTERS,
                description="The new service's name: a folder name, no path",
            ),
        ],
        path: Annotated[
            str | None,
            Field(max_length=PATH_CHARACTERS, description="Target directory; imq's default when omitted"),
        ] = None,
        flags: Annotated[
            list[Annotated[str, Field(max_length=VALUE_CHARACTERS)]] | None,
            Field(
                max_length=MAX_FLAGS,
                description="imq service create flags, e.g. ['-e', 'you@example.com', '--no-use-git']",
            ),
        ] = None,
        apply: Annotated[
            bool, Field(description="false (default): dry run, writes nothing. true: really create")
        ] = False,
        pin: Annotated[
            bool,
            Field(
                description="With apply: write known-good ranges (typescript ^5.9.3, @types/node "
                "^22.12.0) and the @imqueue/core override into the created package.json"
            ),
        ] = False,
    ) -> CallToolResult:
        refused = await refuse_outside_workspace(path)
        if refused is not None:
            return refused
        return bridged(await bridge.create_service(name, path=path, flags=flags, apply=apply, pin=pin))

    return create_service


@tool(
    title="Generate a service client (imq client generate)",
    hints=REPLACES_OVER_NETWORK,  # overwrite: true replaces the client file, with no copy kept
    where="local",
    description=(
        "Generate the typed client of a running @imqueue service from its Redis broker: redis "
        "'host:port' (default: the IMQ_REDIS environment variable, else localhost:6379). On "
        "localhost:6379 it runs imq client generate SERVICE [PATH]; imq reaches no other broker, so "
        "for any other address it runs the same generator (IMQClient.create) through the project's "
        "own installed @imqueue/rpc, and says so. Writes PATH/SERVICE.ts (default: the working "
        "directory); an existing file is replaced only with overwrite: true. Returns the file's path "
        "and content and the namespace and client class to import. Its errors tell broker_unreachable "
        "(no Redis at the address) from service_not_answering (Redis up, the service did not answer). "
        "To see the command and names without running anything, use scaffold_client."
    ),
)
def generate_client(services: Services) -> Handler:
    async def generate_client(
        service: Annotated[
            str,
            Field(
                min_length=1,
                max_length=NAME_CHARACTERS,
                description="Class name of the running service (a name, no path)",
            ),
        ],
        path: Annotated[
            str | None,
            Field(
                max_length=PATH_CHARACTERS,
                description="Output directory (imq default: the working directory)",
            ),
        ] = None,
        overwrite: Annotated[bool, Field(description="Replace an existing client file")] = False,
        redis: Annotated[
            str | None,
            Field(
                max_length=300,
                description="The broker the service runs on, host:port as its IMQ_REDIS; default: "
                "this server's IMQ_REDIS, else localhost:6379",
            ),
        ] = None,
    ) -> Annotated[CallToolResult, GeneratedClient]:
        refused = await refuse_outside_workspace(path)
        if refused is not None:
            return refused
        return bridged(await bridge.generate_client(service, path=path, overwrite=overwrite, redis=redis))

    return generate_client


@tool(
    title="Manage the local service fleet (imq ctl)",
    hints=CHANGES_LOCAL_STATE,
    where="local",
    description=(
        "Manage the local fleet of @imqueue services with imq ctl ACTION. status is read-only and "
        "shows each tracked service's mode; start, stop and restart change running processes (stop "
        "and restart drop in-flight work). start (mode dev, the default) runs `npm run dev` in each "
        "service: in imq's template that deletes the compiled files and runs nodemon, which restarts "
        "the service on every file written into src/ (a client generated there included); the result "
        "says what each service's dev script does. mode: 'production' with start or restart runs "
        "`npm run build` (a failed build is an error carrying the compiler's output), then `npm "
        "start` detached, with no watcher, recorded where imq ctl records its own, so status, stop "
        "and logs treat it alike; a service already running is not started twice. redis 'host:port' "
        "(start, restart) gives the started services IMQ_REDIS, once a Redis answers there; default: "
        "they inherit this server's environment, and a restart keeps the redis fleet last started them "
        "with. The services are "
        "the sub-folders of path; services limits the action to the named ones. update runs git pull "
        "in each service before a dev start (-u), calm starts them one at a time, each once the "
        "previous is ready (-c, --calm), verbose shows how long each command took (-v)."
    ),
)
def fleet(services: Services) -> Handler:
    async def fleet(
        action: Annotated[
            Literal["start", "stop", "restart", "status"], Field(description="What imq ctl does")
        ],
        path: Annotated[
            str | None,
            Field(
                max_length=PATH_CHARACTERS,
                description="Folder whose sub-folders are the services; "
                "defaults to the server's working directory",
            ),
        ] = None,
        services: ServiceNames = None,
        update: Annotated[bool, Field(description="git pull in each service first (-u); dev only")] = False,
        calm: Annotated[
            bool, Field(description="Start one at a time, each once the previous is ready (-c)")
        ] = False,
        verbose: Annotated[bool, Field(description="Show how long each command took (-v)")] = False,
        mode: Annotated[
            Literal["dev", "production"],
            Field(
                description="start/restart only. dev (default): imq ctl's `npm run dev` (nodemon in "
                "imq's template). production: `npm run build`, then `npm start` detached, no watcher"
            ),
        ] = "dev",
        redis: Annotated[
            str | None,
            Field(
                max_length=300,
                description="start/restart only: the broker the started services get as IMQ_REDIS, "
                "host:port; default: a restart keeps the one fleet last gave them, else they inherit "
                "this server's IMQ_REDIS",
            ),
        ] = None,
    ) -> CallToolResult:
        return bridged(
            await bridge.fleet(
                action,
                path=path,
                services=services,
                update=update,
                calm=calm,
                verbose=verbose,
                mode=mode,
                redis=redis,
            )
        )

    return fleet


@tool(
    title="imq CLI configuration (imq config)",
    hints=CHANGES_LOCAL_STATE,
    where="local",
    description=(
        "Read or change the imq CLI configuration with imq config ACTION. get (option, or all) and "
        "check are read-only; set writes one option (option and value required); init asks for every "
        "option interactively, so it fails here: prefer set."
    ),
)
def config(services: Services) -> Handler:
    async def config(
        action: Annotated[Literal["check", "get", "set", "init"], Field(description="What imq config does")],
        option: Annotated[
            str | None,
            Field(max_length=NAME_CHARACTERS, description="Option name (get: optional; set: required)"),
        ] = None,
        value: Annotated[
            str | None, Field(max_length=VALUE_CHARACTERS, description="New value (set only)")
        ] = None,
    ) -> CallToolResult:
        return bridged(await bridge.config(action, option=option, value=value))

    return config


@tool(
    title="Local service logs (imq log)",
    hints=CHANGES_LOCAL_STATE,
    where="local",
    description=(
        "Logs of services started by fleet (imq log). dump prints the collected logs and exits (all "
        "services, or the named ones); clean deletes the collected log files. prefix: false drops the "
        "service-name prefix on each line."
    ),
)
def logs(services: Services) -> Handler:
    async def logs(
        action: Annotated[Literal["dump", "clean"], Field(description="dump: print and exit; clean: delete")],
        services: ServiceNames = None,
        prefix: Annotated[bool, Field(description="Prefix each line with its service name")] = True,
    ) -> CallToolResult:
        return bridged(await bridge.logs(action, services=services, prefix=prefix))

    return logs


# --- the user's project (local only: it reads the user's disk) ----------------------------


@tool(
    title="Inspect the user's @imqueue project",
    hints=READS_LOCALLY,
    where="local",
    description=project_tools.DESCRIPTION,
)
def inspect_project(services: Services) -> Handler:
    handler = project_tools.inspect_project_handler(services)
    return handler


@tool(
    title="An @imqueue API symbol as installed",
    hints=READS_THE_WEB,
    where="local",
    description=api_tools.DESCRIPTION,
)
def get_api(services: Services) -> Handler:
    return api_tools.get_api_handler(services)


@tool(
    title="Installed @imqueue API vs the docs' release",
    hints=READS_THE_WEB,
    where="local",
    description=api_tools.DIFF_DESCRIPTION,
)
def api_diff(services: Services) -> Handler:
    return api_tools.api_diff_handler(services)

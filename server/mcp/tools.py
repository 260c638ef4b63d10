"""The tools: names, titles, SPEC §3a annotations, descriptions, schemas, and thin bodies.

Each body calls one function of the module that owns the behaviour (search, docs, status,
scaffold, cli_bridge) and turns the answer into a CallToolResult: structuredContent plus
its text rendering for the six shared tools and generate_client, text alone for the rest.
Something expected that went wrong is a guided error (errors.py): isError, what happened and
the next step, in the text and as structuredContent.error with its code from the one table
(`failed`, `bridged`).

    local_tools(services)   the stdio tools (app.py adds inspect_project: project_tools.py)
    hosted_tools(services)  the read-only tools of the hosted endpoint

Annotations are one table, HINTS, so a change of judgement is one visible line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from imqueue_mcp.server.catalogue import status
from imqueue_mcp.server.catalogue.facts import FactsUnavailable, PackageFacts, stored_line
from imqueue_mcp.server.catalogue.packages import (
    CatalogueError,
    render_packages_markdown,
    render_status_markdown,
)
from imqueue_mcp.server.config import Config
from imqueue_mcp.server.docs import examples, search
from imqueue_mcp.server.docs import read as docs
from imqueue_mcp.server.docs.corpus import CorpusKeeper, CorpusUnavailable
from imqueue_mcp.server.docs.fetch import DocUrlError, Fetcher, FetchError, OfflineError
from imqueue_mcp.server.docs.pages import SavedPages
from imqueue_mcp.server.docs.sizes import DocSizes
from imqueue_mcp.server.errors import ErrorCode, error_result
from imqueue_mcp.server.mcp.instructions import LOCAL_INSTALL_GUIDE
from imqueue_mcp.server.mcp.schemas import (
    ClientScaffold,
    DocResult,
    ExampleResult,
    GeneratedClient,
    PackageList,
    PackageStatus,
    SearchResult,
    ServiceScaffold,
)
from imqueue_mcp.server.mcp.strict import strict_tool
from imqueue_mcp.server.scaffold import templates as scaffold
from imqueue_mcp.server.scaffold.types import Method, ScaffoldError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field


@dataclass
class Services:
    """What the tool bodies share for the life of the server."""

    config: Config
    fetcher: Fetcher
    corpus: CorpusKeeper
    sections: docs.SectionRanges
    saved: SavedPages  # the snapshot's pages, get_doc's answer offline
    examples: examples.ExampleFinder  # the corpus's code examples, ranked (find_examples)
    facts: PackageFacts  # status.json, live or the snapshot's copy
    sizes: DocSizes = field(default_factory=DocSizes)  # get_doc's answer sizes, for search hits

    @classmethod
    def from_config(cls, config: Config) -> Services:
        fetcher = Fetcher(dict(config.origins), offline=config.offline)
        keeper = CorpusKeeper(config)
        return cls(
            config,
            fetcher,
            keeper,
            docs.SectionRanges(fetcher),
            SavedPages(keeper),
            examples.ExampleFinder(keeper),
            PackageFacts(fetcher, keeper),
        )


def hints(read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


# SPEC §3a, row for row: (readOnly, destructive, idempotent, openWorld).
HINTS: dict[str, ToolAnnotations] = {
    "search_docs": hints(True, False, True, True),
    "get_doc": hints(True, False, True, True),
    "find_examples": hints(True, False, True, True),
    "list_packages": hints(True, False, True, True),
    "package_status": hints(True, False, True, True),
    "scaffold_service": hints(True, False, True, False),
    "scaffold_client": hints(True, False, True, False),
    "local_install_guide": hints(True, False, True, False),
    "cli_status": hints(True, False, True, False),
    "cli_help": hints(True, False, True, False),
    "create_service": hints(False, False, False, True),
    "generate_client": hints(False, False, True, True),
    "cli_install": hints(False, True, True, True),
    "fleet": hints(False, True, False, False),
    "config": hints(False, True, False, False),
    "logs": hints(False, True, False, False),
    "inspect_project": hints(True, False, True, False),
}

TITLES = {
    "search_docs": "Search the @imqueue docs",
    "get_doc": "Read an @imqueue docs page",
    "find_examples": "Find @imqueue code examples in the docs",
    "list_packages": "List @imqueue packages",
    "package_status": "@imqueue package versions and licences",
    "scaffold_service": "Scaffold an @imqueue service (returns text)",
    "scaffold_client": "Scaffold an @imqueue client (returns text)",
    "local_install_guide": "How to run this server locally",
    "cli_status": "imq CLI status",
    "cli_help": "imq CLI help",
    "create_service": "Create an @imqueue service project (imq service create)",
    "generate_client": "Generate a service client (imq client generate)",
    "cli_install": "Install the imq CLI (npm install -g @imqueue/cli)",
    "fleet": "Manage the local service fleet (imq ctl)",
    "config": "imq CLI configuration (imq config)",
    "logs": "Local service logs (imq log)",
}

DESCRIPTIONS = {
    "search_docs": (
        "Search the @imqueue documentation: imqueue.org (framework guides, tutorial, CLI guide, API "
        "reference of every package) and imqueue.com (licensing, pricing, support). Returns ranked "
        "results with title, section, description, canonical URL and what each is (kind and label, "
        "e.g. 'API · @imqueue/core method'); a deprecated API's description starts 'DEPRECATED'. "
        "Call it before writing or changing @imqueue code, then read the best hits with get_doc. "
        "package (e.g. 'rpc' or '@imqueue/pg-prisma') limits results to one package. A miss lists "
        "the sections the corpus covers and the nearest indexed terms: search again with those "
        "instead of concluding the topic is undocumented. When results involve one of two mutually "
        "exclusive packages, an advisory says how to pick exactly one, and advisories[] give the "
        "default's install command."
    ),
    "get_doc": (
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
    "find_examples": (
        "Find code examples in the @imqueue documentation: the fenced code blocks of imqueue.org's "
        "guides, tutorial, CLI guide, articles and API pages, ranked for your query by the same "
        "ranker as search_docs, with the words of the section around each block as context. Each "
        "result gives the code, its language, the canonical URL of its section (#anchor), the page "
        "title and section heading, the sentence introducing it, and the @imqueue packages it "
        "concerns (with the documented version when the page states one). package (e.g. 'rpc') keeps "
        "the examples of one package: those its page documents or its code imports or installs. "
        "limit is 1-10 (default 3). Read the section with get_doc before adapting an example."
    ),
    "list_packages": (
        "List every documented @imqueue package with a one-line summary and its install command, plus "
        "its current version, licence, Node.js floor and release date read now from "
        "imqueue.org/status.json. Call it before adding an @imqueue dependency. Where two packages "
        "cover the same ground (pg-prisma / pg-sequelize, opentelemetry / datadog) the entry carries a "
        "pick rule: install exactly one of the pair. If imqueue.org does not answer, or offline, the facts "
        "come from the docs snapshot, labelled with its date (stored); with neither, the list still "
        "comes back, with factsUnavailable: true and no versions."
    ),
    "package_status": (
        "Current version, licence, engines.node floor and last release date of one published @imqueue "
        "package (package: 'rpc' or '@imqueue/rpc'), or of all of them when package is omitted, plus "
        "the framework-wide licence, Node.js and Redis requirements. Read live from "
        "imqueue.org/status.json; covers @imqueue/cli and @imqueue/mcp too. Use it instead of a web "
        "search for version and licence questions. If imqueue.org does not answer, or offline, it answers "
        "from the docs snapshot's copy, labelled with its date (stored); with neither, the call fails "
        "and says so rather than answering with unlabelled stale numbers."
    ),
    "scaffold_service": scaffold.SCAFFOLD_SERVICE_DESCRIPTION,
    "scaffold_client": scaffold.SCAFFOLD_CLIENT_DESCRIPTION,
    "local_install_guide": (
        "READ-ONLY: returns how to run this MCP server on your own machine (uvx or pipx) and the "
        "configuration snippets for Claude Code, Cursor and VS Code; installs nothing. The local "
        "server adds the imq CLI tools (create_service, generate_client, fleet, config, logs, ...), "
        "which this hosted endpoint cannot offer because they act on the caller's machine."
    ),
    "cli_status": (
        "Report whether the imq CLI (@imqueue/cli) is installed on this machine, and its version. Call "
        "it before the other CLI tools. If imq is absent, cli_install installs it; scaffold_service "
        "and scaffold_client work without it."
    ),
    "cli_help": (
        "Show the help of an imq command (imq <command> --help), which prints and exits, e.g. command "
        "'service create' or 'ctl start'; omit command for the top level. Use it to find the exact "
        "flags that make a command run without prompting: every CLI tool here runs imq with stdin "
        "closed and a timeout, so a command that would prompt fails instead."
    ),
    "create_service": (
        "Create an @imqueue service project with imq service create NAME [PATH]. DRY RUN BY DEFAULT: "
        "without apply: true it passes --dry-run, writes nothing and shows what would be created. "
        "apply: true writes the project and, depending on flags and the imq config, may initialise "
        "git, create a remote repository, wire CI and push: set it only when the user asked for a "
        "real project. Put imq's flags in flags as imq takes them, short or long, the value inline or "
        "as the next item, e.g. ['-e', 'you@example.com', '-a', 'Your Name', '--no-use-git', "
        "'--no-install']; imq needs the author's email even for a dry run (see cli_help 'service "
        "create'). For service code without a project, use scaffold_service."
    ),
    "generate_client": (
        "Generate the typed client of a running @imqueue service with imq client generate SERVICE "
        "[PATH]. The service must be running and reachable through Redis. Writes PATH/SERVICE.ts "
        "(default: the working directory); an existing file is replaced only with overwrite: true. "
        "Returns the file's path and content and the namespace and client class to import. To see "
        "the command, file and class names without running anything, use scaffold_client."
    ),
    "cli_install": (
        "Install or update the imq CLI globally: npm install -g @imqueue/cli (optionally @version). "
        "Downloads from the npm registry and replaces any installed imq; needs Node.js and npm on "
        "this machine. Check cli_status first."
    ),
    "fleet": (
        "Manage the local fleet of @imqueue services with imq ctl ACTION. status is read-only; start, "
        "stop and restart change running processes (stop and restart drop in-flight work). The "
        "services are the sub-folders of path; services limits the action to the named ones. update "
        "runs git pull in each service before starting (-u), calm starts them one at a time, each "
        "once the previous is ready (-c, --calm), verbose shows how long each command took (-v)."
    ),
    "config": (
        "Read or change the imq CLI configuration with imq config ACTION. get (option, or all) and "
        "check are read-only; set writes one option (option and value required); init asks for every "
        "option interactively, so it fails here: prefer set."
    ),
    "logs": (
        "Logs of services started by fleet (imq log). dump prints the collected logs and exits (all "
        "services, or the named ones); clean deletes the collected log files. prefix: false drops the "
        "service-name prefix on each line."
    ),
}


def text_result(text: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


def structured_result(data: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


# Expected failures of the docs and scaffold tools -> their code in errors.py; first match wins.
FAILURE_CODES: tuple[tuple[type[Exception], ErrorCode], ...] = (
    (DocUrlError, ErrorCode.URL_REFUSED),
    (docs.PageNotFound, ErrorCode.PAGE_NOT_FOUND),
    (OfflineError, ErrorCode.OFFLINE),
    (FetchError, ErrorCode.SITE_UNREACHABLE),
    (docs.DocError, ErrorCode.SITE_UNREACHABLE),
    (CorpusUnavailable, ErrorCode.CORPUS_UNAVAILABLE),
    (status.StatusUnavailable, ErrorCode.FACTS_UNAVAILABLE),
    (CatalogueError, ErrorCode.UNKNOWN_PACKAGE),
    (ScaffoldError, ErrorCode.INVALID_SCAFFOLD_INPUT),
    (ValueError, ErrorCode.INVALID_ARGUMENTS),
)


def failed(error: Exception) -> CallToolResult:
    """An expected failure as a guided error: its message, its code's next step."""
    code = next((code for kind, code in FAILURE_CODES if isinstance(error, kind)), ErrorCode.INTERNAL_ERROR)
    return error_result(code, str(error))


def _tool(fn: Callable[..., Any], name: str) -> Tool:
    # The title twice, equal: 2025-06-18 and later clients read `title`, 2025-03-26 clients
    # read only `annotations.title`.
    annotations = HINTS[name].model_copy(update={"title": TITLES[name]})
    return strict_tool(
        fn, name=name, title=TITLES[name], description=DESCRIPTIONS[name], annotations=annotations
    )


# --- argument types shared by several tools -------------------------------------------

Query = Annotated[
    str, Field(min_length=1, max_length=200, description="What you want to know, in plain words")
]
Limit = Annotated[int, Field(ge=1, le=20, description="How many results, 1-20")]
ExampleLimit = Annotated[
    int, Field(ge=1, le=examples.MAX_LIMIT, description=f"How many examples, 1-{examples.MAX_LIMIT}")
]
PackageFilter = Annotated[
    str | None, Field(description="Limit to one package: 'rpc' or '@imqueue/rpc'. Omit for all.")
]
DocLink = Annotated[
    str,
    Field(
        description="https://imqueue.org/... or https://imqueue.com/... URL, or a path on imqueue.org "
        "('/get-started/'); #anchor allowed"
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
Methods = Annotated[
    list[Method] | None,
    Field(description="The exposed methods; omit for a starter template"),
]
ServiceNames = Annotated[list[str] | None, Field(description="Service names; omit for all")]


def docs_tools(services: Services) -> list[Tool]:
    async def search_docs(
        query: Query, limit: Limit = 6, package: PackageFilter = None
    ) -> Annotated[CallToolResult, SearchResult]:
        try:
            data = await search.search_docs(services.corpus, query, limit, package, services.sizes)
        except (CorpusUnavailable, ValueError) as error:
            return failed(error)
        return structured_result(data, search.render_search_text(data))

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
        except (DocUrlError, FetchError, docs.DocError) as error:
            return failed(error)
        services.sizes.record(data)
        return structured_result(data, docs.render_doc_text(data))

    async def find_examples(
        query: Query, limit: ExampleLimit = examples.DEFAULT_LIMIT, package: PackageFilter = None
    ) -> Annotated[CallToolResult, ExampleResult]:
        try:
            data = await examples.find_examples(services.examples, query, limit, package)
        except examples.ExamplesUnavailable as error:
            return error_result(ErrorCode.CORPUS_UNAVAILABLE, str(error), examples.REBUILD_ACTION)
        except (CorpusUnavailable, ValueError) as error:
            return failed(error)
        return structured_result(data, examples.render_examples_text(data))

    async def list_packages() -> Annotated[CallToolResult, PackageList]:
        data = await status.list_packages(services.facts)
        return structured_result(data, _with_stored_line(data, render_packages_markdown(data)))

    async def package_status(
        package: Annotated[
            str | None, Field(description="'rpc' or '@imqueue/rpc' (scope optional); omit for every package")
        ] = None,
    ) -> Annotated[CallToolResult, PackageStatus]:
        try:
            data = await status.package_status(services.facts, package)
        except FactsUnavailable as error:
            return error_result(ErrorCode.FACTS_UNAVAILABLE, str(error), error.next_step)
        except (status.StatusUnavailable, CatalogueError) as error:
            return failed(error)
        return structured_result(data, _with_stored_line(data, render_status_markdown(data)))

    return [
        _tool(search_docs, "search_docs"),
        _tool(get_doc, "get_doc"),
        _tool(find_examples, "find_examples"),
        _tool(list_packages, "list_packages"),
        _tool(package_status, "package_status"),
    ]


def _with_stored_line(data: dict[str, Any], text: str) -> str:
    """Facts from the snapshot say so first, with their date, as search_docs labels its corpus."""
    stored = data.get("stored")
    return f"{stored_line(stored)}\n\n{text}" if stored else text


def scaffold_tools() -> list[Tool]:
    async def scaffold_service(
        name: Annotated[str, Field(min_length=1, description="Service name, e.g. 'user' or 'UserService'")],
        methods: Methods = None,
    ) -> Annotated[CallToolResult, ServiceScaffold]:
        try:
            data = scaffold.scaffold_service(name, methods)
        except ScaffoldError as error:
            return failed(error)
        return structured_result(data, scaffold.render_service_markdown(data))

    async def scaffold_client(
        service: Annotated[str, Field(min_length=1, description="The service's name or class name")],
        methods: Methods = None,
    ) -> Annotated[CallToolResult, ClientScaffold]:
        try:
            data = scaffold.scaffold_client(service, methods)
        except ScaffoldError as error:
            return failed(error)
        return structured_result(data, scaffold.render_client_markdown(data))

    return [_tool(scaffold_service, "scaffold_service"), _tool(scaffold_client, "scaffold_client")]


def guide_tool() -> Tool:
    async def local_install_guide() -> CallToolResult:
        return text_result(LOCAL_INSTALL_GUIDE)

    return _tool(local_install_guide, "local_install_guide")


def cli_tools() -> list[Tool]:
    # cli_bridge is imported on first call: starting the server never needs it.
    async def cli_status() -> CallToolResult:
        from imqueue_mcp.server.imq import bridge as cli_bridge

        return bridged(await cli_bridge.cli_status())

    async def cli_install(
        version: Annotated[
            str | None, Field(description="A version or dist-tag, e.g. '5.2.2'; omit for latest")
        ] = None,
    ) -> CallToolResult:
        from imqueue_mcp.server.imq import bridge as cli_bridge

        return bridged(await cli_bridge.cli_install(version=version))

    async def cli_help(
        command: Annotated[
            str | None,
            Field(description="e.g. 'service create', 'client generate', 'ctl start'; omit for all"),
        ] = None,
    ) -> CallToolResult:
        from imqueue_mcp.server.imq import bridge as cli_bridge

        return bridged(await cli_bridge.cli_help(command=command))

    async def create_service(
        name: Annotated[str, Field(min_length=1, description="The new service's name")],
        path: Annotated[str | None, Field(description="Target directory; imq's default when omitted")] = None,
        flags: Annotated[
            list[str] | None,
            Field(description="imq service create flags, e.g. ['-e', 'you@example.com', '--no-use-git']"),
        ] = None,
        apply: Annotated[
            bool, Field(description="false (default): dry run, writes nothing. true: really create")
        ] = False,
    ) -> CallToolResult:
        from imqueue_mcp.server.imq import bridge as cli_bridge

        return bridged(await cli_bridge.create_service(name, path=path, flags=flags, apply=apply))

    async def generate_client(
        service: Annotated[str, Field(min_length=1, description="Class name of the running service")],
        path: Annotated[
            str | None, Field(description="Output directory (imq default: the working directory)")
        ] = None,
        overwrite: Annotated[bool, Field(description="Replace an existing client file")] = False,
    ) -> Annotated[CallToolResult, GeneratedClient]:
        from imqueue_mcp.server.imq import bridge as cli_bridge

        return bridged(await cli_bridge.generate_client(service, path=path, overwrite=overwrite))

    async def fleet(
        action: Annotated[
            Literal["start", "stop", "restart", "status"], Field(description="What imq ctl does")
        ],
        path: Annotated[
            str | None,
            Field(
                description="Folder whose sub-folders are the services; "
                "defaults to the server's working directory"
            ),
        ] = None,
        services: ServiceNames = None,
        update: Annotated[bool, Field(description="git pull in each service first (-u)")] = False,
        calm: Annotated[
            bool, Field(description="Start one at a time, each once the previous is ready (-c)")
        ] = False,
        verbose: Annotated[bool, Field(description="Show how long each command took (-v)")] = False,
    ) -> CallToolResult:
        from imqueue_mcp.server.imq import bridge as cli_bridge

        return bridged(
            await cli_bridge.fleet(
                action, path=path, services=services, update=update, calm=calm, verbose=verbose
            )
        )

    async def config(
        action: Annotated[Literal["check", "get", "set", "init"], Field(description="What imq config does")],
        option: Annotated[str | None, Field(description="Option name (get: optional; set: required)")] = None,
        value: Annotated[str | None, Field(description="New value (set only)")] = None,
    ) -> CallToolResult:
        from imqueue_mcp.server.imq import bridge as cli_bridge

        return bridged(await cli_bridge.config(action, option=option, value=value))

    async def logs(
        action: Annotated[Literal["dump", "clean"], Field(description="dump: print and exit; clean: delete")],
        services: ServiceNames = None,
        prefix: Annotated[bool, Field(description="Prefix each line with its service name")] = True,
    ) -> CallToolResult:
        from imqueue_mcp.server.imq import bridge as cli_bridge

        return bridged(await cli_bridge.logs(action, services=services, prefix=prefix))

    return [
        _tool(cli_status, "cli_status"),
        _tool(cli_install, "cli_install"),
        _tool(cli_help, "cli_help"),
        _tool(create_service, "create_service"),
        _tool(generate_client, "generate_client"),
        _tool(fleet, "fleet"),
        _tool(config, "config"),
        _tool(logs, "logs"),
    ]


def bridged(result: Any) -> CallToolResult:
    """A cli_bridge.BridgeResult as a tool result, with its structured content when it has any;
    an error as a guided error."""
    if not result.is_error:
        if result.structured is not None:
            return structured_result(result.structured, result.text)
        return text_result(result.text)
    message, next_step = result.text, result.next_step
    if next_step and message.endswith(next_step):  # word_outcome appends it; say it once
        message = message.removesuffix(next_step).rstrip()
    return error_result(result.error_code or ErrorCode.IMQ_FAILED, message, next_step)


def local_tools(services: Services) -> list[Tool]:
    return [*docs_tools(services), *scaffold_tools(), *cli_tools()]


def hosted_tools(services: Services) -> list[Tool]:
    return [*docs_tools(services), *scaffold_tools(), guide_tool()]

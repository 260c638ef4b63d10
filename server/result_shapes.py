"""Output schemas of the six shared tools (SPEC §4) and generate_client, as pydantic models.

Each model is published as the tool's outputSchema, and the structuredContent the tool
returns is validated against it before it leaves the server. Optional fields are absent
(never null) when they do not apply. generate_client returns the client file it generated;
the other CLI-bridge tools and local_install_guide return plain text and declare no outputSchema.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

VERSION_NOTE = (
    "Local server only: present when this concerns an @imqueue package the user's project uses at "
    "another major than the docs describe; one line with both versions"
)
STORED = (
    "Present when imqueue.org/status.json was not read just now (offline, or the site did not answer): "
    "the facts are the docs snapshot's copy; its date, the file, and why"
)

INSTALLED_MARK = (
    "Local server only, with a project in reach: present when this API symbol is declared differently "
    "in the version the project has installed, or missing from it"
)
INSTALLED_ONLY = (
    "Local server only, with a project in reach: symbols the project's installed @imqueue version "
    "declares and the docs' release does not (removed since, or never documented) that match the query"
)


class InstalledMark(BaseModel):
    package: str
    version: str = Field(description="The installed version")
    symbol: str = Field(description="The symbol's name, as get_api and api_diff take it")
    status: Literal["signature-changed", "deprecated-in-latest", "not-installed"] = Field(
        description="signature-changed: declared differently where installed; deprecated-in-latest: "
        "deprecated in the docs, not where installed; not-installed: the installed version lacks it"
    )
    signature: str | None = Field(None, description="The installed declaration, when it has one")


class InstalledOnlySymbol(BaseModel):
    kind: Literal["installed-only"]
    name: str
    symbolKind: str = Field(description="class, interface, function, type, const, method, property, ...")
    package: str
    version: str = Field(description="The installed version")
    signature: str
    summary: str = Field(description="Its doc comment's summary, as installed")
    file: str = Field(description="The declaration file, relative to the installed package")
    note: str


# --- search_docs ---------------------------------------------------------------------


class HitPassage(BaseModel):
    """The part of a hit's section that best answers the query (server/docs/hit_passages.py)."""

    text: str = Field(
        description="Markdown: whole sentences, list items, table rows and code blocks as on the page; a "
        "block over the budget is cut with a visible '[… ]' marker"
    )
    url: str = Field(description="The #anchor URL of the section the text is from; get_doc reads all of it")
    tokens: int = Field(description="Size of text in tokens of 4 characters")
    basis: Literal["markdown", "prose", "summary"] = Field(
        description="Where the text is from: 'markdown': the page itself; 'prose': the indexed words of "
        "its section (no markup, code flattened); 'summary': the hit's own description (an API page the "
        "corpus was built without: build with `imq-build-index --pages` to have it)"
    )
    cut: bool | None = Field(None, description="True when the text was cut to fit passageTokens")


class PassageBudget(BaseModel):
    tokens: int = Field(description="Tokens of all the passages together")
    maxTokens: int = Field(description="The most the passages may take together, as asked")
    passageTokens: int = Field(description="The most one passage may take, as asked")
    omitted: int = Field(description="Hits left without a passage because maxTokens was spent")


PASSAGE = "Present unless passages: false: the part of the section that best answers the query"
BUDGET = "Present unless passages: false: what the passages used of the budgets"


class SearchHit(BaseModel):
    """One hit, in the ranker's one result shape (ranker.results.hit_dict), as imq-search --json."""

    url: str = Field(
        description="Canonical https://imqueue.org/... or https://imqueue.com/... URL; pass to get_doc"
    )
    path: str = Field(description="The URL's path on its site; get_doc also takes it for imqueue.org")
    title: str
    section: str = Field(description="Where the result lives: llms.txt section, package or parent page")
    description: str
    kind: Literal["api", "answer", "page", "section"] = Field(
        description="What the hit is: an API symbol, a question-shaped answer, a page, or a prose section"
    )
    label: str = Field(
        description="The kind in words: 'API · @imqueue/core method', 'Answer · <page title>', "
        "'Page · Tutorial', 'Section · <page title>'; ' · imqueue.com' ends an imqueue.com record's"
    )
    recordKind: str = Field(description="The feed's own kind of record: 'method', 'class', 'Tutorial', ...")
    package: str | None = Field(description="The @imqueue package an API symbol belongs to, else null")
    symbol: bool = Field(description="True for an API symbol (class, method, type) rather than a page")
    external: bool = Field(description="True for an imqueue.com record (licensing, pricing, support)")
    score: float = Field(description="The ranker's score; comparable within one answer only")
    confidence: Literal["high", "medium", "low"] = Field(
        description="How well this hit matches the query, from its calibrated score: 'low' is a weak match"
    )
    deprecated: bool | None = Field(
        None,
        description="Present (true) when the API is deprecated; its description then starts "
        "'DEPRECATED — do not use in new code.'",
    )
    tokens: int | None = Field(
        None,
        description="Size of what get_doc returns for url, in tokens of 4 characters: the section for "
        "a #anchor URL, else the whole page (read in parts of maxTokens). Absent when unknown",
    )
    tokensBasis: Literal["measured", "prose"] | None = Field(
        None,
        description="'measured': from the page itself; 'prose': from its indexed prose (headings and "
        "text without code), so a lower bound",
    )
    passage: HitPassage | None = Field(None, description=PASSAGE)
    installed: InstalledMark | None = Field(None, description=INSTALLED_MARK)


class SearchMiss(BaseModel):
    sections: list[str] = Field(description="The sections the corpus covers")
    nearestTerms: list[str] = Field(description="Indexed terms nearest the query's words")


class CorpusInfo(BaseModel):
    source: str = Field(description="'live' (the sites, refreshed hourly) or 'snapshot' (a file on disk)")
    fetchedAt: str = Field(description="When the feeds behind this corpus were read (ISO 8601)")
    from_: str = Field(alias="from", description="The origins read, or the snapshot file")
    note: str | None = Field(None, description="Why an older corpus is answering, when it is")


class Advisory(BaseModel):
    """One exclusive pair the question or the results touched, as data an agent can act on."""

    model_config = ConfigDict(extra="forbid")

    pair: list[str] = Field(description="The two packages, default first: install at most one")
    need: str = Field(description="What a service must need for the pair to matter")
    default: str = Field(description="The package to choose unless alternativeWhen applies")
    why: str = Field(description="Why, or when, the default is the choice")
    install: str = Field(
        description="The command that installs the default, e.g. npm i @imqueue/opentelemetry"
    )
    neverBoth: str = Field(description="Why a service must not hold both")
    alternative: str
    alternativeWhen: str = Field(description="The only case for choosing the alternative")
    named: list[str] = Field(description="The members of the pair the question or the results named")
    advice: str = Field(description="The same advice as one sentence (also in the text)")


class Diagnosis(BaseModel):
    code: str = Field(description="The error code read from the query, e.g. ECONNREFUSED or ERESOLVE")
    explanation: str = Field(description="What failed and what to do, for an @imqueue project")
    urls: list[str] = Field(description="The docs pages that hold the fix")


class SearchResult(BaseModel):
    query: str = Field(description="The query as asked")
    searched: str | None = Field(
        None,
        description="Present when the text searched is not the query: a pasted error output's message "
        "lines (stack frames, caret/tilde markers, file locations and folders up to node_modules left "
        "out), or a long query's first 600 characters",
    )
    corrected: str | None = Field(
        None, description="Present when a typo was corrected: the query as actually searched"
    )
    count: int
    results: list[SearchHit]
    weak: bool = Field(
        description="True when even the best result is a low-confidence match: the docs may not answer this"
    )
    advisory: str | None = Field(
        None, description="Present when the results involve one of two mutually exclusive packages"
    )
    advisories: list[Advisory] | None = Field(
        None, description="Present with advisory: the same advice, one record per exclusive pair"
    )
    miss: SearchMiss | None = Field(None, description="Present when nothing matched")
    diagnosis: list[Diagnosis] | None = Field(
        None,
        description="Present when the query carries a system or npm error code (ECONNREFUSED, ENOTFOUND, "
        "ERESOLVE, ...): what it means in an @imqueue project and the pages with the fix",
    )
    passageBudget: PassageBudget | None = Field(None, description=BUDGET)
    corpus: CorpusInfo
    versionNote: str | None = Field(None, description=VERSION_NOTE)
    installedOnly: list[InstalledOnlySymbol] | None = Field(None, description=INSTALLED_ONLY)


# --- get_doc -------------------------------------------------------------------------


class DocSection(BaseModel):
    heading: str
    ancestors: list[str] = Field(description="The enclosing headings, outermost (the page title) first")
    index: int = Field(description="1-based position of this section among the page's anchored sections")
    total: int


class FragmentMiss(BaseModel):
    anchor: str
    available: list[str] = Field(description="The anchors this page does have")


class OutlineEntry(BaseModel):
    heading: str
    level: int = Field(description="1 for '#', 2 for '##', ... 6")
    anchor: str | None = Field(None, description="The section's anchor, when the site indexes one")
    url: str | None = Field(None, description="The anchor URL: get_doc returns just this section")
    tokens: int = Field(description="Size of the section up to the next heading, in tokens of 4 characters")


class DocResult(BaseModel):
    url: str = Field(description="Canonical URL of what was read (with #anchor for a section)")
    markdown: str = Field(
        description="The body: the page, one section of it, or a pointer; one part of it when "
        "truncated; empty when the outline is returned instead"
    )
    mimeType: str
    notes: list[str] | None = Field(
        None,
        description="Known needs of the code beyond what it shows (a queue name, a Redis option, an "
        "rpc 3.x-only API), detected from the code; absent when none",
    )
    bytes: int = Field(description="Size of markdown as returned, in bytes (UTF-8)")
    totalBytes: int = Field(description="Size of the whole document (the page or file) as served, in bytes")
    tokens: int = Field(description="Size of markdown as returned, in tokens (characters / 4, rounded up)")
    totalTokens: int = Field(
        description="Size of everything this read returns through its cursors: the section for a "
        "#anchor URL, else the whole page"
    )
    truncated: bool = Field(
        description="True when more follows: pass nextCursor to get_doc with the same url to read on"
    )
    nextCursor: str | None = Field(
        None, description="Opaque; present when truncated. get_doc(url, cursor=nextCursor) continues"
    )
    startToken: int | None = Field(
        None, description="Present on a continued part: about where it starts, in tokens of the whole"
    )
    section: DocSection | None = Field(None, description="Present when a #fragment was resolved")
    fragmentMiss: FragmentMiss | None = Field(
        None,
        description="Present when the #fragment was not found; the page's outline is returned instead "
        "of its body",
    )
    outline: list[OutlineEntry] | None = Field(
        None, description="The page's headings, present with outline: true or after a fragmentMiss"
    )
    source: CorpusInfo = Field(
        description="Where the body came from: 'live' (the origin read and when), or 'snapshot' when it "
        "was read from the pages saved with the snapshot (offline, or the site did not answer), with "
        "the snapshot's date, the file read, and why",
    )
    versionNote: str | None = Field(None, description=VERSION_NOTE)


# --- list_packages -------------------------------------------------------------------


class ListedPackage(BaseModel):
    name: str
    install: str
    summary: str
    version: str | None = None
    license: str | None = None
    node: str | None = None
    released: str | None = None
    deprecated: bool | None = None
    pick: str | None = Field(None, description="How to choose between this and a mutually exclusive package")


class ListedFramework(BaseModel):
    license: str | None = None
    node: str | None = None
    redis: str | None = None
    commercial: str | None = None


class PackageList(BaseModel):
    packages: list[ListedPackage]
    framework: ListedFramework | None = None
    factsUnavailable: bool | None = Field(
        None, description="True when imqueue.org/status.json could not be read: versions are unknown"
    )
    factsNote: str | None = Field(
        None, description="With factsUnavailable: why the facts are missing and what to do about it"
    )
    stored: CorpusInfo | None = Field(None, description=STORED)
    versionNote: str | None = Field(None, description=VERSION_NOTE)


# --- package_status ------------------------------------------------------------------


class StatusFramework(BaseModel):
    license: str | None = None
    licenseNote: str | None = None
    commercial: str | None = None
    node: str | None = None
    redis: str | None = None


class StatusPackage(BaseModel):
    name: str | None = None
    scoped: str | None = None
    version: str | None = None
    license: str | None = None
    node: str | None = None
    released: str | None = None
    firstRelease: str | None = None
    releases: int | None = None
    majors: list[int] | None = None
    deprecated: bool | str | None = None
    install: str | None = None
    docs: str | None = None
    npm: str | None = None
    repo: str | None = None
    summary: str | None = None


class PackageStatus(BaseModel):
    framework: StatusFramework
    packages: list[StatusPackage]
    generated: str | None = None
    source: str | None = None
    stored: CorpusInfo | None = Field(None, description=STORED)
    versionNote: str | None = Field(None, description=VERSION_NOTE)


# --- scaffolders ---------------------------------------------------------------------


class SourceFile(BaseModel):
    path: str
    language: str
    content: str


class GenerateCall(BaseModel):
    tool: str = Field(description="generate_client")
    arguments: dict[str, str] = Field(description="Its arguments: the service and the folder for the file")


class CalledService(BaseModel):
    service: str = Field(description="The called service's class name")
    queue: str = Field(description="The queue its client addresses (the class name)")
    namespace: str = Field(description="The generated module's only export")
    client: str = Field(description="The client class in that namespace")
    field: str = Field(description="The property holding the client on the new service")
    clientFile: str = Field(description="Where generate_client writes the client: src/clients/<Service>.ts")
    generate: GenerateCall


class PlacedFile(BaseModel):
    path: str = Field(description="As in files[]: relative to the folder")
    absolute: str
    action: Literal["create", "overwrite", "unchanged", "conflict"] = Field(
        description="What writing did (or, in a dry run, would do); conflict: exists with other content "
        "and overwrite was not given"
    )
    bytes: int
    backup: str | None = Field(
        default=None,
        description="An overwritten file: where what it held was kept (beside it, <name>.orig); in a "
        "dry run, where it would be kept",
    )


class Placement(BaseModel):
    path: str = Field(description="The folder written into (resolved)")
    dryRun: bool = Field(description="True: nothing was written; files says what a write would do")
    files: list[PlacedFile]


WRITTEN = "Local server, with path: what was written (or, in a dry run, would be) and where"


class ServiceScaffold(BaseModel):
    service: str = Field(description="The service class name, which is also its queue name")
    install: str = Field(
        description="npm install with the versions package.json pins, for an existing project"
    )
    files: list[SourceFile] = Field(
        description="src/<Service>.ts, src/types.ts (complex types only), src/config.ts (the broker from "
        "IMQ_REDIS, host:port), src/index.ts, package.json (ESM, pinned, build/start), tsconfig.json"
    )
    types: list[str] = Field(description="Types that need @classType()/@property() declarations")
    notes: list[str] = Field(
        description="Notes on the input: object-literal types lifted into generated @classType() "
        "classes in src/types.ts (or why one could not be: it is then described as any); "
        "descriptions changed so the doc block @imqueue parses at run time reads them as written; "
        "types JSON cannot carry across the queue (Date, Map, Set, functions), with what to declare"
    )
    calls: list[CalledService] = Field(
        default_factory=list, description="The services it calls, each client wired in, to generate"
    )
    callTimeoutMs: int | None = Field(None, description="With calls: the clients' callTimeout in ms")
    callTimeoutDefaulted: bool | None = Field(None, description="With calls: no call_timeout_ms was given")
    cliAlternative: str
    written: Placement | None = Field(None, description=WRITTEN)
    versionNote: str | None = Field(None, description=VERSION_NOTE)


class ClientExample(BaseModel):
    path: str = Field(description="Where the caller goes in its project: src/caller.ts, beside src/clients/")
    language: str
    content: str


class ClientScaffold(BaseModel):
    service: str
    client: str
    namespace: str
    generateCommand: str
    output: str
    generate: GenerateCall = Field(description="The generate_client call that writes the client")
    example: ClientExample = Field(
        description="A caller that runs as written once the client is generated: it reads the broker "
        "from IMQ_REDIS (host:port, default localhost:6379), starts the client, calls, destroys it"
    )
    declaredIn: str | None = Field(
        None,
        description="The workspace file declaring the service class by the exact name given (imq's "
        "template names it after the project: Greeter), whose name is then its queue's; absent otherwise",
    )
    callTimeoutMs: int = Field(
        description="The caller's callTimeout in milliseconds: call_timeout_ms, or the scaffold's default"
    )
    callTimeoutDefaulted: bool = Field(
        description="True when no call_timeout_ms was given and callTimeoutMs is the scaffold's default"
    )
    files: list[SourceFile] = Field(
        description="Every file shown: the caller (src/caller.ts, the example), the caller project's "
        "package.json (ESM, @imqueue/rpc 3.x pinned, build and start) and tsconfig.json"
    )
    written: Placement | None = Field(None, description=WRITTEN)
    versionNote: str | None = Field(None, description=VERSION_NOTE)


# --- generate_client -----------------------------------------------------------------


class GeneratedClient(BaseModel):
    service: str = Field(description="The service the client was generated from (its queue name)")
    path: str = Field(description="Absolute path of the generated TypeScript file")
    namespace: str = Field(description="The file's only export: import { <namespace> } from it")
    client: str = Field(description="The client class, used as new <namespace>.<client>(options, service)")
    content: str = Field(description="The generated file, verbatim")
    undeclared: list[str] | None = Field(
        None,
        description="Types the client uses but does not declare (it will not compile): the service "
        "never registered them; absent when none",
    )
    notJson: list[str] | None = Field(
        None,
        description="Fields, parameters and returns the client types with what JSON cannot carry "
        "(a Date arrives as its ISO string, a Map as {}), each with what the service should declare "
        "instead; absent when none",
    )


# --- find_examples --------------------------------------------------------------------


class ExampleHit(BaseModel):
    id: str = Field(description="Stable id of the block: page path, #anchor, ~place among the section's")
    code: str
    language: str = Field(description="The fence's language (typescript, bash, json, ...); empty if none")
    url: str = Field(description="Canonical URL of the block's section (with its #anchor); get_doc reads it")
    title: str = Field(description="The page's title")
    section: str = Field(description="The heading of the section the block sits in; empty before the first")
    lead: str = Field(description="The sentence(s) just before the block, as the page introduces it")
    packages: list[str] = Field(description="The @imqueue packages the block concerns: the page's own first")
    version: str | None = Field(None, description="The version of packages[0] the page documents, if stated")
    truncated: bool | None = Field(None, description="True when the code was cut; read the url for all of it")
    notes: list[str] | None = Field(
        None,
        description="Known needs of the code beyond what it shows (a queue name, a Redis option, an "
        "rpc 3.x-only API), detected from the code; absent when none",
    )
    passage: HitPassage | None = Field(
        None,
        description="Present unless passages: false: the prose of the block's section that best "
        "answers the query, the sentences beside the block first (the code itself is `code`)",
    )
    installed: InstalledMark | None = Field(None, description=INSTALLED_MARK)


class ExampleMiss(BaseModel):
    nearestTerms: list[str] = Field(description="Indexed terms nearest the query's words")
    packagePage: str | None = Field(
        None,
        description="With a package filter: its API reference page, whose usage examples this corpus "
        "may not hold (get_doc reads it)",
    )


class ExampleResult(BaseModel):
    query: str
    package: str | None = Field(None, description="The package filter applied, when one was")
    count: int
    results: list[ExampleHit]
    miss: ExampleMiss | None = Field(None, description="Present when nothing matched")
    passageBudget: PassageBudget | None = Field(None, description=BUDGET)
    corpus: CorpusInfo
    installedOnly: list[InstalledOnlySymbol] | None = Field(None, description=INSTALLED_ONLY)

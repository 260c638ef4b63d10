"""Output schemas of the six shared tools (SPEC §4) and generate_client, as pydantic models.

Each model is published as the tool's outputSchema, and the structuredContent the tool
returns is validated against it before it leaves the server. Optional fields are absent
(never null) when they do not apply. generate_client returns the client file it generated;
the other CLI-bridge tools and local_install_guide return plain text and declare no outputSchema.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

# --- search_docs ---------------------------------------------------------------------


class SearchHit(BaseModel):
    title: str
    section: str = Field(description="Where the result lives: llms.txt section, package or parent page")
    description: str
    url: str = Field(
        description="Canonical https://imqueue.org/... or https://imqueue.com/... URL; pass to get_doc"
    )
    symbol: bool = Field(description="True for an API symbol (class, method, type) rather than a page")
    confidence: Literal["high", "medium", "low"] = Field(
        description="How well this hit matches the query, from its calibrated score: 'low' is a weak match"
    )


class SearchMiss(BaseModel):
    sections: list[str] = Field(description="The sections the corpus covers")
    nearestTerms: list[str] = Field(description="Indexed terms nearest the query's words")


class CorpusInfo(BaseModel):
    source: str = Field(description="'live' (the sites, refreshed hourly) or 'snapshot' (a file on disk)")
    fetchedAt: str = Field(description="When the feeds behind this corpus were read (ISO 8601)")
    from_: str = Field(alias="from", description="The origins read, or the snapshot file")
    note: str | None = Field(None, description="Why an older corpus is answering, when it is")


class SearchResult(BaseModel):
    query: str
    count: int
    results: list[SearchHit]
    weak: bool = Field(
        description="True when even the best result is a low-confidence match: the docs may not answer this"
    )
    advisory: str | None = Field(
        None, description="Present when the results involve one of two mutually exclusive packages"
    )
    miss: SearchMiss | None = Field(None, description="Present when nothing matched")
    corpus: CorpusInfo


# --- get_doc -------------------------------------------------------------------------


class DocSection(BaseModel):
    heading: str
    ancestors: list[str] = Field(description="The enclosing headings, outermost (the page title) first")
    index: int = Field(description="1-based position of this section among the page's anchored sections")
    total: int


class FragmentMiss(BaseModel):
    anchor: str
    available: list[str] = Field(description="The anchors this page does have")


class DocResult(BaseModel):
    url: str = Field(description="Canonical URL of what was read (with #anchor for a section)")
    markdown: str = Field(description="The body: the page, one section of it, or a pointer")
    mimeType: str
    bytes: int = Field(description="Size of the whole document as served, in bytes")
    truncated: bool = Field(description="True when markdown is only the first part of the body")
    section: DocSection | None = Field(None, description="Present when a #fragment was resolved")
    fragmentMiss: FragmentMiss | None = Field(
        None, description="Present when the #fragment was not found; the whole page was returned"
    )
    source: CorpusInfo = Field(
        description="Where the body came from: 'live' (the origin read and when), or 'snapshot' when it "
        "was read from the pages saved with the snapshot (offline, or the site did not answer), with "
        "the snapshot's date, the file read, and why",
    )


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


# --- scaffolders ---------------------------------------------------------------------


class SourceFile(BaseModel):
    path: str
    language: str
    content: str


class ServiceScaffold(BaseModel):
    service: str = Field(description="The service class name, which is also its queue name")
    install: str
    files: list[SourceFile]
    types: list[str] = Field(description="Types that need @classType()/@property() declarations")
    cliAlternative: str


class ClientExample(BaseModel):
    language: str
    content: str


class ClientScaffold(BaseModel):
    service: str
    client: str
    namespace: str
    generateCommand: str
    output: str
    example: ClientExample


# --- generate_client -----------------------------------------------------------------


class GeneratedClient(BaseModel):
    service: str = Field(description="The service the client was generated from (its queue name)")
    path: str = Field(description="Absolute path of the generated TypeScript file")
    namespace: str = Field(description="The file's only export: import { <namespace> } from it")
    client: str = Field(description="The client class, used as new <namespace>.<client>(options, service)")
    content: str = Field(description="The generated file, verbatim")

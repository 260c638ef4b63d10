"""The docs as MCP resources: both sites' pages, their llms.txt indexes, and the package catalogue.

    page_resources(links)     the curated links that name a page -> Resource entries, sorted by URL
    list_resources(keeper)    resources/list: the curated pages, the two llms.txt indexes and the
                              catalogue, over the corpus the server keeps (live, else snapshot)
    TEMPLATES                 resources/templates/list: any page of either site by path, and one
                              package's API reference by package name
    read_resource(uri, ...)   resources/read: docs.read_doc's markdown and media type (with where
                              and when it was read in `_meta`), or the catalogue as JSON
    listed_uris(corpus)       the URIs resources/list gives for a corpus: app.py compares them
                              across a refresh to announce notifications/resources/list_changed

The list is read from the loaded corpus (docsource keeps each llms.txt link: URL, title,
description), never from a second fetch of llms.txt, so it follows the same hourly refresh as
search_docs. A link is a resource when it is a canonical page URL on imqueue.org or
imqueue.com: llms-full.txt, the blog feed and other files stay get_doc's. Reading goes
through docs.read_doc, so a #anchor and the imqueue.com pointer behave as in get_doc, but with
no token budget (only the 200 kB outer limit) and the whole page for an unknown #anchor (a
resource has no outline to offer), and any URI on those hosts (what the templates expand to)
reads the same way. Anything else, or a page the site does not have, is ResourceNotFoundError:
-32602 with the URI in `data`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, Resource, ResourceTemplate

from imqueue_mcp.server.docs import package_facts as facts
from imqueue_mcp.server.docs import package_status as status
from imqueue_mcp.server.docs import read as docs
from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper, CorpusUnavailable, LoadedCorpus
from imqueue_mcp.server.docs.fetch import DocUrlError, FetchError, OfflineError, parse_doc_url

if TYPE_CHECKING:
    from imqueue_mcp.docsource.feeds import CuratedLink
    from imqueue_mcp.server.services import Services

logger = logging.getLogger(__name__)

MAX_RESOURCES = 500  # both llms.txt list ~120 pages; the cap keeps a runaway feed from flooding a host
PAGE_MIME_TYPE = "text/markdown"
JSON_MIME_TYPE = "application/json"
SOURCE_META = "imqueue.org/source"  # the `_meta` key that carries a read's provenance

CATALOGUE_URI = "imqueue://packages"
CATALOGUE = Resource(
    uri=CATALOGUE_URI,
    name="packages",
    title="@imqueue packages and framework requirements",
    description=(
        "Every documented @imqueue package with its summary, install command and pick rule, its "
        "current version, licence, Node.js floor and release date from imqueue.org/status.json, and "
        "the framework's licence, Node.js and Redis requirements, as one JSON document."
    ),
    mime_type=JSON_MIME_TYPE,
)

INDEXES = [
    Resource(
        uri=f"https://{host}/llms.txt",
        name=f"{host} llms.txt",
        title=f"{host} llms.txt: {what}",
        description=f"The curated index of {host} for language models: {what}, each page with a one-line "
        "description.",
        mime_type=docs.mime_type_of("/llms.txt"),
    )
    for host, what in (
        ("imqueue.org", "the framework's guides, tutorial, CLI guide and API reference"),
        ("imqueue.com", "licensing, pricing and support"),
    )
]

PAGE_TEMPLATE = "https://{host}/{{+path}}"
API_TEMPLATE = "https://imqueue.org/api/{package}/latest/"
TEMPLATES = [
    *(
        ResourceTemplate(
            uri_template=PAGE_TEMPLATE.format(host=host),
            name=f"{host} page",
            title=f"Any {host} page by path",
            description=f"Any page of {host} by its path (e.g. {example}), as markdown: the same body "
            "get_doc returns. path completes from the pages the corpus has.",
            mime_type=PAGE_MIME_TYPE,
        )
        for host, example in (("imqueue.org", "tutorial/user-service/"), ("imqueue.com", "pricing/"))
    ),
    ResourceTemplate(
        uri_template=API_TEMPLATE,
        name="package API reference",
        title="API reference of one @imqueue package",
        description="The API reference index of one @imqueue package (package: e.g. 'rpc' or 'core'), "
        "listing its exported symbols. package completes from the documented packages.",
        mime_type=PAGE_MIME_TYPE,
    ),
]


def is_page_link(url: str) -> bool:
    """True for a canonical page URL of either site: https, no #fragment, the page's own path."""
    try:
        parsed = parse_doc_url(url)
    except DocUrlError:
        return False
    return parsed.canonical == url and docs.mirror_of(parsed.path).page == parsed.path


def page_resources(links: Iterable[CuratedLink]) -> list[Resource]:
    pages = sorted((link for link in links if is_page_link(link.url)), key=lambda link: link.url)
    if len(pages) > MAX_RESOURCES:
        logger.warning(
            "llms.txt lists %d pages; resources/list keeps the first %d", len(pages), MAX_RESOURCES
        )
    return [
        Resource(
            uri=link.url,
            name=link.title,
            title=link.title,
            description=link.description or None,
            mime_type=PAGE_MIME_TYPE,
        )
        for link in pages[:MAX_RESOURCES]
    ]


def corpus_resources(corpus: LoadedCorpus) -> list[Resource]:
    return [*page_resources(corpus.links), *INDEXES, CATALOGUE]


def listed_uris(corpus: LoadedCorpus) -> frozenset[str]:
    return frozenset(str(resource.uri) for resource in corpus_resources(corpus))


async def list_resources(keeper: CorpusKeeper) -> list[Resource]:
    try:
        corpus = await keeper.current()
    except CorpusUnavailable as error:
        raise MCPError(code=INTERNAL_ERROR, message=str(error)) from None
    return corpus_resources(corpus)


async def read_resource(uri: str, services: Services) -> list[ReadResourceContents]:
    if uri == CATALOGUE_URI:
        return [ReadResourceContents(content=await catalogue_json(services), mime_type=JSON_MIME_TYPE)]
    try:
        data = await docs.read_doc(uri, services.fetcher, services.sections, services.saved)
    except DocUrlError:
        raise ResourceNotFoundError(
            f"{uri!r} is not an @imqueue docs page: resources/read serves only https://imqueue.org/... "
            f"and https://imqueue.com/... URLs, and {CATALOGUE_URI}. Take a URI from resources/list or "
            "resources/templates/list, or find the page with search_docs."
        ) from None
    except docs.PageNotFound as error:
        raise ResourceNotFoundError(str(error)) from None
    except OfflineError:
        # Offline, a page missing from the saved pages is "not found" when the docs this server
        # holds do not have it either: a resource that does not exist, not a server failure.
        if not await services.corpus.holds_page(uri):
            raise ResourceNotFoundError(
                f"{uri!r} is not a page of the docs this server holds. Take a URI from resources/list "
                "or resources/templates/list, or find the page with search_docs."
            ) from None
        # a page the docs have (a link of llms.txt) with no saved copy: not served here, not a failure
        raise ResourceNotFoundError(
            f"{uri!r} has no saved copy here: this server answers from its docs snapshot and the pages "
            "saved with it. search_docs quotes what the docs say; a server run without --offline reads "
            "every page."
        ) from None
    except (FetchError, docs.DocError) as error:
        raise ResourceError(str(error)) from None
    return [
        ReadResourceContents(
            content=data["markdown"], mime_type=data["mimeType"], meta={SOURCE_META: data["source"]}
        )
    ]


async def catalogue_json(services: Services) -> str:
    """list_packages' answer plus where its facts came from and when, as indented JSON."""
    data: dict[str, Any] = await status.list_packages(services.facts)
    if data.get("stored"):
        data["source"] = data.pop("stored")
    elif not data.get("factsUnavailable"):
        data["source"] = docs.live_source(services.fetcher, facts.STATUS_HOST, docs.now())
        data["source"]["from"] += facts.STATUS_PATH
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"

"""The docs as MCP resources: both sites' curated /llms.txt pages, read exactly as get_doc reads them.

    page_resources(links)     the curated links that name a page -> Resource entries, sorted by URL
    list_resources(keeper)    resources/list over the corpus the server keeps (live, else snapshot)
    read_resource(uri, ...)   resources/read: docs.read_doc's markdown and media type, nothing else

The list is read from the loaded corpus (build_index keeps each llms.txt link: URL, title,
description), never from a second fetch of llms.txt, so it follows the same hourly refresh as
search_docs. A link is a resource when it is a canonical page URL on imqueue.org or
imqueue.com: llms-full.txt, the blog feed and other files stay get_doc's. Reading goes
through docs.read_doc, so a #anchor, the imqueue.com pointer and truncation behave as in get_doc.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, Resource

from . import docs
from .corpus import CorpusKeeper, CorpusUnavailable
from .fetch import DocUrlError, FetchError, parse_doc_url

if TYPE_CHECKING:
    from build_index.feeds import CuratedLink

    from .tools import Services

logger = logging.getLogger(__name__)

MAX_RESOURCES = 500  # both llms.txt list ~120 pages; the cap keeps a runaway feed from flooding a host
PAGE_MIME_TYPE = "text/markdown"


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


async def list_resources(keeper: CorpusKeeper) -> list[Resource]:
    try:
        corpus = await keeper.current()
    except CorpusUnavailable as error:
        raise MCPError(code=INTERNAL_ERROR, message=str(error)) from None
    return page_resources(corpus.links)


async def read_resource(uri: str, services: Services) -> list[ReadResourceContents]:
    try:
        data = await docs.read_doc(uri, services.fetcher, services.sections, services.saved)
    except DocUrlError:
        raise ResourceNotFoundError(
            f"{uri!r} is not an @imqueue docs page: resources/read serves only https://imqueue.org/... "
            "and https://imqueue.com/... URLs. Take a URI from resources/list, or find the page with "
            "search_docs."
        ) from None
    except docs.PageNotFound as error:
        raise ResourceNotFoundError(str(error)) from None
    except (FetchError, docs.DocError) as error:
        raise ResourceError(str(error)) from None
    return [ReadResourceContents(content=data["markdown"], mime_type=data["mimeType"])]

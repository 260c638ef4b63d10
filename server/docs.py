"""get_doc: a canonical page URL -> its markdown, one section of it, or a pointer.

Top to bottom:

    mirror_of(path)           /page/ -> /page/index.md; a path naming a file is read as is
    mime_type_of(path)        the media type reported for a file
    slice_section(...)        the lines of one anchored section, checked to start at a heading,
                              with its heading path (the ancestor headings), index and total
    truncate(body)            cut at a line boundary under MAX_DOC_BYTES, say so
    SectionRanges             /search-sections.json per host, cached for an hour
    read_doc(url, ...)        all of the above, returning the structured result and its text;
                              offline, or when the site does not answer (a timeout or a transport
                              error, not a 404), the page is read from the snapshot's saved pages
                              (pages.SavedPages: `imq-build-index --pages`) with the snapshot's
                              section ranges; `source` always says where the body came from
                              (live: the origin and when; snapshot: the file, its date and why)

The section line ranges come from the site's own /search-sections.json: 0-based, half-open,
start on the heading line. A range that does not start at a heading is treated as unknown
rather than trusted, so a stale map can never hand back the wrong slice.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .fetch import DocUrl, Fetcher, FetchError, OfflineError, Unreachable, parse_doc_url

if TYPE_CHECKING:
    from .pages import SavedPages

MAX_DOC_BYTES = 200_000
SECTIONS_TTL_SECONDS = 3600.0

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_HEADING_ID = re.compile(r"[ \t]*\{#[^}]*\}$")
_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")

_MIME_TYPES = {
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".json": "application/json",
    ".xml": "application/xml",
}
# A last path segment with one of these suffixes names a file; anything else is a page, even
# with a dot in it (API pages look like /api/rpc/latest/rpc.expose/).
FILE_SUFFIXES = tuple(_MIME_TYPES)


@dataclass(frozen=True)
class Mirror:
    page: str | None  # the page path the section map is keyed by ("/intro/"), None for other files
    file: str  # the path actually fetched


def mirror_of(path: str) -> Mirror:
    """Resolve a URL path to the file to fetch; pages read through their index.md twin."""
    last = path.rsplit("/", 1)[-1]
    if not last:
        return Mirror(page=path, file=path + "index.md")
    if not last.endswith(FILE_SUFFIXES):
        return Mirror(page=path + "/", file=path + "/index.md")
    if last == "index.md":
        return Mirror(page=path[: -len(last)], file=path)
    if last.endswith(".md"):
        return Mirror(page=path[:-3] + "/", file=path)
    return Mirror(page=None, file=path)


def mime_type_of(path: str) -> str:
    if path.endswith("/feed.xml"):
        return "application/atom+xml"
    suffix = path[path.rfind(".") :] if "." in path.rsplit("/", 1)[-1] else ""
    return _MIME_TYPES.get(suffix, "text/plain")


def heading_of(line: str) -> tuple[int, str] | None:
    """'## Install {#install}' -> (2, 'Install'); None for a line that is not an ATX heading."""
    match = _HEADING.match(line)
    if not match:
        return None
    return len(match.group(1)), _HEADING_ID.sub("", match.group(2)).strip()


def heading_path(lines: list[str], level: int) -> list[str]:
    """The headings enclosing a heading of `level` that follows `lines`, outermost first."""
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    for line in lines:
        marker = _FENCE.match(line)
        if marker:
            token = marker.group(1)
            if fence is None:
                fence = token[0] * len(token)
            elif token.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        heading = heading_of(line)
        if heading:
            while stack and stack[-1][0] >= heading[0]:
                stack.pop()
            stack.append(heading)
    return [text for depth, text in stack if depth < level]


@dataclass(frozen=True)
class Section:
    markdown: str
    heading: str
    ancestors: list[str]
    index: int  # 1-based position among the page's anchored sections
    total: int


def slice_section(markdown: str, ranges: dict[str, list[int]], anchor: str) -> Section | None:
    """The section `anchor` names, or None if the map lacks it or its range is not at a heading."""
    span = ranges.get(anchor)
    lines = markdown.split("\n")
    if not span or len(span) != 2 or not 0 <= span[0] < min(span[1], len(lines) + 1):
        return None
    start, end = span
    heading = heading_of(lines[start])
    if heading is None:
        return None
    order = sorted(ranges, key=lambda name: ranges[name][0])
    body = "\n".join(lines[start:end]).rstrip("\n") + "\n"
    return Section(
        markdown=body,
        heading=heading[1],
        ancestors=heading_path(lines[:start], heading[0]),
        index=order.index(anchor) + 1,
        total=len(order),
    )


def truncate(body: bytes, limit: int = MAX_DOC_BYTES) -> tuple[bytes, bool]:
    """At most `limit` bytes, cut after the last whole line that fits."""
    if len(body) <= limit:
        return body, False
    cut = body.rfind(b"\n", 0, limit)
    return body[: cut + 1 if cut > 0 else limit], True


def available_anchors(ranges: dict[str, list[int]] | None) -> list[str]:
    if not ranges:
        return []
    return sorted(ranges, key=lambda name: ranges[name][0])


@dataclass
class SectionRanges:
    """Each host's /search-sections.json, fetched on demand and kept for an hour."""

    fetcher: Fetcher
    ttl: float = SECTIONS_TTL_SECONDS
    _cache: dict[str, tuple[float, dict[str, dict[str, list[int]]]]] = field(default_factory=dict)

    async def for_page(self, host: str, page: str) -> dict[str, list[int]] | None:
        cached = self._cache.get(host)
        if cached is None or time.monotonic() - cached[0] > self.ttl:
            try:
                fetched = await self.fetcher.get(host, "/search-sections.json")
                pages = json.loads(fetched.body)["pages"] if fetched.status == 200 else None
            except (FetchError, ValueError, KeyError, TypeError):
                pages = None
            if not isinstance(pages, dict):
                return cached[1].get(page) if cached else None
            cached = (time.monotonic(), pages)
            self._cache[host] = cached
        ranges = cached[1].get(page)
        return ranges if isinstance(ranges, dict) else None


class DocError(Exception):
    """get_doc could not return the document; the message says why and what to do."""


class PageNotFound(DocError):
    """The site has no such page (it answered 404)."""


async def read_doc(
    text: str, fetcher: Fetcher, sections: SectionRanges, saved: SavedPages | None = None
) -> dict[str, Any]:
    """The get_doc structured result for a URL (see schemas.DocResult). Offline, or when the site
    does not answer, the page comes from `saved` (the snapshot's pages), labelled as such."""
    url = parse_doc_url(text)
    mirror = mirror_of(url.path)
    shown = f"https://{url.host}{mirror.page if mirror.page is not None else url.path}"
    try:
        fetched = await fetcher.get(url.host, mirror.file)
    except (OfflineError, Unreachable) as error:
        if saved is None:
            raise
        return await _from_saved(url, mirror, shown, saved, error)
    read_at = now()
    if fetched.status == 404 and url.host == "imqueue.com":
        return _commercial_pointer(url, shown) | {"source": live_source(fetcher, url.host, read_at)}
    if fetched.status == 404:
        raise PageNotFound(
            f"{shown} has no page (the site answered 404 for {mirror.file}). Use search_docs to find "
            "the current URL."
        )
    if fetched.status != 200:
        raise DocError(f"{shown}: the site answered HTTP {fetched.status}; try again later.")
    ranges = (
        await sections.for_page(url.host, mirror.page) if url.fragment and mirror.page is not None else None
    )
    return _doc_result(url, mirror, shown, fetched.body, ranges) | {
        "source": live_source(fetcher, url.host, read_at)
    }


def now() -> str:
    """The current UTC time, ISO 8601 to the second: when a page was read."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def live_source(fetcher: Fetcher, host: str, read_at: str) -> dict[str, str]:
    """Provenance of a page read from the site just now, in the shape search_docs uses for its corpus."""
    return {"source": "live", "fetchedAt": read_at, "from": fetcher.origins.get(host, f"https://{host}")}


async def _from_saved(
    url: DocUrl, mirror: Mirror, shown: str, saved: SavedPages, error: FetchError
) -> dict[str, Any]:
    store = await saved.store()
    if store is None:
        raise type(error)(f"{error} {saved.unavailable}") from None
    body = store.pages.get(shown)
    if body is None:
        raise type(error)(
            f"{error} The pages saved with the snapshot of {store.fetched_at} ({store.location}) have no "
            f"copy of {shown} either; use search_docs to find a page they do have."
        ) from None
    ranges = store.ranges(url.host, mirror.page) if url.fragment and mirror.page is not None else None
    result = _doc_result(url, mirror, shown, body, ranges)
    if isinstance(error, OfflineError):
        result["source"] = store.describe("the server runs with --offline")
    else:
        result["source"] = store.describe(f"the live site did not answer ({str(error).split(';')[0]})")
    return result


def _doc_result(
    url: DocUrl, mirror: Mirror, shown: str, body: bytes, ranges: dict[str, list[int]] | None
) -> dict[str, Any]:
    """The page (or its #fragment's section, or the page with a fragmentMiss), truncated."""
    result: dict[str, Any] = {"url": shown, "mimeType": mime_type_of(mirror.file), "bytes": len(body)}
    if url.fragment:
        markdown = body.decode("utf-8", errors="replace")
        section = slice_section(markdown, ranges, url.fragment) if ranges else None
        if section is not None:
            result["url"] = f"{shown}#{url.fragment}"
            body = section.markdown.encode("utf-8")
            result["section"] = {
                "heading": section.heading,
                "ancestors": section.ancestors,
                "index": section.index,
                "total": section.total,
            }
        else:
            result["fragmentMiss"] = {"anchor": url.fragment, "available": available_anchors(ranges)}
    kept, truncated = truncate(body)
    result["markdown"] = kept.decode("utf-8", errors="ignore")
    result["truncated"] = truncated
    return result


def _commercial_pointer(url: DocUrl, shown: str) -> dict[str, Any]:
    markdown = (
        f"{shown} has no markdown mirror: it is an imqueue.com page meant for a browser. "
        f"Open {shown} to read it, or ask support@imqueue.com. For licensing facts read "
        "https://imqueue.com/license/ and https://imqueue.com/pricing/ with get_doc; for the "
        "framework itself search imqueue.org with search_docs.\n"
    )
    return {
        "url": shown,
        "markdown": markdown,
        "mimeType": "text/markdown",
        "bytes": len(markdown.encode("utf-8")),
        "truncated": False,
    }


def render_doc_text(result: dict[str, Any]) -> str:
    """The text content: header lines that mirror section/fragmentMiss/truncated, then the body."""
    header = [f"Source: {result['url']}"]
    saved = result.get("source")
    if saved and saved["source"] == "live":
        header.append(f"Read live from {saved['from']} at {saved['fetchedAt']}.")
    elif saved:
        header.append(
            f"Read from the snapshot of {saved['fetchedAt']} ({saved['from']}), not the live site: "
            f"{saved['note']}. The live page may be newer."
        )
    section = result.get("section")
    if section:
        path = " > ".join([*section["ancestors"], section["heading"]])
        header.append(
            f"Section {section['index']} of {section['total']}: {path} (one section, not the whole page)"
        )
    miss = result.get("fragmentMiss")
    if miss:
        anchors = ", ".join(f"#{name}" for name in miss["available"]) or "none indexed for this page"
        header.append(
            f"Fragment #{miss['anchor']} was not found, so the whole page follows. "
            f"Available anchors: {anchors}"
        )
    if result["truncated"]:
        header.append(_truncation_note(result))
    parts = ["\n".join(header), result["markdown"].rstrip("\n")]
    if result["truncated"]:
        parts.append(f"[{_truncation_note(result)}]")
    return "\n\n".join(parts) + "\n"


def _truncation_note(result: dict[str, Any]) -> str:
    shown = len(result["markdown"].encode("utf-8"))
    return (
        f"Truncated: showing the first {shown:,} of {result['bytes']:,} bytes. Read single pages "
        "(or a #section of one) with get_doc to see the rest."
    )


__all__ = [
    "MAX_DOC_BYTES",
    "DocError",
    "DocUrl",
    "PageNotFound",
    "SectionRanges",
    "mirror_of",
    "read_doc",
    "render_doc_text",
    "slice_section",
    "truncate",
]

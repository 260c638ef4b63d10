"""get_doc: a canonical page URL -> its markdown, one section of it, or a pointer.

Top to bottom:

    mirror_of(path)           /page/ -> /page/index.md; a path naming a file is read as is
    mime_type_of(path)        the media type reported for a file
    slice_section(...)        the lines of one anchored section, checked to start at a heading,
                              with its heading path (the ancestor headings), index and total
    DocRequest                what the get_doc tool asked for: a token budget (maxTokens), a
                              cursor to continue from, or the outline only (budget.py cuts
                              the parts, encodes the cursors and builds the outlines)
    SectionRanges             /search-sections.json per host, checked in full and cached for an
                              hour; a failed or refused fetch keeps the last good map and is
                              retried after a minute
    read_doc(url, ...)        all of the above, returning the structured result and its text;
                              offline, or when the site does not answer (a timeout or a transport
                              error, not a 404), the page is read from the snapshot's saved pages
                              (pages.SavedPages: `imq-build-index --pages`) with the snapshot's
                              section ranges; `source` always says where the body came from
                              (live: the origin and when; snapshot: the file, its date and why)

Sizes: `bytes` and `tokens` are of the markdown returned; `totalBytes` is the whole document as
served; `totalTokens` is of everything the read would return through its cursors (the section,
for a #anchor URL; the page otherwise). Without a DocRequest (resources/read) the budget is
the outer limit alone, MAX_DOC_BYTES, and an unknown #fragment returns the whole page.

The section line ranges come from the site's own /search-sections.json: 0-based, half-open,
start on the heading line. A range that does not start at a heading is treated as unknown
rather than trusted, so a stale map can never hand back the wrong slice.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from imqueue_mcp.docsource import feeds
from imqueue_mcp.docsource.sources import BuildError
from imqueue_mcp.server.docs.budget import (
    CHARS_PER_TOKEN,
    CURSOR_NEXT_STEP,
    DEFAULT_MAX_TOKENS,
    FENCE,
    HEADING,
    HEADING_ID,
    MAX_DOC_BYTES,
    MAX_MAX_TOKENS,
    MIN_MAX_TOKENS,
    Cursor,
    CursorError,
    cut_part,
    digest_of,
    estimate_tokens,
    fence_after,
    outline_of,
)
from imqueue_mcp.server.docs.fetch import (
    DocUrl,
    Fetcher,
    FetchError,
    OfflineError,
    Unreachable,
    parse_doc_url,
)

if TYPE_CHECKING:
    from imqueue_mcp.server.docs.saved_pages import SavedPages

logger = logging.getLogger(__name__)

SECTIONS_TTL_SECONDS = 3600.0
SECTIONS_RETRY_SECONDS = 60.0  # after a failed or refused fetch of the section map


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
    match = HEADING.match(line)
    if not match:
        return None
    return len(match.group(1)), HEADING_ID.sub("", match.group(2)).strip()


def heading_path(lines: list[str], level: int) -> list[str]:
    """The headings enclosing a heading of `level` that follows `lines`, outermost first."""
    stack: list[tuple[int, str]] = []
    fence: str | None = None
    for line in lines:
        marker = FENCE.match(line)
        if marker:
            fence = fence_after(marker.group(1), fence)
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
    if not span or len(span) != 2 or not 0 <= span[0] < min(span[1], len(lines)):
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


def available_anchors(ranges: dict[str, list[int]] | None) -> list[str]:
    if not ranges:
        return []
    return sorted(ranges, key=lambda name: ranges[name][0])


@dataclass
class SectionRanges:
    """Each host's /search-sections.json, fetched on demand, checked in full and kept for an hour.

    The check is the builder's own (docsource.feeds.section_ranges): one range that is not
    [start, end) line numbers refuses the whole map. A fetch that fails, or a map that fails the
    check, keeps the last good map (or none) and is tried again after `retry` seconds, not `ttl`:
    an origin that recovers is seen within a minute."""

    fetcher: Fetcher
    ttl: float = SECTIONS_TTL_SECONDS
    retry: float = SECTIONS_RETRY_SECONDS
    _good: dict[str, dict[str, dict[str, list[int]]]] = field(default_factory=dict)
    _next_fetch: dict[str, float] = field(default_factory=dict)

    async def for_page(self, host: str, page: str) -> dict[str, list[int]] | None:
        if time.monotonic() >= self._next_fetch.get(host, 0.0):
            fresh = await self._fetch(host)
            if fresh is not None:
                self._good[host] = fresh
            self._next_fetch[host] = time.monotonic() + (self.ttl if fresh is not None else self.retry)
        return self._good.get(host, {}).get(page)

    async def _fetch(self, host: str) -> dict[str, dict[str, list[int]]] | None:
        url = f"https://{host}/search-sections.json"
        try:
            fetched = await self.fetcher.get(host, "/search-sections.json")
            if fetched.status != 200:
                raise FetchError(f"{url}: HTTP {fetched.status}")
            return feeds.section_ranges(url, feeds.decode_json(url, fetched.body))
        except (FetchError, BuildError) as error:
            kept = "the last good map is kept" if host in self._good else "sections are unknown meanwhile"
            logger.warning("section map not used: %s; %s, retried in %g s", error, kept, self.retry)
            return None


class DocError(Exception):
    """get_doc could not return the document; the message says why and what to do."""


class PageNotFound(DocError):
    """The site has no such page (it answered 404)."""


@dataclass(frozen=True)
class DocRequest:
    """get_doc's reading options: at most max_tokens per answer, from `cursor` on, or the outline."""

    max_tokens: int = DEFAULT_MAX_TOKENS
    cursor: str | None = None
    outline: bool = False


async def read_doc(
    text: str,
    fetcher: Fetcher,
    sections: SectionRanges,
    saved: SavedPages | None = None,
    request: DocRequest | None = None,
) -> dict[str, Any]:
    """The get_doc structured result for a URL (see schemas.DocResult). Offline, or when the site
    does not answer, the page comes from `saved` (the snapshot's pages), labelled as such.
    A bad cursor (CursorError) is refused before anything is fetched, when that can be told."""
    url = parse_doc_url(text)
    mirror = mirror_of(url.path)
    shown = f"https://{url.host}{mirror.page if mirror.page is not None else url.path}"
    cursor = _cursor_of(request, f"{shown}#{url.fragment}" if url.fragment else shown)
    wants_ranges = bool(url.fragment) or (request is not None and request.outline)
    try:
        fetched = await fetcher.get(url.host, mirror.file)
    except (OfflineError, Unreachable) as error:
        if saved is None:
            raise
        return await _from_saved(url, mirror, shown, saved, error, request, cursor)
    read_at = now()
    if fetched.status == 404 and url.host == "imqueue.com":
        return _commercial_pointer(shown, cursor) | {"source": live_source(fetcher, url.host, read_at)}
    if fetched.status == 404:
        raise PageNotFound(
            f"{shown} has no page (the site answered 404 for {mirror.file}). Use search_docs to find "
            "the current URL."
        )
    if fetched.status != 200:
        raise DocError(f"{shown}: the site answered HTTP {fetched.status}; try again later.")
    ranges = (
        await sections.for_page(url.host, mirror.page) if wants_ranges and mirror.page is not None else None
    )
    return _doc_result(url, mirror, shown, fetched.body, ranges, request, cursor) | {
        "source": live_source(fetcher, url.host, read_at)
    }


def now() -> str:
    """The current UTC time, ISO 8601 to the second: when a page was read."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def live_source(fetcher: Fetcher, host: str, read_at: str) -> dict[str, str]:
    """Provenance of a page read from the site just now, in the shape search_docs uses for its corpus."""
    return {"source": "live", "fetchedAt": read_at, "from": fetcher.origins.get(host, f"https://{host}")}


def _cursor_of(request: DocRequest | None, url: str) -> Cursor | None:
    """The request's cursor, decoded and checked against the URL asked for; CursorError if bad."""
    if request is None or request.cursor is None:
        return None
    if request.outline:
        raise CursorError("outline: true returns the sections without the body, so it takes no cursor.")
    cursor = Cursor.decode(request.cursor)
    if cursor.url != url:
        raise CursorError(f"The cursor continues a read of {cursor.url}, not of {url}.")
    return cursor


async def _from_saved(
    url: DocUrl,
    mirror: Mirror,
    shown: str,
    saved: SavedPages,
    error: FetchError,
    request: DocRequest | None,
    cursor: Cursor | None,
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
    wants_ranges = bool(url.fragment) or (request is not None and request.outline)
    ranges = store.ranges(url.host, mirror.page) if wants_ranges and mirror.page is not None else None
    result = _doc_result(url, mirror, shown, body, ranges, request, cursor)
    if isinstance(error, OfflineError):
        result["source"] = store.describe("the server runs with --offline")
    else:
        result["source"] = store.describe(f"the live site did not answer ({str(error).split(';')[0]})")
    return result


def _doc_result(
    url: DocUrl,
    mirror: Mirror,
    shown: str,
    body: bytes,
    ranges: dict[str, list[int]] | None,
    request: DocRequest | None,
    cursor: Cursor | None,
) -> dict[str, Any]:
    """The page, its #fragment's section, or its outline (asked for, or for an unknown fragment),
    one budgeted part at a time."""
    result: dict[str, Any] = {"url": shown, "mimeType": mime_type_of(mirror.file), "totalBytes": len(body)}
    markdown = body.decode("utf-8", errors="replace")
    if request is not None and request.outline:
        return _outline_result(result, markdown, shown, ranges)
    text = markdown
    if url.fragment:
        section = slice_section(markdown, ranges, url.fragment) if ranges else None
        if section is not None:
            result["url"] = f"{shown}#{url.fragment}"
            text = section.markdown
            result["section"] = {
                "heading": section.heading,
                "ancestors": section.ancestors,
                "index": section.index,
                "total": section.total,
            }
        else:
            result["fragmentMiss"] = {"anchor": url.fragment, "available": available_anchors(ranges)}
            if request is not None:  # the sections that do exist, instead of the whole page
                if cursor is not None:
                    raise CursorError(f"{shown} has no section #{url.fragment} to continue reading.")
                return _outline_result(result, markdown, shown, ranges)
    return _part(result, text, request.max_tokens if request else MAX_MAX_TOKENS, cursor)


def _part(result: dict[str, Any], text: str, max_tokens: int, cursor: Cursor | None) -> dict[str, Any]:
    """`result` with the part of `text` that starts at the cursor (or at 0) and fits max_tokens."""
    start = 0
    if cursor is not None:
        cursor.check(result["url"], text)
        start = cursor.offset
    end = cut_part(text, start, max_tokens)
    part = text[start:end]
    result["markdown"] = part
    result["bytes"] = len(part.encode("utf-8"))
    result["tokens"] = estimate_tokens(part)
    result["totalTokens"] = estimate_tokens(text)
    result["truncated"] = end < len(text)
    if start:
        result["startToken"] = start // CHARS_PER_TOKEN
    if end < len(text):
        result["nextCursor"] = Cursor(result["url"], end, digest_of(text)).encode()
    return result


def _outline_result(
    result: dict[str, Any], markdown: str, shown: str, ranges: dict[str, list[int]] | None
) -> dict[str, Any]:
    result["outline"] = outline_of(markdown, shown, ranges)
    result["markdown"] = ""
    result["bytes"] = 0
    result["tokens"] = 0
    result["totalTokens"] = estimate_tokens(markdown)
    result["truncated"] = False
    return result


def _commercial_pointer(shown: str, cursor: Cursor | None) -> dict[str, Any]:
    markdown = (
        f"{shown} has no markdown mirror: it is an imqueue.com page meant for a browser. "
        f"Open {shown} to read it, or ask support@imqueue.com. For licensing facts read "
        "https://imqueue.com/license/ and https://imqueue.com/pricing/ with get_doc; for the "
        "framework itself search imqueue.org with search_docs.\n"
    )
    result = {"url": shown, "mimeType": "text/markdown", "totalBytes": len(markdown.encode("utf-8"))}
    return _part(result, markdown, MAX_MAX_TOKENS, cursor)


def render_doc_text(result: dict[str, Any]) -> str:
    """The text content: header lines that mirror section/fragmentMiss/truncated, then the body
    (or the outline)."""
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
    outline = result.get("outline")
    if miss:
        anchors = ", ".join(f"#{name}" for name in miss["available"]) or "none indexed for this page"
        follows = "the page's outline follows instead" if outline is not None else "the whole page follows"
        header.append(f"Fragment #{miss['anchor']} was not found, so {follows}. Available anchors: {anchors}")
    if outline is not None:
        header.append(
            f"Outline: {len(outline)} heading(s), about {result['totalTokens']:,} tokens in all "
            "(1 token = 4 characters). Read a section with get_doc(url of its anchor); read the page "
            "with its url alone."
        )
        lines = [_outline_line(entry) for entry in outline] or ["(no headings)"]
        return "\n\n".join(["\n".join(header), "\n".join(lines)]) + "\n"
    if result.get("startToken"):
        header.append(
            f"Continued: this part starts at about token {result['startToken']:,} of "
            f"{result['totalTokens']:,}; nothing before it is repeated."
        )
    if result["truncated"]:
        header.append(_truncation_note(result))
    header.extend(f"Note on this page's code: {note}" for note in result.get("notes", []))
    parts = ["\n".join(header), result["markdown"].rstrip("\n")]
    if result["truncated"]:
        parts.append(f"[{_truncation_note(result)}]")
    return "\n\n".join(parts) + "\n"


def _outline_line(entry: dict[str, Any]) -> str:
    where = f" {entry['url']}" if "url" in entry else ""
    return f"{'  ' * (entry['level'] - 1)}- {entry['heading']} ({entry['tokens']:,} tokens){where}"


def _truncation_note(result: dict[str, Any]) -> str:
    return (
        f"Truncated at a section or paragraph boundary: this part is about {result['tokens']:,} of "
        f"{result['totalTokens']:,} tokens ({result['bytes']:,} bytes; the document is "
        f"{result['totalBytes']:,} bytes). Read on with get_doc(url={result['url']!r}, "
        f"cursor={result['nextCursor']!r}); no text is lost or repeated between parts."
    )


__all__ = [
    "CURSOR_NEXT_STEP",
    "DEFAULT_MAX_TOKENS",
    "MAX_DOC_BYTES",
    "MAX_MAX_TOKENS",
    "MIN_MAX_TOKENS",
    "CursorError",
    "DocError",
    "DocRequest",
    "DocUrl",
    "PageNotFound",
    "SectionRanges",
    "mirror_of",
    "read_doc",
    "render_doc_text",
    "slice_section",
]

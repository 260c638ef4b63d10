"""Feed formats -> corpus records. The only module that knows the sites' feed shapes.

Formats (site/README.md of the mirror): tier 1 `/search-index.json` {v, e, records[{g,t,u,s,k,p,w,d}]},
tier 2 `/search-text.json` {v, e, pages[[url,title,kind]], sections[[pageIdx,anchor,heading,text,
emphasis]], lemmas}, `/search-sections.json` {v, e, pages{path:{anchor:[start,end)}}}, `/llms.txt`
(`## Section` + `- [Title](url): description — [markdown](…)`), `/blog/search-index.json`
[{title,url,summary,author,topics,date}], `/status.json`.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from imqueue_mcp.ranker.corpus import Document

from .sites import site_path_problem
from .sources import BuildError

log = logging.getLogger(__name__)

FEED_VERSION = 1
TIER_OF_GROUP = {0: "page", 1: "symbol", 2: "answer"}


class FeedFormatError(BuildError):
    pass


def decode_json(name: str, raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise FeedFormatError(
            f"{name}: not valid JSON ({error}); the origin served something else — check the URL"
        ) from None


def check_version(name: str, feed: Any) -> None:
    """Refuse a shape we do not read: scoring a shifted tuple silently is the failure to avoid."""
    if not isinstance(feed, dict) or "v" not in feed:
        raise FeedFormatError(f"{name}: no version field `v`; this is not a feed this builder reads")
    if feed["v"] != FEED_VERSION:
        raise FeedFormatError(
            f"{name}: feed version {feed['v']!r}, this builder reads version {FEED_VERSION}; "
            "upgrade imqueue-mcp (pip install -U imqueue-mcp) or build from a mirror of the older site"
        )
    if feed.get("e"):
        log.info("%s: engine version %s (noted, not checked)", name, feed["e"])


def expect(name: str, condition: bool, what: str) -> None:
    if not condition:
        raise FeedFormatError(f"{name}: {what}; the feed is malformed — rebuild the site or use a mirror")


@dataclass(frozen=True)
class CuratedLink:
    """One `- [title](url): description` line of a site's /llms.txt, under `## section`."""

    url: str  # as llms.txt writes it: the canonical https://imqueue.org/... form
    section: str
    title: str
    description: str  # the markdown pointer stripped

    def to_wire(self) -> list[str]:
        return [self.url, self.section, self.title, self.description]

    @classmethod
    def from_wire(cls, row: list[str]) -> CuratedLink:
        url, section, title, description = row
        return cls(url, section, title, description)


LINK_LINE = re.compile(r"^- \[(?P<title>[^\]]+)\]\((?P<url>[^)]+)\)(?::\s*(?P<desc>.*))?$")
MARKDOWN_POINTER = re.compile(r"\s*[—–-]\s*\[markdown\]\([^)]*\)\s*$")


def parse_llms(text: str) -> tuple[list[str], dict[str, CuratedLink]]:
    """Section names in order, and canonical URL -> curated link (markdown pointer stripped)."""
    sections: list[str] = []
    links: dict[str, CuratedLink] = {}
    current = ""
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections.append(current)
            continue
        match = LINK_LINE.match(line.strip())
        if not match or not current:
            continue
        description = MARKDOWN_POINTER.sub("", match["desc"] or "").strip()
        links.setdefault(match["url"], CuratedLink(match["url"], current, match["title"], description))
    return sections, links


def symbol_parent_and_member(path: str, title: str, kind: str) -> tuple[str, str]:
    """`/api/core/latest/core.imqoptions.safedelivery/` -> its class's path and `safeDelivery`.
    A top-level symbol (a class, a function) is its own parent: the per-parent cap groups a
    class with its members, never a whole package's exports."""
    slug = path.rstrip("/").rsplit("/", 1)[-1]
    parts = slug.split(".")
    if kind in {"method", "property", "constructor"} and len(parts) >= 3:
        parent = path.rstrip("/").rsplit("/", 1)[0] + "/" + ".".join(parts[:-1]) + "/"
        member = title.rsplit(".", 1)[-1]
        return parent, member
    return path, ""


def page_of(path: str) -> str:
    return path.split("#", 1)[0]


def on_the_site(name: str, path: str, refused: list[str]) -> bool:
    """Whether a record's path is a canonical site path (sites.site_path_problem); a record whose
    path is not is refused: reported in `refused` and never indexed or fetched."""
    problem = site_path_problem(path)
    if problem is not None:
        refused.append(f"{name}: record {path[:120]!r} refused: {problem}")
    return problem is None


def tier_one(
    name: str, feed: Any, site: str, curated: dict[str, CuratedLink], refused: list[str] | None = None
) -> list[Document]:
    """Tier-1 records -> documents; a record whose path is not on the site is added to `refused`."""
    check_version(name, feed)
    records = feed.get("records")
    expect(name, isinstance(records, list), "`records` is not a list")
    docs = []
    for record in records:
        expect(name, isinstance(record, dict) and "u" in record and "t" in record, "a record lacks `u`/`t`")
    refused = [] if refused is None else refused
    records = [r for r in records if on_the_site(name, str(r["u"]), refused)]
    page_titles = {r["u"]: r["t"] for r in records if r.get("g") == 0}
    for record in records:
        tier = TIER_OF_GROUP.get(record.get("g"), "")
        expect(name, bool(tier), f"record {record.get('u')!r} has unknown group {record.get('g')!r}")
        path, title, kind = str(record["u"]), str(record["t"]), str(record.get("k", ""))
        link = curated.get(canonical(site, page_of(path)))
        package = str(record.get("p", ""))
        parent, member, section = page_of(path), "", ""
        if tier == "symbol":
            parent, member = symbol_parent_and_member(path, title, kind)
            section = package
        elif tier == "answer":
            section = kind or page_titles.get(page_of(path), "")
        else:
            section = link.section if link else kind
        docs.append(
            Document(
                path=path,
                site=site,
                tier=tier,
                title=title,
                kind=kind,
                summary=str(record.get("s", "")),
                keywords=str(record.get("w", "")),
                package=package,
                section=section,
                parent=parent,
                member=member,
                deprecated=bool(record.get("d")),
                curated=link.description if link and tier == "page" and page_of(path) == path else "",
            )
        )
    return docs


def tier_two(
    name: str, feed: Any, site: str, refused: list[str] | None = None
) -> tuple[list[Document], dict[str, str]]:
    """Tier-2 sections -> documents; a section whose path is not on the site is added to `refused`."""
    check_version(name, feed)
    refused = [] if refused is None else refused
    pages, sections, lemmas = feed.get("pages"), feed.get("sections"), feed.get("lemmas", {})
    expect(name, isinstance(pages, list) and isinstance(sections, list), "`pages`/`sections` missing")
    expect(name, isinstance(lemmas, dict), "`lemmas` is not an object")
    docs = []
    for row in sections:
        expect(name, isinstance(row, list) and len(row) == 5, "a section is not a 5-tuple")
        page_index, anchor, heading, text, emphasis = row
        expect(name, isinstance(page_index, int) and 0 <= page_index < len(pages), "bad page index")
        page_row = pages[page_index]
        expect(
            name, isinstance(page_row, list) and len(page_row) == 3, "a page is not a [url, title, kind] row"
        )
        page_url, page_title, page_kind = page_row
        path = f"{page_url}#{anchor}" if anchor else str(page_url)
        if not on_the_site(name, path, refused):
            continue
        docs.append(
            Document(
                path=path,
                site=site,
                tier="section",
                title=heading or page_title,
                kind=page_kind,
                section=page_title,
                parent=page_url,
                heading=heading,
                text=str(text),
                emphasis=str(emphasis),
            )
        )
    return docs, {str(k): str(v) for k, v in lemmas.items()}


def blog_facts(name: str, feed: Any) -> dict[str, tuple[tuple[str, ...], str]]:
    expect(name, isinstance(feed, list), "the blog index is not a list")
    facts = {}
    for post in feed:
        expect(name, isinstance(post, dict) and "url" in post, "a post lacks `url`")
        facts[str(post["url"])] = (tuple(str(t) for t in post.get("topics", [])), str(post.get("date", "")))
    return facts


def section_ranges(name: str, feed: Any) -> dict[str, dict[str, list[int]]]:
    """/search-sections.json checked in full: every page a "/path", every anchor a non-empty
    name, every range [start, end) of line numbers with 0 <= start < end. One bad range refuses
    the whole feed: a reader slicing by a map it cannot trust would hand back the wrong text."""
    check_version(name, feed)
    pages = feed.get("pages")
    expect(name, isinstance(pages, dict), "`pages` is not an object")
    for page, anchors in pages.items():
        expect(name, page.startswith("/"), f"page {page[:80]!r} is not a /path")
        expect(name, isinstance(anchors, dict), f"the anchors of {page[:80]!r} are not an object")
        for anchor, line_range in anchors.items():
            expect(
                name,
                bool(anchor) and is_line_range(line_range),
                f"{page[:80]}#{anchor[:80]}: {str(line_range)[:40]} is not a line range [start, end) "
                "with 0 <= start < end",
            )
    return {p: {a: [r[0], r[1]] for a, r in anchors.items()} for p, anchors in pages.items()}


def is_line_range(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(type(n) is int for n in value)
        and 0 <= value[0] < value[1]
    )


def canonical(site: str, path: str) -> str:
    return ("https://imqueue.org" if site == "org" else "https://imqueue.com") + path

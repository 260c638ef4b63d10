"""Feeds -> Snapshot: read every feed from one source, parse it, assemble the corpus."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from imqueue_mcp.ranker.corpus import SITES, Corpus, Document

from . import feeds
from .api_pages import page_doc_comment
from .examples import Example, collect_examples, split_llms_full
from .listings import with_listings
from .pages import Pages, api_page_paths, read_markdown, read_pages
from .snapshot import Snapshot
from .sources import FeedUnavailable, Source, source_from

# (host, path): every feed the corpus is built from, in reading order.
FEEDS = (
    ("imqueue.org", "/search-index.json"),
    ("imqueue.org", "/search-text.json"),
    ("imqueue.org", "/search-peer-index.json"),  # imqueue.com's tier 1, as the org site carries it
    ("imqueue.org", "/search-peer-text.json"),
    ("imqueue.org", "/search-sections.json"),
    ("imqueue.com", "/search-sections.json"),
    ("imqueue.org", "/llms.txt"),
    ("imqueue.com", "/llms.txt"),
    ("imqueue.org", "/blog/search-index.json"),
    ("imqueue.org", "/status.json"),
    ("imqueue.org", "/llms-full.txt"),  # every doc page's markdown: the code examples (examples.py)
    ("imqueue.com", "/llms-full.txt"),
)

# Feeds whose absence costs only the code examples, never the search corpus.
EXAMPLE_FEEDS = frozenset({"/llms-full.txt"})

Progress = Callable[[int, int, str], None]


def build(
    origins: dict[str, str] | None = None,
    mirror: Path | str | None = None,
    source: Source | None = None,
    progress: Progress | None = None,
    optional: frozenset[str] = frozenset(),
    pages: bool = False,
) -> Snapshot:
    """Read every feed and return the snapshot. Raises BuildError with a one-line fix.
    Feeds whose path is in `optional` (e.g. "/status.json" for the server's live corpus, which
    reads package facts at call time anyway) may be missing: the snapshot then lacks them.
    With `pages`, every page's markdown is read too, from the same source: `snapshot.pages`."""
    if source is None:
        source = source_from(str(mirror) if mirror is not None else None, origins)
    raw: dict[tuple[str, str], bytes] = {}
    try:
        for step, (host, path) in enumerate(FEEDS, 1):
            if progress:
                progress(step, len(FEEDS), host + path)
            try:
                raw[(host, path)] = source.read(host, path)
            except FeedUnavailable:
                if path not in optional and path not in EXAMPLE_FEEDS:
                    raise
        snapshot = assemble(raw, source.describe())
        api_pages, _ = read_markdown(source, api_page_paths(snapshot.corpus), progress)
        with_symbol_docs(snapshot, api_pages)
        if pages:
            llms = {host: raw[(host, path)] for host, path in FEEDS if path == "/llms.txt"}
            snapshot.pages = read_pages(
                source, snapshot.corpus, snapshot.header, llms, progress, known=api_pages
            )
            snapshot.examples = with_page_examples(snapshot, snapshot.pages)
            snapshot.markdown = without_saved_pages(snapshot.markdown, snapshot.pages)
    finally:
        source.close()
    return snapshot


class _Feeds:
    """The raw feed bodies of one build, read as JSON or text by (host, path)."""

    def __init__(self, raw: dict[tuple[str, str], bytes]):
        self.raw = raw

    def json(self, host: str, path: str) -> Any:
        return feeds.decode_json(f"https://{host}{path}", self.raw[(host, path)])

    def text(self, host: str, path: str) -> str:
        return self.raw[(host, path)].decode("utf-8", errors="replace")


def assemble(raw: dict[tuple[str, str], bytes], origins: dict[str, str]) -> Snapshot:
    read = _Feeds(raw)
    org_sections, org_links = feeds.parse_llms(read.text("imqueue.org", "/llms.txt"))
    com_sections, com_links = feeds.parse_llms(read.text("imqueue.com", "/llms.txt"))
    curated = {**com_links, **org_links}
    refused: list[str] = []  # records whose path is not on the site: reported, never indexed
    documents, lemmas = _documents(read, curated, refused)
    status = _status(read)
    sections = {
        host: feeds.section_ranges(
            f"https://{host}/search-sections.json", read.json(host, "/search-sections.json")
        )
        for host in ("imqueue.org", "imqueue.com")
    }
    corpus = Corpus(
        documents=documents,
        lemmas=lemmas,
        section_names=list(dict.fromkeys(org_sections + com_sections)),
    )
    markdown: dict[str, str] = {}
    for host, path in FEEDS:
        if path == "/llms-full.txt" and (host, path) in raw:
            markdown.update(split_llms_full(read.text(host, path)))
    return Snapshot(
        header=_header(raw, origins, documents),
        corpus=corpus,
        sections=sections,
        status=status,
        links=sorted(curated.values(), key=lambda link: link.url),
        examples=collect_examples(markdown, documents),
        refused=refused,
        markdown=dict(sorted(markdown.items())),
    )


def _documents(
    read: _Feeds, curated: dict[str, feeds.CuratedLink], refused: list[str]
) -> tuple[list[Document], dict[str, str]]:
    """Every record of both tiers, imqueue.org's and its peer's, with the blog's facts; and the lemmas."""
    org = "https://imqueue.org"
    documents = feeds.tier_one(
        f"{org}/search-index.json", read.json("imqueue.org", "/search-index.json"), "org", curated, refused
    )
    prose, lemmas = feeds.tier_two(
        f"{org}/search-text.json", read.json("imqueue.org", "/search-text.json"), "org", refused
    )
    documents += prose
    documents += feeds.tier_one(
        f"{org}/search-peer-index.json",
        read.json("imqueue.org", "/search-peer-index.json"),
        "com",
        curated,
        refused,
    )
    peer_prose, peer_lemmas = feeds.tier_two(
        f"{org}/search-peer-text.json", read.json("imqueue.org", "/search-peer-text.json"), "com", refused
    )
    documents += peer_prose
    blog = feeds.blog_facts(
        f"{org}/blog/search-index.json", read.json("imqueue.org", "/blog/search-index.json")
    )
    return with_listings(with_blog_facts(documents, blog)), {**peer_lemmas, **lemmas}


def _status(read: _Feeds) -> Any:
    """status.json as read with the feeds (an object with a `packages` list), or None when absent."""
    if ("imqueue.org", "/status.json") not in read.raw:
        return None
    status = read.json("imqueue.org", "/status.json")
    feeds.expect(
        "https://imqueue.org/status.json",
        isinstance(status, dict) and "packages" in status,
        "no `packages` list",
    )
    return status


def _header(
    raw: dict[tuple[str, str], bytes], origins: dict[str, str], documents: list[Document]
) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for doc in documents:
        key = f"{doc.site}:{doc.tier}"
        counts[key] = counts.get(key, 0) + 1
    return {
        "origins": origins,
        "fetched_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "feeds": {f"https://{h}{p}": hashlib.sha256(b).hexdigest() for (h, p), b in raw.items()},
        "counts": dict(sorted(counts.items())),
    }


def with_symbol_docs(snapshot: Snapshot, api_pages: dict[str, bytes]) -> None:
    """Each API symbol's doc comment (Document.doc) from its reference page, read beside the feeds
    (`api_pages`: canonical page URL -> markdown; a page not there leaves the doc empty). The
    pages' digest joins the header, so the corpus's generation changes when a page does."""
    documents = []
    for doc in snapshot.corpus.documents:
        data = api_pages.get(doc.url.split("#", 1)[0]) if doc.tier == "symbol" else None
        if data is not None:
            markdown = data.decode("utf-8", errors="replace")
            doc = dataclasses.replace(doc, doc=page_doc_comment(markdown, doc.summary))
        documents.append(doc)
    snapshot.corpus.documents = documents
    digest = hashlib.sha256()
    for url, data in sorted(api_pages.items()):
        digest.update(f"{url}\n{len(data)}\n".encode())
        digest.update(data)
    snapshot.header["api_pages"] = {"count": len(api_pages), "sha256": digest.hexdigest()}


def without_saved_pages(markdown: dict[str, str], pages: Pages) -> dict[str, str]:
    """With the pages read (`--pages`), the body keeps only the llms-full.txt pages the saved pages
    lack: a page's own markdown (index.md, which the section ranges count lines of) is stored once,
    in the pages part, and passages read it there (Snapshot.page_markdown)."""
    return {url: text for url, text in markdown.items() if url not in pages.body}


def with_page_examples(snapshot: Snapshot, pages: Pages) -> list[Example]:
    """With the pages read (`--pages`), the examples come from every page's own markdown
    (the API pages too); the llms-full.txt copies stand in only for a page not read."""
    markdown = pages.markdown()
    read = set(markdown)
    extra = [e for e in snapshot.examples or [] if SITES[e.site] + e.page not in read]
    return sorted(collect_examples(markdown, snapshot.corpus.documents) + extra, key=lambda e: e.id)


def with_blog_facts(
    documents: list[Document], facts: dict[str, tuple[tuple[str, ...], str]]
) -> list[Document]:
    """Blog topics and dates attach to the post's page record (and its answers and sections)."""
    out = []
    for doc in documents:
        fact = facts.get(feeds.page_of(doc.path)) if doc.site == "org" else None
        out.append(dataclasses.replace(doc, topics=fact[0], date=fact[1]) if fact else doc)
    return out

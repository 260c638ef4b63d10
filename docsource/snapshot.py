"""The snapshot file: msgpack `{header, body}` (+ `pages`), written atomically, checked on load.

header: format version, origins, fetched-at, sha256 per feed, counts, body checksum (and the
        pages part's). Loaded, it also carries the saved pages' content checksum (PAGES_BODY),
        read from the pages part's own header, which generation_of names a generation by.
body:   the corpus (ranker.corpus wire form), per-host section line ranges, status.json, both
        sites' curated /llms.txt links (the server's resources list), the code examples
        (examples.py; wire rows), and `markdown`: canonical page URL -> the page's markdown, for
        every page the build read whole that `pages` below does not carry (each host's
        /llms-full.txt pages; with --pages only those without an index.md of their own), which
        search_docs cuts its passages from (server/docs/passage_text.py), live and offline alike. A
        body without "examples" loads with `examples` None (find_examples says to rebuild); one
        without "markdown" loads with an empty map (passages then come from the corpus's prose).
pages:  with `imq-build-index --pages`, every page's markdown (pages.py's envelope, kept as bytes
        until get_doc or the passages need it). In the same file as the corpus, so that one
        rename switches both: a reader sees the old generation whole or the new one whole, never
        a mix, and a builder killed mid-write leaves the old file as it was. Each page's markdown
        is in the file once: Snapshot.page_markdown joins the two for the passages.

The envelope and the atomic write are files.py's, shared with the pages sidecar (pages.py).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_origin, get_type_hints

import msgpack  # type: ignore[import-untyped]

from imqueue_mcp.ranker import Index
from imqueue_mcp.ranker.corpus import SITES, WIRE_FIELDS, Corpus, Document

from .examples import Example
from .feeds import FEED_VERSION, CuratedLink, FeedFormatError, section_ranges
from .files import SnapshotError, unwrap, wrap, write_atomically
from .pages import Pages, decode_pages, encode_pages
from .sites import site_path_problem

PAGES_BODY = "pages_body_sha256"  # in a loaded header: the saved pages' content checksum (generation_of)
FIX = "rebuild it with `imq-build-index` (or `imq-build-index --from DIR` offline)"
FORMAT_VERSION = 11  # bump whenever the body changes shape or meaning (corpus, index, links, ...)
# 7: with --pages, the body's `markdown` leaves out the pages the pages part carries (6 kept both)


@dataclass
class Snapshot:
    header: dict[str, Any]
    corpus: Corpus
    sections: dict[str, dict[str, dict[str, list[int]]]]  # host -> page path -> anchor -> [start, end)
    status: dict[str, Any] | None
    index_wire: dict[str, Any] | None = None  # the ranker's postings, so loading rebuilds nothing
    links: list[CuratedLink] = field(default_factory=list)  # both llms.txt, one per URL, sorted by URL
    pages: Pages | None = None  # `build(pages=True)`: every page's markdown, written into this file
    pages_raw: bytes | None = None  # as loaded: the pages envelope, checked, decoded on demand (saved_pages)
    examples: list[Example] | None = None  # the docs' code blocks; None: built before they were extracted
    markdown: dict[str, str] = field(default_factory=dict)  # canonical page URL -> markdown, sorted by URL
    refused: list[str] = field(default_factory=list)  # the build's refused records (not written to the file)

    def index(self) -> Index:
        """The ready-to-search index: stored postings when present, else built now."""
        if self.index_wire is None:  # built just now: keep its postings for save_snapshot
            index = Index(self.corpus)
            self.index_wire = index.to_wire()
            return index
        try:
            return Index.from_wire(self.corpus, self.index_wire)
        except (KeyError, TypeError, ValueError):
            raise SnapshotError(
                "the snapshot's index was written by another version of imqueue-mcp; "
                "rebuild it with `imq-build-index` (or `imq-build-index --from DIR` offline)"
            ) from None

    @property
    def fetched_at(self) -> str:
        return str(self.header.get("fetched_at", ""))

    def saved_pages(self, where: Path | str) -> Pages | None:
        """The pages this snapshot carries (decoded now), or None when it was built without --pages."""
        if self.pages is None and self.pages_raw is not None:
            self.pages = decode_pages(where, self.pages_raw, "rebuild it with `imq-build-index --pages`")
        return self.pages

    def page_markdown(self, where: Path | str) -> dict[str, str]:
        """Every page's markdown this snapshot carries, by canonical page URL: the saved pages'
        (--pages), and the body's `markdown` for the pages they lack. SnapshotError (naming
        `where`) when the saved pages are not the shape this version writes."""
        return page_markdown(self.markdown, self.saved_pages(where))


def page_markdown(markdown: dict[str, str], pages: Pages | None) -> dict[str, str]:
    """A body's `markdown` joined by the saved pages' own (a page's own markdown first), by URL."""
    return markdown if pages is None else dict(sorted((markdown | pages.markdown()).items()))


def generation_of(header: dict[str, Any]) -> str:
    """A content hash naming what a snapshot serves (16 hex digits): its body's checksum and its
    saved pages' (PAGES_BODY, set on load), or for a corpus built in memory the feeds' checksums.
    The same content always gets the same name, whenever it was read: a rebuild of unchanged docs
    is the generation answering already, which a follower keeps (corpus_keeper) with its caches.

    Never the fetch time: the body holds none, but the pages part's own header does, so the
    checksum of the whole part (`pages_sha256`) differs for every build; it names a generation
    only when the part's header cannot be read (a hand-made file), or a header not loaded here."""
    basis = header.get("body_sha256") or json.dumps(
        [header.get("feeds", {}), header.get("api_pages", {})], sort_keys=True
    )
    pages = header.get(PAGES_BODY) or header.get("pages_sha256") or ""
    return hashlib.sha256(f"{basis}:{pages}".encode()).hexdigest()[:16]


def pages_body_sha256(pages: bytes) -> str | None:
    """The checksum the saved pages' own header gives their body (the markdown of every page):
    their content, without the fetch time and origins beside it. None for a part not in the
    shape wrap() writes; decode_pages refuses that part when it is first read."""
    try:
        checksum = msgpack.unpackb(pages, raw=False)["header"]["body_sha256"]
    except Exception:  # a hand-made part: named by its whole checksum, refused when read
        return None
    return checksum if isinstance(checksum, str) else None


def default_snapshot_path() -> Path:
    """The user cache dir, shared by imqueue-mcp, imq-search and imq-build-index."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "imqueue-mcp" / "snapshot.msgpack"


def encode(snapshot: Snapshot) -> bytes:
    body = msgpack.packb(
        {
            "corpus": snapshot.corpus.to_wire(),
            "sections": snapshot.sections,
            "status": snapshot.status,
            "links": [link.to_wire() for link in snapshot.links],
            **(
                {"examples": [e.to_wire() for e in snapshot.examples]}
                if snapshot.examples is not None
                else {}
            ),
            "markdown": snapshot.markdown,
            "index": snapshot.index_wire
            if snapshot.index_wire is not None
            else Index(snapshot.corpus).to_wire(),
        },
        use_bin_type=True,
    )
    pages = encode_pages(snapshot.pages) if snapshot.pages is not None else snapshot.pages_raw
    # PAGES_BODY is derived on load, from the pages as read: a copy written here would go stale
    # when a loaded snapshot is saved with other pages.
    header = {key: value for key, value in snapshot.header.items() if key != PAGES_BODY}
    return wrap(header, body, FORMAT_VERSION, pages)


def save_snapshot(snapshot: Snapshot, path: Path) -> int:
    """Write via a temp file in the same folder + fsync + rename: a crash leaves the old file whole."""
    return write_atomically(Path(path), encode(snapshot))


def load_snapshot(path: Path) -> Snapshot:
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SnapshotError(f"{path}: no snapshot there; {FIX}") from None
    except OSError as error:
        raise SnapshotError(f"{path}: cannot read ({error.strerror}); {FIX}") from None
    # Unpacking builds ~100k small objects; the cyclic GC has nothing to find among them.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return decode(path, raw)
    finally:
        if collecting:
            gc.enable()


def decode(path: Path | str, raw: bytes, fix: str = FIX) -> Snapshot:
    """A snapshot's bytes (read from `path`, a file or a URL), checked; SnapshotError naming it."""
    header, body, pages = unwrap(path, raw, FORMAT_VERSION, "snapshot", fix)
    header.pop(PAGES_BODY, None)  # never the file's word for it: read from the pages themselves
    content = pages_body_sha256(pages) if pages is not None else None
    if content is not None:
        header[PAGES_BODY] = content
    try:
        data = msgpack.unpackb(body, raw=False)
        check_document_rows(data["corpus"]["documents"])
        check_links_and_status(data["links"], data["status"])
        return Snapshot(
            header=header,
            corpus=Corpus.from_wire(data["corpus"]),
            sections={
                host: section_ranges(f"{path} (sections of {host})", {"v": FEED_VERSION, "pages": pages})
                for host, pages in data["sections"].items()
            },
            status=data["status"],
            index_wire=data.get("index"),
            links=[CuratedLink.from_wire(row) for row in data["links"]],
            examples=examples_of(data.get("examples")),
            pages_raw=pages,
            markdown=markdown_of(data.get("markdown")),
        )
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, FeedFormatError):
        # The checksum held, so the bytes are as written, but not by a build of this shape:
        # a hand-made or foreign file. Name it; the Python message would help nobody.
        raise SnapshotError(
            f"{path}: the checksum is right but the body is not the shape this version writes "
            f"(a hand-made or foreign file?); {fix}"
        ) from None


def wire_type(hint: Any) -> type:
    """A Document field's type on the wire: a tuple travels as a msgpack list."""
    return list if get_origin(hint) is tuple else hint


# The type of each field of a document's wire row (ranker.corpus.Document, in WIRE_FIELDS order),
# read from the dataclass, so that a field added there is checked here as it is written.
ROW_TYPES = tuple(wire_type(get_type_hints(Document)[name]) for name in WIRE_FIELDS)


def check_document_rows(rows: Any) -> None:
    """TypeError unless every row is a list of the Document fields' types. The corpus decodes
    its rows lazily, at query time, so a row of the wrong shape is caught here, while the file
    can still be named (a few ms for the whole corpus)."""
    if not isinstance(rows, list) or not all(
        type(row) is list and len(row) == len(ROW_TYPES) and all(map(isinstance, row, ROW_TYPES))
        for row in rows
    ):
        raise TypeError("a document row is not a Document")
    # Every record on one of the two sites, at a path the builder would accept from a feed: a
    # site the server does not know, or a path such as "@evil.example/x" (which would make the
    # hit's URL https://imqueue.org@evil.example/x), is refused with the file.
    site_at, path_at = WIRE_FIELDS.index("site"), WIRE_FIELDS.index("path")
    for row in rows:
        if row[site_at] not in SITES or site_path_problem(row[path_at]) is not None:
            raise ValueError(f"a document is not on the sites: {row[site_at]!r} {row[path_at]!r}")


def check_links_and_status(links: Any, status: Any) -> None:
    """TypeError unless the curated links are rows of four strings whose URL is on one of the two
    sites, and status.json (when stored) is an object with a list of packages: the rules the
    builder holds the feeds to (feeds.parse_llms, assemble._status), applied again to what a
    follower is about to adopt."""
    if not isinstance(links, list) or not all(
        type(row) is list and len(row) == 4 and all(isinstance(value, str) for value in row) for row in links
    ):
        raise TypeError("a curated link is not four strings")
    for row in links:
        site = next((origin for origin in SITES.values() if row[0].startswith(origin + "/")), None)
        if site is None or site_path_problem(row[0][len(site) :]) is not None:
            raise ValueError(f"a curated link is not on the sites: {row[0]!r}")
    if status is not None and not (isinstance(status, dict) and isinstance(status.get("packages"), list)):
        raise TypeError("status.json is not an object with a list of packages")


def examples_of(rows: Any) -> list[Example] | None:
    """The stored examples; None when the snapshot has none in a shape this version reads
    (written before examples existed): find_examples then says to rebuild it."""
    if not isinstance(rows, list):
        return None
    try:
        return [Example.from_wire(row) for row in rows]
    except (TypeError, ValueError):
        return None


def markdown_of(pages: Any) -> dict[str, str]:
    """The stored page markdown; empty when there is none in a shape this version reads."""
    if not isinstance(pages, dict) or not all(isinstance(v, str) for v in pages.values()):
        return {}
    return pages

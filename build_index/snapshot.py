"""The snapshot file: msgpack `{header, body}`, written atomically, checked on load.

header: format version, origins, fetched-at, sha256 per feed, counts, body checksum.
body:   the corpus (ranker.corpus wire form), per-host section line ranges, status.json, both
        sites' curated /llms.txt links (the server's resources list), the code examples
        (examples.py; wire rows), and `markdown`: canonical page URL -> the page's markdown, for
        every page the build read whole (each host's /llms-full.txt pages; with --pages every
        page, the API pages too), which search_docs cuts its passages from (server/docs/
        passages.py), live and offline alike. A body without "examples" loads with `examples`
        None (find_examples says to rebuild); one without "markdown" loads with an empty map
        (passages then come from the corpus's prose).

The envelope and the atomic write are files.py's, shared with the pages sidecar (pages.py).
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]

from imqueue_mcp.ranker import Index
from imqueue_mcp.ranker.corpus import Corpus

from .examples import Example
from .feeds import CuratedLink
from .files import SnapshotError, unwrap, wrap, write_atomically
from .pages import Pages

FORMAT_VERSION = 6  # bump whenever the body changes shape or meaning (corpus, index, links, ...)


@dataclass
class Snapshot:
    header: dict[str, Any]
    corpus: Corpus
    sections: dict[str, dict[str, dict[str, list[int]]]]  # host -> page path -> anchor -> [start, end)
    status: dict[str, Any] | None
    index_wire: dict[str, Any] | None = None  # the ranker's postings, so loading rebuilds nothing
    links: list[CuratedLink] = field(default_factory=list)  # both llms.txt, one per URL, sorted by URL
    pages: Pages | None = None  # `build(pages=True)`: the sidecar's pages (never written into this file)
    examples: list[Example] | None = None  # the docs' code blocks; None: built before they were extracted
    markdown: dict[str, str] = field(default_factory=dict)  # canonical page URL -> markdown, sorted by URL

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
    return wrap(snapshot.header, body, FORMAT_VERSION)


def save_snapshot(snapshot: Snapshot, path: Path) -> int:
    """Write via a temp file in the same folder + fsync + rename: a crash leaves the old file whole."""
    return write_atomically(Path(path), encode(snapshot))


def load_snapshot(path: Path) -> Snapshot:
    path = Path(path)
    fix = "rebuild it with `imq-build-index` (or `imq-build-index --from DIR` offline)"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SnapshotError(f"{path}: no snapshot there; {fix}") from None
    except OSError as error:
        raise SnapshotError(f"{path}: cannot read ({error.strerror}); {fix}") from None
    # Unpacking builds ~100k small objects; the cyclic GC has nothing to find among them.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return decode(path, raw, fix)
    finally:
        if collecting:
            gc.enable()


def decode(path: Path, raw: bytes, fix: str) -> Snapshot:
    header, body = unwrap(path, raw, FORMAT_VERSION, "snapshot", fix)
    data = msgpack.unpackb(body, raw=False)
    return Snapshot(
        header=header,
        corpus=Corpus.from_wire(data["corpus"]),
        sections=data["sections"],
        status=data["status"],
        index_wire=data.get("index"),
        links=[CuratedLink.from_wire(row) for row in data["links"]],
        examples=examples_of(data.get("examples")),
        markdown=markdown_of(data.get("markdown")),
    )


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

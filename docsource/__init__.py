"""build_index: the sites' feeds -> a corpus snapshot on disk. The only package that knows feeds.

    sources.py   where bytes come from: live sites, origin overrides, a mirror directory
    feeds.py     feed bytes -> ranker.corpus.Document records (strict on feed versions)
    build.py     read every feed from one source and assemble the Snapshot
    snapshot.py  the msgpack file: header + body, atomic write, checked load
    pages.py     every page's markdown (--pages), carried in the snapshot file, for offline get_doc
    examples.py  the docs' fenced code blocks (llms-full.txt, and every page with --pages) -> Example
    cli.py       `imq-build-index`

Flow: Source.read -> feeds.* -> build.assemble -> Snapshot -> snapshot.save_snapshot.
With --pages: build.build(pages=True) -> pages.read_pages (same Source) -> Snapshot.pages ->
the snapshot file's "pages" part (one file, one rename: one generation); the body's `markdown`
then keeps only the pages that part lacks, and Snapshot.page_markdown joins the two.
Examples: build.assemble -> examples.collect_examples (llms-full.txt pages; every page's own
markdown with --pages) -> Snapshot.examples -> the snapshot body's "examples".
"""

from .build import FEEDS, build
from .files import SnapshotError
from .pages import Pages, decode_pages, load_pages, pages_path, save_pages
from .snapshot import FIX, Snapshot, default_snapshot_path, generation_of, load_snapshot, save_snapshot
from .sources import BuildError, FeedUnavailable, HttpSource, MirrorSource, NotFound, source_from

__all__ = [
    "FEEDS",
    "FIX",
    "BuildError",
    "FeedUnavailable",
    "HttpSource",
    "MirrorSource",
    "NotFound",
    "Pages",
    "Snapshot",
    "SnapshotError",
    "build",
    "decode_pages",
    "default_snapshot_path",
    "generation_of",
    "load_pages",
    "load_snapshot",
    "pages_path",
    "save_pages",
    "save_snapshot",
    "source_from",
]

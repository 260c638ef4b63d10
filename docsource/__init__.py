"""docsource: reading the two sites, below both the builder (build_index) and the server. The only
package that knows the feeds, the snapshot file and its pages.

    sites.py     hosts, live origins, origin parsing, the user agent, timeouts and size limits
    sources.py   where bytes come from: live sites, origin overrides, a mirror directory
    feeds.py     feed bytes -> ranker.corpus.Document records (strict on feed versions)
    assemble.py  read every feed from one source and assemble the Snapshot (`build`)
    files.py     the envelope the snapshot and its pages share: checked, written atomically
    snapshot.py  the msgpack file: header + body, atomic write, checked load
    pages.py     every page's markdown (--pages), carried in the snapshot file, for offline get_doc
    examples.py  the docs' fenced code blocks (llms-full.txt, and every page with --pages) -> Example
    api_pages.py the API reference as data: a package's symbol records, a page's Signature block

Flow: Source.read -> feeds.* -> assemble.assemble -> Snapshot -> snapshot.save_snapshot.
With --pages: build(pages=True) -> pages.read_pages (same Source) -> Snapshot.pages ->
the snapshot file's "pages" part (one file, one rename: one generation); the body's `markdown`
then keeps only the pages that part lacks, and Snapshot.page_markdown joins the two.
Examples: assemble.assemble -> examples.collect_examples (llms-full.txt pages; every page's own
markdown with --pages) -> Snapshot.examples -> the snapshot body's "examples".
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assemble import FEEDS, build
    from .files import SnapshotError
    from .pages import Pages, decode_pages, load_pages, pages_path, save_pages
    from .snapshot import FIX, Snapshot, default_snapshot_path, generation_of, load_snapshot, save_snapshot
    from .sources import BuildError, FeedUnavailable, HttpSource, MirrorSource, NotFound, source_from

# The names above, each from its module, imported on first use (PEP 562): importing one light
# module (sites, for the server's version) must not pull in httpx, numpy and the feed parsers,
# which cost a starting server ~150 ms before it could take its first signal.
_HOME = {
    **dict.fromkeys(("FEEDS", "build"), "assemble"),
    "SnapshotError": "files",
    **dict.fromkeys(("Pages", "decode_pages", "load_pages", "pages_path", "save_pages"), "pages"),
    **dict.fromkeys(
        ("FIX", "Snapshot", "default_snapshot_path", "generation_of", "load_snapshot", "save_snapshot"),
        "snapshot",
    ),
    **dict.fromkeys(
        ("BuildError", "FeedUnavailable", "HttpSource", "MirrorSource", "NotFound", "source_from"), "sources"
    ),
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


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

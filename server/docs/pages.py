"""The pages saved beside the snapshot (`imq-build-index --pages`): get_doc's offline answers.

    SavedPages.store()   the sidecar of the snapshot in use (--snapshot, else the default path)
                         and that snapshot's section ranges, loaded in a worker thread on the
                         first offline read and kept, or None with `unavailable` saying why
    PageStore            canonical URL -> markdown bytes, section ranges, date, file

A sidecar is used only when its fetched_at equals the snapshot's: one left from an earlier
build (written with --pages, followed by a build without) belongs to another corpus and is
ignored with a log line. Whatever the first load finds (a store, no file, a stale or damaged
one) is kept for the life of the server.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from imqueue_mcp import build_index

if TYPE_CHECKING:
    from imqueue_mcp.server.docs.corpus import CorpusKeeper

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PageStore:
    pages: dict[str, bytes]  # canonical URL without fragment -> markdown as its mirror served it
    sections: dict[str, dict[str, dict[str, list[int]]]]  # the snapshot's: host -> page -> anchor -> range
    fetched_at: str
    location: str  # the sidecar file

    def ranges(self, host: str, page: str) -> dict[str, list[int]] | None:
        ranges = self.sections.get(host, {}).get(page)
        return ranges if isinstance(ranges, dict) else None

    def describe(self, note: str) -> dict[str, str]:
        """get_doc's `source`: the shape search_docs reports its corpus in."""
        return {"source": "snapshot", "fetchedAt": self.fetched_at, "from": self.location, "note": note}


class SavedPages:
    def __init__(self, keeper: CorpusKeeper):
        self.keeper = keeper
        self.unavailable = ""  # why there is no store, with the fix; set by the first load
        self._lock = threading.Lock()
        self._loaded = False
        self._store: PageStore | None = None

    async def store(self) -> PageStore | None:
        return await asyncio.to_thread(self._load_once)

    def _load_once(self) -> PageStore | None:
        with self._lock:
            if not self._loaded:
                self._store = self._load()
                self._loaded = True
            return self._store

    def _load(self) -> PageStore | None:
        snapshot_path = self.keeper.snapshot_path()
        sidecar = build_index.pages_path(snapshot_path)
        out = "" if self.keeper.config.snapshot is None else f" --out {snapshot_path}"
        fix = f"build one with `imq-build-index --pages{out}`"
        if not sidecar.is_file():
            self.unavailable = f"There are no saved pages beside the snapshot ({sidecar}); {fix}."
            return None
        try:
            pages = build_index.load_pages(sidecar)
            snapshot = build_index.load_snapshot(snapshot_path)
        except Exception as error:  # a damaged or foreign file: no store, said once, never a crash
            self.unavailable = f"The saved pages could not be used: {error}."
            logger.warning("saved pages not used: %s", error)
            return None
        if pages.fetched_at != snapshot.fetched_at:
            self.unavailable = (
                f"The saved pages {sidecar} are from another build ({pages.fetched_at}) than the snapshot "
                f"({snapshot.fetched_at}), so they were not used; {fix}."
            )
            logger.warning(
                "saved pages %s ignored: fetched %s, the snapshot %s",
                sidecar,
                pages.fetched_at,
                snapshot.fetched_at,
            )
            return None
        logger.info("get_doc answers offline from %s (%d pages)", sidecar, len(pages.body))
        return PageStore(pages.body, snapshot.sections, snapshot.fetched_at, str(sidecar))

"""The pages saved beside the snapshot (`imq-build-index --pages`): get_doc's offline answers.

    SavedPages.store()   the pages the snapshot carries, with its section ranges: those of the
                         generation answering searches when it carries pages (offline, or
                         following a builder), else those of the snapshot file on disk; decoded
                         in a worker thread when first needed, or None with `unavailable` saying why
    PageStore            canonical URL -> markdown bytes, section ranges, date, file

The pages travel inside the snapshot file (`imq-build-index --pages`), so the corpus and the
pages of one build switch together. A snapshot written by an older version without them may
have a `<snapshot>.pages` sidecar: it is used only when its fetched_at equals the snapshot's
(one left from an earlier build belongs to another corpus and is ignored with a log line).
The file on disk is read again whenever it was replaced (its inode, time or size changed), so
a running server picks up a new build without a restart.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from imqueue_mcp.docsource import pages as source_pages
from imqueue_mcp.docsource import snapshot as source_snapshot

if TYPE_CHECKING:
    from imqueue_mcp.docsource import Snapshot
    from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper, LoadedCorpus

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
        self.unavailable = ""  # why there is no store, with the fix; set by each load that finds none
        self._lock = threading.Lock()
        self._from_generation: tuple[str, PageStore] | None = None  # (generation, its pages)
        self._from_disk: tuple[tuple[int, int, int] | None, PageStore | None] | None = None

    async def store(self) -> PageStore | None:
        """The pages of the snapshot generation answering searches, when it carries them (one
        generation: never one build's pages beside another's corpus); else those of the snapshot
        file on disk, read again whenever the file was replaced."""
        self.keeper.check_if_due()
        # A call that reached this worker before its first generation did waits for it: the
        # snapshot path on disk is not where a followed generation lives.
        corpus = await self.keeper.followed_once_loaded()
        if corpus is not None and corpus.pages_raw is not None:
            return await asyncio.to_thread(self._generation_store, corpus)
        return await asyncio.to_thread(self._disk_store)

    def _generation_store(self, corpus: LoadedCorpus) -> PageStore | None:
        with self._lock:
            if self._from_generation is None or self._from_generation[0] != corpus.generation:
                assert corpus.pages_raw is not None
                try:
                    pages = source_pages.decode_pages(corpus.location, corpus.pages_raw, source_snapshot.FIX)
                except Exception as error:  # checked on load already; said, never a crash
                    self.unavailable = f"The saved pages could not be used: {error}."
                    return None
                store = PageStore(pages.body, corpus.sections or {}, corpus.fetched_at, corpus.location)
                self._from_generation = (corpus.generation, store)
            return self._from_generation[1]

    def _disk_store(self) -> PageStore | None:
        path = self.keeper.snapshot_path()
        try:
            stat = path.stat()
            signature: tuple[int, int, int] | None = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        except OSError:
            signature = None
        with self._lock:
            if self._from_disk is None or self._from_disk[0] != signature or signature is None:
                self._from_disk = (signature, self._load(path))
            return self._from_disk[1]

    def _load(self, snapshot_path: Path) -> PageStore | None:
        out = "" if self.keeper.config.snapshot is None else f" --out {snapshot_path}"
        fix = f"build one with `imq-build-index --pages{out}`"
        try:
            snapshot = source_snapshot.load_snapshot(snapshot_path)
            pages = snapshot.saved_pages(snapshot_path)
        except Exception as error:  # a damaged or foreign file: no store, said once, never a crash
            self.unavailable = f"The saved pages could not be used: {error}."
            logger.warning("saved pages not used: %s", error)
            return None
        if pages is not None:
            return PageStore(pages.body, snapshot.sections, snapshot.fetched_at, str(snapshot_path))
        return self._load_sidecar(snapshot, snapshot_path, fix)

    def _load_sidecar(self, snapshot: Snapshot, snapshot_path: Path, fix: str) -> PageStore | None:
        """An older version's pages file beside the snapshot, used only if it is the same build's."""
        sidecar = source_pages.pages_path(snapshot_path)
        if not sidecar.is_file():
            # the path leads, so that the hosted redaction reads "the server's snapshot was built ..."
            self.unavailable = f"{snapshot_path} was built without its pages; {fix}."
            return None
        try:
            pages = source_pages.load_pages(sidecar)
        except Exception as error:
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

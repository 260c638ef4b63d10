"""Which corpus search_docs ranks over, and keeping it fresh.

Sources, in order of preference:

1. the live sites (through the configured origins), rebuilt at most once an hour (or every
   Config.refresh_seconds);
2. the snapshot on disk (--snapshot, else build_index's default path), labelled with its date;
3. nothing: `CorpusUnavailable`, whose message says how to build a snapshot.

Rules that keep this predictable:

- One refresh at a time. Concurrent callers share the running refresh (one asyncio task),
  and a caller that is cancelled does not cancel it for the others.
- A failed refresh keeps whatever corpus was already loaded, and is retried no sooner
  than RETRY_SECONDS later, so an unreachable site costs one timeout, not one per query.
- Only the very first load makes a caller wait (and hears its progress, if it asked: see
  progress.py); later refreshes run in the background while the previous corpus keeps answering.
- With --offline the network is never contacted: the snapshot is the only source.
- Whoever needs to know that a new corpus replaced the old one (resources.py, to announce
  a changed resource list) registers a watcher with `watch`; it is called with the old and
  the new corpus after each replacement, and a watcher that fails is logged, never fatal.
- Building the corpus and its index is CPU work (about a second or two), so it runs in a
  worker thread, off the event loop. ranker and build_index are imported there too, on
  first use, which keeps them off the server's start-up path.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import progress
from .config import Config

if TYPE_CHECKING:
    from imqueue_mcp.build_index.feeds import CuratedLink

logger = logging.getLogger(__name__)

RETRY_SECONDS = 300.0


class CorpusUnavailable(Exception):
    """No corpus could be loaded; the message says what failed and how to build a snapshot."""


@dataclass(frozen=True)
class LoadedCorpus:
    index: Any  # ranker.Index
    source: str  # "live" | "snapshot"
    fetched_at: str  # when the feeds were read (ISO 8601), from the snapshot header
    location: str  # origins read, or the snapshot file
    loaded_at: float  # time.monotonic() when it was loaded here
    note: str = ""  # why an older corpus is answering, if it is
    links: tuple[CuratedLink, ...] = ()  # both sites' /llms.txt links, one per URL, sorted by URL
    status: dict[str, Any] | None = None  # imqueue.org/status.json as read with the feeds (package_facts.py)

    def describe(self) -> dict[str, str]:
        info = {"source": self.source, "fetchedAt": self.fetched_at, "from": self.location}
        if self.note:
            info["note"] = self.note
        return info


CorpusWatcher = Callable[["LoadedCorpus | None", "LoadedCorpus"], Awaitable[None]]


class CorpusKeeper:
    def __init__(self, config: Config):
        self.config = config
        self.refresh_seconds = config.refresh_seconds
        self.retry_seconds = min(RETRY_SECONDS, config.refresh_seconds)
        self._watchers: list[CorpusWatcher] = []
        self.refreshes = 0  # live rebuilds started: lets a test see that concurrent callers shared one
        self._current: LoadedCorpus | None = None
        self._task: asyncio.Task[None] | None = None
        self._next_attempt = 0.0
        self._live_failure = ""
        self._snapshot_failure = ""

    def watch(self, watcher: CorpusWatcher) -> None:
        """Call `watcher(old, new)` each time a newly loaded corpus replaces the one answering."""
        self._watchers.append(watcher)

    async def current(self) -> LoadedCorpus:
        """The corpus to rank over now; waits only when none has been loaded yet."""
        if self._current is None:
            async with progress.ticking("loading the docs corpus"):
                await self._refresh()
            if self._current is None:
                raise CorpusUnavailable(self._unavailable_message())
        elif self._refresh_due():
            self._start_refresh()
        return self._current

    async def refresh(self) -> LoadedCorpus | None:
        """Try the live sites now, whatever the schedule says; the corpus answering afterwards."""
        if not self.config.offline and (self._task is None or self._task.done()):
            self._next_attempt = 0.0
        async with progress.ticking("refreshing the docs corpus"):
            await self._refresh()
        return self._current

    def _refresh_due(self) -> bool:
        now = time.monotonic()
        if self.config.offline or now < self._next_attempt or self._current is None:
            return False
        return self._current.source != "live" or now - self._current.loaded_at >= self.refresh_seconds

    def _start_refresh(self) -> asyncio.Task[None]:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._load())
        return self._task

    async def _refresh(self) -> None:
        await asyncio.shield(self._start_refresh())

    async def _load(self) -> None:
        previous = self._current
        await self._replace()
        if self._current is not None and self._current.loaded_at != getattr(previous, "loaded_at", None):
            for watcher in list(self._watchers):
                try:
                    await watcher(previous, self._current)
                except Exception:  # a watcher must not cost the corpus
                    logger.exception("a corpus watcher failed")

    async def _replace(self) -> None:
        if not self.config.offline and time.monotonic() >= self._next_attempt:
            self.refreshes += 1
            try:
                self._current = await asyncio.to_thread(self._build_live)
                self._next_attempt = time.monotonic() + self.refresh_seconds
                self._live_failure = ""
                return
            except Exception as error:  # any failure keeps the previous corpus
                self._next_attempt = time.monotonic() + self.retry_seconds
                self._live_failure = str(error) or type(error).__name__
                logger.warning("live docs refresh failed: %s", self._live_failure)
                if self._current is not None:
                    self._current = _with_note(self._current, self._stale_note())
        if self._current is None:
            try:
                self._current = await asyncio.to_thread(self._load_snapshot)
            except Exception as error:
                self._snapshot_failure = str(error) or type(error).__name__
                logger.warning("no docs snapshot: %s", self._snapshot_failure)

    def _build_live(self) -> LoadedCorpus:
        from imqueue_mcp import build_index

        # Package facts are read from /status.json at call time; a missing one must not cost the corpus.
        snapshot = build_index.build(
            origins=self.config.origin_overrides or None, optional=frozenset({"/status.json"})
        )
        origins = ", ".join(self.config.origins.values())
        return LoadedCorpus(
            snapshot.index(),
            "live",
            snapshot.fetched_at,
            origins,
            time.monotonic(),
            links=tuple(snapshot.links),
            status=snapshot.status,
        )

    def _load_snapshot(self) -> LoadedCorpus:
        from imqueue_mcp import build_index

        path = self.snapshot_path()
        if not path.is_file():
            raise FileNotFoundError(f"there is no snapshot file at {path}")
        snapshot = build_index.load_snapshot(path)
        note = "" if self.config.offline else self._stale_note()
        # snapshot.index() is a ranker.Index over snapshot.corpus, reusing the stored postings
        return LoadedCorpus(
            snapshot.index(),
            "snapshot",
            snapshot.fetched_at,
            str(path),
            time.monotonic(),
            note,
            tuple(snapshot.links),
            snapshot.status,
        )

    def snapshot_path(self) -> Path:
        if self.config.snapshot is not None:
            return self.config.snapshot
        from imqueue_mcp import build_index

        return Path(build_index.default_snapshot_path())

    def _stale_note(self) -> str:
        return f"the live sites could not be read ({self._live_failure}), so an older corpus is answering"

    def _unavailable_message(self) -> str:
        why = (
            "the server runs with --offline"
            if self.config.offline
            else f"the live sites could not be read ({self._live_failure})"
        )
        return (
            f"No docs corpus is available: {why}, and no snapshot could be loaded "
            f"({self._snapshot_failure}). Build one with `imq-build-index` "
            f"(it writes {self.snapshot_path()}), or `imq-build-index --from DIR --out PATH` and start the "
            "server with --snapshot PATH; then call search_docs again."
        )


def _with_note(corpus: LoadedCorpus, note: str) -> LoadedCorpus:
    return replace(corpus, note=note)

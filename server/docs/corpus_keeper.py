"""Which corpus search_docs ranks over, and keeping it fresh.

Sources, in order of preference:

1. the live sites (through the configured origins), rebuilt at most once an hour (or every
   Config.refresh_seconds);
2. the snapshot on disk (--snapshot, else docsource's default path), labelled with its date;
3. nothing: `CorpusUnavailable`, whose message says how to build a snapshot.

Rules that keep this predictable:

- One refresh at a time. Concurrent callers share the running refresh (one asyncio task),
  and a caller that is cancelled does not cancel it for the others.
- A failed refresh keeps whatever corpus was already loaded, and is retried no sooner
  than RETRY_SECONDS later, so an unreachable site costs one timeout, not one per query.
- Stale while revalidate: with a snapshot on disk, the first load is the snapshot (a tenth of
  a second), labelled with its date and REFRESHING_NOTE, and the live read starts in the
  background at that first call; answers say live once it lands, or say why not if it fails.
  Only with no usable snapshot does the first load wait for the live sites (and the caller
  hears its progress, if it asked: see progress.py). Later refreshes always run in the
  background while the previous corpus keeps answering.
- `preload()`, called by the transports at launch, loads that snapshot before any call asks
  for it, so the first search answers at once; it never touches the network. On stdio,
  `read_snapshot_early` starts reading the file even earlier, while the SDK is still being
  imported, and the keeper takes that read instead of reading the file again.
- With --offline the network is never contacted: the snapshot is the only source.
- Following a builder (--snapshot-url, or --offline): the snapshot is the only corpus, and no
  live rebuild runs here. `check_generation()` (on SIGHUP, and started by a call at most every
  snapshot_poll_seconds) reads the file again when its size, time or inode changed, or the URL
  when it answers other than 304 to a conditional GET; a checked snapshot of another generation
  replaces the one answering in one assignment (its corpus and its saved pages together), and one
  that cannot be read or fails its checksum is counted and logged while the previous generation
  keeps answering.
- Whoever needs to know that a new corpus replaced the old one (resources.py, to announce
  a changed resource list) registers a watcher with `watch`; it is called with the old and
  the new corpus after each replacement, and a watcher that fails is logged, never fatal.
- Building the corpus and its index is CPU work (about a second or two), so it runs in a
  worker thread, off the event loop (a daemon thread for the live read, so a slow site never
  holds up the process's exit).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from imqueue_mcp.docsource import Snapshot
from imqueue_mcp.docsource import assemble as source_build
from imqueue_mcp.docsource import snapshot as source_snapshot
from imqueue_mcp.ranker import Index
from imqueue_mcp.server import progress
from imqueue_mcp.server.config import Config
from imqueue_mcp.server.docs.fetch import DocUrlError, parse_doc_url
from imqueue_mcp.server.docs.follow import SnapshotFollower

if TYPE_CHECKING:
    from imqueue_mcp.docsource.examples import Example
    from imqueue_mcp.docsource.feeds import CuratedLink

logger = logging.getLogger(__name__)

RETRY_SECONDS = 300.0
FIRST_LOAD_WAIT_SECONDS = 10.0  # a call waits this long for a followed snapshot's first generation
REFRESHING_NOTE = (
    "a refresh from the live sites is under way in the background; until it lands, this snapshot answers"
)


class CorpusUnavailable(Exception):
    """No corpus could be loaded; the message says what failed and how to build a snapshot."""

    # what the caller should do, when it is not the general advice (errors.ACTIONS): a client of a
    # server still starting comes back; it cannot build the operator's snapshot
    action: str = ""


class CorpusNotReady(CorpusUnavailable):
    """Following a builder's snapshot, the first generation is still arriving: come back soon."""

    action = "Call again in a few seconds: the server is still starting (its /readyz says when it is ready)."


@dataclass(frozen=True)
class LoadedCorpus:
    index: Index
    source: str  # "live" | "snapshot"
    fetched_at: str  # when the feeds were read (ISO 8601), from the snapshot header
    location: str  # origins read, or the snapshot file
    loaded_at: float  # time.monotonic() when it was loaded here
    note: str = ""  # why an older corpus is answering, if it is
    links: tuple[CuratedLink, ...] = ()  # both sites' /llms.txt links, one per URL, sorted by URL
    examples: tuple[Example, ...] | None = None  # the docs' code blocks; None: a snapshot without them
    status: dict[str, Any] | None = None  # status.json as read with the feeds (docs/package_facts.py)
    generation: str = ""  # a content hash of what answers (source_snapshot.generation_of)
    pages_raw: bytes | None = (
        None  # the snapshot's saved pages, checked, not yet decoded (docs/saved_pages.py)
    )
    markdown: dict[str, str] = field(default_factory=dict)  # page URL -> markdown (Snapshot.page_markdown)
    sections: dict[str, dict[str, dict[str, list[int]]]] = field(
        default_factory=dict
    )  # host -> page -> ranges: get_doc's saved pages and the passages are cut at them

    @functools.cached_property
    def page_paths(self) -> dict[str, list[str]]:
        """Per site ('org', 'com'), every page path of the corpus and of its curated links, without
        the leading slash ('' is the home page), sorted: what completions offer. Made once."""
        found: dict[str, set[str]] = {"org": set(), "com": set()}
        for document in self.index.corpus.documents:
            found[document.site].add(document.path.split("#", 1)[0].lstrip("/"))
        for link in self.links:
            for host, site in (("imqueue.org", "org"), ("imqueue.com", "com")):
                if link.url.startswith(f"https://{host}/"):
                    found[site].add(link.url[len(f"https://{host}/") :].split("#", 1)[0])
        return {site: sorted(values) for site, values in found.items()}

    def holds(self, host: str, path: str) -> bool:
        """Whether the corpus has a record of the page https://host/path, or links to it."""
        return path.lstrip("/") in self.page_paths["org" if host == "imqueue.org" else "com"]

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
        self._failure_listeners: list[Callable[[str], None]] = []
        self.refreshes = 0  # live rebuilds started: lets a test see that concurrent callers shared one
        self._current: LoadedCorpus | None = None
        self._task: asyncio.Task[None] | None = None
        self._next_attempt = 0.0
        self._live_failure = ""
        self._live_failed_at = ""  # when the last live refresh failed (UTC), for the notes
        self._snapshot_failure = ""
        self._follower = SnapshotFollower(config, self.snapshot_path)
        self._checking: asyncio.Task[bool] | None = None
        self._next_check = 0.0

    def watch(self, watcher: CorpusWatcher) -> None:
        """Call `watcher(old, new)` each time a newly loaded corpus replaces the one answering."""
        self._watchers.append(watcher)

    def on_failure(self, listener: Callable[[str], None]) -> None:
        """Call `listener(kind)` each time a load fails: "live" (the sites) or "snapshot"."""
        self._failure_listeners.append(listener)

    def answering(self) -> LoadedCorpus | None:
        """The corpus loaded now, without loading or refreshing anything."""
        return self._current

    def stop_following(self) -> None:
        """The server is going away: a followed snapshot's download in flight ends, none starts."""
        self._follower.cancel()

    def _failed(self, kind: str) -> None:
        for listener in self._failure_listeners:
            listener(kind)

    async def holds_page(self, uri: str) -> bool:
        """Whether the corpus answering has the page `uri` names (a record of it, or a link)."""
        try:
            url = parse_doc_url(uri)
            corpus = await self.current()
        except (DocUrlError, CorpusUnavailable):
            return False
        return corpus.holds(url.host, url.path)

    async def current(self) -> LoadedCorpus:
        """The corpus to rank over now; waits only when none has been loaded yet (a snapshot on
        disk is loaded first, and the live read then starts in the background)."""
        if self._current is None:
            async with progress.ticking("loading the docs corpus"):
                await self._first_load()
            if self._current is None and self.config.snapshot_url is not None:
                # the builder may be down or still publishing: it passes, and nothing the caller does
                # fixes it (why is the operator's, in the log: "no docs snapshot: ...")
                raise CorpusNotReady(
                    "Not ready: the docs snapshot this server follows has not arrived yet. Call again in "
                    "a few seconds; /readyz says when the server is ready."
                )
            if self._current is None:
                raise CorpusUnavailable(self._unavailable_message())
        if self._refresh_due():
            self._start_refresh()
        else:
            self.check_if_due()
        return self._current

    async def _first_load(self) -> None:
        """Load the first corpus, waiting for it; following a builder's snapshot, at most
        FIRST_LOAD_WAIT_SECONDS (the download goes on, the call is told to come back)."""
        if not self.config.follows_snapshot:
            await self._refresh()
            return
        try:
            await asyncio.wait_for(asyncio.shield(self._start_refresh()), FIRST_LOAD_WAIT_SECONDS)
        except TimeoutError:
            raise CorpusNotReady(
                "Not ready: the server is still loading the docs snapshot it follows (its first "
                f"generation has not arrived after {FIRST_LOAD_WAIT_SECONDS:g} s). Call again in a few "
                "seconds; /readyz says when the server is ready."
            ) from None

    async def followed_once_loaded(self) -> LoadedCorpus | None:
        """The corpus answering now; following a builder's snapshot, once its first load has run
        (waiting for it, or starting it, when none has answered yet). None when there is none.
        Never raises."""
        if self._current is None and self.config.follows_snapshot:
            try:
                await self.current()
            except CorpusUnavailable:
                pass
        return self._current

    def check_if_due(self) -> None:
        """Following a builder: start a check for a new generation in the background when the poll
        interval has passed since the last (a call answers from the generation it has; the next
        one sees the new generation). Calls drive it on stdio; hosted workers also poll on a timer."""
        poll = self.config.snapshot_poll_seconds
        if self.config.follows_snapshot and poll > 0 and time.monotonic() >= self._next_check:
            self._next_check = time.monotonic() + poll
            self._start_check()

    async def check_generation(self) -> bool:
        """Following a builder: load its snapshot again if a new generation was published (see the
        module's docstring); True when another generation now answers. One check at a time:
        concurrent callers share the running one."""
        if not self.config.follows_snapshot:
            return False
        return await asyncio.shield(self._start_check())

    def _start_check(self) -> asyncio.Task[bool]:
        if self._checking is None or self._checking.done():
            self._checking = asyncio.get_running_loop().create_task(self._check())
        return self._checking

    async def _check(self) -> bool:
        await self.settled()  # never race the first load
        try:
            loaded = await asyncio.to_thread(self._follow)
        except Exception as error:
            self._snapshot_failure = str(error) or type(error).__name__
            self._failed("snapshot")
            answering = "the previous one answers" if self._current is not None else "none answers yet"
            logger.warning("a new docs snapshot could not be loaded, %s: %s", answering, error)
            return False
        previous = self._current
        if loaded is None or (previous is not None and loaded.generation == previous.generation):
            return False
        if previous is not None and previous.source == "snapshot" and loaded.fetched_at < previous.fetched_at:
            # A publisher rolled back, or another builder's older file landed: not adopted.
            self._snapshot_failure = f"generation {loaded.generation} was read before the one answering"
            self._failed("snapshot")
            logger.warning(
                "docs snapshot generation %s (feeds read %s) is older than generation %s (read %s): "
                "refused, the newer one answers",
                loaded.generation,
                loaded.fetched_at,
                previous.generation,
                previous.fetched_at,
            )
            return False
        self._current = loaded
        logger.warning(
            "docs snapshot generation %s now answers (from %s)", loaded.generation, loaded.location
        )
        await self._notify(previous)
        return True

    def _follow(self) -> LoadedCorpus | None:
        """The followed snapshot, loaded, when it changed since the last read; else None."""
        early = (
            _take_early_read(self.config, self.snapshot_path()) if self.config.snapshot_url is None else None
        )
        if early is not None:  # stdio's read at launch, made while the SDK was importing
            self._follower.adopt(self.snapshot_path())
            return self._loaded_snapshot(early[0], self._follower.location, early[1])
        snapshot = self._follower.read_if_changed()
        return None if snapshot is None else self._loaded_snapshot(snapshot, self._follower.location)

    async def preload(self) -> None:
        """Load the snapshot on disk, if there is one and nothing is loaded yet, so that the first
        call answers from memory. Never reads the network itself and never raises."""
        if self._current is None and await asyncio.to_thread(self._snapshot_on_disk):
            await self._refresh()

    async def settled(self) -> LoadedCorpus | None:
        """The corpus answering once the load or refresh running now, if any, has finished."""
        if self._task is not None and not self._task.done():
            await asyncio.shield(self._task)
        return self._current

    async def refresh(self) -> LoadedCorpus | None:
        """Try the live sites now, whatever the schedule says; the corpus answering afterwards."""
        if not self.config.offline and (self._task is None or self._task.done()):
            self._next_attempt = 0.0
        async with progress.ticking("refreshing the docs corpus"):
            await self._refresh()
            if self._refresh_due() and self._current is not None and self._current.note == REFRESHING_NOTE:
                await self._refresh()  # that load was the snapshot ahead of the live sites: now read them
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
            await self._notify(previous)

    async def _notify(self, previous: LoadedCorpus | None) -> None:
        assert self._current is not None
        for watcher in list(self._watchers):
            try:
                await watcher(previous, self._current)
            except Exception:  # a watcher must not cost the corpus
                logger.exception("a corpus watcher failed")

    async def _replace(self) -> None:
        if self.config.follows_snapshot:
            if self._current is None:
                try:
                    self._current = await asyncio.to_thread(self._follow)
                except Exception as error:
                    self._snapshot_failure = str(error) or type(error).__name__
                    self._failed("snapshot")
                    logger.warning("no docs snapshot: %s", self._snapshot_failure)
            return
        snapshot_tried = False
        if (
            self._current is None
            and not self.config.offline
            and await asyncio.to_thread(self._snapshot_on_disk)
        ):
            snapshot_tried = True
            try:
                self._current = replace(await asyncio.to_thread(self._load_snapshot), note=REFRESHING_NOTE)
                return  # the first caller answers from it; the live read follows in the background
            except Exception as error:  # unusable: wait for the live sites instead, as with none
                self._snapshot_failure = str(error) or type(error).__name__
                self._failed("snapshot")
                logger.warning("the docs snapshot could not be loaded: %s", self._snapshot_failure)
        if not self.config.offline and time.monotonic() >= self._next_attempt:
            self.refreshes += 1
            try:
                self._current = await _in_daemon_thread(self._build_live)
                self._next_attempt = time.monotonic() + self.refresh_seconds
                self._live_failure = ""
                return
            except Exception as error:  # any failure keeps the previous corpus
                self._next_attempt = time.monotonic() + self.retry_seconds
                self._live_failure = str(error) or type(error).__name__
                self._live_failed_at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
                self._failed("live")
                logger.warning("live docs refresh failed: %s", self._live_failure)
                if self._current is not None:
                    current = self._current
                    self._current = _with_note(
                        current, self._stale_note(current.generation, current.fetched_at)
                    )
        if self._current is None and not snapshot_tried:
            try:
                self._current = await asyncio.to_thread(self._load_snapshot)
            except Exception as error:
                self._snapshot_failure = str(error) or type(error).__name__
                self._failed("snapshot")
                logger.warning("no docs snapshot: %s", self._snapshot_failure)

    def _build_live(self) -> LoadedCorpus:
        # Package facts are read from /status.json at call time; a missing one must not cost the corpus.
        snapshot = source_build.build(
            origins=self.config.origin_overrides or None, optional=frozenset({"/status.json"})
        )
        if snapshot.refused:  # records naming a path off the site: not indexed, worth a look
            logger.warning("%d feed records refused, e.g. %s", len(snapshot.refused), snapshot.refused[0])
        origins = ", ".join(self.config.origins.values())
        return LoadedCorpus(
            _warmed(snapshot.index()),
            "live",
            snapshot.fetched_at,
            origins,
            time.monotonic(),
            links=tuple(snapshot.links),
            examples=_examples(snapshot.examples),
            status=snapshot.status,
            generation=source_snapshot.generation_of(snapshot.header),
            markdown=snapshot.markdown,
            sections=snapshot.sections,
        )

    def _load_snapshot(self) -> LoadedCorpus:
        path = self.snapshot_path()
        early = _take_early_read(self.config, path)
        if early is not None:
            return self._loaded_snapshot(early[0], str(path), early[1])
        if not path.is_file():
            raise FileNotFoundError(f"there is no snapshot file at {path}")
        return self._loaded_snapshot(source_snapshot.load_snapshot(path), str(path))

    def _loaded_snapshot(self, snapshot: Snapshot, location: str, index: Index | None = None) -> LoadedCorpus:
        """`index`: the snapshot's, made and warmed already (the early read's)."""
        note = "" if self.config.follows_snapshot else self._stale_note()
        # snapshot.index() is a ranker.Index over snapshot.corpus, reusing the stored postings
        return LoadedCorpus(
            _warmed(snapshot.index()) if index is None else index,
            "snapshot",
            snapshot.fetched_at,
            location,
            time.monotonic(),
            note,
            tuple(snapshot.links),
            _examples(snapshot.examples),
            snapshot.status,
            source_snapshot.generation_of(snapshot.header),
            snapshot.pages_raw,
            snapshot.page_markdown(location),  # each page stored once: the body's, or the saved pages'
            snapshot.sections,
        )

    def _snapshot_on_disk(self) -> bool:
        return self.config.snapshot_url is not None or self.snapshot_path().is_file()

    def snapshot_path(self) -> Path:
        if self.config.snapshot is not None:
            return self.config.snapshot
        return Path(source_snapshot.default_snapshot_path())

    def _stale_note(self, generation: str = "", fetched_at: str = "") -> str:
        """What is true now after a failed live refresh: when it failed and why, and what answers."""
        answering = f"generation {generation} (feeds read {fetched_at})" if generation else "an older corpus"
        return (
            f"the live sites could not be read ({self._live_failure}) at the last refresh, "
            f"{self._live_failed_at}; {answering} answers until a refresh succeeds"
        )

    def _unavailable_message(self) -> str:
        why = (
            f"the server follows the snapshot at {self.config.snapshot_url}"
            if self.config.snapshot_url is not None
            else "the server runs with --offline"
            if self.config.offline
            else f"the live sites could not be read ({self._live_failure})"
        )
        return (
            f"No docs corpus is available: {why}, and no snapshot could be loaded "
            f"({self._snapshot_failure}). Build one with `imq-build-index` "
            f"(it writes {self.snapshot_path()}), or `imq-build-index --from DIR --out PATH` and start the "
            "server with --snapshot PATH; then call search_docs again."
        )


def _examples(examples: list[Example] | None) -> tuple[Example, ...] | None:
    return tuple(examples) if examples is not None else None


async def _in_daemon_thread(work: Callable[[], LoadedCorpus]) -> LoadedCorpus:
    """`await asyncio.to_thread(work)`, but on a daemon thread: a live read still in flight (up to
    the fetch timeout per feed) must not hold up the process's exit, as the default executor's
    threads do (the event loop joins them when it closes)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[LoadedCorpus] = loop.create_future()
    context = contextvars.copy_context()

    def deliver(outcome: Callable[[], None]) -> None:
        try:
            loop.call_soon_threadsafe(lambda: None if done.cancelled() else outcome())
        except RuntimeError:  # the loop has closed: nobody is waiting any more
            pass

    def run() -> None:
        try:
            result = context.run(work)
        except BaseException as error:  # handed to the awaiting task, as to_thread would
            deliver(functools.partial(done.set_exception, error))
        else:
            deliver(functools.partial(done.set_result, result))

    threading.Thread(target=run, name="docs-live-read", daemon=True).start()
    return await done


EarlyRead = tuple[Path, "Snapshot | None", "Index | None"]  # the path, its snapshot and warmed index
_early_read: tuple[Config, concurrent.futures.Future[EarlyRead]] | None = None


def read_snapshot_early(config: Config) -> concurrent.futures.Future[EarlyRead]:
    """Start reading the snapshot file now, in a daemon thread, while the server is still importing
    and starting, and make its index ready to search (_warmed); the first keeper of `config` to
    load the snapshot takes this read instead of reading the file again (or meets its error).
    Called once, by the stdio launch."""
    global _early_read
    read: concurrent.futures.Future[EarlyRead] = concurrent.futures.Future()

    def run() -> None:
        try:
            path = config.snapshot or Path(source_snapshot.default_snapshot_path())
            snapshot = source_snapshot.load_snapshot(path) if path.is_file() else None
            read.set_result((path, snapshot, None if snapshot is None else _warmed(snapshot.index())))
        except BaseException as error:  # handed to the keeper, which words it
            read.set_exception(error)

    _early_read = (config, read)
    threading.Thread(target=run, name="snapshot-early-read", daemon=True).start()
    return read  # done when the file has been read: its path, and the snapshot and index or None


def _take_early_read(config: Config, path: Path) -> tuple[Snapshot, Index] | None:
    """The snapshot read_snapshot_early read for this config and path, and its index, once; None
    if there is none."""
    global _early_read
    if _early_read is None or _early_read[0] is not config:
        return None
    read = _early_read[1]
    _early_read = None
    read_path, snapshot, index = read.result()
    return (snapshot, index) if read_path == path and snapshot is not None and index is not None else None


def _warmed(index: Index) -> Index:
    """The index with what its first search would make made now, in the loading thread (numpy's
    import, the per-record tables: 100-200 ms on a cold process), not in the first call's answer."""
    index.warm()
    return index


def _with_note(corpus: LoadedCorpus, note: str) -> LoadedCorpus:
    return replace(corpus, note=note)

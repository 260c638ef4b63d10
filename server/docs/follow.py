"""Following the snapshot one builder publishes: read it again only when it changed.

    SnapshotFollower.read_if_changed()   the snapshot (checked) when the file or URL changed since
                                         the last read, else None; SnapshotError when it cannot
                                         be read or fails its checksum (the caller keeps the
                                         generation it has)

A file: its size, modification time and inode are compared with the last read's; a builder
replaces the file by rename, so a changed file is a whole new one. A URL (--snapshot-url):
a conditional GET with If-None-Match when the last answer had an ETag; 304, or a body whose
sha256 is the last one's, changes nothing. Last-Modified is not used: a file replaced twice
within its one-second resolution would look unchanged. Runs in a worker thread (blocking I/O).

The download's limits (docs/hosted.md): the body is at most MAX_SNAPSHOT_BYTES (a larger
Content-Length is refused before reading), each read waits at most READ_TIMEOUT_SECONDS, and the
whole download at most the configured deadline (IMQUEUE_MCP_SNAPSHOT_DEADLINE_SECONDS, 60 s by
default), so a publisher that trickles cannot hold the old generation forever; `cancel()` (the
drain, on SIGTERM) ends a download in flight at its next chunk. A redirect is not followed: the
URL names the snapshot, and an answer from another origin is refused with the place it pointed to.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from imqueue_mcp.docsource import Snapshot, SnapshotError
from imqueue_mcp.docsource import snapshot as source_snapshot
from imqueue_mcp.docsource.sites import user_agent
from imqueue_mcp.docsource.snapshot import decode
from imqueue_mcp.server.config import Config

MAX_SNAPSHOT_BYTES = 256 * 2**20  # today's snapshot with pages is about 7 MB
READ_TIMEOUT_SECONDS = 15.0  # one read of the body, and the connection
FIX_URL = "check that the builder published it whole at that URL (imq-build-index --out, then serve the file)"


class SnapshotFollower:
    def __init__(self, config: Config, snapshot_path: Callable[[], Path]):
        self.url = config.snapshot_url
        self.snapshot_path = snapshot_path
        self._seen: tuple[object, ...] | None = None  # the last read's file signature, or (ETag,)
        self._digest = ""  # sha256 of the last body read from the URL
        self._cancelled = threading.Event()
        self.deadline_seconds = config.snapshot_deadline_seconds

    def cancel(self) -> None:
        """End a download in flight (at its next chunk), and refuse any later one: the server is
        going away."""
        self._cancelled.set()

    @property
    def location(self) -> str:
        return self.url if self.url is not None else str(self.snapshot_path())

    def read_if_changed(self) -> Snapshot | None:
        return self._from_url(self.url) if self.url is not None else self._from_file(self.snapshot_path())

    def adopt(self, path: Path) -> None:
        """The file was read elsewhere (stdio's early read): take it as the last read."""
        self._seen = _signature(path)

    def _from_file(self, path: Path) -> Snapshot | None:
        signature = _signature(path)
        if signature == self._seen:
            return None
        snapshot = source_snapshot.load_snapshot(path)
        self._seen = signature
        return snapshot

    def _from_url(self, url: str) -> Snapshot | None:
        import httpx

        headers = {"User-Agent": user_agent()}
        if self._seen is not None and self._seen[0]:
            headers["If-None-Match"] = str(self._seen[0])
        if self._cancelled.is_set():
            raise SnapshotError(f"{url}: not read, the server is shutting down")
        try:
            with (
                httpx.Client(timeout=READ_TIMEOUT_SECONDS, follow_redirects=False) as client,
                client.stream("GET", url, headers=headers) as response,
            ):
                if response.status_code == 304:
                    return None
                _check_answer(url, response.status_code, response.headers)
                raw = self._body(url, response.iter_bytes())
                validators = (response.headers.get("etag", ""),)
        except httpx.HTTPError as error:
            reason = str(error) or type(error).__name__
            raise SnapshotError(f"{url}: cannot be read ({reason}); {FIX_URL}") from None
        digest = hashlib.sha256(raw).hexdigest()
        if digest == self._digest:
            self._seen = validators
            return None
        snapshot = decode(url, bytes(raw), FIX_URL)  # checks format and checksums
        self._seen, self._digest = validators, digest
        return snapshot

    def _body(self, url: str, chunks: Iterator[bytes]) -> bytearray:
        """The body, within the size cap and the download's deadline, unless cancelled."""
        deadline = time.monotonic() + self.deadline_seconds
        raw = bytearray()
        for chunk in chunks:
            raw += chunk
            if len(raw) > MAX_SNAPSHOT_BYTES:
                raise SnapshotError(
                    f"{url}: larger than {MAX_SNAPSHOT_BYTES // 2**20} MB, not a snapshot; {FIX_URL}"
                )
            if self._cancelled.is_set():
                raise SnapshotError(f"{url}: download cancelled, the server is shutting down")
            if time.monotonic() > deadline:
                raise SnapshotError(
                    f"{url}: the download took longer than {self.deadline_seconds:g} s "
                    f"({len(raw)} bytes had arrived); {FIX_URL}"
                )
        return raw


def _check_answer(url: str, status: int, headers: Mapping[str, str]) -> None:
    """SnapshotError unless a 200 whose announced size is within the cap; a redirect names where
    it pointed (logged by the caller, never followed)."""
    if 300 <= status < 400:
        target = headers.get("location", "")
        raise SnapshotError(
            f"{url}: the server redirected (HTTP {status}) to {target!r}, which is not followed; "
            "give --snapshot-url the snapshot's own URL"
        )
    if status != 200:
        raise SnapshotError(f"{url}: the server answered HTTP {status}; {FIX_URL}")
    length = headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_SNAPSHOT_BYTES:
        raise SnapshotError(
            f"{url}: announces {length} bytes, over {MAX_SNAPSHOT_BYTES // 2**20} MB; {FIX_URL}"
        )


def _signature(path: Path) -> tuple[int, int, int]:
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"there is no snapshot file at {path}") from None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

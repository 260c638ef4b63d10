"""Following the snapshot one builder publishes: read it again only when it changed.

    SnapshotFollower.read_if_changed()   the snapshot (checked) when the file or URL changed since
                                         the last read, else None; SnapshotError when it cannot
                                         be read or fails its checksum (the caller keeps the
                                         generation it has)

A file: its size, modification time and inode are compared with the last read's; a builder
replaces the file by rename, so a changed file is a whole new one. A URL (--snapshot-url):
a conditional GET with If-None-Match when the last answer had an ETag; 304, or a body whose
sha256 is the last one's, changes nothing. Last-Modified is not used: a file replaced twice
within its one-second resolution would look unchanged. The body is bounded
(MAX_SNAPSHOT_BYTES), each read waits at most FETCH_TIMEOUT_SECONDS. Runs in a worker thread (blocking I/O).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from imqueue_mcp import docsource
from imqueue_mcp.docsource import Snapshot, SnapshotError
from imqueue_mcp.docsource.sites import user_agent
from imqueue_mcp.docsource.snapshot import decode
from imqueue_mcp.server.config import Config

MAX_SNAPSHOT_BYTES = 256 * 2**20  # today's snapshot with pages is about 7 MB
FETCH_TIMEOUT_SECONDS = 60.0
FIX_URL = "check that the builder published it whole at that URL (imq-build-index --out, then serve the file)"


class SnapshotFollower:
    def __init__(self, config: Config, snapshot_path: Callable[[], Path]):
        self.url = config.snapshot_url
        self.snapshot_path = snapshot_path
        self._seen: tuple[object, ...] | None = None  # the last read's file signature, or (ETag,)
        self._digest = ""  # sha256 of the last body read from the URL

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
        snapshot = docsource.load_snapshot(path)
        self._seen = signature
        return snapshot

    def _from_url(self, url: str) -> Snapshot | None:
        import httpx

        headers = {"User-Agent": user_agent()}
        if self._seen is not None and self._seen[0]:
            headers["If-None-Match"] = str(self._seen[0])
        try:
            with (
                httpx.Client(timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=True) as client,
                client.stream("GET", url, headers=headers) as response,
            ):
                if response.status_code == 304:
                    return None
                if response.status_code != 200:
                    raise SnapshotError(f"{url}: the server answered HTTP {response.status_code}; {FIX_URL}")
                raw = bytearray()
                for chunk in response.iter_bytes():
                    raw += chunk
                    if len(raw) > MAX_SNAPSHOT_BYTES:
                        raise SnapshotError(
                            f"{url}: larger than {MAX_SNAPSHOT_BYTES // 2**20} MB, not a snapshot; {FIX_URL}"
                        )
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


def _signature(path: Path) -> tuple[int, int, int]:
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise FileNotFoundError(f"there is no snapshot file at {path}") from None
    return (stat.st_ino, stat.st_mtime_ns, stat.st_size)

"""The file format the snapshot and its pages sidecar share: a checked envelope, written atomically.

wrap(header, body, version)     msgpack {header, body}, the header stamped with the format and
                                the body's sha256; `pages` (the snapshot's saved pages, an envelope
                                of their own) rides along as {.., pages}, its sha256 in the header,
                                so one file and one rename carry both: one generation
unwrap(path, raw, version, ..)  that envelope checked: SnapshotError names the file and the fix;
                                Envelope(header, body, pages or None)
write_atomically(path, data)    temp file in the same folder + fsync + rename: a crash leaves
                                the old file whole; temp files of dead writers are removed
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

import msgpack  # type: ignore[import-untyped]

from .sources import BuildError

TEMP_PREFIX = ".snapshot-"  # + writer pid + "-" + random + ".tmp"


class SnapshotError(BuildError):
    pass


class Envelope(NamedTuple):
    header: dict[str, Any]
    body: bytes
    pages: bytes | None  # the pages envelope carried in the same file, checked; None if there is none


def wrap(header: dict[str, Any], body: bytes, version: int, pages: bytes | None = None) -> bytes:
    """The file: msgpack `{header, body}` (+ `pages`), the header stamped with the format and the
    sha256 of the body (and of the pages)."""
    header = {key: value for key, value in header.items() if key != "pages_sha256"}  # a loaded one's
    header |= {"format": version, "body_sha256": hashlib.sha256(body).hexdigest()}
    outer: dict[str, Any] = {"header": header, "body": body}
    if pages is not None:
        header["pages_sha256"] = hashlib.sha256(pages).hexdigest()
        outer["pages"] = pages
    return bytes(msgpack.packb(outer, use_bin_type=True))


def unwrap(path: Path | str, raw: bytes, version: int, kind: str, fix: str) -> Envelope:
    """`wrap` undone and checked: header, body and pages, else SnapshotError naming `kind`."""
    try:
        outer = msgpack.unpackb(raw, raw=False)
        header, body, pages = outer["header"], outer["body"], outer.get("pages")
        if not isinstance(header, dict) or not isinstance(body, bytes):
            raise TypeError("not a {header, body} envelope")
    except Exception:
        raise SnapshotError(f"{path}: not an imqueue-mcp {kind} (unreadable msgpack); {fix}") from None
    if header.get("format") != version:
        raise SnapshotError(
            f"{path}: {kind} format {header.get('format')!r}, this version reads {version}; {fix}"
        )
    if hashlib.sha256(body).hexdigest() != header.get("body_sha256"):
        raise SnapshotError(f"{path}: checksum mismatch (the file is damaged); {fix}")
    if (pages is None) != (header.get("pages_sha256") is None) or (
        pages is not None and hashlib.sha256(pages).hexdigest() != header.get("pages_sha256")
    ):
        raise SnapshotError(f"{path}: checksum mismatch in its saved pages (the file is damaged); {fix}")
    return Envelope(header, body, pages if isinstance(pages, bytes) else None)


def write_atomically(path: Path, data: bytes) -> int:
    """`data` to `path` via a temp file in the same folder + fsync + rename; its size."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_abandoned_temp_files(path.parent)
        fd, temp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", suffix=".tmp", dir=path.parent)
    except OSError as error:
        raise SnapshotError(
            f"{path}: cannot write there ({error.strerror}); pass --out with a writable path"
        ) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return len(data)


def remove_abandoned_temp_files(folder: Path) -> None:
    """Temp files of writers that died mid-write (killed, or the machine went down): each name
    carries its writer's pid, and one whose writer is gone is deleted; a live writer's is kept."""
    for temp in folder.glob(f"{TEMP_PREFIX}*.tmp"):
        pid = temp.name[len(TEMP_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _process_exists(int(pid)):
            temp.unlink(missing_ok=True)


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True

"""Reading a file of the user's: only a regular file, never blocking, never more than a cap.

A project folder is the user's (or an agent's) to shape: its package-lock.json may be a
symlink to /dev/zero (endless bytes, and `stat` says size 0), a FIFO (opening it for reading
waits for a writer for ever), or a 2 GB file. So a file is opened without blocking
(O_NONBLOCK, which a FIFO with no writer honours), judged by `fstat` on what was opened (no
race with a rename between a check and the open), refused unless it is a regular file, and
read in chunks that stop one byte past the cap: the cap is enforced while reading, never
trusted from `stat`. Callers run it off the event loop (asyncio.to_thread) like any disk read.

    read_capped(path, limit)        the bytes; raises FileNotFoundError, NotARegularFile,
                                    FileTooLarge (both OSError, so existing handlers hold)
    read_text_capped(path, limit)   the same, decoded (utf-8-sig by default: a BOM is dropped)
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

CHUNK_BYTES = 64 * 1024
MANIFEST_BYTES = 8 * 1024 * 1024  # a package.json, a lockfile, a tsconfig, a source file


class NotARegularFile(OSError):
    """The path names a device, a FIFO, a socket or a folder: it is not read."""


class FileTooLarge(OSError):
    """The file holds more than the cap: it is not read past it."""


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_capped(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path` (symlinks followed), at most `limit` of them."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(path, flags)
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise NotARegularFile(
                f"{path} is {_describe(mode)}, not a regular file, so it was not read; replace it with "
                "the file itself"
            )
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(descriptor, min(CHUNK_BYTES, limit + 1 - total))
            if not chunk:
                return b"".join(chunks)
            total += len(chunk)
            if total > limit:
                raise FileTooLarge(f"{path} is over {limit:,} bytes, more than this server reads; not read")
            chunks.append(chunk)
    finally:
        os.close(descriptor)


def read_text_capped(path: Path, limit: int, encoding: str = "utf-8-sig", errors: str = "strict") -> str:
    """read_capped, decoded; raises UnicodeDecodeError for bytes that are not `encoding`."""
    return read_capped(path, limit).decode(encoding, errors)

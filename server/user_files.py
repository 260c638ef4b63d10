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

Writing is the scaffold tools' (with a target folder, on the local server only): the folder must be
absolute and inside the allowed folders (target_folder), every destination a regular file or
nothing yet, never reached through a symlinked folder (plan_writes), and an existing file with
other content is replaced only with overwrite (write_planned refuses the lot otherwise), and
what it held is kept beside it as <name>.orig (<name>.orig-2 ... when that is taken): a scaffold
written again over a project whose methods an agent implemented must not lose them.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

CHUNK_BYTES = 64 * 1024
MANIFEST_BYTES = 8 * 1024 * 1024  # a package.json, a lockfile, a tsconfig, a source file
BACKUP_BYTES = 64 * 1024 * 1024  # a file an overwrite keeps: far past any source file


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


# --- writing a scaffold's files into a folder of the user's ---------------------------


class WriteRefused(ValueError):
    """Nothing was written: `args[0]` says why, `next_step` what to pass instead."""

    def __init__(self, message: str, next_step: str) -> None:
        super().__init__(message)
        self.next_step = next_step


@dataclass(frozen=True)
class Placement:
    """Where one file goes and what writing it does: create, overwrite, unchanged or conflict
    (exists with other content, and overwrite was not given)."""

    path: str  # relative to the target folder, as the scaffold names it
    absolute: Path
    action: str
    bytes: int
    backup: Path | None = None  # an overwrite: where the file's old content is kept

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "absolute": str(self.absolute),
            "action": self.action,
            "bytes": self.bytes,
        }
        if self.backup is not None:
            data["backup"] = str(self.backup)
        return data


def within(path: Path, folders: Sequence[Path]) -> bool:
    """Whether `path` (resolved, symlinks followed) lies in one of `folders` (resolved too); a
    symlink loop on the way leads nowhere, so it is not."""
    try:
        resolved = path.resolve()
        return any(resolved.is_relative_to(folder.resolve()) for folder in folders)
    except RuntimeError:  # "Symlink loop from ...": Python 3.11's resolve() raises it
        return False


def target_folder(path: str, allowed: Sequence[Path], what: str = "path") -> Path:
    """`path` as the folder to write into, once it is absolute and inside `allowed`."""
    names = ", ".join(str(each) for each in allowed)
    if "\x00" in path:
        raise WriteRefused(
            f"{what} holds a NUL character; nothing was written.", f"Pass a folder inside {names}."
        )
    folder = Path(path).expanduser()
    if not folder.is_absolute():
        raise WriteRefused(
            f"{what} {path!r} is not an absolute path; nothing was written.",
            f"Pass the folder's absolute path, inside {names}.",
        )
    if not within(folder, allowed):
        raise WriteRefused(
            f"{what} {path!r} is outside the folders this server may write in ({names}: the client's "
            "roots, else the server's working directory); nothing was written.",
            f"Pass a folder inside {names}, or add the folder to the client's roots.",
        )
    if folder.exists() and not folder.is_dir():
        raise WriteRefused(f"{what} {path!r} is not a folder; nothing was written.", "Pass a folder.")
    return folder.resolve()


def plan_writes(folder: Path, files: Sequence[Mapping[str, str]], overwrite: bool) -> list[Placement]:
    """What writing `files` ({path, content}) into `folder` would do, file by file; refuses a
    destination that is not a regular file, or that a symlinked folder would take elsewhere."""
    out: list[Placement] = []
    for file in files:
        relative = PurePosixPath(file["path"])
        if relative.is_absolute() or ".." in relative.parts:
            raise WriteRefused(f"{file['path']!r} is not a path inside the folder.", "Report this defect.")
        destination = folder.joinpath(*relative.parts)
        if not within(destination.parent, [folder]):
            raise WriteRefused(
                f"{destination.parent} leads outside {folder} through a symbolic link; nothing was written.",
                "Remove the link, or pass another folder.",
            )
        data = file["content"].encode()
        action = _action(destination, data, overwrite)
        backup = backup_path(destination) if action == "overwrite" else None
        out.append(Placement(file["path"], destination, action, len(data), backup))
    return out


def backup_path(destination: Path) -> Path:
    """Where an overwritten file's old content goes: <name>.orig beside it, else the first free
    <name>.orig-N (an earlier backup is never replaced)."""
    candidate = destination.with_name(f"{destination.name}.orig")
    number = 2
    while candidate.exists() or candidate.is_symlink():
        candidate = destination.with_name(f"{destination.name}.orig-{number}")
        number += 1
    return candidate


def _action(destination: Path, data: bytes, overwrite: bool) -> str:
    try:
        mode = destination.lstat().st_mode
    except FileNotFoundError:
        return "create"
    if not stat.S_ISREG(mode):
        kind = "a symbolic link" if stat.S_ISLNK(mode) else _describe(mode)
        raise WriteRefused(
            f"{destination} is {kind}, not a file; nothing was written.", "Remove it, or pass another folder."
        )
    try:
        same = read_capped(destination, len(data)) == data
    except FileTooLarge:
        same = False
    if same:
        return "unchanged"
    return "overwrite" if overwrite else "conflict"


def write_planned(plan: Sequence[Placement], files: Sequence[Mapping[str, str]]) -> None:
    """Write what `plan` says, all or nothing as far as checks go: any conflict refuses the lot.
    Each file is written beside its destination and renamed over it, so none is left half-written."""
    conflicts = [each for each in plan if each.action == "conflict"]
    if conflicts:
        raise WriteRefused(
            f"{len(conflicts)} file(s) exist with other content: "
            + ", ".join(str(each.absolute) for each in conflicts)
            + "; nothing was written.",
            "Call again with overwrite: true to replace them (each keeps its old content beside it as "
            "<name>.orig), or pass another folder. To add methods to a service whose methods you "
            "have written, copy the new methods from this reply's files into your class instead.",
        )
    contents = {file["path"]: file["content"].encode() for file in files}
    for each in plan:
        if each.action == "unchanged":
            continue
        each.absolute.parent.mkdir(parents=True, exist_ok=True)
        if each.backup is not None:  # the old content first, under its own name, never half-copied
            _write_new(each.backup, read_capped(each.absolute, BACKUP_BYTES))
        _write_new(each.absolute, contents[each.path])


def _write_new(destination: Path, data: bytes) -> None:
    """`data` at `destination`, written beside it and renamed over it: never left half-written."""
    temporary = destination.with_name(f".{destination.name}.{secrets.token_hex(6)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(temporary, flags, 0o644)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, destination)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise

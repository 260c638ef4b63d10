"""The folder a scaffold is written into: its names checked before anything is planned, and the
reply's words for it (server/mcp/scaffold_writes.py places the files; server/user_files.py plans
and writes them): what was written where, or in a dry run what a write would do. Pure.

    NAME_MAX, overlong_folder_name   the longest name one folder may have, and which name of a
                                     path is longer (the imq bridge's path check shares them)
    refuse_unplaceable(path)         ScaffoldError when a scaffold's folder has such a name
    placement_failed(path, error, dry) what a failed look at (or write into) the folder says
    render_placement(written)        the reply's opening
"""

from __future__ import annotations

from typing import Any

from imqueue_mcp.server.scaffold.types import ScaffoldError

# POSIX NAME_MAX, the bytes one name in a path may have on Linux's file systems (ext4, xfs, btrfs,
# tmpfs): past it every call on the path fails with ENAMETOOLONG, a dry run's look included.
NAME_MAX = 255
SHOWN_CHARACTERS = 40  # of an over-long name, enough to tell which one it is

ACTIONS = {
    "create": ("created", "would be created"),
    "overwrite": ("overwritten", "would be overwritten"),
    "unchanged": ("unchanged (same content)", "unchanged (same content)"),
    "conflict": (
        "exists with other content",
        "exists with other content: pass overwrite: true to replace it (its content kept as <name>.orig)",
    ),
}


def overlong_folder_name(path: str) -> str | None:
    """Which name of `path` is over NAME_MAX bytes, named and measured as the rest of a sentence
    ("folder name 'aaa...' is 300 bytes, ..."); None when every name fits."""
    for name in path.split("/"):
        size = len(name.encode("utf-8", errors="surrogatepass"))
        if size > NAME_MAX:
            shown = name if len(name) <= SHOWN_CHARACTERS else f"{name[:SHOWN_CHARACTERS]}..."
            return (
                f"folder name {shown!r} is {size:,} bytes, over the {NAME_MAX} a file system takes "
                "for one name (NAME_MAX)"
            )
    return None


def refuse_unplaceable(path: str | None) -> None:
    """Raises ScaffoldError when the folder `path` cannot exist, before anything is planned: a dry
    run would otherwise fail on its first look at the disk as a write does."""
    reason = overlong_folder_name(path) if path is not None else None
    if reason:
        raise ScaffoldError(
            f"path's {reason}: no folder can be made there, so nothing was written. Shorten that "
            f"folder name to {NAME_MAX} bytes or fewer, or pass another path."
        )


def placement_failed(path: str, error: OSError, dry_run: bool) -> tuple[str, str]:
    """The message and next step when the disk refused the plan or the write: a dry run only
    looked, so nothing was written and space is not what failed."""
    reason = error.strerror or str(error)
    if dry_run:
        return (
            f"Looking at {path} for a dry run failed: {reason}; nothing was written.",
            "Check that the folder and its parents can be read (and the path is not too long), then "
            "call again.",
        )
    return (
        f"Writing into {path} failed: {reason}; files written before it stay.",
        "Check the folder's permissions and free space, then call again.",
    )


def render_placement(written: dict[str, Any]) -> str:
    """The reply's opening: what was written where, or what a write would do."""
    dry = written["dryRun"]
    lines = [
        f"Dry run: nothing was written to {written['path']}. Call again with dry_run: false to write:"
        if dry
        else f"Written to {written['path']}:"
    ]
    for each in written["files"]:
        line = f"- {each['path']} ({each['bytes']} bytes): {ACTIONS[each['action']][1 if dry else 0]}"
        if each.get("backup"):
            kept = each["backup"].rsplit("/", 1)[-1]
            line += f" ({'what it holds would be' if dry else 'what it held is'} kept as {kept})"
        lines.append(line)
    return "\n".join(lines)

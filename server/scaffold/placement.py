"""The reply's words for a scaffold written into a folder (server/mcp/scaffold_writes.py places the
files; server/user_files.py plans and writes them): what was written where, or in a dry run what
a write would do. Pure."""

from __future__ import annotations

from typing import Any

ACTIONS = {
    "create": ("created", "would be created"),
    "overwrite": ("overwritten", "would be overwritten"),
    "unchanged": ("unchanged (same content)", "unchanged (same content)"),
    "conflict": (
        "exists with other content",
        "exists with other content: pass overwrite: true to replace it",
    ),
}


def render_placement(written: dict[str, Any]) -> str:
    """The reply's opening: what was written where, or what a write would do."""
    dry = written["dryRun"]
    lines = [
        f"Dry run: nothing was written to {written['path']}. Call again with dry_run: false to write:"
        if dry
        else f"Written to {written['path']}:"
    ]
    for each in written["files"]:
        lines.append(f"- {each['path']} ({each['bytes']} bytes): {ACTIONS[each['action']][1 if dry else 0]}")
    return "\n".join(lines)

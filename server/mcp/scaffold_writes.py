"""The local server's scaffold tools write their files when given a folder (issue 28 item 4).

scaffold_service and scaffold_client on the local server take `path` (the folder to write into),
`dry_run` (true by default: the reply says what would be written and changes nothing) and
`overwrite` (replace files that exist with other content; without it such a file refuses the
whole write). The folder must be absolute and inside the client's roots, or the server's working
directory when the client offers none; generate_client's output folder is held to the same.
The hosted server's records have none of these arguments: it never writes to a disk.

    allowed_folders()                the roots, else the working directory
    refuse_outside(path, what)       a guided error when `path` is not inside them, else None
    place(data, path, dry_run, ...)  plan (and unless dry_run, write) data["files"] under path;
                                     data gains `written`, or a guided error comes back
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.project import roots as project_roots
from imqueue_mcp.server.scaffold.placement import placement_failed
from imqueue_mcp.server.tool_results import error_result
from imqueue_mcp.server.user_files import WriteRefused, plan_writes, target_folder, write_planned

TargetPath = Annotated[
    str | None,
    Field(
        max_length=4096,
        description="Folder to write the files into (absolute, inside the workspace); omit to only "
        "return them",
    ),
]
DryRun = Annotated[
    bool,
    Field(
        description="With path: true (default) says what would be written and writes nothing; false writes"
    ),
]
_KEPT = "each keeps its old content beside it as <name>.orig"
Overwrite = Annotated[
    bool, Field(description=f"With path: replace files that exist with other content ({_KEPT})")
]


async def allowed_folders() -> list[Path]:
    folders, _via = await project_roots.locate()
    return folders


async def refuse_outside(path: str, what: str) -> CallToolResult | None:
    """A guided error when the folder `path` would not be inside the allowed folders."""
    try:
        await asyncio.to_thread(target_folder, path, await allowed_folders(), what)
    except WriteRefused as refused:
        return error_result(ErrorCode.ARGUMENT_REFUSED, str(refused), refused.next_step)
    return None


async def place(data: dict[str, Any], path: str, dry_run: bool, overwrite: bool) -> CallToolResult | None:
    """Plan writing data["files"] into `path` and, unless dry_run, write them; data gains `written`.
    A guided error (nothing written) when the folder or a file is refused."""
    allowed = await allowed_folders()

    def work() -> dict[str, Any]:
        folder = target_folder(path, allowed)
        plan = plan_writes(folder, data["files"], overwrite)
        if not dry_run:
            write_planned(plan, data["files"])
        return {"path": str(folder), "dryRun": dry_run, "files": [each.as_dict() for each in plan]}

    try:
        data["written"] = await asyncio.to_thread(work)
    except WriteRefused as refused:
        return error_result(ErrorCode.ARGUMENT_REFUSED, str(refused), refused.next_step)
    except OSError as error:
        return error_result(ErrorCode.ARGUMENT_REFUSED, *placement_failed(path, error, dry_run))
    return None

"""Where the user's workspace declares a service class of a given name (the local server only).

scaffold_service names a service asked for as 'Greeter' GreeterService, and scaffold_client reads
names the same way, so that 'user', 'User' and 'user-service' all mean the UserService it wrote.
imq's own template names the class after the project instead (`imq service create greeter`:
`class Greeter extends IMQService`, queue 'Greeter'). When the workspace declares a class of the
exact name given, that class is the service meant, and its name is its queue's.

    declared_service(name, folders)   the first .ts file under folders declaring
                                      `class <name> extends IMQService`, else None
    declared_in(service, folders)     the same, off the event loop, for a name the scaffolds
                                      would read as another (Greeter as GreeterService) only
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Sequence
from pathlib import Path

from imqueue_mcp.server.user_files import MANIFEST_BYTES, read_text_capped

__all__ = ["declared_in", "declared_service"]

MAX_FILES = 2000  # .ts files read across the folders
MAX_DEPTH = 5  # folders below each root: a monorepo's services/<name>/src/<file>.ts
SKIPPED = frozenset({"node_modules", "dist", "build", "coverage", ".git"})


def declared_service(name: str, folders: Sequence[Path]) -> Path | None:
    """The first TypeScript file (outside node_modules and build output) that declares `name` as a
    class extending IMQService; None when none does within the bounds."""
    if not re.fullmatch(r"[A-Za-z_$][\w$]{0,200}", name):
        return None
    declares = re.compile(rf"\bclass\s+{re.escape(name)}\s+extends\s+(?:[\w$]+\.)?IMQService\b")
    read = 0
    for root in folders:
        for where, children, files in os.walk(root):
            depth = len(Path(where).relative_to(root).parts)
            children[:] = sorted(child for child in children if child not in SKIPPED and depth < MAX_DEPTH)
            for file in sorted(files):
                if not file.endswith(".ts") or file.endswith(".d.ts"):
                    continue
                read += 1
                if read > MAX_FILES:
                    return None
                path = Path(where, file)
                try:
                    text = read_text_capped(path, MANIFEST_BYTES, errors="replace")
                except (OSError, ValueError):
                    continue
                if declares.search(text):
                    return path
    return None


async def declared_in(service: str, folders: Sequence[Path]) -> str | None:
    """The file declaring `service` itself as a service class, when the scaffolds would read the
    name as another (imq's template's 'Greeter', not GreeterService); else None."""
    if not re.fullmatch(r"[A-Z][A-Za-z0-9]{0,200}", service) or service.endswith("Service"):
        return None  # a name the scaffolds take as it is (UserService), or no class name at all
    found = await asyncio.to_thread(declared_service, service, folders)
    return str(found) if found else None

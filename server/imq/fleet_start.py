"""What `fleet start` runs in each service, read from the services' own files.

`imq ctl start` (5.2.2) runs `npm run --silent dev` in every service folder. In imq's default
template that script first deletes every compiled .js, .d.ts and .js.map outside node_modules,
then runs nodemon, which watches src/ (and index.ts, config.ts) and restarts the service on
every .ts file written there: generating a client into src/clients restarts it. An agent needs
to know that before it writes into a running service, and how to start it for production
instead (fleet's mode='production', production.py). No MCP imports; bridge.fleet appends
`describe_start` to its dev start/restart results.

    service_folders(root, names)   the service folders imq ctl would start (the sub-folders
                                   with a package.json, or the named ones)
    describe_start(root, names)    per service: its dev script, what it deletes and watches, and
                                   the production start (`npm run build && npm start`)
    ignoring_broker(root, names)   a note naming the services whose code never reads IMQ_REDIS
                                   (imq's own template: its config.ts names no broker), for a
                                   start given fleet's redis
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from imqueue_mcp.server.user_files import MANIFEST_BYTES, read_text_capped

__all__ = ["PRODUCTION_START", "describe_start", "ignoring_broker", "service_folders"]

PRODUCTION_START = "npm run build && npm start"
MAX_SERVICES = 50  # described one by one; beyond that, counted
_DELETES_COMPILED = re.compile(r"clean:js|\*\.js['\" ]|-name '\*\.js'|rm -rf \S*dist")


def service_folders(root: Path, names: list[str] | None) -> list[Path]:
    """The folders imq ctl start acts on: the named ones, else each sub-folder with a package.json."""
    if names:
        return [root / name for name in names]
    try:
        return sorted(
            entry for entry in root.iterdir() if entry.is_dir() and (entry / "package.json").is_file()
        )
    except OSError:
        return []


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_text_capped(path, MANIFEST_BYTES))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _scripts(manifest: dict[str, Any]) -> dict[str, str]:
    scripts = manifest.get("scripts")
    return {str(k): str(v) for k, v in scripts.items()} if isinstance(scripts, dict) else {}


def _expanded(scripts: dict[str, str], name: str, depth: int = 0) -> str:
    """A script with the `npm run X` it calls spelt out (a few levels), to see what it does."""
    text = scripts.get(name, "")
    if depth > 3:
        return text
    return re.sub(
        r"npm run (?:--silent )?([\w:.-]+)", lambda m: f"({_expanded(scripts, m.group(1), depth + 1)})", text
    )


def describe_service(folder: Path) -> str:
    manifest = _json(folder / "package.json")
    scripts = _scripts(manifest)
    dev = scripts.get("dev")
    if dev is None:
        return (
            f"- {folder.name}: has no dev script, so imq ctl start fails for it; start it with "
            f"{PRODUCTION_START}."
        )
    parts = [f"- {folder.name}: npm run dev = `{dev}`"]
    expanded = _expanded(scripts, "dev")
    if _DELETES_COMPILED.search(expanded):
        parts.append("it first DELETES the compiled .js/.d.ts/.js.map files outside node_modules")
    if "nodemon" in expanded:
        watch = _json(folder / "nodemon.json").get("watch")
        watched = ", ".join(map(str, watch)) if isinstance(watch, list) and watch else "the folder"
        parts.append(
            f"then nodemon watches {watched} and RESTARTS the service on every file written there "
            "(a client generated into src/ included)"
        )
    production = (
        f"production start: {PRODUCTION_START}"
        if "build" in scripts and "start" in scripts
        else "production start: compile (tsc) and run node on the compiled entry point"
    )
    return "; ".join(parts) + f". {production}."


def describe_start(root: Path, names: list[str] | None) -> str:
    """What imq ctl start runs in each service, and the production alternative."""
    folders = service_folders(root, names)
    lines = [
        "fleet start runs `npm run dev` in each service (imq ctl start); imq has no production mode. "
        f"For a production start ({PRODUCTION_START}, detached, no watcher, tracked like imq's own) call "
        "fleet(action='start', mode='production'), or fleet(action='restart', mode='production') for "
        "services already running. Per service:"
    ]
    lines += [describe_service(folder) for folder in folders[:MAX_SERVICES]]
    if len(folders) > MAX_SERVICES:
        lines.append(f"- and {len(folders) - MAX_SERVICES} more services.")
    if not folders:
        lines.append(f"- no service folder (a sub-folder with a package.json) under {root}.")
    return "\n".join(lines)


BROKER_VARIABLE = "IMQ_REDIS"
SOURCE_SUFFIXES = (".ts", ".mts", ".cts", ".js", ".mjs", ".cjs")
MANIFEST = Path("package.json")  # its scripts may pass the variable on
MAX_SOURCE_FILES = 400  # of one service, read for the variable's name
SKIPPED_FOLDERS = frozenset({"node_modules", "dist", "build", ".git", "coverage"})


def reads_broker_variable(folder: Path) -> bool:
    """Whether any source file of the service (outside node_modules and build output, which are
    not walked), or its package.json, names IMQ_REDIS; True when it cannot tell."""
    seen = 0
    for where, folders, files in os.walk(folder):
        folders[:] = sorted(name for name in folders if name not in SKIPPED_FOLDERS)
        for name in sorted(files):
            path = Path(where, name)
            if path.suffix not in SOURCE_SUFFIXES and path != folder / MANIFEST:
                continue
            seen += 1
            if seen > MAX_SOURCE_FILES:
                return True
            try:
                if BROKER_VARIABLE in read_text_capped(path, MANIFEST_BYTES, errors="replace"):
                    return True
            except (OSError, ValueError):
                continue
    return seen == 0


def ignoring_broker(root: Path, names: list[str] | None) -> str:
    """For a start given fleet's redis: the services that will not use it, and the fix."""
    ignoring = [
        folder.name
        for folder in service_folders(root, names)[:MAX_SERVICES]
        if not reads_broker_variable(folder)
    ]
    if not ignoring:
        return ""
    return (
        f"WARNING: {', '.join(ignoring)} never read {BROKER_VARIABLE} (no source file names it; imq's own "
        "template's config.ts names no broker): the redis given reaches their environment, but they "
        "connect to the broker their options name, localhost:6379 by default. Make the service options "
        "read it, e.g. in config.ts: `const [host, port] = (process.env.IMQ_REDIS || "
        "'localhost:6379').split(':'); export const serviceOptions = { host, port: Number(port) };` "
        "(scaffold_service's config.ts does this), then start them again."
    )

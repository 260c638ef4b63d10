"""The dependencies an imq template leaves unpinned, and the pins that make its project install.

imq's default template (github.com/imqueue/templates, default/package.json) asks for every
dependency as "*". npm then takes the newest of each, and the newest TypeScript (7) is outside
typedoc's peer range (5.0 to 6.0): `npm install` stops with ERESOLVE. And "@imqueue/core": "*"
beside @imqueue/rpc's own range can install core twice. create_service reports this from the
template it used, and with pin=true writes the fix into the created package.json. No MCP
imports; bridge.create_service calls these.

    template_folder(flags, cwd)   the template `imq service create` uses (-t/--template, else
                                  imq's default under $IMQ_CLI_HOME/.imq/templates)
    read_manifest(path)           a package.json, template placeholders (%SERVICE_NAME) and all
    unpinned(manifest)            the dependencies asking for any version ("*", "latest", "")
    PINS, pins_for(manifest)      the known-good ranges, and the @imqueue/core override
    apply_pins(path)              writes them into a created project's package.json
    describe_unpinned(...)        the report: what is unpinned, why it fails, the fix
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from imqueue_mcp.server.project.reader import parse_jsonc
from imqueue_mcp.server.scaffold.manifest import TOOLCHAIN_RANGES
from imqueue_mcp.server.user_files import MANIFEST_BYTES, read_text_capped

__all__ = [
    "PINS",
    "apply_pins",
    "describe_unpinned",
    "pins_for",
    "read_manifest",
    "template_folder",
    "unpinned",
]

ANY_VERSION = frozenset({"*", "", "latest", "x", "X"})
SECTIONS = ("dependencies", "devDependencies")
# TypeScript inside typedoc's peer range (and what compiles a scaffold); @types/node at the
# documented Node.js floor. Packages not named here keep what the template asked for.
PINS: dict[str, str] = dict(TOOLCHAIN_RANGES)
CORE = "@imqueue/core"
CORE_OVERRIDE = {CORE: f"${CORE}"}  # rpc then runs on the project's own core: one copy
_PLACEHOLDER = re.compile(r"%[A-Z][A-Z_]*")


def template_folder(flags: list[str], cwd: Path) -> Path | None:
    """The template folder imq service create reads, when it is on this machine."""
    value = None
    for index, flag in enumerate(flags):
        for prefix in ("--template=", "-t="):
            if flag.startswith(prefix):
                value = flag[len(prefix) :]
        if flag in ("-t", "--template") and index + 1 < len(flags):
            value = flags[index + 1]
    if value is not None and ("/" in value or value.startswith(".")):
        folder = Path(value).expanduser()
        return folder if folder.is_absolute() else cwd / folder
    home = Path(os.environ.get("IMQ_CLI_HOME") or Path.home())
    return home / ".imq" / "templates" / (value or "default")


def read_manifest(path: Path) -> dict[str, Any] | None:
    """package.json as data; a template's %PLACEHOLDERS (some outside strings) are dropped first."""
    try:
        text = read_text_capped(path, MANIFEST_BYTES, encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        data = parse_jsonc(_PLACEHOLDER.sub("", text))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def unpinned(manifest: Mapping[str, Any]) -> list[str]:
    """The dependency names asking for any version at all, dependencies first."""
    names = []
    for section in SECTIONS:
        entries = manifest.get(section)
        if isinstance(entries, dict):
            names += [
                name
                for name, spec in entries.items()
                if isinstance(spec, str) and spec.strip() in ANY_VERSION
            ]
    return names


def pins_for(manifest: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """(dependency -> range, overrides) that apply to this manifest."""
    loose = set(unpinned(manifest))
    pins = {name: spec for name, spec in PINS.items() if name in loose}
    declared = {name for section in SECTIONS for name in (manifest.get(section) or {})}
    overrides = dict(CORE_OVERRIDE) if {CORE, "@imqueue/rpc"} <= declared else {}
    existing = manifest.get("overrides")
    if isinstance(existing, dict):
        overrides = {name: spec for name, spec in overrides.items() if name not in existing}
    return pins, overrides


def apply_pins(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Writes the pins and the override into the package.json at `path`; returns what changed.

    Raises OSError or ValueError when the file cannot be read or written as JSON."""
    manifest = json.loads(read_text_capped(path, MANIFEST_BYTES, encoding="utf-8"))
    if not isinstance(manifest, dict):
        raise ValueError(f"{path} is not a JSON object")
    pins, overrides = pins_for(manifest)
    for section in SECTIONS:
        entries = manifest.get(section)
        if isinstance(entries, dict):
            for name in pins.keys() & entries.keys():
                entries[name] = pins[name]
    if overrides:
        existing = manifest.get("overrides")
        manifest["overrides"] = {**(existing if isinstance(existing, dict) else {}), **overrides}
    temporary = path.with_name(path.name + ".imqueue-mcp")
    temporary.write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    temporary.replace(path)
    return pins, overrides


def _npm_pkg_set(pins: Mapping[str, str], overrides: Mapping[str, str], manifest: Mapping[str, Any]) -> str:
    sections = {name: section for section in SECTIONS for name in (manifest.get(section) or {})}
    items = [f"'{sections.get(name, 'dependencies')}.{name}={spec}'" for name, spec in pins.items()]
    items += [f"'overrides.{name}={spec}'" for name, spec in overrides.items()]
    return "npm pkg set " + " ".join(items)


def describe_unpinned(
    manifest: Mapping[str, Any], source: str, *, applied: tuple[dict[str, str], dict[str, str]] | None = None
) -> str:
    """What `source` (the template or the created package.json) leaves unpinned, and the fix."""
    loose = unpinned(manifest)
    if not loose:
        return ""
    pins, overrides = pins_for(manifest)
    lines = [
        f'{source} pins none of these {len(loose)} dependencies ("*"): {", ".join(loose)}. npm installs '
        "the newest of each, and the newest TypeScript (7.x) is outside typedoc's peer range (5.0 to "
        "6.0), so `npm install` fails with ERESOLVE."
    ]
    if overrides:
        lines.append(
            "@imqueue/rpc also asks for its own @imqueue/core range, so core can be installed twice; the "
            'override "@imqueue/core": "$@imqueue/core" makes rpc use the project\'s copy.'
        )
    wanted = ", ".join(
        [*(f"{name} {spec}" for name, spec in pins.items()), *(f"overrides {name}" for name in overrides)]
    )
    if applied is not None:
        done_pins, done_overrides = applied
        done = [
            *(f"{name} {spec}" for name, spec in done_pins.items()),
            *(f'overrides "{name}"' for name in done_overrides),
        ]
        lines.append(f"Pinned in package.json (pin=true): {', '.join(done) or 'nothing left to pin'}.")
    elif wanted:
        lines.append(
            f"Fix: call create_service with pin=true (and apply=true) to write {wanted} into the created "
            f"package.json, or run in the project: {_npm_pkg_set(pins, overrides, manifest)}"
        )
    return "\n".join(lines)

"""Two versions of one @imqueue package's API side by side: what was added, removed, changed
and deprecated. Pure logic over two PackageIndex records (api_index.py); no MCP, no disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from imqueue_mcp.server.project.api_index import ApiSymbol, PackageIndex

URL_MIGRATION = "https://imqueue.org/api/#migration-from-2-x-to-3-x"


@dataclass
class ApiDiff:
    package: str
    old_version: str
    new_version: str
    added: list[str] = field(default_factory=list)  # only in the new version
    removed: list[str] = field(default_factory=list)  # only in the old version
    changed: list[dict[str, str]] = field(default_factory=list)  # signature differs
    deprecated: list[str] = field(default_factory=list)  # deprecated in the new, not the old

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "package": self.package,
            "installed": self.old_version,
            "latest": self.new_version,
            "added": self.added,
            "removed": self.removed,
            "changed": self.changed,
            "deprecated": self.deprecated,
        }
        if self.old_version.split(".")[0] != self.new_version.split(".")[0]:
            out["migration_guide"] = URL_MIGRATION
        return out


def _sig(sym: ApiSymbol) -> str:
    return " ".join(sym.signature.split())


def diff(old: PackageIndex, new: PackageIndex) -> ApiDiff:
    out = ApiDiff(new.name or old.name, old.version, new.version)
    for name in sorted(set(new.symbols) - set(old.symbols)):
        out.added.append(name)
    for name in sorted(set(old.symbols) - set(new.symbols)):
        out.removed.append(name)
    for name in sorted(set(old.symbols) & set(new.symbols)):
        a, b = old.symbols[name], new.symbols[name]
        if _sig(a) != _sig(b):
            out.changed.append({"name": name, "installed": _sig(a), "latest": _sig(b)})
        if b.doc.deprecated is not None and a.doc.deprecated is None:
            out.deprecated.append(name)
    return out

"""get_api's answer: a symbol as the project's installed @imqueue version declares it, looked up in
the installed packages' declarations (api_index.py), and the answer's shape.

    lookup(root, symbol, package)   the answer (ApiAnswer's shape) for the project at `root`
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from imqueue_mcp.server.project import api_index


class InstalledSymbol(BaseModel):
    name: str
    kind: str
    signature: str
    doc: dict[str, Any]
    file: str
    package: str
    version: str


class ApiAnswer(BaseModel):
    found: bool
    root: str | None = None
    via: str
    symbol: InstalledSymbol | None = None
    nearest: list[str] = Field(default_factory=list, description="Names close to an unknown symbol")
    packages: dict[str, str] = Field(default_factory=dict, description="Installed @imqueue packages read")
    problems: list[str] = Field(default_factory=list, description="What could not be read, and why")


def lookup(root: Path, symbol: str, package: str | None) -> dict[str, Any]:
    packages, problems = api_index.installed_packages(root)
    if package:
        wanted = package if package.startswith("@") else f"{api_index.SCOPE}/{package}"
        packages = [p for p in packages if p.name == wanted]
        if not packages and not problems:
            problems.append(f"{wanted} is not installed in {root}")
    data: dict[str, Any] = {"found": False, "root": str(root), "packages": {}, "nearest": []}
    nearest: list[str] = []
    for pkg in packages:
        index = api_index.index_package(pkg)
        data["packages"].setdefault(pkg.name, pkg.version)
        problems += [f"{pkg.name}@{pkg.version}: {p}" for p in index.problems[:10]]
        if data["found"]:
            continue
        sym, near = api_index.resolve(index, symbol)
        if sym is not None:
            data["found"] = True
            data["symbol"] = {**sym.as_dict(), "package": pkg.name, "version": pkg.version}
        else:
            nearest += [n for n in near if n not in nearest]
    if not data["found"]:
        data["nearest"] = nearest[:8]
    data["problems"] = problems[:20]
    return data

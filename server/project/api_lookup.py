"""get_api's and api_diff's answers: a symbol as the project's installed @imqueue version declares
it, looked up in the installed packages' declarations (api_index.py), set beside what the docs
(latest) say when the caller has their record (docsource/api_pages.py); and the answers' shapes.

    lookup(root, symbol, package)        get_api's answer (ApiAnswer's shape) for the project at `root`
    beside_latest(data, documented, v)   the docs' record and the difference added to that answer
    package_index(root, package)         one installed package's index, for api_diff
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from imqueue_mcp.docsource.api_pages import DocumentedSymbol
from imqueue_mcp.server.project import api_index
from imqueue_mcp.server.project.api_diff import compare_declared, cut

Status = Literal["same", "signature-changed", "deprecated-in-latest", "not-installed", "installed-only"]


class InstalledSymbol(BaseModel):
    name: str
    kind: str
    signature: str
    doc: dict[str, Any]
    file: str
    package: str
    version: str


class LatestSymbol(BaseModel):
    name: str
    kind: str
    url: str = Field(description="The symbol's API page")
    summary: str
    deprecated: bool
    signature: str | None = Field(description="The declaration on its page; null when the page was not read")
    package: str
    version: str | None = Field(description="The release the docs describe")


class Difference(BaseModel):
    status: Status = Field(
        description="same, signature-changed, deprecated-in-latest, not-installed (only in the docs' "
        "release), installed-only (not in the docs' release)"
    )
    text: str


class ApiAnswer(BaseModel):
    found: bool
    root: str | None = None
    via: str
    symbol: InstalledSymbol | None = None
    latest: LatestSymbol | None = Field(None, description="What the docs (latest release) say of it")
    difference: Difference | None = Field(None, description="How the installed declaration stands to it")
    nearest: list[str] = Field(default_factory=list, description="Names close to an unknown symbol")
    install: str | None = Field(
        None,
        description="How to install the package the docs document the symbol in, when the project lacks it",
    )
    packages: dict[str, str] = Field(default_factory=dict, description="Installed @imqueue packages read")
    problems: list[str] = Field(default_factory=list, description="What could not be read, and why")


def scoped(package: str) -> str:
    return package if package.startswith("@") else f"{api_index.SCOPE}/{package}"


_VERSIONED = re.compile(r"^(@[^/@\s]+/[^@\s]+|[^@\s]+)@(\S+)$")


def versioned(package: str) -> tuple[str, str | None]:
    """A package argument as npm writes it, split: '@imqueue/pg-pubsub@1.10.0' -> ('@imqueue/pg-pubsub',
    '1.10.0'), 'rpc@3' -> ('rpc', '3'); without a version, (the name, None)."""
    text = package.strip()
    match = _VERSIONED.match(text)
    return (match.group(1), match.group(2)) if match else (text, None)


def lookup(root: Path, symbol: str, package: str | None) -> dict[str, Any]:
    packages, problems = api_index.installed_packages(root)
    if package:
        wanted = scoped(package)
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


def beside_latest(
    data: dict[str, Any], package: str, documented: DocumentedSymbol | None, release: str | None
) -> None:
    """Add the docs' record of the symbol (`latest`) and the `difference` to get_api's answer."""
    mine = data.get("symbol") if data.get("found") else None
    if documented is not None:
        data["latest"] = {
            "name": documented.name,
            "kind": documented.kind,
            "url": documented.url,
            "summary": documented.summary,
            "deprecated": documented.deprecated,
            "signature": cut(documented.signature) if documented.signature is not None else None,
            "package": package,
            "version": release,
        }
    signature = str(mine["signature"]) if mine else None
    deprecated = bool(mine and "deprecated" in mine["doc"])
    comparison = compare_declared(signature, deprecated, documented)
    if comparison is not None:
        data["difference"] = {"status": comparison.status, "text": comparison.text}


def package_index(
    root: Path, package: str
) -> tuple[api_index.PackageIndex | None, list[str], dict[str, str]]:
    """The installed index of `package` under root (the hoisted copy first), what could not be read,
    and every installed @imqueue package with its version."""
    packages, problems = api_index.installed_packages(root)
    installed = {p.name: p.version for p in packages}
    copies = [p for p in packages if p.name == package]
    if not copies:
        problems = problems or [f"{package} is not installed in {root}"]
        return None, problems, installed
    hoisted = root / "node_modules" / package
    copy = next((p for p in copies if p.path == _real(hoisted)), copies[0])
    index = api_index.index_package(copy)
    return index, problems + [f"{package}@{copy.version}: {p}" for p in index.problems[:10]], installed


def _real(path: Path) -> Path:
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return path


class AddedSymbol(BaseModel):
    name: str
    kind: str
    url: str = Field(description="Its API page")
    summary: str


class RemovedSymbol(BaseModel):
    name: str
    kind: str
    signature: str = Field(description="As installed")
    url: str | None = Field(description="Its class's API page, when the docs still have the class")
    file: str = Field(description="The declaration file, relative to the installed package")


class ChangedSymbol(BaseModel):
    name: str
    installed: str = Field(description="The installed declaration")
    latest: str = Field(description="The declaration on its API page")
    url: str


class DeprecatedSymbol(BaseModel):
    name: str
    url: str
    note: str = Field(description="The docs' summary: why, and what to use instead")


class DiffCounts(BaseModel):
    added: int
    removed: int
    changed: int
    deprecated: int
    signaturesCompared: int = Field(description="Symbols in both whose declarations were compared")


class ApiDiffAnswer(BaseModel):
    found: bool = Field(description="False when the package is not installed, or the docs have no API of it")
    root: str | None = None
    via: str
    package: str
    installed: str | None = Field(None, description="The installed version")
    latest: str | None = Field(None, description="The release the docs describe")
    counts: DiffCounts | None = None
    added: list[AddedSymbol] = Field(default_factory=list, description="In the docs' release, not installed")
    removed: list[RemovedSymbol] = Field(
        default_factory=list, description="Installed, not in the docs' release (gone, or never documented)"
    )
    changed: list[ChangedSymbol] = Field(default_factory=list, description="Declared differently")
    deprecated: list[DeprecatedSymbol] = Field(
        default_factory=list, description="Deprecated in the docs' release, not in the installed one"
    )
    migrationGuide: str | None = Field(
        None,
        description="The docs' migration guide of @imqueue/core and @imqueue/rpc, installed a major older",
    )
    installedIs: Literal["older", "newer"] | None = Field(
        None, description="The installed major against the docs' release's, when they differ"
    )
    corpus: dict[str, str] | None = Field(None, description="The docs corpus the latest side is from")
    unread: list[str] = Field(default_factory=list, description="Why some declarations were not compared")
    packages: dict[str, str] = Field(default_factory=dict, description="Installed @imqueue packages")
    problems: list[str] = Field(default_factory=list, description="What could not be read, and why")

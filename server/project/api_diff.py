"""Two versions of one @imqueue package's API side by side: what was added, removed, changed and
deprecated. Pure logic over the installed declarations (api_index.py) and, for "latest", either a
second PackageIndex or the docs' API records (docsource/api_pages.py); no MCP, no disk.

    diff(old, new)                          two installed indexes (tests, benchmarks)
    compare(installed, documented)          one symbol: its status and a short difference
    against_docs(index, documented, latest) the api_diff tool's answer: installed vs the docs

Statuses, one vocabulary for get_api, api_diff and the search marks:

    same                  in both, the same declaration (or the docs' is not known)
    signature-changed     in both, declared differently
    deprecated-in-latest  in both, deprecated in the docs but not in the installed version
    not-installed         in the docs (latest), not in the installed version
    installed-only        in the installed version, not in the docs (gone in a later release)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from imqueue_mcp.docsource.api_pages import DocumentedSymbol
from imqueue_mcp.server.project.api_index import ApiSymbol, PackageIndex

URL_MIGRATION = "https://imqueue.org/api/#migration-from-2-x-to-3-x"
# the packages the migration guide is about ("Version 3.x is a modernization release of
# @imqueue/core and @imqueue/rpc"): another package's major is no reason to send an agent there
FRAMEWORK = frozenset({"@imqueue/core", "@imqueue/rpc"})
MAX_LISTED = 100  # entries per list of one answer; the counts say how many there are
MAX_SIGNATURE_CHARS = 400  # a longer declaration is cut, with a marker

_PUNCTUATION = re.compile(r"\s*([(){}\[\]<>,;:|&=?])\s*")
_MODIFIERS = re.compile(r"^(?:(?:export|declare|default|const|let|var)\s+)+")
_UNUSED = re.compile(r"(?<![\w$])_(?=[A-Za-z])")  # `_mode`, `<_T>`: a name marked unused, same type
# An enum, class, interface or namespace as its head, without the body: the docs' signature line
# gives only the head (`export declare enum IMQMode`) and lists the members in a table.
_BODY = re.compile(r"^((?:abstract\s+)?(?:enum|class|interface|namespace)\b[^{]*?)\{.*\}$", re.DOTALL)


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
        if major(self.old_version) != major(self.new_version):
            out["migration_guide"] = URL_MIGRATION
        return out


def major(version: str | None) -> str:
    return (version or "").lstrip("v^~=").split(".")[0]


def _sig(sym: ApiSymbol) -> str:
    return " ".join(sym.signature.split())


def comparable(signature: str) -> str:
    """A declaration as compared: whitespace, `;`, `export`/`declare`/`const` and spacing around
    punctuation do not count (the docs print `export declare function f(): any`, the index
    `function f(): any`), nor a parameter renamed `_name` to mark it unused."""
    text = " ".join(signature.split()).rstrip(";").strip()
    return _UNUSED.sub("", _PUNCTUATION.sub(r"\1", _MODIFIERS.sub("", text)))


def same_declaration(installed: str, documented: str) -> bool:
    """comparable() alike, or the same head where one side gives only the head of a declaration
    whose body the other carries (an enum's members, which the docs list in a table). An
    overloaded method is one signature a line on both sides (the index's record, the docs' pages):
    the same set of overloads, in any order."""
    if "\n" in installed or "\n" in documented:
        mine = {comparable(line) for line in installed.split("\n") if line.strip()}
        theirs = {comparable(line) for line in documented.split("\n") if line.strip()}
        return mine == theirs
    a, b = comparable(installed), comparable(documented)
    if a == b:
        return True
    heads = [_BODY.sub(r"\1", text).rstrip() for text in (a, b)]
    return heads[0] == heads[1] and (heads[0] == a or heads[1] == b)


def cut(signature: str) -> str:
    return signature if len(signature) <= MAX_SIGNATURE_CHARS else signature[: MAX_SIGNATURE_CHARS - 1] + "…"


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


@dataclass(frozen=True)
class Comparison:
    status: str  # one of the statuses above
    text: str  # one short sentence


def compare(installed: ApiSymbol | None, documented: DocumentedSymbol | None) -> Comparison | None:
    """How the installed declaration of a symbol stands to the docs' record of it."""
    if installed is None:
        return compare_declared(None, False, documented)
    return compare_declared(installed.signature, installed.doc.deprecated is not None, documented)


def compare_declared(
    signature: str | None, deprecated: bool, documented: DocumentedSymbol | None
) -> Comparison | None:
    """compare() for an installed declaration given as its signature (None: not installed)."""
    if signature is None and documented is None:
        return None
    if signature is None:
        return Comparison("not-installed", "Not in the installed version: the docs' release added it.")
    if documented is None:
        return Comparison(
            "installed-only", "Only in the installed version: the docs' release has no such symbol."
        )
    known = documented.signature is not None
    if known and not same_declaration(signature, str(documented.signature)):
        return Comparison("signature-changed", "Declared differently in the docs' release.")
    if documented.deprecated and not deprecated:
        return Comparison(
            "deprecated-in-latest", "Deprecated in the docs' release, not in the installed one."
        )
    same = "The same declaration in both." if known else "In both (the docs' declaration was not read)."
    return Comparison("same", same)


def against_docs(
    index: PackageIndex, documented: Mapping[str, DocumentedSymbol], latest: str | None
) -> dict[str, Any]:
    """The installed API of one package against the docs' records (ApiDiffAnswer's core)."""
    added = [documented[n] for n in sorted(set(documented) - set(index.symbols))]
    removed = [index.symbols[n] for n in sorted(set(index.symbols) - set(documented))]
    changed: list[dict[str, Any]] = []
    deprecated: list[dict[str, Any]] = []
    compared = 0
    for name in sorted(set(index.symbols) & set(documented)):
        mine, theirs = index.symbols[name], documented[name]
        compared += theirs.signature is not None
        status = compare(mine, theirs)
        if status is not None and status.status == "signature-changed":
            entry = {"name": name, "installed": cut(mine.signature), "latest": cut(str(theirs.signature))}
            changed.append({**entry, "url": theirs.url})
        if theirs.deprecated and mine.doc.deprecated is None:
            deprecated.append({"name": name, "url": theirs.url, "note": theirs.summary})
    out: dict[str, Any] = {
        "package": index.name,
        "installed": index.version,
        "latest": latest,
        "counts": {
            "added": len(added),
            "removed": len(removed),
            "changed": len(changed),
            "deprecated": len(deprecated),
            "signaturesCompared": compared,
        },
        "added": [
            {"name": s.name, "kind": s.kind, "url": s.url, "summary": s.summary} for s in added[:MAX_LISTED]
        ],
        "removed": [_removed(s, documented) for s in removed[:MAX_LISTED]],
        "changed": changed[:MAX_LISTED],
        "deprecated": deprecated[:MAX_LISTED],
    }
    order = release_order(index.version, latest)
    if order == "older" and index.name in FRAMEWORK:
        out["migrationGuide"] = URL_MIGRATION
    if order is not None:
        out["installedIs"] = order
    return out


def release_order(installed: str | None, latest: str | None) -> str | None:
    """'older' or 'newer' when the installed major is below or above the docs' release's; None
    when they are the same major or either is unknown."""
    try:
        mine, theirs = int(major(installed)), int(major(latest))
    except ValueError:
        return None
    return None if mine == theirs else "older" if mine < theirs else "newer"


def _removed(symbol: ApiSymbol, documented: Mapping[str, DocumentedSymbol]) -> dict[str, Any]:
    """An installed-only symbol; a member's url is its class's page when the docs still have it."""
    entry: dict[str, Any] = {"name": symbol.name, "kind": symbol.kind, "signature": cut(symbol.signature)}
    owner = documented.get(symbol.name.rsplit(".", 1)[0]) if "." in symbol.name else None
    entry["url"] = owner.url if owner is not None else None
    entry["file"] = symbol.file
    return entry

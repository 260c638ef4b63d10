"""inspect_project's report: its shape (the tool's outputSchema) and how it is made.

    folder_of(text)                       the absolute folder an argument names, or None
    report(folders, via, documented)      the report of the first project found in `folders`, read afresh
    behind_docs(data)                     the installed packages older than the docs' major, each
                                          with the api_diff call that compares the two
    render_report_text(data)              the report as the text an agent reads

The documented versions are status.json's (docs/package_facts.py, which the caller reads):
`Documented` is (status, stored), stored labelling a copy not read live; None when none was read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from imqueue_mcp.server.project import reader as project

EMPTY_REPORT: dict[str, list[Any]] = {"packages": [], "findings": [], "problems": []}
Documented = tuple[dict[str, Any], dict[str, str] | None]  # status.json, and the label of a stored copy


class InspectedPackage(BaseModel):
    name: str
    declared: str | None = Field(description="The range in package.json")
    locked: str | None = Field(description="The version in package-lock.json")
    installed: str | None = Field(description="The version in node_modules/@imqueue/NAME/package.json")
    major: int | None = Field(description="The major in use: installed, else locked, else the range's lowest")
    documented: str | None = Field(description="The latest version, which the docs describe (status.json)")


class ProjectFinding(BaseModel):
    id: str = Field(
        description="exclusive-pair, other-major, node-floor, remove-comments, legacy-decorators, "
        "decorators-lib, esm (3.x), legacy-decorators-off (1.x and 2.x) or duplicate-package"
    )
    message: str
    url: str = Field(description="The docs page that states the requirement")
    package: str | None = None


class FrameworkInUse(BaseModel):
    major: int | None = Field(description="The @imqueue major the code compiles against: rpc's, else core's")
    decorators: Literal["legacy", "standard"] | None = Field(
        description="What that major compiles with, and so what the TypeScript advice follows: 'legacy' "
        "(before 3.x: experimentalDecorators on, CommonJS), 'standard' (3.x: TC39 decorators, ES modules)"
    )


class InstalledCopy(BaseModel):
    path: str
    version: str


class NodeRequirement(BaseModel):
    declared: str | None = Field(description="engines.node of package.json")
    floor: str | None = Field(description="The documented Node.js floor")


class RedisRequirement(BaseModel):
    required: str
    url: str
    checked: bool
    note: str


class ToolCall(BaseModel):
    tool: str
    arguments: dict[str, str]


class BehindDocs(BaseModel):
    package: str
    installed: str
    documented: str
    call: ToolCall = Field(description="The api_diff call that lists what changed between the two")


class ProjectReport(BaseModel):
    found: bool = Field(description="False when no package.json was found where the server looked")
    lookedIn: list[str] = Field(description="The folders searched (each and its parents)")
    via: str = Field(description="'path' (the argument), 'roots' (the client's) or 'cwd'")
    root: str | None = None
    packageJson: str | None = None
    lockfile: str | None = None
    tsconfig: str | None = None
    packages: list[InspectedPackage] = Field(default_factory=list)
    framework: FrameworkInUse | None = None
    copies: dict[str, list[InstalledCopy]] | None = Field(
        None, description="@imqueue packages installed more than once at different versions, each copy"
    )
    node: NodeRequirement | None = None
    redis: RedisRequirement | None = None
    findings: list[ProjectFinding] = Field(
        default_factory=list, description="Each requirement of the docs the project does not meet"
    )
    behindDocs: list[BehindDocs] | None = Field(
        None,
        description="Installed @imqueue packages at an older major than the docs describe, each with the "
        "api_diff call that lists the symbols added, removed, changed and deprecated since",
    )
    problems: list[str] = Field(default_factory=list, description="Files that could not be read, and why")
    facts: dict[str, str] | None = Field(
        None, description="Where the documented versions came from, when not read live just now"
    )
    factsUnavailable: bool | None = Field(
        None, description="True when no status.json was readable: versions were not compared"
    )


def folder_of(text: str) -> Path | None:
    """The absolute folder `text` names, or None (relative, missing, a file, unreadable)."""
    try:
        folder = Path(text).expanduser()
        return folder if folder.is_absolute() and folder.is_dir() else None
    except (OSError, ValueError, RuntimeError):  # a NUL, a name too long, an unknown ~user
        return None


async def report(
    folders: list[Path], via: str, documented: Callable[[], Awaitable[Documented | None]]
) -> dict[str, Any]:
    """The report (ProjectReport's shape) of the project found in `folders` (read afresh, off the
    event loop), against the documented versions `documented` reads once a project is found."""
    found = await asyncio.to_thread(project.find_project, folders)
    looked = [str(folder) for folder in folders]
    if found is None:
        return {
            "found": False,
            "lookedIn": looked,
            "via": via,
            "packages": [],
            "findings": [],
            "problems": [],
        }
    known = await documented()
    data = {
        "found": True,
        "lookedIn": looked,
        "via": via,
        **project.inspect(found, known[0] if known else None),
    }
    behind = behind_docs(data)
    if behind:
        data["behindDocs"] = behind
    if known is None:
        data["factsUnavailable"] = True
    elif known[1] is not None:
        data["facts"] = known[1]
    return data


def behind_docs(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each installed package whose major is older than the documented one, with the api_diff call
    (the exact arguments) that compares the two."""
    behind = []
    for package in data.get("packages", []):
        installed, documented = package.get("installed"), package.get("documented")
        mine, theirs = project.major_of(installed or ""), project.major_of(documented or "")
        if mine is None or theirs is None or mine >= theirs:
            continue
        arguments = {"package": str(package["name"]), "path": str(data["root"])}
        behind.append(
            {
                "package": package["name"],
                "installed": installed,
                "documented": documented,
                "call": {"tool": "api_diff", "arguments": arguments},
            }
        )
    return behind


def render_report_text(data: dict[str, Any]) -> str:
    if not data["found"]:
        return (
            "No Node.js project found: there is no package.json in "
            + ", ".join(data["lookedIn"])
            + " or their parents. Pass path with the project folder."
        )
    lines = [f"# Project {data['root']}", ""]
    if data["packages"]:
        lines.append("| Package | package.json | lockfile | installed | documented |")
        lines.append("| --- | --- | --- | --- | --- |")
        for package in data["packages"]:
            cells = [package[key] or "-" for key in ("declared", "locked", "installed", "documented")]
            lines.append(f"| {package['name']} | " + " | ".join(cells) + " |")
    else:
        lines.append("The project declares no @imqueue package.")
    framework = data.get("framework") or {}
    if framework.get("decorators"):
        lines += [
            "",
            f"Runs @imqueue {framework['major']}.x, which compiles with {framework['decorators']} decorators"
            + (" as ES modules" if framework["decorators"] == "standard" else "")
            + ": the TypeScript advice below is for that major.",
        ]
    lines.append("")
    findings = data["findings"]
    if findings:
        lines.append(f"## Findings ({len(findings)})")
        lines += [f"- **{item['id']}**: {item['message']} See {item['url']}" for item in findings]
    else:
        lines.append("No findings: the project meets what the docs require that can be checked here.")
    redis = data["redis"]
    lines += ["", f"Redis {redis['required']} is required ({redis['url']}); {redis['note']}"]
    for item in data.get("behindDocs") or []:
        arguments = ", ".join(f"{key}={value!r}" for key, value in item["call"]["arguments"].items())
        lines += [
            "",
            f"{item['package']} {item['installed']} is an older major than the docs' {item['documented']}: "
            f"call api_diff({arguments}) for the symbols added, removed, changed and deprecated since.",
        ]
    if data["problems"]:
        lines += ["", "Not read:"] + [f"- {problem}" for problem in data["problems"]]
    if data.get("factsUnavailable"):
        lines += [
            "",
            "The documented versions are unknown (imqueue.org/status.json could not be read and no "
            "snapshot has a copy), so versions were not compared.",
        ]
    if data.get("facts"):
        stored = data["facts"]
        lines += ["", f"Documented versions from the snapshot of {stored['fetchedAt']}: {stored['note']}."]
    return "\n".join(lines) + "\n"

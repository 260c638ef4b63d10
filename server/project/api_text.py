"""get_api's, api_diff's and the installed-version marks' text: markdown built only from their
structured answers (server/project/api_lookup.py, server/installed_api.py), so prose and data
cannot disagree. Pure: no disk, no MCP."""

from __future__ import annotations

from typing import Any


def render(data: dict[str, Any], query: str) -> str:
    if data["found"]:
        sym = data["symbol"]
        doc = sym["doc"]
        lines = [
            f"# {sym['name']} ({sym['kind']}) in {sym['package']}@{sym['version']} as installed",
            "",
            "```ts",
            sym["signature"],
            "```",
            "",
            doc.get("summary") or "(no doc comment)",
        ]
        for name, text in doc.get("params", {}).items():
            lines.append(f"- @param {name}: {text}")
        for key in ("returns", "default", "deprecated", "remarks"):
            if key in doc:
                lines.append(f"- @{key}: {doc[key]}")
        lines.append(f"\nDeclared in {sym['file']}.")
    else:
        where = f" under {data['root']}" if data.get("root") else " (no project in reach: see below)"
        lines = [f"No installed @imqueue declaration named {query!r}{where}."]
        if data.get("install"):
            latest = data["latest"]
            lines.append(f"The docs document {latest['name']} in {latest['package']}: `{data['install']}`.")
        elif data["nearest"]:
            lines.append("Nearest names: " + ", ".join(data["nearest"]))
    lines += _render_latest(data)
    if data["problems"]:
        lines += ["", "Not read:"] + [f"- {p}" for p in data["problems"]]
    return "\n".join(lines)


def _render_latest(data: dict[str, Any]) -> list[str]:
    difference, latest = data.get("difference"), data.get("latest")
    lines = ["", f"## Difference: {difference['status']}", difference["text"]] if difference else []
    if latest:
        release = f"{latest['package']}@{latest['version']}" if latest["version"] else latest["package"]
        lines += ["", f"The docs ({release}, {latest['url']}):", latest["summary"]]
        if latest["signature"]:
            lines += ["", "```ts", latest["signature"], "```"]
    return lines


def render_diff(data: dict[str, Any]) -> str:
    if not data["found"]:
        lines = [f"No API diff for {data['package']}."]
        if data.get("packages"):
            lines.append("Installed: " + ", ".join(f"{k}@{v}" for k, v in data["packages"].items()))
        return "\n".join(lines + [f"- {p}" for p in data.get("problems", [])])
    counts = data["counts"]
    lines = [
        f"# {data['package']}: installed {data['installed']} vs the docs' {data['latest'] or 'latest'}",
        "",
        f"{counts['added']} added, {counts['removed']} removed, {counts['changed']} changed, "
        f"{counts['deprecated']} deprecated ({counts['signaturesCompared']} declarations compared).",
    ]
    newer = data.get("installedIs") == "newer"
    if data.get("migrationGuide"):
        lines.append(f"The majors differ: read the migration guide, {data['migrationGuide']}")
    elif newer:
        lines.append(
            f"The installed release is a newer major than the docs describe: the API pages are of "
            f"{data['latest']}, so what the installed one added since is listed as not in the docs, "
            f"and its own README and changelog (node_modules/{data['package']}) say what changed."
        )
    elif data.get("installedIs") == "older":
        lines.append(
            f"The installed release is an older major than the docs describe: upgrade with "
            f"`npm install {data['package']}@^{data['latest']}` to use the docs' API as written."
        )
    gone = "added since the docs' release" if newer else "removed since"
    sections = (
        ("Added (in the docs, not installed)", "added", "{name} ({kind}): {url}"),
        (f"Not in the docs ({gone}, or never documented)", "removed", "{name}: `{signature}`"),
        ("Changed", "changed", "{name}: `{installed}` -> `{latest}` {url}"),
        ("Deprecated in the docs", "deprecated", "{name}: {note} {url}"),
    )
    for title, key, line in sections:
        if data[key]:
            lines += ["", f"## {title}"] + ["- " + line.format(**entry) for entry in data[key]]
    for note in data.get("unread", []) + data.get("problems", []):
        lines.append(f"Not read: {note}")
    return "\n".join(lines)


def render_marks(hits: list[dict[str, Any]], installed_only: list[dict[str, Any]]) -> str:
    lines = []
    marked_hits = [hit for hit in hits if "installed" in hit]
    if marked_hits:
        lines.append("## Against the version your project has installed")
        for hit in marked_hits:
            mark = hit["installed"]
            where = f"{mark['package']} {mark['version']}"
            line = f"- {mark['symbol']} ({hit['url']}): {mark['status']} in {where}"
            lines.append(line + (f", installed as `{mark['signature']}`" if "signature" in mark else ""))
    if installed_only:
        lines += ["", "## Only in the version your project has installed (not in the docs)"]
        for entry in installed_only:
            lines.append(
                f"- {entry['name']} ({entry['symbolKind']}, {entry['package']} {entry['version']}, "
                f"{entry['file']}): `{entry['signature']}` {entry['summary']}".rstrip()
            )
    return "\n".join(lines).strip("\n") + "\n"

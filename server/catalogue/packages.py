"""The @imqueue package catalogue and status facts behind list_packages and package_status.

Pure logic: no MCP, no network. The caller fetches imqueue.org/status.json (or fails
to) and passes the parsed dict in; everything here is a function of its arguments.

Map of this module, top to bottom:

    CatalogueError            every user-facing failure; the message says what to do next
    CatalogueEntry, CATALOGUE the compiled-in list: name, one-line summary, install command
    ExclusivePair, EXCLUSIVE_PAIRS
                              packages that must not be installed together, with the rule
                              for choosing; feeds each entry's ``pick`` and the advisory
    normalize_package         'rpc' / '@imqueue/rpc' / ' RPC ' -> '@imqueue/rpc'
    exclusive_pair_advisory   names -> "pick exactly one of ..." text, or None
    exclusive_pair_advisories names -> the same advice as data: pair, default, why, install
    merge_status              catalogue + status.json (or None) -> list_packages result
    render_packages_markdown  that result as markdown
    package_status            status.json (+ optional package) -> package_status result
    render_status_markdown    that result as markdown

Why two shapes: list_packages must answer even when the feed is down (the catalogue is
compiled in, and ``factsUnavailable`` says the facts are missing rather than leaving an
agent to read "no version"), while package_status exists to state current versions and
so has no fallback at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from imqueue_mcp.ranker import normalize_package as ranker_normalize_package

__all__ = [
    "CATALOGUE",
    "EXCLUDED_PACKAGES",
    "EXCLUSIVE_PAIRS",
    "CatalogueEntry",
    "CatalogueError",
    "ExclusivePair",
    "exclusive_pair_advisories",
    "exclusive_pair_advisory",
    "merge_status",
    "normalize_package",
    "package_status",
    "render_packages_markdown",
    "render_status_markdown",
]

SCOPE = "@imqueue/"
API_PREFIX = "https://imqueue.org/api/"  # where each package's API reference lives
STATUS_PAGE = "https://imqueue.org/status/"


class CatalogueError(ValueError):
    """Raised for an unknown package name or a status feed without the expected shape.

    The message names the value and the next step (e.g. the known package names).
    """


# --- the compiled-in catalogue -------------------------------------------------------


@dataclass(frozen=True)
class CatalogueEntry:
    name: str
    summary: str
    install: str


def _entry(short_name: str, summary: str) -> CatalogueEntry:
    name = SCOPE + short_name
    return CatalogueEntry(name=name, summary=summary, install=f"npm install {name}")


# Framework spine first, then the capability packages grouped as the API reference
# groups them. Summaries are this project's own wording.
CATALOGUE: tuple[CatalogueEntry, ...] = (
    _entry(
        "rpc",
        "Build services and their typed clients: IMQService, IMQClient and decorators such as "
        "@expose, @lock and @cache. Re-exports everything in @imqueue/core.",
    ),
    _entry(
        "core",
        "The Redis-backed JSON message queue underneath every service, with the IMQ factory and "
        "the interface a queue adapter implements.",
    ),
    CatalogueEntry(
        name="@imqueue/cli",
        summary="The imq command: creates service projects, generates typed clients from running "
        "services and starts, stops and tails a local fleet. Installed globally.",
        install="npm install -g @imqueue/cli",
    ),
    _entry(
        "pg-pubsub",
        "PostgreSQL LISTEN/NOTIFY that reconnects by itself, with a lock so only one replica of a "
        "scaled service handles each notification.",
    ),
    _entry(
        "pg-cache",
        "Caches service method results in Redis and lets PostgreSQL triggers evict them as soon as "
        "the tables they depend on change.",
    ),
    _entry(
        "tag-cache",
        "A Redis cache whose entries carry tags, so invalidating one tag evicts everything stored under it.",
    ),
    _entry(
        "pg-sequelize",
        "Sequelize v6 toolkit for services: turns a filter, page, order and field list sent as "
        "data into one efficient SQL query, with views usable as models.",
    ),
    _entry(
        "pg-prisma",
        "Prisma toolkit for services: query extensions for soft delete, access scoping, "
        "authorship and audit trails, plus archiving, change triggers and down-migrations.",
    ),
    _entry(
        "async-logger",
        "A winston-based logger that never blocks the caller, with file and HTTP transports "
        "chosen through environment variables.",
    ),
    _entry(
        "opentelemetry",
        "Vendor-neutral OpenTelemetry tracing of every @imqueue RPC call, without changes to "
        "service or client code.",
    ),
    _entry(
        "datadog",
        "Datadog APM tracing of every @imqueue RPC call: import it where you imported dd-trace, "
        "and the rest of the dd-trace API keeps working.",
    ),
    _entry(
        "graphql-dependency",
        "Batches cross-service data loading behind a GraphQL schema, so nested fields cost one "
        "call per level instead of one per object (the N+1 problem).",
    ),
    _entry(
        "type-graphql-dependency",
        "The graphql-dependency loader for type-graphql projects, declared on the decorated "
        "classes themselves.",
    ),
    _entry("net", "Fast IPv4 and IPv6 CIDR membership checks, using sorted ranges and binary search."),
    _entry(
        "http-protect",
        "Per-IP rate limiting and banning middleware for express-style HTTP servers, with the "
        "counters in Redis so every process agrees.",
    ),
    _entry(
        "validation",
        "Argument and field validation for service methods, declared with standard decorators and "
        "backed by zod.",
    ),
    _entry(
        "job",
        "A Redis job queue for delayed and scheduled work with at-least-once delivery, where the "
        "handler's result decides whether a job runs again.",
    ),
)

# Published under the scope but not listed: @imqueue/mcp is this server itself, and
# @imqueue/js and @imqueue/travis are project tooling rather than something a service
# depends on. package_status still reports any of them the status feed carries.
EXCLUDED_PACKAGES = frozenset({"@imqueue/js", "@imqueue/travis", "@imqueue/mcp"})


# --- mutually exclusive pairs --------------------------------------------------------


@dataclass(frozen=True)
class ExclusivePair:
    """Two packages covering the same ground: a service takes at most one of them."""

    need: str  # what a service must need for the pair to matter at all
    default: str
    alternative: str
    reason: str  # why installing both is wrong
    choose_default: str  # when to take ``default``
    choose_alternative: str  # when to take ``alternative``
    aliases: Mapping[str, str]  # retired names and CLI catalogue ids -> package

    @property
    def members(self) -> tuple[str, str]:
        return (self.default, self.alternative)

    def other(self, package: str) -> str:
        return self.alternative if package == self.default else self.default

    def when_to_choose(self, package: str) -> str:
        return self.choose_default if package == self.default else self.choose_alternative


EXCLUSIVE_PAIRS: tuple[ExclusivePair, ...] = (
    ExclusivePair(
        need="an ORM for PostgreSQL",
        default="@imqueue/pg-prisma",
        alternative="@imqueue/pg-sequelize",
        reason="each is a complete data-access layer for the same job, so a service holding both "
        "keeps two models of one schema",
        choose_default="for any new service that needs a database, unless its fleet is already "
        "built on Sequelize",
        choose_alternative="only for a service joining a fleet already built on Sequelize, to match "
        "it; moving that fleet to Prisma is separate work",
        aliases={"@imqueue/sequelize": "@imqueue/pg-sequelize"},
    ),
    ExclusivePair(
        need="distributed tracing",
        default="@imqueue/opentelemetry",
        alternative="@imqueue/datadog",
        reason="both install their hooks into the same @imqueue/rpc defaults, so with both "
        "present whichever loads last silently wins",
        choose_default="by default: it is vendor-neutral, so the tracing backend can change "
        "without code changes",
        choose_alternative="only when the fleet already reports to a Datadog agent through dd-trace",
        aliases={
            "@imqueue/dd-trace": "@imqueue/datadog",
            "@imqueue/opentelemetry-instrumentation-imqueue": "@imqueue/opentelemetry",
        },
    ),
)


def _pair_for(package: str) -> ExclusivePair | None:
    for pair in EXCLUSIVE_PAIRS:
        if package in pair.members:
            return pair
    return None


def pick_rule(package: str) -> str | None:
    """The ``pick`` text of one catalogue entry, or None outside every pair."""
    pair = _pair_for(package)
    if pair is None:
        return None
    return (
        f"Exclusive with {pair.other(package)}: if the service needs {pair.need}, pick exactly one "
        f"of the two, never both. Choose {package} {pair.when_to_choose(package)}."
    )


# --- names ---------------------------------------------------------------------------


def normalize_package(name: str) -> str:
    """'rpc', '@imqueue/rpc' and ' RPC ' all become '@imqueue/rpc' (the ranker's one rule)."""
    try:
        return ranker_normalize_package(name)
    except ValueError as error:
        raise CatalogueError(str(error)) from None


def _canonical_member(name: str) -> str | None:
    """The pair member a name refers to, following retired names and CLI catalogue ids."""
    try:
        package = normalize_package(name)
    except CatalogueError:
        return None
    for pair in EXCLUSIVE_PAIRS:
        package = pair.aliases.get(package, package)
    return package if _pair_for(package) else None


def exclusive_pair_advisory(package_names: Iterable[str]) -> str | None:
    """Advice for every exclusive pair the names touch; None when they touch none.

    Accepts bare or scoped names, plus the retired names (``@imqueue/dd-trace``) and the
    CLI's catalogue ids (``dd-trace``, ``sequelize``) that still install these packages.
    """
    named = {member for name in package_names if (member := _canonical_member(name))}
    paragraphs = []
    for pair in EXCLUSIVE_PAIRS:
        chosen = [member for member in pair.members if member in named]
        if not chosen:
            continue
        paragraphs.append(_pair_advice(pair, chosen))
    return "\n\n".join(paragraphs) or None


def _pair_advice(pair: ExclusivePair, chosen: list[str]) -> str:
    text = (
        f"Pick exactly one of {pair.default} or {pair.alternative} if the service needs "
        f"{pair.need}, never both, because {pair.reason}. Choose {pair.default} "
        f"{pair.choose_default}; choose {pair.alternative} {pair.choose_alternative}."
    )
    if len(chosen) == 2:
        text = f"Both {pair.default} and {pair.alternative} were named. " + text
    return text


def exclusive_pair_advisories(package_names: Iterable[str]) -> list[dict[str, Any]]:
    """The advice of `exclusive_pair_advisory` as one record per pair the names touch.

    Agents act on these fields rather than parse the sentence: ``install`` is the command
    for the default choice, ``named`` says which members of the pair the names touched.
    """
    named = {member for name in package_names if (member := _canonical_member(name))}
    touched = [(pair, [member for member in pair.members if member in named]) for pair in EXCLUSIVE_PAIRS]
    return [
        {
            "pair": list(pair.members),
            "need": pair.need,
            "default": pair.default,
            "why": pair.choose_default,
            "install": f"npm i {pair.default}",
            "neverBoth": pair.reason,
            "alternative": pair.alternative,
            "alternativeWhen": pair.choose_alternative,
            "named": chosen,
            "advice": _pair_advice(pair, chosen),
        }
        for pair, chosen in touched
        if chosen
    ]


# --- status feed ---------------------------------------------------------------------

FRAMEWORK_LIST_FIELDS = ("license", "node", "redis", "commercial")
FRAMEWORK_STATUS_FIELDS = ("license", "licenseNote", "commercial", "node", "redis")
PACKAGE_LIST_FACTS = ("version", "license", "node", "released", "deprecated")
PACKAGE_STATUS_FIELDS = (
    "name",
    "scoped",
    "version",
    "license",
    "node",
    "released",
    "firstRelease",
    "releases",
    "majors",
    "deprecated",
    "install",
    "docs",
    "npm",
    "repo",
    "summary",
)


def _feed_packages(status: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The feed's package records keyed by scoped name; refuses a feed of another shape."""
    packages = status.get("packages")
    framework = status.get("framework")
    if not isinstance(packages, list) or not isinstance(framework, Mapping):
        raise CatalogueError(
            "imqueue.org/status.json has no 'packages' list or 'framework' object; "
            f"see {STATUS_PAGE} instead."
        )
    by_name: dict[str, Mapping[str, Any]] = {}
    for record in packages:
        if isinstance(record, Mapping) and isinstance(record.get("name"), str):
            scoped = record.get("scoped") or SCOPE + record["name"]
            by_name[str(scoped).lower()] = record
    return by_name


def _pick(record: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    return {field: record.get(field) for field in fields}


def merge_status(catalogue: Sequence[CatalogueEntry], status: Mapping[str, Any] | None) -> dict[str, Any]:
    """The list_packages result: the catalogue, with status.json facts when there are any.

    With ``status`` None (feed unreachable) or malformed, every fact field is absent and
    ``factsUnavailable`` is True. A package the feed publishes but this build does not
    know yet is appended from the feed, so a new release is never hidden.
    """
    try:
        feed = _feed_packages(status) if status is not None else None
    except CatalogueError:
        feed = None
    packages = [_listed_package(entry, feed) for entry in catalogue]
    if feed is None or status is None:
        return {"packages": packages, "factsUnavailable": True}
    known = {entry.name.lower() for entry in catalogue}
    for scoped, record in feed.items():
        if scoped not in known and scoped not in EXCLUDED_PACKAGES:
            entry = CatalogueEntry(scoped, str(record.get("summary") or ""), f"npm install {scoped}")
            packages.append(_listed_package(entry, feed))
    return {"packages": packages, "framework": _pick(status["framework"], FRAMEWORK_LIST_FIELDS)}


def _listed_package(entry: CatalogueEntry, feed: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Any]:
    listed: dict[str, Any] = {"name": entry.name, "install": entry.install, "summary": entry.summary}
    record = feed.get(entry.name.lower()) if feed is not None else None
    if record is not None:
        listed.update(_pick(record, PACKAGE_LIST_FACTS))
    pick = pick_rule(entry.name)
    if pick:
        listed["pick"] = pick
    return listed


def package_status(status: Mapping[str, Any], package: str | None = None) -> dict[str, Any]:
    """The package_status result for one package, or for every package in the feed.

    Covers everything status.json lists, @imqueue/cli and @imqueue/mcp included. There
    is deliberately no compiled-in fallback: the caller reports an unreachable feed.
    """
    feed = _feed_packages(status)
    if package is None:
        records = list(feed.values())
    else:
        wanted = normalize_package(package)
        if wanted not in feed:
            known = ", ".join(sorted(feed))
            raise CatalogueError(
                f"Unknown package {wanted!r}. Known packages: {known}. "
                "Omit the package argument to get all of them."
            )
        records = [feed[wanted]]
    return {
        "framework": _pick(status["framework"], FRAMEWORK_STATUS_FIELDS),
        "packages": [_pick(record, PACKAGE_STATUS_FIELDS) for record in records],
        "generated": status.get("generated"),
        "source": status.get("source"),
    }


# --- markdown ------------------------------------------------------------------------


def _fact(value: Any) -> str:
    if value is None:
        return "not stated"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)
    return str(value)


def render_packages_markdown(data: Mapping[str, Any]) -> str:
    """Markdown for a list_packages result, built only from that result."""
    parts = ["# @imqueue packages"]
    if data.get("factsUnavailable") and data.get("factsNote"):  # why, and what helps (offline or not)
        parts.append(
            "**Versions, licences and Node requirements are unavailable**: "
            f"{data['factsNote']} A missing version here means unknown, not unversioned."
        )
    elif data.get("factsUnavailable"):
        parts.append(
            "**Versions, licences and Node requirements are unavailable**: imqueue.org/status.json "
            "could not be read. A missing version here means unknown, not unversioned; retry "
            f"package_status later or read {STATUS_PAGE}."
        )
    framework = data.get("framework")
    if framework:
        parts.append(
            f"Framework: licence {framework['license']} (commercial licence: {framework['commercial']}); "
            f"Node.js {framework['node']}; Redis {framework['redis']}."
        )
    lines = []
    for package in data["packages"]:
        lines.append(f"- **{package['name']}**{_version_suffix(package)}: {package['summary']}")
        lines.append(f"  Install: `{package['install']}`")
        if "license" in package:
            lines.append(
                f"  Licence {_fact(package['license'])}; Node {_fact(package['node'])}; "
                f"released {_fact(package['released'])}"
                + ("; **deprecated**" if package.get("deprecated") else "")
            )
        if package.get("pick"):
            lines.append(f"  Pick: {package['pick']}")
    parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


def _version_suffix(package: Mapping[str, Any]) -> str:
    version = package.get("version")
    return f" {version}" if version else ""


def render_status_markdown(data: Mapping[str, Any]) -> str:
    """Markdown for a package_status result, built only from that result."""
    framework = data["framework"]
    parts = [
        "# @imqueue package status",
        f"Read from {data['source']}, generated {data['generated']}.",
        "## Framework\n\n"
        f"- Licence: {framework['licenseNote'] or framework['license']}\n"
        f"- Commercial licence: {framework['commercial']}\n"
        f"- Node.js: {framework['node']}\n"
        f"- Redis: {framework['redis']}",
    ]
    packages = data["packages"]
    if len(packages) == 1:
        parts.append(_package_detail(packages[0]))
    else:
        rows = [
            "| Package | Version | Licence | Node | Released | Deprecated |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        rows += [
            f"| {p['scoped']} | {_fact(p['version'])} | {_fact(p['license'])} | {_fact(p['node'])} "
            f"| {_fact(p['released'])} | {_fact(p['deprecated'])} |"
            for p in packages
        ]
        parts.append("## Packages\n\n" + "\n".join(rows))
    return "\n\n".join(parts) + "\n"


def _package_detail(package: Mapping[str, Any]) -> str:
    labels = (
        ("Version", "version"),
        ("Licence", "license"),
        ("Node", "node"),
        ("Released", "released"),
        ("First release", "firstRelease"),
        ("Releases", "releases"),
        ("Majors", "majors"),
        ("Deprecated", "deprecated"),
        ("Install", "install"),
        ("Docs", "docs"),
        ("npm", "npm"),
        ("Repository", "repo"),
    )
    lines = [f"## {package['scoped']}", "", _fact(package["summary"]), ""]
    lines += [f"- {label}: {_fact(package[field])}" for label, field in labels]
    return "\n".join(lines)


def api_page_package(url: str) -> str | None:
    """'@imqueue/datadog' for https://imqueue.org/api/datadog/latest/...; None for other pages."""
    if not url.startswith(API_PREFIX):
        return None
    name = url[len(API_PREFIX) :].split("/", 1)[0].split("#", 1)[0]
    return SCOPE + name if name and name != "faq" and "." not in name else None

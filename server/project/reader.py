"""The user's project: which @imqueue packages it uses, at which versions, and what the docs require.

Pure logic over the user's files: no MCP, no network. The local server passes in where to look
(the client's roots, else its working directory) and the status.json facts it has.

    find_project(folders)        the first folder (or a parent of it) holding a package.json
    read_project(root)           package.json ranges, the lockfile's and node_modules' versions,
                                 tsconfig.json (JSON with comments and trailing commas, `extends`
                                 followed): a Project; never raises on a malformed file, it
                                 records the problem instead
    parse_jsonc(text)            JSON with // and /* */ comments and trailing commas
    inspect(project, status)     the project beside the documented versions, and the findings:
                                 each an id, a message and the doc URL that states the rule.
                                 The TypeScript advice follows the major the project runs
                                 (framework_major): 1.x and 2.x compile with legacy decorators,
                                 3.x with standard ones as ES modules; advice for the other
                                 major would break the build of the project inspected
    major_mismatches(...)        the packages the project uses at another major than documented
    version_note(...)            those as the one line other tools' results carry

Versions, in order of trust: node_modules/@imqueue/NAME/package.json (what runs), the lockfile
(what installs), the package.json range (what was asked for; its lowest major).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from imqueue_mcp.server.catalogue.packages import EXCLUSIVE_PAIRS
from imqueue_mcp.server.user_files import MANIFEST_BYTES, FileTooLarge, NotARegularFile, read_text_capped

SCOPE = "@imqueue/"
DEPENDENCY_FIELDS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
MAX_FILE_BYTES = MANIFEST_BYTES  # a package.json or lockfile larger than this is not read
MAX_EXTENDS = 8  # tsconfig `extends` chains longer than this are cut (and said so)

# Where the docs state each requirement (canonical URLs; the pages are in the site mirror).
URL_EXCLUSIVE = "https://imqueue.org/status/#the-packages"
URL_PREREQUISITES = "https://imqueue.org/get-started/#prerequisites"
URL_DECORATORS = "https://imqueue.org/api/#standard-decorators-and-tsconfig"
URL_DOC_BLOCKS = "https://imqueue.org/api/#the-importance-of-doc-blocks"
URL_MIGRATION = "https://imqueue.org/api/#migration-from-2-x-to-3-x"
URL_STATUS = "https://imqueue.org/status/"
URL_ESM = "https://imqueue.org/api/#es-modules-and-node"
URL_OVERRIDES = "https://docs.npmjs.com/cli/v10/configuring-npm/package-json#overrides"

# The framework spine, whose major changes the migration guide covers.
SPINE = frozenset({"@imqueue/core", "@imqueue/rpc"})
# Standard decorators' metadata types: in `lib`, either entry brings them.
DECORATOR_LIBS = frozenset({"esnext.decorators", "esnext", "esnext.full"})
REDIS_FLOOR = "6.2 or newer (3.2 only if safeDelivery stays off)"
# From this major on @imqueue compiles with standard (TC39) decorators as native ES modules;
# below it (rpc 1.x on core 1.x/2.x) with legacy experimentalDecorators, as CommonJS.
STANDARD_DECORATORS_MAJOR = 3
COMMONJS_MODULES = frozenset(
    {"commonjs", "umd", "amd", "system", "none"}
)  # tsconfig "module"s that are not ESM
# Where one of these builds the project, its "bundler" module resolution is the bundler's business;
# where tsc's output runs on Node, a relative import without .js that it accepts fails at run time.
BUNDLERS = frozenset(
    {"esbuild", "webpack", "rollup", "vite", "tsup", "parcel", "@vercel/ncc", "@rspack/core", "rolldown"}
)
_RUNS_TYPESCRIPT = re.compile(r"(?<![\w-])(?:tsc|ts-node(?:-esm)?|tsx)(?![\w-])")  # a package.json script
NODE_UNSAFE_RESOLUTIONS = frozenset({"bundler", "node", "node10", "classic"})
MAX_NESTED_FOLDERS = 5000  # node_modules folders looked into for nested @imqueue copies
# What a report repeats of the user's files is bounded, whatever the files hold: a value (a
# name, range or version) at npm's 214 characters, and so many packages, copies and problems.
MAX_VALUE = 214
MAX_PACKAGES = 100
MAX_COPIES = 20
MAX_PROBLEMS = 20


def _bounded(text: str) -> str:
    """A value from the user's files, cut to MAX_VALUE characters with a visible mark."""
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


class ProjectError(ValueError):
    """A path given to inspect_project that cannot be inspected; the message says what to pass."""


# --- reading files -------------------------------------------------------------------


def parse_jsonc(text: str) -> Any:
    """JSON with // and /* */ comments and trailing commas, as tsconfig.json allows.

    Raises ValueError (json.JSONDecodeError) when what is left is still not JSON."""
    out: list[str] = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < length and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[index : end + 1])
            index = end + 1
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = length if newline < 0 else newline
        elif text.startswith("/*", index):
            close = text.find("*/", index + 2)
            index = length if close < 0 else close + 2
        else:
            out.append(char)
            index += 1
    cleaned = re.sub(r",(\s*[}\]])", r"\1", "".join(out))
    return json.loads(cleaned)


def _names_a_file(path: Path) -> bool:
    """Something that is not a folder is there: a package.json that is a device or a FIFO
    still marks the project, and reading it says what it is (files.py)."""
    try:
        return path.exists() and not path.is_dir()
    except (OSError, ValueError):
        return False


def _is_file(path: Path) -> bool:
    """Path.is_file, with an unreadable folder or a refused name read as "no such file"."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _read_json(path: Path, *, tolerant: bool = False) -> tuple[Any, str]:
    """(parsed, "") or (None, why not). Never raises, nor blocks, for a missing, huge or malformed
    file, a device or a FIFO (server/user_files.py: regular files only, the cap held while reading)."""
    try:
        text = read_text_capped(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return None, ""
    except FileTooLarge:
        return None, f"{path} is over {MAX_FILE_BYTES // (1024 * 1024)} MB; not read"
    except NotARegularFile as error:
        return None, str(error)
    except (OSError, UnicodeDecodeError) as error:
        return None, f"{path} could not be read ({getattr(error, 'strerror', None) or error})"
    try:
        return (parse_jsonc(text) if tolerant else json.loads(text)), ""
    except ValueError as error:
        return None, f"{path} is not valid JSON ({error})"


# --- the project ---------------------------------------------------------------------


@dataclass(frozen=True)
class UsedPackage:
    name: str  # @imqueue/...
    declared: str | None  # the package.json range
    locked: str | None  # the lockfile's version
    installed: str | None  # node_modules/@imqueue/NAME/package.json's version

    @property
    def version(self) -> str | None:
        """The most trustworthy version known: installed, else locked, else the range."""
        return self.installed or self.locked or self.declared

    @property
    def major(self) -> int | None:
        return major_of(self.installed or self.locked or "") or lowest_major(self.declared or "")


@dataclass
class Project:
    root: Path
    packages: list[UsedPackage] = field(default_factory=list)
    engines_node: str | None = None
    tsconfig: Path | None = None
    compiler_options: dict[str, Any] = field(default_factory=dict)
    module_type: str | None = None  # package.json "type"
    bundled: bool = False  # package.json declares a bundler, which resolves imports itself
    typescript: bool = False  # package.json declares typescript, or a script runs tsc / ts-node / tsx
    commonjs: list[str] = field(default_factory=list)  # "src/x.ts:3 require(": CommonJS-only code
    # every copy of each @imqueue package in node_modules, nested ones too: name -> [(folder, version)]
    copies: dict[str, list[tuple[Path, str]]] = field(default_factory=dict)
    lockfile: Path | None = None
    problems: list[str] = field(default_factory=list)  # files that could not be read, and why
    sources: list[Path] = field(default_factory=list)  # every file and folder consulted

    def uses(self, name: str) -> UsedPackage | None:
        return next((package for package in self.packages if package.name == name), None)


def find_root(folders: Sequence[Path]) -> Path | None:
    """The first of `folders` (or the nearest parent of one) holding a package.json."""
    for folder in folders:
        try:
            start = folder.expanduser().resolve()
        except (OSError, RuntimeError):
            continue
        for candidate in (start, *start.parents):
            if _names_a_file(candidate / "package.json"):
                return candidate
    return None


def find_project(folders: Sequence[Path]) -> Project | None:
    """The project at find_root(folders), read; None when there is none."""
    root = find_root(folders)
    return read_project(root) if root is not None else None


class ProjectReader:
    """find_project, reading a project again only when a file it consulted changed.

    Other tools' version notes look the project up on every call; a lockfile of a few MB
    is worth parsing once, not once per search."""

    def __init__(self) -> None:
        self._read: dict[Path, tuple[tuple[Any, ...], Project]] = {}

    def find(self, folders: Sequence[Path]) -> Project | None:
        root = find_root(folders)
        if root is None:
            return None
        cached = self._read.get(root)
        if cached is not None and cached[0] == _signature(cached[1].sources):
            return cached[1]
        project = read_project(root)
        self._read[root] = (_signature(project.sources), project)
        return project


def _signature(paths: Sequence[Path]) -> tuple[Any, ...]:
    """What changes when any of `paths` is written, added, replaced or removed."""
    marks: list[Any] = []
    for path in paths:
        try:
            info = path.stat()
            marks.append((str(path), info.st_mtime_ns, info.st_size, info.st_ino))
        except OSError:
            marks.append((str(path), None))
    return tuple(marks)


def read_project(root: Path) -> Project:
    project = Project(root=root)
    scope = root / "node_modules" / "@imqueue"
    project.sources = [root / "package.json", root / "package-lock.json", root / "tsconfig.json", scope]
    manifest, problem = _read_json(root / "package.json")
    if problem:
        project.problems.append(problem)
    if not isinstance(manifest, dict):
        if manifest is not None:
            project.problems.append(f"{root / 'package.json'} is not a JSON object")
        manifest = {}
    declared = _declared_ranges(manifest)
    locked = _locked_versions(root, project)
    # The packages it declares: a transitive one (core under rpc) is not the project's choice.
    installed = _installed_versions(root, set(declared), project)
    project.packages = [
        UsedPackage(name, declared[name], locked.get(name), installed.get(name)) for name in sorted(declared)
    ]
    engines = manifest.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("node"), str):
        project.engines_node = _bounded(engines["node"])
    if isinstance(manifest.get("type"), str):
        project.module_type = manifest["type"]
    project.bundled = any(
        isinstance(manifest.get(field), dict) and not BUNDLERS.isdisjoint(manifest[field])
        for field in DEPENDENCY_FIELDS
    )
    scripts = manifest.get("scripts")
    project.typescript = any(
        isinstance(manifest.get(field), dict) and "typescript" in manifest[field]
        for field in DEPENDENCY_FIELDS
    ) or (
        isinstance(scripts, dict)
        and any(isinstance(line, str) and _RUNS_TYPESCRIPT.search(line) for line in scripts.values())
    )
    project.copies = installed_copies(root)
    project.sources.append(root / "node_modules")
    _read_tsconfig(root, project)
    project.commonjs = _commonjs_code(root, project)
    return project


# What exists only in CommonJS: in an ES module each is a ReferenceError at run time, after a clean
# build ("require is not defined in ES module scope"). imq's own template uses the first two.
_COMMONJS_ONLY = re.compile(
    r"\brequire\s*\(|\bmodule\.(?:parent|exports)\b|(?<![\w.])exports\.\w+\s*=|\b__dirname\b|\b__filename\b"
)
_CREATES_REQUIRE = "createRequire("  # an ES module's own require: its calls are fine
MAX_CODE_FILES = 200
MAX_COMMONJS_SHOWN = 8


def _commonjs_code(root: Path, project: Project) -> list[str]:
    """Where the project's own TypeScript (its root's .ts files and src/) uses CommonJS-only code:
    "path:line what", at most MAX_COMMONJS_SHOWN. The files read join project.sources."""
    files = sorted(itertools.islice(root.glob("*.ts"), MAX_CODE_FILES))
    files += sorted(itertools.islice((root / "src").rglob("*.ts"), MAX_CODE_FILES - len(files)))
    found: list[str] = []
    for path in files:
        if path.name.endswith(".d.ts") or "node_modules" in path.parts:
            continue
        try:
            text = read_text_capped(path, MANIFEST_BYTES, errors="replace")
        except (OSError, ValueError, FileTooLarge, NotARegularFile):
            continue
        project.sources.append(path)
        for number, line in enumerate(text.splitlines(), start=1):
            code = line.split("//", 1)[0]
            if code.lstrip().startswith("*"):
                continue
            match = _COMMONJS_ONLY.search(code)
            if match is None or (match.group().startswith("require") and _CREATES_REQUIRE in text):
                continue
            found.append(f"{path.relative_to(root).as_posix()}:{number} {match.group().strip()}")
            if len(found) >= MAX_COMMONJS_SHOWN:
                return found
    return found


def _declared_ranges(manifest: Mapping[str, Any]) -> dict[str, str]:
    ranges: dict[str, str] = {}
    for section in DEPENDENCY_FIELDS:
        entries = manifest.get(section)
        if isinstance(entries, dict):
            for name, spec in entries.items():
                if (
                    isinstance(name, str)
                    and name.startswith(SCOPE)
                    and len(name) <= MAX_VALUE
                    and name not in ranges
                    and len(ranges) < MAX_PACKAGES
                ):
                    ranges[name] = _bounded(spec if isinstance(spec, str) else json.dumps(spec))
    return ranges


def _locked_versions(root: Path, project: Project) -> dict[str, str]:
    """The top-level @imqueue versions of package-lock.json (lockfile v1, v2 or v3)."""
    path = root / "package-lock.json"
    lock, problem = _read_json(path)
    if problem:
        project.problems.append(problem)
    if not isinstance(lock, dict):
        return {}
    project.lockfile = path
    versions: dict[str, str] = {}
    packages = lock.get("packages")
    if isinstance(packages, dict):  # v2, v3: "node_modules/@imqueue/rpc": {"version": ...}
        for key, entry in packages.items():
            name = key.removeprefix("node_modules/")
            if name.startswith(SCOPE) and "/node_modules/" not in key and isinstance(entry, dict):
                if isinstance(entry.get("version"), str):
                    versions[name] = _bounded(entry["version"])
    dependencies = lock.get("dependencies")
    if not versions and isinstance(dependencies, dict):  # v1: "@imqueue/rpc": {"version": ...}
        for name, entry in dependencies.items():
            if name.startswith(SCOPE) and isinstance(entry, dict) and isinstance(entry.get("version"), str):
                versions[name] = _bounded(entry["version"])
    return versions


def _installed_versions(root: Path, wanted: set[str], project: Project) -> dict[str, str]:
    versions: dict[str, str] = {}
    scope = root / "node_modules" / "@imqueue"
    try:
        folders = sorted(scope.iterdir()) if scope.is_dir() else []
    except OSError:
        return versions
    for folder in folders:
        name = SCOPE + folder.name
        if name not in wanted:
            continue
        manifest, problem = _read_json(folder / "package.json")
        if problem:
            project.problems.append(problem)
        project.sources.append(folder / "package.json")
        if isinstance(manifest, dict) and isinstance(manifest.get("version"), str):
            versions[name] = _bounded(manifest["version"])
    return versions


def installed_copies(root: Path) -> dict[str, list[tuple[Path, str]]]:
    """Every @imqueue package folder under node_modules with its version, nested copies too
    (node_modules/@imqueue/rpc/node_modules/@imqueue/core): two copies of core at different
    versions mean rpc runs on another core than the project."""
    top = root / "node_modules"
    holders = [top]
    try:
        entries = sorted(top.iterdir()) if top.is_dir() else []
    except OSError:
        entries = []
    for entry in entries[:MAX_NESTED_FOLDERS]:
        packages = [entry]
        if entry.name.startswith("@"):
            try:
                packages = sorted(entry.iterdir())[:MAX_NESTED_FOLDERS]
            except OSError:
                packages = []
        holders += [package / "node_modules" for package in packages]
    copies: dict[str, list[tuple[Path, str]]] = {}
    for holder in holders:
        scope = holder / "@imqueue"
        try:
            folders = sorted(scope.iterdir()) if scope.is_dir() else []
        except OSError:
            continue
        for folder in folders:
            manifest, _ = _read_json(folder / "package.json")
            name = SCOPE + folder.name
            if not isinstance(manifest, dict) or not isinstance(manifest.get("version"), str):
                continue
            if len(copies.get(name, ())) < MAX_COPIES and (name in copies or len(copies) < MAX_PACKAGES):
                copies.setdefault(name, []).append((folder, _bounded(manifest["version"])))
    return copies


def _read_tsconfig(root: Path, project: Project) -> None:
    """compilerOptions of tsconfig.json with its `extends` chain applied (the file's own win)."""
    own = root / "tsconfig.json"
    if not _names_a_file(own):
        return
    project.tsconfig = own
    path: Path | None = own
    chain: list[dict[str, Any]] = []
    seen: set[Path] = set()
    while path is not None and len(chain) < MAX_EXTENDS and path not in seen:
        seen.add(path)
        if path != own:
            project.sources.append(path)
        config, problem = _read_json(path, tolerant=True)
        if problem or not isinstance(config, dict):
            project.problems.append(problem or f"{path} is not a JSON object")
            break
        options = config.get("compilerOptions")
        chain.append(options if isinstance(options, dict) else {})
        path = _extended(path, config.get("extends"), root, project)
    for options in reversed(chain):
        project.compiler_options.update(options)


def _extended(path: Path, extends: Any, root: Path, project: Project) -> Path | None:
    if isinstance(extends, list):  # TypeScript 5: several bases; the last one wins, read it
        extends = extends[-1] if extends else None
    if not isinstance(extends, str) or not extends:
        return None
    try:
        target = (
            (path.parent / extends).resolve() if extends.startswith(".") else root / "node_modules" / extends
        )
        candidates = [target, target.with_name(target.name + ".json"), target / "tsconfig.json"]
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a name the OS refuses
        candidates = []
    for candidate in candidates:
        if _is_file(candidate):
            return candidate
    project.problems.append(f"{path} extends {extends!r}, which was not found; its options are not known")
    return None


# --- versions ------------------------------------------------------------------------


def major_of(version: str) -> int | None:
    """1 for '1.4.2' or 'v1.4'; None for anything without a leading number."""
    match = re.match(r"\s*[v=]?\s*(\d+)(?:\.|$|\s|-)", version)
    return int(match.group(1)) if match else None


def lowest_major(spec: str) -> int | None:
    """The lowest major a package.json range admits: '^1.2.0' -> 1, '>=2 <4' -> 2, '*' -> None."""
    if not spec or spec.split(":", 1)[0] in ("file", "link", "git", "git+https", "git+ssh", "github", "npm"):
        return None
    majors = [int(number) for number in re.findall(r"(?:^|[\s|^~>=<v])(\d+)(?=\.|\s|$|x|\*)", spec)]
    return min(majors) if majors else None


def documented_versions(status: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    """status.json's package records by scoped name."""
    records: dict[str, Mapping[str, Any]] = {}
    packages = status.get("packages") if isinstance(status, Mapping) else None
    for record in packages if isinstance(packages, list) else []:
        if isinstance(record, Mapping) and isinstance(record.get("version"), str):
            scoped = record.get("scoped") or SCOPE + str(record.get("name"))
            records[str(scoped).lower()] = record
    return records


@dataclass(frozen=True)
class Mismatch:
    package: str
    used: str  # the project's version (or range)
    used_major: int
    documented: str
    documented_major: int

    def phrase(self) -> str:
        return f"{self.package} {self.used} (major {self.used_major}), the docs describe {self.documented}"


def major_mismatches(
    project: Project, status: Mapping[str, Any] | None, packages: Iterable[str] | None = None
) -> list[Mismatch]:
    """The packages (all, or those named) the project uses at another major than documented."""
    documented = documented_versions(status)
    wanted = None if packages is None else set(packages)
    found = []
    for used in project.packages:
        if wanted is not None and used.name not in wanted:
            continue
        record = documented.get(used.name)
        documented_major = major_of(str(record["version"])) if record else None
        if used.major is None or documented_major is None or record is None:
            continue
        if used.major != documented_major:
            found.append(
                Mismatch(used.name, str(used.version), used.major, str(record["version"]), documented_major)
            )
    return found


def version_note(mismatches: Sequence[Mismatch]) -> str | None:
    """One line naming both versions of each mismatched package, or None."""
    if not mismatches:
        return None
    return (
        "Your project uses "
        + "; ".join(item.phrase() for item in mismatches)
        + (": check the docs against the version you run.")
    )


# --- the findings --------------------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    id: str
    message: str
    url: str
    package: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "message": self.message, "url": self.url}
        if self.package:
            data["package"] = self.package
        return data


def inspect(project: Project, status: Mapping[str, Any] | None) -> dict[str, Any]:
    """The inspect_project result: the packages beside the documented versions, and the findings."""
    documented = documented_versions(status)
    packages = []
    for used in project.packages:
        record = documented.get(used.name)
        entry: dict[str, Any] = {
            "name": used.name,
            "declared": used.declared,
            "locked": used.locked,
            "installed": used.installed,
            "major": used.major,
            "documented": str(record["version"]) if record else None,
        }
        packages.append(entry)
    findings = [
        *_exclusive_findings(project),
        *_version_findings(project, status),
        *_node_findings(project, status),
        *_typescript_findings(project),
        *_duplicate_findings(project, {m.package for m in major_mismatches(project, status)}),
    ]
    framework = status.get("framework") if isinstance(status, Mapping) else None
    redis = str(framework.get("redis")) if isinstance(framework, Mapping) and framework.get("redis") else None
    return {
        "root": str(project.root),
        "packageJson": str(project.root / "package.json"),
        "lockfile": str(project.lockfile) if project.lockfile else None,
        "tsconfig": str(project.tsconfig) if project.tsconfig else None,
        "packages": packages,
        "framework": {
            "major": framework_major(project),
            "decorators": decorator_style(framework_major(project)),
        },
        "copies": {
            name: [{"path": str(folder), "version": version} for folder, version in copies]
            for name, copies in sorted(project.copies.items())
            if len({version for _, version in copies}) > 1
        },
        "node": {"declared": project.engines_node, "floor": _node_floor_text(status)},
        "redis": {
            "required": redis or REDIS_FLOOR,
            "url": URL_PREREQUISITES,
            "checked": False,
            "note": "Redis runs beside the project, so it is not checked here: make sure the server "
            "your services connect to is that version.",
        },
        "findings": [finding.to_dict() for finding in findings],
        "problems": _bounded_problems(project.problems),
    }


def _bounded_problems(problems: Sequence[str]) -> list[str]:
    kept = list(problems[:MAX_PROBLEMS])
    if len(problems) > MAX_PROBLEMS:
        kept.append(f"... and {len(problems) - MAX_PROBLEMS} more files not read")
    return kept


def _exclusive_findings(project: Project) -> list[Finding]:
    findings = []
    for pair in EXCLUSIVE_PAIRS:
        names = {pair.aliases.get(used.name, used.name) for used in project.packages}
        if pair.default in names and pair.alternative in names:
            findings.append(
                Finding(
                    "exclusive-pair",
                    f"Both {pair.default} and {pair.alternative} are dependencies: they are mutually "
                    f"exclusive ({pair.reason}). Keep one: {pair.default} {pair.choose_default}; "
                    f"{pair.alternative} {pair.choose_alternative}.",
                    URL_EXCLUSIVE,
                )
            )
    return findings


def _version_findings(project: Project, status: Mapping[str, Any] | None) -> list[Finding]:
    documented = documented_versions(status)
    findings = []
    for mismatch in major_mismatches(project, status):
        record = documented[mismatch.package]
        behind = mismatch.used_major < mismatch.documented_major
        url = URL_MIGRATION if mismatch.package in SPINE and behind else str(record.get("docs") or URL_STATUS)
        findings.append(
            Finding(
                "other-major",
                f"{mismatch.package} is at {mismatch.used} (major {mismatch.used_major}), but the docs "
                f"describe {mismatch.documented} (major {mismatch.documented_major}): "
                + _other_major_change(project, mismatch),
                url,
                mismatch.package,
            )
        )
    return findings


def _other_major_change(project: Project, mismatch: Mismatch) -> str:
    """What to change for a package at another major. Newer than the docs: nothing to align, the
    pages describe an older release. Older, and the framework (rpc, else core) already runs the
    documented major, or the project has no framework: align that package alone. Otherwise the
    whole project is on an older major, and moving one package alone would break it."""
    if mismatch.used_major > mismatch.documented_major:
        return (
            f"the installed release is newer than the docs, whose API pages describe {mismatch.documented}. "
            f"Read node_modules/{mismatch.package}'s README and changelog for what changed; api_diff "
            "lists the declarations that differ from the pages."
        )
    framework = framework_major(project)
    declared = project.uses(mismatch.package)
    aligns_alone = mismatch.package != _framework_package(project) and (
        framework is None or framework == mismatch.documented_major
    )
    if aligns_alone and declared is not None and declared.declared is not None:
        why = (
            f"the rest of the project runs @imqueue {framework}.x, and {mismatch.package} "
            f"{mismatch.used_major}.x does not work with it."
            if framework is not None
            else f"the docs' examples are written for {mismatch.documented_major}.x."
        )
        return (
            f'set "{mismatch.package}": "^{mismatch.documented}" in package.json\'s dependencies and run '
            f"npm install: {why}"
        )
    return (
        "the API pages may not match the code you run. Upgrade @imqueue/rpc and @imqueue/core "
        "together, with the tsconfig changes the migration guide lists; until then keep the settings "
        "the installed major needs."
    )


def _framework_package(project: Project) -> str | None:
    """The package framework_major() reads the major from."""
    for name in ("@imqueue/rpc", "@imqueue/core"):
        used = project.uses(name)
        if used is not None and used.major is not None:
            return name
    return None


def _node_floor_text(status: Mapping[str, Any] | None) -> str | None:
    framework = status.get("framework") if isinstance(status, Mapping) else None
    node = framework.get("node") if isinstance(framework, Mapping) else None
    return str(node) if node else None


def _version_tuple(text: str) -> tuple[int, ...] | None:
    match = re.search(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    if not match:
        return None
    return tuple(int(part) for part in match.groups(default="0"))


def _node_findings(project: Project, status: Mapping[str, Any] | None) -> list[Finding]:
    """engines.node must not admit a Node.js older than the documented floor."""
    floor_text = _node_floor_text(status)
    floor = _version_tuple(floor_text or "")
    if not project.engines_node or floor is None:
        return []
    lows = [
        version
        for part in project.engines_node.split("||")
        if (version := _version_tuple(part.strip().lstrip("^~>=v "))) is not None
    ]
    if not lows or min(lows) >= floor:
        return []
    return [
        Finding(
            "node-floor",
            f"engines.node is {project.engines_node!r}, which admits Node.js older than the documented "
            f'floor ({floor_text}): raise it to ">={".".join(map(str, floor))}".',
            URL_PREREQUISITES,
        )
    ]


def framework_major(project: Project) -> int | None:
    """The @imqueue major the project's code compiles against: rpc's, else core's."""
    name = _framework_package(project)
    used = project.uses(name) if name is not None else None
    return used.major if used is not None else None


def decorator_style(major: int | None) -> str | None:
    """'standard' (3.x on), 'legacy' (before 3.x), or None when the major is unknown."""
    if major is None:
        return None
    return "standard" if major >= STANDARD_DECORATORS_MAJOR else "legacy"


def _framework_phrase(project: Project, major: int) -> str:
    used = project.uses("@imqueue/rpc") or project.uses("@imqueue/core")
    version = used.version if used is not None else None
    return f"{used.name} {version}" if used is not None and version else f"@imqueue {major}.x"


def _typescript_findings(project: Project) -> list[Finding]:
    if project.tsconfig is None and project.typescript and project.packages:
        return [_no_tsconfig(project)]
    if project.tsconfig is None or not project.packages:
        return []
    options = {str(key).lower(): value for key, value in project.compiler_options.items()}
    findings = []
    if options.get("removecomments") is True:
        findings.append(
            Finding(
                "remove-comments",
                "tsconfig.json sets removeComments: true, so the doc-blocks of exposed methods are "
                "stripped and the client generator sees no types: set removeComments: false.",
                URL_DOC_BLOCKS,
            )
        )
    major = framework_major(project)
    style = decorator_style(major)
    if style == "legacy" and major is not None:
        findings += _legacy_findings(project, options, major)
    elif style == "standard" and major is not None:
        findings += _standard_findings(project, options, major)
    return findings


def _no_tsconfig(project: Project) -> Finding:
    """A TypeScript project without tsconfig.json: tsc builds nothing, and nothing could be checked."""
    major = framework_major(project)
    style = decorator_style(major)
    needs = (
        "experimentalDecorators and emitDecoratorMetadata true"
        if style == "legacy"
        else 'module and moduleResolution "nodenext", lib with "esnext.decorators", removeComments '
        "false and no experimentalDecorators (scaffold_service shows the whole file)"
    )
    framework = _framework_phrase(project, major) if major is not None else "@imqueue"
    return Finding(
        "no-tsconfig",
        "The project builds with TypeScript but has no tsconfig.json at its root: tsc then compiles "
        f"nothing (it prints its help), and the settings {framework} needs were not checked. Add "
        f"one with {needs}.",
        URL_MIGRATION if style == "legacy" else URL_DECORATORS,
    )


def _legacy_findings(project: Project, options: Mapping[str, Any], major: int) -> list[Finding]:
    """Before 3.x the decorators are the legacy ones: turning them off breaks the build (TS1241)."""
    framework = _framework_phrase(project, major)
    missing = [
        name
        for option, name in (
            ("experimentaldecorators", "experimentalDecorators"),
            ("emitdecoratormetadata", "emitDecoratorMetadata"),
        )
        if options.get(option) is not True
    ]
    if not missing:
        return []
    return [
        Finding(
            "legacy-decorators-off",
            f"{framework} is what this project runs, and it uses legacy decorators: set "
            + " and ".join(f"{name}: true" for name in missing)
            + " in tsconfig.json (without them its decorators fail to compile, e.g. TS1241). "
            "The standard-decorator settings the docs show are for @imqueue 3.x: change the "
            "tsconfig only together with the upgrade, as the migration guide describes.",
            URL_MIGRATION,
        )
    ]


def _standard_findings(project: Project, options: Mapping[str, Any], major: int) -> list[Finding]:
    framework = _framework_phrase(project, major)
    findings = []
    for option, name in (
        ("experimentaldecorators", "experimentalDecorators"),
        ("emitdecoratormetadata", "emitDecoratorMetadata"),
    ):
        if options.get(option) is True:
            findings.append(
                Finding(
                    "legacy-decorators",
                    f"tsconfig.json sets {name}: true; {framework} uses standard (TC39) decorators: "
                    "remove it.",
                    URL_DECORATORS,
                )
            )
    lib = options.get("lib")
    if isinstance(lib, list):
        has_metadata = any(isinstance(entry, str) and entry.lower() in DECORATOR_LIBS for entry in lib)
    else:  # no lib: TypeScript's default follows target, which brings them only for esnext
        has_metadata = str(options.get("target", "")).lower() == "esnext"
    if not has_metadata:
        findings.append(
            Finding(
                "decorators-lib",
                'tsconfig.json\'s lib lacks "esnext.decorators", the standard-decorators metadata types '
                f'{framework} needs: add it (e.g. "lib": ["es2024", "esnext.decorators"]).',
                URL_DECORATORS,
            )
        )
    module = str(options.get("module", "")).lower()
    wrong = []
    if project.module_type != "module":
        wrong.append('package.json has no "type": "module"')
    if module in COMMONJS_MODULES:
        wrong.append(f"tsconfig.json compiles to {options.get('module')!r} modules")
    resolution = str(options.get("moduleresolution", "")).lower()
    if resolution in NODE_UNSAFE_RESOLUTIONS and not project.bundled and module not in COMMONJS_MODULES:
        wrong.append(
            f"tsconfig.json resolves imports as {options.get('moduleresolution')!r}, which accepts a "
            "relative import without .js that Node then cannot find at run time (ERR_MODULE_NOT_FOUND)"
        )
    if project.commonjs:
        findings.append(
            Finding(
                "commonjs-code",
                f"{framework} runs as an ES module, where CommonJS's globals do not exist, and this "
                f"project's code uses them ({'; '.join(project.commonjs)}): it builds, then fails at "
                "start ('require is not defined in ES module scope'). Use import (a JSON file: import "
                "pkg from '../package.json' with { type: 'json' }, or createRequire(import.meta.url)), "
                "process.argv[1] === fileURLToPath(import.meta.url) for !module.parent, "
                "import.meta.dirname for __dirname, and export for module.exports.",
                URL_ESM,
            )
        )
    if wrong:
        findings.append(
            Finding(
                "esm",
                f"{framework} ships native ES modules, and "
                + " and ".join(wrong)
                + ': set "type": "module" in package.json, "module": "nodenext" and "moduleResolution": '
                '"nodenext" in tsconfig.json, and end relative imports in .js.',
                URL_ESM,
            )
        )
    return findings


def _duplicate_findings(project: Project, other_major: set[str]) -> list[Finding]:
    """An @imqueue package installed twice at different versions (core under rpc, most often).
    A package declared at another major than documented is fixed by its other-major finding:
    an override to the declared version would force that major on the packages that need theirs."""
    findings = []
    for name, copies in sorted(project.copies.items()):
        versions = sorted({version for _, version in copies})
        if len(versions) < 2 or (name in other_major and project.uses(name) is not None):
            continue
        where = ", ".join(
            f"{version} at {folder.relative_to(project.root).as_posix()}" for folder, version in copies
        )
        top = next(
            (version for folder, version in copies if folder.parent.parent.parent == project.root), None
        )
        declared = project.uses(name) is not None
        pin = f"${name}" if declared else (top or versions[-1])
        findings.append(
            Finding(
                "duplicate-package",
                f"node_modules holds {len(copies)} copies of {name} ({where}): the packages that load "
                f"the nested one run on another {name} than the project (separate queues, options and "
                f'class checks). Make npm install one: add "overrides": {{"{name}": "{pin}"}} to '
                "package.json"
                + ("" if declared else f' (or declare {name} as a dependency and use "${name}")')
                + ", then run npm install; when the ranges overlap, npm dedupe alone does it.",
                URL_OVERRIDES,
                name,
            )
        )
    return findings

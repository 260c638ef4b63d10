"""The parts benchmarks/journeys.py acts with: the record of a journey and its hand fixes, the
server's tools over the SDK's client, the stand-in for `npm install`, a project's scripts run
as its package.json says, and the reader that turns inspect_project's advice into edits.

    Journey          steps, hand fixes (step + one-line reason), pass/fail, seconds
    Tools            call(name, args) -> Answer; has_argument(tool, name) from tools/list
    satisfies()      does a version meet an npm range (^ ~ >= < = x, spaces, ||)
    install()        lays out node_modules from the prebuilt 3.x runtime as npm would
    Project          files, package.json, tsconfig, npm scripts, a started service
    advice_edits()   the edits a finding's own words ask for; None when they ask for none

The install stand-in is the one environment step a journey does itself and never counts as a
hand fix: the registry here has no @imqueue 3.x, so what `npm install` would fetch comes from
the runtime .ci/install-imq.sh built from ../shared/vendor. It still obeys the project: each
declared @imqueue range must be met by a version on this machine (else it fails, as npm would),
and rpc gets its own nested @imqueue/core when the top one does not fit, unless `overrides`
forces one copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .stack import NODE_BIN, SERVICE_RUNTIME, stop_group

REPO = Path(__file__).resolve().parents[1]
LEGACY_RUNTIME = REPO / "tests" / "framework1" / "node_modules"  # @imqueue/core 2.0.26 (1.x era)
READY_SECONDS = 40.0


class JourneyFailed(Exception):
    """The journey cannot go on: what happened, in one line."""


@dataclass
class HandFix:
    step: str
    reason: str


@dataclass
class Journey:
    name: str
    title: str
    steps: list[str] = field(default_factory=list)
    hand_fixes: list[HandFix] = field(default_factory=list)
    passed: bool = False
    seconds: float = 0.0
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    step_seconds: list[float] = field(default_factory=list)
    _step_started: float = 0.0

    def step(self, name: str) -> None:
        self.close_step()
        self.steps.append(name)
        self._step_started = time.perf_counter()

    def close_step(self) -> None:
        """The running step's seconds, once; the next step or the journey's end closes it."""
        if len(self.step_seconds) < len(self.steps):
            self.step_seconds.append(round(time.perf_counter() - self._step_started, 2))

    def hand_fix(self, reason: str) -> None:
        """The step needed knowledge no tool gave: recorded, then the caller applies the fix."""
        self.hand_fixes.append(HandFix(self.steps[-1] if self.steps else "start", reason))

    def to_dict(self) -> dict[str, Any]:
        return {
            "journey": self.name,
            "title": self.title,
            "steps": len(self.steps),
            "step_names": self.steps,
            "step_seconds": self.step_seconds,
            "hand_fixes": [{"step": fix.step, "reason": fix.reason} for fix in self.hand_fixes],
            "hand_fix_count": len(self.hand_fixes),
            "passed": self.passed,
            "seconds": round(self.seconds, 1),
            "error": self.error,
            "notes": self.notes,
        }


# --- the server's tools ----------------------------------------------------------------


@dataclass
class Answer:
    is_error: bool
    data: dict[str, Any]
    text: str


class Tools:
    """The real server's tools through the SDK's client (an `mcp.client.Client`, entered)."""

    def __init__(self, client: Any, tools: list[Any]):
        self.client = client
        self.schemas = {tool.name: tool.input_schema for tool in tools}

    def has_argument(self, tool: str, argument: str) -> bool:
        return argument in (self.schemas.get(tool) or {}).get("properties", {})

    async def call(self, name: str, arguments: dict[str, Any]) -> Answer:
        result = await self.client.call_tool(name, arguments)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        return Answer(bool(result.is_error), dict(result.structured_content or {}), text)


# --- npm ranges --------------------------------------------------------------------------


def _version(text: str) -> tuple[int, int, int]:
    parts = [
        int(part) if part.isdigit() else 0 for part in text.strip().lstrip("v=").split("-")[0].split(".")
    ]
    parts += [0] * (3 - len(parts))
    return parts[0], parts[1], parts[2]


def _comparator(version: tuple[int, int, int], item: str) -> bool:
    match = re.fullmatch(r"(\^|~|>=|<=|>|<|=)?\s*v?([\dxX*]+(?:\.[\dxX*]+){0,2})", item)
    if not match:
        return False
    operator, body = match.group(1) or "", match.group(2)
    numbers = body.split(".")
    wild = next((i for i, part in enumerate(numbers) if part in ("x", "X", "*")), len(numbers))
    if operator in ("", "=") and wild < 3:  # 3, 3.x, 3.4: the prefix must match
        return all(version[i] == int(numbers[i]) for i in range(wild))
    low = _version(body.replace("x", "0").replace("X", "0").replace("*", "0"))
    if operator == "^":
        lead = next((i for i, part in enumerate(low) if part != 0), 2)
        return version >= low and version[: lead + 1] == low[: lead + 1]
    if operator == "~":
        return version >= low and version[:2] == low[:2]
    return {
        ">=": version >= low,
        "<=": version <= low,
        ">": version > low,
        "<": version < low,
        "": version == low,
        "=": version == low,
    }[operator]


def satisfies(version: str, spec: str) -> bool:
    """npm's range test for the forms package.json files use; '*', '' and 'latest' take anything."""
    spec = spec.strip()
    if spec in ("", "*", "latest", "x"):
        return True
    wanted = _version(version)
    for alternative in spec.split("||"):
        items = re.sub(r"(\^|~|>=|<=|>|<|=)\s+", r"\1", alternative.strip()).split()
        if items and all(_comparator(wanted, item) for item in items):
            return True
    return False


# --- the install stand-in ----------------------------------------------------------------


def _package_version(folder: Path) -> str:
    return str(json.loads((folder / "package.json").read_text(encoding="utf-8"))["version"])


def available() -> dict[str, dict[str, Path]]:
    """The @imqueue versions this machine holds, by package: the 3.x runtime and the 1.x-era core."""
    found: dict[str, dict[str, Path]] = {}
    for runtime in (SERVICE_RUNTIME, LEGACY_RUNTIME):
        for name in ("@imqueue/rpc", "@imqueue/core"):
            folder = runtime / name
            if (folder / "package.json").is_file():
                found.setdefault(name, {})[_package_version(folder)] = folder
    return found


def _pick(name: str, spec: str, versions: dict[str, dict[str, Path]]) -> tuple[str, Path]:
    fitting = [v for v in versions.get(name, {}) if satisfies(v, spec)]
    if not fitting:
        have = ", ".join(sorted(versions.get(name, {}))) or "none"
        raise JourneyFailed(f"npm install: no version of {name} here meets {spec!r} (here: {have})")
    best = max(fitting, key=_version)
    return best, versions[name][best]


def _rpc_needs_core(rpc: Path) -> str:
    """The core range the installed rpc declares (a file: tarball dependency names its version)."""
    declared = json.loads((rpc / "package.json").read_text(encoding="utf-8"))["dependencies"]["@imqueue/core"]
    from_file = re.search(r"core-(\d+\.\d+\.\d+)\.tgz$", declared)
    return f"^{from_file.group(1)}" if from_file else str(declared)


def install(root: Path) -> dict[str, str]:
    """`npm install` for root/package.json from the prebuilt runtime; returns what went where."""
    manifest = json.loads((root / "package.json").read_text(encoding="utf-8"))
    declared: dict[str, str] = {**manifest.get("devDependencies", {}), **manifest.get("dependencies", {})}
    overrides: dict[str, str] = manifest.get("overrides", {})
    versions = available()
    modules = root / "node_modules"
    if modules.is_symlink() or modules.is_file():
        modules.unlink()
    elif modules.is_dir():
        shutil.rmtree(modules)
    (modules / "@imqueue").mkdir(parents=True)
    for entry in SERVICE_RUNTIME.iterdir():  # everything but @imqueue as the runtime has it
        if entry.name not in ("@imqueue", ".package-lock.json"):
            (modules / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    layout: dict[str, str] = {}
    if "@imqueue/rpc" in declared:
        rpc_version, rpc = _pick("@imqueue/rpc", declared["@imqueue/rpc"], versions)
        needs = _rpc_needs_core(rpc)
        forced = overrides.get("@imqueue/core")
        if forced is not None:
            forced = declared.get("@imqueue/core", "*") if forced == "$@imqueue/core" else forced
        top_spec = forced or declared.get("@imqueue/core") or needs
        core_version, core = _pick("@imqueue/core", top_spec, versions)
        (modules / "@imqueue" / "core").symlink_to(core, target_is_directory=True)
        layout["@imqueue/core"] = core_version
        if core_version == _package_version(rpc.parent / "core") and rpc.parent == core.parent:
            (modules / "@imqueue" / "rpc").symlink_to(rpc, target_is_directory=True)
        else:  # rpc resolves core from the project: a copy, so it sees the project's node_modules
            copy = modules / "@imqueue" / "rpc"
            shutil.copytree(rpc, copy, symlinks=True)
            if forced is None and not satisfies(core_version, needs):
                nested_version, nested = _pick("@imqueue/core", needs, versions)
                (copy / "node_modules" / "@imqueue").mkdir(parents=True, exist_ok=True)
                (copy / "node_modules" / "@imqueue" / "core").symlink_to(nested, target_is_directory=True)
                layout["@imqueue/rpc/node_modules/@imqueue/core"] = nested_version
        layout["@imqueue/rpc"] = rpc_version
    elif "@imqueue/core" in declared:
        core_version, core = _pick("@imqueue/core", declared["@imqueue/core"], versions)
        (modules / "@imqueue" / "core").symlink_to(core, target_is_directory=True)
        layout["@imqueue/core"] = core_version
    return layout


# --- a project on disk -------------------------------------------------------------------


def node_environment(workspace: Path, **extra: str) -> dict[str, str]:
    """Node 22 first on PATH (3.x needs >= 22.12); npm's cache and logs and @imqueue's pid files
    in the workspace, never in $HOME."""
    path = os.pathsep.join([str(NODE_BIN), os.environ.get("PATH", "")])
    return {
        **os.environ,
        "PATH": path,
        "HOME": str(workspace / "home"),
        "TMPDIR": str(workspace / "tmp"),
        "npm_config_cache": str(workspace / "npm-cache"),
        "npm_config_update_notifier": "false",
        "NO_COLOR": "1",
        **extra,
    }


class Project:
    def __init__(self, root: Path, workspace: Path):
        self.root = root
        self.workspace = workspace
        root.mkdir(parents=True, exist_ok=True)

    def write(self, relative: str, content: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        return path

    def read(self, relative: str) -> str:
        return (self.root / relative).read_text(encoding="utf-8")

    def manifest(self) -> dict[str, Any] | None:
        path = self.root / "package.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def save_manifest(self, manifest: dict[str, Any]) -> None:
        self.write("package.json", json.dumps(manifest, indent=2) + "\n")

    def scripts(self) -> dict[str, str]:
        return dict((self.manifest() or {}).get("scripts", {}))

    def npm(self, script: str, timeout: float = 180, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["npm", "run", "--silent", script],
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=node_environment(self.workspace, **env),
            stdin=subprocess.DEVNULL,
        )

    def start(self, script: str, log: Path, **env: str) -> subprocess.Popen[bytes]:
        with log.open("wb") as sink:
            return subprocess.Popen(
                ["npm", "run", "--silent", script],
                cwd=self.root,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=node_environment(self.workspace, **env),
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # npm's child node gets the stop signal too
            )


def wait_for_log(
    process: subprocess.Popen[bytes], log: Path, line: str, seconds: float = READY_SECONDS
) -> None:
    """Until `line` is in the log; a process that exits first, or silence, fails the journey."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        if line.encode() in log.read_bytes():
            return
        time.sleep(0.1)
    stop_group(process)
    raise JourneyFailed(f"the service did not log {line!r} (exit {process.poll()}): {last_error(log)}")


def last_error(log: Path) -> str:
    """The log's last line naming an error, else its last line: what a person would quote."""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    named = [line for line in lines if re.search(r"\w*Error\b|error", line)]
    return (named or lines or ["(no output)"])[-1][:300]


# --- inspect_project's advice, read as an agent would ------------------------------------

# What a finding's words ask for, each pattern a way advice is phrased, never a finding id:
#   set NAME: VALUE [and NAME: VALUE] ... in tsconfig.json      -> compilerOptions
#   tsconfig.json sets NAME: true; ... remove it                -> delete compilerOptions.NAME
#   lib lacks "X": add it (e.g. "lib": [...])                   -> compilerOptions.lib
#   add "overrides": {...} to package.json[, then run npm install]
#   set "NAME": "RANGE" in package.json's dependencies [and run npm install]
#   raise it to ">=X"  (engines.node)
#   set it ... "type": "module" (package.json)
_SET = re.compile(r"\bset ((?:\w+: (?:true|false)(?:,? and |, )?)+)")
_REMOVE = re.compile(r"sets (\w+): true;.*\bremove it\b")
_ADD_LIB = re.compile(r'add it \(e\.g\. "lib": (\[[^\]]*\])\)')
_OVERRIDES = re.compile(r'add "overrides": (\{[^}]*\}) to package\.json')
_DEPENDENCY = re.compile(r'set "([^"]+)": "([^"]+)" in package\.json\'s (dependencies|devDependencies)')
_RAISE = re.compile(r'raise it to "([^"]+)"')
_TYPE_MODULE = re.compile(r'no "type": "module": set it')


@dataclass
class Edit:
    file: str  # "tsconfig.json" or "package.json"
    path: tuple[str, ...]
    value: Any  # None deletes
    reinstall: bool = False


def advice_edits(message: str) -> list[Edit] | None:
    """The edits the finding's message spells out; None when it names a problem and no change."""
    edits: list[Edit] = []
    for match in _SET.finditer(message):
        for name, value in re.findall(r"(\w+): (true|false)", match.group(1)):
            if name != "it":
                edits.append(Edit("tsconfig.json", ("compilerOptions", name), value == "true"))
    removed = _REMOVE.search(message)
    if removed:
        edits.append(Edit("tsconfig.json", ("compilerOptions", removed.group(1)), None))
    lib = _ADD_LIB.search(message)
    if lib:
        edits.append(Edit("tsconfig.json", ("compilerOptions", "lib"), json.loads(lib.group(1))))
    overrides = _OVERRIDES.search(message)
    if overrides:
        for name, value in json.loads(overrides.group(1)).items():
            edits.append(Edit("package.json", ("overrides", name), value, reinstall="npm install" in message))
    for name, version, section in _DEPENDENCY.findall(message):
        edits.append(Edit("package.json", (section, name), version, reinstall="npm install" in message))
    raised = _RAISE.search(message)
    if raised and "engines.node" in message:
        edits.append(Edit("package.json", ("engines", "node"), raised.group(1)))
    if _TYPE_MODULE.search(message):
        edits.append(Edit("package.json", ("type",), "module"))
        edits.append(Edit("tsconfig.json", ("compilerOptions", "module"), "nodenext"))
        edits.append(Edit("tsconfig.json", ("compilerOptions", "moduleResolution"), "nodenext"))
    return edits or None


def apply_edit(document: dict[str, Any], edit: Edit) -> None:
    target = document
    for key in edit.path[:-1]:
        target = target.setdefault(key, {})
    if edit.value is None:
        target.pop(edit.path[-1], None)
    else:
        target[edit.path[-1]] = edit.value

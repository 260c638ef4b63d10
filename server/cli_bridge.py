"""Bridge to the locally installed `imq` binary (@imqueue/cli 5.2.2).

What lives here, top to bottom:

- ``BridgeResult``: what every operation returns - the text an agent reads, whether it is an
  error, imq's exit code and the exact argv that ran (empty when nothing ran).
- Timeouts and limits: one module constant per kind of call.
- Argument safety: user values that imq would read as flags are refused before anything runs.
- ``ImqRunner``: finds imq (re-checked on every call, so PATH changes are seen), runs it
  without a shell, with stdin closed, in its own process group; on timeout it stops the whole
  group; it strips ANSI codes and caps each output stream, keeping the tail.
- The eight operations - ``cli_status``, ``cli_help``, ``create_service``,
  ``generate_client``, ``cli_install``, ``fleet``, ``config``, ``logs`` - plain async
  functions with no MCP imports; the server registers them as tools.

Data flows one way: operation validates its input -> builds imq's argv -> ``ImqRunner`` runs
it -> the operation words the outcome (and the next step) into a ``BridgeResult``.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import shutil
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# --------------------------------------------------------------------------- results


@dataclass
class BridgeResult:
    """Outcome of one bridge operation, worded for an agent."""

    text: str
    is_error: bool
    exit_code: int | None
    command: list[str]  # argv that ran, program path first; empty when nothing was run
    stdout: str = ""  # cleaned (ANSI stripped, capped) output, for structured use
    stderr: str = ""
    timed_out: bool = False


# --------------------------------------------------------------------------- timeouts and limits

STATUS_TIMEOUT_SECONDS = 15.0  # imq --version, imq ... --help
DRY_RUN_TIMEOUT_SECONDS = 30.0
CONFIG_TIMEOUT_SECONDS = 30.0
LOGS_TIMEOUT_SECONDS = 30.0
CLIENT_TIMEOUT_SECONDS = 90.0  # introspects a running service over its queue
APPLY_TIMEOUT_SECONDS = 120.0
FLEET_TIMEOUT_SECONDS = 120.0
INSTALL_TIMEOUT_SECONDS = 180.0  # npm downloads the CLI and its dependencies

KILL_GRACE_SECONDS = 2.0  # between SIGTERM and SIGKILL of a timed-out process group
KILL_SETTLE_SECONDS = 1.0  # for SIGKILLed processes to finish dying
OUTPUT_DRAIN_SECONDS = 2.0  # a detached child (a started service) may hold imq's pipes open
OUTPUT_CAP_BYTES = 64 * 1024  # per stream; the tail is kept because errors come last

IMQ_OVERRIDE_ENV = "IMQUEUE_MCP_IMQ"

INSTALL_HINT = (
    "Install it with `npm install -g @imqueue/cli` (or call cli_install), then retry. "
    "Meanwhile scaffold_service and scaffold_client work offline without imq."
)

FLEET_ACTIONS = ("start", "stop", "restart", "status")
CONFIG_ACTIONS = ("check", "get", "set", "init")
LOG_ACTIONS = ("dump", "clean")

# Options `imq config set` understands; listed when explaining why `init` is not run.
CONFIG_OPTIONS = (
    "author",
    "email",
    "license",
    "template",
    "nodeVersion",
    "gitHubNamespace",
    "dockerHubNamespace",
    "useGit",
    "gitRepoPrivate",
)

# Values `imq service create` prompts for when missing, and the flag that supplies each.
MISSING_VALUE_FLAGS = {
    "email": "--email=you@example.com",
    "author name": "--author=Your Name",
    "docker hub namespace": "--dockerhub-namespace=<namespace>",
    "github namespace": "--github-namespace=<namespace>",
}

# --------------------------------------------------------------------------- argument safety


def _refusal(message: str) -> BridgeResult:
    return BridgeResult(text=message, is_error=True, exit_code=None, command=[])


def refuse_option_like(label: str, value: str) -> BridgeResult | None:
    """Refuses a user value imq would parse as a flag (or that cannot be an argv entry)."""
    if value == "":
        return _refusal(f"{label} must not be empty. Nothing was run.")
    if "\x00" in value:
        return _refusal(f"{label} contains a NUL byte, which cannot be passed to a program. Nothing was run.")
    if value.startswith("-"):
        hint = " For a path, prefix it with ./ (for example ./-dir)." if "path" in label else ""
        return _refusal(
            f"{label} {value!r} starts with '-', so imq would read it as an option; it was refused "
            f"and nothing was run. Pass a value that does not start with '-'.{hint}"
        )
    return None


def refuse_service_names(services: Sequence[str] | None) -> BridgeResult | None:
    for service in services or ():
        refusal = refuse_option_like("service name", service)
        if refusal:
            return refusal
        if "," in service or service != service.strip():
            return _refusal(
                f"service name {service!r} contains a comma or surrounding spaces; pass each "
                "service as its own list item. Nothing was run."
            )
    return None


_LONG_FLAG = re.compile(r"--[a-z][a-z0-9]*(-[a-z0-9]+)*(=[^\x00]*)?")


def refuse_unsafe_flags(flags: Sequence[str]) -> BridgeResult | None:
    """Flags for `service create` must be whole long options: `--name` or `--name=value`."""
    for flag in flags:
        if flag.split("=", 1)[0] == "--dry-run":
            # The bridge owns dry-run vs apply; a stray flag would make "Created" a lie.
            return _refusal(
                "Do not pass --dry-run in flags; apply=false (the default) is the dry run. Nothing was run."
            )
        if not _LONG_FLAG.fullmatch(flag):
            return _refusal(
                f"flag {flag!r} is not a long option of the form --name or --name=value, so it "
                "was refused and nothing was run. Give values inline (--email=you@example.com); "
                "cli_help('service create') lists the flags."
            )
    return None


def refuse_unknown_choice(label: str, value: str, allowed: Sequence[str]) -> BridgeResult | None:
    if value in allowed:
        return None
    return _refusal(f"Unknown {label} {value!r}; use one of: {', '.join(allowed)}. Nothing was run.")


# --------------------------------------------------------------------------- output cleaning

_ANSI_ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erase line
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
)


def strip_ansi(text: str) -> str:
    return _ANSI_ESCAPE.sub("", text)


def settle_carriage_returns(text: str) -> str:
    """Keeps what a terminal would finally show on lines that spinners redraw with \\r."""
    lines = text.replace("\r\n", "\n").split("\n")
    return "\n".join(line.rsplit("\r", 1)[-1] for line in lines)


@dataclass
class _Tail:
    """The last `cap` bytes of a stream, and how many bytes before them were dropped."""

    cap: int
    data: bytearray = field(default_factory=bytearray)
    cut: int = 0

    def append(self, chunk: bytes) -> None:
        self.data += chunk
        excess = len(self.data) - self.cap
        if excess > 0:
            del self.data[:excess]
            self.cut += excess

    def text(self) -> str:
        cleaned = settle_carriage_returns(strip_ansi(self.data.decode("utf-8", errors="replace"))).strip()
        if self.cut:
            notice = f"[{self.cut} bytes of earlier output cut; showing the last {len(self.data)} bytes]"
            return f"{notice}\n{cleaned}"
        return cleaned


async def _read_into(stream: asyncio.StreamReader | None, tail: _Tail) -> None:
    if stream is None:
        return
    while chunk := await stream.read(65536):
        tail.append(chunk)


# --------------------------------------------------------------------------- process control


def _signal_group(group_id: int, sig: signal.Signals) -> None:
    try:
        os.killpg(group_id, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def _group_alive(group_id: int) -> bool:
    """Whether any process of the group still runs; zombies do not count where /proc shows them."""
    try:
        os.killpg(group_id, 0)
    except (ProcessLookupError, PermissionError):
        return False
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    # Orphaned children are reaped by init, which in containers may never do it; waiting for
    # their zombies would spend the whole grace period for nothing.
    for stat_file in proc.glob("[0-9]*/stat"):
        try:
            fields = stat_file.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended while we looked
        if fields[2] == str(group_id) and fields[0] != "Z":
            return True
    return False


async def _stop_process_group(process: asyncio.subprocess.Process, grace_seconds: float) -> None:
    """SIGTERM the group, give it a grace period, then SIGKILL whatever is left of it."""
    group_id = process.pid  # start_new_session makes imq the leader of its own group
    _signal_group(group_id, signal.SIGTERM)
    await _wait_for_group_exit(process, grace_seconds)
    _signal_group(group_id, signal.SIGKILL)
    await process.wait()
    # SIGKILL is delivered asynchronously; return only once the children are really gone.
    await _wait_for_group_exit(process, KILL_SETTLE_SECONDS)


async def _wait_for_group_exit(process: asyncio.subprocess.Process, seconds: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline and (process.returncode is None or _group_alive(process.pid)):
        await asyncio.sleep(0.05)


def _child_environment() -> dict[str, str]:
    environment = dict(os.environ)
    # Ask chalk-style libraries for plain text; imq colours anyway, which strip_ansi handles.
    environment["NO_COLOR"] = "1"
    environment["FORCE_COLOR"] = "0"
    return environment


@dataclass
class _Outcome:
    argv: list[str]
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    timeout_seconds: float

    @property
    def succeeded(self) -> bool:
        return not self.timed_out and self.exit_code == 0


# --------------------------------------------------------------------------- runner


@dataclass(frozen=True)
class ImqRunner:
    """Runs imq (or npm, for cli_install) safely; every setting has a production default.

    imq_path overrides discovery (else $IMQUEUE_MCP_IMQ, else PATH); timeout_seconds overrides
    every per-operation timeout (tests use it); working_directory is where imq runs and what
    `fleet` scans when no path is given (default: this process's working directory).
    """

    imq_path: str | None = None
    timeout_seconds: float | None = None
    kill_grace_seconds: float = KILL_GRACE_SECONDS
    output_cap_bytes: int = OUTPUT_CAP_BYTES
    working_directory: str | None = None

    def imq_override(self) -> str | None:
        return self.imq_path or os.environ.get(IMQ_OVERRIDE_ENV) or None

    def find_imq(self) -> str | None:
        """Absolute path of imq, looked up afresh so an install or PATH change is seen."""
        return shutil.which(self.imq_override() or "imq")

    def current_directory(self) -> Path:
        return Path(self.working_directory or os.getcwd()).resolve()

    def missing_imq(self) -> BridgeResult:
        override = self.imq_override()
        if override:
            text = (
                f"imq was not found at {override!r} (set by {IMQ_OVERRIDE_ENV} or the server's "
                f"configuration). Point it at an executable imq, or unset it to use imq from PATH. "
                f"{INSTALL_HINT}"
            )
        else:
            text = f"imq (@imqueue/cli) is not installed: it was not found on PATH. {INSTALL_HINT}"
        return BridgeResult(text=text, is_error=True, exit_code=None, command=[])

    async def run_imq(self, args: Sequence[str], timeout_seconds: float) -> _Outcome | BridgeResult:
        """Runs imq with args; a BridgeResult back means imq could not be run at all."""
        imq = self.find_imq()
        if imq is None:
            return self.missing_imq()
        return await self.run_program([imq, *args], timeout_seconds)

    async def run_program(self, argv: list[str], timeout_seconds: float) -> _Outcome | BridgeResult:
        timeout = self.timeout_seconds if self.timeout_seconds is not None else timeout_seconds
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,  # a prompt sees EOF instead of waiting forever
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group, so a timeout can stop children too
                cwd=self.working_directory,
                env=_child_environment(),
            )
        except OSError as error:
            return BridgeResult(
                text=f"Could not start {argv[0]}: {error}. Check that it is an executable file "
                "and that the server's working directory exists.",
                is_error=True,
                exit_code=None,
                command=argv,
            )
        stdout, stderr = _Tail(self.output_cap_bytes), _Tail(self.output_cap_bytes)
        readers = asyncio.gather(_read_into(process.stdout, stdout), _read_into(process.stderr, stderr))
        timed_out = False
        try:
            await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            timed_out = True
            await _stop_process_group(process, self.kill_grace_seconds)
        except asyncio.CancelledError:
            # The caller gave up (an MCP cancellation, a server shutdown): leave nothing running.
            _signal_group(process.pid, signal.SIGKILL)
            readers.cancel()
            raise
        try:
            await asyncio.wait_for(readers, OUTPUT_DRAIN_SECONDS)
        except TimeoutError:
            pass  # keep what was read; the holder of the pipe may run for hours
        return _Outcome(
            argv=argv,
            exit_code=process.returncode,
            stdout=stdout.text(),
            stderr=stderr.text(),
            timed_out=timed_out,
            timeout_seconds=timeout,
        )


# --------------------------------------------------------------------------- wording results


def _display(argv: Sequence[str]) -> str:
    """The command as a person would type it: program name rather than its full path."""
    return shlex.join([Path(argv[0]).name, *argv[1:]])


def _transcript(outcome: _Outcome) -> str:
    parts = [f"$ {_display(outcome.argv)}"]
    if outcome.timed_out:
        parts.append(
            f"Timed out after {outcome.timeout_seconds:g} s; the process and its children were stopped."
        )
    elif outcome.exit_code == 0:
        parts.append("exit code 0")
    else:
        parts.append(f"failed with exit code {outcome.exit_code}")
    if outcome.stdout:
        parts.append(outcome.stdout)
    if outcome.stderr:
        parts.append(f"stderr:\n{outcome.stderr}")
    return "\n".join(parts)


def _word(
    outcome: _Outcome | BridgeResult,
    *,
    success_note: str = "",
    failure_hint: str = "",
    prompt_hint: str = "",
) -> BridgeResult:
    """Turns a run into a result; notes and hints are appended after the transcript."""
    if isinstance(outcome, BridgeResult):
        return outcome
    if outcome.timed_out:
        note = "If it was doing real work, retry; the timeout is fixed per operation."
        if prompt_hint:
            note = f"imq was probably waiting for input it cannot get here (stdin is closed): {prompt_hint}"
    elif outcome.succeeded:
        note = success_note
    else:
        note = failure_hint
    text = _transcript(outcome) + (f"\n\n{note}" if note else "")
    return BridgeResult(
        text=text,
        is_error=not outcome.succeeded,
        exit_code=outcome.exit_code,
        command=outcome.argv,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        timed_out=outcome.timed_out,
    )


# --------------------------------------------------------------------------- operations


async def cli_status(*, runner: ImqRunner | None = None) -> BridgeResult:
    """Reports whether imq is installed, where, and its version. Absence is not an error."""
    runner = runner or ImqRunner()
    imq = runner.find_imq()
    if imq is None:
        missing = runner.missing_imq()
        return BridgeResult(text=missing.text, is_error=False, exit_code=None, command=[])
    outcome = await runner.run_imq(["--version"], STATUS_TIMEOUT_SECONDS)
    if isinstance(outcome, _Outcome) and outcome.succeeded:
        lines = outcome.stdout.splitlines()
        version = lines[-1].strip() if lines else "unknown"
        return _word(outcome, success_note=f"imq {version} is installed at {imq}.")
    return _word(outcome, failure_hint=f"imq at {imq} did not report a version; reinstall it. {INSTALL_HINT}")


def _command_words(command: str) -> list[str] | None:
    words = command.split()
    if words and all(re.fullmatch(r"[a-z][a-z0-9-]*", word) for word in words):
        return words
    return None


async def cli_help(command: str | None = None, *, runner: ImqRunner | None = None) -> BridgeResult:
    """`imq [command] --help`; command may be one word or a path such as 'service create'."""
    runner = runner or ImqRunner()
    words: list[str] = []
    if command:
        parsed = _command_words(command)
        if parsed is None:
            return _refusal(
                f"command {command!r} is not an imq command; use words such as 'service', "
                "'service create', 'client generate', 'ctl', 'config' or 'log'. Nothing was run."
            )
        words = parsed
    outcome = await runner.run_imq([*words, "--help"], STATUS_TIMEOUT_SECONDS)
    return _word(
        outcome,
        failure_hint="imq does not know that command; call cli_help() with no command to list them.",
    )


def _missing_value_flags(message: str) -> list[str]:
    lowered = message.lower()
    return [flag for keyword, flag in MISSING_VALUE_FLAGS.items() if keyword in lowered]


async def create_service(
    name: str,
    path: str | None = None,
    flags: list[str] | None = None,
    apply: bool = False,
    *,
    runner: ImqRunner | None = None,
) -> BridgeResult:
    """`imq service create <name> [path] [flags...]`, a `--dry-run` unless apply is true."""
    runner = runner or ImqRunner()
    flags = list(flags or [])
    refusal = (
        refuse_option_like("service name", name)
        or (refuse_option_like("path", path) if path is not None else None)
        or refuse_unsafe_flags(flags)
    )
    if refusal:
        return refusal
    args = ["service", "create", name, *([path] if path else []), *flags]
    if not apply:
        args.append("--dry-run")
    outcome = await runner.run_imq(args, APPLY_TIMEOUT_SECONDS if apply else DRY_RUN_TIMEOUT_SECONDS)
    if apply:
        success = f"Created service {name} in {runner.current_directory() / (path or name)}."
    else:
        success = (
            "Dry run: nothing was written. To create the project, call create_service again with "
            "apply=true and the same flags; pass every value imq would otherwise ask for as a flag."
        )
    return _word(
        outcome,
        success_note=success,
        failure_hint=_create_failure_hint(outcome),
        prompt_hint=(
            "pass each value imq asks for as a flag, for example flags=['--email=you@example.com']; "
            "cli_help('service create') lists them."
        ),
    )


def _create_failure_hint(outcome: _Outcome | BridgeResult) -> str:
    if not isinstance(outcome, _Outcome):
        return ""
    needed = _missing_value_flags(outcome.stderr)
    if needed and "required" in outcome.stderr.lower():
        flag_list = ", ".join(repr(flag) for flag in needed)
        return (
            f"imq needs a value it would ask for on a terminal. Pass it as a flag: flags=[{flag_list}] "
            "(or store it once with config(action='set', option=..., value=...))."
        )
    return "Check the flags with cli_help('service create') and the message above, then retry."


async def generate_client(
    service: str,
    path: str | None = None,
    overwrite: bool = False,
    *,
    runner: ImqRunner | None = None,
) -> BridgeResult:
    """`imq client generate <Service> [path] [-o]`; the service must be running to answer."""
    runner = runner or ImqRunner()
    refusal = refuse_option_like("service name", service) or (
        refuse_option_like("path", path) if path is not None else None
    )
    if refusal:
        return refusal
    args = ["client", "generate", service, *([path] if path else []), *(["-o"] if overwrite else [])]
    outcome = await runner.run_imq(args, CLIENT_TIMEOUT_SECONDS)
    directory = path or "./src/clients"
    overwrite_hint = (
        "the client file already exists and imq asks before overwriting it; call generate_client "
        "again with overwrite=true to replace it (adds -o)."
    )
    return _word(
        outcome,
        success_note=f"Generated the {service} client from the running service: {directory}/{service}.ts.",
        failure_hint=_client_failure_hint(outcome, service, overwrite_hint),
        prompt_hint=(
            f"if {overwrite_hint} Otherwise {service} did not answer: it must be running and reachable."
        ),
    )


def _client_failure_hint(outcome: _Outcome | BridgeResult, service: str, overwrite_hint: str) -> str:
    if isinstance(outcome, _Outcome) and outcome.exit_code in (130, -signal.SIGINT):
        return f"imq stopped at a prompt (stdin is closed here): {overwrite_hint}"
    return (
        f"imq builds the client by asking the running service to describe itself, so {service} must be "
        "running and reachable over the same Redis (start it, for example with fleet(action='start'), "
        "and pass its class name, which is its queue name). scaffold_client shows the command offline."
    )


_NPM_VERSION = re.compile(r"latest|next|\d+(\.\d+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")


async def cli_install(version: str | None = None, *, runner: ImqRunner | None = None) -> BridgeResult:
    """`npm install -g @imqueue/cli[@version]`; needs npm, not imq."""
    runner = runner or ImqRunner()
    if version is not None and not _NPM_VERSION.fullmatch(version):
        return _refusal(
            f"version {version!r} is not a version npm can install here; use a semver such as "
            "'5.2.2' (or '5'), or 'latest'. Nothing was run."
        )
    npm = shutil.which("npm")
    if npm is None:
        return _refusal(
            "npm is not on PATH, so imq cannot be installed from here. Install Node.js (it ships "
            "npm), then call cli_install again; scaffold_service and scaffold_client work offline."
        )
    package = f"@imqueue/cli@{version}" if version else "@imqueue/cli"
    outcome = await runner.run_program([npm, "install", "-g", package], INSTALL_TIMEOUT_SECONDS)
    installed = runner.find_imq()
    if installed:
        success = f"imq is now at {installed}; cli_status reports its version."
    else:
        success = (
            "npm finished, but imq is still not on this server's PATH: add npm's global bin "
            "directory (`npm prefix -g`, then /bin) to PATH and restart the server."
        )
    failure = "Check network access to the npm registry and the message above."
    if isinstance(outcome, _Outcome) and "EACCES" in outcome.stderr:
        failure = (
            "npm may not write its global directory. Set a user prefix with `npm config set prefix "
            "~/.npm-global` and put ~/.npm-global/bin on PATH, or install imq yourself with sudo."
        )
    return _word(outcome, success_note=success, failure_hint=failure)


async def fleet(
    action: str,
    path: str | None = None,
    services: list[str] | None = None,
    update: bool = False,
    clean: bool = False,
    verbose: bool = False,
    *,
    runner: ImqRunner | None = None,
) -> BridgeResult:
    """`imq ctl <action> -p <path> [-s a,b] [-u] [-c] [-v]`; -p is always passed explicitly."""
    runner = runner or ImqRunner()
    refusal = (
        refuse_unknown_choice("fleet action", action, FLEET_ACTIONS)
        or (refuse_option_like("path", path) if path is not None else None)
        or refuse_service_names(services)
    )
    if refusal:
        return refusal
    # imq ctl's own default is `-p .`: scanning and starting every service under wherever it runs.
    root = runner.current_directory() / path if path else runner.current_directory()
    args = ["ctl", action, "-p", str(root)]
    if services:
        args += ["-s", ",".join(services)]
    args += [flag for flag, wanted in (("-u", update), ("-c", clean), ("-v", verbose)) if wanted]
    outcome = await runner.run_imq(args, FLEET_TIMEOUT_SECONDS)
    where = (
        f"Path: {root}."
        if path
        else f"No path was given, so imq ctl used the server's working directory: {root}."
    )
    note = f"{where} imq ctl treats each sub-directory with a package.json as a service."
    return _word(
        outcome,
        success_note=note,
        failure_hint=f"{note} Check the path and service names (fleet(action='status') lists them).",
    )


def _config_init_explanation() -> BridgeResult:
    # is_error is True because nothing was initialised: an agent that reads only the flag must
    # not conclude the config now exists.
    return BridgeResult(
        text=(
            "imq config init was not run: it asks its questions on a terminal, and this server runs "
            "imq with stdin closed, so it would stop at the first prompt. Set each value instead with "
            "config(action='set', option=..., value=...); options: "
            f"{', '.join(CONFIG_OPTIONS)}. Or run `imq config init` yourself in a terminal."
        ),
        is_error=True,
        exit_code=None,
        command=[],
    )


async def config(
    action: str,
    option: str | None = None,
    value: str | None = None,
    *,
    runner: ImqRunner | None = None,
) -> BridgeResult:
    """`imq config check | get [option] | set <option> <value>`; `init` is explained, never run."""
    runner = runner or ImqRunner()
    refusal = (
        refuse_unknown_choice("config action", action, CONFIG_ACTIONS)
        or _refuse_config_arguments(action, option, value)
        or (refuse_option_like("option", option) if option is not None else None)
        or (refuse_option_like("value", value) if value is not None else None)
    )
    if refusal:
        return refusal
    if runner.find_imq() is None:
        return runner.missing_imq()
    if action == "init":
        return _config_init_explanation()
    args = ["config", action, *(a for a in (option, value) if a is not None)]
    outcome = await runner.run_imq(args, CONFIG_TIMEOUT_SECONDS)
    return _word(
        outcome,
        success_note=f"Stored {option} in imq's config." if action == "set" else "",
        failure_hint=f"Known options: {', '.join(CONFIG_OPTIONS)}. Set a missing one with action='set'.",
    )


def _refuse_config_arguments(action: str, option: str | None, value: str | None) -> BridgeResult | None:
    if action == "set" and (option is None or value is None):
        return _refusal("config action 'set' needs both option and value. Nothing was run.")
    if action == "get" and value is not None:
        return _refusal("config action 'get' takes an option but no value. Nothing was run.")
    if action in ("check", "init") and (option is not None or value is not None):
        return _refusal(f"config action {action!r} takes no option or value. Nothing was run.")
    return None


async def logs(
    action: str,
    services: list[str] | None = None,
    prefix: bool = True,
    *,
    runner: ImqRunner | None = None,
) -> BridgeResult:
    """dump: `imq log [services..] --no-follow [--no-prefix]`; clean: `imq log [services..] --clean`.

    Plain `imq log` follows forever, so it is never run.
    """
    runner = runner or ImqRunner()
    refusal = refuse_unknown_choice("logs action", action, LOG_ACTIONS) or refuse_service_names(services)
    if refusal:
        return refusal
    named = list(services or [])
    if action == "dump":
        args = ["log", *named, "--no-follow", *([] if prefix else ["--no-prefix"])]
    else:
        args = ["log", *named, "--clean"]
    outcome = await runner.run_imq(args, LOGS_TIMEOUT_SECONDS)
    whose = ", ".join(named) if named else "all services"
    return _word(
        outcome,
        success_note=f"Deleted the collected logs of {whose}." if action == "clean" else "",
        failure_hint="Logs exist only for services started with fleet(action='start'); check the names.",
    )


__all__ = [
    "APPLY_TIMEOUT_SECONDS",
    "CLIENT_TIMEOUT_SECONDS",
    "CONFIG_TIMEOUT_SECONDS",
    "DRY_RUN_TIMEOUT_SECONDS",
    "FLEET_TIMEOUT_SECONDS",
    "INSTALL_TIMEOUT_SECONDS",
    "LOGS_TIMEOUT_SECONDS",
    "OUTPUT_CAP_BYTES",
    "STATUS_TIMEOUT_SECONDS",
    "BridgeResult",
    "ImqRunner",
    "cli_help",
    "cli_install",
    "cli_status",
    "config",
    "create_service",
    "fleet",
    "generate_client",
    "logs",
    "strip_ansi",
]

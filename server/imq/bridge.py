"""Bridge to the locally installed `imq` binary (@imqueue/cli 5.2.2): the eight operations.

What lives here, top to bottom:

- Timeouts: one module constant per kind of call.
- The actions, options and prompts of imq that the operations check against or explain.
- The eight operations - ``cli_status``, ``cli_help``, ``create_service``,
  ``generate_client``, ``cli_install``, ``fleet``, ``config``, ``logs`` - plain async
  functions with no MCP imports; the server registers them as tools.

Running imq lives in runner.py, and the checks on user values in arguments.py.
Data flows one way: operation validates its input (cli_arguments) -> builds imq's argv ->
``ImqRunner`` runs it -> the operation words the outcome (and the next step) into a
``BridgeResult`` with ``word_outcome``; an error carries its code from errors.py. The long
runs (install, create with apply, client generation, fleet start/restart) pass ``long=True``
so a client that sent a progressToken hears how they are going.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
import shutil
import signal
from pathlib import Path

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.imq.arguments import (
    refuse_leaving_folder,
    refuse_option_like,
    refuse_service_name,
    refuse_service_names,
    refuse_unknown_choice,
    refuse_unsafe_flags,
    refused,
)
from imqueue_mcp.server.imq.broker import (
    IMQ_REDIS_ENV,
    NO_ANSWER_EXIT,
    NO_RPC_EXIT,
    BrokerAddress,
    broker_address,
    find_rpc_project,
    generator_argv,
    installed_rpc_version,
    probe_broker,
    queue_readers,
)
from imqueue_mcp.server.imq.fleet_start import describe_start, ignoring_broker, service_folders
from imqueue_mcp.server.imq.generated_client import attach_generated_client
from imqueue_mcp.server.imq.log_rotation import (
    describe_kept,
    keep_previous_log,
    previous_logs,
    remove_previous_logs,
)
from imqueue_mcp.server.imq.production import (
    describe_modes,
    forget_stopped,
    log_tail,
    process_alive,
    read_pids,
    record_dev_starts,
    recorded_environments,
    said_environment,
    start_production,
    stop_tracked,
    var_home,
    watch_dev_starts,
)
from imqueue_mcp.server.imq.runner import INSTALL_HINT, BridgeResult, ImqRunner, RunOutcome, word_outcome
from imqueue_mcp.server.imq.template_pins import apply_pins, describe_unpinned, read_manifest, template_folder
from imqueue_mcp.server.scaffold.types import normalize_service_name

# --------------------------------------------------------------------------- timeouts

STATUS_TIMEOUT_SECONDS = 15.0  # imq --version, imq ... --help
DRY_RUN_TIMEOUT_SECONDS = 30.0
CONFIG_TIMEOUT_SECONDS = 30.0
LOGS_TIMEOUT_SECONDS = 30.0
CLIENT_TIMEOUT_SECONDS = 90.0  # introspects a running service over its queue
DESCRIBE_TIMEOUT_SECONDS = 30.0  # how long a service may take to answer describe (imq's default)
APPLY_TIMEOUT_SECONDS = 120.0
FLEET_TIMEOUT_SECONDS = 120.0
INSTALL_TIMEOUT_SECONDS = 180.0  # npm downloads the CLI and its dependencies

# --------------------------------------------------------------------------- imq's actions and options

FLEET_ACTIONS = ("start", "stop", "restart", "status")
FLEET_MODES = ("dev", "production")  # dev: imq ctl's `npm run dev`; production: production.py
CONFIG_ACTIONS = ("check", "get", "set", "init")
LOG_ACTIONS = ("dump", "clean")

# Options `imq config set` takes (imq 5.2.2: top-level keys and dot-paths of its config file);
# listed when explaining why `init` is not run.
CONFIG_OPTIONS = (
    "author",
    "email",
    "license",
    "template",
    "useGit",
    "gitBaseUrl",
    "vcs.provider",
    "vcs.private",
    "vcs.protocol",
    "ci.provider",
    "registry.provider",
    "registry.namespace",
    "packages",
)

# Every imq option the bridge passes itself or names in a hint, per command, as
# (short, long) the way `imq <command> --help` pairs them ("" where imq has no short form).
# tests/test_imq_flag_drift.py checks each pair against the real help, so `-c` cannot
# silently mean something else than the bridge thinks.
IMQ_OPTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "": (("", "--help"), ("", "--version")),  # every command has them; the bridge runs both
    "service create": (
        ("-e", "--email"),
        ("-a", "--author"),
        ("-g", "--use-git"),
        ("", "--install"),
        ("", "--dry-run"),
        ("-t", "--template"),
        ("-y", "--yes"),
    ),
    "client generate": (("-o", "--overwrite"),),
    "ctl": (
        ("-p", "--path"),
        ("-s", "--services"),
        ("-u", "--update"),
        ("-c", "--calm"),
        ("-v", "--verbose"),
    ),
    "log": (("-c", "--clean"), ("-f", "--follow"), ("", "--prefix")),
}

# --------------------------------------------------------------------------- operations


async def cli_status(*, runner: ImqRunner | None = None) -> BridgeResult:
    """Reports whether imq is installed, where, and its version. Absence is not an error."""
    runner = runner or ImqRunner()
    imq = runner.find_imq()
    if imq is None:
        missing = runner.missing_imq()
        return BridgeResult(text=missing.text, is_error=False, exit_code=None, command=[])
    outcome = await runner.run_imq(["--version"], STATUS_TIMEOUT_SECONDS)
    if isinstance(outcome, RunOutcome) and outcome.succeeded:
        lines = outcome.stdout.splitlines()
        version = lines[-1].strip() if lines else "unknown"
        return word_outcome(outcome, success_note=f"imq {version} is installed at {imq}.")
    return word_outcome(
        outcome, failure_hint=f"imq at {imq} did not report a version; reinstall it. {INSTALL_HINT}"
    )


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
            return refused(
                f"command {command!r} is not an imq command; use words such as 'service', "
                "'service create', 'client generate', 'ctl', 'config' or 'log'. Nothing was run."
            )
        words = parsed
    outcome = await runner.run_imq([*words, "--help"], STATUS_TIMEOUT_SECONDS)
    return word_outcome(
        outcome,
        failure_hint="imq does not know that command; call cli_help() with no command to list them.",
    )


def imq_error_line(outcome: RunOutcome) -> str:
    """The line imq failed with: the last non-empty line of stderr (else of stdout).

    On a usage error imq prints its whole help first and the reason last, so hints are drawn
    from this line alone, never from words elsewhere in the help.
    """
    for stream in (outcome.stderr, outcome.stdout):
        lines = [line.strip() for line in stream.splitlines() if line.strip()]
        if lines:
            return lines[-1]
    return ""


_UNKNOWN_ARGUMENTS = re.compile(r"Unknown arguments?: (?P<names>.+)")
_HELP_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


def _unknown_argument_hint(names: str, outcome: RunOutcome) -> str:
    """Names what imq did not know and, from the options in imq's own help, what is closest."""
    given = [name.strip() for name in names.split(",") if name.strip()]
    # yargs lists a dashed name twice, once camelCased (dockerhub-namespace, dockerhubNamespace)
    dashed = {name.replace("-", "").lower() for name in given if "-" in name}
    unknown = [name for name in given if "-" in name or name.lower() not in dashed]
    known = sorted({option[2:] for option in _HELP_OPTION.findall(outcome.stderr + outcome.stdout)})
    parts = []
    for name in unknown:
        spellings = (f"--{name}", f"--no-{name}", f"-{name}")
        passed = [item.split("=", 1)[0] for item in outcome.argv if item.split("=", 1)[0] in spellings]
        shown = passed[0] if passed else repr(name)  # as the caller wrote it; else a positional
        closest = difflib.get_close_matches(name.removeprefix("no-"), known, n=2, cutoff=0.6)
        dashes = "--no-" if shown.startswith("--no-") else "--"
        suggestion = f" (closest in its help: {', '.join(dashes + c for c in closest)})" if closest else ""
        parts.append(f"{shown}{suggestion}")
    return (
        f"imq does not know {'; '.join(parts)}. A boolean option is turned off with a no- "
        "before its name (--no-use-git). Check the spelling with cli_help('service create')."
    )


async def create_service(
    name: str,
    path: str | None = None,
    flags: list[str] | None = None,
    apply: bool = False,
    pin: bool = False,
    *,
    runner: ImqRunner | None = None,
) -> BridgeResult:
    """`imq service create <name> [path] [flags...]`, a `--dry-run` unless apply is true.

    The result names the template's unpinned dependencies (template_pins) and the fix; with
    apply and pin, the created package.json gets the pins."""
    runner = runner or ImqRunner()
    flags = list(flags or [])
    refusal = (
        refuse_service_name(name)
        or (refuse_option_like("path", path) if path is not None else None)
        or refuse_unsafe_flags(flags)
    )
    if refusal:
        return refusal
    # imq's own default path is "." (the working directory itself, not ./<name>). Passing it
    # explicitly means a stray value in flags is refused by imq as an unknown argument instead
    # of silently becoming the target path.
    target = path or "."
    args = ["service", "create", name, target, *flags]
    if not apply:
        args.append("--dry-run")
    outcome = await runner.run_imq(
        args, APPLY_TIMEOUT_SECONDS if apply else DRY_RUN_TIMEOUT_SECONDS, long=apply
    )
    if apply:
        where = _planned_path(outcome) or str(runner.current_directory() / target)
        success = f"Created service {name} in {where}."
    else:
        success = (
            "Dry run: nothing was written. To create the project, call create_service again with "
            "apply=true and the same flags; pass every value imq would otherwise ask for as a flag."
        )
    result = word_outcome(
        outcome,
        success_note=success,
        failure_hint=_create_failure_hint(outcome, name, target, flags),
        prompt_hint=(
            "pass each value imq asks for as a flag, for example flags=['--email=you@example.com']; "
            "cli_help('service create') lists them."
        ),
    )
    if result.is_error:
        return result
    created = Path(_planned_path(outcome) or runner.current_directory() / target) if apply else None
    report = _pin_report(flags, runner.current_directory(), created, pin)
    return dataclasses.replace(result, text=f"{result.text}\n\n{report}") if report else result


def _pin_report(flags: list[str], cwd: Path, created: Path | None, pin: bool) -> str:
    """The template's (or the created project's) unpinned dependencies, the fix, and the pins
    applied when asked; empty when everything is pinned."""
    if created is not None:
        manifest_path = (created if created.is_absolute() else cwd / created) / "package.json"
        manifest = read_manifest(manifest_path)
        if manifest is None:
            return f"{manifest_path} could not be read, so its dependencies were not checked."
        if not pin:
            return describe_unpinned(manifest, str(manifest_path))
        try:
            applied = apply_pins(manifest_path)
        except (OSError, ValueError) as error:
            return (
                f"{describe_unpinned(manifest, str(manifest_path))}\nThe pins could not be written: {error}."
            )
        return describe_unpinned(manifest, str(manifest_path), applied=applied)
    template = template_folder(flags, cwd)
    manifest = read_manifest(template / "package.json") if template is not None else None
    if manifest is None:
        return (
            "The template is not on this machine yet (imq fetches it when it creates the project), so "
            "its dependencies were checked only once the project exists: call with apply=true."
        )
    report = describe_unpinned(manifest, f"The template {template}")
    if report and pin:
        report += "\npin=true applies these pins to the created package.json once apply=true writes it."
    return report


_PLANNED_PATH = re.compile(r"^\s*path: (?P<path>.+)$", re.MULTILINE)


def _planned_path(outcome: RunOutcome | BridgeResult) -> str | None:
    """Where imq said it creates the service (the `path:` line of its plan)."""
    if not isinstance(outcome, RunOutcome):
        return None
    found = _PLANNED_PATH.search(outcome.stdout)
    return found["path"].strip() if found else None


# imq clones its templates (lib/template.ts: git clone <TPL_REPO> ~/.imq/templates) on first use;
# offline that clone is the failing command, or git itself is missing.
_TEMPLATE_FETCH_FAILED = re.compile(
    r"Command failed: git (?:clone|fetch)\b.*templates|Git required but is not installed", re.IGNORECASE
)
_TEMPLATE_FLAGS = ("-t", "--template")


def _offline_template_hint(name: str, path: str, flags: list[str]) -> str:
    """What failed (the templates could not be fetched) and the exact calls that work offline."""
    kept: list[str] = []
    skip = False
    for flag in flags:
        if skip:
            skip = False
            continue
        if flag in _TEMPLATE_FLAGS:
            skip = True
            continue
        if flag.startswith(tuple(f"{option}=" for option in _TEMPLATE_FLAGS)):
            continue
        kept.append(flag)
    offline = [*kept, *(f for f in ("--no-install", "--no-use-git") if f not in kept)]
    shown = ", ".join(json.dumps(flag) for flag in ["-t", "/path/to/template", *offline])
    return (
        "imq could not fetch its service templates: on first use it clones "
        "https://github.com/imqueue/templates.git into ~/.imq/templates, and that clone failed "
        "(no network, or no git); your flags were not the problem. "
        "What works offline:\n"
        f"- scaffold_service(name={json.dumps(name)}, methods=[...]) returns a complete service "
        "(code, package.json, tsconfig) with no network and no imq;\n"
        "- or point imq at a template folder on this machine (a copy of one folder of that "
        f"repository, e.g. its default/): create_service(name={json.dumps(name)}, "
        f"path={json.dumps(path)}, flags=[{shown}], apply=true). --no-install and --no-use-git "
        "keep the rest of the run off the network too."
    )


def _create_failure_hint(
    outcome: RunOutcome | BridgeResult, name: str = "", path: str = ".", flags: list[str] | None = None
) -> str:
    if not isinstance(outcome, RunOutcome):
        return ""
    if _TEMPLATE_FETCH_FAILED.search(f"{outcome.stderr}\n{outcome.stdout}"):
        return _offline_template_hint(name, path, list(flags or []))
    line = imq_error_line(outcome)
    unknown = _UNKNOWN_ARGUMENTS.fullmatch(line)
    if unknown:
        return _unknown_argument_hint(unknown["names"], outcome)
    if re.search(r"email is required", line, re.IGNORECASE):
        return (
            "imq needs the author's email, even for a dry run. Pass it as a flag: "
            "flags=['-e', 'you@example.com'] (or '--email=you@example.com'), or store it once with "
            "config(action='set', option='email', value='you@example.com')."
        )
    return "Check the flags with cli_help('service create') and imq's message above, then retry."


async def generate_client(
    service: str,
    path: str | None = None,
    overwrite: bool = False,
    redis: str | None = None,
    *,
    runner: ImqRunner | None = None,
) -> BridgeResult:
    """The typed client of a running service, from the broker at `redis` (host:port; else
    IMQ_REDIS, else localhost:6379): `imq client generate <Service> [path] [-o]` where imq reaches
    it (localhost:6379 only), else the same generator through the project's own @imqueue/rpc."""
    runner = runner or ImqRunner()
    refusal = refuse_service_name(service) or (refuse_option_like("path", path) if path is not None else None)
    if refusal:
        return refusal
    try:
        address = broker_address(redis)
    except ValueError as error:
        return refused(f"{error} Nothing was run.")
    directory = runner.current_directory() / path if path else runner.current_directory()
    leaving = _refuse_client_files_leaving(service, directory)
    if leaving:
        return leaving
    overwrite_hint = (
        "the client file already exists and imq asks before overwriting it; call generate_client "
        "again with overwrite=true to replace it (adds -o)."
    )
    if address.is_imq_default and runner.find_imq() is not None:
        service, renamed = await _reading_name(service, address)
        args = ["client", "generate", service, *([path] if path else []), *(["-o"] if overwrite else [])]
        outcome = await runner.run_imq(args, CLIENT_TIMEOUT_SECONDS, long=True)
        how = (
            f"Generated the {service} client from the running service on {address}{renamed}: "
            f"{directory / service}.ts."
        )
    else:
        if address.is_imq_default and _rpc_project(runner, directory) is None:
            return runner.missing_imq()  # imq's own broker, no imq, and no project rpc to use instead
        # Before node runs: with no Redis there, the generator would retry until its timeout.
        unreachable = await probe_broker(address)
        if unreachable is not None:
            return _no_client_broker(address, unreachable)
        service, renamed = await _reading_name(service, address)
        refusal = _refuse_generator_output(service, directory, overwrite, renamed)
        if refusal:
            return refusal
        prepared = _prepare_generator(runner, directory, address)
        if isinstance(prepared, BridgeResult):
            return prepared
        node, project, version = prepared
        seconds = _describe_seconds(runner)
        argv = generator_argv(node, service, directory, address, seconds)
        outcome = await runner.run_program(argv, CLIENT_TIMEOUT_SECONDS, long=True, cwd=project)
        if isinstance(outcome, RunOutcome):  # the transcript names the script, not its 30 lines
            outcome = dataclasses.replace(outcome, argv=[*argv[:3], "<IMQClient.create script>", *argv[4:]])
        why = (
            "imq client generate only reaches localhost:6379"
            if not address.is_imq_default
            else "imq is not installed"
        )
        how = (
            f"Generated the {service} client from the running service on {address}{renamed} through the "
            "project's "
            f"own @imqueue/rpc{f' {version}' if version else ''} in {project} (IMQClient.create, as imq "
            "client generate "
            f"runs it; {why}): {directory / service}.ts."
        )
    result = word_outcome(
        outcome,
        success_note=how,
        failure_hint=_client_failure_hint(outcome, service, overwrite_hint, address),
        prompt_hint=(
            f"if {overwrite_hint} Otherwise {service} did not answer on {address}: it must be running there."
        ),
    )
    if result.is_error:
        return await _classify_client_failure(result, outcome, service, address)
    return attach_generated_client(result, directory / f"{service}.ts", service)


def _refuse_client_files_leaving(service: str, directory: Path) -> BridgeResult | None:
    """The generator writes <service>.ts, and beside it <service>.js where it runs through the
    project's rpc: either one a symlink out of the folder would write a file the call never named."""
    return refuse_leaving_folder("service name", service, directory, ".ts") or refuse_leaving_folder(
        "service name", service, directory, ".js"
    )


def _refuse_generator_output(
    service: str, directory: Path, overwrite: bool, renamed: str
) -> BridgeResult | None:
    """Before the generator writes <service>.ts/.js: the name read on the broker (when it is not
    the one given) checked as the given one was, and an existing client kept unless overwrite."""
    leaving = _refuse_client_files_leaving(service, directory) if renamed else None
    if leaving or overwrite or not (directory / f"{service}.ts").exists():
        return leaving
    return refused(
        f"{directory / service}.ts exists: call generate_client again with overwrite=true to "
        "replace it. Nothing was run."
    )


async def _reading_name(service: str, address: BrokerAddress) -> tuple[str, str]:
    """The service to ask for, and why it is not the name given: the scaffolds name a service asked
    for as 'User' (or 'user-service') UserService, so when no process reads the given name's queue
    on the broker and one reads that name's, it is the one meant. Else the name as given, untold."""
    try:
        scaffolded = normalize_service_name(service)
    except ValueError:  # ScaffoldError: not a name the scaffolds take
        return service, ""
    # imq's own template names the class after the project (Greeter, not GreeterService)
    bare = service.removesuffix("Service") if scaffolded == service else ""
    if scaffolded == service and not bare:
        return service, ""
    readers = await queue_readers(address)
    if readers is None or service in readers:
        return service, ""
    if scaffolded != service and scaffolded in readers:
        return scaffolded, (
            f" (no process reads a {service!r} queue there; {scaffolded} does, the name the scaffolds give "
            f"a service asked for as {service!r})"
        )
    if bare and bare in readers:
        return bare, (
            f" (no process reads a {service!r} queue there; {bare!r} does: imq's template names the service "
            f"class after the project. Callers construct its client with the queue name {bare!r})"
        )
    return service, ""


def _no_broker(address: BrokerAddress, why: str, needed_for: str, otherwise: str) -> BridgeResult:
    """broker_unreachable: where the address came from and why no Redis answers there, then what
    the calling tool needed the broker for (`needed_for`) and, after starting Redis there, the
    redis to pass instead (`otherwise`)."""
    source = {"argument": "the redis argument", "IMQ_REDIS": "IMQ_REDIS", "default": "the default"}
    return BridgeResult(
        text=f"No broker at {address} ({source[address.origin]}): {why}. {needed_for}",
        is_error=True,
        exit_code=None,
        command=[],
        error_code=ErrorCode.BROKER_UNREACHABLE,
        next_step=f"Start Redis at {address}, or pass redis='host:port' {otherwise}",
    )


def _no_client_broker(address: BrokerAddress, why: str) -> BridgeResult:
    """generate_client's broker_unreachable: the service it asks to describe itself is on that Redis."""
    return _no_broker(
        address,
        why,
        "A client is generated by asking the running service to describe itself over its Redis, so "
        "nothing can answer there.",
        "where the service's Redis runs (the IMQ_REDIS it was started with); fleet(action='status') "
        "lists the running services.",
    )


def _prepare_generator(
    runner: ImqRunner, directory: Path, address: BrokerAddress
) -> tuple[str, Path, str | None] | BridgeResult:
    """node, the project with @imqueue/rpc installed, and rpc's version; or why not."""
    reason = (
        f"imq client generate only reaches localhost:6379, not {address}"
        if not address.is_imq_default
        else "imq is not installed"
    )
    project = _rpc_project(runner, directory)
    if project is None:
        return refused(
            f"{reason}, so the client is generated through the project's own @imqueue/rpc, and no "
            f"node_modules/@imqueue/rpc was found in {directory} or above it. Run npm install in the "
            "project that will use the client and pass path inside it (e.g. its src/clients). "
            "Nothing was run."
        )
    node = shutil.which("node")
    if node is None:
        return refused(
            f"{reason}, so the client is generated with node through the project's own @imqueue/rpc, "
            "and node is not on this server's PATH. Install Node.js 22.12 or newer. Nothing was run."
        )
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return refused(f"The output folder {directory} cannot be created: {error.strerror or error}.")
    return node, project, installed_rpc_version(project)


def _rpc_project(runner: ImqRunner, directory: Path) -> Path | None:
    """The project to generate through: the output folder's, else the working directory's."""
    return find_rpc_project(directory) or find_rpc_project(runner.current_directory())


def _describe_seconds(runner: ImqRunner) -> float:
    """How long the generator waits for describe: imq's 30 s, inside the run's own time limit."""
    limit = runner.timeout_seconds if runner.timeout_seconds is not None else CLIENT_TIMEOUT_SECONDS
    return max(1.0, min(DESCRIBE_TIMEOUT_SECONDS, limit - 3.0))


_NO_ANSWER = re.compile(r"did not (?:respond|answer)|timed-out|Is it running\?", re.IGNORECASE)


async def _classify_client_failure(
    result: BridgeResult, outcome: RunOutcome | BridgeResult, service: str, address: BrokerAddress
) -> BridgeResult:
    """Why generation failed: no broker at the address (PING unanswered: imq runs before it is
    asked), no service answering describe on a live one, or something else (left as it is)."""
    if not isinstance(outcome, RunOutcome) or outcome.exit_code in (130, -signal.SIGINT, NO_RPC_EXIT):
        return result
    unreachable = await probe_broker(address)
    if unreachable is not None:
        down = _no_client_broker(address, unreachable)
        return dataclasses.replace(
            result,
            text=f"{result.text}\n\n{down.text}",
            error_code=ErrorCode.BROKER_UNREACHABLE,
            next_step=down.next_step,
        )
    silent = (
        outcome.timed_out
        or outcome.exit_code == NO_ANSWER_EXIT
        or bool(_NO_ANSWER.search(imq_error_line(outcome)))
    )
    if not silent:
        return result
    return dataclasses.replace(
        result,
        text=f"{result.text}\n\nNo service {service} on the broker at {address}: the broker is up, "
        f"but nothing answered describe on the '{service}' queue.",
        error_code=ErrorCode.SERVICE_NOT_ANSWERING,
        next_step=(
            f"Start {service} on the broker at {address} (fleet(action='start'), or npm start with "
            f"IMQ_REDIS={address}), check the name is its class name (its queue name), then call again. "
            "If the service runs on another Redis, pass that as redis='host:port'."
        ),
    )


def _client_failure_hint(
    outcome: RunOutcome | BridgeResult, service: str, overwrite_hint: str, address: BrokerAddress
) -> str:
    if isinstance(outcome, RunOutcome) and outcome.exit_code in (130, -signal.SIGINT):
        return f"imq stopped at a prompt (stdin is closed here): {overwrite_hint}"
    if isinstance(outcome, RunOutcome) and outcome.exit_code == NO_RPC_EXIT:
        return (
            "The project's @imqueue/rpc could not be loaded (see above): run npm install in it, with "
            "Node.js 22.12 or newer for @imqueue 3.x."
        )
    return (
        f"The client is built by asking the running service to describe itself over the broker at "
        f"{address}, so {service} must be running there (start it, for example with "
        "fleet(action='start'), and pass its class name, which is its queue name). scaffold_client "
        "shows the command offline."
    )


# ASCII digits only: npm reads no other script's digits as a version (a tag of them is refused).
_NPM_VERSION = re.compile(r"latest|next|[0-9]+(\.[0-9]+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?")


async def cli_install(version: str | None = None, *, runner: ImqRunner | None = None) -> BridgeResult:
    """`npm install -g @imqueue/cli[@version]`; needs npm, not imq."""
    runner = runner or ImqRunner()
    if version is not None and not _NPM_VERSION.fullmatch(version):
        return refused(
            f"version {version!r} is not a version npm can install here; use a semver such as "
            "'5.2.2' (or '5'), or 'latest'. Nothing was run."
        )
    npm = shutil.which("npm")
    if npm is None:
        return refused(
            "npm is not on PATH, so imq cannot be installed from here. Install Node.js (it ships "
            "npm), then call cli_install again; scaffold_service and scaffold_client work offline.",
            ErrorCode.NPM_NOT_INSTALLED,
        )
    package = f"@imqueue/cli@{version}" if version else "@imqueue/cli"
    outcome = await runner.run_program([npm, "install", "-g", package], INSTALL_TIMEOUT_SECONDS, long=True)
    installed = runner.find_imq()
    if installed:
        success = f"imq is now at {installed}; cli_status reports its version."
    else:
        success = (
            "npm finished, but imq is still not on this server's PATH: add npm's global bin "
            "directory (`npm prefix -g`, then /bin) to PATH and restart the server."
        )
    failure = "Check network access to the npm registry and the message above."
    if isinstance(outcome, RunOutcome) and "EACCES" in outcome.stderr:
        failure = (
            "npm may not write its global directory. Set a user prefix with `npm config set prefix "
            "~/.npm-global` and put ~/.npm-global/bin on PATH, or install imq yourself with sudo."
        )
    return word_outcome(outcome, success_note=success, failure_hint=failure)


async def fleet(
    action: str,
    path: str | None = None,
    services: list[str] | None = None,
    update: bool = False,
    calm: bool = False,
    verbose: bool = False,
    mode: str = "dev",
    redis: str | None = None,
    *,
    runner: ImqRunner | None = None,
) -> BridgeResult:
    """`imq ctl <action> -p <path> [-s a,b] [-u] [-c] [-v]`; -p is always passed explicitly.

    In imq 5.2.2 -u is --update (git pull in each service first), -c is --calm (start the
    services one at a time, each once the previous is ready), -v is --verbose. mode='production'
    with start or restart builds and starts each service with npm instead (production.py),
    recorded where imq ctl records its own, so status, stop and logs treat both kinds alike.
    redis (start and restart) gives the started services IMQ_REDIS=host:port, checked first.
    """
    runner = runner or ImqRunner()
    refusal = (
        refuse_unknown_choice("fleet action", action, FLEET_ACTIONS)
        or refuse_unknown_choice("fleet mode", mode, FLEET_MODES)
        or _refuse_fleet_mode(action, mode, update)
        or (refuse_option_like("path", path) if path is not None else None)
        or refuse_service_names(services)
    )
    if refusal:
        return refusal
    environment = await _service_environment(action, redis)
    if isinstance(environment, BridgeResult):
        return environment
    # imq ctl's own default is `-p .`: scanning and starting every service under wherever it runs.
    root = runner.current_directory() / path if path else runner.current_directory()
    for name in services or ():
        leaving = refuse_leaving_folder("service name", name, root)
        if leaving:
            return leaving
    where = (
        f"Path: {root}."
        if path
        else f"No path was given, so the server's working directory was used: {root}."
    )
    if mode == "production":
        return await _fleet_production(action, root, services, where, runner, environment)
    if action in ("stop", "status") and runner.find_imq() is None and read_pids(var_home()):
        return await _fleet_without_imq(action, root, services, where)
    flags = [flag for flag, wanted in (("-u", update), ("-c", calm), ("-v", verbose)) if wanted]
    return await _fleet_dev(action, root, services, flags, where, runner, environment)


async def _fleet_dev(
    action: str,
    root: Path,
    services: list[str] | None,
    flags: list[str],
    where: str,
    runner: ImqRunner,
    environment: dict[str, str],
) -> BridgeResult:
    """imq ctl itself; a restart without redis gives the broker fleet last started them on."""
    reused = ""
    if action == "restart" and not environment:
        recorded = _restart_environment(root, services)
        if isinstance(recorded, BridgeResult):
            return recorded
        environment = recorded
        if environment:
            given = said_environment(environment)
            reused = (
                f"\n\nNo redis was given, so the services were restarted with what fleet last started "
                f"them with: {given} (fleet's redis='host:port' gives another)."
            )
    kept = _keep_previous_logs(action, root, services) if runner.find_imq() is not None else {}
    before = read_pids(var_home())
    args = ["ctl", action, "-p", str(root), *(["-s", ",".join(services)] if services else []), *flags]
    outcome = await runner.run_imq(
        args, FLEET_TIMEOUT_SECONDS, long=action in ("start", "restart"), environment=environment
    )
    if action in ("stop", "restart"):
        forget_stopped(root, services)
    watched: dict[str, str] = {}
    if action in ("start", "restart"):
        record_dev_starts(root, before, environment)  # each run imq ctl started, with what it was given
        if isinstance(outcome, RunOutcome) and outcome.succeeded:
            watched = await watch_dev_starts(before)
    note = (
        f"{where} imq ctl treats each sub-folder whose src/ has a class extending IMQService or "
        f"IMQClient as a service (or the ones named in services).{reused}"
    )
    if action in ("start", "restart"):
        note = f"{note}\n\n{describe_start(root, services)}"
        if kept:
            note = f"{note}\n\n{describe_kept(kept)}"
    if action == "status":
        modes = describe_modes(root, services)
        note = f"{note}\n\n{modes}" if modes else note
    result = word_outcome(
        outcome,
        success_note=note,
        failure_hint=f"{note}\n\nCheck the path and service names (fleet(action='status') lists them).",
    )
    result = _dev_crashes(result, watched) if watched else result
    return _broker_warning(result, root, services) if IMQ_REDIS_ENV in environment else result


def _dev_crashes(result: BridgeResult, watched: dict[str, str]) -> BridgeResult:
    """imq ctl start succeeds once it has spawned `npm run dev`; under nodemon a service that then
    crashes leaves nodemon alive. What each new run's log said in its first seconds."""
    lines = [f"- {name}: {DEV_STATES[state]}" for name, state in sorted(watched.items())]
    crashed = sorted(name for name, state in watched.items() if state == "crashed")
    var = var_home()
    for name in crashed:
        tail = log_tail(var / f"{name}.log")
        lines.append(f"{name}'s output ({var / f'{name}.log'}):\n{tail or '(none)'}")
    text = f"{result.text}\n\nAfter the start, per service:\n" + "\n".join(lines)
    if not crashed:
        return dataclasses.replace(result, text=text)
    return dataclasses.replace(
        result,
        text=text,
        is_error=True,
        error_code=ErrorCode.IMQ_FAILED,
        next_step=(
            f"{', '.join(crashed)} crashed at start (the output above says why: search_docs it if it "
            "is unclear). Fix it, then fleet(action='restart', services=[...]); nodemon also restarts "
            "it when a file in src/ changes."
        ),
    )


DEV_STATES = {
    "ready": "ready (its log says 'reader channel connected')",
    "crashed": "CRASHED at start: the service is not running (nodemon, if it runs it, waits for a change)",
    "starting": "still starting (no ready line yet): fleet(action='status'), logs(action='dump') say later",
}


def _restart_environment(root: Path, services: list[str] | None) -> dict[str, str] | BridgeResult:
    """The broker a dev restart without redis gives: the one fleet last started these services on.
    imq ctl restart gives all of them one environment, so services started on different ones are
    refused rather than moved onto one broker."""
    recorded = recorded_environments(root, services)
    if not recorded:
        return {}
    names = services or [folder.name for folder in service_folders(root, None)]
    given = {name: recorded.get(name, {}) for name in names}
    kinds = {tuple(sorted(environment.items())) for environment in given.values()}
    if len(kinds) == 1:
        return dict(kinds.pop())
    said = "; ".join(
        f"{name}: " + (said_environment(env) or "this server's") for name, env in sorted(given.items())
    )
    return refused(
        f"These services were started on different brokers ({said}), and imq ctl restart gives all "
        "it restarts one. Restart each group with services=[...], or give redis='host:port' for all. "
        "Nothing was run."
    )


def _keep_previous_logs(action: str, root: Path, services: list[str] | None) -> dict[str, Path]:
    """Before imq ctl start/restart truncates them: each service's log, kept as <name>.log.1.
    start leaves a running service alone (imq ctl skips a live pid), so its log is not copied."""
    if action not in ("start", "restart"):
        return {}
    var = var_home()
    pids = read_pids(var) if action == "start" else {}
    kept: dict[str, Path] = {}
    for folder in service_folders(root, services):
        pid = pids.get(folder.name)
        if pid is not None and process_alive(pid):
            continue
        path = keep_previous_log(var, folder.name)
        if path is not None:
            kept[folder.name] = path
    return kept


def _refuse_fleet_mode(action: str, mode: str, update: bool) -> BridgeResult | None:
    if mode != "production":
        return None
    if action not in ("start", "restart"):
        return refused(
            f"mode 'production' is for start and restart; {action} acts on the services of both modes "
            f"alike. Call fleet(action='{action}') without mode. Nothing was run."
        )
    if update:
        return refused(
            "update (git pull first) is imq ctl's, in dev mode only; a production start builds what is "
            "in the folder. Call again without update. Nothing was run."
        )
    return None


async def _service_environment(action: str, redis: str | None) -> dict[str, str] | BridgeResult:
    """IMQ_REDIS for the services fleet starts, when redis is given: a broker that answers."""
    if redis is None:
        return {}
    if action not in ("start", "restart"):
        return refused(
            f"redis is the broker the started services get (IMQ_REDIS); {action} starts none. Call "
            f"fleet(action='{action}') without redis. Nothing was run."
        )
    try:
        address = broker_address(redis)
    except ValueError as error:
        return refused(f"{error} Nothing was run.")
    unreachable = await probe_broker(address)
    if unreachable is not None:
        stopped = "stopped or started" if action == "restart" else "started"
        return _no_broker(
            address,
            unreachable,
            f"fleet {action} gives the services it starts IMQ_REDIS={address}, the Redis they take "
            f"their calls from; with none there they could not serve, so nothing was {stopped}.",
            "where a Redis runs, or leave redis out to start the services on the broker their own "
            "configuration names.",
        )
    return {IMQ_REDIS_ENV: str(address)}


async def _fleet_production(
    action: str,
    root: Path,
    services: list[str] | None,
    where: str,
    runner: ImqRunner,
    environment: dict[str, str],
) -> BridgeResult:
    """start: build and start in production; restart: imq ctl stop first, then the same, each service
    with the broker it was last started with unless the call gives redis."""
    stopped = ""
    recorded = recorded_environments(root, services) if action == "restart" and not environment else {}
    if action == "restart":
        if runner.find_imq() is None:
            result = await stop_tracked(root, services)
        else:
            args = ["ctl", "stop", "-p", str(root), *(["-s", ",".join(services)] if services else [])]
            outcome = await runner.run_imq(args, FLEET_TIMEOUT_SECONDS)
            forget_stopped(root, services)
            result = word_outcome(outcome, failure_hint="The services were not stopped, so none was started.")
        if result.is_error:
            return result
        stopped = f"{result.text}\n\n"
    started = await start_production(root, services, runner, environment, recorded)
    kept = "".join(f"\n- {name}: {said_environment(given)}" for name, given in sorted(recorded.items()))
    if kept:
        where = (
            f"{where}\n\nNo redis was given, so each service was restarted with the environment it was "
            f"last started with (fleet's redis='host:port' gives another):{kept}"
        )
    result = dataclasses.replace(started, text=f"{stopped}{where}\n\n{started.text}")
    return _broker_warning(result, root, services) if environment or recorded else result


def _broker_warning(result: BridgeResult, root: Path, services: list[str] | None) -> BridgeResult:
    """A start that gave IMQ_REDIS to services whose code never reads it: said first, and in the
    next step of a failure (the service then dies on localhost:6379, or runs on the wrong broker)."""
    warning = ignoring_broker(root, services)
    if not warning:
        return result
    next_step = (
        f"{warning.removeprefix('WARNING: ')} {result.next_step}" if result.is_error else result.next_step
    )
    return dataclasses.replace(result, text=f"{warning}\n\n{result.text}", next_step=next_step)


async def _fleet_without_imq(action: str, root: Path, services: list[str] | None, where: str) -> BridgeResult:
    """stop and status of what imq's records hold, on a server without imq (a production start
    needs none): the same records, the same steps as imq ctl's."""
    missing = (
        f"imq is not installed here, so the server read imq's own records in {var_home()} and acted "
        f"as imq ctl {action} does. {INSTALL_HINT}"
    )
    if action == "status":
        text = describe_modes(root, services) or "No services are tracked as running."
        return BridgeResult(text=f"{text}\n\n{where} {missing}", is_error=False, exit_code=None, command=[])
    stopped = await stop_tracked(root, services)
    return dataclasses.replace(stopped, text=f"{stopped.text}\n\n{where} {missing}")


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
        error_code=ErrorCode.INTERACTIVE_ONLY,
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
    return word_outcome(
        outcome,
        success_note=f"Stored {option} in imq's config." if action == "set" else "",
        failure_hint=f"Known options: {', '.join(CONFIG_OPTIONS)}. Set a missing one with action='set'.",
    )


def _refuse_config_arguments(action: str, option: str | None, value: str | None) -> BridgeResult | None:
    if action == "set" and (option is None or value is None):
        return refused("config action 'set' needs both option and value. Nothing was run.")
    if action == "get" and value is not None:
        return refused("config action 'get' takes an option but no value. Nothing was run.")
    if action in ("check", "init") and (option is not None or value is not None):
        return refused(f"config action {action!r} takes no option or value. Nothing was run.")
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
    for name in named:
        leaving = refuse_leaving_folder("service name", name, var_home(), ".log")
        if leaving:
            return leaving
    if action == "dump":
        args = ["log", *named, "--no-follow", *([] if prefix else ["--no-prefix"])]
    else:
        args = ["log", *named, "--clean"]
    outcome = await runner.run_imq(args, LOGS_TIMEOUT_SECONDS)
    whose = ", ".join(named) if named else "all services"
    var = var_home()
    if action == "clean":
        succeeded = isinstance(outcome, RunOutcome) and outcome.succeeded
        removed = remove_previous_logs(var, named or None) if succeeded else 0
        note = f"Deleted the collected logs of {whose}" + (
            f", and {removed} kept log(s) of earlier runs." if removed else "."
        )
    else:
        note = _describe_previous_logs(var, named)
    return word_outcome(
        outcome,
        success_note=note,
        failure_hint="Logs exist only for services started with fleet(action='start'); check the names."
        + (f"\n{note}" if note and action == "dump" else ""),
    )


def _describe_previous_logs(var: Path, named: list[str]) -> str:
    """Where the earlier runs' logs of the dumped services are (fleet keeps them at each start)."""
    if named:
        names = named
    else:
        try:
            names = sorted(entry.name[: -len(".log")] for entry in var.glob("*.log") if entry.is_file())
        except OSError:
            names = []
    found = {name: previous_logs(var, name) for name in names}
    lines = [f"- {name}: {', '.join(str(path) for path in paths)}" for name, paths in found.items() if paths]
    if not lines:
        return ""
    return (
        "The log above is the current run's only. The earlier runs' logs (newest first; read them "
        "as files):\n" + "\n".join(lines)
    )


__all__ = [
    "APPLY_TIMEOUT_SECONDS",
    "CLIENT_TIMEOUT_SECONDS",
    "CONFIG_TIMEOUT_SECONDS",
    "DRY_RUN_TIMEOUT_SECONDS",
    "FLEET_MODES",
    "FLEET_TIMEOUT_SECONDS",
    "IMQ_OPTIONS",
    "INSTALL_TIMEOUT_SECONDS",
    "LOGS_TIMEOUT_SECONDS",
    "STATUS_TIMEOUT_SECONDS",
    "cli_help",
    "cli_install",
    "cli_status",
    "config",
    "create_service",
    "fleet",
    "generate_client",
    "imq_error_line",
    "logs",
]

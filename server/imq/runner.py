"""Running the imq CLI (or npm) safely, and wording what happened for an agent.

What lives here, top to bottom:

- ``BridgeResult``: what every bridge operation returns - the text an agent reads, whether it
  is an error, the program's exit code and the exact argv that ran (empty when nothing ran).
- Limits: the kill grace period, the output drain time and the per-stream output cap.
- Output cleaning: ANSI codes stripped, spinner redraws settled, each stream capped to its tail.
- Process control: a timed-out process group gets SIGTERM, a grace period, then SIGKILL.
- ``ImqRunner``: finds imq (re-checked on every call, so PATH changes are seen), runs it
  without a shell, with stdin closed, in its own process group -> a ``RunOutcome``; a long
  run (``long=True``) reports its progress to a client that asked for it (progress.py).
- ``word_outcome``: a ``RunOutcome`` plus the operation's notes -> a ``BridgeResult``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import shutil
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from imqueue_mcp.server import progress
from imqueue_mcp.server.errors import ErrorCode

__all__ = [
    "INSTALL_HINT",
    "OUTPUT_CAP_BYTES",
    "BridgeResult",
    "ImqRunner",
    "RunOutcome",
    "group_alive",
    "settle_carriage_returns",
    "signal_group",
    "strip_ansi",
    "word_outcome",
]

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
    structured: dict[str, Any] | None = None  # structuredContent, for tools that declare an outputSchema
    error_code: ErrorCode | None = None  # for an error: its code in errors.py's table
    next_step: str = ""  # for an error: what to do next, when the operation knows better than the table


# --------------------------------------------------------------------------- limits

KILL_GRACE_SECONDS = 2.0  # between SIGTERM and SIGKILL of a timed-out process group
KILL_SETTLE_SECONDS = 1.0  # for SIGKILLed processes to finish dying
OUTPUT_DRAIN_SECONDS = 2.0  # a detached child (a started service) may hold imq's pipes open
OUTPUT_CAP_BYTES = 64 * 1024  # per stream; the tail is kept because errors come last

IMQ_OVERRIDE_ENV = "IMQUEUE_MCP_IMQ"

INSTALL_HINT = (
    "Install it with `npm install -g @imqueue/cli` (or call cli_install), then retry. "
    "Meanwhile scaffold_service and scaffold_client work offline without imq."
)

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


def signal_group(group_id: int, sig: signal.Signals) -> None:
    try:
        os.killpg(group_id, sig)
    except (ProcessLookupError, PermissionError):
        pass  # the group is already gone


def group_alive(group_id: int) -> bool:
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


async def _kill_once_started(starting: asyncio.Future[asyncio.subprocess.Process]) -> None:
    """SIGKILL the group of a process whose start a cancelled call was awaiting, once it has
    started; a start that failed left nothing to kill."""
    try:
        process = await starting
    except Exception:
        return
    signal_group(process.pid, signal.SIGKILL)


async def _stop_process_group(process: asyncio.subprocess.Process, grace_seconds: float) -> None:
    """SIGTERM the group, give it a grace period, then SIGKILL whatever is left of it."""
    group_id = process.pid  # start_new_session makes imq the leader of its own group
    signal_group(group_id, signal.SIGTERM)
    await _wait_for_group_exit(process, grace_seconds)
    signal_group(group_id, signal.SIGKILL)
    await process.wait()
    # SIGKILL is delivered asynchronously; return only once the children are really gone.
    await _wait_for_group_exit(process, KILL_SETTLE_SECONDS)


async def _wait_for_group_exit(process: asyncio.subprocess.Process, seconds: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline and (process.returncode is None or group_alive(process.pid)):
        await asyncio.sleep(0.05)


def _child_environment() -> dict[str, str]:
    environment = dict(os.environ)
    # Ask chalk-style libraries for plain text; imq colours anyway, which strip_ansi handles.
    environment["NO_COLOR"] = "1"
    environment["FORCE_COLOR"] = "0"
    return environment


@dataclass
class RunOutcome:
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
        return BridgeResult(
            text=text, is_error=True, exit_code=None, command=[], error_code=ErrorCode.IMQ_NOT_INSTALLED
        )

    async def run_imq(
        self,
        args: Sequence[str],
        timeout_seconds: float,
        *,
        long: bool = False,
        environment: dict[str, str] | None = None,
    ) -> RunOutcome | BridgeResult:
        """Runs imq with args; a BridgeResult back means imq could not be run at all."""
        imq = self.find_imq()
        if imq is None:
            return self.missing_imq()
        return await self.run_program([imq, *args], timeout_seconds, long=long, environment=environment)

    async def run_program(
        self,
        argv: list[str],
        timeout_seconds: float,
        *,
        long: bool = False,
        cwd: Path | None = None,
        environment: dict[str, str] | None = None,
    ) -> RunOutcome | BridgeResult:
        """Runs argv (in `cwd`, else the working directory; `environment` added to this process's);
        a long run reports its progress to a client that asked (progress.py)."""
        timeout = self.timeout_seconds if self.timeout_seconds is not None else timeout_seconds
        starting = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,  # a prompt sees EOF instead of waiting forever
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group, so a timeout can stop children too
                cwd=cwd if cwd is not None else self.working_directory,
                env={**_child_environment(), **(environment or {})},
            )
        )
        try:
            # Shielded: a call cancelled while the start completes (a busy loop can take longer
            # than imq takes to start its children) must still find the group to kill; cancelled
            # inside create_subprocess_exec, asyncio would kill the leader alone.
            process = await asyncio.shield(starting)
        except asyncio.CancelledError:
            await _kill_once_started(starting)
            raise
        except OSError as error:
            return BridgeResult(
                text=f"Could not start {argv[0]}: {error}. Check that it is an executable file "
                "and that the server's working directory exists.",
                is_error=True,
                exit_code=None,
                command=argv,
                error_code=ErrorCode.IMQ_FAILED,
            )
        stdout, stderr = _Tail(self.output_cap_bytes), _Tail(self.output_cap_bytes)
        readers = asyncio.gather(_read_into(process.stdout, stdout), _read_into(process.stderr, stderr))
        timed_out = False
        watch = progress.ticking(_display(argv), timeout) if long else contextlib.nullcontext()
        try:
            async with watch:
                try:
                    await asyncio.wait_for(process.wait(), timeout)
                except TimeoutError:
                    timed_out = True
                    await _stop_process_group(process, self.kill_grace_seconds)
        except asyncio.CancelledError:
            # The caller gave up (an MCP cancellation, a server shutdown), wherever it was waiting
            # (the progress notice too, or the timeout's grace period): leave nothing running.
            signal_group(process.pid, signal.SIGKILL)
            readers.cancel()
            raise
        try:
            await asyncio.wait_for(readers, OUTPUT_DRAIN_SECONDS)
        except TimeoutError:
            pass  # keep what was read; the holder of the pipe may run for hours
        return RunOutcome(
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


def _transcript(outcome: RunOutcome) -> str:
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


def word_outcome(
    outcome: RunOutcome | BridgeResult,
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
    code = None
    if not outcome.succeeded:
        code = ErrorCode.IMQ_TIMED_OUT if outcome.timed_out else ErrorCode.IMQ_FAILED
    return BridgeResult(
        text=text,
        is_error=not outcome.succeeded,
        exit_code=outcome.exit_code,
        command=outcome.argv,
        stdout=outcome.stdout,
        stderr=outcome.stderr,
        timed_out=outcome.timed_out,
        error_code=code,
        next_step=note if code else "",
    )

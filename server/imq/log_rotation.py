"""The previous runs' logs, kept when fleet starts a service again.

imq ctl start (ctl.ts: `openSync(logFile, 'w')`) and the production start both truncate
`<imq home>/var/<service>.log` at each start, so an agent asking why a service died found the new
run's log, empty. Before fleet starts or restarts a service, its current log is copied to
`<service>.log.1`, the older copies shifting to `.2` and `.3`; the oldest is dropped. Each copy
holds the log's last KEPT_BYTES (a line saying so heads a cut one). The names do not end in
`.log`, so `imq log` (which reads every `*.log`) never shows them as services; logs(action='clean')
removes them with the logs.

A copy, not a rename: a service imq ctl leaves running (start skips a live pid) keeps writing to
its open log, which must stay where imq reads it.

    keep_previous_log(var, name)     before a start: the copy, or None when there was no output
    previous_logs(var, name)         the kept copies, newest first
    remove_previous_logs(var, names) with logs(action='clean')
"""

from __future__ import annotations

import os
from pathlib import Path

KEPT_RUNS = 3  # <service>.log.1 (the run before this one) .. .3
KEPT_BYTES = 1024 * 1024  # each kept copy: the last MiB of its run's output
KEPT_SUFFIXES = {str(run) for run in range(1, KEPT_RUNS + 1)}


def previous_log(var: Path, name: str, run: int = 1) -> Path:
    return var / f"{name}.log.{run}"


def previous_logs(var: Path, name: str) -> list[Path]:
    """The kept copies of name's earlier runs, newest first."""
    return [path for run in range(1, KEPT_RUNS + 1) if (path := previous_log(var, name, run)).is_file()]


def keep_previous_log(var: Path, name: str) -> Path | None:
    """Copies var/<name>.log (its last KEPT_BYTES) to <name>.log.1 after shifting the older copies;
    the copy's path, or None when the log is missing or empty (nothing is shifted then)."""
    log = var / f"{name}.log"
    try:
        size = log.stat().st_size
        if size == 0 or not log.is_file():
            return None
        with log.open("rb") as source:
            if size > KEPT_BYTES:
                source.seek(size - KEPT_BYTES)
                source.readline()  # start on a whole line
            data = source.read()
    except OSError:
        return None
    if size > KEPT_BYTES:
        cut = f"[... the first {size - len(data)} bytes of this run's output were not kept]\n"
        data = cut.encode() + data
    kept = previous_log(var, name)
    try:
        if kept.is_file() and kept.read_bytes() == data:
            return kept  # this run is kept already (a start that did not start it again)
    except OSError:
        pass
    for run in range(KEPT_RUNS - 1, 0, -1):
        older = previous_log(var, name, run)
        if older.is_file():
            os.replace(older, previous_log(var, name, run + 1))
    temporary = kept.with_name(f".{kept.name}.tmp")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, kept)
    except OSError:
        temporary.unlink(missing_ok=True)
        return None
    return kept


def remove_previous_logs(var: Path, names: list[str] | None) -> int:
    """Deletes the kept copies of the named services (all services when None); how many."""
    if names:
        paths = [path for name in names for path in previous_logs(var, name)]
    else:
        try:
            paths = [
                entry
                for entry in var.iterdir()
                if entry.is_file() and entry.name.rpartition(".log.")[2] in KEPT_SUFFIXES
            ]
        except OSError:
            return 0
    removed = 0
    for path in paths:
        try:
            path.unlink()
            removed += 1
        except OSError:
            continue
    return removed


def describe_kept(kept: dict[str, Path]) -> str:
    """One line for a fleet reply: where each started service's previous run's log now is."""
    if not kept:
        return ""
    where = "; ".join(f"{name}: {path}" for name, path in sorted(kept.items()))
    return (
        f"The previous run's log of each service started again was kept (its last {KEPT_BYTES // 1024} KiB; "
        f"{KEPT_RUNS} runs kept, as <service>.log.1 newest .. .{KEPT_RUNS}): {where}."
    )

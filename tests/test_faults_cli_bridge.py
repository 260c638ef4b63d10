"""The CLI bridge against an imq that hangs (fixtures/hanging_imq/imq): waiting on a prompt,
flooding its output, or sitting on a tree of sleeping children while ignoring SIGTERM.

At the timeout the bridge must stop imq's whole process group, and the process table must then
show nothing of it still running: no member of the group, no child or grandchild it started
(orphaned ones included), and no zombie of ours; the output caps must hold. The timeout,
SIGTERM-then-SIGKILL and cancellation cases of the regular stand-in are in test_cli_bridge.py.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from imqueue_mcp.server.imq.bridge import cli_help
from imqueue_mcp.server.imq.runner import OUTPUT_CAP_BYTES, ImqRunner

HANGING_IMQ = Path(__file__).resolve().parents[1] / "fixtures" / "hanging_imq" / "imq"
TIMEOUT_SECONDS = 1.0
GRACE_SECONDS = 0.5
# timeout + SIGTERM grace + SIGKILL settling + output drain, and slack for a loaded machine
BOUND_SECONDS = TIMEOUT_SECONDS + GRACE_SECONDS + 1.0 + 2.0 + 3.0


def process_table() -> dict[int, tuple[str, int, int]]:
    """pid -> (state, parent pid, process group), from /proc."""
    table = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended while we looked
        table[int(stat.parent.name)] = (fields[0], int(fields[1]), int(fields[2]))
    return table


def still_running(pids: list[int], group: int) -> list[tuple[int, tuple[str, int, int]]]:
    """What is left of the run: live members of the group or of `pids`, and zombies of ours.
    Zombies of orphans belong to init, which reaps them on its own schedule; they run nothing."""
    table = process_table()
    left = []
    for pid, (state, parent, pgid) in table.items():
        ours = pid in pids or pgid == group
        if ours and (state != "Z" or parent == os.getpid()):
            left.append((pid, (state, parent, pgid)))
    return left


@pytest.fixture
def pidfile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "pids"
    monkeypatch.setenv("IMQ_HANG_PIDFILE", str(path))
    return path


@pytest.mark.parametrize("mode", ["prompt", "flood", "tree"])
def test_a_hanging_imq_is_stopped_with_everything_it_started(
    mode: str, pidfile: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IMQ_HANG", mode)
    runner = ImqRunner(
        imq_path=str(HANGING_IMQ),
        timeout_seconds=TIMEOUT_SECONDS,
        kill_grace_seconds=GRACE_SECONDS,
        working_directory=str(tmp_path),
    )
    started = time.monotonic()
    result = asyncio.run(cli_help(runner=runner))
    elapsed = time.monotonic() - started

    assert result.is_error and result.timed_out, result.text
    assert f"Timed out after {TIMEOUT_SECONDS:g} s" in result.text
    assert elapsed < BOUND_SECONDS, elapsed
    assert pidfile.exists(), result.text[-3000:]
    pids = [int(line) for line in pidfile.read_text().split()]
    assert len(pids) == {"prompt": 1, "flood": 1, "tree": 9}[mode], pids
    assert still_running(pids, group=pids[0]) == []
    # the caps hold: the tail of each stream, and a notice of what was cut
    for stream in (result.stdout, result.stderr):
        assert len(stream.encode()) <= OUTPUT_CAP_BYTES + 200
    assert len(result.text.encode()) <= 2 * OUTPUT_CAP_BYTES + 2000
    if mode == "flood":
        assert "bytes of earlier output cut" in result.stdout and "\x1b[" not in result.text
    if mode == "prompt":
        assert "Overwrite it? (y/N)" in result.stdout

"""Stopping a child process for good: the one helper the benchmarks and the process-driving tests share."""

from __future__ import annotations

import subprocess
from typing import Any


def stop(process: subprocess.Popen[Any], grace: float = 15.0, *, terminate: bool = True) -> None:
    """SIGTERM (unless terminate=False: the caller has already asked it to end, e.g. by closing
    its stdin), wait up to `grace` seconds, then SIGKILL and reap."""
    if terminate and process.poll() is None:
        process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(grace)

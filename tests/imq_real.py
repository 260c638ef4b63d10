"""The stack .ci/install-imq.sh builds from ../shared/vendor: @imqueue/core 3.4.2 and
@imqueue/rpc 3.7.2, and the real imq (@imqueue/cli 5.2.2) on them, with their own Node 22.

Where it is comes from benchmarks/stack.py, which the agent journeys share.

A test that needs it calls ``require_real_imq()``: it skips naming the install command when
the build is missing, and fails instead in CI (IMQUEUE_MCP_CI=1). The framework end-to-end
tests compile and run services on ``SERVICE_RUNTIME`` (3.x) with ``NODE`` (22).

Every run of real imq gets a temporary imq home: imq 5.2.2 puts its config, templates and
fleet state under ``$IMQ_CLI_HOME/.imq`` (lib/constants.ts: IMQ_CLI_HOME, else the OS home),
so a test never reads or writes the user's own ~/.imq.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.stack import (
    CORE_TARBALL,
    IMQ,
    IMQ_VERSION,
    INSTALL,
    NODE,
    NODE_BIN,
    ROOT,
    RPC_TARBALL,
    SERVICE_RUNTIME,
    TEMPLATE,
    TSC,
    imq_root,
)
from conftest import require_external, server_environment

# The stack's paths come from benchmarks/stack.py (the agent journeys share them); the tests import them here.
__all__ = [
    "CORE_TARBALL",
    "IMQ",
    "IMQ_VERSION",
    "INSTALL",
    "NODE",
    "NODE_BIN",
    "ROOT",
    "RPC_TARBALL",
    "SERVICE_RUNTIME",
    "TEMPLATE",
    "TSC",
    "imq_root",
    "REDIS_PORT",
    "FRAMEWORK1",
    "RPC1",
    "CORE1",
    "RPC3",
    "RPC_API",
    "home_footprint",
    "port_is_free",
    "process_group",
    "real_imq_environment",
    "require_real_imq",
    "run_imq",
    "use_real_imq_home",
]

REDIS_PORT = 6379  # imq's client generator reaches Redis here, whatever the service uses
# The two real installs the installed-API tests read: the registry's 1.x (.ci/install-framework.sh
# lays it out in tests/framework1) and the 3.x runtime built from ../shared/vendor.
FRAMEWORK1 = Path(__file__).resolve().parent / "framework1"
RPC1 = FRAMEWORK1 / "node_modules" / "@imqueue" / "rpc"
CORE1 = FRAMEWORK1 / "node_modules" / "@imqueue" / "core"
RPC3 = SERVICE_RUNTIME / "@imqueue" / "rpc"
RPC_API = "https://imqueue.org/api/rpc/latest/"


def require_real_imq() -> None:
    """Skip (fail in CI) unless the real imq 5.2.2 is built and answers --version."""
    present = IMQ.is_file() and os.access(IMQ, os.X_OK)
    if present:
        version = subprocess.run(
            [str(IMQ), "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        )
        present = version.returncode == 0 and version.stdout.strip() == IMQ_VERSION
    require_external(present, f"imq {IMQ_VERSION} (expected at {IMQ})", INSTALL)


def real_imq_environment(home: Path, **extra: str) -> dict[str, str]:
    """A server environment whose bridge runs the real imq, with a temporary home and imq home.

    imq's own Node 22 comes first on PATH, so the `npm run dev` that `imq ctl start` spawns
    runs a service with it too; the imq stand-in is not on PATH.
    """
    env = server_environment(home, **extra)
    env["IMQUEUE_MCP_IMQ"] = str(IMQ)
    env["PATH"] = os.pathsep.join([str(NODE_BIN), str(Path(sys.executable).parent), env["PATH"]])
    return env


def use_real_imq_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """For a test that runs the bridge in-process: a temporary HOME that is also IMQ_CLI_HOME (imq
    keeps its state in <it>/.imq), no IMQUEUE_MCP_IMQ, and the real imq and its Node first on PATH
    (npm after them, for the services imq ctl starts). Returns the home."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("IMQ_CLI_HOME", str(home))
    monkeypatch.delenv("IMQUEUE_MCP_IMQ", raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join([str(IMQ.parent), str(NODE_BIN), os.environ["PATH"]]))
    return home


def process_group(group: int) -> set[int]:
    """The live processes of a process group (zombies, ended but not yet reaped, left out)."""
    members = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # it ended while we looked
        if fields[2] == str(group) and fields[0] != "Z":
            members.add(int(stat.parent.name))
    return members


def run_imq(
    args: list[str], cwd: Path, imq_home: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Runs the real imq directly (not through the bridge), stdin closed, with its own imq home."""
    env = dict(os.environ, IMQ_CLI_HOME=str(imq_home), NO_COLOR="1")
    env["PATH"] = os.pathsep.join([str(NODE_BIN), env.get("PATH", "")])
    return subprocess.run(
        [str(IMQ), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def home_footprint(home: Path) -> dict[str, tuple[int, int]]:
    """What a run could leave in the user's home: its top-level entries and all of ~/.imq."""
    footprint: dict[str, tuple[int, int]] = {}
    if not home.is_dir():
        return footprint
    for entry in home.iterdir():
        stat = entry.lstat()
        footprint[entry.name] = (stat.st_mtime_ns if entry.name == ".imq" else 0, 0)
    imq_home = home / ".imq"
    if imq_home.is_dir():
        for path in imq_home.rglob("*"):
            stat = path.lstat()
            footprint[str(path.relative_to(home))] = (stat.st_mtime_ns, stat.st_size)
    return footprint

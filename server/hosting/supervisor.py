"""The supervisor of N uvicorn workers: uvicorn's own, with two signals handled otherwise.

SIGHUP: uvicorn restarts every worker on it (and each restart would drain); here it is passed on
to the workers, each of which then checks for a new snapshot generation, as a single process does.

SIGTERM (or Ctrl-C): passed on to the workers as it arrives, and the supervisor closes its copy of
the listening socket first. The workers hold theirs through the drain, and the listener closes as
the last of them stops accepting, so a connection after the drain is refused (a balancer tries
another backend) rather than queued until the supervisor exits and then reset.

A worker found dead (killed, say by the OOM killer, so that it never ran its own shutdown) is
forgotten by the metrics before uvicorn starts its replacement: otherwise its last generation,
fetched time and in-flight calls would stay in every scrape for the life of the server
(metrics.py, forget_worker).

Loaded with the hosted app (operations.py), never on the stdio path.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket

import uvicorn
from uvicorn.supervisors.multiprocess import Multiprocess

from imqueue_mcp.server.hosting.metrics import forget_worker

logger = logging.getLogger(__name__)


class Supervisor(Multiprocess):
    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket]) -> None:
        super().__init__(config, sockets)
        self.passed_on = False
        for stop in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stop, self.on_stop)

    def on_stop(self, number: int, _frame: object) -> None:
        """SIGTERM or SIGINT reaches the workers as it arrives. uvicorn's own handler only
        queues it for its loop, which turns every 0.5 s after pinging each worker (up to 5 s
        each): under load the workers heard of a drain seconds late, while a balancer counts
        the drain from the signal. Only closes and os.kill here: the loop's pipes and its
        event stay its own (a handler runs between any two of its steps)."""
        self.signal_queue.append(number)
        self.let_go()

    def let_go(self) -> None:
        """Once: close this process's copy of the listener and send the workers SIGTERM. The
        workers keep serving for the drain; the listener must close when the last of them
        stops accepting, not when this process exits: until then the kernel would take new
        connections into a queue nobody reads, then reset them (issue 26 item 8)."""
        if self.passed_on:
            return
        self.passed_on = True
        for sock in self.sockets:
            sock.close()
        for process in self.processes:
            if process.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGTERM)

    def keep_subprocess_alive(self) -> None:
        if self.passed_on:  # no worker is restarted once the listener is let go
            return
        before = {process.pid for process in self.processes}
        for process in self.processes:
            # exitcode reaps a dead worker; forgotten now, before a replacement is forked and
            # could be given the same pid (whose files forget_worker would then delete)
            if process.pid is not None and process.exitcode is not None:
                forget_worker(process.pid)
        super().keep_subprocess_alive()
        # A worker uvicorn found hung (no answer to its ping) was killed and replaced just now.
        for pid in before - {process.pid for process in self.processes}:
            if pid is not None:
                forget_worker(pid)

    def terminate_all(self) -> None:
        self.let_go()
        super().terminate_all()  # a second SIGTERM changes nothing in a draining worker

    def handle_hup(self) -> None:
        logger.warning("SIGHUP: each worker checks for a new snapshot generation")
        for process in self.processes:
            if process.pid is not None and process.exitcode is None:
                os.kill(process.pid, signal.SIGHUP)

"""Running the hosted app in production: the probes, metrics and signals around it, and uvicorn.

    operated(app, server, services)   the app with /healthz, /readyz and /metrics in front
                                      (lifecycle.operations) and each tool call metered
    operating(services, config)       the lifespan part: SIGTERM drains, SIGHUP checks for a new
                                      snapshot generation, the corpus starts loading, and the
                                      metrics follow each new generation
    serve(config, host, port, workers)  uvicorn with the connection guard (connections.py), one
                                      process or a supervisor of N workers

With N workers, supervisor.py's Supervisor (uvicorn's, with SIGHUP and SIGTERM passed on).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp

from imqueue_mcp.server.config import Config
from imqueue_mcp.server.docs.corpus_keeper import CorpusUnavailable, LoadedCorpus
from imqueue_mcp.server.hosting import connections, lifecycle
from imqueue_mcp.server.hosting.metrics import MULTIPROCESS_DIR, Metrics, unix_time
from imqueue_mcp.server.hosting.supervisor import Supervisor
from imqueue_mcp.server.services import Services

logger = logging.getLogger(__name__)

APP_FACTORY = "imqueue_mcp.server.serve:create_app"  # the composition root (server/serve.py)


def operated(
    app: ASGIApp, server: MCPServer[Any], services: Services, tools: Iterable[str], state: lifecycle.Lifecycle
) -> tuple[ASGIApp, Metrics]:
    """`app` behind the probe paths, with `server`'s tool calls counted (by the names in `tools`;
    any other name a client sends counts as "other"); and the metrics. `state` is the app's
    lifecycle, which operating()'s signal handlers move."""
    keeper = services.corpus

    def corpus_age() -> float | None:
        corpus = keeper.answering()
        stamp = unix_time(corpus.fetched_at) if corpus is not None else None
        return None if stamp is None else max(0.0, time.time() - stamp)

    def readiness() -> dict[str, Any] | None:
        # The generation, its kind and age; never where it came from (a URL may carry credentials,
        # a path names the operator's folders): SECURITY.md, docs/hosted.md.
        corpus = keeper.answering()
        if corpus is None:
            return None
        age = corpus_age()
        return {
            "generation": corpus.generation,
            "source": corpus.source,
            "fetchedAt": corpus.fetched_at,
            "ageSeconds": None if age is None else round(age),
        }

    metrics = Metrics(corpus_age, tools)
    server.meter = metrics.call  # type: ignore[attr-defined]
    metrics.watch_cache("replies", services.replies)
    metrics.watch_cache("answers", services.answers)

    async def loaded(old: LoadedCorpus | None, new: LoadedCorpus) -> None:
        metrics.corpus_loaded(new.generation, new.source, new.fetched_at)

    keeper.watch(loaded)
    keeper.on_failure(metrics.refresh_failed)
    return lifecycle.operations(app, readiness, metrics.page, state), metrics


@asynccontextmanager
async def operating(
    services: Services, config: Config, metrics: Metrics, state: lifecycle.Lifecycle
) -> AsyncIterator[None]:
    """Inside the app's lifespan: signals taken over, the corpus loading, metrics closed at the end."""
    lifecycle.take_over_signals(
        state, config.drain_seconds, services.corpus.check_generation, on_drain=services.corpus.stop_following
    )
    tasks = [asyncio.create_task(warm(services, len(metrics.tools)))]
    if config.follows_snapshot and config.snapshot_poll_seconds > 0:
        tasks.append(asyncio.create_task(poll(services, config.snapshot_poll_seconds)))
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        metrics.close()


async def poll(services: Services, seconds: float) -> None:
    """Check the followed snapshot for a new generation every `seconds`, calls or none."""
    while True:
        await asyncio.sleep(seconds)
        await services.corpus.check_generation()


async def warm(services: Services, tools: int) -> None:
    """Load a corpus now, so that /readyz can say ready before the first call: the snapshot on
    disk if there is one, else the first load (the live sites, or the followed snapshot)."""
    keeper = services.corpus
    await services.preload()
    if keeper.answering() is None:
        try:
            await keeper.current()
        except CorpusUnavailable as error:
            logger.warning("not ready: %s", error)
    corpus = keeper.answering()
    if corpus is not None:
        lifecycle.say(
            f"ready (pid {os.getpid()}): {tools} read-only tools over docs generation {corpus.generation} "
            f"({corpus.source}, feeds read {corpus.fetched_at})"
        )


def clear_metrics_dir(folder: Path) -> None:
    """The operator's PROMETHEUS_MULTIPROC_DIR, emptied of a previous run's files before the workers
    start (prometheus_client asks for it): a run killed whole (an OOM kill, a node lost) left its
    workers' live gauges there, and every scrape reported those dead pids as live workers."""
    try:
        stale = list(folder.glob("*.db"))
    except OSError:
        return
    for file in stale:
        try:
            file.unlink()
        except OSError as error:
            logger.warning("%s: a previous run's metrics file could not be removed: %s", file, error)
    if stale:
        logger.warning("%s: removed %d metrics files of a previous run", folder, len(stale))


def serve(config: Config, *, host: str, port: int, workers: int) -> None:
    import uvicorn

    os.environ.update(config.to_environment())  # what each worker's create_app() reads
    metrics_dir = None
    if workers > 1 and not os.environ.get(MULTIPROCESS_DIR):
        # prometheus_client's multiprocess mode: every worker writes its values under one folder.
        metrics_dir = tempfile.mkdtemp(prefix="imqueue-mcp-metrics-")
        os.environ[MULTIPROCESS_DIR] = metrics_dir
    elif workers > 1:
        clear_metrics_dir(Path(os.environ[MULTIPROCESS_DIR]))
    options: dict[str, Any] = {
        "factory": True,
        "host": host,
        "port": port,
        "workers": workers,
        "loop": "uvloop" if importlib.util.find_spec("uvloop") else "asyncio",
        "http": connections.PROTOCOL,
        "log_level": "warning",
        "server_header": False,
        "timeout_graceful_shutdown": lifecycle.IN_FLIGHT_GRACE_SECONDS,
        "timeout_keep_alive": config.idle_timeout,
    }
    settings = uvicorn.Config(APP_FACTORY, **options)

    where = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    lifecycle.say(
        f"serving MCP (Streamable HTTP, read-only) at {where}/mcp with {workers} worker(s); probes "
        f"{where}/healthz and /readyz, metrics /metrics; Ctrl-C or SIGTERM drains for "
        f"{config.drain_seconds:g} s, a second Ctrl-C stops at once"
    )
    try:
        if workers > 1:
            try:
                Supervisor(settings, sockets=[settings.bind_socket()]).run()
            finally:
                if metrics_dir is not None:
                    shutil.rmtree(metrics_dir, ignore_errors=True)
        else:
            server = uvicorn.Server(settings)
            server.run()
            if not server.started:
                sys.exit(3)  # uvicorn's STARTUP_FAILURE: the app, or the socket, failed before serving
    except KeyboardInterrupt:
        lifecycle.say("stopped at once")
        return
    lifecycle.say("stopped")

"""The composition root: the MCP adapter (server/mcp) handed to a transport (server/hosting).

The adapter builds the MCPServer and knows nothing of how it is served; hosting serves an
MCPServer it is given and knows nothing of tools. Only this module imports both.

    create_app(config)    the hosted ASGI app (uvicorn's factory in every worker process)
    run_http(config, ..)  serve that app: one process, or uvicorn workers (server/hosting/operations.py)
    run_stdio(config)     the local server over stdio, the snapshot preloaded while the client starts
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp

from imqueue_mcp.server.config import Config, config_from_environment, parse_log_level
from imqueue_mcp.server.hosting.stdio import serve_stdio
from imqueue_mcp.server.mcp.app import create_server
from imqueue_mcp.server.mcp.tools import hosted_records, local_only_names
from imqueue_mcp.server.observe import configure_logging
from imqueue_mcp.server.services import Services


def hosted_server(config: Config) -> tuple[MCPServer[Any], Services]:
    """The adapter's read-only server, every result and log message rewritten by the Redactor."""
    from imqueue_mcp.server.hosting.redact import Redactor  # hosting's modules: not on the stdio path
    from imqueue_mcp.server.hosting.surface import HostedSurface

    return create_server(
        config,
        hosted=True,
        redactor=lambda services: Redactor(services.config, services.corpus.snapshot_path()),
        surface=HostedSurface(local_only_names()),
    )


def create_app(config: Config | None = None) -> ASGIApp:
    """The hosted ASGI app. Without a config, read it from the environment (worker processes)."""
    from imqueue_mcp.server.hosting.http import hosted_app

    config = config or config_from_environment()
    configure_logging(parse_log_level(None))  # a worker's own; __main__ checked the same variable
    server, services = hosted_server(config)
    tools = [(record.name, record.title) for record in hosted_records()]
    return hosted_app(server, services, config, tools)


def run_http(config: Config, *, host: str, port: int, workers: int) -> None:
    from imqueue_mcp.server.hosting.http import warn_on_default_hosts
    from imqueue_mcp.server.hosting.operations import serve as serve_workers

    warn_on_default_hosts(config, host)
    serve_workers(config, host=host, port=port, workers=workers)


def run_stdio(config: Config) -> None:
    from imqueue_mcp.server.docs.hit_passages import STDIO_WARM_PAUSE, pace_warm_up

    pace_warm_up(STDIO_WARM_PAUSE)  # one client: its call's turns of the loop come before the warm-up's pages
    server, services = create_server(config, hosted=False)

    async def serve_with_the_snapshot_preloaded() -> None:
        # The snapshot loads (off the event loop) while the client initializes: the first search is instant.
        async with anyio.create_task_group() as group:
            group.start_soon(services.preload)
            await serve_stdio(server)
            group.cancel_scope.cancel()

    try:
        anyio.run(serve_with_the_snapshot_preloaded)
    except KeyboardInterrupt:
        pass

"""`imqueue-mcp` (also `python -m server`): read the configuration, then serve one transport.

    imqueue-mcp [--http [--host H] [--port P] [--workers N]] [--snapshot PATH] [--offline]
                [--origin imqueue.org=URL] [--origin imqueue.com=URL]
                [--allow-host HOST] [--allow-origin ORIGIN] [--log-level LEVEL]
                [--snapshot-url URL] [--snapshot-poll-seconds S]
                [--drain-seconds S] [--header-timeout S] [--body-timeout S] [--idle-timeout S]
                [--max-connections N] [--keep-alive-requests N]
    imqueue-mcp --client-config [--offline] [--snapshot PATH] [...]

stdio is the default. Bad configuration is reported before any transport opens, as one
line on stderr, with exit status 2. Nothing but protocol is ever written to stdout (but by
--client-config, which prints the client registration snippets and serves nothing).
"""

from __future__ import annotations

import argparse
import atexit
import os
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn


def hold_hangups_until_serving() -> None:
    """A hosted server follows SIGHUP (a new snapshot generation) once it serves; until its
    handlers are in (uvicorn's supervisor, each worker's lifespan), a SIGHUP from a deploy script
    or `kill -HUP` to the whole group must not end it. Workers inherit the ignored signal."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


# As early as the process can: before the imports below (the SDK's types take ~50 ms), whether
# started as `python -m imqueue_mcp.server` or as the `imqueue-mcp` script.
if "--http" in sys.argv[1:] and (__name__ == "__main__" or Path(sys.argv[0]).name == "imqueue-mcp"):
    hold_hangups_until_serving()

from imqueue_mcp.server.config import (  # noqa: E402  (after the hangup hold, on purpose)
    ENV_LOG_LEVEL,
    HOSTED_SETTINGS,
    Config,
    ConfigError,
    build_config,
    parse_log_level,
)
from imqueue_mcp.server.observe import configure_logging  # noqa: E402

EXIT_BAD_CONFIG = 2


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is one line on stderr (no usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_CONFIG, f"imqueue-mcp: error: {message} (see imqueue-mcp --help)\n")


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="imqueue-mcp",
        description="MCP server for the @imqueue framework: docs search, page reads, package facts, "
        "scaffolding and (locally) an imq CLI bridge. Serves stdio unless --http is given.",
    )
    p.add_argument(
        "--http", action="store_true", help="serve the hosted read-only tools over Streamable HTTP"
    )
    p.add_argument("--host", default=None, help="HTTP bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="HTTP port (default 8000)")
    p.add_argument("--workers", type=int, default=None, help="HTTP worker processes (default 1)")
    p.add_argument("--snapshot", metavar="PATH", help="docs snapshot file [env IMQUEUE_MCP_SNAPSHOT]")
    p.add_argument(
        "--offline",
        action="store_true",
        help="never contact the network: search_docs answers from the snapshot, get_doc from the pages "
        "saved beside it by `imq-build-index --pages` [env IMQUEUE_MCP_OFFLINE=1]",
    )
    p.add_argument(
        "--origin",
        action="append",
        default=[],
        metavar="HOST=URL",
        help="read HOST (imqueue.org or imqueue.com) from URL; repeatable "
        "[env IMQUEUE_MCP_ORIGINS, comma-separated]",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="HOST",
        help="an extra Host header value the HTTP endpoint accepts; repeatable",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="an extra browser Origin the HTTP endpoint accepts; repeatable",
    )
    p.add_argument(
        "--snapshot-url",
        metavar="URL",
        help="follow the snapshot a builder publishes at this HTTP(S) URL (and its pages file beside it), "
        "checked against its checksum, instead of rebuilding from the live sites "
        "[env IMQUEUE_MCP_SNAPSHOT_URL]",
    )
    p.add_argument(
        "--snapshot-poll-seconds",
        metavar="S",
        help="how often a followed snapshot (--snapshot-url, or the --offline snapshot file) is checked "
        "for a new generation, also checked on SIGHUP; 0: only on SIGHUP (default 30) "
        "[env IMQUEUE_MCP_SNAPSHOT_POLL_SECONDS]",
    )
    for setting in HOSTED_SETTINGS:
        p.add_argument(
            setting.flag,
            dest=setting.name,
            metavar="N" if setting.integer else "S",
            help=f"(with --http) {setting.help} (default {setting.default:g}) [env {setting.env}]",
        )
    p.add_argument(
        "--client-config",
        action="store_true",
        help="print the snippets that register this server, with the flags in effect and absolute "
        "paths, for Claude Code, Cursor and VS Code, then exit (stdio only)",
    )
    p.add_argument(
        "--log-level",
        metavar="LEVEL",
        help="what reaches stderr: DEBUG, INFO (adds one JSON line per tool call), WARNING (default), "
        "ERROR or CRITICAL [env IMQUEUE_MCP_LOG_LEVEL]",
    )
    return p


def main(argv: list[str] | None = None) -> None:
    if "--http" in (sys.argv[1:] if argv is None else argv):
        hold_hangups_until_serving()
    args = parser().parse_args(argv)
    try:
        config = build_config(
            snapshot=args.snapshot,
            offline=args.offline,
            origins=args.origin,
            allow_hosts=args.allow_host,
            allow_origins=args.allow_origin,
            snapshot_url=args.snapshot_url,
            snapshot_poll_seconds=args.snapshot_poll_seconds,
            hosted={setting.name: getattr(args, setting.name) for setting in HOSTED_SETTINGS},
        )
        http_only = [
            flag
            for flag, value in (
                ("--host", args.host),
                ("--port", args.port),
                ("--workers", args.workers),
                *((setting.flag, getattr(args, setting.name)) for setting in HOSTED_SETTINGS),
            )
            if value is not None
        ]
        if args.client_config and args.http:
            raise ConfigError("--client-config registers the local stdio server; leave out --http")
        if http_only and not args.http:
            raise ConfigError(f"{http_only[0]} applies only with --http")
        if args.port is not None and not 0 <= args.port <= 65535:
            raise ConfigError(f"--port {args.port} is not a port number (0-65535)")
        if args.workers is not None and args.workers < 1:
            raise ConfigError(f"--workers {args.workers} must be at least 1")
        log_level = parse_log_level(args.log_level)
    except ConfigError as error:
        sys.stderr.write(f"imqueue-mcp: error: {error}\n")
        sys.exit(EXIT_BAD_CONFIG)

    if args.client_config:
        from imqueue_mcp.server.registration import client_config, server_command

        sys.stdout.write(client_config(config, server_command(), log_level))
        return
    os.environ[ENV_LOG_LEVEL] = log_level  # HTTP worker processes read it (serve.create_app)
    configure_logging(log_level)
    if args.http:
        from imqueue_mcp.server.serve import run_http

        port = 8000 if args.port is None else args.port
        run_http(config, host=args.host or "127.0.0.1", port=port, workers=args.workers or 1)
        end_without_teardown()
    else:
        serve_stdio(config)


def serve_stdio(config: Config) -> None:
    from imqueue_mcp.server.docs.corpus_keeper import read_snapshot_early

    read_snapshot_early(config)  # overlaps the imports below: the first search need not wait for the file

    from imqueue_mcp.server.serve import run_stdio

    run_stdio(config)
    end_without_teardown()


def end_without_teardown() -> None:
    """Serving has ended (the client closed stdio; HTTP stopped or drained): end as Python would,
    less the teardown. The exit handlers run (logging's flush among them), stdout and stderr are
    flushed, and the process exits 0 without clearing every module and freeing the snapshot's and
    the passages' objects one by one, which took 0.2-0.4 s of CPU at every exit for nothing. While
    a thread of ours still runs (none should by now), the ordinary exit waits for it instead."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed by the transport already, or its reader is gone
            pass
    os._exit(0)


if __name__ == "__main__":
    main()

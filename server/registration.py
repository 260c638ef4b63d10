"""`imqueue-mcp --client-config`: the registration snippets for Claude Code, Cursor and VS Code
that start this very server, as configured now, on this machine.

A snippet an agent's client copies must carry what the user's own run needs: the absolute path
of this command (clients start servers from a directory of their own, with a PATH of their own),
and every setting in effect, whether it came from a flag or the environment (the client will not
pass the user's shell environment on): `--offline`, the snapshot as an absolute path, mirrors
(`--origin`), a followed `--snapshot-url` and its poll interval, the log level, and the
environment-only refresh interval as an `env` entry.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from imqueue_mcp.server.config import (
    DEFAULT_REFRESH_SECONDS,
    DEFAULT_SNAPSHOT_POLL_SECONDS,
    ENV_REFRESH_SECONDS,
    Config,
)

SERVER_NAME = "imqueue"
DEFAULT_LOG_LEVEL = "WARNING"


def server_command(argv0: str | None = None, executable: str | None = None) -> list[str]:
    """The absolute command that starts this server: the `imqueue-mcp` script that is running,
    or this interpreter with `-m imqueue_mcp.server` when it was started another way."""
    script = Path(argv0 if argv0 is not None else sys.argv[0])
    if script.name == "imqueue-mcp" and script.is_file():
        return [str(script.expanduser().absolute())]
    return [str(Path(executable or sys.executable).absolute()), "-m", "imqueue_mcp.server"]


def _number(value: float) -> str:
    return f"{value:g}"


def server_arguments(config: Config, log_level: str = DEFAULT_LOG_LEVEL) -> list[str]:
    """The flags that reproduce `config` (stdio settings only; defaults are left out)."""
    args: list[str] = []
    if config.offline:
        args.append("--offline")
    if config.snapshot is not None:
        args += ["--snapshot", str(config.snapshot.expanduser().absolute())]
    for host, url in sorted(config.origin_overrides.items()):
        args += ["--origin", f"{host}={url}"]
    if config.snapshot_url is not None:
        args += ["--snapshot-url", config.snapshot_url]
    if config.snapshot_poll_seconds != DEFAULT_SNAPSHOT_POLL_SECONDS:
        args += ["--snapshot-poll-seconds", _number(config.snapshot_poll_seconds)]
    if log_level != DEFAULT_LOG_LEVEL:
        args += ["--log-level", log_level]
    return args


def server_environment(config: Config) -> dict[str, str]:
    """Settings that have no flag (only the live corpus's refresh interval)."""
    if config.refresh_seconds != DEFAULT_REFRESH_SECONDS:
        return {ENV_REFRESH_SECONDS: _number(config.refresh_seconds)}
    return {}


def client_config(config: Config, command: list[str], log_level: str = DEFAULT_LOG_LEVEL) -> str:
    """The three snippets as text: a `claude mcp add` line, Cursor's and VS Code's JSON."""
    argv = [*command, *server_arguments(config, log_level)]
    env = server_environment(config)
    entry: dict[str, object] = {"command": argv[0], "args": argv[1:]}
    if env:
        entry["env"] = env
    claude = ["claude", "mcp", "add", SERVER_NAME]
    for key, value in env.items():
        claude += ["-e", f"{key}={value}"]
    cursor = {"mcpServers": {SERVER_NAME: entry}}
    vscode = {"servers": {SERVER_NAME: {"type": "stdio", **entry}}}
    return (
        "# Register this server, as configured here, with an MCP client (paths are absolute;\n"
        "# the flags are the ones in effect for this run, from its flags and environment).\n\n"
        f"## Claude Code\n\n{shlex.join([*claude, '--', *argv])}\n\n"
        "## Cursor (~/.cursor/mcp.json, or .cursor/mcp.json in a project)\n\n"
        f"{json.dumps(cursor, indent=2)}\n\n"
        f"## VS Code (.vscode/mcp.json)\n\n{json.dumps(vscode, indent=2)}\n"
    )

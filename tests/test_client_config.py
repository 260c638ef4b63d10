"""`imqueue-mcp --client-config` prints the registration snippets that start this server as it is
configured here: the absolute command, and the flags in effect (from flags or the environment)
with absolute paths. The Cursor snippet it prints is run as a client would run it, from another
directory with nothing of the user's environment, and must serve a search offline."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import McpConnection, built_snapshot, server_environment

BIN = Path(sys.executable).parent
COMMAND = str(BIN / "imqueue-mcp")


def client_config(cwd: Path, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, *flags, "--client-config"],
        cwd=cwd,
        env=server_environment(cwd, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def snippets(text: str) -> tuple[list[str], dict[str, Any], dict[str, Any]]:
    """(the `claude mcp add` argv, the Cursor entry, the VS Code entry)."""
    claude = next(line for line in text.splitlines() if line.startswith("claude mcp add"))
    blocks = re.findall(r"^\{\n.*?^\}$", text, re.M | re.S)
    cursor: dict[str, Any] = json.loads(blocks[0])
    vscode: dict[str, Any] = json.loads(blocks[1])
    assert len(blocks) == 2, text
    return shlex.split(claude), cursor["mcpServers"]["imqueue"], vscode["servers"]["imqueue"]


def test_the_printed_cursor_snippet_starts_a_server_answering_offline_from_elsewhere(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    snapshot = built_snapshot(work)
    done = client_config(work, "--offline", "--snapshot", "snapshot.msgpack")  # relative, as typed
    assert done.returncode == 0, done.stderr
    claude, cursor, vscode = snippets(done.stdout)
    expected = [COMMAND, "--offline", "--snapshot", str(snapshot)]
    assert claude == ["claude", "mcp", "add", "imqueue", "--", *expected]
    assert [cursor["command"], *cursor["args"]] == expected
    assert vscode == {"type": "stdio", **cursor}

    from mcp.client.stdio import StdioServerParameters

    elsewhere = tmp_path / "client"
    elsewhere.mkdir()
    env = {"HOME": str(elsewhere), "PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(elsewhere / "cache")}
    parameters = StdioServerParameters(
        command=str(cursor["command"]), args=list(cursor["args"]), env=env, cwd=elsewhere
    )
    connection = McpConnection(parameters, "legacy")
    try:
        result = connection.call("search_docs", {"query": "expose a method"})
        assert not result.is_error, result.content[0].text
        assert result.structured_content["results"], result.content[0].text
        page = connection.call("get_doc", {"url": result.structured_content["results"][0]["url"]})
        assert not page.is_error, page.content[0].text  # the saved pages: offline, no network
    finally:
        connection.close()


def test_settings_from_the_environment_become_flags_and_an_env_entry(tmp_path: Path) -> None:
    done = client_config(
        tmp_path,
        IMQUEUE_MCP_OFFLINE="1",
        IMQUEUE_MCP_SNAPSHOT="~/snap.msgpack",
        IMQUEUE_MCP_ORIGINS="imqueue.org=http://127.0.0.1:8101",
        IMQUEUE_MCP_LOG_LEVEL="info",
        IMQUEUE_MCP_REFRESH_SECONDS="120",
    )
    assert done.returncode == 0, done.stderr
    claude, cursor, _ = snippets(done.stdout)
    assert cursor["args"] == [
        "--offline",
        "--snapshot",
        str(tmp_path / "snap.msgpack"),  # HOME is tmp_path: ~ expanded, absolute
        "--origin",
        "imqueue.org=http://127.0.0.1:8101",
        "--log-level",
        "INFO",
    ]
    assert cursor["env"] == {"IMQUEUE_MCP_REFRESH_SECONDS": "120"}
    assert claude[:6] == ["claude", "mcp", "add", "imqueue", "-e", "IMQUEUE_MCP_REFRESH_SECONDS=120"]


def test_defaults_print_the_bare_command_and_http_is_refused(tmp_path: Path) -> None:
    done = client_config(tmp_path)
    assert done.returncode == 0, done.stderr
    claude, cursor, _ = snippets(done.stdout)
    assert claude == ["claude", "mcp", "add", "imqueue", "--", COMMAND]
    assert cursor == {"command": COMMAND, "args": []}

    refused = client_config(tmp_path, "--http")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "--client-config registers the local stdio server; leave out --http" in refused.stderr

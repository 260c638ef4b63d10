"""README.md runs as written: its offline quick start, typed as it stands, serves a search over
MCP, and every flag its Commands and Configuration sections show is one the command takes.

The commands are read from README.md itself, so an edit that breaks one fails here. `.venv/bin/`
is the venv these tests run in; the relative `../shared/site` resolves from the clone's root, as
it does for a newcomer."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SITE, McpConnection, server_environment

README = (REPO / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent
COMMANDS = ("imqueue-mcp", "imq-search", "imq-build-index")


def section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert match, f"README.md has no '## {title}' section"
    return match.group(1)


def offline_quick_start() -> list[list[str]]:
    """The `imq-build-index ... && imqueue-mcp --offline` line, as argv lists on this venv."""
    (line,) = [
        s for s in re.findall(r"`([^`\n]+)`", README) if "imq-build-index --from" in s and "--offline" in s
    ]
    steps = [shlex.split(step) for step in line.split("&&")]
    for argv in steps:
        assert argv[0].startswith(".venv/bin/"), line
        argv[0] = str(BIN / argv[0].removeprefix(".venv/bin/"))
    return steps


def shown_flags() -> dict[str, set[str]]:
    """Per command, the long flags README's Commands block and Configuration table show."""
    block = section("Commands").split("```")[1]
    flags: dict[str, set[str]] = {command: set() for command in COMMANDS}
    current = ""
    for line in block.splitlines():
        words = line.split()
        if words and words[0] in flags:
            current = words[0]
        if current:
            flags[current].update(re.findall(r"(--[a-z][a-z-]*)", line))
    for row in section("Configuration").splitlines():
        if row.startswith("| `--"):
            flags["imqueue-mcp"].update(re.findall(r"(--[a-z][a-z-]*)", row.split("|")[1]))
    return flags


def test_the_offline_quick_start_runs_as_written_and_answers_a_search(tmp_path: Path) -> None:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    (build, serve) = offline_quick_start()
    env = server_environment(tmp_path)
    done = subprocess.run(build, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (tmp_path / "cache" / "imqueue-mcp" / "snapshot.msgpack").is_file(), done.stderr

    from mcp.client.stdio import StdioServerParameters

    parameters = StdioServerParameters(command=serve[0], args=serve[1:], env=env, cwd=REPO)
    connection = McpConnection(parameters, "legacy")
    try:
        result = connection.call("search_docs", {"query": "expose a method"})
        assert not result.is_error, result.content[0].text
        assert result.structured_content["results"], result.content[0].text
        page = connection.call("get_doc", {"url": result.structured_content["results"][0]["url"]})
        assert not page.is_error, page.content[0].text
    finally:
        connection.close()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_flag_the_readme_shows_is_one_the_command_takes(command: str) -> None:
    shown = shown_flags()[command]
    assert shown, f"README.md shows no flag for {command}"
    done = subprocess.run([str(BIN / command), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    taken = set(re.findall(r"(--[a-z][a-z-]*)", done.stdout))
    assert shown <= taken, f"{command} --help lacks {sorted(shown - taken)}"


def test_every_flag_imqueue_mcp_takes_is_shown_in_the_readme() -> None:
    """The reverse: a flag added to the server and left out of README's table or Commands fails."""
    done = subprocess.run([str(BIN / "imqueue-mcp"), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    taken = set(re.findall(r"^ {2}(?:-[a-z], )?(--[a-z][a-z-]*)", done.stdout, re.M)) - {"--help"}
    shown = shown_flags()["imqueue-mcp"]
    assert {"--offline", "--allow-host", "--allow-origin"} <= taken, done.stdout
    assert taken <= shown, f"README.md does not show {sorted(taken - shown)}"

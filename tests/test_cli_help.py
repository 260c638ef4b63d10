"""Every option of the three commands carries help text, and --help answers on stdout with exit 0."""

from __future__ import annotations

import subprocess
import sys

import pytest

from imqueue_mcp.build_index.cli import parser as build_parser
from imqueue_mcp.build_index.search_cli import parser as search_parser
from imqueue_mcp.server.__main__ import parser as server_parser

COMMANDS = {
    "imq-search": ["-m", "imqueue_mcp.build_index.search_cli"],
    "imq-build-index": ["-m", "imqueue_mcp.build_index.cli"],
    "imqueue-mcp": ["-m", "imqueue_mcp.server"],
}


@pytest.mark.parametrize(
    "make_parser",
    [search_parser, build_parser, server_parser],
    ids=["imq-search", "imq-build-index", "imqueue-mcp"],
)
def test_every_option_has_help_text(make_parser: object) -> None:
    assert callable(make_parser)
    for action in make_parser()._actions:
        assert action.help, action.option_strings


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_goes_to_stdout_and_exits_0(command: str) -> None:
    done = subprocess.run(
        [sys.executable, *COMMANDS[command], "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("usage:") and "--" in done.stdout

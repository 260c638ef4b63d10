"""Configuration: flags over environment, and bad values refused before anything starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from imqueue_mcp.docsource.sites import LIVE_ORIGINS
from imqueue_mcp.server.__main__ import parser
from imqueue_mcp.server.config import ConfigError, build_config, config_from_environment

from conftest import REPO


def test_defaults_are_the_live_sites_online() -> None:
    config = build_config(env={})
    assert dict(config.origins) == LIVE_ORIGINS
    assert config.offline is False and config.snapshot is None
    assert config.origin_overrides == {}


def test_flags_win_over_the_environment() -> None:
    env = {
        "IMQUEUE_MCP_ORIGINS": "imqueue.org=http://127.0.0.1:1,imqueue.com=http://127.0.0.1:2",
        "IMQUEUE_MCP_SNAPSHOT": "/tmp/from-env.msgpack",
    }
    config = build_config(origins=["imqueue.org=http://127.0.0.1:9/"], snapshot="/tmp/flag.msgpack", env=env)
    assert config.origins["imqueue.org"] == "http://127.0.0.1:9"
    assert config.origins["imqueue.com"] == "http://127.0.0.1:2"
    assert config.snapshot == Path("/tmp/flag.msgpack")


def test_the_environment_round_trips_for_worker_processes() -> None:
    config = build_config(
        origins=["imqueue.com=http://127.0.0.1:5"],
        offline=True,
        snapshot="/tmp/s.msgpack",
        allow_hosts=["mcp.example.org"],
        env={},
    )
    assert config_from_environment(config.to_environment()) == config


@pytest.mark.parametrize(
    "origin",
    ["imqueue.org", "evil.com=http://127.0.0.1:1", "imqueue.org=ftp://x", "imqueue.org=http://", "=http://a"],
)
def test_a_malformed_origin_is_refused(origin: str) -> None:
    with pytest.raises(ConfigError, match="HOST=URL"):
        build_config(origins=[origin], env={})


@pytest.mark.parametrize("text", ["soon", "0", "0.5", "-3", "inf", "nan"])
def test_the_refresh_interval_is_at_least_a_second(text: str) -> None:
    assert build_config(env={}).refresh_seconds == 3600
    assert build_config(env={"IMQUEUE_MCP_REFRESH_SECONDS": "90"}).refresh_seconds == 90
    with pytest.raises(ConfigError, match="IMQUEUE_MCP_REFRESH_SECONDS"):
        build_config(env={"IMQUEUE_MCP_REFRESH_SECONDS": text})


def test_offline_must_be_a_boolean() -> None:
    assert build_config(env={"IMQUEUE_MCP_OFFLINE": "1"}).offline is True
    with pytest.raises(ConfigError, match="IMQUEUE_MCP_OFFLINE"):
        build_config(env={"IMQUEUE_MCP_OFFLINE": "maybe"})


@pytest.mark.parametrize(
    ("args", "env", "words"),
    [
        (["--origin", "nowhere=http://x"], {}, "origin"),
        (["--port", "80"], {}, "--port applies only with --http"),
        (["--http", "--workers", "0"], {}, "--workers"),
        (["--frobnicate"], {}, "unrecognized arguments"),
        (["--snapshot", "/"], {}, "directory"),
        ([], {"IMQUEUE_MCP_OFFLINE": "perhaps"}, "IMQUEUE_MCP_OFFLINE"),
        ([], {"IMQUEUE_MCP_ORIGINS": "imqueue.org"}, "origin"),
        ([], {"IMQUEUE_MCP_REFRESH_SECONDS": "often"}, "IMQUEUE_MCP_REFRESH_SECONDS"),
    ],
)
def test_bad_configuration_exits_2_with_one_line_before_serving(
    args: list[str], env: dict[str, str], words: str
) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "imqueue_mcp.server", *args],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert completed.returncode == 2
    assert completed.stdout == ""
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], completed.stderr


def test_every_option_has_help_text() -> None:
    for action in parser()._actions:
        assert action.help, action.option_strings

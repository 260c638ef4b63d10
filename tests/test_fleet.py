"""The fleet behind a real HAProxy (issue 20 §5): benchmarks/fleet.py's own machinery, CI-sized.

Two `imqueue-mcp --http` instances following one builder's snapshot over loopback HTTP, HAProxy on
deploy/compose/haproxy.cfg itself, and sessions of the SDK's Streamable HTTP client through it
(initialize, search_docs, get_doc followed through its cursors, find_examples) while each instance
in turn is SIGTERMed and restarted and a new snapshot generation is published and picked up.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks import fleet
from conftest import SHARED, require_external


def haproxy() -> str:
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin")
    require_external(found is not None, "HAProxy", "bash .ci/install-fleet.sh")
    assert found is not None
    return found


def test_the_loopback_balancer_is_the_deploy_config_with_loopback_servers(tmp_path: Path) -> None:
    config = fleet.balancer_config(fleet.HAPROXY_CFG.read_text(), 18080, [18001, 18002], tmp_path / "s.sock")
    assert "    bind 127.0.0.1:18080" in config
    assert "    server mcp1 127.0.0.1:18001" in config and "    server mcp2 127.0.0.1:18002" in config
    directives = [
        line.split()[0] for line in config.splitlines() if line.strip() and not line.strip().startswith("#")
    ]
    assert (
        "server-template" not in directives
        and "resolvers" not in directives
        and "nameserver" not in directives
    )
    # what is measured is the shipped configuration: its health check and its balancing
    for line in ("option httpchk GET /readyz", "balance roundrobin", "retry-on conn-failure"):
        assert line in config
    (tmp_path / "haproxy.cfg").write_text(config)
    done = subprocess.run(
        [haproxy(), "-c", "-f", str(tmp_path / "haproxy.cfg")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_deploy_config_without_a_server_template_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="server-template"):
        fleet.balancer_config("defaults\n    mode http\n", 18080, [18001], tmp_path / "s.sock")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_no_call_fails_through_haproxy_across_a_rolling_restart_and_a_generation_switch() -> None:
    haproxy()
    arguments = ["--instances", "2", "--clients", "3", "--steady-seconds", "3", "--drain-seconds", "4"]
    figures = fleet.run(fleet.parser().parse_args([*arguments, "--shared", str(SHARED)]))
    fleet.report(figures)  # shown with -s, and in the failure report
    (run,) = figures["runs"]
    failures = run["steady"]["failures"] + run["rolling"]["failures"]
    assert figures["failed"] == 0, failures
    assert run["rolling"]["calls"] > 0 and run["rolling"]["sessions"] > 0
    # each instance was SIGTERMed, drained and exited 0, and came back
    assert [step["exit_status"] for step in run["restarts"]] == [0, 0]
    # every instance ended on the new generation
    assert run["switch"]["to"] and run["switch"]["to"] not in run["switch"]["from"]
    # round robin reached both instances, and pages were read through cursors across them
    assert run["haproxy"]["mcp1"] > 0 and run["haproxy"]["mcp2"] > 0
    assert run["rolling"]["cursors_followed"] > 0

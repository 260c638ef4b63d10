"""benchmarks.journeys end to end on the real stack, as small as it goes: the repair and the
pasted-error journeys (a, b and e run in CI's benchmark step), printing the table and one JSON line
that carries every journey's steps, hand fixes with their reasons, result, seconds and machine.
Behaviour only: the hand-fix counts are the benchmark's figures, not asserted here."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmarks.journeys import missing_stack
from conftest import REPO, SITE, require_external

pytestmark = pytest.mark.slow  # a long end-to-end run: CI, or IMQUEUE_MCP_SLOW=1 (conftest.py)


def test_the_repair_and_error_journeys_print_a_table_and_one_json_line() -> None:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    problem = missing_stack()
    require_external(problem is None, "the journeys' stack", problem or "")
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.journeys", "--only", "c,d"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=420,
    )
    lines = run.stdout.strip().splitlines()
    assert lines and lines[-1].startswith("{"), run.stderr
    figures = json.loads(lines[-1])
    assert figures["benchmark"] == "journeys" and figures["machine"]["cpus"]
    assert [journey["journey"] for journey in figures["journeys"]] == ["c", "d"]
    for journey in figures["journeys"]:
        assert journey["passed"] is True, journey["error"]
        assert journey["steps"] == len(journey["step_names"]) > 0
        assert journey["hand_fix_count"] == len(journey["hand_fixes"])
        for fix in journey["hand_fixes"]:
            assert fix["step"] in journey["step_names"] and fix["reason"].strip()
    assert figures["hand_fixes"] == sum(journey["hand_fix_count"] for journey in figures["journeys"])
    assert run.returncode == 0
    repair = figures["journeys"][0]
    assert any("inspect_project round" in note for note in repair["notes"])
    errors = figures["journeys"][1]
    assert [name for name in errors["step_names"] if name.startswith("search_docs")] == [
        "search_docs: ERESOLVE",
        "search_docs: ECONNREFUSED",
        "search_docs: TS1241",
        "search_docs: timeout",
    ]
    table = "\n".join(lines[:-1])
    assert "hand fixes" in table and "machine:" in table and "stand-in for `npm install`" in table

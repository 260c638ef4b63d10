"""benchmarks.bench_server end to end, as small as it goes: every section runs against the real
servers and prints its table and one JSON line with every figure. Behaviour only; nothing here
asserts a speed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO, SITE

SECTIONS = {"benchmark", "machine", "cold_start", "first_answer", "search", "hosted"}
HOSTED_ROWS = {
    "imqueue-mcp search_docs",
    "imqueue-mcp search_docs, new queries",
    "same stack: SDK echo tool",
    "same stack: search_docs",
    "bare Starlette endpoint",
}


def test_a_tiny_run_prints_the_tables_and_one_json_line_with_every_figure() -> None:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.bench_server",
            "--runs",
            "1",
            "--queries",
            "3",
            "--seconds",
            "0.5",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert set(figures) == SECTIONS
    first = figures["first_answer"]
    assert first["sources"] == ["snapshot"]  # answered before the slow live origin could
    assert first["first_answer_median_ms"] >= first["initialize_median_ms"] > 0
    hosted = figures["hosted"]
    assert set(hosted["results"]) == HOSTED_ROWS
    for name, row in hosted["results"].items():
        assert row["calls"] > 0 and row["errors"] == 0, name
    assert hosted["search_to_echo_ratio"] > 0 and hosted["new_query_search_to_echo_ratio"] > 0
    table = "\n".join(lines[:-1])
    for heading in ("Cold start", "Launch to first search answer", "search_docs over stdio", "Hosted"):
        assert heading in table
    assert "search_docs / echo:" in table

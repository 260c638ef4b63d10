"""The concurrency soak (benchmarks/soak.py): every tool, resource, prompt and completion from many
SDK clients at once, over Streamable HTTP (two uvicorn workers) and stdio, on servers started
fresh several times, must fail no call and log no error.

The short profile runs here (16 s of load per transport, about a minute in all); the long runs
and their figures are the benchmark's (benchmarks/README.md). The fast tests below pin what the
soak counts as unexpected: a soak that let an internal error through as "guided" would pass over
the bugs it exists for.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from functools import partial

import pytest

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.tool_results import error_result, text_result

from benchmarks.soak import log_problems
from benchmarks.soak_calls import (
    Call,
    Expect,
    Surface,
    cold_calls,
    invalid_calls,
    perform,
    tool,
    tool_verdict,
)
from conftest import (
    HOSTED_TOOLS,
    REPO,
    SHARED_TOOLS,
    SITE,
    HttpServer,
    McpConnection,
    offline_args,
    server_environment,
    stdio_connection,
)

SOAK = [
    "--seconds",
    "16",
    "--round-seconds",
    "8",  # two rounds: each server starts cold twice
    "--clients",
    "6",
    "--workers",
    "2",
    "--stdio-clients",
    "2",
    "--in-flight",
    "3",
    "--call-timeout",
    "90",  # a hang still fails; a CI machine busy with the other slow tests does not
]
LOCAL_READ_ONLY = SHARED_TOOLS | {"inspect_project", "cli_status"}


@pytest.mark.slow
def test_every_tool_at_once_from_many_clients_fails_no_call_and_logs_no_error() -> None:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks.soak", *SOAK],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    runs = json.loads(completed.stdout.strip().splitlines()[-1])["runs"]
    assert set(runs) == {"http, 6 clients, 2 worker(s)", "stdio, 2 servers x 3 in flight"}
    for name, run in runs.items():
        assert run["unexpected"] == 0, (name, run["first_unexpected"])
        assert run["log_problems"] == 0, (name, run["first_log_problems"])
        assert run["rounds"] >= 2, f"{name}: the servers started cold only once"
        assert run["guided"] > 0, f"{name}: no invalid call was made"
    served = {
        run_name: {label for label, row in run["by_call"].items() if row["ok"]}
        for run_name, run in runs.items()
    }
    http, stdio = served.values()
    assert HOSTED_TOOLS <= http, HOSTED_TOOLS - http
    assert LOCAL_READ_ONLY <= stdio, LOCAL_READ_ONLY - stdio
    for kinds in served.values():
        assert {"resources/read", "prompts/get", "completion/complete", "get_doc cursor walk"} <= kinds


def test_every_invalid_call_the_soak_may_send_is_refused_with_guidance(
    hosted: HttpServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The soak samples its invalid calls; a bound that moved (search_docs' query length did)
    would pass a short run by chance. Here each is sent once, to both surfaces."""
    home = tmp_path_factory.mktemp("invalid")
    local = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    remote = McpConnection(hosted.url + "/mcp", "auto")
    try:
        surfaces: list[tuple[Surface, McpConnection]] = [("local", local), ("hosted", remote)]
        for surface, connection in surfaces:
            wrong = []
            for call in invalid_calls(surface):
                verdict = connection.run(partial(perform, call=call))
                if verdict.outcome != "guided":
                    wrong.append((call.name, verdict.detail))
            assert not wrong, (surface, wrong)
    finally:
        local.close()
        remote.close()


def test_an_internal_error_counts_as_unexpected_even_where_an_error_was_due() -> None:
    crashed = error_result(ErrorCode.INTERNAL_ERROR, "search_docs failed unexpectedly")
    expectations: tuple[Expect, ...] = ("ok", "guided", "either")
    for expect in expectations:
        verdict = tool_verdict(tool("search_docs", expect, query=""), crashed)
        assert verdict.outcome == "unexpected"
        assert "internal_error" in verdict.detail


def test_a_guided_error_counts_as_guided_only_where_the_arguments_were_wrong() -> None:
    refused = error_result(ErrorCode.INVALID_ARGUMENTS, "limit must be at most 20")
    assert tool_verdict(tool("search_docs", "guided", query="x", limit=99), refused).outcome == "guided"
    assert tool_verdict(tool("search_docs", query="redis"), refused).outcome == "unexpected"


def test_a_success_for_invalid_arguments_counts_as_unexpected() -> None:
    verdict = tool_verdict(tool("search_docs", "guided", query=""), text_result("3 results"))
    assert verdict.outcome == "unexpected"
    assert "accepted invalid arguments" in verdict.detail


def test_an_error_without_a_code_counts_as_unexpected() -> None:
    bare = text_result("something broke", is_error=True)
    assert tool_verdict(tool("cli_status", "either"), bare).outcome == "unexpected"


def test_the_server_log_is_read_for_error_lines_and_each_traceback_by_its_exception() -> None:
    log = io.StringIO(
        "imqueue-mcp WARNING corpus: live docs refresh failed: timeout\n"
        "imqueue-mcp ERROR server: tool find_examples crashed\n"
        "Traceback (most recent call last):\n"
        '  File "ranker/text.py", line 40, in snowball_stem\n'
        "    return stemmer.stemWord(word)\n"
        "IndexError: string index out of range\n"
        "imqueue-mcp INFO done\n"
    )
    assert log_problems(log) == [
        "imqueue-mcp ERROR server: tool find_examples crashed",
        "Traceback ending in IndexError: string index out of range",
    ]


def test_the_cold_burst_reaches_every_cache_filling_path_of_each_surface() -> None:
    def names(calls: list[Call]) -> set[str]:
        return {call.name for call in calls}

    hosted, local = names(cold_calls("hosted")), names(cold_calls("local"))
    cache_filling = {"search_docs", "find_examples", "get_doc", "list_packages", "package_status"}
    assert cache_filling | {"local_install_guide", "resources/list", "tools/list"} <= hosted
    assert cache_filling | {"inspect_project", "cli_status"} <= local

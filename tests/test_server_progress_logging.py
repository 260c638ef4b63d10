"""Progress, client logging and the per-call log line, through the SDK client over stdio and
hosted HTTP.

- progress: a long operation (create_service with apply, the first corpus load) sends
  notifications/progress when the call carried a progressToken, and none when it did not;
- logging: the capability is declared, logging/setLevel answers {} and filters what the
  client is sent (2025-11-25); on 2026-07-28 the per-request opt-in does;
- observability: one JSON line per tool call on stderr at INFO, none at the default level.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from imq_real import TEMPLATE, real_imq_environment, require_real_imq
from test_server_cli import isolated_environment, text_of

from conftest import HttpServer, McpConnection, origin_args, server_environment, stdio_connection

APPLY_TIMEOUT_SECONDS = 120.0  # cli_bridge.APPLY_TIMEOUT_SECONDS: the total a create reports
# (generate_client and fleet report CLIENT_TIMEOUT_SECONDS 90 and FLEET_TIMEOUT_SECONDS 120)
REFUSED_URL = {"url": "https://example.com/intro/"}


class Heard:
    """What a client heard besides answers: progress and log notifications, in order."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.logs: list[mcp_types.LoggingMessageNotificationParams] = []
        self.methods: list[str] = []

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    async def on_log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_message(self, message: Any) -> None:
        method = getattr(getattr(message, "root", message), "method", None)
        if isinstance(method, str):
            self.methods.append(method)


def listening(heard: Heard) -> dict[str, Any]:
    return {"logging_callback": heard.on_log, "message_handler": heard.on_message}


def call_with_progress(connection: McpConnection, heard: Heard, tool: str, arguments: dict[str, Any]) -> Any:
    return connection.run(
        lambda client: client.call_tool(tool, arguments, progress_callback=heard.on_progress)
    )


def assert_progress_story(
    progress: list[tuple[float, float | None, str | None]], total: float | None
) -> None:
    assert len(progress) >= 2, progress
    values = [value for value, _, _ in progress]
    assert values == sorted(values) and len(set(values)) == len(values), values  # strictly rising
    assert progress[0][2] and progress[0][2].endswith("started")
    assert progress[-1][2] and progress[-1][2].endswith("finished")
    if total is not None:
        assert all(reported == total for _, reported, _ in progress[:-1])


@pytest.fixture(scope="module")
def hosted(site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """One hosted server for the logging tests, writing its per-call lines (INFO)."""
    home = tmp_path_factory.mktemp("hosted-logging")
    server = HttpServer(
        origin_args(site_origins), server_environment(home, IMQUEUE_MCP_LOG_LEVEL="INFO"), home
    )
    yield server
    server.close()


# --- progress ---------------------------------------------------------------------------


def test_long_cli_runs_report_progress_only_to_a_caller_with_a_token(tmp_path: Path) -> None:
    """On the real imq 5.2.2: a create with apply, a client generate and a fleet start report."""
    require_real_imq()
    heard = Heard()
    service = tmp_path / "fleet" / "billing"
    service.mkdir(parents=True)
    (service / "package.json").write_text('{"name": "billing", "scripts": {"dev": "x"}}')
    connection = stdio_connection([], real_imq_environment(tmp_path), tmp_path, "legacy", **listening(heard))
    try:
        flags = ["--email=dev@example.com", "--no-use-git", "--no-install", "-t", str(TEMPLATE)]
        arguments = {"name": "payments", "path": str(tmp_path / "payments"), "apply": True, "flags": flags}
        result = call_with_progress(connection, heard, "create_service", arguments)
        assert not result.is_error
        assert (tmp_path / "payments" / "package.json").is_file()  # real imq wrote it
        assert_progress_story(heard.progress, APPLY_TIMEOUT_SECONDS)
        assert "service create payments" in (heard.progress[0][2] or "")
        assert "notifications/progress" in heard.methods

        heard.methods.clear()
        quiet = {**arguments, "name": "orders", "path": str(tmp_path / "orders")}
        assert not connection.call("create_service", quiet).is_error
        assert "notifications/progress" not in heard.methods

        long_runs = [
            ("generate_client", {"service": "UserService", "path": str(tmp_path / "clients")}, 90.0),
            ("fleet", {"action": "start", "path": "fleet"}, 120.0),
        ]
        for tool, long_run, total in long_runs:
            heard.progress.clear()
            call_with_progress(connection, heard, tool, long_run)
            assert_progress_story(heard.progress, total)
        heard.progress.clear()
        call_with_progress(connection, heard, "fleet", {"action": "status", "path": "fleet"})
        assert heard.progress == []  # status is quick: no progress even with a token
    finally:
        connection.close()


def test_an_imq_run_longer_than_a_tick_reports_running_between_start_and_finish(tmp_path: Path) -> None:
    """A slow imq cannot be made from the real one: the stand-in sleeps 1.5 s (one tick is 1 s)."""
    heard = Heard()
    env = isolated_environment(tmp_path, standin=True, IMQ_STANDIN_SLEEP="1.5")
    (tmp_path / "fleet").mkdir()
    connection = stdio_connection([], env, tmp_path, "legacy", **listening(heard))
    try:
        call_with_progress(connection, heard, "fleet", {"action": "start", "path": "fleet"})
        assert_progress_story(heard.progress, 120.0)
        assert any(message and "running" in message for _, _, message in heard.progress)  # a tick
    finally:
        connection.close()


def test_a_dry_run_is_short_and_sends_no_progress(tmp_path: Path) -> None:
    require_real_imq()
    heard = Heard()
    env = real_imq_environment(tmp_path)
    connection = stdio_connection([], env, tmp_path, "legacy", **listening(heard))
    try:
        arguments = {"name": "billing", "flags": ["--email=dev@example.com", "--no-use-git", "--no-install"]}
        result = call_with_progress(connection, heard, "create_service", arguments)
        assert not result.is_error and "Dry run - no changes made" in text_of(result)
        assert heard.progress == []
    finally:
        connection.close()


def test_the_first_corpus_load_reports_progress_over_stdio(
    site_origins: dict[str, str], tmp_path: Path
) -> None:
    heard = Heard()
    env = server_environment(tmp_path)
    connection = stdio_connection(origin_args(site_origins), env, tmp_path, "legacy", **listening(heard))
    try:
        result = call_with_progress(connection, heard, "search_docs", {"query": "expose a method"})
        assert not result.is_error and result.structured_content["count"] > 0
        assert_progress_story(heard.progress, None)
        assert "docs corpus" in (heard.progress[0][2] or "")
        heard.progress.clear()
        call_with_progress(connection, heard, "search_docs", {"query": "redis"})
        assert heard.progress == []  # the corpus is loaded: nothing long happened
    finally:
        connection.close()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_hosted_progress_arrives_with_a_token(
    mode: str, site_origins: dict[str, str], tmp_path: Path
) -> None:
    server = HttpServer(origin_args(site_origins), server_environment(tmp_path), tmp_path)
    heard = Heard()
    connection = McpConnection(server.url + "/mcp", mode, **listening(heard))
    try:
        result = call_with_progress(connection, heard, "search_docs", {"query": "expose a method"})
        assert not result.is_error and result.structured_content["count"] > 0
        assert_progress_story(heard.progress, None)
    finally:
        connection.close()
        server.close()


def test_hosted_progress_stays_silent_without_a_token(hosted: HttpServer) -> None:
    # The shared server's first search_docs (no other test here searches): the corpus loads now.
    heard = Heard()
    connection = McpConnection(hosted.url + "/mcp", "2026-07-28", **listening(heard))
    try:
        result = connection.call("search_docs", {"query": "expose a method"})
        assert not result.is_error and result.structured_content["count"] > 0
        assert "notifications/progress" not in heard.methods
    finally:
        connection.close()
    lines = [line for line in json_lines(hosted.stderr()) if line["tool"] == "search_docs"]
    assert len(lines) == 1  # it was the first search, so the load happened in this call


# --- logging ----------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # 2026 drops setLevel
def test_a_docs_module_warning_reaches_the_client_that_asked_for_warnings(tmp_path: Path) -> None:
    # Nothing answers on the origins and there is no snapshot: the corpus module warns why, and a
    # client at level warning hears it (the collector once listened to a logger no module used).
    dead = {"imqueue.org": "http://127.0.0.1:9", "imqueue.com": "http://127.0.0.1:9"}
    heard = Heard()
    env = server_environment(tmp_path)
    connection = stdio_connection(origin_args(dead), env, tmp_path, "legacy", **listening(heard))
    try:
        connection.run(lambda client: client.set_logging_level("warning"))
        assert connection.call("search_docs", {"query": "redis"}).is_error
    finally:
        connection.close()
    corpus_logs = [entry for entry in heard.logs if entry.logger == "imqueue_mcp.server.docs.corpus_keeper"]
    assert corpus_logs and all(entry.level == "warning" for entry in corpus_logs)
    assert "live docs refresh failed" in " ".join(str(entry.data) for entry in corpus_logs)


def test_the_hosted_endpoint_tells_a_client_nothing_of_the_operators_origins_or_paths(  # SECURITY.md
    tmp_path: Path,
) -> None:
    # The same failing refresh on the hosted endpoint: its warning names the operator's origins
    # (and, elsewhere, snapshot paths), which anonymous clients must not learn. The call's own
    # diagnostics (a refused argument) still reach them.
    dead = {"imqueue.org": "http://127.0.0.1:9", "imqueue.com": "http://127.0.0.1:9"}
    server = HttpServer(origin_args(dead), server_environment(tmp_path), tmp_path)
    heard = Heard()  # a 2026 client opted in to everything: the hosted endpoint streams its logs
    connection = McpConnection(server.url + "/mcp", "2026-07-28", log_level="debug", **listening(heard))
    try:
        failed = connection.call("search_docs", {"query": "redis"})
        assert failed.is_error and connection.call("get_doc", REFUSED_URL).is_error
    finally:
        connection.close()
        log = server.stderr()
        server.close()
    assert "live docs refresh failed" in log and "127.0.0.1:9" in log  # the operator sees it
    answer = failed.content[0].text + str(failed.structured_content)
    assert "No docs corpus is available" in answer
    assert re.search(r"https://imqueue\.(org|com)/search-index", answer), answer  # the canonical site
    assert "127.0.0.1:9" not in answer and str(tmp_path) not in answer, answer
    said = " ".join(f"{entry.logger} {entry.data}" for entry in heard.logs)
    assert "127.0.0.1:9" not in said and str(tmp_path) not in said, said
    assert heard.logs and all(
        str(entry.logger).startswith("imqueue_mcp.server.mcp.") for entry in heard.logs
    ), said


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # 2026 drops setLevel
def test_set_level_answers_empty_and_filters_what_the_client_hears(tmp_path: Path) -> None:
    heard = Heard()
    connection = stdio_connection([], server_environment(tmp_path), tmp_path, "legacy", **listening(heard))
    try:
        assert connection.client.server_capabilities.logging is not None
        connection.call("get_doc", REFUSED_URL)  # default level: warning; the refusal is info
        assert heard.logs == []

        assert connection.run(lambda client: client.set_logging_level("info")) == mcp_types.EmptyResult()
        connection.call("get_doc", REFUSED_URL)
        assert [entry.level for entry in heard.logs] == ["info"]
        assert (
            "url_refused" in str(heard.logs[0].data) and heard.logs[0].logger == "imqueue_mcp.server.mcp.app"
        )

        heard.logs.clear()
        connection.run(lambda client: client.set_logging_level("error"))
        connection.call("get_doc", REFUSED_URL)
        assert heard.logs == []
    finally:
        connection.close()


def test_set_level_refuses_a_level_that_does_not_exist(tmp_path: Path) -> None:
    # The SDK's client refuses to send it, so this session is written by hand.
    requests = [("logging/setLevel", {"level": "verbose"}), ("logging/setLevel", {"level": "debug"})]
    (refused, accepted), _ = raw_stdio_session([], server_environment(tmp_path), tmp_path, requests)
    assert refused["error"]["code"] == mcp_types.INVALID_PARAMS
    assert accepted["result"] == {}


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
def test_the_stateless_hosted_endpoint_answers_set_level_but_keeps_no_level(hosted: HttpServer) -> None:
    heard = Heard()
    connection = McpConnection(hosted.url + "/mcp", "legacy", **listening(heard))
    try:
        assert connection.run(lambda client: client.set_logging_level("debug")) == mcp_types.EmptyResult()
        # A progressToken makes the answer a stream that could carry log messages: none at info.
        assert call_with_progress(connection, heard, "get_doc", REFUSED_URL).is_error
        assert heard.logs == []
    finally:
        connection.close()


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(("level", "heard_levels"), [("info", ["info"]), ("warning", [])])
def test_2026_clients_hear_logs_at_or_above_the_level_they_opt_in_to(
    transport: str, level: str, heard_levels: list[str], hosted: HttpServer, tmp_path: Path
) -> None:
    heard = Heard()
    options = {"log_level": level, **listening(heard)}
    if transport == "http":
        connection = McpConnection(hosted.url + "/mcp", "2026-07-28", **options)
    else:
        connection = stdio_connection([], server_environment(tmp_path), tmp_path, "2026-07-28", **options)
    try:
        assert connection.call("get_doc", REFUSED_URL).is_error
        assert [entry.level for entry in heard.logs] == heard_levels
    finally:
        connection.close()


# --- the per-call log line --------------------------------------------------------------


def raw_stdio_session(
    args: list[str], env: dict[str, str], cwd: Path, requests: list[tuple[str, dict[str, Any]]]
) -> tuple[list[dict[str, Any]], str]:
    """A real stdio session written by hand, so stderr can be read: initialize, then each request
    once the previous one is answered, then EOF. Returns the answers and stderr."""
    initialize = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "log-line-test", "version": "9.8.7"},
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "imqueue_mcp.server", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=cwd,
    )
    assert process.stdin is not None and process.stdout is not None
    answers = []
    try:
        for number, (method, params) in enumerate([("initialize", initialize), *requests]):
            process.stdin.write(
                json.dumps({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
            )
            process.stdin.write("\n")
            if number == 0:
                process.stdin.write(
                    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
                )
            process.stdin.flush()
            while True:  # notifications may come first; the answer carries the id
                answer = json.loads(process.stdout.readline())
                if answer.get("id") == number:
                    answers.append(answer)
                    break
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return answers[1:], stderr


def json_lines(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


CALLS = [
    ("tools/call", {"name": "scaffold_service", "arguments": {"name": "billing"}}),
    ("tools/call", {"name": "get_doc", "arguments": REFUSED_URL}),
]


def test_info_level_writes_one_json_line_per_tool_call_on_stderr(tmp_path: Path) -> None:
    _, stderr = raw_stdio_session(["--log-level", "info"], server_environment(tmp_path), tmp_path, CALLS)
    lines = json_lines(stderr)
    assert [line["tool"] for line in lines] == ["scaffold_service", "get_doc"]
    scaffold, refused = lines
    for line in lines:
        assert line["event"] == "tool_call" and isinstance(line["durationMs"], float | int)
        assert line["client"] == {"name": "log-line-test", "version": "9.8.7"}
        assert line["protocol"] == "2025-11-25"
    assert scaffold["isError"] is False and scaffold["errorCode"] is None and scaffold["resultCount"] >= 1
    assert refused["isError"] is True and refused["errorCode"] == "url_refused"
    assert refused["resultCount"] is None


def test_a_tool_name_with_line_breaks_cannot_forge_log_lines_and_is_cut(tmp_path: Path) -> None:
    """The client chooses the tool name: written raw, a name holding a line break wrote a line of
    its own into the operator's log (an ERROR line, say), and a 900 kB name was written three times."""
    forged = "x\nimqueue-mcp ERROR imqueue_mcp.server.hosting.lifecycle: FORGED\r\nsecond" + "y" * 100_000
    calls = [("tools/call", {"name": forged, "arguments": {}})]
    _, stderr = raw_stdio_session(["--log-level", "info"], server_environment(tmp_path), tmp_path, calls)
    assert not any(line.startswith(("imqueue-mcp ERROR", "second")) for line in stderr.splitlines())
    assert "FORGED" in stderr and len(stderr) < 20_000
    (line,) = json_lines(stderr)
    assert line["tool"].startswith("x\nimqueue-mcp ERROR") and len(line["tool"]) < 300


def test_the_default_level_writes_no_call_lines(tmp_path: Path) -> None:
    _, stderr = raw_stdio_session([], server_environment(tmp_path), tmp_path, CALLS)
    assert json_lines(stderr) == []


def test_the_env_level_applies_and_a_bad_level_is_refused_before_serving(tmp_path: Path) -> None:
    env = server_environment(tmp_path, IMQUEUE_MCP_LOG_LEVEL="info")
    assert len(json_lines(raw_stdio_session([], env, tmp_path, CALLS)[1])) == 2
    bad = subprocess.run(
        [sys.executable, "-m", "imqueue_mcp.server", "--log-level", "chatty"],
        capture_output=True,
        text=True,
        env=server_environment(tmp_path),
        timeout=30,
    )
    assert bad.returncode == 2 and "--log-level='CHATTY'" in bad.stderr and bad.stdout == ""


def test_hosted_calls_are_logged_with_the_2026_client_and_revision(hosted: HttpServer) -> None:
    info = mcp_types.Implementation(name="hosted-log-test", version="1.2.3")
    connection = McpConnection(hosted.url + "/mcp", "2026-07-28", client_info=info)
    try:
        assert connection.call("package_status", {"package": "rpc"}).structured_content["packages"]
    finally:
        connection.close()
    lines = [line for line in json_lines(hosted.stderr()) if line["client"]["name"] == "hosted-log-test"]
    assert len(lines) == 1
    assert lines[0]["tool"] == "package_status" and lines[0]["resultCount"] == 1
    assert lines[0]["client"] == {"name": "hosted-log-test", "version": "1.2.3"}
    assert lines[0]["protocol"] == "2026-07-28" and lines[0]["isError"] is False


def test_hosted_info_logs_the_calls_not_a_transport_line_per_request(hosted: HttpServer) -> None:
    """At INFO the SDK's transport wrote "Terminating session: None" for every stateless request
    (initialize, tools/list, ping included): most of a fleet's log. It is DEBUG's now."""
    connection = McpConnection(hosted.url + "/mcp", "legacy")
    try:
        for _ in range(3):
            connection.tools()
            connection.call("package_status", {"package": "core"})
    finally:
        connection.close()
    assert "Terminating session" not in hosted.stderr()
    assert len([line for line in json_lines(hosted.stderr()) if line["tool"] == "package_status"]) >= 3

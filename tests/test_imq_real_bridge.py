"""Every CLI-bridge tool end to end against the real imq 5.2.2 (issue 12).

The SDK's client talks over stdio to the real server process, whose bridge runs the imq that
.ci/install-imq.sh built (tests/imq_real.py). The server gets a temporary HOME and imq home
(IMQ_CLI_HOME) and works in a temporary directory, so nothing here reads or writes the user's
own imq configuration; a module fixture checks that the user's home is unchanged afterwards.
Each test asserts on what real imq did - the files it wrote, its exit status and its output -
not on what the bridge says about it. The six failures of the issue are marked "issue 12 #n".
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from imq_real import (
    IMQ,
    REDIS_PORT,
    SERVICE_RUNTIME,
    TEMPLATE,
    home_footprint,
    port_is_free,
    real_imq_environment,
    require_real_imq,
    run_imq,
)

from imqueue_mcp.server.tool_results import error_of

from conftest import CI, McpConnection, stdio_connection

pytestmark = pytest.mark.slow  # a long end-to-end run: CI, or IMQUEUE_MCP_SLOW=1 (conftest.py)

EMAIL = ["-e", "dev@example.com"]
OFFLINE = ["--no-use-git", "--no-install"]  # no git repository, no npm install
SERVICE = "ProbeService"  # class and queue name of the scaffolded service; its generated client
# is ProbeClient, whose default queue ("Probe") is not the service's: the answer must say so
READY_SECONDS = 90.0


@dataclass
class Bridge:
    mcp: McpConnection
    work: Path  # the server's working directory
    imq_home: Path  # IMQ_CLI_HOME: imq keeps .imq/config.json and .imq/var/ (fleet, logs) here


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bridge]:
    require_real_imq()
    user_home = Path.home()
    before = home_footprint(user_home)
    home = tmp_path_factory.mktemp("imq-real")
    work = home / "work"
    work.mkdir()
    connection = stdio_connection([], real_imq_environment(home), work, "legacy")
    yield Bridge(connection, work, home / "imq")
    connection.close()
    assert home_footprint(user_home) == before, "a test wrote to the user's home"


def call(bridge: Bridge, tool: str, arguments: dict[str, Any], timeout: float = 150) -> Any:
    return bridge.mcp.call(tool, arguments, timeout=timeout)


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def next_step(result: Any) -> str:
    detail = error_of(result)
    assert detail is not None, text_of(result)
    return str(detail["suggestedAction"])


def tree(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


def suggested_flags(text: str) -> list[str]:
    """The first flags=[...] list a hint or description suggests, as a list of strings."""
    found = re.search(r"flags=(\[[^\]]*\])", text)
    assert found, text
    return list(json.loads(found[1].replace("'", '"')))


# --------------------------------------------------------------------------- status and help


def test_cli_status_reports_the_version_real_imq_prints(bridge: Bridge) -> None:
    result = call(bridge, "cli_status", {})

    assert not result.is_error, text_of(result)
    assert f"imq 5.2.2 is installed at {IMQ}" in text_of(result)


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        ("service create", "imq service create [name] [path]"),
        ("client generate", "imq client generate <name> [path]"),
        ("ctl", "imq ctl <action>"),
        ("config", "imq config"),
        ("config get", "imq config get [option]"),
        ("config set", "imq config set <option> <value>"),
        ("log", "imq log [services..]"),
    ],
)
def test_cli_help_shows_real_imqs_help_of_each_mapped_command(
    bridge: Bridge, command: str, usage: str
) -> None:
    result = call(bridge, "cli_help", {"command": command})

    assert not result.is_error, text_of(result)
    assert usage in text_of(result)
    assert run_imq([*command.split(), "--help"], bridge.work, bridge.imq_home).stdout.strip() in text_of(
        result
    )


# --------------------------------------------------------------------------- create_service


@pytest.mark.parametrize(
    "flags",
    [
        [*EMAIL, "-a", "A", *OFFLINE],  # issue 12 #1: short flags, values as the next item
        ["--email", "dev@example.com", "--author", "A", *OFFLINE],  # issue 12 #1: long, value next
        ["--email=dev@example.com", "--author=A Person", "--no-use-git"],  # values inline
    ],
    ids=["short", "long-next", "long-inline"],
)
def test_create_service_dry_run_passes_flags_as_imq_reads_them_and_writes_nothing(
    bridge: Bridge, flags: list[str]
) -> None:
    before = tree(bridge.work)

    result = call(bridge, "create_service", {"name": "dry", "path": "dry", "flags": flags})

    assert not result.is_error, text_of(result)
    assert "Dry run - no changes made" in text_of(result)  # real imq's own words
    assert f"path: {bridge.work / 'dry'}" in text_of(result)  # its plan
    assert tree(bridge.work) == before


@pytest.mark.parametrize("where", ["description", "flags schema"])
def test_create_service_flags_examples_of_the_tool_run_on_real_imq(bridge: Bridge, where: str) -> None:
    """issue 12 #2: the schema's example was ['--no-git'], which real imq refuses."""
    tool = next(tool for tool in bridge.mcp.tools() if tool.name == "create_service")
    text = (
        tool.description
        if where == "description"
        else tool.input_schema["properties"]["flags"]["description"]
    )
    example = re.search(r"e\.g\. (\[[^\]]*\])", text)
    assert example, text
    flags = suggested_flags(f"flags={example[1]}")

    result = call(bridge, "create_service", {"name": "example", "path": "example", "flags": flags})

    assert not result.is_error, text_of(result)
    assert "Dry run - no changes made" in text_of(result)


def test_create_service_dry_run_without_email_fails_as_real_imq_does_with_a_hint_that_works(
    bridge: Bridge,
) -> None:
    """issue 12 #6 (real imq exits 1 even for a dry run) and #3 (the hint's flag must exist)."""
    result = call(bridge, "create_service", {"name": "noemail", "path": "noemail", "flags": OFFLINE})

    assert result.is_error
    assert "failed with exit code 1" in text_of(result)
    assert "Author's email is required, but was not given!" in text_of(result)
    hint = next_step(result)
    assert "dockerhub-namespace" not in text_of(result)

    retried = call(
        bridge,
        "create_service",
        {"name": "noemail", "path": "noemail", "flags": [*suggested_flags(hint), *OFFLINE]},
    )
    assert not retried.is_error, text_of(retried)
    assert "Dry run - no changes made" in text_of(retried)


def test_an_unknown_flag_is_named_with_the_closest_flag_of_imqs_help_and_no_email_advice(
    bridge: Bridge,
) -> None:
    """issue 12 #4: imq prints its whole help (which mentions email) before 'Unknown argument'."""
    result = call(bridge, "create_service", {"name": "typo", "path": "typo", "flags": [*EMAIL, "--no-git"]})

    assert result.is_error
    assert "Unknown argument: git" in text_of(result)  # real imq's error line
    hint = next_step(result)
    assert "imq does not know --no-git" in hint and "--no-use-git" in hint
    assert "email" not in hint.lower()


def test_an_unknown_value_flag_is_matched_to_the_real_one(bridge: Bridge) -> None:
    """issue 12 #3: the namespace flag is --docker-namespace (-N), not --dockerhub-namespace."""
    flags = [*EMAIL, "--dockerhub-namespace=acme"]
    result = call(bridge, "create_service", {"name": "typo", "path": "typo", "flags": flags})

    assert result.is_error
    assert "Unknown arguments: dockerhub-namespace" in text_of(result)
    assert "--docker-namespace" in next_step(result)


def test_a_value_with_no_flag_before_it_is_refused_before_imq_runs(bridge: Bridge) -> None:
    result = call(bridge, "create_service", {"name": "stray", "flags": [*OFFLINE, "elsewhere"]})

    assert result.is_error
    assert error_of(result)["code"] == "argument_refused"  # type: ignore[index]
    assert not (bridge.work / "elsewhere").exists()


def test_create_service_apply_writes_the_project_real_imq_scaffolds(bridge: Bridge) -> None:
    flags = [*EMAIL, "--author=A Person", *OFFLINE, "-t", str(TEMPLATE)]

    result = call(bridge, "create_service", {"name": "made", "path": "made", "flags": flags, "apply": True})

    assert not result.is_error, text_of(result)
    made = bridge.work / "made"
    assert "Service successfully created!" in text_of(result)
    assert f"Created service made in {made}." in text_of(result)
    package = json.loads((made / "package.json").read_text())
    assert package["name"] == "made" and "dev@example.com" in package["author"]
    assert (made / "index.ts").is_file() and (made / "src").is_dir() and (made / "tsconfig.json").is_file()
    assert not (made / ".git").exists() and not (made / "node_modules").exists()


def test_create_service_without_a_path_writes_into_the_working_directory_as_imq_does(bridge: Bridge) -> None:
    """imq's default path is '.', not ./<name>; the bridge says where imq really wrote."""
    here = bridge.work / "here"
    here.mkdir()
    direct = run_imq(
        ["service", "create", "alone", "-t", str(TEMPLATE), *EMAIL, *OFFLINE], here, bridge.imq_home
    )
    assert direct.returncode == 0, direct.stderr
    assert (here / "package.json").is_file()  # real imq: into the working directory itself

    result = call(bridge, "create_service", {"name": "alone", "flags": [*EMAIL, *OFFLINE], "apply": False})
    assert not result.is_error, text_of(result)
    assert f"path: {bridge.work}\n" in text_of(result)


# --------------------------------------------------------------------------- config


def test_config_set_get_and_check_act_on_the_temporary_imq_home(bridge: Bridge) -> None:
    config_file = bridge.imq_home / ".imq" / "config.json"

    stored = call(bridge, "config", {"action": "set", "option": "author", "value": "A Person"})
    assert not stored.is_error, text_of(stored)
    assert json.loads(config_file.read_text())["author"] == "A Person"

    got = call(bridge, "config", {"action": "get", "option": "author"})
    assert not got.is_error and '"A Person"' in text_of(got)
    checked = call(bridge, "config", {"action": "check"})
    assert not checked.is_error and "exit code 0" in text_of(checked)


def test_config_get_of_an_unset_option_is_real_imqs_failure(bridge: Bridge) -> None:
    result = call(bridge, "config", {"action": "get", "option": "registry.namespace"})

    assert result.is_error
    assert 'Option "registry.namespace" is not set.' in text_of(result)


def test_config_init_is_refused_as_interactive_and_changes_nothing(bridge: Bridge) -> None:
    before = tree(bridge.imq_home) if bridge.imq_home.exists() else []

    result = call(bridge, "config", {"action": "init"})

    assert result.is_error
    assert error_of(result)["code"] == "interactive_only"  # type: ignore[index]
    assert (tree(bridge.imq_home) if bridge.imq_home.exists() else []) == before


# --------------------------------------------------------------------------- a running service


@pytest.fixture(scope="module")
def redis_on_default_port() -> Iterator[None]:
    """imq's client generator reaches Redis on localhost:6379 only: start one there."""
    if shutil.which("redis-server") is None:
        if CI:
            pytest.fail("redis-server is not installed: run bash .ci/install-framework.sh")
        pytest.skip("redis-server is not installed: run bash .ci/install-framework.sh")
    if not port_is_free(REDIS_PORT):
        pytest.skip(f"port {REDIS_PORT} is taken, and imq client generate reaches Redis only there")
    process = subprocess.Popen(
        [
            "redis-server",
            "--bind",
            "127.0.0.1",
            "--port",
            str(REDIS_PORT),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while port_is_free(REDIS_PORT):
            assert process.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
        yield
    finally:
        process.terminate()
        process.wait(20)


@pytest.fixture(scope="module")
def fleet_root(bridge: Bridge, redis_on_default_port: None) -> Iterator[Path]:
    """A service scaffolded by real imq through the bridge, started by real `imq ctl start`."""
    root = bridge.work / "fleet"
    flags = [*EMAIL, "-a", "A", *OFFLINE, "-t", str(TEMPLATE)]
    created = call(
        bridge, "create_service", {"name": SERVICE, "path": "fleet/probe", "flags": flags, "apply": True}
    )
    assert not created.is_error, text_of(created)
    # The template's own `npm install` pulls dozens of "*" devDependencies; its runtime is prebuilt.
    (root / "probe" / "node_modules").symlink_to(SERVICE_RUNTIME, target_is_directory=True)
    started = call(bridge, "fleet", {"action": "start", "path": "fleet", "calm": True})
    try:
        assert not started.is_error, text_of(started)
        wait_for_log(bridge, "probe", f"{SERVICE}: watcher channel connected")
        yield root
    finally:
        call(bridge, "fleet", {"action": "stop", "path": "fleet"})


def wait_for_log(bridge: Bridge, service: str, line: str) -> None:
    log = bridge.imq_home / ".imq" / "var" / f"{service}.log"
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if log.is_file() and line in log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    raise AssertionError(
        f"{line!r} not in {log} within {READY_SECONDS} s:\n{log.read_text()[-3000:] if log.exists() else ''}"
    )


def test_fleet_status_shows_the_service_real_imq_started(bridge: Bridge, fleet_root: Path) -> None:
    result = call(bridge, "fleet", {"action": "status", "path": "fleet"})

    assert not result.is_error, text_of(result)
    running = re.search(r"probe: running \(pid (\d+)\)", text_of(result))
    assert running, text_of(result)
    assert Path(f"/proc/{running[1]}").is_dir()  # the process imq started and tracks
    assert running[1] in (bridge.imq_home / ".imq" / "var" / ".pids").read_text()


def test_generate_client_writes_the_client_of_the_running_service(bridge: Bridge, fleet_root: Path) -> None:
    result = call(bridge, "generate_client", {"service": SERVICE, "path": "clients"})

    assert not result.is_error, text_of(result)
    written = bridge.work / "clients" / f"{SERVICE}.ts"
    source = written.read_text()
    assert "export namespace probeService" in source and "class ProbeClient extends IMQClient" in source
    assert f"Successfully created. Path: {written}" in text_of(result)  # real imq's own words
    generated = result.structured_content
    assert (generated["service"], generated["path"]) == (SERVICE, str(written))
    assert (generated["namespace"], generated["client"]) == ("probeService", "ProbeClient")
    assert generated["content"] == source and source.rstrip() in text_of(result)
    assert f"new probeService.ProbeClient(options, '{SERVICE}')" in text_of(result)

    started = time.monotonic()
    again = call(bridge, "generate_client", {"service": SERVICE, "path": "clients"})
    assert time.monotonic() - started < 20  # imq's prompt meets a closed stdin: no wait for a timeout
    assert again.is_error and "already exists. Overwrite it?" in text_of(again)  # imq's prompt, then SIGINT
    assert "overwrite" in next_step(again)
    replaced = call(bridge, "generate_client", {"service": SERVICE, "path": "clients", "overwrite": True})
    assert not replaced.is_error, text_of(replaced)
    assert replaced.structured_content["content"] == written.read_text()
    assert (
        "Successfully created." in text_of(replaced)
        and "export namespace probeService" in written.read_text()
    )


def test_fleet_restart_keeps_the_previous_runs_log_and_says_where(bridge: Bridge, fleet_root: Path) -> None:
    """imq ctl restart truncates probe.log; the run before is kept as probe.log.1 and named."""
    var = bridge.imq_home / ".imq" / "var"
    (var / "probe.log").write_bytes((var / "probe.log").read_bytes() + b"MARK: the run before\n")

    restarted = call(bridge, "fleet", {"action": "restart", "path": "fleet", "calm": True})

    assert not restarted.is_error, text_of(restarted)
    assert f"probe: {var / 'probe.log.1'}" in text_of(restarted), text_of(restarted)
    assert "MARK: the run before" in (var / "probe.log.1").read_text()
    wait_for_log(bridge, "probe", f"{SERVICE}: watcher channel connected")
    assert "MARK" not in (var / "probe.log").read_text()


def test_logs_dump_prints_what_the_service_wrote_and_clean_deletes_it(
    bridge: Bridge, fleet_root: Path
) -> None:
    log = bridge.imq_home / ".imq" / "var" / "probe.log"

    dumped = call(bridge, "logs", {"action": "dump", "services": ["probe"]})
    assert not dumped.is_error, text_of(dumped)
    assert f"{SERVICE}: reader channel connected" in text_of(dumped)
    assert f"- probe: {log.with_name('probe.log.1')}" in text_of(dumped)  # the earlier run, named

    cleaned = call(bridge, "logs", {"action": "clean", "services": ["probe"]})
    assert not cleaned.is_error, text_of(cleaned)
    assert "Removed 1 log file(s) for probe." in text_of(cleaned)
    assert "and 1 kept log(s) of earlier runs." in text_of(cleaned)
    assert not log.exists() and not log.with_name("probe.log.1").exists()


def test_fleet_stop_stops_what_real_imq_started(bridge: Bridge, fleet_root: Path) -> None:
    stopped = call(bridge, "fleet", {"action": "stop", "path": "fleet"})
    assert not stopped.is_error, text_of(stopped)
    assert "Stopped 1 service(s)." in text_of(stopped)

    status = call(bridge, "fleet", {"action": "status", "path": "fleet"})
    assert "No services are currently tracked as running." in text_of(status)
    deadline = time.monotonic() + 20
    while labelled_processes("LABEL=probe") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert labelled_processes("LABEL=probe") == []


def labelled_processes(label: str) -> list[int]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if label.encode() in cmdline.read_bytes():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found

"""Security posture, shown on the real server processes with a Python audit hook.

A `sitecustomize` shim (written to a temporary folder and put first on PYTHONPATH) installs
an audit hook in every Python process started with it: the server, and any Python child.
It appends one JSON line per event to $IMQUEUE_MCP_AUDIT_LOG: file opens, process spawns
(subprocess.Popen, os.exec*, os.posix_spawn, os.system, os.fork) and the module a process
runs. The tests then read the log of the server's own pid:

- hosted: no process is ever spawned, and once serving, no file is opened except the
  snapshot (and its pages) and the code the interpreter imports;
- local: the CLI bridge runs imq as an argv list, never through a shell, with a hostile
  value kept as one argument; create_service writes only with apply: true;
- the tool lists and annotations: no CLI tool over HTTP, the changing CLI tools destructive.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from imq_real import IMQ, TEMPLATE, real_imq_environment, require_real_imq

from conftest import (
    HOSTED_TOOLS,
    REPO,
    HttpServer,
    McpConnection,
    built_snapshot,
    origin_args,
    server_environment,
    stdio_connection,
)

SHIM = """\
import json, os, sys

_log = os.environ.get("IMQUEUE_MCP_AUDIT_LOG")
if _log:
    _fd = os.open(_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    _busy = False
    _spawns = ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.fork",
               "os.forkpty", "pty.spawn")

    def _hook(event, args):
        global _busy
        if _busy or not (event == "open" or event == "cpython.run_module" or event.startswith(_spawns)):
            return
        _busy = True
        try:
            line = json.dumps({"pid": os.getpid(), "event": event, "args": [repr(a) if not isinstance(
                a, (str, int, float, bool, type(None), list, tuple)) else a for a in args]}, default=repr)
            os.write(_fd, line.encode() + b"\\n")
        finally:
            _busy = False

    sys.addaudithook(_hook)
"""

SPAWNS = ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn", "os.system", "os.fork", "os.forkpty")


@dataclass
class Audit:
    log: Path
    shim: Path

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        return {
            **env,
            "PYTHONPATH": os.pathsep.join([str(self.shim), env["PYTHONPATH"]]),
            "IMQUEUE_MCP_AUDIT_LOG": str(self.log),
        }

    def events(self, start: int = 0) -> list[dict[str, Any]]:
        with self.log.open("rb") as file:
            file.seek(start)
            return [json.loads(line) for line in file.read().splitlines() if line.strip()]

    def size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def server_pid(self) -> int:
        pids = [
            event["pid"]
            for event in self.events()
            if event["event"] == "cpython.run_module" and event["args"][0] == "imqueue_mcp.server"
        ]
        assert len(pids) == 1, pids
        return int(pids[0])


def audit_in(folder: Path) -> Audit:
    shim = folder / "shim"
    shim.mkdir(parents=True)
    (shim / "sitecustomize.py").write_text(SHIM)
    return Audit(folder / "audit.jsonl", shim)


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_snapshot(tmp_path_factory.mktemp("posture-snapshot"), pages=False)


# --- hosted --------------------------------------------------------------------------------


def code_or_library(path: str) -> bool:
    """What the interpreter reads to import code: the source tree's packages and the installation."""
    roots = {
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        *(str(REPO / name) for name in ("server", "ranker", "build_index")),
    }
    resolved = os.path.realpath(path)
    if resolved.startswith(str(REPO) + os.sep) and ".egg-info" + os.sep in resolved:
        return True  # the editable install's metadata, read once for the server's version
    return any(resolved.startswith(os.path.realpath(root) + os.sep) for root in roots)


@pytest.fixture(scope="module")
def hosted_audit(
    site_origins: dict[str, str], snapshot: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Audit, HttpServer, int]]:
    home = tmp_path_factory.mktemp("posture-http")
    audit = audit_in(home)
    env = audit.environment(server_environment(home))
    server = HttpServer([*origin_args(site_origins), "--snapshot", str(snapshot)], env, home)
    ready = audit.size()
    yield audit, server, ready
    server.close()


def reading(uri: str) -> Callable[[Any], Awaitable[Any]]:
    """The client's read of one resource, with the uri bound now."""
    return lambda client: client.read_resource(uri)


def getting_prompt(name: str, arguments: dict[str, str]) -> Callable[[Any], Awaitable[Any]]:
    """The client's get of one prompt, with its name and arguments bound now."""
    return lambda client: client.get_prompt(name, arguments)


def exercise_every_hosted_surface(url: str) -> None:
    connection = McpConnection(url, "legacy")
    try:
        calls = [
            ("search_docs", {"query": "how do I expose a method"}),
            ("search_docs", {"query": "expose", "package": "../../etc/passwd"}),
            ("get_doc", {"url": "https://imqueue.org/intro/#why"}),
            ("get_doc", {"url": "file:///etc/passwd"}),
            ("list_packages", {}),
            ("package_status", {"package": "rpc"}),
            ("package_status", {"package": "/etc/passwd"}),
            ("scaffold_service", {"name": "../../tmp/evil"}),
            ("scaffold_client", {"service": "User"}),
            ("local_install_guide", {}),
        ]
        for tool, arguments in calls:
            text = "".join(b.text for b in connection.call(tool, arguments).content if b.type == "text")
            assert text.strip() and "Traceback" not in text
        listed = connection.run(lambda client: client.list_resources()).resources
        assert listed
        # one resource of each kind (a page, an llms.txt index, the JSON catalogue), and one read
        # through a template: what the hosted server reads for them must stay within its snapshot
        kinds: dict[str, str] = {}
        for resource in listed:
            uri = str(resource.uri)
            kind = (
                "catalogue" if not uri.startswith("https://") else "index" if uri.endswith(".txt") else "page"
            )
            kinds.setdefault(kind, uri)
        kinds["template"] = "https://imqueue.org/api/rpc/latest/"
        for uri in kinds.values():
            connection.run(reading(uri))
        values = {"name": "user", "need": "a message queue", "purpose": "stores users"}
        for prompt in connection.run(lambda client: client.list_prompts()).prompts:
            arguments = {a.name: values[a.name] for a in prompt.arguments or [] if a.required}
            connection.run(getting_prompt(prompt.name, arguments))
        from mcp_types import PromptReference, ResourceTemplateReference

        page_ref = ResourceTemplateReference(type="ref/resource", uri="https://imqueue.org/{+path}")
        connection.run(lambda client: client.complete(page_ref, {"name": "path", "value": "tut"}))
        prompt_ref = PromptReference(type="ref/prompt", name="choose_imqueue_packages")
        connection.run(lambda client: client.complete(prompt_ref, {"name": "using", "value": "r"}))
    finally:
        connection.close()


def test_the_hosted_server_never_spawns_a_process(hosted_audit: tuple[Audit, HttpServer, int]) -> None:
    audit, server, _ = hosted_audit
    exercise_every_hosted_surface(server.url + "/mcp")
    pid = audit.server_pid()
    assert pid == server.process.pid
    spawned = [event for event in audit.events() if event["pid"] == pid and event["event"].startswith(SPAWNS)]
    assert spawned == []


def test_the_hosted_server_opens_no_file_outside_its_snapshot_once_serving(
    hosted_audit: tuple[Audit, HttpServer, int], snapshot: Path
) -> None:
    audit, server, ready = hosted_audit
    exercise_every_hosted_surface(server.url + "/mcp")
    pid = audit.server_pid()
    opened = [
        str(event["args"][0])
        for event in audit.events(ready)
        if event["pid"] == pid and event["event"] == "open"
    ]
    assert opened, "the audit hook saw no open at all: is it installed?"
    own = {str(snapshot), str(snapshot) + ".pages"}
    outside = sorted({path for path in opened if path not in own and not code_or_library(path)})
    assert outside == []


def test_no_cli_tool_is_registered_over_http(hosted_audit: tuple[Audit, HttpServer, int]) -> None:
    _, server, _ = hosted_audit
    connection = McpConnection(server.url + "/mcp", "auto")
    try:
        names = {tool.name for tool in connection.tools()}
        refused = connection.call("cli_status", {})
    finally:
        connection.close()
    assert names == HOSTED_TOOLS and not {"cli_status", "cli_install", "create_service", "fleet"} & names
    assert refused.is_error  # an unregistered tool is not reachable by name either


# --- local: the CLI bridge --------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_audit(
    site_origins: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Audit, McpConnection, Path]]:
    require_real_imq()
    home = tmp_path_factory.mktemp("posture-stdio")
    work = home / "work"
    work.mkdir()
    audit = audit_in(home)
    env = audit.environment(real_imq_environment(home))
    connection = stdio_connection(origin_args(site_origins), env, work, "legacy")
    yield audit, connection, work
    connection.close()


HOSTILE_NAME = "svc; touch pwned && $(touch pwned2) `touch pwned3`"


def test_the_cli_bridge_runs_imq_as_an_argv_list_never_through_a_shell(
    local_audit: tuple[Audit, McpConnection, Path],
) -> None:
    audit, connection, work = local_audit
    connection.call("cli_status", {})
    connection.call("cli_help", {"command": "service create"})
    connection.call("create_service", {"name": HOSTILE_NAME})
    connection.call("config", {"action": "get"})
    connection.call("logs", {"action": "dump"})
    connection.call("fleet", {"action": "status"})
    pid = audit.server_pid()
    spawns = [event for event in audit.events() if event["pid"] == pid and event["event"].startswith(SPAWNS)]
    popens = [event for event in spawns if event["event"] == "subprocess.Popen"]
    assert len(popens) == 6 and len(spawns) == len(popens), spawns
    imq = str(IMQ)
    for event in popens:
        executable, argv = event["args"][0], event["args"][1]
        assert isinstance(argv, list) and argv[0] == imq, event  # no /bin/sh -c, no string command
        assert executable in (None, imq), event
    created = next(
        event["args"][1]
        for event in popens
        if event["args"][1][1:3] == ["service", "create"] and "--help" not in event["args"][1]
    )
    assert HOSTILE_NAME in created  # the hostile name is one argument, untouched
    assert not any(path.name.startswith("pwned") for path in work.rglob("*"))


def test_create_service_writes_only_with_apply_true(local_audit: tuple[Audit, McpConnection, Path]) -> None:
    _, connection, work = local_audit
    before = sorted(work.rglob("*"))
    for flags in (None, ["--no-use-git"], ["--dry-run=false"]):
        arguments: dict[str, Any] = {"name": "posture-dry", "path": "dry"}
        if flags:
            arguments["flags"] = flags
        connection.call("create_service", arguments)
        connection.call("create_service", {**arguments, "apply": False})
        connection.call("create_service", {**arguments, "apply": "true"})  # a string is not true
    assert sorted(work.rglob("*")) == before
    applied = connection.call(
        "create_service",
        {
            "name": "posture-real",
            "path": "real",
            "apply": True,
            "flags": ["--email=a@b.test", "--no-use-git", "--no-install", "-t", str(TEMPLATE)],
        },
    )
    assert not applied.is_error, applied.content[0].text
    assert (work / "real").is_dir() and any((work / "real").rglob("*"))


def test_every_changing_cli_tool_is_marked_destructive(
    local_audit: tuple[Audit, McpConnection, Path],
) -> None:
    _, connection, _ = local_audit
    hints = {tool.name: tool.annotations for tool in connection.tools()}
    for name in ("cli_install", "fleet", "config", "logs", "create_service", "generate_client"):
        assert hints[name].destructive_hint is True and hints[name].read_only_hint is False, name
    for name in ("cli_status", "cli_help", "search_docs", "get_doc"):
        assert hints[name].read_only_hint is True and hints[name].destructive_hint is False, name


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("create_service", {"name": "svc\n--help"}),
        ("create_service", {"name": "s" * 215}),
        ("create_service", {"name": "svc", "flags": ["--email=a@b.test\x1b[2J"]}),
        ("generate_client", {"service": "User\tService"}),
        ("fleet", {"action": "status", "services": ["svc\r"]}),
        ("fleet", {"action": "status", "path": "9" * 400}),
        ("config", {"action": "set", "option": "email", "value": "v" * 5000}),
    ],
)
def test_values_with_control_characters_or_too_long_are_refused_before_imq_runs(
    local_audit: tuple[Audit, McpConnection, Path], tool: str, arguments: dict[str, Any]
) -> None:
    audit, connection, _ = local_audit
    start = audit.size()
    result = connection.call(tool, arguments)
    text = result.content[0].text
    # the bridge's own refusal, or (past a schema's maxLength) the argument check's, before the tool runs
    refused = "nothing was run" in text.lower() or f"{tool} was not run: invalid arguments" in text
    assert result.is_error and refused and "Traceback" not in text
    pid = audit.server_pid()
    assert not [
        event for event in audit.events(start) if event["pid"] == pid and event["event"].startswith(SPAWNS)
    ]

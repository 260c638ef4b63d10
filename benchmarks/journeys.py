"""Agent journeys: can an agent with only our tools finish a real @imqueue task?

Each journey is a script that acts only on what the tools return (files, commands, advice, URLs)
on the stack the docs describe: the real stdio server driven by the SDK's client, the real imq
5.2.2, @imqueue/rpc 3.7.2 on core 3.4.2 (built by .ci/install-imq.sh) under Node 22, and a
redis-server on a free NON-default loopback port started and stopped here.

    a  service    a service with two methods and a client for it, from nothing; both calls answered
    b  add        one more method on that service, the client regenerated, the new call answered
    c  repair     a broken project (legacy decorators on 3.x, removeComments, a core of another
                  major) repaired by following inspect_project's advice alone: no finding left,
                  it compiles, starts and answers a call
    d  errors     a pasted error (ERESOLVE, ECONNREFUSED, TS1241, a call timeout) -> search_docs;
                  the page that fixes it must be in the top results, and get_doc must show the fix
    e  calls      InventoryService and an OrderService that calls it, @logged, with a call timeout,
                  each written into its folder by the scaffold tools (journey_calls.py); the
                  caller's answer passes through both, and with InventoryService down it times out

A **hand fix** is a step where the script needs knowledge no tool gave it. Every step checks the
tools' answer for what it needs; when it is missing the step records a hand fix with a one-line
reason and applies the smallest fix that lets the journey go on. Target: 0 in every journey.
Installing a project's dependencies is the one thing done outside the tools, and is no hand fix:
the registry here has no @imqueue 3.x, so the stand-in for `npm install` (journey_kit.install)
lays out node_modules from the prebuilt 3.x runtime as the package.json asks.

Prints a table, then one JSON line.

    .venv/bin/python -m benchmarks.journeys [--only a,b,c,d,e] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from imqueue_mcp.server.project.reader import parse_jsonc

from .bench_server import environment, free_port, origin_args, site_origins
from .journey_calls import journey_two_services
from .journey_kit import (
    REPO,
    Edit,
    Journey,
    JourneyFailed,
    Project,
    Tools,
    advice_edits,
    apply_edit,
    install,
    node_environment,
    wait_for_log,
)
from .machine import machine
from .stack import IMQ, INSTALL, NODE, NODE_BIN, SERVICE_RUNTIME, redis_server, stop_group

SERVICE = "UserService"
GLUE = REPO / "tests" / "framework"  # the framework tests' own caller, the fallback of a hand fix
METHODS: list[dict[str, Any]] = [
    {
        "name": "getUser",
        "description": "Finds one user by id.",
        "params": [{"name": "id", "type": "string"}],
        "returns": "string",
    },
    {
        "name": "listUsers",
        "description": "Lists users, at most limit of them.",
        "params": [{"name": "limit", "type": "number"}],
        "returns": "string[]",
    },
]
ADDED = {"name": "countUsers", "description": "Counts the users.", "returns": "number"}
# The agent's own code: a body for each method, whatever arguments an example passes. Each
# answer carries a mark the check below finds in the caller's output.
BODIES = {
    "getUser": "return `found:${id}`;",
    "listUsers": "return [`listed:${limit}`];",
    "countUsers": "return 4242;",
}
MARKS = {"getUser": "found:", "listUsers": "listed:", "countUsers": "4242"}
ANSWER_SECONDS = 60.0


@dataclass
class Stage:
    """What the journeys share: the workspace, the broker, the server's tools, the built service."""

    workspace: Path
    broker: str
    tools: Tools
    service: Project | None = None
    service_process: subprocess.Popen[bytes] | None = None
    client: Project | None = None


# --- steps shared by the journeys ------------------------------------------------------------


def write_files(project: Project, files: list[dict[str, Any]]) -> None:
    for file in files:
        project.write(str(file["path"]), str(file["content"]))


def implement(project: Project, source: str, journey: Journey, methods: list[dict[str, Any]]) -> None:
    """The agent's own work: each method's body, where the scaffold left its placeholder."""
    text = project.read(source)
    for method in methods:
        placeholder = f"throw new Error('{SERVICE}.{method['name']}() is not implemented yet');"
        if placeholder in text:
            text = text.replace(placeholder, BODIES[method["name"]])
            continue
        journey.hand_fix(f"the scaffold's {method['name']}() has no placeholder body to replace")
        text = re.sub(
            rf"(async {method['name']}\([^)]*\)[^{{]*\{{)[^}}]*(\}})",
            rf"\1 {BODIES[method['name']]} \2",
            text,
        )
    project.write(source, text)


def find_file(files: list[dict[str, Any]], name: str) -> dict[str, Any] | None:
    return next((file for file in files if Path(str(file["path"])).name == name), None)


def broker_variable(answer_text: str, files: list[dict[str, Any]]) -> str | None:
    """The environment variable the tool's files or words say carries the broker's address."""
    text = answer_text + "".join(str(file["content"]) for file in files)
    match = re.search(r"process\.env\[?['\".]?(IMQ_REDIS\w*)", text) or re.search(r"\b(IMQ_REDIS)\b", text)
    return match.group(1) if match else None


def install_step(project: Project, journey: Journey) -> None:
    journey.step("install (stand-in for npm install: the registry has no @imqueue 3.x)")
    layout = install(project.root)
    journey.notes.append(
        f"{project.root.name}: installed " + ", ".join(f"{k} {v}" for k, v in layout.items())
    )


def build_step(project: Project, journey: Journey) -> None:
    journey.step("build as package.json says")
    scripts = project.scripts()
    if "build" in scripts:
        built = project.npm("build")
    else:
        journey.hand_fix("package.json has no build script: ran tsc -p . by hand")
        built = subprocess.run(
            [str(NODE), str(project.root / "node_modules" / "typescript" / "bin" / "tsc"), "-p", "."],
            cwd=project.root,
            capture_output=True,
            text=True,
            timeout=180,
            env=node_environment(project.workspace),
        )
    if built.returncode != 0:
        raise JourneyFailed(f"build failed: {(built.stdout + built.stderr).strip()[-1200:]}")


def start_service(stage: Stage, project: Project, journey: Journey, variable: str | None) -> None:
    journey.step("start as package.json says, on the non-default Redis")
    stop_service(stage)
    scripts = project.scripts()
    script = "start" if "start" in scripts else None
    if script is None:
        journey.hand_fix("package.json has no start script: ran node on the compiled bootstrap by hand")
        project.write(
            "package.json",
            json.dumps({**(project.manifest() or {}), "scripts": {**scripts, "start": "node dist/index.js"}}),
        )
        script = "start"
    env = {variable: stage.broker} if variable else {}
    log = stage.workspace / f"{project.root.name}.log"
    process = project.start(script, log, **env)
    stage.service_process = process
    wait_for_log(process, log, f"{SERVICE}: reader channel connected")


def stop_service(stage: Stage) -> None:
    if stage.service_process is not None:
        stop_group(stage.service_process)
        stage.service_process = None


async def generate(stage: Stage, project: Project, output: str, journey: Journey) -> str:
    """generate_client into the client project, on the service's own broker; returns the file's text."""
    journey.step("generate_client from the running service")
    arguments: dict[str, Any] = {"service": SERVICE, "path": str(project.root / output), "overwrite": True}
    takes_broker = stage.tools.has_argument("generate_client", "redis")
    if takes_broker:
        arguments["redis"] = stage.broker
    answer = await stage.tools.call("generate_client", arguments)
    target = project.root / output / f"{SERVICE}.ts"
    if not answer.is_error and target.is_file():
        return target.read_text(encoding="utf-8")
    why = "" if takes_broker else "it takes no broker address and the service's Redis is not localhost:6379; "
    first = (answer.text.strip().splitlines() or ["no text"])[0][:120]
    journey.hand_fix(
        f"generate_client failed ({why}{first}): generated with the project's @imqueue/rpc by hand"
    )
    script = project.write(
        "generate-by-hand.mjs",
        "import { IMQClient } from '@imqueue/rpc';\n"
        "import { brokerOptions } from './broker.mjs';\n"
        f"await IMQClient.create('{SERVICE}', "
        f"{{ ...brokerOptions(), path: '{output}', compile: false, write: true }});\n"
        "process.exit(0);\n",
    )
    shutil.copy(GLUE / "broker.mjs", project.root / "broker.mjs")
    made = subprocess.run(
        [str(NODE), script.name],
        cwd=project.root,
        capture_output=True,
        text=True,
        timeout=ANSWER_SECONDS,
        env=node_environment(project.workspace, IMQ_REDIS=stage.broker),
    )
    if made.returncode != 0 or not target.is_file():
        raise JourneyFailed(f"client generation by hand failed too: {made.stderr.strip()[-800:]}")
    return target.read_text(encoding="utf-8")


async def make_client(
    stage: Stage, methods: list[dict[str, Any]], journey: Journey, service_scaffold: dict[str, Any]
) -> dict[str, str]:
    """scaffold_client -> its project -> generate_client -> build -> run its caller; the answers."""
    journey.step("scaffold_client")
    answer = await stage.tools.call("scaffold_client", {"service": SERVICE, "methods": methods})
    if answer.is_error:
        raise JourneyFailed(f"scaffold_client failed: {answer.text[:300]}")
    data = answer.data
    client = stage.client or Project(stage.workspace / "user-client", stage.workspace)
    stage.client = client
    files: list[dict[str, Any]] = list(data.get("files") or [])
    example = data.get("example") or {}
    if example and not any(file.get("path") == example.get("path") for file in files):
        files.append({"path": example.get("path"), "content": example.get("content", "")})
    journey.step("write the client project as returned")
    for name in ("package.json", "tsconfig.json"):
        if find_file(files, name) is None:
            given = find_file(service_scaffold.get("files", []), name)
            journey.hand_fix(
                f"scaffold_client returns no {name} for the caller: reused the service scaffold's"
            )
            if given is not None:
                content = str(given["content"])
                if name == "package.json":
                    content = content.replace("user-service", "user-client")
                files.append({"path": name, "content": content})
    caller = next((file for file in files if file.get("path") and "Client(" in str(file["content"])), None)
    if caller is None or not caller.get("path"):
        journey.hand_fix("scaffold_client's example names no file to put it in: wrote it to src/index.ts")
        if caller is None:
            raise JourneyFailed("scaffold_client gave no caller example at all")
        caller["path"] = "src/index.ts"
    write_files(client, [file for file in files if file.get("path")])
    install_step(client, journey)
    output = str(data.get("output") or f"./src/clients/{SERVICE}.ts")
    generated = await generate(stage, client, str(Path(output).parent), journey)
    missing = [m["name"] for m in methods if f"{m['name']}(" not in generated]
    if missing:
        raise JourneyFailed(f"the generated client lacks {', '.join(missing)}")
    build_step(client, journey)
    journey.step("run the caller as written, on the non-default Redis")
    variable = broker_variable(answer.text, files)
    if variable is None:
        journey.hand_fix("the caller example reads no broker address: ran it with IMQ_REDIS set anyway")
    script = "start" if "start" in client.scripts() else None
    outcome = run_caller(client, stage, script, variable or "IMQ_REDIS")
    answers = {name: mark for name, mark in MARKS.items() if any(m["name"] == name for m in methods)}
    unanswered = [name for name, mark in answers.items() if mark not in outcome]
    if unanswered:
        journey.hand_fix(
            f"the example's caller did not print an answer of {', '.join(unanswered)} "
            f"({outcome.strip()[-160:] or 'no output'}): called through the tests' own caller"
        )
        outcome = call_by_hand(client, stage, methods)
        unanswered = [name for name, mark in answers.items() if mark not in outcome]
        if unanswered:
            raise JourneyFailed(f"no answer from {', '.join(unanswered)}: {outcome[-400:]}")
    return {name: "answered" for name in answers}


def run_caller(client: Project, stage: Stage, script: str | None, variable: str) -> str:
    env = {variable: stage.broker}
    try:
        if script is not None:
            ran = client.npm(script, timeout=ANSWER_SECONDS, **env)
        else:
            ran = subprocess.run(
                [str(NODE), "dist/index.js"],
                cwd=client.root,
                capture_output=True,
                text=True,
                timeout=ANSWER_SECONDS,
                env=node_environment(client.workspace, **env),
            )
    except subprocess.TimeoutExpired:
        return "(timed out)"
    return ran.stdout + ran.stderr


def call_by_hand(client: Project, stage: Stage, methods: list[dict[str, Any]]) -> str:
    for glue in ("broker.mjs", "call-service.mjs"):
        shutil.copy(GLUE / glue, client.root / glue)
    arguments = {"getUser": ["42"], "listUsers": [2], "countUsers": []}
    calls = [[m["name"], arguments[m["name"]]] for m in methods]
    ran = subprocess.run(
        [str(NODE), "call-service.mjs", SERVICE, json.dumps(calls)],
        cwd=client.root,
        capture_output=True,
        text=True,
        timeout=ANSWER_SECONDS,
        env=node_environment(client.workspace, IMQ_REDIS=stage.broker),
    )
    return ran.stdout + ran.stderr


async def scaffold_project(
    stage: Stage, root: Path, methods: list[dict[str, Any]], journey: Journey
) -> tuple[Project, dict[str, Any], str | None]:
    journey.step("scaffold_service")
    answer = await stage.tools.call("scaffold_service", {"name": SERVICE, "methods": methods})
    if answer.is_error:
        raise JourneyFailed(f"scaffold_service failed: {answer.text[:300]}")
    project = Project(root, stage.workspace)
    journey.step("write the files as returned")
    files = list(answer.data["files"])
    write_files(project, files)
    if project.manifest() is None:
        journey.hand_fix('scaffold_service returns no package.json (its tsconfig needs "type": "module")')
        project.save_manifest(
            {
                "name": "user-service",
                "type": "module",
                "scripts": {"build": "tsc", "start": "node dist/index.js"},
                "dependencies": {"@imqueue/rpc": "^3.7.2"},
                "devDependencies": {"typescript": "^5.9.3", "@types/node": "^22.12.0"},
            }
        )
    declared = {**(project.manifest() or {}).get("dependencies", {})}
    if not re.match(r"^[\^~]?3\.", str(declared.get("@imqueue/rpc", ""))):
        journey.hand_fix("nothing pins @imqueue/rpc to the 3.x the docs describe")
        manifest = project.manifest() or {}
        manifest.setdefault("dependencies", {})["@imqueue/rpc"] = "^3.7.2"
        project.save_manifest(manifest)
    variable = broker_variable(answer.text, files)
    if variable is None:
        journey.hand_fix("the bootstrap connects to localhost:6379 with no way to name another broker")
        index = project.read("src/index.ts")
        project.write(
            "src/index.ts",
            index.replace(
                f"new {SERVICE}()",
                f"new {SERVICE}({{ host: '127.0.0.1', port: Number(process.env.IMQ_REDIS?.split(':')[1]) }})",
            ),
        )
        variable = "IMQ_REDIS"
    journey.step("implement the methods (the agent's own code)")
    implement(project, f"src/{SERVICE}.ts", journey, methods)
    return project, answer.data, variable


# --- the journeys ------------------------------------------------------------------------------


async def journey_service(stage: Stage, journey: Journey) -> None:
    project, scaffold, variable = await scaffold_project(
        stage, stage.workspace / "user-service", METHODS, journey
    )
    stage.service = project
    install_step(project, journey)
    build_step(project, journey)
    start_service(stage, project, journey, variable)
    answered = await make_client(stage, METHODS, journey, scaffold)
    journey.notes.append("answered: " + ", ".join(sorted(answered)))
    journey.passed = True


async def journey_add(stage: Stage, journey: Journey) -> None:
    project = stage.service
    if project is None or stage.service_process is None:
        raise JourneyFailed("journey a did not leave a running service to change")
    journey.step("scaffold_service with the new method, for its code")
    every = [*METHODS, ADDED]
    answer = await stage.tools.call("scaffold_service", {"name": SERVICE, "methods": every})
    if answer.is_error:
        raise JourneyFailed(f"scaffold_service failed: {answer.text[:300]}")
    source = find_file(answer.data["files"], f"{SERVICE}.ts")
    if source is None:
        raise JourneyFailed("scaffold_service returned no service class")
    journey.step("splice the new method's block into the service class")
    block = re.search(
        r"\n(    /\*\*(?:(?!\*/).)*?\*/\n    @expose\(\)\n    public async countUsers\(.*?\n    \}\n)",
        str(source["content"]),
        re.S,
    )
    if block is None:
        raise JourneyFailed("the scaffold's class has no countUsers() block")
    path = f"src/{SERVICE}.ts"
    text = project.read(path).rstrip()
    if not text.endswith("}"):
        raise JourneyFailed("the service class does not end in }")
    project.write(path, text[:-1].rstrip() + "\n\n" + block.group(1) + "}\n")
    journey.step("implement the new method (the agent's own code)")
    implement(project, path, journey, [ADDED])
    build_step(project, journey)
    variable = broker_variable(answer.text, answer.data["files"]) or "IMQ_REDIS"
    start_service(stage, project, journey, variable)
    answered = await make_client(stage, every, journey, answer.data)
    journey.notes.append("answered: " + ", ".join(sorted(answered)))
    journey.passed = True


BROKEN_TSCONFIG = {
    "compilerOptions": {
        "target": "es2024",
        "lib": ["es2024"],
        "module": "nodenext",
        "moduleResolution": "nodenext",
        "experimentalDecorators": True,
        "emitDecoratorMetadata": True,
        "removeComments": True,
        "strict": True,
        "rootDir": "src",
        "outDir": "dist",
    },
    "include": ["src"],
}
REPAIR_ROUNDS = 4


async def journey_repair(stage: Stage, journey: Journey) -> None:
    """A 2.x-era project moved to rpc 3 half-way: built from the scaffold, then broken here."""
    project, _, variable = await scaffold_project(
        stage, stage.workspace / "broken-service", METHODS[:1], journey
    )
    journey.step("break it: legacy decorators, removeComments, comments stripped, core 2.x declared")
    project.write("tsconfig.json", json.dumps(BROKEN_TSCONFIG, indent=2) + "\n")
    manifest = project.manifest() or {}
    manifest.setdefault("dependencies", {})["@imqueue/core"] = "^2.0.26"
    manifest.pop("overrides", None)
    project.save_manifest(manifest)
    install_step(project, journey)
    left = await follow_inspect_project(stage, project, journey)
    try:
        build_step(project, journey)
        start_service(stage, project, journey, variable)
    except JourneyFailed as failure:
        if not left:
            raise
        # The advice that said what to change is all applied, and the project still fails: acting
        # on a finding that only names a problem is knowledge the tool did not give.
        tsconfig = parse_jsonc(project.read("tsconfig.json"))
        manifest = project.manifest() or {}
        for finding in left:
            error = str(failure).rsplit("): ", 1)[-1][:160]
            journey.hand_fix(
                f"{finding['id']} names a problem and no change ({str(finding['message'])[:100]}), and "
                f"with the rest of the advice applied the project fails: {error}"
            )
            for edit in minimal_fix(finding):
                apply_edit(tsconfig if edit.file == "tsconfig.json" else manifest, edit)
        project.write("tsconfig.json", json.dumps(tsconfig, indent=2) + "\n")
        project.save_manifest(manifest)
        install_step(project, journey)
        await follow_inspect_project(stage, project, journey)
        build_step(project, journey)
        start_service(stage, project, journey, variable)
    stop_service(stage)
    journey.passed = True


async def follow_inspect_project(stage: Stage, project: Project, journey: Journey) -> list[dict[str, Any]]:
    """inspect_project, then every change its findings spell out, until none spells one out;
    returns the findings left (those that name a problem and no change)."""
    for round_number in range(1, REPAIR_ROUNDS + 1):
        journey.step(f"inspect_project, round {round_number}")
        answer = await stage.tools.call("inspect_project", {"path": str(project.root)})
        if answer.is_error:
            raise JourneyFailed(f"inspect_project failed: {answer.text[:300]}")
        findings = list(answer.data.get("findings") or [])
        journey.notes.append(
            f"inspect_project round {round_number}: "
            + (", ".join(str(f["id"]) for f in findings) or "no findings")
        )
        edits = [(finding, advice_edits(str(finding["message"]))) for finding in findings]
        if not any(found for _, found in edits):
            return findings
        journey.step(f"follow the advice, round {round_number}")
        tsconfig = parse_jsonc(project.read("tsconfig.json"))
        manifest = project.manifest() or {}
        reinstall = False
        for _, found in edits:
            for edit in found or []:
                apply_edit(tsconfig if edit.file == "tsconfig.json" else manifest, edit)
                reinstall = reinstall or edit.reinstall
        project.write("tsconfig.json", json.dumps(tsconfig, indent=2) + "\n")
        project.save_manifest(manifest)
        if reinstall:
            install_step(project, journey)
    raise JourneyFailed(f"inspect_project still asked for changes after {REPAIR_ROUNDS} rounds")


def minimal_fix(finding: dict[str, Any]) -> list[Edit]:
    """What the script knows to do for a finding whose words ask for nothing."""
    if finding["id"] == "other-major" and finding.get("package"):
        documented = re.search(r"describe (\d+\.\d+\.\d+)", str(finding["message"]))
        if documented:
            return [
                Edit("package.json", ("dependencies", str(finding["package"])), f"^{documented.group(1)}")
            ]
    raise JourneyFailed(f"no way to act on {finding['id']}: {finding['message'][:200]}")


# --- d: from a pasted error to the page that fixes it --------------------------------------------


@dataclass(frozen=True)
class ErrorCase:
    name: str
    pasted: str | None  # what the agent pastes into search_docs; None: what `printed` gets on the stack
    fixing: tuple[str, ...]  # canonical URLs (path, optionally #anchor) of a page that fixes it
    fix_words: tuple[str, ...]  # get_doc of the page must contain each: the fix itself
    why: str  # how the expected page was chosen, from reading ../shared/site
    printed: Callable[[Stage], str] | None = None  # runs the failure for real; returns its output


# What the agent pastes: each output whole, as the terminal printed it (search_docs searches its
# message lines; ranker/pasted.py leaves the frames, markers and locations out).
PASTED_ERESOLVE = "\n".join(
    (
        "npm error code ERESOLVE",
        "npm error ERESOLVE unable to resolve dependency tree",
        "npm error",
        "npm error While resolving: user-service@1.0.0",
        "npm error Found: typescript@7.0.2",
        "npm error node_modules/typescript",
        'npm error   dev typescript@"^7.0.2" from the root project',
        "npm error",
        "npm error Could not resolve dependency:",
        'npm error peer typescript@"5.0.x || 5.1.x || 5.2.x || 5.3.x || 5.4.x || 5.5.x || 5.6.x ||'
        ' 5.7.x || 5.8.x || 5.9.x" from typedoc@0.28.14',
        "npm error node_modules/typedoc",
        'npm error   dev typedoc@"^0.28.14" from the root project',
        "npm error",
        "npm error Fix the upstream dependency conflict, or retry",
        "npm error this command with --force or --legacy-peer-deps",
        "npm error to accept an incorrect (and potentially broken) dependency resolution.",
        "npm error",
        "npm error",
        "npm error For a full report see:",
        "npm error /root/.npm/_logs/2026-12-05T22_10_00_000Z-eresolve-report.txt",
        "npm error A complete log of this run can be found in:"
        " /root/.npm/_logs/2026-12-05T22_10_00_000Z-debug-0.log",
    )
)
PASTED_ECONNREFUSED = "\n".join(
    (
        "node:internal/process/promises:391",
        "    triggerUncaughtException(err, true /* fromPromise */);",
        "    ^",
        "",
        "Error: connect ECONNREFUSED 127.0.0.1:6379",
        "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16) {",
        "  errno: -111,",
        "  code: 'ECONNREFUSED',",
        "  syscall: 'connect',",
        "  address: '127.0.0.1',",
        "  port: 6379",
        "}",
        "",
        "Node.js v22.11.0",
    )
)
PASTED_TS1241 = "\n".join(
    (
        "src/UserService.ts:24:5 - error TS1241: Unable to resolve signature of method decorator"
        " when called as an expression.",
        "  The runtime will invoke the decorator with 2 arguments, but the decorator expects 3.",
        "",
        "24     @expose()",
        "       ~~~~~~~~~",
        "",
        "src/UserService.ts:35:5 - error TS1241: Unable to resolve signature of method decorator"
        " when called as an expression.",
        "  The runtime will invoke the decorator with 2 arguments, but the decorator expects 3.",
        "",
        "35     @expose()",
        "       ~~~~~~~~~",
        "",
        "",
        "Found 2 errors in the same file, starting at: src/UserService.ts:24",
    )
)
# A call nobody serves, as a caller on the real @imqueue/rpc makes it: rpc 3.x rejects with a plain
# object ({ code, message, stack, method, args }), which Node prints as it is when it goes uncaught.
REJECTED_CALL = """import { IMQClient } from '@imqueue/rpc';
class UserClient extends IMQClient {
    async getUser(id) { return await this.remoteCall(id, 'getUser'); }
}
const [host, port] = process.env.IMQ_REDIS.split(':');
const quiet = { log() {}, info() {}, warn() {}, error() {} };
const client = new UserClient({ host, port: Number(port), callTimeout: 1000, logger: quiet }, 'UserService');
await client.start();
await client.getUser('u1');
"""


def rejected_call(stage: Stage) -> str:
    """What Node prints when a call to a service nobody runs times out: run on the real runtime."""
    folder = stage.workspace / "rejected-call"
    folder.mkdir(exist_ok=True)
    (folder / "package.json").write_text('{"type": "module"}\n')
    (folder / "caller.js").write_text(REJECTED_CALL)
    if not (folder / "node_modules").exists():
        (folder / "node_modules").symlink_to(SERVICE_RUNTIME, target_is_directory=True)
    ran = subprocess.run(
        [str(NODE), "caller.js"],
        cwd=folder,
        env={**os.environ, "IMQ_REDIS": stage.broker},
        capture_output=True,
        text=True,
        timeout=60,
    )
    if "IMQ_RPC_CALL_TIMEOUT" not in ran.stderr:
        said = ran.stderr[-400:]
        raise JourneyFailed(f"the unserved call did not time out (exit {ran.returncode}): {said}")
    return ran.stderr


ERROR_CASES = (
    ErrorCase(
        "ERESOLVE",
        PASTED_ERESOLVE,
        ("/cli/creating-services/", "/cli/troubleshooting/"),
        ("--no-install",),
        "No page of the mirror names ERESOLVE. The install that fails is the one `imq service create` "
        "runs on the template; /cli/creating-services/ documents that step and --no-install to skip "
        "it and install with your own pins (the CLI troubleshooting page is the other place to look).",
    ),
    ErrorCase(
        "ECONNREFUSED",
        PASTED_ECONNREFUSED,
        ("/get-started/", "/api/#generic-options-service-and-client", "/cli/troubleshooting/"),
        ("Redis",),
        "6379 is Redis's default port: the service or client found no Redis. /get-started/ lists Redis "
        "6.2+ as a prerequisite and says to start it before the service; /api/'s generic options "
        "give host/port to reach one elsewhere.",
    ),
    ErrorCase(
        "TS1241",
        PASTED_TS1241,
        ("/api/#standard-decorators-and-tsconfig", "/api/#migration-from-2-x-to-3-x", "/api/rpc/latest/"),
        ("experimentalDecorators",),
        "TS1241 is tsc rejecting a decorator typed for the other decorator protocol: legacy "
        "experimentalDecorators on @imqueue 3.x, which uses standard ones. The migration guide's "
        "'Standard decorators and tsconfig' (/api/) gives the tsconfig; /api/rpc/latest/ states the "
        "protocol and the compiler options.",
    ),
    ErrorCase(
        "timeout",
        None,
        (
            "/blog/silent-failures-nodejs-message-queue/#a-late-reply-is-not-a-missing-reply",
            "/glossary/#calltimeout",
            "/api/rpc/latest/rpc.imqclientoptions.calltimeout/",
            "/api/rpc/latest/rpc.imqclient.remotecall/",
        ),
        ("callTimeout",),
        "IMQ_RPC_CALL_TIMEOUT is raised by the client when callTimeout elapses (rpc's IMQClient). "
        "'A late reply is not a missing reply' tells the two causes apart (callTimeout too tight or "
        "a saturated pool, against a service that is down) with the log line that shows which; the "
        "glossary's callTimeout and the callTimeout API page say what rejects and that it is unset "
        "by default; remoteCall documents the rejection.",
        rejected_call,
    ),
)
TOP = 6  # search_docs' default limit: what an agent sees without asking for more


def page_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"#{parts.fragment}" if parts.fragment else "")


def matches(url: str, expected: tuple[str, ...]) -> bool:
    got = page_of(url)
    return any(got == want or ("#" not in want and got.split("#")[0] == want) for want in expected)


async def journey_errors(stage: Stage, journey: Journey) -> None:
    for case in ERROR_CASES:
        if case.printed:
            journey.step(f"run: {case.name}")
        pasted = case.printed(stage) if case.printed else str(case.pasted)
        journey.step(f"search_docs: {case.name}")
        answer = await stage.tools.call("search_docs", {"query": pasted})
        if answer.is_error:
            raise JourneyFailed(f"search_docs failed on {case.name}: {answer.text[:300]}")
        urls = [str(hit["url"]) for hit in answer.data.get("results", [])][:TOP]
        rank = next((i + 1 for i, url in enumerate(urls) if matches(url, case.fixing)), None)
        # A diagnosis of the error's code names the pages with the fix before any hit: read first.
        named = [str(url) for found in answer.data.get("diagnosis") or [] for url in found.get("urls", [])]
        diagnosed = next((url for url in named if matches(url, case.fixing)), None)
        if diagnosed is not None:
            journey.notes.append(f"{case.name}: the diagnosis names the fixing page ({page_of(diagnosed)})")
            url = diagnosed
        elif rank is not None:
            journey.notes.append(f"{case.name}: fixing page at #{rank}")
            url = urls[rank - 1]
        else:
            journey.notes.append(f"{case.name}: not in top {TOP}")
            seen = ", ".join(page_of(url) for url in urls[:3])
            journey.hand_fix(f"{case.name}: no page that fixes it in the top {TOP} ({seen})")
            url = "https://imqueue.org" + case.fixing[0]
        journey.step(f"get_doc: {case.name}")
        page = await stage.tools.call("get_doc", {"url": url})
        if page.is_error:
            raise JourneyFailed(f"get_doc {url} failed: {page.text[:300]}")
        lacking = [word for word in case.fix_words if word not in page.text]
        if lacking:
            raise JourneyFailed(f"{url} does not show the fix ({', '.join(lacking)})")
    journey.passed = True


JOURNEYS: dict[str, tuple[str, Callable[[Stage, Journey], Awaitable[None]]]] = {
    "a": ("service + client from nothing, both calls answered", journey_service),
    "b": ("add a method, regenerate the client", journey_add),
    "c": ("repair a broken project by inspect_project's advice", journey_repair),
    "d": ("pasted error -> the page that fixes it", journey_errors),
    "e": ("two services, one calling the other, written by the tools", journey_two_services),
}


# --- running them ---------------------------------------------------------------------------------


def missing_stack() -> str | None:
    for what, present in (
        ("redis-server", shutil.which("redis-server") is not None),
        ("npm", shutil.which("npm") is not None),
        (f"imq at {IMQ}", IMQ.is_file()),
        (f"Node 22 at {NODE}", NODE.is_file()),
        (f"the 3.x runtime at {SERVICE_RUNTIME}", (SERVICE_RUNTIME / "@imqueue" / "rpc").is_dir()),
    ):
        if not present:
            return f"{what} is missing: run {INSTALL} and bash .ci/install-framework.sh"
    return None


def server_environment(workspace: Path) -> dict[str, str]:
    env = environment(workspace / "mcp-home")
    env.update(
        HOME=str(workspace / "home"),
        IMQUEUE_MCP_IMQ=str(IMQ),
        PATH=os.pathsep.join([str(NODE_BIN), str(Path(sys.executable).parent), env.get("PATH", "")]),
        TMPDIR=str(workspace / "tmp"),
    )
    env.pop("IMQ_REDIS", None)  # the broker reaches the tools only through their arguments
    return env


async def run(selected: list[str], workspace: Path) -> list[Journey]:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    for folder in ("home", "tmp", "mcp-home", "npm-cache"):
        (workspace / folder).mkdir(parents=True, exist_ok=True)
    port = free_port()
    while port == 6379:
        port = free_port()
    journeys: list[Journey] = []
    with site_origins() as origins, redis_server(port, workspace / "redis"):
        parameters = StdioServerParameters(
            command=sys.executable,
            args=["-m", "imqueue_mcp.server", *origin_args(origins)],
            env=server_environment(workspace),
            cwd=workspace,
        )
        async with AsyncExitStack() as stack:
            client = await stack.enter_async_context(Client(parameters, mode="legacy"))
            tools = Tools(client, (await client.list_tools()).tools)
            stage = Stage(workspace, f"127.0.0.1:{port}", tools)
            try:
                for key in selected:
                    title, body = JOURNEYS[key]
                    journey = Journey(key, title)
                    started = time.perf_counter()
                    try:
                        await asyncio.wait_for(body(stage, journey), 300)
                    except (JourneyFailed, subprocess.TimeoutExpired, TimeoutError) as error:
                        journey.error = str(error) or type(error).__name__
                    journey.close_step()
                    journey.seconds = time.perf_counter() - started
                    journeys.append(journey)
            finally:
                stop_service(stage)
    return journeys


def table(journeys: list[Journey], host: dict[str, Any]) -> str:
    lines = [
        "Agent journeys (real stdio server, imq 5.2.2, @imqueue/rpc 3.7.2 + core 3.4.2, Node 22, "
        "Redis on a non-default port)",
        f"machine: {host['platform']}, {host['cpus']} CPUs, Python {host['python']}",
        "",
        f"{'journey':<58} {'steps':>5} {'hand fixes':>10} {'result':>6} {'seconds':>8}",
    ]
    for journey in journeys:
        label = f"{journey.name}  {journey.title}"
        result = "pass" if journey.passed else "FAIL"
        counts = f"{len(journey.steps):>5} {len(journey.hand_fixes):>10}"
        lines.append(f"{label:<58} {counts} {result:>6} {journey.seconds:>8.1f}")
        if journey.step_seconds:
            slowest = max(range(len(journey.step_seconds)), key=journey.step_seconds.__getitem__)
            lines.append(
                f"      slowest step: {journey.steps[slowest]} ({journey.step_seconds[slowest]:.1f} s)"
            )
        for fix in journey.hand_fixes:
            lines.append(f"      hand fix at '{fix.step}': {fix.reason}")
        if journey.error:
            lines.append(f"      failed: {journey.error[:300]}")
        for note in journey.notes:
            lines.append(f"      {note}")
    lines.append("")
    lines.append(
        "Not a hand fix: installing dependencies, a stand-in for `npm install` (the registry here has "
        "no @imqueue 3.x; node_modules is laid out from the runtime .ci/install-imq.sh built, as "
        "each package.json asks)."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.journeys", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--only", default="a,b,c,d,e", help="journeys to run, e.g. 'a,b' (b needs a)")
    parser.add_argument("--keep", action="store_true", help="keep the workspace folder and say where")
    args = parser.parse_args(argv)
    selected = [key.strip() for key in args.only.split(",") if key.strip()]
    unknown = [key for key in selected if key not in JOURNEYS]
    if unknown:
        parser.error(f"unknown journey {', '.join(unknown)}: pick from {', '.join(JOURNEYS)}")
    if "b" in selected and "a" not in selected:
        parser.error("journey b changes the service journey a builds: run it with a (--only a,b)")
    problem = missing_stack()
    if problem:
        print(f"benchmarks.journeys: {problem}", file=sys.stderr)
        return 2
    workspace = Path(tempfile.mkdtemp(prefix="imq-journeys-"))
    started = time.perf_counter()
    try:
        journeys = asyncio.run(run(selected, workspace))
    finally:
        if args.keep:
            print(f"workspace kept at {workspace}", file=sys.stderr)
        else:
            shutil.rmtree(workspace, ignore_errors=True)
    host = machine()
    print(table(journeys, host))
    record = {
        "benchmark": "journeys",
        "machine": host,
        "seconds": round(time.perf_counter() - started, 1),
        "hand_fixes": sum(len(journey.hand_fixes) for journey in journeys),
        "passed": sum(journey.passed for journey in journeys),
        "journeys": [journey.to_dict() for journey in journeys],
        "install": "stand-in for npm install from the prebuilt 3.x runtime; not a hand fix",
    }
    print(json.dumps(record))
    return 0 if all(journey.passed for journey in journeys) else 1


if __name__ == "__main__":
    sys.exit(main())

"""The one thing the server claims for @imqueue 1.x (issue 18): on a project that has 1.x
installed, inspect_project advises what 1.x needs, and following that advice gives a service
that compiles and runs there.

A user on 1.x who copies the tsconfig the docs show for 3.x (standard decorators) gets a build
that compiles and a service that dies at start-up, inside 1.x's @expose(). The project here is
that: scaffold_service's service class and tsconfig, a package.json on @imqueue/rpc 1.17.0, and
the registry's 1.x runtime (tests/framework1, installed by .ci/install-framework.sh). The test
applies exactly the settings inspect_project's finding names, compiles with tsc, starts the
service on a Redis at a free port and reads its self-description over the queue.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, require_external, server_environment, stdio_connection

pytestmark = pytest.mark.slow  # a long end-to-end run: CI, or IMQUEUE_MCP_SLOW=1 (conftest.py)

RUNTIME = REPO / "tests" / "framework1"
NODE_MODULES = RUNTIME / "node_modules"
TSC = NODE_MODULES / "typescript" / "bin" / "tsc"
INSTALL = "bash .ci/install-framework.sh (redis-server; npm ci in tests/framework1)"
SERVICE = "NotesService"
METHODS = [
    {
        "name": "addNote",
        "params": [
            {"name": "title", "type": "string"},
            {"name": "tags", "type": "string[]", "optional": True},
        ],
        "returns": "number",
    }
]


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    require_external(shutil.which("redis-server") is not None, "redis-server", INSTALL)
    require_external(shutil.which("node") is not None, "Node.js (node)", "apt-get install -y nodejs")
    rpc = NODE_MODULES / "@imqueue" / "rpc" / "package.json"
    version = json.loads(rpc.read_text())["version"] if rpc.is_file() else None
    require_external(version == "1.17.0" and TSC.is_file(), "@imqueue/rpc 1.17.0", INSTALL)
    root = Path(tempfile.mkdtemp(prefix="imq-framework-1x-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def project(workspace: Path, tmp_path: Path) -> Path:
    """scaffold_service's class and tsconfig (3.x settings) in a project that runs @imqueue 1.x."""
    home = tmp_path / "mcp-home"
    home.mkdir()
    connection = stdio_connection([], server_environment(home), home, "legacy")
    try:
        result = connection.call("scaffold_service", {"name": "notes", "methods": METHODS})
    finally:
        connection.close()
    assert not result.is_error, result.content
    root = tmp_path / "legacy-project"
    for file in result.structured_content["files"]:
        if file["path"] in ("tsconfig.json", f"src/{SERVICE}.ts"):
            (root / file["path"]).parent.mkdir(parents=True, exist_ok=True)
            (root / file["path"]).write_text(file["content"], encoding="utf-8")
    manifest = {"name": "legacy-notes", "dependencies": {"@imqueue/rpc": "1.17.0", "@imqueue/core": "2.0.26"}}
    (root / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    (root / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    shutil.copy(RUNTIME / "start-and-describe.cjs", root / "start-and-describe.cjs")
    return root


def inspect_project(project: Path) -> dict[str, Any]:
    home = project.parent / "inspect-home"
    home.mkdir(exist_ok=True)
    connection = stdio_connection([], server_environment(home), home, "legacy")
    try:
        result = connection.call("inspect_project", {"path": str(project)})
    finally:
        connection.close()
    assert not result.is_error, result.content
    return dict(result.structured_content)


def compile_and_start(project: Path, redis_port: int) -> subprocess.CompletedProcess[str]:
    compiled = subprocess.run(
        ["node", str(TSC), "-p", str(project)], capture_output=True, text=True, timeout=120
    )
    assert compiled.returncode == 0, f"tsc failed:\n{compiled.stdout}{compiled.stderr}"
    return subprocess.run(
        ["node", "start-and-describe.cjs", f"dist/{SERVICE}.js", SERVICE, str(redis_port)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )


def apply_settings(project: Path, message: str) -> list[str]:
    """Sets every `NAME: true` the finding's message says to set, and nothing else."""
    names = re.findall(r"\b([A-Za-z]+): true\b", message.split("(")[0])
    text = (project / "tsconfig.json").read_text(encoding="utf-8")
    text = re.sub(r"\s*//[^\n]*", "", text)  # the scaffold's tsconfig carries comments
    config = json.loads(text)
    for name in names:
        config["compilerOptions"][name] = True
    (project / "tsconfig.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return names


def test_the_3x_tsconfig_on_1x_compiles_but_the_service_dies_at_start(project: Path, redis_port: int) -> None:
    started = compile_and_start(project, redis_port)

    assert started.returncode != 0
    assert "expose" in started.stderr  # 1.x's @expose() cannot take a standard decorator call


def test_following_inspect_projects_advice_on_1x_gives_a_service_that_runs(
    project: Path, redis_port: int
) -> None:
    report = inspect_project(project)

    findings = {finding["id"]: finding for finding in report["findings"]}
    assert "legacy-decorators-off" in findings, report["findings"]
    assert not {"legacy-decorators", "decorators-lib", "esm"} & set(findings)  # the 3.x advice
    applied = apply_settings(project, findings["legacy-decorators-off"]["message"])
    assert sorted(applied) == ["emitDecoratorMetadata", "experimentalDecorators"]

    started = compile_and_start(project, redis_port)

    assert started.returncode == 0, started.stderr
    published = json.loads(started.stdout)["service"]["methods"]["addNote"]
    assert [(arg["name"], arg["tsType"], arg["isOptional"]) for arg in published["arguments"]] == [
        ("title", "string", False),
        ("tags", "string[]", True),
    ]
    assert "legacy-decorators-off" not in {f["id"] for f in inspect_project(project)["findings"]}

"""create_service: a project it creates installs. imq's default template pins nothing ("*"),
so npm takes TypeScript 7, outside typedoc's peer range (ERESOLVE), and may install
@imqueue/core twice. The result names the unpinned dependencies and the fix; pin=true writes it.

The template is the real one (../shared/vendor/imqueue-templates.tar.gz); the end-to-end tests
run the real imq (built by .ci/install-imq.sh) with --no-install, so nothing reaches a registry.
"""

from __future__ import annotations

import asyncio
import json
import os
import tarfile
from pathlib import Path

import pytest

from imqueue_mcp.server.imq import bridge
from imqueue_mcp.server.imq.runner import ImqRunner
from imqueue_mcp.server.imq.template_pins import (
    apply_pins,
    describe_unpinned,
    pins_for,
    read_manifest,
    template_folder,
    unpinned,
)

from conftest import REPO

TEMPLATES = REPO.parent / "shared" / "vendor" / "imqueue-templates.tar.gz"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """imq's default template, unpacked as imq keeps it (placeholders and all)."""
    if not TEMPLATES.is_file():
        pytest.skip(f"the vendored templates are not at {TEMPLATES}")
    folder = tmp_path_factory.mktemp("templates")
    with tarfile.open(TEMPLATES) as archive:
        archive.extractall(folder, filter="data")
    return folder / "imqueue-templates" / "default"


def test_the_template_is_read_through_its_placeholders_and_pins_nothing(template: Path) -> None:
    manifest = read_manifest(template / "package.json")
    assert manifest is not None  # "%SERVICE_REPO%SERVICE_BUGS%SERVICE_HOMEPAGE" sits outside strings
    loose = unpinned(manifest)
    assert {"typescript", "typedoc", "@imqueue/rpc", "@imqueue/core", "@types/node"} <= set(loose)
    pins, overrides = pins_for(manifest)
    assert pins == {"@types/node": "^22.12.0", "typescript": "^5.9.3"}
    assert overrides == {"@imqueue/core": "$@imqueue/core"}


def test_the_report_says_why_npm_fails_and_gives_both_fixes(template: Path) -> None:
    manifest = read_manifest(template / "package.json")
    assert manifest is not None
    report = describe_unpinned(manifest, "The template")
    assert "ERESOLVE" in report and "typedoc's peer range" in report and "typescript" in report
    assert "pin=true" in report
    assert (
        "npm pkg set 'dependencies.@types/node=^22.12.0' 'dependencies.typescript=^5.9.3' "
        "'overrides.@imqueue/core=$@imqueue/core'"
    ) in report


def test_pins_are_written_into_a_created_package_json_and_nothing_else_changes(tmp_path: Path) -> None:
    created = tmp_path / "package.json"
    created.write_text(
        json.dumps(
            {
                "name": "probe",
                "dependencies": {"@imqueue/rpc": "*", "@imqueue/core": "*", "typescript": "*", "dotenv": "*"},
                "devDependencies": {"typedoc": "*", "@types/node": "^20.0.0"},
            }
        )
    )
    applied = apply_pins(created)
    written = json.loads(created.read_text())
    assert applied == ({"typescript": "^5.9.3"}, {"@imqueue/core": "$@imqueue/core"})
    assert written["dependencies"] == {
        "@imqueue/rpc": "*",
        "@imqueue/core": "*",
        "typescript": "^5.9.3",
        "dotenv": "*",
    }
    assert written["devDependencies"] == {"typedoc": "*", "@types/node": "^20.0.0"}  # a pin already there
    assert written["overrides"] == {"@imqueue/core": "$@imqueue/core"}
    assert apply_pins(created) == ({}, {})  # a second run has nothing left to do


def test_the_template_is_found_where_imq_looks_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IMQ_CLI_HOME", str(tmp_path / "home"))
    assert template_folder(["-t", "/opt/tpl/default"], tmp_path) == Path("/opt/tpl/default")
    assert template_folder(["--template=./mine"], tmp_path) == tmp_path / "mine"
    assert template_folder(["-e", "a@b.c"], tmp_path) == tmp_path / "home" / ".imq" / "templates" / "default"
    assert template_folder(["-t", "lite"], tmp_path) == tmp_path / "home" / ".imq" / "templates" / "lite"


# --- the real imq -------------------------------------------------------------------------


@pytest.fixture
def real_imq(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ImqRunner:
    from imq_real import IMQ, NODE_BIN, require_real_imq

    require_real_imq()
    monkeypatch.setenv("IMQ_CLI_HOME", str(tmp_path / "imq-home"))
    monkeypatch.setenv("PATH", os.pathsep.join([str(NODE_BIN), os.environ["PATH"]]))
    (tmp_path / "work").mkdir()
    return ImqRunner(imq_path=str(IMQ), working_directory=str(tmp_path / "work"))


def creation_flags(template: Path) -> list[str]:
    return ["-e", "dev@example.com", "-a", "A", "--no-use-git", "--no-install", "-t", str(template), "-y"]


@pytest.mark.slow
def test_a_dry_run_on_the_real_template_reports_its_unpinned_dependencies(
    real_imq: ImqRunner, template: Path
) -> None:
    result = asyncio.run(bridge.create_service("probe", "probe", creation_flags(template), runner=real_imq))
    assert not result.is_error, result.text
    assert f"The template {template} pins none of these" in result.text and "ERESOLVE" in result.text
    assert not (Path(real_imq.current_directory()) / "probe").exists()


@pytest.mark.slow
def test_apply_with_pin_writes_the_pins_into_the_created_project(real_imq: ImqRunner, template: Path) -> None:
    result = asyncio.run(
        bridge.create_service(
            "probe", "probe", creation_flags(template), apply=True, pin=True, runner=real_imq
        )
    )
    assert not result.is_error, result.text
    created = json.loads((real_imq.current_directory() / "probe" / "package.json").read_text())
    sections = {**created.get("dependencies", {}), **created.get("devDependencies", {})}
    assert sections["typescript"] == "^5.9.3" and sections["@types/node"] == "^22.12.0"
    assert created["overrides"] == {"@imqueue/core": "$@imqueue/core"}
    assert "Pinned in package.json (pin=true)" in result.text


@pytest.mark.slow
def test_apply_without_pin_reports_the_created_package_json_and_leaves_it(
    real_imq: ImqRunner, template: Path
) -> None:
    result = asyncio.run(
        bridge.create_service("plain", "plain", creation_flags(template), apply=True, runner=real_imq)
    )
    assert not result.is_error, result.text
    created = json.loads((real_imq.current_directory() / "plain" / "package.json").read_text())
    assert {**created["dependencies"], **created["devDependencies"]}["typescript"] == "*"
    assert "package.json pins none of these" in result.text and "npm pkg set" in result.text

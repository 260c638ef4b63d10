"""fleet start says what it runs in each service: read from the services' own files.

On imq's real default template (../shared/vendor/imqueue-templates.tar.gz, its placeholders
filled as imq fills them) and on the package.json scaffold_service returns. The bridge-level
test runs the imq stand-in (a start that needs no Redis), since what is checked is the wording.
"""

from __future__ import annotations

import asyncio
import json
import re
import tarfile
from pathlib import Path

import pytest

from imqueue_mcp.server.imq import bridge
from imqueue_mcp.server.imq.fleet_start import PRODUCTION_START, describe_start
from imqueue_mcp.server.imq.runner import ImqRunner
from imqueue_mcp.server.scaffold.templates import scaffold_service

from conftest import IMQ_STANDIN_DIR, REPO

TEMPLATES = REPO.parent / "shared" / "vendor" / "imqueue-templates.tar.gz"


def template_service(folder: Path) -> Path:
    """imq's default template unpacked into `folder`, its %PLACEHOLDERS filled."""
    if not TEMPLATES.is_file():
        pytest.skip(f"the vendored templates are not at {TEMPLATES}")
    with tarfile.open(TEMPLATES) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith("imqueue-templates/default/")]
        for member in members:
            member.name = member.name.removeprefix("imqueue-templates/default/")
        archive.extractall(folder, members=[m for m in members if m.name], filter="data")
    for path in (folder / "package.json", folder / "nodemon.json"):
        text = re.sub(r"%SERVICE_REPO%SERVICE_BUGS%SERVICE_HOMEPAGE", "", path.read_text())
        path.write_text(re.sub(r"%[A-Z_]+", "x", text))
    json.loads((folder / "package.json").read_text())  # filled in: valid JSON, as imq writes it
    return folder


def scaffold_folder(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for file in scaffold_service("billing")["files"]:
        if file["path"] == "package.json":
            (folder / "package.json").write_text(file["content"])
    return folder


def test_the_template_dev_script_is_said_to_delete_compiled_files_and_restart_on_src_writes(
    tmp_path: Path,
) -> None:
    template_service(tmp_path / "user")
    text = describe_start(tmp_path, None)
    assert "fleet start runs `npm run dev`" in text
    (line,) = [line for line in text.splitlines() if line.startswith("- user:")]
    assert "DELETES the compiled .js" in line
    assert "nodemon watches src, index.ts, config.ts and RESTARTS the service" in line
    assert f"production start: {PRODUCTION_START}" in line


def test_a_scaffolded_service_starts_once_without_a_watcher(tmp_path: Path) -> None:
    scaffold_folder(tmp_path / "billing")
    (line,) = [line for line in describe_start(tmp_path, None).splitlines() if line.startswith("- billing:")]
    assert "npm run dev = `tsc && node dist/index.js`" in line
    assert "DELETES" not in line and "nodemon" not in line


def test_a_service_without_a_dev_script_is_said_to_fail_under_imq_ctl(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "package.json").write_text('{"name": "plain", "scripts": {"start": "node ."}}')
    assert f"has no dev script, so imq ctl start fails for it; start it with {PRODUCTION_START}" in (
        describe_start(tmp_path, None)
    )


def test_only_the_named_services_are_described(tmp_path: Path) -> None:
    template_service(tmp_path / "user")
    scaffold_folder(tmp_path / "billing")
    text = describe_start(tmp_path, ["billing"])
    assert "- billing:" in text and "- user:" not in text


def test_fleet_start_and_restart_carry_the_description_and_status_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IMQ_CLI_HOME", str(tmp_path / "imq-home"))  # the stand-in's state, not ~/.imq
    template_service(tmp_path / "user")
    runner = ImqRunner(imq_path=str(IMQ_STANDIN_DIR / "imq"), working_directory=str(tmp_path))
    started = asyncio.run(bridge.fleet("start", runner=runner))
    assert not started.is_error, started.text
    assert "DELETES the compiled" in started.text and PRODUCTION_START in started.text
    status = asyncio.run(bridge.fleet("status", runner=runner))
    assert "npm run dev" not in status.text
    asyncio.run(bridge.fleet("stop", runner=runner))

"""The distribution installs one import name, imqueue_mcp, with every subpackage and py.typed."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("ranker", "build_index", "server")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (built,) = out.glob("imqueue_mcp-*.whl")
    return built


def test_the_wheel_holds_only_imqueue_mcp_and_its_metadata(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert {top for top in tops if not top.endswith(".dist-info")} == {"imqueue_mcp"}
    assert "imqueue_mcp/py.typed" in names


def test_every_source_package_is_in_the_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for layer in LAYERS:
        for init in sorted((REPO / layer).rglob("__init__.py")):
            relative = init.relative_to(REPO).as_posix()
            assert f"imqueue_mcp/{relative}" in names, (
                f"{relative} is missing from [tool.setuptools] packages"
            )
        for module in sorted((REPO / layer).rglob("*.py")):
            relative = module.relative_to(REPO).as_posix()
            assert f"imqueue_mcp/{relative}" in names


def test_the_wheel_ships_no_tests_benchmarks_or_fixtures(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.split("/")[1:2] in (["tests"], ["benchmarks"], ["fixtures"])]


@pytest.mark.parametrize(
    "command",
    [["-m", "imqueue_mcp.server", "--help"], ["-m", "imqueue_mcp.build_index.search_cli", "--help"]],
)
def test_the_commands_run_from_any_directory(tmp_path: Path, command: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, *command], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout


@pytest.mark.parametrize("script", ["imqueue-mcp", "imq-search", "imq-build-index"])
def test_the_console_scripts_run_from_any_directory(tmp_path: Path, script: str) -> None:
    path = Path(sys.executable).parent / script
    if not path.is_file():
        pytest.skip(f"{script} is not installed beside this interpreter (pip install -e . installs it)")
    done = subprocess.run([str(path), "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert script in done.stdout

"""The distribution as released: `python -m build` makes an sdist and a wheel that pass `twine check`;
the wheel installs one import name, imqueue_mcp, with every subpackage and py.typed; and installed
into a clean venv, the way local_install_guide tells a user to, it serves MCP over stdio."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from conftest import SITE, McpConnection

REPO = Path(__file__).resolve().parents[1]
LAYERS = ("ranker", "docsource", "build_index", "server")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder holding the sdist and the wheel (built from that sdist), as `python -m build` makes them."""
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def wheel(dist: Path) -> Path:
    (built,) = dist.glob("imqueue_mcp-*.whl")
    return built


@pytest.fixture(scope="module")
def sdist(dist: Path) -> Path:
    (built,) = dist.glob("imqueue_mcp-*.tar.gz")
    return built


@pytest.mark.slow  # over 3.5 s in the README's fast run (docs/testing.md): CI runs it
def test_twine_passes_the_sdist_and_the_wheel(wheel: Path, sdist: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2


def test_the_sdist_holds_the_source_the_wheel_is_built_from(sdist: Path) -> None:
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "LICENSE", "py.typed", "__init__.py"} <= names
    for layer in LAYERS:
        for module in sorted((REPO / layer).rglob("*.py")):
            assert module.relative_to(REPO).as_posix() in names


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


def test_the_import_name_folder_links_every_layer_and_nothing_else() -> None:
    """imqueue_mcp/ is the import name as static tools and editors see it from a plain clone: one
    relative link per layer (and the package's __init__.py and py.typed), so a file added to a
    layer is seen at once and a new layer without its link is caught here."""
    folder = REPO / "imqueue_mcp"
    expected = {*LAYERS, "__init__.py", "py.typed"}
    assert {entry.name for entry in folder.iterdir() if entry.name != "__pycache__"} == expected
    for name in expected:
        link = folder / name
        assert link.is_symlink(), f"imqueue_mcp/{name} must be a link to ../{name}"
        assert str(link.readlink()) == f"../{name}"
        assert link.resolve() == (REPO / name).resolve()


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


@pytest.mark.slow
def test_the_wheel_installed_in_a_clean_venv_serves_mcp_over_stdio(wheel: Path, tmp_path: Path) -> None:
    """local_install_guide's steps on the built wheel: a fresh venv, `pip install` of the wheel (its
    dependencies from the package index), a snapshot from the site mirror, then the installed
    `imqueue-mcp` answers initialize and a search through the SDK's stdio client, from another folder."""
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    venv = tmp_path / "venv"
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}

    def run(*command: str | Path, timeout: float = 300) -> None:
        done = subprocess.run(
            [str(part) for part in command],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"{command}: {done.stderr[-3000:]}"

    run(sys.executable, "-m", "venv", venv)
    # PIP_CACHE_DIR stays the machine's own (warm) cache: only $HOME is the temporary one.
    run(venv / "bin" / "pip", "install", "-q", wheel, timeout=600)
    snapshot = tmp_path / "snapshot.msgpack"
    run(venv / "bin" / "imq-build-index", "--from", SITE, "--pages", "--out", snapshot, "--quiet")

    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(
        command=str(venv / "bin" / "imqueue-mcp"),
        args=["--offline", "--snapshot", str(snapshot)],
        env={**env, "XDG_CACHE_HOME": str(home / "cache")},
        cwd=home,
    )
    connection = McpConnection(server, "legacy")
    try:
        assert connection.client.server_info.name  # initialize answered
        tools = {tool.name for tool in connection.tools()}
        found = connection.call("search_docs", {"query": "expose decorator"})
    finally:
        connection.close()
    assert {"search_docs", "cli_status"} <= tools  # the local server, with its CLI bridge
    assert found.is_error is False
    assert found.structured_content["results"][0]["url"].startswith("https://imqueue.org/")


def test_every_declared_dependency_is_imported_by_the_package() -> None:
    """A runtime dependency nothing loads is a defect. Imports are read from the source (ast), plus
    modules loaded by name (find_spec, import_module: uvloop is picked by name for uvicorn), and
    mapped to their distributions by the installed metadata, since a distribution's import name
    need not be its own (tree-sitter is imported as tree_sitter)."""

    def canonical(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    declared = {canonical(re.split(r"[<>=!~;\[ ]", line, maxsplit=1)[0]) for line in project["dependencies"]}
    modules: set[str] = set()
    for layer in LAYERS:
        for path in (REPO / layer).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Import):
                    modules |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    modules.add(node.module.split(".")[0])
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("find_spec", "import_module")
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    modules.add(node.args[0].value.split(".")[0])
    distributions = importlib.metadata.packages_distributions()
    imported = {canonical(dist) for module in modules for dist in distributions.get(module, [])}
    assert declared - imported == set(), "declared in pyproject.toml, loaded by nothing in the package"
    assert "tree-sitter" in imported  # the import name differs from the distribution's: mapped, not guessed

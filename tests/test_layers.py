"""The packages stand in layers, read from the source with ast (nothing is imported or run).

    ranker        imports nothing of the project, and nothing that reads or writes the world
    docsource     reading the sites' feeds, section maps, snapshots and pages: may import the ranker
    build_index   the builder's commands: may import docsource and the ranker; never the server
    server        may import docsource and the ranker; never build_index (the live read path
                  never imports the builder). Inside it, rooms:
                    domain packages (catalogue < docs, project, scaffold < imq) never import the
                    MCP SDK, the adapter, hosting, or a package beside or above their own
                    the adapter (server/mcp) and hosting (server/hosting) never import each other;
                    server/serve.py, the composition root, hands one to the other

An import of the project's own code sits at the top of its module (or under TYPE_CHECKING),
never inside a function, where it could hide a cycle; and the module graph has no cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = "imqueue_mcp"
LAYERS = {"ranker": 0, "docsource": 1, "build_index": 2, "server": 2}
# Who may import whom, as layers: build_index and server stand side by side over docsource.
MAY_IMPORT = {
    "ranker": {"ranker"},
    "docsource": {"ranker", "docsource"},
    "build_index": {"ranker", "docsource", "build_index"},
    "server": {"ranker", "docsource", "server"},
}
# What a pure ranker may not touch: files, processes, sockets, the clock, the network.
RANKER_FORBIDDEN = {
    "os",
    "io",
    "pathlib",
    "shutil",
    "tempfile",
    "socket",
    "subprocess",
    "time",
    "datetime",
    "asyncio",
    "threading",
    "urllib",
    "http",
    "httpx",
    "msgpack",
    "logging",
    "sys",
    "mcp",
}
RANKER_FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "__import__"}
DOMAIN_SUBPACKAGES = ("docs", "catalogue", "scaffold", "imq", "project")
# The domain packages' own order: a package imports only those below it (and the server's base
# modules), never one beside it or above it.
DOMAIN_RANK = {"catalogue": 0, "docs": 1, "project": 1, "scaffold": 1, "imq": 2}
SERVER_BASE = {"config", "errors", "progress", "user_files"}  # what every room of the server may import
HOSTING_SUBPACKAGE = "hosting"
COMPOSITION_ROOT = f"{PACKAGE}.server.serve"
# An entry point may defer its transport so that --help and a configuration error answer before
# the MCP SDK (half a second) is imported; the composition root imports hosting's modules in the
# transport that uses them, so a stdio server never loads the HTTP stack (its metrics, limits and
# workers: ~50 ms of every start). That is about start-up, not about hiding a cycle.
DEFERRED_FOR_START_UP = {"server/__main__.py", "server/serve.py"}
ADAPTER_SUBPACKAGE = "mcp"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def source_modules() -> Iterator[Path]:
    for layer in LAYERS:
        yield from sorted((REPO / layer).rglob("*.py"))


def resolve(node: ast.ImportFrom, importer: str, is_package: bool) -> list[str]:
    """The absolute module names an ImportFrom names (each imported name may be a submodule)."""
    if node.level:
        base = importer.split(".")
        base = base if is_package else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        stem = ".".join(base + ([node.module] if node.module else []))
    else:
        stem = node.module or ""
    return [stem] + [f"{stem}.{alias.name}" for alias in node.names]


def imports_of(path: Path) -> Iterator[tuple[str, ast.Import | ast.ImportFrom, bool]]:
    """(module named, node, at module level) for every import in the file."""
    tree = ast.parse(path.read_text("utf-8"))
    importer = module_name(path)
    is_package = path.name == "__init__.py"
    top_level: set[int] = set()
    for statement in tree.body:
        top_level.add(id(statement))
        if isinstance(statement, ast.If):  # `if TYPE_CHECKING:` blocks count as module level
            top_level.update(id(child) for child in statement.body)
        if isinstance(statement, ast.Try):
            top_level.update(id(child) for child in statement.body + statement.orelse)
            for handler in statement.handlers:
                top_level.update(id(child) for child in handler.body)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node, id(node) in top_level
        elif isinstance(node, ast.ImportFrom):
            for name in resolve(node, importer, is_package):
                yield name, node, id(node) in top_level


def project_modules() -> set[str]:
    return {module_name(path) for path in source_modules()}


def layer_of(module: str) -> str:
    return module.split(".")[1]


def project_edges() -> dict[str, set[str]]:
    known = project_modules()
    edges: dict[str, set[str]] = {}
    for path in source_modules():
        importer = module_name(path)
        targets = edges.setdefault(importer, set())
        for name, _node, _top in imports_of(path):
            if name in known and name != importer:
                targets.add(name)
    return edges


def test_every_package_folder_is_a_layer_we_know() -> None:
    assert {module_name(p).split(".")[1] for p in source_modules()} == set(LAYERS)


@pytest.mark.parametrize("layer", list(LAYERS))
def test_no_package_imports_a_layer_above_or_beside_it(layer: str) -> None:
    against = []
    for importer, targets in project_edges().items():
        if layer_of(importer) != layer:
            continue
        against += [f"{importer} -> {t}" for t in targets if layer_of(t) not in MAY_IMPORT[layer]]
    assert against == [], "imports against the layers ranker < docsource < (build_index | server)"


def test_the_server_never_imports_the_builder() -> None:
    """Not even under TYPE_CHECKING or in a function: the live read path stays off build_index."""
    found = []
    for path in sorted((REPO / "server").rglob("*.py")):
        for name, node, _top in imports_of(path):
            if name.startswith(f"{PACKAGE}.build_index") or name == f"{PACKAGE}.build_index":
                found.append(f"{path.relative_to(REPO)}:{node.lineno} imports {name}")
    assert found == []


def server_room(module: str) -> str:
    """`imqueue_mcp.server.docs.read` -> "docs"; a module of the server's own folder -> its name."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else ""


def test_no_domain_package_imports_one_beside_or_above_it() -> None:
    climbing = []
    for importer, targets in project_edges().items():
        if layer_of(importer) != "server" or server_room(importer) not in DOMAIN_RANK:
            continue
        room = server_room(importer)
        for target in targets:
            other = server_room(target)
            if layer_of(target) != "server" or other == room or other in SERVER_BASE or other == "":
                continue
            if other not in DOMAIN_RANK or DOMAIN_RANK[other] >= DOMAIN_RANK[room]:
                climbing.append(f"{importer} -> {target}")
    assert climbing == [], f"domain packages stand in the order {DOMAIN_RANK}, over {sorted(SERVER_BASE)}"


def test_the_adapter_and_hosting_never_import_each_other() -> None:
    crossing = []
    pairs = {ADAPTER_SUBPACKAGE: HOSTING_SUBPACKAGE, HOSTING_SUBPACKAGE: ADAPTER_SUBPACKAGE}
    for importer, targets in project_edges().items():
        room = server_room(importer)
        if layer_of(importer) == "server" and room in pairs:
            crossing += [f"{importer} -> {t}" for t in targets if server_room(t) == pairs[room]]
    assert crossing == [], "only server/serve.py, the composition root, imports both"
    both = [
        importer
        for importer, targets in project_edges().items()
        if {server_room(t) for t in targets} >= set(pairs)
    ]
    assert both == [COMPOSITION_ROOT]


def test_the_ranker_touches_nothing_outside_itself() -> None:
    found = []
    for path in sorted((REPO / "ranker").rglob("*.py")):
        for name, node, _top in imports_of(path):
            root = name.split(".")[0]
            if root in RANKER_FORBIDDEN:
                found.append(f"{path.name}:{node.lineno} imports {name}")
            if name.startswith(PACKAGE + ".") and layer_of(name) != "ranker":
                found.append(f"{path.name}:{node.lineno} imports {name}")
        for call in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                if call.func.id in RANKER_FORBIDDEN_CALLS:
                    found.append(f"{path.name}:{call.lineno} calls {call.func.id}()")
    assert found == [], "the ranker is pure: no I/O, no clock, nothing of ours outside it"


def test_project_imports_sit_at_module_level() -> None:
    deferred = [
        f"{path.relative_to(REPO)}:{node.lineno} imports {name} inside a function"
        for path in source_modules()
        if path.relative_to(REPO).as_posix() not in DEFERRED_FOR_START_UP
        for name, node, top in imports_of(path)
        if not top and (name.startswith(PACKAGE) or (isinstance(node, ast.ImportFrom) and node.level))
    ]
    assert deferred == []


def test_the_module_graph_has_no_cycle() -> None:
    edges = project_edges()
    state: dict[str, int] = {}
    cycles: list[str] = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges.get(module, ())):
            # a package's __init__ importing its own submodules is how a package is built, not a cycle
            if target.startswith(module + "."):
                continue
            if state.get(target) == 1:
                cycles.append(" -> ".join(trail[trail.index(target) :] + [target]))
            elif target not in state:
                visit(target, trail + [target])
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_server_domain_modules_do_not_import_the_mcp_sdk_or_the_adapter() -> None:
    offenders = []
    for sub in DOMAIN_SUBPACKAGES:
        folder = REPO / "server" / sub
        assert folder.is_dir(), f"server/{sub}/ is one of the server's domain subpackages"
        for path in sorted(folder.rglob("*.py")):
            for name, node, _top in imports_of(path):
                if name.split(".")[0] in ("mcp", "starlette", "uvicorn") or name.startswith(
                    f"{PACKAGE}.server.{ADAPTER_SUBPACKAGE}"
                ):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno} imports {name}")
    assert offenders == []

"""House rules that keep the package readable, read from the source with ast (nothing is run).

no function or method over MAX_FUNCTION_LINES lines, anywhere in the package
the MCP adapter (server/mcp: records and rendering) under MAX_ADAPTER_LINES lines
no two modules of the package share a file name (a name says which module it is)
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = ("ranker", "docsource", "build_index", "server")
MAX_FUNCTION_LINES = 80
MAX_ADAPTER_LINES = 2500


def package_modules() -> list[Path]:
    return [path for folder in PACKAGE_FOLDERS for path in sorted((REPO / folder).rglob("*.py"))]


def test_no_function_is_over_80_lines() -> None:
    long = []
    for path in package_modules():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}() is {lines} lines")
    assert long == [], "a function reads as its steps: split it"


def test_the_adapter_stays_records_and_rendering() -> None:
    lines = sum(
        len(path.read_text("utf-8").splitlines()) for path in sorted((REPO / "server" / "mcp").glob("*.py"))
    )
    assert lines < MAX_ADAPTER_LINES, (
        f"server/mcp is {lines} lines: logic belongs in a domain package, serving in server/hosting"
    )


def test_no_two_modules_share_a_name() -> None:
    names = Counter(
        path.name for path in package_modules() if path.name not in ("__init__.py", "__main__.py")
    )
    assert [name for name, count in names.items() if count > 1] == []

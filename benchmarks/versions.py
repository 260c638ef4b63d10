"""Answers about the installed @imqueue API: from the installed version vs from the docs alone.

    python -m benchmarks.versions

Questions (benchmarks/versions_questions.json) are written from the .d.ts files of two real
installs: tests/framework1 (rpc 1.17.0 from the registry) and the 3.x runtime built from
../shared/vendor (rpc 3.7.2, core 3.4.2), which is the version the docs describe. "Installed"
answers through server/project/api_index.py on the question's own project; "docs alone" answers
from the latest (3.x) declarations whatever the project runs, the one answer a server without
the installed version can give. Right: the symbol is found and its signature is the expected
one. Also the parse time of each package (a fresh, uncached index). One JSON line, then a table.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from imqueue_mcp.server.project import api_index

from benchmarks.stack import SERVICE_RUNTIME

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = Path(__file__).with_name("versions_questions.json")
PROJECTS = {"framework1": REPO / "tests" / "framework1", "runtime3": SERVICE_RUNTIME.parent}
LATEST = "runtime3"


def _indexes(root: Path) -> tuple[dict[str, api_index.PackageIndex], dict[str, float]]:
    packages, _ = api_index.installed_packages(root)
    out: dict[str, api_index.PackageIndex] = {}
    times: dict[str, float] = {}
    for pkg in packages:
        if pkg.name in out:
            continue
        started = time.perf_counter()
        out[pkg.name] = api_index.index_package(pkg)
        times[f"{pkg.name}@{pkg.version}"] = round(time.perf_counter() - started, 4)
    return out, times


def _answer(indexes: dict[str, api_index.PackageIndex], package: str, symbol: str) -> str | None:
    index = indexes.get(package)
    if index is None:
        return None
    found, _ = api_index.resolve(index, symbol)
    return found.signature if found is not None else None


def main() -> int:
    missing = [name for name, root in PROJECTS.items() if not (root / "node_modules" / "@imqueue").is_dir()]
    if missing:
        print(
            f"not installed: {missing}; run bash .ci/install-framework.sh and bash .ci/install-imq.sh",
            file=sys.stderr,
        )
        return 2
    questions: list[dict[str, Any]] = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    indexes: dict[str, dict[str, api_index.PackageIndex]] = {}
    parse: dict[str, float] = {}
    for name, root in PROJECTS.items():
        indexes[name], times = _indexes(root)
        parse.update(times)
    right = {"installed": 0, "docs_alone": 0}
    rows = []
    for q in questions:
        installed = _answer(indexes[q["project"]], q["package"], q["symbol"])
        docs = _answer(indexes[LATEST], q["package"], q["symbol"])
        ok_installed = installed == q["signature"]
        ok_docs = docs == q["signature"]
        right["installed"] += ok_installed
        right["docs_alone"] += ok_docs
        rows.append((q["project"], q["symbol"], ok_installed, ok_docs))
    total = len(questions)
    result = {
        "benchmark": "versions",
        "questions": total,
        "right_installed": round(right["installed"] / total, 3),
        "right_docs_alone": round(right["docs_alone"] / total, 3),
        "parse_seconds": parse,
    }
    print(json.dumps(result))
    print(f"\n{'project':<11} {'symbol':<22} installed docs-alone")
    for project, symbol, a, b in rows:
        print(f"{project:<11} {symbol:<22} {'right' if a else 'WRONG':<9} {'right' if b else 'WRONG'}")
    print(f"\nright: installed {right['installed']}/{total}, docs alone {right['docs_alone']}/{total}")
    for package, seconds in parse.items():
        print(f"parse {package}: {seconds:.4f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

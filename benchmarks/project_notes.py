"""What the user's-project lookup costs search_docs on the local server, side by side in one run.

Three stdio servers over the site mirror (../shared/site on loopback), driven by the SDK's
client, the same query each (its hits include @imqueue/rpc API pages):

    no project      working directory without package.json: the lookup finds nothing
    cwd project     working directory = an @imqueue/rpc 1.x project: every answer carries a note
    roots project   an empty working directory, the project offered as the client's root:
                    one roots/list round trip per call, then the note
    installed 1.x   working directory = tests/framework1 (rpc 1.17.0 really installed, when
                    .ci/install-framework.sh has run): the note, and the API hits marked against
                    the installed declarations (`installed`, issue 27)

Calls alternate between the three in batches, so drift hits each alike. Prints a table and
one JSON line; asserts nothing.

    .venv/bin/python -m benchmarks.project_notes [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import ListRootsResult, Root
from pydantic import FileUrl

from .bench_server import environment, origin_args, percentile, site_origins
from .machine import machine
from fixtures.projects import write_project

QUERY = "IMQService expose decorator"
FRAMEWORK1 = Path(__file__).resolve().parent.parent / "tests" / "framework1"
BATCH = 20


def parameters(origins: dict[str, str], home: Path, cwd: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "imqueue_mcp.server", *origin_args(origins)],
        env=environment(home),
        cwd=cwd,
    )


async def timed_calls(client: Client, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        result = await client.call_tool("search_docs", {"query": QUERY})
        times.append((time.perf_counter() - started) * 1000)
        assert not result.is_error
    return times


async def run(calls: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="imq-notes-bench-"))
    project = write_project("rpc_one", work / "project")
    empty = work / "empty"
    empty.mkdir()

    async def roots(context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl(project.as_uri()))])

    with site_origins() as origins:
        arms = {
            "no project": (parameters(origins, work / "home-a", empty), None),
            "cwd project": (parameters(origins, work / "home-b", project), None),
            "roots project": (parameters(origins, work / "home-c", empty), roots),
        }
        if (FRAMEWORK1 / "node_modules" / "@imqueue" / "rpc").is_dir():
            arms["installed 1.x"] = (parameters(origins, work / "home-d", FRAMEWORK1), None)
        times: dict[str, list[float]] = {name: [] for name in arms}
        noted: dict[str, bool] = {}
        marked: dict[str, bool] = {}
        clients = {}
        async with contextlib.AsyncExitStack() as stack:  # closed in reverse, as anyio requires
            for name, (target, callback) in arms.items():
                client = await stack.enter_async_context(
                    Client(target, mode="legacy", list_roots_callback=callback)
                )
                clients[name] = client
                first = await client.call_tool("search_docs", {"query": QUERY})  # builds the corpus
                noted[name] = "versionNote" in (first.structured_content or {})
                hits = (first.structured_content or {}).get("results", [])
                marked[name] = any("installed" in hit for hit in hits)
            while min(len(series) for series in times.values()) < calls:
                for name, client in clients.items():
                    times[name] += await timed_calls(client, BATCH)
    rows = {
        name: {
            "calls": len(series),
            "p50_ms": round(statistics.median(series), 2),
            "p99_ms": round(percentile(series, 0.99), 2),
            "mean_ms": round(statistics.fmean(series), 2),
            "note": noted[name],
            "marked": marked[name],
        }
        for name, series in times.items()
    }
    return {"benchmark": "project_notes", "query": QUERY, "results": rows, "machine": machine()}


def report(figures: dict[str, Any]) -> None:
    host = figures["machine"]
    print(f"Machine: {host['platform']}, {host['cpus']} CPUs, Python {host['python']}")
    print(f"\nsearch_docs {figures['query']!r} over stdio, SDK client, alternating batches of {BATCH}")
    print(f"  {'':<16}{'calls':>7}{'p50 ms':>9}{'p99 ms':>9}{'mean ms':>9}  versionNote  marked")
    for name, row in figures["results"].items():
        print(
            f"  {name:<16}{row['calls']:>7}{row['p50_ms']:>9.2f}{row['p99_ms']:>9.2f}{row['mean_ms']:>9.2f}"
            f"  {'yes' if row['note'] else 'no':<11}  {'yes' if row['marked'] else 'no'}"
        )
    print()
    print(json.dumps(figures, sort_keys=True))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=200, help="timed calls per arm (default 200)")
    arguments = parser.parse_args(argv)
    report(asyncio.run(run(arguments.calls)))


if __name__ == "__main__":
    main()

"""Does search_docs answer an error pasted whole as well as the same error typed alone?

    python -m benchmarks.pasted [--shared PATH]

Agents paste what a command printed: the error line, then a stack trace, then Node's version
footer or npm's log lines. questions-dev.json's answerable questions written as error messages
(style `error-message`) are asked twice through search_docs (the server's function, offline over
a snapshot built from <shared>/site, default limit 6): as written, and pasted with a trace after
them, 3 to 6 frames of Node's own modules and a footer, drawn from TRACE below with a fixed seed
(the frames and footers are Node's and npm's generic output, the same for every question). Per way:
page P@1, recall@6 and the share of replies marked weak (the best hit's confidence low), as
benchmarks.questions scores them. The pasted figures should match the typed ones: the ranker
searches a paste's message lines (ranker/pasted.py). Prints a table and one JSON line naming the
machine; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .machine import machine
from .passages import ask, keeper_for
from .paths import kpi_dir, shared_dir, site_dir
from .questions import page_of, relevant_pages

LIMIT = 6
SEED = 29
TRACE = (
    "    at Module._compile (node:internal/modules/cjs/loader:1376:14)",
    "    at Module._extensions..js (node:internal/modules/cjs/loader:1435:10)",
    "    at Module.load (node:internal/modules/cjs/loader:1207:32)",
    "    at Function.Module._load (node:internal/modules/cjs/loader:1023:12)",
    "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
    "    at async Promise.all (index 0)",
    "    at Object.<anonymous> (/home/dev/project/dist/index.js:14:9)",
    "    at ModuleJob.run (node:internal/modules/esm/module_job:218:25)",
    "    at async ModuleLoader.import (node:internal/modules/esm/loader:329:24)",
    "    at listOnTimeout (node:internal/timers:569:17)",
    "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)",
    "    at new Promise (<anonymous>)",
)
FOOTERS = ("", "\n\nNode.js v22.11.0", "\nnpm error code 1\nnpm error path /home/dev/project")


def pasted(message: str, draw: random.Random) -> str:
    """The message as a terminal prints it with a trace under it."""
    frames = draw.sample(TRACE, draw.randint(3, 6))
    return message + "\n" + "\n".join(frames) + draw.choice(FOOTERS)


async def figures(keeper: Any, questions: Sequence[dict[str, Any]], queries: Sequence[str]) -> dict[str, Any]:
    first = found = weak = 0
    for question, query in zip(questions, queries, strict=True):
        reply = await ask(keeper, query, True, LIMIT)
        results = reply["results"]
        wanted = relevant_pages(question)
        ranks = [rank for rank, hit in enumerate(results) if page_of(hit["url"]) in wanted]
        first += bool(ranks) and ranks[0] == 0
        found += bool(ranks)
        weak += bool(reply["weak"]) or not results
    count = len(questions)
    return {
        "questions": count,
        "p_at_1": round(100 * first / count, 1),
        "recall_at_6": round(100 * found / count, 1),
        "weak": round(100 * weak / count, 1),
    }


def run(shared: Path) -> dict[str, Any]:
    from imqueue_mcp.docsource import build, save_snapshot

    every = json.loads((kpi_dir(shared) / "questions-dev.json").read_text(encoding="utf-8"))
    questions = [q for q in every if q["relevant"] and q["style"] == "error-message"]
    draw = random.Random(SEED)
    typed = [q["query"] for q in questions]
    traced = [pasted(query, draw) for query in typed]
    with tempfile.TemporaryDirectory(prefix="imq-pasted-") as scratch:
        path = Path(scratch) / "snapshot.msgpack"
        save_snapshot(build(mirror=site_dir(shared)), path)
        keeper = keeper_for(path)
        return {
            "benchmark": "pasted",
            "machine": machine(),
            "typed": asyncio.run(figures(keeper, questions, typed)),
            "pasted": asyncio.run(figures(keeper, questions, traced)),
        }


def table(results: dict[str, Any]) -> str:
    rows = [f"{'':<34}{'P@1':>7}{'recall@6':>10}{'weak %':>8}"]
    for key, label in (("typed", "as written"), ("pasted", "pasted with a trace and a footer")):
        row = results[key]
        rows.append(f"{label:<34}{row['p_at_1']:>7.1f}{row['recall_at_6']:>10.1f}{row['weak']:>8.1f}")
    return (
        f"Pasted errors: {results['typed']['questions']} error-message questions of questions-dev.json, "
        "search_docs at limit 6\n" + "\n".join(rows)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", help="the shared folder (default $IMQ_SHARED or ../shared)")
    args = parser.parse_args(argv)
    results = run(shared_dir(args.shared))
    print(table(results))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""find_examples KPI: P@1, recall@3 and MRR@10 on benchmarks/example-queries.json.

    python -m benchmarks.example_kpi [--shared PATH]

Builds the corpus from <shared>/site twice, as the server meets it: from the feeds alone (the
live corpus: examples from each host's llms-full.txt) and with every page read (a snapshot
built with --pages: the API pages' examples too). Each query is ranked by the function the
find_examples tool calls (server.examples.best_examples) and scored against the block(s)
that should come first. Prints a table, the queries whose first result is not expected, and
one JSON line. benchmarks/kpi.py prints `section(...)` as a section of its own output: these
figures are not part of the gold KPI.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from .machine import machine
from .paths import REPO, shared_dir, site_dir

QUERIES = REPO / "benchmarks" / "example-queries.json"
DEPTH = 10  # results ranked per query, for MRR@10


def load_queries(path: Path = QUERIES) -> list[dict[str, Any]]:
    queries = json.loads(path.read_text("utf-8"))["queries"]
    return [{"query": q["query"], "expected": list(q["expected"])} for q in queries]


def score(ranked_ids: list[list[str]], queries: list[dict[str, Any]]) -> dict[str, Any]:
    """P@1, recall@3 (an expected block in the top 3) and MRR@10, in percent; the misses at 1."""
    p1 = recall3 = reciprocal = 0.0
    misses = []
    for ids, query in zip(ranked_ids, queries, strict=True):
        expected = set(query["expected"])
        place = next((rank for rank, found in enumerate(ids[:DEPTH], 1) if found in expected), None)
        p1 += place == 1
        recall3 += place is not None and place <= 3
        reciprocal += 1 / place if place else 0.0
        if place != 1:
            misses.append({"query": query["query"], "first": ids[0] if ids else None, "place": place})
    count = len(queries) or 1
    return {
        "queries": len(queries),
        "p_at_1": round(100 * p1 / count, 1),
        "recall_at_3": round(100 * recall3 / count, 1),
        "mrr_at_10": round(100 * reciprocal / count, 1),
        "misses": misses,
    }


def measure(site: Path, queries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Figures per corpus: 'feeds' (the live corpus) and 'pages' (a --pages snapshot)."""
    from imqueue_mcp.docsource import build
    from imqueue_mcp.server.docs.example_finder import best_examples, rank_examples

    figures = {}
    for name, pages in (("feeds", False), ("pages", True)):
        start = time.perf_counter()
        snapshot = build(mirror=site, pages=pages)
        examples = tuple(snapshot.examples or ())
        built = time.perf_counter()
        ranked = rank_examples(examples, snapshot.corpus.lemmas)
        indexed = time.perf_counter()
        ranked_ids = [[e.id for e in best_examples(ranked, q["query"], DEPTH)[0]] for q in queries]
        done = time.perf_counter()
        figures[name] = {
            "examples": len(examples),
            **score(ranked_ids, queries),
            "seconds": {
                "build": round(built - start, 3),
                "index": round(indexed - built, 3),
                "rank_per_query_ms": round(1000 * (done - indexed) / max(len(queries), 1), 2),
            },
        }
    return figures


def table(figures: dict[str, dict[str, Any]]) -> str:
    lines = [
        "find_examples KPI (benchmarks/example-queries.json; not part of the gold figures)",
        f"{'corpus':<34}{'blocks':>7}{'queries':>8}{'P@1':>7}{'recall@3':>10}{'MRR@10':>8}{'index s':>9}",
    ]
    labels = {"feeds": "feeds (live: llms-full.txt)", "pages": "--pages snapshot (every page)"}
    for name, row in figures.items():
        lines.append(
            f"{labels[name]:<34}{row['examples']:>7}{row['queries']:>8}{row['p_at_1']:>6.1f}%"
            f"{row['recall_at_3']:>9.1f}%{row['mrr_at_10']:>7.1f}%{row['seconds']['index']:>9.3f}"
        )
    for name, row in figures.items():
        for miss in row["misses"]:
            place = f"expected at {miss['place']}" if miss["place"] else f"expected not in top {DEPTH}"
            lines.append(f"  {name} miss: {miss['query']!r} -> {miss['first']} ({place})")
    return "\n".join(lines)


def section(shared: Path) -> str:
    """The KPI's section: the table and the figures as one `find_examples:` JSON line."""
    figures = measure(site_dir(shared), load_queries())
    compact = {name: {k: v for k, v in row.items() if k != "misses"} for name, row in figures.items()}
    return "\n" + table(figures) + "\nfind_examples: " + json.dumps(compact)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.example_kpi", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--shared", help="the shared folder (site mirror); default ../shared")
    args = parser.parse_args(argv)
    shared = shared_dir(args.shared)
    figures = measure(site_dir(shared), load_queries())
    print(f"on {machine()['platform']}, {machine()['cpus']} CPUs, Python {machine()['python']}")
    print(table(figures))
    print(json.dumps({"benchmark": "example_kpi", "machine": machine(), **figures}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

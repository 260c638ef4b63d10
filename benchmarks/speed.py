"""Speed, ours vs the plain rank-bm25 baseline and bm25s (the limit), each side in its own process.

    python -m benchmarks.speed [--shared PATH]                   # all sides, a table and one JSON line
    python -m benchmarks.speed --side ours|bm25|bm25s [--json]   # one side (what the parent spawns)

Per side: build from <shared>/site (ours: build + save_snapshot to a temp file; bm25: tokenise
the corpus + construct BM25Okapi), load (ours: load_snapshot + .index(); bm25: pickle.load;
median of 5), per-query latency p50/p95/p99 over the 10,000 generated `main` queries at limit 6
(ours: index.search; bm25: get_scores + the top six), and the process's peak RSS. Ours is
timed a second time with search_docs' passages (server/docs/hit_passages.py) added to each
answer, in a column of its own (issue 21 §5): reported beside the ranking, not judged. bm25s
(benchmarks/bm25s_baseline.py: sparse precomputed scores, numpy) indexes the same documents
and tokens as rank-bm25 and does the same unit of work (build: tokenise + index; load: its
saved matrices; query: every score + the top six): the practical limit for lexical scoring in
Python. bm25s is timed twice: through retrieve(), its front door (top-k selection included),
which is how issue 11 timed it and what its targets are judged on (ours at most 3x its p50 and
6x its p99; reported, not asserted), and through get_scores() + our own top six, scoring alone,
a lower floor printed beside. The batch path (issue 29) is timed end to end on each side over
the same 10,000 queries, 60 deep: ours is `imq-search --batch` as it runs (search_cli.run_batch:
read the JSON lines, rank each query at depth 60, render and write its results line, to a file),
bm25s tokenises each query, calls retrieve(k=60) and turns the ids into result records; each
from a freshly loaded index (cold caches, as a new process has), the load and the process start
not counted. Wall and CPU seconds of each, and ours / bm25s, against issue 29's 4x (reported, not
asserted). The sides run one after the other in separate processes
so none's memory or warm caches count for another. The baseline children get their document
texts from the parent as JSON, so they never import our ranker. Absolute times drift on
shared machines: read the columns against each other. Nothing here asserts a speed.

The ratios the targets are judged on come from a fourth child, `paired` (measure_paired): ours
and bm25s retrieve() in one process, each query timed on both back to back (which goes first
alternating), and the batch path in ten slices the two sides take in turn. Children that run a
minute apart see different machines (a job ending, a clock changing): on a shared machine the
same code's alone ratio has moved from 2.3x to 5.4x between two runs, bm25s faster and ours
slower in the second. Paired, a moment's load falls on both sides. The alone ratios are printed
beside them.
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .machine import machine
from .paths import REPO, kpi_dir, shared_dir, site_dir

SIDES = ("ours", "bm25", "bm25s", "paired")
BASELINES = ("bm25", "bm25s", "paired")  # the children that read the parent's document list
# ours / bm25s (reported, not asserted): p50 from issue 29 (2x; issue 11 asked 3x), p99 from issue 11
TARGET_RATIOS = {"p50_ms": 2.0, "p99_ms": 6.0}
# The unit the targets are judged on: bm25s queried through retrieve(), as issue 11 timed it
# (its 0.12 / 0.21 ms are a front-door query; scoring alone, get_scores, is ~0.02 ms here).
TARGET_UNIT = "query_retrieve"
LOADS = 5
LIMIT = 6
BATCH_DEPTH = 60  # as ranker.rules.BATCH_DEPTH and the baselines' DEPTH: what --batch writes
BATCH_TARGET = 4.0  # ours / bm25s over the whole batch, issue 29 (reported, not asserted)
BATCH_ROUNDS = 10  # the paired batch: slices of the queries, the two sides taking them in turn


def peak_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # Linux reports KiB, macOS bytes


def percentile(ordered: list[float], fraction: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def latency(samples_ns: list[int]) -> dict[str, float]:
    ordered = sorted(ns / 1e6 for ns in samples_ns)
    return {
        "n": len(ordered),
        "p50_ms": percentile(ordered, 0.50),
        "p95_ms": percentile(ordered, 0.95),
        "p99_ms": percentile(ordered, 0.99),
        "mean_ms": statistics.fmean(ordered),
        "max_ms": ordered[-1],
        "total_s": sum(ordered) / 1000,
    }


def main_queries(shared: Path) -> list[str]:
    data = json.loads((kpi_dir(shared) / "artificial-queries.json").read_text(encoding="utf-8"))
    return [case["query"] for case in data["main"]]


def timed_queries(queries: list[str], run: Any) -> list[int]:
    samples = []
    for query in queries:
        start = time.perf_counter_ns()
        run(query)
        samples.append(time.perf_counter_ns() - start)
    return samples


# --- one side per process -----------------------------------------------------------------


def measure_ours(shared: Path, scratch: Path) -> dict[str, Any]:
    start = time.perf_counter()
    from imqueue_mcp.docsource import build, load_snapshot, save_snapshot

    imported = time.perf_counter() - start

    path = scratch / "snapshot.msgpack"
    start = time.perf_counter()
    save_snapshot(build(mirror=site_dir(shared)), path)
    built = time.perf_counter() - start

    loads, index = [], None
    for _ in range(LOADS):
        start = time.perf_counter()
        index = load_snapshot(path).index()
        loads.append(time.perf_counter() - start)
    assert index is not None
    samples = timed_queries(main_queries(shared), lambda q: index.search(q, limit=LIMIT))
    ranked_rss = peak_rss_bytes()  # the ranking's own peak, before the passage column adds its pages
    return {
        "import_s": imported,
        "build_s": built,
        "snapshot_bytes": path.stat().st_size,
        "load_s": statistics.median(loads),
        "loads_s": loads,
        "query": latency(samples),
        "peak_rss_bytes": ranked_rss,
        "query_passages": latency(timed_queries(main_queries(shared), with_passages(path, index))),
        "batch": batch_ours(load_snapshot(path).index(), main_queries(shared), scratch),
    }


def measure_paired(shared: Path, scratch: Path, docs_file: Path | None) -> dict[str, Any]:
    """Ours and bm25s retrieve() in one process, query by query: each query timed on both sides
    back to back, which side goes first alternating, so whatever else the machine does at that
    moment (another job, a clock change) falls on both. The batch path the same way, in
    BATCH_ROUNDS slices of the queries taken in turn. The per-side children stay the figures
    of a side alone (build, load, peak RSS); the ratios are judged on these."""
    from imqueue_mcp.docsource import build, load_snapshot, save_snapshot

    from .bm25s_baseline import Bm25sBaseline

    docs = baseline_child_documents(shared, docs_file)
    path, folder = scratch / "snapshot.msgpack", scratch / "bm25s"
    save_snapshot(build(mirror=site_dir(shared)), path)
    Bm25sBaseline(docs).save(folder)
    queries = main_queries(shared)
    # the batch first, each side from an index loaded afresh (cold caches, as a new process has)
    index, baseline = load_snapshot(path).index(), Bm25sBaseline.load(folder, docs)
    batch = paired_batch(index, baseline, queries, scratch)
    sides = {"ours": lambda q: index.search(q, limit=LIMIT), "bm25s": baseline.retrieve_top6_ids}
    samples: dict[str, list[int]] = {name: [] for name in sides}
    for number, query in enumerate(queries):
        for name in sorted(sides, reverse=bool(number % 2)):
            start = time.perf_counter_ns()
            sides[name](query)
            samples[name].append(time.perf_counter_ns() - start)
    return {name: latency(found) for name, found in samples.items()} | {"batch": batch}


def paired_batch(index: Any, baseline: Any, queries: list[str], scratch: Path) -> dict[str, dict[str, Any]]:
    """batch_ours and batch_bm25s over the same BATCH_ROUNDS slices of `queries`, taken in turn
    (which side goes first alternating); each side's seconds summed over its slices."""
    size = max(1, math.ceil(len(queries) / BATCH_ROUNDS))
    totals = {name: {"wall_s": 0.0, "cpu_s": 0.0} for name in ("ours", "bm25s")}
    for number, first in enumerate(range(0, len(queries), size)):
        part = queries[first : first + size]
        timed = {
            "ours": lambda part=part: batch_ours(index, part, scratch),
            "bm25s": lambda part=part: batch_bm25s(baseline, part),
        }
        for name in sorted(timed, reverse=bool(number % 2)):
            figures = timed[name]()
            totals[name]["wall_s"] += figures["wall_s"]
            totals[name]["cpu_s"] += figures["cpu_s"]
    return {name: batch_figures(len(queries), **total) for name, total in totals.items()}


def batch_figures(queries: int, wall_s: float, cpu_s: float) -> dict[str, Any]:
    return {"n": queries, "depth": BATCH_DEPTH, "wall_s": wall_s, "cpu_s": cpu_s}


def batch_ours(index: Any, queries: list[str], scratch: Path) -> dict[str, Any]:
    """`imq-search --batch` over `queries` as it runs: run_batch on a JSON lines file, each
    query ranked at depth 60 and its results line written, timed from the first query read to
    the last line flushed. The caller loads the index afresh (caches cold, as in a new process);
    its load is not counted, nor is a process start."""
    from imqueue_mcp.build_index.search_cli import run_batch
    from imqueue_mcp.ranker import rules

    assert rules.BATCH_DEPTH == BATCH_DEPTH, "the batch benchmark's depth is the CLI's"
    source = scratch / "batch-queries.jsonl"
    source.write_text("".join(json.dumps({"query": q}) + "\n" for q in queries), encoding="utf-8")
    with (scratch / "batch-ours.jsonl").open("w", encoding="utf-8") as out:
        wall, cpu = time.perf_counter(), time.process_time()
        run_batch(index, source, out)
        out.flush()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return batch_figures(len(queries), wall, cpu)


def batch_bm25s(baseline: Any, queries: list[str]) -> dict[str, Any]:
    """The same queries through bm25s end to end at k=60: tokenise, retrieve(), result records
    (Bm25sBaseline.retrieve_records), from an index the caller loads afresh, the load not counted."""
    lines = []
    wall, cpu = time.perf_counter(), time.process_time()
    for query in queries:
        lines.append({"query": query, "results": baseline.retrieve_records(query, BATCH_DEPTH)})
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert len(lines) == len(queries)
    return batch_figures(len(queries), wall, cpu)


def with_passages(path: Path, index: Any) -> Any:
    """One query as search_docs answers it by default: the ranking, then each hit's passage
    (issue 21; a column of its own, beside the ranking alone)."""
    from imqueue_mcp.docsource import load_snapshot
    from imqueue_mcp.ranker import response_dict
    from imqueue_mcp.server.docs.corpus_keeper import LoadedCorpus
    from imqueue_mcp.server.docs.hit_passages import PassageOptions, PassageSource, add_search_passages

    snapshot = load_snapshot(path)
    loaded = LoadedCorpus(
        index,
        "snapshot",
        snapshot.fetched_at,
        str(path),
        0.0,
        markdown=snapshot.page_markdown(path),
        sections=snapshot.sections,
    )
    source, options = PassageSource(loaded), PassageOptions()

    def run(query: str) -> None:
        add_search_passages(response_dict(index.search(query, limit=LIMIT)), source, query, options)

    return run


def measure_bm25(shared: Path, scratch: Path, docs_file: Path | None) -> dict[str, Any]:
    start = time.perf_counter()
    from .baseline import Bm25Baseline

    imported = time.perf_counter() - start

    docs = baseline_child_documents(shared, docs_file)

    start = time.perf_counter()
    baseline = Bm25Baseline(docs)
    built = time.perf_counter() - start

    path = scratch / "bm25.pickle"
    start = time.perf_counter()
    with path.open("wb") as handle:
        pickle.dump(baseline, handle, protocol=pickle.HIGHEST_PROTOCOL)
    saved = time.perf_counter() - start

    loads = []
    for _ in range(LOADS):
        start = time.perf_counter()
        with path.open("rb") as handle:
            baseline = pickle.load(handle)
        loads.append(time.perf_counter() - start)
    samples = timed_queries(main_queries(shared), baseline.top6_ids)
    return {
        "import_s": imported,
        "build_s": built,
        "save_s": saved,
        "snapshot_bytes": path.stat().st_size,
        "load_s": statistics.median(loads),
        "loads_s": loads,
        "query": latency(samples),
        "documents": len(docs),
    }


def measure_bm25s(shared: Path, scratch: Path, docs_file: Path | None) -> dict[str, Any]:
    start = time.perf_counter()
    from .bm25s_baseline import Bm25sBaseline

    imported = time.perf_counter() - start

    docs = baseline_child_documents(shared, docs_file)

    start = time.perf_counter()
    baseline = Bm25sBaseline(docs)
    built = time.perf_counter() - start

    folder = scratch / "bm25s"
    start = time.perf_counter()
    baseline.save(folder)
    saved = time.perf_counter() - start

    loads = []
    for _ in range(LOADS):
        start = time.perf_counter()
        baseline = Bm25sBaseline.load(folder, docs)
        loads.append(time.perf_counter() - start)
    samples = timed_queries(main_queries(shared), baseline.top6_ids)
    through_retrieve = timed_queries(main_queries(shared), baseline.retrieve_top6_ids)
    batch = batch_bm25s(Bm25sBaseline.load(folder, docs), main_queries(shared))
    return {
        "import_s": imported,
        "build_s": built,
        "save_s": saved,
        "query_retrieve": latency(through_retrieve),
        "snapshot_bytes": sum(f.stat().st_size for f in folder.iterdir()),
        "load_s": statistics.median(loads),
        "loads_s": loads,
        "query": latency(samples),
        "documents": len(docs),
        "batch": batch,
    }


def batch_pair(results: dict[str, dict[str, Any]], alone: bool = False) -> tuple[Any, Any]:
    """(ours, bm25s) batch figures: the paired child's when there is one, unless `alone` (each
    side's own child); None for a side without one."""
    paired = None if alone else results.get("paired", {}).get("batch")
    if paired:
        return paired["ours"], paired["bm25s"]
    return results["ours"].get("batch"), results["bm25s"].get("batch")


def batch_ratios(results: dict[str, dict[str, Any]], alone: bool = False) -> dict[str, float]:
    """ours / bm25s over the whole batch, wall and CPU seconds (issue 29's target is on the
    wall time, end to end), from batch_pair; empty when either side has no batch figure."""
    ours, limit = batch_pair(results, alone)
    if not ours or not limit:
        return {}
    return {key: ours[key] / limit[key] for key in ("wall_s", "cpu_s") if limit[key] > 0}


def batch_lines(results: dict[str, dict[str, Any]]) -> list[str]:
    """The batch path's seconds and ours / bm25s against the 4x target (not asserted); with a
    paired child, the ratio of the sides run alone beside it."""
    over = batch_ratios(results)
    if "wall_s" not in over:
        return []
    ours, limit = batch_pair(results)
    label = f"batch {ours['n']} x {ours['depth']} (s)"
    verdict = "met" if over["wall_s"] <= BATCH_TARGET else "NOT met"
    cpu = f", CPU {over['cpu_s']:.1f}x" if "cpu_s" in over else ""
    alone = batch_ratios(results, alone=True) if "paired" in results else {}
    beside = f"; alone {alone['wall_s']:.1f}x" if "wall_s" in alone else ""
    return [
        f"{label:<26} {ours['wall_s']:>10.2f} {'':>10} {limit['wall_s']:>10.2f}  wall; "
        f"CPU {ours['cpu_s']:.2f} / {limit['cpu_s']:.2f}{' (paired)' if 'paired' in results else ''}",
        f"{'ours / bm25s batch':<26} {over['wall_s']:>9.1f}x {'':>10} "
        f"target <={BATCH_TARGET:g}x {verdict} (wall{cpu}{beside})",
    ]


def ratios(
    results: dict[str, dict[str, Any]], unit: str = "query", ours_unit: str = "query"
) -> dict[str, float]:
    """ours / bm25s per latency percentile, each side from its own child; unit "query_retrieve"
    compares with bm25s called through retrieve() instead of get_scores(); ours_unit
    "query_passages" times ours with search_docs' passages."""
    return over(results["ours"].get(ours_unit), results["bm25s"].get(unit))


def over(ours: Any, limit: Any) -> dict[str, float]:
    """ours / limit per latency percentile; empty when either is missing."""
    if not limit or not ours:
        return {}
    return {key: ours[key] / limit[key] for key in ("p50_ms", "p95_ms", "p99_ms") if limit[key] > 0}


def judged_ratios(results: dict[str, dict[str, Any]]) -> dict[str, float]:
    """What the targets are judged on (issue 29's p50, issue 11's p99): ours / bm25s retrieve()
    query by query in the paired child when there is one, else each side's own child."""
    paired = results.get("paired")
    if paired:
        return over(paired.get("ours"), paired.get("bm25s"))
    return ratios(results, TARGET_UNIT)


def baseline_child_documents(shared: Path, docs_file: Path | None) -> list[Any]:
    """A child's documents: the parent's list (`docs_file`, JSON), or, run alone, the corpus read
    here (its memory then counts for this side)."""
    from .baseline import BaselineDocument

    if docs_file is None:
        return export_baseline_documents(shared)
    return [BaselineDocument(**d) for d in json.loads(docs_file.read_text(encoding="utf-8"))]


def export_baseline_documents(shared: Path) -> list[Any]:
    from imqueue_mcp.docsource import build

    from .baseline import baseline_documents

    return baseline_documents(build(mirror=site_dir(shared)).corpus.documents)


def run_side(side: str, shared: Path, docs_file: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"imq-speed-{side}-") as scratch:
        if side == "ours":
            figures = measure_ours(shared, Path(scratch))
        elif side == "bm25s":
            figures = measure_bm25s(shared, Path(scratch), docs_file)
        elif side == "paired":
            figures = measure_paired(shared, Path(scratch), docs_file)
        else:
            figures = measure_bm25(shared, Path(scratch), docs_file)
    figures.setdefault("peak_rss_bytes", peak_rss_bytes())
    figures["side"] = side
    return figures


# --- the parent: both sides, side by side -------------------------------------------------


def spawn(side: str, shared: Path, docs_file: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.speed", "--side", side, "--json", "--shared", str(shared)]
    if side in BASELINES:
        command += ["--docs", str(docs_file)]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(
            f"benchmarks.speed: the {side} child exited {done.returncode}:\n{done.stderr.strip()}"
        )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise SystemExit(f"benchmarks.speed: the {side} child printed no JSON line:\n{done.stdout}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def rows(figures: dict[str, Any]) -> list[tuple[str, str]]:
    q = figures["query"]
    return [
        ("build (s)", f"{figures['build_s']:.3f}"),
        ("snapshot size (MB)", f"{figures['snapshot_bytes'] / 1e6:.2f}"),
        (f"load, median of {LOADS} (ms)", f"{figures['load_s'] * 1000:.1f}"),
        ("query p50 (ms)", f"{q['p50_ms']:.3f}"),
        ("query p95 (ms)", f"{q['p95_ms']:.3f}"),
        ("query p99 (ms)", f"{q['p99_ms']:.3f}"),
        ("query mean (ms)", f"{q['mean_ms']:.3f}"),
        (f"{q['n']} queries (s)", f"{q['total_s']:.2f}"),
        ("peak RSS (MB)", f"{figures['peak_rss_bytes'] / 2**20:.0f}"),
    ]


def table(results: dict[str, dict[str, Any]]) -> str:
    ours, bm25, limit = rows(results["ours"]), rows(results["bm25"]), rows(results["bm25s"])
    lines = [f"{'':<26} {'ours':>10} {'rank-bm25':>10} {'bm25s':>10}", "-" * 59]
    lines += [
        f"{label:<26} {a:>10} {b:>10} {c:>10}"
        for (label, a), (_l, b), (_m, c) in zip(ours, bm25, limit, strict=True)
    ]
    judged, scoring = judged_ratios(results), ratios(results)
    lines.append("-" * 59)
    retrieve = results["bm25s"].get(TARGET_UNIT)
    if retrieve:
        lines.append(
            f"{'bm25s retrieve() (ms)':<26} {'':>10} {'':>10} "
            + f"{retrieve['p50_ms']:.3f}/{retrieve['p99_ms']:.3f}".rjust(10)
            + "  p50/p99"
        )
    paired = results.get("paired")
    if paired:
        alone = ratios(results, TARGET_UNIT)
        beside = f"; alone {alone['p50_ms']:.1f}x/{alone['p99_ms']:.1f}x" if alone else ""
        lines.append(
            f"{'paired (ms)':<26} "
            + f"{paired['ours']['p50_ms']:.3f}/{paired['ours']['p99_ms']:.3f}".rjust(10)
            + f" {'':>10} "
            + f"{paired['bm25s']['p50_ms']:.3f}/{paired['bm25s']['p99_ms']:.3f}".rjust(10)
            + f"  p50/p99, query by query in one process: judged{beside}"
        )
    for key, name in (("p50_ms", "p50"), ("p99_ms", "p99")):
        if key in judged:
            verdict = "met" if judged[key] <= TARGET_RATIOS[key] else "NOT met"
            lines.append(
                f"{'ours / bm25s retrieve() ' + name:<26} {judged[key]:>9.1f}x {'':>10} "
                f"target <={TARGET_RATIOS[key]:g}x {verdict}"
            )
    passages = results["ours"].get("query_passages")
    if passages:
        times = ratios(results, TARGET_UNIT, "query_passages")
        of_retrieve = f" = {times['p50_ms']:.1f}x/{times['p99_ms']:.1f}x of bm25s retrieve()" if times else ""
        lines.append(
            f"{'ours + passages (ms)':<26} "
            + f"{passages['p50_ms']:.3f}/{passages['p99_ms']:.3f}".rjust(10)
            + f"  p50/p99 with search_docs' passages, not judged{of_retrieve}"
        )
    if scoring:
        lines.append(
            f"{'ours / bm25s get_scores':<26} "
            + f"{scoring['p50_ms']:.1f}x/{scoring['p99_ms']:.1f}x".rjust(10)
            + "  p50/p99: scoring alone, below any front door"
        )
    return "\n".join(lines + batch_lines(results))


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.speed",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--shared", help="the shared folder (default $IMQ_SHARED or ../shared)")
    ap.add_argument("--side", choices=SIDES, help="measure one side in this process")
    ap.add_argument("--json", action="store_true", help="with --side: print only the JSON line")
    ap.add_argument("--docs", type=Path, help=argparse.SUPPRESS)  # the parent's baseline documents
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    shared = shared_dir(args.shared)
    if args.side:
        figures = run_side(args.side, shared, args.docs)
        if not args.json:
            print("\n".join(f"{label:<26} {value:>10}" for label, value in rows(figures)))
        print(json.dumps(figures))
        return 0

    with tempfile.TemporaryDirectory(prefix="imq-speed-") as scratch:
        docs_file = Path(scratch) / "bm25-documents.json"
        docs = export_baseline_documents(shared)
        docs_file.write_text(json.dumps([d.__dict__ for d in docs], ensure_ascii=False), encoding="utf-8")
        results = {}
        for side in SIDES:  # one after the other: two children at once would share the two cores
            print(f"[speed] measuring {side} in a child process", file=sys.stderr, flush=True)
            results[side] = spawn(side, shared, docs_file)

    info = machine()
    print(
        f"speed on {platform.node() or 'this machine'} — {info['platform']}, {info['cpus']} CPUs "
        f"({info['processor']}), Python {info['python']}"
    )
    print(table(results))
    print(
        "build: ours = feeds -> corpus -> index -> msgpack file; rank-bm25 = tokenise + BM25Okapi; "
        "bm25s = tokenise + sparse index (the baselines' corpus read not counted). "
        "Peak RSS is each child's whole run. batch: from the first query to the last line "
        "written, index load and process start excluded; bm25s's lines are records, not JSON."
    )
    print(
        json.dumps(
            {
                "benchmark": "speed",
                "machine": info,
                **results,
                "ratios_ours_over_bm25s": ratios(results),
                "ratios_ours_over_bm25s_retrieve": ratios(results, TARGET_UNIT),
                "ratios_paired_ours_over_bm25s_retrieve": judged_ratios(results)
                if "paired" in results
                else {},
                "ratios_ours_passages_over_bm25s_retrieve": ratios(results, TARGET_UNIT, "query_passages"),
                "target_ratios": TARGET_RATIOS,
                "target_unit": TARGET_UNIT,
                "targets_met": {
                    key: value <= TARGET_RATIOS[key]
                    for key, value in judged_ratios(results).items()
                    if key in TARGET_RATIOS
                },
                "ratios_batch_ours_over_bm25s": batch_ratios(results),
                "ratios_batch_alone_ours_over_bm25s": batch_ratios(results, alone=True),
                "target_batch_ratio": BATCH_TARGET,
                "batch_target_met": batch_ratios(results).get("wall_s", math.inf) <= BATCH_TARGET,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

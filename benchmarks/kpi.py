"""Relevance KPI, ours vs the plain rank-bm25 baseline, scored by the shared kpi scripts.

    python -m benchmarks.kpi [--out DIR] [--shared PATH] [--skip-artificial] [--folds K]
                             [--check-floors] [--write-floors] [--floors FILE]

Builds the index from <shared>/site, writes one results file per (side, query set) into --out,
scores each with evaluate.py / ranking_cases.py, prints a side-by-side table with the
acceptance bar, then one JSON line. The headline is the nested topic-grouped CV of the ranking
rules (benchmarks/nested.py): each rule a switch chosen inside the folds, each outer fold
ranked with the rules its inner CV kept; the plain CV (switches fitted on the training folds,
no inner check) and the in-sample figures stand beside it. --check-floors exits 1 when a
nested-CV figure of ours is more than one point below its floor in floors.json (above, for the
never-returned ceiling; named cases are in-sample).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import cv, example_kpi, nested, restraint, scoring, unanswerable
from .baseline import Bm25Baseline, baseline_documents
from .machine import machine
from .paths import REPO, kpi_dir, shared_dir, site_dir

DEFAULT_OUT = REPO / "benchmarks" / "out"
DEFAULT_FLOORS = REPO / "benchmarks" / "floors.json"
SIDES = ("ours", "bm25")
TOLERANCE = 1.0  # points a figure may sit below its floor before --check-floors fails


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    bar: float | None  # the acceptance bar; None = reported, no bar
    ceiling: bool = False  # lower is better (the bar and the floor are maxima)
    unit: str = "%"


ROWS = (
    # The bars are issue 11's, on the cross-validated figures.
    Row("micro_p1", "micro P@1", 70),
    Row("macro_p1", "macro P@1", 62),
    Row("mrr", "MRR@target (micro)", 78),
    Row("recall6", "recall@6 (micro)", 95),
    Row("ndcg10", "nDCG@10 (micro)", None),
    Row("question_p1", "question P@1", 58),
    Row("intent_recall6", "intent recall@6", 100),
    Row("must_reach_top6", "mustReach in top 6", 85),
    Row("never_returned", "target never returned", 1.0, ceiling=True),
    # ok lines of ranking_cases.py, in-sample: 45 of 52 since issue 14 §1 let imqueue.com hits
    # compete on score, which five "every local hit before every peer hit" checks forbid
    Row("cases_passed", "named cases passed", 45, unit=""),
    Row("artificial_accuracy", "generated-query accuracy", None),
)
FLOOR_KEYS = (
    "micro_p1",
    "macro_p1",
    "mrr",
    "recall6",
    "question_p1",
    "intent_recall6",
    "must_reach_top6",
    "never_returned",
    "cases_passed",
)
CEILINGS = {"never_returned"}


def log(message: str) -> None:
    print(f"[kpi] {message}", file=sys.stderr, flush=True)


def write_results(path: Path, queries: list[str], line_for: Ranker) -> float:
    """One results line per query; returns the seconds spent ranking (writing included)."""
    start = time.perf_counter()
    with path.open("w", encoding="utf-8") as handle:
        for query in queries:
            handle.write(json.dumps(line_for(query), ensure_ascii=False) + "\n")
    return time.perf_counter() - start


Ranker = Callable[[str], dict[str, Any]]  # query -> one results line


def build_sides(shared: Path) -> tuple[dict[str, Ranker], dict[str, float], Any]:
    """Both rankers over the mirror, their build times, and our snapshot (built once a run)."""
    from imqueue_mcp.build_index.search_cli import batch_line
    from imqueue_mcp.docsource import build

    start = time.perf_counter()
    snapshot = build(mirror=site_dir(shared))
    index = snapshot.index()
    ours_seconds = time.perf_counter() - start
    start = time.perf_counter()
    baseline = Bm25Baseline(baseline_documents(snapshot.corpus.documents))
    bm25_seconds = time.perf_counter() - start
    sides: dict[str, Ranker] = {"ours": lambda query: batch_line(index, query), "bm25": baseline.batch_line}
    return sides, {"ours": ours_seconds, "bm25": bm25_seconds}, snapshot


Figures = dict[str, dict[str, Any]]  # side -> figure name -> value


def measure(shared: Path, out: Path, skip_artificial: bool) -> tuple[Figures, dict[str, Any], Any]:
    kpi = kpi_dir(shared)
    out.mkdir(parents=True, exist_ok=True)
    scoring.emit_gold_queries(kpi, out / "queries-gold.jsonl")
    scoring.emit_case_queries(kpi, out / "queries-cases.jsonl")
    query_sets = {
        "gold": scoring.read_queries(out / "queries-gold.jsonl"),
        "cases": scoring.read_queries(out / "queries-cases.jsonl"),
    }
    if not skip_artificial:
        query_sets["artificial"] = scoring.artificial_queries(kpi)

    log(f"building both indexes from {site_dir(shared)}")
    sides, build_seconds, snapshot = build_sides(shared)
    timings: dict[str, Any] = {
        "build": build_seconds,
        "rank": {},
        "queries": {name: len(queries) for name, queries in query_sets.items()},
    }
    figures: Figures = {side: {} for side in SIDES}
    for side in SIDES:
        timings["rank"][side] = {}
        for name, queries in query_sets.items():
            results = out / f"{side}-{name}.jsonl"
            seconds = write_results(results, queries, sides[side])
            timings["rank"][side][name] = seconds
            log(f"{side}: {len(queries)} {name} queries ranked in {seconds:.1f} s -> {results.name}")
        figures[side].update(scoring.gold_figures(kpi, out / f"{side}-gold.jsonl", out / f"{side}-gold"))
        figures[side].update(scoring.case_figures(kpi, out / f"{side}-cases.jsonl", out / f"{side}-cases"))
        if not skip_artificial:
            figures[side].update(
                scoring.artificial_figures(kpi, out / f"{side}-artificial.jsonl", out / f"{side}-artificial")
            )
    return figures, timings, snapshot


# --- presentation -------------------------------------------------------------------------


def show(value: Any, row: Row) -> str:
    if value is None:
        return "n/a"
    if row.key == "cases_passed":
        return str(value)
    return f"{value:.1f}{row.unit}"


def passes(value: Any, row: Row) -> bool | None:
    if row.bar is None or value is None:
        return None
    return bool(value <= row.bar + 1e-9) if row.ceiling else bool(value >= row.bar - 1e-9)


def bar_text(row: Row) -> str:
    if row.bar is None:
        return "–"
    if row.ceiling:
        return f"<={row.bar:g}"
    return f">={row.bar:g}" if row.unit == "" else f"{row.bar:g}"


def table(figures: dict[str, dict[str, Any]]) -> str:
    """Ours nested-CV (the headline; named cases and generated queries are in-sample only), plain
    CV, in-sample, the gap in-sample minus nested, rank-bm25 (nothing to fit: one figure), the bar."""
    ours, bm25, nested, plain = (
        figures["ours"],
        figures["bm25"],
        figures["ours_nested"],
        figures["ours_plain"],
    )
    lines = [
        f"{'figure (dev half, 617 labels)':<28} {'nested CV':>9} {'plain CV':>9} {'in-sample':>10} "
        f"{'gap':>6} {'rank-bm25':>10} {'bar':>7}  pass",
        "-" * 92,
    ]
    for row in ROWS:
        a, b, c, p = ours.get(row.key), bm25.get(row.key), nested.get(row.key), plain.get(row.key)
        gap_text = f"{a - c:+.1f}" if isinstance(a, float) and isinstance(c, float) else ""
        a_text, b_text, c_text, p_text = show(a, row), show(b, row), show(c, row), show(p, row)
        if row.key == "cases_passed":
            a_text = f"{a}/{ours.get('cases_checked')}" if a is not None else "n/a"
            b_text = f"{b}/{bm25.get('cases_checked')}" if b is not None else "n/a"
            c_text, p_text, c = "in-sample", "", a
        if row.key == "artificial_accuracy":
            c_text, p_text, c = "in-sample", "", a
            if a is None:
                a_text = b_text = "skipped"
        verdict = passes(c, row)
        mark = "" if verdict is None else ("yes" if verdict else "NO")
        lines.append(
            f"{row.label:<28} {c_text:>9} {p_text:>9} {a_text:>10} {gap_text:>6} {b_text:>10} "
            f"{bar_text(row):>7}  {mark}"
        )
    notes = []
    for side in SIDES:
        f = figures[side]
        extra = []
        if f.get("must_reach"):
            extra.append(f"mustReach {f['must_reach']}")
        if f.get("cases_skipped"):
            extra.append(f"{f['cases_skipped']} case(s) skipped")
        if f.get("typo_accuracy") is not None:
            extra.append(
                f"typo accuracy {f['typo_accuracy']:.1f}%, "
                f"generated macro {f['artificial_macro_accuracy']:.1f}%"
            )
        if extra:
            notes.append(f"  {side}: " + "; ".join(extra))
    return "\n".join(lines + ([""] + notes if notes else []))


def rules_table(verdicts: dict[str, dict[str, Any]], folds: int) -> str:
    """Per switched rule: the outer folds whose nested (and plain) choice has it on, the
    constants chosen, the held-out P@1 it adds, and whether it ships."""
    lines = [
        f"{'rule (switch)':<22} {'nested on':>9} {'plain on':>9} {'held-out P@1':>13}  "
        f"{'chosen per outer fold':<26} {'ships':<5} rules.py",
        "-" * 98,
    ]
    for name, v in verdicts.items():
        chosen = " / ".join(f"{c:g}" for c in v["chosen"])
        lines.append(
            f"{name:<22} {v['nested_on']:>4}/{folds:<4} {v['plain_on']:>4}/{folds:<4} "
            f"{v['held_out_p1_gain']:>+13.2f}  {chosen:<26} {'yes' if v['keep'] else 'NO':<5} "
            f"{v['rules_py']:g}"
        )
    return "\n".join(lines)


# --- floors -------------------------------------------------------------------------------


def round_down(value: float) -> float:
    return math.floor(value * 10 + 1e-9) / 10


def round_up(value: float) -> float:
    return math.ceil(value * 10 - 1e-9) / 10


def floors_from(figures: dict[str, Any], margin: float) -> dict[str, float]:
    """Floors at the measured figures minus `margin` (ceilings plus it), to 0.1 on the safe side."""
    out: dict[str, float] = {}
    for key in FLOOR_KEYS:
        value = figures.get(key)
        if value is None:
            continue
        if isinstance(value, int):  # a count (cases passed): whole cases
            out[key] = value - math.ceil(margin)
        else:
            out[key] = round_up(value + margin) if key in CEILINGS else round_down(value - margin)
    return out


def check_floors(figures: dict[str, Any], floors: dict[str, float]) -> list[str]:
    failures = []
    for key, floor in floors.items():
        if key.startswith("_"):
            continue
        value = figures.get(key)
        if value is None:
            failures.append(f"{key}: not measured this run (floor {floor})")
        elif key in CEILINGS and value > floor + TOLERANCE + 1e-9:
            failures.append(f"{key}: {value:.1f} is above its ceiling {floor} by more than {TOLERANCE:g}")
        elif key not in CEILINGS and value < floor - TOLERANCE - 1e-9:
            failures.append(f"{key}: {value:.1f} is below its floor {floor} by more than {TOLERANCE:g}")
    return failures


def write_floors(path: Path, floors: dict[str, float]) -> None:
    body = {
        "_about": "dev-half floors for ours, nested topic-grouped CV (cases_passed in-sample); "
        "--check-floors fails a figure more than 1 point below its floor (never_returned is a "
        "ceiling). Set to this run's figures with python -m benchmarks.kpi --write-floors.",
        **floors,
    }
    path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")


# --- main ---------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.kpi",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="results and reports (default benchmarks/out)"
    )
    ap.add_argument("--shared", help="the shared folder (default $IMQ_SHARED or ../shared)")
    ap.add_argument(
        "--floors", type=Path, default=DEFAULT_FLOORS, help="floors file (default benchmarks/floors.json)"
    )
    ap.add_argument(
        "--check-floors",
        action="store_true",
        help="exit 1 when a dev-half figure is more than 1 point below its floor",
    )
    ap.add_argument(
        "--write-floors",
        action="store_true",
        help="set the floors to this run's figures (rounded down to 0.1)",
    )
    ap.add_argument("--skip-artificial", action="store_true", help="skip the 10,499 generated queries")
    ap.add_argument("--folds", type=int, default=cv.FOLDS, help="topic folds (default 5)")
    return ap


def cross_validate(shared: Path, out: Path, folds_wanted: int, snapshot: Any) -> dict[str, Any]:
    """Nested and plain topic-grouped CV of the switched rules (benchmarks/nested.py); each
    figure set scored by evaluate.py on a results file made from the in-sample one, its gold
    lines replaced by the held-out ones (the restraint sample lines are kept as they are)."""
    kpi = kpi_dir(shared)
    scorer = cv.load_scorer(kpi)
    gold = json.loads((kpi / "gold-dev.json").read_text(encoding="utf-8"))
    cases = cv.headline_cases(gold)
    folds = cv.topic_folds(cases, folds_wanted)
    evaluator = cv.Evaluator(snapshot.corpus)
    log(
        f"nested CV: {len(folds)} outer topic folds of {[len(f) for f in folds]}, "
        f"{nested.INNER_FOLDS} inner, {len(nested.SWITCHES)} switched rules"
    )
    outcome = nested.run(evaluator, scorer, cases, folds)
    log(f"{outcome.settings_ranked} settings ranked in {outcome.seconds:.0f} s")
    in_sample = (out / "ours-gold.jsonl").read_text(encoding="utf-8").splitlines()
    figures: dict[str, Any] = {}
    for name, per_fold in (("nested", outcome.nested), ("plain", outcome.plain)):
        lines = nested.lines_for(evaluator, cases, folds, per_fold)
        by_query = {line["query"]: line for line in lines}
        results = out / f"ours-{name}-gold.jsonl"
        with results.open("w", encoding="utf-8") as handle:
            for text in in_sample:
                line = by_query.get(json.loads(text)["query"])
                handle.write((json.dumps(line, ensure_ascii=False) if line else text) + "\n")
        figures[name] = scoring.gold_figures(kpi, results, out / f"ours-{name}-gold")
    return {
        "figures": figures,
        "folds": [len(f) for f in folds],
        "inner_folds": nested.INNER_FOLDS,
        "switches": {n: list(nested.grid(n, v)) for n, v in nested.shipped().items()},
        "rules": nested.verdicts(outcome),
        "fold_micro_p1": outcome.fold_p1,
        "nested_choices": outcome.nested,
        "plain_choices": outcome.plain,
        "settings_ranked": outcome.settings_ranked,
        "seconds": round(outcome.seconds, 1),
    }


def measure_restraint(shared: Path, out: Path) -> restraint.Restraint:
    """The in-sample run's restraint: its gold lines (right #1 marked low?) and the lines of
    evaluate.py's seeded quarantine sample (answered low or not at all?)."""
    kpi = kpi_dir(shared)
    lines: dict[str, dict[str, Any]] = {}
    for text in (out / "ours-gold.jsonl").read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        lines.setdefault(line["query"], line)
    emitted = [
        json.loads(t) for t in (out / "queries-gold.jsonl").read_text(encoding="utf-8").splitlines() if t
    ]
    sample = [lines[item["query"]] for item in emitted if item.get("set") == "restraint"]
    cases = cv.headline_cases(json.loads((kpi / "gold-dev.json").read_text(encoding="utf-8")))
    gold_lines = [lines[c["query"]] for c in cases]
    right = cv.per_query(cv.load_scorer(kpi), cases, gold_lines).hit
    return restraint.measure(
        gold_lines, [h == 1 for h in right], [bool(c.get("peer")) for c in cases], sample
    )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    shared = shared_dir(args.shared)
    start = time.perf_counter()
    figures, timings, snapshot = measure(shared, args.out.resolve(), args.skip_artificial)
    cv_start = time.perf_counter()
    crossed = cross_validate(shared, args.out.resolve(), args.folds, snapshot)
    figures["ours_nested"], figures["ours_plain"] = crossed["figures"]["nested"], crossed["figures"]["plain"]
    timings["cv"] = time.perf_counter() - cv_start
    held_back = measure_restraint(shared, args.out.resolve())
    written = unanswerable.measure(
        snapshot.index(), json.loads(unanswerable.DEFAULT_QUESTIONS.read_text(encoding="utf-8"))
    )
    timings["total"] = time.perf_counter() - start
    # The headline: the cross-validated gold figures; named cases and generated queries in-sample.
    headline = {**figures["ours"], **figures["ours_nested"]}

    print(
        f"KPI on {platform.node() or 'this machine'} — {machine()['platform']}, {machine()['cpus']} CPUs, "
        f"Python {machine()['python']}; shared {shared}"
    )
    print(table(figures))
    folds_p1 = crossed["fold_micro_p1"]
    print(
        f"\nnested CV: {len(crossed['folds'])} outer topic folds of {crossed['folds']} labels, "
        f"{crossed['inner_folds']} inner topic folds each; {crossed['settings_ranked']} settings ranked "
        f"in {crossed['seconds']:.0f} s\n"
        + "".join(
            f"  micro P@1 per held-out fold, {name + ':':<8} {' / '.join(f'{v:.1f}' for v in values)}\n"
            for name, values in folds_p1.items()
        )
    )
    print(rules_table(crossed["rules"], len(crossed["folds"])))
    print(
        f"\nrestraint (in-sample; low = {held_back.source}):\n"
        f"  quarantine sample answered low or empty  {held_back.quarantine_low:5.1f}%  "
        f"(n = {held_back.quarantine}, the more the better)\n"
        f"  right #1 marked low                      {held_back.right_low:5.1f}%  "
        f"(n = {held_back.right}, bar <= {restraint.MAX_RIGHT_LOW:g}%)"
    )
    print("\n" + unanswerable.report(written))
    rank = timings["rank"]
    print(
        "\nranking time: "
        + "; ".join(
            f"{side} " + ", ".join(f"{name} {secs:.1f} s" for name, secs in rank[side].items())
            for side in SIDES
        )
        + f"; whole run {timings['total']:.0f} s"
    )
    print(f"outputs: {args.out.resolve()}")
    print(example_kpi.section(shared))  # find_examples: its own section, not part of the gold figures

    floor_failures: list[str] = []
    if args.write_floors:
        write_floors(args.floors, floors_from(headline, 0.0))
        print(f"floors written to {args.floors}")
    elif args.check_floors:
        if not args.floors.exists():
            print(
                f"benchmarks: no floors file at {args.floors}; run with --write-floors first", file=sys.stderr
            )
            return 2
        floors = json.loads(args.floors.read_text(encoding="utf-8"))
        floor_failures = check_floors(headline, floors)
        for failure in floor_failures:
            print(f"FLOOR FAILED  {failure}")
        if not floor_failures:
            print(
                f"floors: all {sum(1 for k in floors if not k.startswith('_'))} nested-CV figures hold "
                f"({args.floors.name}, tolerance {TOLERANCE:g} point)"
            )

    summary = {
        "benchmark": "kpi",
        "machine": machine(),
        "seconds": timings,
        "bars": {r.key: r.bar for r in ROWS},
        "ours_nested": figures["ours_nested"],
        "ours_plain": figures["ours_plain"],
        "ours": figures["ours"],
        "bm25": figures["bm25"],
        "gap_micro_p1": round(figures["ours"]["micro_p1"] - figures["ours_nested"]["micro_p1"], 2),
        "cv": {k: v for k, v in crossed.items() if k != "figures"},
        "restraint": dataclasses.asdict(held_back),
        "restraint_questions": dataclasses.asdict(written),
        "pass": {r.key: passes(headline.get(r.key), r) for r in ROWS if r.bar is not None},
        "floors": {"checked": bool(args.check_floors), "failures": floor_failures},
    }
    print(json.dumps(summary, ensure_ascii=False, sort_keys=False))
    return 1 if floor_failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Confidence calibration and restraint: does `low` mark the answers nobody should trust?

    python -m benchmarks.confidence [--shared PATH] [--out DIR]

Builds the index from <shared>/site and ranks every gold query (gold-dev.json) and every
quarantined query the sites have no answer for (quarantine.json `negative`, plus the seeded
400-query restraint sample evaluate.py draws from it). evaluate.py says which gold queries are
right at #1. Printed, then one JSON line:

  calibration   the score under which at most 5 % of the right #1 hits fall (the low threshold
                that would meet the bar), and the lowest score above which #1 is right at least
                HIGH_PRECISION of the time (the high threshold)
  current       with rules.py's thresholds: the share of right #1 answers marked low (bar: at
                most 5 %; the hits' own confidence, which the coverage rules join, and beside it
                by the score alone), the share of quarantined queries answered weak or not at all, and
                the precision of #1 per confidence level

Scores depend on the ranking: after a ranking change, run this and set CONFIDENCE_LOW_SCORE /
CONFIDENCE_HIGH_SCORE in ranker/rules.py to what it prints. Never asserts.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import cv, scoring
from .machine import machine
from .paths import REPO, kpi_dir, shared_dir, site_dir

DEFAULT_OUT = REPO / "benchmarks" / "out"
WRONG_LOW_BAR = 5.0  # percent of right #1 answers that may be marked low
MIN_SUPPORT = 30  # a high threshold must hold over at least this many gold queries
HIGH_PRECISION = 0.9  # above the high threshold, #1 is right at least this often


def log(message: str) -> None:
    print(f"[confidence] {message}", file=sys.stderr, flush=True)


def top_hit(line: dict[str, Any], external: bool) -> dict[str, Any] | None:
    """The first hit on the side the label is scored against."""
    return next((h for h in line["results"] if h["external"] == external), None)


def low_threshold(right_scores: Sequence[float], share: float) -> float:
    """The largest threshold (to 0.1, rounded down) that marks at most `share` of these low."""
    ordered = sorted(right_scores)
    allowed = math.floor(len(ordered) * share)  # this many may fall under the threshold
    return math.floor(ordered[allowed] * 10) / 10 if ordered else 0.0


def high_threshold(pairs: Sequence[tuple[float, bool]], precision: float) -> float | None:
    """The lowest score s such that #1 is right at least `precision` of the time over every
    gold query scoring s or more (with MIN_SUPPORT queries at least), to 0.1 rounded up."""
    ordered = sorted(pairs, key=lambda p: -p[0])
    right = 0
    best: float | None = None
    for count, (score, ok) in enumerate(ordered, 1):
        right += ok
        if count >= MIN_SUPPORT and right / count >= precision:
            best = score
    return math.ceil(best * 10) / 10 if best is not None else None


def held_out_right_low(pairs: Sequence[tuple[float, bool]], cases: Sequence[dict[str, Any]]) -> float:
    """The low threshold calibrated on four topic folds (benchmarks.cv's folds), applied to the
    fifth: the share of right #1 answers marked low on topics the threshold never saw."""
    marked = right = 0
    folds = cv.topic_folds(cases, cv.FOLDS)
    for held in range(len(folds)):
        train = [pairs[i][0] for i in cv.training_indices(folds, held) if pairs[i][1]]
        threshold = low_threshold(train, WRONG_LOW_BAR / 100)
        for i in folds[held]:
            if pairs[i][1]:
                right += 1
                marked += pairs[i][0] < threshold
    return 100 * marked / max(1, right)


def measure(shared: Path, out: Path) -> dict[str, Any]:
    from imqueue_mcp.build_index.search_cli import batch_line
    from imqueue_mcp.docsource import build
    from imqueue_mcp.ranker import rules
    from imqueue_mcp.ranker.confidence import confidence_of

    kpi = kpi_dir(shared)
    out.mkdir(parents=True, exist_ok=True)
    log(f"building the index from {site_dir(shared)}")
    index = build(mirror=site_dir(shared)).index()

    gold = json.loads((kpi / "gold-dev.json").read_text(encoding="utf-8"))["queries"]
    queries_file = out / "confidence-queries.jsonl"
    scoring.emit_gold_queries(kpi, queries_file)  # gold queries plus the seeded restraint sample
    emitted = [json.loads(line) for line in queries_file.read_text(encoding="utf-8").splitlines() if line]
    sample = [item["query"] for item in emitted if item.get("set") == "restraint"]
    lines = {item["query"]: batch_line(index, item["query"]) for item in emitted}
    results = out / "confidence-gold.jsonl"
    results.write_text("".join(json.dumps(line) + "\n" for line in lines.values()), encoding="utf-8")
    judged = scoring.gold_figures(kpi, results, out / "confidence-gold")
    verdicts = json.loads((out / "confidence-gold.json").read_text(encoding="utf-8"))["results"]

    peer = {(q["query"], q["target"]) for q in gold if q.get("peer")}
    topic = {(q["query"], q["target"]): q["topic"] for q in gold}
    pairs: list[tuple[float, bool]] = []
    cases: list[dict[str, Any]] = []
    right_levels: list[str] = []  # the right #1 hits' own confidence (score and coverage rules)
    for verdict in verdicts:
        hit = top_hit(lines[verdict["q"]], (verdict["q"], verdict["g"]) in peer)
        if hit is not None:
            pairs.append((hit["score"], verdict["t"] == 1))
            cases.append({"topic": topic.get((verdict["q"], verdict["g"]), verdict["l"])})
            if verdict["t"] == 1:
                right_levels.append(hit["confidence"])
    right = [score for score, ok in pairs if ok]
    held_out_low = held_out_right_low(pairs, cases)

    negatives = [item["query"] for item in json.loads((kpi / "quarantine.json").read_text())["negative"]]

    def answered_low(query: str) -> bool:
        response = index.search(query, limit=6)
        return not response.results or response.weak

    score_low_share = 100 * sum(1 for s in right if confidence_of(s) == "low") / max(1, len(right))
    low_share = 100 * right_levels.count("low") / max(1, len(right_levels))
    by_level: dict[str, list[bool]] = {"high": [], "medium": [], "low": []}
    for score, ok in pairs:
        by_level[confidence_of(score)].append(ok)
    return {
        "gold_queries": len(pairs),
        "right_at_1": len(right),
        "micro_p1": judged["micro_p1"],
        "thresholds": {"low": rules.CONFIDENCE_LOW_SCORE, "high": rules.CONFIDENCE_HIGH_SCORE},
        "calibrated": {
            "low": low_threshold(right, WRONG_LOW_BAR / 100),
            "high": high_threshold(pairs, HIGH_PRECISION),
        },
        "right_marked_low": low_share,
        "right_marked_low_by_score": score_low_share,
        "right_marked_low_held_out": held_out_low,
        "levels": {
            level: {"share": 100 * len(oks) / max(1, len(pairs)), "p1": 100 * sum(oks) / max(1, len(oks))}
            for level, oks in by_level.items()
        },
        "restraint_sample_low": 100 * sum(map(answered_low, sample)) / max(1, len(sample)),
        "restraint_sample": len(sample),
        "quarantine_low": 100 * sum(map(answered_low, negatives)) / max(1, len(negatives)),
        "quarantine": len(negatives),
        "judged": str(out / "confidence-gold.txt"),
    }


def report(figures: dict[str, Any]) -> str:
    t, c = figures["thresholds"], figures["calibrated"]
    lines = [
        f"gold queries {figures['gold_queries']}, right at #1 {figures['right_at_1']} "
        f"(micro P@1 {figures['micro_p1']:.1f}, in-sample)",
        f"thresholds in rules.py      low < {t['low']:g}, high >= {t['high']:g}",
        f"calibrated on this run      low < {c['low']:g}, high >= {c['high']}",
        f"right #1 marked low         {figures['right_marked_low']:.1f}%   (bar <= {WRONG_LOW_BAR:g}%; "
        "the hits' own confidence: score and coverage)",
        f"  by the score alone        {figures['right_marked_low_by_score']:.1f}%   "
        "(what the low threshold decides)",
        f"  same, threshold held out  {figures['right_marked_low_held_out']:.1f}%   "
        "(calibrated on 4 topic folds, applied to the 5th; the score alone)",
        f"quarantine answered low     {figures['quarantine_low']:.1f}%   "
        f"({figures['quarantine']} queries no page answers; weak or empty)",
        f"restraint sample low        {figures['restraint_sample_low']:.1f}%   "
        f"(evaluate.py's seeded sample of {figures['restraint_sample']})",
        "",
        f"{'level':<8} {'share of gold':>14} {'P@1 of #1':>10}",
    ]
    for level, row in figures["levels"].items():
        lines.append(f"{level:<8} {row['share']:>13.1f}% {row['p1']:>9.1f}%")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.confidence",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--shared", help="the shared folder (default $IMQ_SHARED or ../shared)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results (default benchmarks/out)")
    args = ap.parse_args(argv)
    figures = measure(shared_dir(args.shared), args.out.resolve())
    print(report(figures))
    print(json.dumps({"benchmark": "confidence", "machine": machine(), **figures}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

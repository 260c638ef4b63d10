"""Restraint: is a weak answer called weak? Two shares, from results lines the KPI already wrote.

    quarantine_low   of the queries no page answers (quarantine.json, the restraint sample
                     evaluate.py draws), the share whose best hit is `low` or that return nothing
    right_low        of the gold queries whose #1 is right, the share whose #1 is marked `low`

What `low` is, in order of preference (the first the ranker offers; `source` names it):
  1. the hit's own "confidence" field in the results line;
  2. imqueue_mcp.ranker.confidence.confidence_of(score), when the ranker has that module;
  3. neither: a stand-in, a score threshold chosen here (choose_threshold) so that at most
     MAX_RIGHT_LOW percent of right #1 answers fall under it.
choose_threshold and threshold_curve are what a ranker change calls to pick its threshold.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_RIGHT_LOW = 5.0  # percent of right #1 answers that may be called low (issue 11)

Line = Mapping[str, Any]  # one results line: {"query", "results": [{"u", "external", "score", ...}]}
Hit = Mapping[str, Any]


@dataclass(frozen=True)
class Restraint:
    quarantine_low: float  # percent
    right_low: float  # percent
    quarantine: int  # queries in the quarantine set
    right: int  # gold queries right at #1
    source: str  # what `low` was read from
    threshold: float | None = None  # the score threshold, when `low` is one


@dataclass(frozen=True)
class ThresholdPoint:
    threshold: float  # a score under this is low
    right_low: float  # percent of right #1 scores under it
    quarantine_low: float  # percent of quarantine queries whose best score is under it (or empty)


def best_hit(line: Line, external: bool | None = None) -> Hit | None:
    """The first hit (on one side: imqueue.com when external, imqueue.org when not; any if None)."""
    hits: Sequence[Hit] = line.get("results") or []
    for hit in hits:
        if external is None or bool(hit.get("external")) == external:
            return hit
    return None


def share(count: int, total: int) -> float:
    return 100.0 * count / total if total else 0.0


def threshold_curve(
    right_scores: Sequence[float], quarantine_best: Sequence[float | None], thresholds: Sequence[float]
) -> list[ThresholdPoint]:
    """Both shares at each threshold; a quarantine query with no hit (None) is always low."""
    return [
        ThresholdPoint(
            t,
            share(sum(1 for s in right_scores if s < t), len(right_scores)),
            share(sum(1 for s in quarantine_best if s is None or s < t), len(quarantine_best)),
        )
        for t in thresholds
    ]


def choose_threshold(
    right_scores: Sequence[float],
    quarantine_best: Sequence[float | None],
    max_right_low: float = MAX_RIGHT_LOW,
) -> ThresholdPoint:
    """The highest threshold that calls at most `max_right_low` percent of right #1 answers low
    (the most restraint that bar allows), with the shares it gives."""
    candidates = sorted({0.0, *right_scores})
    allowed = [
        p for p in threshold_curve(right_scores, quarantine_best, candidates) if p.right_low <= max_right_low
    ]
    return allowed[-1]


def ranker_confidence() -> Callable[[float], str] | None:
    """The ranker's score -> confidence function, when it has one."""
    try:
        module = importlib.import_module("imqueue_mcp.ranker.confidence")
    except ImportError:
        return None
    function = getattr(module, "confidence_of", None)
    return function if callable(function) else None


def measure(
    gold_lines: Sequence[Line],
    right_at_1: Sequence[bool],
    peer: Sequence[bool],
    quarantine_lines: Sequence[Line],
    use_ranker: bool = True,
) -> Restraint:
    """gold_lines, right_at_1 and peer are aligned (one per gold query: its results line, whether
    evaluate.py counts its #1 right, whether it is scored on imqueue.com hits). use_ranker=False
    skips the ranker's confidence_of (to see the stand-in threshold beside it)."""
    right_hits = [
        hit
        for line, ok, side in zip(gold_lines, right_at_1, peer, strict=True)
        if ok and (hit := best_hit(line, side)) is not None
    ]
    quarantine_hits = [best_hit(line) for line in quarantine_lines]
    every = [*right_hits, *(h for h in quarantine_hits if h is not None)]

    if every and all("confidence" in hit for hit in every):

        def low(hit: Hit | None) -> bool:
            return hit is None or hit["confidence"] == "low"

        source, threshold = "the hits' own confidence field", None
    elif use_ranker and (confidence_of := ranker_confidence()) is not None:

        def low(hit: Hit | None) -> bool:
            return hit is None or confidence_of(float(hit["score"])) == "low"

        source, threshold = "ranker.confidence.confidence_of(score)", None
    else:
        point = choose_threshold(
            [float(h["score"]) for h in right_hits],
            [None if h is None else float(h["score"]) for h in quarantine_hits],
        )
        cut = point.threshold

        def low(hit: Hit | None) -> bool:
            return hit is None or float(hit["score"]) < cut

        source = f"stand-in: the ranker has no confidence; score < {cut:.4g} (calibrated here)"
        threshold = cut
    return Restraint(
        quarantine_low=share(sum(1 for h in quarantine_hits if low(h)), len(quarantine_hits)),
        right_low=share(sum(1 for h in right_hits if low(h)), len(right_hits)),
        quarantine=len(quarantine_hits),
        right=len(right_hits),
        source=source,
        threshold=threshold,
    )

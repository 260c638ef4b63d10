"""How much a hit says: high / medium / low, from its score and the share of the question it matches.

A score is the ranker's final score (evidence x coverage x multipliers). The thresholds live in
ranker.rules (CONFIDENCE_LOW_SCORE, CONFIDENCE_HIGH_SCORE) and are calibrated on the KPI's gold
queries by `python -m benchmarks.confidence`:

    low     under the score that 95 % of the gold queries answered correctly at #1 reach
            (so at most 5 % of right answers are called weak)
    high    at or over the score above which the #1 hit of a gold query is right at least
            90 % of the time
    medium  between the two

except that a hit scoring at least CONFIDENCE_LOW_PER_WEIGHT times what the query's words weigh
is not low for its score: a one-word query ("tracing") has too little weight to reach the
threshold however well a record answers it. And whatever its score, a hit is low when it matches
under CONFIDENCE_MIN_COVERAGE of the query's idf mass, subject words that no record holds counted
as unmatched: a question about something the docs never name ("deploy to AWS Lambda") can still
score well on its other words, and a confident answer to half the question is the wrong answer.
When the query names that thing as a proper name ("Dapr", "Grafana": capitalised mid-sentence,
not an error code), the hit needs CONFIDENCE_NAMED_COVERAGE instead.

A response whose best hit is low is weak: nothing in the corpus matches the query well, and
the answer says so (SearchResponse.weak).
"""

from __future__ import annotations

import math
from typing import Literal

from . import rules

Confidence = Literal["high", "medium", "low"]


def confidence_of(
    score: float, coverage: float = 1.0, named_unknown: bool = False, weight: float = math.inf
) -> Confidence:
    """`named_unknown`: the query names something no record holds (QueryPlan.named_unknown), which
    raises the coverage a hit needs to CONFIDENCE_NAMED_COVERAGE. `weight`: what the query's words
    weigh (QueryPlan.full_weight), on the scale of `score`; unknown, only the score threshold counts."""
    if coverage < coverage_needed(named_unknown):
        return "low"
    if score >= rules.CONFIDENCE_HIGH_SCORE:
        return "high"
    if score < low_score(weight):
        return "low"
    return "medium"


def low_score(weight: float = math.inf) -> float:
    """The score under which a hit is low, for a query whose words weigh `weight`."""
    return min(rules.CONFIDENCE_LOW_SCORE, rules.CONFIDENCE_LOW_PER_WEIGHT * weight)


def coverage_needed(named_unknown: bool) -> float:
    return rules.CONFIDENCE_NAMED_COVERAGE if named_unknown else rules.CONFIDENCE_MIN_COVERAGE

"""Nested topic-grouped cross-validation of the ranking rules: is a rule on because it carries to
topics it was not chosen on?

Each rule of SWITCHES is a switch with one or two constants (its grid; the first value is the
rule off). Three figures, every one scored by evaluate.py on a results file:

    nested CV   per outer topic fold, the rules are chosen on the other folds only: an inner
                topic-grouped CV over those (INNER_FOLDS folds) fits the switches by coordinate
                ascent on each inner training set, and a rule is on when, summed over the inner
                folds, turning it on (at its fitted constant) raises the inner held-out
                objective (no difference either way: on when most inner fits have it on); its
                constant is the one the inner fits picked most. The outer fold
                is ranked with that choice. The headline.
    plain CV    per outer fold, the switches fitted by the same ascent on the other folds, no
                inner check: the choice a tuner makes on the labels at hand.
    in-sample   rules.py as shipped, on every label.

The objective is micro MRR@target + P@1 (evaluate.py's own definitions, through cv.per_query).
Every setting is ranked once over all the labels and kept (memo), so folds that visit the same
setting share it: the cost is the number of distinct settings (each ~0.7 s here), not folds x
settings. Only query-time constants are switched, so no setting rebuilds the postings (a
build-time one would be rebuilt once per value: cv.Evaluator keeps the last few builds).

A rule ships when the nested CV keeps it: on in a majority of the outer folds' choices, and
turning it off in those choices does not raise the held-out figure (`verdicts`).
"""

from __future__ import annotations

import sys
import time
import types
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import cv

INNER_FOLDS = 4
# Each rule's switch: off first, then the one or two constants it may take when on. The
# rules.py value joins the grid when it is none of these.
SWITCHES: dict[str, tuple[float, ...]] = {
    "PAGE_FUSION": (0.0, 0.2, 0.5),
    "FEEDBACK_WEIGHT": (0.0, 0.3),
    "ANSWER_BOOST": (0.0, 0.3),
    "SYMPTOM_BOOST": (0.0, 0.6),
    "CHOICE_BOOST": (0.0, 0.3),
    "SYMBOL_NAME_BOOST": (0.0, 0.25),
    "PHRASE_EXACT_BOOST": (0.0, 0.6),
    "PHRASE_PART_BOOST": (0.0, 0.25),
    "PHRASE_CONTENT_BOOST": (0.0, 0.3),
    "SHARED_RUN_BOOST": (0.0, 0.25),
    "COVERAGE_FLOOR": (0.0, 0.34),
    # Off is coverage's usual power; on, a long question's coverage weighs more (rules.py).
    "LONG_COVERAGE_POWER": (0.375, 0.75),
    # Off: a symbol's doc comment is not indexed at all (a build-time switch: one build per value).
    "SYMBOL_DOC_WEIGHT": (0.0, 0.2, 0.45),
    # Not a rule but the IDF's flattening (idf ** IDF_POWER): 0.6 as calibrated on the site
    # labels, 0.8 trusting rare words more, which long questions lean on.
    "IDF_POWER": (0.6, 0.8),
    # Off: every term of an identifier weighs a whole word; on, a written token's n terms weigh
    # (1/n)^p each (rules.py).
    "TOKEN_TERMS_POWER": (0.0, 0.75),
}
# Judged and shipped, then taken out of the grid for its cost (a build-time switch doubles the
# settings ranked): LISTING_DEMOTION (1.0 off, 0.5 on) was on in 5 of 5 outer folds of both the
# site labels' CV and the joint one, with listings read from the feed's kinds and again with
# them found by their text (docs/ranking-kpi.md, 2026-12-05).
# Feedback re-weighs the page scores, which only PAGE_FUSION brings into the ranking.
REQUIRES = {"FEEDBACK_WEIGHT": "PAGE_FUSION"}
MIN_GAIN = cv.MIN_GAIN  # objective points a move must add to be taken

Setting = dict[str, float]


def log(message: str) -> None:
    print(f"[kpi nested] {message}", file=sys.stderr, flush=True)


def shipped() -> Setting:
    rules = cv.rules_module()
    return {name: float(getattr(rules, name)) for name in SWITCHES}


def grid(name: str, value: float) -> tuple[float, ...]:
    """The switch's values: off first, then its constants (and the rules.py value), ascending."""
    off, *others = SWITCHES[name]
    return (off, *sorted({value, *others} - {off}))


@dataclass
class Memo:
    """Per setting, per label (case order): the target at #1 (0/1) and 1 / its position."""

    evaluator: cv.Evaluator
    scorer: types.ModuleType
    cases: Sequence[Mapping[str, Any]]
    table: dict[tuple[float, ...], tuple[Any, Any]] = field(default_factory=dict)
    seconds: float = 0.0

    def scored(self, setting: Setting) -> tuple[Any, Any]:
        import numpy as np

        key = tuple(setting[name] for name in SWITCHES)
        found = self.table.get(key)
        if found is None:
            start = time.perf_counter()
            queries = [str(case["query"]) for case in self.cases]
            per = cv.per_query(self.scorer, self.cases, self.evaluator.lines(setting, queries))
            found = self.table[key] = (np.array(per.hit), np.array(per.reciprocal))
            self.seconds += time.perf_counter() - start
        return found

    def objective(self, setting: Setting, indices: Any) -> float:
        """MRR@target + P@1, micro, in points, over the labels at `indices` (a numpy array)."""
        hit, reciprocal = self.scored(setting)
        return float(100 * (hit[indices].sum() + reciprocal[indices].sum()) / max(len(indices), 1))

    def p1(self, setting: Setting, indices: Any) -> float:
        return float(100 * self.scored(setting)[0][indices].sum() / max(len(indices), 1))


def ascend(memo: Memo, train: Any, start: Setting) -> Setting:
    """One coordinate-ascent sweep over the switches (SWITCHES order) on the training labels:
    each grid value tried, the best kept when it adds more than MIN_GAIN."""
    current = dict(start)
    best = memo.objective(current, train)
    for name in SWITCHES:
        for value in grid(name, start[name]):
            if value == current[name]:
                continue
            score = memo.objective({**current, name: value}, train)
            if score > best + MIN_GAIN:
                current[name], best = value, score
    return current


def on_value(name: str, fits: Sequence[Setting], base: Setting) -> float:
    """The constant the fits picked most for a rule they turned on (ties: the smaller; none on:
    the rules.py value, or the switch's first constant when rules.py has the rule off)."""
    off = SWITCHES[name][0]
    picked = Counter(fit[name] for fit in fits if fit[name] != off)
    if picked:
        top = max(picked.values())
        return min(v for v, n in picked.items() if n == top)
    return base[name] if base[name] != off else grid(name, base[name])[1]


def select(memo: Memo, cases: Sequence[Mapping[str, Any]], train: Sequence[int], base: Setting) -> Setting:
    """The rules chosen on `train` by an inner topic-grouped CV (see the module map)."""
    import numpy as np

    inner = cv.topic_folds([cases[i] for i in train], INNER_FOLDS)
    pieces = [
        (np.array([train[i] for i in fold]), np.array(sorted(set(train) - {train[i] for i in fold})))
        for fold in inner
    ]
    fits = [ascend(memo, inner_train, base) for _held, inner_train in pieces]
    chosen: Setting = {}
    for name in SWITCHES:
        value = on_value(name, fits, base)
        off = SWITCHES[name][0]
        gain = sum(
            len(held)
            * (memo.objective({**fit, name: value}, held) - memo.objective({**fit, name: off}, held))
            for (held, _t), fit in zip(pieces, fits, strict=True)
        )
        # no held-out difference either way: the inner fits' majority stands
        tie = abs(gain) < 1e-9 and 2 * sum(1 for fit in fits if fit[name] != off) > len(fits)
        chosen[name] = value if gain > 1e-9 or tie else off
    return chosen


@dataclass
class Outcome:
    nested: list[Setting]  # per outer fold, the rules chosen by its inner CV
    plain: list[Setting]  # per outer fold, the ascent on its training folds
    held_out_gain: dict[str, float]  # per rule: held-out P@1 points it adds in the nested choices
    settings_ranked: int
    seconds: float
    fold_p1: dict[str, list[float]]  # nested / plain / rules: micro P@1 per held-out fold


def run(
    evaluator: cv.Evaluator,
    scorer: types.ModuleType,
    cases: Sequence[Mapping[str, Any]],
    folds: Sequence[Sequence[int]],
) -> Outcome:
    import numpy as np

    start = time.perf_counter()
    memo = Memo(evaluator, scorer, cases)
    base = shipped()
    nested, plain = [], []
    for f in range(len(folds)):
        train = cv.training_indices(folds, f)
        nested.append(select(memo, cases, train, base))
        plain.append(ascend(memo, np.array(train), base))
        log(
            f"outer fold {f + 1}/{len(folds)}: nested on "
            + ", ".join(n for n in SWITCHES if nested[-1][n] != SWITCHES[n][0])
            + f" ({len(memo.table)} settings ranked, {time.perf_counter() - start:.0f} s)"
        )
    gain: dict[str, float] = {}
    everyone = len(cases)
    for name in SWITCHES:
        off = SWITCHES[name][0]
        total = 0.0
        for f, fold in enumerate(folds):
            held = np.array(fold)
            if nested[f][name] != off:
                total += len(fold) * (memo.p1(nested[f], held) - memo.p1({**nested[f], name: off}, held))
        gain[name] = round(total / everyone, 2)
    fold_p1 = {
        "nested": [round(memo.p1(nested[f], np.array(fold)), 1) for f, fold in enumerate(folds)],
        "plain": [round(memo.p1(plain[f], np.array(fold)), 1) for f, fold in enumerate(folds)],
        "rules": [round(memo.p1(base, np.array(fold)), 1) for fold in folds],
    }
    return Outcome(nested, plain, gain, len(memo.table), time.perf_counter() - start, fold_p1)


def verdicts(outcome: Outcome) -> dict[str, dict[str, Any]]:
    """Per rule: in how many outer folds the nested CV turned it on (and the plain CV), the
    constants it chose, the held-out P@1 it added, and whether it ships."""
    out: dict[str, dict[str, Any]] = {}
    folds = len(outcome.nested)
    for name, values in SWITCHES.items():
        off = values[0]
        chosen = [s[name] for s in outcome.nested]
        on = sum(1 for v in chosen if v != off)
        out[name] = {
            "nested_on": on,
            "plain_on": sum(1 for s in outcome.plain if s[name] != off),
            "chosen": chosen,
            "held_out_p1_gain": outcome.held_out_gain[name],
            "keep": on * 2 > folds and outcome.held_out_gain[name] >= 0,
            "rules_py": shipped()[name],
        }
    for name, needed in REQUIRES.items():  # a rule that acts only through another ships with it
        out[name]["keep"] = out[name]["keep"] and out[needed]["keep"]
    return out


def lines_for(
    evaluator: cv.Evaluator,
    cases: Sequence[Mapping[str, Any]],
    folds: Sequence[Sequence[int]],
    per_fold: Sequence[Setting],
) -> list[dict[str, Any]]:
    """One results line per label, ranked with the setting of the fold it is held out in."""
    return cv.cross_validated_lines(evaluator, cases, folds, [dict(s) for s in per_fold])

"""Topic-grouped cross-validation of the ranker's constants: does the tuning carry to new topics?

    topic_folds          the dev labels split into k folds by topic (a topic never in two folds)
    tunable_constants    every numeric constant of ranker/rules.py, dicts flattened (FIELD_WEIGHTS.title)
    candidate_grid       each constant's small grid of values to try (GRIDS, else multiples of it)
    overridden           a setting applied to ranker.rules for the length of a block
    Evaluator            ranks queries under a setting; rebuilds the index only when a constant
                         read while building it changed (found by watching the build read rules)
    fit                  coordinate ascent per fold on the other folds' labels (MRR + P@1, micro)
    StoredConstants      benchmarks/cv-constants.json: the fitted constants of each fold, checked
                         against rules.py's names and the labels they were fitted on
    cross_validated_lines  every gold query ranked with the constants of the fold it is held out in

The scorer is ../shared/kpi/evaluate.py itself, imported at run time (load_scorer), so fitting
uses the harness's own definitions of a position, P@1 and MRR@target; the headline figures
are then computed by running evaluate.py on a results file, as for the in-sample run.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import time
import types
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .paths import REPO

DEFAULT_CONSTANTS = REPO / "benchmarks" / "cv-constants.json"
FOLDS = 5
# Coordinate-ascent sweeps over every constant (more with --fit-passes; a sweep that changes
# nothing ends the fit).
PASSES = 1
MIN_GAIN = 0.05  # objective points a value must add over the current one to be taken
# The evaluation depth, and the code-example index's cap: search_docs never reads them, so no
# gold label can fit them.
UNTUNED = frozenset({"BATCH_DEPTH", "EXAMPLE_PARENT_CAP"})

Value = bool | int | float
Setting = dict[str, Value]  # flattened constant name -> value
Line = dict[str, Any]  # one results line, as build_index.search_cli.batch_line writes it

# Candidate values per constant. Whole-number constants (caps, minimum lengths, counts) get
# their neighbours; a constant not named here gets multiples of its rules.py value
# (FACTORS), shares clipped to 1. A grid is fixed for a fit: it is built around the rules.py
# value, not around the value the ascent has reached.
GRIDS: dict[str, tuple[Value, ...]] = {
    "MIN_PREFIX": (3, 4, 5, 6),
    "MIN_TYPO": (4, 5, 6),
    "LONG_QUERY_TERMS": (2, 3, 4, 5),
    "COMMON_TERM_MIN": (50, 100, 200),
    "PER_PARENT_CAP": (1, 2, 3),
    "PER_CLASS_CAP": (1, 2, 3),
    "PER_MEMBER_CAP": (1, 2, 3),
    "PER_PACKAGE_CAP": (2, 3, 4),
    "SHARED_RUN_MIN": (2, 3, 4),
    "MIN_SYMBOL_NAME": (3, 4, 5),
    "PEER_SEAT": (False, True),
}
FACTORS = (0.5, 0.75, 1.0, 1.33, 2.0)
ZERO_GRID = (0.0, 0.1, 0.25, 0.5)  # for a float constant that is 0 in rules.py (a rule switched off)
SHARE_WORDS = ("SHARE", "FLOOR", "CUT", "RELEVANCE")  # names of constants that are shares of 1
# A rule's "off" value is in its grid, so a fold's fit can drop a rule its training topics do
# not need (a boost of 0, a demotion of 1, no coverage floor): a rule earns its place by
# raising the held-out figures.
OFF_VALUES = {"_BOOST": 0.0, "_DEMOTION": 1.0, "COVERAGE_FLOOR": 0.0}


def log(message: str) -> None:
    print(f"[kpi cv] {message}", file=sys.stderr, flush=True)


# --- the scorer ---------------------------------------------------------------------------


def load_scorer(kpi: Path) -> types.ModuleType:
    """../shared/kpi/evaluate.py as a module (read at run time, never copied)."""
    spec = importlib.util.spec_from_file_location("kpi_evaluate", kpi / "evaluate.py")
    if spec is None or spec.loader is None:
        raise SystemExit(f"benchmarks: cannot import {kpi / 'evaluate.py'}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def headline_cases(gold: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The labels evaluate.py's headline scores: every gold query but the `seo` ones."""
    return [dict(case) for case in gold["queries"] if case.get("src") != "seo"]


@dataclass(frozen=True)
class PerQuery:
    """Per case, in case order: the target is #1 (0/1), and 1 / the target's position (0 past 50)."""

    hit: tuple[float, ...]
    reciprocal: tuple[float, ...]

    def objective(self, indices: Sequence[int]) -> float:
        """MRR@target + P@1, micro, in points, over the given cases."""
        if not indices:
            return 0.0
        return (
            100
            * (sum(self.hit[i] for i in indices) + sum(self.reciprocal[i] for i in indices))
            / len(indices)
        )

    def p1(self, indices: Sequence[int]) -> float:
        return 100 * sum(self.hit[i] for i in indices) / len(indices) if indices else 0.0


def per_query(
    scorer: types.ModuleType, cases: Sequence[Mapping[str, Any]], lines: Sequence[Line]
) -> PerQuery:
    """Score results lines (one per case, same order) with evaluate.py's own evaluate()."""
    by_query = {line["query"]: [scorer.parse_hit(hit) for hit in line["results"]] for line in lines}
    results = scorer.evaluate(list(cases), lambda query: by_query.get(query, []))
    positions = [int(r["targetPosition"]) for r in results]
    return PerQuery(
        tuple(1.0 if p == 1 else 0.0 for p in positions),
        tuple(1.0 / p if p else 0.0 for p in positions),
    )


# --- folds --------------------------------------------------------------------------------


def topic_folds(cases: Sequence[Mapping[str, Any]], k: int) -> list[list[int]]:
    """Case indices per fold. Topics go largest first (ties by name) into the fold with the
    fewest cases so far (ties: the lowest fold): deterministic and close to balanced."""
    if k < 2:
        raise ValueError(f"cross-validation needs at least 2 folds, got {k}")
    sizes = Counter(str(case["topic"]) for case in cases)
    if len(sizes) < k:
        raise ValueError(f"{len(sizes)} topic(s) cannot fill {k} folds")
    fold_of: dict[str, int] = {}
    totals = [0] * k
    for topic in sorted(sizes, key=lambda t: (-sizes[t], t)):
        chosen = min(range(k), key=lambda f: (totals[f], f))
        fold_of[topic] = chosen
        totals[chosen] += sizes[topic]
    return [[i for i, case in enumerate(cases) if fold_of[str(case["topic"])] == f] for f in range(k)]


def training_indices(folds: Sequence[Sequence[int]], held_out: int) -> list[int]:
    return sorted(i for f, fold in enumerate(folds) if f != held_out for i in fold)


# --- the constants ------------------------------------------------------------------------


def rules_module() -> types.ModuleType:
    from imqueue_mcp.ranker import rules

    return rules


def tunable_constants() -> Setting:
    """Every upper-case numeric (or boolean) constant of rules.py; a dict of numbers becomes one
    constant per key, named NAME.key."""
    rules = rules_module()
    out: Setting = {}
    for name in sorted(vars(rules)):
        if not name.isupper() or name in UNTUNED:
            continue
        value = getattr(rules, name)
        if isinstance(value, bool | int | float):
            out[name] = value
        elif (
            isinstance(value, dict)
            and value
            and all(isinstance(v, bool | int | float) for v in value.values())
        ):
            for key, item in value.items():
                out[f"{name}.{key}"] = item
    return out


def candidate_grid(name: str, value: Value) -> tuple[Value, ...]:
    """The values tried for one constant (its rules.py value among them)."""
    head = name.split(".", 1)[0]
    if head in GRIDS:
        grid = GRIDS[head]
        return grid if value in grid else tuple(sorted({*grid, value}))
    if isinstance(value, bool):
        return (False, True)
    if isinstance(value, int):
        return tuple(sorted({max(0, value - 1), value, value + 1}))
    if value == 0:
        return ZERO_GRID
    share = any(word in head for word in SHARE_WORDS)
    values = {float(f"{value * f:.3g}") for f in FACTORS}
    if share:
        values = {min(v, 1.0) for v in values}
    off = {v for suffix, v in OFF_VALUES.items() if head.endswith(suffix)}
    return tuple(sorted(values | {value} | off))


@contextmanager
def overridden(setting: Mapping[str, Value]) -> Iterator[None]:
    """ranker.rules with these values for the length of the block (dict keys one by one)."""
    rules = rules_module()
    saved: dict[str, Any] = {}
    try:
        for name, value in setting.items():
            head, _, key = name.partition(".")
            if head not in saved:
                saved[head] = getattr(rules, head)
            if key:
                replaced = dict(getattr(rules, head))
                replaced[key] = value
                setattr(rules, head, replaced)
            else:
                setattr(rules, head, value)
        yield
    finally:
        for head, original in saved.items():
            setattr(rules, head, original)


_READS: set[str] = set()


class _RecordingModule(types.ModuleType):
    """rules while a build runs: notes every upper-case name read from it."""

    def __getattribute__(self, name: str) -> Any:
        if name.isupper():
            _READS.add(name)
        return super().__getattribute__(name)


def constants_read_during(action: Callable[[], object]) -> frozenset[str]:
    """The rules.py names `action` reads (as rules.NAME, the ranker's convention)."""
    rules = rules_module()
    _READS.clear()
    original = rules.__class__
    rules.__class__ = _RecordingModule
    try:
        action()
    finally:
        rules.__class__ = original
    return frozenset(_READS)


# --- ranking under a setting --------------------------------------------------------------


class Evaluator:
    """Ranks queries under any setting of the constants, over one corpus.

    A fresh index object per setting (from the stored postings: no cache carries values computed
    under other constants); the postings are rebuilt only when the setting changes a constant the
    build reads, and the last few builds are kept."""

    KEEP_BUILDS = FOLDS + 3  # every fold's current postings, and a trial or two beside them

    def __init__(self, corpus: Any) -> None:
        from imqueue_mcp.ranker import Index

        self.corpus = corpus
        self.build_names = constants_read_during(lambda: Index(corpus))
        self._builds: dict[tuple[tuple[str, Value], ...], dict[str, Any]] = {}
        self.builds = 0  # how many times the postings were built (a figure for the log)

    def builds_postings(self, name: str) -> bool:
        return name.split(".", 1)[0] in self.build_names

    def index(self, setting: Mapping[str, Value]) -> Any:
        """The index for a setting; call inside overridden(setting)."""
        from imqueue_mcp.ranker import Index

        key = tuple(sorted((n, v) for n, v in setting.items() if self.builds_postings(n)))
        wire = self._builds.pop(key, None)  # popped and put back last: least recently used goes first
        if wire is None:
            wire = Index(self.corpus).to_wire()
            self.builds += 1
            if len(self._builds) >= self.KEEP_BUILDS:
                self._builds.pop(next(iter(self._builds)))
        self._builds[key] = wire
        return Index.from_wire(self.corpus, wire)

    def lines(self, setting: Mapping[str, Value], queries: Sequence[str]) -> list[Line]:
        from imqueue_mcp.build_index.search_cli import batch_line

        with overridden(setting):
            index = self.index(setting)
            return [batch_line(index, query) for query in queries]


# --- fitting ------------------------------------------------------------------------------


@dataclass
class FitResult:
    constants: list[Setting]  # per fold
    objectives: list[float]  # per fold: the training objective reached
    start_objectives: list[float]  # per fold: the training objective of the rules.py values
    settings_ranked: int = 0
    seconds: float = 0.0
    changes: list[dict[str, Value]] = field(default_factory=list)  # per fold: constant -> fitted value


def fit(
    evaluator: Evaluator,
    scorer: types.ModuleType,
    cases: Sequence[Mapping[str, Any]],
    folds: Sequence[Sequence[int]],
    passes: int = PASSES,
    names: Sequence[str] | None = None,
) -> FitResult:
    """Coordinate ascent, one ascent per fold on the cases of the other folds. For each constant
    in turn (name order), every value of its grid is scored and the best kept if it beats the
    current value by MIN_GAIN; sweeps repeat until one changes nothing or `passes` are done.
    The folds move in lockstep and every setting's per-query scores are kept, so a setting two
    folds share is ranked once."""
    start = time.perf_counter()
    base = tunable_constants()
    chosen = [n for n in (names or sorted(base)) if n in base]
    grids = {name: candidate_grid(name, base[name]) for name in chosen}
    queries = [str(case["query"]) for case in cases]
    trains = [training_indices(folds, f) for f in range(len(folds))]
    memo: dict[frozenset[tuple[str, Value]], PerQuery] = {}

    def scored(setting: Setting) -> PerQuery:
        key = frozenset((n, v) for n, v in setting.items() if v != base[n])
        found = memo.get(key)
        if found is None:
            found = memo[key] = per_query(scorer, cases, evaluator.lines(setting, queries))
        return found

    current = [dict(base) for _ in folds]
    objective = [scored(current[f]).objective(trains[f]) for f in range(len(folds))]
    start_objectives = list(objective)
    total = sum(len(g) - 1 for g in grids.values())
    for sweep in range(passes):
        moved = False
        for step, name in enumerate(chosen, 1):
            for f in range(len(folds)):
                best_value, best = current[f][name], objective[f]
                for value in grids[name]:
                    if value == current[f][name]:
                        continue
                    score = scored({**current[f], name: value}).objective(trains[f])
                    if score > best + MIN_GAIN:
                        best_value, best = value, score
                if best_value != current[f][name]:
                    current[f][name], objective[f], moved = best_value, best, True
            elapsed = time.perf_counter() - start
            log(
                f"sweep {sweep + 1} {step}/{len(chosen)} {name}: "
                + " ".join(f"{current[f][name]!r}" for f in range(len(folds)))
                + f"  objective {' '.join(f'{o:.1f}' for o in objective)}"
                f"  ({len(memo)} settings ranked of ~{total * len(folds) * (sweep + 1)}, {elapsed:.0f} s)"
            )
        if not moved:
            break
    return FitResult(
        constants=current,
        objectives=objective,
        start_objectives=start_objectives,
        settings_ranked=len(memo),
        seconds=time.perf_counter() - start,
        changes=[{n: v for n, v in c.items() if v != base[n]} for c in current],
    )


# --- the stored constants -----------------------------------------------------------------


@dataclass
class StoredConstants:
    """What cv-constants.json holds, and how it stands against rules.py and the labels today."""

    per_fold: list[Setting]
    labels: str  # the fingerprint of the labels fitted on
    fold_sizes: list[int]
    problems: list[str]  # stale names, changed labels or folds: printed, never silent


def write_constants(
    path: Path,
    result: FitResult,
    folds: Sequence[Sequence[int]],
    cases: Sequence[Mapping[str, Any]],
    labels: str,
    passes: int,
) -> None:
    base = tunable_constants()
    body = {
        "_about": "Per-fold constants fitted by topic-grouped cross-validation (coordinate ascent, "
        "objective micro MRR@target + P@1 on the four training folds). Recompute with "
        "python -m benchmarks.kpi --fit; python -m benchmarks.kpi scores them.",
        "labels": labels,
        "folds": len(folds),
        "passes": passes,
        "min_gain": MIN_GAIN,
        "rules": base,
        "grids": {name: list(candidate_grid(name, value)) for name, value in base.items()},
        "settings_ranked": result.settings_ranked,
        "seconds": round(result.seconds, 1),
        "per_fold": [
            {
                "queries": len(fold),
                "topics": sorted({str(cases[i]["topic"]) for i in fold}),
                "train_objective_rules": round(result.start_objectives[f], 3),
                "train_objective_fitted": round(result.objectives[f], 3),
                "changed": result.changes[f],
                "constants": result.constants[f],
            }
            for f, fold in enumerate(folds)
        ],
    }
    path.write_text(json.dumps(body, indent=1) + "\n", encoding="utf-8")


def read_constants(path: Path, folds: Sequence[Sequence[int]], labels: str) -> StoredConstants:
    """The stored per-fold constants, as far as they still apply: a name rules.py no longer has
    is dropped, a name it has that the file lacks takes its rules.py value; each is reported."""
    base = tunable_constants()
    if not path.is_file():
        raise SystemExit(
            f"benchmarks: no fitted constants at {path}; run python -m benchmarks.kpi --fit "
            "(or --no-fit to cross-validate the rules.py values)"
        )
    body = json.loads(path.read_text(encoding="utf-8"))
    stored = [dict(entry["constants"]) for entry in body["per_fold"]]
    problems: list[str] = []
    names = set().union(*(s.keys() for s in stored)) if stored else set()
    gone, new = sorted(names - base.keys()), sorted(base.keys() - names)
    if gone:
        problems.append(f"{len(gone)} stored constant(s) no longer in rules.py, ignored: {', '.join(gone)}")
    if new:
        problems.append(
            f"{len(new)} rules.py constant(s) never fitted, scored at their rules.py value: " + ", ".join(new)
        )
    moved = sorted(n for n, v in body.get("rules", {}).items() if n in base and base[n] != v)
    if moved:
        problems.append(f"{len(moved)} rules.py value(s) changed since the fit: {', '.join(moved)}")
    if body.get("labels") != labels:
        problems.append(f"fitted on labels {body.get('labels')}, scoring labels {labels}")
    sizes = [int(entry["queries"]) for entry in body["per_fold"]]
    if sizes != [len(fold) for fold in folds]:
        problems.append(f"fold sizes were {sizes}, are {[len(f) for f in folds]} (labels or folds changed)")
    per_fold = [{**base, **{n: v for n, v in s.items() if n in base}} for s in stored]
    if len(per_fold) != len(folds):
        problems.append(f"{len(per_fold)} stored fold(s) for {len(folds)} folds: rules.py values used")
        per_fold = [dict(base) for _ in folds]
    if problems:
        problems.append("refit with python -m benchmarks.kpi --fit")
    return StoredConstants(per_fold, str(body.get("labels")), sizes, problems)


# --- cross-validated results --------------------------------------------------------------


def cross_validated_lines(
    evaluator: Evaluator,
    cases: Sequence[Mapping[str, Any]],
    folds: Sequence[Sequence[int]],
    per_fold: Sequence[Setting],
) -> list[Line]:
    """One results line per case (case order), ranked with its held-out fold's constants."""
    lines: list[Line | None] = [None] * len(cases)
    for f, fold in enumerate(folds):
        ranked = evaluator.lines(per_fold[f], [str(cases[i]["query"]) for i in fold])
        for i, line in zip(fold, ranked, strict=True):
            lines[i] = line
    return [line for line in lines if line is not None]


def fold_p1(per: PerQuery, folds: Sequence[Sequence[int]]) -> list[float]:
    return [round(per.p1(fold), 1) for fold in folds]


def rounded(value: float) -> float:
    return math.floor(value * 10 + 0.5) / 10

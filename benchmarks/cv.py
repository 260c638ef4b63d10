"""Topic-grouped cross-validation machinery: folds, constants, ranking under a setting, scoring.

    topic_folds          the dev labels split into k folds by topic (a topic never in two folds)
    tunable_constants    every numeric constant of ranker/rules.py, dicts flattened (FIELD_WEIGHTS.title)
    overridden           a setting applied to ranker.rules for the length of a block
    Evaluator            ranks queries under a setting; rebuilds the index only when a constant
                         read while building it changed (found by watching the build read rules)
    per_query            evaluate.py's own per-label verdicts (target #1, 1 / its position)
    cross_validated_lines  every gold query ranked with the setting of the fold it is held out in

benchmarks/nested.py builds the nested CV of the ranking rules on these. The scorer is
../shared/kpi/evaluate.py itself, imported at run time (load_scorer), so fitting uses the
harness's own definitions of a position, P@1 and MRR@target; the headline figures are then
computed by running evaluate.py on a results file, as for the in-sample run.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FOLDS = 5
MIN_GAIN = 0.05  # objective points a value must add over the current one to be taken
# The evaluation depth, and the code-example index's cap: search_docs never reads them, so no
# gold label can fit them.
UNTUNED = frozenset({"BATCH_DEPTH", "EXAMPLE_PARENT_CAP", "MAX_SEARCHED_CHARACTERS", "MAX_TYPO_TERMS"})

Value = bool | int | float
Setting = dict[str, Value]  # flattened constant name -> value
Line = dict[str, Any]  # one results line, as build_index.search_cli.batch_line writes it


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

    A fresh index per setting: the postings are rebuilt only when the setting changes a constant
    the build reads (the last few builds are kept), and each setting ranks on a sibling of the
    build's last index (Index.sibling), which shares the tables that depend on the postings alone
    and starts every cache computed under the constants empty."""

    KEEP_BUILDS = FOLDS + 3  # every fold's current postings, and a trial or two beside them

    def __init__(self, corpus: Any) -> None:
        from imqueue_mcp.ranker import Index

        self.corpus = corpus
        self.build_names = constants_read_during(lambda: Index(corpus))
        self._builds: dict[tuple[tuple[str, Value], ...], Any] = {}  # build key -> its last index
        self.builds = 0  # how many times the postings were built (a figure for the log)

    def builds_postings(self, name: str) -> bool:
        return name.split(".", 1)[0] in self.build_names

    def index(self, setting: Mapping[str, Value]) -> Any:
        """The index for a setting; call inside overridden(setting)."""
        from imqueue_mcp.ranker import Index

        key = tuple(sorted((n, v) for n, v in setting.items() if self.builds_postings(n)))
        last = self._builds.pop(key, None)  # popped and put back last: least recently used goes first
        if last is None:
            index = Index.from_wire(self.corpus, Index(self.corpus).to_wire())
            self.builds += 1
            if len(self._builds) >= self.KEEP_BUILDS:
                self._builds.pop(next(iter(self._builds)))
        else:
            index = last.sibling()
        self._builds[key] = index
        return index

    def lines(self, setting: Mapping[str, Value], queries: Sequence[str]) -> list[Line]:
        from imqueue_mcp.build_index.search_cli import batch_line

        with overridden(setting):
            index = self.index(setting)
            return [batch_line(index, query) for query in queries]


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

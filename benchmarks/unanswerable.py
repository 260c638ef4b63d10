"""Restraint on questions written for it: does a question the docs do not answer come back weak?

    python -m benchmarks.unanswerable [--shared PATH] [--questions FILE]

benchmarks/restraint-questions.json holds ~30 answerable developer questions (each with the page
it was written from) and ~30 about things the imqueue docs never cover (their topic words are
absent from the pages). Each is searched as search_docs does (limit 6); the figures:

    unanswerable marked weak     the more the better: the answer says the docs may not cover it
                                 (weak, or no result at all)
    answerable marked weak       the fewer the better: a right answer called weak is noise
    answerable #1 on its page    how often the page the question was written from is first

No rule reads these questions: they judge ranker.confidence, they never tune it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .machine import machine
from .paths import REPO, shared_dir, site_dir

DEFAULT_QUESTIONS = REPO / "benchmarks" / "restraint-questions.json"


@dataclass
class Figures:
    unanswerable: int
    unanswerable_weak: float  # percent
    answerable: int
    answerable_weak: float  # percent
    answerable_first_on_page: float  # percent
    missed_unanswerable: list[str]  # unanswerable questions answered with confidence
    weak_answerable: list[str]


def percent(count: int, total: int) -> float:
    return round(100 * count / total, 1) if total else 0.0


def page_of(path: str) -> str:
    return path.split("#", 1)[0]


def measure(index: Any, questions: dict[str, Any]) -> Figures:
    """Each question searched at search_docs's default limit; weak as the response reports it,
    or no result at all (a miss is restraint too, as in the quarantine figure)."""

    def weak(query: str) -> bool:
        response = index.search(query, limit=6)
        return bool(response.weak or not response.results)

    answerable = questions["answerable"]
    unanswerable = questions["unanswerable"]
    confident = [q["query"] for q in unanswerable if not weak(q["query"])]
    weak_right = [q["query"] for q in answerable if weak(q["query"])]
    first = 0
    for q in answerable:
        results = index.search(q["query"], limit=1).results
        first += bool(results) and page_of(results[0].path) == q["page"]
    return Figures(
        unanswerable=len(unanswerable),
        unanswerable_weak=percent(len(unanswerable) - len(confident), len(unanswerable)),
        answerable=len(answerable),
        answerable_weak=percent(len(weak_right), len(answerable)),
        answerable_first_on_page=percent(first, len(answerable)),
        missed_unanswerable=confident,
        weak_answerable=weak_right,
    )


def report(figures: Figures) -> str:
    lines = [
        f"restraint questions (benchmarks/restraint-questions.json, "
        f"{figures.unanswerable} unanswerable + {figures.answerable} answerable)",
        f"  unanswerable marked weak       {figures.unanswerable_weak:5.1f}%  (the more the better)",
        f"  answerable marked weak         {figures.answerable_weak:5.1f}%  (the fewer the better)",
        f"  answerable #1 on its page      {figures.answerable_first_on_page:5.1f}%",
    ]
    lines += [f"  answered with confidence: {q}" for q in figures.missed_unanswerable]
    lines += [f"  answerable but weak: {q}" for q in figures.weak_answerable]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.unanswerable", description=__doc__)
    ap.add_argument("--shared", help="the shared folder (default $IMQ_SHARED or ../shared)")
    ap.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS, help="the questions file")
    args = ap.parse_args(argv)
    from imqueue_mcp.docsource import build

    index = build(mirror=site_dir(shared_dir(args.shared))).index()
    figures = measure(index, json.loads(args.questions.read_text(encoding="utf-8")))
    print(report(figures))
    print(json.dumps({"benchmark": "unanswerable", "machine": machine(), **asdict(figures)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

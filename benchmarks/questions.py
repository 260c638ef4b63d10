"""search_docs on natural questions (../shared/kpi/questions-dev.json), as an agent calls it.

    python -m benchmarks.questions [--shared PATH] [--folds K] [--check-floors | --write-floors]

The questions were written from the docs by readers who never saw a ranker, each with the pages
and `#sections` that answer it (`relevant`, `best`; none for the unanswerable ones), its kind
and style. Every question is asked of the real server process (`python -m imqueue_mcp.server
--offline --snapshot` over a snapshot built from <shared>/site) through the SDK's MCP client,
concurrently over one stdio session, at limit 6 and the default passage budgets. Figures:

    P@1, MRR, recall@6   page level: a hit on a labelled page counts (a `#section` label counts
                         its page); MRR over the six hits returned
    API P@1              P@1 of the `api` kind alone (and P@1 / recall@6 per kind in the JSON)
    passage@1            the top hit's passage comes from a labelled section, or from a page
                         labelled whole
    strict passage@3     the same for any of the first three hits' passages
    unanswerable weak    share of the unanswerable questions whose reply is marked weak
    answerable weak      share of the answerable ones marked weak (the fewer the better)

Plain BM25 stands beside it: rank-bm25 Okapi with a Snowball stemmer over the same records
(benchmarks/baseline.py's documents: tier-1 records as title + summary + keywords, one
document per prose section); its "passage" is the hit's own record, so a section hit answers
when that section is labelled. It has no weak marking.

The headline is a nested cross-validation (`nested_headline`, a small function over
benchmarks/nested.py's machinery): the site's dev labels (gold-dev.json, grouped by topic) and
these questions (grouped by the page of their best answer) in one set of folds, every switched
rule and its constant chosen inside the training folds; each held-out question is ranked
in-process with its fold's choice and scored at page level. The passage and weak columns of
that row are the shipped server's (no fold changes them: they come after the ranking).
--check-floors exits 1 when a figure of the headline is more than a point under
benchmarks/questions-floors.json. Prints the readable table, then one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
import types
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import cv, nested
from .baseline import WORD, BaselineDocument, Bm25Baseline, baseline_documents
from .machine import machine
from .paths import REPO, kpi_dir, shared_dir, site_dir

LIMIT = 6  # search_docs' default: an agent reads all six
PASSAGE_HITS = 3  # strict passage@3
IN_FLIGHT = 8  # concurrent calls on the one session
CALL_TIMEOUT = 60.0
DEFAULT_FLOORS = REPO / "benchmarks" / "questions-floors.json"
TOLERANCE = 1.0
SITES = {False: "https://imqueue.org", True: "https://imqueue.com"}
FLOOR_KEYS = ("p1", "mrr", "recall6", "api_p1", "passage1", "passage3", "unanswerable_weak")
CEILINGS = {"answerable_weak"}


def log(message: str) -> None:
    print(f"[questions] {message}", file=sys.stderr, flush=True)


# --- scoring ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    url: str  # absolute, as search_docs gives it
    passage: str | None  # the URL of the section its passage comes from


@dataclass(frozen=True)
class Reply:
    hits: list[Hit]
    weak: bool | None  # None: the side does not mark weak answers


def page_of(url: str) -> str:
    return url.split("#", 1)[0]


def absolute(path: str, external: bool) -> str:
    return path if path.startswith("https://") else SITES[bool(external)] + path


def relevant_pages(question: Mapping[str, Any]) -> set[str]:
    return {page_of(url) for url in question["relevant"]}


def passage_answers(question: Mapping[str, Any], url: str | None) -> bool:
    """The passage comes from a labelled section, or from a page labelled whole."""
    if url is None:
        return False
    labels = set(question["relevant"])
    return url in labels or page_of(url) in labels


def first_relevant(question: Mapping[str, Any], urls: Sequence[str]) -> int:
    """1-based position of the first hit on a labelled page; 0 when none is."""
    pages = relevant_pages(question)
    return next((i + 1 for i, url in enumerate(urls) if page_of(url) in pages), 0)


def percent(count: float, total: int) -> float | None:
    return round(100 * count / total, 1) if total else None


def score(questions: Sequence[Mapping[str, Any]], replies: Sequence[Reply]) -> dict[str, Any]:
    answerable = [(q, r) for q, r in zip(questions, replies, strict=True) if q["relevant"]]
    unanswerable = [r for q, r in zip(questions, replies, strict=True) if not q["relevant"]]
    positions = [first_relevant(q, [h.url for h in r.hits][:LIMIT]) for q, r in answerable]
    kinds: dict[str, list[int]] = defaultdict(list)
    for (question, _), position in zip(answerable, positions, strict=True):
        kinds[str(question["kind"])].append(position)
    marked = [r.weak for r in replies if r.weak is not None]
    figures: dict[str, Any] = {
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "p1": percent(sum(p == 1 for p in positions), len(positions)),
        "mrr": percent(sum(1 / p for p in positions if p), len(positions)),
        "recall6": percent(sum(1 <= p <= LIMIT for p in positions), len(positions)),
        "api_p1": percent(sum(p == 1 for p in kinds.get("api", [])), len(kinds.get("api", []))),
        "passage1": percent(
            sum(bool(r.hits) and passage_answers(q, r.hits[0].passage) for q, r in answerable),
            len(answerable),
        ),
        "passage3": percent(
            sum(any(passage_answers(q, h.passage) for h in r.hits[:PASSAGE_HITS]) for q, r in answerable),
            len(answerable),
        ),
        "unanswerable_weak": None,
        "answerable_weak": None,
        "kinds": {
            kind: {
                "n": len(found),
                "p1": percent(sum(p == 1 for p in found), len(found)),
                "recall6": percent(sum(1 <= p <= LIMIT for p in found), len(found)),
            }
            for kind, found in sorted(kinds.items())
        },
    }
    if marked:
        figures["unanswerable_weak"] = percent(sum(bool(r.weak) for r in unanswerable), len(unanswerable))
        figures["answerable_weak"] = percent(sum(bool(r.weak) for _, r in answerable), len(answerable))
    return figures


# --- ours: the real server through the SDK's client ---------------------------------------


def reply_from(data: Mapping[str, Any]) -> Reply:
    hits = [Hit(str(result["url"]), (result.get("passage") or {}).get("url")) for result in data["results"]]
    return Reply(hits, bool(data.get("weak")))


async def ask_server(snapshot: Path, home: Path, queries: Sequence[str]) -> list[dict[str, Any]]:
    """search_docs for every query, IN_FLIGHT at a time over one stdio session; the structured
    results in query order."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["-m", "imqueue_mcp.server", "--offline", "--snapshot", str(snapshot)],
        env=env,
        cwd=home,
    )
    gate = asyncio.Semaphore(IN_FLIGHT)
    async with Client(parameters, mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as client:

        async def one(query: str) -> dict[str, Any]:
            async with gate:
                result = await client.call_tool("search_docs", {"query": query, "limit": LIMIT})
            if result.is_error:
                said = " ".join(getattr(block, "text", "") for block in result.content)
                raise RuntimeError(f"search_docs failed on {query!r}: {said}")
            return dict(result.structured_content)

        return list(await asyncio.gather(*(one(query) for query in queries)))


# --- plain BM25 -----------------------------------------------------------------------------


class SnowballBm25(Bm25Baseline):
    """benchmarks.baseline's rank-bm25 Okapi, every word through the English Snowball stemmer."""

    def __init__(self, documents: Sequence[BaselineDocument]) -> None:
        import snowballstemmer  # type: ignore[import-untyped]

        self.stemmer = snowballstemmer.stemmer("english")
        super().__init__(documents)

    def words(self, text: str) -> list[str]:
        return list(self.stemmer.stemWords(WORD.findall(text.lower())))


def bm25_replies(snapshot: Any, queries: Sequence[str]) -> list[Reply]:
    baseline = SnowballBm25(baseline_documents(snapshot.corpus.documents))
    replies = []
    for query in queries:
        urls = [absolute(path, external) for path, external, _ in baseline.top(query, LIMIT)]
        replies.append(Reply([Hit(url, url) for url in urls], None))
    return replies


# --- the headline: nested CV over the dev labels and the questions together -----------------


class JointScorer(types.ModuleType):
    """evaluate.py for the gold labels, page-level target position for the questions: what
    nested.run needs of a scorer (parse_hit, evaluate) over one list holding both."""

    def __init__(self, evaluate_py: types.ModuleType) -> None:
        super().__init__("questions_joint_scorer")
        self.inner = evaluate_py

    def parse_hit(self, raw: Any) -> Any:
        return self.inner.parse_hit(raw)

    def evaluate(self, cases: Sequence[Mapping[str, Any]], lookup: Callable[[str], Any]) -> list[Any]:
        gold = [case for case in cases if "relevant" not in case]
        scored = iter(self.inner.evaluate(gold, lookup))
        out = []
        for case in cases:
            if "relevant" not in case:
                out.append(next(scored))
                continue
            urls = [absolute(hit[0], hit[1]) for hit in lookup(str(case["query"]))]
            out.append({"targetPosition": first_relevant(case, urls[:50])})
        return out


def question_cases(questions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The answerable questions as CV cases, grouped by the page of their best answer (a page's
    questions never straddle folds)."""
    return [
        {**question, "topic": "page " + page_of(str(question["best"] or question["relevant"][0]))}
        for question in questions
        if question["relevant"]
    ]


def nested_headline(
    shared: Path, snapshot: Any, questions: Sequence[Mapping[str, Any]], folds_wanted: int
) -> dict[str, Any]:
    """Page-level figures of the questions under a nested CV over gold-dev + questions. The lead
    may swap this for the in-process questions CV of benchmarks/ when merging: it returns
    {"figures": score()-shaped page figures, ...details}."""
    kpi = kpi_dir(shared)
    gold = cv.headline_cases(json.loads((kpi / "gold-dev.json").read_text(encoding="utf-8")))
    asked = question_cases(questions)
    cases = gold + asked
    folds = cv.topic_folds(cases, folds_wanted)
    evaluator = cv.Evaluator(snapshot.corpus)
    log(f"nested CV: {len(gold)} dev labels + {len(asked)} questions in folds of {[len(f) for f in folds]}")
    outcome = nested.run(evaluator, JointScorer(cv.load_scorer(kpi)), cases, folds)
    lines = nested.lines_for(evaluator, cases, folds, outcome.nested)
    replies = [
        Reply([Hit(absolute(h["u"], h.get("external", False)), None) for h in line["results"]], None)
        for line in lines[len(gold) :]
    ]
    return {
        "figures": score(asked, replies),
        "folds": [len(f) for f in folds],
        "nested_choices": outcome.nested,
        "fold_p1": outcome.fold_p1,
        "settings_ranked": outcome.settings_ranked,
        "seconds": round(outcome.seconds, 1),
    }


# --- the run --------------------------------------------------------------------------------


def run(shared: Path, folds: int) -> dict[str, Any]:
    from imqueue_mcp.docsource import build, save_snapshot

    questions = json.loads((kpi_dir(shared) / "questions-dev.json").read_text(encoding="utf-8"))
    queries = [str(q["query"]) for q in questions]
    seconds: dict[str, float] = {}
    start = time.perf_counter()
    snapshot = build(mirror=site_dir(shared))
    seconds["build"] = time.perf_counter() - start
    with tempfile.TemporaryDirectory(prefix="imq-questions-") as scratch:
        path = Path(scratch) / "snapshot.msgpack"
        save_snapshot(snapshot, path)
        home = Path(scratch) / "home"
        home.mkdir()
        start = time.perf_counter()
        answers = asyncio.run(ask_server(path, home, queries))
        seconds["server"] = time.perf_counter() - start
    ours = score(questions, [reply_from(a) for a in answers])
    start = time.perf_counter()
    bm25 = score(questions, bm25_replies(snapshot, queries))
    seconds["bm25"] = time.perf_counter() - start
    start = time.perf_counter()
    crossed = nested_headline(shared, snapshot, questions, folds)
    seconds["nested_cv"] = time.perf_counter() - start
    shipped_after_ranking = ("unanswerable", "passage1", "passage3", "unanswerable_weak", "answerable_weak")
    headline = {**crossed["figures"], **{key: ours[key] for key in shipped_after_ranking}}
    return {
        "questions": len(questions),
        "ours_nested": headline,
        "ours": ours,
        "bm25": bm25,
        "cv": {k: v for k, v in crossed.items() if k != "figures"},
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
    }


COLUMNS = (
    ("p1", "P@1 (page)"),
    ("mrr", "MRR"),
    ("recall6", "recall@6"),
    ("api_p1", "API P@1"),
    ("passage1", "passage@1"),
    ("passage3", "strict passage@3"),
    ("unanswerable_weak", "unanswerable marked weak"),
    ("answerable_weak", "answerable marked weak"),
)


def table(results: Mapping[str, Any]) -> str:
    rows = (
        ("ours, nested CV (headline)", results["ours_nested"]),
        ("ours, shipped rules", results["ours"]),
        ("plain BM25 + Snowball", results["bm25"]),
    )
    widths = [max(len(label), 6) for _, label in COLUMNS]
    head = f"{'':<28} " + " | ".join(label for _, label in COLUMNS)
    lines = [head, "-" * len(head)]
    for name, figures in rows:
        cells = [
            f"{'-' if figures.get(key) is None else format(figures[key], '.1f'):>{width}}"
            for (key, _), width in zip(COLUMNS, widths, strict=True)
        ]
        lines.append(f"{name:<28} " + " | ".join(cells))
    ours = results["ours"]
    lines.append(
        f"\n{ours['answerable']} answerable and {ours['unanswerable']} unanswerable questions; "
        "nested-CV row: page columns held out, passage and weak columns the shipped server's"
    )
    lines.append("per kind, ours (shipped) P@1 / recall@6 vs BM25 P@1:")
    for kind, figures in ours["kinds"].items():
        base = results["bm25"]["kinds"][kind]
        lines.append(
            f"  {kind:<18} n={figures['n']:<4} {figures['p1']:5.1f} / {figures['recall6']:5.1f}"
            f"   bm25 {base['p1']:5.1f}"
        )
    cvs = results["cv"]
    lines.append(
        f"nested CV: folds {cvs['folds']}, {cvs['settings_ranked']} settings ranked "
        f"in {cvs['seconds']:.0f} s; micro P@1 (dev labels + questions) per held-out fold: "
        + " / ".join(f"{v:.1f}" for v in cvs["fold_p1"]["nested"])
    )
    return "\n".join(lines)


def check_floors(headline: Mapping[str, Any], floors: Mapping[str, Any]) -> list[str]:
    failures = []
    for key, floor in floors.items():
        if key.startswith("_") or headline.get(key) is None:
            continue
        value = float(headline[key])
        if key in CEILINGS and value > floor + TOLERANCE:
            failures.append(f"{key} {value:.1f} above its ceiling {floor:.1f}")
        elif key not in CEILINGS and value < floor - TOLERANCE:
            failures.append(f"{key} {value:.1f} below its floor {floor:.1f}")
    return failures


def write_floors(path: Path, headline: Mapping[str, Any]) -> None:
    floors: dict[str, Any] = {
        "_about": "questions-dev floors, nested-CV headline of python -m benchmarks.questions (passage "
        "and weak figures the shipped server's); --check-floors fails a figure more than 1 point "
        "below its floor (answerable_weak is a ceiling). Set with --write-floors."
    }
    for key in (*FLOOR_KEYS, *sorted(CEILINGS)):
        if headline.get(key) is not None:
            floors[key] = headline[key]
    path.write_text(json.dumps(floors, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.questions",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--shared", help="the shared folder (default $IMQ_SHARED or ../shared)")
    ap.add_argument("--folds", type=int, default=cv.FOLDS, help="outer folds (default 5)")
    ap.add_argument("--floors", type=Path, default=DEFAULT_FLOORS)
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--check-floors", action="store_true", help="exit 1 if the headline fell")
    group.add_argument("--write-floors", action="store_true", help="floors := this run's headline")
    args = ap.parse_args(argv)
    shared = shared_dir(args.shared)
    start = time.perf_counter()
    results = run(shared, args.folds)
    results["seconds"]["total"] = round(time.perf_counter() - start, 1)
    info = machine()
    print(
        f"questions on {platform.node() or 'this machine'} — {info['platform']}, {info['cpus']} CPUs, "
        f"Python {info['python']}; search_docs through the MCP client, limit {LIMIT}; "
        f"{results['questions']} questions; whole run {results['seconds']['total']:.0f} s"
    )
    print(table(results))
    failures: list[str] = []
    if args.write_floors:
        write_floors(args.floors, results["ours_nested"])
        print(f"floors written to {args.floors}")
    elif args.check_floors:
        floors = json.loads(args.floors.read_text(encoding="utf-8"))
        failures = check_floors(results["ours_nested"], floors)
        for failure in failures:
            print(f"FLOOR FAILED  {failure}")
        if not failures:
            print(f"floors: every headline figure holds ({args.floors.name}, tolerance {TOLERANCE:g} point)")
    print(json.dumps({"benchmark": "questions", "machine": info, **results, "floor_failures": failures}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

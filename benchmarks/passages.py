"""Do search_docs passages hold the answer, at what cost in tokens and time?

    python -m benchmarks.passages [--shared PATH] [--questions FILE]

The questions (benchmarks/passage-questions.json) were written from the docs mirror for this
benchmark, each with the sentence of its page that answers it. For each, search_docs (the
server's own function, offline over a snapshot built from <shared>/site) is asked with limit 3
and the default budgets, and the answer sentence is looked for, whitespace and list marker
aside, in the passages:

    top-1 / top-3   share of questions whose answer is inside the first hit's passage / any of
                    the first three
    tokens          per answered question: the passages of the reply (passage route), against
                    the search-then-get_doc route: get_doc of the top hit (its section for an
                    #anchor URL, else the page, as get_doc slices it), counted up to the end of
                    the answer sentence (the least an agent reads), and as get_doc returns it
                    (one part of at most its default 8,000 tokens)

Twice: over the default snapshot (llms-full.txt pages) and one built with --pages (every page,
the API pages too). Also: how often the answer's page is among the first three hits at all
(what the ranking gives the passages to work with). Latency, over each snapshot: search_docs
with and without passages over the same 2,000 generated queries of ../shared/kpi at the default
limit (6), three passes each way after a warm-up, interleaved so both meet the same load and
every call ranks (see time_search), p50/p99; the passage column should stay within 2x. Prints a
table and one JSON line naming the machine; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import platform
import re
import sys
import tempfile
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .machine import machine
from .paths import REPO, shared_dir, site_dir
from .speed import latency, main_queries

QUESTIONS = REPO / "benchmarks" / "passage-questions.json"
LIMIT = 3  # the questions: is the answer in one of the first three passages
LATENCY_LIMIT = 6  # the timing: search_docs' default limit, as an agent calls it
LATENCY_QUERIES = 2000
LATENCY_ROUNDS = 3  # passes over the queries each way: p99 from the 60 slowest of 6,000, not 20
WARM_QUERIES = 200  # asked both ways, untimed, before the timing (the ones after those timed)
WARM_WAIT_SECONDS = 120.0  # the most the passages' warm-up is waited for
TARGET_RATIO = 2.0  # with passages / without, p50 and p99 (issue 21; reported, not asserted)


def plain(text: str) -> str:
    """Text compared as words: whitespace collapsed, a leading list marker dropped."""
    return " ".join(text.split()).removeprefix("- ")


def holds(text: str, answer: str) -> bool:
    return plain(answer) in " ".join(text.split())


def tokens_until(text: str, answer: str) -> int | None:
    """Tokens of `text` up to the end of `answer` (matched across line breaks), None if absent."""
    pattern = r"\s+".join(re.escape(word) for word in plain(answer).split())
    found = re.search(pattern, text)
    return math.ceil(found.end() / 4) if found else None


async def ask(keeper: Any, query: str, passages: bool, limit: int = LIMIT) -> dict[str, Any]:
    from imqueue_mcp.server.docs import search_docs as search
    from imqueue_mcp.server.docs.hit_passages import PassageOptions

    options = PassageOptions(enabled=passages)
    return await search.search_docs(keeper, query, limit, None, None, options, answers_of(keeper))


_ANSWERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def answers_of(keeper: Any) -> Any:
    """One answer cache per keeper, as a server keeps one in its Services."""
    from imqueue_mcp.server.docs.answer_cache import AnswerCache

    return _ANSWERS.setdefault(keeper, AnswerCache())


def get_doc_text(snapshot: Any, site: Path, url: str) -> str:
    """What get_doc returns in all for `url`: the #anchor's section, else the page (from the mirror)."""
    from imqueue_mcp.server.docs.read import mirror_of, slice_section

    page, _, anchor = url.partition("#")
    host, _, path = page.removeprefix("https://").partition("/")
    file = site / host / mirror_of("/" + path).file.lstrip("/")
    if not file.is_file():
        return ""
    markdown = file.read_text(encoding="utf-8")
    ranges = snapshot.sections.get(host, {}).get("/" + path)
    section = slice_section(markdown, ranges, anchor) if anchor and ranges else None
    return section.markdown if section is not None else markdown


def score_questions(
    keeper: Any, snapshot: Any, site: Path, questions: list[dict[str, Any]]
) -> dict[str, Any]:
    from imqueue_mcp.server.docs.budget import DEFAULT_MAX_TOKENS

    top1 = top3 = page_ranked = page_answered = 0
    passage_tokens: list[int] = []
    doc_answered = 0
    doc_until: list[int] = []
    doc_returned: list[int] = []
    bases: dict[str, int] = {}
    misses: list[str] = []
    for case in questions:
        data = asyncio.run(ask(keeper, case["question"], True))
        hits = data["results"]
        texts = [hit.get("passage", {}).get("text", "") for hit in hits]
        for hit in hits:
            basis = hit.get("passage", {}).get("basis", "none")
            bases[basis] = bases.get(basis, 0) + 1
        if texts and holds(texts[0], case["answer"]):
            top1 += 1
        answered = any(holds(text, case["answer"]) for text in texts[:3])
        if any(hit["url"].split("#", 1)[0] == case["page"] for hit in hits[:3]):
            page_ranked += 1
            page_answered += answered
        if answered:
            top3 += 1
            passage_tokens.append(data["passageBudget"]["tokens"])
        else:
            misses.append(case["question"])
        if hits:
            text = get_doc_text(snapshot, site, hits[0]["url"])
            until = tokens_until(text, case["answer"])
            if until is not None:
                doc_answered += 1
                doc_until.append(until)
                doc_returned.append(min(math.ceil(len(text) / 4), DEFAULT_MAX_TOKENS))
    total = len(questions)
    return {
        "questions": total,
        "top1_pct": 100 * top1 / total,
        "top3_pct": 100 * top3 / total,
        "page_in_top3_pct": 100 * page_ranked / total,
        "top3_when_page_in_top3_pct": 100 * page_answered / page_ranked if page_ranked else None,
        "passage_tokens_per_answer": _mean(passage_tokens),
        "get_doc_answered_pct": 100 * doc_answered / total,
        "get_doc_tokens_to_answer": _mean(doc_until),
        "get_doc_tokens_returned": _mean(doc_returned),
        "passage_basis": dict(sorted(bases.items())),
        "missed": misses,
    }


def _mean(values: list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def time_search(
    keeper: Any, queries: list[str], warm_up: Sequence[str] = (), rounds: int = LATENCY_ROUNDS
) -> dict[str, Any]:
    """search_docs without and with passages over the same queries, `rounds` passes each way, in
    a server's steady state. Fair to both ways:
    - warm-up: the passages' own warm-up (every page prepared, a page a turn of the event loop:
      hit_passages.PassageSource.start_warming) is waited for, and how long it took reported
      beside the figures (`warm_up_s`); then the `warm_up` queries (others than those timed: an
      answer they leave in the answer cache must not speed up either way's first calls) are
      asked both ways untimed;
    - interleaved: each step asks one query each way, which way first alternating step by step,
      so that load drift on a shared machine and the garbage collector meet both alike;
    - every call ranks: the second way asks the query half the list ahead, so the answer cache
      (1,024 answers) has let go of a query's ranking by the time the other way asks it."""
    from imqueue_mcp.server.docs.hit_passages import source_for

    async def both() -> dict[str, Any]:
        source = source_for(await keeper.current())  # a corpus's first passages start its warm-up
        await source.wait_warm(WARM_WAIT_SECONDS)
        for query in warm_up:
            for passages in (False, True):
                await ask(keeper, query, passages, LATENCY_LIMIT)
        timed: dict[bool, list[int]] = {False: [], True: []}
        half = len(queries) // 2
        for step in range(rounds * len(queries)):
            place = step % len(queries)
            pair = [(False, queries[place]), (True, queries[(place + half) % len(queries)])]
            for passages, query in pair if step % 2 == 0 else reversed(pair):
                start = time.perf_counter_ns()
                await ask(keeper, query, passages, LATENCY_LIMIT)
                timed[passages].append(time.perf_counter_ns() - start)
        return {
            "without": latency(timed[False]),
            "with": latency(timed[True]),
            "warm_up_s": source.warm_seconds,
        }

    return asyncio.run(both())


def ratios(timing: dict[str, Any]) -> dict[str, float]:
    """With passages / without, at p50 and p99."""
    return {key: timing["with"][key] / timing["without"][key] for key in ("p50_ms", "p99_ms")}


def keeper_for(path: Path) -> Any:
    from imqueue_mcp.server.config import Config
    from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper

    return CorpusKeeper(Config(snapshot=path, offline=True))


def run(shared: Path, questions_file: Path) -> dict[str, Any]:
    from imqueue_mcp.docsource import build, save_snapshot

    questions = json.loads(questions_file.read_text(encoding="utf-8"))["questions"]
    queries = main_queries(shared)
    site = site_dir(shared)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="imq-passages-") as scratch:
        for name, pages in (("default", False), ("pages", True)):
            snapshot = build(mirror=site, pages=pages)
            path = Path(scratch) / f"{name}.msgpack"
            save_snapshot(snapshot, path)
            results[name] = score_questions(keeper_for(path), snapshot, site, questions)
            timing = time_search(
                keeper_for(path), queries[:LATENCY_QUERIES], queries[LATENCY_QUERIES:][:WARM_QUERIES]
            )
            results["latency" if name == "default" else "latency_pages"] = timing
    results["latency_ratio"] = ratios(results["latency"])
    results["latency_ratio_pages"] = ratios(results["latency_pages"])
    return results


def table(results: dict[str, Any]) -> str:
    default, pages = results["default"], results["pages"]

    def figure(value: float | None, unit: str = "") -> str:
        return "-" if value is None else f"{value:.1f}{unit}"

    lines = [f"{'':<44} {'default':>10} {'--pages':>10}", "-" * 66]
    for label, key, unit in (
        ("answer in the top hit's passage", "top1_pct", "%"),
        ("answer in a top-3 passage", "top3_pct", "%"),
        ("answer's page among the top 3 hits", "page_in_top3_pct", "%"),
        ("...and then in a top-3 passage", "top3_when_page_in_top3_pct", "%"),
        ("passage tokens per answered question", "passage_tokens_per_answer", ""),
        ("get_doc(top hit) holds the answer", "get_doc_answered_pct", "%"),
        ("get_doc tokens read to the answer", "get_doc_tokens_to_answer", ""),
        ("get_doc tokens returned", "get_doc_tokens_returned", ""),
    ):
        lines.append(f"{label:<44} {figure(default[key], unit):>10} {figure(pages[key], unit):>10}")
    lines.append("-" * 66)
    for snapshot, suffix in (("default", ""), ("--pages", "_pages")):
        timing = results.get("latency" + suffix)
        if timing is None:
            continue
        ratio = ratios(timing)
        for key, name in (("p50_ms", "p50"), ("p99_ms", "p99")):
            verdict = "met" if ratio[key] <= TARGET_RATIO else "NOT met"
            lines.append(
                f"{snapshot} search_docs {name} without / with passages (ms) "
                f"{timing['without'][key]:.3f} / {timing['with'][key]:.3f} = {ratio[key]:.2f}x "
                f"(target <={TARGET_RATIO:g}x {verdict})"
            )
        if timing.get("warm_up_s") is not None:
            lines.append(f"{snapshot} passages' warm-up, between the queries: {timing['warm_up_s']:.2f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.passages",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--shared", help="the shared folder (default $IMQ_SHARED or ../shared)")
    ap.add_argument("--questions", type=Path, default=QUESTIONS, help="the questions file")
    args = ap.parse_args(argv)
    shared = shared_dir(args.shared)
    results = run(shared, args.questions)
    info = machine()
    print(
        f"passages on {platform.node() or 'this machine'} — {info['platform']}, {info['cpus']} CPUs "
        f"({info['processor']}), Python {info['python']}; {results['default']['questions']} questions, "
        f"search_docs limit {LIMIT}, default budgets"
    )
    print(table(results))
    print(json.dumps({"benchmark": "passages", "machine": info, **results}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

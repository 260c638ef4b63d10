"""The benchmarks' moving parts on the real ../shared files, fast: the rank-bm25 baseline, our
batch lines, and the figures read back from evaluate.py and ranking_cases.py. Behaviour only;
nothing here measures or asserts speed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rank_bm25")

from imqueue_mcp.ranker.corpus import Document  # noqa: E402

from benchmarks import scoring  # noqa: E402
from benchmarks.baseline import DEPTH, Bm25Baseline, baseline_documents, tokenize  # noqa: E402
from benchmarks.kpi import check_floors, floors_from  # noqa: E402

SHARED = Path(os.environ.get("IMQ_SHARED") or Path(__file__).resolve().parents[2] / "shared")
KPI = SHARED / "kpi"

Ranker = Callable[[str], dict[str, Any]]


@pytest.fixture(scope="module")
def sides() -> dict[str, Ranker]:
    if not (KPI / "evaluate.py").is_file() or not (SHARED / "site").is_dir():
        pytest.skip(f"shared folder not found at {SHARED}")
    from imqueue_mcp.build_index import build
    from imqueue_mcp.build_index.search_cli import batch_line

    snapshot = build(mirror=SHARED / "site")
    index = snapshot.index()
    baseline = Bm25Baseline(baseline_documents(snapshot.corpus.documents))
    return {"ours": lambda query: batch_line(index, query), "bm25": baseline.batch_line}


@pytest.fixture(scope="module")
def gold() -> dict[str, Any]:
    if not (KPI / "gold-dev.json").is_file():
        pytest.skip(f"gold labels not found in {KPI}")
    data: dict[str, Any] = json.loads((KPI / "gold-dev.json").read_text(encoding="utf-8"))
    return data


def gold_subset(gold: dict[str, Any]) -> dict[str, Any]:
    """Five labels: three natural, one question, one with a mustReach page; same top-level keys."""
    queries = gold["queries"]
    natural = [q for q in queries if q.get("src") == "natural" and not q.get("mustReach")][:3]
    question = next(q for q in queries if q.get("src") == "question")
    must_reach = next(q for q in queries if q.get("mustReach"))
    picked = [*natural, question, must_reach]
    return {**gold, "queries": picked, "counts": {"total": len(picked)}}


def write_lines(path: Path, queries: list[str], rank: Ranker) -> None:
    lines = [json.dumps(rank(query), ensure_ascii=False) + "\n" for query in queries]
    path.write_text("".join(lines), encoding="utf-8")


def test_tokenize_keeps_lowercase_alphanumeric_words_only() -> None:
    assert tokenize("How do I expose a method on an @imqueue service?") == [
        "how",
        "do",
        "i",
        "expose",
        "a",
        "method",
        "on",
        "an",
        "imqueue",
        "service",
    ]
    assert tokenize("watcherCheckDelay, IMQ_v2 / core.redisqueue") == [
        "watchercheckdelay",
        "imq",
        "v2",
        "core",
        "redisqueue",
    ]


def test_baseline_indexes_tier_one_records_and_prose_sections_with_the_peer_marked_external() -> None:
    documents = [
        Document(
            path="/intro/", site="org", tier="page", title="Intro", summary="What it is", keywords="rpc"
        ),
        Document(
            path="/intro/#why", site="org", tier="section", title="Intro", heading="Why", text="Because."
        ),
        Document(path="/pricing/", site="com", tier="page", title="Pricing", summary="Plans"),
    ]
    texts = {(d.path, d.external): d.text for d in baseline_documents(documents)}
    assert texts == {
        ("/intro/", False): "Intro What it is rpc",
        ("/intro/#why", False): "Why Because.",
        ("/pricing/", True): "Pricing Plans",
    }
    line = Bm25Baseline(baseline_documents(documents)).batch_line("pricing plans")
    assert line["results"][0]["u"] == "/pricing/" and line["results"][0]["external"] is True
    assert all(hit["score"] > 0 for hit in line["results"])


@pytest.mark.parametrize("side", ["ours", "bm25"])
def test_results_lines_have_the_kpi_shape(sides: dict[str, Ranker], gold: dict[str, Any], side: str) -> None:
    for case in gold_subset(gold)["queries"]:
        line = sides[side](case["query"])
        assert line["query"] == case["query"]
        hits = line["results"]
        assert 0 < len(hits) <= DEPTH
        for hit in hits:
            assert isinstance(hit["u"], str) and hit["u"].startswith("/")
            assert isinstance(hit["external"], bool)
            assert isinstance(hit["score"], float) and hit["score"] > 0
        if side == "bm25":  # ours may place a capped record below a lower score: rank order is the list order
            scores = [hit["score"] for hit in hits]
            assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("side", ["ours", "bm25"])
def test_evaluate_scores_a_gold_subset_and_the_figures_read_back(
    sides: dict[str, Ranker], gold: dict[str, Any], side: str, tmp_path: Path
) -> None:
    subset = gold_subset(gold)
    labels = tmp_path / "gold-subset.json"
    labels.write_text(json.dumps(subset), encoding="utf-8")
    results = tmp_path / f"{side}-gold.jsonl"
    write_lines(results, [c["query"] for c in subset["queries"]], sides[side])

    figures = scoring.gold_figures(KPI, results, tmp_path / f"{side}-gold", gold=labels)

    assert figures["queries"] == 5
    for key in (
        "micro_p1",
        "macro_p1",
        "mrr",
        "recall6",
        "ndcg10",
        "question_p1",
        "must_reach_top6",
        "never_returned",
    ):
        assert figures[key] is not None and 0 <= figures[key] <= 100, key
    assert figures["must_reach"] in ("0/1", "1/1")
    assert (tmp_path / f"{side}-gold.txt").read_text(encoding="utf-8").startswith("\n====")


def test_ranking_cases_verdicts_are_counted(sides: dict[str, Ranker], tmp_path: Path) -> None:
    queries = tmp_path / "cases.jsonl"
    scoring.emit_case_queries(KPI, queries)
    every = scoring.read_queries(queries)
    results = tmp_path / "ours-cases.jsonl"
    write_lines(results, every[:3], sides["ours"])  # the rest are reported as skipped

    figures = scoring.case_figures(KPI, results, tmp_path / "ours-cases")

    assert figures["cases_checked"] == figures["cases_passed"] + figures["cases_failed"]
    assert figures["cases_checked"] >= 3 and figures["cases_skipped"] > 0


def test_floors_fail_only_beyond_one_point_and_name_the_figure() -> None:
    measured = {"micro_p1": 80.26, "never_returned": 0.97, "cases_passed": 45}
    floors = floors_from(measured, 1.0)
    assert floors == {"micro_p1": 79.2, "never_returned": 2.0, "cases_passed": 44}
    assert check_floors({"micro_p1": 78.3, "never_returned": 2.9, "cases_passed": 43}, floors) == []
    failures = check_floors({"micro_p1": 78.1, "never_returned": 3.1, "cases_passed": 42}, floors)
    assert [f.split(":")[0] for f in failures] == ["micro_p1", "never_returned", "cases_passed"]
    assert check_floors({}, {"micro_p1": 79.2})[0].startswith("micro_p1: not measured")

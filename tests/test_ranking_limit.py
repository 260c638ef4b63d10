"""Issue 14 §1 on the real corpus (../shared/site, read at run time): imqueue.com hits compete on
score with imqueue.org hits, and the first k results never depend on the limit asked for.

The queries are the named cases of ../shared/kpi/ranking_cases.py (its own --emit list) and a
seeded sample of the KPI's gold queries, peer queries included.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from imqueue_mcp.docsource import build
from imqueue_mcp.ranker import Index

from conftest import SHARED, SITE

KPI = SHARED / "kpi"
SAMPLE = 80
LIMITS = (1, 2, 3, 4, 6)
DEEP = 10

pytestmark = pytest.mark.skipif(not (KPI / "gold-dev.json").exists(), reason="../shared/kpi is not here")


@pytest.fixture(scope="module")
def index() -> Index:
    return build(mirror=SITE).index()


def case_queries(tmp: Path) -> list[str]:
    out = tmp / "cases.jsonl"
    subprocess.run([sys.executable, str(KPI / "ranking_cases.py"), "--emit", str(out)], check=True)
    return [
        json.loads(line)["query"] for line in out.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def gold_sample() -> list[str]:
    queries = json.loads((KPI / "gold-dev.json").read_text(encoding="utf-8"))["queries"]
    peer = [q["query"] for q in queries if q.get("peer")]
    rest = sorted({q["query"] for q in queries if not q.get("peer")})
    return peer + random.Random(14).sample(rest, SAMPLE)


def ranked(index: Index, query: str, limit: int) -> list[tuple[str, bool]]:
    return [(hit.path, hit.external) for hit in index.search(query, limit=limit).results]


def test_first_k_results_are_the_same_for_every_limit_at_least_k(index: Index, tmp_path: Path) -> None:
    queries = list(dict.fromkeys(case_queries(tmp_path) + gold_sample()))
    assert len(queries) > SAMPLE
    differing = []
    for query in queries:
        deep = ranked(index, query, DEEP)
        for limit in LIMITS:
            if ranked(index, query, limit) != deep[:limit]:
                differing.append((query, limit))
    assert differing == []


def test_the_best_scored_imqueue_com_page_leads_a_pricing_query(index: Index) -> None:
    hits = index.search("pricing", limit=6).results
    assert (hits[0].path, hits[0].external) == ("/pricing/", True)
    assert hits[0].score == max(hit.score for hit in hits)


@pytest.mark.parametrize("limit", [1, 4, 6])
def test_the_pricing_page_holds_its_rank_whatever_the_limit(index: Index, limit: int) -> None:
    hits = index.search("commercial license pricing", limit=limit).results
    assert (hits[0].path, hits[0].external) == ("/pricing/", True)


def test_a_commercial_use_question_reaches_imqueue_com_in_the_first_six(index: Index) -> None:
    hits = index.search("is imqueue free for commercial use", limit=6).results
    assert any(hit.external for hit in hits)


def test_scores_never_rise_down_the_uncapped_list(index: Index) -> None:
    """Nothing reorders hits after scoring: down the list, scores fall, except where a cap moved
    a record below the uncapped ones (then the explanation says so)."""
    for query in ("pricing", "commercial license", "support", "SLA", "what is imqueue license"):
        hits = index.search(query, limit=6, explain=True).results
        for before, after in zip(hits, hits[1:], strict=False):
            moved = any(
                "moved below uncapped" in line or "coverage floor" in line for line in after.explanation
            )
            assert after.score <= before.score or moved, (query, before.path, after.path)

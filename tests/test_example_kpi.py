"""The find_examples KPI: its scorer, and its query file against the blocks the builder extracts."""

from __future__ import annotations

import sys

from conftest import REPO, SITE

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from imqueue_mcp.docsource import build  # noqa: E402

from benchmarks.example_kpi import load_queries, score  # noqa: E402


def test_score_counts_a_hit_at_one_within_three_and_its_reciprocal_rank() -> None:
    queries = [
        {"query": "a", "expected": ["x"]},
        {"query": "b", "expected": ["y", "z"]},
        {"query": "c", "expected": ["w"]},
        {"query": "d", "expected": ["v"]},
    ]
    ranked = [["x", "q"], ["q", "r", "z"], ["q", "r", "s", "w"], []]
    figures = score(ranked, queries)
    assert (figures["p_at_1"], figures["recall_at_3"]) == (25.0, 50.0)
    assert figures["mrr_at_10"] == round(100 * (1 + 1 / 3 + 1 / 4) / 4, 1)
    assert [miss["place"] for miss in figures["misses"]] == [3, 4, None]


def test_the_query_file_has_thirty_queries_whose_expected_blocks_all_exist() -> None:
    queries = load_queries()
    assert len(queries) == 30 and len({q["query"] for q in queries}) == 30
    ids = {example.id for example in build(mirror=SITE).examples or []}
    missing = [(q["query"], e) for q in queries for e in q["expected"] if e not in ids]
    assert missing == []

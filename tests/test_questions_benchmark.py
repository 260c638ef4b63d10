"""benchmarks.questions' scoring on literal questions and replies: page-level P@1 / MRR /
recall@6, passage@1 and strict passage@3 from labelled sections, and the weak marking of
unanswerable and answerable questions. Behaviour only; no figure of the real run is asserted."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from benchmarks.questions import Hit, Reply, ask_server, check_floors, question_cases, reply_from, score
from conftest import SITE

ORG = "https://imqueue.org"
QUESTIONS: list[dict[str, Any]] = [
    {"query": "a", "relevant": [f"{ORG}/api/#locking"], "best": f"{ORG}/api/#locking", "kind": "api"},
    {"query": "b", "relevant": [f"{ORG}/cli/"], "best": f"{ORG}/cli/", "kind": "cli"},
    {"query": "c", "relevant": [f"{ORG}/faq/#x"], "best": f"{ORG}/faq/#x", "kind": "api"},
    {"query": "d", "relevant": [], "best": None, "kind": "commercial"},
]


def replies() -> list[Reply]:
    return [
        # a section hit on the labelled page, its passage from another section: page P@1, no passage@1
        Reply(
            [Hit(f"{ORG}/api/#caching", f"{ORG}/api/#caching"), Hit(f"{ORG}/x/", f"{ORG}/x/#z")],
            False,
        ),
        # the page is labelled whole: any of its sections answers
        Reply([Hit(f"{ORG}/cli/", f"{ORG}/cli/#install")], True),
        # the labelled page at #3, its passage from the labelled section: strict passage@3 only
        Reply([Hit(f"{ORG}/a/", None), Hit(f"{ORG}/b/", None), Hit(f"{ORG}/faq/#y", f"{ORG}/faq/#x")], False),
        Reply([Hit(f"{ORG}/pricing/", None)], True),
    ]


def test_page_figures_count_a_hit_on_a_labelled_page_and_the_passages_their_section() -> None:
    figures = score(QUESTIONS, replies())
    assert figures["answerable"] == 3 and figures["unanswerable"] == 1
    assert figures["p1"] == 66.7  # a and b
    assert figures["mrr"] == round(100 * (1 + 1 + 1 / 3) / 3, 1)
    assert figures["recall6"] == 100.0
    assert figures["api_p1"] == 50.0  # a of a and c
    assert figures["passage1"] == 33.3  # b only: a's top passage is from an unlabelled section
    assert figures["passage3"] == 66.7  # b, and c at #3 (a's three passages are all unlabelled)
    assert figures["unanswerable_weak"] == 100.0 and figures["answerable_weak"] == 33.3
    assert figures["kinds"]["api"] == {"n": 2, "p1": 50.0, "recall6": 100.0}


def test_a_side_without_weak_marking_reports_none_for_both_weak_figures() -> None:
    unmarked = [Reply(reply.hits, None) for reply in replies()]
    figures = score(QUESTIONS, unmarked)
    assert figures["unanswerable_weak"] is None and figures["answerable_weak"] is None


def test_questions_join_the_cv_grouped_by_their_best_answers_page_and_only_when_answerable() -> None:
    cases = question_cases(QUESTIONS)
    assert [case["query"] for case in cases] == ["a", "b", "c"]
    assert cases[0]["topic"] == f"page {ORG}/api/"


def test_floors_fail_a_figure_more_than_a_point_under_and_a_ceiling_more_than_a_point_over() -> None:
    floors = {"_about": "x", "p1": 60.0, "passage1": 50.0, "answerable_weak": 5.0}
    assert check_floors({"p1": 59.1, "passage1": 48.9, "answerable_weak": 6.0}, floors) == [
        "passage1 48.9 below its floor 50.0"
    ]
    assert check_floors({"p1": 60.0, "passage1": 50.0, "answerable_weak": 6.2}, floors) == [
        "answerable_weak 6.2 above its ceiling 5.0"
    ]


def test_the_real_server_answers_the_questions_through_the_mcp_client(tmp_path: Path) -> None:
    # The benchmark's own path: a snapshot of the mirror, the server process, the SDK's client.
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    from imqueue_mcp.docsource import build, save_snapshot

    snapshot = tmp_path / "snapshot.msgpack"
    save_snapshot(build(mirror=SITE), snapshot)
    home = tmp_path / "home"
    home.mkdir()
    asked: list[dict[str, Any]] = [
        {"query": "tracing", "relevant": [], "best": None, "kind": "concept"},
        {"query": "watcherCheckDelay", "relevant": [f"{ORG}/api/core/latest/"], "best": None, "kind": "api"},
    ]
    answers = asyncio.run(ask_server(snapshot, home, [str(q["query"]) for q in asked]))
    assert [answer["query"] for answer in answers] == ["tracing", "watcherCheckDelay"]
    replies = [reply_from(answer) for answer in answers]
    assert all(reply.hits and reply.hits[0].passage for reply in replies)
    assert [reply.weak for reply in replies] == [bool(answer["weak"]) for answer in answers]
    figures = score(asked, replies)
    assert figures["answerable"] == 1 and figures["unanswerable"] == 1
    assert figures["unanswerable_weak"] == (100.0 if answers[0]["weak"] else 0.0)

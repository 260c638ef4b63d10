"""Page-level evidence (ranker.pages) and the coverage side of confidence, each proven on a tiny
hand-written corpus: the behaviour holds with the rule on, and is gone with it neutralised.

    PAGE_FUSION              a page whose title and headings name the query lifts its records
    FEEDBACK_WEIGHT          words the best pages share lift a page that shares them
    PAGE_FIELD_WEIGHTS       a word in a page's title says more than the same word in its body
    CONFIDENCE_MIN_COVERAGE  a hit matching little of the query (words no record has count
                             unmatched) is low whatever its score
    CONFIDENCE_NAMED_COVERAGE ...and more of it when the query names, as a proper name, a thing
                             no record holds
"""

from __future__ import annotations

import pytest

from imqueue_mcp.ranker import Index, rules
from imqueue_mcp.ranker.page_evidence import PageIndex, page_key, query_stems

from fixtures.corpus_tiny import index_of, page, section


def ranked(index: Index, query: str) -> list[str]:
    return [hit.path for hit in index.search(query, limit=10).results]


def fusion_corpus() -> Index:
    """/guide/retry/ is about retrying with backoff as a whole (its title and a heading), but no
    one record of it says both words; /notes/ is one record that mentions both in passing."""
    return index_of(
        page("/guide/retry/", "Retry", summary="How a failed call is retried"),
        section(
            "/guide/retry/#backoff", "Backoff", text="Wait longer between attempts", parent="/guide/retry/"
        ),
        page(
            "/notes/", "Release notes", summary="Fixed a retry backoff bug, updated the logo and the footer"
        ),
        page("/about/", "About", summary="Who writes the software"),
    )


def test_page_fusion_lifts_the_page_whose_title_and_headings_name_the_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rules, "PAGE_FUSION", 1.0)
    assert ranked(fusion_corpus(), "retry backoff")[0].startswith("/guide/retry/")
    monkeypatch.setattr(rules, "PAGE_FUSION", 0.0)
    assert ranked(fusion_corpus(), "retry backoff")[0] == "/notes/"


def test_page_fusion_is_named_in_explain_with_its_page_share(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "PAGE_FUSION", 1.0)
    response = fusion_corpus().search("retry backoff", explain=True)
    assert any("PAGE_FUSION" in note for note in response.notes)
    first = response.results[0].explanation
    assert any(line.startswith("PAGE_FUSION x2: its page scores 1.00 of the best page") for line in first)


def feedback_corpus() -> Index:
    """/graceful/ is the page about shutdown; /worker/ and /a-pool/ each say "shutdown" once in a
    section of the same length, but only /worker/ shares the graceful page's other words."""
    return index_of(
        page("/graceful/", "Graceful shutdown", summary="Drain inflight calls on sigterm"),
        section(
            "/worker/#stop",
            "Stopping",
            text="drain inflight calls on sigterm before shutdown",
            parent="/worker/",
        ),
        section(
            "/a-pool/#close",
            "Closing",
            text="close every open database socket before shutdown",
            parent="/a-pool/",
        ),
        page("/about/", "About", summary="Who writes the software"),
    )


def test_feedback_lifts_a_page_that_shares_the_best_pages_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "RELATIVE_FLOOR", 0.0)  # both sections are far under the page itself
    monkeypatch.setattr(rules, "PAGE_FUSION", 0.5)
    monkeypatch.setattr(rules, "FEEDBACK_WEIGHT", 0.3)
    order = ranked(feedback_corpus(), "graceful shutdown")
    assert order.index("/worker/#stop") < order.index("/a-pool/#close"), order
    response = feedback_corpus().search("graceful shutdown", explain=True)
    assert any(note.startswith("feedback: ") and "sigterm" in note for note in response.notes)
    monkeypatch.setattr(rules, "FEEDBACK_WEIGHT", 0.0)
    order = ranked(feedback_corpus(), "graceful shutdown")
    assert order.index("/a-pool/#close") < order.index("/worker/#stop"), order


def test_a_word_in_a_pages_title_outweighs_it_in_another_pages_body(monkeypatch: pytest.MonkeyPatch) -> None:
    documents = [
        page("/tracing/", "Tracing", summary="spans and exporters"),
        page("/misc/", "Misc", summary="tracing spans exporters"),
    ]

    def best(index: Index) -> str:
        scores, _ = index.inverted.pages.evidence("tracing")
        top = int(scores.argmax())
        return next(
            d.path for i, d in enumerate(documents) if index.inverted.pages.tables().page_of[i] == top
        )

    monkeypatch.setattr(rules, "FEEDBACK_WEIGHT", 0.0)
    assert best(index_of(*documents)) == "/tracing/"
    monkeypatch.setattr(rules, "PAGE_FIELD_WEIGHTS", {"title": 1.0, "headings": 1.0, "body": 3.0})
    assert best(index_of(*documents)) == "/misc/"


def test_a_page_is_its_path_without_the_anchor_and_the_index_round_trips_its_wire_form() -> None:
    index = fusion_corpus()
    assert page_key(index.corpus.documents[1]) == ("org", "/guide/retry/")
    pages = index.inverted.pages
    again = PageIndex.from_wire(pages.to_wire())
    assert (again.evidence("retry backoff")[0] == pages.evidence("retry backoff")[0]).all()
    assert query_stems("How do I retry with backoffs?") == ["retri", "backoff"]


def coverage_corpus() -> Index:
    return index_of(
        page("/deploy/", "Deploy a service", summary="deploy a service with docker"),
        page("/about/", "About", summary="who writes the software"),
        page("/start/", "Getting started", summary="install and run"),
    )


def test_a_hit_matching_little_of_the_query_is_low_whatever_its_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_SCORE", 0.0)
    monkeypatch.setattr(rules, "CONFIDENCE_MIN_COVERAGE", 0.3)
    response = coverage_corpus().search("deploy to lambda kinesis")
    assert response.results[0].path == "/deploy/" and response.results[0].coverage < 0.3
    assert response.weak and response.results[0].confidence == "low"
    explained = coverage_corpus().search("deploy to lambda kinesis", explain=True)
    assert any(note.startswith("not in the docs: lambda, kinesis") for note in explained.notes)
    assert coverage_corpus().search("deploy a service").weak is False  # the whole question matched
    monkeypatch.setattr(rules, "CONFIDENCE_MIN_COVERAGE", 0.0)
    assert coverage_corpus().search("deploy to lambda kinesis").weak is False


def test_a_query_naming_a_thing_no_record_holds_needs_the_named_coverage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_SCORE", 0.0)
    monkeypatch.setattr(rules, "CONFIDENCE_MIN_COVERAGE", 0.3)
    monkeypatch.setattr(rules, "CONFIDENCE_NAMED_COVERAGE", 0.6)
    named = coverage_corpus().search("deploy a docker service with Zorbl")
    top = named.results[0]
    assert top.path == "/deploy/" and 0.3 <= top.coverage < 0.6
    assert named.named_unknown == ("zorbl",) and named.weak  # the question is about Zorbl
    for plain in (
        "deploy a docker service with zorbl",  # not written as a name: a word the docs lack
        "Zorbl: deploy a docker service",  # capitalised where a sentence starts
        "deploy a docker service, ZORBL",  # shouted: an error code, not a name
    ):
        response = coverage_corpus().search(plain)
        assert response.named_unknown == () and not response.weak, plain
    explained = coverage_corpus().search("deploy a docker service with Zorbl", explain=True)
    assert "named as a proper name, so the question is about it: zorbl" in explained.notes
    assert any("CONFIDENCE_NAMED_COVERAGE" in line for line in explained.results[0].explanation)


def test_a_compound_of_words_the_docs_hold_is_not_a_subject_they_lack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """docker-service and deploy.docker: no record holds the compound as one word, but each of its
    parts is a word the docs have; the query is not about something they lack, so the hit keeps
    its coverage. A separator-free name (Zorbl, DeployZorbl) is no such compound."""
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_SCORE", 0.0)
    monkeypatch.setattr(rules, "CONFIDENCE_MIN_COVERAGE", 0.3)
    for query in ("deploy a docker-service", "deploy.docker for a service"):
        response = coverage_corpus().search(query, explain=True)
        assert response.results[0].path == "/deploy/", query
        assert not any(note.startswith("not in the docs") for note in response.notes), query
        assert response.results[0].coverage == 1.0 and not response.weak, query
    lacking = coverage_corpus().search("deploy a zorbl-service", explain=True)  # zorbl is no word of theirs
    assert any(note.startswith("not in the docs: zorbl") for note in lacking.notes)
    assert lacking.results[0].coverage < 1.0
    assert coverage_corpus().search("deploy with DeployZorbl").results[0].coverage < 1.0

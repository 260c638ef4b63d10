"""Passages (server/docs/passage_text.py, hit_passages.py) on literal markdown: units, the choice, the
cut markers, the budgets, and where a hit's text comes from. No server, no mirror."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from imqueue_mcp.ranker import Corpus, Document, Index
from imqueue_mcp.server.docs.budget import estimate_tokens
from imqueue_mcp.server.docs.corpus_keeper import LoadedCorpus
from imqueue_mcp.server.docs.hit_passages import (
    PassageOptions,
    PassageSource,
    add_example_passages,
    add_search_passages,
    markdown_sections,
    source_for,
)
from imqueue_mcp.server.docs.passage_text import (
    CODE_CUT_MARKER,
    TEXT_CUT_MARKER,
    Known,
    Matches,
    QueryWords,
    SectionText,
    choose,
    prepare,
    rank_parts,
    segment,
    sentences,
)

PAGE = "https://imqueue.org/queues/"
MARKDOWN = """# Queues

Source: https://imqueue.org/queues/
Published: 2026-01-01

Queues carry every call between services.

## Delivery {#delivery}

Messages are delivered at least once. A worker that dies before it starts on a message leaves
it behind, e.g. during a deploy. The watcher moves it back onto the queue after
`safeDeliveryTtl` milliseconds, which defaults to 5000.

- First item of a list.
- Second item, with a [link](https://imqueue.org/elsewhere/) inside.

## Install {#install}

Install the package with npm:

```bash
npm i @imqueue/core
```

| Option | Default |
| --- | --- |
| prefix | imq |
"""
RANGES = {"delivery": [7, 16], "install": [16, 28]}


def page_of(markdown: str = MARKDOWN, ranges: dict[str, list[int]] | None = None) -> Any:
    return prepare(markdown_sections(PAGE, markdown, RANGES if ranges is None else ranges), "markdown", True)


def test_sentences_split_at_sentence_ends_but_not_after_an_abbreviation() -> None:
    text = "It stays, e.g. during a deploy. Then it moves (see `a.b`). Done!"
    assert sentences(text) == ["It stays, e.g. during a deploy.", "Then it moves (see `a.b`).", "Done!"]


def test_units_are_sentences_list_items_rows_headings_and_whole_code_blocks() -> None:
    units = segment(MARKDOWN, skip_page_header=True)
    kinds = [unit.kind for unit in units]
    assert units[0].text == "Queues carry every call between services."  # title and metadata skipped
    assert "code" in kinds and "row" in kinds and "heading" in kinds
    code = next(unit for unit in units if unit.kind == "code")
    assert code.text == "```bash\nnpm i @imqueue/core\n```"
    items = [unit for unit in units if unit.text.startswith("- ")]
    assert [item.joiner for item in items] == ["\n\n", "\n"]  # the second item follows on the next line
    assert [unit.text for unit in units if unit.kind == "row"] == ["| Option | Default |", "| prefix | imq |"]


def test_the_page_is_cut_at_its_section_ranges_with_anchor_urls() -> None:
    sections = markdown_sections(PAGE, MARKDOWN, RANGES)
    assert [s.url for s in sections] == [PAGE, PAGE + "#delivery", PAGE + "#install"]
    assert sections[1].heading == "Delivery" and sections[1].markdown.startswith("## Delivery")


def test_a_range_that_does_not_start_at_a_heading_is_found_by_its_anchor_else_not_trusted() -> None:
    # The site's ranges count the lines of another rendering of some pages: the heading that
    # carries the anchor ({#id} here) is where the section starts.
    sections = markdown_sections(PAGE, MARKDOWN, {"delivery": [8, 16], "install": [16, 28]})
    assert [s.url for s in sections] == [PAGE, PAGE + "#delivery", PAGE + "#install"]
    assert sections[1].markdown.startswith("## Delivery")
    sections = markdown_sections(PAGE, MARKDOWN, {"deliveries": [8, 16], "install": [16, 28]})
    assert [s.url for s in sections] == [PAGE, PAGE + "#install"]
    assert "at least once" in sections[0].markdown  # its lines stay with the section above


def test_a_heading_without_an_id_is_found_by_its_slug_and_never_inside_a_code_block() -> None:
    markdown = (
        "# Guide\n\nIntro.\n\n```bash\n# Migration from 2.x to 3.x\n```\n\n"
        "## Migration from 2.x to 3.x\n\nChange the imports.\n\n"
        "## `IMQ_REDIS`, the broker's address\n\nSet it.\n"
    )
    ranges = {"migration-from-2-x-to-3-x": [40, 50], "imq-redis-the-broker-s-address": [41, 50]}
    sections = markdown_sections(PAGE, markdown, ranges)
    assert [s.url for s in sections] == [
        PAGE,
        PAGE + "#migration-from-2-x-to-3-x",
        PAGE + "#imq-redis-the-broker-s-address",
    ]
    assert sections[1].markdown == "## Migration from 2.x to 3.x\n\nChange the imports.\n"
    assert "```bash" in sections[0].markdown


def test_a_page_hits_passage_comes_from_the_section_that_answers_not_a_passing_mention() -> None:
    # The intro's one sentence has both words; the section is about them (its heading and each of
    # its sentences): section-level BM25 with the heading's weight picks the section.
    markdown = (
        "# Workers\n\nSource: https://imqueue.org/workers/\n\n"
        "Workers take messages, and a watcher with a delay looks after them.\n\n"
        "## Watcher delay {#watcher-delay}\n\nThe watcher checks every 5 seconds by default.\n\n"
        "Raise the delay when Redis is busy.\n\n"
        "## Scaling {#scaling}\n\nRun more workers to drain a queue.\n"
    )
    ranges = {"watcher-delay": [6, 12], "scaling": [12, 15]}
    page = prepare(markdown_sections(PAGE, markdown, ranges), "markdown", True)
    query = QueryWords.of("watcher delay")
    assert page.parts[rank_parts(page, query)[0]].url == PAGE + "#watcher-delay"
    passage = choose(page, query, 40)
    assert passage is not None and passage.url == PAGE + "#watcher-delay"
    assert passage.text == (
        "The watcher checks every 5 seconds by default.\n\nRaise the delay when Redis is busy."
    )


def test_a_question_weighing_options_gets_the_section_that_decides_between_them() -> None:
    # "Where NATS fits" shares more of the question's words; "How to choose" is written to decide.
    markdown = (
        "# imqueue vs NATS\n\nSource: https://imqueue.org/vs-nats/\n\n"
        "Two ways to connect services.\n\n"
        "## Where NATS fits {#where-nats-fits}\n\nNATS fits a team that already runs NATS for streaming.\n\n"
        "## How to choose {#how-to-choose}\n\nPick imqueue when your services are TypeScript; keep NATS "
        "when other languages call them.\n"
    )
    ranges = {"where-nats-fits": [6, 9], "how-to-choose": [9, 12]}
    page = prepare(markdown_sections(PAGE, markdown, ranges), "markdown", True)
    weighing = QueryWords.of("our team already runs NATS: imqueue or NATS for services?")
    assert weighing.choice
    assert page.parts[rank_parts(page, weighing)[0]].url == PAGE + "#how-to-choose"
    plain = QueryWords.of("our team already runs NATS for services")
    assert not plain.choice
    assert page.parts[rank_parts(page, plain)[0]].url == PAGE + "#where-nats-fits"


def test_a_page_hits_passage_prefers_a_section_to_the_lead_that_sums_the_page_up() -> None:
    # The lead names what the sections answer, in fewer words (so BM25 alone would favour it).
    markdown = (
        "# Backpressure\n\nSource: https://imqueue.org/backpressure/\n\n"
        "A slow downstream service cascades over HTTP; a queue absorbs it.\n\n"
        "## What a queue changes {#what-a-queue-changes}\n\n"
        "Callers enqueue and return, so a slow downstream service only lengthens the queue.\n\n"
        "Nothing cascades: the backlog drains when the service catches up, and the queue absorbs bursts.\n\n"
        "## Limits {#limits}\n\nA queue holds messages in memory.\n"
    )
    ranges = {"what-a-queue-changes": [6, 12], "limits": [12, 15]}
    page = prepare(markdown_sections(PAGE, markdown, ranges), "markdown", True)
    query = QueryWords.of("why does a queue stop a slow downstream service from cascading")
    assert page.parts[rank_parts(page, query)[0]].url == PAGE + "#what-a-queue-changes"
    passage = choose(page, query, 60)
    assert passage is not None and passage.url == PAGE + "#what-a-queue-changes"


def test_the_passage_is_the_run_of_whole_sentences_that_covers_the_query() -> None:
    page = page_of()
    passage = choose(page, QueryWords.of("how long until the watcher moves a message back"), 40)
    assert passage is not None
    assert passage.url == PAGE + "#delivery"
    assert "The watcher moves it back onto the queue after `safeDeliveryTtl` milliseconds" in passage.text
    assert passage.tokens == estimate_tokens(passage.text) <= 40
    assert passage.text.rstrip().endswith((".", "!", "?", "inside."))  # whole sentences only


def test_a_words_inflection_finds_its_sentence() -> None:
    passage = choose(page_of(), QueryWords.of("installing packages"), 30)
    assert passage is not None and passage.url == PAGE + "#install"


def test_a_link_target_is_not_read_as_words() -> None:
    passage = choose(page_of(), QueryWords.of("elsewhere"), 30)
    assert passage is not None and "elsewhere" not in passage.text.split("(")[0]
    assert passage.url == PAGE  # nothing matches: the start of the page's text


def test_a_code_block_is_given_whole_when_it_fits_and_cut_with_a_marker_when_not() -> None:
    lines = "\n".join(f"line {n} of the install script" for n in range(40))
    markdown = f"# T\n\n## Install {{#install}}\n\n```bash\n{lines}\n```\n"
    page = prepare(markdown_sections(PAGE, markdown, {"install": [2, 50]}), "markdown", True)
    whole = choose(page, QueryWords.of("install script"), 2000)
    assert (
        whole is not None
        and whole.text.startswith("```bash")
        and whole.text.endswith("```")
        and not whole.cut
    )
    cut = choose(page, QueryWords.of("install script"), 40)
    assert cut is not None and cut.cut and cut.text.endswith(CODE_CUT_MARKER)
    assert cut.text.count("```") == 2  # the fence is closed before the marker
    assert cut.tokens <= 40


def test_a_sentence_over_the_budget_is_cut_at_a_word_with_a_marker() -> None:
    long = "Queues " + " ".join(["carry"] * 200) + " calls."
    page = prepare([SectionText(PAGE, "", long)], "prose")
    passage = choose(page, QueryWords.of("queues"), 25)
    assert passage is not None and passage.cut and passage.text.endswith(TEXT_CUT_MARKER)
    assert passage.tokens <= 25


def test_an_example_passage_leaves_the_code_out_and_prefers_the_prose_beside_the_block() -> None:
    page = page_of()
    part = next(n for n, p in enumerate(page.parts) if p.url == PAGE + "#install")
    passage = choose(page, QueryWords.of("npm"), 40, parts=[part], near=None, prose_only=True)
    assert passage is not None and "```" not in passage.text and "npm" in passage.text


# --- the budgets, over a corpus -------------------------------------------------------------


def corpus(markdown: dict[str, str]) -> LoadedCorpus:
    docs = [
        Document(path="/queues/", site="org", tier="page", title="Queues", summary="Queues carry calls."),
        Document(
            path="/queues/#delivery",
            site="org",
            tier="section",
            title="Queues",
            heading="Delivery",
            text="Messages are delivered at least once.",
        ),
        Document(path="/api/x/", site="org", tier="symbol", title="X", summary="Does X. Then Y."),
    ]
    index = Index(Corpus(docs))
    sections = {"imqueue.org": {"/queues/": RANGES}}
    return LoadedCorpus(index, "snapshot", "2026-01-01", "f", 0.0, markdown=markdown, sections=sections)


def hits(*urls: str) -> dict[str, Any]:
    return {"query": "q", "results": [{"url": url, "description": "Does X. Then Y."} for url in urls]}


def test_each_hit_gets_a_passage_within_its_budget_until_max_tokens_is_spent() -> None:
    source = PassageSource(corpus({PAGE: MARKDOWN}))
    data = hits(PAGE + "#delivery", PAGE + "#install", PAGE, "https://imqueue.org/api/x/")
    add_search_passages(data, source, "message delivered watcher install", PassageOptions(True, 30, 60))
    given = [hit.get("passage") for hit in data["results"]]
    assert all(p is None or p["tokens"] <= 30 for p in given)
    assert sum(p["tokens"] for p in given if p) <= 60
    assert data["passageBudget"]["tokens"] == sum(p["tokens"] for p in given if p)
    assert data["passageBudget"]["omitted"] == sum(1 for p in given if p is None) >= 1
    assert given[0] is not None and given[0]["url"] == PAGE + "#delivery" and given[0]["basis"] == "markdown"


def test_a_page_is_prepared_with_the_index_stems_and_lemmas_as_the_ranker_reads_words() -> None:
    source = PassageSource(corpus({PAGE: MARKDOWN}))
    assert {"messages", "delivered"} <= set(source.known.stems)  # the index keeps its words' stems
    sections = markdown_sections(PAGE, MARKDOWN, RANGES)
    with_stems = prepare(sections, "markdown", True, source.known)
    without = prepare(sections, "markdown", True)
    assert with_stems.postings == without.postings and with_stems.heading_roots == without.heading_roots
    # and they are what it reads: a stem given for a word is among the page's roots
    assert "zz-stem" in prepare(sections, "markdown", True, Known({"delivered": "zz-stem"})).postings
    # a lemma no suffix rule reaches joins a query word to the page's: "found" finds "find"
    irregular = Known(lemmas={"found": "find"})
    for known, matched in ((irregular, True), (Known(), False)):
        page = prepare([SectionText(PAGE, "", "Watchers find every delayed message.")], "prose", known=known)
        assert (Matches.on(page, QueryWords.of("found", known), [(0, 1)]).worth(0) > 0) is matched


def test_text_comes_from_the_markdown_else_the_prose_else_the_hit_description() -> None:
    without_markdown = PassageSource(corpus({}))
    data = hits(PAGE + "#delivery", "https://imqueue.org/api/x/")
    add_search_passages(data, without_markdown, "delivered", PassageOptions())
    first, second = (hit["passage"] for hit in data["results"])
    assert first["basis"] == "prose" and "at least once" in first["text"]
    assert second["basis"] == "summary" and second["text"] == "Does X. Then Y."


def test_a_window_shown_for_one_hit_is_not_shown_again_for_the_next_hit_of_its_page() -> None:
    source = PassageSource(corpus({PAGE: MARKDOWN}))
    data = hits(PAGE, PAGE)
    add_search_passages(data, source, "watcher", PassageOptions())
    first, second = (hit["passage"] for hit in data["results"])
    assert (first["url"], first["text"]) != (second["url"], second["text"])


def test_an_example_hit_gets_the_prose_of_its_section() -> None:
    source = PassageSource(corpus({PAGE: MARKDOWN}))
    hit = {"url": PAGE + "#install", "code": "npm i @imqueue/core", "lead": "Install it:"}
    data: dict[str, Any] = {"results": [hit]}
    add_example_passages(data, source, "install the core package", PassageOptions())
    passage = data["results"][0]["passage"]
    assert passage["url"] == PAGE + "#install" and "Install the package with npm" in passage["text"]
    assert "npm i @imqueue/core" not in passage["text"]


@pytest.mark.parametrize("query", ["", "zqxv"])
def test_a_query_that_matches_nothing_gets_the_start_of_the_section(query: str) -> None:
    passage = choose(page_of(), QueryWords.of(query), 30, parts=[1])
    assert passage is not None and passage.text.startswith("Messages are delivered")


# --- preparing the pages ahead of the queries -----------------------------------------------


def test_the_warm_up_prepares_every_page_with_text_and_a_retired_source_stops() -> None:
    source = PassageSource(corpus({PAGE: MARKDOWN}))
    assert source.pages_with_text() == [PAGE] and not source.prepared()  # /api/x/ has no text
    source.warm()
    assert source.warmed.is_set() and source.prepared() == {PAGE}
    assert source.warm_seconds is not None and source.warm_seconds >= 0
    page = source.page(PAGE)
    assert page is not None and page.basis == "markdown" and source.page(PAGE) is page  # prepared once
    retired = PassageSource(corpus({PAGE: MARKDOWN}))
    retired.retired = True  # another corpus answers now
    retired.warm()
    assert retired.warmed.is_set() and not retired.prepared()


def test_on_the_event_loop_the_warm_up_takes_a_page_a_turn_between_the_queries() -> None:
    pages = {f"https://imqueue.org/p{n}/": MARKDOWN for n in range(3)}

    async def scenario() -> list[int]:
        source = source_for(corpus(pages))
        assert not source.prepared()  # a task of this loop: nothing ran before this coroutine yields
        seen = []
        while not source.warmed.is_set():
            await asyncio.sleep(0)  # a query's turn
            seen.append(len(source.prepared()))
        return seen

    # one page a turn (the three pages' markdown, then /queues/'s prose); then the warm-up ends
    assert asyncio.run(scenario()) == [1, 2, 3, 4, 4]


def test_paced_the_warm_up_leaves_the_loop_idle_between_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """pace_warm_up (the stdio server's STDIO_WARM_PAUSE): after each page the warm-up sleeps, so a
    call's turns of the loop run before the next page, not after it."""
    from imqueue_mcp.server.docs import hit_passages

    monkeypatch.setattr(hit_passages, "_warm_pause", hit_passages._warm_pause)  # restored after
    hit_passages.pace_warm_up(0.2)
    pages = {f"https://imqueue.org/p{n}/": MARKDOWN for n in range(3)}

    async def scenario() -> tuple[list[int], float]:
        source = source_for(corpus(pages))
        started, seen = time.monotonic(), []
        for _ in range(10):  # ten turns of a busy caller: the first page, then the pause
            await asyncio.sleep(0)
            seen.append(len(source.prepared()))
        assert source.warmed.wait(0) is False
        while not source.warmed.is_set():
            await asyncio.sleep(0.01)
        return seen, time.monotonic() - started

    seen, took = asyncio.run(scenario())
    assert seen == [1] * 10  # one page, then the loop is the caller's while the warm-up sleeps
    assert took >= 4 * 0.2  # four pages (three markdown, /queues/'s prose), a pause after each


def test_the_answering_corpus_is_warmed_in_the_background_and_the_one_it_replaces_stops() -> None:
    first, second = corpus({PAGE: MARKDOWN}), corpus({})
    source = source_for(first)  # no event loop here: a thread warms it
    assert source.warmed.wait(10) and source.prepared() == {PAGE}
    assert source_for(first) is source and not source.retired
    replacing = source_for(second)
    assert replacing is not source and source.retired and replacing.warmed.wait(10)
    page = replacing.page(PAGE)  # the second corpus has no markdown: the prose of its page
    assert page is not None and page.basis == "prose" and replacing.prepared() == {PAGE}

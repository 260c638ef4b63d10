"""Each ranking rule, proven on a tiny hand-written corpus: the behaviour holds with the rule, and
flips when the rule is neutralised.

The pattern: build `index_of(...)` (fixtures/corpus_tiny.py) over a few literal records, assert
the behaviour with the real constant, then `monkeypatch` that constant in `ranker.rules` to its
neutral value, rebuild the index (field weights are read at build time) and assert the
behaviour is gone. Rules that have no constant (segmentation, inflection roots, whole-word
matching, no synonyms, typo correction only for unmatched terms and never for identifier
compounds) are neutralised by patching in the behaviour they exclude. Peer hits competing on
score and URL tie-breaks are proven within one response (a better-scored peer hit listed first;
a reversed corpus giving the same order). Nothing here reads ../shared.
"""

from __future__ import annotations

import importlib

import pytest

from imqueue_mcp.ranker import Index, SearchResponse, normalize_package, rules
from imqueue_mcp.ranker import index as index_module
from imqueue_mcp.ranker.index import Form, InvertedIndex
from imqueue_mcp.ranker.text import RAW_TOKEN

from fixtures.corpus_tiny import answer, index_of, page, section, symbol

# `ranker.search` the attribute is the search function (re-exported by ranker/__init__), so the
# module is taken from the import system.
search_module = importlib.import_module("imqueue_mcp.ranker.search")


def paths(response: SearchResponse) -> list[str]:
    return [hit.path for hit in response.results]


def ranked(index: Index, query: str, **options: object) -> list[str]:
    return paths(index.search(query, limit=20, **options))  # type: ignore[arg-type]


def score_of(response: SearchResponse, path: str) -> float:
    return next(hit.score for hit in response.results if hit.path == path)


def above(order: list[str], first: str, second: str) -> bool:
    return order.index(first) < order.index(second)


# --- IDF -----------------------------------------------------------------------------------


def idf_corpus() -> Index:
    """`imqueue` is on every page (says little); `retry` on two (says a lot). /imqueue/ has the
    stronger evidence for its word (title + keywords), /retry/ for the rarer one."""
    return index_of(
        page("/imqueue/", "imqueue", keywords="imqueue", text="retry"),
        page("/retry/", "Retry", text="imqueue"),
        page("/start/", "Getting started", summary="imqueue basics"),
        page("/clients/", "Clients", summary="an imqueue client"),
        page("/deploy/", "Deploy", summary="imqueue on kubernetes"),
    )


def test_rare_term_outweighs_common_term(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ranked(idf_corpus(), "imqueue retry")[0] == "/retry/"

    monkeypatch.setattr(rules, "IDF_POWER", 0)  # every term counts the same
    assert ranked(idf_corpus(), "imqueue retry")[0] == "/imqueue/"


# --- identifier segmentation ---------------------------------------------------------------


def segmented_corpus() -> Index:
    return index_of(
        symbol("MigrateDownOptions", "@imqueue/pg-prisma", kind="interface"),
        symbol("RedisQueue.send", "@imqueue/core"),
        page("/guide/", "Guide", text="start here"),
    )


def unsegmented_words(text: str) -> list[str]:
    return [match.group().lower() for match in RAW_TOKEN.finditer(text)]


@pytest.mark.parametrize(
    ("query", "title"),
    [
        ("down", "MigrateDownOptions"),
        ("options", "MigrateDownOptions"),
        ("send", "RedisQueue.send"),
        ("redis", "RedisQueue.send"),
    ],
)
def test_identifier_segments_find_the_symbol(monkeypatch: pytest.MonkeyPatch, query: str, title: str) -> None:
    response = segmented_corpus().search(query)
    assert [hit.title for hit in response.results][:1] == [title]

    monkeypatch.setattr(index_module, "words", unsegmented_words)  # index whole tokens only
    response = segmented_corpus().search(query)
    assert title not in [hit.title for hit in response.results]


def test_whole_dotted_name_finds_its_symbol() -> None:
    assert segmented_corpus().search("RedisQueue.send").results[0].title == "RedisQueue.send"


# --- prefixes ------------------------------------------------------------------------------


def prefix_corpus() -> Index:
    """/watch/ has `watch` as a whole word in a two-word title; /watcher/ has `watcher` alone (a
    shorter title, so more evidence per word)."""
    return index_of(
        page("/watch/", "Watch events"),
        page("/watcher/", "Watcher"),
        page("/other/", "Queue lifecycle"),
    )


def test_prefix_of_segment_scores_below_whole_segment(monkeypatch: pytest.MonkeyPatch) -> None:
    order = ranked(prefix_corpus(), "watch")
    assert order[:2] == ["/watch/", "/watcher/"]  # the prefix still matches, below the whole word

    monkeypatch.setattr(rules, "PREFIX_WEIGHT", 1.0)  # a prefix as good as the word (but its length)
    assert ranked(prefix_corpus(), "watch")[0] == "/watcher/"


def test_prefix_matches_a_segment_inside_an_identifier() -> None:
    index = index_of(symbol("ConfigWatcher", "@imqueue/core", kind="class"), page("/x/", "Other"))
    assert index.search("watch").results[0].title == "ConfigWatcher"


def test_fragment_under_four_characters_matches_nothing_by_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = (page("/queue/", "Queue"), page("/other/", "Broker"))
    assert ranked(index_of(*corpus), "que") == []
    assert ranked(index_of(*corpus), "queu") == ["/queue/"]  # four characters do

    monkeypatch.setattr(rules, "MIN_PREFIX", 1)
    assert ranked(index_of(*corpus), "que") == ["/queue/"]


# --- no match in the middle of a word ------------------------------------------------------


def infix_corpus() -> Index:
    return index_of(
        page("/migrate/", "Migrate", summary="description of the migration tool"),
        symbol("RateLimiter", "@imqueue/rpc", kind="class"),
        page("/network/", "Network", summary="bind to an IP address"),
    )


def with_infix_matching(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the rule excludes: a term also reaching every word it sits inside."""
    real_forms = InvertedIndex.forms

    def forms(self: InvertedIndex, term: str) -> list[Form]:
        found = real_forms(self, term)
        reached = {form.word for form in found}
        return found + [
            Form(word, "infix", rules.PREFIX_WEIGHT)
            for word in self.vocabulary
            if term in word and word not in reached
        ]

    monkeypatch.setattr(InvertedIndex, "forms", forms)


@pytest.mark.parametrize(
    ("query", "wanted", "inside"),
    [("rate", "/api/rpc/latest/rpc.ratelimiter/", "/migrate/"), ("ip", "/network/", "/migrate/")],
)
def test_term_never_matches_the_middle_of_a_longer_word(
    monkeypatch: pytest.MonkeyPatch, query: str, wanted: str, inside: str
) -> None:
    order = ranked(infix_corpus(), query)
    assert order == [wanted]  # `rate` is not in migrate, `ip` not in description

    with_infix_matching(monkeypatch)
    assert inside in ranked(infix_corpus(), query)


# --- inflections ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "written"),
    [
        ("retries", "retrying"),
        ("retrying", "retries"),
        ("queued", "queues"),
        ("validation", "validated"),
        ("compression", "compressed"),
        ("exposing", "exposes"),
        ("libraries", "library"),
        ("boxes", "box"),
    ],
)
def test_inflections_match_form_to_form(monkeypatch: pytest.MonkeyPatch, query: str, written: str) -> None:
    corpus = (page("/hit/", written.capitalize()), page("/other/", "Broker"))
    response = index_of(*corpus).search(query, explain=True)
    assert paths(response) == ["/hit/"]
    assert response.corrected is None  # reached as an inflection, not as a typo
    assert any(
        line.startswith(f"{query!r} -> {written!r} (INFLECTION_WEIGHT x")
        for line in response.results[0].explanation
    )

    monkeypatch.setattr(index_module, "inflection_roots", lambda word, stem=None: frozenset({word}))
    response = index_of(*corpus).search(query)
    assert response.results == [] or response.corrected == written  # at best a typo guess (queued)


def test_inflection_scores_below_the_word_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    # Same shape (the words sit in summaries: no curated title phrase in play); the inflected
    # record sorts first by URL, so only the discount puts it second.
    corpus = (
        page("/a-retry/", "Calls", summary="retry"),
        page("/b-retries/", "Calls", summary="retries"),
        page("/other/", "Broker"),
    )
    assert ranked(index_of(*corpus), "retries")[:2] == ["/b-retries/", "/a-retry/"]

    monkeypatch.setattr(rules, "INFLECTION_WEIGHT", 1.0)
    assert ranked(index_of(*corpus), "retries")[:2] == ["/a-retry/", "/b-retries/"]


# --- no synonyms ---------------------------------------------------------------------------


def test_a_synonym_does_not_match(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = (page("/remove/", "Remove a service"), page("/other/", "Broker"))
    response = index_of(*corpus).search("delete")
    assert response.results == [] and response.miss is not None

    real_forms = InvertedIndex.forms  # what the rule excludes: a synonym map
    synonyms = {"delete": "remove"}

    def forms(self: InvertedIndex, term: str) -> list[Form]:
        found = real_forms(self, term)
        return found + ([Form(synonyms[term], "synonym", 1.0)] if term in synonyms else [])

    monkeypatch.setattr(InvertedIndex, "forms", forms)
    assert ranked(index_of(*corpus), "delete") == ["/remove/"]


# --- a symbol's summary, a symbol's package -----------------------------------------------


def summary_corpus() -> Index:
    return index_of(
        symbol("Pinger.beat", "@imqueue/core", summary="Sends a heartbeat"),
        page("/guide/heartbeat/", "Heartbeat"),
        page("/guide/liveness/", "Liveness", summary="The service sends a heartbeat every second"),
        page("/guide/other/", "Broker"),
    )


def test_symbol_matched_on_summary_alone_ranks_below_title_match() -> None:
    order = ranked(summary_corpus(), "heartbeat")
    assert "/api/core/latest/core.pinger.beat/" in order  # found by its summary alone
    assert order[0] == "/guide/heartbeat/"


def test_symbol_summary_counts_below_a_page_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    symbol_path = "/api/core/latest/core.pinger.beat/"
    assert above(ranked(summary_corpus(), "heartbeat"), "/guide/liveness/", symbol_path)

    monkeypatch.setattr(rules, "SYMBOL_SUMMARY_WEIGHT", rules.FIELD_WEIGHTS["summary"])
    assert above(ranked(summary_corpus(), "heartbeat"), symbol_path, "/guide/liveness/")


def package_corpus() -> Index:
    return index_of(
        symbol("IMQService", "@imqueue/rpc", kind="class", summary="Base class of a service"),
        symbol("IMQClient", "@imqueue/rpc", kind="class", summary="Base class of a client"),
        symbol("RedisQueue", "@imqueue/core", kind="class", summary="The message queue"),
        page("/guide/start/", "Getting started", text="install imqueue and its rpc layer, then a service"),
    )


@pytest.mark.parametrize("query", ["rpc", "@imqueue/rpc"])
def test_package_style_query_finds_its_symbols(monkeypatch: pytest.MonkeyPatch, query: str) -> None:
    rpc_symbols = {"/api/rpc/latest/rpc.imqservice/", "/api/rpc/latest/rpc.imqclient/"}
    top = package_corpus().search(query, limit=20).results[:2]
    assert {hit.path for hit in top} == rpc_symbols and all(hit.score > 0 for hit in top)

    monkeypatch.setitem(rules.FIELD_WEIGHTS, "package", 0.0)
    response = package_corpus().search(query, limit=20)
    assert all(hit.score == 0.0 for hit in response.results if hit.path in rpc_symbols)


def filter_corpus() -> Index:
    return index_of(
        symbol("IMQClient.send", "@imqueue/rpc"),
        symbol("RedisQueue.send", "@imqueue/core"),
        page("/api/rpc/", "rpc", summary="how to send a call"),  # not a symbol: in by its path
        page("/guide/send/", "Send", summary="send a message"),
    )


@pytest.mark.parametrize(
    ("query", "package"),
    [
        ("send", "rpc"),
        ("send", "@imqueue/rpc"),
        ("send", "RPC "),
        ("pkg:rpc send", None),
        ("send pkg:@imqueue/rpc", None),
    ],
)
def test_package_filter_accepts_short_or_scoped_name(query: str, package: str | None) -> None:
    response = filter_corpus().search(query, limit=10, package=package)
    assert sorted(paths(response)) == ["/api/rpc/", "/api/rpc/latest/rpc.imqclient.send/"]
    # without the filter the other package's record is there
    assert "/api/core/latest/core.redisqueue.send/" in ranked(filter_corpus(), "send")


def test_package_names_normalise_to_the_scope() -> None:
    assert normalize_package("rpc") == normalize_package("@imqueue/rpc") == "@imqueue/rpc"
    assert normalize_package(" Core ") == "@imqueue/core"
    with pytest.raises(ValueError):
        normalize_package("  ")


@pytest.mark.parametrize("foreign", ["@foo/bar", "@other/rpc", "a/b", "pg cache"])
def test_a_name_outside_the_imqueue_scope_is_refused_not_prefixed(foreign: str) -> None:
    with pytest.raises(ValueError, match="not an @imqueue package name"):
        normalize_package(foreign)
    with pytest.raises(ValueError, match="not an @imqueue package name"):
        filter_corpus().search("send", package=foreign)


# --- blog demotion -------------------------------------------------------------------------


def test_doc_page_wins_a_near_tie_with_a_blog_post(monkeypatch: pytest.MonkeyPatch) -> None:
    # The post has slightly the better match (shorter prose), and sorts first by URL.
    post_text = "a retry " + "word " * 18
    page_text = "a retry " + "word " * 22

    def corpus() -> Index:
        return index_of(
            page("/blog/retries/", "Retries", text=post_text),
            page("/guide/retries/", "Retries", text=page_text),
        )

    assert ranked(corpus(), "retry") == ["/guide/retries/", "/blog/retries/"]

    monkeypatch.setattr(rules, "BLOG_DEMOTION", 1.0)
    assert ranked(corpus(), "retry") == ["/blog/retries/", "/guide/retries/"]


def test_decisively_better_blog_post_still_leads(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:
        return index_of(
            page("/blog/retries/", "Retry strategies", keywords="retry"),
            page("/guide/calls/", "Calls", text="a call may retry once"),
        )

    assert ranked(corpus(), "retry")[0] == "/blog/retries/"  # a multiplier, not a wall

    monkeypatch.setattr(rules, "BLOG_DEMOTION", 0.0)  # a wall would bury it
    assert ranked(corpus(), "retry")[0] == "/guide/calls/"


def test_a_listing_page_gives_way_to_the_post_it_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blog topic's page lists its posts' summaries, so it holds the words of every question one
    of them answers, often more of them than the post itself: demoted, the post leads."""
    summary = "Retry a failed call with backoff: how many attempts, and how long between them."

    def corpus() -> Index:
        return index_of(
            page("/blog/retries/", "Retry strategies", summary=summary),
            page(
                "/blog/topics/resilience/",
                "Resilience",
                listing=True,
                summary="Posts on failed calls: retry attempts, the time between attempts, timeouts.",
                text=f"Retry strategies: {summary} Timeouts: how long a call waits for its reply.",
            ),
        )

    query = "how long between retry attempts of a failed call"
    assert ranked(corpus(), query) == ["/blog/retries/", "/blog/topics/resilience/"]
    explained = corpus().search(query, explain=True).results[1].explanation
    assert f"LISTING_DEMOTION x{rules.LISTING_DEMOTION:g}: a listing of other pages' summaries" in explained

    monkeypatch.setattr(rules, "LISTING_DEMOTION", 1.0)
    assert ranked(corpus(), query)[0] == "/blog/topics/resilience/"


# --- caps ----------------------------------------------------------------------------------


def parent_corpus() -> Index:
    return index_of(
        symbol("Broker.publish", "@imqueue/core"),
        symbol("Broker.publishMany", "@imqueue/core"),
        symbol("Broker.publishLater", "@imqueue/core"),
        page("/guide/events/", "Events", text="services publish events"),
    )


def test_third_member_of_a_parent_moves_below_uncapped_results(monkeypatch: pytest.MonkeyPatch) -> None:
    response = parent_corpus().search("publish", limit=10, explain=True)
    order = paths(response)
    assert order[2] == "/guide/events/"
    last = response.results[3]
    assert last.path.startswith("/api/core/latest/core.broker.")
    assert last.score > score_of(response, "/guide/events/")  # it outscored the page, yet sits below
    assert any("per-class cap (2 from Broker)" in line for line in last.explanation)

    monkeypatch.setattr(rules, "PER_PARENT_CAP", 10**6)  # the sections' cap does not hold members
    assert paths(parent_corpus().search("publish", limit=10))[2] == "/guide/events/"
    monkeypatch.setattr(rules, "PER_CLASS_CAP", 10**6)
    assert ranked(parent_corpus(), "publish")[-1] == "/guide/events/"


def member_corpus() -> Index:
    return index_of(
        symbol("RedisQueue.send", "@imqueue/core"),
        symbol("ClusteredRedisQueue.send", "@imqueue/core"),
        symbol("IMQClient.send", "@imqueue/rpc"),
        page("/guide/messages/", "Messages", text="a client can send messages"),
    )


def test_third_member_of_the_same_name_moves_below_uncapped_results(monkeypatch: pytest.MonkeyPatch) -> None:
    response = member_corpus().search("send", limit=10, explain=True)
    assert paths(response)[2] == "/guide/messages/"
    last = response.results[3]
    assert last.title.endswith(".send")
    assert last.score > score_of(response, "/guide/messages/")
    assert any("per-member cap (2 named send)" in line for line in last.explanation)

    monkeypatch.setattr(rules, "PER_MEMBER_CAP", 10**6)
    assert ranked(member_corpus(), "send")[-1] == "/guide/messages/"


# --- long and question-shaped queries ------------------------------------------------------


def template_corpus() -> Index:
    """/call/ shares the question's template (how do I ... a) and one subject word; /expose/
    has both subject words and no template."""
    return index_of(
        page("/call/", "How do I call a method"),
        page("/expose/", "Expose", summary="publish a method"),
        page("/other/", "Broker"),
        page("/other2/", "Queue"),
    )


def test_template_words_weigh_less_than_subject_words(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ranked(template_corpus(), "how do I expose a method")[0] == "/expose/"

    monkeypatch.setattr(rules, "STOPWORD_WEIGHT", 1.0)
    assert ranked(template_corpus(), "how do I expose a method")[0] == "/call/"


def test_a_lone_stopword_query_is_not_weighed_down() -> None:
    index = index_of(page("/how/", "How it works"), page("/other/", "Broker"))
    plan = search_module.plan_query(index.inverted, "how", None)
    assert [(t.term, t.template) for t in plan.terms] == [("how", False)]


# COVERAGE_FLOOR and PHRASE_CONTENT_BOOST are off in rules.py (the nested CV drops them, see
# docs/ranking-kpi.md) and stay switches in its grid: their tests prove the rule as it is when on.
FLOOR_ON = 0.34
CONTENT_BOOST_ON = 0.3


@pytest.fixture
def floor_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "COVERAGE_FLOOR", FLOOR_ON)


def coverage_corpus() -> Index:
    return index_of(
        page("/failover/", "Redis cluster failover"),
        page("/weak/", "Notes", summary="redis cluster"),
        page("/timeout/", "Timeout", keywords="timeout, timeout settings"),
        page("/other/", "Broker"),
    )


def test_long_query_ranks_records_under_the_coverage_floor_below_all_others(
    monkeypatch: pytest.MonkeyPatch, floor_on: None
) -> None:
    query = "redis cluster failover timeout"  # four content terms: a long query
    order = ranked(coverage_corpus(), query)
    assert order[0] == "/failover/"
    assert order.index("/timeout/") > order.index("/weak/")  # one word of four: only fills the tail

    monkeypatch.setattr(rules, "COVERAGE_FLOOR", 0.0)
    order = ranked(coverage_corpus(), query)
    assert order.index("/timeout/") < order.index("/weak/")


def test_records_under_the_coverage_floor_do_not_fill_a_short_answer(floor_on: None) -> None:
    top_two = paths(coverage_corpus().search("redis cluster failover timeout", limit=2))
    assert top_two == ["/failover/", "/weak/"]


def test_short_query_has_no_coverage_floor() -> None:
    assert "/timeout/" in ranked(coverage_corpus(), "failover timeout")


def test_whole_question_favours_an_answer_record(monkeypatch: pytest.MonkeyPatch) -> None:
    # Same content; the page sorts first by URL, so only the answer boost lifts the answer.
    def corpus() -> Index:
        return index_of(
            page("/guide/retries/", "Retries", summary="retry a failed call"),
            answer("/reference/faq/#retries", "Retries", summary="retry a failed call"),
        )

    question = "how do I retry a failed call?"
    assert ranked(corpus(), question) == ["/reference/faq/#retries", "/guide/retries/"]
    assert ranked(corpus(), "retry failed call") == ["/guide/retries/", "/reference/faq/#retries"]

    monkeypatch.setattr(rules, "ANSWER_BOOST", 0)
    assert ranked(corpus(), question) == ["/guide/retries/", "/reference/faq/#retries"]


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ("how do I retry", True),
        ("retry?", True),
        ("can it retry", True),
        ("retry a call", False),
        ("how retry", False),
    ],
)
def test_question_shape(query: str, question: bool) -> None:
    assert search_module.is_question(query) is question


# --- curated phrases, symbol names ---------------------------------------------------------


def phrase_corpus() -> Index:
    """/brokers/ carries `message queue` as a curated keyword; /queue-messages/ has both words,
    more of them, but never as that phrase."""
    return index_of(
        page("/brokers/", "Brokers", keywords="message queue, broker"),
        page("/queue-messages/", "Queue message", summary="a message queue"),
        page("/tuning/", "Message queue tuning guide"),
        page("/other/", "Workers"),
    )


def test_query_equal_to_a_curated_phrase_is_lifted(monkeypatch: pytest.MonkeyPatch) -> None:
    assert above(ranked(phrase_corpus(), "message queue"), "/brokers/", "/queue-messages/")

    monkeypatch.setattr(rules, "PHRASE_EXACT_BOOST", 0)
    assert above(ranked(phrase_corpus(), "message queue"), "/queue-messages/", "/brokers/")


def test_query_inside_a_curated_phrase_is_lifted(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:  # same words, same lengths; /a-.../ sorts first by URL
        return index_of(
            page("/a-queue-message/", "Queue message tuning"),
            page("/b-message-queue/", "Message queue tuning"),
            page("/other/", "Workers"),
        )

    boosts = search_module.phrase_boosts(corpus().inverted, "message queue")
    assert boosts == {1: (rules.PHRASE_PART_BOOST, "PHRASE_PART_BOOST")}  # inside one title only
    assert ranked(corpus(), "message queue") == ["/b-message-queue/", "/a-queue-message/"]

    monkeypatch.setattr(rules, "PHRASE_PART_BOOST", 0)
    assert ranked(corpus(), "message queue") == ["/a-queue-message/", "/b-message-queue/"]


def test_curated_phrase_inside_a_longer_query_is_lifted(monkeypatch: pytest.MonkeyPatch) -> None:
    query = "tune a message queue"
    boosts = search_module.phrase_boosts(phrase_corpus().inverted, query)
    assert boosts[0][0] == pytest.approx(rules.PHRASE_PART_BOOST * 2 / 4)  # /brokers/: 2 of 4 words

    monkeypatch.setattr(rules, "PHRASE_PART_BOOST", 0)
    assert 0 not in search_module.phrase_boosts(phrase_corpus().inverted, query)


def test_question_whose_subject_words_are_a_curated_phrase_is_lifted(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:  # /b-scaling/ curates `scale workers`; /a-workers/ has the words, more strongly
        return index_of(
            page("/a-workers/", "Workers", keywords="scale"),
            page("/b-scaling/", "Deploy", keywords="scale workers"),
            page("/other/", "Broker"),
        )

    query = "how can I scale my workers"  # the words are not adjacent: only the content boost applies
    monkeypatch.setattr(rules, "PHRASE_CONTENT_BOOST", CONTENT_BOOST_ON)
    assert ranked(corpus(), query)[0] == "/b-scaling/"

    monkeypatch.setattr(rules, "PHRASE_CONTENT_BOOST", 0)
    assert ranked(corpus(), query)[0] == "/a-workers/"


def symbol_name_corpus() -> Index:
    return index_of(
        symbol("FileLogger", "@imqueue/async-logger", kind="class", summary="Writes log lines to transports"),
        page("/guide/logging/", "Transports", summary="where the filelogger writes"),
        page("/other/", "Broker"),
    )


def test_symbol_named_as_code_by_a_short_query_is_lifted(monkeypatch: pytest.MonkeyPatch) -> None:
    logger = "/api/async-logger/latest/async-logger.filelogger/"
    assert ranked(symbol_name_corpus(), "FileLogger transports")[0] == logger  # written as code

    def lifted(query: str) -> bool:
        hits = symbol_name_corpus().search(query, explain=True).results
        return any(line.startswith("SYMBOL_NAME_BOOST") for h in hits for line in h.explanation)

    assert lifted("FileLogger transports") and lifted("file_logger")
    assert not lifted("filelogger transports")  # a plain word the prose uses too...
    only_a_name = index_of(symbol("promisify", "@imqueue/core", kind="function"), page("/p/", "Promises"))
    hits = only_a_name.search("promisify an object", explain=True).results
    assert any(line.startswith("SYMBOL_NAME_BOOST") for h in hits for line in h.explanation)  # ...or not
    assert not lifted("how do I point FileLogger transports at a rotating file on disk")  # a question

    monkeypatch.setattr(rules, "SYMBOL_NAME_BOOST", 0)
    assert not lifted("FileLogger transports")


# --- typo correction -----------------------------------------------------------------------


def typo_corpus() -> Index:
    return index_of(
        symbol("ConnectionPool", "@imqueue/pg", kind="class", summary="A pool of connections"),
        page("/guide/connection/", "Connection", summary="open a connection"),
        page("/guide/routing/", "Router", summary="where calls go"),
        page("/guide/routes/", "Route table"),
        page("/other/", "Broker"),
    )


def test_typo_reaching_nothing_is_corrected_and_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    response = typo_corpus().search("conection")
    assert response.corrected == "connection"
    assert paths(response)[0] == "/guide/connection/"

    monkeypatch.setattr(rules, "MIN_TYPO", 10**6)  # no typo correction
    response = typo_corpus().search("conection")
    assert response.results == [] and response.corrected is None


def test_typo_match_counts_below_the_word_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    def score(query: str) -> float:  # the word in a summary: no curated phrase, no other form
        index = index_of(
            page("/guide/pools/", "Pools", summary="one connection each"), page("/other/", "Broker")
        )
        return score_of(index.search(query), "/guide/pools/")

    assert score("conection") < score("connection")

    monkeypatch.setattr(rules, "TYPO_WEIGHT", 1.0)
    assert score("conection") == score("connection")


def test_term_that_matches_is_never_corrected(monkeypatch: pytest.MonkeyPatch) -> None:
    response = typo_corpus().search("router")  # `route` is one edit away, and ignored
    assert response.corrected is None
    assert paths(response) == ["/guide/routing/"]

    real_term_forms = InvertedIndex.term_forms  # what the rule excludes: typo forms for every term

    def term_forms(self: InvertedIndex, term: str, allow_typo: bool = True) -> tuple[list[Form], int]:
        forms, _reached = real_term_forms(self, term, allow_typo)
        forms = forms + self.typo_forms(term)
        return forms, len({doc_id for form in forms for doc_id in self.row(form.word)[0]})

    monkeypatch.setattr(InvertedIndex, "term_forms", term_forms)
    assert "/guide/routes/" in ranked(typo_corpus(), "router")


def test_identifier_compound_is_not_typo_corrected(monkeypatch: pytest.MonkeyPatch) -> None:
    response = typo_corpus().search("ConnectionPoll")  # its segment `connection` speaks for it
    assert response.corrected is None

    monkeypatch.setattr(search_module, "compound_terms", lambda query: set())
    assert typo_corpus().search("ConnectionPoll").corrected == "connectionpool"


def error_code_corpus() -> Index:
    return index_of(
        page("/guide/resolve/", "Resolve", summary="how names resolve"),
        page("/guide/refused/", "Refused", summary="connection refused means nothing listens"),
        page("/guide/connection/", "Connection", summary="open a connection"),
        page("/other/", "Broker"),
    )


@pytest.mark.parametrize("written", ["ERESOLVE", "ECONNREFUSD", "TS1241", "conection_pool", "CONECTION"])
def test_error_codes_are_never_typo_corrected(written: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # ERESOLVE is an npm error code, not a misspelt "resolve"; TS1241 a TypeScript error.
    assert error_code_corpus().search(f"npm {written}").corrected is None

    monkeypatch.setattr(search_module, "is_code_token", lambda raw: False)  # what the rule excludes
    corrected = error_code_corpus().search(f"npm {written}").corrected
    if written in ("ERESOLVE", "CONECTION"):  # the others are not one word a dictionary has
        assert corrected is not None


def test_short_word_is_not_typo_corrected() -> None:
    index = index_of(page("/cars/", "Cars"), page("/other/", "Broker"))
    response = index.search("cqrs")  # four letters: too often a real word of its own
    assert response.results == [] and response.corrected is None


# --- imqueue.org and imqueue.com compete on score ------------------------------------------


def test_a_better_scored_peer_hit_ranks_ahead_of_a_local_hit() -> None:
    index = index_of(
        page("/pricing/retries/", "Retry", site="com", keywords="retry"),
        page("/guide/calls/", "Calls", text="a call may retry once"),
    )
    response = index.search("retry", explain=True)
    assert [(hit.path, hit.external) for hit in response.results] == [
        ("/pricing/retries/", True),
        ("/guide/calls/", False),
    ]
    assert response.results[0].score > response.results[1].score
    assert response.results[0].url == "https://imqueue.com/pricing/retries/"
    assert "imqueue.com record" in " ".join(response.results[0].explanation)


def mixed_corpus() -> Index:
    """Both sites, a page whose three sections match (so the per-parent cap moves one down) and
    records far below the top (so the relative floor drops them)."""
    return index_of(
        page("/guide/retries/", "Retry", keywords="retry"),
        page("/guide/calls/", "Calls", text="some long prose where a call may retry once after a pause"),
        page("/support/retries/", "Retry", site="com", keywords="retry"),
        *(section(f"/guide/retries/#s{n}", f"Retry step {n}", text="retry once") for n in range(3)),
        page("/support/calls/", "Support calls", site="com", text="calls once"),
    )


@pytest.mark.parametrize("query", ["retry", "retry once", "retry once after a pause"])
def test_the_first_k_results_do_not_depend_on_the_limit(query: str) -> None:
    longest = [(h.path, h.external) for h in mixed_corpus().search(query, limit=10).results]
    assert len(longest) >= 3
    for limit in range(1, 11):
        response = mixed_corpus().search(query, limit=limit)
        assert [(h.path, h.external) for h in response.results] == longest[:limit]


# --- misses, empty queries, ties -----------------------------------------------------------


def test_miss_returns_section_names_and_nearest_terms() -> None:
    index = index_of(
        page("/guide/retry/", "Retry"), page("/guide/broker/", "Broker"), sections=["Guides", "API reference"]
    )
    response = index.search("rety")
    assert response.results == []
    assert response.miss is not None
    assert response.miss.sections == ["Guides", "API reference"]
    assert "retry" in response.miss.nearest_terms


@pytest.mark.parametrize("query", ["", "   ", "\t\n"])
def test_empty_or_whitespace_query_returns_nothing(query: str) -> None:
    response = index_of(page("/guide/retry/", "Retry")).search(query, explain=True)
    assert response.results == [] and response.corrected is None
    assert response.miss is None or response.miss.nearest_terms == []


def test_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        index_of(page("/guide/retry/", "Retry")).search("retry", limit=0)


def test_equal_scores_order_by_url_whatever_the_corpus_order() -> None:
    twins = [page("/guide/b-retry/", "Retry"), page("/guide/a-retry/", "Retry"), page("/guide/c/", "Broker")]
    forward = index_of(*twins)
    first = forward.search("retry")
    assert first.results[0].score == first.results[1].score
    assert paths(first) == ["/guide/a-retry/", "/guide/b-retry/"]
    assert paths(forward.search("retry")) == paths(first)  # same query twice, same order
    assert ranked(index_of(*reversed(twins)), "retry") == paths(first)  # not insertion order


# --- --explain -----------------------------------------------------------------------------


def test_explain_lines_for_matches_demotions_and_caps() -> None:
    index = index_of(
        page("/blog/retries/", "Retries", text="retry"),
        symbol("Broker.retry", "@imqueue/core", deprecated=True),
        symbol("Broker.retryLater", "@imqueue/core"),
        symbol("Broker.retryAll", "@imqueue/core"),
        section("/guide/calls/#retry", "Retry", text="a call may retry", parent="/guide/calls/"),
    )
    response = index.search("retry", limit=10, explain=True)
    lines = {hit.path: hit.explanation for hit in response.results}
    blog = lines["/blog/retries/"]
    # a match line per term: the form that reached the record, the field, the evidence
    assert any(
        line.startswith("'retry' -> 'retries' (INFLECTION_WEIGHT x0.85) in title x3 (FIELD_WEIGHTS); idf ")
        for line in blog
    )
    assert any(
        line.startswith("'retry' -> 'retry' (as written x1.00) in title x3")
        for line in lines["/guide/calls/#retry"]
    )
    assert any(line.startswith("raw ") and "coverage" in line for line in blog)
    assert f"BLOG_DEMOTION x{rules.BLOG_DEMOTION:g}: a blog post" in blog
    assert (
        f"DEPRECATED_DEMOTION x{rules.DEPRECATED_DEMOTION:g}: a deprecated symbol"
        in lines["/api/core/latest/core.broker.retry/"]
    )
    assert "TIER_WEIGHTS.section x0.8: a section record" in lines["/guide/calls/#retry"]
    capped = [
        path
        for path, explanation in lines.items()
        if any(line.startswith("moved below uncapped results: per-class cap") for line in explanation)
    ]
    assert len(capped) == 1
    assert any(note.startswith("term 'retry': idf") for note in response.notes)


def test_explain_notes_for_the_query(floor_on: None) -> None:
    index = index_of(
        symbol("IMQClient.send", "@imqueue/rpc", summary="send a message to a service"),
        answer("/api/faq/#send", "How do I send a message to a service?", summary="send it"),
        page("/guide/connection/", "Connection"),
    )
    notes = index.search("how do I send a message to a service pkg:rpc", explain=True).notes
    assert "package filter: @imqueue/rpc" in notes
    assert f"long query (3 content words, LONG_QUERY_TERMS): COVERAGE_FLOOR {rules.COVERAGE_FLOOR:g}" in notes
    assert f"question-shaped: answers x{1 + rules.ANSWER_BOOST:g} (ANSWER_BOOST)" in notes
    assert "typo correction: 'connection'" in index.search("conection", explain=True).notes
    phrase = index.search("how do I send a message to a service?", explain=True)
    explanation = phrase.results[0].explanation
    assert any(line.startswith("PHRASE_EXACT_BOOST x") for line in explanation)
    assert any(line.startswith("ANSWER_BOOST x") for line in explanation)


def test_no_explanation_unless_asked() -> None:
    response = index_of(page("/blog/retries/", "Retries")).search("retry")
    assert response.notes == [] and response.results[0].explanation == []


# --- the other multipliers and floors ------------------------------------------------------


def test_deprecated_symbol_sinks(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:  # the deprecated one sorts first by URL
        return index_of(
            symbol("Alpha.connect", "@imqueue/core", deprecated=True), symbol("Beta.connect", "@imqueue/core")
        )

    assert ranked(corpus(), "connect")[0] == "/api/core/latest/core.beta.connect/"

    monkeypatch.setattr(rules, "DEPRECATED_DEMOTION", 1.0)
    assert ranked(corpus(), "connect")[0] == "/api/core/latest/core.alpha.connect/"


def test_prose_section_loses_a_tie_to_a_page(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:  # the section sorts first by URL (and prose sections hold no curated phrase)
        return index_of(
            section("/a/#retries", "Notes", text="retry", parent="/a/"),
            page("/b/retries/", "Notes", text="retry"),
        )

    assert ranked(corpus(), "retry") == ["/b/retries/", "/a/#retries"]

    monkeypatch.setitem(rules.TIER_WEIGHTS, "section", 1.0)
    assert ranked(corpus(), "retry") == ["/a/#retries", "/b/retries/"]


def test_results_far_below_the_top_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:  # the others match only `imqueue`, in a summary: a few % of /retry/
        return index_of(
            page("/retry/", "Retry", keywords="retry", summary="retry", text="imqueue"),
            page("/start/", "Getting started", summary="imqueue basics for new users of it"),
            page("/clients/", "Clients", summary="an imqueue client"),
            page("/deploy/", "Deploy", summary="imqueue on kubernetes"),
        )

    assert ranked(corpus(), "imqueue retry") == ["/retry/"]

    monkeypatch.setattr(rules, "RELATIVE_FLOOR", 0.0)
    assert ranked(corpus(), "imqueue retry") == ["/retry/", "/clients/", "/deploy/", "/start/"]


def test_matching_every_term_beats_one_term_matched_strongly(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:
        return index_of(
            page("/both/", "Notes", summary="queue timeout"),
            page("/one/", "Timeout", keywords="timeout", summary="timeout"),
            page("/other/", "Broker"),
            page("/other2/", "Workers"),
        )

    assert ranked(corpus(), "queue timeout")[0] == "/both/"

    monkeypatch.setattr(rules, "COVERAGE_POWER", 0)
    assert ranked(corpus(), "queue timeout")[0] == "/one/"


def common_term_corpus() -> Index:
    filler = [page(f"/guide/{n}/", f"Guide {n}", summary="imqueue service") for n in range(120)]
    return index_of(*filler, page("/backpressure/", "Backpressure", keywords="backpressure"))


def test_a_term_in_most_records_only_adds_to_what_other_terms_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "RELATIVE_FLOOR", 0.0)  # so that only this rule decides what is listed
    response = common_term_corpus().search("imqueue backpressure", limit=60)
    assert paths(response) == ["/backpressure/"]

    monkeypatch.setattr(rules, "COMMON_TERM_SHARE", 1.0)
    response = common_term_corpus().search("imqueue backpressure", limit=60)
    assert paths(response)[0] == "/backpressure/" and len(response.results) > 1


def test_a_common_term_alone_still_finds_records() -> None:
    assert len(common_term_corpus().search("imqueue", limit=60).results) > 1


def test_a_term_in_most_records_does_not_count_against_coverage(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:
        filler = [page(f"/guide/{n}/", f"Guide {n}", summary="imqueue service") for n in range(110)]
        other = [page(f"/other/{n}/", f"Other {n}", summary="broker") for n in range(40)]
        return index_of(*filler, *other, page("/expose/", "Expose a method", keywords="expose method"))

    def coverage_line(index: Index) -> str:
        hit = index.search("expose method imqueue", limit=1, explain=True).results[0]
        assert hit.path == "/expose/"
        return next(line for line in hit.explanation if line.startswith("raw "))

    assert "coverage 1.00" in coverage_line(corpus())  # imqueue is everywhere: its absence says nothing

    monkeypatch.setattr(rules, "COMMON_TERM_SHARE", 1.0)
    assert "coverage 1.00" not in coverage_line(corpus())


def test_a_title_that_words_its_subject_as_the_query_does_is_lifted(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:
        return index_of(
            answer("/faq/#expose", "How do I expose a service method so it can be called remotely?"),
            page("/guide/", "Guide", keywords="expose, method"),
        )

    query = "how do I expose a method on my service?"
    with_rule = score_of(corpus().search(query), "/faq/#expose")
    assert score_of(corpus().search(query), "/guide/") > 0

    monkeypatch.setattr(rules, "SHARED_RUN_BOOST", 0.0)
    assert score_of(corpus().search(query), "/faq/#expose") < with_rule


def exports_corpus() -> Index:
    exports = [symbol(f"Widget{n}", "@imqueue/x", kind="class", summary="widget") for n in range(5)]
    return index_of(*exports, page("/guide/widgets/", "Notes", summary="widget"))


def test_one_package_cannot_fill_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "/guide/widgets/" in paths(exports_corpus().search("widget", limit=4))

    monkeypatch.setattr(rules, "PER_PACKAGE_CAP", 10**6)
    assert "/guide/widgets/" not in paths(exports_corpus().search("widget", limit=4))


def test_a_package_filter_is_not_capped_per_package() -> None:
    assert len(exports_corpus().search("widget", limit=4, package="x").results) == 4


# --- confidence ----------------------------------------------------------------------------


def confidence_corpus() -> Index:
    return index_of(
        page("/retry/", "Retry policy", keywords="retry policy, retries", summary="retry policy of calls"),
        page("/guide/", "Guide", text="a long guide that mentions a policy once among many other words"),
    )


def test_a_hit_scoring_under_the_low_threshold_is_low_and_the_answer_weak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    response = confidence_corpus().search("retry policy")
    top = response.results[0].score
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_PER_WEIGHT", float("inf"))  # the score threshold alone
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_SCORE", top + 0.01)
    monkeypatch.setattr(rules, "CONFIDENCE_HIGH_SCORE", top + 1.0)
    response = confidence_corpus().search("retry policy")
    assert [hit.confidence for hit in response.results] == ["low"] * len(response.results)
    assert response.weak

    monkeypatch.setattr(rules, "CONFIDENCE_LOW_SCORE", 0.0)  # neutral: nothing is weak
    response = confidence_corpus().search("retry policy")
    assert "low" not in {hit.confidence for hit in response.results} and not response.weak


def test_a_query_of_few_words_answered_strongly_is_not_weak_for_its_low_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A query's score grows with its words: one word matched in a title cannot reach a score
    threshold set for questions. A hit scoring CONFIDENCE_LOW_PER_WEIGHT times what the words
    weigh is not low; a faint match (one word once in a long text) still is."""
    index = confidence_corpus()
    (weight,) = [t.weight for t in search_module.plan_query(index.inverted, "retry", None).terms]
    strong = index.search("retry").results[0]
    faint = index.search("policy", limit=6).results[-1]
    assert strong.path == "/retry/" and faint.path == "/guide/"
    assert strong.score > 2 * weight and faint.score < weight  # a title match; one word in a long text
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_SCORE", strong.score + 1)  # both under it
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_PER_WEIGHT", 2.0)
    assert index.search("retry").results[0].confidence == "medium" and not index.search("retry").weak
    assert index.search("policy", limit=6).results[-1].confidence == "low"
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_PER_WEIGHT", float("inf"))  # off: the score alone
    assert index.search("retry").weak
    assert "CONFIDENCE_LOW_PER_WEIGHT 2 x the query's weight" not in "".join(
        index.search("retry", explain=True).results[0].explanation
    )
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_PER_WEIGHT", 2.0)
    assert "CONFIDENCE_LOW_PER_WEIGHT 2 x the query's weight" in "".join(
        index.search("retry", explain=True).results[0].explanation
    )


def test_a_hit_at_or_over_the_high_threshold_is_high(monkeypatch: pytest.MonkeyPatch) -> None:
    response = confidence_corpus().search("retry policy")
    top, last = response.results[0].score, response.results[-1].score
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_SCORE", 0.0)
    monkeypatch.setattr(rules, "CONFIDENCE_HIGH_SCORE", top)
    confidences = [hit.confidence for hit in confidence_corpus().search("retry policy").results]
    assert confidences[0] == "high" and (last == top or confidences[-1] == "medium")

    monkeypatch.setattr(rules, "CONFIDENCE_HIGH_SCORE", float("inf"))  # neutral: nothing is high
    assert "high" not in {hit.confidence for hit in confidence_corpus().search("retry policy").results}


def test_a_miss_is_not_weak_it_is_a_miss() -> None:
    response = confidence_corpus().search("zzzz")
    assert response.results == [] and not response.weak and response.miss is not None


# --- thresholds moved into rules.py (each neutralised) ---------------------------------------


def test_a_long_query_is_counted_in_words_as_written(monkeypatch: pytest.MonkeyPatch, floor_on: None) -> None:
    index = coverage_corpus()
    assert any("long query" in note for note in index.search("redis failover timeout", explain=True).notes)
    # an identifier splits into many terms (redisqueue.send, redis, queue, send...) but is one word
    assert not any("long query" in note for note in index.search("RedisQueue.send", explain=True).notes)
    assert search_module.content_words("how do I use RedisQueue.send with @imqueue/pg-prisma") == 2

    monkeypatch.setattr(rules, "LONG_QUERY_TERMS", 100)
    assert not any(
        "long query" in note for note in index.search("redis failover timeout", explain=True).notes
    )


def test_a_prefix_covering_more_of_the_word_counts_more(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:  # the longer word sorts first by URL: only the rule puts it second
        return index_of(page("/a/", "Watchercheckdelay"), page("/b/", "Watcher"))

    assert ranked(corpus(), "watch") == ["/b/", "/a/"]

    monkeypatch.setattr(rules, "PREFIX_LENGTH_SHARE", 0.0)
    assert ranked(corpus(), "watch") == ["/a/", "/b/"]


def test_a_long_word_may_be_two_edits_away(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:
        return index_of(page("/connection/", "Connection"), page("/other/", "Broker"))

    assert corpus().search("conectionn").corrected == "connection"  # two edits: a letter dropped, one added

    monkeypatch.setattr(rules, "TWO_TYPOS_FROM", 100)  # every word one edit at most
    assert corpus().search("conectionn").corrected is None


@pytest.mark.parametrize(
    ("word", "root", "constant", "neutral"),
    [
        ("tags", "tag", "MIN_INFLECTED", 0),  # under five letters: never stripped
        ("going", "go", "MIN_ROOT", 0),  # no root under three letters
        ("added", "ad", "MIN_DOUBLED_BASE", 0),  # add is too short to undo a doubled consonant
    ],
)
def test_inflection_length_limits(
    monkeypatch: pytest.MonkeyPatch, word: str, root: str, constant: str, neutral: int
) -> None:
    from imqueue_mcp.ranker.text import inflection_roots

    assert root not in inflection_roots(word)

    monkeypatch.setattr(rules, constant, neutral)
    if constant == "MIN_DOUBLED_BASE":
        monkeypatch.setattr(rules, "MIN_ROOT", 2)
    assert root in inflection_roots(word)


def test_a_question_needs_enough_words(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not search_module.is_question("how retry")

    monkeypatch.setattr(rules, "QUESTION_MIN_WORDS", 0)
    assert search_module.is_question("how retry")


def test_a_symbol_name_under_the_minimum_is_not_lifted(monkeypatch: pytest.MonkeyPatch) -> None:
    def explained() -> list[str]:
        index = index_of(symbol("Queue.onAck", "@imqueue/core"), page("/ack/", "Acknowledge", text="ack"))
        hit = next(h for h in index.search("onAck", explain=True).results if h.symbol)
        return hit.explanation

    monkeypatch.setattr(rules, "MIN_SYMBOL_NAME", 6)
    assert not any(line.startswith("SYMBOL_NAME_BOOST") for line in explained())

    monkeypatch.setattr(rules, "MIN_SYMBOL_NAME", 5)
    assert any(line.startswith("SYMBOL_NAME_BOOST") for line in explained())


def test_a_small_corpus_has_no_common_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:
        filler = [page(f"/guide/{n}/", f"Guide {n}", summary="imqueue service") for n in range(5)]
        return index_of(*filler, page("/backpressure/", "Backpressure", keywords="backpressure imqueue"))

    monkeypatch.setattr(rules, "RELATIVE_FLOOR", 0.0)
    assert len(corpus().search("imqueue backpressure", limit=60).results) == 6

    monkeypatch.setattr(rules, "COMMON_TERM_MIN", 0)  # imqueue, in every record, becomes common
    assert paths(corpus().search("imqueue backpressure", limit=60)) == ["/backpressure/"]


def test_a_shorter_record_with_the_same_evidence_ranks_first(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:  # the long one sorts first by URL: only length normalisation moves it
        long_text = "retry " + " ".join(f"filler{n}" for n in range(40))
        return index_of(page("/a/", "Notes A", text=long_text), page("/b/", "Notes B", text="retry once"))

    assert ranked(corpus(), "retry") == ["/b/", "/a/"]

    monkeypatch.setattr(rules, "LENGTH_NORMALISATION", 0.0)
    assert ranked(corpus(), "retry") == ["/a/", "/b/"]


def test_repeating_a_word_saturates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Evidence saturates: a title match beats the same word repeated through a record's prose."""

    def corpus() -> Index:
        return index_of(
            page("/a/", "Notes", text=" ".join(["retry"] * 30)),
            page("/b/", "Retry", text="once"),
        )

    assert ranked(corpus(), "retry")[0] == "/b/"

    monkeypatch.setattr(rules, "SATURATION", 1e9)  # linear: no saturation
    assert ranked(corpus(), "retry")[0] == "/a/"


def test_the_snowball_stem_joins_what_the_suffix_rules_miss(monkeypatch: pytest.MonkeyPatch) -> None:
    def corpus() -> Index:
        return index_of(page("/configure/", "Configure"), page("/other/", "Broker"))

    assert paths(corpus().search("configurable")) == ["/configure/"]

    monkeypatch.setattr(rules, "SNOWBALL_STEM", False)
    assert "/configure/" not in paths(corpus().search("configurable"))


def test_roots_are_never_read_from_a_cache_filled_under_other_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    from imqueue_mcp.ranker.text import inflection_roots

    assert "configur" in inflection_roots("configurable")
    monkeypatch.setattr(rules, "SNOWBALL_STEM", False)
    assert "configur" not in inflection_roots("configurable")
    monkeypatch.undo()
    assert "configur" in inflection_roots("configurable")


# --- query shape -> page subject (SYMPTOM_BOOST) ---------------------------------------------


@pytest.mark.parametrize(
    ("query", "shapes"),
    [
        ("mcp server not working", ["symptom"]),
        ("client connection error", ["symptom"]),
        ("imq config init times out", ["symptom"]),
        ("the server doesn't appear in cursor", ["symptom"]),
        ("where are the mcp server logs", ["symptom"]),
        ("best way to debug a failing call", ["symptom"]),
        ("expose a service method", []),
        ("how do I send a message", []),
        ("which job queue should I use", ["choice"]),
        ("tRPC or imqueue for a TypeScript backend", ["choice"]),
        ("cache ttl vs tags", ["choice"]),
        ("is gRPC worth it between our services", ["choice"]),
        ("queue timeout or a bigger instance", ["symptom", "choice"]),
        ("errorHandler option of send", []),  # an identifier is not the word "error"
        ("vscode setup for the mcp server", []),
    ],
)
def test_query_shapes(query: str, shapes: list[str]) -> None:
    from imqueue_mcp.ranker.search import query_shapes

    assert query_shapes(query) == shapes


def shape_corpus() -> Index:
    """Twin pages on the MCP server: same words, one of them about troubleshooting."""
    return index_of(
        page("/mcp/setup/", "MCP server setup", text="add the mcp server to your client"),
        page("/mcp/help/", "MCP server troubleshooting", text="add the mcp server to your client"),
    )


def test_a_symptom_query_lifts_the_troubleshooting_page_and_only_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = shape_corpus()
    lifted = index.search("mcp server not working")
    assert lifted.results[0].path == "/mcp/help/" and lifted.results[0].score > lifted.results[1].score
    plain = index.search("mcp server client")
    assert plain.results[0].score == plain.results[1].score  # twins: no symptom, no lift
    response = index.search("mcp server not working", explain=True)
    assert any(
        "SYMPTOM_BOOST x1.6: the query describes a symptom" in n for n in response.results[0].explanation
    )
    assert any("(SYMPTOM_BOOST)" in note for note in response.notes)

    monkeypatch.setattr(rules, "SYMPTOM_BOOST", 0.0)
    off = index.search("mcp server not working", explain=True)
    assert not any("SYMPTOM_BOOST" in line for hit in off.results for line in hit.explanation or [])
    assert off.results[0].score < response.results[0].score


def test_troubleshooting_pages_are_known_by_title_page_label_or_heading() -> None:
    from imqueue_mcp.ranker.search import on_subject

    assert on_subject(page("/cli/help/", "Troubleshooting"), "troubleshooting")
    assert on_subject(
        section("/cli/help/#ci", "Prompts hang in CI", section="Troubleshooting"), "troubleshooting"
    )
    assert on_subject(section("/api/#dbg", "Profiling and debugging"), "troubleshooting")
    assert not on_subject(page("/cli/", "CLI guide"), "troubleshooting")
    assert not on_subject(page("/cli/help/", "Troubleshooting"), "comparison")  # no other subject
    assert not on_subject(page("/cli/help/", "How to choose"), "choice")  # a page: no heading of its own


@pytest.mark.parametrize(
    ("heading", "decides_"),
    [
        ("How to choose", True),
        ("Where NATS is the better choice", True),
        ("A quick decision guide", True),
        ("Quick comparison", True),
        ("Picking a recipe", True),
        ("The trade-offs to respect", True),
        ("Which one to reach for", True),
        ("gRPC vs @imqueue performance, honestly", True),
        ("VS Code", False),
        ("Installing the CLI", False),
        ("", False),
    ],
)
def test_a_section_that_decides_is_known_by_its_heading(heading: str, decides_: bool) -> None:
    from imqueue_mcp.ranker.search import decides

    assert decides(heading) is decides_


def choice_corpus() -> Index:
    """One comparison page's two sections with the same words: one of them decides."""
    return index_of(
        section("/vs-nats/#fits", "Where it fits", text="nats imqueue services team"),
        section("/vs-nats/#choose", "How to choose", text="nats imqueue services team"),
    )


def test_a_question_weighing_options_lifts_the_section_that_decides_and_only_then(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = choice_corpus()
    weighing = index.search("nats or imqueue for our services", limit=2, parent_cap=2, explain=True)
    assert weighing.results[0].path == "/vs-nats/#choose"
    assert weighing.results[0].score > weighing.results[1].score
    assert any(
        "CHOICE_BOOST x1.3: the query weighs options, and this section decides between them" in line
        for line in weighing.results[0].explanation or []
    )
    plain = index.search("nats imqueue services", limit=2, parent_cap=2)
    assert plain.results[0].score == plain.results[1].score  # no choice, no lift

    monkeypatch.setattr(rules, "CHOICE_BOOST", 0.0)
    off = index.search("nats or imqueue for our services", limit=2, parent_cap=2)
    assert off.results[0].score == off.results[1].score


def test_warm_makes_every_shape_subjects_mask_so_no_first_query_reads_the_headings() -> None:
    from imqueue_mcp.ranker.search import SHAPE_SUBJECTS, shape_boosts

    assert {subject for subject, _rule, _boost in shape_boosts("nats or imqueue: the calls fail")} == set(
        SHAPE_SUBJECTS
    )
    index = choice_corpus()
    index.warm()
    made = dict(index.inverted.record_masks)
    assert {("subject", subject) for subject in SHAPE_SUBJECTS} <= set(made)
    index.search("nats or imqueue: the calls fail")
    assert dict(index.inverted.record_masks) == made  # nothing left for the query to make


def test_a_caller_may_hold_two_records_of_one_page_together() -> None:
    """The code-example index passes parent_cap=EXAMPLE_PARENT_CAP: a page's second block stays
    beside its first instead of moving below every other page (the docs default is one)."""
    index = index_of(
        section("/guide/a/#one", "Retry once", text="retry the call"),
        section("/guide/a/#two", "Retry twice", text="retry the call again"),
        page("/guide/b/", "Notes", text="a call may retry after a pause, or fail for good, or wait"),
    )
    assert rules.PER_PARENT_CAP == 1
    one = index.search("retry call", limit=3, explain=True)
    assert paths(one)[1] == "/guide/b/"  # the page's second section moved below the other page
    assert any("per-parent cap (1 from /guide/a/)" in line for line in one.results[2].explanation or [])
    two = index.search("retry call", limit=3, parent_cap=rules.EXAMPLE_PARENT_CAP, explain=True)
    assert [p.split("#")[0] for p in paths(two)] == ["/guide/a/", "/guide/a/", "/guide/b/"]
    assert not any("per-parent cap" in line for hit in two.results for line in hit.explanation or [])


# --- a written token's terms share its weight ------------------------------------------------


def token_share_corpus() -> Index:
    return index_of(
        symbol("RedisQueue.send", "@imqueue/core", kind="method", summary="Sends a message to the queue"),
        symbol("RedisQueue", "@imqueue/core", kind="class", summary="A queue over Redis"),
        page(
            "/guide/lost/",
            "Lost messages",
            summary="Why a message is lost when the worker dies mid-way, and how safe delivery keeps it",
        ),
        page("/guide/start/", "Getting started", summary="install redis and run a queue"),
    )


def test_an_identifier_in_a_question_weighs_about_one_word_not_six(monkeypatch: pytest.MonkeyPatch) -> None:
    """RedisQueue.send yields six terms (whole, joined, pieces, segments): a question that names it
    while asking about behaviour is answered by the record about the behaviour. Alone, the
    identifier keeps its whole weight: the same score as without the rule."""
    question = "RedisQueue.send message lost when the worker dies"
    assert ranked(token_share_corpus(), question)[0] == "/guide/lost/"
    plan = token_share_corpus().search(question, explain=True)
    assert any("TOKEN_TERMS_POWER" in note for note in plan.notes)
    alone = token_share_corpus().search("RedisQueue.send").results[0]
    assert alone.path == "/api/core/latest/core.redisqueue.send/"
    # confidence reads the question at full weight: the shares order the hits, they do not make
    # the words matched count for less (Ranking.kept, Ranking.word_coverage)
    shared = {hit.path: hit for hit in token_share_corpus().search(question, explain=True).results}
    send = shared["/api/core/latest/core.redisqueue.send/"]
    assert any("TOKEN_TERMS_POWER" in line for line in send.explanation)

    monkeypatch.setattr(rules, "TOKEN_TERMS_POWER", 0.0)
    assert ranked(token_share_corpus(), question)[0] == "/api/core/latest/core.redisqueue.send/"
    assert token_share_corpus().search("RedisQueue.send").results[0].score == alone.score
    whole = {hit.path: hit for hit in token_share_corpus().search(question).results}
    for path, hit in shared.items():
        assert hit.coverage == pytest.approx(whole[path].coverage), path


def test_at_most_max_typo_terms_words_are_looked_up_as_typos(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[str] = []
    real_typo_forms = InvertedIndex.typo_forms

    def typo_forms(self: InvertedIndex, term: str) -> list[Form]:
        looked_up.append(term)
        return real_typo_forms(self, term)

    monkeypatch.setattr(InvertedIndex, "typo_forms", typo_forms)
    unknown = " ".join(f"zzqx{letter}word" for letter in "abcdefghijkl")  # twelve words nothing holds

    response = typo_corpus().search(f"conection {unknown}")

    assert len(looked_up) == rules.MAX_TYPO_TERMS and looked_up[0] == "conection"
    assert response.corrected is not None and response.corrected.startswith("connection")
    monkeypatch.setattr(rules, "MAX_TYPO_TERMS", 0)
    assert typo_corpus().search("conection").corrected is None

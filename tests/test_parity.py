"""Parity with the server we replace (issue 14 §4, §5, §7), through the SDK's client.

search_docs is asked over stdio (protocol 2025-11-25) and over HTTP (2026-07-28), one server
of each, both over the loopback site mirror: exclusive-pair advisories come back as data, a
deprecated API says so in its description and carries `deprecated: true`, and every hit says
what it is. The label and advisory functions are also checked on their own, on literal hits.
The HTTP edges (§8) are in test_parity_http.py.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from conftest import HttpServer, McpConnection, offline_args, server_environment, stdio_connection

DEPRECATED_PREFIX = "DEPRECATED — do not use in new code."
TRACING_PAIR = ["@imqueue/opentelemetry", "@imqueue/datadog"]
ORM_PAIR = ["@imqueue/pg-prisma", "@imqueue/pg-sequelize"]
DEPRECATED_SYMBOL = "https://imqueue.org/api/core/latest/core.imqoptions.verboseextended/"


@pytest.fixture(scope="module", params=["stdio", "http"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[McpConnection]:
    if request.param == "stdio":
        home = tmp_path_factory.mktemp("parity-stdio")
        connection = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    else:
        hosted: HttpServer = request.getfixturevalue("hosted")
        connection = McpConnection(hosted.url + "/mcp", "auto")  # the other protocol revision
    yield connection
    connection.close()


def search(server: McpConnection, query: str, limit: int = 10) -> tuple[dict[str, Any], str]:
    result = server.call("search_docs", {"query": query, "limit": limit})
    text = "\n".join(block.text for block in result.content if block.type == "text")
    assert not result.is_error, text
    schema = next(tool.output_schema for tool in server.tools() if tool.name == "search_docs")
    jsonschema.validate(result.structured_content, schema)
    return result.structured_content, text


def search_schema(server: McpConnection) -> dict[str, Any]:
    schema: dict[str, Any] = next(tool.output_schema for tool in server.tools() if tool.name == "search_docs")
    return schema


# --- §4 exclusive-pair advisories as data ------------------------------------------------


def test_a_tracing_question_gets_an_advisory_record_with_the_install_command(server: McpConnection) -> None:
    data, text = search(server, "datadog tracing")
    records = {tuple(record["pair"]): record for record in data["advisories"]}
    tracing = records[tuple(TRACING_PAIR)]
    assert tracing["default"] == "@imqueue/opentelemetry"
    assert tracing["install"] == "npm i @imqueue/opentelemetry"
    assert "vendor-neutral" in tracing["why"]
    assert tracing["alternative"] == "@imqueue/datadog" and "Datadog" in tracing["alternativeWhen"]
    assert "@imqueue/datadog" in tracing["named"]
    # The sentence stays, in the structured result and in the text, with the command beside it.
    assert tracing["advice"] in data["advisory"]
    assert "Advisory: " + data["advisory"] in text
    assert "npm i @imqueue/opentelemetry" in text


def test_an_orm_question_gets_prisma_as_the_default_to_install(server: McpConnection) -> None:
    data, text = search(server, "sequelize models")
    orm = next(record for record in data["advisories"] if record["pair"] == ORM_PAIR)
    assert orm["default"] == "@imqueue/pg-prisma" and orm["install"] == "npm i @imqueue/pg-prisma"
    assert "@imqueue/pg-sequelize" in orm["named"]
    assert orm["neverBoth"] and orm["why"] and orm["need"] == "an ORM for PostgreSQL"
    assert "npm i @imqueue/pg-prisma" in text


def test_a_question_touching_no_pair_has_neither_advisory_nor_records(server: McpConnection) -> None:
    data, text = search(server, "how do I expose a method", limit=3)
    assert "advisory" not in data and "advisories" not in data
    assert "Advisory:" not in text


def test_a_tail_hit_on_one_side_of_a_pair_brings_no_advisory(server: McpConnection) -> None:
    # datadog's IMQClientPlugin ranks in the tail of this answer; tracing is not its subject.
    data, text = search(server, "IMQClient constructor", limit=6)
    assert "@imqueue/datadog" in {hit["package"] for hit in data["results"]}
    assert "advisory" not in data and "Advisory:" not in text


@pytest.mark.parametrize("query", ["tracing", "spans"])
def test_a_query_about_the_pairs_need_gets_exactly_one_advisory_naming_the_default(
    server: McpConnection, query: str
) -> None:
    # No hit at #1 is one of the pair here (a blog post or a symbol of one side); the results
    # reach both members, so the pair's need is the subject.
    data, text = search(server, query, limit=6)
    assert set(TRACING_PAIR) <= {hit["package"] for hit in data["results"]}
    assert [record["pair"] for record in data["advisories"]] == [TRACING_PAIR]
    assert data["advisories"][0]["install"] == "npm i @imqueue/opentelemetry"
    assert data["advisory"].count("Pick exactly one of @imqueue/opentelemetry or @imqueue/datadog") == 1
    assert text.count("Install the default of") == 1 and "npm i @imqueue/opentelemetry" in text


def test_a_query_naming_one_member_gets_the_advisory(server: McpConnection) -> None:
    data, _ = search(server, "opentelemetry", limit=6)
    assert data["results"][0]["package"] != "@imqueue/opentelemetry"  # a blog post leads
    assert [record["pair"] for record in data["advisories"]] == [TRACING_PAIR]
    assert "@imqueue/opentelemetry" in data["advisories"][0]["named"]


def test_a_question_sharing_a_word_with_the_pairs_need_gets_the_advisory(server: McpConnection) -> None:
    # Only datadog's symbols answer among the hits, none at #1; "trace" is the need's word.
    data, _ = search(server, "how do I trace requests across services", limit=6)
    packages = {hit["package"] for hit in data["results"]}
    assert "@imqueue/datadog" in packages and data["results"][0]["package"] != "@imqueue/datadog"
    assert [record["pair"] for record in data["advisories"]] == [TRACING_PAIR]


@pytest.mark.parametrize(
    ("query", "pair"),
    [
        ("how do I add tracing to my services", TRACING_PAIR),
        ("which ORM should my postgres service use", ORM_PAIR),
    ],
)
def test_a_question_asking_the_need_gets_the_advisory_when_no_hit_is_a_members_api(
    server: McpConnection, query: str, pair: list[str]
) -> None:
    # The hits are guides, an FAQ and a tutorial that speak of a member (OpenTelemetry,
    # pg-sequelize); none is a member's API page. "tracing" and "ORM" are the needs' own words.
    data, _ = search(server, query, limit=6)
    assert not {hit["package"] for hit in data["results"]} & set(pair)
    assert [record["pair"] for record in data["advisories"]] == [pair]


@pytest.mark.parametrize(
    "query", ["distributed systems without a registry", "which postgresql packages are there", "postgresql"]
)
def test_a_word_the_need_shares_with_everything_else_asks_for_no_advisory(
    server: McpConnection, query: str
) -> None:
    # "distributed" and "PostgreSQL" are in the needs' sentences, but most pages using them speak
    # of neither member: the results naming one (a tutorial on pg-sequelize) do not make it asked.
    data, text = search(server, query, limit=6)
    assert "advisories" not in data and "Advisory:" not in text


def test_the_published_schema_refuses_an_advisory_record_with_unknown_fields(server: McpConnection) -> None:
    data, _ = search(server, "datadog tracing")
    schema = search_schema(server)
    padded = copy.deepcopy(data)
    padded["advisories"][0]["surprise"] = 1
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(padded, schema)
    missing = copy.deepcopy(data)
    del missing["advisories"][0]["install"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(missing, schema)


# --- §5 deprecated symbols say so ----------------------------------------------------------


def test_a_deprecated_api_hit_says_so_in_its_description_and_its_flag(server: McpConnection) -> None:
    data, text = search(server, "verboseExtended")
    by_url = {hit["url"]: hit for hit in data["results"]}
    hit = by_url[DEPRECATED_SYMBOL]
    assert hit["deprecated"] is True
    assert hit["description"].startswith(DEPRECATED_PREFIX)
    assert f"   {DEPRECATED_SYMBOL}\n   {DEPRECATED_PREFIX}" in text
    others = [other for url, other in by_url.items() if url != DEPRECATED_SYMBOL]
    assert others and all("deprecated" not in other for other in others)
    assert not any(other["description"].startswith("DEPRECATED") for other in others)


# --- §7 a hit says what it is ------------------------------------------------------------


def test_api_answer_page_and_section_hits_are_labelled_by_kind(server: McpConnection) -> None:
    data, text = search(server, "expose a method", limit=10)
    kinds = {hit["kind"] for hit in data["results"]}
    assert kinds == {"api", "answer", "page", "section"}
    for hit in data["results"]:
        assert hit["symbol"] is (hit["kind"] == "api")
        assert f"{hit['title']} ({hit['label']}" in text
    expose = next(
        hit for hit in data["results"] if hit["url"] == "https://imqueue.org/api/rpc/latest/rpc.expose/"
    )
    assert expose["label"] == "API · @imqueue/rpc function"
    faq = next(hit for hit in data["results"] if hit["kind"] == "answer")
    assert faq["label"] == "Answer · Frequently Asked Questions"
    tutorial = next(
        hit for hit in data["results"] if hit["url"] == "https://imqueue.org/tutorial/user-service/"
    )
    assert tutorial["label"] == "Page · Tutorial"
    glossary = next(hit for hit in data["results"] if hit["url"] == "https://imqueue.org/glossary/#expose")
    assert glossary["kind"] == "section" and glossary["label"].startswith("Section · @imqueue glossary")


def test_a_core_method_is_labelled_with_its_package_and_kind(server: McpConnection) -> None:
    data, _ = search(server, "IMQ create queue")
    create = next(hit for hit in data["results"] if hit["url"].endswith("/core.imq.create/"))
    assert create["label"] == "API · @imqueue/core method" and create["kind"] == "api"


def test_imqueue_com_entries_end_their_label_with_the_site(server: McpConnection) -> None:
    data, text = search(server, "pricing commercial license", limit=20)
    commercial = [hit for hit in data["results"] if hit["url"].startswith("https://imqueue.com/")]
    assert commercial, [hit["url"] for hit in data["results"]]
    for hit in data["results"]:
        assert hit["label"].endswith(" · imqueue.com") is hit["url"].startswith("https://imqueue.com/")
    pricing = next(hit for hit in commercial if hit["url"] == "https://imqueue.com/pricing/")
    assert pricing["label"] == "Page · Docs · imqueue.com"
    assert f"{pricing['title']} ({pricing['label']}" in text


# --- the labels and advisories on their own -------------------------------------------------


def literal_hit(
    tier: str, kind: str, section: str, *, external: bool = False, deprecated: bool = False
) -> Any:
    from imqueue_mcp.ranker import Hit

    return Hit(
        url="https://imqueue.org/x/",
        path="/x/",
        title="X",
        section=section,
        description="Does x.",
        kind=kind,
        tier=tier,
        symbol=tier == "symbol",
        external=external,
        score=1.0,
        package="@imqueue/core" if tier == "symbol" else None,
        deprecated=deprecated,
    )


@pytest.mark.parametrize(
    ("tier", "kind", "section", "external", "label"),
    [
        ("symbol", "method", "@imqueue/core", False, "API · @imqueue/core method"),
        ("answer", "FAQ", "FAQ", False, "Answer · FAQ"),
        ("page", "Tutorial", "Guides", False, "Page · Tutorial"),
        ("section", "Article", "Some post", False, "Section · Some post"),
        ("page", "Docs", "Commercial", True, "Page · Docs · imqueue.com"),
        ("answer", "Pricing", "Pricing", True, "Answer · Pricing · imqueue.com"),
        ("page", "", "", False, "Page"),
    ],
)
def test_each_tier_gets_its_label(tier: str, kind: str, section: str, external: bool, label: str) -> None:
    from imqueue_mcp.ranker.results import hit_label

    assert hit_label(literal_hit(tier, kind, section, external=external)) == label


def test_only_a_deprecated_hit_gets_the_deprecation_prefix() -> None:
    from imqueue_mcp.ranker.results import hit_description

    assert hit_description(literal_hit("symbol", "property", "")) == "Does x."
    flagged = hit_description(literal_hit("symbol", "property", "", deprecated=True))
    assert flagged == f"{DEPRECATED_PREFIX} Does x."


def test_advisory_speaks_only_of_packages_the_answer_is_about() -> None:
    from imqueue_mcp.server.docs.search_docs import advisory_packages

    def hit(package: str | None, confidence: str, url: str = "https://imqueue.org/guide/") -> dict[str, Any]:
        return {"package": package, "confidence": confidence, "url": url}

    tail = [hit("@imqueue/rpc", "high"), hit(None, "medium"), hit("@imqueue/datadog", "medium")]
    assert advisory_packages("IMQClient constructor", tail) == ["@imqueue/rpc"]
    # the best hit, a high-confidence one, or one about a package the query names counts
    assert "@imqueue/datadog" in advisory_packages("datadog", tail)
    assert "@imqueue/datadog" in advisory_packages("dd-trace setup", tail)  # a retired name
    best = [hit(None, "low", "https://imqueue.org/api/opentelemetry/latest/opentelemetry.x/")]
    assert advisory_packages("tracing", best) == ["@imqueue/opentelemetry"]
    strong = [hit("@imqueue/rpc", "high"), hit("@imqueue/pg-prisma", "high")]
    assert advisory_packages("soft delete", strong) == ["@imqueue/rpc", "@imqueue/pg-prisma"]


def test_advisory_follows_the_pairs_need_not_members_brushed_by_the_results() -> None:
    from imqueue_mcp.server.docs.search_docs import advisory_packages

    def hit(package: str | None) -> dict[str, Any]:
        return {"package": package, "confidence": "low", "url": "https://imqueue.org/guide/"}

    rpc, blog = hit("@imqueue/rpc"), hit(None)
    dd, otel = hit("@imqueue/datadog"), hit("@imqueue/opentelemetry")
    # both members, but two of six results: brushed, not the subject
    assert advisory_packages("client timeout", [blog, rpc, rpc, dd, rpc, otel]) == []
    # more than half of the results are the pair's: its need is the subject
    named = advisory_packages("spans", [blog, dd, otel, dd, rpc, otel])
    assert set(named) == {"@imqueue/datadog", "@imqueue/opentelemetry"}
    assert advisory_packages("spans", [blog, dd, otel, dd, rpc, rpc]) == []  # half is not more
    # one member among the results and a word of the need ("distributed tracing")
    assert advisory_packages("trace a request", [blog, rpc, dd]) == ["@imqueue/datadog"]
    assert advisory_packages("replay a request", [blog, rpc, dd]) == []


def test_a_needs_own_words_are_those_most_records_using_them_name_a_member() -> None:
    from imqueue_mcp.server.docs.search_docs import advisory_packages, need_roots

    from fixtures.corpus_tiny import index_of, page

    index = index_of(
        page("/guide/tracing/", "Tracing", text="Tracing with OpenTelemetry: each call traced."),
        page("/guide/dd/", "Datadog", text="Datadog traces every call through dd-trace."),
        page("/guide/grid/", "A distributed grid", text="A distributed lock over PostgreSQL."),
        page("/guide/pg/", "PostgreSQL", text="PostgreSQL connections, distributed across replicas."),
        page("/guide/orm/", "ORM", text="Prisma is an ORM for PostgreSQL."),
    )
    assert index.records_using("traced", inflections=False) == {0}
    assert index.records_using("traced") == {0, 1}  # tracing ~ traced ~ traces
    needs = need_roots(index)
    # tracing: 2 of 2 records name a member; distributed: 0 of 2; ORM: 1 of 1; PostgreSQL: 1 of 3
    assert "tracing" in needs["distributed tracing"] and "distributed" not in needs["distributed tracing"]
    assert needs["an ORM for PostgreSQL"] == {"orm"}
    assert need_roots(index) is needs  # worked out once per index

    def hit(title: str) -> dict[str, Any]:
        return {"package": None, "confidence": "low", "url": "https://imqueue.org/guide/", "title": title}

    spoken = [hit("Intro"), hit("Registering OpenTelemetry at start-up")]
    assert advisory_packages("add tracing to a service", spoken, needs) == ["@imqueue/opentelemetry"]
    assert advisory_packages("a distributed grid", spoken, needs) == []
    assert advisory_packages("a distributed grid", spoken) == ["@imqueue/opentelemetry"]  # every need word
    assert advisory_packages("add tracing to a service", [hit("Intro")], needs) == []


def test_advisory_records_follow_retired_names_and_cover_both_pairs() -> None:
    from imqueue_mcp.server.catalogue.packages import exclusive_pair_advisories, exclusive_pair_advisory

    records = exclusive_pair_advisories(["dd-trace", "sequelize", "@imqueue/rpc"])
    assert [record["pair"] for record in records] == [ORM_PAIR, TRACING_PAIR]
    assert [record["install"] for record in records] == [
        "npm i @imqueue/pg-prisma",
        "npm i @imqueue/opentelemetry",
    ]
    assert "\n\n".join(record["advice"] for record in records) == exclusive_pair_advisory(
        ["dd-trace", "sequelize"]
    )
    assert exclusive_pair_advisories(["@imqueue/rpc", "core"]) == []

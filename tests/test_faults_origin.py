"""Docs origin faults: the builder, the corpus keeper and the real server against a site that
misbehaves (tests/fault_origin.py injects each fault on loopback).

What must hold for every fault: an older corpus (the one loaded before, or the snapshot) keeps
answering and says it is stale, or the caller gets a clear error; no call waits much longer
than the 5 s fetch timeout; no feed is half-applied (the answers are exactly the older corpus's).
The builder's own failure cases already covered in test_build_index.py (a 404 feed, a feed of
version 2, an unreachable origin, bad JSON in a mirror) are not repeated here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fault_origin import KINDS, Fault, FaultyOrigins

from imqueue_mcp import docsource
from imqueue_mcp.build_index.cli import main as build_main
from imqueue_mcp.docsource.sites import TIMEOUT_SECONDS
from imqueue_mcp.server.config import build_config
from imqueue_mcp.server.docs.corpus_keeper import REFRESHING_NOTE, CorpusKeeper

from conftest import McpConnection, built_snapshot, server_environment, stdio_connection

pytestmark = pytest.mark.slow  # a long end-to-end run: CI, or IMQUEUE_MCP_SLOW=1 (conftest.py)

MARGIN_SECONDS = 5.0  # on top of the 5 s timeout: a loaded 2-CPU machine, a snapshot load
BOUND = TIMEOUT_SECONDS + MARGIN_SECONDS
FEED = "/search-text.json"  # the second feed the builder reads: the first one is then already read
PAGE_URL = "https://imqueue.org/cli/"
FAULTED_PATHS = frozenset({FEED, "/cli/index.md", "/status.json"})
QUERY = "how do I expose a method"


def fault(kind: str) -> Fault:
    return Fault(kind, None if kind == "down" else FAULTED_PATHS)


@pytest.fixture
def origins() -> Iterator[FaultyOrigins]:
    served = FaultyOrigins()
    yield served
    served.close()


@pytest.fixture(scope="module")
def snapshot_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of the healthy mirror, built once for the module."""
    return built_snapshot(tmp_path_factory.mktemp("faults"), pages=False)


# --- imq-build-index -------------------------------------------------------------------

BUILDER_CASES = {
    "slow": "no answer within 5 s",
    "trickle": "no answer within 5 s",
    "error500": "HTTP 500",
    "invalid_json": "not valid JSON",
    "truncated": "broke off before the whole answer came",
    "huge": "over 16 MB",
    "redirect_loop": "HTTP 302",
}


@pytest.mark.parametrize("kind", list(BUILDER_CASES))
def test_the_builder_fails_in_one_line_within_the_timeout_and_keeps_the_previous_snapshot(
    origins: FaultyOrigins,
    snapshot_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
) -> None:
    out = tmp_path / "cache" / "snapshot.msgpack"
    out.parent.mkdir()
    previous = snapshot_file.read_bytes()
    out.write_bytes(previous)
    origins.inject(fault(kind))
    started = time.monotonic()
    code = build_main([*origins.origin_args(), "--out", str(out)])
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("imq-build-index: ") and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"imqueue.org{FEED}" in err or f"{origins.urls['imqueue.org']}{FEED}" in err, err
    assert BUILDER_CASES[kind] in err, err
    assert elapsed < BOUND, elapsed
    assert out.read_bytes() == previous
    assert [p.name for p in out.parent.iterdir()] == ["snapshot.msgpack"]  # no temp file left


# --- the corpus keeper: the corpus loaded before keeps answering ------------------------


@pytest.fixture(scope="module")
def keeper_on_faulty_origins(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[CorpusKeeper, Any, FaultyOrigins]]:
    """A corpus keeper that has loaded the live corpus from healthy origins, and those origins."""
    served = FaultyOrigins()
    flags = [f"{host}={url}" for host, url in served.urls.items()]
    missing = tmp_path_factory.mktemp("keeper") / "no-snapshot"
    keeper = CorpusKeeper(build_config(origins=flags, snapshot=str(missing), env={}))
    first = asyncio.run(keeper.current())
    assert first.source == "live" and not first.note
    yield keeper, first, served
    served.close()


@pytest.mark.parametrize("kind", KINDS)
def test_a_refresh_under_a_fault_keeps_the_previous_corpus_whole_and_says_it_is_stale(
    keeper_on_faulty_origins: tuple[CorpusKeeper, Any, FaultyOrigins], kind: str
) -> None:
    keeper, first, served = keeper_on_faulty_origins
    served.inject(fault(kind))
    started = time.monotonic()
    try:
        during = asyncio.run(keeper.refresh())
    finally:
        served.heal()
    assert time.monotonic() - started < BOUND
    assert during is not None and during.index is first.index  # nothing of the faulty read applied
    assert during.source == "live" and "could not be read" in during.note, during.note


def test_after_the_faults_a_healthy_refresh_ranks_exactly_as_before(
    keeper_on_faulty_origins: tuple[CorpusKeeper, Any, FaultyOrigins],
) -> None:
    keeper, first, _ = keeper_on_faulty_origins
    healed = asyncio.run(keeper.refresh())
    assert healed is not None and healed.source == "live" and not healed.note
    assert healed.index is not first.index
    urls = [hit.url for hit in first.index.search(QUERY).results]
    assert [hit.url for hit in healed.index.search(QUERY).results] == urls


# --- the real server, started against a faulty site with a snapshot on disk --------------


def timed_call(connection: McpConnection, name: str, arguments: dict[str, Any]) -> Any:
    async def call(client: Any) -> tuple[Any, float]:
        started = time.monotonic()
        result = await client.call_tool(name, arguments)
        return result, time.monotonic() - started

    return connection.submit(call)


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.parametrize("kind", KINDS)
def test_the_server_answers_from_the_snapshot_or_clearly_fails_within_the_timeout(
    origins: FaultyOrigins, snapshot_file: Path, tmp_path: Path, kind: str
) -> None:
    origins.inject(fault(kind))
    env = server_environment(tmp_path)
    connection = stdio_connection(
        [*origins.origin_args(), "--snapshot", str(snapshot_file)], env, tmp_path, "legacy"
    )
    try:
        # all three at once, as an agent might: none may hold up another beyond the timeout
        calls = {
            "search": timed_call(connection, "search_docs", {"query": QUERY}),
            "page": timed_call(connection, "get_doc", {"url": PAGE_URL}),
            "packages": timed_call(connection, "list_packages", {}),
        }
        answers = {name: future.result(60) for name, future in calls.items()}
    finally:
        connection.close()
    for name, (result, elapsed) in answers.items():
        assert elapsed < BOUND, (name, elapsed)
        assert "Traceback" not in text_of(result), text_of(result)

    search, _ = answers["search"]
    assert not search.is_error, text_of(search)
    corpus = search.structured_content["corpus"]
    assert corpus["source"] == "snapshot" and corpus["from"] == str(snapshot_file)
    # answered at once from the snapshot, labelled, while the live read runs into the fault
    assert corpus["fetchedAt"] and corpus["note"] == REFRESHING_NOTE
    assert f"Note: {REFRESHING_NOTE}." in text_of(search)
    stored = docsource.load_snapshot(snapshot_file).index().search(QUERY, limit=6)
    assert [hit["url"] for hit in search.structured_content["results"]] == [hit.url for hit in stored.results]

    page, _ = answers["page"]
    if page.is_error:  # a clear sentence naming the page and what happened, never a half page
        assert PAGE_URL.rstrip("/") in text_of(page), text_of(page)
    else:
        assert kind in ("invalid_json", "other_version")  # the page itself is served whole then
        assert page.structured_content["url"] == PAGE_URL

    packages, _ = answers["packages"]
    assert not packages.is_error
    listed = packages.structured_content
    if kind == "other_version":  # status.json carries no feed version: it is read live as it is
        assert listed.get("framework") and "stored" not in listed
    else:  # the snapshot's copy of status.json answers, labelled with its date and why
        assert not listed.get("factsUnavailable") and listed["packages"][0]["version"]
        stored = listed["stored"]
        assert stored["source"] == "snapshot" and stored["from"] == str(snapshot_file)
        assert stored["fetchedAt"] == corpus["fetchedAt"] and "could not be read" in stored["note"]

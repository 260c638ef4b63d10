"""Corpus freshness: live first, then the snapshot, then an error that says how to build one."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from imqueue_mcp.server.config import build_config
from imqueue_mcp.server.docs.corpus_keeper import (
    REFRESHING_NOTE,
    CorpusKeeper,
    CorpusUnavailable,
    LoadedCorpus,
)

from conftest import SiteServer, built_snapshot, free_port


def origins_flags(origins: dict[str, str]) -> list[str]:
    return [f"{host}={url}" for host, url in origins.items()]


def dead_origins() -> list[str]:
    port = free_port()  # nothing listens there: connection refused at once
    return [f"imqueue.org=http://127.0.0.1:{port}", f"imqueue.com=http://127.0.0.1:{port}"]


def test_concurrent_first_callers_share_one_live_build(site_origins: dict[str, str], tmp_path: Path) -> None:
    keeper = CorpusKeeper(
        build_config(origins=origins_flags(site_origins), snapshot=str(tmp_path / "none"), env={})
    )

    async def five_at_once() -> list[object]:
        return list(await asyncio.gather(*(keeper.current() for _ in range(5))))

    corpora = asyncio.run(five_at_once())
    assert keeper.refreshes == 1
    assert all(corpus is corpora[0] for corpus in corpora)
    assert corpora[0].source == "live"  # type: ignore[attr-defined]


def test_a_failed_refresh_keeps_the_previous_corpus(tmp_path: Path) -> None:
    servers = {host: SiteServer(host) for host in ("imqueue.org", "imqueue.com")}
    keeper = CorpusKeeper(
        build_config(
            origins=[f"{h}={s.url}" for h, s in servers.items()], snapshot=str(tmp_path / "no"), env={}
        )
    )

    async def load_then_lose_the_site() -> tuple[object, object]:
        first = await keeper.current()
        for server in servers.values():
            server.close()
        await keeper.refresh()
        return first, await keeper.current()

    first, after = asyncio.run(load_then_lose_the_site())
    assert after.index is first.index  # type: ignore[attr-defined]
    assert after.source == "live" and "could not be read" in after.note  # type: ignore[attr-defined]
    assert keeper.refreshes == 2


def test_unreachable_sites_fall_back_to_the_snapshot_and_say_so(tmp_path: Path) -> None:
    snapshot_file = built_snapshot(tmp_path, pages=False)
    keeper = CorpusKeeper(build_config(origins=dead_origins(), snapshot=str(snapshot_file), env={}))

    async def first_answer_then_the_failed_refresh() -> tuple[LoadedCorpus, LoadedCorpus | None]:
        return await keeper.current(), await keeper.settled()

    first, corpus = asyncio.run(first_answer_then_the_failed_refresh())
    assert first.source == "snapshot" and first.note == REFRESHING_NOTE  # answered before the refresh
    assert corpus is not None and corpus.index is first.index
    assert corpus.source == "snapshot" and corpus.location == str(snapshot_file)
    assert corpus.fetched_at and "could not be read" in corpus.note
    # What is true now (issue 28 item 10): no refresh is under way; when it failed, and what answers.
    assert "under way" not in corpus.note and re.search(
        r"at the last refresh, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", corpus.note
    )
    assert (
        f"generation {corpus.generation} (feeds read {corpus.fetched_at}) answers until a refresh succeeds"
        in corpus.note
    )
    assert corpus.index.search("expose a method").results


def test_offline_never_fetches_and_needs_a_snapshot(site_origins: dict[str, str], tmp_path: Path) -> None:
    keeper = CorpusKeeper(
        build_config(
            origins=origins_flags(site_origins), offline=True, snapshot=str(tmp_path / "missing"), env={}
        )
    )
    with pytest.raises(CorpusUnavailable, match="imq-build-index") as raised:
        asyncio.run(keeper.current())
    assert "--offline" in str(raised.value) and str(tmp_path / "missing") in str(raised.value)
    assert keeper.refreshes == 0


def test_watchers_hear_each_new_corpus_but_not_a_failed_refresh(tmp_path: Path) -> None:
    servers = {host: SiteServer(host) for host in ("imqueue.org", "imqueue.com")}
    keeper = CorpusKeeper(
        build_config(
            origins=[f"{h}={s.url}" for h, s in servers.items()], snapshot=str(tmp_path / "no"), env={}
        )
    )
    heard: list[tuple[object, object]] = []

    async def watcher(old: object, new: object) -> None:
        heard.append((old, new))

    async def failing(old: object, new: object) -> None:
        raise RuntimeError("a broken watcher")

    async def load_refresh_then_lose_the_site() -> list[object]:
        keeper.watch(failing)  # logged, and the others still hear
        keeper.watch(watcher)
        first = await keeper.current()
        second = await keeper.refresh()
        for server in servers.values():
            server.close()
        await keeper.refresh()  # fails: the same corpus keeps answering, nothing to hear
        return [first, second]

    first, second = asyncio.run(load_refresh_then_lose_the_site())
    assert heard == [(None, first), (first, second)] and first is not second

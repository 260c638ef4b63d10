"""get_doc offline: a real stdio server reading the pages `imq-build-index --pages` saved.

The snapshot and its sidecar are built once for the module from ../shared/site (read at run
time, never copied into the repo) into a temp folder; each test starts its own server on it.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from test_server_transport import RawStdio, initialize

from imqueue_mcp.docsource import load_snapshot, pages_path

from conftest import (
    McpConnection,
    built_snapshot,
    free_port,
    origin_args,
    server_environment,
    stdio_connection,
)

SHARED_SITE = Path(__file__).resolve().parents[2] / "shared" / "site"
PAGE = "https://imqueue.org/tutorial/user-service/"
PAGE_FILE = SHARED_SITE / "imqueue.org" / "tutorial" / "user-service" / "index.md"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = built_snapshot(tmp_path_factory.mktemp("offline"))
    assert load_snapshot(path).saved_pages(path) is not None  # the pages are in the snapshot file
    return path


@pytest.fixture(scope="module")
def snapshot_without_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_snapshot(tmp_path_factory.mktemp("offline-bare"), pages=False)


@pytest.fixture(scope="module")
def fetched_at(snapshot: Path) -> str:
    return load_snapshot(snapshot).fetched_at


def serve(args: list[str], tmp_path: Path) -> McpConnection:
    return stdio_connection(args, server_environment(tmp_path), tmp_path, "legacy")


@pytest.fixture(scope="module")
def offline(snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    """One offline server for the tests that only read from it (each was starting its own)."""
    connection = serve(["--offline", "--snapshot", str(snapshot)], tmp_path_factory.mktemp("offline"))
    yield connection
    connection.close()


def read(connection: McpConnection, url: str) -> tuple[dict[str, Any], str]:
    result = connection.call("get_doc", {"url": url})
    assert not result.is_error, result.content[0].text
    return result.structured_content, result.content[0].text


def test_a_pages_snapshot_stores_each_pages_markdown_once(snapshot: Path) -> None:
    # The passages and offline get_doc read the same copy: the saved pages'. Each page's whole
    # markdown appears in the file exactly once (it appeared twice in format 6: the body kept its
    # own copy for the passages).
    raw = snapshot.read_bytes()
    loaded = load_snapshot(snapshot)
    pages = loaded.saved_pages(snapshot)
    assert pages is not None
    texts = {url: data for url, data in pages.body.items() if not url.endswith("/llms.txt")}
    assert len(texts) > 1000 and PAGE in texts  # the mirror's pages, the API pages too
    assert {url: raw.count(data) for url, data in texts.items()} == dict.fromkeys(texts, 1)
    assert not loaded.markdown.keys() & texts.keys()
    markdown = loaded.page_markdown(snapshot)
    assert markdown[PAGE] == PAGE_FILE.read_text(encoding="utf-8") and texts.keys() <= markdown.keys()


def test_offline_passages_of_an_api_page_come_from_its_saved_markdown(offline: McpConnection) -> None:
    result = offline.call("search_docs", {"query": "RedisQueue safeDeliveryTtl"})
    assert not result.is_error, result.content[0].text
    hit = result.structured_content["results"][0]
    assert hit["url"] == "https://imqueue.org/api/core/latest/core.imqoptions.safedeliveryttl/"
    assert hit["passage"]["basis"] == "markdown" and "## Default Value" in hit["passage"]["text"]


def test_offline_get_doc_reads_the_page_from_the_snapshot_and_says_so(
    offline: McpConnection, snapshot: Path, fetched_at: str
) -> None:
    data, text = read(offline, PAGE)
    expected = PAGE_FILE.read_bytes()
    assert data["url"] == PAGE and data["mimeType"] == "text/markdown"
    assert data["markdown"] == expected.decode("utf-8") and data["bytes"] == len(expected)
    assert data["truncated"] is False
    assert data["source"] == {
        "source": "snapshot",
        "fetchedAt": fetched_at,
        "from": str(snapshot),
        "note": "the server runs with --offline",
    }
    assert text.startswith(f"Source: {PAGE}\nRead from the snapshot of {fetched_at} ")
    assert expected.decode("utf-8").rstrip("\n") in text
    # files read as they are (llms.txt is over the default budget of 8,000 tokens)
    llms = offline.call(
        "get_doc", {"url": "https://imqueue.org/llms.txt", "maxTokens": 50_000}
    ).structured_content
    assert llms["mimeType"] == "text/plain"
    assert llms["markdown"] == (SHARED_SITE / "imqueue.org" / "llms.txt").read_text("utf-8")
    unknown = offline.call("get_doc", {"url": "https://imqueue.org/no-such-page/"})
    assert unknown.is_error and f"snapshot of {fetched_at}" in unknown.content[0].text
    # no page of the docs at all (not merely unsaved): not found, and where to look instead
    assert unknown.structured_content["error"]["code"] == "page_not_found"
    assert "https://imqueue.org/no-such-page/ is not a page of the docs" in unknown.content[0].text


def test_offline_get_doc_answers_a_fragment_with_its_section_and_heading_path(
    offline: McpConnection, snapshot: Path, fetched_at: str
) -> None:
    data, text = read(offline, PAGE + "#prepare-the-data-store")
    start, end = load_snapshot(snapshot).sections["imqueue.org"]["/tutorial/user-service/"][
        "prepare-the-data-store"
    ]
    lines = PAGE_FILE.read_text("utf-8").split("\n")
    assert data["url"] == PAGE + "#prepare-the-data-store"
    assert data["markdown"] == "\n".join(lines[start:end]).rstrip("\n") + "\n"
    assert data["section"]["heading"] == "Prepare the data store"
    assert data["section"]["ancestors"] == [
        "Build your first TypeScript RPC service",
        "Implementing the service",
    ]
    assert data["source"]["source"] == "snapshot" and data["source"]["fetchedAt"] == fetched_at
    path = "Build your first TypeScript RPC service > Implementing the service > Prepare the data store"
    assert f"Section {data['section']['index']} of {data['section']['total']}: {path}" in text
    assert f"snapshot of {fetched_at}" in text
    missed, _ = read(offline, PAGE + "#no-such-anchor")
    assert missed["fragmentMiss"]["anchor"] == "no-such-anchor"
    assert "prepare-the-data-store" in missed["fragmentMiss"]["available"]


def test_offline_get_doc_reads_a_saved_page_in_parts_and_outlines_it(offline: McpConnection) -> None:
    whole = PAGE_FILE.read_text("utf-8")
    parts: list[str] = []
    arguments: dict[str, Any] = {"url": PAGE, "maxTokens": 500}
    while True:
        result = offline.call("get_doc", arguments)
        assert not result.is_error, result.content[0].text
        data = result.structured_content
        assert data["source"]["source"] == "snapshot" and data["totalBytes"] == len(whole.encode("utf-8"))
        parts.append(data["markdown"])
        if not data["truncated"]:
            break
        arguments = {"url": PAGE, "maxTokens": 500, "cursor": data["nextCursor"]}
    assert len(parts) > 2 and "".join(parts) == whole
    outline = offline.call("get_doc", {"url": PAGE, "outline": True}).structured_content["outline"]
    assert PAGE + "#prepare-the-data-store" in [entry.get("url") for entry in outline]


def test_offline_resources_read_the_saved_page(offline: McpConnection) -> None:
    contents = offline.run(lambda client: client.read_resource(PAGE)).contents
    assert [item.text for item in contents] == [PAGE_FILE.read_text("utf-8")]


def test_a_site_that_does_not_answer_falls_back_to_the_saved_pages(
    snapshot: Path, fetched_at: str, tmp_path: Path
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    connection = serve(
        ["--snapshot", str(snapshot), *origin_args({"imqueue.org": dead, "imqueue.com": dead})], tmp_path
    )
    try:
        data, text = read(connection, PAGE)
    finally:
        connection.close()
    assert data["markdown"] == PAGE_FILE.read_text("utf-8")
    assert data["source"]["fetchedAt"] == fetched_at
    assert data["source"]["note"].startswith(f"the live site did not answer ({PAGE}index.md: unreachable")
    assert f"Read from the snapshot of {fetched_at}" in text


def test_without_saved_pages_get_doc_says_how_to_build_them(
    snapshot_without_pages: Path, tmp_path: Path
) -> None:
    alone = tmp_path / "alone" / "snapshot.msgpack"
    alone.parent.mkdir()
    shutil.copyfile(snapshot_without_pages, alone)
    connection = serve(["--offline", "--snapshot", str(alone)], tmp_path)
    try:
        result = connection.call("get_doc", {"url": PAGE})
        searched = connection.call("search_docs", {"query": "user service"})
    finally:
        connection.close()
    text = result.content[0].text
    assert result.is_error and "--offline" in text
    assert f"imq-build-index --pages --out {alone}" in text and f"{alone} was built without its pages" in text
    assert not searched.is_error  # search answers from the snapshot as before


def test_an_older_versions_sidecar_from_another_build_is_ignored_with_a_log_line(
    snapshot: Path, snapshot_without_pages: Path, tmp_path: Path
) -> None:
    stale = tmp_path / "stale" / "snapshot.msgpack"
    stale.parent.mkdir()
    shutil.copyfile(snapshot_without_pages, stale)
    outer = msgpack.unpackb(msgpack.unpackb(snapshot.read_bytes(), raw=False)["pages"], raw=False)
    outer["header"]["fetched_at"] = "2000-01-01T00:00:00+00:00"
    pages_path(stale).write_bytes(msgpack.packb(outer, use_bin_type=True))
    raw = RawStdio(["--offline", "--snapshot", str(stale)], server_environment(tmp_path), tmp_path)
    try:
        initialize(raw)
        call = {"name": "get_doc", "arguments": {"url": PAGE}}
        result = raw.request(2, "tools/call", call)["result"]
        again = raw.request(3, "tools/call", call)["result"]
    finally:
        raw.close()
    text = result["content"][0]["text"]
    assert result["isError"] is True and "another build (2000-01-01T00:00:00+00:00)" in text
    assert "imq-build-index --pages" in text
    assert again == result
    log = raw.stderr.decode("utf-8")
    assert log.count(f"saved pages {pages_path(stale)} ignored: fetched 2000-01-01T00:00:00+00:00") == 1

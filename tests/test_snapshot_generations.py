"""One builder, many servers: snapshot generations switched whole, followed from a file or a URL,
and get_doc cursors that hold across instances.

Real processes throughout: `imqueue-mcp --http` servers on loopback, `imq-build-index` killed
with SIGKILL mid-write, a loopback HTTP server publishing the snapshot, the SDK's client. The
snapshots are built from ../shared/site into temporary folders; a second generation is the
first with one saved page changed (so its content hash differs).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_hosted_operations import metric, offline_server, wait_ready
from test_snapshot_shape import rewritten, with_document_field

from imqueue_mcp.docsource import load_snapshot, save_snapshot

from conftest import (
    SITE,
    HttpServer,
    McpConnection,
    built_snapshot,
    loopback_get,
    server_environment,
    stdio_connection,
)

PAGE = "https://imqueue.org/tutorial/user-service/"
OTHER_PAGE = "https://imqueue.org/intro/"
MARKER = "\n\nThis paragraph exists only in the second generation.\n"
KILLS = int(os.environ.get("IMQUEUE_MCP_GENERATION_KILLS", "6"))


@pytest.fixture(scope="module")
def generations(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """ "a": built from the mirror; "b": PAGE changed; "a2": OTHER_PAGE changed (PAGE as in "a")."""
    folder = tmp_path_factory.mktemp("generations")
    paths = {"a": built_snapshot(folder), "b": folder / "b.msgpack", "a2": folder / "a2.msgpack"}
    for name, page in (("b", PAGE), ("a2", OTHER_PAGE)):
        snapshot = load_snapshot(paths["a"])
        pages = snapshot.saved_pages(paths["a"])
        assert pages is not None
        pages.body[page] += MARKER.encode()
        snapshot.header["fetched_at"] = pages.header["fetched_at"] = (
            f"2099-01-0{len(name)}T00:00:00+00:00"  # after "a": a newer generation
        )
        save_snapshot(snapshot, paths[name])
    return paths


def publish(source: Path, target: Path) -> None:
    """What a builder does: a temp file in the same folder, then one rename."""
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    shutil.copyfile(source, temp)
    os.replace(temp, target)


def page_text(connection: McpConnection, url: str = PAGE, **arguments: Any) -> dict[str, Any]:
    result = connection.call("get_doc", {"url": url, **arguments})
    assert not result.is_error, result.content[0].text
    structured: dict[str, Any] = result.structured_content
    return structured


def generation_of(server: HttpServer) -> str:
    """The generation the worker answering this probe serves ("loading": none loaded yet)."""
    corpus = loopback_get(server.url + "/readyz", timeout=5).json().get("corpus")
    return str(corpus["generation"]) if isinstance(corpus, dict) else "loading"


def wait_for_generation(server: HttpServer, wanted: str, seconds: float = 30.0) -> None:
    """Until ten probes in a row (new connections: any worker may answer each) name `wanted`."""
    deadline = time.monotonic() + seconds
    in_a_row = 0
    while in_a_row < 10:
        seen = generation_of(server)
        in_a_row = in_a_row + 1 if seen == wanted else 0
        assert time.monotonic() < deadline, f"still {seen}, not {wanted}"
        time.sleep(0.05)


@pytest.fixture
def mcp() -> Iterator[list[McpConnection]]:
    opened: list[McpConnection] = []
    yield opened
    for connection in opened:
        connection.close()


def home(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    return folder


def connect(server: HttpServer, opened: list[McpConnection]) -> McpConnection:
    connection = McpConnection(server.url + "/mcp", "legacy")
    opened.append(connection)
    return connection


# --- following a published snapshot ------------------------------------------------------------


class Publisher:
    """A folder served over HTTP on 127.0.0.1 (the builder's web server)."""

    def __init__(self, folder: Path, serving: type[http.server.SimpleHTTPRequestHandler] | None = None):
        handler = functools.partial(serving or _QuietHandler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _SlowHandler(_QuietHandler):
    """A builder's web server that takes SLOW_SECONDS to start answering."""

    def do_GET(self) -> None:
        time.sleep(SLOW_SECONDS)
        super().do_GET()


SLOW_SECONDS = 3.0


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_page_read_while_the_followed_snapshot_still_loads_waits_for_it(
    generations: dict[str, Path], tmp_path: Path, mcp: list[McpConnection]
) -> None:
    """get_doc reaching a server before its first generation arrived (a second worker, or the
    first call) reads the page once it has, never the empty default snapshot path."""
    folder = tmp_path / "published"
    folder.mkdir()
    publish(generations["a"], folder / "snapshot.msgpack")
    publisher = Publisher(folder, _SlowHandler)
    server = HttpServer(
        ["--offline", "--snapshot-url", publisher.url + "/snapshot.msgpack", "--snapshot-poll-seconds", "0"],
        server_environment(tmp_path),
        tmp_path,
    )
    try:
        assert httpx.get(server.url + "/readyz", timeout=5).status_code == 503  # still loading
        page = page_text(connect(server, mcp))
        assert page["markdown"] and MARKER.strip() not in page["markdown"]
    finally:
        server.close()
        publisher.close()


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
@pytest.mark.parametrize("workers", [1, 2])
def test_a_server_following_a_url_switches_whole_generations_on_sighup_and_refuses_a_damaged_one(
    generations: dict[str, Path], tmp_path: Path, mcp: list[McpConnection], workers: int
) -> None:
    folder = tmp_path / "published"
    folder.mkdir()
    published = folder / "snapshot.msgpack"
    publish(generations["a"], published)
    publisher = Publisher(folder)
    server = HttpServer(
        ["--offline", "--snapshot-url", publisher.url + "/snapshot.msgpack", "--snapshot-poll-seconds", "0"]
        + ["--workers", str(workers)],
        server_environment(tmp_path),
        tmp_path,
    )
    try:
        first = wait_ready(server)["corpus"]
        assert isinstance(first, dict) and first["source"] == "snapshot" and "from" not in first
        wait_for_generation(server, str(first["generation"]))  # every worker, not only the first ready
        client = connect(server, mcp)
        assert MARKER.strip() not in page_text(client)["markdown"]
        a = generation_of(server)

        damaged = bytearray(generations["b"].read_bytes())
        damaged[len(damaged) // 2] ^= 0xFF
        published.write_bytes(bytes(damaged))
        server.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 30
        while (
            metric(
                httpx.get(server.url + "/metrics", timeout=5).text,
                "imqueue_mcp_snapshot_refresh_failures_total",
            )
            < workers  # each worker checks, and refuses it
        ):
            assert time.monotonic() < deadline, "the damaged snapshot was not reported"
            time.sleep(0.1)
        wait_for_generation(server, a)  # the previous generation still answers, whole
        assert MARKER.strip() not in page_text(client)["markdown"]

        publish(generations["b"], published)
        server.process.send_signal(signal.SIGHUP)
        wait_for_generation(server, generation_of_file(generations["b"]))
        assert MARKER.strip() in page_text(client)["markdown"]  # the new generation's pages with it
        assert "checksum mismatch" in server.stderr()
    finally:
        server.close()
        publisher.close()


class _Switchboard(_QuietHandler):
    """The builder's web server in one of three moods (class attribute `mood`): "serve" the file,
    "trickle" it (1 kB every 0.3 s, for at most TRICKLE_SECONDS), or "redirect" to another port."""

    mood = "serve"
    redirect_to = ""

    def do_GET(self) -> None:
        if self.mood == "redirect":
            self.send_response(302)
            self.send_header("Location", self.redirect_to)
            self.end_headers()
            return
        if self.mood == "serve":
            super().do_GET()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(50 * 2**20))
        self.end_headers()
        stop = time.monotonic() + TRICKLE_SECONDS
        try:
            while time.monotonic() < stop:
                self.wfile.write(b"x" * 1024)
                self.wfile.flush()
                time.sleep(0.3)
        except OSError:
            pass  # the follower gave up: what it should do


TRICKLE_SECONDS = 40.0


def follower_server(publisher: Publisher, tmp_path: Path, *extra: str, deadline: str = "3") -> HttpServer:
    return HttpServer(
        [
            "--offline",
            "--snapshot-url",
            publisher.url + "/snapshot.msgpack",
            "--snapshot-poll-seconds",
            "0",
            *extra,
        ],
        server_environment(tmp_path, IMQUEUE_MCP_SNAPSHOT_DEADLINE_SECONDS=deadline),
        tmp_path,
    )


def wait_for_failures(server: HttpServer, count: int, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    page = ""
    while metric(page, "imqueue_mcp_snapshot_refresh_failures_total") < count:
        assert time.monotonic() < deadline, "the failed download was not reported"
        time.sleep(0.1)
        page = httpx.get(server.url + "/metrics", timeout=5).text


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_trickling_publisher_is_given_up_at_the_deadline_and_the_next_generation_still_arrives(
    generations: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A publisher sending 1 kB every 0.3 s held the old generation forever, SIGHUPs and all;
    now the download ends at its deadline (3 s here), is counted as a failed load, the previous
    generation answers, and the next published generation is taken (issue 26 item 5)."""
    folder = tmp_path / "published"
    folder.mkdir()
    publish(generations["a"], folder / "snapshot.msgpack")
    monkeypatch.setattr(_Switchboard, "mood", "serve")
    publisher = Publisher(folder, _Switchboard)
    server = follower_server(publisher, tmp_path)
    try:
        a = str(wait_ready(server)["corpus"]["generation"])  # type: ignore[index]
        monkeypatch.setattr(_Switchboard, "mood", "trickle")
        started = time.monotonic()
        server.process.send_signal(signal.SIGHUP)
        wait_for_failures(server, 1)
        assert time.monotonic() - started < 15 and generation_of(server) == a
        monkeypatch.setattr(_Switchboard, "mood", "serve")
        publish(generations["b"], folder / "snapshot.msgpack")
        server.process.send_signal(signal.SIGHUP)
        wait_for_generation(server, generation_of_file(generations["b"]))
        assert "took longer than 3 s" in server.stderr()
    finally:
        server.close()
        publisher.close()


@pytest.mark.slow  # over 3.5 s in the README's fast run (docs/testing.md): CI runs it
def test_sigterm_ends_a_trickling_download_instead_of_waiting_for_it(
    generations: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --drain-seconds 1, a SIGTERM during a trickling download took 28 s (the download);
    the drain now cancels it and the server is gone in a few seconds, exit 0."""
    folder = tmp_path / "published"
    folder.mkdir()
    publish(generations["a"], folder / "snapshot.msgpack")
    monkeypatch.setattr(_Switchboard, "mood", "serve")
    publisher = Publisher(folder, _Switchboard)
    server = follower_server(publisher, tmp_path, "--drain-seconds", "1", deadline="120")
    try:
        wait_ready(server)
        monkeypatch.setattr(_Switchboard, "mood", "trickle")
        server.process.send_signal(signal.SIGHUP)
        time.sleep(1.0)  # the download is under way
        signalled = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=20) == 0
        assert time.monotonic() - signalled < 10
    finally:
        server.close()
        publisher.close()


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_call_while_the_first_generation_trickles_in_is_told_the_server_is_not_ready(
    generations: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that arrived while the first snapshot was still arriving got a plain-text 500 after
    18 s; it is now answered as MCP, with corpus_unavailable saying the server is not ready yet."""
    folder = tmp_path / "published"
    folder.mkdir()
    monkeypatch.setattr(_Switchboard, "mood", "trickle")
    publisher = Publisher(folder, _Switchboard)
    server = follower_server(publisher, tmp_path, deadline="60")
    connection = McpConnection(server.url + "/mcp", "legacy")
    try:
        asked = time.monotonic()
        result = connection.call("search_docs", {"query": "expose a method"}, timeout=40)
        assert time.monotonic() - asked < 20
        assert result.is_error and result.structured_content["error"]["code"] == "corpus_unavailable"
        assert "Not ready" in result.content[0].text
        # what the client can do: come back (never build and restart the operator's server)
        action = result.structured_content["error"]["suggestedAction"]
        assert action.startswith("Call again in a few seconds") and "imq-build-index" not in action
        assert httpx.get(server.url + "/readyz", timeout=5).status_code == 503
    finally:
        connection.close()
        server.close()
        publisher.close()


def test_a_call_before_the_builder_has_published_anything_is_told_to_come_back_not_to_build(
    generations: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fast failure of the first download (nothing published yet: 404) is the same passing state
    as a slow one: the operator's advice (build a snapshot, restart with --snapshot) is not the
    client's. Once the builder publishes, the same call is answered."""
    folder = tmp_path / "published"
    folder.mkdir()
    monkeypatch.setattr(_Switchboard, "mood", "serve")
    publisher = Publisher(folder, _Switchboard)
    server = follower_server(publisher, tmp_path)
    connection = McpConnection(server.url + "/mcp", "legacy")
    try:
        early = connection.call("search_docs", {"query": "expose a method"}, timeout=40)
        assert early.is_error and early.structured_content["error"]["code"] == "corpus_unavailable"
        text = early.content[0].text
        assert text.startswith("Not ready") and "imq-build-index" not in text and "--snapshot" not in text
        assert early.structured_content["error"]["suggestedAction"].startswith("Call again in a few seconds")
        publish(generations["a"], folder / "snapshot.msgpack")
        later = connection.call("search_docs", {"query": "expose a method"}, timeout=40)
        assert not later.is_error, later.content[0].text
    finally:
        connection.close()
        server.close()
        publisher.close()


def test_a_redirect_to_another_origin_is_refused_and_logged_and_the_generation_stays(
    generations: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "published"
    folder.mkdir()
    publish(generations["a"], folder / "snapshot.msgpack")
    elsewhere = Publisher(folder)  # another port, serving generation b
    publish(generations["b"], folder / "b-copy.msgpack")
    monkeypatch.setattr(_Switchboard, "mood", "serve")
    publisher = Publisher(folder, _Switchboard)
    server = follower_server(publisher, tmp_path)
    try:
        a = str(wait_ready(server)["corpus"]["generation"])  # type: ignore[index]
        monkeypatch.setattr(_Switchboard, "mood", "redirect")
        monkeypatch.setattr(_Switchboard, "redirect_to", elsewhere.url + "/b-copy.msgpack")
        server.process.send_signal(signal.SIGHUP)
        wait_for_failures(server, 1)
        assert generation_of(server) == a
        assert "redirected (HTTP 302)" in server.stderr() and elsewhere.url in server.stderr()
    finally:
        server.close()
        publisher.close()
        elsewhere.close()


def test_a_snapshot_with_right_checksums_but_a_record_off_the_sites_is_refused_and_the_old_one_serves(
    generations: dict[str, Path], tmp_path: Path
) -> None:
    """A published snapshot whose checksums hold but whose record names an unknown site (every
    search then failed with internal_error) or a path like "@evil.example/x" (a hit URL of
    https://imqueue.org@evil.example/x) is refused whole, logged, and the last good generation
    keeps answering searches (issue 26 item 6)."""
    folder = tmp_path / "published"
    folder.mkdir()
    published = folder / "snapshot.msgpack"
    publish(generations["a"], published)
    publisher = Publisher(folder)
    server = follower_server(publisher, tmp_path)
    try:
        a = str(wait_ready(server)["corpus"]["generation"])  # type: ignore[index]
        for failures, (field, value) in enumerate((("site", "evil"), ("path", "@evil.example/x")), start=1):
            bad = tmp_path / f"bad-{field}.msgpack"
            good = generations["b"].read_bytes()
            bad.write_bytes(rewritten(good, functools.partial(with_document_field, name=field, value=value)))
            publish(bad, published)
            server.process.send_signal(signal.SIGHUP)
            wait_for_failures(server, failures)
            assert generation_of(server) == a
        assert "not the shape this version writes" in server.stderr()
        connection = McpConnection(server.url + "/mcp", "legacy")
        try:
            searched = connection.call("search_docs", {"query": "expose a method"})
            assert not searched.is_error
            assert all("@" not in hit["url"] for hit in searched.structured_content["results"])
        finally:
            connection.close()
    finally:
        server.close()
        publisher.close()


# What a followed URL may carry that no client may hear: a user, a token, a signed query.
SECRETS = ("operator", "hunter2token", "sig0123456789")


@contextlib.contextmanager
def following_a_secret_url(snapshot: Path, tmp_path: Path) -> Iterator[HttpServer]:
    """A hosted --offline server following `snapshot` published at a URL with SECRETS in it."""
    folder = tmp_path / "published"
    folder.mkdir()
    publish(snapshot, folder / "snapshot.msgpack")
    publisher = Publisher(folder)
    secret_url = publisher.url.replace("http://", f"http://{SECRETS[0]}:{SECRETS[1]}@") + (
        f"/snapshot.msgpack?X-Amz-Signature={SECRETS[2]}"
    )
    server = HttpServer(
        ["--offline", "--snapshot-url", secret_url, "--snapshot-poll-seconds", "0"],
        server_environment(tmp_path),
        tmp_path,
    )
    try:
        yield server
    finally:
        server.close()
        publisher.close()


def test_probes_name_the_generation_never_the_snapshot_url_or_its_credentials(
    generations: dict[str, Path], tmp_path: Path
) -> None:
    """/readyz and /healthz answer any Host: they say ready or not, the generation and its age,
    never the followed URL (its user, token and signed query) nor a path (SECURITY.md)."""
    with following_a_secret_url(generations["a"], tmp_path) as server:
        ready = wait_ready(server)
        corpus = ready["corpus"]
        assert isinstance(corpus, dict)
        assert set(corpus) == {"generation", "source", "fetchedAt", "ageSeconds"}
        for path in ("/readyz", "/healthz"):
            body = httpx.get(server.url + path, headers={"Host": "10.0.0.7:8000"}, timeout=5).text
            for secret in (*SECRETS, "Signature", "snapshot.msgpack", str(tmp_path)):
                assert secret not in body, (path, secret)


def test_resources_and_their_errors_never_name_the_snapshot_url_or_its_credentials(
    generations: dict[str, Path], tmp_path: Path
) -> None:
    """What resources/read and resources/list tell an anonymous client (a page's `_meta` source,
    the catalogue's source, a missing page's error) names the snapshot it follows as "the
    published snapshot", never its URL, user, token or path: the redaction tool results get."""
    from mcp.shared.exceptions import MCPError

    heard: list[str] = []
    with following_a_secret_url(generations["a"], tmp_path) as server:
        wait_ready(server)
        connection = McpConnection(server.url + "/mcp", "legacy")
        try:
            page = connection.run(lambda client: client.read_resource(PAGE)).contents[0]
            assert page.meta["imqueue.org/source"]["from"] == "the published snapshot", page.meta
            heard.append(page.model_dump_json())
            catalogue = connection.run(lambda client: client.read_resource("imqueue://packages")).contents[0]
            heard.append(catalogue.text)
            heard.append(connection.run(lambda client: client.list_resources()).model_dump_json())
            with pytest.raises(MCPError) as missing:
                connection.run(lambda client: client.read_resource("https://imqueue.org/no-such-page/"))
            heard.append(f"{missing.value.message} {missing.value.data}")
        finally:
            connection.close()
    assert len(heard) == 4 and "the published snapshot" in heard[1]
    for text in heard:
        for secret in (*SECRETS, "snapshot.msgpack", str(tmp_path)):
            assert secret not in text, (secret, text[:300])


def generation_of_file(path: Path) -> str:
    from imqueue_mcp.docsource import generation_of

    return generation_of(load_snapshot(path).header)


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_an_offline_server_picks_up_a_new_generation_by_polling(
    generations: dict[str, Path], tmp_path: Path, mcp: list[McpConnection]
) -> None:
    path = tmp_path / "snapshot.msgpack"
    publish(generations["a"], path)
    server = offline_server(path, tmp_path, "--snapshot-poll-seconds", "1")
    try:
        wait_ready(server)
        client = connect(server, mcp)
        assert MARKER.strip() not in page_text(client)["markdown"]
        publish(generations["b"], path)
        wait_for_generation(server, generation_of_file(generations["b"]))
        assert MARKER.strip() in page_text(client)["markdown"]
    finally:
        server.close()


def test_an_offline_stdio_server_reading_pages_only_picks_up_a_new_generation(
    generations: dict[str, Path], tmp_path: Path
) -> None:
    path = tmp_path / "snapshot.msgpack"
    publish(generations["a"], path)
    environment = {**server_environment(tmp_path), "IMQUEUE_MCP_SNAPSHOT_POLL_SECONDS": "1"}
    connection = stdio_connection(["--offline", "--snapshot", str(path)], environment, tmp_path, "legacy")
    try:
        assert MARKER.strip() not in page_text(connection)["markdown"]
        publish(generations["b"], path)
        deadline = time.monotonic() + 20
        while MARKER.strip() not in page_text(connection)["markdown"]:  # each call may start a check
            assert time.monotonic() < deadline, "the new generation's page never came"
            time.sleep(0.2)
        assert page_text(connection)["source"]["fetchedAt"] == load_snapshot(generations["b"]).fetched_at
    finally:
        connection.close()


# --- a builder killed mid-write --------------------------------------------------------------------


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
@pytest.mark.timeout(max(240, KILLS * 30))
def test_builders_killed_mid_write_never_take_offline_get_doc_down(
    generations: dict[str, Path], tmp_path: Path, mcp: list[McpConnection]
) -> None:
    path = tmp_path / "cache" / "snapshot.msgpack"
    path.parent.mkdir()
    publish(generations["a"], path)
    running = offline_server(path, tmp_path, "--snapshot-poll-seconds", "1")
    failures: list[str] = []
    calls = 0
    stop = threading.Event()

    def keep_reading() -> None:  # a client of the long-running server, all along: a read every ~50 ms
        nonlocal calls
        client = connect(running, mcp)
        while not stop.is_set():
            result = client.call("get_doc", {"url": PAGE, "maxTokens": 2000})
            calls += 1
            if result.is_error:
                failures.append(result.content[0].text)
            stop.wait(0.04)  # back to back, the reads took a CPU from the builders and servers under test

    reader = threading.Thread(target=keep_reading, daemon=True)
    started: list[HttpServer] = []
    try:
        wait_ready(running)
        reader.start()
        rng = random.Random(20)
        for _ in range(KILLS):
            builder = subprocess.Popen(
                [sys.executable, "-m", "imqueue_mcp.build_index.cli", "--from", str(SITE), "--out", str(path)]
                + ["--pages", "--quiet"],
                env=server_environment(tmp_path),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(rng.uniform(0.3, 1.2))
            fresh = offline_server(path, tmp_path)  # started while the rebuild runs
            started.append(fresh)
            time.sleep(rng.uniform(0.0, 1.5))  # the write lands around 1.5-2.5 s in
            builder.kill()
            builder.wait(30)
            wait_ready(fresh)
            assert page_text(connect(fresh, mcp))["url"] == PAGE
            fresh.close()
        stop.set()
        reader.join(60)
    finally:
        stop.set()
        running.close()
        for server in started:
            server.close()
    assert calls > KILLS * 10 and failures == []  # reads all along, none failed
    leftovers = [p.name for p in path.parent.iterdir() if p.name != "snapshot.msgpack"]
    assert all(name.startswith(".snapshot-") for name in leftovers)  # a dead writer's temp file at most


# --- get_doc cursors across instances --------------------------------------------------------------


def read_all(first: McpConnection, rest: McpConnection) -> tuple[str, str]:
    """The page read in parts: the first part from `first`, every later one from `rest`; and the
    whole page as one read gives it."""
    part = page_text(first, maxTokens=1000)
    text = part["markdown"]
    while part.get("nextCursor"):
        part = page_text(rest, cursor=part["nextCursor"], maxTokens=1000)
        text += part["markdown"]
    return text, page_text(rest, maxTokens=50_000)["markdown"]


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_cursor_continues_on_another_instance_with_the_same_page(
    generations: dict[str, Path], tmp_path: Path, mcp: list[McpConnection]
) -> None:
    one = offline_server(generations["a"], home(tmp_path, "one"))
    other = offline_server(generations["a2"], home(tmp_path, "other"))  # another generation, same PAGE
    try:
        wait_ready(one)
        wait_ready(other)
        assert generation_of(one) != generation_of(other)
        parts, whole = read_all(connect(one, mcp), connect(other, mcp))
        assert parts == whole and len(whole) > 4000  # nothing lost, nothing repeated
    finally:
        one.close()
        other.close()


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_cursor_for_a_page_another_instance_holds_changed_is_refused_with_a_restart_hint(
    generations: dict[str, Path], tmp_path: Path, mcp: list[McpConnection]
) -> None:
    one = offline_server(generations["a"], home(tmp_path, "one"))
    other = offline_server(generations["b"], home(tmp_path, "other"))
    try:
        wait_ready(one)
        wait_ready(other)
        cursor = page_text(connect(one, mcp), maxTokens=1000)["nextCursor"]
        refused = connect(other, mcp).call("get_doc", {"url": PAGE, "cursor": cursor, "maxTokens": 1000})
        text = refused.content[0].text
        assert refused.is_error and refused.structured_content["error"]["code"] == "invalid_arguments"
        assert "changed since the cursor was issued" in text and "read it again from the start" in text
        assert "url alone" in text
    finally:
        one.close()
        other.close()

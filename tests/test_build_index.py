"""imq-build-index: feeds -> snapshot, from a mirror folder, loopback origins or a base URL.

Everything is read from fixtures/tiny_site.py (a tiny hand-written mirror, written out once per
session by conftest.tiny_site), served when needed by `http.server` threads on 127.0.0.1 that
the tests start and stop themselves. Nothing reaches the network, nothing is mocked: the real
CLI, the real sources, the real snapshot file.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest

from imqueue_mcp.build_index.cli import main as build_main
from imqueue_mcp.docsource import (
    FEEDS,
    BuildError,
    SnapshotError,
    build,
    load_pages,
    load_snapshot,
    pages_path,
    save_pages,
    save_snapshot,
)
from imqueue_mcp.docsource.pages import PAGES_FORMAT, api_page_paths
from imqueue_mcp.docsource.snapshot import FORMAT_VERSION

from conftest import tiny_site

REPO = Path(__file__).resolve().parents[1]
SITE = tiny_site()


def expected_requests(snapshot: Path, host: str | None = None) -> list[str]:
    """What a build reads (sorted): every feed, then each API symbol's reference page (its doc
    comment), of one host, or of both under /<host> (a base URL serving host folders)."""
    feeds = [(h, p) for h, p in FEEDS]
    pages = [(h, p + "index.md") for h, p in api_page_paths(load_snapshot(snapshot).corpus)]
    if host is not None:
        return sorted(p for h, p in feeds + pages if h == host)
    return sorted(f"/{h}{p}" for h, p in feeds + pages)


HOSTS = ("imqueue.org", "imqueue.com")
VERSIONED_FEEDS = [
    (h, p) for h, p in FEEDS if p.endswith(".json") and not p.startswith(("/blog/", "/status"))
]
EXPECTED_COUNTS = {
    "com:page": 2,
    "com:section": 1,
    "org:answer": 1,
    "org:page": 4,
    "org:section": 4,
    "org:symbol": 6,
}


# --- loopback origins ------------------------------------------------------------------


class _RecordingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; records each request's path and headers; answers 302 for `redirects`."""

    requests: list[tuple[str, dict[str, str]]]
    redirects: dict[str, str]

    def do_GET(self) -> None:
        self.requests.append((self.path, dict(self.headers.items())))
        location = self.redirects.get(self.path)
        if location:
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()

    def log_message(self, format: str, *args: Any) -> None:
        pass


class Loopback:
    """A folder on http://127.0.0.1:<free port>, in a daemon thread, until close()."""

    def __init__(self, folder: Path, redirects: dict[str, str] | None = None) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        handler = type(
            "Handler", (_RecordingHandler,), {"requests": self.requests, "redirects": dict(redirects or {})}
        )
        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(handler, directory=str(folder))
        )
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def serve() -> Iterator[Callable[..., Loopback]]:
    servers: list[Loopback] = []

    def start(folder: Path, redirects: dict[str, str] | None = None) -> Loopback:
        server = Loopback(folder, redirects)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, read, released): connection refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def origin_args(origins: dict[str, str]) -> list[str]:
    return [arg for host, url in origins.items() for arg in ("--origin", f"{host}={url}")]


# --- helpers ---------------------------------------------------------------------------


def run_build(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = build_main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def split(path: Path) -> tuple[dict[str, Any], bytes]:
    outer = msgpack.unpackb(path.read_bytes(), raw=False)
    return outer["header"], outer["body"]


def pages_part(path: Path) -> bytes:
    """The pages envelope a snapshot file carries (imq-build-index --pages)."""
    pages: bytes = msgpack.unpackb(path.read_bytes(), raw=False)["pages"]
    return pages


def split_pages(path: Path) -> tuple[dict[str, Any], bytes]:
    outer = msgpack.unpackb(pages_part(path), raw=False)
    return outer["header"], outer["body"]


def site_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "site"
    shutil.copytree(SITE, copy)
    return copy


def edit_json(file: Path, change: Callable[[Any], None]) -> None:
    data = json.loads(file.read_text(encoding="utf-8"))
    change(data)
    file.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture(scope="module")
def mirror_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A good snapshot built from the tiny site, written once for the module (read-only)."""
    path = tmp_path_factory.mktemp("snapshot") / "snapshot.msgpack"
    save_snapshot(build(mirror=SITE), path)
    return path


@pytest.fixture(scope="module")
def mirror_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot built with --pages from the tiny site, carrying its pages (read-only)."""
    path = tmp_path_factory.mktemp("pages") / "snapshot.msgpack"
    snapshot = build(mirror=SITE, pages=True)
    assert snapshot.pages is not None
    save_snapshot(snapshot, path)
    return path


# --- building --------------------------------------------------------------------------


def test_fixture_mirror_holds_every_feed_the_builder_reads() -> None:
    for host, path in FEEDS:
        assert (SITE / host / path.lstrip("/")).is_file(), f"the tiny site lacks {host}{path}"


def test_build_from_a_relative_mirror_folder_as_the_readme_types_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = os.path.relpath(SITE, tmp_path)  # ../../shared/site, say
    code, _, err = run_build(capsys, "--from", relative, "--out", "snapshot.msgpack", "--quiet")
    assert (code, err) == (0, "")
    header, _body = split(tmp_path / "snapshot.msgpack")
    assert header["origins"] == {h: (SITE / h).resolve().as_uri() for h in HOSTS}


def test_build_from_the_mirror_writes_a_snapshot_with_a_complete_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snapshot.msgpack"
    code, stdout, _ = run_build(capsys, "--from", str(SITE), "--out", str(out), "--quiet")
    assert code == 0 and stdout == ""
    header, body = split(out)
    assert header["format"] == FORMAT_VERSION
    assert header["origins"] == {h: (SITE / h).resolve().as_uri() for h in HOSTS}
    fetched = datetime.fromisoformat(header["fetched_at"])
    assert fetched.tzinfo is not None and abs(datetime.now(UTC) - fetched) < timedelta(minutes=5)
    assert header["feeds"] == {
        f"https://{h}{p}": hashlib.sha256((SITE / h / p.lstrip("/")).read_bytes()).hexdigest()
        for h, p in FEEDS
    }
    assert header["counts"] == EXPECTED_COUNTS
    assert header["body_sha256"] == hashlib.sha256(body).hexdigest()


def test_load_round_trips_the_corpus(tmp_path: Path) -> None:
    built = build(mirror=SITE)
    out = tmp_path / "snapshot.msgpack"
    save_snapshot(built, out)
    loaded = load_snapshot(out)
    assert list(loaded.corpus.documents) == list(built.corpus.documents)
    assert loaded.corpus.lemmas == built.corpus.lemmas
    assert (
        loaded.corpus.section_names
        == built.corpus.section_names
        == ["Getting started", "Reference", "Blog", "Commercial"]
    )
    assert loaded.sections == built.sections
    assert loaded.sections["imqueue.org"]["/intro/"] == {"why-a-queue": [8, 14]}
    assert loaded.links == built.links  # both llms.txt, one link per URL, sorted by URL
    assert [link.url for link in built.links] == sorted({link.url for link in built.links})
    intro = next(link for link in built.links if link.url == "https://imqueue.org/intro/")
    assert intro.title == "Introduction"
    assert intro.description == "What the framework does and when to reach for it."
    assert loaded.status is not None and loaded.status == built.status
    assert [p["scoped"] for p in loaded.status["packages"]] == ["@imqueue/core", "@imqueue/rpc"]
    assert {k: v for k, v in loaded.header.items() if k not in ("format", "body_sha256")} == built.header
    assert loaded.fetched_at == built.fetched_at
    blog = next(
        d for d in loaded.corpus.documents if d.path == "/blog/scaling-on-backlog/" and d.tier == "page"
    )
    assert blog.topics == ("queue", "performance") and blog.date == "2026-01-15"
    deprecated = [d.title for d in loaded.corpus.documents if d.deprecated]
    assert deprecated == ["RedisQueue.sendRaw"]
    expected = [(h.url, h.score) for h in built.index().search("redis queue", limit=10).results]
    assert (
        expected
        and [(h.url, h.score) for h in loaded.index().search("redis queue", limit=10).results] == expected
    )


def test_build_from_loopback_origins_gives_the_mirror_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Callable[..., Loopback], mirror_snapshot: Path
) -> None:
    origins = {h: serve(SITE / h).url for h in HOSTS}
    out = tmp_path / "snapshot.msgpack"
    code, _, err = run_build(capsys, *origin_args(origins), "--out", str(out), "--quiet")
    assert (code, err) == (0, "")
    header, body = split(out)
    mirror_header, mirror_body = split(mirror_snapshot)
    assert header["origins"] == origins
    assert header["feeds"] == mirror_header["feeds"]  # keyed by canonical URL, whatever served it
    assert header["counts"] == EXPECTED_COUNTS
    assert body == mirror_body


def test_build_from_a_base_url_serving_host_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Callable[..., Loopback], mirror_snapshot: Path
) -> None:
    base = serve(SITE)
    out = tmp_path / "snapshot.msgpack"
    code, _, err = run_build(capsys, "--from", base.url + "/", "--out", str(out), "--quiet")
    assert (code, err) == (0, "")
    header, body = split(out)
    assert header["origins"] == {h: f"{base.url}/{h}" for h in HOSTS}
    assert sorted(path for path, _ in base.requests) == expected_requests(out)
    assert body == split(mirror_snapshot)[1]


def build_in_a_process(tmp_path: Path, seed: str, *extra: str) -> Path:
    """`imq-build-index --from <tiny site>` in its own process with PYTHONHASHSEED=seed."""
    out = tmp_path / f"seed-{seed}.msgpack"
    env = {**os.environ, "PYTHONHASHSEED": seed, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "imqueue_mcp.build_index.cli",
            "--from",
            str(SITE),
            "--out",
            str(out),
            "--quiet",
            *extra,
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return out


def test_the_same_feeds_give_the_same_body_bytes_in_separate_processes(
    tmp_path: Path, mirror_snapshot: Path
) -> None:
    """String hashing differs per process: a set or dict order leaking into the body shows here."""
    bodies = [split(build_in_a_process(tmp_path, seed))[1] for seed in ("1", "2")]
    assert bodies[0] == bodies[1] == split(mirror_snapshot)[1]


def test_a_nonzero_engine_version_is_accepted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mirror_snapshot: Path
) -> None:
    site = site_copy(tmp_path)
    for host, path in VERSIONED_FEEDS:
        edit_json(site / host / path.lstrip("/"), lambda feed: feed.update(e=7))
    out = tmp_path / "snapshot.msgpack"
    code, _, err = run_build(capsys, "--from", str(site), "--out", str(out), "--quiet")
    assert (code, err) == (0, "")
    assert split(out)[0]["counts"] == EXPECTED_COUNTS
    assert list(load_snapshot(out).corpus.documents) == list(load_snapshot(mirror_snapshot).corpus.documents)


@pytest.mark.parametrize(("host", "path"), VERSIONED_FEEDS, ids=[f"{h}{p}" for h, p in VERSIONED_FEEDS])
def test_a_feed_of_version_2_is_refused_naming_the_feed_and_the_version(
    tmp_path: Path, host: str, path: str
) -> None:
    site = site_copy(tmp_path)
    edit_json(site / host / path.lstrip("/"), lambda feed: feed.update(v=2))
    with pytest.raises(BuildError) as raised:
        build(mirror=site)
    message = str(raised.value)
    assert f"https://{host}{path}" in message
    assert "version 2" in message and "reads version 1" in message
    assert "upgrade imqueue-mcp" in message


# --- failures: one line, exit 1, the previous snapshot untouched -------------------------


def _failure_404(tmp_path: Path, serve: Callable[..., Loopback]) -> tuple[list[str], list[str]]:
    site = site_copy(tmp_path)
    (site / "imqueue.org" / "status.json").unlink()
    origins = {h: serve(site / h).url for h in HOSTS}
    return origin_args(origins), [f"{origins['imqueue.org']}/status.json", "HTTP 404", "--from"]


def _failure_bad_json(tmp_path: Path, serve: Callable[..., Loopback]) -> tuple[list[str], list[str]]:
    site = site_copy(tmp_path)
    (site / "imqueue.org" / "search-text.json").write_text('{"v": 1, "pages": [', encoding="utf-8")
    return ["--from", str(site)], ["https://imqueue.org/search-text.json", "not valid JSON", "check the URL"]


def _failure_version_2(tmp_path: Path, serve: Callable[..., Loopback]) -> tuple[list[str], list[str]]:
    site = site_copy(tmp_path)
    edit_json(site / "imqueue.org" / "search-index.json", lambda feed: feed.update(v=2))
    origins = {h: serve(site / h).url for h in HOSTS}
    return origin_args(origins), ["https://imqueue.org/search-index.json", "feed version 2", "upgrade"]


def _failure_unreachable(tmp_path: Path, serve: Callable[..., Loopback]) -> tuple[list[str], list[str]]:
    url = f"http://127.0.0.1:{closed_port()}"
    com = serve(SITE / "imqueue.com").url
    return (
        origin_args({"imqueue.org": url, "imqueue.com": com}),
        [f"{url}/search-index.json", "unreachable", "check the origin is up"],
    )


def _failure_missing_mirror(tmp_path: Path, serve: Callable[..., Loopback]) -> tuple[list[str], list[str]]:
    missing = tmp_path / "no-such-mirror"
    return ["--from", str(missing)], [str(missing), "not a site mirror", "imqueue.org/ and imqueue.com/"]


def _failure_incomplete_mirror(tmp_path: Path, serve: Callable[..., Loopback]) -> tuple[list[str], list[str]]:
    site = site_copy(tmp_path)
    (site / "imqueue.com" / "llms.txt").unlink()
    return ["--from", str(site)], [str(site / "imqueue.com" / "llms.txt"), "cannot read", "refresh it"]


def _page_is_a_folder(tmp_path: Path, serve: Callable[..., Loopback]) -> tuple[list[str], list[str]]:
    site = site_copy(tmp_path)
    (site / "imqueue.org" / "api" / "faq" / "index.md").mkdir(parents=True)
    return ["--from", str(site), "--pages"], [
        str(site / "imqueue.org" / "api" / "faq" / "index.md"),
        "cannot read",
    ]


def _page_redirects(tmp_path: Path, serve: Callable[..., Loopback]) -> tuple[list[str], list[str]]:
    org = serve(SITE / "imqueue.org", redirects={"/intro/index.md": "https://example.com/intro/"})
    com = serve(SITE / "imqueue.com")
    return [*origin_args({"imqueue.org": org.url, "imqueue.com": com.url}), "--pages"], [
        f"{org.url}/intro/index.md",
        "302",
    ]


FAILURES = {
    "404-feed": _failure_404,
    "bad-json": _failure_bad_json,
    "feed-v2": _failure_version_2,
    "unreachable-origin": _failure_unreachable,
    "missing-mirror-folder": _failure_missing_mirror,
    "incomplete-mirror": _failure_incomplete_mirror,
    "pages-page-is-a-folder": _page_is_a_folder,  # --pages: a page failing otherwise than 404
    "pages-page-redirects": _page_redirects,
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_failed_build_exits_1_with_one_line_and_keeps_the_previous_files(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    serve: Callable[..., Loopback],
    mirror_pages: Path,
    case: str,
) -> None:
    out_dir = tmp_path / "cache"
    out_dir.mkdir()
    out = out_dir / "snapshot.msgpack"
    previous = {out: mirror_pages.read_bytes()}
    for file, data in previous.items():
        file.write_bytes(data)
    args, expected = FAILURES[case](tmp_path, serve)
    code, stdout, err = run_build(capsys, *args, "--out", str(out))
    assert code == 1
    assert stdout == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("imq-build-index: ") and "Traceback" not in err
    for fragment in expected:
        assert fragment in err, (fragment, err)
    assert {file: file.read_bytes() for file in previous} == previous
    # no temp file left behind
    assert sorted(p.name for p in out_dir.iterdir()) == ["snapshot.msgpack"]


def test_the_console_script_fails_with_one_line_and_no_traceback(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-m", "imqueue_mcp.build_index.cli", "--from", str(missing)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and str(missing) in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "cache" / "imqueue-mcp" / "snapshot.msgpack").exists()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--from", "x", "--origin", "imqueue.org=http://127.0.0.1:1"], "either --from or --origin"),
        (["--origin", "example.com=http://127.0.0.1:1"], "HOST one of imqueue.org, imqueue.com"),
        (["--origin", "imqueue.org"], "is not HOST=URL"),
        (["--origin", "imqueue.org=ftp://127.0.0.1/"], "is not HOST=URL"),
    ],
)
def test_bad_source_arguments_exit_1_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], fragment: str
) -> None:
    out = tmp_path / "snapshot.msgpack"
    code, _, err = run_build(capsys, *args, "--out", str(out))
    assert code == 1 and err.count("\n") == 1 and fragment in err, err
    assert not out.exists()


@pytest.mark.parametrize(
    ("feed", "change"),
    [
        pytest.param(
            "search-index.json",
            lambda f: f["records"][0].pop("t"),
            id="page-record-without-title",
        ),
        pytest.param("search-index.json", lambda f: f["records"][5].pop("u"), id="symbol-record-without-url"),
        pytest.param("search-index.json", lambda f: f["records"][0].update(g=9), id="unknown-group"),
        pytest.param("search-text.json", lambda f: f["sections"][0].pop(), id="section-4-tuple"),
        pytest.param(
            "search-text.json",
            lambda f: f["pages"][0].pop(),
            id="page-row-without-kind",
        ),
        pytest.param(
            "search-sections.json",
            lambda f: f["pages"].update({"/intro/": ["why-a-queue"]}),
            id="section-anchors-not-an-object",
        ),
    ],
)
def test_a_malformed_feed_is_refused_with_a_build_error(
    tmp_path: Path, feed: str, change: Callable[[Any], None]
) -> None:
    """Anything but a BuildError escapes imq-build-index as a traceback instead of one line."""
    site = site_copy(tmp_path)
    edit_json(site / "imqueue.org" / feed, change)
    try:
        build(mirror=site)
    except BuildError as error:
        assert f"https://imqueue.org/{feed}" in str(error)
        return
    except Exception as error:  # noqa: BLE001 - the point: anything else is a traceback in the CLI
        pytest.fail(f"BUG: a malformed {feed} raised {type(error).__name__}: {error} instead of a BuildError")
    pytest.fail(f"a malformed {feed} was accepted")


# --- what goes over the wire -----------------------------------------------------------


def test_the_user_agent_names_imqueue_mcp_and_its_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Callable[..., Loopback]
) -> None:
    servers = {h: serve(SITE / h) for h in HOSTS}
    code, _, err = run_build(
        capsys,
        *origin_args({h: s.url for h, s in servers.items()}),
        "--out",
        str(tmp_path / "s.msgpack"),
        "--quiet",
    )
    assert (code, err) == (0, "")
    expected = f"imqueue-mcp/{metadata.version('imqueue-mcp')}"
    for host, server in servers.items():
        assert sorted(path for path, _ in server.requests) == expected_requests(tmp_path / "s.msgpack", host)
        assert {headers.get("User-Agent") for _, headers in server.requests} == {expected}


def test_a_redirect_to_another_host_is_not_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Callable[..., Loopback], mirror_snapshot: Path
) -> None:
    elsewhere = serve(SITE / "imqueue.org")
    org = serve(SITE / "imqueue.org", redirects={"/search-index.json": elsewhere.url + "/search-index.json"})
    com = serve(SITE / "imqueue.com")
    out = tmp_path / "snapshot.msgpack"
    out.write_bytes(mirror_snapshot.read_bytes())
    code, _, err = run_build(
        capsys, *origin_args({"imqueue.org": org.url, "imqueue.com": com.url}), "--out", str(out)
    )
    assert code == 1
    assert err.count("\n") == 1 and f"{org.url}/search-index.json" in err and "302" in err, err
    assert elsewhere.requests == []
    assert out.read_bytes() == mirror_snapshot.read_bytes()


# --- output ----------------------------------------------------------------------------


def test_quiet_prints_nothing_on_success(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "snapshot.msgpack"
    assert run_build(capsys, "--from", str(SITE), "--out", str(out), "--quiet") == (0, "", "")
    assert out.is_file()


def test_without_quiet_one_summary_line_reports_counts_size_and_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snapshot.msgpack"
    code, stdout, err = run_build(capsys, "--from", str(SITE), "--out", str(out))
    assert code == 0 and stdout == ""
    assert err.count("\n") == 1, err
    assert str(out) in err and "18 records" in err
    for key, count in EXPECTED_COUNTS.items():
        assert f"{key} {count}" in err
    kb = round(out.stat().st_size / 1024)
    assert f" {kb} kB in " in err
    assert err.rstrip().endswith(" s") and float(err.rsplit(" in ", 1)[1].split()[0]) >= 0


# --- loading errors --------------------------------------------------------------------


def _wrong_format(path: Path, good: bytes) -> str:
    outer = msgpack.unpackb(good, raw=False)
    outer["header"]["format"] = FORMAT_VERSION + 1
    path.write_bytes(msgpack.packb(outer, use_bin_type=True))
    return f"snapshot format {FORMAT_VERSION + 1}"


def _flipped_body_byte(path: Path, good: bytes) -> str:
    damaged = bytearray(good)
    damaged[-1] ^= 0xFF  # the body is the last value of the outer map: its last byte
    path.write_bytes(bytes(damaged))
    return "checksum mismatch"


def _not_msgpack(path: Path, good: bytes) -> str:
    path.write_bytes(b"\xc1 this is not msgpack")
    return "not an imqueue-mcp snapshot"


def _msgpack_of_something_else(path: Path, good: bytes) -> str:
    path.write_bytes(msgpack.packb({"hello": "world"}))
    return "not an imqueue-mcp snapshot"


def _truncated(path: Path, good: bytes) -> str:
    path.write_bytes(good[: len(good) // 2])
    return "not an imqueue-mcp snapshot"


def _missing(path: Path, good: bytes) -> str:
    return "no snapshot there"


LOAD_ERRORS = {
    "wrong-format-version": _wrong_format,
    "flipped-body-byte": _flipped_body_byte,
    "not-msgpack": _not_msgpack,
    "msgpack-not-a-snapshot": _msgpack_of_something_else,
    "truncated": _truncated,
    "missing-file": _missing,
}


@pytest.mark.parametrize("case", list(LOAD_ERRORS))
def test_loading_a_bad_snapshot_raises_a_snapshot_error_naming_the_file_and_the_fix(
    tmp_path: Path, mirror_snapshot: Path, case: str
) -> None:
    path = tmp_path / "snapshot.msgpack"
    reason = LOAD_ERRORS[case](path, mirror_snapshot.read_bytes())
    with pytest.raises(SnapshotError) as raised:
        load_snapshot(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: ")
    assert reason in message
    assert "imq-build-index" in message


def test_a_feed_named_optional_may_be_missing_and_the_snapshot_then_lacks_it(tmp_path: Path) -> None:
    site = site_copy(tmp_path)
    (site / "imqueue.org" / "status.json").unlink()
    snapshot = build(mirror=site, optional=frozenset({"/status.json"}))
    assert snapshot.status is None and len(snapshot.corpus.documents) > 0
    with pytest.raises(BuildError, match="status.json"):
        build(mirror=site)


# --- --pages: every page's markdown, in the snapshot file itself -----------------------------

# The pages of the tiny site that have an index.md mirror (canonical URL -> file), and both llms.txt.
SAVED_PAGES = {
    "https://imqueue.org/llms.txt": "imqueue.org/llms.txt",
    "https://imqueue.com/llms.txt": "imqueue.com/llms.txt",
    "https://imqueue.org/intro/": "imqueue.org/intro/index.md",
    "https://imqueue.org/tutorial/expose-methods/": "imqueue.org/tutorial/expose-methods/index.md",
    "https://imqueue.org/api/rpc/latest/rpc.expose/": "imqueue.org/api/rpc/latest/rpc.expose/index.md",
    "https://imqueue.com/pricing/": "imqueue.com/pricing/index.md",
}
MISSING_PAGES = 8  # the corpus's other pages (/api/faq/, the blog post, five symbols, /license/)


def pages_body(path: Path) -> dict[str, bytes]:
    return dict(msgpack.unpackb(split_pages(path)[1], raw=False))


def test_pages_are_written_into_the_snapshot_with_every_page_the_mirror_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mirror_snapshot: Path
) -> None:
    out = tmp_path / "snapshot.msgpack"
    pages_path(out).write_bytes(b"an older version's sidecar")
    code, stdout, err = run_build(capsys, "--from", str(SITE), "--out", str(out), "--pages", "--quiet")
    assert (code, stdout, err) == (0, "", "")
    # One file: one rename switches the corpus and its pages together (the old sidecar is gone).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snapshot.msgpack"]
    assert split(out)[0]["pages_sha256"] == hashlib.sha256(pages_part(out)).hexdigest()
    header, body = split_pages(out)
    assert header == {
        "format": PAGES_FORMAT,
        "fetched_at": split(out)[0]["fetched_at"],
        "origins": {h: (SITE / h).resolve().as_uri() for h in HOSTS},
        "count": len(SAVED_PAGES),
        "body_sha256": hashlib.sha256(body).hexdigest(),
    }
    pages = pages_body(out)
    assert list(pages) == sorted(SAVED_PAGES)
    assert pages == {url: (SITE / file).read_bytes() for url, file in SAVED_PAGES.items()}
    assert "https://imqueue.org/api/faq/" not in pages  # no mirror: skipped, not a failure
    # --pages leaves the snapshot as it was, but for the code examples and the page markdown: the
    # body keeps only the llms-full.txt pages not read (each page is stored once), and the
    # passages of search_docs hits read every page's own markdown from the pages part
    with_pages, without = (msgpack.unpackb(split(f)[1], raw=False) for f in (out, mirror_snapshot))
    assert {k: v for k, v in with_pages.items() if k not in ("examples", "markdown")} == {
        k: v for k, v in without.items() if k not in ("examples", "markdown")
    }
    read = {url: data.decode("utf-8") for url, data in pages.items() if not url.endswith("/llms.txt")}
    unread = {url: text for url, text in without["markdown"].items() if url not in read}
    assert with_pages["markdown"] == unread
    assert with_pages["markdown"] and not with_pages["markdown"].keys() & read.keys()
    assert load_snapshot(out).page_markdown(out) == without["markdown"] | read
    assert "https://imqueue.org/api/rpc/latest/rpc.expose/" in read
    # ...read from each page's own markdown, and from llms-full.txt for a page not read
    assert [row[0] for row in with_pages["examples"]] == [
        "/api/faq/#~1",
        "/tutorial/expose-methods/#write-the-method~1",
    ]
    snapshot = load_snapshot(out)
    loaded = snapshot.saved_pages(out)
    assert loaded is not None and loaded.body == pages and loaded.fetched_at == snapshot.fetched_at


def test_pages_reads_through_http_origins_with_the_same_user_agent_and_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], serve: Callable[..., Loopback], mirror_pages: Path
) -> None:
    servers = {h: serve(SITE / h) for h in HOSTS}
    out = tmp_path / "snapshot.msgpack"
    args = origin_args({h: s.url for h, s in servers.items()})
    code, _, err = run_build(capsys, *args, "--out", str(out), "--pages", "--quiet")
    assert (code, err) == (0, "")
    assert split_pages(out)[1] == split_pages(mirror_pages)[1]
    asked = {path for server in servers.values() for path, _ in server.requests}
    assert "/intro/index.md" in asked and "/api/faq/index.md" in asked and "/license/index.md" in asked
    expected = f"imqueue-mcp/{metadata.version('imqueue-mcp')}"
    assert {headers.get("User-Agent") for s in servers.values() for _, headers in s.requests} == {expected}


def test_the_pages_are_the_same_bytes_in_separate_processes(tmp_path: Path, mirror_pages: Path) -> None:
    bodies = [split_pages(build_in_a_process(tmp_path, seed, "--pages"))[1] for seed in ("1", "2")]
    assert bodies[0] == bodies[1] == split_pages(mirror_pages)[1]


def test_the_summary_line_counts_the_pages_and_their_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "snapshot.msgpack"
    code, _, err = run_build(capsys, "--from", str(SITE), "--out", str(out), "--pages")
    assert code == 0 and err.count("\n") == 1, err
    kb = round(out.stat().st_size / 1024)
    assert (
        f", {len(SAVED_PAGES)} pages incl. both llms.txt ({MISSING_PAGES} not found, skipped), {kb} kB in "
        in err
    )


def test_without_pages_the_new_snapshot_carries_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mirror_pages: Path
) -> None:
    out = tmp_path / "snapshot.msgpack"
    out.write_bytes(mirror_pages.read_bytes())
    assert run_build(capsys, "--from", str(SITE), "--out", str(out), "--quiet") == (0, "", "")
    assert "pages" not in msgpack.unpackb(out.read_bytes(), raw=False)
    assert load_snapshot(out).saved_pages(out) is None


def test_damaged_pages_in_a_snapshot_are_refused_naming_the_file_and_the_fix(
    tmp_path: Path, mirror_pages: Path
) -> None:
    path = tmp_path / "snapshot.msgpack"
    outer = msgpack.unpackb(mirror_pages.read_bytes(), raw=False)
    damaged = bytearray(outer["pages"])
    damaged[-1] ^= 0xFF
    outer["pages"] = bytes(damaged)
    path.write_bytes(msgpack.packb(outer, use_bin_type=True))
    with pytest.raises(SnapshotError) as raised:
        load_snapshot(path)
    assert str(raised.value).startswith(f"{path}: checksum mismatch in its saved pages")


def test_an_older_versions_sidecar_is_refused_when_damaged(tmp_path: Path, mirror_pages: Path) -> None:
    snapshot = load_snapshot(mirror_pages)
    pages = snapshot.saved_pages(mirror_pages)
    assert pages is not None
    path = tmp_path / "snapshot.msgpack.pages"
    save_pages(pages, path)
    damaged = bytearray(path.read_bytes())
    damaged[-1] ^= 0xFF
    path.write_bytes(bytes(damaged))
    with pytest.raises(SnapshotError) as raised:
        load_pages(path)
    assert str(raised.value).startswith(f"{path}: checksum mismatch") and "--pages" in str(raised.value)

"""get_doc's parts: the host lock, mirror resolution, sections, truncation, redirect policy."""

from __future__ import annotations

import asyncio
import http.server
import threading
import time
from collections.abc import Iterator

import pytest

from imqueue_mcp.server.docs.fetch import (
    DocUrl,
    DocUrlError,
    Fetched,
    Fetcher,
    FetchError,
    OfflineError,
    parse_doc_url,
)
from imqueue_mcp.server.docs.read import heading_path, mime_type_of, mirror_of, slice_section


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://imqueue.org/intro/", DocUrl("imqueue.org", "/intro/")),
        ("https://imqueue.com/pricing/", DocUrl("imqueue.com", "/pricing/")),
        ("https://IMQUEUE.ORG/intro/#why", DocUrl("imqueue.org", "/intro/", "why")),
        ("https://imqueue.org:443/intro/", DocUrl("imqueue.org", "/intro/")),
        ("http://imqueue.org/intro/", DocUrl("imqueue.org", "/intro/")),
        ("imqueue.org/intro/", DocUrl("imqueue.org", "/intro/")),
        ("https://imqueue.org", DocUrl("imqueue.org", "/")),
        ("https://imqueue.org/llms-full.txt?x=1", DocUrl("imqueue.org", "/llms-full.txt")),
    ],
)
def test_host_lock_accepts_the_two_sites(text: str, expected: DocUrl) -> None:
    assert parse_doc_url(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://imqueue.org.evil.com/intro/",
        "https://evil.com/imqueue.org/",
        "https://docs.imqueue.org/intro/",
        "https://imqueue.org@evil.com/intro/",
        "https://user@imqueue.org/intro/",
        "https://imqueue.org:8443/intro/",
        "https://imqueue.org./intro/",
        "https://imqueue.org\\@evil.com/",
        "ftp://imqueue.org/intro/",
        "file:///etc/passwd",
        "https://imqueue.org/../../etc/passwd",
        "https://xn--imqueue-9za.org/",
        "https://imqueue%2eorg/",
        "",
        "//evil.test/intro/",
        "evil.test/intro/",
    ],
)
def test_host_lock_refuses_other_hosts_and_tricks(text: str) -> None:
    with pytest.raises(DocUrlError):
        parse_doc_url(text)


def test_canonical_url_keeps_the_fragment() -> None:
    assert parse_doc_url("http://imqueue.org/cli/#install").canonical == "https://imqueue.org/cli/#install"


@pytest.mark.parametrize(
    ("path", "page", "file"),
    [
        ("/intro/", "/intro/", "/intro/index.md"),
        ("/intro", "/intro/", "/intro/index.md"),
        ("/api/rpc/latest/rpc.expose", "/api/rpc/latest/rpc.expose/", "/api/rpc/latest/rpc.expose/index.md"),
        ("/", "/", "/index.md"),
        ("/intro/index.md", "/intro/", "/intro/index.md"),
        ("/intro.md", "/intro/", "/intro.md"),
        ("/llms-full.txt", None, "/llms-full.txt"),
        ("/blog/feed.xml", None, "/blog/feed.xml"),
    ],
)
def test_pages_read_through_their_markdown_mirror_and_files_as_is(
    path: str, page: str | None, file: str
) -> None:
    mirror = mirror_of(path)
    assert (mirror.page, mirror.file) == (page, file)


def test_media_types_follow_the_file() -> None:
    assert mime_type_of("/intro/index.md") == "text/markdown"
    assert mime_type_of("/llms-full.txt") == "text/plain"
    assert mime_type_of("/blog/feed.xml") == "application/atom+xml"


PAGE = """\
# Title

Intro.

## Install

```bash
# not a heading: inside a fence
npm i x
```

### From npm

Body A.

## Use

Body B.
"""
RANGES = {"install": [4, 11], "from-npm": [11, 15], "use": [15, 18]}


def test_a_section_comes_with_its_heading_path_index_and_total() -> None:
    section = slice_section(PAGE, RANGES, "from-npm")
    assert section is not None
    assert section.markdown == "### From npm\n\nBody A.\n"
    assert section.heading == "From npm"
    assert section.ancestors == ["Title", "Install"]
    assert (section.index, section.total) == (2, 3)


def test_a_range_that_does_not_start_at_a_heading_is_not_trusted() -> None:
    assert slice_section(PAGE, {"install": [5, 11]}, "install") is None
    assert slice_section(PAGE, RANGES, "missing") is None
    assert slice_section(PAGE, {"x": [400, 500]}, "x") is None


def test_headings_inside_code_fences_are_not_ancestors() -> None:
    lines = PAGE.split("\n")
    assert heading_path(lines[:11], 3) == ["Title", "Install"]


# --- redirects: followed on the same host only -------------------------------------------


class _Redirector(http.server.BaseHTTPRequestHandler):
    targets = {
        "/same-origin": "/page.md",
        "/canonical": "https://imqueue.org/page.md",
        "/elsewhere": "https://evil.example/page.md",
        "/look-alike": "https://imqueue.org.evil.example/page.md",
    }

    def do_GET(self) -> None:
        if self.path in self.targets:
            self.send_response(302)
            self.send_header("Location", self.targets[self.path])
            self.end_headers()
            return
        body = b"# Page\n"
        self.send_response(200 if self.path == "/page.md" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def redirecting_origin() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Redirector)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def fetch(origin: str, path: str) -> Fetched:
    async def once() -> Fetched:
        fetcher = Fetcher({"imqueue.org": origin})
        try:
            return await fetcher.get("imqueue.org", path)
        finally:
            await fetcher.aclose()

    return asyncio.run(once())


@pytest.mark.parametrize("path", ["/same-origin", "/canonical"])
def test_a_redirect_on_the_same_host_is_followed(redirecting_origin: str, path: str) -> None:
    fetched = fetch(redirecting_origin, path)
    assert (fetched.status, fetched.body) == (200, b"# Page\n")
    assert fetched.url == f"https://imqueue.org{path}"


@pytest.mark.parametrize("path", ["/elsewhere", "/look-alike"])
def test_a_redirect_to_another_host_is_refused(redirecting_origin: str, path: str) -> None:
    with pytest.raises(FetchError, match="not followed"):
        fetch(redirecting_origin, path)


def test_offline_fetches_nothing() -> None:
    async def once() -> None:
        await Fetcher({"imqueue.org": "http://127.0.0.1:9"}, offline=True).get(
            "imqueue.org", "/intro/index.md"
        )

    with pytest.raises(OfflineError, match="--offline"):
        asyncio.run(once())


def test_a_live_read_says_which_origin_answered_and_when(redirecting_origin: str) -> None:
    from imqueue_mcp.server.docs.read import SectionRanges, read_doc, render_doc_text

    async def once() -> dict[str, object]:
        fetcher = Fetcher({"imqueue.org": redirecting_origin})
        try:
            return await read_doc("https://imqueue.org/page.md", fetcher, SectionRanges(fetcher))
        finally:
            await fetcher.aclose()

    before = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    result = asyncio.run(once())
    after = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    source = result["source"]
    assert isinstance(source, dict) and set(source) == {"source", "fetchedAt", "from"}
    assert source["source"] == "live" and source["from"] == redirecting_origin
    assert before <= source["fetchedAt"] <= after
    assert f"Read live from {redirecting_origin} at {source['fetchedAt']}." in render_doc_text(result)

"""get_doc's host lock against crafted URLs, judged by who was contacted.

Three loopback origins keep a log of every connection they accept: the mirrors of
imqueue.org and imqueue.com (passed to the real stdio server with --origin), and an "evil"
origin that nothing may ever reach. The crafted URLs name the evil origin directly, hide it
behind userinfo, look-alike names, IP literals, ports, other schemes, encodings and
backslashes, or reach it through a redirect served by an allowed host. The property: the
evil origin sees no connection at all; a refused URL makes no request anywhere; an accepted
one is read from its own canonical host's mirror only, and answers with a canonical URL.
"""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import SITE, McpConnection, origin_args, server_environment, stdio_connection


@dataclass
class Origin:
    """A loopback HTTP origin that logs every connection and path; optionally a site mirror."""

    root: Path | None
    redirects: dict[str, str] = field(default_factory=dict)
    connections: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        origin = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                origin.paths.append(self.path)
                for prefix, location in origin.redirects.items():
                    if self.path.startswith(prefix):
                        self.send_response(302)
                        self.send_header("Location", location)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                if origin.root is None:
                    body = b"evil origin: this must never be read\n"
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                super().do_GET()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(http.server.ThreadingHTTPServer):
            daemon_threads = True

            def process_request(self, request: Any, client_address: Any) -> None:
                origin.connections.append(str(client_address))  # any connection, HTTP or not
                super().process_request(request, client_address)

        handler = functools.partial(Handler, directory=str(self.root)) if self.root else Handler
        self.httpd = Server(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class Origins:
    org: Origin
    com: Origin
    evil: Origin


@pytest.fixture(scope="module")
def origins() -> Iterator[Origins]:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    evil = Origin(None)
    evil_host = f"127.0.0.1:{evil.port}"
    org = Origin(
        SITE / "imqueue.org",
        {
            "/redirect-to-evil/": f"{evil.url}/intro/index.md",
            "/redirect-to-com/": "https://imqueue.com/pricing/index.md",
            "/redirect-protocol-relative/": f"//{evil_host}/intro/index.md",
            "/redirect-look-alike/": "https://imqueue.org.evil.test/intro/index.md",
            "/redirect-userinfo/": f"https://imqueue.org@{evil_host}/intro/index.md",
            "/redirect-backslash/": f"https://imqueue.org\\@{evil_host}/intro/index.md",
            "/redirect-same-host/": "/intro/index.md",
        },
    )
    com = Origin(SITE / "imqueue.com", {"/redirect-to-org/": "https://imqueue.org/intro/index.md"})
    yield Origins(org, com, evil)
    for origin in (org, com, evil):
        origin.close()


def crafted(evil_port: int) -> dict[str, str | None]:
    """URL -> the canonical host it must be read from, or None when it must be refused."""
    evil = f"127.0.0.1:{evil_port}"
    return {
        # userinfo and the evil origin named outright
        f"https://imqueue.org@{evil}/intro/": None,
        f"https://imqueue.org:443@{evil}/": None,
        f"imqueue.org@{evil}/intro/": None,
        "https://imqueue.com@imqueue.org/intro/": None,
        f"https://{evil}/intro/": None,
        f"http://{evil}/intro/": None,
        f"//{evil}/intro/": None,
        f"{evil}/intro/": None,
        f"https://localhost:{evil_port}/intro/": None,
        # look-alike names
        "https://imqueue.org.evil.test/intro/": None,
        "https://evil.test/https://imqueue.org/intro/": None,
        "https://docs.imqueue.org/intro/": None,
        "https://imqueue.org./intro/": None,
        "https://imqueue.org%2eevil.test/intro/": None,
        "https://%69mqueue.org/intro/": None,
        "https://\u0456mqueue.org/intro/": None,  # Cyrillic i
        "https://imqueue.\u043erg/intro/": None,  # Cyrillic o
        "https://xn--mqueue-8nf.org/intro/": None,  # the punycode of a look-alike
        "https://imqueue\uff0eorg/intro/": None,  # fullwidth full stop
        # IP literals
        "https://127.0.0.1/intro/": None,
        "https://[::1]/intro/": None,
        "https://2130706433/intro/": None,
        "https://0x7f.0.0.1/intro/": None,
        # other schemes
        "file:///etc/passwd": None,
        "file://imqueue.org/etc/passwd": None,
        "javascript:alert(document.domain)//https://imqueue.org/": None,
        "data:text/plain,https://imqueue.org/": None,
        "ftp://imqueue.org/intro/": None,
        "gopher://imqueue.org/intro/": None,
        # ports
        "https://imqueue.org:8443/intro/": None,
        f"https://imqueue.org:{evil_port}/intro/": None,
        "https://imqueue.org:0/intro/": None,
        "https://imqueue.org:99999/intro/": None,
        # paths, encodings, backslashes, control characters
        "https://imqueue.org/../../etc/passwd": None,
        "https://imqueue.org/intro/../../../etc/passwd": None,
        f"https://imqueue.org\\@{evil}/": None,
        f"https:\\\\{evil}\\intro\\": None,
        f"https://{evil}\\@imqueue.org/": None,
        "https://imqueue.org/intro/\r\nHost: evil.test": None,
        "https://imqueue.org\t.evil.test/": None,
        "https://imqueue.org/%2e%2e/%2e%2e/etc/passwd": None,  # dot segments, encoded
        "https://imqueue.org/%2E./%2E./etc/passwd": None,
        "https://imqueue.org/.%2e/.%2e/etc/passwd": None,
        "https://imqueue.org/intro/%2e%2e/%2e%2e/etc/passwd": None,
        "https://imqueue.org/..%2f..%2fetc%2fpasswd": None,  # encoded slashes
        "https://imqueue.org/..%5c..%5cetc%5cpasswd": None,
        "https://imqueue.org/%252e%252e/%252e%252e/etc/passwd": None,  # double-encoded
        "/%2e%2e/%2e%2e/etc/passwd": None,  # a bare site path is held to the same lock
        "https://imqueue.org/cli/%2e%2e/intro/": "imqueue.org",  # resolves inside the site
        # accepted spellings of the two sites
        "https://IMQUEUE.ORG/intro/": "imqueue.org",
        "HTTPS://ImQueue.Com/pricing/": "imqueue.com",
        "https://imqueue.org:443/intro/": "imqueue.org",
        "http://imqueue.org:80/intro/": "imqueue.org",
        f"https://imqueue.org#@{evil}/": "imqueue.org",
        f"https://imqueue.org/intro/?next=http://{evil}/": "imqueue.org",
        "  https://imqueue.org/intro/  ": "imqueue.org",
        # redirects served by an allowed host
        "https://imqueue.org/redirect-to-evil/": "imqueue.org",
        "https://imqueue.org/redirect-to-com/": "imqueue.org",
        "https://imqueue.org/redirect-protocol-relative/": "imqueue.org",
        "https://imqueue.org/redirect-look-alike/": "imqueue.org",
        "https://imqueue.org/redirect-userinfo/": "imqueue.org",
        "https://imqueue.org/redirect-backslash/": "imqueue.org",
        "https://imqueue.org/redirect-same-host/": "imqueue.org",
        "https://imqueue.com/redirect-to-org/": "imqueue.com",
    }


@pytest.fixture(scope="module")
def local(origins: Origins, tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("host-lock")
    mirrors = {"imqueue.org": origins.org.url, "imqueue.com": origins.com.url}
    connection = stdio_connection(origin_args(mirrors), server_environment(home), home, "legacy")
    connection.call("search_docs", {"query": "expose"})  # the corpus is loaded before we count
    yield connection
    connection.close()


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def test_there_are_at_least_forty_crafted_urls(origins: Origins) -> None:
    urls = crafted(origins.evil.port)
    assert len(urls) >= 40 and sum(host is None for host in urls.values()) >= 40


def test_get_doc_contacts_only_the_canonical_hosts(local: McpConnection, origins: Origins) -> None:
    canonical = {"imqueue.org": origins.org, "imqueue.com": origins.com}
    for url, host in crafted(origins.evil.port).items():
        seen = {name: len(origin.paths) for name, origin in canonical.items()}
        result = local.call("get_doc", {"url": url})
        text = text_of(result)
        assert text.strip() and "Traceback" not in text, url
        asked = {name: origin.paths[seen[name] :] for name, origin in canonical.items()}
        if host is None:
            assert result.is_error, f"{url!r} was accepted: {text[:200]}"
            assert asked == {"imqueue.org": [], "imqueue.com": []}, f"{url!r} made a request: {asked}"
        else:
            other = "imqueue.com" if host == "imqueue.org" else "imqueue.org"
            assert asked[host] and not asked[other], f"{url!r}: {asked}"
            if not result.is_error:
                assert result.structured_content["url"].startswith(f"https://{host}/"), url
        assert origins.evil.connections == [], f"{url!r} reached the evil origin"
    assert origins.evil.connections == [] and origins.evil.paths == []


def test_a_redirect_off_the_host_is_refused_and_named(local: McpConnection, origins: Origins) -> None:
    for path in ("redirect-to-evil", "redirect-to-com", "redirect-userinfo", "redirect-protocol-relative"):
        result = local.call("get_doc", {"url": f"https://imqueue.org/{path}/"})
        assert result.is_error and "redirect" in text_of(result), path
    followed = local.call("get_doc", {"url": "https://imqueue.org/redirect-same-host/"})
    assert not followed.is_error and followed.structured_content["markdown"].strip()
    assert origins.evil.connections == []


ENCODED_TRAVERSALS = [
    "https://imqueue.org/%2e%2e/%2e%2e/etc/passwd",
    "https://imqueue.org/%2E./%2E./etc/passwd",
    "https://imqueue.org/.%2e/.%2E/etc/passwd",
    "https://imqueue.org/intro/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "https://imqueue.org/..%2f..%2fetc%2fpasswd",
    "https://imqueue.org/..%2F..%2Fetc%2Fpasswd",
    "https://imqueue.org/..%5c..%5cetc%5cpasswd",
    "https://imqueue.org/%252e%252e/%252e%252e/etc/passwd",
    "https://imqueue.org/intro/..%252f..%252fetc",
    "/%2e%2e/%2e%2e/etc/passwd",
    "%2e%2e/etc/passwd",
]


def test_an_encoded_traversal_never_reaches_an_origin(local: McpConnection, origins: Origins) -> None:
    before = len(origins.org.paths), len(origins.com.paths)
    for url in ENCODED_TRAVERSALS:
        result = local.call("get_doc", {"url": url})
        assert result.is_error and result.structured_content["error"]["code"] == "url_refused", url
        assert "root" in text_of(result) or "encoded" in text_of(result), url
    assert (len(origins.org.paths), len(origins.com.paths)) == before, origins.org.paths[before[0] :]
    assert origins.evil.connections == []


def test_encoded_dot_segments_inside_the_site_reach_the_origin_resolved(
    local: McpConnection, origins: Origins
) -> None:
    seen = len(origins.org.paths)
    for url in (
        "https://imqueue.org/cli/%2e%2e/intro/",
        "https://imqueue.org/cli/.%2E/intro/%2e/",
        "/cli/../intro/",
    ):
        result = local.call("get_doc", {"url": url})
        assert not result.is_error, text_of(result)
        assert result.structured_content["url"] == "https://imqueue.org/intro/"
    assert origins.org.paths[seen:] == ["/intro/index.md"] * 3

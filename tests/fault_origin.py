"""A loopback docs origin that serves ../shared/site with one fault switched on.

`FaultyOrigins()` starts one server per canonical host on 127.0.0.1 (free ports), serving the
real mirror. `origins.inject(Fault(kind, paths))` turns a fault on for those paths (None: every
path of both hosts); `origins.heal()` turns it off. The fault kinds are what a docs site can do
to a reader:

    down           the origin's listening sockets are closed: connection refused
    slow           no answer for far longer than the 5 s timeout
    trickle        200, then one byte every 0.3 s, for far longer than the timeout
    error500       HTTP 500
    missing        HTTP 404
    invalid_json   200 with a body that is not JSON
    other_version  the real feed with `"v": 2`
    truncated      a Content-Length for the whole file, half of it, then the connection closed
    huge           a 50 MB body with no Content-Length (the reader must stop counting, not trust)
    redirect_loop  302 to the same path, forever

and two that are not in KINDS: `delayed`, the real answer DELAY_SECONDS late (well within the
timeout), a slow but working site; and `bad_ranges`, a /search-sections.json that is valid JSON
of the right version, with one range per page that is no line range ([null, 3]).

Every request's path is logged in `requests` (host, path). Sleeping faults wake up when the
origin is closed, so a test never waits on its own origin.
"""

from __future__ import annotations

import http.server
import json
import threading
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

HOSTS = ("imqueue.org", "imqueue.com")
SITE = Path(__file__).resolve().parents[2] / "shared" / "site"
HUGE_BYTES = 50 * 2**20
STALL_SECONDS = 30.0  # far beyond the 5 s timeout: the reader must give up first
DELAY_SECONDS = 3.0  # a slow answer that still comes within the 5 s timeout

KINDS = (
    "down",
    "slow",
    "trickle",
    "error500",
    "missing",
    "invalid_json",
    "other_version",
    "truncated",
    "huge",
    "redirect_loop",
)


@dataclass(frozen=True)
class Fault:
    kind: str
    paths: frozenset[str] | None = None  # URL paths it applies to; None: all of them

    def applies_to(self, path: str) -> bool:
        return self.paths is None or path in self.paths


class _FaultyHandler(http.server.SimpleHTTPRequestHandler):
    origins: FaultyOrigins
    host_name: str

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        self.origins.requests.append((self.host_name, path))
        fault = self.origins.fault
        if fault is None or not fault.applies_to(path):
            super().do_GET()
            return
        try:
            getattr(self, f"_{fault.kind}")(path)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the reader gave up, which is what it should do

    def _file(self, path: str) -> bytes:
        file = SITE / self.host_name / path.lstrip("/")
        if file.is_dir():
            file = file / "index.md"
        return file.read_bytes()

    def _answer(self, status: int, body: bytes, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def _slow(self, path: str) -> None:
        self.origins.closing.wait(STALL_SECONDS)

    def _delayed(self, path: str) -> None:
        if not self.origins.closing.wait(DELAY_SECONDS):
            super().do_GET()

    def _trickle(self, path: str) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(10**6))
        self.end_headers()
        for _ in range(int(STALL_SECONDS / 0.3)):
            self.wfile.write(b" ")
            self.wfile.flush()
            if self.origins.closing.wait(0.3):
                return

    def _error500(self, path: str) -> None:
        self.send_error(500)

    def _missing(self, path: str) -> None:
        self.send_error(404)

    def _invalid_json(self, path: str) -> None:
        self._answer(200, b"<html><body>Maintenance</body></html>")

    def _other_version(self, path: str) -> None:
        if not path.endswith(".json"):
            super().do_GET()  # only feeds carry a version
            return
        feed: dict[str, Any] = json.loads(self._file(path))
        feed["v"] = 2
        self._answer(200, json.dumps(feed).encode())

    def _bad_ranges(self, path: str) -> None:
        feed: dict[str, Any] = json.loads(self._file(path))
        for anchors in feed["pages"].values():
            if anchors:
                anchors[sorted(anchors)[0]] = [None, 3]
        self._answer(200, json.dumps(feed).encode())

    def _truncated(self, path: str) -> None:
        body = self._file(path)
        self._answer(200, body[: len(body) // 2], length=len(body))
        self.close_connection = True

    def _huge(self, path: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        chunk = b" " * 2**20
        for _ in range(HUGE_BYTES // len(chunk)):
            self.wfile.write(chunk)
        self.close_connection = True

    def _redirect_loop(self, path: str) -> None:
        self.send_response(302)
        self.send_header("Location", path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _down(self, path: str) -> None:
        raise AssertionError("down is handled by closing the origin's sockets")

    def log_message(self, format: str, *args: Any) -> None:
        pass


class FaultyOrigins:
    """Both canonical hosts on loopback; `urls` maps host -> http://127.0.0.1:PORT."""

    def __init__(self) -> None:
        self.fault: Fault | None = None
        self.requests: list[tuple[str, str]] = []
        self.closing = threading.Event()
        self.servers: dict[str, http.server.ThreadingHTTPServer] = {}
        self.urls: dict[str, str] = {}
        for host in HOSTS:
            self._listen(host, 0)

    def _listen(self, host: str, port: int) -> None:
        handler = type("Handler", (_FaultyHandler,), {"origins": self, "host_name": host})
        server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", port), partial(handler, directory=str(SITE / host))
        )
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        self.servers[host] = server
        self.urls[host] = f"http://127.0.0.1:{server.server_address[1]}"

    def inject(self, fault: Fault) -> None:
        if fault.kind == "down":
            self._stop_listening()
        self.fault = fault

    def heal(self) -> None:
        """No fault any more; after `down`, listen again on the same ports."""
        self.fault = None
        for host, url in self.urls.items():
            if host not in self.servers:
                self._listen(host, int(url.rsplit(":", 1)[1]))

    def origin_args(self) -> list[str]:
        return [arg for host, url in self.urls.items() for arg in ("--origin", f"{host}={url}")]

    def _stop_listening(self) -> None:
        for server in self.servers.values():
            server.shutdown()
            server.server_close()
        self.servers.clear()

    def close(self) -> None:
        self.closing.set()
        self._stop_listening()

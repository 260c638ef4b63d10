"""Where feeds come from: the live sites, per-host origin overrides, or a mirror directory.

Every source answers one question, `read(host, path) -> bytes`, for the two canonical hosts
only. Failures raise `FeedUnavailable` carrying the URL (or file) and the fix, so the CLI can
print one line and exit non-zero; `NotFound`, its subclass, when the file is simply not there
(HTTP 404, or no such file in a mirror), which --pages counts instead of failing on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .sites import HOSTS, LIVE_ORIGINS, TIMEOUT_SECONDS, site_path_problem, user_agent
from .sites import MAX_BODY_BYTES as MAX_FEED_BYTES

if TYPE_CHECKING:  # imported where a source is made: a server on its snapshot alone never loads httpx
    import httpx


class BuildError(Exception):
    """A build failed; the message names what and what to do next."""


class FeedUnavailable(BuildError):
    pass


class NotFound(FeedUnavailable):
    """The origin answered 404, or the mirror has no such file."""


def held_to_origin(origin: str, host: str, path: str) -> str:
    """`origin + path`, parsed and checked before anything is read: `path` is a canonical path on
    `host` (sites.site_path_problem) and the URL names the origin's own scheme, host and port, with
    `path` as the whole rest. BuildError otherwise: such a path came from feed data, and joining it
    as a string could name another host ("@other.host/x/") or climb out of a folder ("/../x/")."""
    url = origin + path
    problem = "not one of the sites" if host not in HOSTS else site_path_problem(path)
    if problem is None:
        base, parts = urlsplit(origin), urlsplit(url)
        if (parts.scheme, parts.netloc, parts.path) != (base.scheme, base.netloc, base.path + path):
            problem = "it would leave the origin"
    if problem is not None:
        raise BuildError(f"https://{host}{path[:120]} was not read: {problem}; the feed naming it is suspect")
    return url


@dataclass
class HttpSource:
    """Reads `origin + path` for each host; origins default to the live sites."""

    origins: dict[str, str] = field(default_factory=lambda: dict(LIVE_ORIGINS))
    timeout: float = TIMEOUT_SECONDS
    transport: httpx.BaseTransport | None = None

    def __post_init__(self) -> None:
        unknown = set(self.origins) - set(HOSTS)
        if unknown:
            raise BuildError(f"unknown host {sorted(unknown)[0]!r} in origins: only {', '.join(HOSTS)} exist")
        import httpx

        self.origins = {**LIVE_ORIGINS, **{h: u.rstrip("/") for h, u in self.origins.items()}}
        self._client = httpx.Client(
            timeout=self.timeout,
            headers={"User-Agent": user_agent()},
            follow_redirects=False,  # a redirect could lead to another host: never follow it
            transport=self.transport,
        )

    def describe(self) -> dict[str, str]:
        return dict(self.origins)

    def read(self, host: str, path: str) -> bytes:
        import httpx

        url = held_to_origin(self.origins[host], host, path)
        try:
            with self._client.stream("GET", url) as response:
                if response.status_code != 200:
                    raise (NotFound if response.status_code == 404 else FeedUnavailable)(
                        f"{url}: HTTP {response.status_code}; the origin does not serve this feed — point "
                        "--from at a site that does"
                    )
                return self._body(url, response)
        except httpx.TimeoutException:
            raise self._too_slow(url) from None
        except httpx.RemoteProtocolError:
            raise FeedUnavailable(
                f"{url}: the connection broke off before the whole answer came; try again, or build "
                "from a mirror with --from DIR"
            ) from None
        except httpx.HTTPError as error:
            raise FeedUnavailable(
                f"{url}: unreachable ({type(error).__name__}); check the origin is up, or build from a "
                "mirror with --from DIR"
            ) from None

    def _body(self, url: str, response: httpx.Response) -> bytes:
        """The body, read within one timeout in all and up to MAX_FEED_BYTES: a feed that
        trickles in, or never ends, is refused rather than waited for."""
        deadline = time.monotonic() + self.timeout
        declared = response.headers.get("content-length", "")
        too_big = FeedUnavailable(
            f"{url}: the body is over {MAX_FEED_BYTES // 2**20} MB, far beyond any real feed; check "
            "that the origin serves the site's feeds"
        )
        if declared.isdigit() and int(declared) > MAX_FEED_BYTES:
            raise too_big
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > MAX_FEED_BYTES:
                raise too_big
            if time.monotonic() > deadline:
                raise self._too_slow(url)
        return bytes(body)

    def _too_slow(self, url: str) -> FeedUnavailable:
        return FeedUnavailable(
            f"{url}: no answer within {self.timeout:g} s; check the network or build from a mirror "
            "with --from DIR"
        )

    def close(self) -> None:
        self._client.close()


@dataclass
class MirrorSource:
    """A directory laid out by URL: DIR/imqueue.org/search-index.json, DIR/imqueue.com/..."""

    root: Path

    def __post_init__(self) -> None:
        self.root = Path(self.root).absolute()  # --from ../shared/site: origins are file:// URIs
        missing = [h for h in HOSTS if not (self.root / h).is_dir()]
        if missing:
            raise FeedUnavailable(
                f"{self.root}: not a site mirror (no {missing[0]}/ folder inside); pass the folder that "
                "holds imqueue.org/ and imqueue.com/, e.g. --from ../shared/site"
            )

    def describe(self) -> dict[str, str]:
        return {h: (self.root / h).resolve().as_uri() for h in HOSTS}

    def read(self, host: str, path: str) -> bytes:
        held_to_origin(self.root.as_uri(), host, path)
        file = self.root / host / path.lstrip("/")
        try:
            return file.read_bytes()
        except OSError as error:
            raise (NotFound if isinstance(error, FileNotFoundError) else FeedUnavailable)(
                f"{file}: cannot read ({error.strerror}); the mirror is incomplete — refresh it from the site"
            ) from None

    def close(self) -> None:
        pass


Source = HttpSource | MirrorSource


def source_from(spec: str | None, origins: dict[str, str] | None = None) -> Source:
    """`--from` value -> a source: None = live sites, a URL = a base serving HOST/ folders, else a dir."""
    if origins:
        return HttpSource(origins=origins)
    if spec is None:
        return HttpSource()
    if spec.startswith(("http://", "https://")):
        base = spec.rstrip("/")
        return HttpSource(origins={h: f"{base}/{h}" for h in HOSTS})
    return MirrorSource(Path(spec))

"""Fetching from the two @imqueue sites, and the host lock that keeps it to them.

Two steps, kept apart so each can be read on its own:

    parse_doc_url(text) -> DocUrl     the host lock: only https://imqueue.org/... and
                                      https://imqueue.com/..., refused with a reason otherwise
    Fetcher.get(host, path)           one GET through the configured origin for that host

URLs shown to agents stay canonical (https://imqueue.org/...) whichever origin served
them. A redirect is followed only while it stays on the same origin (or names the same
canonical host); anything else is refused, never followed.

Exception tree:

    FetchError          the site could not be read; the message says why and what to do
    ├── OfflineError    the server runs with --offline, so nothing was fetched
    ├── Unreachable     no answer: a timeout or a transport failure (not an HTTP status)
    DocUrlError         (a ValueError) the URL is not on imqueue.org / imqueue.com
    └── MalformedDocUrl the text is not a URL at all (unparseable, or longer than any page's)
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from imqueue_mcp.docsource.sites import HOSTS as CANONICAL_HOSTS
from imqueue_mcp.docsource.sites import MAX_BODY_BYTES, TIMEOUT_SECONDS, user_agent
from imqueue_mcp.server.docs.site_paths import PathEscapes, is_safe_to_send, normalise_path, site_path_url

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS = 3
# The longest URL get_doc reads: the sites' longest page URL is under 200 characters, and
# httpx itself refuses URLs over 64 kB with an error of its own (not an HTTPError).
MAX_URL_CHARS = 2048
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class DocUrlError(ValueError):
    """The URL is outside the host lock; the message names it and the accepted form."""


class MalformedDocUrl(DocUrlError):
    """The text cannot be read as a URL at all: a bad bracketed host, a bad port, too long."""


class FetchError(Exception):
    """A site could not be read; the message names the URL and the next step."""


class OfflineError(FetchError):
    pass


class Unreachable(FetchError):
    pass


@dataclass(frozen=True)
class DocUrl:
    host: str  # one of CANONICAL_HOSTS
    path: str  # absolute, normalised, no query
    fragment: str = ""

    @property
    def canonical(self) -> str:
        return f"https://{self.host}{self.path}" + (f"#{self.fragment}" if self.fragment else "")


def parse_doc_url(text: str) -> DocUrl:
    """Apply the host lock to a URL an agent passed in.

    Accepted: https://imqueue.org/... and https://imqueue.com/... exactly (port 443 at most).
    http:// on those hosts is accepted and read as https (only the canonical name is used;
    nothing is ever fetched over plain http from it). A bare "imqueue.org/path" gets https://,
    and a plain site path ("/get-started", "get-started/") is read on https://imqueue.org.
    Dot segments are resolved, encoded ones too (site_paths.normalise_path).
    Refused: any other host, subdomains and look-alikes, userinfo, other schemes, paths that
    climb above the site root or hide an encoded traversal.
    """
    raw = text.strip()
    if len(raw) > MAX_URL_CHARS:
        raise MalformedDocUrl(
            f"The URL is {len(raw):,} characters long; get_doc takes at most {MAX_URL_CHARS:,}. Pass a "
            "page URL as search_docs returns it (https://imqueue.org/...)."
        )
    if not raw or any(ord(char) < 0x21 or char in "\\\x7f" for char in raw):
        raise DocUrlError(
            f"{text!r} is not a URL; pass an https://imqueue.org/... or https://imqueue.com/... URL "
            "(search_docs returns them)"
        )
    raw = site_path_url(raw) or raw
    if (
        raw.lower().startswith(tuple(f"{host}/" for host in CANONICAL_HOSTS))
        or raw.lower() in CANONICAL_HOSTS
    ):
        raw = "https://" + raw
    try:
        parts = urlsplit(raw)
    except ValueError:  # "[imqueue.org]", "[": a bracketed host that is no IPv6 address
        raise MalformedDocUrl(
            f"{text[:200]!r} is not a well-formed URL (its host cannot be read); pass an "
            "https://imqueue.org/... or https://imqueue.com/... URL as search_docs returns it"
        ) from None
    refusal = (
        f"{text!r} is not on imqueue.org or imqueue.com; get_doc reads only those two sites "
        "(https://imqueue.org/... or https://imqueue.com/..., or a path on imqueue.org such as "
        "/get-started/). Use search_docs to find a page."
    )
    if parts.scheme.lower() not in ("https", "http") or "@" in parts.netloc:
        raise DocUrlError(refusal)
    try:
        port = parts.port
    except ValueError:
        raise DocUrlError(refusal) from None
    host = (parts.hostname or "").lower()
    if host not in CANONICAL_HOSTS or port not in (None, 443, 80):
        raise DocUrlError(refusal)
    try:
        normalised = normalise_path(parts.path or "/")
    except PathEscapes as error:
        raise DocUrlError(f"{text!r} was refused: {error}") from None
    return DocUrl(host=host, path=normalised, fragment=parts.fragment)


@dataclass(frozen=True)
class Fetched:
    url: str  # canonical
    status: int
    body: bytes
    content_type: str


class Fetcher:
    """GETs canonical (host, path) pairs through the configured origins.

    httpx is imported on first use, so a server that never fetches never pays for it.
    """

    def __init__(self, origins: dict[str, str], *, offline: bool = False, timeout: float = TIMEOUT_SECONDS):
        self.origins = {host: url.rstrip("/") for host, url in origins.items()}
        self.offline = offline
        self.timeout = timeout
        self._client: httpx.AsyncClient | None = None

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(
                timeout=self.timeout,
                follow_redirects=False,
                headers={"User-Agent": user_agent()},
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def get(self, host: str, path: str) -> Fetched:
        """One GET of https://host/path through its origin. Non-2xx statuses are returned, not raised."""
        import httpx

        canonical = f"https://{host}{path}"
        if not is_safe_to_send(path):
            raise FetchError(f"{canonical}: the path could be read as a traversal; it was not sent")
        if self.offline:
            raise OfflineError(
                f"{canonical} was not fetched: the server runs with --offline (IMQUEUE_MCP_OFFLINE=1). "
                "Restart it without --offline to read pages."
            )
        target = self.origins[host] + path
        try:
            # One budget for the whole GET, redirects and body included: a site that trickles
            # bytes, or redirects in a loop, costs one timeout, never more.
            async with asyncio.timeout(self.timeout):
                for _ in range(MAX_REDIRECTS + 1):
                    status, body, headers = await self._read(target, canonical)
                    if status in REDIRECT_STATUSES and "location" in headers:
                        target = self._redirect_target(host, target, headers["location"], canonical)
                        continue
                    return Fetched(canonical, status, body, headers.get("content-type", ""))
        except (TimeoutError, httpx.TimeoutException):
            raise Unreachable(f"{canonical}: no answer within {self.timeout:g} s; try again later") from None
        except httpx.InvalidURL:  # not an HTTPError: a URL httpx will not send (too long, say)
            raise FetchError(f"{canonical[:200]}: not a URL that can be requested; it was not sent") from None
        except httpx.HTTPError as error:
            raise Unreachable(
                f"{canonical}: unreachable ({type(error).__name__}); check the network and try again"
            ) from None
        raise FetchError(f"{canonical}: more than {MAX_REDIRECTS} redirects; not followed further")

    async def _read(self, target: str, canonical: str) -> tuple[int, bytes, httpx.Headers]:
        """One GET, its body read up to MAX_BODY_BYTES: a longer one is refused unread."""
        async with self._http().stream("GET", target) as response:
            declared = response.headers.get("content-length", "")
            too_big = FetchError(f"{canonical}: the body is over {MAX_BODY_BYTES} bytes; refusing to read it")
            if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                raise too_big
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    raise too_big
            return response.status_code, bytes(body), response.headers

    def _redirect_target(self, host: str, current: str, location: str, canonical: str) -> str:
        """Where to go next, if the redirect stays on this host; refuse otherwise."""
        origin = self.origins[host]
        resolved = urljoin(current, location)
        here, there = urlsplit(origin), urlsplit(resolved)
        if not is_safe_to_send(there.path or "/"):
            raise FetchError(
                f"{canonical} redirects to {resolved}, a path that could be read as a traversal; "
                "the redirect was not followed"
            )
        if (there.scheme, there.netloc) == (here.scheme, here.netloc):
            return resolved
        if there.scheme == "https" and there.netloc.lower() == host:
            return origin + (there.path or "/")
        raise FetchError(
            f"{canonical} redirects to {resolved}, which is not {host}; the redirect was not followed"
        )

"""The two @imqueue sites, once: hosts, origins, the user agent, timeouts and size limits.

The builder and the server both read the sites; every fact they share about them lives here
and is imported by both (the server may import build_index, never the reverse).

    HOSTS, LIVE_ORIGINS        the canonical hosts and where they are served live
    parse_origin("h=URL")      one origin override, checked; OriginError names the fix
    site_path_problem(path)    None for a canonical path on a site, else why not: the rule every
                               path read from feed data is held to before it is fetched or indexed
    user_agent()               "imqueue-mcp/<version>", sent on every request
    package_version()          the installed distribution's version (or the source tree's)
"""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlsplit

HOSTS = ("imqueue.org", "imqueue.com")
LIVE_ORIGINS = {host: f"https://{host}" for host in HOSTS}

TIMEOUT_SECONDS = 5.0  # per request, the whole GET (a trickling site is cut off too)
MAX_BODY_BYTES = 16 * 2**20  # the largest real feed is about 1 MB: a bound, not a feature

ORIGIN_EXAMPLE = "imqueue.org=http://127.0.0.1:8101"


MAX_PATH_CHARS = 2048  # the longest page path on either site is under 200 characters
# "/" then segments of unreserved characters and well-formed %XX escapes, an optional #fragment.
_SITE_PATH = re.compile(r"/(?:[A-Za-z0-9\-._~/]|%[0-9A-Fa-f]{2})*(?:#(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})*)?")
_DOT_SEGMENTS = frozenset({".", ".."})


def site_path_problem(path: str) -> str | None:
    """None when `path` is a canonical path on a site, else what is wrong with it, in words.

    Feed data names pages by path and the builder joins a path to an origin to fetch it, so a
    path that is not exactly a path ("@other.host/x/" makes the origin's host userinfo,
    "//other.host/x/" a second host, "/../x/" climbs out of a mirror folder) must never be
    joined. Canonical: one leading "/", no empty segment, no dot segment and no encoded
    separator (decoded once or twice), only unreserved characters and %XX escapes, and an
    optional #fragment of the same."""
    if len(path) > MAX_PATH_CHARS:
        return f"longer than {MAX_PATH_CHARS} characters"
    if not _SITE_PATH.fullmatch(path):
        return "not a path on the site (one leading '/', then letters, digits, -._~ and %XX escapes)"
    segments = path.split("#", 1)[0][1:].split("/")
    if "" in segments[:-1]:
        return "an empty segment ('//')"
    for segment in segments:
        once = unquote(segment)
        for decoded in (once, unquote(once)):
            if decoded in _DOT_SEGMENTS or "/" in decoded or "\\" in decoded:
                return "a dot segment or an encoded separator"
    return None


class OriginError(ValueError):
    """An origin override is malformed; the message names it and the accepted form."""


def parse_origin(text: str) -> tuple[str, str]:
    """'imqueue.org=http://127.0.0.1:8101' -> ('imqueue.org', 'http://127.0.0.1:8101')."""
    host, separator, url = text.strip().partition("=")
    host, url = host.strip().lower(), url.strip().rstrip("/")
    parts = urlsplit(url) if separator else None
    if (
        host not in HOSTS
        or parts is None
        or parts.scheme not in ("http", "https")
        or not parts.netloc
        or parts.query
        or parts.fragment
    ):
        raise OriginError(
            f"origin {text!r} is not HOST=URL with HOST one of {', '.join(HOSTS)} and an "
            f"http(s) URL, e.g. {ORIGIN_EXAMPLE}"
        )
    return host, url


@cache
def package_version() -> str:
    """The installed distribution's version, else the source tree's pyproject version."""
    try:
        return metadata.version("imqueue-mcp")
    except metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
        try:
            return str(tomllib.loads(pyproject.read_text("utf-8"))["project"]["version"])
        except (OSError, KeyError, ValueError):
            return "0+unknown"


def user_agent() -> str:
    return f"imqueue-mcp/{package_version()}"

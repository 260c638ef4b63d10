"""The two @imqueue sites, once: hosts, origins, the user agent, timeouts and size limits.

The builder and the server both read the sites; every fact they share about them lives here
and is imported by both (the server may import build_index, never the reverse).

    HOSTS, LIVE_ORIGINS        the canonical hosts and where they are served live
    parse_origin("h=URL")      one origin override, checked; OriginError names the fix
    user_agent()               "imqueue-mcp/<version>", sent on every request
    package_version()          the installed distribution's version (or the source tree's)
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

HOSTS = ("imqueue.org", "imqueue.com")
LIVE_ORIGINS = {host: f"https://{host}" for host in HOSTS}

TIMEOUT_SECONDS = 5.0  # per request, the whole GET (a trickling site is cut off too)
MAX_BODY_BYTES = 16 * 2**20  # the largest real feed is about 1 MB: a bound, not a feature

ORIGIN_EXAMPLE = "imqueue.org=http://127.0.0.1:8101"


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

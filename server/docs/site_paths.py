"""Paths on the two sites: what get_doc accepts as a path, and the one form it ever sends.

    site_path_url(text)     a plain site path an agent passed ("/get-started", "get-started/",
                            "/intro/#why") -> "https://imqueue.org/...", else None
    normalise_path(path)    dot segments resolved as WHATWG URL resolves them (a percent-encoded
                            dot counts as a dot: "%2e%2e", "%2E.", ".%2e" are "..") and encoded
                            slashes ("%2F", "%5C") read as the separators a decoding origin would
                            see; PathEscapes when a ".." climbs above the site root. The result
                            holds no dot segment and no encoded dot or slash.
    is_safe_to_send(path)   the check Fetcher.get makes before any request: nothing an origin
                            could decode into a traversal

Why encoded slashes are separators here although WHATWG keeps "%2F" inside a segment: the
mirror behind an origin is often a static file server that decodes the path before it maps
it onto files, so "..%2f..%2fetc" is a traversal to it. Reading them as separators makes
the lock judge the path that origin would judge; no page on either site has a slash in a
segment name.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

# Hosts get_doc resolves a bare path against (14 §6): the framework's site.
DEFAULT_SITE = "https://imqueue.org"

_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")
_BAD_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ENCODED_SEPARATOR = re.compile(r"%(2[Ff]|5[Cc])")
_DOUBLE_ENCODED = re.compile(r"%25(2[EeFf]|5[Cc])")
_SINGLE_DOT = frozenset({".", "%2e"})
_DOUBLE_DOT = frozenset({"..", ".%2e", "%2e.", "%2e%2e"})

# A plain path: unreserved characters, "/", percent escapes, and an optional #fragment.
_PLAIN_PATH = re.compile(r"^/?(?!/)[A-Za-z0-9\-._~%/]*(#[A-Za-z0-9\-._~%]*)?$")
_FILE_SUFFIXES = (".md", ".txt", ".json", ".xml")


class PathEscapes(ValueError):
    """The path is not a path on the site: it climbs above the root, or hides an encoded
    traversal. The message names the path and the accepted form."""


def site_path_url(text: str) -> str | None:
    """`/get-started`, `get-started/`, `/intro/#why` -> the imqueue.org URL; None for anything
    else. A relative path whose first segment looks like a host name ("evil.test/x") is not a
    plain path; "//host/..." (protocol-relative) is not one either."""
    if not _PLAIN_PATH.match(text):
        return None
    path = text.split("#", 1)[0]
    if not text.startswith("/"):
        first, _, rest = path.partition("/")
        if not first or ("." in first and (rest or not first.endswith(_FILE_SUFFIXES))):
            return None
    return f"{DEFAULT_SITE}/{text.lstrip('/')}"


def normalise_path(path: str) -> str:
    """The path with its dot segments resolved and unreserved escapes decoded (see the module
    docstring); PathEscapes for what escapes the root or hides an encoded traversal."""
    if _BAD_PERCENT.search(path):
        raise PathEscapes(f"{path!r} has a '%' that starts no percent escape; pass the page's own URL")
    if _DOUBLE_ENCODED.search(path):
        raise PathEscapes(f"{path!r} has a double-encoded dot or slash; pass the page's own URL")
    segments = _ENCODED_SEPARATOR.sub("/", path).split("/")
    resolved: list[str] = []
    trailing = path.endswith("/")
    for index, segment in enumerate(segments):
        lowered = segment.lower()
        last = index == len(segments) - 1
        if lowered in _DOUBLE_DOT:
            if not resolved:
                raise PathEscapes(f"{path!r} climbs above the site root with '..'; pass the page's own URL")
            resolved.pop()
            trailing = trailing or last
        elif lowered in _SINGLE_DOT:
            trailing = trailing or last
        elif segment:
            resolved.append(_decode_unreserved(segment))
    normalised = "/" + "/".join(resolved)
    if resolved and trailing:
        normalised += "/"
    return normalised


def is_safe_to_send(path: str) -> bool:
    """True when no segment of `path`, decoded once or twice, is a dot segment or holds a slash:
    what an origin receives can never be read as a traversal, however it decodes."""
    if not path.startswith("/"):
        return False
    for segment in path.split("/"):
        for form in (unquote(segment), unquote(unquote(segment))):
            if form in (".", "..") or "/" in form or "\\" in form:
                return False
    return True


def _decode_unreserved(segment: str) -> str:
    """RFC 3986 normalisation: %41 -> A; other escapes kept, in upper case."""

    def one(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else "%" + match.group(1).upper()

    return _PERCENT.sub(one, segment)

"""The Host and Origin headers of the hosted endpoint, read strictly before any allow-list.

The SDK's check matches an allowed "localhost:*" by prefix, so "localhost:80@evil.test" and
an Origin of "http://localhost:evil" passed it. No browser sends such values (so this was
never a DNS-rebinding hole), but a header the server cannot read exactly is refused rather
than guessed at: here each header must be, in full,

    Host     HOST[:PORT]                 RFC 9110 §7.2
    Origin   SCHEME://HOST[:PORT]        RFC 6454 §7, SCHEME http or https

with HOST a DNS name, an IPv4 address or a bracketed IPv6 address and PORT 1-5 digits up to
65535. Nothing else: no userinfo, path, empty port, spaces or second value. What passes here
then goes to the SDK's allow-list (http.py's Guard), whose prefix match is now exact, since
what follows an allowed "name:" can only be digits.

    malformed_header(headers) -> None, or (status, message) for the first unreadable one
"""

from __future__ import annotations

import re

_NAME = (
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?"
)
_IPV6 = r"\[[0-9A-Fa-f:.]{2,45}\]"
_PORT = r"[0-9]{1,5}"
_HOST = re.compile(rf"(?:{_NAME}|{_IPV6})(?::(?P<port>{_PORT}))?")
_ORIGIN = re.compile(rf"(?:https?)://(?:{_NAME}|{_IPV6})(?::(?P<port>{_PORT}))?")


def valid_host(value: str) -> bool:
    return _full_match_with_port(_HOST, value)


def valid_origin(value: str) -> bool:
    return _full_match_with_port(_ORIGIN, value)


def _full_match_with_port(pattern: re.Pattern[str], value: str) -> bool:
    match = pattern.fullmatch(value)
    return match is not None and (match["port"] is None or 0 < int(match["port"]) <= 65535)


def malformed_header(headers: list[tuple[bytes, bytes]]) -> tuple[int, str] | None:
    """421 for a Host header that is missing, repeated or not HOST[:PORT]; 403 for an Origin
    that is repeated or not SCHEME://HOST[:PORT] (an empty one counts as absent, as the SDK
    reads it); None when both read exactly."""
    hosts = [value for name, value in headers if name == b"host"]
    origins = [value for name, value in headers if name == b"origin"]
    if len(hosts) != 1 or not valid_host(hosts[0].decode("latin-1")):
        return 421, (
            "Misdirected Request: the Host header must be one HOST[:PORT] value (a port is digits "
            "only); send the host name this server is reached by."
        )
    if len(origins) > 1 or (origins and origins[0] and not valid_origin(origins[0].decode("latin-1"))):
        return 403, (
            "Forbidden: the Origin header must be one SCHEME://HOST[:PORT] value (a port is digits "
            "only); a browser sends it that way."
        )
    return None

"""Server configuration: one frozen value built from flags and environment variables.

Every setting has a flag and an environment variable, read the same way by both
transports, so a hosted worker process (which only sees the environment) and the
command line agree:

    --snapshot PATH          IMQUEUE_MCP_SNAPSHOT          snapshot file (default: user cache)
    --offline                IMQUEUE_MCP_OFFLINE=1         never contact the network
    --origin HOST=URL        IMQUEUE_MCP_ORIGINS           fetch HOST's files from URL instead
    --allow-host H           IMQUEUE_MCP_ALLOWED_HOSTS     extra Host values (hosted mode)
    --allow-origin O         IMQUEUE_MCP_ALLOWED_ORIGINS   extra browser Origins (hosted mode)
    (environment only)       IMQUEUE_MCP_REFRESH_SECONDS   how often the live corpus is rebuilt
    (environment only)       IMQUEUE_MCP_SNAPSHOT_DEADLINE_SECONDS   the longest a followed snapshot's
                                                           download may take (--snapshot-url)
                                                           (default 3600; a mirror that changes
                                                           often, or a test, sets it lower)
    --snapshot-url URL       IMQUEUE_MCP_SNAPSHOT_URL      follow a builder's snapshot over HTTP(S)
    --snapshot-poll-seconds  IMQUEUE_MCP_SNAPSHOT_POLL_SECONDS  how often a followed snapshot is
                                                           checked for a new generation (0: only
                                                           on SIGHUP)

Hosted mode only (docs/hosted.md says what each protects against):

    --drain-seconds S        IMQUEUE_MCP_DRAIN_SECONDS     after SIGTERM, keep serving S seconds
    --header-timeout S       IMQUEUE_MCP_HEADER_TIMEOUT    request line + headers must arrive within S
    --body-timeout S         IMQUEUE_MCP_BODY_TIMEOUT      a request body must arrive, a response be read in S
    --idle-timeout S         IMQUEUE_MCP_IDLE_TIMEOUT      an idle keep-alive connection is closed after S
    --max-connections N      IMQUEUE_MCP_MAX_CONNECTIONS   open connections per worker process
    --keep-alive-requests N  IMQUEUE_MCP_KEEP_ALIVE_REQUESTS  requests per connection before it closes

Flags win over the environment. Anything malformed raises `ConfigError`, whose message
is the single line `__main__` prints before exiting with status 2.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from imqueue_mcp.docsource import sites
from imqueue_mcp.docsource.sites import LIVE_ORIGINS

ENV_SNAPSHOT = "IMQUEUE_MCP_SNAPSHOT"
ENV_OFFLINE = "IMQUEUE_MCP_OFFLINE"
ENV_ORIGINS = "IMQUEUE_MCP_ORIGINS"
ENV_ALLOWED_HOSTS = "IMQUEUE_MCP_ALLOWED_HOSTS"
ENV_ALLOWED_ORIGINS = "IMQUEUE_MCP_ALLOWED_ORIGINS"
ENV_REFRESH_SECONDS = "IMQUEUE_MCP_REFRESH_SECONDS"
ENV_SNAPSHOT_DEADLINE = "IMQUEUE_MCP_SNAPSHOT_DEADLINE_SECONDS"
DEFAULT_SNAPSHOT_DEADLINE_SECONDS = 60.0
ENV_LOG_LEVEL = "IMQUEUE_MCP_LOG_LEVEL"
ENV_SNAPSHOT_URL = "IMQUEUE_MCP_SNAPSHOT_URL"
ENV_SNAPSHOT_POLL_SECONDS = "IMQUEUE_MCP_SNAPSHOT_POLL_SECONDS"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")

DEFAULT_REFRESH_SECONDS = 3600.0
MIN_REFRESH_SECONDS = 1.0  # a rebuild costs a second or two of CPU: never more often than this

# Host headers and browser Origins the hosted endpoint accepts out of the box: the loopback
# names (a local --http run) and the project's own domains. Anything else is added with
# --allow-host / --allow-origin; protection against DNS rebinding is never switched off.
DEFAULT_ALLOWED_HOSTS = (
    "127.0.0.1",
    "127.0.0.1:*",
    "localhost",
    "localhost:*",
    "[::1]",
    "[::1]:*",
    "mcp.imqueue.org",
)
DEFAULT_ALLOWED_ORIGINS = (
    "http://127.0.0.1",
    "http://127.0.0.1:*",
    "http://localhost",
    "http://localhost:*",
    "http://[::1]:*",
    "https://imqueue.org",
    "https://imqueue.com",
    "https://mcp.imqueue.org",
)

DEFAULT_SNAPSHOT_POLL_SECONDS = 30.0  # a stat of a local file, or a conditional GET of the URL


@dataclass(frozen=True)
class Setting:
    """One numeric hosted-mode setting: its flag, environment variable, default and lower bound."""

    name: str  # the Config field
    flag: str
    env: str
    default: float
    minimum: float
    integer: bool = False
    help: str = ""


HOSTED_SETTINGS = (
    Setting(
        "drain_seconds",
        "--drain-seconds",
        "IMQUEUE_MCP_DRAIN_SECONDS",
        10.0,
        0.0,
        help="after SIGTERM: /readyz answers 503 at once and calls are still served this long, so a "
        "load balancer can take the instance out; then in-flight calls finish and the process exits 0",
    ),
    Setting(
        "header_timeout",
        "--header-timeout",
        "IMQUEUE_MCP_HEADER_TIMEOUT",
        10.0,
        0.1,
        help="a request's line and headers must arrive within this many seconds of its first byte "
        "(or of the connection opening), else the connection is closed",
    ),
    Setting(
        "body_timeout",
        "--body-timeout",
        "IMQUEUE_MCP_BODY_TIMEOUT",
        30.0,
        0.1,
        help="a request's body must arrive within this many seconds of its headers, and a response "
        "the client reads none of for this long is aborted",
    ),
    Setting(
        "idle_timeout",
        "--idle-timeout",
        "IMQUEUE_MCP_IDLE_TIMEOUT",
        75.0,
        0.1,
        help="an idle keep-alive connection is closed after this many seconds (longer than clients keep "
        "theirs, so the server never closes one as a client reuses it)",
    ),
    Setting(
        "max_connections",
        "--max-connections",
        "IMQUEUE_MCP_MAX_CONNECTIONS",
        1000,
        1,
        integer=True,
        help="open connections per worker process; past it the longest-idle connection is closed to "
        "make room, or the new one if none is idle",
    ),
    Setting(
        "keep_alive_requests",
        "--keep-alive-requests",
        "IMQUEUE_MCP_KEEP_ALIVE_REQUESTS",
        1000,
        1,
        integer=True,
        help="requests served on one connection before the server closes it (Connection: close)",
    ),
)

HOSTED_DEFAULTS = {setting.name: setting.default for setting in HOSTED_SETTINGS}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"", "0", "false", "no", "off"}


class ConfigError(ValueError):
    """Bad configuration; the message is one line naming the value and the accepted form."""


@dataclass(frozen=True)
class Config:
    snapshot: Path | None = None  # None: build_index's default path, resolved when first needed
    offline: bool = False
    origins: Mapping[str, str] = field(default_factory=lambda: dict(LIVE_ORIGINS))
    allowed_hosts: tuple[str, ...] = DEFAULT_ALLOWED_HOSTS
    allowed_origins: tuple[str, ...] = DEFAULT_ALLOWED_ORIGINS
    refresh_seconds: float = DEFAULT_REFRESH_SECONDS
    snapshot_deadline_seconds: float = DEFAULT_SNAPSHOT_DEADLINE_SECONDS  # a followed snapshot's download
    snapshot_url: str | None = None  # follow a builder's snapshot at this HTTP(S) URL
    snapshot_poll_seconds: float = DEFAULT_SNAPSHOT_POLL_SECONDS
    drain_seconds: float = HOSTED_DEFAULTS["drain_seconds"]
    header_timeout: float = HOSTED_DEFAULTS["header_timeout"]
    body_timeout: float = HOSTED_DEFAULTS["body_timeout"]
    idle_timeout: float = HOSTED_DEFAULTS["idle_timeout"]
    max_connections: int = int(HOSTED_DEFAULTS["max_connections"])
    keep_alive_requests: int = int(HOSTED_DEFAULTS["keep_alive_requests"])

    @property
    def follows_snapshot(self) -> bool:
        """The corpus is the builder's snapshot only (no live rebuild here): with --snapshot-url,
        or offline. A new generation of it is picked up on SIGHUP and every snapshot_poll_seconds."""
        return self.snapshot_url is not None or self.offline

    @property
    def origin_overrides(self) -> dict[str, str]:
        """Only the origins that differ from the live sites (what build_index needs to know)."""
        return {host: url for host, url in self.origins.items() if LIVE_ORIGINS[host] != url}

    def to_environment(self) -> dict[str, str]:
        """The same configuration as environment variables, for hosted worker processes."""
        env = {
            ENV_OFFLINE: "1" if self.offline else "0",
            ENV_ORIGINS: ",".join(f"{host}={url}" for host, url in self.origin_overrides.items()),
            ENV_ALLOWED_HOSTS: ",".join(self.allowed_hosts),
            ENV_ALLOWED_ORIGINS: ",".join(self.allowed_origins),
            ENV_REFRESH_SECONDS: repr(self.refresh_seconds),
            ENV_SNAPSHOT_DEADLINE: repr(self.snapshot_deadline_seconds),
            ENV_SNAPSHOT_POLL_SECONDS: repr(self.snapshot_poll_seconds),
            **{setting.env: repr(getattr(self, setting.name)) for setting in HOSTED_SETTINGS},
        }
        if self.snapshot_url is not None:
            env[ENV_SNAPSHOT_URL] = self.snapshot_url
        if self.snapshot is not None:
            env[ENV_SNAPSHOT] = str(self.snapshot)
        return env


def parse_origin(text: str) -> tuple[str, str]:
    """'imqueue.org=http://127.0.0.1:8101' -> ('imqueue.org', 'http://127.0.0.1:8101')."""
    try:
        return sites.parse_origin(text)
    except sites.OriginError as error:
        raise ConfigError(str(error)) from None


def parse_log_level(flag: str | None, env: Mapping[str, str] | None = None) -> str:
    """The stderr level: the flag, else IMQUEUE_MCP_LOG_LEVEL, else WARNING; ConfigError if unknown.

    The one reading of the level: the command line and every hosted worker process use it.
    """
    env = os.environ if env is None else env
    source = "--log-level" if flag is not None else ENV_LOG_LEVEL
    level = (flag if flag is not None else env.get(ENV_LOG_LEVEL, "WARNING")).strip().upper()
    if level not in LOG_LEVELS:
        raise ConfigError(f"{source}={level!r} is not one of {', '.join(LOG_LEVELS)}")
    return level


def parse_flag(name: str, text: str | None) -> bool:
    value = (text or "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ConfigError(f"{name}={text!r} is not a boolean; use 1 or 0")


def parse_deadline_seconds(text: str | None) -> float:
    if text is None or not text.strip():
        return DEFAULT_SNAPSHOT_DEADLINE_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 1 <= seconds <= 3600:
        raise ConfigError(
            f"{ENV_SNAPSHOT_DEADLINE}={text!r} is not a number of seconds from 1 to 3600; unset it for "
            f"the default {DEFAULT_SNAPSHOT_DEADLINE_SECONDS:g}"
        )
    return seconds


def parse_refresh_seconds(text: str | None) -> float:
    if text is None or not text.strip():
        return DEFAULT_REFRESH_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not seconds >= MIN_REFRESH_SECONDS or seconds == float("inf"):
        raise ConfigError(
            f"{ENV_REFRESH_SECONDS}={text!r} is not a number of seconds of at least "
            f"{MIN_REFRESH_SECONDS:g}; unset it for the hourly default"
        )
    return seconds


def parse_number(setting: Setting, flag: str | None, env: Mapping[str, str]) -> float:
    """The flag's value, else the environment's, else the default; ConfigError if out of range."""
    source = setting.flag if flag is not None else setting.env
    text = flag if flag is not None else env.get(setting.env)
    if text is None or not str(text).strip():
        return setting.default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if setting.integer and value == value and value != int(value):
        value = float("nan")
    if not setting.minimum <= value < float("inf"):
        kind = "a whole number" if setting.integer else "a number of seconds"
        raise ConfigError(f"{source}={text!r} is not {kind} of at least {setting.minimum:g}")
    return int(value) if setting.integer else value


def parse_poll_seconds(flag: str | None, env: Mapping[str, str]) -> float:
    source = "--snapshot-poll-seconds" if flag is not None else ENV_SNAPSHOT_POLL_SECONDS
    text = flag if flag is not None else env.get(ENV_SNAPSHOT_POLL_SECONDS)
    if text is None or not str(text).strip():
        return DEFAULT_SNAPSHOT_POLL_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not (seconds == 0 or MIN_REFRESH_SECONDS <= seconds < float("inf")):
        raise ConfigError(
            f"{source}={text!r} is not 0 (only on SIGHUP) or a number of seconds of at least "
            f"{MIN_REFRESH_SECONDS:g}"
        )
    return seconds


def parse_snapshot_url(text: str | None) -> str | None:
    if text is None or not text.strip():
        return None
    url = text.strip()
    scheme, _, rest = url.partition("://")
    if scheme.lower() not in ("http", "https") or not rest.split("/", 1)[0]:
        raise ConfigError(
            f"snapshot URL {text!r} is not an http:// or https:// URL; give the URL the builder's "
            "snapshot file is served at"
        )
    return url


def _split(text: str | None) -> list[str]:
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def _snapshot_path(text: str) -> Path:
    path = Path(text).expanduser()
    if path.is_dir():
        raise ConfigError(f"snapshot {text!r} is a directory; pass the snapshot file itself")
    return path


def build_config(
    *,
    snapshot: str | None = None,
    offline: bool = False,
    origins: Iterable[str] = (),
    allow_hosts: Iterable[str] = (),
    allow_origins: Iterable[str] = (),
    snapshot_url: str | None = None,
    snapshot_poll_seconds: str | None = None,
    hosted: Mapping[str, str | None] | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Merge flag values over the environment into a Config; raises ConfigError. `hosted` maps a
    HOSTED_SETTINGS name to its flag's text (None: not given)."""
    env = os.environ if env is None else env
    merged = dict(LIVE_ORIGINS)
    for item in _split(env.get(ENV_ORIGINS)):
        host, url = parse_origin(item)
        merged[host] = url
    for item in origins:
        host, url = parse_origin(item)
        merged[host] = url
    snapshot_text = snapshot or env.get(ENV_SNAPSHOT) or None
    return Config(
        snapshot=_snapshot_path(snapshot_text) if snapshot_text else None,
        offline=offline or parse_flag(ENV_OFFLINE, env.get(ENV_OFFLINE)),
        origins=merged,
        allowed_hosts=_unique((*DEFAULT_ALLOWED_HOSTS, *_split(env.get(ENV_ALLOWED_HOSTS)), *allow_hosts)),
        allowed_origins=_unique(
            (*DEFAULT_ALLOWED_ORIGINS, *_split(env.get(ENV_ALLOWED_ORIGINS)), *allow_origins)
        ),
        refresh_seconds=parse_refresh_seconds(env.get(ENV_REFRESH_SECONDS)),
        snapshot_deadline_seconds=parse_deadline_seconds(env.get(ENV_SNAPSHOT_DEADLINE)),
        snapshot_url=parse_snapshot_url(snapshot_url or env.get(ENV_SNAPSHOT_URL)),
        snapshot_poll_seconds=parse_poll_seconds(snapshot_poll_seconds, env),
        **{  # type: ignore[arg-type]
            setting.name: parse_number(setting, (hosted or {}).get(setting.name), env)
            for setting in HOSTED_SETTINGS
        },
    )


def config_from_environment(env: Mapping[str, str] | None = None) -> Config:
    return build_config(env=env)


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item.strip() for item in items if item.strip()))

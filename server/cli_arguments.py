"""Argument safety for the imq CLI bridge: user values are checked before anything runs.

imq parses its argv itself, so a user value starting with '-' would become an option; a
refusal says which value was refused and what to pass instead. Every check returns a
``BridgeResult`` refusal, or None when the value is safe.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .errors import ErrorCode
from .imq_runner import BridgeResult

__all__ = [
    "refused",
    "refuse_option_like",
    "refuse_service_names",
    "refuse_unknown_choice",
    "refuse_unsafe_flags",
]


def refused(message: str, code: ErrorCode = ErrorCode.ARGUMENT_REFUSED) -> BridgeResult:
    """A result for a call that was refused: an error, and nothing ran."""
    return BridgeResult(text=message, is_error=True, exit_code=None, command=[], error_code=code)


# A service name becomes a folder and an npm package name (npm allows 214 characters); no
# other value imq takes is longer than a Linux path (4096 bytes). Past these imq fails on its own
# (ENAMETOOLONG), so the bridge refuses first, with a message instead of a stack trace.
LONGEST = {"service name": 214}
LONGEST_VALUE = 4096
LONGEST_FOLDER_NAME = 255  # NAME_MAX: one component of a path
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def refuse_option_like(label: str, value: str) -> BridgeResult | None:
    """Refuses a user value imq would parse as a flag (or that cannot be an argv entry)."""
    if value == "":
        return refused(f"{label} must not be empty. Nothing was run.")
    if "\x00" in value:
        return refused(f"{label} contains a NUL byte, which cannot be passed to a program. Nothing was run.")
    if _CONTROL.search(value):
        return refused(
            f"{label} {value[:60]!r} contains control characters (newlines, tabs or escape codes); "
            "pass plain text. Nothing was run."
        )
    longest = LONGEST.get(label, LONGEST_VALUE)
    if len(value.encode("utf-8", errors="surrogatepass")) > longest:
        return refused(
            f"{label} is {len(value):,} characters long; imq takes at most {longest:,} bytes here. "
            "Pass a shorter value. Nothing was run."
        )
    if label == "path" and any(
        len(part.encode("utf-8", errors="surrogatepass")) > LONGEST_FOLDER_NAME for part in value.split("/")
    ):
        return refused(
            f"path has a folder name longer than {LONGEST_FOLDER_NAME} bytes, which no file system "
            "takes. Pass a shorter path. Nothing was run."
        )
    if value.startswith("-"):
        hint = " For a path, prefix it with ./ (for example ./-dir)." if "path" in label else ""
        return refused(
            f"{label} {value!r} starts with '-', so imq would read it as an option; it was refused "
            f"and nothing was run. Pass a value that does not start with '-'.{hint}"
        )
    return None


def refuse_service_names(services: Sequence[str] | None) -> BridgeResult | None:
    for service in services or ():
        refusal = refuse_option_like("service name", service)
        if refusal:
            return refusal
        if "," in service or service != service.strip():
            return refused(
                f"service name {service!r} contains a comma or surrounding spaces; pass each "
                "service as its own list item. Nothing was run."
            )
    return None


_LONG_FLAG = re.compile(r"--[a-z][a-z0-9]*(-[a-z0-9]+)*(=[^\x00-\x1f\x7f]*)?")


def refuse_unsafe_flags(flags: Sequence[str]) -> BridgeResult | None:
    """Flags for `service create` must be whole long options: `--name` or `--name=value`."""
    for flag in flags:
        if flag.split("=", 1)[0] == "--dry-run":
            # The bridge owns dry-run vs apply; a stray flag would make "Created" a lie.
            return refused(
                "Do not pass --dry-run in flags; apply=false (the default) is the dry run. Nothing was run."
            )
        if (
            not _LONG_FLAG.fullmatch(flag)
            or len(flag.encode("utf-8", errors="surrogatepass")) > LONGEST_VALUE
        ):
            return refused(
                f"flag {flag[:60]!r} is not a long option of the form --name or --name=value (plain "
                f"text, at most {LONGEST_VALUE:,} bytes), so it "
                "was refused and nothing was run. Give values inline (--email=you@example.com); "
                "cli_help('service create') lists the flags."
            )
    return None


def refuse_unknown_choice(label: str, value: str, allowed: Sequence[str]) -> BridgeResult | None:
    if value in allowed:
        return None
    return refused(f"Unknown {label} {value!r}; use one of: {', '.join(allowed)}. Nothing was run.")

"""Argument safety for the imq CLI bridge: user values are checked before anything runs.

imq parses its argv itself, so a user value starting with '-' would become an option; a
refusal says which value was refused and what to pass instead. Every check returns a
``BridgeResult`` refusal, or None when the value is safe.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.imq.runner import BridgeResult
from imqueue_mcp.server.scaffold.placement import overlong_folder_name

__all__ = [
    "BRIDGE_OWNED_OPTIONS",
    "refused",
    "refuse_leaving_folder",
    "refuse_option_like",
    "refuse_path_in_name",
    "refuse_service_name",
    "refuse_service_names",
    "refuse_unknown_choice",
    "refuse_unsafe_flags",
]


def refused(message: str, code: ErrorCode = ErrorCode.ARGUMENT_REFUSED) -> BridgeResult:
    """A result for a call that was refused: an error, and nothing ran."""
    return BridgeResult(text=message, is_error=True, exit_code=None, command=[], error_code=code)


# A service name becomes a folder and an npm package name (npm allows 214 characters); no
# other value imq takes is longer than a Linux path (4096 bytes), nor a folder name in a path
# longer than NAME_MAX. Past these imq fails on its own (ENAMETOOLONG), so the bridge refuses
# first, with a message instead of a stack trace.
LONGEST = {"service name": 214}
LONGEST_VALUE = 4096
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
    overlong = overlong_folder_name(value) if label == "path" else None
    if overlong:
        return refused(f"path's {overlong}. Pass a shorter path. Nothing was run.")
    if value.startswith("-"):
        hint = " For a path, prefix it with ./ (for example ./-dir)." if "path" in label else ""
        return refused(
            f"{label} {value!r} starts with '-', so imq would read it as an option; it was refused "
            f"and nothing was run. Pass a value that does not start with '-'.{hint}"
        )
    return None


def refuse_path_in_name(label: str, value: str) -> BridgeResult | None:
    """A service name is a name: imq and the bridge join it to a folder (a service folder, its
    log file <name>.log, a client file <name>.ts), so a separator, '.' or '..' would make it a
    path that reaches elsewhere, and is refused."""
    if "/" in value or "\\" in value:
        return refused(
            f"{label} {value[:60]!r} contains a path separator ('/' or '\\'); a {label} is a name, "
            "not a path: pass the bare name (e.g. 'user-service'). Nothing was run."
        )
    if value.strip() in (".", ".."):
        return refused(
            f"{label} {value!r} names a folder, not a service; pass the service's name. Nothing was run."
        )
    return None


def refuse_service_name(value: str, label: str = "service name") -> BridgeResult | None:
    """refuse_option_like, then refuse_path_in_name."""
    return refuse_option_like(label, value) or refuse_path_in_name(label, value)


def refuse_leaving_folder(label: str, value: str, folder: Path, suffix: str = "") -> BridgeResult | None:
    """Refuses a name whose entry in `folder` (folder/<value><suffix>) is a symlink that leads
    out of the folder: reading or writing it would reach a file the name does not say."""
    entry = folder / f"{value}{suffix}"
    try:
        if not entry.is_symlink():
            return None
        target, base = entry.resolve(), folder.resolve()
    except (OSError, RuntimeError, ValueError):  # a loop, a name the OS refuses
        return refused(f"{label} {value!r}: {entry} is a symlink that cannot be followed. Nothing was run.")
    if target.is_relative_to(base) and target != base:
        return None
    return refused(
        f"{label} {value!r}: {entry} is a symlink to {target}, outside {folder}; a service's files "
        "stay in their folder, so it was refused. Remove the link or name another service. Nothing was run."
    )


def refuse_service_names(services: Sequence[str] | None) -> BridgeResult | None:
    for service in services or ():
        refusal = refuse_service_name(service)
        if refusal:
            return refusal
        if "," in service or service != service.strip():
            return refused(
                f"service name {service!r} contains a comma or surrounding spaces; pass each "
                "service as its own list item. Nothing was run."
            )
    return None


# How imq (yargs) reads an argv item that starts with '-': a long option with an optional
# inline value (--email, --email=a@b.c, --no-use-git; yargs also takes camelCase) or a
# group of one-letter options (-e, -y, -yf: the last letter takes the next item as value).
_LONG_FLAG = re.compile(r"--(?P<name>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?P<inline>=.*)?", re.DOTALL)
_SHORT_FLAGS = re.compile(r"-(?P<letters>[A-Za-z]+)")

# Options the bridge sets itself from the tool's own arguments (apply, name, path), or that
# would turn the run into something else (help or version printed, exit 0, nothing created):
# passed in flags they would make the bridge's account of the run untrue.
BRIDGE_OWNED_OPTIONS = {
    "dry-run": "apply=false (the default) is the dry run and apply=true creates",
    "dryRun": "apply=false (the default) is the dry run and apply=true creates",
    "name": "pass the service name as name",
    "path": "pass the target directory as path",
    "help": "call cli_help('service create') for imq's help",
    "version": "call cli_status for imq's version",
}


def _flag_refusal(item: str, reason: str) -> BridgeResult:
    return refused(
        f"flag {item[:60]!r} {reason} It was refused and nothing was run. cli_help('service create') "
        "lists imq's flags; short (-e) and long (--email) forms both work, with the value inline "
        "(--email=you@example.com) or as the next item (['-e', 'you@example.com'])."
    )


def refuse_unsafe_flags(flags: Sequence[str]) -> BridgeResult | None:
    """Flags for `service create`, passed through as imq parses them; refuses only what is unsafe.

    Accepted: short options (-e, grouped -yf), long ones (--email, --no-use-git), values inline
    (--email=a@b.c) or as the next item after an option that takes one. Refused: control
    characters; an item imq could not read as an option; a value with no option before it (imq
    would read it as a positional argument, such as the target path); '--' (everything after
    it would be positional); and the options the bridge owns (BRIDGE_OWNED_OPTIONS). A value
    that starts with '-' must be given inline (--author=-x), since as its own item imq reads it
    as an option.
    """
    value_may_follow = False
    for item in flags:
        if _CONTROL.search(item):
            return refused(
                f"flag {item[:60]!r} contains control characters (newlines, tabs, NUL or escape "
                "codes); pass plain text. Nothing was run."
            )
        if len(item.encode("utf-8", errors="surrogatepass")) > LONGEST_VALUE:
            return _flag_refusal(item, f"is longer than {LONGEST_VALUE:,} bytes.")
        if not item.startswith("-"):
            if not value_may_follow:
                return _flag_refusal(
                    item,
                    "is a value with no option before it, so imq would read it as a positional "
                    "argument (the target path); put the option it belongs to right before it.",
                )
            value_may_follow = False
            continue
        long_flag = _LONG_FLAG.fullmatch(item)
        short_flags = _SHORT_FLAGS.fullmatch(item)
        if long_flag:
            name = long_flag["name"]
            owned = BRIDGE_OWNED_OPTIONS.get(name.removeprefix("no-"))
            if owned:
                return _flag_refusal(item, f"is set by the bridge itself: {owned}.")
            # --no-x is a boolean; an inline value is complete: neither takes the next item.
            value_may_follow = long_flag["inline"] is None and not name.startswith("no-")
        elif short_flags:
            value_may_follow = True  # the last letter may take the next item as its value
        elif item in ("-", "--"):
            return _flag_refusal(item, "would make imq read every later item as a positional argument.")
        else:
            return _flag_refusal(
                item,
                "is not an option imq can read (forms: -e, -yf, --email, --email=value, --no-install). A "
                "value starting with '-' must be inline: --author=-value.",
            )
    return None


def refuse_unknown_choice(label: str, value: str, allowed: Sequence[str]) -> BridgeResult | None:
    if value in allowed:
        return None
    return refused(f"Unknown {label} {value!r}; use one of: {', '.join(allowed)}. Nothing was run.")

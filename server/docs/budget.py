"""get_doc's token budget: one part of a document at a time, cut where a reader would cut.

    estimate_tokens(text)          characters / 4, rounded up: the project's one token estimate
    cut_part(text, start, tokens)  where the part that starts at `start` ends: at a section
                                   boundary (a heading) if one falls in the second half of the
                                   budget, else at a paragraph boundary (after a blank line), else
                                   at a line boundary, and only inside a line when one line alone
                                   is over the budget; never more than MAX_DOC_BYTES of UTF-8
    Cursor                         what nextCursor carries, opaque to agents: the URL it belongs
                                   to, the character offset the next part starts at, and a digest
                                   of the document, so a cursor for another URL, or for a page that
                                   changed since, is refused instead of losing or repeating text
    outline_of(markdown, ...)      the page's sections: heading, level, anchor URL, tokens

A heading or a blank line inside a fenced code block is neither a section nor a paragraph
boundary, so a part never ends in the middle of a code block unless the block alone is over
the budget. Parts are contiguous slices of one text: reading them all, in order, gives the
text back exactly.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4
DEFAULT_MAX_TOKENS = 8_000
MIN_MAX_TOKENS = 100
MAX_DOC_BYTES = 200_000  # the outer limit on one answer, whatever the budget
MAX_MAX_TOKENS = MAX_DOC_BYTES // CHARS_PER_TOKEN

HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
HEADING_ID = re.compile(r"[ \t]*\{#[^}]*\}$")
FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")


def fence_after(token: str, fence: str | None) -> str | None:
    """The code fence open after a fence line whose marker is `token` (``` or ~~~, 3 or more):
    it opens one when none is open, and closes the open one with a marker at least as long."""
    if fence is None:
        return token[0] * len(token)
    return None if token.startswith(fence) else fence


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


# --- where a part may end ------------------------------------------------------------------


@dataclass(frozen=True)
class Boundaries:
    """Character offsets where a line starts, by what starts there (all sorted)."""

    sections: list[int]  # a heading line outside code fences
    paragraphs: list[int]  # the first line after a blank line, outside code fences
    lines: list[int]  # every line


@dataclass(frozen=True)
class HeadingLine:
    number: int  # 0-based line number
    level: int
    text: str


def scan(text: str, stop: int | None = None) -> tuple[Boundaries, list[HeadingLine]]:
    """One pass over the lines: the boundaries and the headings, code fences respected; lines
    that start after `stop` are not looked at (a part needs no boundary beyond its budget)."""
    sections: list[int] = []
    paragraphs: list[int] = []
    lines: list[int] = []
    headings: list[HeadingLine] = []
    fence: str | None = None
    offset = 0
    after_blank = False
    for number, line in enumerate(text.split("\n") if stop is None else _lines_until(text, stop)):
        lines.append(offset)
        first = line.lstrip(" \t")[:1]
        marker = FENCE.match(line) if first in ("`", "~") else None
        if fence is None and after_blank:
            paragraphs.append(offset)
        if marker:
            fence = fence_after(marker.group(1), fence)
        elif fence is None and first == "#":
            heading = HEADING.match(line)
            if heading:
                sections.append(offset)
                text_of_heading = HEADING_ID.sub("", heading.group(2)).strip()
                headings.append(HeadingLine(number, len(heading.group(1)), text_of_heading))
        after_blank = fence is None and not line.strip()
        offset += len(line) + 1
    return Boundaries(sections, paragraphs, lines), headings


def _lines_until(text: str, stop: int) -> list[str]:
    """The lines of `text` that start at or before `stop`."""
    end = text.find("\n", stop)
    return text[: len(text) if end < 0 else end].split("\n")


def cut_part(text: str, start: int, max_tokens: int, boundaries: Boundaries | None = None) -> int:
    """The end offset of the part of `text` that starts at `start` (see the module docstring)."""
    limit = min(len(text), start + max_tokens * CHARS_PER_TOKEN)
    limit = start + _fitting_bytes(text[start:limit])
    if limit >= len(text):
        return len(text)
    found = boundaries or scan(text, stop=limit)[0]
    half = start + (limit - start) // 2
    quarter = start + (limit - start) // 4
    for candidates, floor in (
        (found.sections, half),
        (found.paragraphs, half),
        (sorted(found.sections + found.paragraphs), quarter),
        (found.lines, start + 1),
    ):
        best = _last_within(candidates, floor, limit)
        if best is not None:
            return best
    return max(limit, start + 1)  # one line over the budget: cut inside it


def _last_within(offsets: list[int], low: int, high: int) -> int | None:
    """The largest offset in low..high (inclusive), if any."""
    best = None
    for offset in offsets:
        if offset > high:
            break
        if offset >= low:
            best = offset
    return best


def _fitting_bytes(part: str) -> int:
    """How many characters of `part` fit in MAX_DOC_BYTES of UTF-8."""
    encoded = part.encode("utf-8")
    if len(encoded) <= MAX_DOC_BYTES:
        return len(part)
    return len(encoded[:MAX_DOC_BYTES].decode("utf-8", errors="ignore"))


# --- the cursor ------------------------------------------------------------------------------


class CursorError(ValueError):
    """The cursor cannot continue this read; the message says why and how to start again."""


CURSOR_NEXT_STEP = (
    "Call get_doc with the url alone to read from the start, then pass each answer's nextCursor "
    "unchanged, with the same url, to read on."
)


def digest_of(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Cursor:
    url: str  # the canonical URL read, with its #anchor when a section is read
    offset: int  # where the next part starts, in characters of the section or page
    digest: str  # of the whole section or page the offset counts in

    def encode(self) -> str:
        raw = json.dumps({"v": 1, "u": self.url, "o": self.offset, "d": self.digest}, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode("utf-8")).decode("ascii").rstrip("=")

    @classmethod
    def decode(cls, token: str) -> Cursor:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            fields: Any = json.loads(raw)
            cursor = cls(url=fields["u"], offset=fields["o"], digest=fields["d"])
            valid = (
                fields.get("v") == 1
                and isinstance(cursor.url, str)
                and isinstance(cursor.digest, str)
                and type(cursor.offset) is int
                and cursor.offset > 0
            )
        except (binascii.Error, ValueError, TypeError, KeyError, AttributeError, RecursionError):
            valid = False
        if not valid:
            raise CursorError(
                f"The cursor {token[:40]!r} is not a get_doc cursor: pass the nextCursor of an earlier "
                "get_doc answer exactly as it was returned."
            )
        return cursor

    def check(self, url: str, text: str) -> None:
        """CursorError unless this cursor continues a read of `url` over this very `text`."""
        if self.url != url:
            raise CursorError(f"The cursor continues a read of {self.url}, not of {url}.")
        if self.digest != digest_of(text) or self.offset >= len(text):
            raise CursorError(
                f"{url} changed since the cursor was issued, so its parts no longer line up; "
                "read it again from the start."
            )


# --- outlines --------------------------------------------------------------------------------


def outline_of(markdown: str, page_url: str, ranges: dict[str, list[int]] | None) -> list[dict[str, Any]]:
    """Each heading of the page (outside code fences): its text, level, its anchor and anchor URL
    when the site's section map starts a section on that line, and the tokens from it to the next
    heading (what get_doc returns for the anchor URL)."""
    lines = markdown.split("\n")
    _, headings = scan(markdown)
    anchors = {
        span[0]: name for name, span in (ranges or {}).items() if isinstance(span, list) and len(span) == 2
    }
    entries: list[dict[str, Any]] = []
    for position, heading in enumerate(headings):
        end = headings[position + 1].number if position + 1 < len(headings) else len(lines)
        anchor = anchors.get(heading.number)
        if anchor is not None and ranges is not None:
            end = ranges[anchor][1]  # the span get_doc slices for the anchor URL
        body = "\n".join(lines[heading.number : end]).rstrip("\n") + "\n"
        entry: dict[str, Any] = {"heading": heading.text, "level": heading.level}
        if anchor is not None:
            entry["anchor"] = anchor
            entry["url"] = f"{page_url}#{anchor}"
        entry["tokens"] = estimate_tokens(body)
        entries.append(entry)
    return entries

"""Passages: the part of a section that best answers a query, cut from the page's markdown.

Pure text logic (no I/O, no corpus): hit_passages.py finds the text and applies the budgets.

    segment(markdown)        markdown -> Units: every sentence of a paragraph or list item, every
                             table row and unanchored heading, and every fenced code block whole
    prepare(page, parts)     a page ready to be asked many queries: its units, which section each
                             belongs to, and a posting list per inflection root (ranker.text's
                             roots, so "retries" finds "retry" as the ranker would)
    QueryWords.of(query)     the query's content words, each with its roots
    choose(page, words, ...) the passage: the run of consecutive units of one section that covers
                             the most of the query's words (each weighed by how rare it is on the
                             page), within the token budget, then filled to the budget with the
                             units around it; rendered as markdown, an over-budget unit cut with
                             a visible marker

Units are whole sentences; a code block is one unit, never split unless it alone is over the
budget, and then cut at a line end with CODE_CUT_MARKER after its closing fence. Tokens are
counted as everywhere in the server (budget.estimate_tokens: 4 characters a token).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from imqueue_mcp.ranker.text import STOPWORDS, inflection_roots, query_terms, words
from imqueue_mcp.server.docs.budget import CHARS_PER_TOKEN, FENCE, HEADING, HEADING_ID, estimate_tokens

CODE_CUT_MARKER = "[… code block cut here: get_doc(url) has all of it]"
TEXT_CUT_MARKER = " […]"
UNIT_PROXIMITY = 0.5  # a window's best single unit counts again at this share: words together
HEADING_SHARE = 0.5  # the section heading's words count at this share when the window lacks them
PAGE_META = re.compile(r"^(Source|Published|Updated|Author|Package): ")
LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])\s+(.*)$")
TABLE_RULE = re.compile(r"^\|?[\s:|-]+\|?$")
# A sentence ends at . ! ? (and any closing quote, bracket or emphasis) followed by space and
# something that can start one; "e.g. the" and "vs. NATS" do not end one.
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[A-Z0-9`\"'(\[*@_])")
ABBREVIATIONS = frozenset({"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "fig.", "mr.", "dr."})


@dataclass(frozen=True, slots=True)
class Unit:
    text: str  # markdown as on the page (a code block with its fences)
    kind: str  # "sentence" | "code" | "row" | "heading"
    joiner: str  # what goes before it when it follows the unit above: " ", "\n" or "\n\n"


@dataclass(frozen=True, slots=True)
class Part:
    """One section of a page as a passage may come from it: the units from `start` to `end`."""

    url: str  # the section's anchor URL (the page URL for the text before the first anchor)
    heading: str
    start: int
    end: int


@dataclass
class PreparedPage:
    units: list[Unit]
    parts: list[Part]
    postings: dict[str, list[int]]  # inflection root -> indices of the units that have it
    heading_roots: list[frozenset[str]]  # per part
    basis: str  # where the text came from: "markdown" | "prose" | "summary"

    def units_with(self, roots: Iterable[str]) -> set[int]:
        found: set[int] = set()
        for root in roots:
            found.update(self.postings.get(root, ()))
        return found


@dataclass(frozen=True)
class QueryWords:
    words: tuple[tuple[str, frozenset[str]], ...]  # (word, its roots), content words only

    @classmethod
    def of(cls, query: str) -> QueryWords:
        terms = query_terms(query)
        content = [t for t in terms if t not in STOPWORDS] or terms
        return cls(tuple((t, roots_of(t)) for t in content))


@dataclass(frozen=True)
class Passage:
    text: str
    url: str
    tokens: int
    basis: str
    cut: bool = False
    start: int = -1  # the first unit's index on its page: which window was shown (not in the dict)

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {"text": self.text, "url": self.url, "tokens": self.tokens, "basis": self.basis}
        if self.cut:
            data["cut"] = True
        return data


def roots_of(word: str) -> frozenset[str]:
    return inflection_roots(word)


# --- markdown -> units ------------------------------------------------------------------------


def segment(markdown: str, skip_page_header: bool = False) -> list[Unit]:
    """The units of a stretch of markdown, in order (see the module docstring)."""
    lines = markdown.split("\n")
    units: list[Unit] = []
    paragraph: list[str] = []
    marker = ""  # the list marker of the paragraph being collected, if it is a list item
    after_item = False  # the block above was a list item: the next item follows on the next line

    def flush() -> None:
        nonlocal paragraph, marker, after_item
        if paragraph:
            gap = "\n" if marker and after_item else "\n\n"
            for place, sentence in enumerate(sentences(" ".join(paragraph))):
                text = f"{marker}{sentence}" if place == 0 and marker else sentence
                units.append(Unit(text, "sentence", gap if place == 0 else " "))
            after_item = bool(marker)
        paragraph, marker = [], ""

    def block(unit: Unit) -> None:
        nonlocal after_item
        flush()
        units.append(unit)
        after_item = False

    number = _after_page_header(lines) if skip_page_header else 0
    while number < len(lines):
        line = lines[number]
        stripped = line.strip()
        if FENCE.match(line):
            code, number = _code_block(lines, number)
            block(Unit(code, "code", "\n\n"))
            continue
        number += 1
        if not stripped:
            flush()
        elif stripped.startswith("#") and HEADING.match(stripped):
            block(Unit(HEADING_ID.sub("", stripped).strip(), "heading", "\n\n"))
        elif stripped.startswith("|"):
            if not TABLE_RULE.match(stripped):
                joiner = "\n" if units and units[-1].kind == "row" and not paragraph else "\n\n"
                block(Unit(stripped, "row", joiner))
        elif item := LIST_ITEM.match(line):
            flush()
            marker = "- " if item.group(2) in "-*+" else f"{item.group(2)} "
            paragraph = [item.group(3).strip()]
        else:
            paragraph.append(stripped.lstrip("> ").strip() if stripped.startswith(">") else stripped)
    flush()
    return units


def _after_page_header(lines: Sequence[str]) -> int:
    """The line after a page's `# Title` and its Source:/Published:/Package: lines."""
    number = 0
    while number < len(lines) and (
        not lines[number].strip()
        or (number == 0 and lines[number].startswith("# "))
        or PAGE_META.match(lines[number])
    ):
        number += 1
    return number


def _code_block(lines: Sequence[str], start: int) -> tuple[str, int]:
    """The fenced block that opens at `start`, fences included, and the line after it; an
    unclosed fence runs to the end, as CommonMark reads it."""
    opening = FENCE.match(lines[start])
    assert opening is not None
    token = opening.group(1)
    number = start + 1
    while number < len(lines):
        line = lines[number].strip()
        number += 1
        if line.startswith(token[0] * len(token)) and not line.strip(token[0]):
            break
    return "\n".join(lines[start:number]).rstrip(), number


def sentences(text: str) -> list[str]:
    """A paragraph's sentences, whole, in order."""
    found: list[str] = []
    start = 0
    for end in SENTENCE_END.finditer(text):
        before = text[start : end.start()].rsplit(None, 1)
        if before and before[-1].lower().strip("\"'()[]*_`") in ABBREVIATIONS:
            continue
        found.append(text[start : end.start() + len(end.group().rstrip())].strip())
        start = end.end()
    tail = text[start:].strip()
    if tail:
        found.append(tail)
    return found


# --- a page, ready for queries --------------------------------------------------------------


@dataclass(frozen=True)
class SectionText:
    """What prepare() is given: one section's URL, heading and markdown (or prose)."""

    url: str
    heading: str
    markdown: str


def prepare(sections: Sequence[SectionText], basis: str, page_header: bool = False) -> PreparedPage:
    """The units of each section, in order, and the postings over them. `page_header`: the first
    section starts with the page's title and metadata lines, which are left out."""
    units: list[Unit] = []
    parts: list[Part] = []
    heading_roots: list[frozenset[str]] = []
    for number, section in enumerate(sections):
        found = segment(section.markdown, skip_page_header=page_header and number == 0)
        if found and found[0].kind == "heading" and section.heading:  # the section's own heading
            found = found[1:]
        parts.append(Part(section.url, section.heading, len(units), len(units) + len(found)))
        heading_roots.append(frozenset(r for w in words(section.heading) for r in roots_of(w)))
        units.extend(found)
    postings: dict[str, list[int]] = {}
    for index, unit in enumerate(units):
        for root in {r for w in words(unit.text) for r in roots_of(w)}:
            postings.setdefault(root, []).append(index)
    return PreparedPage(units, parts, postings, heading_roots, basis)


# --- choosing ---------------------------------------------------------------------------------


def weights(page: PreparedPage, query: QueryWords) -> dict[str, tuple[float, set[int]]]:
    """Each query word's weight on this page (rarer among its units weighs more) and its units."""
    total = max(len(page.units), 1)
    out: dict[str, tuple[float, set[int]]] = {}
    for word, roots in query.words:
        units = page.units_with(roots)
        out[word] = (math.log(1 + total / len(units)) if units else 0.0, units)
    return out


def window_tokens(units: Sequence[Unit], start: int, end: int) -> int:
    chars = sum(len(u.text) for u in units[start:end]) + sum(len(u.joiner) for u in units[start + 1 : end])
    return math.ceil(chars / CHARS_PER_TOKEN)


def choose(
    page: PreparedPage,
    query: QueryWords,
    budget: int,
    parts: Sequence[int] | None = None,
    near: int | None = None,
    prose_only: bool = False,
    skip: frozenset[tuple[str, int]] = frozenset(),
) -> Passage | None:
    """The best passage of the page's parts (all when None) within `budget` tokens.
    near: a unit index (an example's code block) whose neighbours are preferred; prose_only:
    code units are left out (find_examples shows the code itself); skip: (url, start) of
    windows already shown for an earlier hit. None when the parts have no text."""
    chosen = parts if parts is not None else range(len(page.parts))
    weighed = weights(page, query)
    by_unit: dict[int, list[str]] = {}
    for word, (_weight, units) in weighed.items():
        for index in units:
            by_unit.setdefault(index, []).append(word)
    best: tuple[float, int, int, int, int] | None = None  # (score, -lead, -order, start, end)
    for order, number in enumerate(chosen):
        part = page.parts[number]
        usable = [
            i for i in range(part.start, part.end) if not (prose_only and page.units[i].kind == "code")
        ]
        if not usable:
            continue
        scoring = [i for i in usable if i in by_unit] or usable[:1]
        for start, end in _windows(page.units, usable, scoring, budget):
            if (part.url, start) in skip:
                continue
            score = _score(page, weighed, by_unit, number, start, end, near)
            lead = next((i for i in range(start, end) if i in by_unit), start) - start
            key = (score, -lead, -order, start, end)
            if best is None or key[:3] > best[:3]:
                best = key
    if best is None:
        return None
    start, end = best[3], best[4]
    part = next(p for p in page.parts if p.start <= start < p.end)
    return render(page, part, start, end, budget)


def _windows(
    units: Sequence[Unit], usable: Sequence[int], scoring: Sequence[int], budget: int
) -> Iterable[tuple[int, int]]:
    """Runs of consecutive usable units, each starting at or a little before a scoring unit and
    running on as far as the budget allows (a unit alone over the budget is a window of its own)."""
    place = {index: position for position, index in enumerate(usable)}
    seen: set[int] = set()
    for index in scoring:
        position = place[index]
        first = position
        while first > 0 and usable[first - 1] == usable[first] - 1 and first > position - 2:
            if window_tokens(units, usable[first - 1], index + 1) > budget:
                break
            first -= 1
        for begin in range(first, position + 1):
            start = usable[begin]
            if start in seen:
                continue
            seen.add(start)
            end = start + 1
            while (
                end < usable[-1] + 1
                and end in place
                and window_tokens(units, start, end + 1) <= budget
            ):
                end += 1
            yield start, end


def _score(
    page: PreparedPage,
    weighed: dict[str, tuple[float, set[int]]],
    by_unit: dict[int, list[str]],
    part: int,
    start: int,
    end: int,
    near: int | None,
) -> float:
    covered: set[str] = set()
    best_unit = 0.0
    for index in range(start, end):
        found = by_unit.get(index, ())
        covered.update(found)
        best_unit = max(best_unit, sum(weighed[w][0] for w in found))
    score = sum(weighed[w][0] for w in covered) + UNIT_PROXIMITY * best_unit
    heading = page.heading_roots[part]
    for word, (weight, _units) in weighed.items():
        if word not in covered and heading & roots_of(word):
            score += HEADING_SHARE * weight
    if near is not None:  # an example's block: the prose beside it first
        distance = min(abs(near - start), abs(near - (end - 1)))
        score += 1.0 / (1 + distance)
    return score


def render(page: PreparedPage, part: Part, start: int, end: int, budget: int) -> Passage:
    """The units start..end as markdown; a lone unit over the budget cut with a marker."""
    units = page.units[start:end]
    text = units[0].text + "".join(u.joiner + u.text for u in units[1:])
    cut = False
    if estimate_tokens(text) > budget:
        text, cut = cut_unit(units[0], budget), True
    return Passage(text, part.url, estimate_tokens(text), page.basis, cut, start)


def cut_unit(unit: Unit, budget: int) -> str:
    """A unit over the budget, cut to fit with a visible marker: a code block at a line end
    (its fence closed after the cut), any other unit at a word."""
    room = budget * CHARS_PER_TOKEN
    if unit.kind == "code":
        lines = unit.text.split("\n")
        fence = FENCE.match(lines[0])
        closing = fence.group(1) if fence else "```"
        tail = f"\n{closing}\n{CODE_CUT_MARKER}"
        kept = [lines[0]]
        size = len(lines[0]) + len(tail)
        for line in lines[1:-1]:
            if size + len(line) + 1 > room:
                break
            kept.append(line)
            size += len(line) + 1
        if len(kept) > 1:
            return "\n".join(kept) + tail
        return CODE_CUT_MARKER
    room -= len(TEXT_CUT_MARKER)
    cut = unit.text[:room].rsplit(" ", 1)[0] if " " in unit.text[:room] else unit.text[:room]
    return cut.rstrip(" ,;:") + TEXT_CUT_MARKER

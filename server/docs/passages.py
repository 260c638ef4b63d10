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

import bisect
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from imqueue_mcp.ranker.text import STOPWORDS, inflection_roots, query_terms, words
from imqueue_mcp.server.docs.budget import CHARS_PER_TOKEN, FENCE, HEADING, HEADING_ID, estimate_tokens

CODE_CUT_MARKER = "[… code block cut here: get_doc(url) has all of it]"
TEXT_CUT_MARKER = " […]"
UNIT_PROXIMITY = 0.5  # a window's best single unit counts again at this share: words together
WINDOW_SEEDS = 4  # windows start at or just before the units that match best, this many per section
HEADING_SHARE = 0.5  # the section heading's words count at this share when the window lacks them
PAGE_META = re.compile(r"^(Source|Published|Updated|Author|Package): ")
LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d{1,3}[.)])\s+(.*)$")
TABLE_RULE = re.compile(r"^\|?[\s:|-]+\|?$")
# A sentence ends at . ! ? (and any closing quote, bracket or emphasis) followed by space and
# something that can start one; "e.g. the" and "vs. NATS" do not end one.
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[A-Z0-9`\"'(\[*@_])")
# What a reader does not read as words: a link's target ("[text](https://...)" reads "text") and
# a bare autolink's address.
LINK_TARGET = re.compile(r"(?<=\])\([^)\s]*\)|<https?://[^>\s]*>")
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
    ends: list[int]  # ends[i]: characters of units 0..i-1 with the joiners before them
    starts: list[int]  # each part's first unit, in order

    def part_of(self, unit: int) -> int:
        """The number of the part the unit belongs to."""
        return bisect.bisect_right(self.starts, unit) - 1

    def tokens(self, start: int, end: int) -> int:
        """Tokens of units start..end-1 rendered together (the first one's joiner not counted)."""
        chars = self.ends[end] - self.ends[start] - len(self.units[start].joiner)
        return math.ceil(chars / CHARS_PER_TOKEN)

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
    ends = [0]
    for index, unit in enumerate(units):
        for root in {r for w in set(words(LINK_TARGET.sub("", unit.text))) for r in roots_of(w)}:
            postings.setdefault(root, []).append(index)
        ends.append(ends[-1] + len(unit.joiner) + len(unit.text))
    return PreparedPage(units, parts, postings, heading_roots, basis, ends, [part.start for part in parts])


# --- choosing ---------------------------------------------------------------------------------


def weights(
    page: PreparedPage, query: QueryWords, spans: Sequence[tuple[int, int]]
) -> dict[str, tuple[float, frozenset[str], list[int]]]:
    """Each query word's weight on this page (rarer among its units weighs more), its roots, and
    the units inside `spans` (start, end) that have it."""
    total = max(len(page.units), 1)
    out: dict[str, tuple[float, frozenset[str], list[int]]] = {}
    for word, roots in query.words:
        lists = [page.postings[root] for root in roots if root in page.postings]
        found = min(total, sum(len(units) for units in lists))
        inside: set[int] = set()
        for units in lists:
            for start, end in spans:
                inside.update(units[bisect.bisect_left(units, start) : bisect.bisect_left(units, end)])
        out[word] = (math.log(1 + total / found) if found else 0.0, roots, sorted(inside))
    return out


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
    chosen = list(parts) if parts is not None else list(range(len(page.parts)))
    spans = [(page.parts[n].start, page.parts[n].end) for n in chosen] if parts else [(0, len(page.units))]
    weighed = weights(page, query, spans)
    found: dict[int, list[str]] = {}  # unit -> the query words it has
    for word, (_weight, _roots, units) in weighed.items():
        for index in units:
            found.setdefault(index, []).append(word)
    order = {number: place for place, number in enumerate(chosen)}

    def usable(index: int) -> bool:
        return not (prose_only and page.units[index].kind == "code")

    worth = {index: sum(weighed[w][0] for w in words_) for index, words_ in found.items() if usable(index)}
    seeds = sorted(worth, key=lambda index: (-worth[index], index))[:WINDOW_SEEDS]
    if not seeds:  # nothing matches: the start of the first part with text
        seeds = [next((i for n in chosen for i in range(page.parts[n].start, page.parts[n].end) if usable(i)), -1)]
        if seeds[0] < 0:
            return None
    best: tuple[float, int, int, int, int] | None = None  # (score, -lead, -order, start, end)
    seen: set[int] = set()
    for seed in seeds:
        number = page.part_of(seed)
        part = page.parts[number]
        for start in (seed - 1, seed):  # the sentence before the best ones often sets them up
            if start < part.start or start in seen or not usable(start) or (part.url, start) in skip:
                continue
            if start < seed and page.tokens(start, seed + 1) > budget:
                continue
            seen.add(start)
            end = start + 1
            while end < part.end and usable(end) and page.tokens(start, end + 1) <= budget:
                end += 1
            score = _score(page, weighed, found, worth, number, start, end, near)
            lead = next((i for i in range(start, end) if i in found), start) - start
            key = (score, -lead, -order.get(number, 0), start, end)
            if best is None or key[:3] > best[:3]:
                best = key
    if best is None:
        return None
    start, end = best[3], best[4]
    return render(page, page.parts[page.part_of(start)], start, end, budget)


def _score(
    page: PreparedPage,
    weighed: dict[str, tuple[float, frozenset[str], list[int]]],
    found: dict[int, list[str]],
    worth: dict[int, float],
    part: int,
    start: int,
    end: int,
    near: int | None,
) -> float:
    """The query words the window covers, each by its weight; its best unit again at
    UNIT_PROXIMITY; the words it lacks that its section heading has, at HEADING_SHARE; and
    for an example, nearness to its block."""
    covered: set[str] = set()
    best_unit = 0.0
    for index in range(start, end):
        if index in found:
            covered.update(found[index])
            best_unit = max(best_unit, worth.get(index, 0.0))
    score = sum(weighed[w][0] for w in covered) + UNIT_PROXIMITY * best_unit
    heading = page.heading_roots[part]
    if heading:
        for word, (weight, roots, _units) in weighed.items():
            if word not in covered and heading & roots:
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

"""Passages: the part of a section that best answers a query, cut from the page's markdown.

Pure text logic (no I/O, no corpus): hit_passages.py finds the text and applies the budgets.

    segment(markdown)        markdown -> Units: every sentence of a paragraph or list item, every
                             table row and unanchored heading, and every fenced code block whole
    prepare(page, parts)     a page ready to be asked many queries: its units, which section each
                             belongs to, and a posting list per inflection root (the ranker's
                             roots and the feed's lemmas, so "retries" finds "retry" and "found"
                             finds "find" as the ranker would)
    QueryWords.of(query)     the query's content words, each with its roots
    choose(page, words, ...) the passage: a section that fits the budget whole; else the run of
                             consecutive units of one section, started at or just before one of
                             the units that match best and run on as far as the budget allows,
                             that covers the most of the query's words (each weighed by how rare
                             it is on the page); rendered as markdown, an over-budget unit cut
                             with a visible marker

Units are whole sentences; a code block is one unit, never split unless it alone is over the
budget, and then cut at a line end with CODE_CUT_MARKER after its closing fence. Tokens are
counted as everywhere in the server (budget.estimate_tokens: 4 characters a token).
"""

from __future__ import annotations

import bisect
import heapq
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from imqueue_mcp.ranker.index import roots_of
from imqueue_mcp.ranker.search import decides, query_shapes
from imqueue_mcp.ranker.text import STOPWORDS, query_terms, words
from imqueue_mcp.server.docs.budget import CHARS_PER_TOKEN, FENCE, HEADING, HEADING_ID, estimate_tokens

CODE_CUT_MARKER = "[… code block cut here: get_doc(url) has all of it]"
TEXT_CUT_MARKER = " […]"
UNIT_PROXIMITY = 0.5  # a window's best single unit counts again at this share: words together
WORD_CACHE = 512  # query words kept per page (their units), before the page's list starts again
SEED_SCAN = 16  # units a query word may be on and still pick where windows start
WINDOW_SEEDS = 2  # windows start at or just before the units that match best, this many per hit
HEADING_SHARE = 0.5  # the section heading's words count at this share when the window lacks them
# Which section of a page answers (a page hit): BM25 over the page's sections, a section's units
# its words (a word counted once a unit), its heading's words counted HEADING_TERMS times more.
SECTION_K1 = 1.2
SECTION_B = 0.75
HEADING_TERMS = 2.0
LEAD_SHARE = 0.3  # a page's lead (the text before its first section) sums it up: its score counts so much
# A query weighing options (QueryWords.choice): a section whose heading decides between them
# (ranker.search.decides: "How to choose", "Where NATS is the better choice") scores this much more.
CHOICE_SECTION_BOOST = 0.6
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
    _words: dict[str, tuple[float, frozenset[int]]] = field(default_factory=dict)  # word_units, kept
    _sections: tuple[dict[int, int], float, dict[str, list[int]]] | None = None  # section_shape, kept
    _word_parts: dict[str, dict[int, float]] = field(default_factory=dict)  # part_counts, kept

    def part_counts(self, word: str, roots: frozenset[str]) -> dict[int, float]:
        """Per part: how many of its units have the word, plus HEADING_TERMS when its heading
        has it; kept like word_units."""
        known = self._word_parts.get(word)
        if known is None:
            known = {}
            for unit in self.word_units(word, roots)[1]:
                number = self.part_of(unit)
                known[number] = known.get(number, 0.0) + 1.0
            headings = self.section_shape()[2]
            for number in {n for root in roots for n in headings.get(root, ())}:
                known[number] = known.get(number, 0.0) + HEADING_TERMS
            if len(self._word_parts) >= WORD_CACHE:
                self._word_parts.clear()
            self._word_parts[word] = known
        return known

    def section_shape(self) -> tuple[dict[int, int], float, dict[str, list[int]]]:
        """For section_scores: each part with text and its length in units, their mean length,
        and heading root -> the parts with text whose heading has it."""
        if self._sections is None:
            lengths = {n: part.end - part.start for n, part in enumerate(self.parts) if part.start < part.end}
            headings: dict[str, list[int]] = {}
            for number in lengths:
                for root in self.heading_roots[number]:
                    headings.setdefault(root, []).append(number)
            average = sum(lengths.values()) / len(lengths) if lengths else 0.0
            self._sections = (lengths, average, headings)
        return self._sections

    def word_units(self, word: str, roots: frozenset[str]) -> tuple[float, frozenset[int]]:
        """A query word's weight on this page (rarer among its units weighs more: log(1 + units /
        units with it)) and the units that have it; kept, as queries repeat their words."""
        known = self._words.get(word)
        if known is None:
            having = self.units_with(roots)
            weight = math.log(1 + len(self.units) / len(having)) if having else 0.0
            known = (weight, frozenset(having))
            if len(self._words) >= WORD_CACHE:
                self._words.clear()
            self._words[word] = known
        return known

    def part_named(self, url: str) -> int | None:
        """The number of the part whose URL is `url`, if any."""
        return next((number for number, part in enumerate(self.parts) if part.url == url), None)

    def part_of(self, unit: int) -> int:
        """The number of the part the unit belongs to."""
        return bisect.bisect_right(self.starts, unit) - 1

    def fitting_end(self, start: int, budget: int) -> int:
        """The furthest end such that units start..end-1 fit `budget` tokens (at least start)."""
        room = self.ends[start] + len(self.units[start].joiner) + budget * CHARS_PER_TOKEN
        return bisect.bisect_right(self.ends, room) - 1

    def tokens(self, start: int, end: int) -> int:
        """Tokens of units start..end-1 rendered together (the first one's joiner not counted)."""
        chars = self.ends[end] - self.ends[start] - len(self.units[start].joiner)
        return math.ceil(chars / CHARS_PER_TOKEN)

    def units_with(self, roots: Iterable[str]) -> set[int]:
        """The units that have any of these roots."""
        found: set[int] = set()
        for root in roots:
            found.update(self.postings.get(root, ()))
        return found


@dataclass(frozen=True)
class Known:
    """What the index knows of its words already, for the passages to read words as it does: their
    Snowball stems (InvertedIndex.stems, so that a page's known words are not stemmed again: the
    pure-Python stemmer was most of a cold page's preparing) and the feed's lemmas
    (InvertedIndex.lemmas: "found" -> "find", which no suffix rule reaches)."""

    stems: Mapping[str, str] = field(default_factory=dict)
    lemmas: Mapping[str, str] = field(default_factory=dict)

    def roots(self, word: str) -> frozenset[str]:
        return roots_of(word, self.lemmas, self.stems)


NOTHING_KNOWN = Known()


@dataclass(frozen=True)
class QueryWords:
    words: tuple[tuple[str, frozenset[str]], ...]  # (word, its roots), content words only
    choice: bool = False  # the query weighs options (the ranker's "choice" shape)

    @classmethod
    def of(cls, query: str, known: Known = NOTHING_KNOWN) -> QueryWords:
        terms = query_terms(query)
        content = [t for t in terms if t not in STOPWORDS] or terms
        words = tuple((t, known.roots(t)) for t in content)
        return cls(words, "choice" in query_shapes(query))


@dataclass(frozen=True)
class Passage:
    text: str
    url: str
    tokens: int
    basis: str
    cut: bool = False
    start: int = -1  # the first unit's index on its page: which window was shown (not in the dict)

    def as_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "text": self.text,
            "url": self.url,
            "tokens": self.tokens,
            "basis": self.basis,
        }
        if self.cut:
            data["cut"] = True
        return data


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


def prepare(
    sections: Sequence[SectionText],
    basis: str,
    page_header: bool = False,
    known: Known = NOTHING_KNOWN,
) -> PreparedPage:
    """The units of each section, in order, and the postings over them. `page_header`: the first
    section starts with the page's title and metadata lines, which are left out. `known`: the
    index's stems and lemmas (Known)."""

    def roots_in(text: str) -> set[str]:
        return {root for word in set(words(text)) for root in known.roots(word)}

    units: list[Unit] = []
    parts: list[Part] = []
    heading_roots: list[frozenset[str]] = []
    for number, section in enumerate(sections):
        found = segment(section.markdown, skip_page_header=page_header and number == 0)
        if found and found[0].kind == "heading" and section.heading:  # the section's own heading
            found = found[1:]
        parts.append(Part(section.url, section.heading, len(units), len(units) + len(found)))
        heading_roots.append(frozenset(roots_in(section.heading)))
        units.extend(found)
    postings: dict[str, list[int]] = {}
    ends = [0]
    for index, unit in enumerate(units):
        for root in roots_in(LINK_TARGET.sub("", unit.text)):
            postings.setdefault(root, []).append(index)
        ends.append(ends[-1] + len(unit.joiner) + len(unit.text))
    return PreparedPage(units, parts, postings, heading_roots, basis, ends, [part.start for part in parts])


# --- choosing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Matches:
    """The query's words on one page: each word's weight, its roots, and the units of the
    candidate parts that have it."""

    words: tuple[tuple[str, float, frozenset[str], frozenset[int]], ...]

    @classmethod
    def on(cls, page: PreparedPage, query: QueryWords, spans: Sequence[tuple[int, int]]) -> Matches:
        whole = list(spans) == [(0, len(page.units))]
        found = []
        for word, roots in query.words:
            weight, everywhere = page.word_units(word, roots)
            if whole:
                inside = everywhere
            else:
                units = sorted(everywhere)
                inside = frozenset(
                    unit
                    for start, end in spans
                    for unit in units[bisect.bisect_left(units, start) : bisect.bisect_left(units, end)]
                )
            found.append((word, weight, roots, inside))
        return cls(tuple(found))

    def worth(self, unit: int) -> float:
        """The weight of the query words the unit has."""
        return sum(weight for _word, weight, _roots, units in self.words if unit in units)

    def seeds(self, usable: Callable[[int], bool]) -> list[int]:
        """The WINDOW_SEEDS units that match best, looked for among the units that have a word
        found on at most SEED_SCAN of them (a word on every other line of a long page would make
        every line a candidate), else among the first SEED_SCAN units that have any."""
        rare = [units for _word, _weight, _roots, units in self.words if 0 < len(units) <= SEED_SCAN]
        if rare:
            candidates = set().union(*rare)
        else:
            candidates = set(sorted(set().union(*(units for *_rest, units in self.words)))[:SEED_SCAN])
        scored = [(self.worth(unit), -unit) for unit in candidates if usable(unit)]
        return [-unit for _worth, unit in heapq.nlargest(WINDOW_SEEDS, scored)]


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
    if parts is None and len(page.parts) > 1 and not prose_only and near is None:
        for number in rank_parts(page, query):  # the section that answers best, then the next
            passage = choose(page, query, budget, [number], skip=skip)
            if passage is not None:
                return passage
        return None
    chosen = list(parts) if parts is not None else list(range(len(page.parts)))
    if len(chosen) == 1 and not prose_only:  # a section that fits whole is its own passage
        part = page.parts[chosen[0]]
        if part.start < part.end and (part.url, part.start) not in skip:
            if page.tokens(part.start, part.end) <= budget:
                return render(page, part, part.start, part.end, budget)
    spans = [(page.parts[n].start, page.parts[n].end) for n in chosen] if parts else [(0, len(page.units))]
    matches = Matches.on(page, query, spans)
    order = {number: place for place, number in enumerate(parts)} if parts else None  # else page order

    def usable(index: int) -> bool:
        return not (prose_only and page.units[index].kind == "code")

    seeds = matches.seeds(usable)
    if not seeds:  # nothing matches: the start of the first part with text
        first = (i for n in chosen for i in range(page.parts[n].start, page.parts[n].end) if usable(i))
        seeds = [next(first, -1)]
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
            end = max(start + 1, min(page.fitting_end(start, budget), part.end))
            if prose_only:
                end = next((i for i in range(start + 1, end) if not usable(i)), end)
            score, lead = _score(page, matches, number, start, end, near)
            key = (score, -lead, -(order[number] if order else number), start, end)
            if best is None or key[:3] > best[:3]:
                best = key
    if best is None:
        return None
    start, end = best[3], best[4]
    return render(page, page.parts[page.part_of(start)], start, end, budget)


def rank_parts(page: PreparedPage, query: QueryWords) -> list[int]:
    """The page's sections with text, best answer first (section_scores, the lead's at LEAD_SHARE
    when the page has sections: it mentions what they answer; for a query weighing options, a
    section that decides between them x(1 + CHOICE_SECTION_BOOST)); ties in page order."""
    scores = section_scores(page, query)
    if len(scores) > 1 and not page.parts[0].heading and 0 in scores:
        scores[0] *= LEAD_SHARE
    if query.choice:
        for number in scores:
            if decides(page.parts[number].heading):
                scores[number] *= 1 + CHOICE_SECTION_BOOST
    return sorted(scores, key=lambda n: (-scores[n], n))


def section_scores(page: PreparedPage, query: QueryWords) -> dict[int, float]:
    """Per section with text: BM25 over the page's sections (SECTION_K1, SECTION_B; a word's
    rarity among the sections as its IDF), a section's units its words (a word counted once a
    unit) and its heading's words counted as HEADING_TERMS units more. 0 for no word matched."""
    lengths, average, _headings = page.section_shape()
    if not lengths:
        return {}
    scores = dict.fromkeys(lengths, 0.0)
    for word, roots in query.words:
        counts = page.part_counts(word, roots)
        having = [n for n in counts if n in scores]
        if not having:
            continue
        idf = math.log(1 + (len(lengths) - len(having) + 0.5) / (len(having) + 0.5))
        for number in having:
            tf = counts[number]
            norm = SECTION_K1 * (1 - SECTION_B + SECTION_B * lengths[number] / average)
            scores[number] += idf * tf * (SECTION_K1 + 1) / (tf + norm)
    return scores


def _score(
    page: PreparedPage, matches: Matches, part: int, start: int, end: int, near: int | None
) -> tuple[float, int]:
    """The window's score and how many units precede its first match. The score: the query
    words it covers, each by its weight; its best unit again at UNIT_PROXIMITY; the words it
    lacks that its section heading has, at HEADING_SHARE; for an example, nearness to its block."""
    score = 0.0
    best_unit = 0.0
    lead = end - start
    per_unit = [0.0] * (end - start)
    heading = page.heading_roots[part]
    for _word, weight, roots, units in matches.words:
        covered = False
        for index in range(start, end):
            if index in units:
                per_unit[index - start] += weight
                covered = True
                lead = min(lead, index - start)
        if covered:
            score += weight
        elif heading and heading & roots:
            score += HEADING_SHARE * weight
    best_unit = max(per_unit)
    score += UNIT_PROXIMITY * best_unit
    if near is not None:  # an example's block: the prose beside it first
        distance = min(abs(near - start), abs(near - (end - 1)))
        score += 1.0 / (1 + distance)
    return score, (0 if lead == end - start else lead)


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

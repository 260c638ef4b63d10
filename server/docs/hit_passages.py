"""The `passage` of each search_docs and find_examples hit: where its text comes from, and the budgets.

    PassageOptions                the tools' arguments: passages on or off, passageTokens per hit,
                                  maxTokens over the reply's passages together
    PassageSource                 one corpus's text, each page prepared once and kept while the
                                  corpus answers: all of them by a warm-up that source_for starts
                                  (on the event loop, a page a turn; on stdio a pause after
                                  each, pace_warm_up), or a page on first use if a
                                  query comes first; for a hit's page, in order:
                                    markdown  the page's markdown as the corpus was built with it
                                              (the snapshot's: every llms-full.txt page, and with
                                              --pages every page, the API pages too), cut
                                              at the site's own section ranges (search-sections.json,
                                              kept in the snapshot), each checked to start at a
                                              heading as get_doc checks them
                                    prose     else the corpus's prose of the page (search-text.json:
                                              words without markup, code flattened into the text;
                                              an API symbol's summary and doc comment, Document.doc)
                                    summary   else the hit's own description (an API symbol
                                              whose page had no prose beyond it)
    add_search_passages(...)      each hit's passage in rank order until maxTokens is spent, and
                                  `passageBudget` on the reply (what was used, what was left out)
    add_example_passages(...)     find_examples: the prose of each block's section, the sentences
                                  beside the block first; the code itself is the hit's `code`

Live and offline alike: the markdown is read with the feeds (llms-full.txt is one of them), never
fetched per query. Which words to show is passages.py's choice (pure text logic).
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from imqueue_mcp.ranker.results import searched_text
from imqueue_mcp.server.docs.budget import FENCE, estimate_tokens
from imqueue_mcp.server.docs.corpus_keeper import LoadedCorpus
from imqueue_mcp.server.docs.passage_text import (
    Known,
    Passage,
    PreparedPage,
    QueryWords,
    SectionText,
    choose,
    prepare,
)
from imqueue_mcp.server.docs.read import heading_of
from imqueue_mcp.server.docs.sizes import prose_sections, symbol_doc_texts

logger = logging.getLogger(__name__)

DEFAULT_PASSAGE_TOKENS = 120
DEFAULT_REPLY_TOKENS = 1500
MIN_PASSAGE_TOKENS = 20  # less than this left of maxTokens: the remaining hits carry none
MAX_PASSAGE_TOKENS = 2000
MAX_REPLY_TOKENS = 20_000
SUMMARY_CACHE = 4096  # hits' descriptions prepared as their text (the API symbols of a default build)
# The warm-up's pause between two pages on the event loop (pace_warm_up). 0, a page every turn,
# suits the hosted endpoint: many calls in flight, and each turn of its loop moves all of them on.
# The stdio server has one client whose call crosses a dozen turns (the stdin thread, the session's
# streams, the handler, stdout), each of which waited for a page of 1-30 ms: the second call after a
# cold start took 390 ms, the first answer after initialize 110-160 ms. With STDIO_WARM_PAUSE
# between pages the loop idles there and a call's turns come first (16-26 ms and 67-103 ms); the
# warm-up takes its 0.7 s of work over about 6 s instead.
STDIO_WARM_PAUSE = 0.005
_warm_pause = 0.0


@dataclass(frozen=True)
class PassageOptions:
    enabled: bool = True
    per_hit: int = DEFAULT_PASSAGE_TOKENS
    total: int = DEFAULT_REPLY_TOKENS


class PassageSource:
    """The text passages are cut from, for one loaded corpus. Every page with text is prepared
    once and kept while the corpus answers (at most one entry per page of the corpus);
    `start_warming()` prepares them all ahead of the queries, so that a query pays for preparing
    a page only when it arrives before the warm-up has reached it. On the event loop that answers
    the queries the warm-up takes one page a turn: a query waits for one page at most (a thread
    measured worse: it and the queries took turns at the interpreter lock in 5 ms slices)."""

    def __init__(self, corpus: LoadedCorpus) -> None:
        self.corpus = corpus
        # page URL -> its prepared text, None when the corpus has none. Without an event loop the
        # warm-up runs in a thread: one dict assignment each (atomic), and a page prepared twice
        # is the same page, so either copy serves.
        self._pages: dict[str, PreparedPage | None] = {}
        self._summaries: OrderedDict[str, PreparedPage] = OrderedDict()  # the SUMMARY_CACHE used last
        self._prose: dict[str, list[SectionText]] | None = None
        self.warmed = threading.Event()  # set once every page is prepared (or the warm-up retired)
        self.warm_seconds: float | None = None  # how long the warm-up took, once it has
        self.retired = False  # another corpus answers now: a warm-up still running stops
        self._warming: asyncio.Task[None] | threading.Thread | None = None
        inverted = corpus.index.inverted
        self.known = Known(inverted.stems, inverted.lemmas)  # for prepare() and QueryWords

    def page(self, page_url: str) -> PreparedPage | None:
        """The page prepared for passages (markdown, else prose), or None when the corpus has neither."""
        try:
            return self._pages[page_url]
        except KeyError:
            prepared = self._pages[page_url] = self._prepare(page_url)
            return prepared

    def summary(self, url: str, description: str) -> PreparedPage | None:
        """A hit's own description prepared as its only text, kept like a page."""
        if url in self._summaries:
            self._summaries.move_to_end(url)
            return self._summaries[url]
        if not description:
            return None
        prepared = prepare([SectionText(url, "", description)], "summary", known=self.known)
        self._summaries[url] = prepared
        if len(self._summaries) > SUMMARY_CACHE:
            self._summaries.popitem(last=False)
        return prepared

    def start_warming(self) -> None:
        """Start the warm-up unless it is done or under way: a task of the running event loop,
        else (no loop: a script, a test) a daemon thread. A warm-up cut short (its loop closed)
        starts again at the next call, past the pages already prepared."""
        if self.warmed.is_set() or (self._warming is not None and not _finished(self._warming)):
            return
        try:
            self._warming = asyncio.get_running_loop().create_task(self.warm_in_turns())
        except RuntimeError:
            self._warming = threading.Thread(target=self.warm, name="passages-warm-up", daemon=True)
            self._warming.start()

    async def warm_in_turns(self) -> None:
        """The warm-up on the event loop: one page a turn, the queries' turns in between, and the
        pause pace_warm_up set after each page."""
        for _ in self._warm_up():
            await asyncio.sleep(_warm_pause)

    def warm(self) -> None:
        """The warm-up in one go (in a thread, or by a caller that wants every page now)."""
        for _ in self._warm_up():
            time.sleep(0)  # a thread lets a waiting query have the interpreter between pages

    def _warm_up(self) -> Iterator[None]:
        """Prepare every page the corpus has text of, yielding after each; stops once retired.
        Sets `warm_seconds`, then `warmed`, when it ends (not when it is abandoned mid-way)."""
        started = time.perf_counter()
        try:
            for page_url in self.pages_with_text():
                if self.retired:
                    break
                self.page(page_url)
                yield
        except Exception:  # a page that cannot be prepared fails its queries the same way: say so here
            logger.exception("preparing the passages' pages failed; each page is prepared when asked")
        self.warm_seconds = time.perf_counter() - started
        self.warmed.set()

    async def wait_warm(self, seconds: float) -> bool:
        """Wait, letting the event loop run, until the warm-up has ended or `seconds` passed."""
        deadline = time.monotonic() + seconds
        while not self.warmed.is_set() and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        return self.warmed.is_set()

    def prepared(self) -> set[str]:
        """The page URLs prepared so far (those found to have no text too)."""
        return set(self._pages)  # one C-level copy: the warm-up's writes never interleave with it

    def pages_with_text(self) -> list[str]:
        """Every page URL whose passages come from its markdown or its prose."""
        return list(dict.fromkeys([*self.corpus.markdown, *self.prose()]))

    def _prepare(self, page_url: str) -> PreparedPage | None:
        markdown = self.corpus.markdown.get(page_url)
        if markdown is not None:
            markdown = _bounded(markdown)
            host, _, path = page_url.removeprefix("https://").partition("/")
            ranges = self.corpus.sections.get(host, {}).get("/" + path)
            sections = markdown_sections(page_url, markdown, ranges)
            return prepare(sections, "markdown", page_header=True, known=self.known)
        prose = self.prose().get(page_url)
        return prepare(prose, "prose", known=self.known) if prose else None

    def prose(self) -> dict[str, list[SectionText]]:
        """Page URL -> its tier-2 prose sections, the text before the first anchor first."""
        if self._prose is None:
            pages: dict[str, list[SectionText]] = {}
            for url, heading, text in prose_sections(self.corpus.index.corpus.documents):
                sections = pages.setdefault(url.split("#", 1)[0], [])
                section = SectionText(url, heading, text)
                sections.insert(0, section) if "#" not in url else sections.append(section)
            for url, text in symbol_doc_texts(self.corpus.index.corpus.documents):
                pages.setdefault(url, [SectionText(url, "", text)])
            self._prose = pages
        return self._prose


MAX_PAGE_CHARS = 200_000  # the most of one page passages are cut from: the docs' longest is under 100 kB


def _bounded(markdown: str) -> str:
    """At most MAX_PAGE_CHARS of a page, cut at a line: preparing a page happens on the event loop
    between queries, and a 10 MB page (a hostile or broken snapshot) held /healthz for 3.6 s."""
    if len(markdown) <= MAX_PAGE_CHARS:
        return markdown
    cut = markdown.rfind("\n", 0, MAX_PAGE_CHARS)
    return markdown[: cut if cut > 0 else MAX_PAGE_CHARS]


def markdown_sections(page_url: str, markdown: str, ranges: dict[str, list[int]] | None) -> list[SectionText]:
    """The page cut at its anchored sections: the text before the first, then each section from its
    heading line to where the next begins. A range that does not start at a heading (the site's
    ranges count the lines of another rendering of some pages) is looked for by its anchor
    instead: the heading whose slug (or `{#id}`) is the anchor. One found neither way, or that
    overlaps the one before, is not trusted (as get_doc's slice_section), and its lines stay with
    the section above."""
    lines = markdown.split("\n")
    by_slug = heading_lines(lines)
    spans: list[tuple[int, int, str, str]] = []
    candidates: list[tuple[int, int, str]] = []
    for anchor, span in (ranges or {}).items():
        if not isinstance(span, list) or len(span) != 2 or not 0 <= span[0] < span[1]:
            continue
        start, end = span[0], min(span[1], len(lines))
        if start >= len(lines) or heading_of(lines[start]) is None:
            found = by_slug.get(anchor)
            if found is None:
                continue
            start, end = found, found + 1
        candidates.append((start, end, anchor))
    for start, end, anchor in sorted(candidates):
        heading = heading_of(lines[start])
        if heading is None or (spans and start < spans[-1][1]):
            continue
        spans.append((start, end, anchor, heading[1]))
    first = spans[0][0] if spans else len(lines)
    sections = [SectionText(page_url, "", "\n".join(lines[:first]))]
    for place, (start, end, anchor, title) in enumerate(spans):
        stop = spans[place + 1][0] if place + 1 < len(spans) else max(end, len(lines))
        sections.append(SectionText(f"{page_url}#{anchor}", title, "\n".join(lines[start:stop])))
    return sections


_SLUG_GAP = re.compile(r"[^a-z0-9]+")
_EXPLICIT_ID = re.compile(r"\{#([^}\s]+)\}[ \t]*$")


def heading_slug(title: str) -> str:
    """'Migration from 2.x to 3.x' -> 'migration-from-2-x-to-3-x': the anchor a heading gets."""
    return _SLUG_GAP.sub("-", title.replace("`", "").lower()).strip("-")


def heading_lines(lines: list[str]) -> dict[str, int]:
    """Anchor -> the line of the first heading (outside code blocks) that carries it: its
    `{#id}`, else its slug."""
    found: dict[str, int] = {}
    fence: str | None = None
    for number, line in enumerate(lines):
        opening = FENCE.match(line)
        if opening:
            token = opening.group(1)
            if fence is None:
                fence = token
            elif token[0] == fence[0] and len(token) >= len(fence) and not line.strip().strip(token[0]):
                fence = None
            continue
        if fence is not None or not line.startswith("#"):
            continue
        heading = heading_of(line)
        if heading is None:
            continue
        explicit = _EXPLICIT_ID.search(line)
        found.setdefault(explicit.group(1) if explicit else heading_slug(heading[1]), number)
    return found


_sources: tuple[LoadedCorpus, PassageSource] | None = None


def pace_warm_up(pause: float) -> None:
    """The pause between two pages of every warm-up on an event loop from now on, in seconds: the
    stdio server's STDIO_WARM_PAUSE; 0 (the default) a page every turn."""
    global _warm_pause
    _warm_pause = pause


def source_for(corpus: LoadedCorpus) -> PassageSource:
    """The PassageSource of the corpus answering now (one at a time, as answer_cache keeps), its
    warm-up started (start_warming); the one it replaces stops warming."""
    global _sources
    if _sources is None or _sources[0] is not corpus:
        if _sources is not None:
            _sources[1].retired = True
        _sources = (corpus, PassageSource(corpus))
    _sources[1].start_warming()
    return _sources[1]


def _finished(warming: asyncio.Task[None] | threading.Thread) -> bool:
    return warming.done() if isinstance(warming, asyncio.Task) else not warming.is_alive()


# --- search_docs -----------------------------------------------------------------------------


def hit_passage(
    source: PassageSource, hit: dict[str, Any], words: QueryWords, budget: int, shown: set[tuple[str, int]]
) -> Passage | None:
    """The passage of one search hit: from its own section for an anchored hit, from the best
    section of its page for a page or an API symbol; a window shown for an earlier hit of the
    same page is not shown again."""
    page_url, _, anchor = hit["url"].partition("#")
    page = source.page(page_url)
    if page is None:  # the hit's own description: whole when it fits, as it nearly always does
        description = hit.get("description", "")
        if description and estimate_tokens(description) <= budget:
            return Passage(description, hit["url"], estimate_tokens(description), "summary")
        page = source.summary(hit["url"], description)
    if page is None:
        return None
    part = page.part_named(hit["url"]) if anchor else None
    passage = choose(page, words, budget, parts=None if part is None else [part], skip=frozenset(shown))
    if passage is not None:
        shown.add((passage.url, passage.start))
    return passage


def add_search_passages(
    data: dict[str, Any], source: PassageSource, query: str, options: PassageOptions
) -> None:
    """Each hit's `passage`, best hit first, at most options.per_hit tokens each and options.total
    in all; `passageBudget` says what they used and how many hits the budget left without one."""
    words = QueryWords.of(searched_text(data, query), source.known)
    _spend(data, options, lambda hit, budget, shown: hit_passage(source, hit, words, budget, shown))


PassageOf = Callable[[dict[str, Any], int, set[tuple[str, int]]], Passage | None]


def _spend(data: dict[str, Any], options: PassageOptions, passage_of: PassageOf) -> None:
    """Give each hit, in order, passage_of(hit, its budget, the windows shown so far) while
    maxTokens lasts; then the reply's passageBudget."""
    left, used, omitted = options.total, 0, 0
    shown: set[tuple[str, int]] = set()
    for hit in data["results"]:
        budget = min(options.per_hit, left)
        if budget < MIN_PASSAGE_TOKENS:
            omitted += 1
            continue
        passage = passage_of(hit, budget, shown)
        if passage is None:
            continue
        hit["passage"] = passage.as_dict()
        left -= passage.tokens
        used += passage.tokens
    data["passageBudget"] = {
        "tokens": used,
        "maxTokens": options.total,
        "passageTokens": options.per_hit,
        "omitted": omitted,
    }


# --- find_examples ---------------------------------------------------------------------------


def example_passage(
    source: PassageSource, hit: dict[str, Any], words: QueryWords, budget: int, shown: set[tuple[str, int]]
) -> Passage | None:
    """The prose of an example's section that best answers the query, the sentences beside its
    block preferred; its lead (the paragraph before the block) when the page's text is not there."""
    page_url = hit["url"].partition("#")[0]
    page = source.page(page_url)
    part = page.part_named(hit["url"]) if page is not None else None
    if page is None or part is None:
        if not hit.get("lead"):
            return None
        page, part = prepare([SectionText(hit["url"], "", hit["lead"])], "summary", known=source.known), 0
    near = block_place(page, part, hit["code"])
    passage = choose(page, words, budget, parts=[part], near=near, prose_only=True, skip=frozenset(shown))
    if passage is not None:
        shown.add((passage.url, passage.start))
    return passage


def block_place(page: PreparedPage, part: int, code: str) -> int | None:
    """The unit index of the code block whose body is `code` (or starts so: a long block's code is
    cut), in the page's part `part`."""
    wanted = " ".join(code.split())
    span = page.parts[part]
    for index in range(span.start, span.end):
        unit = page.units[index]
        if unit.kind == "code" and " ".join(_fenced_body(unit.text).split()).startswith(wanted):
            return index
    return None


def _fenced_body(block: str) -> str:
    lines = block.split("\n")
    return "\n".join(
        lines[1:-1] if len(lines) > 1 and lines[-1].strip().startswith(("```", "~~~")) else lines[1:]
    )


def add_example_passages(
    data: dict[str, Any], source: PassageSource, query: str, options: PassageOptions
) -> None:
    """find_examples' hits, each with the prose around its block; the budgets as search_docs'."""
    words = QueryWords.of(query, source.known)
    _spend(data, options, lambda hit, budget, shown: example_passage(source, hit, words, budget, shown))


def passage_lines(passage: dict[str, Any], indent: str = "   ") -> list[str]:
    """A passage in the text reply: where it is from and its size, then its text, indented."""
    lines = [f"{indent}Passage ({passage['tokens']} tokens) from {passage['url']}:"]
    lines += [f"{indent}{line}" if line else "" for line in passage["text"].split("\n")]
    return lines

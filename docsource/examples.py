"""Code examples: the fenced code blocks of the docs' markdown, each with the section it sits in.

Where the markdown comes from, in order of preference:

    the pages sidecar (`--pages`)   every page's index.md: the guides and the API pages
    each host's /llms-full.txt      every hand-written doc page, concatenated (always read)

A page is cut at its headings; a heading is matched, in page order, to the prose section the
tier-2 feed (search-text.json) gives that page, which names its anchor and carries its words.
A block keeps: its language (the fence's info word), its code (the fence's indentation
removed), the paragraph just before it (`lead`), the page title, the section heading, anchor
and words, and the packages it concerns: the one the page documents (its `Package:` line,
with the version) first, then every @imqueue package the code names (imports, installs).

Skipped on purpose: an API page's `**Signature:**` block (the symbol's declaration, which
search_docs already finds as the symbol) and diagrams (mermaid), which are not code.

`example_corpus` turns the examples into a ranker.Corpus, one Document per block, so that the
same ranker ranks them: heading as title, page title as label, lead as summary, section
prose as text, and the code itself as emphasis (identifiers are split into their segments by
the ranker's own tokenizer, so `RedisQueue.send` is found by "redis queue send").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from imqueue_mcp.ranker.corpus import SITES, Corpus, Document

# Exactly these fence languages are left out (see the module docstring).
SKIPPED_LANGUAGES = frozenset({"mermaid"})
LANGUAGE_NAMES = {"ts": "typescript", "js": "javascript", "sh": "bash", "shell": "bash", "yml": "yaml"}
SIGNATURE_LEAD = "**Signature:**"

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`\s]*)")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_EXPLICIT_ANCHOR = re.compile(r"\s*\{#([\w-]+)\}\s*$")
_PACKAGE_LINE = re.compile(r"^Package: (@imqueue/[a-z0-9][\w.-]*)(?: (v?\d[\w.+-]*))?")
_SOURCE_LINE = re.compile(r"^Source: (https://imqueue\.(?:org|com)/\S*)\s*$")
_NAMED_PACKAGE = re.compile(r"@imqueue/[a-z0-9][a-z0-9-]*")
_MARKUP = re.compile(r"\[([^\]]*)\]\([^)]*\)|[`*_]")


@dataclass(frozen=True, slots=True)
class Section:
    """One prose section of a page as the tier-2 feed gives it."""

    anchor: str
    heading: str
    text: str


@dataclass(frozen=True, slots=True)
class Example:
    id: str  # "/get-started/#1-install-the-cli~1": page, anchor, 1-based place among the section's blocks
    site: str  # "org" | "com"
    page: str  # "/get-started/"
    anchor: str  # "" before the page's first anchored heading
    title: str  # the page title
    heading: str  # the section heading ("" before the first)
    language: str  # "typescript", "bash", ... ("" when the fence names none)
    code: str
    lead: str = ""  # the paragraph just before the block
    context: str = ""  # the section's prose
    packages: tuple[str, ...] = ()  # the documented package first, then those the code names
    version: str = ""  # the version of packages[0] the page documents, when its Package: line says

    @property
    def url(self) -> str:
        """The canonical anchor URL of the block's section."""
        return SITES[self.site] + self.page + (f"#{self.anchor}" if self.anchor else "")

    def to_wire(self) -> list[Any]:
        return [getattr(self, name) if name != "packages" else list(self.packages) for name in EXAMPLE_FIELDS]

    @classmethod
    def from_wire(cls, row: Sequence[Any]) -> Example:
        values = dict(zip(EXAMPLE_FIELDS, row, strict=True))
        values["packages"] = tuple(values["packages"])
        return cls(**values)


EXAMPLE_FIELDS = tuple(Example.__dataclass_fields__)


def heading_key(text: str) -> str:
    """A heading compared as plain words: markup, punctuation and case dropped."""
    plain = _MARKUP.sub(lambda m: m.group(1) or "", _EXPLICIT_ANCHOR.sub("", text))
    return " ".join(re.findall(r"[a-z0-9]+", plain.lower()))


def page_sections(documents: Iterable[Document]) -> dict[tuple[str, str], list[Section]]:
    """(site, page path) -> its prose sections in feed order, from the corpus's tier-2 records."""
    found: dict[tuple[str, str], list[Section]] = {}
    summaries: dict[tuple[str, str], str] = {}
    for doc in documents:
        page, _, anchor = doc.path.partition("#")
        if doc.tier == "section":
            found.setdefault((doc.site, page), []).append(Section(anchor, doc.heading, doc.text))
        elif not anchor and doc.summary:
            summaries[(doc.site, page if page.endswith("/") else page + "/")] = doc.summary
    for key, summary in summaries.items():  # a page without intro prose: its summary stands in
        if not any(not s.anchor for s in found.get(key, ())):
            found.setdefault(key, []).insert(0, Section("", "", summary))
    return found


def extract_examples(markdown: str, site: str, page: str, sections: Sequence[Section] = ()) -> list[Example]:
    """Every fenced code block of one page's markdown, in page order."""
    lines = markdown.splitlines()
    title = ""
    documented, version = "", ""
    remaining = list(sections)
    intro = next((s for s in sections if not s.anchor), None)
    anchor, heading, context = "", "", intro.text if intro else ""
    paragraph: list[str] = []
    lead = ""
    subheading = ""  # the latest heading the feed does not anchor, since the last one it does
    ordinal: dict[str, int] = {}
    examples: list[Example] = []
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        fence = _FENCE.match(line)
        if fence:
            body, number = _fenced_body(lines, number, fence.group("fence"), len(fence.group("indent")))
            lead = " ".join(paragraph) or lead
            paragraph = []
            language = fence.group("info").lower()
            language = LANGUAGE_NAMES.get(language, language)
            if not body.strip() or language in SKIPPED_LANGUAGES or lead == SIGNATURE_LEAD:
                continue
            ordinal[anchor] = ordinal.get(anchor, 0) + 1
            named = [p for p in dict.fromkeys(_NAMED_PACKAGE.findall(body)) if p != documented]
            examples.append(
                Example(
                    id=f"{page}#{anchor}~{ordinal[anchor]}",
                    site=site,
                    page=page,
                    anchor=anchor,
                    title=title,
                    heading=heading,
                    language=language,
                    code=body,
                    lead=f"{subheading}: {lead}" if subheading and lead else subheading or lead,
                    context=context,
                    packages=tuple([documented] if documented else []) + tuple(named),
                    version=version,
                )
            )
            continue
        stripped = line.strip()
        found = _HEADING.match(stripped)
        if found:
            paragraph, lead, subheading = [], "", ""
            if len(found.group(1)) == 1 and not title:
                title = _EXPLICIT_ANCHOR.sub("", found.group(2))
                continue
            section = _match_section(found.group(2), remaining)
            if section is not None:
                remaining = remaining[remaining.index(section) + 1 :]
                anchor, heading, context = section.anchor, section.heading, section.text
            else:  # a heading the feed does not anchor: it still describes the blocks under it
                subheading = _MARKUP.sub(lambda m: m.group(1) or "", _EXPLICIT_ANCHOR.sub("", found.group(2)))
                heading = heading if anchor else subheading
            continue
        package = _PACKAGE_LINE.match(stripped)
        if package and not documented:
            documented, version = package.group(1), package.group(2) or ""
            continue
        if not stripped:
            if paragraph:
                lead, paragraph = " ".join(paragraph), []
            continue
        if not _SOURCE_LINE.match(stripped):
            paragraph.append(stripped)
    return examples


def _fenced_body(lines: Sequence[str], start: int, fence: str, indent: int) -> tuple[str, int]:
    """The block's code (its indentation removed) and the line number after its closing fence.
    An unclosed fence runs to the end of the page, as CommonMark reads it."""
    closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
    body: list[str] = []
    number = start
    while number < len(lines):
        line = lines[number]
        number += 1
        if closing.match(line):
            break
        cut = len(line) - len(line.lstrip(" \t"))
        body.append(line[min(cut, indent) :])
    return "\n".join(body).strip("\n"), number


def _match_section(heading: str, remaining: Sequence[Section]) -> Section | None:
    explicit = _EXPLICIT_ANCHOR.search(heading)
    key = heading_key(heading)
    for section in remaining:
        if not section.anchor:
            continue
        if (explicit and section.anchor == explicit.group(1)) or heading_key(section.heading) == key:
            return section
    return None


def split_llms_full(text: str) -> dict[str, str]:
    """/llms-full.txt -> canonical page URL -> that page's markdown (its `# Title` line first).
    A page starts at a `# ` line followed, within three lines, by its `Source:` line."""
    lines = text.splitlines()
    starts: list[tuple[int, str]] = []
    for number, line in enumerate(lines):
        if not line.startswith("# "):
            continue
        for following in lines[number + 1 : number + 4]:
            source = _SOURCE_LINE.match(following.strip())
            if source:
                starts.append((number, source.group(1)))
                break
    pages: dict[str, str] = {}
    for place, (start, url) in enumerate(starts):
        end = starts[place + 1][0] if place + 1 < len(starts) else len(lines)
        body = lines[start:end]
        while body and body[-1].strip() in ("", "---"):
            body.pop()
        pages.setdefault(url.split("#", 1)[0], "\n".join(body) + "\n")
    return pages


def collect_examples(markdown_by_url: Mapping[str, str], documents: Iterable[Document]) -> list[Example]:
    """The examples of every page (canonical URL -> markdown), sorted by page URL."""
    sections = page_sections(documents)
    origins = {origin: site for site, origin in SITES.items()}
    examples: list[Example] = []
    for url in sorted(markdown_by_url):
        origin, path = _split_url(url)
        site = origins.get(origin)
        if site is None:
            continue
        page = path if path.endswith("/") else path + "/"
        examples += extract_examples(markdown_by_url[url], site, page, sections.get((site, page), ()))
    return examples


def _split_url(url: str) -> tuple[str, str]:
    scheme, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}", slash + path


def example_document(example: Example) -> Document:
    """One example as a ranker record: its id is the record's path, so a hit finds its example."""
    return Document(
        path=example.id,
        site=example.site,
        tier="section",
        title=example.heading or example.title,
        kind=example.language,
        summary=example.lead,
        package=example.packages[0] if example.packages else "",
        section=example.title,
        parent=example.page,
        text=example.context,
        emphasis=example.code,
    )


def example_corpus(examples: Sequence[Example], lemmas: Mapping[str, str]) -> Corpus:
    """The examples as a ranker corpus, with the docs corpus's lemma map."""
    return Corpus(documents=[example_document(e) for e in examples], lemmas=dict(lemmas))

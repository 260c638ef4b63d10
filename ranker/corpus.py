"""The corpus the ranker reads: plain records, built by build_index, never fetched here.

A `Document` is one searchable record of either site. Its `tier` says where it came from:

    page     a tier-1 page record (g=0)            /intro/
    symbol   a tier-1 API symbol (g=1)             /api/core/latest/core.redisqueue/
    answer   a tier-1 question-shaped answer (g=2) /api/faq/#how-do-i-...
    section  a tier-2 prose section of a page      /blog/x/#why-http-struggles-under-load

A symbol's `doc` is the prose of its reference page beyond the one-line summary (remarks,
returns, exceptions, defaults: what the symbol does, in the words a question uses), which the
builder reads from the page itself; no feed carries it.

`parent` groups records for the per-parent cap (a class for its members, a page for its
answers and sections); `member` is the bare member name for the per-name cap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, overload

SITES = {"org": "https://imqueue.org", "com": "https://imqueue.com"}
TIERS = ("page", "symbol", "answer", "section")


@dataclass(frozen=True, slots=True)
class Document:
    path: str  # root-relative URL as the feeds give it, `#anchor` kept
    site: str  # "org" | "com"
    tier: str  # one of TIERS
    title: str
    kind: str = ""
    summary: str = ""
    keywords: str = ""
    package: str = ""  # "@imqueue/rpc" for symbols
    section: str = ""  # the label shown to agents (llms.txt section, package, parent page)
    parent: str = ""
    member: str = ""
    heading: str = ""  # a prose section's own heading
    text: str = ""  # prose (tier 2)
    emphasis: str = ""  # emphasised phrases of the prose
    curated: str = ""  # the llms.txt description, when the page is listed there
    topics: tuple[str, ...] = ()
    date: str = ""
    deprecated: bool = False
    doc: str = ""  # a symbol's doc comment: its reference page's prose (remarks, returns, ...)
    # a list of other pages' summaries (a blog topic's page, a package's member tables), not an
    # answer of its own: the builder marks it (docsource.listings), the ranker demotes it
    listing: bool = False

    @property
    def url(self) -> str:
        """The canonical absolute URL agents see, whatever origin served the feed."""
        return SITES[self.site] + self.path

    @property
    def external(self) -> bool:
        return self.site == "com"

    @property
    def is_blog(self) -> bool:
        return self.path.startswith("/blog/")

    def to_wire(self) -> list[Any]:
        return [getattr(self, name) if name != "topics" else list(self.topics) for name in WIRE_FIELDS]

    @classmethod
    def from_wire(cls, row: list[Any]) -> Document:
        values = dict(zip(WIRE_FIELDS, row, strict=True))
        values["topics"] = tuple(values["topics"])
        return cls(**values)


WIRE_FIELDS = tuple(Document.__dataclass_fields__)


class LazyDocuments(Sequence[Document]):
    """Documents decoded from their wire rows on first access: loading a snapshot stays cheap,
    and a query only pays for the records it touches."""

    def __init__(self, rows: list[list[Any]]) -> None:
        self._rows = rows
        self._docs: list[Document | None] = [None] * len(rows)

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> Document: ...
    @overload
    def __getitem__(self, index: slice) -> list[Document]: ...
    def __getitem__(self, index: int | slice) -> Document | list[Document]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        doc = self._docs[index]
        if doc is None:
            doc = self._docs[index] = Document.from_wire(self._rows[index])
        return doc

    def wire_rows(self) -> list[list[Any]]:
        return self._rows


@dataclass(slots=True)
class Corpus:
    """Everything the ranker needs: the documents, the feed's lemma map, the section names."""

    documents: Sequence[Document]
    lemmas: dict[str, str] = field(default_factory=dict)
    section_names: list[str] = field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        return {
            "documents": (
                self.documents.wire_rows()
                if isinstance(self.documents, LazyDocuments)
                else [d.to_wire() for d in self.documents]
            ),
            "lemmas": self.lemmas,
            "section_names": self.section_names,
        }

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Corpus:
        return cls(
            documents=LazyDocuments(data["documents"]),
            lemmas=dict(data["lemmas"]),
            section_names=list(data["section_names"]),
        )

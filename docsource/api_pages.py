"""The docs' API reference as data: what the latest release of a package documents, symbol by symbol.

Pure: no I/O. Two sources, both the sites' own:

    documented_symbols(documents, package)   the corpus's tier-1 API records of one package (the
                                             search feed's `g: 1` rows): name, kind, page URL,
                                             summary, deprecated; one per symbol
    page_signature(markdown)                 an API page's `**Signature:**` block (the declaration
                                             as the docs' release has it), whitespace collapsed
    page_release(markdown)                   the page's `Package: @imqueue/rpc 3.7.2` line's version
    page_doc_comment(markdown, summary)      the page's prose beyond the summary: what the symbol
                                             does, for the ranker (Document.doc)

Names follow the installed declarations' index (server/project/api_index.py): members dotted
(`IMQClientOptions.timeout`); the reference's `IMQClient.(constructor)` and `ICache.(new)` are
`IMQClient.constructor`, as a declaration's constructor is named there.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass

from imqueue_mcp.ranker.corpus import Document

SIGNATURE_LEAD = "**Signature:**"
_SIGNATURE = re.compile(r"\*\*Signature:\*\*\s*\n\s*(`{3,}|~{3,})[^\n]*\n(?P<code>.*?)\n\s*\1", re.S)
_RELEASE = re.compile(r"^Package: (@imqueue/[a-z0-9][\w.-]*) v?(\d[\w.+-]*)", re.M)
_CONSTRUCTOR = re.compile(r"\.\((?:constructor|new)\)$")
# Records of these kinds describe the package itself, not a symbol in it.
NOT_SYMBOLS = frozenset({"package"})


@dataclass(frozen=True)
class DocumentedSymbol:
    name: str  # dotted for members, as the installed index names them
    kind: str  # the reference's: class, interface, function, type, variable, method, property, ...
    url: str  # the symbol's API page, canonical
    summary: str
    deprecated: bool
    signature: str | None = None  # from its page (each overload's on a line), when the pages were read
    # the pages of the name's other overloads (PgPubSub.on has on_1 ... on_9), in the feed's order
    overloads: tuple[str, ...] = ()


def symbol_name(title: str) -> str:
    """`IMQClient.(constructor)` -> `IMQClient.constructor`; other titles as they are."""
    return _CONSTRUCTOR.sub(".constructor", title.strip())


def documented_symbols(documents: Iterable[Document], package: str) -> dict[str, DocumentedSymbol]:
    """The API records of `package` ('@imqueue/rpc'), by name: the first record of a name stands for
    it, the others (an overloaded method's pages) are its `overloads`."""
    found: dict[str, DocumentedSymbol] = {}
    for doc in documents:
        if doc.tier != "symbol" or doc.package != package or doc.kind in NOT_SYMBOLS:
            continue
        name = symbol_name(doc.title)
        first = found.get(name)
        if first is None:
            found[name] = DocumentedSymbol(name, doc.kind, doc.url, doc.summary, doc.deprecated)
        elif doc.url != first.url and doc.url not in first.overloads:
            found[name] = dataclasses.replace(first, overloads=(*first.overloads, doc.url))
    return found


def page_signature(markdown: str) -> str | None:
    """The declaration in an API page's `**Signature:**` block, one line; None without one."""
    match = _SIGNATURE.search(markdown)
    if match is None:
        return None
    return " ".join(match["code"].split()).rstrip(";").strip() or None


def page_release(markdown: str) -> str | None:
    """'3.7.2' from the page's `Package: @imqueue/rpc 3.7.2 — ...` line; None without one."""
    match = _RELEASE.search(markdown)
    return match.group(2) if match else None


# The sections of a reference page that list other symbols (a class's members, a package's
# exports), each with its own page and doc comment, or show code: left out of the doc comment.
LISTING_SECTIONS = frozenset(
    {
        "constructors",
        "properties",
        "methods",
        "events",
        "enumeration members",
        "classes",
        "abstract classes",
        "interfaces",
        "functions",
        "variables",
        "type aliases",
        "enumerations",
        "namespaces",
    }
)
_HEADER_LINE = re.compile(r"^(?:# |Source: |Published: |Updated: |Author: |Package: )")
_FIELD_LINE = re.compile(r"^\*\*(?:Signature|Extends|Implements|References):\*\*")
_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")
_MARKUP = re.compile(r"[*`]|\\(?=[{}_\[\]])")


def page_doc_comment(markdown: str, summary: str = "") -> str:
    """The prose of an API reference page that its one-line summary does not already say: the
    description's further paragraphs, Remarks, Returns, Exceptions, Default Value, an Example's
    words. Left out: the page header, code (fenced blocks), tables, the Signature/Extends lines,
    section headings (a default value reads bare: labelling it moved the labels' nested CV by a
    query), and sections that list other symbols (LISTING_SECTIONS). Link targets go, their words
    stay. The summary is left out where the page writes it as the feed does; one the page writes
    with links or code marks stays (about half):
    the ranking's weights were fitted so, and leaving those out too measured questions-dev P@1
    76.6 -> 75.3 (75.9 with SYMBOL_SUMMARY_WEIGHT refitted), keeping every one 75.7."""
    kept: list[str] = []
    fence = ""
    listing = False
    for line in markdown.splitlines():
        stripped = line.strip()
        if fence:
            fence = "" if stripped.startswith(fence) else fence
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if line.startswith("#"):
            listing = line.lstrip("#").strip().lower() in LISTING_SECTIONS
            continue
        if listing or _HEADER_LINE.match(line) or _FIELD_LINE.match(stripped) or stripped.startswith("|"):
            continue
        kept.append(stripped)
    text = " ".join(" ".join(kept).split())
    if summary and text.startswith(summary):
        text = text[len(summary) :].lstrip()
    return _MARKUP.sub("", _LINK_TARGET.sub("]", text)).replace("[", "").replace("]", "")

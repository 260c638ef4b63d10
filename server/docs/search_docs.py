"""search_docs: the ranker's answer as the tool's structured result and its text.

Ranking is the ranker's alone: this module calls `ranker.Index.search` (the same function
`imq-search` calls; through answer_cache, which reuses an answer while its index answers) and
restates no rule. It adds what an agent needs around the ranking: what a pasted error code means
(diagnose: ECONNREFUSED, ERESOLVE, ...), the exclusive-pair advisory when a result concerns one
side of a pair (advisory_packages; as a sentence and as `advisories` records), each hit's passage
(hit_passages.py: the part of its section that best answers the query, within the token
budgets), the miss guidance and the corrected query spelled out, a "Weak match" line when even
the best hit is low (ranker.confidence), and which corpus answered (live, or a snapshot and its
date). The result itself is the ranker's one shape (ranker.response_dict), the same dict
`imq-search --json` prints.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping
from typing import Any

from imqueue_mcp.ranker import Index, response_dict
from imqueue_mcp.ranker.results import searched_text
from imqueue_mcp.ranker.text import RAW_TOKEN, STOPWORDS, inflection_roots, words
from imqueue_mcp.server.catalogue.packages import (
    EXCLUSIVE_PAIRS,
    SCOPE,
    ExclusivePair,
    api_page_package,
    exclusive_pair_advisories,
    exclusive_pair_advisory,
)
from imqueue_mcp.server.docs.answer_cache import AnswerCache, ReplyCache
from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper, LoadedCorpus
from imqueue_mcp.server.docs.diagnose import diagnose
from imqueue_mcp.server.docs.hit_passages import (
    PassageOptions,
    add_search_passages,
    passage_lines,
    source_for,
)
from imqueue_mcp.server.docs.sizes import DocSizes

_WORD = re.compile(r"[@\w./-]+")
# search_docs' query bound: it also takes what a failing command printed, pasted whole; the ranker
# searches its message lines (ranker.pasted), at most MAX_SEARCHED_CHARACTERS of them.
PASTE_CHARACTERS = 8000
PAIR_SHARE = 0.5  # a pair's members more than this share of the results: its need is the subject
NEED_WORD_SHARE = 0.5  # a need's word is the pair's when more of the records using it name a member
_NEEDS: weakref.WeakKeyDictionary[Index, dict[str, frozenset[str]]] = weakref.WeakKeyDictionary()


async def search_docs(
    keeper: CorpusKeeper,
    query: str,
    limit: int,
    package: str | None,
    sizes: DocSizes | None = None,
    passages: PassageOptions | None = None,
    answers: AnswerCache | None = None,
    replies: ReplyCache | None = None,
) -> dict[str, Any]:
    """The search_docs structured result (see schemas.SearchResult). ValueError for a bad filter.
    With `sizes`, each hit carries the tokens get_doc would return for it (sizes.py); with
    `passages` (enabled), the part of its section that best answers the query (hit_passages.py);
    with `answers` (the server's, in Services), a repeated question is not ranked again; with
    `replies`, a repeated call returns the reply made for the same arguments, corpus and sizes
    (shared: not to be changed)."""
    corpus = await keeper.current()
    key = (query, limit, package, passages, None if sizes is None else sizes.version)
    if replies is not None:
        kept = replies.get(corpus, key)
        if kept is not None:
            return kept
    data = _reply(corpus, query, limit, package, sizes, passages, answers)
    if replies is not None:
        replies.put(corpus, key, data)
    return data


def _reply(
    corpus: LoadedCorpus,
    query: str,
    limit: int,
    package: str | None,
    sizes: DocSizes | None,
    passages: PassageOptions | None,
    answers: AnswerCache | None,
) -> dict[str, Any]:
    if answers is not None:
        response = answers.search(corpus.index, query, limit, package)
    else:
        response = corpus.index.search(query, limit=limit, package=package)
    data = response_dict(response)
    if sizes is not None:
        for result in data["results"]:
            size = sizes.tokens_of(result["url"], corpus.index.corpus.documents)
            if size is not None:
                result["tokens"], result["tokensBasis"] = size
    if passages is not None and passages.enabled:
        add_search_passages(data, source_for(corpus), query, passages)
    named = advisory_packages(searched_text(data, query), data["results"], need_roots(corpus.index))
    advisory = exclusive_pair_advisory(named)
    if advisory:
        data["advisory"] = advisory
        data["advisories"] = exclusive_pair_advisories(named)
    diagnoses = diagnose(query)
    if diagnoses:
        data["diagnosis"] = [diagnosis.to_dict() for diagnosis in diagnoses]
    data["corpus"] = corpus.describe()
    return data


def advisory_packages(
    query: str, results: list[dict[str, Any]], needs: Mapping[str, frozenset[str]] | None = None
) -> list[str]:
    """The packages an exclusive-pair advisory may speak about: those a result concerns, when the
    pair is what the query is about.

    A result concerns a package when it is that package's API page or symbol. The subject is the
    pair's when the answer is about one of its members (the best result, a high-confidence one,
    or a member the query itself names), or when the query asks for the pair's need: the pair's
    members make up more than PAIR_SHARE of the results (`tracing` brings a blog post, then
    datadog's and opentelemetry's symbols), or the query shares a word with the need (`trace`
    and "distributed tracing") and a result concerns a member, or names one in its title or
    description (an FAQ on registering OpenTelemetry). Tail hits on one member (datadog's
    IMQClientPlugin, two of six under a question about IMQClient's constructor) do not make
    tracing the subject. With `needs` (need_roots: per pair, the roots of the need's own words),
    a word the need shares with everything else (PostgreSQL, distributed) asks for nothing."""
    asked = {_canonical(word) for word in _WORD.findall(query)}
    roots = _need_roots(query)
    named: list[str] = []
    concerning: dict[str, str] = {}  # canonical member -> the name a result gave it
    hits: dict[str, int] = {}  # canonical package -> results concerning it
    for rank, result in enumerate(results):
        concerned = result.get("package") or api_page_package(str(result.get("url", "")))
        if concerned is None:
            continue
        canonical = _canonical(concerned)
        concerning.setdefault(canonical, concerned)
        hits[canonical] = hits.get(canonical, 0) + 1
        if rank == 0 or result.get("confidence") == "high" or canonical in asked:
            named.append(concerned)
    for pair in EXCLUSIVE_PAIRS:
        reached = [member for member in pair.members if member in concerning]
        share = sum(hits.get(member, 0) for member in pair.members) / max(len(results), 1)
        need = roots & (_need_roots(pair.need) if needs is None else needs.get(pair.need, frozenset()))
        asks_need = bool(need)
        if reached and (share > PAIR_SHARE or asks_need):
            named.extend(concerning[member] for member in reached if concerning[member] not in named)
        elif asks_need:
            # No result is a member's API page, but one speaks of a member (an FAQ on registering
            # OpenTelemetry, a tutorial's service on pg-sequelize) and the query asks the need
            spoken = [member for member in pair.members if _spoken_of(member, results)]
            named.extend(member for member in spoken if member not in named)
    return named


def _spoken_of(member: str, results: list[dict[str, Any]]) -> bool:
    """A result's title or description names the member: as a package, by a retired name, or by
    the product it wraps (`@imqueue/pg-prisma`: Prisma)."""
    said = _MEMBER_SAID[member]
    return any(said.search(f"{r.get('title', '')} {r.get('description', '')}") for r in results)


def need_roots(index: Index) -> dict[str, frozenset[str]]:
    """Per exclusive pair (keyed by its need), the inflection roots of the need's own words: those
    most records using them also name a member (over NEED_WORD_SHARE: "ORM" and "tracing", not
    "PostgreSQL" or "distributed", which half the docs use for other things). Worked out once per
    index, from its postings."""
    known = _NEEDS.get(index)
    if known is None:
        known = {}
        for pair in EXCLUSIVE_PAIRS:
            names = {name for member in pair.members for name in _MEMBER_NAMES[member]}
            naming = frozenset().union(*(index.records_using(name, False) for name in names))
            own: set[str] = set()
            for word in RAW_TOKEN.findall(pair.need.lower()):  # PostgreSQL whole, not its segment "sql"
                using = index.records_using(word) if word not in STOPWORDS else frozenset()
                if using and len(using & naming) > NEED_WORD_SHARE * len(using):
                    own.update(inflection_roots(word))
            known[pair.need] = frozenset(own)
        _NEEDS[index] = known
    return known


def _member_names(pair: ExclusivePair, member: str) -> set[str]:
    """The words a text names a member by: the package's short name, its joined form (pgprisma),
    the product it wraps (prisma), and the same of its retired names (dd-trace, ddtrace)."""
    names = {
        name.removeprefix(SCOPE)
        for name in (member, *(old for old, new in pair.aliases.items() if new == member))
    }
    return {form for name in names for form in (name, name.replace("-", ""), name.removeprefix("pg-"))}


# Made once: advisory_packages reads them on every search_docs call that asks a pair's need.
_MEMBER_NAMES = {member: _member_names(pair, member) for pair in EXCLUSIVE_PAIRS for member in pair.members}
_MEMBER_SAID = {
    member: re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, sorted(names))) + r")(?![\w-])", re.I)
    for member, names in _MEMBER_NAMES.items()
}


def _need_roots(text: str) -> frozenset[str]:
    """The inflection roots of a text's content words (the ranker's words and stopwords)."""
    return frozenset(root for word in words(text) if word not in STOPWORDS for root in inflection_roots(word))


def _canonical(name: str) -> str:
    """A package or query word as a scoped name, retired names followed (pair aliases)."""
    scoped = name.lower() if name.lower().startswith(SCOPE) else SCOPE + name.lower()
    for pair in EXCLUSIVE_PAIRS:
        scoped = pair.aliases.get(scoped, scoped)
    return scoped


def render_search_text(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for diagnosis in data.get("diagnosis", []):
        lines.append(f"{diagnosis['code']}: {diagnosis['explanation']}")
        lines.append("   Read: " + " ".join(diagnosis["urls"]))
    if lines:
        lines.append("")
    if data.get("searched"):
        lines.append(
            f'Searched the pasted output\'s message lines: "{data["searched"]}" (stack frames, '
            "markers and file locations left out)."
        )
    if data.get("corrected"):
        lines.append(
            f'Searched for "{data["corrected"]}" (corrected from "{data.get("searched") or data["query"]}").'
        )
    if data["results"]:
        lines.append(f'{data["count"]} result(s) for "{searched_text(data, data["query"])}", best first:')
        for number, result in enumerate(data["results"], 1):
            label = result["label"]
            where = f"; {result['section']}" if result["section"] and result["section"] not in label else ""
            lines.append(f"{number}. {result['title']} ({label}{where}; {result['confidence']} confidence)")
            lines.append(f"   {result['url']}")
            if result["description"]:
                lines.append(f"   {result['description']}")
            if result.get("passage"):
                lines.extend(passage_lines(result["passage"]))
        if data["weak"]:
            lines.append(
                "Weak match: even the best result matches this query poorly; the docs may not cover it. "
                "Say so rather than rely on these, or search again with other words."
            )
        if data.get("passageBudget", {}).get("omitted"):
            budget = data["passageBudget"]
            spent = f"maxTokens ({budget['maxTokens']}) was spent"
            lines.append(f"{budget['omitted']} result(s) carry no passage: {spent}.")
        if any(result.get("passage") for result in data["results"]):
            lines.append(
                "A passage is the part of its section that best matches the query, not the whole of it: "
                "read the section with get_doc(url) before relying on it, and cite its URL."
            )
        else:
            lines.append("Read a result with get_doc(url) before relying on it, and cite its URL.")
    else:
        lines.append(f'No results for "{searched_text(data, data["query"])}".')
    miss = data.get("miss")
    if miss:
        lines.append(
            "This is a miss on these words, not proof the topic is undocumented. The corpus covers: "
            + "; ".join(miss["sections"])
            + "."
        )
        if miss["nearestTerms"]:
            lines.append(
                "Nearest indexed terms: " + ", ".join(miss["nearestTerms"]) + ". Search again with them."
            )
    if data.get("advisory"):
        lines.append("")
        lines.append("Advisory: " + data["advisory"])
        for record in data.get("advisories", []):
            lines.append(f"Install the default of {' / '.join(record['pair'])}: {record['install']}")
    lines.append("")
    lines.append(corpus_line(data["corpus"]))
    return "\n".join(lines) + "\n"


def corpus_line(corpus: dict[str, str]) -> str:
    if corpus["source"] == "live":
        line = f"Corpus: the live sites, read {corpus['fetchedAt']}."
    else:
        # where it is comes last, in brackets: the hosted redaction reads "(the server's snapshot)"
        line = f"Corpus: a snapshot built {corpus['fetchedAt']} ({corpus['from']})."
    if corpus.get("note"):
        line += f" Note: {corpus['note']}."
    return line

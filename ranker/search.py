"""Query -> ranked hits: term weights, per-record scores, multipliers, caps, and guidance on a miss.

plan_query      terms, their forms and IDF; template words weighed down, typos corrected when
                nothing else matches; mark_coverage picks the terms coverage counts
score_records   discriminating terms find records, the rest only add to them: sum over terms
                of idf^p x saturated evidence
search          x coverage^c x the record's fixed factor (tier, blog, deprecation) x phrase,
                answer and symbol-name boosts; sort; then cap
cap             relative floor, per-parent / per-member / per-package caps over one list
                (imqueue.org and imqueue.com records compete on score)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from . import dense, rules
from .confidence import Confidence, confidence_of, coverage_needed, low_score
from .corpus import Document
from .index import Form, InvertedIndex, document_fields, field_weight, phrase_key, record_multiplier
from .pasted import Distilled, searched
from .text import RAW_TOKEN, STOPWORDS, query_terms, segment_identifier, token_compounds, token_terms, words

PACKAGE_PREFIX = re.compile(r"(?:^|\s)pkg:(\S+)")


@dataclass(frozen=True)
class TermPlan:
    term: str
    idf: float
    weight: float  # idf ** IDF_POWER (x STOPWORD_WEIGHT for a template word)
    forms: tuple[Form, ...]
    template: bool = False  # a stopword among other words: weighed down, not counted in coverage
    reach: int = 0  # how many records any form reaches
    covers: bool = True  # counts toward coverage: a discriminating term (see mark_coverage)
    # the term's part of the written token it comes from: 1 for a word, (1/n)^TOKEN_TERMS_POWER
    # for each of the n terms of an identifier (whole, joined, pieces, segments); in the weight
    share: float = 1.0

    @property
    def mass(self) -> float:
        """What the term counts for in coverage: its idf, times its share of its token."""
        return self.idf * self.share


@dataclass
class QueryPlan:
    query: str
    terms: list[TermPlan]
    package: str | None
    corrected: str | None = None  # the query as rewritten by typo correction, when it was
    # subject words the corpus has no form of at all (kafka on a site that never says it), each
    # with the idf of a word in no record: the part of the question the docs cannot answer
    unknown: dict[str, float] = field(default_factory=dict)
    # those of them the query writes as a proper name (Dapr, Grafana): what the question is about
    named_unknown: tuple[str, ...] = ()
    # the unknown words' idf before their token shares (`unknown` holds it after): confidence reads it
    unknown_idf: dict[str, float] = field(default_factory=dict)

    @property
    def total_weight(self) -> float:
        return sum(t.mass for t in self.terms if t.covers)

    @functools.cached_property
    def full_weight(self) -> float:
        """What the covering terms weigh, their token shares aside (the scale confidence reads a
        score on, Ranking.kept): the query's weight for CONFIDENCE_LOW_PER_WEIGHT."""
        return sum(t.weight / t.share for t in self.terms if t.covers)


@dataclass
class Hit:
    url: str
    path: str
    title: str
    section: str
    description: str
    kind: str
    tier: str
    symbol: bool
    external: bool
    score: float
    package: str | None
    confidence: Confidence = "medium"  # ranker.confidence: high / medium / low
    # the share of the query's idf mass this record matches, subject words no record has counted
    # in (ranker.confidence reads it beside the score)
    coverage: float = 1.0
    explanation: list[str] = field(default_factory=list)
    deprecated: bool = False  # the feed marks the record deprecated (it is also demoted)


@dataclass
class Guidance:
    """What a miss returns: the corpus's section names and the indexed words nearest the query."""

    sections: list[str]
    nearest_terms: list[str]


@dataclass
class SearchResponse:
    query: str
    results: list[Hit]
    miss: Guidance | None = None
    corrected: str | None = None
    notes: list[str] = field(default_factory=list)  # query-level explain lines
    named_unknown: tuple[str, ...] = ()  # QueryPlan.named_unknown: the hits needed more coverage
    # the text searched when it is not the query: a pasted output reduced to its message lines, or
    # a long query cut at MAX_SEARCHED_CHARACTERS (ranker.pasted)
    searched: str | None = None

    @property
    def weak(self) -> bool:
        """Even the best hit is a weak match (low confidence): say so to whoever reads it."""
        return bool(self.results) and self.results[0].confidence == "low"


PACKAGE_SCOPE = "@imqueue/"


def normalize_package(name: str) -> str:
    """'rpc', '@imqueue/rpc' and ' RPC ' all become '@imqueue/rpc'; anything else is a ValueError.

    The one package-name rule of the project: the catalogue and the search filter both use it.
    """
    text = name.strip().lower()
    if text.startswith(PACKAGE_SCOPE):
        text = text[len(PACKAGE_SCOPE) :]
    if not text:
        raise ValueError(
            f"{name!r} is not an @imqueue package name: it is empty; pass e.g. 'rpc' or '@imqueue/rpc'."
        )
    if "/" in text or text.startswith("@") or any(char.isspace() for char in text):
        raise ValueError(f"{name!r} is not an @imqueue package name; pass e.g. 'rpc' or '@imqueue/rpc'.")
    return PACKAGE_SCOPE + text


def plan_query(index: InvertedIndex, query: str, package: str | None) -> QueryPlan:
    match = PACKAGE_PREFIX.search(query)
    if match and package is None:
        package = match.group(1)
        query = PACKAGE_PREFIX.sub(" ", query)
    plans: list[TermPlan] = []
    corrections: dict[str, str] = {}
    unknown: dict[str, float] = {}
    unknown_idf: dict[str, float] = {}
    terms = query_terms(query)
    compounds = compound_terms(query)
    spelled: set[str] | None = None  # made only when a term reaches nothing
    shares = token_shares(query)
    has_content = any(t not in STOPWORDS for t in terms)
    typos = rules.MAX_TYPO_TERMS  # typo searches left (the rules' note)
    for term in terms:
        forms, df = index.term_forms(term, allow_typo=False)
        if not forms and typos and term not in compounds:
            typos -= 1
            forms, df = index.term_forms(term, allow_typo=True)
        if forms and forms[0].kind == "typo":
            corrections[term] = forms[0].word
        if not forms:
            if spelled is None:
                spelled = spelled_compounds(index, query)
            if term not in STOPWORDS and term not in spelled:
                unknown_idf[term] = index.idf(0)
                unknown[term] = unknown_idf[term] * shares.get(term, 1.0)
            continue
        idf = index.idf(df)
        template = has_content and term in STOPWORDS
        share = shares.get(term, 1.0)
        weight = idf**rules.IDF_POWER * (rules.STOPWORD_WEIGHT if template else 1.0) * share
        plans.append(TermPlan(term, idf, weight, tuple(forms), template, df, share=share))
    corrected = None
    if corrections:
        rewritten = " ".join(corrections.get(w, w) for w in query.lower().split())
        corrected = rewritten if rewritten != query.lower().strip() else None
    return QueryPlan(
        query,
        mark_coverage(index, plans),
        normalize_package(package) if package else None,
        corrected,
        unknown,
        tuple(term for term in unknown if written_as_name(query, term)),
        unknown_idf,
    )


SENTENCE_START = frozenset(".?!:;—–-(\"'`")


def written_as_name(query: str, term: str) -> bool:
    """The query writes `term` as a proper name somewhere: capitalised with lower case after
    (Dapr, Grafana, ESLint), not where a sentence starts, and not a code token (ECONNRESET,
    ERR_X, TS1241: an error, which the docs may answer without naming it)."""
    for match in re.finditer(rf"(?<![\w-]){re.escape(term)}(?![\w-])", query, re.IGNORECASE):
        word = match.group()
        before = query[: match.start()].rstrip()
        if word[0].isupper() and before and before[-1] not in SENTENCE_START and not is_code_token(word):
            return True
    return False


def mark_coverage(index: InvertedIndex, plans: list[TermPlan]) -> list[TermPlan]:
    """Which terms coverage counts: the discriminating ones. Template words never do, and a term
    in most records (imqueue: the whole corpus is about it) not when rarer terms are there."""
    common = max(rules.COMMON_TERM_SHARE * index.size, rules.COMMON_TERM_MIN)
    content = [p for p in plans if not p.template]
    discriminating = [p for p in content if p.reach <= common]
    covering = {p.term for p in (discriminating or content or plans)}
    # a plan is made covering: only the ones that do not cover are copied
    return [p if p.term in covering else dataclasses.replace(p, covers=False) for p in plans]


def compound_terms(query: str) -> set[str]:
    """The query's terms that are never typo-corrected: whole identifiers (watcherChekcDelay,
    nestjs.microservices), and every term of a code-like token (ERESOLVE, ECONNREFUSED, TS1241,
    ERR_STREAM): one written in capitals only, or with a digit or an underscore, names an error
    code or a constant, which a dictionary word one edit away never means."""
    out: set[str] = set()
    for match in RAW_TOKEN.finditer(query):
        raw = match.group()
        out.update(token_terms(raw) if is_code_token(raw) else token_compounds(raw))
    return out


def token_shares(query: str) -> dict[str, float]:
    """Each term's share of the written token it comes from, for the terms of a token that
    yields several (RedisQueue.send: redisqueue.send, redisqueuesend, redisqueue, send, redis,
    queue): (1/n)^TOKEN_TERMS_POWER each, so an identifier weighs about as one word of the
    question, not six. A term the query also writes as a word of its own keeps its whole weight;
    one in two tokens takes the larger share. Terms of one-term tokens are not listed (share 1), and
    a query of identifiers alone (RedisQueue safeDeliveryTtl) is all names: no share applies."""
    if not rules.TOKEN_TERMS_POWER:
        return {}
    alone: set[str] = set()
    shares: dict[str, float] = {}
    for match in RAW_TOKEN.finditer(query):
        terms = set(token_terms(match.group()))
        if len(terms) == 1:
            alone.update(terms)
            continue
        share = (1 / len(terms)) ** rules.TOKEN_TERMS_POWER
        for term in terms:
            shares[term] = max(shares.get(term, 0.0), share)
    if not alone - STOPWORDS:
        return {}
    return {term: share for term, share in shares.items() if term not in alone}


SEPARATOR = re.compile(r"[._\-/]")


def spelled_compounds(index: InvertedIndex, query: str) -> set[str]:
    """The query's compound terms written with separators (report-rebuild, client.getUser,
    10.0.0.300) whose every segment the corpus holds: a way of writing words the docs have, so a
    compound no record holds is not a subject the docs lack (QueryPlan.unknown), which would count
    its idf mass against every hit's coverage once per way of writing it. A name in one piece
    (ESLint, not es + lint) stays a name."""
    out: set[str] = set()
    for match in RAW_TOKEN.finditer(query):
        raw = match.group()
        compounds = token_compounds(raw)
        parts = segment_identifier(raw)
        if compounds and SEPARATOR.search(raw) and all(known_word(index, part) for part in parts):
            out.update(compounds)
    return out


def known_word(index: InvertedIndex, word: str) -> bool:
    return word in STOPWORDS or bool(index.term_forms(word, allow_typo=False)[0])


def is_code_token(raw: str) -> bool:
    letters = [char for char in raw if char.isalpha()]
    shouting = len(letters) >= 2 and all(char.isupper() for char in letters)
    return shouting or "_" in raw or any(char.isdigit() for char in raw)


IDENTIFIER_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def identifier_names(query: str) -> set[str]:
    """The words of the query written as code names (an inner capital with lower case beside it:
    RedisQueue, safeDeliveryTtl, IMQClient; or an underscore), lowercased as the symbol-name
    table keys them: a plain word that happens to be a name (logger, lock, cache) names nothing."""
    return {
        phrase_key(word).replace(" ", "")
        for word in IDENTIFIER_WORD.findall(query)
        if "_" in word.strip("_") or (any(c.isupper() for c in word[1:]) and any(c.islower() for c in word))
    }


def named_symbols(index: InvertedIndex, query: str, tokens: list[str]) -> set[str]:
    """The symbol names a short query (under LONG_COVERAGE_TERMS content words: a lookup) names:
    those it writes as code, and plain words the corpus uses only in symbol records (promisify),
    never a plain word its prose uses too (logger, lock, cache)."""
    if content_words(query) >= rules.LONG_COVERAGE_TERMS:
        return set()
    documents = index.documents
    names = identifier_names(query)
    for token in set(tokens) - names:
        if token in index.symbol_names and all(
            documents[doc_id].tier == "symbol" for doc_id in index.row(token)[0]
        ):
            names.add(token)
    return names


def content_words(query: str) -> int:
    """How many words the query has as written, template words aside: an identifier
    (RedisQueue.send, @imqueue/pg-prisma) is one word, however many segments it splits into."""
    return sum(1 for match in RAW_TOKEN.finditer(query) if match.group().lower() not in STOPWORDS)


def is_question(query: str) -> bool:
    tokens = phrase_key(query).split()
    return query.rstrip().endswith("?") or (
        len(tokens) >= rules.QUESTION_MIN_WORDS and tokens[0] in rules.QUESTION_WORDS
    )


def query_shapes(query: str) -> list[str]:
    """The query's shapes: "symptom" when it describes one (rules.SYMPTOM_WORDS, SYMPTOM_PHRASES),
    "choice" when it weighs options (rules.CHOICE_WORDS, CHOICE_PHRASES)."""
    padded = f" {phrase_key(query)} "
    shapes = []
    if says(padded, rules.SYMPTOM_WORDS, rules.SYMPTOM_PHRASES):
        shapes.append("symptom")
    if says(padded, rules.CHOICE_WORDS, rules.CHOICE_PHRASES):
        shapes.append("choice")
    return shapes


def decides(heading: str) -> bool:
    """A section heading written to decide between options ("How to choose", "Quick comparison",
    "Where NATS is the better choice"; rules.DECISION_WORDS, DECISION_PHRASES), not "VS Code"."""
    padded = f" {phrase_key(heading)} "
    for phrase in rules.NOT_DECISION_PHRASES:
        padded = padded.replace(f" {phrase} ", " ")
    return says(padded, rules.DECISION_WORDS, rules.DECISION_PHRASES)


def says(padded: str, words: frozenset[str], phrases: Iterable[str]) -> bool:
    """`padded` (phrase_key's words, a space either side) has one of the words or phrases."""
    return any(f" {w} " in padded for w in words) or any(f" {p} " in padded for p in phrases)


SHAPE_SUBJECTS = ("troubleshooting", "choice")  # what shape_boosts lifts, by on_subject


def on_subject(doc: Document, subject: str) -> bool:
    """Whether the record is on the subject: troubleshooting by its page (title, label or
    heading), choice by its own section heading (decides)."""
    if subject == "choice":
        return bool(doc.heading) and decides(doc.heading)
    about = f"{doc.title} {doc.section} {doc.heading}".lower()
    return subject == "troubleshooting" and any(mark in about for mark in rules.TROUBLESHOOTING_MARKS)


def subject_mask(index: InvertedIndex, subject: str) -> dense.Mask:
    """Per record, on_subject; made on the first query of that shape, kept on the index."""
    return record_mask(index, ("subject", subject), lambda doc: on_subject(doc, subject))


def record_mask(index: InvertedIndex, key: tuple[str, str], keep: Callable[[Document], bool]) -> dense.Mask:
    """A per-record membership vector, made once per index and key."""
    mask = index.record_masks.get(key)
    if mask is None:
        mask = index.record_masks[key] = dense.mask_of(keep(doc) for doc in index.documents)
    return mask


def shape_boosts(query: str) -> list[tuple[str, str, float]]:
    """(subject, rule name, boost) for each shape of the query whose boost is on: a symptom
    lifts troubleshooting records by SYMPTOM_BOOST, a choice the sections that decide by
    CHOICE_BOOST."""
    shapes = query_shapes(query)
    boosts = []
    if rules.SYMPTOM_BOOST and "symptom" in shapes:
        boosts.append(("troubleshooting", "SYMPTOM_BOOST", rules.SYMPTOM_BOOST))
    if rules.CHOICE_BOOST and "choice" in shapes:
        boosts.append(("choice", "CHOICE_BOOST", rules.CHOICE_BOOST))
    return boosts


def term_evidence(index: InvertedIndex, term: TermPlan) -> dict[int, tuple[float, Form]]:
    """Per record, the best form's weighted evidence for one term (forms never add up)."""
    best: dict[int, tuple[float, Form]] = {}
    for form in term.forms:
        ids, weights = index.row(form.word)
        for doc_id, weight in zip(ids, weights, strict=True):
            value = weight * form.weight
            current = best.get(doc_id)
            if current is None or current[0] < value:
                best[doc_id] = (value, form)
    return best


def saturate(evidence: float) -> float:
    k = rules.SATURATION
    return evidence * (k + 1) / (evidence + k)


def saturated_row(index: InvertedIndex, term: TermPlan) -> tuple[dense.Ids, dense.Floats]:
    """Per record, the saturated evidence of the term's best form; cached on the index, since it
    depends on the term alone (the query only scales it by the term's weight)."""
    cached = index.evidence_cache.get(term.forms)
    if cached is None:
        ids, evidence = dense.best_form_evidence(index, term.forms)
        cached = (ids, dense.saturate_vector(evidence))
        if len(index.evidence_cache) > 20_000:
            index.evidence_cache.clear()
        index.evidence_cache[term.forms] = cached
    return cached


@dataclasses.dataclass(frozen=True)
class Scored:
    """score_records' vectors: per record the summed evidence, the matched idf mass and whether
    a covering term found it; with few covering terms, which of them matched (a bit each, in
    plan order: `codes`) and their idfs, for dense.coverage_of_codes."""

    scores: dense.Floats
    matched_idf: dense.Floats
    found: dense.Mask
    codes: dense.Codes | None
    covering_idfs: list[float]


def score_records(index: InvertedIndex, plan: QueryPlan) -> Scored:
    """Sum the terms' weighted evidence per record (a vector over the corpus), with the idf mass
    each record matches and which records were found. Terms found in most records (imqueue) and
    template words only add to records that a discriminating term found, when there is one:
    alone they would list the whole corpus for nothing."""
    scores, matched_idf, found = dense.query_vectors(index.size)
    finders = [t for t in plan.terms if t.covers]
    codes = dense.code_vector(index.size) if len(finders) <= dense.MAX_CODED_TERMS else None
    for bit, term in enumerate(finders):
        add_term(index, term, scores, matched_idf, found, which=None if codes is None else (codes, 1 << bit))
    for term in plan.terms:
        if not term.covers:
            add_term(index, term, scores, matched_idf, found, only_found=True)
    return Scored(scores, matched_idf, found, codes, [t.mass for t in finders])


def add_term(
    index: InvertedIndex,
    term: TermPlan,
    scores: dense.Floats,
    matched_idf: dense.Floats,
    found: dense.Mask,
    only_found: bool = False,
    which: tuple[dense.Codes, int] | None = None,
) -> None:
    idf = term.mass if term.covers else None
    row = saturated_row(index, term)
    dense.add_weighted(scores, matched_idf, found, row, term.weight, idf, only_found, which)


def term_matches(index: InvertedIndex, plan: QueryPlan, doc_id: int) -> list[tuple[TermPlan, float, Form]]:
    """For --explain: which form of each term reached the record, and its evidence."""
    out = []
    for term in plan.terms:
        found = term_evidence(index, term).get(doc_id)
        if found:
            out.append((term, found[0], found[1]))
    return out


def package_mask(index: InvertedIndex, package: str) -> dense.Mask:
    """Which records belong to the package (in_package), per record; made once per package."""
    return record_mask(index, ("package", package), lambda doc: in_package(doc, package))


def in_package(doc: Document, package: str) -> bool:
    """A symbol of the package, a page of its reference (/api/<name>/), or of its own guide on
    imqueue.org (/cli/ for @imqueue/cli, /mcp/ for @imqueue/mcp: packages with no API reference)."""
    if doc.package:
        return doc.package.lower() == package
    short = package.split("/", 1)[1]
    return doc.path.startswith(f"/api/{short}/") or (doc.site == "org" and doc.path.startswith(f"/{short}/"))


def known_packages(index: InvertedIndex) -> list[str]:
    """What the package filter takes: every package a symbol belongs to, and each package the docs
    name (@imqueue/cli) that has a guide of its own on imqueue.org (/cli/); made once per index."""
    if index.filter_packages is None:
        guides = {
            doc.path.split("/")[1] for doc in index.documents if doc.site == "org" and doc.path.count("/") > 1
        }
        named = {f"@imqueue/{guide}" for guide in guides if index.document_frequency(f"imqueue/{guide}")}
        index.filter_packages = sorted({*index.packages, *named})
    return index.filter_packages


def search(
    index: InvertedIndex,
    query: str,
    limit: int = 6,
    package: str | None = None,
    explain: bool = False,
    sections: list[str] | None = None,
    parent_cap: int | None = None,
) -> SearchResponse:
    """The one search function: imq-search and the MCP server's search_docs both call it.
    Its steps: plan the query, score every record it finds, order them (coverage floor, caps),
    make the hits; --explain's account is built beside the score from what the steps computed."""
    if not query or not query.strip():
        return SearchResponse(query=query, results=[], miss=Guidance(list(sections or []), []))
    cap_notes: list[str] = []
    text = searched(query, rules.MAX_SEARCHED_CHARACTERS)
    plan, ranking, ordered = ranked(index, text.query, package, limit, cap_notes, parent_cap)
    hits = [hit_of(index, ranking, row, explain) for row in ordered]
    notes = [*query_notes(ranking), *cap_notes, *unknown_notes(ranking)] if explain else cap_notes
    if explain and text.changed:
        notes.insert(0, pasted_note(text))
    reduced = text.query if text.changed else None
    if hits:
        return SearchResponse(
            query,
            hits,
            corrected=plan.corrected,
            notes=notes,
            named_unknown=plan.named_unknown,
            searched=reduced,
        )
    guidance = Guidance(sections=list(sections or []), nearest_terms=nearest_terms(index, text.query))
    return SearchResponse(query, [], miss=guidance, corrected=plan.corrected, notes=notes, searched=reduced)


def pasted_note(text: Distilled) -> str:
    """--explain: what a pasted output's reduction left out and where a long query was cut
    (ranker.pasted)."""
    parts = [f"{text.dropped} stack-frame, marker or location line(s) left out"] if text.dropped else []
    if text.shortened:
        parts.append("paths without their folders up to node_modules or their :line:column")
    if text.cut:
        parts.append(f"cut to its first {rules.MAX_SEARCHED_CHARACTERS} characters (MAX_SEARCHED_CHARACTERS)")
    return f"searched {text.query!r} ({'; '.join(parts)})"


def ranked(
    index: InvertedIndex,
    query: str,
    package: str | None,
    limit: int,
    notes: list[str],
    parent_cap: int | None = None,
) -> tuple[QueryPlan, Ranking, list[Row]]:
    """The first `limit` rows of a (non-blank) query's ranked and capped list, with the plan and
    the ranking that scored them: what search() and brief() make their results of."""
    plan = checked_plan(index, query, package)
    ranking = rank(index, plan)
    return plan, ranking, order(index, ranking, limit, notes, parent_cap)[:limit]


@dataclass(frozen=True, slots=True)
class Brief:
    """A result as a batch line holds it: search()'s hit without what only a reader needs
    (title, description, passage), so 60 a line cost what they are worth."""

    path: str
    external: bool
    score: float
    confidence: Confidence


def brief(
    index: InvertedIndex, query: str, limit: int, package: str | None = None
) -> tuple[list[Brief], str | None]:
    """search()'s results for a non-blank query, each with only its path, site, score and
    confidence (the values hit_of gives, worked out for the whole list at once), and the
    typo-corrected query if one was made."""
    plan, ranking, ordered = ranked(
        index, searched(query, rules.MAX_SEARCHED_CHARACTERS).query, package, limit, []
    )
    if not ordered:
        return [], plan.corrected
    scores, ids, coverage, _capped = zip(*ordered, strict=True)
    table = dense.record_table(index)
    named = bool(plan.named_unknown)
    kept = ranking.kept
    covered = ranking.word_coverages(index, ids, coverage)
    return [
        Brief(
            table.path[doc_id],
            table.external[doc_id],
            score,
            confidence_of(score / kept, share, named, plan.full_weight),
        )
        for score, doc_id, share in zip(scores, ids, covered, strict=True)
    ], plan.corrected


def checked_plan(index: InvertedIndex, query: str, package: str | None) -> QueryPlan:
    """The query's plan; ValueError naming the choices when its package filter is not one."""
    plan = plan_query(index, query, package)
    if plan.package and plan.package not in (known := known_packages(index)):
        raise ValueError(
            f"unknown package {plan.package!r}; the filter takes one of: "
            + ", ".join(p.removeprefix("@imqueue/") for p in known)
        )
    return plan


@dataclass
class Ranking:
    """One query's scores over the records it found (`ids`, package-filtered), and what each
    factor contributed: what order() ranks, hit_of() reports and --explain reads."""

    plan: QueryPlan
    scored: Scored
    ids: dense.Ids
    covered: dense.Floats  # each record's share of the query's idf mass
    final: dense.Floats  # evidence x coverage x factors
    above: dense.Mask  # at or over the coverage floor
    floor: float
    boosts: dict[int, Boost]
    question: bool
    page_share: dense.Floats | None
    feedback: list[str]
    shaped: list[tuple[str, str, float]]
    _whole: tuple[dense.Floats, float] | None = field(default=None, repr=False)  # whole_idf's, once made

    @property
    def total(self) -> float:
        return self.plan.total_weight or 1.0

    @functools.cached_property
    def kept(self) -> float:
        """The share of the query's term weight the token shares leave (TOKEN_TERMS_POWER; 1 when
        no term is part of a longer token). Confidence reads a hit's score over it: the shares
        order the hits, but a question naming a symbol is not less answered for it."""
        full = sum(t.weight / t.share for t in self.plan.terms)
        return sum(t.weight for t in self.plan.terms) / full if full else 1.0

    def word_coverage(self, index: InvertedIndex, doc_id: int, coverage: float) -> float:
        """The hit's coverage as confidence reads it: of the query's idf mass at full weight, the
        token shares aside (as Ranking.kept for the score), words no record holds counted in."""
        if self.kept == 1.0:
            return coverage * self.known
        matched, full = self.whole_idf(index)
        return float(matched[doc_id]) / full if full else 1.0

    def word_coverages(
        self, index: InvertedIndex, ids: Sequence[int], coverage: Sequence[float]
    ) -> list[float]:
        """word_coverage of each of a list of hits, at once."""
        if self.kept == 1.0:
            known = self.known
            return [c * known for c in coverage]
        matched, full = self.whole_idf(index)
        if not full:
            return [1.0] * len(ids)
        return (matched[list(ids)] / full).tolist()  # type: ignore[no-any-return]

    def whole_idf(self, index: InvertedIndex) -> tuple[dense.Floats, float]:
        """Per record, the covering terms' whole idf it matches, and the query's whole mass (words
        no record holds counted in): made once per query, on its first hit."""
        if self._whole is None:
            finders = [t for t in self.plan.terms if t.covers]
            matched = dense.zeros(index.size)
            for term in finders:
                matched[saturated_row(index, term)[0]] += term.idf
            self._whole = (matched, sum(t.idf for t in finders) + sum(self.plan.unknown_idf.values()))
        return self._whole

    @functools.cached_property
    def known(self) -> float:
        """The share of the query's weight on words the docs hold at all. Computed once per
        query (the plan is fixed by now), not once per hit: a batch line has 60."""
        return self.total / (self.total + sum(self.plan.unknown.values()))


def rank(index: InvertedIndex, plan: QueryPlan) -> Ranking:
    """Score: evidence per record (score_records), its coverage of the query, and its factors
    (record kind, phrases, answers to questions, page evidence, query shapes)."""
    length = content_words(plan.query)  # counted once: the floor and the coverage power read it
    floor = rules.COVERAGE_FLOOR if length >= rules.LONG_QUERY_TERMS else 0.0
    scored = score_records(index, plan)
    ids = dense.found_ids(scored.found)
    if plan.package:
        ids = ids[package_mask(index, plan.package)[ids]]
    total = plan.total_weight or 1.0
    # Every record here was found by a covering term (score_records), so coverage > 0.
    covered = scored.matched_idf[ids] / total
    boosts = phrase_boosts(index, plan.query)
    question = is_question(plan.query)
    shaped = shape_boosts(plan.query)
    factor, page_share, feedback = record_factors(index, plan, ids, boosts, question, shaped)
    power = coverage_power(length)
    powered = (
        dense.coverage_factor(covered, power)
        if scored.codes is None
        else dense.coverage_of_codes(scored.codes[ids], scored.covering_idfs, total, power)
    )
    final = scored.scores[ids] * powered * factor
    return Ranking(
        plan,
        scored,
        ids,
        covered,
        final,
        covered >= floor,
        floor,
        boosts,
        question,
        page_share,
        feedback,
        shaped,
    )


def coverage_power(length: int) -> float:
    """The power coverage is raised to for a query of `length` content words: LONG_COVERAGE_POWER
    for a long question, else COVERAGE_POWER."""
    if length >= rules.LONG_COVERAGE_TERMS:
        return rules.LONG_COVERAGE_POWER
    return rules.COVERAGE_POWER


def record_factors(
    index: InvertedIndex,
    plan: QueryPlan,
    ids: dense.Ids,
    boosts: dict[int, Boost],
    question: bool,
    shaped: list[tuple[str, str, float]],
) -> tuple[dense.Floats, dense.Floats | None, list[str]]:
    """Per found record, the product of its factors; each record's page share and the feedback
    words (page evidence, for --explain)."""
    tables = dense.tables(index)
    factor = tables.factor[ids] * dense.boost_vector(index.size, boosts)[ids]
    if question:
        factor[tables.answer[ids]] *= 1 + rules.ANSWER_BOOST
    page_factor, page_share, feedback = index.pages.record_factor(plan.corrected or plan.query)
    if page_factor is not None:
        factor *= page_factor[ids]
    for subject, _rule, boost in shaped:
        factor[subject_mask(index, subject)[ids]] *= 1 + boost
    return factor, page_share, feedback


Row = tuple[float, int, float, str]  # score, record id, coverage, why it was capped ("" when not)


def order(
    index: InvertedIndex, ranking: Ranking, limit: int, notes: list[str], parent_cap: int | None
) -> list[Row]:
    """The records over the coverage floor, ranked and capped (cap()); then, when that leaves
    the list short, records under the floor, which never outrank one above it."""
    tables = dense.tables(index)
    final, ids, covered, above = ranking.final, ranking.ids, ranking.covered, ranking.above
    # The relative floor over the whole list at once: a record under RELATIVE_FLOOR x its site's
    # best score is never listed, at any limit, so the caps walk only the rest.
    over = dense.over_relative_floor(index, final[above], ids[above])
    dropped = len(over) - int(over.sum())
    if dropped:
        notes.append(f"relative floor: {dropped} record(s) under {rules.RELATIVE_FLOOR:g} x the top dropped")
    kept = above.copy()
    kept[above] = over
    # Ties break on the URL, so the same query always gives the same order.
    candidates = dense.ranked_rows(final[kept], ids[kept], covered[kept], tables.url_order)
    one_package = ranking.plan.package is not None
    ordered = cap(index, candidates, limit, one_package=one_package, parent_cap=parent_cap)
    below = ~above
    if len(ordered) < limit and below.any():
        seen = {(index.documents[c[1]].site, index.documents[c[1]].path) for c in ordered}
        low = dense.ranked(final[below], ids[below], tables.url_order)
        for c in dense.rows_of(final[below][low], ids[below][low], covered[below][low]):
            if len(ordered) >= limit:
                break  # only the first `limit` are returned
            doc = index.documents[c[1]]
            if (doc.site, doc.path) not in seen:
                ordered.append((*c, "under the coverage floor"))
    return ordered


def share_note(term: TermPlan) -> str:
    if term.share == 1.0:
        return ""
    return f" (x{term.share:.2f}: one of the terms of a written token, TOKEN_TERMS_POWER)"


def hit_of(index: InvertedIndex, ranking: Ranking, row: Row, explain: bool) -> Hit:
    score, doc_id, coverage, capped = row
    doc = index.documents[doc_id]
    named = bool(ranking.plan.named_unknown)
    weighed = score / ranking.kept  # the score confidence reads (Ranking.kept)
    covered = ranking.word_coverage(index, doc_id, coverage)
    weight = ranking.plan.full_weight
    hit = to_hit(doc, score, description_of(index, doc_id), covered, named, weighed, weight)
    if explain:
        hit.explanation = explain_hit(
            doc,
            raw=float(ranking.scored.scores[doc_id]),
            coverage=coverage,
            matches=term_matches(index, ranking.plan, doc_id),
            capped=capped,
            boost=ranking.boosts.get(doc_id, NO_BOOST),
            answer=ranking.question and doc_id in index.answers,
            shaped=[(r, b) for subject, r, b in ranking.shaped if on_subject(doc, subject)],
            page_share=None if ranking.page_share is None else float(ranking.page_share[doc_id]),
            score=weighed,
            coverage_share=hit.coverage,
            power=coverage_power(content_words(ranking.plan.query)),
            query=ranking.plan.query,
            named_unknown=named,
            weight=weight,
        )
        if ranking.kept < 1:
            at = next(i for i, line in enumerate(hit.explanation) if line.startswith("confidence "))
            hit.explanation.insert(
                at,
                f"confidence reads score {score:.3f} / {ranking.kept:.2f}, the weight the token shares "
                f"keep (TOKEN_TERMS_POWER) = {weighed:.3f}",
            )
    return hit


def query_notes(ranking: Ranking) -> list[str]:
    """--explain's query-level account of the planning and scoring, in the order they apply."""
    plan = ranking.plan
    notes = [
        f"term {t.term!r}: idf {t.idf:.2f}, weight {t.weight:.2f}{share_note(t)}, forms "
        + ", ".join(f"{f.word} ({f.kind} x{f.weight:.2f})" for f in t.forms[:6])
        for t in plan.terms
    ]
    if plan.corrected:
        notes.append(f"typo correction: {plan.corrected!r}")
    if ranking.floor:
        length = content_words(plan.query)
        notes.append(
            f"long query ({length} content words, LONG_QUERY_TERMS): COVERAGE_FLOOR {ranking.floor:g}"
        )
    if plan.package:
        notes.append(f"package filter: {plan.package}")
    if ranking.question and rules.ANSWER_BOOST:
        notes.append(f"question-shaped: answers x{1 + rules.ANSWER_BOOST:g} (ANSWER_BOOST)")
    if rules.PAGE_FUSION:
        fields = ", ".join(f"{name} x{weight:g}" for name, weight in rules.PAGE_FIELD_WEIGHTS.items())
        notes.append(
            f"page evidence: fielded BM25 over whole pages ({fields}: PAGE_FIELD_WEIGHTS), fused "
            f"x(1 + {rules.PAGE_FUSION:g} x share of the best page) (PAGE_FUSION)"
        )
    if ranking.feedback:
        notes.append(
            f"feedback: {', '.join(ranking.feedback)} from the top {rules.FEEDBACK_PAGES} pages, at "
            f"{rules.FEEDBACK_WEIGHT:g} of the query (FEEDBACK_WEIGHT)"
        )
    notes += [
        f"{SHAPE_MEANING[rule][0]}: {SHAPE_MEANING[rule][1]} x{1 + boost:g} ({rule})"
        for subject, rule, boost in ranking.shaped
    ]
    return notes


def unknown_notes(ranking: Ranking) -> list[str]:
    """--explain: the query's words the docs never use, and what that does to coverage."""
    if not ranking.plan.unknown:
        return []
    named = ranking.plan.named_unknown
    rule = "CONFIDENCE_NAMED_COVERAGE" if named else "CONFIDENCE_MIN_COVERAGE"
    notes = [
        f"not in the docs: {', '.join(ranking.plan.unknown)}; coverage counts them unmatched "
        f"(x{ranking.known:.2f}; confidence low under {rule} {coverage_needed(bool(named)):g})"
    ]
    if named:
        notes.append(f"named as a proper name, so the question is about it: {', '.join(named)}")
    return notes


def cap(
    index: InvertedIndex,
    candidates: Iterable[tuple[float, int, float]],
    limit: int,
    one_package: bool = False,
    parent_cap: int | None = None,
) -> list[Row]:
    """The caps over one ranked list (already over the relative floor): imqueue.org and
    imqueue.com records compete on score (nothing here weighs or reorders them by site). A
    capped record is not dropped: it moves below every uncapped one. The first k results are
    the same for every limit >= k: the loop stops only once `limit` uncapped records are kept.
    Of records sharing a URL (an answer and its prose section) the first stands for them."""
    table = dense.record_table(index)
    urls, parents, members, packages = table.url, table.parent, table.member, table.package
    kept: list[Row] = []
    capped: list[tuple[float, int, float, tuple[str, int, int]]] = []  # the reason written out below
    per_parent: dict[int, int] = defaultdict(int)
    per_member: dict[int, int] = defaultdict(int)
    per_package: dict[int, int] = defaultdict(int)
    seen: set[int] = set()
    page_held = rules.PER_PARENT_CAP if parent_cap is None else parent_cap
    for score, doc_id, coverage in candidates:
        if len(kept) >= limit:
            break  # the answer is full of uncapped hits, ranked before anything capped
        url = urls[doc_id]
        if url in seen:
            continue
        seen.add(url)
        parent, member, package = parents[doc_id], members[doc_id], packages[doc_id]
        held = rules.PER_CLASS_CAP if package >= 0 else page_held
        if per_parent[parent] >= held:
            capped.append(
                (score, doc_id, coverage, ("per-class" if package >= 0 else "per-parent", held, parent))
            )
        elif member >= 0 and per_member[member] >= rules.PER_MEMBER_CAP:
            capped.append((score, doc_id, coverage, ("per-member", rules.PER_MEMBER_CAP, member)))
        elif not one_package and package >= 0 and per_package[package] >= rules.PER_PACKAGE_CAP:
            capped.append((score, doc_id, coverage, ("per-package", rules.PER_PACKAGE_CAP, package)))
        else:
            per_parent[parent] += 1
            if member >= 0:
                per_member[member] += 1
            if package >= 0:
                per_package[package] += 1
            kept.append((score, doc_id, coverage, ""))
    moved = capped[: max(0, limit - len(kept))]
    return kept + [
        (score, doc_id, coverage, cap_reason(table, why)) for score, doc_id, coverage, why in moved
    ]


def cap_reason(table: dense.RecordTable, reason: tuple[str, int, int]) -> str:
    """Why a record moved down, for --explain: the cap, its value, and what it counted."""
    name, held, number = reason
    if name == "per-member":
        return f"per-member cap ({held} named {table.members[number]})"
    if name == "per-package":
        return f"per-package cap ({held} symbols of {table.packages[number]})"
    return f"{name} cap ({held} from {table.parents[number].split(':', 1)[1]})"


Boost = tuple[float, str]  # (the boost, the rules.py name of the rule that gave it)


def phrase_boosts(index: InvertedIndex, query: str) -> dict[int, Boost]:
    """Curated phrases (titles, keywords): the whole query equal to one, one inside the query,
    or the query inside one; and symbols the query names. The largest applicable boost per
    record, with the name of its rule (for --explain)."""
    tokens = phrase_key(query).split()
    boosts: dict[int, Boost] = {}

    def offer(doc_ids: list[int], boost: float, rule: str) -> None:
        for doc_id in doc_ids:
            if boosts.get(doc_id, (0.0, ""))[0] < boost:
                boosts[doc_id] = (boost, rule)

    for token in named_symbols(index, query, tokens):
        if len(token) >= rules.MIN_SYMBOL_NAME:
            offer(index.symbol_names.get(token, []), rules.SYMBOL_NAME_BOOST, "SYMBOL_NAME_BOOST")
    whole = " ".join(tokens)
    found = index.phrase(whole)
    if found:
        exact, part = found
        offer(exact, rules.PHRASE_EXACT_BOOST, "PHRASE_EXACT_BOOST")
        if len(tokens) >= 2:
            offer(part, rules.PHRASE_PART_BOOST, "PHRASE_PART_BOOST")
    content = [t for t in tokens if t not in STOPWORDS]
    if content and len(content) < len(tokens):  # "what is imqueue" also names the phrase "imqueue"
        entry = index.phrase(" ".join(content))
        if entry:
            offer(entry[0], rules.PHRASE_CONTENT_BOOST, "PHRASE_CONTENT_BOOST")
    for size in range(len(tokens) - 1, 1, -1):
        for start in range(len(tokens) - size + 1):
            run = tokens[start : start + size]
            entry = index.phrase(" ".join(run))
            if entry:
                offer(entry[0], rules.PHRASE_PART_BOOST * size / len(tokens), "PHRASE_PART_BOOST")
                if size >= rules.SHARED_RUN_MIN and any(t not in STOPWORDS for t in run):
                    # "how do i expose a" is also how an answer's question begins
                    offer(entry[1], rules.SHARED_RUN_BOOST * size / len(tokens), "SHARED_RUN_BOOST")
    return boosts


def description_of(index: InvertedIndex, doc_id: int) -> str:
    """What a hit shows under its title: the summary, the curated line, or the text's first
    sentence. Cached per record (the cut of a long section is not free)."""
    description = index.descriptions.get(doc_id)
    if description is None:
        doc = index.documents[doc_id]
        description = doc.summary or doc.curated or first_sentence(doc.text)
        index.descriptions[doc_id] = description
    return description


def to_hit(
    doc: Document,
    score: float,
    description: str,
    coverage: float,
    named_unknown: bool = False,
    weighed: float | None = None,
    weight: float = math.inf,
) -> Hit:
    """`weighed`: the score confidence reads, when it is not `score` (Ranking.kept); `weight`: what
    the query's words weigh (QueryPlan.full_weight)."""
    return Hit(
        url=doc.url,
        path=doc.path,
        title=doc.title,
        section=doc.section,
        description=description,
        kind=doc.kind,
        tier=doc.tier,
        symbol=doc.tier == "symbol",
        external=doc.external,
        score=score,
        package=doc.package or None,
        deprecated=doc.deprecated,
        coverage=coverage,
        confidence=confidence_of(score if weighed is None else weighed, coverage, named_unknown, weight),
    )


def first_sentence(text: str, limit: int = 220) -> str:
    # Collapse the whitespace of a head of the text first: a section's text can be long, and a
    # collapsed head longer than `limit` is a prefix of the collapsed whole, so the cut is the same.
    head = " ".join(text[: 4 * limit].split())
    text = head if len(head) > limit else " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + "…"


NO_BOOST: Boost = (0.0, "")
# A form's kind as --explain names it: the rules.py constant that weighs it.
FORM_RULES = {
    "as written": "as written",
    "inflection": "INFLECTION_WEIGHT",
    "prefix": "PREFIX_WEIGHT",
    "typo": "TYPO_WEIGHT",
}
# Per query-shape rule: what the query is, which records it lifts, and why a lifted one is lifted.
SHAPE_MEANING = {
    "SYMPTOM_BOOST": (
        "the query describes a symptom",
        "troubleshooting records",
        "this record's page answers it",
    ),
    "CHOICE_BOOST": (
        "the query weighs options",
        "sections that decide between options",
        "this section decides between them",
    ),
}
BOOST_MEANING = {
    "SYMBOL_NAME_BOOST": "a query word is this symbol's own name",
    "PHRASE_EXACT_BOOST": "the query equals a curated title or keyword phrase",
    "PHRASE_PART_BOOST": "a curated phrase sits inside the query, or holds it",
    "PHRASE_CONTENT_BOOST": "the query's subject words equal a curated phrase",
    "SHARED_RUN_BOOST": "a run of query words also runs inside a curated phrase",
}
EXPLAIN_LEGEND = (
    "legend: evidence = field-weighted, length-normalised count of the word in the record;",
    "  -> its share of the score: weight (idf^IDF_POWER) x saturated evidence (SATURATION);",
    "  raw = the sum over terms; coverage = share of the query's idf the record matches;",
    "  score = raw x coverage^(LONG_)COVERAGE_POWER x each named multiplier (x1.25 = +25 %).",
)


def explain_hit(
    doc: Document,
    raw: float,
    coverage: float,
    matches: list[tuple[TermPlan, float, Form]],
    capped: str,
    boost: Boost,
    answer: bool,
    shaped: list[tuple[str, float]],
    page_share: float | None = None,
    score: float = 0.0,  # the score confidence reads
    coverage_share: float = 1.0,
    power: float = rules.COVERAGE_POWER,
    query: str = "",
    named_unknown: bool = False,
    weight: float = math.inf,
) -> list[str]:
    """One line per matched term (form, fields, idf, evidence), then the score's factors, each
    multiplier named by its rules.py constant. See EXPLAIN_LEGEND for the terms."""
    lines = []
    fields = {name: set(words(text)) for name, text in document_fields(doc).items()}
    for term, evidence, form in matches:
        where = [f"{name} x{field_weight(doc, name):g}" for name, ws in fields.items() if form.word in ws]
        weighed = f"{'STOPWORD_WEIGHT x ' if term.template else ''}idf^IDF_POWER"
        weighed += " x its token share" if term.share < 1 else ""
        lines.append(
            f"{term.term!r} -> {form.word!r} ({FORM_RULES[form.kind]} x{form.weight:.2f}) in "
            f"{', '.join(where) or '?'} (FIELD_WEIGHTS); idf {term.idf:.2f}, weight {term.weight:.2f} "
            f"({weighed}), evidence {evidence:.2f} "
            f"-> {term.weight * saturate(evidence):.2f} (SATURATION)"
        )
    long = bool(query) and content_words(query) >= rules.LONG_COVERAGE_TERMS
    which = "LONG_COVERAGE_POWER: a long question" if long else "COVERAGE_POWER"
    lines.append(f"raw {raw:.3f} x coverage {coverage:.2f}^{power:g} ({which})")
    _factor, notes = record_multiplier(doc)
    lines.extend(notes)
    if boost[0]:
        lines.append(f"{boost[1]} x{1 + boost[0]:.3g}: {BOOST_MEANING[boost[1]]}")
    if answer:
        lines.append(
            f"ANSWER_BOOST x{1 + rules.ANSWER_BOOST:g}: an answer record, and the query is a question"
        )
    for rule, value in shaped:
        lines.append(f"{rule} x{1 + value:g}: {SHAPE_MEANING[rule][0]}, and {SHAPE_MEANING[rule][2]}")
    if page_share:
        lines.append(
            f"PAGE_FUSION x{1 + rules.PAGE_FUSION * page_share:.3g}: its page scores {page_share:.2f} of the "
            "best page on title, headings and body"
        )
    if capped:
        lines.append(f"moved below uncapped results: {capped}")
    lines.append(confidence_line(score, coverage_share, named_unknown, weight))
    if doc.external:
        lines.append("imqueue.com record: competes on score with imqueue.org records")
    return lines


def confidence_line(
    score: float, coverage: float, named_unknown: bool = False, weight: float = math.inf
) -> str:
    """Why the hit's confidence is what it is (ranker.confidence), naming the thresholds."""
    level = confidence_of(score, coverage, named_unknown, weight)
    low = low_score(weight)
    by_weight = (
        f"CONFIDENCE_LOW_PER_WEIGHT {rules.CONFIDENCE_LOW_PER_WEIGHT:g} x the query's weight "
        f"{weight:.2f} = {low:.2f}"
        if low < rules.CONFIDENCE_LOW_SCORE
        else ""
    )
    floor = coverage_needed(named_unknown)
    if coverage < floor:
        rule = (
            "CONFIDENCE_NAMED_COVERAGE: the query names a thing the docs lack"
            if named_unknown
            else "CONFIDENCE_MIN_COVERAGE"
        )
        why = f"matches {coverage:.2f} of the query, under {rule} {floor:g}"
    elif level == "low":
        why = f"score under {by_weight or f'CONFIDENCE_LOW_SCORE {rules.CONFIDENCE_LOW_SCORE:g}'}"
    elif level == "high":
        why = f"score at or over CONFIDENCE_HIGH_SCORE {rules.CONFIDENCE_HIGH_SCORE:g}"
    else:
        under = by_weight or "CONFIDENCE_LOW_SCORE"
        why = f"score between {under} and CONFIDENCE_HIGH_SCORE; matches {coverage:.2f} of it"
    return f"confidence {level}: {why}"


def nearest_terms(index: InvertedIndex, query: str) -> list[str]:
    """A miss's guidance: the indexed words nearest the query's first words (as many as typos are
    looked up for, MAX_TYPO_TERMS: each is a walk over the vocabulary)."""
    seen: list[str] = []
    for term in query_terms(query)[: rules.MAX_TYPO_TERMS]:
        for word in index.nearest_words(term, 3):
            if word not in seen:
                seen.append(word)
    return seen[:8]

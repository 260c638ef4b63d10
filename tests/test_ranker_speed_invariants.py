"""The fast ranking path (ranker.dense: whole-corpus vectors, cached rows, an early-stopping
fill) ranks exactly as the straightforward per-record computation of docs/ranking.md's formula.

The reference below is written here, per record in plain Python dicts, from the ranker's own
formula pieces (plan, saturation, boosts, caps): sum over terms of weight x saturated evidence
of the best form, x coverage^COVERAGE_POWER x the record's factor x boosts, sorted by score then
URL order, capped, then filled from under the coverage floor. Both run on the same index, on a
sample of the KPI queries (../shared/kpi, read at run time) over the real site mirror and on a
hand-written fixture corpus; the lists must hold the same URLs in the same order with the same
scores. Nothing here is a stored result: both sides are computed at test time.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from imqueue_mcp.docsource import build
from imqueue_mcp.ranker import Index, rules
from imqueue_mcp.ranker.confidence import confidence_of
from imqueue_mcp.ranker.index import InvertedIndex, edit_distance
from imqueue_mcp.ranker.search import (
    NO_BOOST,
    QueryPlan,
    content_words,
    first_sentence,
    in_package,
    is_question,
    on_subject,
    order,
    phrase_boosts,
    plan_query,
    rank,
    saturate,
    shape_boosts,
    term_evidence,
)

from conftest import SHARED, SITE
from fixtures.corpus_tiny import answer, index_of, page, section, symbol

KPI = SHARED / "kpi"
SAMPLE = 150  # queries drawn from each KPI list (seeded)
DEPTH = rules.BATCH_DEPTH  # the whole list the KPI scores, not only the first six


def reference_scores(index: InvertedIndex, plan: QueryPlan) -> tuple[dict[int, float], dict[int, float]]:
    """Per record: sum of weight x saturated best-form evidence, and the matched idf mass.
    Covering terms first (they find records), then the rest, only on records already found."""
    scores: dict[int, float] = {}
    matched: dict[int, float] = {}
    for only_found in (False, True):
        for term in plan.terms:
            if term.covers == only_found:
                continue
            for doc_id, (evidence, _form) in sorted(term_evidence(index, term).items()):
                if only_found and doc_id not in scores:
                    continue
                scores[doc_id] = scores.get(doc_id, 0.0) + term.weight * saturate(evidence)
                if term.covers:
                    matched[doc_id] = matched.get(doc_id, 0.0) + term.mass
    return scores, matched


def reference_cap(
    index: InvertedIndex, candidates: list[tuple[float, int, float]], limit: int, one_package: bool
) -> list[tuple[float, int, float, str]]:
    """The caps of docs/ranking.md step 6, one record at a time from its Document: of records
    sharing a URL the first stands for them; a capped record moves below every uncapped one;
    reading stops once `limit` are kept."""
    kept: list[tuple[float, int, float, str]] = []
    capped: list[tuple[float, int, float, str]] = []
    per_parent: dict[str, int] = {}
    per_member: dict[str, int] = {}
    per_package: dict[str, int] = {}
    seen: set[tuple[str, str]] = set()
    for score, doc_id, coverage in candidates:
        if len(kept) >= limit:
            break
        doc = index.documents[doc_id]
        if (doc.site, doc.path) in seen:
            continue
        seen.add((doc.site, doc.path))
        parent, member = f"{doc.site}:{doc.parent or doc.path}", doc.member.lower()
        package = doc.package if doc.tier == "symbol" else None
        held, name = (
            (rules.PER_CLASS_CAP, "per-class")
            if package is not None
            else (rules.PER_PARENT_CAP, "per-parent")
        )
        reason = ""
        if per_parent.get(parent, 0) >= held:
            reason = f"{name} cap ({held} from {parent.split(':', 1)[1]})"
        elif member and per_member.get(member, 0) >= rules.PER_MEMBER_CAP:
            reason = f"per-member cap ({rules.PER_MEMBER_CAP} named {member})"
        elif not one_package and package is not None and per_package.get(package, 0) >= rules.PER_PACKAGE_CAP:
            reason = f"per-package cap ({rules.PER_PACKAGE_CAP} symbols of {package})"
        if reason:
            capped.append((score, doc_id, coverage, reason))
            continue
        per_parent[parent] = per_parent.get(parent, 0) + 1
        if member:
            per_member[member] = per_member.get(member, 0) + 1
        if package is not None:
            per_package[package] = per_package.get(package, 0) + 1
        kept.append((score, doc_id, coverage, ""))
    return kept + capped


def reference_search(
    index: InvertedIndex, query: str, limit: int, package: str | None = None
) -> list[tuple[str, float]]:
    return [(index.documents[c[1]].path, c[0]) for c in reference_rows(index, query, limit, package)]


def reference_rows(
    index: InvertedIndex, query: str, limit: int, package: str | None = None
) -> list[tuple[float, int, float, str]]:
    plan = plan_query(index, query, package)
    total = plan.total_weight or 1.0
    floor = rules.COVERAGE_FLOOR if content_words(plan.query) >= rules.LONG_QUERY_TERMS else 0.0
    scores, matched = reference_scores(index, plan)
    boosts = phrase_boosts(index, plan.query)
    question = is_question(plan.query)
    above: list[tuple[float, int, float]] = []
    below: list[tuple[float, int, float]] = []
    for doc_id, raw in scores.items():
        if plan.package and not in_package(index.documents[doc_id], plan.package):
            continue
        coverage = matched[doc_id] / total
        factor = index.factor[doc_id] * (1 + boosts.get(doc_id, NO_BOOST)[0])
        if question and doc_id in index.answers:
            factor *= 1 + rules.ANSWER_BOOST
        for subject, _rule, boost in shape_boosts(plan.query):
            if on_subject(index.documents[doc_id], subject):
                factor *= 1 + boost
        power = (
            rules.LONG_COVERAGE_POWER
            if content_words(plan.query) >= rules.LONG_COVERAGE_TERMS
            else rules.COVERAGE_POWER
        )
        row = (raw * coverage**power * factor, doc_id, coverage)
        (above if coverage >= floor else below).append(row)
    above.sort(key=lambda c: (-c[0], index.url_order[c[1]]))
    tops: dict[int, float] = {}  # each site's best score: the first of its records in order
    for score, doc_id, _coverage in above:
        tops.setdefault(index.external[doc_id], score)
    above = [c for c in above if c[0] >= tops[index.external[c[1]]] * rules.RELATIVE_FLOOR]
    ordered = reference_cap(index, above, limit, one_package=plan.package is not None)
    below.sort(key=lambda c: (-c[0], index.url_order[c[1]]))
    seen = {(index.documents[c[1]].site, index.documents[c[1]].path) for c in ordered}
    ordered += [
        (*c, "under the coverage floor")
        for c in below
        if (index.documents[c[1]].site, index.documents[c[1]].path) not in seen
    ]
    return ordered[:limit]


def fast_search(index: Index, query: str, limit: int, package: str | None = None) -> list[tuple[str, float]]:
    return [(hit.path, hit.score) for hit in index.search(query, limit=limit, package=package).results]


def assert_same_ranking(index: Index, queries: list[str], package: str | None = None) -> None:
    compared = 0
    for query in queries:
        fast = fast_search(index, query, DEPTH, package)
        slow = reference_search(index.inverted, query, DEPTH, package)
        assert [path for path, _ in fast] == [path for path, _ in slow], query
        for (_, a), (_, b) in zip(fast, slow, strict=True):
            assert a == pytest.approx(b, rel=0, abs=1e-9), query
        compared += len(fast)
    assert compared > 0  # the sample ranked something: an empty comparison proves nothing


@pytest.fixture(scope="module")
def site_index() -> Index:
    return build(mirror=SITE).index()


def kpi_queries() -> list[str]:
    rng = random.Random(11)
    gold = sorted(
        {q["query"] for q in json.loads((KPI / "gold-dev.json").read_text(encoding="utf-8"))["queries"]}
    )
    artificial = json.loads((KPI / "artificial-queries.json").read_text(encoding="utf-8"))
    main = [c["query"] for c in artificial["main"]]
    typos = [c["query"] for c in artificial["typos"]]
    return rng.sample(gold, SAMPLE) + rng.sample(main, SAMPLE) + rng.sample(typos, min(SAMPLE, len(typos)))


def case_queries(out: Path) -> list[str]:
    """ranking_cases.py's own --emit list of its named cases."""
    subprocess.run(
        [sys.executable, str(KPI / "ranking_cases.py"), "--emit", str(out)], check=True, capture_output=True
    )
    lines = out.read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["query"] for line in lines if line.strip()]


needs_kpi = pytest.mark.skipif(not (KPI / "gold-dev.json").exists(), reason="../shared/kpi is not here")


@needs_kpi
def test_fast_path_ranks_kpi_queries_exactly_as_the_per_record_reference(site_index: Index) -> None:
    assert_same_ranking(site_index, kpi_queries())


@needs_kpi
def test_fast_path_ranks_named_ranking_cases_exactly_as_the_reference(
    site_index: Index, tmp_path: Path
) -> None:
    assert_same_ranking(site_index, case_queries(tmp_path / "cases.jsonl"))


@needs_kpi
def test_fast_path_under_a_package_filter_matches_the_reference(site_index: Index) -> None:
    queries = ["send a message", "options", "connection", "how do i expose a method", "logger"]
    for package in ("core", "rpc", "@imqueue/pg-pubsub"):
        assert_same_ranking(site_index, queries, package)


@needs_kpi
def test_fast_path_matches_the_reference_on_a_second_warm_pass(site_index: Index) -> None:
    """The per-term caches must give what a cold computation gives."""
    queries = kpi_queries()[:60]
    first = [fast_search(site_index, q, DEPTH) for q in queries]
    assert first == [fast_search(site_index, q, DEPTH) for q in queries]
    assert_same_ranking(site_index, queries)


def test_fast_path_matches_the_reference_on_a_fixture_corpus_with_floors_caps_and_boosts() -> None:
    index = index_of(
        page("/guide/retry/", "Retry", summary="how retries work for a failed job", keywords="retry,retries"),
        page("/guide/queue/", "Queue", summary="a queue of jobs and retries"),
        answer("/api/faq/#how-do-i-retry", "How do I retry a job?", summary="retry a failed job"),
        section("/blog/x/#why", "Why retry", text="retry retry job queue worker delay"),
        section("/blog/x/#how", "How to retry", text="job retry with backoff delay"),
        section("/blog/x/#more", "More retry", text="retry job queue delay backoff"),
        symbol("RedisQueue.send", "@imqueue/core", summary="send a job to the queue"),
        symbol("RedisQueue.start", "@imqueue/core", summary="start the queue"),
        symbol("ClusteredRedisQueue.send", "@imqueue/core", summary="send to a cluster queue"),
        symbol("IMQClient.send", "@imqueue/rpc", summary="send a request"),
        symbol("IMQService.start", "@imqueue/rpc", summary="start a service", deprecated=True),
    )
    queries = [
        "retry",
        "how do i retry a job?",
        "send",
        "queue send job delay backoff",
        "retires",
        "RedisQueue.send",
        "start the queue service",
        "job",
    ]
    assert_same_ranking(index, queries)
    assert_same_ranking(index, ["send", "start"], "core")


def collapsed_then_cut(text: str, limit: int) -> str:
    """The description rule, written the plain way: collapse all whitespace, then cut."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


def test_description_cut_from_a_head_of_the_text_equals_the_cut_of_the_whole_text() -> None:
    rng = random.Random(4)
    pieces = ["a", "word", "longerword", " ", "  ", "\n", "\t \n", "é", "x" * 300, " " * 900]
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 400))) for _ in range(2000)]
    for limit in (5, 40, 220):
        for text in texts:
            assert first_sentence(text, limit) == collapsed_then_cut(text, limit), (limit, text)


@needs_kpi
def test_explain_ranks_exactly_as_the_plain_search_and_names_every_hit(site_index: Index) -> None:
    for query in kpi_queries()[:40]:
        plain = site_index.search(query, limit=DEPTH)
        explained = site_index.search(query, limit=DEPTH, explain=True)
        assert [(h.path, h.score) for h in explained.results] == [(h.path, h.score) for h in plain.results]
        assert all(hit.explanation for hit in explained.results), query


def straightforward_batch_line(index: Index, query: str) -> dict[str, Any]:
    """imq-search --batch's line for `query`, each hit's confidence computed from its own
    coverage and the query's known share worked out afresh per hit, as before the share was
    computed once per query (Ranking.known); with token shares, the full-weight score and coverage
    (Ranking.kept, Ranking.word_coverage) worked out term by term."""
    inverted = index.inverted
    plan = plan_query(inverted, query, None)
    ranking = rank(inverted, plan)
    named = bool(plan.named_unknown)
    results = []
    for score, doc_id, coverage, _capped in order(inverted, ranking, DEPTH, [], None)[:DEPTH]:
        total = plan.total_weight or 1.0
        known = total / (total + sum(plan.unknown.values()))
        full_weight = sum(t.weight / t.share for t in plan.terms)
        kept = sum(t.weight for t in plan.terms) / full_weight if full_weight else 1.0
        if kept < 1:  # a token's terms share its weight: confidence reads the query at full weight
            finders = [t for t in plan.terms if t.covers]
            matched = sum(t.idf for t in finders if doc_id in term_evidence(inverted, t))
            coverage = matched / (sum(t.idf for t in finders) + sum(plan.unknown_idf.values()))
            score_read = score / kept
        else:
            coverage, score_read = coverage * known, score
        doc = inverted.documents[doc_id]
        weight = sum(t.weight / t.share for t in plan.terms if t.covers)  # what its words weigh
        confidence = confidence_of(score_read, coverage, named, weight)
        results.append(
            {"u": doc.path, "external": doc.external, "score": round(score, 6), "confidence": confidence}
        )
    line: dict[str, Any] = {"query": query, "results": results}
    if plan.corrected:
        line["corrected"] = plan.corrected
    return line


@needs_kpi
def test_batch_lines_are_the_straightforward_per_hit_computation(site_index: Index) -> None:
    from imqueue_mcp.build_index.search_cli import batch_line

    unknown = ["deploy imqueue services with Dapr on Kubernetes", "kafka consumer groups", "zzyzx quux"]
    queries = kpi_queries()[:150] + unknown
    for query in queries:
        assert batch_line(site_index, query) == straightforward_batch_line(site_index, query), query
    lines = [batch_line(site_index, q) for q in unknown[:2]]
    assert any(hit["confidence"] == "low" for line in lines for hit in line["results"])  # known < 1 read


@needs_kpi
def test_the_caps_move_the_records_and_say_why_as_the_reference_does(site_index: Index) -> None:
    """order()'s rows (score, record, coverage, the cap that moved it) at batch depth are the
    reference's, reasons included: the relative floor worked out over the whole list at once
    and the caps' per-record numbers (dense.record_table) change nothing."""
    inverted = site_index.inverted
    moved = 0
    for query in kpi_queries()[:150]:
        rows = order(inverted, rank(inverted, plan_query(inverted, query, None)), DEPTH, [], None)[:DEPTH]
        expected = reference_rows(inverted, query, DEPTH)
        assert [(r[1], r[3]) for r in rows] == [(r[1], r[3]) for r in expected], query
        moved += sum(1 for r in rows if r[3])
    assert moved > 0  # some record was capped: the reasons were compared, not only blanks


@pytest.mark.parametrize("seed", range(20))
def test_lazily_ranked_rows_are_the_full_ranking_even_with_ties_at_the_head(seed: int) -> None:
    """ranked_rows sorts a head first and the rest on demand; read to the end, with scores drawn
    from a few values (ties straddle the head's edge), it gives exactly the full sort's rows."""
    import numpy as np

    from imqueue_mcp.ranker import dense

    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 600))
    scores = rng.choice(np.array([0.5, 1.0, 1.5, 2.0, 2.5]), size=size)
    ids = rng.permutation(1000)[:size].astype(np.intp)
    order = rng.permutation(1000).astype(np.intp)
    coverage = rng.random(size)
    full = dense.ranked(scores, ids, order)
    expected = list(dense.rows_of(scores[full], ids[full], coverage[full]))
    head = int(rng.integers(1, 80))
    assert list(dense.ranked_rows(scores, ids, coverage, order, head=head)) == expected


@pytest.mark.parametrize("seed", range(20))
def test_coverage_from_term_codes_equals_coverage_from_the_matched_idf_bit_for_bit(seed: int) -> None:
    """dense.coverage_of_codes (count the subsets of covering terms a record matched) gives
    exactly what dense.coverage_factor (sort the coverage values) gives from the summed idf."""
    import numpy as np

    from imqueue_mcp.ranker import dense

    rng = np.random.default_rng(seed)
    terms = int(rng.integers(1, dense.MAX_CODED_TERMS + 1))
    idfs = [float(x) for x in rng.uniform(0.05, 9.0, size=terms)]
    total = sum(idfs) + float(rng.uniform(0.0, 3.0))  # template words weigh in the total too
    size = int(rng.integers(1, 800))
    matched, codes = np.zeros(size), np.zeros(size, dtype=np.int64)
    for bit, idf in enumerate(idfs):  # as score_records adds them: in plan order
        ids = np.flatnonzero(rng.random(size) < 0.4)
        matched[ids] += idf
        codes[ids] |= 1 << bit
    found = codes > 0
    by_codes = dense.coverage_of_codes(codes[found], idfs, total, rules.COVERAGE_POWER)
    by_sort = dense.coverage_factor(matched[found] / total, rules.COVERAGE_POWER)
    assert by_codes.tolist() == by_sort.tolist()


@needs_kpi
def test_a_sibling_ranks_under_changed_constants_exactly_as_a_fresh_index(
    site_index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Index.sibling (benchmarks/cv.py ranks each tuning setting on one): what depends on the
    postings alone is shared, what a search worked out under the constants (term forms with their
    typo weight, saturated evidence) is not, so a sibling under other constants ranks as a fresh
    index under them would."""
    queries = kpi_queries()
    shipped = {query: fast_search(site_index, query, DEPTH) for query in queries}  # caches filled
    monkeypatch.setattr(rules, "SATURATION", rules.SATURATION * 3)
    monkeypatch.setattr(rules, "TYPO_WEIGHT", rules.TYPO_WEIGHT / 2)
    sibling = site_index.sibling()
    fresh = Index.from_wire(site_index.corpus, site_index.to_wire())
    assert sibling.inverted._decoded is site_index.inverted._decoded
    assert sibling.inverted.pages is site_index.inverted.pages
    changed = 0
    for query in queries:
        ranked = fast_search(sibling, query, DEPTH)
        assert ranked == fast_search(fresh, query, DEPTH), query
        changed += ranked != shipped[query]
    assert changed > 0  # the constants moved some ranking: the comparison can tell stale from fresh


def reference_nearest(index: InvertedIndex, term: str, count: int) -> list[str]:
    """A miss's nearest words as first written: every alphabetic word of the vocabulary within 3
    letters of the term's length, sharing its first letter (or first two, swapped), by edit
    distance, then use; kept within max(2, half the term's length) edits."""
    scored = []
    for word in index.vocabulary:
        if not word.isalpha() or abs(len(word) - len(term)) > 3:
            continue
        if word[0] != term[0] and word[:2] != term[:2][::-1]:
            continue
        scored.append((edit_distance(term, word), -index.document_frequency(word), word))
    scored.sort()
    return [w for d, _df, w in scored[:count] if d <= max(2, len(term) // 2)]


def test_nearest_words_are_the_straightforward_walks_over_the_vocabulary(site_index: Index) -> None:
    # audit 11 #01: the walk cost 170 ms for eight made-up words; the buckets and the bag-distance
    # bound must leave exactly the same words
    index = site_index.inverted
    rng = random.Random(5)
    words = [word for word in index.vocabulary if word.isalpha()]
    terms = ["rpxvvxzvjw", "ervqvqjzvx", "caxwjvvjjw", "q", "zz", "x1y2", "expse", "rdis", "qeueu"]
    terms += [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 14)))
        for _ in range(120)
    ]
    for word in rng.sample(words, 120):
        at = rng.randrange(len(word))
        terms += [
            word[:at] + rng.choice("abcdefghijklmnopqrstuvwxyz") + word[at + 1 :],
            word[1:2] + word[:1] + word[2:],
        ]
    for term in terms:
        assert index.nearest_words(term, 3) == reference_nearest(index, term, 3), term
        assert index.nearest_words(term, 3) == reference_nearest(index, term, 3), term  # cached alike


def test_edit_distance_with_a_limit_is_exact_under_it_and_says_over_above_it() -> None:
    rng = random.Random(3)
    for _ in range(2000):
        a = "".join(rng.choice("abcde") for _ in range(rng.randint(0, 9)))
        b = "".join(rng.choice("abcde") for _ in range(rng.randint(0, 9)))
        exact, limit = edit_distance(a, b), rng.randint(0, 6)
        assert edit_distance(a, b, limit) == (exact if exact <= limit else limit + 1), (a, b, limit)

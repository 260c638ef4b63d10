"""The benchmarks' moving parts on the real ../shared files, fast: the rank-bm25 baseline, our
batch lines, and the figures read back from evaluate.py and ranking_cases.py. Behaviour only;
nothing here measures or asserts speed."""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rank_bm25")

from imqueue_mcp.ranker.corpus import Document  # noqa: E402

from benchmarks import scoring  # noqa: E402
from benchmarks.baseline import DEPTH, Bm25Baseline, baseline_documents, tokenize  # noqa: E402
from benchmarks.kpi import check_floors, floors_from  # noqa: E402

SHARED = Path(os.environ.get("IMQ_SHARED") or Path(__file__).resolve().parents[2] / "shared")
KPI = SHARED / "kpi"

Ranker = Callable[[str], dict[str, Any]]


@pytest.fixture(scope="module")
def sides() -> dict[str, Ranker]:
    if not (KPI / "evaluate.py").is_file() or not (SHARED / "site").is_dir():
        pytest.skip(f"shared folder not found at {SHARED}")
    from imqueue_mcp.build_index.search_cli import batch_line
    from imqueue_mcp.docsource import build

    snapshot = build(mirror=SHARED / "site")
    index = snapshot.index()
    baseline = Bm25Baseline(baseline_documents(snapshot.corpus.documents))
    return {"ours": lambda query: batch_line(index, query), "bm25": baseline.batch_line}


@pytest.fixture(scope="module")
def gold() -> dict[str, Any]:
    if not (KPI / "gold-dev.json").is_file():
        pytest.skip(f"gold labels not found in {KPI}")
    data: dict[str, Any] = json.loads((KPI / "gold-dev.json").read_text(encoding="utf-8"))
    return data


def gold_subset(gold: dict[str, Any]) -> dict[str, Any]:
    """Five labels: three natural, one question, one with a mustReach page; same top-level keys."""
    queries = gold["queries"]
    natural = [q for q in queries if q.get("src") == "natural" and not q.get("mustReach")][:3]
    question = next(q for q in queries if q.get("src") == "question")
    must_reach = next(q for q in queries if q.get("mustReach"))
    picked = [*natural, question, must_reach]
    return {**gold, "queries": picked, "counts": {"total": len(picked)}}


def write_lines(path: Path, queries: list[str], rank: Ranker) -> None:
    lines = [json.dumps(rank(query), ensure_ascii=False) + "\n" for query in queries]
    path.write_text("".join(lines), encoding="utf-8")


def test_tokenize_keeps_lowercase_alphanumeric_words_only() -> None:
    assert tokenize("How do I expose a method on an @imqueue service?") == [
        "how",
        "do",
        "i",
        "expose",
        "a",
        "method",
        "on",
        "an",
        "imqueue",
        "service",
    ]
    assert tokenize("watcherCheckDelay, IMQ_v2 / core.redisqueue") == [
        "watchercheckdelay",
        "imq",
        "v2",
        "core",
        "redisqueue",
    ]


def test_baseline_indexes_tier_one_records_and_prose_sections_with_the_peer_marked_external() -> None:
    documents = [
        Document(
            path="/intro/", site="org", tier="page", title="Intro", summary="What it is", keywords="rpc"
        ),
        Document(
            path="/intro/#why", site="org", tier="section", title="Intro", heading="Why", text="Because."
        ),
        Document(path="/pricing/", site="com", tier="page", title="Pricing", summary="Plans"),
    ]
    texts = {(d.path, d.external): d.text for d in baseline_documents(documents)}
    assert texts == {
        ("/intro/", False): "Intro What it is rpc",
        ("/intro/#why", False): "Why Because.",
        ("/pricing/", True): "Pricing Plans",
    }
    line = Bm25Baseline(baseline_documents(documents)).batch_line("pricing plans")
    assert line["results"][0]["u"] == "/pricing/" and line["results"][0]["external"] is True
    assert all(hit["score"] > 0 for hit in line["results"])


def test_baseline_scores_are_rank_bm25s_get_scores_bit_for_bit(gold: dict[str, Any]) -> None:
    """The KPI's rank-bm25 figures come from the postings-table scorer: on the real corpus, every
    label's query (repeated words, unknown words, none at all) scores as BM25Okapi.get_scores."""
    if not (SHARED / "site").is_dir():
        pytest.skip(f"shared folder not found at {SHARED}")
    from imqueue_mcp.docsource import build

    baseline = Bm25Baseline(baseline_documents(build(mirror=SHARED / "site").corpus.documents))
    saved = len(pickle.dumps(baseline))  # what benchmarks.speed saves and loads for rank-bm25
    queries = [q["query"] for q in gold["queries"][:150]]
    queries += ["queue queue queue", "zzqx unknownword", "?!", ""]
    for query in queries:
        assert baseline.scores(query).tobytes() == baseline.library_scores(query).tobytes(), query
    assert len(pickle.dumps(baseline)) > 2 * saved  # the table came with the first scores(), not before


@pytest.mark.parametrize("side", ["ours", "bm25"])
def test_results_lines_have_the_kpi_shape(sides: dict[str, Ranker], gold: dict[str, Any], side: str) -> None:
    for case in gold_subset(gold)["queries"]:
        line = sides[side](case["query"])
        assert line["query"] == case["query"]
        hits = line["results"]
        assert 0 < len(hits) <= DEPTH
        for hit in hits:
            assert isinstance(hit["u"], str) and hit["u"].startswith("/")
            assert isinstance(hit["external"], bool)
            assert isinstance(hit["score"], float) and hit["score"] > 0
        if side == "bm25":  # ours may place a capped record below a lower score: rank order is the list order
            scores = [hit["score"] for hit in hits]
            assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize("side", ["ours", "bm25"])
def test_evaluate_scores_a_gold_subset_and_the_figures_read_back(
    sides: dict[str, Ranker], gold: dict[str, Any], side: str, tmp_path: Path
) -> None:
    subset = gold_subset(gold)
    labels = tmp_path / "gold-subset.json"
    labels.write_text(json.dumps(subset), encoding="utf-8")
    results = tmp_path / f"{side}-gold.jsonl"
    write_lines(results, [c["query"] for c in subset["queries"]], sides[side])

    figures = scoring.gold_figures(KPI, results, tmp_path / f"{side}-gold", gold=labels)

    assert figures["queries"] == 5
    for key in (
        "micro_p1",
        "macro_p1",
        "mrr",
        "recall6",
        "ndcg10",
        "question_p1",
        "must_reach_top6",
        "never_returned",
    ):
        assert figures[key] is not None and 0 <= figures[key] <= 100, key
    assert figures["must_reach"] in ("0/1", "1/1")
    assert (tmp_path / f"{side}-gold.txt").read_text(encoding="utf-8").startswith("\n====")


def test_ranking_cases_verdicts_are_counted(sides: dict[str, Ranker], tmp_path: Path) -> None:
    queries = tmp_path / "cases.jsonl"
    scoring.emit_case_queries(KPI, queries)
    every = scoring.read_queries(queries)
    results = tmp_path / "ours-cases.jsonl"
    write_lines(results, every[:3], sides["ours"])  # the rest are reported as skipped

    figures = scoring.case_figures(KPI, results, tmp_path / "ours-cases")

    assert figures["cases_checked"] == figures["cases_passed"] + figures["cases_failed"]
    assert figures["cases_checked"] >= 3 and figures["cases_skipped"] > 0


def test_floors_fail_only_beyond_one_point_and_name_the_figure() -> None:
    measured = {"micro_p1": 80.26, "never_returned": 0.97, "cases_passed": 45}
    floors = floors_from(measured, 1.0)
    assert floors == {"micro_p1": 79.2, "never_returned": 2.0, "cases_passed": 44}
    assert check_floors({"micro_p1": 78.3, "never_returned": 2.9, "cases_passed": 43}, floors) == []
    failures = check_floors({"micro_p1": 78.1, "never_returned": 3.1, "cases_passed": 42}, floors)
    assert [f.split(":")[0] for f in failures] == ["micro_p1", "never_returned", "cases_passed"]
    assert check_floors({}, {"micro_p1": 79.2})[0].startswith("micro_p1: not measured")


# --- cross-validation (benchmarks/cv.py) ----------------------------------------------------


@pytest.fixture(scope="module")
def evaluator() -> Any:
    if not (SHARED / "site").is_dir():
        pytest.skip(f"shared folder not found at {SHARED}")
    from imqueue_mcp.docsource import build

    from benchmarks import cv

    return cv.Evaluator(build(mirror=SHARED / "site").corpus)


def small_sample(gold: dict[str, Any], topics: int = 6, per_topic: int = 3) -> list[dict[str, Any]]:
    """A few labels from each of a few topics, in gold order: enough for two folds."""
    from benchmarks import cv

    taken: dict[str, int] = {}
    sample = []
    for case in cv.headline_cases(gold):
        topic = case["topic"]
        if topic not in taken and len(taken) == topics:
            continue
        if taken.get(topic, 0) < per_topic:
            taken[topic] = taken.get(topic, 0) + 1
            sample.append(case)
    return sample


def test_topic_folds_never_split_a_topic_and_are_balanced_and_deterministic(gold: dict[str, Any]) -> None:
    from benchmarks import cv

    cases = cv.headline_cases(gold)
    folds = cv.topic_folds(cases, 5)
    assert sorted(i for fold in folds for i in fold) == list(range(len(cases)))
    topic_fold: dict[str, int] = {}
    for f, fold in enumerate(folds):
        for i in fold:
            assert topic_fold.setdefault(cases[i]["topic"], f) == f, cases[i]["topic"]
    sizes = [len(fold) for fold in folds]
    assert max(sizes) - min(sizes) <= 2, sizes

    def partition(cases_: list[dict[str, Any]]) -> list[list[str]]:
        return sorted(sorted(cases_[i]["query"] for i in fold) for fold in cv.topic_folds(cases_, 5))

    assert cv.topic_folds(cases, 5) == folds  # the same labels give the same folds...
    assert partition(list(reversed(cases))) == partition(cases)  # ...whatever their order
    with pytest.raises(ValueError, match="at least 2 folds"):
        cv.topic_folds(cases, 1)


def test_overridden_constants_apply_inside_the_block_and_are_restored_after() -> None:
    from imqueue_mcp.ranker import rules

    from benchmarks import cv

    title, power = rules.FIELD_WEIGHTS["title"], rules.IDF_POWER
    with cv.overridden({"FIELD_WEIGHTS.title": 9.5, "IDF_POWER": 0.1}):
        assert rules.FIELD_WEIGHTS["title"] == 9.5 and rules.IDF_POWER == 0.1
        assert rules.FIELD_WEIGHTS["keywords"] == cv.tunable_constants()["FIELD_WEIGHTS.keywords"]
    assert rules.FIELD_WEIGHTS["title"] == title and rules.IDF_POWER == power
    assert "BATCH_DEPTH" not in cv.tunable_constants()


def test_only_constants_the_build_reads_rebuild_the_postings(evaluator: Any, gold: dict[str, Any]) -> None:
    from benchmarks import cv

    assert "FIELD_WEIGHTS" in evaluator.build_names and "IDF_POWER" not in evaluator.build_names
    base = cv.tunable_constants()
    query = small_sample(gold)[0]["query"]
    builds = evaluator.builds
    shipped = evaluator.lines(base, [query])[0]
    flattened = evaluator.lines({**base, "IDF_POWER": 0.0}, [query])[0]
    assert evaluator.builds == builds + (0 if builds else 1)  # a query-time constant reuses the postings
    assert shipped["results"] != flattened["results"]  # ...and still changes the ranking
    evaluator.lines({**base, "FIELD_WEIGHTS.text": 0.05}, [query])
    assert evaluator.builds == max(builds, 1) + 1


def test_cross_validation_with_rules_constants_ranks_like_the_shipped_index(
    evaluator: Any, gold: dict[str, Any], sides: dict[str, Ranker]
) -> None:
    from benchmarks import cv

    cases = small_sample(gold)
    folds = cv.topic_folds(cases, 2)
    lines = cv.cross_validated_lines(evaluator, cases, folds, [cv.tunable_constants()] * 2)
    assert [line["query"] for line in lines] == [c["query"] for c in cases]
    assert lines == [sides["ours"](c["query"]) for c in cases]
    scorer = cv.load_scorer(KPI)
    per = cv.per_query(scorer, cases, lines)
    assert len(per.hit) == len(cases) and all(0 <= r <= 1 for r in per.reciprocal)
    assert 0 <= per.objective(range(len(cases))) <= 200


def test_bm25s_baseline_ranks_the_same_documents_and_survives_save_and_load(tmp_path: Path) -> None:
    pytest.importorskip("bm25s")
    from benchmarks.baseline import BaselineDocument
    from benchmarks.bm25s_baseline import Bm25sBaseline

    docs = [
        BaselineDocument("/intro/", False, "Intro what imqueue is"),
        BaselineDocument("/redis/", False, "Redis setup redis connection"),
        BaselineDocument("/pricing/", True, "Pricing plans for teams"),
        BaselineDocument("/queue/", False, "Message queue basics"),
    ]
    ranked = Bm25sBaseline(docs)
    line = ranked.batch_line("pricing plans")
    assert line["results"][0] == {"u": "/pricing/", "external": True, "score": line["results"][0]["score"]}
    assert line["results"][0]["score"] > 0 and len(line["results"]) == 1
    assert ranked.top6_ids("redis connection")[0] == 1
    assert ranked.retrieve_top6_ids("redis connection")[0] == 1  # the same through retrieve()
    assert ranked.retrieve_top6_ids("zzz") == []
    assert ranked.batch_line("nothing matches zzz")["results"] == []
    # the batch benchmark's records, through retrieve(): the same as batch_line's, via get_scores
    assert ranked.retrieve_records("pricing plans") == line["results"]
    assert ranked.retrieve_records("zzz") == []

    ranked.save(tmp_path / "bm25s")
    loaded = Bm25sBaseline.load(tmp_path / "bm25s", docs)
    assert loaded.top6_ids("redis connection") == ranked.top6_ids("redis connection")


def side(p50: float, p99: float) -> dict[str, Any]:
    """One side's figures as benchmarks.speed's children report them, with these latencies."""
    query = {"n": 10, "p50_ms": p50, "p95_ms": p99, "p99_ms": p99, "mean_ms": p50, "total_s": 0.1}
    return {"build_s": 1.0, "snapshot_bytes": 10**6, "load_s": 0.01, "query": query, "peak_rss_bytes": 2**26}


def test_speed_table_has_a_bm25s_column_and_the_ratios_to_it() -> None:
    from benchmarks import speed

    results = {"ours": side(0.6, 3.0), "bm25": side(1.0, 4.0), "bm25s": side(0.2, 1.0)}
    assert speed.ratios(results) == pytest.approx({"p50_ms": 3.0, "p95_ms": 3.0, "p99_ms": 3.0})
    assert speed.ratios(results, "query_retrieve") == {}
    text = speed.table(results)
    assert text.splitlines()[0].split() == ["ours", "rank-bm25", "bm25s"]
    # no retrieve() figure: nothing is judged, the scoring-alone ratio is still shown
    assert "ours / bm25s get_scores" in text and "3.0x/3.0x" in text
    assert "target" not in text

    # the targets are judged on retrieve(): 0.6 / 0.32 = 1.9x at p50 (met), 3.0 / 0.4 = 7.5x at p99 (not)
    results["bm25s"]["query_retrieve"] = side(0.32, 0.4)["query"]
    assert speed.ratios(results, "query_retrieve") == pytest.approx(
        {"p50_ms": 1.875, "p95_ms": 7.5, "p99_ms": 7.5}
    )
    lines = speed.table(results).splitlines()
    p50 = next(line for line in lines if line.startswith("ours / bm25s retrieve() p50"))
    p99 = next(line for line in lines if line.startswith("ours / bm25s retrieve() p99"))
    assert "1.9x" in p50 and "<=2x" in p50 and p50.endswith(" met")
    assert "7.5x" in p99 and "<=6x" in p99 and p99.endswith("NOT met")
    assert any("0.320/0.400" in line for line in lines)


def test_speed_batch_runs_both_sides_and_ours_writes_what_imq_search_batch_writes(tmp_path: Path) -> None:
    """A tiny run of the batch column (issue 29): ours through search_cli.run_batch into a file,
    bm25s through retrieve() at k=60; ours' lines are batch_line's, one per query, in order."""
    pytest.importorskip("bm25s")
    from imqueue_mcp.build_index.search_cli import batch_line
    from imqueue_mcp.docsource import build, load_snapshot, save_snapshot

    from benchmarks import speed
    from benchmarks.bm25s_baseline import Bm25sBaseline
    from conftest import tiny_site

    snapshot = build(mirror=tiny_site())
    save_snapshot(snapshot, tmp_path / "s.msgpack")
    queries = ["redis queue", "expose a method", "nothing matches zzz", "Redis queue?"]
    ours = speed.batch_ours(load_snapshot(tmp_path / "s.msgpack").index(), queries, tmp_path)
    assert (ours["n"], ours["depth"]) == (4, 60) and ours["wall_s"] > 0 and ours["cpu_s"] >= 0
    index = load_snapshot(tmp_path / "s.msgpack").index()
    expected = "".join(json.dumps(batch_line(index, q), ensure_ascii=False) + "\n" for q in queries)
    assert (tmp_path / "batch-ours.jsonl").read_text(encoding="utf-8") == expected

    docs = baseline_documents(snapshot.corpus.documents)
    Bm25sBaseline(docs).save(tmp_path / "bm25s")
    limit = speed.batch_bm25s(Bm25sBaseline.load(tmp_path / "bm25s", docs), queries)
    assert (limit["n"], limit["depth"]) == (4, 60) and limit["wall_s"] > 0

    # paired: the same queries in slices the two sides take in turn, each side's seconds summed
    paired = speed.paired_batch(index, Bm25sBaseline.load(tmp_path / "bm25s", docs), queries, tmp_path)
    assert set(paired) == {"ours", "bm25s"}
    for figures in paired.values():
        assert (figures["n"], figures["depth"]) == (4, 60) and figures["wall_s"] > 0
    # four queries, ten rounds: four slices of one; ours' last wrote the last query's line
    assert (tmp_path / "batch-ours.jsonl").read_text(encoding="utf-8") == (
        json.dumps(batch_line(index, queries[-1]), ensure_ascii=False) + "\n"
    )


def test_speed_table_shows_the_batch_seconds_and_the_ratio_against_4x() -> None:
    from benchmarks import speed

    results = {"ours": side(0.6, 3.0), "bm25": side(1.0, 4.0), "bm25s": side(0.2, 1.0)}
    before = speed.table(results)
    assert "batch" not in before and speed.batch_ratios(results) == {}
    results["ours"]["batch"] = speed.batch_figures(10, 5.0, 4.0)
    results["bm25s"]["batch"] = speed.batch_figures(10, 1.0, 2.0)
    assert speed.batch_ratios(results) == pytest.approx({"wall_s": 5.0, "cpu_s": 2.0})
    lines = speed.table(results).splitlines()
    assert lines[: len(before.splitlines())] == before.splitlines()  # the existing rows unchanged
    seconds = next(line for line in lines if line.startswith("batch 10 x 60 (s)"))
    assert "5.00" in seconds and "1.00" in seconds and "CPU 4.00 / 2.00" in seconds
    verdict = next(line for line in lines if line.startswith("ours / bm25s batch"))
    assert "5.0x" in verdict and "<=4x" in verdict and "NOT met" in verdict and "CPU 2.0x" in verdict
    results["ours"]["batch"] = speed.batch_figures(10, 3.0, 3.0)
    verdict = speed.table(results).splitlines()[-1]
    assert "3.0x" in verdict and "<=4x met (wall" in verdict and "NOT" not in verdict


def test_speed_judges_the_paired_child_and_prints_the_alone_ratios_beside() -> None:
    """With a paired child (both sides query by query in one process), the targets are judged on
    its figures; each side's own child stays in the table and its ratio is printed beside."""
    from benchmarks import speed

    results = {"ours": side(0.6, 3.0), "bm25": side(1.0, 4.0), "bm25s": side(0.2, 1.0)}
    results["bm25s"]["query_retrieve"] = side(0.2, 0.4)["query"]  # alone: 3.0x p50, 7.5x p99
    results["ours"]["batch"] = speed.batch_figures(10, 6.0, 6.0)
    results["bm25s"]["batch"] = speed.batch_figures(10, 1.0, 1.0)  # alone: 6.0x
    assert speed.judged_ratios(results) == pytest.approx({"p50_ms": 3.0, "p95_ms": 7.5, "p99_ms": 7.5})
    results["paired"] = {
        "ours": side(0.5, 2.0)["query"],
        "bm25s": side(0.4, 1.0)["query"],
        "batch": {"ours": speed.batch_figures(10, 3.0, 3.0), "bm25s": speed.batch_figures(10, 1.0, 1.0)},
    }
    assert speed.judged_ratios(results) == pytest.approx({"p50_ms": 1.25, "p95_ms": 2.0, "p99_ms": 2.0})
    assert speed.batch_ratios(results) == pytest.approx({"wall_s": 3.0, "cpu_s": 3.0})
    assert speed.batch_ratios(results, alone=True) == pytest.approx({"wall_s": 6.0, "cpu_s": 6.0})
    lines = speed.table(results).splitlines()
    paired = next(line for line in lines if line.startswith("paired (ms)"))
    assert "0.500/2.000" in paired and "0.400/1.000" in paired and "alone 3.0x/7.5x" in paired
    p50 = next(line for line in lines if line.startswith("ours / bm25s retrieve() p50"))
    assert "1.2x" in p50 and p50.endswith(" met")
    batch = next(line for line in lines if line.startswith("ours / bm25s batch"))
    assert "3.0x" in batch and "<=4x met" in batch and "alone 6.0x" in batch


def test_speed_paired_child_times_both_sides_on_every_query(tmp_path: Path) -> None:
    """measure_paired on the tiny site: one latency sample per query on each side, both batches."""
    pytest.importorskip("bm25s")
    from benchmarks import speed
    from conftest import tiny_site

    shared = tmp_path / "shared"
    (shared / "kpi").mkdir(parents=True)
    (shared / "site").symlink_to(tiny_site(), target_is_directory=True)
    queries = ["redis queue", "expose a method", "nothing matches zzz"] * 4
    (shared / "kpi" / "artificial-queries.json").write_text(
        json.dumps({"main": [{"query": q} for q in queries]}), encoding="utf-8"
    )
    figures = speed.measure_paired(shared, tmp_path, None)
    for name in ("ours", "bm25s"):
        assert figures[name]["n"] == len(queries) and 0 < figures[name]["p50_ms"] <= figures[name]["p99_ms"]
        assert figures["batch"][name]["n"] == len(queries) and figures["batch"][name]["wall_s"] > 0


# --- restraint (benchmarks/restraint.py) --------------------------------------------------------


def line_of(query: str, *scores: float, confidence: str | None = None) -> dict[str, Any]:
    hits: list[dict[str, Any]] = [
        {"u": f"/{i}/", "external": False, "score": s} for i, s in enumerate(scores)
    ]
    if confidence:
        for hit in hits:
            hit["confidence"] = confidence
    return {"query": query, "results": hits}


def test_the_threshold_is_the_highest_that_keeps_right_answers_called_low_under_the_bar() -> None:
    from benchmarks import restraint

    right = [float(s) for s in range(1, 21)]  # 20 right #1 scores: 1 may fall under (5 %)
    quarantine: list[float | None] = [0.5, 1.5, 2.5, 30.0, None]
    point = restraint.choose_threshold(right, quarantine)
    assert point.threshold == 2.0 and point.right_low == 5.0
    assert point.quarantine_low == 60.0  # 0.5, 1.5 and the empty answer
    curve = restraint.threshold_curve(right, quarantine, [0.0, 3.0])
    assert [(p.right_low, p.quarantine_low) for p in curve] == [(0.0, 20.0), (10.0, 80.0)]


def test_restraint_reads_the_hits_confidence_and_counts_empty_answers_as_low() -> None:
    from benchmarks import restraint

    gold = [line_of("a", 9.0, confidence="high"), line_of("b", 1.0, confidence="low"), line_of("c", 5.0)]
    gold[2]["results"][0]["confidence"] = "medium"
    quarantine = [line_of("x", 0.2, confidence="low"), line_of("y"), line_of("z", 7.0, confidence="high")]
    measured = restraint.measure(gold, [True, True, False], [False] * 3, quarantine)
    assert measured.source == "the hits' own confidence field"
    assert (measured.right, measured.right_low) == (2, 50.0)
    assert (measured.quarantine, round(measured.quarantine_low, 1)) == (3, 66.7)


def test_without_a_confidence_the_stand_in_threshold_is_calibrated_and_named() -> None:
    from benchmarks import restraint

    gold = [line_of(str(i), float(i)) for i in range(1, 21)]
    quarantine = [line_of("x", 0.5), line_of("y", 25.0), line_of("z")]
    measured = restraint.measure(gold, [True] * 20, [False] * 20, quarantine, use_ranker=False)
    assert measured.source.startswith("stand-in") and measured.threshold == 2.0
    assert measured.right_low == 5.0 and round(measured.quarantine_low, 1) == 66.7


# --- nested cross-validation of the rules (benchmarks/nested.py) ---------------------------


def test_each_switch_starts_off_and_holds_the_rules_value() -> None:
    from benchmarks import nested

    for name, value in nested.shipped().items():
        grid = nested.grid(name, value)
        assert grid[0] == nested.SWITCHES[name][0] and value in grid
        assert 2 <= len(grid) <= 4  # off and one or two constants (and the rules.py value)


@pytest.mark.slow  # over 3.5 s in the README's fast run (docs/testing.md): CI runs it
def test_nested_cv_chooses_each_rule_inside_the_folds_and_scores_every_label(
    evaluator: Any, gold: dict[str, Any]
) -> None:
    from benchmarks import cv, nested

    cases = small_sample(gold, topics=10, per_topic=2)
    folds = cv.topic_folds(cases, 2)
    outcome = nested.run(evaluator, cv.load_scorer(KPI), cases, folds)
    for chosen in (*outcome.nested, *outcome.plain):
        assert set(chosen) == set(nested.SWITCHES)
        assert all(chosen[n] in nested.grid(n, v) for n, v in nested.shipped().items())
    verdicts = nested.verdicts(outcome)
    assert set(verdicts) == set(nested.SWITCHES)
    for name, verdict in verdicts.items():
        assert verdict["nested_on"] == sum(1 for s in outcome.nested if s[name] != nested.SWITCHES[name][0])
        if verdict["keep"]:
            assert verdict["nested_on"] * 2 > len(folds) and verdict["held_out_p1_gain"] >= 0
    lines = nested.lines_for(evaluator, cases, folds, outcome.nested)
    assert [line["query"] for line in lines] == [c["query"] for c in cases]
    assert outcome.settings_ranked >= 1 and all(len(v) == 2 for v in outcome.fold_p1.values())


def test_restraint_questions_count_weak_answers_per_kind() -> None:
    from imqueue_mcp.docsource import build

    from benchmarks import unanswerable
    from conftest import tiny_site

    index = build(mirror=tiny_site()).index()
    questions = {
        "answerable": [{"query": "redis queue", "page": "/api/core/latest/core.redisqueue/"}],
        "unanswerable": [{"query": "terraform kubernetes helm lambda"}, {"query": "quux zzyzx"}],
    }
    figures = unanswerable.measure(index, questions)
    assert (figures.answerable, figures.unanswerable) == (1, 2)
    assert figures.answerable_first_on_page == 100.0
    # words no record holds: a miss (nothing found) is not "answered with confidence"
    assert figures.unanswerable_weak == 100.0 and figures.missed_unanswerable == []
    assert "unanswerable marked weak" in unanswerable.report(figures)
    shipped = json.loads(unanswerable.DEFAULT_QUESTIONS.read_text(encoding="utf-8"))
    assert len(shipped["answerable"]) >= 30 and len(shipped["unanswerable"]) >= 30


# --- passages (benchmarks/passages.py) --------------------------------------------------------


def test_the_answer_is_found_across_line_breaks_and_a_list_marker() -> None:
    from benchmarks import passages

    page = "Intro.\n\n- Messages are delivered\n  at least once. Then more.\n"
    assert passages.holds(
        "- Messages are delivered at least once. Then more.", "Messages are delivered at least once."
    )
    assert passages.tokens_until(page, "- Messages are delivered at least once.") == 13  # 49 characters in
    assert passages.tokens_until(page, "Never said.") is None
    assert not passages.holds("Messages are delivered", "Messages are delivered at least once.")


def test_every_question_names_its_page_and_an_answer_the_page_has() -> None:
    from benchmarks import passages

    questions = json.loads(passages.QUESTIONS.read_text(encoding="utf-8"))["questions"]
    assert 40 <= len(questions) <= 60
    assert len({q["page"] for q in questions}) >= 30  # spread across many pages
    if not (SHARED / "site").is_dir():
        pytest.skip(f"shared folder not found at {SHARED}")
    for case in questions:
        host, _, path = case["page"].removeprefix("https://").partition("/")
        markdown = (SHARED / "site" / host / path / "index.md").read_text(encoding="utf-8")
        assert passages.tokens_until(markdown, case["answer"]) is not None, case["question"]


def test_the_passages_figures_read_back_on_two_questions(tmp_path: Path) -> None:
    if not (SHARED / "site").is_dir():
        pytest.skip(f"shared folder not found at {SHARED}")
    from imqueue_mcp.docsource import build, save_snapshot

    from benchmarks import passages

    questions = json.loads(passages.QUESTIONS.read_text(encoding="utf-8"))["questions"][:2]
    snapshot = build(mirror=SHARED / "site")
    save_snapshot(snapshot, tmp_path / "s.msgpack")
    keeper = passages.keeper_for(tmp_path / "s.msgpack")
    figures = passages.score_questions(keeper, snapshot, SHARED / "site", questions)
    assert figures["questions"] == 2
    for key in ("top1_pct", "top3_pct", "page_in_top3_pct", "get_doc_answered_pct"):
        assert 0 <= figures[key] <= 100, key
    assert figures["top1_pct"] <= figures["top3_pct"]
    assert len(figures["missed"]) == round(2 * (100 - figures["top3_pct"]) / 100)
    timing = passages.time_search(keeper, ["expose a method", "redis queue send"], ["queue"], rounds=1)
    assert timing["with"]["n"] == timing["without"]["n"] == 2
    assert timing["warm_up_s"] >= 0  # the passages' background warm-up was waited for
    made_up = {"without": {"p50_ms": 1.0, "p99_ms": 1.0}, "with": {"p50_ms": 1.2, "p99_ms": 3.0}}
    results = {"default": figures, "pages": figures, "latency": {**made_up, "warm_up_s": 0.5}}
    text = passages.table(results)
    assert "answer in the top hit's passage" in text and "(target <=2x met)" in text and "NOT met" in text
    assert "1.20x" in text and "3.00x" in text and "warm-up, between the queries: 0.50 s" in text


def test_speed_shows_ours_with_passages_as_a_column_of_its_own_without_judging_it() -> None:
    from benchmarks import speed

    results = {"ours": side(0.6, 3.0), "bm25": side(1.0, 4.0), "bm25s": side(0.2, 1.0)}
    results["bm25s"]["query_retrieve"] = side(0.25, 0.5)["query"]
    before = speed.table(results)
    results["ours"]["query_passages"] = side(0.9, 4.0)["query"]
    after = speed.table(results).splitlines()
    assert [line for line in after if not line.startswith("ours + passages")] == before.splitlines()
    line = next(line for line in after if line.startswith("ours + passages"))
    assert "0.900/4.000" in line and "3.6x/8.0x" in line and "met" not in line
    assert speed.ratios(results, "query_retrieve", "query_passages") == pytest.approx(
        {"p50_ms": 3.6, "p95_ms": 8.0, "p99_ms": 8.0}
    )

"""benchmarks: figures about the ranker, printed side by side with a plain BM25 baseline.

    paths.py      where ../shared lives (IMQ_SHARED or --shared) and the kpi scripts in it
    baseline.py   the rank-bm25 baseline: corpus -> BM25Okapi -> results lines in the kpi format
    scoring.py    runs the shared kpi scripts on results files and reads their figures back
    kpi.py        `python -m benchmarks.kpi`: relevance figures (evaluate.py, ranking_cases.py), floors
    speed.py      `python -m benchmarks.speed`: build, load, per-query latency and peak RSS

Benchmarks print a readable table and one JSON line; they never assert speed.
"""

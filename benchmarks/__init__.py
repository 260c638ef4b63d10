"""benchmarks: figures, printed side by side with a baseline measured in the same run.

    kpi.py          `python -m benchmarks.kpi`: ranking relevance (the shared scorer), floors
    nested.py       the nested topic-grouped CV of the ranking rules that heads the KPI (on cv.py)
    cv.py           topic folds, ranking under a setting of rules.py, evaluate.py's per-label verdicts
    unanswerable.py `python -m benchmarks.unanswerable`: restraint on questions written for it
    speed.py        `python -m benchmarks.speed`: build, load, per-query latency, peak RSS
    bench_server.py `python -m benchmarks.bench_server`: cold start, stdio round trips, hosted
                    throughput, each beside a bare SDK server
    soak.py         `python -m benchmarks.soak`: every tool, resource, prompt and completion from
                    many SDK clients at once (HTTP and stdio), on servers started cold again and
                    again: unexpected failures, server log errors, RSS (soak_calls.py: the calls
                    and what each answer must be)
    journeys.py     `python -m benchmarks.journeys`: scripted agent journeys on the real stack,
                    counting the hand fixes each needs (journey_kit.py: its parts)
    stack.py        where .ci/install-imq.sh built @imqueue 3.x and imq; a Redis; process groups
    baseline.py     the rank-bm25 baseline: corpus -> BM25Okapi -> results in the kpi format
    scoring.py      runs the shared kpi scripts on results files and reads their figures back
    paths.py, machine.py, processes.py   where ../shared is, what machine ran, stopping children

Benchmarks print a readable table and one JSON line; they never assert speed.
"""

"""GET /metrics: the hosted server's Prometheus metrics, through prometheus_client.

    imqueue_mcp_tool_calls_total{tool,outcome}         calls answered; outcome "ok" or the
                                                       error code of an isError result
    imqueue_mcp_tool_call_duration_seconds{tool}       latency histogram, per tool

Label values come from fixed sets, never from what a client sends: `tool` is a registered tool's
name or "other" (an unknown name, of any length), `outcome` is "ok", one of the error codes the
server defines (errors.ErrorCode) or "other". So the exposition has a bounded size whatever the
traffic (SECURITY.md: client-chosen labels).
    imqueue_mcp_tool_calls_in_flight                   calls running now
    imqueue_mcp_snapshot_generation_info{generation,source}  1 for the corpus answering
    imqueue_mcp_snapshot_fetched_timestamp_seconds     when its feeds were read (Unix time)
    imqueue_mcp_snapshot_age_seconds                   now minus that, at scrape time
    imqueue_mcp_snapshot_refresh_failures_total{kind}  failed loads: "live" (a rebuild from the
                                                       sites), "snapshot" (a file or URL that
                                                       could not be read or failed its checksum)
    imqueue_mcp_search_cache_lookups_total{cache,result}  search_docs' caches: "replies" (whole
                                                       replies) and "answers" (the ranker's, asked
                                                       when no reply was kept); "hit" or "miss"

With --workers N each worker is its own process. When PROMETHEUS_MULTIPROC_DIR is set (the
hosted launch sets it to a fresh folder for N > 1), prometheus_client's multiprocess mode adds
the workers up: counters and histograms summed, in-flight summed over live workers, and the
generation and timestamp carry a `pid` label per live worker (the age is the answering worker's),
so a scrape that lands on any worker sees the whole process group. With one worker the process's
own registry answers.

Live workers only: the gauges are "live" modes, whose files prometheus_client deletes when told
that their pid died. A worker tells it itself on a clean exit (close); one killed (SIGKILL, the
OOM killer) cannot, so the supervisor does when it finds the worker dead (forget_worker). The
counters and histograms of a dead worker stay in the sums: the calls it answered happened, and a
total that fell when a worker died would read as a counter reset.

One generation series per worker: a switch removes the old generation's label set. A multiprocess
file cannot forget a label set, so there the old one is set to 0 and the scrape leaves out the
generation samples at 0 (_Workers).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client import multiprocess as prometheus_multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from imqueue_mcp.server.docs.answer_cache import OwnedCache
from imqueue_mcp.server.errors import ErrorCode

MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
GENERATION = "imqueue_mcp_snapshot_generation_info"
OTHER = "other"  # the label value of any tool name or outcome outside the fixed sets
OUTCOMES = frozenset({"ok", *(code.value for code in ErrorCode)})
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


def multiprocess() -> bool:
    return bool(os.environ.get(MULTIPROCESS_DIR))


class Metrics:
    """The metrics of one process; `page()` is the exposition of all of them (all workers' when
    multiprocess)."""

    def __init__(self, corpus_age: Callable[[], float | None], tools: Iterable[str]):
        self.tools = frozenset(tools)
        self.registry = CollectorRegistry(auto_describe=True)
        # In multiprocess mode the values live in files and are gathered at scrape time.
        own = None if multiprocess() else self.registry
        self.calls = Counter(
            "imqueue_mcp_tool_calls",
            "Tool calls answered, by tool and outcome (ok, or the error code of an isError result).",
            ["tool", "outcome"],
            registry=own,
        )
        self.latency = Histogram(
            "imqueue_mcp_tool_call_duration_seconds",
            "Tool call latency in seconds, by tool.",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=own,
        )
        self.in_flight = Gauge(
            "imqueue_mcp_tool_calls_in_flight",
            "Tool calls running now.",
            registry=own,
            multiprocess_mode="livesum",
        )
        self.generation = Gauge(
            GENERATION,
            "1 for the docs corpus generation answering (a content hash) and its source.",
            ["generation", "source"],
            registry=own,
            multiprocess_mode="liveall",
        )
        self.fetched = Gauge(
            "imqueue_mcp_snapshot_fetched_timestamp_seconds",
            "When the answering corpus's feeds were read, in Unix time.",
            registry=own,
            multiprocess_mode="liveall",
        )
        self.failures = Counter(
            "imqueue_mcp_snapshot_refresh_failures",
            "Corpus loads that failed and left the previous generation answering, by kind.",
            ["kind"],
            registry=own,
        )
        self.cache_lookups = Counter(
            "imqueue_mcp_search_cache_lookups",
            "search_docs' cache lookups, by cache (replies, answers) and result (hit, miss).",
            ["cache", "result"],
            registry=own,
        )
        self._generation: tuple[str, str] | None = None
        self._counters: dict[tuple[str, str], Counter] = {}
        self._latencies: dict[str, Histogram] = {}
        if multiprocess():
            self.registry.register(_Workers())
        self.registry.register(_AgeCollector(corpus_age))

    @contextmanager
    def call(self, tool: str) -> Iterator[Callable[[str], None]]:
        """Around one tool call: yields `finish(outcome)`, which the caller calls once it knows."""
        started = time.perf_counter()
        outcome = "internal_error"  # what a call that raised out of here counts as

        def finish(value: str) -> None:
            nonlocal outcome
            outcome = value

        tool = tool if tool in self.tools else OTHER
        self.in_flight.inc()
        try:
            yield finish
        finally:
            self.in_flight.dec()
            self._counter(tool, outcome if outcome in OUTCOMES else OTHER).inc()
            latency = self._latencies.get(tool)
            if latency is None:
                latency = self._latencies[tool] = self.latency.labels(tool)
            latency.observe(time.perf_counter() - started)

    def _counter(self, tool: str, outcome: str) -> Counter:
        # The labelled children, kept: labels() takes a lock and builds a key on every call.
        counter = self._counters.get((tool, outcome))
        if counter is None:
            counter = self._counters[(tool, outcome)] = self.calls.labels(tool, outcome)
        return counter

    def watch_cache(self, name: str, cache: OwnedCache[Any, Any, Any]) -> None:
        """Count `cache`'s lookups under cache=`name` from now on."""
        hit, miss = self.cache_lookups.labels(name, "hit"), self.cache_lookups.labels(name, "miss")
        cache.observe = lambda found: (hit if found else miss).inc()

    def corpus_loaded(self, generation: str, source: str, fetched_at: str) -> None:
        """`generation` answers now: its series is the only one this worker reports (one a day
        per hourly switch would pile up for the life of the process otherwise)."""
        old, self._generation = self._generation, (generation, source)
        if old is not None and old != self._generation:
            if multiprocess():  # remove() cannot reach the file: 0, which the scrape leaves out
                self.generation.labels(*old).set(0)
            else:
                self.generation.remove(*old)
        self.generation.labels(generation, source).set(1)
        stamp = unix_time(fetched_at)
        if stamp is not None:
            self.fetched.set(stamp)

    def refresh_failed(self, kind: str) -> None:
        self.failures.labels(kind).inc()

    def page(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def close(self) -> None:
        """This worker is going away: its live gauges leave the multiprocess sums."""
        if multiprocess():
            prometheus_multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]


def forget_worker(pid: int) -> None:
    """The worker `pid` is dead (found so by the supervisor, which runs no app and keeps no
    metrics): its live gauges (in flight, generation, fetched time) leave the multiprocess scrape,
    as close() does for a worker that exits cleanly. Nothing without multiprocess mode."""
    if multiprocess():
        try:
            prometheus_multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]
        except OSError as error:  # a file the worker removed itself between the glob and the remove
            logging.getLogger(__name__).info("worker %d's metrics files: %s", pid, error)


class _Workers(Collector):
    """Every worker's values, from the multiprocess folder; less the generation label sets at 0,
    which are generations a worker has left (corpus_loaded): its file keeps them."""

    def __init__(self) -> None:
        self.files = prometheus_multiprocess.MultiProcessCollector(None)  # type: ignore[no-untyped-call]

    def collect(self) -> Iterator[Any]:
        for family in self.files.collect():  # type: ignore[no-untyped-call]
            if family.name == GENERATION:
                family.samples = [sample for sample in family.samples if sample.value != 0]
            yield family


class _AgeCollector(Collector):
    """The answering corpus's age, computed when scraped (a stored gauge would be stale)."""

    def __init__(self, corpus_age: Callable[[], float | None]):
        self.corpus_age = corpus_age

    def collect(self) -> Iterator[Any]:
        age = self.corpus_age()
        family = GaugeMetricFamily(
            "imqueue_mcp_snapshot_age_seconds",
            "Seconds since the answering corpus's feeds were read (in the worker that answered the scrape).",
        )
        if age is not None:
            family.add_metric([], age)
        yield family


def unix_time(iso: str) -> float | None:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None

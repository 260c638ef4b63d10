"""/metrics reports live workers and the generation answering, nothing they have left; and a
generation is named by its content, not by when it was read (audit findings 05 and 09).

- A worker killed without its shutdown (SIGKILL, the OOM killer) leaves the multiprocess scrape
  when the supervisor finds it dead: its generation, fetched time and in-flight calls go, its
  counted calls stay in the sums.
- A generation switch removes the old generation's series (in multiprocess mode the scrape
  leaves it out: a worker's file cannot forget a label set).
- A rebuild of unchanged docs is the same generation: a follower keeps it, and its caches.

Real servers where the subject is the process group: `imqueue-mcp --http --workers 2` on
loopback, the snapshot built from ../shared/site (conftest.built_snapshot).
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from test_hosted_operations import metric, metric_labels, offline_server, search_once, wait_ready

from imqueue_mcp.docsource import generation_of, load_snapshot, save_snapshot
from imqueue_mcp.server.hosting.metrics import Metrics

from conftest import REPO, HttpServer, built_snapshot, loopback_get

PAGE = "https://imqueue.org/tutorial/user-service/"
GENERATION = "imqueue_mcp_snapshot_generation_info"
LIVE_GAUGES = ("gauge_livesum", "gauge_liveall")  # the gauges' multiprocess files (metrics.py)


def rewritten(source: Path, target: Path, fetched_at: str, *, page_change: str = "") -> Path:
    """`source` saved again as a builder that read the feeds at `fetched_at` would write it: both
    headers (the snapshot's and its pages part's) carry the new time; `page_change` is appended
    to PAGE's saved markdown (a content change)."""
    snapshot = load_snapshot(source)
    pages = snapshot.saved_pages(source)
    assert pages is not None
    snapshot.header["fetched_at"] = pages.header["fetched_at"] = fetched_at
    if page_change:
        pages.body[PAGE] += page_change.encode()
    save_snapshot(snapshot, target)
    return target


def publish(source: Path, target: Path) -> None:
    """What a builder does: a temp file in the same folder, then one rename."""
    temp = target.with_name(f".{target.name}.tmp")
    temp.write_bytes(source.read_bytes())
    os.replace(temp, target)


def generation_series(page: str) -> list[dict[str, str]]:
    return metric_labels(page, GENERATION)


def scrape(server: HttpServer) -> str:
    return httpx.get(server.url + "/metrics", timeout=5).text


# --- 09: a generation is named by its content ---------------------------------------------------


def test_an_unchanged_rebuild_is_the_same_generation_and_a_changed_page_another(tmp_path: Path) -> None:
    first = built_snapshot(tmp_path / "first")
    again = rewritten(first, tmp_path / "again.msgpack", "2099-01-01T00:00:00+00:00")
    changed = rewritten(
        first, tmp_path / "changed.msgpack", "2099-01-01T00:00:00+00:00", page_change="\nmore\n"
    )
    loaded = {
        name: load_snapshot(path) for name, path in (("first", first), ("again", again), ("changed", changed))
    }
    # the fetch time differs, in the snapshot's header and in its pages part's (so the file does)
    assert loaded["again"].fetched_at != loaded["first"].fetched_at
    assert loaded["again"].header["pages_sha256"] != loaded["first"].header["pages_sha256"]
    assert generation_of(loaded["again"].header) == generation_of(loaded["first"].header)
    assert generation_of(loaded["changed"].header) != generation_of(loaded["first"].header)
    # the content checksum is read from the pages on load, never written into the file
    resaved = tmp_path / "resaved.msgpack"
    save_snapshot(loaded["changed"], resaved)
    assert generation_of(load_snapshot(resaved).header) == generation_of(loaded["changed"].header)
    assert b"pages_body_sha256" not in resaved.read_bytes()[:4096]


def test_a_follower_keeps_its_generation_and_caches_through_an_unchanged_rebuild(tmp_path: Path) -> None:
    followed = built_snapshot(tmp_path / "published")
    (tmp_path / "home").mkdir()
    again = rewritten(followed, tmp_path / "again.msgpack", "2099-01-01T00:00:00+00:00")
    server = offline_server(followed, tmp_path / "home", "--snapshot-poll-seconds", "0")
    try:
        ready = wait_ready(server)
        first = ready["corpus"]
        assert isinstance(first, dict)
        assert not search_once(server).is_error  # a reply kept
        publish(again, followed)
        server.process.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 4  # a check loads the file in well under a second
        while time.monotonic() < deadline and "now answers" not in server.stderr():
            time.sleep(0.1)
        now = loopback_get(server.url + "/readyz", timeout=5).json()["corpus"]
        assert now["generation"] == first["generation"], server.stderr()
        assert now["fetchedAt"] == first["fetchedAt"]  # nothing replaced: the corpus answering stays
        assert not search_once(server).is_error
        page = scrape(server)
        # the repeated search was answered from the reply kept before the rebuild
        assert metric(page, "imqueue_mcp_search_cache_lookups_total", cache="replies", result="hit") == 1
        assert generation_series(page) == [{"generation": first["generation"], "source": "snapshot"}]
    finally:
        server.close()


# --- 09: the old generation's series goes --------------------------------------------------------


def test_a_generation_switch_leaves_one_generation_series() -> None:
    metrics = Metrics(lambda: None, ["search_docs"])
    for generation in ("aaaa", "bbbb", "cccc", "bbbb"):
        metrics.corpus_loaded(generation, "snapshot", "2026-01-01T00:00:00+00:00")
    page = metrics.page()[0].decode()
    assert generation_series(page) == [{"generation": "bbbb", "source": "snapshot"}]
    assert metric(page, GENERATION, generation="bbbb") == 1


MULTIPROCESS_SWITCHES = """
import sys
from imqueue_mcp.server.hosting.metrics import Metrics
metrics = Metrics(lambda: None, ["search_docs"])
for generation in ("aaaa", "bbbb", "cccc", "bbbb"):
    metrics.corpus_loaded(generation, "snapshot", "2026-01-01T00:00:00+00:00")
sys.stdout.write(metrics.page()[0].decode())
"""


def test_a_generation_switch_leaves_one_generation_series_in_multiprocess_mode(tmp_path: Path) -> None:
    # its own process: prometheus_client picks file-backed values when it is first imported
    folder = tmp_path / "metrics"
    folder.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(folder), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", MULTIPROCESS_SWITCHES],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    series = generation_series(done.stdout)
    assert [(s["generation"], s["source"]) for s in series] == [("bbbb", "snapshot")], done.stdout
    assert metric(done.stdout, GENERATION) == 1


# --- 05: a killed worker leaves the scrape --------------------------------------------------------


def reporting_pids(server: HttpServer) -> set[int]:
    return {int(labels["pid"]) for labels in generation_series(scrape(server))}


def wait_for(what: str, check: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def test_a_killed_worker_leaves_the_metrics_and_live_workers_report_the_new_generation(
    tmp_path: Path,
) -> None:
    followed = built_snapshot(tmp_path / "published")
    newer = rewritten(followed, tmp_path / "b.msgpack", "2099-01-01T00:00:00+00:00", page_change="\nnew\n")
    folder = tmp_path / "metrics"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    server = offline_server(
        followed,
        tmp_path / "home",
        "--workers",
        "2",
        "--snapshot-poll-seconds",
        "0",
        PROMETHEUS_MULTIPROC_DIR=str(folder),
    )
    try:
        wait_ready(server)
        wait_for("both workers report a generation", lambda: len(reporting_pids(server)) == 2)
        for _ in range(4):  # calls counted, spread over the workers (new connections)
            assert not search_once(server).is_error
        calls = metric(scrape(server), "imqueue_mcp_tool_calls_total")
        victim = min(reporting_pids(server))
        os.kill(victim, signal.SIGKILL)
        survivor = reporting_pids(server) - {victim}
        # the replacement reports once it has loaded the corpus; the dead worker was forgotten before
        wait_for("a replacement reports", lambda: len(reporting_pids(server) - survivor - {victim}) == 1)
        pids = reporting_pids(server)
        assert victim not in pids and len(pids) == 2
        assert not [
            f.name for f in folder.iterdir() if f.name.startswith(LIVE_GAUGES) and f"_{victim}." in f.name
        ]
        page = scrape(server)
        assert metric(page, "imqueue_mcp_tool_calls_total") == calls  # its answered calls still count
        assert {
            int(labels["pid"])
            for labels in metric_labels(page, "imqueue_mcp_snapshot_fetched_timestamp_seconds")
        } == pids
        # the next generation: each live worker reports it, once, and nothing else is left
        publish(newer, followed)
        server.process.send_signal(signal.SIGHUP)
        wanted = generation_of(load_snapshot(newer).header)
        wait_for(
            "both workers report the new generation",
            lambda: (
                {(s["generation"], int(s["pid"])) for s in generation_series(scrape(server))}
                == {(wanted, pid) for pid in pids}
            ),
        )
    finally:
        server.close()


def two_reporting(server: HttpServer) -> bool:
    return len(reporting_pids(server)) == 2


def test_a_server_killed_whole_leaves_no_dead_workers_in_the_next_runs_scrapes(tmp_path: Path) -> None:
    """An operator's PROMETHEUS_MULTIPROC_DIR outlives the server: killed whole (the OOM killer, a
    lost node), its workers' live gauges stayed there and every scrape of the next run on the same
    folder reported those dead pids as live workers. The folder is emptied at start."""
    snapshot = built_snapshot(tmp_path / "published")
    folder = tmp_path / "metrics"
    folder.mkdir()
    (tmp_path / "home").mkdir()
    dead: set[int] = set()
    for run in range(2):
        server = offline_server(
            snapshot, tmp_path / "home", "--workers", "2", PROMETHEUS_MULTIPROC_DIR=str(folder)
        )
        try:
            wait_ready(server)
            wait_for("both workers report a generation", functools.partial(two_reporting, server))
            pids = reporting_pids(server)
            assert not pids & dead, (run, pids, dead)
            if run == 0:  # no shutdown at all: every process of the group dies at once
                dead = pids
                for pid in (server.process.pid, *pids):
                    os.kill(pid, signal.SIGKILL)
                server.process.wait(10)
        finally:
            server.close()

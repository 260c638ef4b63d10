"""imq-search: the ranker on the command line, over a snapshot built from fixtures/tiny_site.py.

In-process through `build_index.search_cli.main(argv, out=StringIO)` (stderr via capsys), and once as a
real process. Exit codes: 0 results, 1 a miss (with guidance), 2 a usage or corpus error.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest

from imqueue_mcp.build_index.search_cli import main as search_main
from imqueue_mcp.docsource import build, load_snapshot, save_snapshot
from imqueue_mcp.ranker import rules

from conftest import tiny_site

REPO = Path(__file__).resolve().parents[1]
SITE = tiny_site()
SECTIONS = ["Getting started", "Reference", "Blog", "Commercial"]


@pytest.fixture(autouse=True)
def no_inherited_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """The width is each test's to set: a COLUMNS the runner inherited (xdist workers carry the
    terminal's) would fold the piped table these tests read whole."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("imq-search") / "snapshot.msgpack"
    save_snapshot(build(mirror=SITE), path)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    out = io.StringIO()
    code = search_main(list(argv), out=out)
    captured = capsys.readouterr()
    assert captured.out == "", "imq-search wrote to sys.stdout instead of `out`"
    return code, out.getvalue(), captured.err


def search_json(capsys: pytest.CaptureFixture[str], snapshot: Path, *argv: str) -> dict[str, Any]:
    code, out, err = run(capsys, "--snapshot", str(snapshot), "--json", *argv)
    assert err == ""
    data: dict[str, Any] = json.loads(out)
    assert code == (0 if data["count"] else 1)
    return data


# --- the table -------------------------------------------------------------------------


def test_a_query_prints_a_ranked_table_and_exits_0(
    capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    code, out, err = run(capsys, "--snapshot", str(snapshot), "redis queue")
    assert (code, err) == (0, "")
    header, *rows = out.splitlines()
    assert header.split() == ["#", "score", "conf", "title", "url"]
    rows = [row for row in rows if not row.startswith("(weak:")]
    assert 1 <= len(rows) <= 6
    rank, score, confidence, title, path = rows[0].split()
    assert confidence in {"high", "medium", "low"}
    assert (rank, title, path) == ("1", "RedisQueue", "https://imqueue.org/api/core/latest/core.redisqueue/")
    scores = [float(row.split()[1]) for row in rows]
    assert float(score) > 0 and scores[0] == max(scores)
    assert [row.split()[0] for row in rows] == [str(n) for n in range(1, len(rows) + 1)]


def test_piped_rows_are_whole_lines_with_the_whole_url(
    capsys: pytest.CaptureFixture[str], snapshot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No terminal and no COLUMNS (a pipe into grep or a file): one line per hit, nothing cut."""
    monkeypatch.delenv("COLUMNS", raising=False)
    for query in ("service", "pricing", "How do I expose a method?"):
        code, out, _ = run(capsys, "--snapshot", str(snapshot), "--limit", "20", query)
        rows = [line for line in out.splitlines()[1:] if not line.startswith("(weak:")]
        expected = search_json(capsys, snapshot, "--limit", "20", query)["results"]
        assert code == 0 and len(rows) == len(expected)
        for row, hit in zip(rows, expected, strict=True):
            assert row.endswith("  " + hit["url"]) and hit["title"] in row
        assert "…" not in out and all(line == line.rstrip() for line in out.splitlines())
    _, out, _ = run(capsys, "--snapshot", str(snapshot), "pricing")
    assert any(line.endswith("  https://imqueue.com/pricing/") for line in out.splitlines()[1:])


@pytest.mark.parametrize("columns", [40, 60, 100])
def test_rows_fit_columns_and_fold_long_titles_and_urls_instead_of_cutting_them(
    capsys: pytest.CaptureFixture[str], snapshot: Path, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = run(capsys, "--snapshot", str(snapshot), "--limit", "20", "How do I expose a method?")
    lines = out.splitlines()
    assert code == 0 and max(len(line) for line in lines) <= columns and "…" not in out
    url_column = lines[0].index("url")
    folded = "".join(line[url_column:] for line in lines[1:] if not line.startswith("(weak:"))
    for hit in search_json(capsys, snapshot, "--limit", "20", "How do I expose a method?")["results"]:
        assert hit["url"] in folded  # every URL whole, read down its column


def test_limit_bounds_the_number_of_rows(capsys: pytest.CaptureFixture[str], snapshot: Path) -> None:
    code, out, _ = run(capsys, "--snapshot", str(snapshot), "--limit", "2", "redis queue")
    rows = [line for line in out.splitlines() if not line.startswith("(weak:")]
    assert code == 0 and len(rows) == 1 + 2


def test_a_weak_best_hit_is_said_under_the_table_and_in_json(
    capsys: pytest.CaptureFixture[str], snapshot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_SCORE", 1e9)  # every hit of the tiny corpus is weak
    monkeypatch.setattr(rules, "CONFIDENCE_LOW_PER_WEIGHT", 1e9)
    code, out, _ = run(capsys, "--snapshot", str(snapshot), "redis queue")
    assert code == 0 and out.splitlines()[-1].startswith("(weak: the best hit scores under")
    data = search_json(capsys, snapshot, "redis queue")
    assert data["weak"] is True and {hit["confidence"] for hit in data["results"]} == {"low"}

    monkeypatch.setattr(rules, "CONFIDENCE_LOW_SCORE", 0.0)
    code, out, _ = run(capsys, "--snapshot", str(snapshot), "redis queue")
    assert "(weak:" not in out and search_json(capsys, snapshot, "redis queue")["weak"] is False


def test_a_miss_prints_sections_and_nearest_terms_and_exits_1(
    capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    code, out, err = run(capsys, "--snapshot", str(snapshot), "quux")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        "No results for 'quux'.",
        "Nearest indexed terms: queue",
        "Sections of the docs: " + "; ".join(SECTIONS),
    ]


def test_an_unknown_package_filter_is_a_usage_error_naming_the_known_packages(
    capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    code, out, err = run(capsys, "--snapshot", str(snapshot), "--package", "nosuch", "redis queue")
    assert code == 2 and out == ""
    assert "unknown package '@imqueue/nosuch'" in err and "rpc" in err


@pytest.mark.parametrize("query", ["", "   "], ids=["empty", "whitespace"])
def test_an_empty_query_is_a_miss_not_a_crash(
    capsys: pytest.CaptureFixture[str], snapshot: Path, query: str
) -> None:
    code, out, err = run(capsys, "--snapshot", str(snapshot), query)
    assert code == 1 and err == ""
    assert "Sections of the docs" in out


@pytest.mark.parametrize("query", ["", "   "], ids=["empty", "whitespace"])
def test_an_empty_query_as_json_is_a_miss(
    capsys: pytest.CaptureFixture[str], snapshot: Path, query: str
) -> None:
    data = search_json(capsys, snapshot, query)
    assert data["query"] == query and data["count"] == 0 and data["results"] == []


# --- usage errors: exit 2, one line on stderr, nothing on stdout -------------------------


@pytest.fixture
def batch_files(tmp_path: Path) -> dict[str, Path]:
    bad_line = tmp_path / "bad-line.jsonl"
    bad_line.write_text('{"query": "redis"}\n{"q": "no query key"}\n', encoding="utf-8")
    not_a_string = tmp_path / "not-a-string.jsonl"
    not_a_string.write_text('{"query": 42}\n', encoding="utf-8")
    not_json = tmp_path / "not-json.jsonl"
    not_json.write_text("redis queue\n", encoding="utf-8")
    unknown_package = tmp_path / "unknown-package.jsonl"
    unknown_package.write_text(
        '{"query": "redis"}\n{"query": "redis", "package": "nosuch"}\n', encoding="utf-8"
    )
    package_not_a_string = tmp_path / "package-not-a-string.jsonl"
    package_not_a_string.write_text('{"query": "redis", "package": ["rpc"]}\n', encoding="utf-8")
    not_utf8 = tmp_path / "latin1.jsonl"
    not_utf8.write_bytes('{"query": "caf\u00e9"}\n'.encode("latin-1"))
    return {
        "bad-line": bad_line,
        "not-a-string": not_a_string,
        "not-json": not_json,
        "not-utf8": not_utf8,
        "unknown-package": unknown_package,
        "package-not-a-string": package_not_a_string,
        "missing": tmp_path / "absent.jsonl",
        "directory": tmp_path,
    }


USAGE_ERRORS: dict[str, tuple[list[str], list[str]]] = {
    # case: (argv, with {snapshot} and {batch:NAME} placeholders; fragments the message holds)
    "no-query": (["--snapshot", "{snapshot}"], ["give a query", "--batch FILE"]),
    "limit-0": (
        ["--snapshot", "{snapshot}", "--limit", "0", "redis"],
        ["--limit must be between 1 and 200", "got 0"],
    ),
    "limit-500": (["--snapshot", "{snapshot}", "--limit", "500", "redis"], ["between 1 and 200", "got 500"]),
    "snapshot-and-from": (
        ["--snapshot", "{snapshot}", "--from", str(SITE), "redis"],
        ["either --snapshot or --from"],
    ),
    "query-and-batch": (
        ["--snapshot", "{snapshot}", "--batch", "{batch:bad-line}", "redis"],
        ["a query or --batch FILE, not both"],
    ),
    "missing-snapshot": (
        ["--snapshot", "{missing}", "redis"],
        ["{missing}", "no snapshot there", "imq-build-index"],
    ),
    "damaged-snapshot": (
        ["--snapshot", "{damaged}", "redis"],
        ["{damaged}", "checksum mismatch", "imq-build-index"],
    ),
    "missing-mirror": (["--from", "{missing}", "redis"], ["{missing}", "not a site mirror"]),
    "bad-batch-line": (
        ["--snapshot", "{snapshot}", "--batch", "{batch:bad-line}"],
        ["{batch:bad-line}:2:", '{"query": "..."}'],
    ),
    "batch-query-not-a-string": (
        ["--snapshot", "{snapshot}", "--batch", "{batch:not-a-string}"],
        ["{batch:not-a-string}:1:"],
    ),
    "batch-line-not-json": (
        ["--snapshot", "{snapshot}", "--batch", "{batch:not-json}"],
        ["{batch:not-json}:1:"],
    ),
    "batch-unknown-package": (
        ["--snapshot", "{snapshot}", "--batch", "{batch:unknown-package}"],
        ["{batch:unknown-package}:2:", "unknown package '@imqueue/nosuch'", "core, rpc"],
    ),
    "batch-package-not-a-string": (
        ["--snapshot", "{snapshot}", "--batch", "{batch:package-not-a-string}"],
        ["{batch:package-not-a-string}:1:", '"package" must be a string'],
    ),
    "missing-batch-file": (
        ["--snapshot", "{snapshot}", "--batch", "{batch:missing}"],
        ["{batch:missing}", "cannot read"],
    ),
    "batch-file-is-a-directory": (
        ["--snapshot", "{snapshot}", "--batch", "{batch:directory}"],
        ["{batch:directory}", "cannot read"],
    ),
    "empty-package-name": (
        ["--snapshot", "{snapshot}", "--package", " ", "redis"],
        ["is not an @imqueue package name: it is empty"],
    ),
}


def fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


@pytest.mark.parametrize("case", list(USAGE_ERRORS))
def test_usage_errors_exit_2_with_one_clear_line(
    capsys: pytest.CaptureFixture[str],
    snapshot: Path,
    batch_files: dict[str, Path],
    tmp_path: Path,
    case: str,
) -> None:
    damaged = tmp_path / "damaged.msgpack"
    data = bytearray(snapshot.read_bytes())
    data[-1] ^= 0xFF
    damaged.write_bytes(bytes(data))
    values = {
        "snapshot": str(snapshot),
        "missing": str(tmp_path / "nothing-here"),
        "damaged": str(damaged),
        **{f"batch:{name}": str(path) for name, path in batch_files.items()},
    }
    argv, fragments = USAGE_ERRORS[case]
    code, out, err = run(capsys, *[fill(a, values) for a in argv])
    assert code == 2
    assert err.startswith("imq-search: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fill(fragment, values) in err, (fragment, err)
    if case not in ("bad-batch-line", "batch-unknown-package"):  # a batch stops at its bad line:
        # the lines before it were answered
        assert out == ""


def test_a_batch_file_that_is_not_utf8_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], snapshot: Path, batch_files: dict[str, Path]
) -> None:
    code, out, err = run(capsys, "--snapshot", str(snapshot), "--batch", str(batch_files["not-utf8"]))
    assert code == 2 and out == "" and str(batch_files["not-utf8"]) in err


def test_a_snapshot_with_a_stale_index_is_a_corpus_error(
    capsys: pytest.CaptureFixture[str], snapshot: Path, tmp_path: Path
) -> None:
    import hashlib

    outer = msgpack.unpackb(snapshot.read_bytes(), raw=False)
    body = msgpack.unpackb(outer["body"], raw=False)
    body["index"].pop(sorted(body["index"])[-1])
    outer["body"] = msgpack.packb(body, use_bin_type=True)
    outer["header"]["body_sha256"] = hashlib.sha256(outer["body"]).hexdigest()
    stale = tmp_path / "stale.msgpack"
    stale.write_bytes(msgpack.packb(outer, use_bin_type=True))
    code, out, err = run(capsys, "--snapshot", str(stale), "redis")
    assert code == 2 and out == "" and "imq-build-index" in err


# --- JSON, explain, package filter -----------------------------------------------------


def test_json_output_parses_with_query_count_and_results(
    capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    data = search_json(capsys, snapshot, "--limit", "4", "How do I expose a method?")
    assert data["query"] == "How do I expose a method?"
    assert 1 <= data["count"] == len(data["results"]) <= 4
    first = data["results"][0]
    assert first["url"] == "https://imqueue.org/api/faq/#how-do-i-expose-a-method"
    assert first["title"] == "How do I expose a method?"
    assert set(first) >= {
        "url",
        "title",
        "section",
        "description",
        "kind",
        "symbol",
        "external",
        "score",
        "package",
        "confidence",
    }
    assert "miss" not in data and isinstance(data["weak"], bool)


def test_json_output_of_a_miss_carries_the_guidance(
    capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    data = search_json(capsys, snapshot, "quux")
    assert (data["count"], data["results"]) == (0, [])
    assert data["miss"] == {"sections": SECTIONS, "nearestTerms": ["queue"]}


def test_explain_prints_lines_under_each_result(capsys: pytest.CaptureFixture[str], snapshot: Path) -> None:
    code, out, _ = run(capsys, "--snapshot", str(snapshot), "--explain", "--limit", "3", "redis queue")
    assert code == 0
    lines = [line for line in out.splitlines() if not line.startswith("(weak:")]
    rows = [i for i, line in enumerate(lines) if line[:2].strip().isdigit()]
    assert len(rows) == 3
    for start, end in zip(rows, [*rows[1:], len(lines)], strict=True):
        detail = lines[start + 1 : end]
        assert detail and all(line.startswith("      ") for line in detail)
        assert any("raw " in line and "coverage" in line for line in detail)
    assert any("'redis'" in line and "idf" in line for line in lines[rows[0] + 1 : rows[1]])
    assert any(line.startswith("  · term ") for line in lines[: rows[0]])  # query-level notes first


def test_explain_prints_a_legend_names_each_boost_by_its_rule_and_fits_100_columns(
    capsys: pytest.CaptureFixture[str], snapshot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, "--snapshot", str(snapshot), "--explain", "How do I expose a method?")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("legend: evidence = ")
    assert any("coverage" in line for line in lines[:4]) and any("multiplier" in line for line in lines[:4])
    assert max(len(line) for line in lines) <= 100
    assert any(line.strip().startswith("PHRASE_EXACT_BOOST x") for line in lines)
    assert not any("curated phrase match" in line for line in lines)


def test_an_identifier_query_is_not_a_long_query(capsys: pytest.CaptureFixture[str], snapshot: Path) -> None:
    _code, out, _ = run(capsys, "--snapshot", str(snapshot), "--explain", "RedisQueue.send")
    assert "term 'redisqueue.send'" in out and "long query" not in out


def test_package_short_and_scoped_names_give_the_same_results(
    capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    short = search_json(capsys, snapshot, "--package", "rpc", "service")
    scoped = search_json(capsys, snapshot, "--package", "@imqueue/rpc", "service")
    assert short["results"] == scoped["results"] and short["count"] >= 1
    assert {r["package"] for r in short["results"]} == {"@imqueue/rpc"}
    unfiltered = search_json(capsys, snapshot, "--limit", "20", "service")
    assert {r["package"] for r in unfiltered["results"]} != {"@imqueue/rpc"}


def test_records_matching_only_template_words_are_not_listed(
    capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    data = search_json(capsys, snapshot, "expose a method")
    assert data["count"] >= 1
    assert all(r["score"] > 0 for r in data["results"]), [(r["url"], r["score"]) for r in data["results"]]


# --- batch -----------------------------------------------------------------------------


def test_batch_writes_one_kpi_results_line_per_query(
    capsys: pytest.CaptureFixture[str], snapshot: Path, tmp_path: Path
) -> None:
    queries = [
        "redis queue",
        "  How do I expose a method?  ",
        "caf\u00e9 \u2014 \u201cpricing\u201d",
        "quux",
        "",
        'a "quoted" \\ query',
    ]
    batch = tmp_path / "queries.jsonl"
    lines = [json.dumps({"query": q}) for q in queries]
    lines.insert(2, "   ")  # blank lines are skipped
    lines.append(json.dumps({"query": "send", "package": "core"}))
    batch.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "--snapshot", str(snapshot), "--batch", str(batch))
    assert (code, err) == (0, "")
    results = [json.loads(line) for line in out.splitlines()]
    assert [r["query"] for r in results] == [*queries, "send"]
    for raw, query in zip(out.splitlines(), [*queries, "send"], strict=True):
        assert raw.startswith('{"query": ' + json.dumps(query, ensure_ascii=False) + ",")  # byte-identical
    for line in results:
        assert set(line) <= {"query", "results", "corrected"}
        for hit in line["results"]:
            assert set(hit) == {"u", "external", "score", "confidence"}
            assert hit["u"].startswith("/") and isinstance(hit["external"], bool)
            assert isinstance(hit["score"], float | int)
    by_query = {r["query"]: r["results"] for r in results}
    assert by_query["redis queue"][0] == {
        "u": "/api/core/latest/core.redisqueue/",
        "external": False,
        "score": by_query["redis queue"][0]["score"],
        "confidence": by_query["redis queue"][0]["confidence"],
    }
    assert len(by_query["redis queue"]) > 6  # the whole ranked list, not the table's six
    assert any(
        h["external"] and h["u"] == "/pricing/" for h in by_query["caf\u00e9 \u2014 \u201cpricing\u201d"]
    )
    assert by_query["quux"] == [] and by_query[""] == []
    assert by_query["send"] and all(h["u"].startswith("/api/core/") for h in by_query["send"])


# --- the library and the CLI agree -----------------------------------------------------


@pytest.mark.parametrize("query", ["redis queue", "How do I expose a method?", "service", "pricing", "send"])
def test_the_cli_and_the_library_rank_the_same(
    capsys: pytest.CaptureFixture[str], snapshot: Path, query: str
) -> None:
    index = load_snapshot(snapshot).index()
    library = index.search(query, limit=10)
    assert library.results
    cli = search_json(capsys, snapshot, "--limit", "10", query)
    expected = [(h.url, round(h.score, 4)) for h in library.results]
    assert [(r["url"], r["score"]) for r in cli["results"]] == expected
    built = build(mirror=SITE).index().search(query, limit=10)  # in memory, as --from does
    assert [(h.url, round(h.score, 4)) for h in built.results] == expected


# --- as a real process -----------------------------------------------------------------


def imq_search_command() -> list[str]:
    script = Path(sys.executable).parent / "imq-search"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "imqueue_mcp.build_index.search_cli"]


def test_the_console_script_searches_a_mirror_built_in_memory_from_a_relative_folder(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    done = subprocess.run(  # a relative folder, as a user types it
        [*imq_search_command(), "--from", os.path.relpath(SITE, REPO), "redis queue"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["#", "score", "conf", "title", "url"]
    assert lines[1].split()[3] == "RedisQueue"
    miss = subprocess.run(
        [*imq_search_command(), "--from", str(SITE), "--json", "quux"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert miss.returncode == 1, miss.stderr
    assert json.loads(miss.stdout)["count"] == 0
    usage = subprocess.run(
        [*imq_search_command(), "--snapshot", str(tmp_path / "none"), "redis"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert usage.returncode == 2 and usage.stdout == "", usage.stderr
    assert usage.stderr.count("\n") == 1 and "Traceback" not in usage.stderr


def test_the_console_script_fits_columns_and_links_urls_on_a_terminal(tmp_path: Path) -> None:
    """The real process: piped with COLUMNS it fits them; on a terminal (a pty) of 70 columns it
    fits those and each URL is a terminal hyperlink (OSC 8) to itself."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path), "COLUMNS": "50"}
    env.pop("NO_COLOR", None)
    argv = [*imq_search_command(), "--from", str(SITE), "--limit", "5", "redis queue"]
    piped = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert piped.returncode == 0, piped.stderr
    assert max(len(line) for line in piped.stdout.splitlines()) <= 50 and "\x1b" not in piped.stdout

    env.pop("COLUMNS")
    env["TERM"] = "xterm-256color"
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 70, 0, 0))
    process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the process closed its side
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    shown = b"".join(chunks).decode()
    url = "https://imqueue.org/api/core/latest/core.redisqueue/"
    assert f";{url}\x1b\\" in shown  # OSC 8 names the whole URL as the link target
    visible = re.sub(r"\x1b\]8;[^\x1b]*\x1b\\|\x1b\[[0-9;]*m", "", shown)
    assert max(len(line) for line in visible.splitlines()) <= 70


def test_a_dash_reads_a_pasted_error_output_from_stdin_and_says_what_it_searched(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    pasted = (
        "Error: connect ECONNREFUSED 127.0.0.1:6379 redis queue\n"
        "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1376:14)\n\nNode.js v22.11.0\n"
    )

    done = subprocess.run(
        [*imq_search_command(), "--from", str(SITE), "-"],
        input=pasted,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    garbled = subprocess.run(
        [*imq_search_command(), "--from", str(SITE), "-"],
        input=b"\xff\xfe",
        cwd=REPO,
        env=env,
        capture_output=True,
    )

    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0] == "(searched for: Error: connect ECONNREFUSED 127.0.0.1:6379 redis queue)"
    assert lines[2].split()[3] == "RedisQueue"
    assert garbled.returncode == 2 and garbled.stdout == b""
    assert garbled.stderr.decode().startswith("imq-search: stdin is not UTF-8 text")

"""Snapshot faults: a damaged, foreign or missing snapshot, a read-only cache folder, and
`imq-build-index` killed with SIGKILL at random points.

The server must start whatever the snapshot holds, and answer a call that needs it with an
isError naming the file, what is wrong and the command that fixes it, with no traceback on its
stderr. A killed build must leave the previous snapshot loadable, every time:
IMQUEUE_MCP_KILLS sets how many kills (10 by default, to keep CI short; the long run in
docs/reliability.md uses 100).
The loading errors themselves (load_snapshot's messages) are covered in test_build_index.py.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest

from imqueue_mcp import docsource
from imqueue_mcp.build_index.cli import main as build_main
from imqueue_mcp.docsource.snapshot import FORMAT_VERSION

from conftest import REPO, SITE, HttpServer, McpConnection, built_snapshot, server_environment

KILLS = int(os.environ.get("IMQUEUE_MCP_KILLS", "10"))


@pytest.fixture(scope="module")
def good_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot carrying its pages, built once from the mirror."""
    return built_snapshot(tmp_path_factory.mktemp("good"))


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` made unwritable: chmod for a user, the immutable attribute for root (whom
    permission bits do not stop). Skips when neither holds here."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or (
            subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0
        ):
            pytest.skip("running as root without chattr +i: a read-only folder cannot be made here")
        undo = ["chattr", "-i", str(folder)]
    else:
        folder.chmod(0o555)
        undo = ["chmod", "755", str(folder)]
    try:
        with pytest.raises(OSError):
            (folder / "probe").write_bytes(b"")
        yield
    finally:
        subprocess.run(undo, check=True)


# --- the server with a bad snapshot ----------------------------------------------------


def _flipped_byte(path: Path, good: bytes) -> str:
    damaged = bytearray(good)
    damaged[-1] ^= 0xFF
    path.write_bytes(bytes(damaged))
    return "checksum mismatch"


def _truncated(path: Path, good: bytes) -> str:
    path.write_bytes(good[: len(good) // 3])
    return "not an imqueue-mcp snapshot"


def _wrong_version(path: Path, good: bytes) -> str:
    outer = msgpack.unpackb(good, raw=False)
    outer["header"]["format"] = FORMAT_VERSION - 1
    path.write_bytes(msgpack.packb(outer, use_bin_type=True))
    return f"snapshot format {FORMAT_VERSION - 1}, this version reads {FORMAT_VERSION}"


def _missing(path: Path, good: bytes) -> str:
    return "there is no snapshot file"


BAD_SNAPSHOTS: dict[str, Callable[[Path, bytes], str]] = {
    "flipped-byte": _flipped_byte,
    "truncated": _truncated,
    "wrong-format-version": _wrong_version,
    "missing": _missing,
}


# The hosted server names its snapshot and folder, never their paths (server/mcp/redact.py).
HOSTED_SNAPSHOT = "the server's snapshot"


def text_of(result: object) -> str:
    return "\n".join(getattr(block, "text", "") for block in getattr(result, "content", []))


@contextlib.contextmanager
def offline_server(args: list[str], home: Path) -> Iterator[McpConnection]:
    """The hosted server with --offline and `args`, an SDK client on it; on the way out, its
    stderr must hold no traceback."""
    server = HttpServer(["--offline", *args], server_environment(home), home)
    try:
        connection = McpConnection(server.url + "/mcp", "legacy")
        try:
            yield connection
        finally:
            connection.close()
    finally:
        stderr = server.stderr()
        server.close()
    assert "Traceback" not in stderr, stderr


@pytest.mark.parametrize("case", list(BAD_SNAPSHOTS))
def test_the_server_starts_with_a_bad_snapshot_and_each_call_explains_it(
    good_snapshot: Path, tmp_path: Path, case: str
) -> None:
    path = tmp_path / "snapshot.msgpack"
    reason = BAD_SNAPSHOTS[case](path, good_snapshot.read_bytes())
    with offline_server(["--snapshot", str(path)], tmp_path) as connection:
        for _ in range(2):  # the second call is explained as well as the first
            result = connection.call("search_docs", {"query": "expose a method"})
            message = text_of(result)
            assert result.is_error, message
            assert HOSTED_SNAPSHOT in message and reason in message, message
            assert "imq-build-index" in message, message
        assert not connection.call("list_packages").is_error  # a tool that needs no snapshot works


def test_offline_get_doc_with_an_older_versions_damaged_pages_file_names_it(
    good_snapshot: Path, tmp_path: Path
) -> None:
    path = tmp_path / "snapshot.msgpack"
    snapshot = docsource.load_snapshot(good_snapshot)
    saved = snapshot.saved_pages(good_snapshot)
    assert saved is not None
    snapshot.pages, snapshot.pages_raw = None, None
    docsource.save_snapshot(snapshot, path)  # the corpus alone, and a damaged sidecar beside it
    pages = docsource.pages_path(path)
    docsource.save_pages(saved, pages)
    pages.write_bytes(pages.read_bytes()[:1000])
    server = HttpServer(["--offline", "--snapshot", str(path)], server_environment(tmp_path), tmp_path)
    try:
        connection = McpConnection(server.url + "/mcp", "legacy")
        try:
            result = connection.call("get_doc", {"url": "https://imqueue.org/cli/"})
            assert not connection.call("search_docs", {"query": "expose a method"}).is_error
        finally:
            connection.close()
    finally:
        stderr = server.stderr()
        server.close()
    # the operator reads which file and why; the anonymous client, that this page has no copy here
    # and what to do instead, never the operator's files or the advice to rebuild them (audit 5)
    assert "saved pages not used" in stderr and "not an imqueue-mcp pages file" in stderr, stderr[-2000:]
    assert result.is_error and "no saved copy here" in text_of(result), text_of(result)[-600:]
    assert "imq-build-index" not in text_of(result) and "Traceback" not in stderr


# --- a read-only cache folder ------------------------------------------------------------


def test_the_builder_explains_a_read_only_cache_folder_and_keeps_the_snapshot_there(
    good_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    out = folder / "snapshot.msgpack"
    out.write_bytes(good_snapshot.read_bytes())
    with read_only(folder):
        code = build_main(["--from", str(SITE), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith(f"imq-build-index: {out}: cannot write there"), err
    assert "--out" in err
    assert out.read_bytes() == good_snapshot.read_bytes()
    assert [p.name for p in folder.iterdir()] == ["snapshot.msgpack"]


def test_the_server_reads_its_snapshot_from_a_read_only_cache_folder(
    good_snapshot: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache" / "imqueue-mcp"  # the default path under XDG_CACHE_HOME
    cache.mkdir(parents=True)
    (cache / "snapshot.msgpack").write_bytes(good_snapshot.read_bytes())
    with read_only(cache), offline_server([], tmp_path) as connection:
        result = connection.call("search_docs", {"query": "expose a method"})
    assert not result.is_error, text_of(result)
    assert result.structured_content["corpus"]["from"] == HOSTED_SNAPSHOT


# --- imq-build-index killed at random points ---------------------------------------------


def wait_for_temp_file(process: subprocess.Popen[bytes], folder: Path) -> None:
    """Returns once `process` has started writing its temp file (or has ended)."""
    prefix = f".snapshot-{process.pid}-"
    while process.poll() is None and not any(entry.name.startswith(prefix) for entry in os.scandir(folder)):
        time.sleep(0.001)


@pytest.mark.slow
@pytest.mark.timeout(max(180, KILLS * 12))  # a kill costs up to one build: about 2-6 s here
def test_a_build_killed_at_random_points_leaves_the_previous_snapshot_loadable(
    good_snapshot: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    out = folder / "snapshot.msgpack"
    out.write_bytes(good_snapshot.read_bytes())
    command = [
        sys.executable,
        "-m",
        "imqueue_mcp.build_index.cli",
        "--from",
        str(SITE),
        "--out",
        str(out),
        "--quiet",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}

    started = time.monotonic()
    subprocess.run(command, env=env, check=True, timeout=120)
    full_build = time.monotonic() - started
    generator = random.Random(int(os.environ.get("IMQUEUE_MCP_KILL_SEED", "6")))
    landed = {"before the write": 0, "during the write": 0, "after the rename": 0}
    for number in range(KILLS):
        before = out.stat().st_mtime_ns
        process = subprocess.Popen(command, env=env)
        if number % 2:  # a random point of the whole run
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(generator.uniform(0.0, full_build * 1.05))
        else:  # a random point of the write itself, which is too short to hit by chance
            wait_for_temp_file(process, folder)
            time.sleep(generator.uniform(0.0, 0.004))
        process.kill()
        process.wait(30)
        if out.stat().st_mtime_ns != before:
            landed["after the rename"] += 1
        elif any(p.name.startswith(f".snapshot-{process.pid}-") for p in folder.iterdir()):
            landed["during the write"] += 1  # its temp file is left; the next build removes it
        else:
            landed["before the write"] += 1
        docsource.load_snapshot(out)  # raises unless the file is whole: header, checksum, body
    sys.stderr.write(f"{KILLS} SIGKILLs over a {full_build:.1f} s build, landing {landed}\n")
    subprocess.run(command, env=env, check=True, timeout=120)
    assert [p.name for p in folder.iterdir()] == ["snapshot.msgpack"]  # abandoned temp files removed
    assert docsource.load_snapshot(out).index().search("expose a method").results

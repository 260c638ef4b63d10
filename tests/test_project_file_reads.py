"""The user's project files are read as regular files only, capped while reading (issue 26 §3).

A project whose package-lock.json, tsconfig.json or an installed package's package.json is a
symlink to /dev/zero (endless bytes; `stat` says 0) or a FIFO (an open for reading waits for a
writer) made inspect_project, and the version note a plain search_docs adds on the local
server, grow past 1.2 GB or hang for good. On the real stdio server: each such file is named
in `problems` as not a regular file, the answer comes back in seconds, the server's peak
memory stays flat, and it serves on. server/user_files.py is the one reader.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from test_server_transport import RawStdio, initialize

from imqueue_mcp.server.user_files import FileTooLarge, NotARegularFile, read_capped

from conftest import offline_args, origin_args, server_environment

ANSWER_SECONDS = 15.0  # an honest answer takes well under a second; a read of /dev/zero never ends
PEAK_MEGABYTES = 600  # the server's whole peak; reading /dev/zero passed 1,200 MB in 3 s


def hostile_project(folder: Path, *, manifest_fifo: bool = False) -> Path:
    """A project with a lockfile on /dev/zero, a FIFO tsconfig and rpc's manifest on /dev/zero."""
    folder.mkdir(parents=True)
    if manifest_fifo:
        os.mkfifo(folder / "package.json")
    else:
        manifest = {"name": "hostile", "type": "module", "dependencies": {"@imqueue/rpc": "^1.17.0"}}
        (folder / "package.json").write_text(json.dumps(manifest))
    (folder / "package-lock.json").symlink_to("/dev/zero")
    os.mkfifo(folder / "tsconfig.json")
    installed = folder / "node_modules" / "@imqueue" / "rpc"
    installed.mkdir(parents=True)
    (installed / "package.json").symlink_to("/dev/zero")
    return folder


def peak_megabytes(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM in /proc/PID/status")


def call(
    raw: RawStdio, request_id: int, tool: str, arguments: dict[str, Any]
) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    answer = raw.request(request_id, "tools/call", {"name": tool, "arguments": arguments})
    return answer, time.monotonic() - started


def test_inspect_project_reads_no_device_or_fifo_and_says_which_files(
    site_origins: dict[str, str], tmp_path: Path
) -> None:
    project = hostile_project(tmp_path / "project")
    raw = RawStdio(origin_args(site_origins), server_environment(tmp_path), tmp_path)
    try:
        initialize(raw)
        answer, seconds = call(raw, 2, "inspect_project", {"path": str(project)})
        peak = peak_megabytes(raw.process.pid)
        ping = raw.request(3, "ping")
    finally:
        raw.close()

    report = answer["result"]["structuredContent"]
    assert report["found"] is True
    problems = "\n".join(report["problems"])
    for name in ("package-lock.json", "tsconfig.json", "node_modules/@imqueue/rpc/package.json"):
        assert f"{project / name} is " in problems, problems
    assert "is a device, not a regular file" in problems and "is a FIFO (named pipe)" in problems
    assert seconds < ANSWER_SECONDS and peak < PEAK_MEGABYTES, (seconds, peak)
    assert ping["result"] == {}


def test_a_fifo_package_json_is_reported_not_waited_on(site_origins: dict[str, str], tmp_path: Path) -> None:
    project = hostile_project(tmp_path / "project", manifest_fifo=True)
    raw = RawStdio(origin_args(site_origins), server_environment(tmp_path), tmp_path)
    try:
        initialize(raw)
        answer, seconds = call(raw, 2, "inspect_project", {"path": str(project)})
    finally:
        raw.close()

    report = answer["result"]["structuredContent"]
    assert report["found"] is True and seconds < ANSWER_SECONDS
    assert any(f"{project / 'package.json'} is a FIFO" in problem for problem in report["problems"])


def test_search_docs_in_such_a_project_answers_and_the_server_serves_on(tmp_path: Path) -> None:
    """The version note looks the project up from the working directory on every docs call."""
    project = hostile_project(tmp_path / "project")
    raw = RawStdio(offline_args(tmp_path / "snapshot"), server_environment(tmp_path), project)
    try:
        initialize(raw)
        first, seconds = call(raw, 2, "search_docs", {"query": "expose a method", "passages": False})
        again, _ = call(raw, 3, "get_doc", {"url": "/get-started/", "outline": True})
        peak = peak_megabytes(raw.process.pid)
    finally:
        raw.close()

    assert first["result"]["structuredContent"]["results"], first
    assert "structuredContent" in again["result"] and not again["result"].get("isError"), again
    assert seconds < ANSWER_SECONDS and peak < PEAK_MEGABYTES, (seconds, peak)


@pytest.mark.parametrize("manifest", ["fifo", "device"])
def test_get_api_and_api_diff_read_installed_manifests_as_files_only(tmp_path: Path, manifest: str) -> None:
    """Both read each installed @imqueue package's package.json to find its version: a FIFO there
    held the call (and the process's exit) forever, /dev/zero grew it past 1.6 GB."""
    project = hostile_project(tmp_path / "project")
    installed = project / "node_modules" / "@imqueue" / "rpc" / "package.json"
    if manifest == "fifo":
        installed.unlink()
        os.mkfifo(installed)
    raw = RawStdio(offline_args(tmp_path / "snapshot"), server_environment(tmp_path), tmp_path)
    try:
        initialize(raw)
        lookup, lookup_seconds = call(raw, 2, "get_api", {"symbol": "IMQClient", "path": str(project)})
        diff, diff_seconds = call(raw, 3, "api_diff", {"package": "rpc", "path": str(project)})
        peak = peak_megabytes(raw.process.pid)
        ping = raw.request(4, "ping")
    finally:
        raw.close()

    said = "a FIFO (named pipe)" if manifest == "fifo" else "a device"
    for answer in (lookup, diff):
        text = answer["result"]["content"][0]["text"]
        assert f"{installed} is {said}, not a regular file" in text, text
    assert max(lookup_seconds, diff_seconds) < ANSWER_SECONDS and peak < PEAK_MEGABYTES, (
        lookup_seconds,
        diff_seconds,
        peak,
    )
    assert ping["result"] == {}


def test_the_reader_stops_one_chunk_past_the_cap_and_refuses_what_is_not_a_file(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 10_001)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    assert read_capped(big, 10_001) == b" " * 10_001
    with pytest.raises(FileTooLarge):
        read_capped(big, 10_000)
    with pytest.raises(NotARegularFile, match="a device"):
        read_capped(Path("/dev/zero"), 1_000_000)
    with pytest.raises(NotARegularFile, match="FIFO"):
        read_capped(fifo, 1_000)
    with pytest.raises(NotARegularFile, match="a folder"):
        read_capped(tmp_path, 1_000)
    with pytest.raises(FileNotFoundError):
        read_capped(tmp_path / "missing", 1_000)

"""Paths named by feed data are held to the sites before anything is fetched (issue 19 §1).

The tiny site, served on loopback by origins that log every connection, gets hostile records
in its feeds: a path that would turn the origin's host into userinfo and reach another host
("@127.0.0.1:EVIL/x/"), a second host ("//other.host/x/"), a climb out of the folder
("/../../etc/"), an encoded one, a query. The real `imq-build-index --pages` runs against
it. What must hold: the evil origin sees no connection, no hostile path is requested from the
site either, the build succeeds and names every refused record on stderr, and the snapshot
(search and pages) holds none of them, so no search hit can point off the site.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_host_lock import Origin

from imqueue_mcp import docsource
from imqueue_mcp.docsource.sites import site_path_problem

from conftest import server_environment, stdio_connection


def hostile_paths(evil_port: int) -> list[str]:
    return [
        f"@127.0.0.1:{evil_port}/x/",
        "//other.host/x/",
        "/../../etc/",
        "/intro/%2e%2e/%2e%2e/etc/",
        "/intro/?next=x",
        "https://evil.test/x/",
        "/a b/",
    ]


@pytest.fixture
def hostile_site(tmp_path: Path) -> Path:
    from fixtures.tiny_site import write_site

    return write_site(tmp_path / "site")


def add_hostile_records(root: Path, paths: list[str]) -> None:
    index_file = root / "imqueue.org" / "search-index.json"
    index = json.loads(index_file.read_text())
    index["records"] += [
        {"g": 0, "t": f"Hostile page {n}", "u": path, "s": "zebrafish hostile record", "k": "Guide"}
        for n, path in enumerate(paths)
    ]
    index_file.write_text(json.dumps(index))
    text_file = root / "imqueue.org" / "search-text.json"
    text = json.loads(text_file.read_text())
    for path in paths:
        text["pages"].append([path, "Hostile prose", "Guide"])
        text["sections"].append([len(text["pages"]) - 1, "", "", "zebrafish hostile prose", ""])
    text_file.write_text(json.dumps(text))


def test_the_builder_fetches_and_indexes_no_path_off_the_site(hostile_site: Path, tmp_path: Path) -> None:
    evil = Origin(None)
    org, com = Origin(hostile_site / "imqueue.org"), Origin(hostile_site / "imqueue.com")
    paths = hostile_paths(evil.port)
    add_hostile_records(hostile_site, paths)
    out = tmp_path / "cache" / "snapshot.msgpack"
    try:
        built = subprocess.run(
            [
                sys.executable,
                "-m",
                "imqueue_mcp.build_index.cli",
                "--origin",
                f"imqueue.org={org.url}",
                "--origin",
                f"imqueue.com={com.url}",
                "--pages",
                "--out",
                str(out),
            ],
            env=server_environment(tmp_path),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        for origin in (evil, org, com):
            origin.close()
    assert built.returncode == 0, built.stderr
    assert evil.connections == [] and evil.paths == []
    sent = org.paths + com.paths
    assert all(site_path_problem(path) is None and "other.host" not in path for path in sent), sent
    refusals = [line for line in built.stderr.splitlines() if "refused" in line]
    assert len(refusals) == 2 * len(paths), built.stderr  # each path, in tier 1 and in tier 2
    for path in paths:
        assert any(repr(path) in line for line in refusals), path

    snapshot = docsource.load_snapshot(out)
    indexed = {doc.path for doc in snapshot.corpus.documents}
    assert not indexed & set(paths)
    assert all(site_path_problem(path) is None for path in indexed)
    pages = docsource.load_snapshot(out).saved_pages(out)  # one generation: the pages are in the file
    assert pages is not None
    assert all(url.startswith(("https://imqueue.org/", "https://imqueue.com/")) for url in pages.body)
    assert not any("other.host" in url or "@" in url or "/.." in url for url in pages.body)

    connection = stdio_connection(
        ["--offline", "--snapshot", str(out)], server_environment(tmp_path), tmp_path, "legacy"
    )
    try:
        found = connection.call("search_docs", {"query": "zebrafish hostile"})
    finally:
        connection.close()
    assert not found.is_error
    urls = [hit["url"] for hit in found.structured_content["results"]]
    assert all(site_path_problem(url.split("imqueue.org", 1)[-1]) is None for url in urls), urls


def test_a_source_refuses_to_read_a_path_that_is_not_on_the_site(hostile_site: Path) -> None:
    source = docsource.MirrorSource(hostile_site)
    for path in hostile_paths(1):
        with pytest.raises(docsource.BuildError, match="was not read"):
            source.read("imqueue.org", path)
    assert source.read("imqueue.org", "/search-index.json")

"""A snapshot whose checksum is right but whose body has the wrong shape (issue 19 §10).

Each file below is a valid envelope (files.wrap: the right format number, a body checksum
that matches) around a body no build of this version writes. The real hosted server, started
offline on it, must explain it like any other bad snapshot: the file, what is wrong and the
command that fixes it, never a Python message such as "'int' object is not subscriptable",
and no traceback on its stderr (test_faults_snapshot.offline_server checks that).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from test_faults_snapshot import good_snapshot, offline_server, text_of

from imqueue_mcp.docsource.files import wrap
from imqueue_mcp.docsource.pages import PAGES_FORMAT
from imqueue_mcp.docsource.snapshot import FORMAT_VERSION
from imqueue_mcp.ranker.corpus import WIRE_FIELDS

from conftest import McpConnection

__all__ = ["good_snapshot"]  # the module-scoped fixture, shared with test_faults_snapshot

PYTHON_WORDS = ("object is not", "KeyError", "TypeError", "subscriptable", "has no attribute", "unhashable")


def rewritten(good: bytes, change: Callable[[dict[str, Any]], Any]) -> bytes:
    """The good snapshot with its body changed by `change`, re-wrapped with a right checksum."""
    outer = msgpack.unpackb(good, raw=False)
    body = msgpack.unpackb(outer["body"], raw=False)
    header = {k: v for k, v in outer["header"].items() if k not in ("format", "body_sha256")}
    return wrap(header, msgpack.packb(change(body), use_bin_type=True), FORMAT_VERSION)


def replaced(key: str, value: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda body: {**body, key: value}


SHAPES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "body-not-a-map": lambda body: 5,
    "no-corpus": lambda body: {k: v for k, v in body.items() if k != "corpus"},
    "corpus-a-number": replaced("corpus", 5),
    "documents-of-the-wrong-shape": lambda body: {**body, "corpus": {**body["corpus"], "documents": [[1]]}},
    "sections-a-string": replaced("sections", "x"),
    "a-bad-section-range": replaced("sections", {"imqueue.org": {"/intro/": {"why": [None, 3]}}}),
    "links-of-the-wrong-shape": replaced("links", [[1]]),
    # What a builder's feed rules refuse is refused in a snapshot too (issue 26 item 6): a record
    # on a site the server does not know, a path that is not a path, a status feed that is a list,
    # llms.txt links that are numbers or off the sites.
    "a-document-on-an-unknown-site": lambda body: with_document_field(body, "site", "evil"),
    "a-document-path-that-is-not-a-path": lambda body: with_document_field(body, "path", "@evil.example/x"),
    "status-a-list": replaced("status", [1, 2]),
    "links-that-are-numbers": replaced("links", [[1, 2, 3, 4]]),
    "a-link-off-the-sites": replaced("links", [["https://imqueue.org@evil.example/x", "s", "t", "d"]]),
}


def with_document_field(body: dict[str, Any], name: str, value: str) -> dict[str, Any]:
    """The body with the first document's `name` field set to `value`."""
    rows = [list(row) for row in body["corpus"]["documents"]]
    rows[0][WIRE_FIELDS.index(name)] = value
    return {**body, "corpus": {**body["corpus"], "documents": rows}}


@dataclass
class Reader:
    """One offline server on one snapshot path, for the cases that each write their own file there:
    a server with no usable snapshot reads the file again at each call (corpus_keeper), so every
    case meets the same load-and-check path a fresh server would, for one start, not thirteen."""

    path: Path
    connection: McpConnection


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Reader]:
    home = tmp_path_factory.mktemp("shape-reader")
    path = home / "snapshot.msgpack"
    path.write_bytes(b"not yet written")
    with offline_server(["--snapshot", str(path)], home) as connection:
        yield Reader(path, connection)


@pytest.mark.parametrize("case", list(SHAPES))
def test_a_snapshot_of_the_wrong_shape_with_a_valid_checksum_is_explained(
    good_snapshot: Path, reader: Reader, case: str
) -> None:
    reader.path.write_bytes(rewritten(good_snapshot.read_bytes(), SHAPES[case]))
    result = reader.connection.call("search_docs", {"query": "expose a method"})
    assert_message(result, "not the shape this version writes", "imq-build-index")


def test_the_shared_reader_reads_each_file_afresh(good_snapshot: Path, reader: Reader) -> None:
    """What makes the shared server honest: after the bad files above, the good one answers."""
    reader.path.write_bytes(good_snapshot.read_bytes())
    result = reader.connection.call("search_docs", {"query": "expose a method"})
    assert not result.is_error and result.structured_content["count"] > 0, text_of(result)


def assert_explained(path: Path, home: Path, what: str, fix: str) -> None:
    """The offline server on `path` answers search_docs with an isError naming the file, `what`
    is wrong and the `fix`, in words a user reads (no Python message)."""
    with offline_server(["--snapshot", str(path)], home) as connection:
        result = connection.call("search_docs", {"query": "expose a method"})
        assert_message(result, what, fix)


def assert_message(result: Any, what: str, fix: str) -> None:
    message = text_of(result)
    assert result.is_error, message
    assert "the server's snapshot" in message and what in message, message  # hosted: named, no path
    assert fix in message, message
    assert not any(word in message for word in PYTHON_WORDS), message


def test_an_envelope_whose_header_is_not_a_map_is_explained(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.msgpack"
    path.write_bytes(msgpack.packb({"header": 5, "body": b""}, use_bin_type=True))
    with offline_server(["--snapshot", str(path)], tmp_path) as connection:
        message = text_of(connection.call("search_docs", {"query": "expose a method"}))
        assert "the server's snapshot" in message and "not an imqueue-mcp snapshot" in message, message
        assert not any(word in message for word in PYTHON_WORDS), message


def test_saved_pages_of_the_wrong_shape_with_valid_checksums_are_explained(
    good_snapshot: Path, tmp_path: Path
) -> None:
    # The passages read each page's markdown from the saved pages (it is stored there only), so
    # the server decodes them with the corpus, and a foreign pages part is explained there.
    outer = msgpack.unpackb(good_snapshot.read_bytes(), raw=False)
    pages_header = msgpack.unpackb(outer["pages"], raw=False)["header"]
    foreign = wrap(pages_header, msgpack.packb({"https://imqueue.org/intro/": 5}), PAGES_FORMAT)
    header = {k: v for k, v in outer["header"].items() if k not in ("format", "body_sha256")}
    path = tmp_path / "snapshot.msgpack"
    path.write_bytes(wrap(header, outer["body"], FORMAT_VERSION, foreign))
    assert_explained(path, tmp_path, "not an imqueue-mcp pages file", "imq-build-index --pages")

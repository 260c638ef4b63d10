"""A symbol's doc comment: the prose of its reference page beyond the one-line summary, read by
the builder (no feed carries it) and weighed by the ranker as evidence for that symbol. On the
real pages of ../shared/site."""

from __future__ import annotations

import pytest

from imqueue_mcp.docsource import build
from imqueue_mcp.docsource.api_pages import page_doc_comment
from imqueue_mcp.docsource.pages import api_page_paths
from imqueue_mcp.ranker import Document, Index, rules
from imqueue_mcp.server.docs.sizes import symbol_doc_texts

from conftest import SITE, tiny_site

RPC = SITE / "imqueue.org" / "api" / "rpc" / "latest"
CALL_TIMEOUT = "/api/rpc/latest/rpc.imqclientoptions.calltimeout/"
# Words of callTimeout's remarks that neither its name nor its summary ("Per-call timeout in
# milliseconds.") has.
BY_BEHAVIOUR = "pending call keeps the process alive timer"


def page(name: str) -> str:
    path = RPC / f"{name}.md"
    if not path.is_file():
        pytest.skip(f"the site mirror is not at {SITE}")
    return path.read_text(encoding="utf-8")


def test_a_member_page_gives_its_remarks_without_header_signature_or_summary() -> None:
    doc = page_doc_comment(page("rpc.imqclientoptions.calltimeout"), "Per-call timeout in milliseconds.")
    assert "Unset by default, which means calls wait indefinitely" in doc
    assert "IMQ_RPC_CALL_TIMEOUT" in doc and "IMQDelay" in doc  # link words stay, targets go
    assert "https://" not in doc and "](" not in doc and "`" not in doc
    for left_out in ("callTimeout?: number", "Source:", "Published:", "Per-call timeout in milliseconds"):
        assert left_out not in doc


def test_a_class_page_gives_its_own_remarks_but_not_its_members_listing() -> None:
    doc = page_doc_comment(page("rpc.imqclient"), "Base class for service clients.")
    assert "Abstractness is enforced at runtime" in doc
    assert "Machine-scoped identity" not in doc  # hostName's own description, in the Properties table
    assert "Constructs a client" not in doc


def test_an_offline_symbol_passage_says_its_summary_once() -> None:
    # the page links a word of the summary, so the builder's doc comment starts with it
    summary = "Fork one worker per core, times childrenPerCore."
    said = "Fork one worker per core, times childrenPerCore. Workers are never respawned."
    plain = Document("/api/rpc/latest/a/", "org", "symbol", "a", summary="Says a.", doc="Remarks on a.")
    twice = Document("/api/rpc/latest/b/", "org", "symbol", "b", summary=summary, doc=said)
    texts = dict(symbol_doc_texts([plain, twice]))
    assert texts["https://imqueue.org/api/rpc/latest/a/"] == "Says a.\n\nRemarks on a."
    assert texts["https://imqueue.org/api/rpc/latest/b/"].count("Fork one worker") == 1


def test_the_build_reads_every_symbol_page_into_its_record() -> None:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    snapshot = build(mirror=SITE)
    symbols = [d for d in snapshot.corpus.documents if d.tier == "symbol"]
    assert snapshot.header["api_pages"]["count"] == len(api_page_paths(snapshot.corpus)) > 1000
    assert sum(bool(d.doc) for d in symbols) > len(symbols) // 2
    assert all(not d.doc for d in snapshot.corpus.documents if d.tier != "symbol")
    (timeout,) = [d for d in symbols if d.path == CALL_TIMEOUT]
    assert "calls wait indefinitely" in timeout.doc


def test_a_question_in_the_remarks_words_reaches_the_symbol_only_through_its_doc_comment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    corpus = build(mirror=SITE).corpus
    assert Index(corpus).search(BY_BEHAVIOUR, limit=3).results[0].path == CALL_TIMEOUT
    monkeypatch.setattr(rules, "SYMBOL_DOC_WEIGHT", 0.0)  # off: the doc comment is not indexed
    assert CALL_TIMEOUT not in [hit.path for hit in Index(corpus).search(BY_BEHAVIOUR, limit=3).results]


def test_a_missing_reference_page_leaves_the_symbol_without_a_doc_comment() -> None:
    site = tiny_site()
    snapshot = build(mirror=site)
    pages = api_page_paths(snapshot.corpus)
    read = {f"https://{h}{p}" for h, p in pages if (site / h / p.strip("/") / "index.md").is_file()}
    assert 0 < len(read) < len(pages)  # the tiny site has some reference pages, not all
    for doc in snapshot.corpus.documents:
        if doc.tier == "symbol" and doc.url not in read:
            assert doc.doc == ""
    assert snapshot.header["api_pages"]["count"] == len(read)

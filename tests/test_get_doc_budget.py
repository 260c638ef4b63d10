"""get_doc's parts: token budgets cut at boundaries, cursors, outlines, safe site paths, sizes.

Pure functions on literal text, plus one property on the real pages of the site mirror (read
at run time): every page, read in parts of any budget, comes back whole and in order.
"""

from __future__ import annotations

import pytest

from imqueue_mcp.ranker.corpus import Document, LazyDocuments
from imqueue_mcp.server.docs.budget import (
    MAX_DOC_BYTES,
    Cursor,
    CursorError,
    cut_part,
    digest_of,
    estimate_tokens,
    outline_of,
    scan,
)
from imqueue_mcp.server.docs.site_paths import PathEscapes, is_safe_to_send, normalise_path, site_path_url
from imqueue_mcp.server.docs.sizes import DocSizes, prose_sizes

from conftest import SITE

PAGE = """\
# Title

Intro paragraph one.

Intro paragraph two.

## Install

```bash
# not a heading: inside a fence

npm i x
```

### From npm

Body A.

## Use

Body B.
"""
RANGES = {"install": [6, 14], "from-npm": [14, 18], "use": [18, 21]}


def parts_of(text: str, max_tokens: int) -> list[str]:
    parts, start = [], 0
    while start < len(text):
        end = cut_part(text, start, max_tokens)
        assert end > start
        parts.append(text[start:end])
        start = end
    return parts


def test_a_token_is_four_characters_rounded_up() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]


def test_a_part_ends_at_a_heading_when_one_falls_in_the_second_half_of_the_budget() -> None:
    end = cut_part(PAGE, 0, 35)  # 140 characters: "## Install" starts at 53, "### From npm" at 119
    assert PAGE[end:].startswith("### From npm")


def test_a_part_ends_after_a_blank_line_when_no_heading_fits() -> None:
    text = "# T\n\n" + "word " * 30 + "\n\n" + "more " * 30 + "\n\n" + "tail " * 30 + "\n"
    end = cut_part(text, 0, 60)  # 240 characters: paragraphs start at 5, 157 and 309
    assert text[end - 2 : end] == "\n\n" and text[end:].startswith("more")


def test_a_blank_line_inside_a_code_fence_is_not_a_paragraph_boundary() -> None:
    boundaries, headings = scan(PAGE)
    fence_blank = PAGE.index("\nnpm i x") + 1
    assert fence_blank not in boundaries.paragraphs and fence_blank in boundaries.lines
    assert [heading.text for heading in headings] == ["Title", "Install", "From npm", "Use"]


def test_a_line_longer_than_the_budget_is_cut_inside_it_and_nothing_is_lost() -> None:
    text = "a" * 1000 + "\nshort\n"
    parts = parts_of(text, 100)
    assert parts[0] == "a" * 400 and "".join(parts) == text


def test_a_part_never_exceeds_the_outer_byte_limit_even_in_wide_characters() -> None:
    text = "\u00e9" * (MAX_DOC_BYTES // 2 + 1000)  # two bytes each
    end = cut_part(text, 0, MAX_DOC_BYTES // 4)
    assert len(text[:end].encode("utf-8")) <= MAX_DOC_BYTES and end == MAX_DOC_BYTES // 2


@pytest.mark.parametrize("max_tokens", [100, 700, 8_000])
def test_every_mirror_page_read_in_parts_is_the_whole_page(max_tokens: int) -> None:
    pages = sorted((SITE / "imqueue.org").glob("**/index.md"), key=lambda path: -path.stat().st_size)[:40]
    if not pages:
        pytest.skip(f"the site mirror is not at {SITE}")
    for page in pages:
        text = page.read_text("utf-8")
        parts = parts_of(text, max_tokens)
        assert "".join(parts) == text, page
        assert all(estimate_tokens(part) <= max_tokens for part in parts), page


def test_llms_full_read_in_parts_of_the_default_budget_is_the_whole_file() -> None:
    file = SITE / "imqueue.org" / "llms-full.txt"
    if not file.is_file():
        pytest.skip(f"the site mirror is not at {SITE}")
    text = file.read_text("utf-8")
    parts = parts_of(text, 8_000)
    assert "".join(parts) == text and len(parts) >= len(text) // 32_000
    assert all(7_000 <= estimate_tokens(part) <= 8_000 for part in parts[:-1])


def test_a_cursor_round_trips_and_checks_its_url_and_text() -> None:
    text = "# Page\n\nbody\n"
    cursor = Cursor("https://imqueue.org/intro/", 8, digest_of(text))
    decoded = Cursor.decode(cursor.encode())
    assert decoded == cursor
    decoded.check("https://imqueue.org/intro/", text)
    with pytest.raises(CursorError, match="not of https://imqueue.org/cli/"):
        decoded.check("https://imqueue.org/cli/", text)
    with pytest.raises(CursorError, match="changed since"):
        decoded.check("https://imqueue.org/intro/", text + "more\n")


@pytest.mark.parametrize(
    "token", ["", "garbage", "e30", "eyJ2IjoxfQ", "!!!", "eyJ2IjoxLCJ1IjoxLCJvIjoxLCJkIjoiIn0"]
)
def test_a_cursor_that_is_not_one_is_refused_with_what_to_pass(token: str) -> None:
    with pytest.raises(CursorError, match="nextCursor"):
        Cursor.decode(token)


def test_the_outline_lists_headings_with_anchor_urls_and_section_tokens() -> None:
    outline = outline_of(PAGE, "https://imqueue.org/p/", RANGES)
    assert [(entry["heading"], entry["level"], entry.get("anchor")) for entry in outline] == [
        ("Title", 1, None),
        ("Install", 2, "install"),
        ("From npm", 3, "from-npm"),
        ("Use", 2, "use"),
    ]
    lines = PAGE.split("\n")
    install = "\n".join(lines[6:14]).rstrip("\n") + "\n"
    assert outline[1]["url"] == "https://imqueue.org/p/#install"
    assert outline[1]["tokens"] == estimate_tokens(install)
    assert "url" not in outline[0]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/intro/", "/intro/"),
        ("/intro", "/intro"),
        ("/", "/"),
        ("/intro/./", "/intro/"),
        ("/intro/%2e/", "/intro/"),
        ("/intro/../cli/", "/cli/"),
        ("/intro/%2e%2e/cli/", "/cli/"),
        ("/intro/%2E./cli/", "/cli/"),
        ("/intro/.%2e/cli/", "/cli/"),
        ("/a/b/..", "/a/"),
        ("/api/rpc%2Eexpose/", "/api/rpc.expose/"),
        ("/intro%2Fcli/", "/intro/cli/"),
        ("//intro//cli", "/intro/cli"),
        ("/caf%C3%A9/", "/caf%C3%A9/"),
    ],
)
def test_dot_segments_resolve_as_a_browser_resolves_them(path: str, expected: str) -> None:
    assert normalise_path(path) == expected


@pytest.mark.parametrize(
    "path",
    [
        "/..",
        "/../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/%2E%2E/etc/passwd",
        "/.%2e/etc/passwd",
        "/%2e./etc/passwd",
        "/intro/../../etc/passwd",
        "/..%2f..%2fetc%2fpasswd",
        "/..%5c..%5cetc",
        "/a/%252e%252e/%252e%252e/etc",
        "/a/..%252f..%252fetc",
        "/a%zz/",
    ],
)
def test_a_path_that_escapes_the_root_or_hides_a_traversal_is_refused(path: str) -> None:
    with pytest.raises(PathEscapes):
        normalise_path(path)


def test_only_traversal_free_paths_may_be_sent() -> None:
    assert is_safe_to_send("/intro/index.md") and is_safe_to_send("/search-sections.json")
    for path in ("/%2e%2e/x", "/../x", "/a/..%2fb", "/a/%252e%252e/b", "relative", "/a/%5c/b"):
        assert not is_safe_to_send(path), path


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("/get-started", "https://imqueue.org/get-started"),
        ("get-started/", "https://imqueue.org/get-started/"),
        ("/intro/#why", "https://imqueue.org/intro/#why"),
        ("llms-full.txt", "https://imqueue.org/llms-full.txt"),
        ("api/rpc/latest/rpc.expose/", "https://imqueue.org/api/rpc/latest/rpc.expose/"),
        ("//evil.test/intro/", None),
        ("evil.test/intro/", None),
        ("evil.test", None),
        ("127.0.0.1:8080/intro/", None),
        ("https://imqueue.org/intro/", None),
        ("/intro/?next=x", None),
        ("/intro/ x", None),
    ],
)
def test_a_plain_site_path_resolves_against_imqueue_org(text: str, url: str | None) -> None:
    assert site_path_url(text) == url


def test_hit_sizes_come_from_the_prose_until_a_read_measures_them() -> None:
    documents = [
        Document(path="/p/", site="org", tier="page", title="P"),
        Document(path="/p/", site="org", tier="section", title="P", heading="", text="x" * 38),
        Document(path="/p/#a", site="org", tier="section", title="A", heading="A", text="y" * 97),
    ]
    # "" + "\n\n" + 38 characters = 10 tokens; "A" + "\n\n" + 97 = 25 tokens
    assert prose_sizes(documents) == {"https://imqueue.org/p/": 10 + 25, "https://imqueue.org/p/#a": 25}
    snapshot_rows = LazyDocuments([document.to_wire() for document in documents])
    assert prose_sizes(snapshot_rows) == prose_sizes(documents)
    sizes = DocSizes()
    assert sizes.tokens_of("https://imqueue.org/p/#a", documents) == (25, "prose")
    assert sizes.tokens_of("https://imqueue.org/api/x/", documents) is None
    sizes.record({"url": "https://imqueue.org/p/#a", "totalTokens": 31})
    sizes.record({"url": "https://imqueue.org/p/", "totalTokens": 0, "outline": []})
    assert sizes.tokens_of("https://imqueue.org/p/#a", documents) == (31, "measured")
    assert sizes.tokens_of("https://imqueue.org/p/", documents) == (35, "prose")


def test_hit_sizes_follow_the_corpus_answering_after_a_refresh() -> None:
    def corpus(text: str) -> list[Document]:
        return [Document(path="/p/#a", site="org", tier="section", title="A", heading="A", text=text)]

    sizes = DocSizes()
    assert sizes.tokens_of("https://imqueue.org/p/#a", corpus("y" * 97)) == (25, "prose")
    # A refresh brings a longer section: its size, not the table of the corpus before it (which
    # an id() key gave whenever the new corpus landed where the freed old one had been)
    assert sizes.tokens_of("https://imqueue.org/p/#a", corpus("y" * 197)) == (50, "prose")


def test_the_mirror_pages_are_larger_than_their_prose() -> None:
    """What makes 'prose' a lower bound: checked on every page of the mirror that has prose."""
    import json

    feed = SITE / "imqueue.org" / "search-text.json"
    if not feed.is_file():
        pytest.skip(f"the site mirror is not at {SITE}")
    text = json.loads(feed.read_text("utf-8"))
    documents = [
        Document(
            path=text["pages"][row[0]][0] + (f"#{row[1]}" if row[1] else ""),
            site="org",
            tier="section",
            title=row[2],
            heading=row[2],
            text=row[3],
        )
        for row in text["sections"]
    ]
    checked = 0
    for url, tokens in prose_sizes(documents).items():
        file = SITE / "imqueue.org" / (url.removeprefix("https://imqueue.org/") + "index.md")
        if "#" in url or not file.is_file():
            continue
        assert estimate_tokens(file.read_text("utf-8")) >= tokens, url
        checked += 1
    assert checked > 50

"""Code examples: extraction from markdown and llms-full.txt, the snapshot, and their ranking.

Literal markdown for the extractor; the tiny hand-written site (fixtures/tiny_site.py) for
the builder and the snapshot; the ranker itself (no stand-in) for the ranking.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import msgpack  # type: ignore[import-untyped]
import pytest

from imqueue_mcp.docsource import build, load_snapshot, save_snapshot
from imqueue_mcp.docsource.examples import Example, Section, extract_examples, split_llms_full
from imqueue_mcp.docsource.files import wrap
from imqueue_mcp.docsource.snapshot import FORMAT_VERSION
from imqueue_mcp.server.catalogue.packages import CatalogueError
from imqueue_mcp.server.docs.example_finder import (
    RankedExamples,
    best_examples,
    package_filter,
    rank_examples,
)

from conftest import tiny_site

PAGE = """\
# Queues in practice

Source: https://imqueue.org/guide/queues/
Package: @imqueue/core 3.4.2 — generated reference, not hand-written

Intro prose about queues.

~~~bash
npm install @imqueue/core
~~~

## Send a message {#send-a-message}

Create the queue, then send:

```ts
import IMQ from '@imqueue/core';
const queue = IMQ.create('Billing');
await queue.send('Billing', { id: 1 });
```

### Under the hood

- In a list item:

   ```typescript
   queue.sendRaw('Billing', '{}');
   ```

```mermaid
graph LR; a --> b
```

**Signature:**

```typescript
send(to: string, message: JsonObject): Promise<string>;
```
"""

SECTIONS = (
    Section("", "", "Intro prose about queues."),
    Section("send-a-message", "Send a message", "Create the queue, then send a message to a service."),
)


def page_examples() -> list[Example]:
    return extract_examples(PAGE, "org", "/guide/queues/", SECTIONS)


def test_each_fenced_block_keeps_language_code_page_section_and_the_paragraph_before_it() -> None:
    first, second, _third = page_examples()
    assert (first.title, first.heading, first.anchor, first.language) == (
        "Queues in practice",
        "",
        "",
        "bash",
    )
    assert first.code == "npm install @imqueue/core" and first.lead == "Intro prose about queues."
    assert (second.heading, second.anchor) == ("Send a message", "send-a-message")
    assert second.url == "https://imqueue.org/guide/queues/#send-a-message"
    assert second.lead == "Create the queue, then send:"
    assert second.context == "Create the queue, then send a message to a service."
    assert second.code.splitlines()[0] == "import IMQ from '@imqueue/core';"


def test_short_language_names_are_spelt_out_and_an_indented_fence_loses_its_indentation() -> None:
    _first, second, third = page_examples()
    assert second.language == "typescript"  # ```ts
    assert third.code == "queue.sendRaw('Billing', '{}');"


def test_signature_blocks_and_diagrams_are_not_examples() -> None:
    codes = [example.code for example in page_examples()]
    assert len(codes) == 3
    assert not any("graph LR" in code or code.startswith("send(to") for code in codes)


def test_a_heading_the_feed_does_not_anchor_stays_in_the_enclosing_section_and_leads_the_block() -> None:
    third = page_examples()[2]
    assert (third.anchor, third.heading) == ("send-a-message", "Send a message")
    assert third.lead == "Under the hood: - In a list item:"


def test_ids_number_the_blocks_of_each_section_from_one() -> None:
    assert [example.id for example in page_examples()] == [
        "/guide/queues/#~1",
        "/guide/queues/#send-a-message~1",
        "/guide/queues/#send-a-message~2",
    ]


def test_the_documented_package_and_version_come_first_then_the_packages_the_code_names() -> None:
    markdown = "# Page\n\nPackage: @imqueue/rpc 3.7.2 — generated\n\n```ts\nimport '@imqueue/core';\n```\n"
    (example,) = extract_examples(markdown, "org", "/p/")
    assert (example.packages, example.version) == (("@imqueue/rpc", "@imqueue/core"), "3.7.2")
    (plain,) = extract_examples("# Page\n\n```bash\nnpm i -g @imqueue/cli\n```\n", "org", "/q/")
    assert (plain.packages, plain.version) == (("@imqueue/cli",), "")


def test_an_unclosed_fence_runs_to_the_end_of_the_page_and_an_empty_block_is_skipped() -> None:
    markdown = "# Page\n\n```\n```\n\n```ts\nconst a = 1;\n"
    (example,) = extract_examples(markdown, "org", "/p/")
    assert (example.code, example.language) == ("const a = 1;", "typescript")


def test_a_tilde_fence_is_closed_only_by_tildes() -> None:
    markdown = "# Page\n\n~~~md\n```ts\nx\n```\n~~~\n"
    (example,) = extract_examples(markdown, "org", "/p/")
    assert example.code == "```ts\nx\n```"


def test_llms_full_splits_into_pages_at_each_title_with_a_source_line() -> None:
    text = (
        "# Site: full docs\n\n> header\n\n---\n\n# One\n\nSource: https://imqueue.org/one/\n\nBody one.\n\n"
        "# Not a page title\n\nstill one\n\n---\n\n# Two\nSource: https://imqueue.com/two/\n\nBody two.\n"
    )
    pages = split_llms_full(text)
    assert list(pages) == ["https://imqueue.org/one/", "https://imqueue.com/two/"]
    assert (
        pages["https://imqueue.org/one/"].startswith("# One\n")
        and "still one" in pages["https://imqueue.org/one/"]
    )
    assert not pages["https://imqueue.org/one/"].rstrip().endswith("---")


# --- the builder and the snapshot ------------------------------------------------------


def test_the_builder_reads_the_examples_from_llms_full_and_the_snapshot_keeps_them(tmp_path: Path) -> None:
    snapshot = build(mirror=tiny_site())
    assert [example.id for example in snapshot.examples or []] == [
        "/api/faq/#~1",
        "/intro/#~1",
        "/tutorial/expose-methods/#write-the-method~1",
        "/tutorial/expose-methods/#write-the-method~2",
    ]
    tutorial = (snapshot.examples or [])[2]
    assert tutorial.title == "Expose service methods" and tutorial.packages == ("@imqueue/rpc",)
    assert tutorial.context.startswith("Put @expose() above the method")  # the tier-2 section's prose
    path = tmp_path / "snapshot.msgpack"
    save_snapshot(snapshot, path)
    assert load_snapshot(path).examples == snapshot.examples


def test_a_site_without_llms_full_still_builds_its_corpus_with_no_examples_from_it(tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(tiny_site(), site)
    (site / "imqueue.org" / "llms-full.txt").unlink()
    snapshot = build(mirror=site)
    assert snapshot.examples == [] and len(snapshot.corpus.documents) == len(
        build(mirror=tiny_site()).corpus.documents
    )


def test_a_snapshot_written_before_examples_loads_with_none_instead_of_failing(tmp_path: Path) -> None:
    snapshot = build(mirror=tiny_site())
    path = tmp_path / "snapshot.msgpack"
    save_snapshot(snapshot, path)
    outer = msgpack.unpackb(path.read_bytes(), raw=False)
    body = msgpack.unpackb(outer["body"], raw=False)
    del body["examples"]
    older = {k: v for k, v in outer["header"].items() if k not in ("format", "body_sha256")}
    path.write_bytes(wrap(older, msgpack.packb(body, use_bin_type=True), FORMAT_VERSION))
    loaded = load_snapshot(path)
    assert loaded.examples is None and len(loaded.corpus.documents) == len(snapshot.corpus.documents)


# --- ranking -----------------------------------------------------------------------------


def tiny_ranked() -> RankedExamples:
    snapshot = build(mirror=tiny_site())
    return rank_examples(tuple(snapshot.examples or ()), snapshot.corpus.lemmas)


def test_the_section_words_rank_an_example_the_code_alone_would_not_find() -> None:
    found, _ = best_examples(tiny_ranked(), "describe arguments in a JSDoc comment", 1)
    assert [example.id for example in found] == ["/tutorial/expose-methods/#write-the-method~1"]


def test_an_identifier_that_only_the_code_holds_finds_its_block() -> None:
    found, _ = best_examples(tiny_ranked(), "sendRaw", 3)
    assert [example.id for example in found][:1] == ["/api/faq/#~1"]


def test_the_package_filter_keeps_only_the_examples_of_that_package() -> None:
    ranked = tiny_ranked()
    found, _ = best_examples(ranked, "install", 5, "@imqueue/rpc")
    assert found and all("@imqueue/rpc" in example.packages for example in found)
    assert best_examples(ranked, "install", 5, "@imqueue/job")[0] == []


def test_a_typo_is_corrected_and_a_query_matching_nothing_finds_nothing() -> None:
    ranked = tiny_ranked()
    assert [e.id for e in best_examples(ranked, "exposse", 1)[0]] == [
        "/tutorial/expose-methods/#write-the-method~1"
    ]
    assert best_examples(ranked, "grapefruit", 3)[0] == []


def test_a_package_filter_names_the_known_packages_when_it_is_not_one() -> None:
    assert package_filter("RPC", frozenset()) == "@imqueue/rpc"
    with pytest.raises(CatalogueError, match="Known packages: .*rpc"):
        package_filter("left-pad", frozenset())


def test_a_block_the_docs_repeat_on_several_pages_is_given_once_where_it_ranks_best() -> None:
    def install(page: str, heading: str) -> Example:
        return Example(
            id=f"{page}#~1",
            site="org",
            page=page,
            anchor="",
            title=heading,
            heading=heading,
            language="bash",
            code="npm i -g @imqueue/cli",
        )

    examples = (
        install("/a/", "Install the CLI"),
        install("/b/", "Install the CLI globally"),
        Example(
            "/c/#~1", "org", "/c/", "", "Upgrade", "Upgrade the CLI", "bash", "npm i -g @imqueue/cli@latest"
        ),
    )
    found, _ = best_examples(rank_examples(examples, {}), "install the cli", 3)
    assert [example.code for example in found] == ["npm i -g @imqueue/cli", "npm i -g @imqueue/cli@latest"]

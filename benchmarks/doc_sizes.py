"""How honest search_docs' `tokens` are, and how get_doc's budget splits the mirror's pages.

    python -m benchmarks.doc_sizes [--shared PATH]

Builds the corpus from <shared>/site (read at run time), then for every page of both sites
that has indexed prose, compares the page's tokens (get_doc's answer for its URL) with the
prose estimate a hit carries before any read (server/docs/sizes.py), and the same for every
anchored section. Then reads every page in parts of the default budget and counts the parts,
checking that the parts put together are the page; and times cutting the parts of the longest
file, llms-full.txt, and its outline. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import machine
from benchmarks.paths import shared_dir, site_dir


def measure(site: Path) -> dict[str, Any]:
    from imqueue_mcp.build_index.cli import main as build
    from imqueue_mcp.docsource import load_snapshot
    from imqueue_mcp.server.docs.budget import DEFAULT_MAX_TOKENS, cut_part, estimate_tokens, outline_of
    from imqueue_mcp.server.docs.read import slice_section
    from imqueue_mcp.server.docs.sizes import prose_sizes

    with tempfile.TemporaryDirectory() as folder:
        snapshot = Path(folder) / "snapshot.msgpack"
        build(["--from", str(site), "--out", str(snapshot), "--quiet"])
        sizes = prose_sizes(load_snapshot(snapshot).corpus.documents)
    page_ratios: list[float] = []
    sections = sections_below = 0
    parts_per_page: list[int] = []
    whole_again = True
    for host in ("imqueue.org", "imqueue.com"):
        maps = json.loads((site / host / "search-sections.json").read_text("utf-8"))["pages"]
        for file in sorted((site / host).glob("**/index.md")):
            markdown = file.read_text("utf-8")
            page = "/" + str(file.parent.relative_to(site / host)).strip(".") + "/"
            page = page.replace("//", "/")
            url = f"https://{host}{page}"
            if url in sizes:
                page_ratios.append(estimate_tokens(markdown) / sizes[url])
            for anchor in maps.get(page, {}):
                section = slice_section(markdown, maps[page], anchor)
                if section is not None and f"{url}#{anchor}" in sizes:
                    sections += 1
                    sections_below += estimate_tokens(section.markdown) < sizes[f"{url}#{anchor}"]
            start, parts = 0, []
            while start < len(markdown):
                end = cut_part(markdown, start, DEFAULT_MAX_TOKENS)
                parts.append(markdown[start:end])
                start = end
            parts_per_page.append(len(parts))
            whole_again = whole_again and "".join(parts) == markdown
    full = (site / "imqueue.org" / "llms-full.txt").read_text("utf-8")
    start, timings = 0, []
    while start < len(full):
        began = time.perf_counter()
        start = cut_part(full, start, DEFAULT_MAX_TOKENS)
        timings.append(time.perf_counter() - began)
    began = time.perf_counter()
    outline_of(full, "https://imqueue.org/llms-full.txt", None)
    outline_seconds = time.perf_counter() - began
    return {
        "llms_full_parts_at_default_budget": len(timings),
        "llms_full_slowest_cut_ms": round(max(timings) * 1000, 1),
        "llms_full_median_cut_ms": round(statistics.median(timings) * 1000, 1),
        "llms_full_outline_ms": round(outline_seconds * 1000, 1),
        "pages_with_prose": len(page_ratios),
        "page_over_prose_min": round(min(page_ratios), 2),
        "page_over_prose_median": round(statistics.median(page_ratios), 2),
        "page_over_prose_max": round(max(page_ratios), 2),
        "sections_with_prose": sections,
        "sections_smaller_than_prose": sections_below,
        "pages_read": len(parts_per_page),
        "pages_over_default_budget": sum(count > 1 for count in parts_per_page),
        "most_parts_at_default_budget": max(parts_per_page),
        "parts_rejoin_to_the_page": whole_again,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.doc_sizes", description=__doc__)
    parser.add_argument("--shared", help="the shared folder (default ../shared, or $IMQ_SHARED)")
    args = parser.parse_args(argv)
    figures = measure(site_dir(shared_dir(args.shared)))
    width = max(len(name) for name in figures)
    for name, value in figures.items():
        print(f"{name:<{width}}  {value}")
    print(f"machine: {machine()}")
    print(json.dumps({"benchmark": "doc_sizes", **figures, "machine": machine()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

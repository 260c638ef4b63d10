"""`imq-search`: the ranker on the command line, for humans debugging a ranking.

It lives with the builder because `--from` builds a corpus in memory: it needs both layers.

    imq-search "expose a method" [--limit N] [--package P] [--explain] [--json]
    npm run build 2>&1 | imq-search -         # the query from stdin: an error output pasted whole
    imq-search --batch queries.jsonl          # one results line per query (../shared/kpi format)

Corpus: --snapshot PATH (default: the user cache snapshot), or --from DIR|URL to build in memory.
Exit codes: 0 results, 1 a miss (guidance printed), 2 a usage or corpus error.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.style import Style
from rich.table import Table
from rich.text import Text

from imqueue_mcp.docsource.assemble import build
from imqueue_mcp.docsource.snapshot import default_snapshot_path, load_snapshot
from imqueue_mcp.docsource.sources import BuildError
from imqueue_mcp.ranker import Index, SearchResponse, response_dict, rules
from imqueue_mcp.ranker.confidence import coverage_needed
from imqueue_mcp.ranker.search import EXPLAIN_LEGEND

EXIT_RESULTS, EXIT_MISS, EXIT_ERROR = 0, 1, 2


class UsageError(Exception):
    pass


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="imq-search",
        description="Search the @imqueue docs corpus with the same ranker the MCP server uses.",
    )
    ap.add_argument(
        "query",
        nargs="?",
        help='the search query, e.g. "expose a method"; - reads it from stdin (an error output pasted whole)',
    )
    ap.add_argument("--limit", type=int, default=6, help="results to show (1-200, default 6)")
    ap.add_argument("--package", help="only this package's records: rpc or @imqueue/rpc")
    ap.add_argument(
        "--explain",
        action="store_true",
        help="per result: matched terms, fields, forms, IDF, caps and demotions",
    )
    ap.add_argument("--json", action="store_true", help="print the response as JSON")
    ap.add_argument("--snapshot", type=Path, help="snapshot file (default: the user cache snapshot)")
    ap.add_argument(
        "--from",
        dest="source",
        metavar="DIR|URL",
        help="build the corpus in memory from a site mirror folder or a base URL",
    )
    ap.add_argument(
        "--batch",
        type=Path,
        metavar="FILE",
        help='JSON lines {"query": ...}: write one results line per query to stdout',
    )
    return ap


def load_index(snapshot: Path | None, source: str | None) -> Index:
    if snapshot and source:
        raise UsageError("give either --snapshot or --from, not both")
    try:
        if source:
            return build(mirror=source).index()
        return load_snapshot(snapshot or default_snapshot_path()).index()
    except BuildError as error:
        raise UsageError(str(error)) from None


def run_batch(index: Index, path: Path, out: TextIO) -> int:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise UsageError(f"{path}: cannot read ({error.strerror})") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text; write one JSON object per line, UTF-8 encoded") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            query = item["query"]
            if not isinstance(query, str):
                raise TypeError
        except (json.JSONDecodeError, KeyError, TypeError):
            raise UsageError(f'{path}:{number}: expected a JSON line like {{"query": "..."}}') from None
        package = item.get("package")
        if package is not None and not isinstance(package, str):
            raise UsageError(f'{path}:{number}: "package" must be a string like "rpc" or "@imqueue/rpc"')
        try:
            result = batch_line(index, query, package)
        except ValueError as error:  # an unknown package filter, or an empty query: say which line
            raise UsageError(f"{path}:{number}: {error}") from None
        out.write(json.dumps(result, ensure_ascii=False) + "\n")
    return EXIT_RESULTS


def batch_line(index: Index, query: str, package: str | None = None) -> dict[str, Any]:
    results, corrected = index.brief(query, rules.BATCH_DEPTH, package)
    line: dict[str, Any] = {
        "query": query,
        "results": [
            {"u": r.path, "external": r.external, "score": round(r.score, 6), "confidence": r.confidence}
            for r in results
        ],
    }
    if corrected:
        line["corrected"] = corrected
    return line


FULL_WIDTH = 100_000  # piped with no COLUMNS: every row whole on one line, for grep and cut


def output_width(out: TextIO) -> int | None:
    """The columns to fit: COLUMNS when set, else the terminal's width when `out` is one, else
    None (piped: no limit, nothing folded)."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if is_terminal(out):
        try:
            return os.get_terminal_size(out.fileno()).columns
        except (OSError, ValueError):
            return None
    return None


def is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def results_table(response: SearchResponse, width: int | None, terminal: bool) -> str:
    """The plain ranked table, rendered by rich: rank, score, confidence, title and the whole URL
    (a hyperlink on a terminal). Within `width`, a long title or URL folds onto the next line of
    its cell; nothing is cut."""
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold" if terminal else "")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("conf", no_wrap=True)
    table.add_column("title", overflow="fold")
    table.add_column("url", overflow="fold")
    for rank, hit in enumerate(response.results, 1):
        url = hit.url
        table.add_row(
            str(rank),
            f"{hit.score:.3f}",
            hit.confidence,
            Text(hit.title),
            Text(url, style=Style(link=url) if terminal else ""),
        )
    buffer = io.StringIO()
    console = Console(
        file=buffer,
        width=width or FULL_WIDTH,
        force_terminal=terminal,
        color_system="standard" if terminal else None,
        highlight=False,
        markup=False,
        emoji=False,
        legacy_windows=False,
    )
    console.print(table)
    return "".join(line.rstrip(" ") + "\n" for line in buffer.getvalue().splitlines())


def print_table(response: SearchResponse, out: TextIO, explain: bool) -> None:
    """The ranked table, fitted to the terminal's width (COLUMNS, or the terminal's own; whole
    lines when piped). With --explain: the legend and the query's notes first, then per hit a row
    with its section, its URL and its explanation."""
    width = output_width(out)
    if explain:
        for line in EXPLAIN_LEGEND:
            out.write(wrapped(line, "    ", width))
        for note in response.notes:
            out.write(wrapped(f"  · {note}", "      ", width))
    if response.corrected or response.searched:
        out.write(f"(searched for: {response.corrected or response.searched})\n")
    if not explain:
        out.write(results_table(response, width, is_terminal(out)))
    else:
        for rank, hit in enumerate(response.results, 1):
            row = f"{rank:>2}  {hit.score:7.3f}  {hit.confidence:<6}  {hit.title}  [{hit.section}]"
            out.write(wrapped(row.rstrip(), "      ", width))
            out.write(f"      {hit.url}\n")  # whole, never broken: a terminal links it as is
            for line in hit.explanation:
                out.write(wrapped(f"      {line}", "        ", width))
    if response.weak:
        needed = coverage_needed(bool(response.named_unknown))
        out.write(
            wrapped(
                f"(weak: the best hit scores under {rules.CONFIDENCE_LOW_SCORE:g} and under "
                f"{rules.CONFIDENCE_LOW_PER_WEIGHT:g}x what the query's words weigh, or matches under "
                f"{needed:.0%} of the query; the docs may not cover this)",
                " ",
                width,
            )
        )


def wrapped(line: str, indent: str, width: int | None) -> str:
    """One line, broken at spaces to fit `width` (not at all when None)."""
    if width is None:
        return line + "\n"
    lead = line[: len(line) - len(line.lstrip())]
    parts = textwrap.wrap(
        line.strip(),
        width=max(width, len(indent) + 20),
        initial_indent=lead,
        subsequent_indent=indent,
        break_long_words=True,
        break_on_hyphens=False,
    )
    return "".join(part + "\n" for part in parts)


def print_miss(response: SearchResponse, out: TextIO) -> None:
    assert response.miss is not None
    out.write(f"No results for {response.query!r}.\n")
    if response.miss.nearest_terms:
        out.write("Nearest indexed terms: " + ", ".join(response.miss.nearest_terms) + "\n")
    out.write("Sections of the docs: " + "; ".join(response.miss.sections) + "\n")


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = parser().parse_args(argv)
    try:
        if args.batch is None and args.query is None:
            raise UsageError('give a query, e.g. imq-search "expose a method", or --batch FILE')
        if args.batch is not None and args.query is not None:
            raise UsageError("give a query or --batch FILE, not both")
        if not 1 <= args.limit <= 200:
            raise UsageError(f"--limit must be between 1 and 200, got {args.limit}")
        if args.query == "-":
            args.query = read_stdin_query()
        index = load_index(args.snapshot, args.source)
        if args.batch is not None:
            return run_batch(index, args.batch, out)
        try:
            response = index.search(args.query, limit=args.limit, package=args.package, explain=args.explain)
        except ValueError as error:
            raise UsageError(str(error)) from None
    except UsageError as error:
        sys.stderr.write(f"imq-search: {error}\n")
        return EXIT_ERROR
    try:
        return write_response(response, args, out)
    except BrokenPipeError:  # `imq-search ... | head`: the reader has what it wanted
        if out is sys.stdout:  # Python flushes stdout again at exit: let that write go nowhere
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_RESULTS if response.results else EXIT_MISS


def read_stdin_query() -> str:
    """`imq-search -`: the query is what stdin holds (a pasted error output, as search_docs takes
    it), decoded as UTF-8."""
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as error:
        raise UsageError(f"stdin is not UTF-8 text ({error.reason} at byte {error.start})") from None


def write_response(response: SearchResponse, args: argparse.Namespace, out: TextIO) -> int:
    if args.json:
        out.write(json.dumps(response_dict(response), ensure_ascii=False, indent=2) + "\n")
    elif response.results:
        print_table(response, out, args.explain)
    else:
        print_miss(response, out)
    return EXIT_RESULTS if response.results else EXIT_MISS


if __name__ == "__main__":
    sys.exit(main())

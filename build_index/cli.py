"""`imq-build-index`: read the sites' feeds and write the corpus snapshot.

    imq-build-index                          # the live sites -> the user cache snapshot
    imq-build-index --from ../shared/site    # a mirror folder (or a base URL serving HOST/ folders)
    imq-build-index --origin imqueue.org=http://127.0.0.1:8101 --origin imqueue.com=http://127.0.0.1:8102
    imq-build-index --pages                  # also every page's markdown, in the same file

Progress on a terminal (stderr), --quiet for none, one summary line at the end. A feed record
whose path is not a canonical path on the site is refused (not fetched, not indexed) and named
on stderr, --quiet or not (SECURITY.md: feed URLs). On any error:
one line naming the URL or file and the fix, and exit 1. A feed that cannot be read leaves both
previous file untouched (nothing is written before every feed is read). The snapshot and its
pages are one file, replaced atomically (temp file + fsync + rename): a server reads the previous
generation whole or the new one whole, never one's corpus with the other's pages, and a build
killed at any point leaves the previous file as it was. A `<snapshot>.pages` file written beside
it by an older version belongs to an older generation and is removed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from imqueue_mcp.docsource.assemble import build
from imqueue_mcp.docsource.pages import pages_path
from imqueue_mcp.docsource.sites import OriginError, parse_origin
from imqueue_mcp.docsource.snapshot import default_snapshot_path, save_snapshot
from imqueue_mcp.docsource.sources import BuildError


def parse_origins(values: list[str]) -> dict[str, str]:
    origins = {}
    for value in values:
        try:
            host, url = parse_origin(value)
        except OriginError as error:
            raise BuildError(f"--origin: {error}") from None
        origins[host] = url
    return origins


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="imq-build-index", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--from",
        dest="source",
        metavar="DIR|URL",
        help="a site mirror folder (holding imqueue.org/ and imqueue.com/) or a base URL",
    )
    ap.add_argument(
        "--origin",
        action="append",
        default=[],
        metavar="HOST=URL",
        help="read HOST's feeds from URL instead of the live site (repeatable)",
    )
    ap.add_argument("--out", type=Path, help=f"snapshot path (default {default_snapshot_path()})")
    ap.add_argument(
        "--pages",
        action="store_true",
        help="also save every page's markdown in the snapshot, so that the server's get_doc can "
        "read pages offline",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress and no summary line")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    out = args.out or default_snapshot_path()
    started = time.perf_counter()
    show_progress = not args.quiet and sys.stderr.isatty()

    def progress(step: int, total: int, what: str) -> None:
        if show_progress:
            sys.stderr.write(f"\r[{step}/{total}] {what:<60}")
            sys.stderr.flush()

    try:
        if args.source and args.origin:
            raise BuildError("give either --from or --origin, not both")
        snapshot = build(
            origins=parse_origins(args.origin) or None,
            mirror=args.source,
            progress=progress,
            pages=args.pages,
        )
        size = save_snapshot(snapshot, out)
        pages_path(out).unlink(missing_ok=True)  # an older version's sidecar: another generation
    except BuildError as error:
        if show_progress:
            sys.stderr.write("\n")
        sys.stderr.write(f"imq-build-index: {error}\n")
        return 1
    if show_progress:
        sys.stderr.write("\n")
    report_refused(snapshot.refused)
    if not args.quiet:
        counts = ", ".join(f"{k} {v}" for k, v in snapshot.header["counts"].items())
        seconds = time.perf_counter() - started
        pages = f", doc comments from {snapshot.header['api_pages']['count']} API reference pages"
        if snapshot.pages is not None:
            pages += (
                f", {len(snapshot.pages.body)} pages incl. both llms.txt "
                f"({len(snapshot.pages.missing)} not found, skipped)"
            )
        sys.stderr.write(
            f"wrote {out}: {len(snapshot.corpus.documents)} records ({counts}){pages}, "
            f"{size / 1024:.0f} kB in {seconds:.2f} s\n"
        )
    return 0


def report_refused(refused: list[str], shown: int = 20) -> None:
    """One stderr line per record the build refused (a path that is not on the site), even
    with --quiet: feed data naming another host is worth seeing."""
    for line in refused[:shown]:
        sys.stderr.write(f"imq-build-index: {line}\n")
    if len(refused) > shown:
        sys.stderr.write(f"imq-build-index: and {len(refused) - shown} more records refused\n")


if __name__ == "__main__":
    sys.exit(main())

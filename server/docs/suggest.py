"""What completes from where (the adapter's completions.py answers completion/complete with it):
values for what a user is typing, ranked.

    rank(candidates, typed)        the candidates matching what was typed, best first, capped
    page_paths(corpus, host)       every page path of a host in the corpus
    api_packages(corpus)           the packages with an API reference
    complete_package_list(typed)   a comma-separated package list, its last item completed
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mcp_types import Completion

from imqueue_mcp.server.catalogue.packages import CATALOGUE, SCOPE
from imqueue_mcp.server.docs.corpus_keeper import LoadedCorpus

MAX_VALUES = 20
# A typed value longer than this completes to nothing: every catalogued package written out with
# its scope (17 of them, 343 characters) fits in it twice, and each suggestion for `using` repeats
# what was typed, so an unbounded one made a reply 17 times its request (a 990 kB value, 16.8 MB).
MAX_TYPED = 1000
SITES = {"imqueue.org": "org", "imqueue.com": "com"}
_API_PAGE = re.compile(r"^/api/([a-z0-9-]+)/latest/")
_BOUNDARY = re.compile(r"[/\-_. ]")


def rank(candidates: Iterable[str], typed: str) -> Completion:
    """The candidates matching `typed`, best first, capped at MAX_VALUES."""
    needle = typed.strip().lower()
    scored: list[tuple[int, int, int, str]] = []
    for value in set(candidates):
        text = value.lower()
        if text.startswith(needle):
            group = 0
        elif needle not in text:
            continue
        elif any(text.startswith(needle, match.end()) for match in _BOUNDARY.finditer(text)):
            group = 1
        else:
            group = 2
        scored.append((group, value.rstrip("/").count("/"), len(value), value))
    scored.sort()
    values = [value for *_, value in scored[:MAX_VALUES]]
    return Completion(values=values, total=len(scored), has_more=len(scored) > MAX_VALUES)


def page_paths(corpus: LoadedCorpus, host: str) -> list[str]:
    """Every page path of `host` in the corpus, without the leading slash ('' is the home page)."""
    return corpus.page_paths[SITES[host]]


def api_packages(corpus: LoadedCorpus) -> list[str]:
    """The packages with an API reference: 'rpc' for /api/rpc/latest/."""
    matches = (_API_PAGE.match("/" + path) for path in page_paths(corpus, "imqueue.org"))
    return sorted({match.group(1) for match in matches if match})


def complete_package_list(typed: str) -> Completion:
    """`using` is comma-separated: complete its last item, keeping the ones before it."""
    head, _, last = typed.rpartition(",")
    last = last.strip()
    if last.lower().startswith(SCOPE):
        last = last[len(SCOPE) :]
    chosen = {item.strip().lower().removeprefix(SCOPE) for item in head.split(",")}
    names = [entry.name[len(SCOPE) :] for entry in CATALOGUE if entry.name[len(SCOPE) :] not in chosen]
    ranked = rank(names, last)
    lead = f"{head.strip()}, " if head.strip() else ""
    return Completion(
        values=[lead + value for value in ranked.values], total=ranked.total, has_more=ranked.has_more
    )

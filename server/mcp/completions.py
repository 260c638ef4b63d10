"""completion/complete: values for prompt arguments and resource-template variables.

    complete(ref, argument, keeper)   the Completion for one argument's typed value

What completes, and from where:

    choose_imqueue_packages  using     catalogued package names (the last comma-separated item)
    https://imqueue.org/api/{package}/latest/  package    the packages the corpus has an API
                                                          reference for
    https://imqueue.org/{+path}, https://imqueue.com/{+path}  path  the page paths of that host
                                                          in the corpus the server keeps

Ranking for what was typed (case-insensitive): values that start with it, then values in which
a later path segment or word starts with it, then values that merely contain it; within a
group, fewer path segments first, then shorter, then alphabetical. At most MAX_VALUES come back;
`total` and `hasMore` say how many matched. An unknown prompt, template or argument, or a typed
value over MAX_TYPED characters, completes to nothing rather than failing: hosts probe
completion for whatever the user is typing into, and an empty list is the protocol's "no
suggestions" (the MCP conformance suite asks for one with a ref it made up and expects a result).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mcp_types import Completion, CompletionArgument, PromptReference, ResourceTemplateReference

from imqueue_mcp.server.catalogue.packages import CATALOGUE, SCOPE
from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper, CorpusUnavailable, LoadedCorpus
from imqueue_mcp.server.mcp.prompts import CHOOSE_NAME
from imqueue_mcp.server.mcp.resources import API_TEMPLATE, PAGE_TEMPLATE

MAX_VALUES = 20
# A typed value longer than this completes to nothing: every catalogued package written out with
# its scope (17 of them, 343 characters) fits in it twice, and each suggestion for `using` repeats
# what was typed, so an unbounded one made a reply 17 times its request (a 990 kB value, 16.8 MB).
MAX_TYPED = 1000
_SITES = {"imqueue.org": "org", "imqueue.com": "com"}
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
    return corpus.page_paths[_SITES[host]]


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


async def complete(
    ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument, keeper: CorpusKeeper
) -> Completion:
    nothing = Completion(values=[], total=0, has_more=False)
    if len(argument.value) > MAX_TYPED:
        return nothing
    if isinstance(ref, PromptReference):
        if ref.name == CHOOSE_NAME and argument.name == "using":
            return complete_package_list(argument.value)
        return nothing
    template = ref.uri
    hosts = [host for host in _SITES if template == PAGE_TEMPLATE.format(host=host)]
    wanted = (hosts and argument.name == "path") or (template == API_TEMPLATE and argument.name == "package")
    if not wanted:
        return nothing
    try:
        corpus = await keeper.current()
    except CorpusUnavailable:
        return nothing  # no corpus, no suggestions; reading a resource says how to build one
    if hosts:
        return rank(page_paths(corpus, hosts[0]), argument.value)
    return rank(api_packages(corpus), argument.value)

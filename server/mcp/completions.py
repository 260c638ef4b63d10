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

from mcp_types import Completion, CompletionArgument, PromptReference, ResourceTemplateReference

from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper, CorpusUnavailable
from imqueue_mcp.server.docs.suggest import (
    MAX_TYPED,
    SITES,
    api_packages,
    complete_package_list,
    page_paths,
    rank,
)
from imqueue_mcp.server.mcp.prompts import CHOOSE_NAME
from imqueue_mcp.server.mcp.resources import API_TEMPLATE, PAGE_TEMPLATE


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
    hosts = [host for host in SITES if template == PAGE_TEMPLATE.format(host=host)]
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

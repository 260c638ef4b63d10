"""server: the MCP server. A thin adapter (mcp/) over domain packages that never import the SDK,
served by hosting/; serve.py hands the one to the other (docs/architecture.md).

    __main__.py      `imqueue-mcp`: flags + environment -> Config, then one transport (serve.py)
    serve.py         the composition root: the adapter's MCPServer handed to stdio or hosted HTTP
    config.py        Config: snapshot, offline, origins, hosted allowlists, the log level; ConfigError
    errors.py        the one table of tool error codes, what each means and the next step
    progress.py      long operations report progress to whoever installed a reporter (the adapter)
    user_files.py    a file of the user's read safely: regular files only, no blocking, capped
    services.py      every piece of state the tools share for the life of the server
    observe.py       stderr logging at the user's level, the per-call JSON line, client records
    tool_results.py  text, structured and guided-error tool results (the adapter's and the wire's)
    reply_limits.py  the most a tool's reply may hold (SECURITY.md)
    result_shapes.py the tools' structured results as pydantic models (their outputSchema)
    installed_api.py the installed @imqueue API (project/) joined with the docs' (docs/): api_diff,
                     get_api's docs side, the search marks
    mcp/             the adapter: app, tools (one record each), resources, prompts, completions,
                     schemas, strict argument models, the MCP side of the user's project
    hosting/         stdio and Streamable HTTP, the wire checks, probes, drain, metrics, limits
    docs/            search_docs, get_doc and find_examples: the corpus keeper, fetching under the
                     host lock, get_doc's slicing and token budget, the saved pages, the examples,
                     the package facts (status.json, live else the snapshot's)
    catalogue/       the package catalogue as compiled in
    scaffold/        scaffold_service / scaffold_client: the input models and the templates
    imq/             the bridge to the imq CLI: argument checks, the runner, the eight operations
    project/         the user's project: where it is, @imqueue versions, tsconfig, the findings
                     with doc URLs, the report and the version note

A tool call flows: mcp.app.ImqueueServer.call_tool (progress reporter, log records, the user's
roots) -> the tool's record in mcp.tools -> one function of a domain package -> its result or a
guided error (tool_results) -> the version note (mcp.project_tools) -> the stderr line (observe).
A query flows: search_docs -> docs.search_docs.search_docs -> docs.corpus_keeper.CorpusKeeper.current()
-> the reply kept for the same call (Services.replies), else ranker.Index.search (Services.answers)
-> ranker.response_dict -> advisories, token sizes, passages, the corpus it answered from ->
structuredContent + text. A page read flows: get_doc ->
docs.read.read_doc -> docs.fetch.Fetcher.get (or, offline, docs.saved_pages.SavedPages) -> sliced
to the #fragment and cut to the budget (docs.budget). A CLI call flows: imq.bridge operation ->
imq.arguments checks -> imq.runner.ImqRunner runs imq -> word_outcome -> BridgeResult -> result.
stdout is the protocol channel on stdio; every diagnostic goes to stderr through `logging`.
"""

from __future__ import annotations

from imqueue_mcp.docsource.sites import package_version as server_version

__all__ = ["server_version"]

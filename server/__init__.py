"""server: the MCP adapter over the ranker, the builder and the imq CLI. Thin by design.

    __main__.py       `imqueue-mcp`: flags + environment -> Config, then one transport
    config.py         Config: snapshot, offline, origins, hosted allowlists; ConfigError
    app.py            create_server(config, hosted) -> MCPServer with the right tools, the prompts,
                      the resources and completions; ImqueueServer answers resources/list,
                      templates and /read, and wraps every tool call: guided errors for refused
                      calls, progress, client log messages (logging/setLevel), the per-call log
                      line; ResourceListAnnouncer announces list changes (stdio)
    tools.py          every tool: title, SPEC §3a hints, description, strict schema, thin body
    errors.py         the one table of tool error codes and next steps; error_result -> isError
                      with text and structuredContent.error {code, message, suggestedAction}
    progress.py       notifications/progress for long operations, when the client sent a token
    observe.py        stderr logging at the user's level, the per-call JSON line, and the records
                      a tool call emits, gathered for the client
    prompts.py        build_imqueue_service and choose_imqueue_packages (arguments checked: -32602)
    resources.py      the curated pages, both llms.txt and the package catalogue as resources, the
                      page templates: listed from the corpus, pages read via docs
    completions.py    completion/complete: page paths and package names, ranked for a prefix
    strict.py         closed input schemas (unknown arguments refused by name), tidy schemas
    schemas.py        output schemas: the six shared tools' (SPEC §4) and generate_client's
    instructions.py   the server instructions and the local-install guide
    corpus.py         which corpus search_docs ranks: live (hourly), else snapshot, else error; with a
                      snapshot on disk it answers first and the live read runs in the background
    search.py         search_docs: ranker.Index.search -> structured result + text
    examples.py       find_examples: the corpus's code examples, ranked by a ranker.Index of their
                      own (built once per corpus), filtered by package -> structured result + text
    answer_cache.py   the ranker's answers kept for the index that gave them (repeated questions)
    fetch.py          the host lock and origin-mapped GETs
    site_paths.py     plain site paths, dot segments resolved (encoded ones too), the send check
    docs.py           get_doc: mirror resolution, #fragment sections, budgeted parts, pointers
    doc_budget.py     get_doc's token budget: where a part ends, nextCursor, outlines
    doc_sizes.py      the `tokens` of search_docs hits: measured by a read, else the prose's
    pages.py          the pages saved beside the snapshot (`imq-build-index --pages`): get_doc's
                      answers offline or when a site does not answer, loaded once on first use
    status.py         list_packages / package_status over imqueue.org/status.json
    package_facts.py  status.json live, else the snapshot's copy labelled with its date (offline,
                      or imqueue.org down); the guided message when there is neither
    project.py        the user's project (no mcp): @imqueue versions from package.json, the
                      lockfile and node_modules, tsconfig.json, the findings with their doc URLs
    project_tools.py  local only: the client's roots (else the working directory), inspect_project,
                      and the one-line versionNote on results about a package used at another major
    stdio.py          the stdio transport, answering malformed lines with parse errors
    http.py           the hosted Streamable HTTP app: method table, Host/Origin, CORS, limits
    catalogue.py      the compiled-in package catalogue and status shaping
    scaffold_types.py scaffold input: service names, Param/Method models, TypeScript type analysis
    scaffold.py       scaffold_service / scaffold_client templates and their markdown
    cli_bridge.py     the eight imq CLI operations (timeouts, dry-run by default) -> BridgeResult
    cli_arguments.py  refuses user values imq would read as flags, before anything runs
    imq_runner.py     finds and runs imq without a shell (stdin closed, process-group kill, ANSI
                      stripped, output capped) and words the outcome as a BridgeResult
    generated_client.py the client file generate_client wrote, read back as text + structured data

A tool call flows: ImqueueServer.call_tool (progress reporter and record collection set) ->
the tool -> its result or a guided error -> log messages to the client -> the stderr line.
A query flows: tools.search_docs -> search.search_docs -> corpus.CorpusKeeper.current()
-> ranker.Index.search (cached) -> structuredContent + text. stdout is the protocol channel on stdio;
every diagnostic goes to stderr through `logging`. A CLI call flows: tools -> cli_bridge
operation -> cli_arguments checks -> imq_runner.ImqRunner runs imq -> word_outcome ->
BridgeResult -> tool result. A scaffold flows: tools -> scaffold_types.Method models ->
scaffold.scaffold_* -> dict (structuredContent) + render_*_markdown (text). A resource read
flows: ImqueueServer.read_resource -> resources.read_resource -> docs.read_doc (as get_doc). A
refresh that changes the listed URIs flows: corpus.CorpusKeeper watchers ->
app.ResourceListAnnouncer -> notifications/resources/list_changed (and the subscription bus).
A local tool call that concerns a package flows on: app.ImqueueServer.call_tool ->
project_tools.noted -> the roots (or the working directory) -> project.ProjectReader.find ->
package_facts.PackageFacts.known -> project.version_note -> versionNote in the result.
A page read flows: tools.get_doc -> docs.read_doc -> fetch.Fetcher.get, or, offline or when the
site does not answer, pages.SavedPages.store() (the snapshot's .pages sidecar) -> the same shape.
"""

from __future__ import annotations

from imqueue_mcp.build_index.sites import package_version as server_version

__all__ = ["server_version"]

"""mcp: the adapter between the MCP SDK and the domain packages. Thin and declarative.

app.py            create_server(config, hosted) -> MCPServer; ImqueueServer wraps every tool
                  call (guided errors for refused calls, progress, client log messages, the
                  version note, the per-call log line) and answers resources and completions
tools.py          one @tool record per tool: title, hints, where offered, description, handler
services.py       what the tool bodies share for the life of the server
results.py        text and structured results, the guided isError result, outputSchema shape
strict.py         closed, strict input schemas (unknown arguments refused by name, types exact)
reply_limits.py   each tool's documented most reply bytes, beyond four times its request
schemas.py        output schemas (pydantic models) of the tools that publish one
resources.py      the curated pages, both llms.txt and the catalogue as resources; templates
prompts.py        build_imqueue_service and choose_imqueue_packages
completions.py    completion/complete: page paths and package names, ranked for a prefix
project_tools.py  local only: the client's roots, inspect_project's body, the version note
observe.py        stderr logging at the user's level, the per-call JSON line, client records
instructions.py   the server instructions and the local-install guide
stdio.py          the stdio transport: bounded lines read as bytes, every request answered at EOF
http.py           the hosted Streamable HTTP app: method table, Host/Origin, CORS, limits
wire.py           one JSON-RPC message judged before the SDK (-32700 / -32600; a lone surrogate
                  in a tools/call argument: invalid_arguments), stdio and HTTP
host_origin.py    the Host and Origin headers read strictly (HOST[:PORT], numeric port)
hosting.py        the hosted app in production: probes, metrics and signals wired in; uvicorn
lifecycle.py      /healthz, /readyz (and the /metrics route) before the Host lock; the SIGTERM drain
metrics.py        /metrics through prometheus_client (multiprocess sums with --workers N)
connections.py    uvicorn's h11 protocol with header/body timeouts, a connection cap, keep-alive limits
"""

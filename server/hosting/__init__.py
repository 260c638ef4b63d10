"""hosting: how an MCPServer is served, apart from what it serves (the adapter, server/mcp).

stdio.py          the stdio transport: bounded lines read as bytes, every request answered at EOF
http.py           the hosted Streamable HTTP app: method table, Host/Origin, CORS, limits, landing page
wire.py           one JSON-RPC message judged before the SDK (-32700 / -32600; a lone surrogate
                  in a tools/call argument: invalid_arguments, or unknown_tool; elsewhere, or
                  nesting past the parser: -32602 / -32600 with the id), stdio and HTTP
host_origin.py    the Host and Origin headers read strictly (HOST[:PORT], numeric port)
invalid_params.py -32602 for refused request params and a request before initialize, naming the
                  param and what it takes (server middleware), stdio and HTTP
operations.py     the hosted app in production: probes, metrics and signals wired in; uvicorn workers
supervisor.py     N workers: uvicorn's supervisor, SIGHUP and SIGTERM passed on as they arrive
lifecycle.py      /healthz, /readyz (and the /metrics route) before the Host lock; the SIGTERM drain
metrics.py        /metrics through prometheus_client (multiprocess sums with --workers N)
connections.py    uvicorn's h11 protocol with header/body timeouts, a connection cap, keep-alive limits
redact.py         what a hosted client hears never names the operator's origins, snapshot or folders
surface.py        what a hosted client hears of the local server's tools and the unsaved pages

It never imports the adapter, nor the adapter it: server/serve.py hands one to the other.
"""

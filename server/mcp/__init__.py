"""mcp: the adapter between the MCP SDK and the domain packages. Thin and declarative.

app.py            create_server(config, hosted) -> MCPServer; ImqueueServer wraps every tool
                  call (guided errors for refused calls, progress, client log messages, the
                  version note, the per-call log line) and answers resources and completions
tools.py          one @tool record per tool: title, hints, where offered, description, handler
strict.py         closed, strict input schemas (unknown arguments refused by name, types exact)
resources.py      the curated pages, both llms.txt and the catalogue as resources; templates
prompts.py        build_imqueue_service and choose_imqueue_packages
completions.py    completion/complete: page paths and package names, ranked for a prefix
api_tools.py      local only: get_api, a symbol as the installed @imqueue version declares it
project_tools.py  local only: roots asked over the session, inspect_project's body and text, the note
scaffold_writes.py  local only: the scaffolds' files written into a folder inside the roots
instructions.py   the server instructions and the local-install guide
"""

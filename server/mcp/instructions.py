"""The words the server hands an agent: its instructions, and the local-install guide.

INSTRUCTIONS is read by the host at initialize, before any tool is chosen, so it states
the habits that prevent invented APIs, in under 150 words (a test counts them).
"""

from __future__ import annotations

INSTRUCTIONS = """\
This server is the authoritative source for @imqueue, a Node.js/TypeScript RPC-over-Redis \
framework. Before writing or changing @imqueue code, call search_docs and read the hits with \
get_doc (find_examples returns the docs' own code samples); never infer an @imqueue API from \
other frameworks or from memory. Call list_packages \
before adding an @imqueue dependency, and honour its pick rule for mutually exclusive pairs. \
package_status gives current versions and licences. In generated code, every remote method is \
@expose()d with JSDoc types (JSDoc is the runtime type source), and every class that crosses \
RPC carries @classType() and @property(). Never hand-write a client: generate it with \
`imq client generate` (generate_client, or scaffold_client for the command). Cite the \
https://imqueue.org URLs you relied on."""

# The hosted endpoint has no generate_client (it acts on the user's machine): the same habits,
# the command run by the user, the local server named through local_install_guide.
HOSTED_INSTRUCTIONS = INSTRUCTIONS.replace(
    "(generate_client, or scaffold_client for the command)",
    "(scaffold_client gives the command; local_install_guide sets up the local server that runs it)",
)

LOCAL_INSTALL_GUIDE = """\
# Run the @imqueue MCP server locally

This hosted endpoint serves eight read-only tools (docs search, code examples, page reads, package facts and
the two scaffolders). The local server adds the imq CLI bridge (cli_status, cli_install,
cli_help, create_service, generate_client, fleet, config, logs) and the project tools
(inspect_project, get_api, api_diff), which act on your machine and read your project, so they
can only run there; its scaffolders also write the files. It is one Python package,
`imqueue-mcp`, speaking MCP over stdio.

## Run it

imqueue-mcp is not on PyPI yet, so install it from its source (a clone or a source archive,
here in ./imqueue-mcp) or from a wheel built from it (`python3 -m build`), into a venv:

    python3 -m venv ~/.imqueue-mcp
    ~/.imqueue-mcp/bin/pip install ./imqueue-mcp     # or: ... pip install imqueue_mcp-*.whl
    ~/.imqueue-mcp/bin/imqueue-mcp                   # MCP over stdio; the clients below start it

Optional: `~/.imqueue-mcp/bin/imq-build-index --pages` stores a docs snapshot and its pages so
search and get_doc keep working offline (`imqueue-mcp --offline`). The imq CLI itself comes
from `npm install -g @imqueue/cli` (the cli_install tool runs that for you).

Once the package is published on PyPI, `uvx imqueue-mcp` (uv) or `pipx run imqueue-mcp`
will do the same in one step; until then those two commands find nothing.

The clients need the absolute path of the venv's command: below, /home/you/.imqueue-mcp/bin/imqueue-mcp.
Once installed, `imqueue-mcp --client-config` (with the flags you serve with, e.g. `--offline
--snapshot PATH`) prints these snippets for your machine, with those flags and absolute paths.
A snapshot or flag goes in each snippet's arguments: `"args": ["--offline", "--snapshot",
"/home/you/imq/snapshot.msgpack"]`, or after the command in `claude mcp add`.

## Claude Code

    claude mcp add imqueue -- /home/you/.imqueue-mcp/bin/imqueue-mcp

## Cursor (~/.cursor/mcp.json, or .cursor/mcp.json in a project)

    {
      "mcpServers": {
        "imqueue": { "command": "/home/you/.imqueue-mcp/bin/imqueue-mcp" }
      }
    }

## VS Code (.vscode/mcp.json)

    {
      "servers": {
        "imqueue": { "type": "stdio", "command": "/home/you/.imqueue-mcp/bin/imqueue-mcp" }
      }
    }

Restart the client after editing its configuration, then check that the imqueue server
lists {local_tool_count} tools.
"""

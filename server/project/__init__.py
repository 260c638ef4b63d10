"""project: the user's project, read from disk, with no MCP in it.

reader.py          @imqueue versions from package.json, the lockfile and node_modules; tsconfig.json
                   (comments, trailing commas, extends); nested copies in node_modules; the findings,
                   each with its doc URL, the TypeScript ones for the major the project runs
roots.py           where the project is: the client's roots (kept per connection), else the working
                   directory
report.py          inspect_project's report: its shape (the outputSchema) and how it is made
api_index.py       the installed packages' declarations (.d.ts, tree-sitter): every exported symbol
api_lookup.py      get_api's and api_diff's answers and their shapes: a symbol as installed, one
                   package's index
api_diff.py        two versions compared: installed vs installed, or installed vs the docs' API
                   records (docsource/api_pages.py); the statuses get_api and the search marks share
api_search.py      the installed-only symbols (not in the docs) ranked for a query: search's marks
api_text.py        get_api's, api_diff's and the marks' markdown, from their structured answers
version_notes.py   the one-line note on other tools' results when the project runs another major
"""

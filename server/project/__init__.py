"""project: the user's project, read from disk, with no MCP in it.

reader.py  @imqueue versions from package.json, the lockfile and node_modules; tsconfig.json
           (comments, trailing commas, extends); nested copies in node_modules; the findings,
           each with its doc URL, the TypeScript ones for the major the project runs
"""

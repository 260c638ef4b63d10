"""project: the user's project, read from disk, with no MCP in it.

reader.py  @imqueue versions from package.json, the lockfile and node_modules; tsconfig.json
           (comments, trailing commas, extends); the findings, each with its doc URL
"""

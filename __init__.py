"""imqueue_mcp: an MCP server that makes the @imqueue framework first-class in coding agents.

The repository root is this package (pyproject maps `imqueue_mcp` onto it), so the folders
the project was designed with are its subpackages, standing in three layers:

    ranker/       the search engine: Corpus, Index, the result shape. Pure; imports nothing of ours
    build_index/  site feeds -> Corpus -> snapshot file; `imq-build-index`, `imq-search`.
                  Imports the ranker
    server/       the MCP server: domain modules (docs, catalogue, scaffold, imq bridge) under a
                  thin MCP adapter; `imqueue-mcp`. Imports both

Data flows one way: feeds --build_index--> Corpus --ranker.Index--> results --server--> MCP.
tests/test_layers.py reads every import and fails on an edge against these layers.
"""

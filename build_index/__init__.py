"""build_index: the offline builder's commands, over the source layer (imqueue_mcp.docsource).

    cli.py         `imq-build-index`: the sites' feeds (live, an origin override or a mirror) ->
                   docsource.build -> the snapshot file (docsource.save_snapshot), with --pages
                   every page's markdown in the same file
    search_cli.py  `imq-search`: the ranker on the command line over a snapshot, or over a corpus
                   built in memory from --from

Reading feeds, section maps, snapshots and pages is docsource's, shared with the server, whose
live read path never imports this package (tests/test_layers.py).
"""

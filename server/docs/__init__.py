"""docs: the docs tools' behaviour, with no MCP in it.

corpus_keeper.py which corpus answers: live (hourly, read in the background), else the snapshot
                 (answering at once, labelled), else CorpusUnavailable with the fix; following a
                 builder's snapshot, each new generation swapped in whole
search_docs.py   search_docs: the ranker's answer in its one shape, plus advisories, sizes, passages
                 and the diagnosis of a pasted error code (diagnose.py)
diagnose.py      what a system, npm, tsc or rpc error code (ECONNREFUSED, TS1241, IMQ_RPC_NO_ACCESS)
                 means here, and where
passage_text.py  the part of a section that best answers a query (pure text logic: units, windows)
hit_passages.py  each hit's passage: its text (the snapshot's markdown, else prose), the budgets
answer_cache.py  the ranker's answers and search_docs' replies, kept for the corpus that gave them
sizes.py         the `tokens` of search hits: measured by a read, else the prose's estimate
example_finder.py find_examples: the corpus's code blocks ranked by a ranker.Index of their own
fetch.py         the host lock (parse_doc_url) and origin-mapped GETs (Fetcher)
site_paths.py    plain site paths, dot segments resolved (encoded ones too), the send check
read.py          get_doc: mirror resolution, #fragment sections, budgeted parts, outlines
budget.py        get_doc's token budget: where a part ends, nextCursor, outlines
saved_pages.py   the pages the snapshot carries (imq-build-index --pages), for get_doc offline
follow.py        a followed snapshot (a file, or --snapshot-url) read again only when it changed
package_facts.py status.json read live, else the corpus's stored copy labelled with its date
package_status.py list_packages and package_status over those facts
documented_api.py the docs' API records of a package with their pages' signatures: "latest" for
                 api_diff and get_api (kept per corpus generation)
suggest.py       what completes from where: page paths, API packages, package lists, ranked
"""

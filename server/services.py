"""What the tool bodies share for the life of the server, built once from the Config: every piece
of state a server keeps between calls lives here, none in a module."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from imqueue_mcp.server.config import Config
from imqueue_mcp.server.docs import example_finder as examples
from imqueue_mcp.server.docs import read as docs
from imqueue_mcp.server.docs.answer_cache import AnswerCache, ReplyCache
from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper
from imqueue_mcp.server.docs.documented_api import DocumentedApis
from imqueue_mcp.server.docs.fetch import Fetcher
from imqueue_mcp.server.docs.hit_passages import source_for
from imqueue_mcp.server.docs.package_facts import PackageFacts
from imqueue_mcp.server.docs.saved_pages import SavedPages
from imqueue_mcp.server.docs.sizes import DocSizes
from imqueue_mcp.server.project.api_search import InstalledOnlySearch
from imqueue_mcp.server.project.reader import ProjectReader
from imqueue_mcp.server.project.roots import RootsCache

WARM_PASSAGES_AFTER = 0.25  # seconds after the corpus loads (Services.preload)


@dataclass
class Services:
    config: Config
    fetcher: Fetcher
    corpus: CorpusKeeper
    sections: docs.SectionRanges
    saved: SavedPages  # the snapshot's pages, get_doc's answer offline
    examples: examples.ExampleFinder  # the corpus's code examples, ranked (find_examples)
    facts: PackageFacts  # status.json, live or the snapshot's copy
    documented: DocumentedApis  # the docs' API records and their pages' signatures (get_api, api_diff)
    sizes: DocSizes = field(default_factory=DocSizes)  # get_doc's answer sizes, for search hits
    answers: AnswerCache = field(default_factory=AnswerCache)  # the ranker's answers for the current index
    replies: ReplyCache = field(default_factory=ReplyCache)  # search_docs' replies for the current corpus
    project_reader: ProjectReader = field(
        default_factory=ProjectReader
    )  # projects read, kept until they change
    # the installed-only symbols of the projects searched, as ranker indexes (search_docs' marks)
    installed_only: InstalledOnlySearch = field(default_factory=InstalledOnlySearch)
    roots: RootsCache = field(default_factory=RootsCache)  # the client's roots, while its connection lasts

    @classmethod
    def from_config(cls, config: Config) -> Services:
        fetcher = Fetcher(dict(config.origins), offline=config.offline)
        keeper = CorpusKeeper(config)
        return cls(
            config,
            fetcher,
            keeper,
            docs.SectionRanges(fetcher),
            SavedPages(keeper),
            examples.ExampleFinder(keeper),
            PackageFacts(fetcher, keeper),
            DocumentedApis(keeper, fetcher),
        )

    async def preload(self) -> None:
        """Load the snapshot on disk, if any (CorpusKeeper.preload), and WARM_PASSAGES_AFTER later
        start preparing its pages for the passages (hit_passages.source_for): a first search a
        second after the client's start finds its pages ready (10-15 ms instead of 150-250 on
        this machine). The delay lets the client's initialize, sent at spawn, be answered first:
        the warm-up takes a turn of the event loop per page. Never raises, never reads the network."""
        await self.corpus.preload()
        asyncio.get_running_loop().call_later(WARM_PASSAGES_AFTER, self._warm_passages)

    def _warm_passages(self) -> None:
        corpus = self.corpus.answering()
        if corpus is not None:
            source_for(corpus)

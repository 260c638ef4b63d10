"""What the docs (the latest release) say about a package's API, to set beside what a project has
installed (server/project/api_diff.py compares the two; the adapter joins them).

"Latest" is the docs corpus this server answers from (live, else the snapshot), never a copy of
the framework on this machine:

    names, kinds, page URLs, summaries, deprecations   the corpus's API records (always at hand)
    signatures                                         each symbol's API page, `**Signature:**`:
                                                       from the snapshot's saved pages when it
                                                       carries them, else read from the site
                                                       through the configured origin (get_doc's way)
    the release                                        the pages' `Package: @imqueue/rpc 3.7.2` line

    DocumentedApis(keeper, fetcher).of(package, signatures_for)   a DocumentedApi

A package's records are gathered, and a page is read, once per corpus generation (its signature
kept, a failure not); at most MAX_PAGES per answer, CONCURRENT_READS at a time; once the site does
not answer, or offline with no saved page, the rest are left unread and `unread` says why, and the
site is not asked again for RETRY_SECONDS.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from imqueue_mcp.docsource.api_pages import DocumentedSymbol, documented_symbols, page_release, page_signature
from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper, LoadedCorpus
from imqueue_mcp.server.docs.fetch import Fetcher, FetchError, OfflineError, Unreachable
from imqueue_mcp.server.docs.read import mirror_of

MAX_PAGES = 400  # signature pages read for one answer (the largest package documents ~200 symbols)
CONCURRENT_READS = 8
# After the site did not answer, pages are not asked for again this long: search_docs marks its
# API hits on every call, and one fetch timeout a minute is the most a dead site may cost them.
RETRY_SECONDS = 60.0


@dataclass
class DocumentedApi:
    package: str
    release: str | None  # the version the API pages describe, when one was read
    symbols: dict[str, DocumentedSymbol]  # by name; `signature` set for those read
    corpus: dict[str, str]  # the corpus answering (source, fetchedAt, from): search_docs' label
    generation: str  # the corpus generation it is from (a content hash)
    unread: list[str] = field(default_factory=list)  # why some signatures are missing


@dataclass
class _Read:
    signature: str | None
    release: str | None


class DocumentedApis:
    """The docs' API records with their pages' signatures, kept per corpus generation."""

    def __init__(self, keeper: CorpusKeeper, fetcher: Fetcher):
        self.keeper = keeper
        self.fetcher = fetcher
        self._generation = ""
        self._pages: dict[str, _Read] = {}  # page URL -> what its page says
        self._records: dict[str, dict[str, DocumentedSymbol]] = {}  # package -> its records
        self._quiet_until = 0.0  # time.monotonic() before which the site is not asked again
        self._why_quiet = ""

    async def of(self, package: str, signatures_for: Iterable[str] = ()) -> DocumentedApi:
        """The docs' symbols of `package`, with the signatures of those named in `signatures_for`.
        CorpusUnavailable when no corpus can be loaded."""
        corpus = await self.keeper.current()
        if corpus.generation != self._generation:
            self._generation, self._pages, self._records = corpus.generation, {}, {}
        if package not in self._records:
            self._records[package] = documented_symbols(corpus.index.corpus.documents, package)
        symbols = dict(self._records[package])
        wanted = list(dict.fromkeys(n for n in signatures_for if n in symbols))
        api = DocumentedApi(package, None, symbols, corpus.describe(), corpus.generation)
        if len(wanted) > MAX_PAGES:
            api.unread.append(f"{len(wanted) - MAX_PAGES} signatures not read: at most {MAX_PAGES} pages")
            wanted = wanted[:MAX_PAGES]
        pages = [url for name in wanted for url in (symbols[name].url, *symbols[name].overloads)]
        await self._read_pages(corpus, pages, api.unread)
        for name in wanted:
            reads = [self._pages.get(url) for url in (symbols[name].url, *symbols[name].overloads)]
            if reads[0] is None:
                continue
            api.release = api.release or reads[0].release
            # an overloaded name is declared by all its pages, one signature a line, or not known
            signatures = [read.signature for read in reads if read is not None and read.signature]
            whole = len(signatures) == len(reads)
            signature = "\n".join(dict.fromkeys(signatures)) if whole else None
            symbols[name] = dataclasses.replace(symbols[name], signature=signature)
        return api

    async def _read_pages(self, corpus: LoadedCorpus, urls: list[str], unread: list[str]) -> None:
        missing = [url for url in urls if url not in self._pages]
        for url in list(missing):
            markdown = corpus.markdown.get(url)
            if markdown is not None:  # the snapshot's saved page: no network
                self._pages[url] = _Read(page_signature(markdown), page_release(markdown))
                missing.remove(url)
        if not missing:
            return
        if time.monotonic() < self._quiet_until:
            unread.append(f"{len(missing)} signatures not read: {self._why_quiet} (not asked again yet)")
            return
        gate = asyncio.Semaphore(CONCURRENT_READS)
        stop: list[str] = []

        async def read(url: str) -> None:
            async with gate:
                if stop:
                    return
                try:
                    await self._fetch(url)
                except (OfflineError, Unreachable) as error:
                    stop.append(str(error))
                except FetchError as error:
                    unread.append(str(error))

        await asyncio.gather(*(read(url) for url in missing))
        if stop:
            left = sum(1 for url in missing if url not in self._pages)
            unread.append(f"{left} signatures not read: {stop[0]}")
            self._quiet_until, self._why_quiet = time.monotonic() + RETRY_SECONDS, stop[0]

    async def _fetch(self, url: str) -> None:
        parts = urlsplit(url)
        fetched = await self.fetcher.get(parts.hostname or "imqueue.org", mirror_of(parts.path).file)
        if fetched.status == 200:
            markdown = fetched.body.decode("utf-8", errors="replace")
            self._pages[url] = _Read(page_signature(markdown), page_release(markdown))
        elif fetched.status == 404:
            self._pages[url] = _Read(None, None)
        else:
            raise FetchError(f"{url}: the site answered HTTP {fetched.status}")

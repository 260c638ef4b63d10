"""Package facts (imqueue.org/status.json): live when the site answers, else the snapshot's copy.

    PackageFacts.read()    status.json now; under --offline, or when imqueue.org does not
                           answer, the copy the corpus was built with (the snapshot's, or the
                           last live refresh's), labelled with its date: a StoredFacts
    PackageFacts.known()   the latest facts seen, for the version notes (project_notes.py):
                           never raises, reads at most once per refresh interval
    StatusUnavailable      neither is there; the message says what to do, offline or not

A stored copy is labelled exactly as search_docs labels its corpus (source, fetchedAt, from,
note), so an agent can tell a version read now from one read when the snapshot was built.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from imqueue_mcp.server.docs.corpus_keeper import CorpusKeeper, CorpusUnavailable
from imqueue_mcp.server.docs.fetch import Fetcher, FetchError

logger = logging.getLogger(__name__)

STATUS_HOST, STATUS_PATH = "imqueue.org", "/status.json"


class StatusUnavailable(Exception):
    """status.json could not be read; the message says why and where else to look."""


async def read_status(fetcher: Fetcher) -> dict[str, Any]:
    try:
        fetched = await fetcher.get(STATUS_HOST, STATUS_PATH)
    except FetchError as error:
        raise StatusUnavailable(str(error)) from None
    if fetched.status != 200:
        raise StatusUnavailable(f"{fetched.url}: the site answered HTTP {fetched.status}")
    try:
        status = json.loads(fetched.body)
    except ValueError:
        raise StatusUnavailable(f"{fetched.url}: the body is not JSON") from None
    if not isinstance(status, dict):
        raise StatusUnavailable(f"{fetched.url}: expected a JSON object")
    return status


STATUS_URL = f"https://{STATUS_HOST}{STATUS_PATH}"
STATUS_PAGE = "https://imqueue.org/status/"


@dataclass(frozen=True)
class Facts:
    status: dict[str, Any]
    stored: dict[str, str] | None  # None when read live just now; else where the copy came from

    @property
    def generated(self) -> str:
        return str(self.status.get("generated") or "")


class FactsUnavailable(StatusUnavailable):
    """No facts, live or stored; `next_step` is what helps in this situation (offline or not)."""

    def __init__(self, message: str, next_step: str):
        super().__init__(message)
        self.next_step = next_step


class PackageFacts:
    def __init__(self, fetcher: Fetcher, keeper: CorpusKeeper):
        self.fetcher = fetcher
        self.keeper = keeper
        self._latest: Facts | None = None
        self._latest_at = float("-inf")

    async def read(self) -> Facts:
        """status.json live, else the stored copy. Raises StatusUnavailable with the next step."""
        try:
            facts = Facts(await read_status(self.fetcher), None)
        except StatusUnavailable as error:
            facts = await self._stored(self._why(error))
        self._remember(facts)
        return facts

    async def known(self) -> Facts | None:
        """The latest facts any call saw, re-read at most once per refresh interval; None if none."""
        if time.monotonic() - self._latest_at < self.keeper.refresh_seconds:
            return self._latest
        try:
            return await self.read()
        except StatusUnavailable as error:
            logger.info("no package facts for version notes: %s", error)
            self._latest_at = time.monotonic()
            return self._latest

    def _remember(self, facts: Facts) -> None:
        self._latest, self._latest_at = facts, time.monotonic()

    def _why(self, error: StatusUnavailable) -> str:
        if self.fetcher.offline:
            return "the server runs with --offline"
        return f"{STATUS_URL} could not be read ({_plain(str(error))})"

    async def _stored(self, why: str) -> Facts:
        try:
            corpus = await self.keeper.current()
        except CorpusUnavailable:
            raise self._no_copy(why, "no docs snapshot could be loaded") from None
        if corpus.status is None:
            where = (
                f"{corpus.location} carries no copy of status.json"  # hosted: "the server's snapshot ..."
                if corpus.source == "snapshot"
                else "the corpus was built without status.json"
            )
            raise self._no_copy(why, where)
        label = corpus.describe()
        label["note"] = why
        return Facts(corpus.status, label)

    def _no_copy(self, why: str, where: str) -> FactsUnavailable:
        """Why there are no facts at all, and the step that helps in this situation."""
        snapshot = self.keeper.snapshot_path()
        if self.fetcher.offline:
            step = (
                f"Package facts are stored in the docs snapshot: while online, run `imq-build-index` "
                f"(it writes {snapshot}; or `imq-build-index --out PATH` and start the server with "
                "--snapshot PATH), then restart the server with --offline. Meanwhile list_packages "
                "lists the packages without versions."
            )
        else:
            step = (
                f"Try again when {STATUS_HOST} answers, or read {STATUS_PAGE} yourself. Meanwhile "
                "list_packages lists the packages without versions."
            )
        return FactsUnavailable(f"Package facts are unavailable: {why}, and {where}.", step)


def _plain(message: str) -> str:
    """A lower-level message folded into a sentence: no trailing period, no next step of its own."""
    message = message.removeprefix(f"{STATUS_URL}: ")
    return message.split("; ")[0].split(". ")[0].rstrip(". ")


def stored_line(stored: dict[str, str]) -> str:
    """The label a stored copy carries in a tool's text, in the words search_docs uses."""
    where = "the snapshot" if stored["source"] == "snapshot" else "the docs corpus read"
    return (
        f"Package facts from {where} of {stored['fetchedAt']} ({stored['from']}), not read live: "
        f"{stored['note']}."
    )

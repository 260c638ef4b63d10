"""Progress of long operations, sent to the client that asked for it.

A tool call installs its reporter for the duration of the call (app.ImqueueServer.call_tool:
the SDK's `Context.report_progress`); long operations below it (imq_runner running imq or
npm for cli_install, create_service with apply, generate_client, fleet start/restart; the
corpus load a search_docs call waits for) wrap their wait in `ticking`, which reports
"started", a tick every TICK_SECONDS while it runs, and "finished". Progress values are
elapsed seconds, rising strictly; total is the operation's time limit when it has one.

Nothing is sent when there is no reporter (a unit test, a call outside MCP) or when the client
sent no progressToken (the SDK's report_progress is a no-op then). A notification that cannot
be delivered never fails the operation it describes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar

logger = logging.getLogger(__name__)

TICK_SECONDS = 1.0

Reporter = Callable[[float, float | None, str | None], Awaitable[None]]

_reporter: ContextVar[Reporter | None] = ContextVar("imqueue_mcp_progress", default=None)


@contextlib.contextmanager
def reporting_to(reporter: Reporter | None) -> Iterator[None]:
    """Send the progress of operations run inside this block to `reporter`."""
    token = _reporter.set(reporter)
    try:
        yield
    finally:
        _reporter.reset(token)


async def report(progress: float, total: float | None = None, message: str | None = None) -> None:
    reporter = _reporter.get()
    if reporter is None:
        return
    try:
        await reporter(progress, total, message)
    except Exception as error:  # the client went away, the stream closed: the work goes on
        logger.debug("progress notification not sent: %s", error)


@contextlib.asynccontextmanager
async def ticking(what: str, limit_seconds: float | None = None) -> AsyncIterator[None]:
    """Report `what` started, running (every TICK_SECONDS) and finished, around the block."""
    if _reporter.get() is None:
        yield
        return
    start = time.monotonic()
    last = 0.0

    def elapsed() -> float:
        nonlocal last
        last = max(round(time.monotonic() - start, 3), last + 0.001)
        return last

    await report(0.0, limit_seconds, f"{what}: started")

    async def tick() -> None:
        while True:
            await asyncio.sleep(TICK_SECONDS)
            seconds = elapsed()
            limit = f" of at most {limit_seconds:g} s" if limit_seconds else ""
            await report(seconds, limit_seconds, f"{what}: running, {seconds:.0f} s{limit}")

    ticker = asyncio.get_running_loop().create_task(tick())
    try:
        yield
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
    done = max(elapsed(), limit_seconds or 0.0)
    await report(done, limit_seconds or done, f"{what}: finished")

"""Where the user's project is, on the local server: the folders to look in, and the client's
roots kept while its connection lasts.

    locate()                 the folders to look in, and how they were chosen: the client's roots
                             when this call's client offers them, else the working directory
    asking(source)           for the life of one tool call, where the client's roots come from
    RootsCache               one connection's roots, kept while the client announces changes
    local_path(uri)          the folder a file:// root names, or None

How the roots are asked (roots/list over the MCP session) is the adapter's
(server/mcp/project_tools.py); this module sees only an async callable that lists them.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from pathlib import Path
from urllib.parse import unquote, urlsplit

logger = logging.getLogger(__name__)

RootsSource = Callable[[], Awaitable[list[Path]]]
_roots: ContextVar[RootsSource | None] = ContextVar("imqueue_roots", default=None)


@contextlib.contextmanager
def asking(source: RootsSource | None) -> Iterator[None]:
    """During one tool call, `source` lists the client's roots (None: the client offers none)."""
    token = _roots.set(source)
    try:
        yield
    finally:
        _roots.reset(token)


class RootsCache:
    """The client's roots, kept while its connection lasts if it announces changes.

    A client that declares roots.listChanged sends notifications/roots/list_changed when they
    change (`forget`), so asking once per connection is enough; one that does not is asked on
    every call. `owner` is one object per connection (the stdio server has one), so a cache never
    answers for another connection."""

    def __init__(self) -> None:
        self._owner: object = None
        self._folders: list[Path] | None = None

    async def folders(self, owner: object, announces: bool, ask: RootsSource) -> list[Path]:
        if announces and owner is not None and owner is self._owner and self._folders is not None:
            return self._folders
        folders = await ask()
        if announces and owner is not None:
            self._owner, self._folders = owner, folders
        return folders

    def forget(self) -> None:
        self._folders = None


def local_path(uri: str) -> Path | None:
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
        return None
    return Path(unquote(parts.path))


async def locate() -> tuple[list[Path], str]:
    """The folders to look for the project in, and how they were chosen ('roots' or 'cwd')."""
    source = _roots.get()
    if source is not None:
        try:
            folders = await source()
        except Exception as error:  # a client that offers roots but fails to list them
            logger.info("roots/list failed (%s); looking in the working directory", error)
        else:
            if folders:
                return folders, "roots"
    return [Path(os.getcwd())], "cwd"

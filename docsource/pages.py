"""The pages sidecar (`imq-build-index --pages`): every page's markdown, beside the snapshot.

The snapshot holds the search corpus only; with this file next to it, get_doc can answer
offline too. Same envelope as the snapshot (msgpack `{header, body}`, written atomically,
checked on load):

header: format, fetched_at (the snapshot's own: a sidecar whose fetched_at differs belongs
        to another build and is not used), origins, count, body_sha256.
body:   canonical page URL without fragment ("https://imqueue.org/intro/") -> the markdown
        bytes the page's /index.md mirror serves; plus both sites' /llms.txt. Sorted by URL.

Which pages: every distinct page path (fragment stripped) of the corpus's documents, read
at `<path>index.md` through the source the feeds came from. A page that is not there (HTTP
404, no file in a mirror: normal for an imqueue.com page without a mirror) is skipped and
counted; any other failure fails the build.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgpack  # type: ignore[import-untyped]

from imqueue_mcp.ranker.corpus import SITES

from .files import SnapshotError, unwrap, wrap, write_atomically
from .sources import NotFound, Source

if TYPE_CHECKING:
    from imqueue_mcp.ranker.corpus import Corpus

PAGES_FORMAT = 1
# Pages read at once: a live build reads every API reference page (about 1,200) for the symbols'
# doc comments, which one at a time would take minutes over a real network.
READERS = 8
HOST_OF_SITE = {site: origin.removeprefix("https://") for site, origin in SITES.items()}


@dataclass
class Pages:
    header: dict[str, Any]  # fetched_at, origins, count (format and body_sha256 once written)
    body: dict[str, bytes]  # canonical URL -> markdown bytes, sorted by URL
    missing: list[str] = field(default_factory=list)  # canonical URLs that were not there (404)

    @property
    def fetched_at(self) -> str:
        return str(self.header.get("fetched_at", ""))

    def markdown(self) -> dict[str, str]:
        """The pages as text: canonical page URL -> markdown (the llms.txt files left out)."""
        return {
            url: data.decode("utf-8", errors="replace")
            for url, data in self.body.items()
            if not url.endswith("/llms.txt")
        }


def pages_path(snapshot_path: Path | str) -> Path:
    """Where a snapshot's sidecar lives: the snapshot path + ".pages"."""
    return Path(f"{snapshot_path}.pages")


def page_paths(corpus: Corpus) -> list[tuple[str, str]]:
    """(host, page path) for every distinct page of the corpus, sorted; "/x" is read as "/x/"."""
    pages = set()
    for doc in corpus.documents:
        path = doc.path.split("#", 1)[0] or "/"
        pages.add((HOST_OF_SITE[doc.site], path if path.endswith("/") else path + "/"))
    return sorted(pages)


def api_page_paths(corpus: Corpus) -> list[tuple[str, str]]:
    """(host, page path) of every API symbol's reference page, sorted."""
    symbols = (doc for doc in corpus.documents if doc.tier == "symbol")
    return sorted({(HOST_OF_SITE[doc.site], doc.path.split("#", 1)[0]) for doc in symbols})


def read_markdown(
    source: Source,
    targets: Iterable[tuple[str, str]],
    progress: Callable[[int, int, str], None] | None = None,
) -> tuple[dict[str, bytes], list[str]]:
    """`<path>index.md` of each (host, page path), READERS at a time: the bodies by canonical page
    URL, and the URLs that are not there (404). Any other failure fails the read, as a feed's does."""
    wanted = list(targets)

    def read(target: tuple[str, str]) -> bytes | None:
        host, page = target
        try:
            return source.read(host, page + "index.md")
        except NotFound:
            return None

    body: dict[str, bytes] = {}
    missing: list[str] = []
    with ThreadPoolExecutor(READERS) as pool:
        for step, ((host, page), data) in enumerate(zip(wanted, pool.map(read, wanted), strict=True), 1):
            if progress:
                progress(step, len(wanted), f"{host}{page}index.md")
            url = f"https://{host}{page}"
            if data is None:
                missing.append(url)
            else:
                body[url] = data
    return body, missing


def read_pages(
    source: Source,
    corpus: Corpus,
    header: dict[str, Any],
    llms: dict[str, bytes],
    progress: Callable[[int, int, str], None] | None = None,
    known: dict[str, bytes] | None = None,
) -> Pages:
    """Every page of `corpus` read from `source`, plus each host's llms.txt (`llms`, host -> bytes);
    `header` is the snapshot's, whose date and origins the sidecar carries. Pages in `known`
    (canonical URL -> markdown, read earlier in the same build) are not read again."""
    known = known or {}
    targets = [(host, page) for host, page in page_paths(corpus) if f"https://{host}{page}" not in known]
    body, missing = read_markdown(source, targets, progress)
    body.update(known)
    body.update({f"https://{host}/llms.txt": data for host, data in llms.items()})
    sidecar = {
        "fetched_at": header["fetched_at"],
        "origins": header.get("origins", {}),
        "count": len(body),
    }
    return Pages(header=sidecar, body=dict(sorted(body.items())), missing=missing)


def encode_pages(pages: Pages) -> bytes:
    return wrap(pages.header, bytes(msgpack.packb(pages.body, use_bin_type=True)), PAGES_FORMAT)


def save_pages(pages: Pages, path: Path) -> int:
    """Atomically, like save_snapshot: a crash leaves the old sidecar whole."""
    return write_atomically(Path(path), encode_pages(pages))


def load_pages(path: Path) -> Pages:
    """The checked sidecar; SnapshotError naming the file and the fix otherwise."""
    path = Path(path)
    fix = "rebuild it with `imq-build-index --pages`"
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise SnapshotError(f"{path}: cannot read ({error.strerror}); {fix}") from None
    return decode_pages(path, raw, fix)


def decode_pages(path: Path | str, raw: bytes, fix: str) -> Pages:
    """A pages envelope (a file's bytes, or the part a snapshot carries), checked."""
    header, body, _ = unwrap(path, raw, PAGES_FORMAT, "pages file", fix)
    try:
        pages = msgpack.unpackb(body, raw=False)
    except ValueError:  # msgpack's own errors are ValueErrors
        pages = None
    if not isinstance(pages, dict) or not all(isinstance(v, bytes) for v in pages.values()):
        raise SnapshotError(f"{path}: not an imqueue-mcp pages file (unexpected body); {fix}")
    return Pages(header=header, body=pages)

"""Where the Redis broker is, whether it answers, and generating a client through it.

`imq client generate` (5.2.2) connects to localhost:6379 and has no option for another broker.
Services configured the docs' way read theirs from IMQ_REDIS, so generate_client takes the
address too and, when it is not imq's, runs what imq runs (`IMQClient.create(name, {path,
compile: false})`) itself, through the project's own @imqueue/rpc, with the broker's host and
port added. No MCP imports; bridge.generate_client calls these.

    BrokerAddress, broker_address   "host:port" (the argument, else IMQ_REDIS, else localhost:6379)
    probe_broker                    None when a Redis answers PING there, else why not
    queue_readers                   the queues a process reads there (its readers' connection names)
    find_rpc_project                the nearest folder whose node_modules has @imqueue/rpc
    generator_argv                  node running GENERATOR_SCRIPT in that project

So a failure can say which of two things is wrong: no broker at the address (nothing listens,
or it is not Redis), or the broker is up and no service of that name answered describe.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path

from imqueue_mcp.server.user_files import MANIFEST_BYTES, read_text_capped

__all__ = [
    "GENERATOR_SCRIPT",
    "IMQ_BROKER",
    "IMQ_REDIS_ENV",
    "NO_ANSWER_EXIT",
    "NO_RPC_EXIT",
    "BrokerAddress",
    "broker_address",
    "find_rpc_project",
    "generator_argv",
    "installed_rpc_version",
    "probe_broker",
    "queue_readers",
]

IMQ_REDIS_ENV = "IMQ_REDIS"
PROBE_TIMEOUT_SECONDS = 3.0
NO_RPC_EXIT = 3  # the generator script's exit codes, read by the bridge
NO_ANSWER_EXIT = 4

_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]")
# ASCII digits: str.isdigit also takes '٦٣٧٩' and '²', which Node (the services reading
# IMQ_REDIS themselves) reads as no port.
_PORT = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class BrokerAddress:
    host: str
    port: int
    origin: str  # "argument", "IMQ_REDIS" or "default": where the address came from

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def is_imq_default(self) -> bool:
        """The one broker `imq client generate` reaches: Redis on this machine's port 6379."""
        return self.port == 6379 and self.host.lower() in ("localhost", "127.0.0.1", "[::1]", "::1")


IMQ_BROKER = BrokerAddress("localhost", 6379, "default")


def broker_address(given: str | None) -> BrokerAddress:
    """The broker to reach: `given`, else IMQ_REDIS's first host:port, else localhost:6379.

    Raises ValueError naming the value and the form expected."""
    if given is not None:
        return _parse(given, "argument")
    configured = os.environ.get(IMQ_REDIS_ENV, "").strip()
    if configured:
        return _parse(configured.split(",", 1)[0], IMQ_REDIS_ENV)
    return IMQ_BROKER


def _parse(text: str, origin: str) -> BrokerAddress:
    host, colon, port = text.strip().rpartition(":")
    where = "redis" if origin == "argument" else f"the environment variable {IMQ_REDIS_ENV}"
    if not colon or not _HOST.fullmatch(host) or not _PORT.fullmatch(port) or not 0 < int(port) < 65536:
        raise ValueError(
            f"{where} is {text!r}, which is not a broker address: use host:port, e.g. "
            "'localhost:6379' or '10.0.0.5:6380', as the services' IMQ_REDIS takes it."
        )
    return BrokerAddress(host, int(port), origin)


async def probe_broker(address: BrokerAddress, timeout: float = PROBE_TIMEOUT_SECONDS) -> str | None:
    """None when a Redis answers at `address` (PONG, or an auth error: it is there), else why not."""
    host = address.host.strip("[]")
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, address.port), timeout)
    except TimeoutError:
        return f"nothing answered within {timeout:g} s"
    except ConnectionRefusedError:
        return "nothing listens there (connection refused)"
    except OSError as error:
        return (error.strerror or str(error)).lower()
    try:
        writer.write(b"PING\r\n")
        await writer.drain()
        reply = await asyncio.wait_for(reader.readline(), timeout)
    except (TimeoutError, OSError):
        reply = b""
    finally:
        await _closed(writer)
    if reply.startswith((b"+PONG", b"-NOAUTH", b"-ERR", b"-WRONGPASS")):
        return None
    return "something listens there, but it did not answer PING as Redis does"


READERS_BYTES = 4 * 1024 * 1024  # of a CLIENT LIST reply: far more than a fleet's connections
# @imqueue/core names each connection <prefix>:<queue>:<channel>:pid:<pid>:host:<host>
_READER = re.compile(rb"\bname=[^:\s]*:([^:\s]+):reader:pid:")


async def queue_readers(
    address: BrokerAddress, timeout: float = PROBE_TIMEOUT_SECONDS
) -> frozenset[str] | None:
    """The queues some process reads on the broker, from the names @imqueue/core gives its
    connections (CLIENT LIST): a running service's class name among them. None when that cannot be
    told (no answer, CLIENT refused or renamed, a reply over READERS_BYTES)."""
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(address.host.strip("[]"), address.port), timeout
        )
    except (TimeoutError, OSError):
        return None
    try:
        writer.write(b"CLIENT LIST\r\n")
        await writer.drain()
        header = await asyncio.wait_for(reader.readline(), timeout)
        if not header.startswith(b"$") or not header[1:].strip().isdigit():
            return None
        size = int(header[1:])
        if size > READERS_BYTES:
            return None
        body = await asyncio.wait_for(reader.readexactly(size), timeout)
    except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
        return None
    finally:
        await _closed(writer)
    return frozenset(name.decode("utf-8", "replace") for name in _READER.findall(body))


async def _closed(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass


def find_rpc_project(start: Path) -> Path | None:
    """`start` or its nearest parent whose node_modules holds @imqueue/rpc."""
    for folder in (start, *start.parents):
        if (folder / "node_modules" / "@imqueue" / "rpc" / "package.json").is_file():
            return folder
    return None


def installed_rpc_version(project: Path) -> str | None:
    manifest = project / "node_modules" / "@imqueue" / "rpc" / "package.json"
    try:
        found = re.search(r'"version"\s*:\s*"([^"]+)"', read_text_capped(manifest, MANIFEST_BYTES))
    except OSError:
        return None
    return found.group(1) if found else None


# What `imq client generate` does (IMQClient.create with compile: false writes <path>/<name>.ts
# and .js), with the broker's host and port. It runs as an ES module from the project folder,
# so `import('@imqueue/rpc')` is the project's own copy: 3.x is ESM, 1.x CommonJS (its exports
# then arrive as the default). The framework's connection chatter is kept off stdout.
GENERATOR_SCRIPT = """\
const [name, path, host, port, seconds] = process.argv.slice(1);
let rpc;
try {
    rpc = await import('@imqueue/rpc');
} catch (error) {
    console.error(`@imqueue/rpc could not be loaded from ${process.cwd()}: ${error.message}`);
    process.exit(NO_RPC_EXIT);
}
const IMQClient = rpc.IMQClient ?? rpc.default?.IMQClient;
const quiet = { ...console, log() {}, info() {}, warn() {} };
const timeout = Number(seconds) * 1000;
const timer = setTimeout(() => {
    console.error(`${name} did not answer describe within ${seconds} s`);
    process.exit(NO_ANSWER_EXIT);
}, timeout);
try {
    await IMQClient.create(name, { path, compile: false, host, port: Number(port), timeout, logger: quiet });
    clearTimeout(timer);
    console.log(`Successfully created. Path: ${path}/${name}.ts`);
    process.exit(0);
} catch (error) {
    console.error(String((error && error.stack) || error));
    process.exit(/timed-out|did not respond/i.test(String(error)) ? NO_ANSWER_EXIT : 1);
}
""".replace("NO_RPC_EXIT", str(NO_RPC_EXIT)).replace("NO_ANSWER_EXIT", str(NO_ANSWER_EXIT))


def generator_argv(
    node: str, service: str, directory: Path, address: BrokerAddress, seconds: float
) -> list[str]:
    return [
        node,
        "--input-type=module",
        "-e",
        GENERATOR_SCRIPT,
        service,
        str(directory),
        address.host.strip("[]"),
        str(address.port),
        f"{seconds:g}",
    ]

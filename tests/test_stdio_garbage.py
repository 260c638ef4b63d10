"""The stdio server fed 1,000 malformed and hostile lines, each answered as JSON-RPC 2.0 and MCP say.

Raw bytes on the real server's stdin, no SDK client in between. Each hostile line is followed
by a ping with its own id, so the answers can be told apart: an error without an id (parse
error, invalid request) must arrive before that line's ping answer; an answer with an id is
matched by the id, which is unique per line. Notifications and the client's own responses
must get no answer at all. Afterwards the server still answers a valid request, and every
byte it wrote to stdout was a JSON-RPC frame.
"""

from __future__ import annotations

import json
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from test_server_transport import RawStdio, initialize

from imqueue_mcp.server.hosting.stdio import DRAIN_SECONDS, MAX_LINE_BYTES
from imqueue_mcp.server.hosting.wire import MAX_CONTAINERS

from conftest import IMQ_STANDIN_DIR, LOCAL_TOOLS, free_port, origin_args, server_environment

LINES = 1000
HUGE = 10 * 1024 * 1024
UNDER_LIMIT = MAX_LINE_BYTES - 1000
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


@dataclass
class Hostile:
    line: bytes
    answer: str | None  # None: no answer; "error": an error with `code`; "result": a result
    code: int | None = None
    id: Any = None  # the id the answer carries (None: the JSON null id)


def request(request_id: Any, method: str, params: Any = None, **extra: Any) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method, **extra}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def valid_id(index: int, rng: random.Random) -> Any:
    """An id of each legal type and shape, unique to its line."""
    return rng.choice(
        [
            index,
            -index - 1,
            10**25 + index,
            f"line-{index}",
            f"ü\u202e{index}",
            f"{index}.5",
            f" {index} ",
        ]
    )


def hostile_line(index: int, rng: random.Random) -> Hostile:
    """Line `index` of the corpus: one of fourteen kinds, drawn by a seeded generator."""
    rid = valid_id(index, rng)
    kind = rng.randrange(14)
    if kind == 0:  # text that is not JSON at all
        junk = "".join(rng.choice("@#abc{}[]:,\"' \t\\\x01\x7f") for _ in range(rng.randrange(1, 80)))
        return Hostile(("@" + junk).encode(), "error", PARSE_ERROR)
    if kind == 1:  # truncated JSON
        whole = request(rid, "tools/list")
        return Hostile(whole[: rng.randrange(1, len(whole) - 1)], "error", PARSE_ERROR)
    if kind == 2:  # bytes that are not UTF-8, or a NUL
        return Hostile(
            rng.choice([b"\xff\xfe\xfd", b"\x00", b"\xc3\x28", b'{"id": \xff}']), "error", PARSE_ERROR
        )
    if kind == 3:  # nested deeper than any parser should follow
        depth = rng.randrange(5_000, 50_000)
        # past MAX_CONTAINERS arrays it is refused unparsed, as the batch an array is (wire.py)
        return Hostile(
            b"[" * depth + b"]" * depth, "error", INVALID_REQUEST if depth > MAX_CONTAINERS else PARSE_ERROR
        )
    if kind == 4:  # JSON, but not an object
        value = rng.choice(
            [
                "1",
                '"ping"',
                "null",
                "true",
                "[]",
                "[1, 2]",
                "-0.5e9",
                json.dumps([json.loads(request(rid, "ping"))]),
            ]
        )
        return Hostile(value.encode(), "error", INVALID_REQUEST)
    if kind == 5:  # an object of the wrong shape, with a readable id
        shape = rng.choice(
            [
                {"jsonrpc": "1.0", "id": rid, "method": "ping"},
                {"id": rid, "method": "ping"},
                {"jsonrpc": "2.0", "id": rid},
                {"jsonrpc": "2.0", "id": rid, "method": 42},
                {"jsonrpc": "2.0", "id": rid, "method": None},
                {"jsonrpc": "2.0", "id": rid, "method": "ping", "params": rng.choice([5, "x", [1], True])},
                {"jsonrpc": 2, "id": rid, "method": "ping"},
            ]
        )
        return Hostile(json.dumps(shape).encode(), "error", INVALID_REQUEST, rid)
    if kind == 6:  # an object of the wrong shape, without an id
        shape = rng.choice([{}, {"jsonrpc": "2.0"}, {"jsonrpc": "2.0", "method": 7}, {"method": "ping"}])
        return Hostile(json.dumps(shape).encode(), "error", INVALID_REQUEST)
    if kind == 7:  # a request whose id is of a type MCP does not allow
        bad = rng.choice([None, True, False, 1.5, -0.25, {}, {"id": 1}, [], [index]])
        return Hostile(request(bad, "ping"), "error", INVALID_REQUEST)
    if kind == 8:  # an unknown method
        method = rng.choice(["nope", "tools/destroy", "", "../../etc/passwd", "x" * 5000, "ρing", "PING"])
        return Hostile(request(rid, method), "error", METHOD_NOT_FOUND, rid)
    if kind == 9:  # notifications, known or not: never answered
        method = rng.choice(
            ["notifications/nope", "nope", "notifications/initialized", "notifications/cancelled"]
        )
        params = rng.choice([None, {}, {"requestId": "zzz"}, {"x": "\x00" * 10}])
        message = {"jsonrpc": "2.0", "method": method, **({"params": params} if params is not None else {})}
        return Hostile(json.dumps(message).encode(), None)
    if kind == 10:  # responses the client never had a request for: never answered
        strays: list[dict[str, Any]] = [{"result": {}}, {"error": {"code": -1, "message": "no"}}]
        answer = rng.choice(strays)
        return Hostile(json.dumps({"jsonrpc": "2.0", "id": f"stray-{index}", **answer}).encode(), None)
    if kind == 11:  # a known method with params it cannot take
        wrong: list[tuple[str, dict[str, Any]]] = [
            ("tools/call", {}),
            ("tools/call", {"name": 5}),
            ("tools/call", {"name": "search_docs", "arguments": []}),
            ("tools/list", {"cursor": 5}),
            ("resources/read", {}),
            ("prompts/get", {"name": "no-such-prompt"}),
            ("logging/setLevel", {"level": "loudest"}),
        ]
        method, params = rng.choice(wrong)
        return Hostile(request(rid, method, params), "error", INVALID_PARAMS, rid)
    if kind == 12:  # a tool the server does not have: an isError result, as MCP says
        return Hostile(request(rid, "tools/call", {"name": "rm_rf", "arguments": {}}), "result", None, rid)
    return Hostile(request(rid, "ping", extra_member="ignored"), "result", None, rid)  # legal, odd ids


def corpus() -> list[Hostile]:
    rng = random.Random(6)
    lines = [hostile_line(index, rng) for index in range(LINES - 4)]
    lines.append(Hostile(b"@" + b"x" * HUGE, "error", PARSE_ERROR))  # a 10 MB line of junk
    # Lines over the 4 MiB limit are dropped unread, whatever they hold: a parse error, id null.
    huge_query = {"name": "search_docs", "arguments": {"query": "q" * HUGE}}
    lines.append(Hostile(request("huge-call", "tools/call", huge_query), "error", PARSE_ERROR))
    lines.append(Hostile(request("huge-id-" + "i" * HUGE, "nope"), "error", PARSE_ERROR))
    # Just under the limit, a line is read as any other.
    big_id = "big-id-" + "i" * (UNDER_LIMIT - 100)
    lines.append(Hostile(request(big_id, "nope"), "error", METHOD_NOT_FOUND, big_id))
    return lines


def send_bytes(raw: RawStdio, line: bytes) -> None:
    assert raw.process.stdin is not None
    raw.process.stdin.write(line + b"\n")
    raw.process.stdin.flush()


def test_a_thousand_hostile_lines_are_each_answered_as_the_protocol_says(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    raw = RawStdio(
        origin_args({"imqueue.org": dead, "imqueue.com": dead}), server_environment(tmp_path), tmp_path
    )
    hostile = corpus()
    assert len(hostile) == LINES
    by_id: dict[Any, dict[str, Any]] = {}
    try:
        initialize(raw)
        for index, item in enumerate(hostile):
            send_bytes(raw, item.line)
            raw.send({"jsonrpc": "2.0", "id": f"sync-{index}", "method": "ping"})
            unnamed = []
            while True:
                frame = raw.next_frame()
                if frame.get("id") == f"sync-{index}":
                    assert frame.get("result") == {}, frame
                    break
                if frame.get("id") is None:
                    unnamed.append(frame)
                else:
                    assert frame["id"] not in by_id, f"two answers for id {frame['id']!r:.80}"
                    by_id[frame["id"]] = frame
            shown = item.line[:120]
            if item.answer == "error" and item.id is None:
                assert [frame["error"]["code"] for frame in unnamed] == [item.code], (shown, unnamed)
                assert all(frame["error"]["message"] for frame in unnamed)
            else:
                assert unnamed == [], (shown, unnamed)
        tools = raw.request(LINES + 1, "tools/list")["result"]["tools"]
        assert len(tools) == len(LOCAL_TOOLS)  # still serving, fully
    finally:
        raw.close()

    expected = {item.id: item for item in hostile if item.answer is not None and item.id is not None}
    assert set(by_id) == set(expected), "answers to notifications or responses, or answers missing"
    for request_id, item in expected.items():
        frame = by_id[request_id]
        if item.answer == "result":
            assert "result" in frame, (item.line[:120], frame)
        else:
            assert frame["error"]["code"] == item.code and frame["error"]["message"], (item.line[:120], frame)
    assert raw.process.returncode == 0
    assert all(isinstance(json.loads(line), dict) for line in raw.lines)
    assert b"Traceback" not in raw.stderr


# (method, params, what the message must say): the SDK answered each with a bare "Invalid request
# parameters" and empty data, or (prompts/get) a pydantic dump with a link to its docs.
REFUSED_PARAMS: list[tuple[str, dict[str, Any], str]] = [
    ("tools/call", {"arguments": {}}, "name is required"),
    ("tools/call", {"name": "search_docs", "arguments": ["redis"]}, "arguments must be an object"),
    ("logging/setLevel", {"level": "verbose"}, "level must be 'alert', 'critical', 'debug'"),
    (
        "completion/complete",
        {"ref": {"type": "ref/foo"}, "argument": {"name": "a", "value": "b"}},
        "ref.type must be 'ref/prompt' or 'ref/resource' (got 'ref/foo')",
    ),
    (
        "completion/complete",
        {"ref": {"type": "ref/prompt"}, "argument": {"name": "a", "value": "b"}},
        "ref.name is required",
    ),
    (
        "prompts/get",
        {"name": "build_imqueue_service", "arguments": {"name": 5}},
        "arguments.name must be a string (got 5)",
    ),
    (
        "tools/call",
        {"name": "search_docs", "_meta": {"progressToken": [1]}},
        "_meta.progressToken must be a string or an integer",
    ),
]


def test_refused_params_and_a_request_before_initialize_say_what_to_fix(tmp_path: Path) -> None:
    raw = RawStdio([], server_environment(tmp_path, IMQUEUE_MCP_OFFLINE="1"), tmp_path)
    try:
        early = raw.request(0, "tools/list")["error"]
        initialize(raw)
        refusals = [
            raw.request(n, method, params)["error"] for n, (method, params, _) in enumerate(REFUSED_PARAMS, 2)
        ]
    finally:
        raw.close()

    assert early["code"] == INVALID_PARAMS
    assert "initialize" in early["message"] and "tools/list" in early["message"], early
    for (method, _params, said), error in zip(REFUSED_PARAMS, refusals, strict=True):
        assert error["code"] == INVALID_PARAMS, error
        message = error["message"]
        assert message.startswith(f"Invalid params for {method}: ") and said in message, message
        assert "\n" not in message and "pydantic" not in message and "validation error" not in message, (
            message
        )


# --- a line far over the limit, and stdin closed with work queued (issue 19 §8, §9) ---------

BIG_LINE = 50 * 2**20
FLAT_MARGIN = 32 * 2**20  # what reading the big line may add to the server's peak memory


def peak_rss(pid: int) -> int:
    """The process's peak resident set (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc: this test needs Linux")


def test_a_50_mb_line_of_invalid_utf8_is_a_parse_error_and_memory_stays_flat(tmp_path: Path) -> None:
    raw = RawStdio([], server_environment(tmp_path, IMQUEUE_MCP_OFFLINE="1"), tmp_path)
    try:
        initialize(raw)
        before = peak_rss(raw.process.pid)
        chunk = b"\xff\xfe" * 2**19  # 1 MB that is not UTF-8
        for _ in range(BIG_LINE // len(chunk)):
            assert raw.process.stdin is not None
            raw.process.stdin.write(chunk)
        send_bytes(raw, b"")  # the newline that ends the line
        error = raw.next_frame()
        assert error["id"] is None and error["error"]["code"] == PARSE_ERROR, error
        assert "4 MiB" in error["error"]["message"]
        assert raw.request(2, "ping")["result"] == {}  # still serving
        after = peak_rss(raw.process.pid)
        print(f"\n50 MB line: peak RSS {before / 2**20:.0f} MB before it, {after / 2**20:.0f} MB after it")
        assert after - before < FLAT_MARGIN, f"the peak grew by {(after - before) / 2**20:.0f} MB"
    finally:
        raw.close()
    assert raw.process.returncode == 0 and b"Traceback" not in raw.stderr


PINGS = 10_000
EXIT_MARGIN = 20.0  # on top of the drain limit: a loaded 2-CPU machine


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_closing_stdin_with_10000_pings_queued_answers_every_one_then_exits(tmp_path: Path) -> None:
    raw = RawStdio([], server_environment(tmp_path, IMQUEUE_MCP_OFFLINE="1"), tmp_path)
    initialize(raw)
    pings = b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % n for n in range(10, 10 + PINGS))
    assert raw.process.stdin is not None
    raw.process.stdin.write(pings)
    raw.process.stdin.close()
    closed = time.monotonic()
    answers: dict[int, dict[str, Any]] = {}
    while len(answers) < PINGS:
        frame = raw.next_frame()
        if frame.get("id") in range(10, 10 + PINGS):
            assert frame["id"] not in answers, f"two answers for {frame['id']}"
            answers[frame["id"]] = frame
    raw.process.wait(DRAIN_SECONDS + EXIT_MARGIN)
    took = time.monotonic() - closed
    assert all(frame.get("result") == {} or frame["error"]["code"] == -32000 for frame in answers.values())
    assert raw.process.returncode == 0
    cancelled = sum("error" in frame for frame in answers.values())
    print(
        f"\n{PINGS} pings, stdin closed: {PINGS - cancelled} results, {cancelled} cancelled with "
        f"-32000; exit {took:.1f} s after the close"
    )


@pytest.mark.slow  # over 5 s in the README's fast run (docs/testing.md): CI runs it
def test_a_request_still_running_when_stdin_closes_is_answered_with_connection_closed(tmp_path: Path) -> None:
    env = server_environment(tmp_path, IMQUEUE_MCP_OFFLINE="1", IMQ_STANDIN_SLEEP="120")
    env["PATH"] = os.pathsep.join([str(IMQ_STANDIN_DIR), env["PATH"]])  # an imq that sleeps: a hang
    raw = RawStdio([], env, tmp_path)
    initialize(raw)
    raw.send({"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": "cli_status"}})
    time.sleep(0.5)  # the call is under way
    assert raw.process.stdin is not None
    raw.process.stdin.close()
    closed = time.monotonic()
    answer = raw.answer("slow")
    raw.process.wait(EXIT_MARGIN)
    took = time.monotonic() - closed
    assert answer["error"]["code"] == -32000 and answer["error"]["message"], answer  # Connection closed
    assert DRAIN_SECONDS - 1 < took < DRAIN_SECONDS + EXIT_MARGIN
    assert raw.process.returncode == 0


@pytest.mark.parametrize(("request_id", "cancelled_id"), [("slow", "slow"), (7, "7")])
def test_a_request_the_client_cancelled_is_never_answered_and_does_not_hold_the_exit(
    tmp_path: Path, request_id: Any, cancelled_id: Any
) -> None:
    """MCP: a cancelled request should not be answered. It was kept waiting for at end of input,
    so the exit came DRAIN_SECONDS late, with a -32000 "had not finished" answer for it. The SDK
    matches "7" to 7, and so must the count of what is unanswered."""
    env = server_environment(tmp_path, IMQUEUE_MCP_OFFLINE="1", IMQ_STANDIN_SLEEP="120")
    env["PATH"] = os.pathsep.join([str(IMQ_STANDIN_DIR), env["PATH"]])  # an imq that sleeps: a hang
    raw = RawStdio([], env, tmp_path)
    initialize(raw)
    raw.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "cli_status"}})
    time.sleep(0.5)  # the call is under way
    raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": cancelled_id}})
    assert raw.request(2, "ping")["result"] == {}
    assert raw.process.stdin is not None
    raw.process.stdin.close()
    closed = time.monotonic()
    raw.process.wait(DRAIN_SECONDS + EXIT_MARGIN)
    took = time.monotonic() - closed
    assert raw.process.returncode == 0
    assert not [line for line in raw.lines if json.loads(line).get("id") == request_id], raw.lines
    assert took < DRAIN_SECONDS - 1, f"the exit waited {took:.1f} s for a cancelled request"


def test_an_open_listen_stream_ends_with_its_result_when_stdin_closes(tmp_path: Path) -> None:
    """A 2026-07-28 subscriptions/listen stream never ends by itself: it held the exit for
    DRAIN_SECONDS and then got a -32000 error. At end of input it is closed, and ends as the
    SDK's graceful close ends it, with its result."""
    raw = RawStdio([], server_environment(tmp_path, IMQUEUE_MCP_OFFLINE="1"), tmp_path)
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    listen = {"_meta": envelope, "notifications": {"resourcesListChanged": True}}
    raw.send({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen", "params": listen})
    assert raw.next_frame()["method"] == "notifications/subscriptions/acknowledged"
    assert raw.process.stdin is not None
    raw.process.stdin.close()
    closed = time.monotonic()
    answer = raw.answer("listen")
    raw.process.wait(DRAIN_SECONDS + EXIT_MARGIN)
    took = time.monotonic() - closed
    assert "result" in answer, answer
    assert answer["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen"
    assert raw.process.returncode == 0
    assert took < DRAIN_SECONDS - 1, f"the exit waited {took:.1f} s for the listen stream"


def test_an_answer_whose_handler_is_cancelled_while_the_writer_is_busy_still_goes_out() -> None:
    """The SDK cancels every handler in flight when stdin ends after the drain. An answer handed
    to the writer by a send that waits (the writer takes one message at a time) was withdrawn
    unsent by that cancel, while the SDK counted it as sent: no answer at all (162 of 10,000
    pings on a loaded machine). WatchedWrites queues it instead: the cancel cannot reach it, and
    `finish` writes out the queue while the writer keeps taking it."""
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCResponse

    from imqueue_mcp.server.hosting.stdio import Unanswered, WatchedWrites

    async def scenario() -> tuple[list[Any], dict[Any, None]]:
        inner_send, inner_receive = anyio.create_memory_object_stream[SessionMessage](0)
        unanswered = Unanswered()
        writes = WatchedWrites(inner_send, unanswered)
        taken: list[Any] = []

        async def slow_writer() -> None:
            async with inner_receive:
                async for message in inner_receive:
                    await anyio.sleep(0.05)  # a loaded machine's writer
                    assert isinstance(message.message, JSONRPCResponse)
                    taken.append(message.message.id)

        async def handler(request_id: int, scope: anyio.CancelScope) -> None:
            with scope:
                await writes.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result={})))
                await anyio.sleep(10)  # still busy when the cancel comes

        async with anyio.create_task_group() as group:
            group.start_soon(slow_writer)
            group.start_soon(writes.pump)
            scopes = [anyio.CancelScope() for _ in range(5)]
            for request_id, scope in enumerate(scopes):
                unanswered.read(request_id)
                group.start_soon(handler, request_id, scope)
            await anyio.sleep(0.01)
            for scope in scopes:  # the SDK's shutdown: every handler cancelled at once
                scope.cancel()
            await writes.finish()
            await inner_send.aclose()
        return taken, unanswered.ids

    taken, left = anyio.run(scenario)
    assert taken == [0, 1, 2, 3, 4] and not left

"""A pasted error output is searched by what it says, not by its stack frames (ranker/pasted.py):
the reduction itself, the ranker over records that share the frames' words, and search_docs as an
agent calls it on the mirror, where the reply says what was searched."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from imqueue_mcp.ranker import rules
from imqueue_mcp.ranker.pasted import distill, searched

from conftest import McpConnection, offline_args, server_environment, stdio_connection
from fixtures.corpus_tiny import index_of, section

ECONNREFUSED = """Error: connect ECONNREFUSED 127.0.0.1:6379
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16) {
  errno: -111,
  code: 'ECONNREFUSED',
  syscall: 'connect',
  address: '127.0.0.1',
  port: 6379
}

Node.js v22.11.0"""

ESM_SYNTAX = """file:///home/me/user-service/node_modules/@imqueue/rpc/index.js:1
import { IMQService } from './src/IMQService.js';
^^^^^^

SyntaxError: Cannot use import statement outside a module
    at internalCompileFunction (node:internal/vm:76:18)
    at wrapSafe (node:internal/modules/cjs/loader:1283:20)
    at Module._compile (node:internal/modules/cjs/loader:1328:27)
    at async ModuleLoader.import (node:internal/modules/esm/loader:329:24)
    at new Promise (<anonymous>)"""

TSC_PRETTY = """src/UserService.ts:12:5 - error TS1241: Unable to resolve signature of method decorator \
when called as an expression.

12     @expose()
       ~~~~~~~~~

Found 1 error in src/UserService.ts:12"""

REQUIRE_ESM = (
    "Error [ERR_REQUIRE_ESM]: require() of ES Module /app/node_modules/@imqueue/rpc/index.js "
    "from /app/src/index.js not supported."
)


def test_a_v8_trace_and_its_field_dump_leave_the_message_line() -> None:
    text = distill(ECONNREFUSED)

    assert text.query == "Error: connect ECONNREFUSED 127.0.0.1:6379"
    assert text.changed
    assert text.dropped == 8  # one frame, six lines of the dump, the footer


# What Node 22 prints for a call @imqueue/rpc 3.7.2 rejected and nobody caught: rpc rejects with a
# plain object, so there is no `Error:` line, only the object's dump with its stack as a string.
RPC_REJECTION = """node:internal/modules/run_main:123
    triggerUncaughtException(
    ^
{
  code: 'IMQ_RPC_CALL_ERROR',
  message: 'plain failure: plain',
  stack: 'Error: plain failure: plain\\n' +
    '    at JobService.failJob (file:///tmp/app/job-svc/dist/JobService.js:72:23)\\n' +
    '    at invoke (file:///tmp/app/node_modules/@imqueue/rpc/src/IMQService.js:308:49)\\n' +
    '    at process.processTicksAndRejections (node:internal/process/task_queues:103:5)',
  method: 'failJob',
  args: '[\\n  "plain"\\n]',
  original: '{}'
}

Node.js v22.23.5"""


def test_a_thrown_plain_object_is_searched_by_its_code_and_message_not_its_dumped_stack() -> None:
    text = distill(RPC_REJECTION)

    assert text.query == "IMQ_RPC_CALL_ERROR plain failure: plain"
    assert text.dropped == 13  # location, thrower's code, caret, braces, stack's 4 lines, 3 fields, footer


def test_a_callers_status_lines_above_its_failure_are_left_out_but_a_paste_of_them_alone_is_kept() -> None:
    # What a caller on rpc 3.7.2 prints: its client's connection lines, then the rejection.
    connected = (
        "OrderClient-3d1219c7c4c5404aaa1f6d2a48adfda4-0:client: reader channel connected, host "
        "127.0.0.1:38669, pid 24885\n"
        "OrderClient-3d1219c7c4c5404aaa1f6d2a48adfda4-0:client: writer channel connected, host "
        "127.0.0.1:38669, pid 24885\n\n"
    )
    assert distill(connected + RPC_REJECTION).query == "IMQ_RPC_CALL_ERROR plain failure: plain"
    assert (
        "channel connected" in distill(connected + "    at listOnTimeout (node:internal/timers:585:17)").query
    )
    failing = (
        "UserService: error connecting redis host redis:NaN on writer, pid 24431: "
        "Error: getaddrinfo ENOTFOUND"
    )
    assert (
        distill(failing + "\n    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:120:26)").query
        == failing
    )


def test_a_private_methods_frame_is_a_frame() -> None:
    text = "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/app/dist/types'\n"
    frame = "    at #cachedDefaultResolve (node:internal/modules/esm/loader:747:20)"
    assert distill(text + frame).query == "Error [ERR_MODULE_NOT_FOUND]: Cannot find module '/app/dist/types'"


def test_a_dumped_code_the_message_line_already_says_is_not_said_again() -> None:
    assert distill(ECONNREFUSED).query == "Error: connect ECONNREFUSED 127.0.0.1:6379"
    frame = "    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15) {\n"
    module = "Error: Cannot find module 'x'\n" + frame
    assert distill(module + "  code: 'MODULE_NOT_FOUND',\n  requireStack: []\n}").query == (
        "Error: Cannot find module 'x' MODULE_NOT_FOUND"
    )


def test_an_esm_syntax_error_keeps_the_error_not_where_node_threw_it() -> None:
    text = distill(ESM_SYNTAX)

    assert text.query == "SyntaxError: Cannot use import statement outside a module"
    assert text.dropped == 8  # the location, the code under it, the carets, five frames


def test_npm_output_loses_its_tag_its_repeats_and_its_log_paths() -> None:
    text = distill(
        "npm error code ERESOLVE\nnpm error ERESOLVE unable to resolve dependency tree\nnpm error\n"
        "npm error Found: typescript@7.0.2\nnpm error node_modules/typescript\nnpm error\n"
        "npm error For a full report see:\n"
        "npm error /root/.npm/_logs/2026-12-05T22_10_00_000Z-eresolve-report.txt"
    )

    assert text.query == (
        "code ERESOLVE ERESOLVE unable to resolve dependency tree Found: typescript@7.0.2 typescript "
        "For a full report see:"
    )


def test_tsc_output_keeps_the_excerpts_code_and_the_file_without_its_line_and_column() -> None:
    text = distill(TSC_PRETTY)

    assert text.query == (
        "src/UserService.ts - error TS1241: Unable to resolve signature of method decorator when called "
        "as an expression. @expose() Found 1 error in src/UserService.ts"
    )
    assert text.dropped == 1 and text.shortened  # the tildes; two :line:column suffixes


def test_a_path_through_node_modules_keeps_the_package_and_file() -> None:
    assert distill(REQUIRE_ESM).query == (
        "Error [ERR_REQUIRE_ESM]: require() of ES Module @imqueue/rpc/index.js from /app/src/index.js "
        "not supported."
    )


CORE_CRASH = """/srv/app/node_modules/standard-as-callback/built/index.js:6
        throw e;
        ^

TypeError: Cannot read properties of undefined (reading 'set')
    at file:///srv/app/node_modules/@imqueue/core/src/RedisQueue.js:851:26
    at tryCatcher (/srv/app/node_modules/standard-as-callback/built/utils.js:12:23)
    at /srv/app/node_modules/standard-as-callback/built/index.js:22:53
    at process.processTicksAndRejections (node:internal/process/task_queues:103:5)

Node.js v22.12.0"""


def test_an_error_thrown_inside_an_imqueue_package_is_searched_with_that_package_and_module() -> None:
    # the message names neither: the first @imqueue frame says where the framework failed
    assert distill(CORE_CRASH).query == (
        "TypeError: Cannot read properties of undefined (reading 'set') @imqueue/core RedisQueue"
    )
    one_line = " ".join(line.strip() for line in CORE_CRASH.splitlines()[4:6])
    assert distill(one_line).query.endswith("(reading 'set') @imqueue/core RedisQueue")
    # only frames inside @imqueue say so: a trace through other packages adds nothing
    assert "@imqueue" not in distill(CORE_CRASH.replace("@imqueue/core", "ioredis")).query
    # nor a framework frame under the user's own: the user's method threw, the framework called it
    own = CORE_CRASH.replace(
        "    at file:", "    at OrderService.place (file:///srv/app/dist/Order.js:3:9)\n    at file:"
    )
    assert "@imqueue" not in distill(own).query


def test_the_ranker_reads_a_core_crash_as_the_modules_pages() -> None:
    index = index_of(
        section(
            "/api/core/latest/core.redisqueue.send/",
            "RedisQueue.send",
            package="@imqueue/core",
            text="Sends a message to the queue.",
        ),
        section(
            "/api/rpc/latest/rpc.property/",
            "property",
            package="@imqueue/rpc",
            text="Declares a property of a complex type.",
        ),
    )

    top = index.search(CORE_CRASH, limit=1).results[0]

    assert top.url.endswith("/core.redisqueue.send/")


def test_frames_pasted_onto_one_line_are_left_out_too() -> None:
    one_line = " ".join(line.strip() for line in ECONNREFUSED.splitlines()[:2])

    text = distill(one_line)

    assert text.query == "Error: connect ECONNREFUSED 127.0.0.1:6379"
    assert text.dropped == 1


@pytest.mark.parametrize(
    "query",
    [
        "how do I look at the queue at startup",
        "Error: connect ECONNREFUSED 127.0.0.1:6379",
        "exported IMQ_CLI_HOME=/tmp/acme but imq keeps reading my old ~/.imq/config.json",
        "see https://imqueue.org/api/#caching at 10:30",
        "at scale, is redis enough?",
        "My service fails.\nWhat should I check first?",
    ],
)
def test_a_query_with_nothing_pasted_is_searched_as_written(query: str) -> None:
    text = distill(query)

    assert text.query == query
    assert not text.changed


def test_a_paste_of_frames_alone_is_searched_whole() -> None:
    frames = "\n".join(ESM_SYNTAX.splitlines()[5:])

    assert distill(frames).query == frames


def test_the_ranker_finds_the_errors_page_not_the_pages_sharing_the_frames_words() -> None:
    index = index_of(
        section(
            "/guide/redis/#connection-refused",
            "Connection refused",
            text="ECONNREFUSED means nothing listens at the Redis host and port: start Redis first.",
        ),
        section(
            "/guide/modules/#loading",
            "Loading modules",
            text="The module loader compiles each module; internal modules, process ticks and promises "
            "run after the TCP connect wrap. Module compile, module load, process task queues.",
        ),
    )
    pasted = ECONNREFUSED.replace(
        "    at TCPConnectWrap",
        "    at Module._compile (node:internal/modules/cjs/loader:1376:14)\n"
        "    at Module.load (node:internal/modules/cjs/loader:1207:32)\n"
        "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)\n"
        "    at TCPConnectWrap",
    )

    frames = "\n".join(line for line in pasted.splitlines() if line.lstrip().startswith("at "))

    response = index.search(pasted, limit=2, explain=True)

    assert response.results[0].path == "/guide/redis/#connection-refused"
    assert index.search(frames, limit=2).results[0].path == "/guide/modules/#loading"  # what frames match
    assert response.searched == "Error: connect ECONNREFUSED 127.0.0.1:6379"
    assert response.notes[0] == (
        "searched 'Error: connect ECONNREFUSED 127.0.0.1:6379' "
        "(11 stack-frame, marker or location line(s) left out)"
    )
    assert index.search("Error: connect ECONNREFUSED 127.0.0.1:6379").searched is None


def test_a_long_query_is_cut_at_a_word_and_says_so() -> None:
    index = index_of(section("/guide/a/#b", "Redis", text="redis connection"))
    query = "redis " + "connection " * 200

    response = index.search(query, explain=True)

    assert response.searched is not None and len(response.searched) <= rules.MAX_SEARCHED_CHARACTERS
    assert response.searched.endswith("connection")
    assert "cut to its first" in response.notes[0]
    assert response.results[0].path == "/guide/a/#b"


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("pasted")
    connection = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    yield connection
    connection.close()


def urls(result: Any) -> list[str]:
    return [hit["url"] for hit in result.structured_content["results"]]


def test_search_docs_answers_a_pasted_trace_as_its_message_and_says_what_it_searched(
    local: McpConnection,
) -> None:
    message = "Error [ERR_REQUIRE_ESM]: require() of ES Module @imqueue/rpc/index.js not supported."
    trace = (
        REQUIRE_ESM + "\nInstead change the require of index.js to a dynamic import().\n"
        "    at Object.<anonymous> (/app/dist/index.js:3:13)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1376:14)\n"
        "    at Module._extensions..js (node:internal/modules/cjs/loader:1435:10)\n"
        "    at Module.load (node:internal/modules/cjs/loader:1207:32)\n"
        "    at Function.Module._load (node:internal/modules/cjs/loader:1023:12)\n"
        "    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:135:12)\n"
        "    at node:internal/main/run_main_module:28:49 {\n"
        "  code: 'ERR_REQUIRE_ESM'\n"
        "}\n\nNode.js v22.11.0"
    )

    alone = local.call("search_docs", {"query": message})
    pasted = local.call("search_docs", {"query": trace})

    assert not pasted.is_error
    data = pasted.structured_content
    assert data["query"] == trace
    assert "Module._compile" not in data["searched"] and data["searched"].startswith(
        "Error [ERR_REQUIRE_ESM]"
    )
    assert urls(pasted)[0] == urls(alone)[0] == "https://imqueue.org/api/#es-modules-and-node"
    assert not data["weak"]
    text = "\n".join(block.text for block in pasted.content if block.type == "text")
    assert "Searched the pasted output's message lines:" in text
    passage = data["results"][0]["passage"]["text"]
    assert "require" in passage or "import" in passage  # chosen by the message's words


def test_every_dev_question_pasted_with_a_trace_under_it_is_searched_as_written() -> None:
    """benchmarks.pasted's pastes: each question of questions-dev.json (read from ../shared at run
    time), with 3-6 of Node's frames and a footer after it, reduces to the question itself."""
    from benchmarks.pasted import pasted

    path = Path(__file__).resolve().parents[2] / "shared" / "kpi" / "questions-dev.json"
    if not path.is_file():
        pytest.skip(f"the questions are not at {path}")
    draw = random.Random(1)
    questions = [question["query"] for question in json.loads(path.read_text(encoding="utf-8"))]

    changed = [q for q in questions if searched(pasted(q, draw), rules.MAX_SEARCHED_CHARACTERS).query != q]

    assert len(questions) > 700 and changed == []


# Text built to make a backtracking pattern try each of its characters from each of the others:
# long runs without a space, of spaces, of markers, of path parts, each 8,000 characters long
# (search_docs' limit). Linear reading takes a few milliseconds; quadratic took 0.3-0.8 s.
ADVERSARIAL = {
    "a path after at": "x at " + "a/" * 4000,
    "a word after at": "x at " + "a" * 8000,
    "spaces after at": " at " + " " * 7990 + "(",
    "spaces before a brace": "x" + " " * 7990 + "{x",
    "node_modules in one word": ("a" * 50 + "/node_modules") * 120,
    "a path before node_modules": "a/" * 3990 + "node_modules/",
    "markers then a letter": "~" * 7999 + "x",
    "the same frame": "\n".join(["    at x (a:1:2)"] * 500),
    "distinct lines": "\n".join(f"    l{number}" for number in range(1500)),
    "at async new": " at async new " * 600,
    "a location of colons": "node:" + ":1" * 3990,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_no_text_of_search_docs_length_makes_the_reduction_slow(name: str) -> None:
    text = ADVERSARIAL[name][:8000]

    started = time.perf_counter()
    result = searched(text, rules.MAX_SEARCHED_CHARACTERS)
    elapsed = time.perf_counter() - started

    assert len(result.query) <= rules.MAX_SEARCHED_CHARACTERS
    assert elapsed < 0.2, f"{name}: {elapsed:.3f} s"

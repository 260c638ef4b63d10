"""Issue 28: what misled two coding agents building two @imqueue services through the local
server, each fixed and checked on the real server process over stdio (the SDK's MCP client).

- create_service with no network: the reply says the templates could not be fetched (not "check
  your flags") and gives the exact offline call, which then works on the real imq 5.2.2.
- scaffold_client: the caller sets the call timeout asked for (or says the default), and files[]
  lists every file the answer shows, src/caller.ts included. That the caller's callTimeout
  really rejects an unanswered call on rpc 3.7.2 and Redis is
  test_generate_client_broker.py's scaffolded-service test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from imq_real import TEMPLATE, real_imq_environment, require_real_imq

from imqueue_mcp.server.tool_results import error_of

from conftest import McpConnection, offline_args, server_environment, stdio_connection

# git (which imq runs to clone its templates) honours these: a proxy on a closed loopback port
# makes "no network" immediate and certain, whatever this machine can reach.
NO_NETWORK = {
    "https_proxy": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "GIT_TERMINAL_PROMPT": "0",
}


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.fixture(scope="module")
def offline_imq(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[McpConnection, Path]]:
    require_real_imq()
    home = tmp_path_factory.mktemp("offline-imq")
    work = home / "work"
    work.mkdir()
    connection = stdio_connection([], real_imq_environment(home, **NO_NETWORK), work, "legacy")
    yield connection, work
    connection.close()


def test_create_service_offline_says_the_templates_could_not_be_fetched_and_the_offline_call_works(
    offline_imq: tuple[McpConnection, Path],
) -> None:
    mcp, work = offline_imq
    flags = ["--email=dev@example.com", "--no-use-git", "--no-install"]
    failed = mcp.call(
        "create_service",
        {"name": "inventory", "path": "inventory", "flags": flags, "apply": True},
        timeout=150,
    )
    text = text_of(failed)
    assert failed.is_error, text
    assert "could not fetch its service templates" in text and "your flags were not the problem" in text
    assert "Check the flags with cli_help" not in text
    assert 'scaffold_service(name="inventory"' in text

    # the exact call the reply gives, with a template folder that is on this machine
    found = re.search(
        r"create_service\(name=\"inventory\", path=\"inventory\", flags=(\[[^\]]*\]), apply=true\)", text
    )
    assert found, text
    offline_flags = json.loads(found[1])
    assert offline_flags[:2] == ["-t", "/path/to/template"]
    offline_flags[1] = str(TEMPLATE)
    created = mcp.call(
        "create_service",
        {"name": "inventory", "path": "inventory", "flags": offline_flags, "apply": True},
        timeout=150,
    )
    assert not created.is_error, text_of(created)
    assert (work / "inventory" / "package.json").is_file()


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("local")
    connection = stdio_connection([], server_environment(home), home, "legacy")
    yield connection
    connection.close()


def test_scaffold_client_caller_sets_the_asked_call_timeout_and_lists_every_file(
    local: McpConnection,
) -> None:
    methods = [{"name": "reserve", "params": [{"name": "sku", "type": "string"}], "returns": "number"}]
    result = local.call(
        "scaffold_client", {"service": "InventoryService", "methods": methods, "call_timeout_ms": 4000}
    )
    assert not result.is_error, text_of(result)
    data = result.structured_content
    paths = [file["path"] for file in data["files"]]
    assert paths == ["src/caller.ts", "package.json", "tsconfig.json"]
    caller = data["files"][0]["content"]
    assert caller == data["example"]["content"] and "callTimeout: 4000," in caller
    assert data["callTimeoutMs"] == 4000 and data["callTimeoutDefaulted"] is False
    text = text_of(result)
    assert "times out after 4000 ms" in text and "callTimeout: 4000," in text
    # the markdown shows the caller once
    assert text.count("callTimeout: 4000,") == 1

    default = local.call("scaffold_client", {"service": "InventoryService"})
    assert default.structured_content["callTimeoutDefaulted"] is True
    assert "the scaffold's default" in text_of(default) and "callTimeout: 30000," in text_of(default)


@pytest.mark.parametrize("bad", [0, -5, 3_600_001, "4000", 1.5])
def test_scaffold_client_refuses_a_bad_call_timeout_with_a_clear_error(
    local: McpConnection, bad: Any
) -> None:
    result = local.call("scaffold_client", {"service": "InventoryService", "call_timeout_ms": bad})
    assert result.is_error
    detail = error_of(result)
    assert detail is not None and detail["code"] == "invalid_arguments", text_of(result)
    assert "call_timeout_ms" in text_of(result)


# --- docs errata: known needs of an example, detected from its code ---------------------------


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("errata")
    connection = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    yield connection
    connection.close()


def test_get_doc_notes_the_get_started_client_built_without_a_queue_name(docs_server: McpConnection) -> None:
    outline = docs_server.call("get_doc", {"url": "https://imqueue.org/get-started/", "outline": True})
    anchors = [
        entry["url"]
        for entry in outline.structured_content["outline"]
        if "client" in entry["heading"].lower()
    ]
    assert anchors, text_of(outline)
    result = docs_server.call("get_doc", {"url": anchors[0], "maxTokens": 20000})
    assert not result.is_error, text_of(result)
    data = result.structured_content
    assert "new userService.UserClient();" in data["markdown"]
    assert any("is given no queue name, so it calls the queue 'User'" in note for note in data["notes"])
    assert "Note on this page's code: new userService.UserClient(...) is given no queue name" in text_of(
        result
    )

    plain = docs_server.call("get_doc", {"url": "https://imqueue.org/license/"})
    assert not plain.is_error and "notes" not in plain.structured_content


def test_find_examples_flags_an_example_that_needs_a_queue_name(docs_server: McpConnection) -> None:
    result = docs_server.call(
        "find_examples", {"query": "consumer calls the generated client userService.UserClient", "limit": 10}
    )
    assert not result.is_error, text_of(result)
    hits = result.structured_content["results"]
    bare = [hit for hit in hits if re.search(r"new \w+\.\w+Client\(\s*\)", hit["code"])]
    assert bare, [hit["code"][:80] for hit in hits]
    assert all(any("no queue name" in note for note in hit["notes"]) for hit in bare)
    named = [hit for hit in hits if re.search(r"new \w+\.\w+Client\([^,()]+,\s*'", hit["code"])]
    assert all(not any("no queue name" in note for note in hit.get("notes") or []) for hit in named)
    assert "   Note: new " in text_of(result)


def test_the_known_needs_table_reads_the_code_not_the_page() -> None:
    from imqueue_mcp.server.docs.errata import known_needs

    assert known_needs("const db = new PrismaClient();") == []
    assert known_needs("new user.UserClient(clientOptions, 'UserService');") == []
    no_queue = known_needs("new user.UserClient(clientOptions);")
    assert len(no_queue) == 1 and "calls the queue 'User'" in no_queue[0]
    three = known_needs("@classType()\nclass A {}\nconst o = { callTimeout: 5000 };")
    assert three == [
        "@classType() and callTimeout are @imqueue/rpc 3.x API (rpc 1.x has neither @classType() nor "
        "callTimeout): this example needs rpc 3.x (Node.js 22.12+, standard decorators)."
    ]
    redis = known_needs("const service = new UserService();")
    assert len(redis) == 1 and "localhost:6379" in redis[0]


def test_an_example_that_does_not_compile_in_the_scaffolds_project_says_why() -> None:
    """The scaffolds write an ES-module, strict project: a relative import needs its .js, and a
    @property() field its '!' (TS2835, TS2564); an example written otherwise says so."""
    from imqueue_mcp.server.docs.errata import known_needs

    (imports,) = known_needs("import { BlogPost } from './types';\nimport { x } from '../lib/x.js';")
    assert "'./types'" in imports and "TS2835" in imports and "'../lib/x.js'" not in imports
    (fields,) = known_needs(
        "class User {\n    @property('string')\n    public name: string;\n"
        "    @property('number', true)\n    age?: number;\n    @property('string') id!: string;\n"
        "    @property('string')\n    email: string = '';\n}"
    )
    assert "field name with" in fields and "TS2564" in fields and "age" not in fields
    assert known_needs("import { IMQService } from '@imqueue/rpc';\nimport t from './types.js';") == []

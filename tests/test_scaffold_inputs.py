"""Inputs the scaffolders must not turn into broken code (audit 2: findings 01, 03-06, 08, 12).

rpc 3.x reads an exposed method's JSDoc block at run time, starting a tag at every '@', so a
description's '@' must never reach it; a type must be one a generated client can compile and the
queue's JSON can carry; the client generator's own parameter names are taken; and a service's
name maps to one class however it is spelled.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from imqueue_mcp.server.scaffold.templates import (
    render_service_markdown,
    scaffold_client,
    scaffold_service,
)
from imqueue_mcp.server.scaffold.types import ScaffoldError, normalize_service_name

AT_LOOKALIKE = "\uff20"


def file_content(result: dict[str, Any], path: str) -> str:
    return str(next(file["content"] for file in result["files"] if file["path"] == path))


def doc_blocks(source: str) -> dict[str, str]:
    """Each exposed method's doc block, as rpc reads it: comment markers and leading stars gone."""
    blocks = {}
    exposed = re.compile(r"/\*\*((?:(?!\*/).)*)\*/\s*@expose\(\)\s*public async (\w+)\(", re.S)
    for block, name in exposed.findall(source):
        blocks[name] = re.sub(r"\*?\n +\* ?", "\n", block).strip()
    return blocks


def rpc_reading(block: str) -> tuple[str, list[str]]:
    """What rpc 3.x's expose() makes of a doc block: the description before the first '@', and the
    parameter names of its @param tags (RX_DESCRIPTION, RX_TAG = /(@[^@]+)/g in expose.js)."""
    description = block.split("@", 1)[0].strip()
    names = []
    for tag in re.findall(r"@[^@]+", block):
        tag_name, _, rest = tag.strip().partition(" ")
        if tag_name in ("@param", "@params"):
            rest = re.sub(r"^\{[^}]*\}\s*", "", rest)
            names.append(rest.split(" ")[0].strip("[]"))
    return description, names


ACCOUNT: list[dict[str, Any]] = [
    {
        "name": "getUser",
        "description": "Finds a user by id.\n@param id - the user's id\n@returns the user's name",
        "params": [{"name": "id", "type": "string"}],
        "returns": "string",
    },
    {
        "name": "notify",
        "description": "Sends a mail from noreply@example.com to the user.",
        "params": [{"name": "email", "type": "string", "description": "an address like bob@corp.io"}],
        "returns": "boolean",
    },
    {"name": "ping", "description": "Returns pong. @param {string} bogus", "returns": "string"},
]


# --- 01: descriptions in the runtime-parsed JSDoc block ------------------------------


def test_a_description_can_add_no_parameter_to_what_rpc_reads() -> None:
    source = file_content(scaffold_service("account", ACCOUNT), "src/AccountService.ts")
    blocks = doc_blocks(source)
    assert {name: rpc_reading(block)[1] for name, block in blocks.items()} == {
        "getUser": ["id"],
        "notify": ["email"],
        "ping": [],
    }


def test_param_and_returns_tag_lines_describe_the_parameter_and_the_return() -> None:
    result = scaffold_service("account", ACCOUNT)
    block = doc_blocks(file_content(result, "src/AccountService.ts"))["getUser"]
    assert "@param {string} id - the user's id" in block
    assert "@return {Promise<string>} the user's name" in block
    assert rpc_reading(block)[0] == "Finds a user by id."
    assert any(note.startswith("getUser()'s descriptions:") for note in result["notes"])


def test_an_email_address_is_not_cut_but_written_with_a_lookalike_at() -> None:
    result = scaffold_service("account", ACCOUNT)
    block = doc_blocks(file_content(result, "src/AccountService.ts"))["notify"]
    assert rpc_reading(block)[0] == f"Sends a mail from noreply{AT_LOOKALIKE}example.com to the user."
    assert f"@param {{string}} email - an address like bob{AT_LOOKALIKE}corp.io" in block
    assert "bob@" not in block
    note = next(note for note in result["notes"] if note.startswith("notify()'s descriptions:"))
    assert "U+FF20" in note


def test_a_tag_line_for_a_parameter_the_method_lacks_is_left_out_with_a_note() -> None:
    method = {
        "name": "find",
        "description": "Finds.\n@param {number} ghost the ghost\n@throws when missing",
        "params": [{"name": "id", "type": "string", "description": "its id"}],
    }
    result = scaffold_service("account", [method])
    block = doc_blocks(file_content(result, "src/AccountService.ts"))["find"]
    assert rpc_reading(block)[1] == ["id"] and "ghost" not in block
    assert f"{AT_LOOKALIKE}throws when missing" in block
    assert "'@param {number} ghost the ghost' are left out" in result["notes"][0]


def test_description_notes_have_their_own_heading_in_the_markdown() -> None:
    methods = [*ACCOUNT, {"name": "reserve", "returns": "{ ok: boolean }"}]
    markdown = render_service_markdown(scaffold_service("account", methods))
    literal, _, rest = markdown.partition("## Object-literal types")[2].partition("## Notes")
    assert "ReserveResult" in literal and "getUser()'s descriptions" not in literal
    assert "getUser()'s descriptions" in rest


# --- 03: a default value written in a type -------------------------------------------


def test_a_default_value_in_a_type_is_refused_with_the_optional_way() -> None:
    method = {"name": "page", "params": [{"name": "limit", "type": "number = 10"}], "returns": "number"}
    with pytest.raises(ScaffoldError, match=r"params\.0\.type: .*default value.*optional: true"):
        scaffold_service("listing", [method])


def test_an_arrow_or_an_equals_sign_in_a_string_literal_is_no_default() -> None:
    method = {"name": "run", "params": [{"name": "op", "type": "'a=b' | 'c'"}], "returns": "() => void"}
    assert "op: 'a=b' | 'c'" in file_content(scaffold_service("job", [method]), "src/JobService.ts")


# --- 04: types JSON cannot carry ------------------------------------------------------


def test_each_type_json_cannot_carry_gets_a_note_naming_what_arrives() -> None:
    params = [
        {"name": "day", "type": "Date"},
        {"name": "counts", "type": "Map<string, number>"},
        {"name": "tags", "type": "Set<string>"},
        {"name": "done", "type": "(x: number) => void"},
        {"name": "later", "type": "Promise<string>"},
    ]
    result = scaffold_service("planner", [{"name": "schedule", "params": params, "returns": "string"}])
    notes = result["notes"]
    assert len(notes) == 5
    assert "parameter day" in notes[0] and "ISO string" in notes[0] and "Declare string" in notes[0]
    assert "parameter counts" in notes[1] and "{}" in notes[1] and "Record<string, T>" in notes[1]
    assert "parameter tags" in notes[2] and "T[]" in notes[2]
    assert "parameter done" in notes[3] and "function" in notes[3]
    assert "parameter later" in notes[4] and "Promise arrives as {}" in notes[4]
    assert "## Notes" in render_service_markdown(result)


def test_a_promise_return_and_plain_json_types_get_no_note() -> None:
    method = {
        "name": "find",
        "params": [{"name": "ids", "type": "Record<string, number[]>"}],
        "returns": "Promise<string[]>",
    }
    assert scaffold_service("planner", [method])["notes"] == []


def test_stubbed_types_say_how_an_enum_and_a_date_field_cross() -> None:
    # audit 12: an enum named in a signature was stubbed as an empty class, and nothing said so
    method = {"name": "setStatus", "params": [{"name": "status", "type": "OrderStatus"}], "returns": "Order"}
    result = scaffold_service("shop", [method])

    (note,) = result["notes"]
    assert note.startswith("src/types.ts stubs Order, OrderStatus as @classType() classes")
    assert "enum or a union type alias" in note and "('a' | 'b')" in note and "declare it 'string'" in note
    types = file_content(result, "src/types.ts")
    assert "An enum or a" in types and "declare it @property('string')" in types


def test_more_complex_types_than_a_scaffold_stubs_is_refused_at_once() -> None:
    # audit 11: every name of a union became a class; 229 kB of request made a 49.6 MB reply
    union = "|".join(f"T{i:03d}" for i in range(40))  # 40 made-up names in one 200-character type
    params = [{"name": f"p{i}", "type": union.replace("T", chr(65 + i))} for i in range(7)]
    with pytest.raises(ScaffoldError, match=r"name 280 distinct complex types; a scaffold stubs at most 250"):
        scaffold_service("planner", [{"name": "plan", "params": params}])
    many = [
        {"name": f"m{m}", "params": [{"name": f"p{i}", "type": union} for i in range(20)], "returns": union}
        for m in range(50)
    ]
    assert len(scaffold_service("planner", many)["types"]) == 40  # the same 40, found once each


def test_a_fifty_method_service_over_many_entities_is_scaffolded() -> None:
    # audit 14: create/find over 25 entities names 101 types, and the first cap (100) refused it
    methods = [
        {
            "name": f"{verb}{n}",
            "params": [{"name": "input", "type": f"{verb.title()}{n}Input"}],
            "returns": f"E{n}",
        }
        for n in range(25)
        for verb in ("create", "find")
    ]
    assert len(scaffold_service("catalog", methods)["types"]) == 75


def test_a_date_in_a_return_is_noted_too() -> None:
    result = scaffold_service("planner", [{"name": "when", "returns": "Date | null"}])
    assert len(result["notes"]) == 1 and result["notes"][0].startswith("when()'s return has the type Date")


# --- 05: generic custom types ---------------------------------------------------------


@pytest.mark.parametrize("returns", ["Page<User>", "Promise<Page<User>>", "Page<User>[]"])
def test_a_generic_custom_type_is_refused_with_a_concrete_class_to_use(returns: str) -> None:
    with pytest.raises(ScaffoldError, match=r"concrete class instead \(e\.g\. 'UserPage'"):
        scaffold_service("catalog", [{"name": "listUsers", "returns": returns}])


def test_built_in_generics_around_custom_types_are_still_accepted() -> None:
    method = {
        "name": "index",
        "params": [{"name": "byId", "type": "Record<string, User>"}],
        "returns": "Array<User>",
    }
    assert scaffold_service("catalog", [method])["types"] == ["User"]


# --- 06: types of another module -----------------------------------------------------


@pytest.mark.parametrize("where", ["params", "returns"])
def test_a_namespace_qualified_type_is_refused_with_the_local_name_to_use(where: str) -> None:
    method: dict[str, Any] = {"name": "items", "params": [{"name": "sku", "type": "string"}]}
    if where == "returns":
        method["returns"] = "inventoryService.Item[]"
    else:
        method["params"] = [{"name": "item", "type": "inventoryService.Item"}]
    with pytest.raises(
        ScaffoldError, match=r"the namespace 'inventoryService'.*Declare the type locally: use 'Item'"
    ):
        scaffold_service("order", [method], calls=["Inventory"])


def test_a_rest_element_is_not_a_qualified_name() -> None:
    method = {
        "name": "sum",
        "params": [{"name": "terms", "type": "[string, ...number[]]"}],
        "returns": "number",
    }
    assert "terms: [string, ...number[]]" in file_content(
        scaffold_service("math", [method]), "src/MathService.ts"
    )


# --- 08: the generated client's own parameters ---------------------------------------


@pytest.mark.parametrize("name", ["imqMetadata", "imqDelay"])
def test_the_generated_clients_parameter_names_are_refused(name: str) -> None:
    params = [{"name": "event", "type": "string"}, {"name": name, "type": "string", "optional": True}]
    with pytest.raises(ScaffoldError, match=rf"params\.1\.name: Parameter name '{name}' .*generated client"):
        scaffold_service("tracker", [{"name": "track", "params": params, "returns": "boolean"}])
    with pytest.raises(ScaffoldError, match="generated client"):
        scaffold_client("tracker", [{"name": "track", "params": params}])


# --- 12: names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "service"),
    [
        ("order-service-2", "OrderService2"),
        ("OrderService2", "OrderService2"),
        ("order_service 2", "OrderService2"),
        ("order-2", "Order2Service"),
        ("user-service", "UserService"),
        ("InventoryClient", "InventoryService"),
        ("inventory-client", "InventoryService"),
        ("api-client-service", "ApiClientService"),
        ("client", "ClientService"),
    ],
)
def test_a_number_after_the_suffix_and_a_client_name_map_to_one_service(spelling: str, service: str) -> None:
    assert normalize_service_name(spelling) == service


def test_a_numbered_service_keeps_its_number_last_everywhere() -> None:
    result = scaffold_service("order-service-2")
    assert result["service"] == "OrderService2"
    assert json.loads(file_content(result, "package.json"))["name"] == "order-service-2"
    # rpc's generator names the client serviceName.replace(/Service$|$/, 'Client').
    assert scaffold_client("order-service-2")["client"] == "OrderService2Client"


def test_calls_naming_a_client_wire_in_that_clients_service() -> None:
    called = scaffold_service("order", calls=["InventoryClient"])["calls"][0]
    assert (called["service"], called["client"], called["field"]) == (
        "InventoryService",
        "InventoryClient",
        "inventoryClient",
    )

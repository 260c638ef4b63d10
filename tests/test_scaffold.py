"""Behaviour of the offline scaffolders: names, emitted identifiers, types and markdown."""

from __future__ import annotations

import json
from typing import Any

import pytest

from imqueue_mcp.server.scaffold.templates import (
    SCAFFOLD_CLIENT_DESCRIPTION,
    SCAFFOLD_SERVICE_DESCRIPTION,
    render_client_markdown,
    render_service_markdown,
    scaffold_client,
    scaffold_service,
)
from imqueue_mcp.server.scaffold.types import (
    Method,
    ScaffoldError,
    complex_type_names,
    normalize_service_name,
)

GET_USER = {
    "name": "getUser",
    "description": "Finds a user by id",
    "params": [
        {"name": "id", "type": "string", "description": "user identifier"},
        {"name": "fields", "type": "string[]", "optional": True},
    ],
    "returns": "User",
}


def file_content(result: dict[str, Any], path: str) -> str:
    return str(next(file["content"] for file in result["files"] if file["path"] == path))


def paths(result: dict[str, Any]) -> list[str]:
    return [file["path"] for file in result["files"]]


# --- names ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spelling", ["user", "User", "UserService", "user-service", "user_service", "userService", "user service"]
)
def test_every_common_spelling_names_the_same_service_class(spelling: str) -> None:
    assert normalize_service_name(spelling) == "UserService"


def test_acronyms_and_digits_survive_normalisation() -> None:
    assert normalize_service_name("HTTPGateway") == "HTTPGatewayService"
    assert normalize_service_name("s3 uploader") == "S3UploaderService"


@pytest.mark.parametrize("bad", ["", "   ", "2fa", "user.service", "user/service", "usér"])
def test_invalid_service_names_are_rejected_with_what_is_allowed(bad: str) -> None:
    with pytest.raises(ScaffoldError, match="letters, digits"):
        normalize_service_name(bad)


def test_a_name_that_is_only_the_suffix_is_rejected() -> None:
    with pytest.raises(ScaffoldError, match="no word besides 'Service'"):
        normalize_service_name("service")


def test_scaffold_error_is_a_value_error() -> None:
    assert issubclass(ScaffoldError, ValueError)


# --- input models --------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["get-user", "1st", "class", "get user"])
def test_method_names_must_be_javascript_identifiers(bad: str) -> None:
    with pytest.raises(ScaffoldError, match="Method name"):
        scaffold_service("user", [{"name": bad}])


def test_parameter_names_must_be_javascript_identifiers() -> None:
    with pytest.raises(ScaffoldError, match="Parameter name 'user-id'"):
        scaffold_service("user", [{"name": "get", "params": [{"name": "user-id"}]}])


def test_method_named_like_a_framework_member_is_rejected() -> None:
    with pytest.raises(ScaffoldError, match="already a member of IMQService"):
        scaffold_service("user", [{"name": "start"}])


def test_unknown_method_fields_are_rejected() -> None:
    with pytest.raises(ScaffoldError, match="Extra inputs"):
        scaffold_service("user", [{"name": "get", "return": "User"}])


def test_type_that_could_close_the_doc_block_is_rejected() -> None:
    with pytest.raises(ScaffoldError, match="not a plain TypeScript type"):
        scaffold_service("user", [{"name": "get", "returns": "User */ evil"}])


def test_required_parameter_after_optional_one_is_rejected() -> None:
    params = [{"name": "a", "optional": True}, {"name": "b"}]
    with pytest.raises(ScaffoldError, match="move optional parameters last"):
        scaffold_service("user", [{"name": "get", "params": params}])


def test_duplicate_method_names_are_rejected() -> None:
    with pytest.raises(ScaffoldError, match="defined twice"):
        scaffold_service("user", [{"name": "get"}, {"name": "get"}])


def test_models_are_accepted_as_well_as_dicts() -> None:
    result = scaffold_service("user", [Method(name="ping")])
    assert "public async ping(): Promise<void>" in file_content(result, "src/UserService.ts")


# --- scaffold_service ----------------------------------------------------------------


def test_result_has_exactly_the_spec_shape() -> None:
    result = scaffold_service("user", [GET_USER])
    assert set(result) == {"service", "install", "files", "types", "notes", "cliAlternative"}
    assert all(set(file) == {"path", "language", "content"} for file in result["files"])


def test_service_file_extends_imqservice_and_exposes_each_method() -> None:
    source = file_content(scaffold_service("user-service", [GET_USER]), "src/UserService.ts")
    assert "import { IMQService, expose } from '@imqueue/rpc';" in source
    assert "export class UserService extends IMQService {" in source
    assert "    @expose()\n    public async getUser(id: string, fields?: string[]): Promise<User> {" in source


def test_jsdoc_carries_typed_params_optional_brackets_and_promise_return() -> None:
    source = file_content(scaffold_service("user", [GET_USER]), "src/UserService.ts")
    assert "* Finds a user by id" in source
    assert "* @param {string} id - user identifier" in source
    assert "* @param {string[]} [fields]" in source
    assert "* @return {Promise<User>}" in source


def test_given_promise_return_type_is_not_wrapped_twice() -> None:
    result = scaffold_service("user", [{"name": "all", "returns": "Promise<User[]>"}])
    source = file_content(result, "src/UserService.ts")
    assert "Promise<User[]> {" in source
    assert "Promise<Promise" not in source


def test_omitting_methods_yields_a_starter_with_one_exposed_method() -> None:
    result = scaffold_service("user")
    source = file_content(result, "src/UserService.ts")
    assert source.count("    @expose()\n") == 1
    assert "@return {Promise<string>}" in source
    assert result["types"] == []


def test_bootstrap_constructs_and_starts_the_service_with_js_import() -> None:
    bootstrap = file_content(scaffold_service("user"), "src/index.ts")
    assert "import { UserService } from './UserService.js';" in bootstrap
    assert "import { serviceOptions } from './config.js';" in bootstrap
    assert "const service = new UserService(serviceOptions);" in bootstrap
    assert "await service.start();" in bootstrap


def test_every_relative_import_ends_in_js() -> None:
    result = scaffold_service("user", [GET_USER])
    for file in result["files"]:
        for line in file["content"].splitlines():
            if line.startswith("import") and "'./" in line:
                assert ".js'" in line, line


def test_tsconfig_requires_kept_comments_and_standard_decorators() -> None:
    tsconfig = file_content(scaffold_service("user"), "tsconfig.json")
    assert '"removeComments": false' in tsconfig
    assert "REQUIRED" in tsconfig
    # @imqueue 3.x targets standard (TC39) decorators; the legacy flag must stay off.
    assert '"experimentalDecorators": false' in tsconfig


@pytest.mark.parametrize(
    ("returns", "expected"),
    [("User[] | null", ["User"]), ("Promise<Array<Address>>", ["Address"]), ("readonly Tag[]", ["Tag"])],
)
def test_non_primitive_types_are_found_through_wrappers(returns: str, expected: list[str]) -> None:
    result = scaffold_service("user", [{"name": "find", "returns": returns}])
    assert result["types"] == expected
    types_file = file_content(result, "src/types.ts")
    assert "import { classType, property } from '@imqueue/rpc';" in types_file
    assert f"@classType()\nexport class {expected[0]} {{" in types_file


def test_service_file_imports_the_declared_types() -> None:
    method = {"name": "tag", "params": [{"name": "tags", "type": "readonly Tag[]"}], "returns": "User | null"}
    result = scaffold_service("user", [method])
    source = file_content(result, "src/UserService.ts")
    assert result["types"] == ["Tag", "User"]
    assert "import './types.js';" in source
    assert "import type { Tag, User } from './types.js';" in source


def test_no_types_file_when_every_type_is_primitive() -> None:
    method = {"name": "count", "params": [{"name": "since", "type": "Date | null"}], "returns": "number"}
    result = scaffold_service("user", [method])
    assert "src/types.ts" not in paths(result)
    assert result["types"] == []
    assert "types.js" not in file_content(result, "src/UserService.ts")


def test_type_scan_skips_literals_keys_qualified_names_and_builtins() -> None:
    assert complex_type_names("Record<string, Address>") == ["Address"]
    assert complex_type_names("'a' | 'b'") == []
    assert complex_type_names("{ id: string; owner?: Owner }") == ["Owner"]
    assert complex_type_names("userService.User | Map<string, number>") == []


def test_install_and_cli_alternative_point_at_the_real_tools() -> None:
    result = scaffold_service("user")
    assert result["install"].startswith("npm install @imqueue/rpc")
    assert "imq service create user-service" in result["cliAlternative"]
    assert "create_service" in result["cliAlternative"]


def test_service_markdown_contains_every_file_content() -> None:
    result = scaffold_service("user", [GET_USER])
    markdown = render_service_markdown(result)
    for file in result["files"]:
        assert file["path"] in markdown
        assert file["content"].rstrip() in markdown
    assert result["install"] in markdown
    assert result["cliAlternative"] in markdown


def test_backticks_in_a_description_cannot_close_the_markdown_fence() -> None:
    result = scaffold_service("user", [{"name": "get", "description": "Use ```code``` here"}])
    assert "````typescript" in render_service_markdown(result)


# --- scaffold_client -----------------------------------------------------------------


def test_client_facts_follow_the_generator() -> None:
    result = scaffold_client("user-service")
    assert result["service"] == "UserService"
    assert result["output"] == "./src/clients/UserService.ts"
    assert result["generateCommand"] == "imq client generate UserService ./src/clients"
    assert result["namespace"] == "userService"
    assert result["client"] == "UserClient"
    # The tool call that runs that command, into the folder the caller imports from.
    assert result["generate"] == {
        "tool": "generate_client",
        "arguments": {"service": "UserService", "path": "src/clients"},
    }


def test_client_result_has_exactly_the_spec_shape() -> None:
    result = scaffold_client("user")
    assert set(result) == {
        "service",
        "client",
        "generate",
        "namespace",
        "generateCommand",
        "output",
        "example",
        "callTimeoutMs",
        "callTimeoutDefaulted",
        "files",
    }
    assert result["example"]["language"] == "typescript" and result["example"]["path"] == "src/caller.ts"
    # every file the answer shows is listed, the caller first
    assert [file["path"] for file in result["files"]] == ["src/caller.ts", "package.json", "tsconfig.json"]


def test_client_caller_sets_the_asked_call_timeout_or_says_the_default() -> None:
    asked = scaffold_client("user", [GET_USER], call_timeout_ms=2500)
    assert "    callTimeout: 2500,\n};" in asked["example"]["content"]
    assert "times out after 2500 ms (`callTimeout`, as asked)" in render_client_markdown(asked)
    default = scaffold_client("user")
    assert default["callTimeoutDefaulted"] and default["callTimeoutMs"] == 30000
    assert "callTimeout: 30000," in default["example"]["content"]
    assert "the scaffold's default" in render_client_markdown(default)
    with pytest.raises(ScaffoldError, match="call_timeout_ms must be between 1 and"):
        scaffold_client("user", call_timeout_ms=0)


def test_client_example_starts_calls_and_destroys_in_finally() -> None:
    example = scaffold_client("user-service", [GET_USER])["example"]["content"]
    assert "import { userService } from './clients/UserService.js';" in example
    # The generated client's default queue is 'User' (its class name minus 'Client'), and the
    # service listens on 'UserService': checked on the real runtime by test_framework_e2e.
    assert "const client = new userService.UserClient(clientOptions, 'UserService');" in example
    assert "await client.start();" in example
    assert "await client.getUser('example')" in example
    assert "} finally {\n    await client.destroy();\n}" in example
    assert example.index("await client.start();") < example.rindex("try {")


def test_client_markdown_says_generated_from_running_service_and_illustrative() -> None:
    result = scaffold_client("user")
    markdown = render_client_markdown(result)
    assert result["generateCommand"] in markdown
    assert result["example"]["content"].rstrip() in markdown
    assert "running service" in markdown
    assert "never drift" in markdown
    assert "runs as written" in markdown and "IMQ_REDIS" in markdown
    assert all(file["content"].rstrip() in markdown for file in result["files"])
    assert "generate_client" in markdown


def test_client_rejects_bad_service_names() -> None:
    with pytest.raises(ScaffoldError, match="must start with a letter"):
        scaffold_client("9lives")


# --- tool descriptions ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "real_tool"),
    [(SCAFFOLD_SERVICE_DESCRIPTION, "create_service"), (SCAFFOLD_CLIENT_DESCRIPTION, "generate_client")],
)
def test_descriptions_open_read_only_and_point_at_the_writing_tool(description: str, real_tool: str) -> None:
    assert description.startswith("READ-ONLY: returns")
    assert "writes nothing" in description
    assert real_tool in description
    assert len(description.split()) <= 80


def test_comment_terminator_in_a_description_cannot_end_the_doc_block() -> None:
    result = scaffold_service("user", [{"name": "get", "description": "Stops at */ here"}])
    source = file_content(result, "src/UserService.ts")
    assert "Stops at *\\/ here" in source
    assert source.count("*/") == source.count("/**")


# --- package.json and the broker ------------------------------------------------------


@pytest.mark.parametrize(
    "make", [lambda: scaffold_service("user")["files"], lambda: scaffold_client("user")["files"]]
)
def test_each_scaffold_carries_a_package_json_that_installs_what_the_docs_describe(make: Any) -> None:
    (manifest,) = [json.loads(file["content"]) for file in make() if file["path"] == "package.json"]
    assert manifest["type"] == "module" and manifest["engines"] == {"node": ">=22.12"}
    assert manifest["dependencies"] == {"@imqueue/rpc": "^3.7.2", "@imqueue/core": "^3.4.2"}
    assert manifest["devDependencies"] == {"@types/node": "^22.12.0", "typescript": "^5.9.3"}
    assert (
        manifest["scripts"]["build"] == "tsc" and manifest["scripts"]["start"] == f"node {manifest['main']}"
    )
    assert "*" not in json.dumps(manifest)


def test_the_install_line_pins_the_same_versions_as_package_json() -> None:
    result = scaffold_service("user")
    (manifest,) = [json.loads(file["content"]) for file in result["files"] if file["path"] == "package.json"]
    for section in ("dependencies", "devDependencies"):
        for name, spec in manifest[section].items():
            assert f"{name}@{spec}" in result["install"]


@pytest.mark.parametrize(
    "source",
    [
        lambda: file_content(scaffold_service("user"), "src/config.ts"),
        lambda: scaffold_client("user")["example"]["content"],
    ],
    ids=["service", "caller"],
)
def test_service_and_caller_read_the_broker_from_imq_redis_as_the_tutorial_does(source: Any) -> None:
    code = source()
    assert "process.env['IMQ_REDIS'] || `${opts.host}:${opts.port}`" in code
    assert ".split(',')" in code and "instance.trim().split(':')" in code
    assert "return { host, port: Number(port) };" in code and "cluster:" in code
    assert "process.loadEnvFile();" in code  # a .env file, as the tutorial reads it


def test_the_bootstrap_starts_the_service_with_the_broker_options() -> None:
    bootstrap = file_content(scaffold_service("user"), "src/index.ts")
    assert "new UserService(serviceOptions)" in bootstrap and "IMQ_REDIS" in bootstrap
    assert "export const serviceOptions" in file_content(scaffold_service("user"), "src/config.ts")


# --- object-literal types (issue 28) -------------------------------------------------


def test_an_object_literal_return_becomes_an_exposed_class_and_the_method_uses_it() -> None:
    reserve = {
        "name": "reserve",
        "params": [{"name": "sku", "type": "string"}],
        "returns": "Promise<{ sku: string; reserved: number; note?: string }>",
    }
    result = scaffold_service("inventory", [reserve])
    source = next(file["content"] for file in result["files"] if file["path"] == "src/InventoryService.ts")
    types = next(file["content"] for file in result["files"] if file["path"] == "src/types.ts")
    assert "@return {Promise<ReserveResult>}" in source and "): Promise<ReserveResult> {" in source
    assert "@classType()\nexport class ReserveResult {" in types
    assert "    @property('string')\n    sku!: string;" in types
    assert "    @property('number')\n    reserved!: number;" in types
    assert "    @property('string', true)\n    note?: string;" in types
    assert result["types"] == [] and "declared as the class ReserveResult" in result["notes"][0]
    assert "## Object-literal types" in render_service_markdown(result)


def test_an_object_literal_it_cannot_lift_is_left_as_written_and_said() -> None:
    nested = {"name": "tree", "params": [], "returns": "{ node: { id: string } }[]"}
    result = scaffold_service("inventory", [nested])
    source = result["files"][0]["content"]
    assert "Promise<{ node: { id: string } }[]>" in source
    assert len(result["notes"]) == 1 and "describes it as any" in result["notes"][0]


def test_a_generated_class_name_never_collides_with_a_named_type() -> None:
    methods = [
        {"name": "reserve", "params": [], "returns": "ReserveResult"},
        {"name": "reserve2", "params": [], "returns": "{ ok: boolean }"},
    ]
    result = scaffold_service("inventory", methods)
    assert "Reserve2Result" in result["files"][0]["content"]

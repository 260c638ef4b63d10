"""api_diff, get_api's docs side and inspect_project's pointer to the diff, through the SDK's
client over stdio against the real server, on the two real installs (tests/framework1: rpc 1.17.0
and core 2.0.26 from the registry; the 3.x runtime built from ../shared/vendor) and the docs
mirror the tests serve as the sites. What the diff names as only on one side is checked against
the declaration files themselves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from imq_real import CORE1, FRAMEWORK1, INSTALL, RPC1, RPC3, RPC_API, SERVICE_RUNTIME

from imqueue_mcp.server.project.api_diff import same_declaration

from conftest import (
    McpConnection,
    built_snapshot,
    offline_args,
    require_external,
    server_environment,
    stdio_connection,
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpConnection]:
    home = tmp_path_factory.mktemp("home")
    connection = stdio_connection(offline_args(home), server_environment(home), home, "legacy")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def installs() -> None:
    require_external(RPC1.is_dir(), "tests/framework1", "bash .ci/install-framework.sh")
    require_external(RPC3.is_dir(), "the 3.x service runtime", INSTALL)


def declarations(folder: Path) -> str:
    """Every declaration file of an installed package, its own node_modules left out."""
    return "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*.d.ts"))
        if "node_modules" not in p.relative_to(folder).parts
    )


def by_name(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {entry["name"]: entry for entry in entries}


def test_api_diff_on_1x_names_what_the_docs_release_added_changed_and_dropped(
    server: McpConnection, installs: None
) -> None:
    result = server.call("api_diff", {"package": "rpc", "path": str(FRAMEWORK1)})
    assert not result.is_error
    data = result.structured_content
    assert data["found"] and data["via"] == "path"
    assert (data["package"], data["installed"], data["latest"]) == ("@imqueue/rpc", "1.17.0", "3.7.2")
    assert data["migrationGuide"] == "https://imqueue.org/api/#migration-from-2-x-to-3-x"
    assert data["counts"]["signaturesCompared"] > 150 and data["unread"] == []
    added = by_name(data["added"])
    all_1x, all_3x = declarations(RPC1), declarations(RPC3)
    for name, slug in (
        ("IMQClientOptions.callTimeout", "rpc.imqclientoptions.calltimeout/"),
        ("classType", "rpc.classtype/"),
        ("runWithRequest", "rpc.runwithrequest/"),
    ):
        assert added[name]["url"] == RPC_API + slug
        member = name.rsplit(".", 1)[-1]
        assert member not in all_1x and member in all_3x  # the declaration files agree
    changed = by_name(data["changed"])
    remote = changed["remote"]
    assert remote["url"] == RPC_API + "rpc.remote/"
    assert "TypedPropertyDescriptor" in remote["installed"] and remote["latest"].endswith("remote(): any")
    assert "remote(): (target: any" in " ".join(all_1x.split())
    assert "remote(): any" in all_3x
    # never documented, in 1.x as in 3.x: listed as not in the docs, with no page of its own
    removed = by_name(data["removed"])
    assert removed["osUuid"]["url"] is None and "function osUuid" in all_1x
    text = result.content[0].text
    assert text.startswith("# @imqueue/rpc: installed 1.17.0 vs the docs' 3.7.2")
    assert "- IMQClientOptions.callTimeout (property): " + RPC_API in text


def test_api_diff_on_the_docs_release_finds_no_declaration_changed(
    server: McpConnection, installs: None
) -> None:
    data = server.call(
        "api_diff", {"package": "@imqueue/rpc", "path": str(SERVICE_RUNTIME.parent)}
    ).structured_content
    assert data["found"] and data["installed"] == data["latest"] == "3.7.2"
    assert data["added"] == [] and data["changed"] == [] and "migrationGuide" not in data
    assert data["counts"]["signaturesCompared"] >= 180
    # core's too: its enums, whose members the docs list in a table under the bare head
    # (`export declare enum IMQMode`), are the same declarations as installed
    core = server.call(
        "api_diff", {"package": "core", "path": str(SERVICE_RUNTIME.parent)}
    ).structured_content
    assert core["installed"] == core["latest"] == "3.4.2" and core["changed"] == [], core["changed"]


def test_a_declaration_the_docs_give_as_its_head_alone_is_the_same_as_one_with_its_body() -> None:
    assert same_declaration("enum IMQMode { BOTH = 0, WORKER = 1 }", "export declare enum IMQMode")
    assert same_declaration(
        "declare abstract class A<T> extends B { x: T }", "export declare abstract class A<T> extends B"
    )
    assert not same_declaration("enum IMQMode { BOTH = 0 }", "export declare enum IMQMode { BOTH = 1 }")
    assert not same_declaration("declare class A extends C { x: number }", "export declare class A extends B")


def test_api_diff_names_what_the_docs_deprecated_with_the_reason(
    server: McpConnection, installs: None
) -> None:
    data = server.call("api_diff", {"package": "core", "path": str(FRAMEWORK1)}).structured_content
    assert (data["installed"], data["latest"]) == ("2.0.26", "3.4.2")
    deprecated = by_name(data["deprecated"])
    assert deprecated["IMQOptions.verboseExtended"]["url"].endswith("/core.imqoptions.verboseextended/")
    assert "IMQOptions.verbose" in deprecated["IMQOptions.verboseExtended"]["note"]
    all_core1 = declarations(CORE1)
    assert (
        "verboseExtended?: boolean" in all_core1
        and "@deprecated" not in all_core1.split("verboseExtended")[0][-300:]
    )


def test_api_diff_of_a_package_not_installed_says_so(server: McpConnection, installs: None) -> None:
    result = server.call("api_diff", {"package": "pg-cache", "path": str(FRAMEWORK1)})
    assert not result.is_error
    data = result.structured_content
    assert data["found"] is False and data["packages"]["@imqueue/rpc"] == "1.17.0"
    assert data["problems"] == [f"@imqueue/pg-cache is not installed in {FRAMEWORK1}"]
    refused = server.call("api_diff", {"package": "rpc", "path": "relative/dir"})
    assert refused.is_error and "absolute path" in refused.structured_content["error"]["suggestedAction"]


def test_inspect_project_names_the_diff_call_for_an_older_major(
    server: McpConnection, installs: None
) -> None:
    report = server.call("inspect_project", {"path": str(FRAMEWORK1)})
    behind = {item["package"]: item for item in report.structured_content["behindDocs"]}
    call = behind["@imqueue/rpc"]["call"]
    assert call == {"tool": "api_diff", "arguments": {"package": "@imqueue/rpc", "path": str(FRAMEWORK1)}}
    assert f"api_diff(package='@imqueue/rpc', path='{FRAMEWORK1}')" in report.content[0].text
    # the call as given works
    assert server.call(call["tool"], call["arguments"]).structured_content["found"] is True
    current = server.call("inspect_project", {"path": str(SERVICE_RUNTIME.parent)}).structured_content
    assert "behindDocs" not in current


def test_get_api_sets_the_docs_release_beside_the_installed_declaration(
    server: McpConnection, installs: None
) -> None:
    changed = server.call("get_api", {"symbol": "remote", "path": str(FRAMEWORK1)}).structured_content
    assert changed["symbol"]["version"] == "1.17.0"
    assert changed["latest"]["url"] == RPC_API + "rpc.remote/" and changed["latest"]["version"] == "3.7.2"
    assert changed["latest"]["signature"] == "export declare function remote(): any"
    assert changed["difference"]["status"] == "signature-changed"
    missing = server.call("get_api", {"symbol": "IMQClientOptions.callTimeout", "path": str(FRAMEWORK1)})
    data = missing.structured_content
    assert data["found"] is False and data["difference"]["status"] == "not-installed"
    assert data["latest"]["signature"] == "callTimeout?: number"
    assert "## Difference: not-installed" in missing.content[0].text
    same = server.call("get_api", {"symbol": "IMQClient.create", "path": str(SERVICE_RUNTIME.parent)})
    assert same.structured_content["difference"]["status"] == "same"
    only = server.call("get_api", {"symbol": "osUuid", "path": str(FRAMEWORK1)}).structured_content
    assert only["difference"]["status"] == "installed-only" and "latest" not in only


def test_without_the_pages_the_diff_compares_names_and_says_why_not_declarations(
    installs: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    snapshot = built_snapshot(tmp_path_factory.mktemp("snapshot"), pages=False)
    home = tmp_path_factory.mktemp("home")
    args = ["--offline", "--snapshot", str(snapshot)]  # no saved pages, and the site not asked
    connection = stdio_connection(args, server_environment(home), home, "legacy")
    try:
        data = connection.call("api_diff", {"package": "rpc", "path": str(FRAMEWORK1)}).structured_content
        assert data["found"] and "IMQClientOptions.callTimeout" in by_name(data["added"])
        assert data["changed"] == [] and data["counts"]["signaturesCompared"] == 0
        assert "signatures not read" in data["unread"][0] and "--offline" in data["unread"][0]
        again = connection.call("api_diff", {"package": "rpc", "path": str(FRAMEWORK1)}).structured_content
        assert "not asked again yet" in again["unread"][0]
    finally:
        connection.close()


SITE_API = Path(__file__).resolve().parents[2] / "shared" / "site" / "imqueue.org" / "api"


def page_signatures(package: str, stem: str) -> list[str]:
    """The `**Signature:**` of a symbol's page and of its overloads' pages (stem, stem_1, ...)."""
    from imqueue_mcp.docsource.api_pages import page_signature

    pages = sorted((SITE_API / package / "latest").glob(f"{stem}*.md"))
    found = [
        page_signature(p.read_text(encoding="utf-8"))
        for p in pages
        if p.stem == stem or p.stem.startswith(f"{stem}_")
    ]
    return [signature for signature in found if signature]


def test_overloads_and_enum_keyed_members_declared_as_the_docs_give_them_are_the_same(
    server: McpConnection, tmp_path: Path
) -> None:
    """A project whose declarations are the docs' own Signature lines: PgPubSub.on's ten overloads
    (one page each: on, on_1 ... on_9) and @imqueue/net's `readonly [NetworkType.IPV4]` members
    (pages Networks.ipv4 / ipv6) compare as the same declarations, never changed, added or removed."""
    overloads = page_signatures("pg-pubsub", "pg-pubsub.pgpubsub.on")
    assert len(overloads) == 10
    scope = tmp_path / "node_modules" / "@imqueue"
    (tmp_path / "package.json").write_text('{"name": "app", "dependencies": {}}')
    for name, version, dts in (
        (
            "pg-pubsub",
            "3.0.7",
            "export declare interface PgPubSub {\n" + "".join(f"    {s};\n" for s in overloads) + "}\n",
        ),
        (
            "net",
            "3.1.0",
            'export declare enum NetworkType {\n    IPV4 = "ipv4",\n    IPV6 = "ipv6"\n}\n'
            "export declare class Networks {\n"
            + "".join(f"    {s};\n" for s in page_signatures("net", "net.networks.ipv4"))
            + "".join(f"    {s};\n" for s in page_signatures("net", "net.networks.ipv6"))
            + "}\n",
        ),
    ):
        (scope / name).mkdir(parents=True)
        (scope / name / "package.json").write_text(f'{{"name": "@imqueue/{name}", "version": "{version}"}}')
        (scope / name / "index.d.ts").write_text(dts)
    on = server.call("get_api", {"symbol": "PgPubSub.on", "package": "pg-pubsub", "path": str(tmp_path)})
    assert on.structured_content["difference"]["status"] == "same", on.content[0].text
    assert on.structured_content["latest"]["signature"].count("\n") >= 5  # every page, cut at 400 characters
    net = server.call("api_diff", {"package": "net", "path": str(tmp_path)}).structured_content
    removed = {entry["name"] for entry in net["removed"]}
    added = {entry["name"] for entry in net["added"]}
    assert not {"Networks.ipv4", "Networks.ipv6"} & (added | removed), (added, removed)
    assert "Networks.[NetworkType.IPV4]" not in removed
    assert not {entry["name"] for entry in net["changed"]} & {"Networks.ipv4", "Networks.ipv6"}

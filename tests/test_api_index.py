"""The installed API index (server/project/api_index.py, api_diff.py) on two real installs:
tests/framework1 (@imqueue/rpc 1.17.0 from the registry, npm ci) and the 3.x service runtime
built from ../shared/vendor (rpc 3.7.2 on core 3.4.2, .ci/install-imq.sh). Every answer is
checked against the declaration files themselves."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from imq_real import INSTALL, SERVICE_RUNTIME

from imqueue_mcp.server.project import api_diff, api_index

from conftest import require_external

REPO = Path(__file__).resolve().parent.parent
FRAMEWORK1 = REPO / "tests" / "framework1"
RUNTIME3 = SERVICE_RUNTIME.parent

# 20+ symbols each, written from the .d.ts files: classes, interfaces, functions, members.
SYMBOLS_1X = [
    "IMQClient",
    "IMQClient.create",
    "IMQClient.remoteCall",
    "IMQClient.start",
    "IMQClient.stop",
    "IMQClient.destroy",
    "IMQService",
    "IMQService.start",
    "IMQService.stop",
    "IMQService.describe",
    "IMQClientOptions",
    "IMQClientOptions.timeout",
    "IMQServiceOptions",
    "IMQRPCError",
    "IMQRPCRequest",
    "IMQRPCResponse",
    "remote",
    "expose",
    "lock",
    "cache",
    "property",
    "IMQLock",
    "IMQDelay",
    "Description",
    "DEFAULT_IMQ_CLIENT_OPTIONS",
]
SYMBOLS_3X = SYMBOLS_1X + ["IMQClientOptions.callTimeout", "classType", "IMQClient.hostName"]


def _index(root: Path, name: str) -> api_index.PackageIndex:
    packages, _problems = api_index.installed_packages(root)
    matches = [p for p in packages if p.name == name]
    assert matches, f"{name} not found under {root}: {[p.name for p in packages]}"
    return api_index.index_package(matches[0])


@pytest.fixture(scope="module")
def rpc1() -> api_index.PackageIndex:
    require_external(
        (FRAMEWORK1 / "node_modules" / "@imqueue" / "rpc").is_dir(),
        "tests/framework1",
        "bash .ci/install-framework.sh",
    )
    return _index(FRAMEWORK1, "@imqueue/rpc")


@pytest.fixture(scope="module")
def rpc3() -> api_index.PackageIndex:
    require_external((SERVICE_RUNTIME / "@imqueue" / "rpc").is_dir(), "the 3.x service runtime", INSTALL)
    return _index(RUNTIME3, "@imqueue/rpc")


def _check_against_file(index: api_index.PackageIndex, root: Path, name: str) -> None:
    sym, near = api_index.resolve(index, name)
    assert sym is not None, (name, near)
    assert sym.name == name
    packages, _ = api_index.installed_packages(root)
    folder = next(p.path for p in packages if p.name == index.name)
    text = (folder / sym.file).read_text(encoding="utf-8")
    member = name.rsplit(".", 1)[-1]
    assert member in sym.signature and member in text
    # the signature's words are the declaration's own (whitespace collapsed)
    flat = " ".join(text.split())
    first = sym.signature.splitlines()[0]
    assert first.split("(")[0].split("<")[0].strip() in flat
    if sym.doc.summary:
        assert sym.doc.summary.splitlines()[0].strip() in text


@pytest.mark.parametrize("name", SYMBOLS_1X)
def test_installed_1x_symbols_match_their_declaration(rpc1: api_index.PackageIndex, name: str) -> None:
    assert rpc1.version == "1.17.0"
    _check_against_file(rpc1, FRAMEWORK1, name)


@pytest.mark.parametrize("name", SYMBOLS_3X)
def test_installed_3x_symbols_match_their_declaration(rpc3: api_index.PackageIndex, name: str) -> None:
    assert rpc3.version == "3.7.2"
    _check_against_file(rpc3, RUNTIME3, name)


def test_doc_tags_are_read(rpc3: api_index.PackageIndex) -> None:
    timeout = rpc3.symbols["IMQClientOptions.timeout"]
    assert timeout.doc.default == "30000"
    assert "callTimeout" in timeout.doc.remarks
    create = rpc3.symbols["IMQClient.create"]
    assert set(create.doc.params) == {"name", "options"}
    assert create.doc.returns.startswith("the generated namespace object")


def test_fuzzy_and_dotted_names_resolve(rpc3: api_index.PackageIndex) -> None:
    for query in ("IMQClientOptions.timeout", "imqclientoptions timeout", "IMQCLIENTOPTIONS.TIMEOUT"):
        sym, _ = api_index.resolve(rpc3, query)
        assert sym is not None and sym.name == "IMQClientOptions.timeout"
    sym, near = api_index.resolve(rpc3, "IMQClientOptons")
    assert sym is None and "IMQClientOptions" in near


def test_diff_names_symbols_of_one_major_only(
    rpc1: api_index.PackageIndex, rpc3: api_index.PackageIndex
) -> None:
    result = api_diff.diff(rpc1, rpc3).as_dict()
    assert result["migration_guide"].startswith("https://imqueue.org/")
    assert "IMQClientOptions.callTimeout" in result["added"]
    assert "classType" in result["added"]
    folder1 = FRAMEWORK1 / "node_modules" / "@imqueue" / "rpc"
    all_1x = " ".join(
        p.read_text(encoding="utf-8")
        for p in folder1.rglob("*.d.ts")
        if "node_modules" not in p.relative_to(folder1).parts
    )
    # what the diff calls new is absent from every 1.x declaration file, and present in 3.x
    for name in ("callTimeout", "classType", "runWithRequest"):
        assert name not in all_1x
    for name in result["added"]:
        assert name not in rpc1.symbols and name in rpc3.symbols
    for entry in result["changed"]:
        assert rpc1.symbols[entry["name"]].signature != rpc3.symbols[entry["name"]].signature
    # comments inside type literals do not count as a change
    assert all("/*" not in e["latest"] for e in result["changed"])


def test_bad_input_gives_problems_not_tracebacks(tmp_path: Path) -> None:
    packages, problems = api_index.installed_packages(tmp_path)
    assert packages == [] and "npm install" in problems[0]
    scope = tmp_path / "node_modules" / "@imqueue"
    bad = scope / "bad"
    bad.mkdir(parents=True)
    (bad / "package.json").write_text('{"name": "@imqueue/bad", "version": "1.0.0"}')
    (bad / "index.d.ts").write_text(
        "export declare class Good { ok(): void; }\nexport declare class {{{ ((( \n"
    )
    (bad / "huge.d.ts").write_bytes(b"//" + b"x" * (api_index.MAX_DTS_BYTES + 1))
    empty = scope / "empty"
    empty.mkdir()
    (empty / "package.json").write_text('{"name": "@imqueue/empty", "version": "2.0.0"}')
    os.symlink(tmp_path / "node_modules", bad / "node_modules")  # a loop
    (bad / "node_modules").resolve()
    packages, problems = api_index.installed_packages(tmp_path)
    assert sorted(p.name for p in packages) == ["@imqueue/bad", "@imqueue/empty"]
    index = api_index.index_package(next(p for p in packages if p.name == "@imqueue/bad"))
    assert "Good.ok" in index.symbols  # the part that parses
    assert any("syntax errors" in p for p in index.problems)
    assert any("huge.d.ts" in p and "not read" in p for p in index.problems)
    empty_index = api_index.index_package(next(p for p in packages if p.name == "@imqueue/empty"))
    assert empty_index.symbols == {} and "no declaration files" in empty_index.problems[0]


def test_a_declaration_that_is_not_a_regular_file_is_named_not_read(tmp_path: Path) -> None:
    """search_docs indexes the installed packages on every call with a project in reach: a .d.ts
    linked to /dev/zero (endless, `stat` says 0 bytes) or a FIFO (a read waits for a writer)
    must cost a line in problems, never a hang."""
    package = tmp_path / "node_modules" / "@imqueue" / "odd"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@imqueue/odd", "version": "1.0.0"}')
    (package / "index.d.ts").write_text("export declare function fine(): void;\n")
    os.symlink("/dev/zero", package / "zero.d.ts")
    os.mkfifo(package / "pipe.d.ts")
    packages, _ = api_index.installed_packages(tmp_path)
    index = api_index.index_package(packages[0])
    assert "fine" in index.symbols
    for name in ("zero.d.ts", "pipe.d.ts"):
        assert any(p.startswith(name) and "not a regular file" in p for p in index.problems)


def test_a_class_merged_with_an_interface_of_its_name_is_the_class(tmp_path: Path) -> None:
    """TypeScript's declaration merging, as @imqueue/pg-pubsub types its events: an interface
    declaring the event overloads beside the class of the same name. The index has the class,
    its doc comment, and the members of both."""
    package = tmp_path / "node_modules" / "@imqueue" / "merged"
    (package / "src").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@imqueue/merged", "version": "1.0.0"}')
    (package / "src" / "Hub.d.ts").write_text(
        "import { EventEmitter } from 'events';\n"
        "export declare interface Hub {\n"
        "    on(event: 'connect', listener: () => void): this;\n"
        "    on(event: 'end', listener: () => void): this;\n"
        "}\n"
        "/**\n * Listens to channels and emits what arrives.\n */\n"
        "export declare class Hub extends EventEmitter {\n"
        "    listen(channel: string): Promise<void>;\n"
        "}\n"
        "export declare interface Later { a(): void; }\n"
        "/** The second declaration's doc. */\n"
        "export declare interface Later { b(): void; }\n"
    )
    packages, _ = api_index.installed_packages(tmp_path)
    index = api_index.index_package(packages[0])
    hub = index.symbols["Hub"]
    assert (hub.kind, hub.signature) == ("class", "class Hub extends EventEmitter")
    assert hub.doc.summary == "Listens to channels and emits what arrives."
    assert index.symbols["Hub.on"].signature.count("\n") == 1  # both overloads
    assert "Hub.listen" in index.symbols
    later = index.symbols["Later"]
    assert later.kind == "interface" and later.doc.summary == "The second declaration's doc."
    assert {"Later.a", "Later.b"} <= set(index.symbols)


def test_a_hook_or_constructor_interface_shows_the_signature_to_write(rpc3: api_index.PackageIndex) -> None:
    # audit 13: the header alone (`interface IMQBeforeCall<_T>`) hid that a hook returns a Promise
    before = rpc3.symbols["IMQBeforeCall"].signature
    assert (
        before
        == "interface IMQBeforeCall<_T> { (req?: IMQRPCRequest, res?: IMQRPCResponse): Promise<void>; }"
    )
    assert "next: () => Promise<any>" in rpc3.symbols["IMQWrapCall"].signature
    assert rpc3.symbols["ICacheConstructor"].signature.endswith("{ new (name?: string): ICache; }")
    assert (
        rpc3.symbols["IMQClient"].signature == "abstract class IMQClient extends EventEmitter"
    )  # a class: its header


def test_only_what_the_entry_points_re_export_is_the_installed_api(
    tmp_path: Path, rpc3: api_index.PackageIndex
) -> None:
    # a helper module nothing re-exports cannot be imported (ERR_PACKAGE_PATH_NOT_EXPORTED, TS2305)
    assert "IMQClient" in rpc3.symbols and "signature" not in rpc3.symbols and "pid" not in rpc3.symbols
    package = tmp_path / "node_modules" / "@imqueue" / "shaped"
    (package / "src" / "helpers").mkdir(parents=True)
    (package / "package.json").write_text(
        '{"name": "@imqueue/shaped", "version": "1.0.0", "exports": {".": {"types": "./index.d.ts"}}}'
    )
    (package / "index.d.ts").write_text("export * from './src/index.js';\nexport * from 'node:events';\n")
    (package / "src" / "index.d.ts").write_text(
        "export { Queue } from './Queue.js';\nexport * as util from './util/index.js';\n"
    )
    (package / "src" / "Queue.d.ts").write_text("export declare class Queue { send(): void; }\n")
    (package / "src" / "util").mkdir()
    (package / "src" / "util" / "index.d.ts").write_text(
        "export declare function backoff(n: number): number;\n"
    )
    (package / "src" / "helpers" / "pack.d.ts").write_text(
        "export declare function pack(x: unknown): string;\n"
    )
    packages, _ = api_index.installed_packages(tmp_path)

    index = api_index.index_package(packages[0])

    assert {"Queue", "Queue.send", "backoff"} <= set(index.symbols) and "pack" not in index.symbols


CLASS = "export declare class Widget { run(): void; }\n"


@pytest.mark.parametrize(
    ("manifest", "files"),
    [
        (
            {"types": "index.d.ts"},
            {"index.d.ts": "import { Widget } from './src/w';\nexport { Widget };\n", "src/w.d.ts": CLASS},
        ),
        (
            {"types": "index.d.ts"},
            {
                "index.d.ts": "import W = require('./src/w');\nexport = W;\n",
                "src/w.d.ts": CLASS.replace("export ", "") + "export = Widget;\n",
            },
        ),
        (
            {"exports": {".": {"types": "./a.d.ts"}, "./testing": "./dist/testing.js"}},
            {"a.d.ts": "export {};\n", "dist/testing.d.ts": CLASS},
        ),
        (
            {"exports": {".": {"types": {"import": "./dist/index.d.mts"}}}},
            {"dist/index.d.mts": "export * from './w.mjs';\n", "dist/w.d.mts": CLASS},
        ),
        (
            {"types": "a.d.ts", "typesVersions": {"*": {"sub": ["dist/w.d.ts"]}}},
            {"a.d.ts": "export {};\n", "dist/w.d.ts": CLASS},
        ),
        (
            {"types": "index.d.ts"},
            {
                "dist/index.d.ts": "export * from './src';\n",
                "dist/src/index.d.ts": CLASS,
                "index.d.ts": "->dist/index.d.ts",
            },
        ),
        (
            {"types": "index.d.ts"},
            {
                "index.d.ts": "import { Widget } from './w';\nexport declare class Hub { w: Widget; }\n",
                "w.d.ts": CLASS,
            },
        ),
    ],
    ids=[
        "import-then-export",
        "export-equals",
        "subpath-js",
        "types-conditions",
        "typesVersions",
        "linked-entry",
        "named-type",
    ],
)
def test_what_reaches_an_importer_by_any_route_is_public(
    tmp_path: Path, manifest: dict[str, object], files: dict[str, str]
) -> None:
    # audit 14: layouts the first entry-point reading lost (each was public API)
    package = tmp_path / "node_modules" / "@imqueue" / "routes"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "@imqueue/routes", "version": "1.0.0", **manifest})
    )
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("->"):
            (package / name).symlink_to(package / text[2:])
        else:
            (package / name).write_text(text)
    api_index._CACHE.clear()
    packages, _ = api_index.installed_packages(tmp_path)

    assert "Widget" in api_index.index_package(packages[0]).symbols


def test_parse_time_per_package_is_recorded(
    rpc1: api_index.PackageIndex, rpc3: api_index.PackageIndex
) -> None:
    for index in (rpc1, rpc3):
        assert index.files > 10 and len(index.symbols) > 100
        assert index.parse_seconds > 0


def test_pnpm_store_and_nested_copies_are_found(tmp_path: Path) -> None:
    require_external(
        (FRAMEWORK1 / "node_modules" / "@imqueue" / "rpc").is_dir(),
        "tests/framework1",
        "bash .ci/install-framework.sh",
    )
    real = (FRAMEWORK1 / "node_modules" / "@imqueue").resolve()
    # pnpm: node_modules/@imqueue/rpc -> .pnpm/@imqueue+rpc@1.17.0/node_modules/@imqueue/rpc
    store = tmp_path / "node_modules" / ".pnpm" / "@imqueue+rpc@1.17.0" / "node_modules" / "@imqueue"
    store.mkdir(parents=True)
    os.symlink(real / "rpc", store / "rpc")
    os.symlink(real / "core", store / "core")
    (tmp_path / "node_modules" / "@imqueue").mkdir()
    os.symlink(store / "rpc", tmp_path / "node_modules" / "@imqueue" / "rpc")
    # a nested copy of core under another package
    nested = tmp_path / "node_modules" / "other" / "node_modules" / "@imqueue"
    nested.mkdir(parents=True)
    os.symlink(SERVICE_RUNTIME / "@imqueue" / "core", nested / "core")
    packages, problems = api_index.installed_packages(tmp_path)
    found = {(p.name, p.version) for p in packages}
    assert ("@imqueue/rpc", "1.17.0") in found and ("@imqueue/core", "2.0.26") in found
    if (SERVICE_RUNTIME / "@imqueue" / "core").is_dir():
        assert ("@imqueue/core", "3.4.2") in found
    assert not [p for p in problems if "looping" in p]


def test_the_migration_guide_is_offered_only_for_the_framework_behind_the_docs(tmp_path: Path) -> None:
    """The guide is core's and rpc's 2.x -> 3.x: another package at another major, or one ahead
    of the docs, is told where it stands instead (api_diff's installedIs)."""
    from imqueue_mcp.docsource.api_pages import DocumentedSymbol
    from imqueue_mcp.server.project.api_text import render_diff

    documented = {"f": DocumentedSymbol("f", "function", "https://imqueue.org/api/x/latest/x.f/", "", False)}
    for name, version, latest, guide, order in (
        ("@imqueue/rpc", "1.17.0", "3.7.2", True, "older"),
        ("@imqueue/pg-cache", "6.0.1", "5.1.2", False, "newer"),
        ("@imqueue/datadog", "2.0.0", "3.2.1", False, "older"),
        ("@imqueue/rpc", "3.6.0", "3.7.2", False, None),
    ):
        index = api_index.PackageIndex(name, version)
        index.symbols["g"] = api_index.ApiSymbol(
            "g", "function", "function g(): void", api_index.DocComment(), "x.d.ts"
        )
        data = api_diff.against_docs(index, documented, latest)
        assert ("migrationGuide" in data, data.get("installedIs")) == (guide, order), name
        text = render_diff({"found": True, **data})
        if order == "newer":
            assert "newer major than the docs" in text and "added since the docs' release" in text
        if order == "older" and not guide:
            assert f"npm install {name}@^{latest}" in text

"""server.project on literal files: what a project uses, at which versions, and what it breaks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from imqueue_mcp.server.project.reader import (
    URL_DECORATORS,
    URL_DOC_BLOCKS,
    URL_ESM,
    URL_EXCLUSIVE,
    URL_MIGRATION,
    URL_PREREQUISITES,
    ProjectReader,
    find_project,
    inspect,
    lowest_major,
    major_mismatches,
    major_of,
    parse_jsonc,
    read_project,
    version_note,
)

from fixtures.projects import FINDINGS, PROJECTS, write_project

STATUS: dict[str, Any] = {
    "framework": {"node": "22.12 or newer", "redis": "3.2 or newer (6.2+ for safe delivery)"},
    "packages": [
        {
            "name": "rpc",
            "scoped": "@imqueue/rpc",
            "version": "3.7.2",
            "docs": "https://imqueue.org/api/rpc/latest/",
        },
        {"name": "core", "scoped": "@imqueue/core", "version": "3.4.2"},
        {"name": "opentelemetry", "scoped": "@imqueue/opentelemetry", "version": "4.1.1"},
        {
            "name": "datadog",
            "scoped": "@imqueue/datadog",
            "version": "3.2.1",
            "docs": "https://imqueue.org/api/datadog/latest/",
        },
        {"name": "pg-cache", "scoped": "@imqueue/pg-cache", "version": "5.1.2"},
    ],
}


def findings_of(report: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(finding["id"], finding.get("package")) for finding in report["findings"]}


# --- tolerant JSON -------------------------------------------------------------------


def test_jsonc_drops_comments_and_trailing_commas_but_keeps_slashes_inside_strings() -> None:
    text = '{\n // line\n "a": "http://x/*y*/", /* block */ "b": [1, 2,],\n "c": "q\\"//",\n}'
    assert parse_jsonc(text) == {"a": "http://x/*y*/", "b": [1, 2], "c": 'q"//'}


def test_jsonc_still_refuses_what_is_not_json() -> None:
    with pytest.raises(ValueError):
        parse_jsonc("{ compilerOptions: }")


# --- versions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "major"),
    [
        ("^1.2.0", 1),
        ("~2.0", 2),
        (">=2 <4", 2),
        ("1.x", 1),
        ("3", 3),
        ("^3.7.2 || ^2.0.0", 2),
        ("*", None),
        ("latest", None),
        ("file:../rpc", None),
        ("git+https://github.com/imqueue/rpc.git#v1.2.0", None),
    ],
)
def test_lowest_major_of_a_range_is_the_oldest_major_it_admits(spec: str, major: int | None) -> None:
    assert lowest_major(spec) == major


def test_major_of_a_version_reads_its_leading_number() -> None:
    assert (major_of("1.10.3"), major_of("v12.0.0"), major_of("latest")) == (1, 12, None)


# --- reading a project -----------------------------------------------------------------


def test_installed_version_wins_over_lockfile_and_range(tmp_path: Path) -> None:
    project = read_project(write_project("rpc_one", tmp_path))
    (rpc,) = project.packages
    assert (rpc.name, rpc.declared, rpc.locked, rpc.installed, rpc.major) == (
        "@imqueue/rpc",
        "^1.10.0",
        "1.10.3",
        "1.10.3",
        1,
    )


def test_transitive_packages_of_the_lockfile_are_not_counted_as_used(tmp_path: Path) -> None:
    project = read_project(write_project("rpc_one", tmp_path))
    assert [package.name for package in project.packages] == ["@imqueue/rpc"]  # core is only locked


def test_lockfile_v3_gives_top_level_versions_not_nested_ones(tmp_path: Path) -> None:
    project = read_project(write_project("current", tmp_path))
    core = project.uses("@imqueue/core")
    assert core is not None and core.locked == "3.4.2" and core.installed is None


def test_range_alone_gives_its_lowest_major(tmp_path: Path) -> None:
    project = read_project(write_project("both_tracers", tmp_path))
    datadog = project.uses("@imqueue/datadog")
    assert datadog is not None and datadog.version == "~3.2.0" and datadog.major == 3


def test_tsconfig_extends_chain_is_followed_and_the_file_itself_wins(tmp_path: Path) -> None:
    write_project("current", tmp_path)
    (tmp_path / "tsconfig.base.json").write_text(
        '{"compilerOptions": {"removeComments": true, "experimentalDecorators": true,},}'
    )
    (tmp_path / "tsconfig.json").write_text(
        '{"extends": "./tsconfig.base.json", "compilerOptions": {"removeComments": false, "lib": ["esnext"]}}'
    )
    project = read_project(tmp_path)
    assert project.compiler_options == {
        "removeComments": False,
        "experimentalDecorators": True,
        "lib": ["esnext"],
    }
    assert findings_of(inspect(project, STATUS)) == {("legacy-decorators", None)}


def test_an_extends_symlink_loop_is_reported_not_fatal(tmp_path: Path) -> None:
    write_project("current", tmp_path)
    (tmp_path / "loop.json").symlink_to(tmp_path / "loop.json")
    (tmp_path / "tsconfig.json").write_text(
        '{"extends": "./loop.json", "compilerOptions": {"lib": ["esnext"]}}'
    )
    report = inspect(read_project(tmp_path), STATUS)
    assert any("./loop.json" in problem for problem in report["problems"])
    assert findings_of(report) == set()


def test_a_missing_extends_target_is_reported_not_fatal(tmp_path: Path) -> None:
    write_project("current", tmp_path)
    (tmp_path / "tsconfig.json").write_text('{"extends": "@tsconfig/node22/tsconfig.json"}')
    report = inspect(read_project(tmp_path), STATUS)
    assert any("@tsconfig/node22/tsconfig.json" in problem for problem in report["problems"])


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("package.json", "{not json"),
        ("package.json", "[1, 2]"),
        ("package-lock.json", "\x00\x01"),
        ("tsconfig.json", '{"compilerOptions": {'),
        ("tsconfig.json", "\ufeff// only a comment\n"),
    ],
)
def test_a_malformed_file_is_named_in_problems_and_never_raises(tmp_path: Path, name: str, text: str) -> None:
    write_project("current", tmp_path)
    (tmp_path / name).write_text(text, "utf-8")
    report = inspect(read_project(tmp_path), STATUS)
    assert any(str(tmp_path / name) in problem for problem in report["problems"]), report["problems"]


def test_find_project_walks_up_from_a_subfolder_and_finds_nothing_without_one(tmp_path: Path) -> None:
    write_project("current", tmp_path / "svc")
    (tmp_path / "svc" / "src" / "deep").mkdir(parents=True)
    found = find_project([tmp_path / "empty-does-not-exist", tmp_path / "svc" / "src" / "deep"])
    assert found is not None and found.root == (tmp_path / "svc").resolve()
    (tmp_path / "alone").mkdir()
    assert find_project([tmp_path / "alone"]) is None


# --- the three fixture projects: exactly their findings --------------------------------


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_each_fixture_project_reports_exactly_its_findings(tmp_path: Path, name: str) -> None:
    report = inspect(read_project(write_project(name, tmp_path)), STATUS)
    assert findings_of(report) == FINDINGS[name]
    assert all(finding["url"].startswith("https://imqueue.org/") for finding in report["findings"])


def test_findings_cite_the_page_that_states_each_rule(tmp_path: Path) -> None:
    legacy = inspect(read_project(write_project("rpc_one", tmp_path / "a")), STATUS)
    urls = {finding["id"]: finding["url"] for finding in legacy["findings"]}
    assert urls == {
        "other-major": URL_MIGRATION,
        "remove-comments": URL_DOC_BLOCKS,
        "legacy-decorators-off": URL_MIGRATION,
    }
    pair = inspect(read_project(write_project("both_tracers", tmp_path / "b")), STATUS)
    assert [finding["url"] for finding in pair["findings"]] == [URL_EXCLUSIVE, URL_ESM]
    assert "@imqueue/opentelemetry" in pair["findings"][0]["message"]
    assert "@imqueue/datadog" in pair["findings"][0]["message"]


def test_packages_are_reported_beside_the_documented_version(tmp_path: Path) -> None:
    report = inspect(read_project(write_project("current", tmp_path)), STATUS)
    assert {package["name"]: package["documented"] for package in report["packages"]} == {
        "@imqueue/core": "3.4.2",
        "@imqueue/opentelemetry": "4.1.1",
        "@imqueue/rpc": "3.7.2",
    }
    assert report["node"] == {"declared": ">=22.12.0", "floor": "22.12 or newer"}
    assert report["redis"]["checked"] is False and report["redis"]["url"] == URL_PREREQUISITES


def test_an_engines_node_below_the_floor_is_a_finding(tmp_path: Path) -> None:
    write_project("current", tmp_path)
    manifest = json.loads((tmp_path / "package.json").read_text())
    manifest["engines"]["node"] = ">=18 || >=22.12"
    (tmp_path / "package.json").write_text(json.dumps(manifest))
    report = inspect(read_project(tmp_path), STATUS)
    assert findings_of(report) == {("node-floor", None)}
    (finding,) = report["findings"]
    assert finding["url"] == URL_PREREQUISITES and ">=22.12.0" in finding["message"]


def test_no_lib_and_a_target_before_esnext_lacks_the_decorator_metadata_types(tmp_path: Path) -> None:
    write_project("current", tmp_path)
    (tmp_path / "tsconfig.json").write_text('{"compilerOptions": {"target": "es2022"}}')
    report = inspect(read_project(tmp_path), STATUS)
    assert findings_of(report) == {("decorators-lib", None)}
    assert report["findings"][0]["url"] == URL_DECORATORS


def test_without_status_facts_versions_are_not_judged(tmp_path: Path) -> None:
    report = inspect(read_project(write_project("rpc_one", tmp_path)), None)
    assert findings_of(report) == {("remove-comments", None), ("legacy-decorators-off", None)}
    assert report["packages"][0]["documented"] is None


# --- the one-line version note ---------------------------------------------------------


def test_version_note_names_both_versions_in_one_line(tmp_path: Path) -> None:
    project = read_project(write_project("rpc_one", tmp_path))
    note = version_note(major_mismatches(project, STATUS, {"@imqueue/rpc"}))
    assert note is not None and "\n" not in note
    assert "@imqueue/rpc 1.10.3" in note and "3.7.2" in note


def test_version_note_is_absent_for_packages_at_the_documented_major(tmp_path: Path) -> None:
    project = read_project(write_project("rpc_one", tmp_path))
    assert version_note(major_mismatches(project, STATUS, {"@imqueue/core"})) is None
    current = read_project(write_project("current", tmp_path / "current"))
    assert version_note(major_mismatches(current, STATUS)) is None


# --- the reader's cache ----------------------------------------------------------------


def test_reader_reuses_a_project_until_a_file_it_read_changes(tmp_path: Path) -> None:
    write_project("rpc_one", tmp_path)
    reader = ProjectReader()
    first = reader.find([tmp_path])
    assert first is not None and reader.find([tmp_path]) is first
    installed = tmp_path / "node_modules" / "@imqueue" / "rpc" / "package.json"
    installed.write_text('{"name": "@imqueue/rpc", "version": "3.7.2"}\n')  # npm upgraded it
    upgraded = reader.find([tmp_path])
    assert upgraded is not first and upgraded is not None
    assert upgraded.packages[0].installed == "3.7.2"
    (tmp_path / "tsconfig.json").unlink()
    without = reader.find([tmp_path])
    assert without is not None and without.tsconfig is None


def test_reader_follows_a_changed_extends_target(tmp_path: Path) -> None:
    write_project("current", tmp_path)
    (tmp_path / "base.json").write_text('{"compilerOptions": {"removeComments": false}}')
    (tmp_path / "tsconfig.json").write_text(
        '{"extends": "./base.json", "compilerOptions": {"lib": ["esnext"]}}'
    )
    reader = ProjectReader()

    def findings_now() -> set[tuple[str, str | None]]:
        found = reader.find([tmp_path])
        assert found is not None
        return findings_of(inspect(found, STATUS))

    assert findings_now() == set()
    (tmp_path / "base.json").write_text('{"compilerOptions": {"removeComments": true}}')
    assert findings_now() == {("remove-comments", None)}


# --- advice follows the installed major; duplicate copies ------------------------------


def write_tree(root: Path, files: dict[str, Any]) -> Path:
    """A project tree on disk: relative path -> JSON data (or text)."""
    for relative, content in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content if isinstance(content, str) else json.dumps(content, indent=2), "utf-8")
    return root


def installed_tree(
    root: Path, rpc: str, core: str, compiler_options: dict[str, Any], **manifest: Any
) -> Path:
    return write_tree(
        root,
        {
            "package.json": {
                "name": "svc",
                **manifest,
                "dependencies": {"@imqueue/rpc": f"^{rpc}", "@imqueue/core": f"^{core}"},
            },
            "node_modules/@imqueue/rpc/package.json": {"name": "@imqueue/rpc", "version": rpc},
            "node_modules/@imqueue/core/package.json": {"name": "@imqueue/core", "version": core},
            "tsconfig.json": {"compilerOptions": {"removeComments": False, **compiler_options}},
        },
    )


LEGACY_OPTIONS: dict[str, Any] = {
    "target": "es2017",
    "module": "commonjs",
    "experimentalDecorators": True,
    "emitDecoratorMetadata": True,
}
STANDARD_OPTIONS: dict[str, Any] = {
    "target": "es2024",
    "lib": ["es2024", "esnext.decorators"],
    "module": "nodenext",
}


def advice(report: dict[str, Any]) -> str:
    return " ".join(finding["message"] for finding in report["findings"])


def test_rpc_1x_installed_keeps_its_legacy_decorators_and_is_never_told_to_remove_them(
    tmp_path: Path,
) -> None:
    report = inspect(read_project(installed_tree(tmp_path, "1.17.0", "2.0.26", LEGACY_OPTIONS)), STATUS)
    assert report["framework"] == {"major": 1, "decorators": "legacy"}
    assert findings_of(report) == {("other-major", "@imqueue/rpc"), ("other-major", "@imqueue/core")}
    assert "remove" not in advice(report) and "esnext.decorators" not in advice(report)


def test_rpc_1x_with_the_3x_tsconfig_is_told_to_turn_legacy_decorators_back_on(tmp_path: Path) -> None:
    # What an agent got from following 3.x advice on 1.17.0: 13 x TS1241.
    report = inspect(read_project(installed_tree(tmp_path, "1.17.0", "2.0.26", STANDARD_OPTIONS)), STATUS)
    (finding,) = [finding for finding in report["findings"] if finding["id"] == "legacy-decorators-off"]
    assert "@imqueue/rpc 1.17.0" in finding["message"]
    assert "experimentalDecorators: true and emitDecoratorMetadata: true" in finding["message"]
    assert finding["url"] == URL_MIGRATION
    assert "legacy-decorators" not in {finding["id"] for finding in report["findings"]}


def test_rpc_3x_installed_is_told_to_drop_legacy_decorators_and_use_esm(tmp_path: Path) -> None:
    report = inspect(read_project(installed_tree(tmp_path, "3.7.2", "3.4.2", LEGACY_OPTIONS)), STATUS)
    assert report["framework"] == {"major": 3, "decorators": "standard"}
    assert findings_of(report) == {("legacy-decorators", None), ("decorators-lib", None), ("esm", None)}
    (esm,) = [finding for finding in report["findings"] if finding["id"] == "esm"]
    assert 'no "type": "module"' in esm["message"] and "compiles to 'commonjs' modules" in esm["message"]
    clean = inspect(
        read_project(installed_tree(tmp_path / "clean", "3.7.2", "3.4.2", STANDARD_OPTIONS, type="module")),
        STATUS,
    )
    assert findings_of(clean) == set()


def test_rpc_3x_resolving_imports_as_a_bundler_does_is_told_to_use_nodenext_unless_a_bundler_builds_it(
    tmp_path: Path,
) -> None:
    # "bundler" accepts `import './types'`; tsc's output then fails on Node with ERR_MODULE_NOT_FOUND.
    options = {**STANDARD_OPTIONS, "module": "esnext", "moduleResolution": "bundler"}
    report = inspect(
        read_project(installed_tree(tmp_path / "tsc", "3.7.2", "3.4.2", options, type="module")), STATUS
    )
    (esm,) = [finding for finding in report["findings"] if finding["id"] == "esm"]
    assert (
        "resolves imports as 'bundler'" in esm["message"]
        and '"moduleResolution": "nodenext"' in esm["message"]
    )
    bundled = installed_tree(
        tmp_path / "esbuild", "3.7.2", "3.4.2", options, type="module", devDependencies={"esbuild": "^0.25.0"}
    )
    assert findings_of(inspect(read_project(bundled), STATUS)) == set()


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        ({"scripts": {"build": "tsc", "start": "node dist/index.js"}}, True),
        ({"devDependencies": {"typescript": "^5.9.3"}}, True),
        ({"scripts": {"dev": "ts-node-esm src/index.ts"}}, True),
        ({"scripts": {"start": "node index.js", "lint": "tscheck ."}}, False),  # plain JavaScript
    ],
)
def test_a_typescript_project_without_tsconfig_is_told_nothing_could_be_checked(
    tmp_path: Path, manifest: dict[str, Any], said: bool
) -> None:
    # audit 12: "No findings" for an rpc 3.x project whose tsc could build nothing
    for major, rpc, core, url in (
        ("3", "3.7.2", "3.4.2", URL_DECORATORS),
        ("1", "1.17.0", "1.15.0", URL_MIGRATION),
    ):
        root = installed_tree(tmp_path / major, rpc, core, {}, type="module", **manifest)
        (root / "tsconfig.json").unlink()
        report = inspect(read_project(root), STATUS)
        found = [finding for finding in report["findings"] if finding["id"] == "no-tsconfig"]
        assert bool(found) == said
        if found:
            assert "no tsconfig.json" in found[0]["message"] and found[0]["url"] == url
            assert ("experimentalDecorators and emitDecoratorMetadata true" in found[0]["message"]) == (
                major == "1"
            )


def test_rpc_3x_code_using_commonjs_globals_is_named_by_file_and_line(tmp_path: Path) -> None:
    # imq 5.2.2's template: it builds as an ES module, then fails at start on each of these.
    root = installed_tree(tmp_path / "svc", "3.7.2", "3.4.2", STANDARD_OPTIONS, type="module")
    (root / "src").mkdir()
    (root / "index.ts").write_text("import { Greeter } from './src/index.js';\n!module.parent && start();\n")
    (root / "src" / "Greeter.ts").write_text(
        "// require('x') in a comment is not code\nconst pkg = require('../package.json');\n"
    )
    (root / "src" / "paths.ts").write_text(
        "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n"
        "const data = require('./data.json');\n"
    )
    report = inspect(read_project(root), STATUS)
    (finding,) = [finding for finding in report["findings"] if finding["id"] == "commonjs-code"]
    assert (
        "index.ts:2 module.parent" in finding["message"] and "src/Greeter.ts:2 require(" in finding["message"]
    )
    assert "paths.ts" not in finding["message"] and "import.meta" in finding["message"]
    (root / "src" / "Greeter.ts").write_text("import pkg from '../package.json' with { type: 'json' };\n")
    (root / "index.ts").write_text("if (process.argv[1] === fileURLToPath(import.meta.url)) start();\n")
    assert findings_of(inspect(read_project(root), STATUS)) == set()


@pytest.mark.parametrize(("rpc", "core"), [("1.17.0", "2.0.26"), ("3.7.2", "3.4.2")])
def test_following_the_decorator_advice_leaves_no_decorator_finding(
    tmp_path: Path, rpc: str, core: str
) -> None:
    """Whatever tsconfig the project starts from, the advice converges: it never flips back."""
    starts: list[dict[str, Any]] = [{}, LEGACY_OPTIONS, STANDARD_OPTIONS]
    for number, options in enumerate(starts):
        root = installed_tree(tmp_path / str(number), rpc, core, options, type="module")
        first = {finding["id"] for finding in inspect(read_project(root), STATUS)["findings"]}
        fixed = dict(options)
        if "legacy-decorators-off" in first:
            fixed.update(experimentalDecorators=True, emitDecoratorMetadata=True)
        if "legacy-decorators" in first:
            fixed.pop("experimentalDecorators", None)
            fixed.pop("emitDecoratorMetadata", None)
        if "decorators-lib" in first:
            fixed["lib"] = ["es2024", "esnext.decorators"]
        root = installed_tree(tmp_path / f"{number}-fixed", rpc, core, fixed, type="module")
        after = {finding["id"] for finding in inspect(read_project(root), STATUS)["findings"]}
        assert not after & {"legacy-decorators-off", "legacy-decorators", "decorators-lib"}, (options, after)


def test_a_second_core_under_rpc_is_reported_with_the_override_that_removes_it(tmp_path: Path) -> None:
    root = installed_tree(tmp_path, "3.7.2", "3.4.2", STANDARD_OPTIONS, type="module")
    write_tree(
        root,
        {"node_modules/@imqueue/rpc/node_modules/@imqueue/core/package.json": {"version": "2.0.26"}},
    )
    report = inspect(read_project(root), STATUS)
    assert findings_of(report) == {("duplicate-package", "@imqueue/core")}
    (finding,) = report["findings"]
    assert "3.4.2 at node_modules/@imqueue/core" in finding["message"]
    assert "2.0.26 at node_modules/@imqueue/rpc/node_modules/@imqueue/core" in finding["message"]
    assert '"overrides": {"@imqueue/core": "$@imqueue/core"}' in finding["message"]
    assert "npm dedupe" in finding["message"]
    assert [copy["version"] for copy in report["copies"]["@imqueue/core"]] == ["3.4.2", "2.0.26"]


def test_an_undeclared_duplicate_is_pinned_to_the_top_level_version(tmp_path: Path) -> None:
    root = write_tree(
        tmp_path,
        {
            "package.json": {"name": "svc", "type": "module", "dependencies": {"@imqueue/rpc": "^3.7.2"}},
            "node_modules/@imqueue/rpc/package.json": {"version": "3.7.2"},
            "node_modules/@imqueue/core/package.json": {"version": "3.4.2"},
            "node_modules/@scoped/tool/node_modules/@imqueue/core/package.json": {"version": "3.1.0"},
        },
    )
    (finding,) = inspect(read_project(root), STATUS)["findings"]
    assert finding["id"] == "duplicate-package"
    assert '"overrides": {"@imqueue/core": "3.4.2"}' in finding["message"]


def test_one_version_in_two_places_is_not_a_duplicate(tmp_path: Path) -> None:
    root = installed_tree(tmp_path, "3.7.2", "3.4.2", STANDARD_OPTIONS, type="module")
    write_tree(
        root, {"node_modules/@imqueue/rpc/node_modules/@imqueue/core/package.json": {"version": "3.4.2"}}
    )
    report = inspect(read_project(root), STATUS)
    assert report["findings"] == [] and report["copies"] == {}


def test_core_declared_a_major_behind_rpc_3x_is_told_the_range_to_set_not_an_override(tmp_path: Path) -> None:
    """Journey c: rpc 3.7.2 with core ^2.0.26 declared. An override to "$@imqueue/core" would force
    core 2 on rpc 3 (the service dies at start); the fix is to declare the documented major."""
    root = installed_tree(tmp_path, "3.7.2", "2.0.26", STANDARD_OPTIONS, type="module")
    write_tree(
        root, {"node_modules/@imqueue/rpc/node_modules/@imqueue/core/package.json": {"version": "3.4.2"}}
    )
    report = inspect(read_project(root), STATUS)

    assert findings_of(report) == {("other-major", "@imqueue/core")}
    (finding,) = report["findings"]
    assert (
        'set "@imqueue/core": "^3.4.2" in package.json\'s dependencies and run npm install'
        in (finding["message"])
    )
    assert "overrides" not in finding["message"]


def test_a_project_wholly_on_1x_is_never_told_to_move_one_package_to_3x(tmp_path: Path) -> None:
    report = inspect(read_project(installed_tree(tmp_path, "1.17.0", "2.0.26", LEGACY_OPTIONS)), STATUS)

    for finding in report["findings"]:
        assert "^3." not in finding["message"], finding
        assert "Upgrade @imqueue/rpc and @imqueue/core together" in finding["message"]


def test_a_package_newer_than_the_docs_is_not_sent_to_the_framework_migration(tmp_path: Path) -> None:
    """A registry that serves a later major than the docs describe (pg-cache 6.x against the docs'
    5.1.2) on a project whose framework runs the documented 3.x: the pages are older than the
    code, and rpc/core need nothing."""
    root = installed_tree(tmp_path, "3.7.2", "3.4.2", STANDARD_OPTIONS, type="module")
    write_tree(
        root,
        {
            "package.json": {
                "name": "svc",
                "type": "module",
                "dependencies": {
                    "@imqueue/rpc": "^3.7.2",
                    "@imqueue/core": "^3.4.2",
                    "@imqueue/pg-cache": "^6.0.1",
                },
            },
            "node_modules/@imqueue/pg-cache/package.json": {"name": "@imqueue/pg-cache", "version": "6.0.1"},
        },
    )
    report = inspect(read_project(root), STATUS)
    (finding,) = report["findings"]
    assert (finding["id"], finding["package"]) == ("other-major", "@imqueue/pg-cache")
    assert "newer than the docs" in finding["message"] and "5.1.2" in finding["message"]
    assert "Upgrade @imqueue/rpc" not in finding["message"] and finding["url"] != URL_MIGRATION


def test_a_package_behind_the_docs_in_a_project_without_the_framework_is_aligned_alone(
    tmp_path: Path,
) -> None:
    root = write_tree(
        tmp_path,
        {
            "package.json": {
                "name": "tool",
                "type": "module",
                "dependencies": {"@imqueue/datadog": "^2.0.0"},
            },
            "node_modules/@imqueue/datadog/package.json": {"name": "@imqueue/datadog", "version": "2.0.0"},
        },
    )
    (finding,) = inspect(read_project(root), STATUS)["findings"]
    assert finding["id"] == "other-major"
    assert 'set "@imqueue/datadog": "^3.2.1"' in finding["message"]
    assert (
        "@imqueue/rpc" not in finding["message"]
        and finding["url"] == "https://imqueue.org/api/datadog/latest/"
    )

"""The parts of benchmarks/journeys.py that decide what counts: npm ranges, the advice reader, the
install stand-in's layout, the hand-fix record and the page match of journey d. Fast; the journeys
themselves run in tests/test_journeys_smoke.py (slow) and in CI's benchmark step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from imqueue_mcp.server.docs.search_docs import PASTE_CHARACTERS

from benchmarks.journey_kit import (
    LEGACY_RUNTIME,
    Journey,
    JourneyFailed,
    advice_edits,
    apply_edit,
    install,
    satisfies,
)
from benchmarks.journeys import ERROR_CASES, matches, page_of
from benchmarks.stack import INSTALL, SERVICE_RUNTIME
from conftest import REPO, SITE, require_external


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("3.7.2", "^3.7.2", True),
        ("3.9.0", "^3.7.2", True),
        ("4.0.0", "^3.7.2", False),
        ("3.7.1", "^3.7.2", False),
        ("2.0.26", "^2.0.26", True),
        ("3.4.2", "^2.0.26", False),
        ("0.2.5", "^0.2.2", True),
        ("0.3.0", "^0.2.2", False),
        ("5.9.3", "~5.9.0", True),
        ("5.10.0", "~5.9.0", False),
        ("22.20.7", ">=22.12", True),
        ("20.1.0", ">=22.12", False),
        ("3.4.2", "3.x", True),
        ("3.4.2", "3", True),
        ("2.0.0", "3.x", False),
        ("1.17.0", "^1.15.0 || ^3.0.0", True),
        ("3.4.2", ">=3.0.0 <4", True),
        ("4.1.0", ">=3.0.0 <4", False),
        ("3.7.2", "3.7.2", True),
        ("3.7.3", "3.7.2", False),
        ("9.9.9", "*", True),
    ],
)
def test_npm_ranges_are_met_as_npm_meets_them(version: str, spec: str, expected: bool) -> None:
    assert satisfies(version, spec) is expected


def test_advice_that_spells_out_a_change_becomes_edits() -> None:
    edits = advice_edits(
        "tsconfig.json sets removeComments: true, so the doc-blocks of exposed methods are stripped "
        "and the client generator sees no types: set removeComments: false."
    )
    assert edits is not None and [(e.file, e.path, e.value) for e in edits] == [
        ("tsconfig.json", ("compilerOptions", "removeComments"), False)
    ]
    removed = advice_edits(
        "tsconfig.json sets experimentalDecorators: true; @imqueue 3.x uses standard (TC39) "
        "decorators: remove it."
    )
    assert removed is not None and [(e.path, e.value) for e in removed] == [
        (("compilerOptions", "experimentalDecorators"), None)
    ]
    both = advice_edits(
        "@imqueue/rpc 1.17.0 is what this project runs, and it uses legacy decorators: set "
        "experimentalDecorators: true and emitDecoratorMetadata: true in tsconfig.json"
    )
    assert both is not None and {e.path[-1]: e.value for e in both} == {
        "experimentalDecorators": True,
        "emitDecoratorMetadata": True,
    }
    lib = advice_edits('lacks "esnext.decorators": add it (e.g. "lib": ["es2024", "esnext.decorators"]).')
    assert lib is not None and lib[0].value == ["es2024", "esnext.decorators"]
    override = advice_edits(
        'Make npm install one: add "overrides": {"@imqueue/core": "$@imqueue/core"} to package.json, '
        "then run npm install"
    )
    assert override is not None and (override[0].file, override[0].path, override[0].reinstall) == (
        "package.json",
        ("overrides", "@imqueue/core"),
        True,
    )


def test_advice_that_only_names_a_problem_asks_for_nothing() -> None:
    assert (
        advice_edits(
            "@imqueue/core is at 2.0.26 (major 2), but the docs describe 3.4.2 (major 3): the API pages "
            "may not match the code you run."
        )
        is None
    )


def test_edits_set_nested_keys_and_delete_them() -> None:
    document: dict[str, object] = {
        "compilerOptions": {"removeComments": True, "experimentalDecorators": True}
    }
    for edit in (
        advice_edits(
            "sets experimentalDecorators: true; standard decorators: remove it. set removeComments: false"
        )
        or []
    ):
        apply_edit(document, edit)
    assert document == {"compilerOptions": {"removeComments": False}}


def test_a_hand_fix_is_recorded_at_the_step_that_needed_it_with_its_reason() -> None:
    journey = Journey("x", "a journey")
    journey.step("scaffold_service")
    journey.step("generate_client")
    journey.hand_fix("generate_client takes no broker address")
    record = journey.to_dict()
    assert record["steps"] == 2 and record["hand_fix_count"] == 1
    assert record["hand_fixes"] == [
        {"step": "generate_client", "reason": "generate_client takes no broker address"}
    ]
    assert record["passed"] is False


def test_an_expected_page_matches_its_url_with_or_without_an_anchor_only_where_allowed() -> None:
    assert (
        page_of("https://imqueue.org/api/#standard-decorators-and-tsconfig")
        == "/api/#standard-decorators-and-tsconfig"
    )
    assert matches("https://imqueue.org/get-started/#prerequisites", ("/get-started/",))
    assert not matches("https://imqueue.org/api/#locking", ("/api/#standard-decorators-and-tsconfig",))
    assert matches("https://imqueue.org/glossary/#calltimeout", ("/glossary/#calltimeout",))


def test_every_expected_page_exists_in_the_mirror_and_shows_its_fix() -> None:
    if not SITE.is_dir():
        pytest.skip(f"the site mirror is not at {SITE}")
    for case in ERROR_CASES:
        assert case.why and (case.pasted is None) == (case.printed is not None), case.name
        assert len(case.pasted or "") <= PASTE_CHARACTERS, case.name  # what search_docs takes
        for expected in case.fixing:
            path = expected.split("#")[0].strip("/")
            page = SITE / "imqueue.org" / path / "index.md" if path else SITE / "imqueue.org" / "index.md"
            assert page.is_file(), (case.name, expected)
        text = (SITE / "imqueue.org" / case.fixing[0].split("#")[0].strip("/") / "index.md").read_text()
        assert all(word in text for word in case.fix_words), case.name


# --- the install stand-in, on the runtimes .ci built ------------------------------------------


@pytest.fixture()
def runtimes() -> None:
    require_external((SERVICE_RUNTIME / "@imqueue" / "rpc").is_dir(), "the @imqueue 3.x runtime", INSTALL)
    require_external(
        (LEGACY_RUNTIME / "@imqueue" / "core").is_dir(),
        "@imqueue/core 2.0.26",
        "bash .ci/install-framework.sh",
    )


def project_with(tmp_path: Path, **manifest: object) -> Path:
    (tmp_path / "package.json").write_text(json.dumps(manifest))
    return tmp_path


def version_at(folder: Path) -> str:
    return str(json.loads((folder / "package.json").read_text())["version"])


def test_install_links_the_3x_runtime_when_every_range_fits(tmp_path: Path, runtimes: None) -> None:
    root = project_with(tmp_path, dependencies={"@imqueue/rpc": "^3.7.2", "@imqueue/core": "^3.4.2"})
    layout = install(root)
    modules = root / "node_modules"
    assert layout == {"@imqueue/core": "3.4.2", "@imqueue/rpc": "3.7.2"}
    assert (modules / "@imqueue" / "rpc").resolve() == (SERVICE_RUNTIME / "@imqueue" / "rpc").resolve()
    assert (modules / ".bin" / "tsc").exists() and (modules / "typescript").is_dir()


def test_install_nests_rpcs_own_core_when_the_project_declares_another_major(
    tmp_path: Path, runtimes: None
) -> None:
    root = project_with(tmp_path, dependencies={"@imqueue/rpc": "^3.7.2", "@imqueue/core": "^2.0.26"})
    install(root)
    rpc = root / "node_modules" / "@imqueue" / "rpc"
    assert version_at(root / "node_modules" / "@imqueue" / "core") == "2.0.26"
    assert not rpc.is_symlink() and version_at(rpc / "node_modules" / "@imqueue" / "core") == "3.4.2"


def test_install_obeys_an_override_even_onto_the_wrong_major(tmp_path: Path, runtimes: None) -> None:
    root = project_with(
        tmp_path,
        dependencies={"@imqueue/rpc": "^3.7.2", "@imqueue/core": "^2.0.26"},
        overrides={"@imqueue/core": "$@imqueue/core"},
    )
    install(root)
    rpc = root / "node_modules" / "@imqueue" / "rpc"
    assert not (rpc / "node_modules" / "@imqueue" / "core").exists()  # one copy: the project's 2.0.26
    assert version_at(root / "node_modules" / "@imqueue" / "core") == "2.0.26"


def test_install_fails_like_npm_on_a_range_nothing_here_meets(tmp_path: Path, runtimes: None) -> None:
    root = project_with(tmp_path, dependencies={"@imqueue/rpc": "^9.0.0"})
    with pytest.raises(JourneyFailed, match=r"no version of @imqueue/rpc here meets '\^9\.0\.0'"):
        install(root)


# --- the command line ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("only", "message"),
    [("a,z", "unknown journey z"), ("b", "journey b changes the service journey a builds")],
)
def test_a_wrong_selection_is_refused_before_anything_starts(only: str, message: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.journeys", "--only", only],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and message in run.stderr and run.stdout == ""

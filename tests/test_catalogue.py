"""Behaviour of the package catalogue, the status.json merge and package_status."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from imqueue_mcp.server.catalogue.packages import (
    CATALOGUE,
    EXCLUSIVE_PAIRS,
    CatalogueError,
    exclusive_pair_advisory,
    merge_status,
    normalize_package,
    package_status,
    render_packages_markdown,
    render_status_markdown,
)

STATUS_JSON = Path(__file__).resolve().parents[2] / "shared" / "site" / "imqueue.org" / "status.json"
FACT_FIELDS = ("version", "license", "node", "released", "deprecated")


@pytest.fixture(scope="module")
def status() -> dict[str, Any]:
    if not STATUS_JSON.exists():
        pytest.skip(f"site mirror not found at {STATUS_JSON}")
    return json.loads(STATUS_JSON.read_text(encoding="utf-8"))


def names() -> list[str]:
    return [entry.name for entry in CATALOGUE]


# --- catalogue -----------------------------------------------------------------------


def test_catalogue_includes_the_framework_spine() -> None:
    assert {"@imqueue/rpc", "@imqueue/core", "@imqueue/cli"} <= set(names())


def test_catalogue_excludes_js_travis_and_mcp() -> None:
    assert not {"@imqueue/js", "@imqueue/travis", "@imqueue/mcp"} & set(names())


def test_catalogue_names_are_unique_and_scoped() -> None:
    assert len(names()) == len(set(names()))
    assert all(name.startswith("@imqueue/") for name in names())


def test_cli_installs_globally_and_libraries_locally() -> None:
    installs = {entry.name: entry.install for entry in CATALOGUE}
    assert installs["@imqueue/cli"] == "npm install -g @imqueue/cli"
    assert installs["@imqueue/rpc"] == "npm install @imqueue/rpc"


def test_every_pair_member_is_in_the_catalogue() -> None:
    assert {member for pair in EXCLUSIVE_PAIRS for member in pair.members} <= set(names())


# --- names and advisory --------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["rpc", "@imqueue/rpc", " RPC ", "@IMQUEUE/Rpc"])
def test_package_spellings_normalise_to_the_scoped_name(spelling: str) -> None:
    assert normalize_package(spelling) == "@imqueue/rpc"


@pytest.mark.parametrize("bad", ["", "@other/rpc", "pg cache"])
def test_names_outside_the_scope_are_refused(bad: str) -> None:
    with pytest.raises(CatalogueError, match="not an @imqueue package name"):
        normalize_package(bad)


@pytest.mark.parametrize("name", ["datadog", "@imqueue/datadog", "dd-trace"])
def test_advisory_fires_for_the_datadog_side(name: str) -> None:
    advice = exclusive_pair_advisory([name])
    assert advice is not None
    assert "pick exactly one of @imqueue/opentelemetry or @imqueue/datadog" in advice.lower()
    assert "because" in advice


def test_advisory_fires_for_pg_sequelize() -> None:
    advice = exclusive_pair_advisory(["pg-sequelize"])
    assert advice is not None and "@imqueue/pg-prisma" in advice


def test_advisory_is_silent_for_core() -> None:
    assert exclusive_pair_advisory(["core", "@imqueue/rpc"]) is None


def test_advisory_flags_both_sides_named_together() -> None:
    advice = exclusive_pair_advisory(["opentelemetry", "datadog"])
    assert advice is not None and advice.startswith("Both @imqueue/opentelemetry and @imqueue/datadog")


# --- merge_status (list_packages) ----------------------------------------------------


def test_merge_with_real_status_gives_versions_and_framework(status: dict[str, Any]) -> None:
    merged = merge_status(CATALOGUE, status)
    by_name = {package["name"]: package for package in merged["packages"]}
    assert by_name["@imqueue/rpc"]["version"] == "3.7.2"
    assert by_name["@imqueue/core"]["license"] == "GPL-3.0-only"
    assert set(merged["framework"]) == {"license", "node", "redis", "commercial"}
    assert "factsUnavailable" not in merged


def test_merge_with_real_status_keeps_mcp_out(status: dict[str, Any]) -> None:
    listed = {package["name"] for package in merge_status(CATALOGUE, status)["packages"]}
    assert "@imqueue/mcp" not in listed


def test_merge_without_status_states_facts_unavailable_and_omits_them() -> None:
    merged = merge_status(CATALOGUE, None)
    assert merged["factsUnavailable"] is True
    assert "framework" not in merged
    for package in merged["packages"]:
        assert not set(FACT_FIELDS) & set(package)
        assert {"name", "install", "summary"} <= set(package)


def test_merge_with_a_malformed_feed_degrades_to_facts_unavailable() -> None:
    assert merge_status(CATALOGUE, {"packages": "oops"})["factsUnavailable"] is True


def test_merge_lists_a_package_the_feed_knows_and_the_build_does_not() -> None:
    record = {"name": "brand-new", "scoped": "@imqueue/brand-new", "version": "1.0.0"}
    feed = {"framework": {}, "packages": [record]}
    listed = {package["name"]: package for package in merge_status(CATALOGUE, feed)["packages"]}
    assert listed["@imqueue/brand-new"]["version"] == "1.0.0"


def test_pair_members_carry_a_pick_rule_and_others_do_not() -> None:
    listed = {package["name"]: package for package in merge_status(CATALOGUE, None)["packages"]}
    assert "@imqueue/pg-sequelize" in listed["@imqueue/pg-prisma"]["pick"]
    assert "@imqueue/opentelemetry" in listed["@imqueue/datadog"]["pick"]
    assert "pick" not in listed["@imqueue/core"]


def test_packages_markdown_says_why_facts_are_missing() -> None:
    markdown = render_packages_markdown(merge_status(CATALOGUE, None))
    assert "unavailable" in markdown
    assert "npm install -g @imqueue/cli" in markdown


def test_packages_markdown_shows_versions_from_the_feed(status: dict[str, Any]) -> None:
    assert "**@imqueue/rpc** 3.7.2" in render_packages_markdown(merge_status(CATALOGUE, status))


# --- package_status ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("asked", "scoped"),
    [
        ("rpc", "@imqueue/rpc"),
        ("@imqueue/rpc", "@imqueue/rpc"),
        ("mcp", "@imqueue/mcp"),
        ("cli", "@imqueue/cli"),
    ],
)
def test_package_status_answers_for_one_package(status: dict[str, Any], asked: str, scoped: str) -> None:
    result = package_status(status, asked)
    assert [package["scoped"] for package in result["packages"]] == [scoped]
    assert result["packages"][0]["version"]
    assert set(result) == {"framework", "packages", "generated", "source"}
    assert set(result["framework"]) == {"license", "licenseNote", "commercial", "node", "redis"}


def test_package_status_without_a_package_covers_the_whole_feed(status: dict[str, Any]) -> None:
    result = package_status(status)
    assert len(result["packages"]) == len(status["packages"])
    assert {"firstRelease", "releases", "majors", "docs", "npm", "repo"} <= set(result["packages"][0])


def test_unknown_package_error_lists_the_known_names(status: dict[str, Any]) -> None:
    with pytest.raises(CatalogueError, match="Unknown package '@imqueue/nope'") as raised:
        package_status(status, "nope")
    assert "@imqueue/rpc" in str(raised.value)
    assert "@imqueue/cli" in str(raised.value)


def test_package_status_refuses_a_feed_of_another_shape() -> None:
    with pytest.raises(CatalogueError, match="status.json"):
        package_status({"packages": []}, "rpc")


def test_status_markdown_shows_one_package_in_detail(status: dict[str, Any]) -> None:
    markdown = render_status_markdown(package_status(status, "rpc"))
    assert "## @imqueue/rpc" in markdown
    assert "Version: 3.7.2" in markdown
    assert status["generated"] in markdown


def test_status_markdown_tabulates_every_package(status: dict[str, Any]) -> None:
    markdown = render_status_markdown(package_status(status))
    assert "| @imqueue/mcp |" in markdown
    assert "| @imqueue/datadog | 3.2.1 |" in markdown

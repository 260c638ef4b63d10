"""Every @imqueue identifier the scaffolders emit exists in the current API reference.

The scaffolds target @imqueue 3.x, newer than the runtime the end-to-end test can install
(1.x, where e.g. @classType() does not exist). So the names the generated code relies on are
checked against the published reference instead: ../shared/site/imqueue.org/search-index.json,
read at run time. The names are extracted from the generated code itself (imports from
@imqueue packages, decorators, and the framework members called on a service or client
instance), never listed by hand, so a template can never name an API that does not exist.
No Node needed: this runs everywhere.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pytest

from imqueue_mcp.server.scaffold.templates import scaffold_client, scaffold_service

from conftest import SITE

SEARCH_INDEX = SITE / "imqueue.org" / "search-index.json"
# A fact of the generator (IMQClient.create): the client class it writes extends IMQClient.
GENERATED_CLIENT_BASE = ("@imqueue/rpc", "IMQClient")

METHODS: list[dict[str, Any]] = [
    {"name": "addNote", "params": [{"name": "note", "type": "NoteDraft"}], "returns": "Note"},
    {
        "name": "findNotes",
        "params": [{"name": "query", "type": "string", "optional": True}],
        "returns": "Note[]",
    },
    {"name": "archiveNotes", "params": [{"name": "ids", "type": "number[]"}], "returns": "void"},
]

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_LINE_COMMENT = re.compile(r"//.*$", re.MULTILINE)
_IMPORT = re.compile(r"import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'(@imqueue/[^']+)'")
_DECORATOR = re.compile(r"@([A-Za-z_$][\w$]*)\s*\(")
_EXTENDS = re.compile(r"class\s+([A-Za-z_$][\w$]*)\s+extends\s+([A-Za-z_$][\w$]*)")
_INSTANCE = re.compile(r"(?:const|let)\s+([A-Za-z_$][\w$]*)\s*=\s*new\s+([A-Za-z_$][\w$.]*)\s*\(")


@dataclass
class FrameworkNames:
    """@imqueue names used by a set of generated TypeScript files, as (package, symbol)."""

    imported: set[tuple[str, str]] = field(default_factory=set)
    members: set[tuple[str, str]] = field(default_factory=set)  # (package, "Class.member")
    unimported_decorators: set[str] = field(default_factory=set)


def code_only(source: str) -> str:
    """The source without comments: the templates' prose mentions decorators in examples."""
    return _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", source))


def framework_names(sources: Iterable[str], user_methods: set[str]) -> FrameworkNames:
    codes = [code_only(source) for source in sources]
    names = FrameworkNames()
    packages: dict[str, str] = {}  # imported symbol -> its package
    for code in codes:
        for imported, package in _IMPORT.findall(code):
            for part in imported.split(","):
                symbol, _, alias = (word.strip() for word in part.partition(" as "))
                if symbol:  # `X as y` imports X, named y in the file
                    packages[alias or symbol] = package
                    names.imported.add((package, symbol))
    bases = {child: parent for code in codes for child, parent in _EXTENDS.findall(code)}
    for code in codes:
        names.unimported_decorators |= {d for d in _DECORATOR.findall(code) if d not in packages}
        for variable, constructed in _INSTANCE.findall(code):
            base = framework_base(constructed, bases, packages)
            if base is None:
                continue
            package, symbol = base
            called = re.findall(rf"\b{re.escape(variable)}\.([A-Za-z_$][\w$]*)\s*\(", code)
            names.members |= {
                (package, f"{symbol}.{member}") for member in called if member not in user_methods
            }
    return names


def framework_base(
    constructed: str, bases: dict[str, str], packages: dict[str, str]
) -> tuple[str, str] | None:
    """The @imqueue class an instance of ``constructed`` is, if any."""
    if "." in constructed:  # namespace.Client: a class of the generated client file
        return GENERATED_CLIENT_BASE
    parent = bases.get(constructed)
    if parent in packages:
        return packages[parent], parent
    return None


@pytest.fixture(scope="module")
def reference() -> set[tuple[str, str]]:
    """(package, symbol) for every exported symbol and member in the API reference."""
    if not SEARCH_INDEX.is_file():
        pytest.skip(f"the site mirror's search index is not at {SEARCH_INDEX}")
    records = json.loads(SEARCH_INDEX.read_text(encoding="utf-8"))["records"]
    return {
        (record["p"], record["t"]) for record in records if record.get("p") and record.get("k") != "package"
    }


def service_sources(methods: list[dict[str, Any]] | None) -> list[str]:
    return [
        file["content"]
        for file in scaffold_service("notes", methods)["files"]
        if file["language"] == "typescript"
    ]


def client_sources(methods: list[dict[str, Any]] | None) -> list[str]:
    return [scaffold_client("notes", methods)["example"]["content"]]


@pytest.mark.parametrize(
    "sources",
    [
        pytest.param(lambda: service_sources(METHODS), id="scaffold_service"),
        pytest.param(lambda: service_sources(None), id="scaffold_service-starter"),
        pytest.param(lambda: client_sources(METHODS), id="scaffold_client"),
        pytest.param(lambda: client_sources(None), id="scaffold_client-starter"),
    ],
)
def test_every_framework_name_the_scaffolders_emit_is_in_the_api_reference(
    sources: Any, reference: set[tuple[str, str]]
) -> None:
    names = framework_names(sources(), {method["name"] for method in METHODS})

    assert names.imported or names.members, "no @imqueue name found: the extraction is broken"
    assert not names.unimported_decorators, "decorators not imported from an @imqueue package"
    assert sorted((names.imported | names.members) - reference) == []


def test_the_service_scaffold_names_its_decorators_and_bases_through_imports() -> None:
    names = framework_names(service_sources(METHODS), set())

    # Whatever the templates import, each decorator and base class they use is among it.
    used = {d for code in map(code_only, service_sources(METHODS)) for d in _DECORATOR.findall(code)}
    assert used and used <= {symbol for _, symbol in names.imported}
    assert any(member.endswith(".start") for _, member in names.members)


def test_a_name_missing_from_the_reference_is_caught(reference: set[tuple[str, str]]) -> None:
    drifted = (
        "import { IMQService, exposed } from '@imqueue/rpc';\n"
        "export class NotesService extends IMQService {\n    @exposed()\n    public async a() {}\n}\n"
        "const service = new NotesService();\nawait service.launch();\n"
    )

    names = framework_names([drifted], set())

    assert (names.imported | names.members) - reference == {
        ("@imqueue/rpc", "exposed"),
        ("@imqueue/rpc", "IMQService.launch"),
    }

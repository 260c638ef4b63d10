"""The API of the @imqueue packages a project has installed, read from their declaration files.

Pure logic over the user's disk: no MCP, no network. Every @imqueue package ships `.d.ts`
files with its doc comments; they are parsed with tree-sitter's TypeScript grammar (a real
parser, not patterns) into one record per exported class, interface, function, type, enum,
constant, method and property: its signature, doc comment and source file.

    installed_packages(root)   the @imqueue packages under root/node_modules: hoisted, nested
                               copies, pnpm's symlinked store (symlinks resolved once each, so
                               a loop ends); a missing node_modules is a problem, not an error
    index_package(pkg)         a PackageIndex (cached per name and version); a malformed, huge
                               or unreadable file is skipped and named in `problems`
    resolve_name(names, query) the same exact rules over other names (the docs' API records)
    resolve(index, query)      exact, dotted (`IMQClientOptions.timeout`), spaced and any-case
                               (`imqclientoptions timeout`) names; else the nearest names
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from imqueue_mcp.server.user_files import (
    MANIFEST_BYTES,
    FileTooLarge,
    NotARegularFile,
    read_capped,
    read_text_capped,
)

SCOPE = "@imqueue"
MAX_DTS_BYTES = 2 * 1024 * 1024  # a declaration file larger than this is not parsed
MAX_DTS_FILES = 4000  # per package; more is cut and said so
MAX_DEPTH = 12  # directory depth walked inside one package

_TAGS = ("param", "returns", "return", "deprecated", "defaultValue", "default", "remarks")


@dataclass(frozen=True)
class InstalledPackage:
    name: str
    version: str
    path: Path  # the package's folder, symlinks resolved


@dataclass
class DocComment:
    summary: str = ""
    params: dict[str, str] = field(default_factory=dict)
    returns: str = ""
    deprecated: str | None = None  # "" when deprecated without a reason
    default: str = ""
    remarks: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"summary": self.summary}
        if self.params:
            out["params"] = dict(self.params)
        for key in ("returns", "default", "remarks"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.deprecated is not None:
            out["deprecated"] = self.deprecated or True
        return out


@dataclass
class ApiSymbol:
    name: str  # dotted for members: IMQClientOptions.timeout
    kind: str  # class, interface, function, type, enum, const, method, property
    signature: str
    doc: DocComment
    file: str  # relative to the package folder

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "signature": self.signature,
            "doc": self.doc.as_dict(),
            "file": self.file,
        }


@dataclass
class PackageIndex:
    name: str
    version: str
    symbols: dict[str, ApiSymbol] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    files: int = 0
    parse_seconds: float = 0.0


_CACHE: dict[tuple[str, str, str], PackageIndex] = {}


def _parser() -> Any:
    import tree_sitter_typescript
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_typescript.language_typescript()))


def _read_manifest(folder: Path, problems: list[str]) -> dict[str, Any] | None:
    """The folder's package.json, read as the project's other files are (a regular file, at most
    MANIFEST_BYTES: a FIFO or /dev/zero in a cloned project must not hang or flood the server);
    None when it is missing or not a JSON object, and a problem named when it was refused."""
    path = folder / "package.json"
    try:
        data = json.loads(read_text_capped(path, MANIFEST_BYTES))
    except (FileTooLarge, NotARegularFile) as error:
        problems.append(f"{error}: that package is skipped")
        return None
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def installed_packages(root: Path) -> tuple[list[InstalledPackage], list[str]]:
    """The @imqueue packages installed under root, each once per (name, version, folder)."""
    problems: list[str] = []
    top = root / "node_modules"
    if not top.is_dir():
        return [], [f"no node_modules in {root}: run `npm install` (or pnpm/yarn) there first"]
    found: dict[Path, InstalledPackage] = {}
    seen: set[Path] = set()
    queue: list[tuple[Path, int]] = [(top, 0)]
    while queue:
        modules, depth = queue.pop()
        if not modules.is_dir():
            continue
        try:
            real = modules.resolve(strict=True)
        except (OSError, RuntimeError):
            problems.append(f"unreadable or looping path skipped: {modules}")
            continue
        if real in seen or depth > MAX_DEPTH:
            continue
        seen.add(real)
        scope = modules / SCOPE
        for pkg in _children(scope):
            try:
                pkg_real = pkg.resolve(strict=True)
            except (OSError, RuntimeError):
                problems.append(f"broken or looping link skipped: {pkg}")
                continue
            manifest = _read_manifest(pkg_real, problems)
            if manifest is None:
                continue
            name = str(manifest.get("name") or f"{SCOPE}/{pkg.name}")
            version = str(manifest.get("version") or "0.0.0")
            if pkg_real not in found:
                found[pkg_real] = InstalledPackage(name, version, pkg_real)
            queue.append((pkg / "node_modules", depth + 1))
        for child in _children(modules):
            if child.name.startswith("@"):
                for sub in _children(child):
                    queue.append((sub / "node_modules", depth + 1))
            elif child.name == ".pnpm":
                for store in _children(child):
                    queue.append((store / "node_modules", depth + 1))
            elif not child.name.startswith("."):
                queue.append((child / "node_modules", depth + 1))
    packages = sorted(found.values(), key=lambda p: (p.name, p.path.as_posix()))
    return packages, problems


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []


def _dts_files(folder: Path, problems: list[str]) -> list[Path]:
    out: list[Path] = []
    for base, dirs, files in os.walk(folder, followlinks=False):
        rel = Path(base).relative_to(folder)
        dirs[:] = sorted(d for d in dirs if d != "node_modules" and not d.startswith("."))
        if len(rel.parts) >= MAX_DEPTH:
            dirs[:] = []
        for name in sorted(files):
            if name.endswith(".d.ts") or name.endswith(".d.mts") or name.endswith(".d.cts"):
                out.append(Path(base) / name)
                if len(out) >= MAX_DTS_FILES:
                    problems.append(f"more than {MAX_DTS_FILES} declaration files; the rest skipped")
                    return out
    return out


def index_package(pkg: InstalledPackage) -> PackageIndex:
    key = (pkg.name, pkg.version, pkg.path.as_posix())
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    started = time.perf_counter()
    index = PackageIndex(pkg.name, pkg.version)
    files = _dts_files(pkg.path, index.problems)
    if not files:
        index.problems.append(f"{pkg.name}@{pkg.version} ships no declaration files (.d.ts)")
    parser = _parser()
    parsed: dict[Path, list[ApiSymbol]] = {}
    re_exports: dict[Path, list[str]] = {}
    for path in files:
        rel = path.relative_to(pkg.path).as_posix()
        try:
            # capped while reading, regular files only: a .d.ts linked to /dev/zero or a FIFO
            # would otherwise never end, and search_docs reads these on every call with a project
            source = read_capped(path, MAX_DTS_BYTES)
        except FileTooLarge:
            index.problems.append(f"{rel}: larger than {MAX_DTS_BYTES} bytes, not read")
            continue
        except NotARegularFile:
            index.problems.append(f"{rel}: not a regular file, not read")
            continue
        except OSError as err:
            index.problems.append(f"{rel}: unreadable ({err.strerror or err})")
            continue
        tree = parser.parse(source)
        if tree.root_node.has_error:
            index.problems.append(f"{rel}: syntax errors; the parts that parse are indexed")
        index.files += 1
        parsed[path] = declarations(tree.root_node, source, rel)
        re_exports[path] = _re_exported(tree.root_node, source)
    public = _public_files(pkg.path, list(parsed), re_exports, index.problems)
    if public is not None:  # and the files declaring a type the public declarations name
        named = set(_IDENTIFIER.findall(" ".join(s.signature for p in public for s in parsed.get(p, []))))
        public |= {path for path, symbols in parsed.items() if any(s.name in named for s in symbols)}
    for path, symbols in parsed.items():
        if public is None or path in public:
            for sym in symbols:
                merge(index.symbols, sym)
    name_computed_keys(index.symbols)
    index.parse_seconds = time.perf_counter() - started
    _CACHE[key] = index
    return index


# --- what the package exports --------------------------------------------------------------------


def _re_exported(root: Any, source: bytes) -> list[str]:
    """The relative modules a declaration file re-exports from (`export * from './src/index.js'`,
    `export { X } from './x.js'`, `export * as ns from './y.js'`); and, when it also exports what
    it imported (`import { X } from './x.js'; export { X }`, `export =`, `export default`), the
    modules it imports from."""
    specifiers, imported = [], []
    passes_on = False
    for node in root.named_children:
        if node.type not in ("export_statement", "import_statement"):
            continue
        where = node.child_by_field_name("source")
        for clause in node.named_children:  # `import x = require('./x')`
            if clause.type == "import_require_clause":
                where = next((c for c in clause.named_children if c.type == "string"), None)
        text = _text(where, source).strip("'\"") if where is not None else ""
        if node.type == "export_statement":
            if where is None and not any(c.type.endswith("declaration") for c in node.named_children):
                passes_on = True  # `export { X }`, `export = X`, `export default X` of what it imported
            elif text.startswith("."):
                specifiers.append(text)
        elif text.startswith("."):
            imported.append(text)
    return specifiers + (imported if passes_on else [])


def _entry_types(manifest: dict[str, Any]) -> list[str]:
    """The declaration files a package's manifest names for its importers: every `types` condition
    of its exports map (all its subpaths; a subpath's module without one, by the .d.ts beside it),
    and its `types` / `typings` field."""
    found: list[str] = []

    def walk(value: Any, typed: bool = False) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(inner, typed or key in ("types", "typings"))
        elif isinstance(value, list):
            for inner in value:
                walk(inner, typed)
        elif isinstance(value, str):  # a types condition, or a module whose .d.ts sits beside it
            found.append(value if typed else re.sub(r"\.([cm]?)js$", r".d.\1ts", value))

    walk(manifest.get("exports"))
    found += [manifest[key] for key in ("types", "typings") if isinstance(manifest.get(key), str)]
    return found


def _resolve_declaration(folder: Path, specifier: str, known: set[Path]) -> Path | None:
    """The declaration file `specifier` (relative to folder) names, among those read."""
    target = Path(os.path.normpath(folder / specifier))
    stem = re.sub(r"\.(?:d\.)?[cm]?[jt]s$", "", str(target))
    for candidate in (target, *(Path(stem + ext) for ext in (".d.ts", ".d.mts", ".d.cts"))):
        if candidate in known:
            return candidate
    for ext in (".d.ts", ".d.mts", ".d.cts"):
        if (index := Path(stem) / f"index{ext}") in known:
            return index
    return None


def _public_files(
    folder: Path, files: list[Path], re_exports: dict[Path, list[str]], problems: list[str]
) -> set[Path] | None:
    """The declaration files an importer of the package reaches: its entry points and what they
    re-export, transitively. A helper module nothing re-exports (rpc's `signature()`, core's
    `pack()`) cannot be imported, whatever its own `export` says. None (every file counts) when the
    manifest names no entry this reading can follow."""
    manifest = _read_manifest(folder, problems) or {}
    entries = _entry_types(manifest)
    if "typesVersions" in manifest or any("*" in entry for entry in entries):
        return None  # subpath patterns and per-version maps: every file may be reached
    known = set(files)
    queue = [
        found
        for entry in entries or ["index.d.ts"]
        if (found := _resolve_declaration(folder, entry.removeprefix("./"), known)) is not None
    ]
    if not queue:
        return None
    public: set[Path] = set()
    while queue:
        path = queue.pop()
        if path in public:
            continue
        public.add(path)
        for specifier in re_exports.get(path, []):
            found = _resolve_declaration(Path(os.path.realpath(path)).parent, specifier, known)
            if found is not None:
                queue.append(found)
    return public


_COMPUTED = re.compile(r"^(?P<owner>.+)\.\[(?P<enum>[A-Za-z_$][\w$]*)\.(?P<member>[A-Za-z_$][\w$]*)\]$")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def name_computed_keys(symbols: dict[str, ApiSymbol]) -> None:
    """A member keyed by an enum member (`readonly [NetworkType.IPV4]: NetworkList`) named by the
    key's value, as the docs name it (`Networks.ipv4`), when the package declares that enum with a
    string value for it; the declaration itself is kept as written."""
    for name in [n for n in symbols if "[" in n]:
        match = _COMPUTED.match(name)
        enum = symbols.get(match["enum"]) if match else None
        if match is None or enum is None or enum.kind != "enum":
            continue
        value = re.search(
            rf"(?<![\w$]){re.escape(match['member'])}\s*=\s*(['\"])(?P<value>[^'\"]*)\1", enum.signature
        )
        if value is None or not _IDENTIFIER.fullmatch(value["value"]):
            continue
        named = f"{match['owner']}.{value['value']}"
        if named not in symbols:
            symbols[named] = dataclasses.replace(symbols.pop(name), name=named)


def merge(symbols: dict[str, ApiSymbol], sym: ApiSymbol) -> None:
    """Another declaration of a name into the index. TypeScript merges declarations of one name:
    an interface across files keeps its first declaration and doc; a class merged with an
    interface of its name (`interface PgPubSub { on(...) }` beside `class PgPubSub extends
    EventEmitter`, to type its events) is the class, which carries the doc comment, the interface's
    doc standing in when the class has none."""
    existing = symbols.get(sym.name)
    if existing is None:
        symbols[sym.name] = sym
    elif existing.kind == "interface" and sym.kind == "class":
        if not sym.doc.summary and existing.doc.summary:
            sym.doc = existing.doc
        symbols[sym.name] = sym
    elif not existing.doc.summary and sym.doc.summary and existing.kind == sym.kind:
        existing.doc = sym.doc


def parse_source(source: bytes, file: str = "input.d.ts") -> list[ApiSymbol]:
    """The exported declarations of one declaration file's text."""
    return list(declarations(_parser().parse(source).root_node, source, file))


# --- declarations ------------------------------------------------------------------------------

_CONTAINER = {
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "interface_declaration": "interface",
}
_SIMPLE = {
    "function_signature": "function",
    "function_declaration": "function",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
}
_MEMBERS = {
    "method_signature": "method",
    "abstract_method_signature": "method",
    "method_definition": "method",
    "public_field_definition": "property",
    "property_signature": "property",
    "construct_signature": "method",
}


def _text(node: Any, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _squash(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)  # doc comments inside type literals
    text = re.sub(r"^\s*//.*$", " ", text, flags=re.M)
    text = re.sub(r"\s+", " ", text).strip().rstrip(";").strip()
    return re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", text))


def _doc_before(node: Any, source: bytes) -> DocComment:
    prev = node.prev_named_sibling
    if prev is not None and prev.type == "comment":
        text = _text(prev, source)
        if text.startswith("/**"):
            return parse_doc(text)
    return DocComment()


def declarations(root: Any, source: bytes, file: str) -> list[ApiSymbol]:
    out: list[ApiSymbol] = []
    # `declare class Widget {...}; export = Widget;`: a CommonJS typing exports its one declaration
    assigned = {
        _text(child, source)
        for node in root.named_children
        if node.type == "export_statement" and node.child_by_field_name("source") is None
        for child in node.named_children
        if child.type == "identifier"
    }
    for node in root.named_children:
        if node.type == "export_statement":
            doc = _doc_before(node, source)
            for decl in node.named_children:
                _declaration(decl, doc, source, file, out)
        elif node.type == "ambient_declaration":  # `declare ...` without export in a .d.ts
            named = next((c.child_by_field_name("name") for c in node.named_children), None)
            exported = named is not None and _text(named, source) in assigned
            _declaration(node, _doc_before(node, source), source, file, out, exported=exported)
    return out


def _declaration(
    node: Any,
    doc: DocComment,
    source: bytes,
    file: str,
    out: list[ApiSymbol],
    exported: bool = True,
) -> None:
    if node.type == "ambient_declaration":
        for inner in node.named_children:
            _declaration(inner, doc, source, file, out, exported)
        return
    if not exported:
        return
    kind = _CONTAINER.get(node.type) or _SIMPLE.get(node.type)
    if node.type in ("lexical_declaration", "variable_declaration"):
        for decl in node.named_children:
            if decl.type == "variable_declarator":
                name = decl.child_by_field_name("name")
                if name is not None:
                    sig = _squash(_text(decl, source))
                    out.append(ApiSymbol(_text(name, source), "const", f"const {sig}", doc, file))
        return
    if kind is None:
        return
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return
    name = _text(name_node, source)
    body = node.child_by_field_name("body")
    if body is not None and kind in ("class", "interface"):
        head = _squash(source[node.start_byte : body.start_byte].decode("utf-8", "replace"))
        # an interface that is a function or constructor type (a hook: `(req?, res?): Promise<void>`,
        # an adapter class: `new (name?: string): ICache`) is that signature: the header alone says
        # nothing of what to write
        calls = [
            _squash(_text(m, source))
            for m in body.named_children
            if m.type == "call_signature" or (kind == "interface" and m.type == "construct_signature")
        ]
        if calls:
            head = f"{head} {{ {' '.join(call.rstrip(';') + ';' for call in calls)} }}"
        out.append(ApiSymbol(name, kind, head, doc, file))
        _members(body, name, source, file, out)
        return
    out.append(ApiSymbol(name, kind, _squash(_text(node, source)), doc, file))


def _members(body: Any, owner: str, source: bytes, file: str, out: list[ApiSymbol]) -> None:
    for member in body.named_children:
        kind = _MEMBERS.get(member.type)
        if kind is None:
            continue
        if any(c.type == "accessibility_modifier" and _text(c, source) == "private" for c in member.children):
            continue
        if member.type == "construct_signature":
            name = "constructor"
        else:
            name_node = member.child_by_field_name("name")
            if name_node is None:
                continue
            name = _text(name_node, source)
        if name.startswith("#"):
            continue
        dotted = f"{owner}.{name}"
        sig = _squash(_text(member, source))
        doc = _doc_before(member, source)
        existing = next((s for s in out if s.name == dotted), None)
        if existing is not None:  # overloads: one record, every signature
            existing.signature += "\n" + sig
            if not existing.doc.summary and doc.summary:
                existing.doc = doc
            continue
        out.append(ApiSymbol(dotted, kind, sig, doc, file))


# --- doc comments ------------------------------------------------------------------------------


def parse_doc(comment: str) -> DocComment:
    body = comment.strip()
    body = body[3:] if body.startswith("/**") else body
    body = body[:-2] if body.endswith("*/") else body
    lines = [re.sub(r"^\s*\*?\s?", "", line) for line in body.splitlines()]
    doc = DocComment()
    current: str | None = None
    buffer: list[str] = []
    param: str = ""

    def flush() -> None:
        text = "\n".join(buffer).strip()
        if current is None:
            doc.summary = text
        elif current == "param":
            doc.params[param] = text
        elif current in ("returns", "return"):
            doc.returns = text
        elif current == "deprecated":
            doc.deprecated = text
        elif current in ("defaultValue", "default"):
            doc.default = text
        elif current == "remarks":
            doc.remarks = text

    for line in lines:
        tag = re.match(r"@(\w+)\s*(.*)", line.strip())
        if tag:
            flush()
            buffer = []
            current = tag.group(1) if tag.group(1) in _TAGS else "other"
            rest = tag.group(2)
            if current == "param":
                m = re.match(r"(?:\{[^}]*\}\s*)?\[?([\w.$]+)[^\s]*\]?\s*(?:-\s*)?(.*)", rest)
                param, rest = (m.group(1), m.group(2)) if m else (rest, "")
            buffer.append(rest)
        else:
            buffer.append(line)
    flush()
    return doc


# --- names -------------------------------------------------------------------------------------


def _norm(name: str) -> str:
    return re.sub(r"[\s.#:/]+", ".", name.strip()).strip(".").lower()


def resolve_name(names: list[str], query: str) -> str | None:
    """The one name of `names` the query names exactly, dotted, spaced or in any case; else None."""
    if query in names:
        return query
    wanted = _norm(query)
    return next((n for n in names if _norm(n) == wanted), None)


def resolve(index: PackageIndex, query: str) -> tuple[ApiSymbol | None, list[str]]:
    """The symbol the query names, or None and the nearest names."""
    if query in index.symbols:
        return index.symbols[query], []
    wanted = _norm(query)
    by_norm = {_norm(n): n for n in index.symbols}
    if wanted in by_norm:
        return index.symbols[by_norm[wanted]], []
    # `timeout` alone: a unique member of that name
    tails = [n for n in index.symbols if _norm(n).rsplit(".", 1)[-1] == wanted]
    if len(tails) == 1:
        return index.symbols[tails[0]], []
    near = difflib.get_close_matches(wanted, list(by_norm), n=5, cutoff=0.6)
    names = [by_norm[n] for n in near]
    return None, (tails[:5] or names)

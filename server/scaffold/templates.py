"""Offline scaffolding behind the scaffold_service and scaffold_client tools.

Pure logic: no MCP, no network, no clock. The MCP layer validates arguments into the
models of types.py, calls one public function, and returns its dict as
structuredContent with the matching ``render_*_markdown`` text as content, so prose and
data cannot disagree.

Map of this module, top to bottom:

    SCAFFOLD_*_DESCRIPTION        the two tools' descriptions
    scaffold_service              -> {service, install, files[], types[], notes[], cliAlternative};
                                  the files are the service, its types, the broker config, the
                                  bootstrap, package.json (manifest.py) and tsconfig.json
    doc_safe_descriptions         descriptions made safe for the runtime-parsed JSDoc block
    render_service_markdown       that dict as markdown
    scaffold_client               -> {service, client, namespace, generateCommand, output, example,
                                  callTimeoutMs, files[]}: the example is the caller's src/caller.ts
                                  (with callTimeout set), files it, its package.json and tsconfig.json
    render_client_markdown        that dict as markdown

Facts the generated code relies on (from the @imqueue 3.x reference): services are
native ES modules with standard (TC39) decorators; an exposed method's JSDoc block is
the only runtime type source, so ``removeComments`` must stay false, and rpc parses it at run
time, starting a tag at every '@' (so no '@' of a description is written there); complex types are
classes carrying ``@classType()``; ``imq client generate <Class>`` writes
``<dir>/<Class>.ts`` whose only export is a namespace named after the service with a
lower-case first letter, holding ``<Base>Client``. Both sides read the broker from
``IMQ_REDIS`` (host:port) as the docs' tutorial does, so a service and its caller meet on any
Redis without an edit.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from imqueue_mcp.server.scaffold.manifest import (
    IMQ_REDIS_DEFAULT,
    IMQ_REDIS_ENV,
    broker_options_source,
    install_command,
    package_json_source,
)
from imqueue_mcp.server.scaffold.object_types import LiftedType, lift_object_types
from imqueue_mcp.server.scaffold.placement import refuse_unplaceable
from imqueue_mcp.server.scaffold.types import (
    CLIENT_SUFFIX,
    MAX_TYPES,
    Method,
    Param,
    ScaffoldError,
    coerce_methods,
    complex_type_names,
    json_crossing_notes,
    kebab_case,
    method_types,
    normalize_service_name,
    service_base_name,
)
from imqueue_mcp.server.scaffold.wiring import (
    CLIENT_OPTIONS_IMPORT,
    CLIENTS_FOLDER,
    Called,
    called_services,
    client_imports,
    client_members,
    client_options_source,
)

__all__ = [
    "SCAFFOLD_CLIENT_DESCRIPTION",
    "DEFAULT_CALL_TIMEOUT_MS",
    "MAX_CALL_TIMEOUT_MS",
    "SCAFFOLD_CLIENT_LOCAL_DESCRIPTION",
    "SCAFFOLD_SERVICE_DESCRIPTION",
    "SCAFFOLD_SERVICE_LOCAL_DESCRIPTION",
    "fenced",
    "render_client_markdown",
    "render_service_markdown",
    "scaffold_client",
    "scaffold_service",
]

SCAFFOLD_SERVICE_DESCRIPTION = (
    "READ-ONLY: returns the source of an @imqueue service as text and writes nothing to disk: an "
    "IMQService subclass with @expose()d, JSDoc-typed methods, a bootstrap that start()s it on the "
    "Redis IMQ_REDIS names (host:port, default localhost:6379), a package.json (ESM, rpc 3.x "
    "pinned, build/start), a tsconfig keeping comments (JSDoc is the runtime type source), and "
    "@classType() stubs. Omit methods for a starter; calls wires in clients of services it calls. "
    "A real project on disk: the local server's create_service (local_install_guide)."
)

SCAFFOLD_SERVICE_LOCAL_DESCRIPTION = (
    "Returns the source of an @imqueue service: an IMQService subclass with @expose()d, JSDoc-typed "
    "methods, a bootstrap on the Redis IMQ_REDIS names, package.json (ESM, rpc 3.x), tsconfig, and "
    "@classType() stubs. Omit methods for a starter. calls ['OtherService'] wires in the clients of "
    "the services it calls (their queues, call_timeout_ms) and names the generate_client call for "
    "each. WRITES only with path (absolute, inside the workspace roots): dry_run true (default) lists "
    "what would be written, false writes; a file with other content is replaced only with "
    "overwrite: true. The reply lists every file written."
)

SCAFFOLD_CLIENT_LOCAL_DESCRIPTION = (
    "Returns a caller project for an @imqueue service's typed client (src/caller.ts with a "
    "callTimeout, broker from IMQ_REDIS; package.json; tsconfig) and the generate_client call that "
    "makes the client from the running service, so its types never drift. WRITES only with path "
    "(absolute, inside the workspace roots): dry_run true (default) lists what would be written, "
    "false writes; a file with other content is replaced only with overwrite: true. The reply lists "
    "every file written."
)

SCAFFOLD_CLIENT_DESCRIPTION = (
    "READ-ONLY: returns the imq client generate command, a caller (src/caller.ts, broker from "
    "IMQ_REDIS) and its package.json for an @imqueue service's typed client, and writes nothing. "
    "Real clients are generated from the running service, so their types never drift; this tool "
    "names the output file, the exported namespace and the client class. To generate the client, "
    "run that command with the service running (the local server's generate_client runs it: "
    "local_install_guide)."
)


# --- scaffold_service ----------------------------------------------------------------

INDENT = "    "
JSDOC_WIDTH = 76

STARTER_METHOD = Method(
    name="greet",
    description="Returns a greeting. A service needs at least one exposed method to start; "
    "replace this one with your own.",
    params=[Param(name="name", type="string", description="who to greet", optional=True)],
    returns="string",
)
STARTER_BODY = "return `Hello, ${name ?? 'world'}!`;"


def scaffold_service(
    name: str,
    methods: Iterable[Method | Mapping[str, Any]] | None = None,
    calls: Iterable[str] | None = None,
    call_timeout_ms: int | None = None,
    project: str | None = None,
) -> dict[str, Any]:
    """Build the source of an @imqueue service; see the module docstring for the shape.

    Omitting ``methods`` (or passing none) yields a starter template with one example
    method, because a service with no exposed method does not start. ``calls`` names the
    services it calls: their clients are wired in (wiring.py), each call timing out after
    ``call_timeout_ms`` (DEFAULT_CALL_TIMEOUT_MS when None); ``project`` is the folder the
    files go to, named in the generate_client arguments, and refused when it cannot exist.
    """
    service = normalize_service_name(name)
    given = coerce_methods(methods)
    described, returns_descriptions, description_notes = doc_safe_descriptions(given)
    parsed, lifted, notes = lift_object_types(described, [service])
    notes += description_notes + json_crossing_notes(given)
    called = called_services(calls, service, parsed)
    timeout = _call_timeout(call_timeout_ms)
    if call_timeout_ms is not None and not called:
        raise ScaffoldError("call_timeout_ms is the timeout of the clients in calls: pass calls, or omit it.")
    refuse_unplaceable(project)
    types = method_types(parsed)
    if service in types:
        raise ScaffoldError(f"Type {service!r} has the same name as the service class; rename the type.")
    declared = sorted({*types, *(name for each in lifted for name in each.referenced())} - {service})
    if len(declared) > MAX_TYPES:
        raise ScaffoldError(
            f"The methods name {len(declared)} distinct complex types; a scaffold stubs at most "
            f"{MAX_TYPES}, one class each. Scaffold the service with fewer methods, then add the rest "
            "(a union of string literals is written in quotes: 'a' | 'b', not a | b)."
        )
    stubbed = [name for name in declared if name not in {each.name for each in lifted}]
    if stubbed:
        notes.append(stubbed_types_note(stubbed))
    source = service_source(service, parsed, types, called, returns_descriptions)
    files = [_file(f"src/{service}.ts", "typescript", source)]
    if declared:
        files.append(_file("src/types.ts", "typescript", types_source(declared, lifted)))
    config = SERVICE_CONFIG_SOURCE
    if called:
        config = CLIENT_OPTIONS_IMPORT + "\n" + config + client_options_source(timeout)
    files.append(_file("src/config.ts", "typescript", config))
    files.append(_file("src/index.ts", "typescript", bootstrap_source(service)))
    manifest = package_json_source(kebab_case(service), f"The {service} @imqueue service", "index")
    files.append(_file("package.json", "json", manifest))
    files.append(_file("tsconfig.json", "jsonc", TSCONFIG_SOURCE))
    return {
        "service": service,
        "install": install_command(),
        "files": files,
        "types": stubbed,
        "notes": notes,
        **(
            {
                "calls": [each.as_dict(_clients_folder(project)) for each in called],
                "callTimeoutMs": timeout,
                "callTimeoutDefaulted": call_timeout_ms is None,
            }
            if called
            else {}
        ),
        "cliAlternative": (
            f"imq service create {kebab_case(service)} ./{kebab_case(service)} scaffolds a complete, "
            "provider-wired project (VCS, CI, container registry, addon packages, tests); add --dry-run "
            "to preview it, or call the create_service tool, which dry-runs by default."
        ),
    }


def _file(path: str, language: str, content: str) -> dict[str, str]:
    return {"path": path, "language": language, "content": content}


def service_source(
    service: str,
    methods: Sequence[Method],
    types: Sequence[str],
    called: Sequence[Called] = (),
    returns_descriptions: Mapping[str, str] | None = None,
) -> str:
    lines = ["import { IMQService, expose } from '@imqueue/rpc';", *client_imports(called)]
    if types:
        lines += [
            "// Imported for its side effect as well: @classType() registers each type in the",
            "// service description, and a type-only import is erased at compile time.",
            "import './types.js';",
            f"import type {{ {', '.join(types)} }} from './types.js';",
        ]
    lines += [
        "",
        "/**",
        f" * {service}: every @expose()d method below is callable by clients over the",
        f" * queue named '{service}'.",
        " */",
        f"export class {service} extends IMQService {{",
    ]
    returned = returns_descriptions or {}
    bodies = [_method_source(method, service, returns=returned.get(method.name)) for method in methods] or [
        _method_source(STARTER_METHOD, service, STARTER_BODY)
    ]
    members = client_members(called)
    lines.append("\n\n".join(["\n".join(members)] * bool(members) + bodies))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _method_source(method: Method, service: str, body: str | None = None, returns: str | None = None) -> str:
    signature = ", ".join(
        f"{param.name}{'?' if param.optional else ''}: {param.type}" for param in method.params
    )
    body = body or f"throw new Error('{service}.{method.name}() is not implemented yet');"
    lines = [
        *_jsdoc(method, returns),
        "@expose()",
        f"public async {method.name}({signature}): Promise<{method.returns}> {{",
        f"{INDENT}{body}",
        "}",
    ]
    return "\n".join(INDENT + line for line in lines)


def _jsdoc(method: Method, returns: str | None = None) -> list[str]:
    """The doc-block @imqueue reads at runtime: one @param per argument, then @return.

    Descriptions go through doc_safe_descriptions first: any '@' in them would start a tag."""
    summary = method.description or f"TODO: describe what {method.name}() does."
    lines = ["/**", *(f" * {line}".rstrip() for line in _wrapped(_comment_safe(summary))), " *"]
    for param in method.params:
        name = f"[{param.name}]" if param.optional else param.name
        suffix = f" - {_single_line(param.description)}" if param.description else ""
        lines.append(f" * @param {{{param.type}}} {name}{suffix}")
    suffix = f" {_single_line(returns)}" if returns else ""
    lines.append(f" * @return {{Promise<{method.returns}>}}{suffix}")
    lines.append(" */")
    return lines


# rpc 3.x parses the doc block at run time, and any '@' there starts a tag (RX_TAG = /(@[^@]+)/g in
# decorators/expose.js): '@param x' adds a parameter, an e-mail address cuts the text. A
# description's '@' is written as this look-alike, which rpc reads as text.
AT_LOOKALIKE = "\uff20"  # FULLWIDTH COMMERCIAL AT
_PARAM_TAG = re.compile(r"@(?:param|params|arg|argument)\b\s*(?P<rest>.*)", re.DOTALL)
_RETURNS_TAG = re.compile(r"@returns?\b\s*(?P<rest>.*)", re.DOTALL)
_TAG_NAME = re.compile(r"\[?\s*(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)(?:\s*=[^\]]*)?\s*\]?\s*(?:-\s*)?")


def doc_safe_descriptions(methods: Sequence[Method]) -> tuple[list[Method], dict[str, str], list[str]]:
    """The methods with no '@' left in their descriptions, each method's returns description,
    and one note per method changed.

    A description line that is a JSDoc tag is understood: ``@param name text`` describes that
    parameter (when it has no description of its own), ``@returns text`` goes on the @return
    line; a tag line that cannot be used is dropped. Any other '@' becomes AT_LOOKALIKE."""
    result: list[Method] = []
    returns: dict[str, str] = {}
    notes: list[str] = []
    for method in methods:
        described = {param.name: param.description for param in method.params}
        summary: list[str] = []
        used: list[str] = []
        dropped: list[str] = []
        for line in (method.description or "").splitlines():
            tag = line.strip().lstrip("*").strip()
            param = _PARAM_TAG.fullmatch(tag)
            returned = _RETURNS_TAG.fullmatch(tag)
            if param:
                found = _TAG_NAME.match(_without_type(param["rest"]))
                name = found["name"] if found else ""
                text = _without_type(param["rest"])[found.end() :].strip() if found else ""
                if name in described and not described[name] and text:
                    described[name] = text
                    used.append(tag)
                else:
                    dropped.append(tag)
            elif returned and _without_type(returned["rest"]) and method.name not in returns:
                returns[method.name] = _without_type(returned["rest"]).removeprefix("-").strip()
                used.append(tag)
            elif returned:
                dropped.append(tag)
            else:
                summary.append(line)
        description = "\n".join(summary).strip() or None
        lookalikes = [
            text
            for text in [description, *described.values(), returns.get(method.name)]
            if text and "@" in text
        ]
        params = [
            param.model_copy(update={"description": _at_safe(described[param.name])})
            for param in method.params
        ]
        if method.name in returns:
            returns[method.name] = _at_safe(returns[method.name]) or ""
        result.append(method.model_copy(update={"description": _at_safe(description), "params": params}))
        notes += _description_notes(method.name, used, dropped, lookalikes)
    return result, returns, notes


def _without_type(text: str) -> str:
    """A tag's text after its leading {type}, if it has one (braces matched by depth)."""
    text = text.strip()
    if not text.startswith("{"):
        return text
    depth = 0
    for index, char in enumerate(text):
        depth += (char == "{") - (char == "}")
        if not depth:
            return text[index + 1 :].strip()
    return text


def _at_safe(text: str | None) -> str | None:
    return text.replace("@", AT_LOOKALIKE) if text else text


def _description_notes(
    method: str, used: Sequence[str], dropped: Sequence[str], lookalikes: Sequence[str]
) -> list[str]:
    why = (
        "@imqueue parses the JSDoc block at run time and starts a tag at every '@', so a description's "
        "'@' would change the method's signature (an extra @param is an extra parameter) or cut its text"
    )
    sentences = []
    if used:
        sentences.append(
            "the tag lines " + "; ".join(repr(tag) for tag in used) + " are written as the parameter's "
            "or the return's description"
        )
    if dropped:
        sentences.append(
            "the tag lines " + "; ".join(repr(tag) for tag in dropped) + " are left out (the parameters "
            "are the method's params, each described by its params[].description: a @param line only "
            "describes a parameter in params that has no description, and one @returns the return)"
        )
    if lookalikes:
        sentences.append(f"every other '@' is written as '{AT_LOOKALIKE}' (U+FF20), which rpc reads as text")
    if not sentences:
        return []
    return [f"{method}()'s descriptions: {'; '.join(sentences)}. Why: {why}."]


def _comment_safe(text: str) -> str:
    return text.replace("*/", "*\\/").strip()


def _wrapped(text: str) -> list[str]:
    """Wrap each paragraph line of a description so the doc-block stays readable."""
    return [wrapped for line in text.splitlines() for wrapped in textwrap.wrap(line, JSDOC_WIDTH) or [""]]


def _single_line(text: str) -> str:
    return " ".join(_comment_safe(text).split())


def stubbed_types_note(names: Sequence[str]) -> str:
    """What to do with the classes src/types.ts stubs, for the names a signature gave (an enum or a
    union alias among them would be stubbed as a class and never described to clients)."""
    return (
        f"src/types.ts stubs {', '.join(names)} as @classType() classes: declare each field with "
        "@property('<type>'); a Date field arrives as its ISO string, so declare it 'string'. If one "
        "is an enum or a union type alias, it is no class and the service cannot describe it: delete "
        "its stub and write the union of its literal values ('a' | 'b') where the methods and "
        "@property() name it, or the generated client will not compile."
    )


def types_source(types: Sequence[str], lifted: Sequence[LiftedType] = ()) -> str:
    blocks = ["import { classType, property } from '@imqueue/rpc';"]
    declared = {each.name: each for each in lifted}
    for type_name in types:
        if type_name in declared:
            blocks.append(_lifted_type_source(declared[type_name]))
            continue
        blocks.append(
            "\n".join(
                [
                    "/**",
                    f" * {type_name}: crosses the queue as JSON. Declare every field it carries",
                    " * with @property('<TypeScript type>'), adding true as a second argument",
                    " * for an optional field; undeclared fields reach clients untyped. A Date",
                    " * arrives as its ISO string: declare it @property('string'). An enum or a",
                    " * union of literals is no class: delete this stub and write its literals",
                    " * ('a' | 'b') where the methods and @property() name it.",
                    " */",
                    "@classType()",
                    f"export class {type_name} {{",
                    f"{INDENT}// Placeholder: replace with the real fields, for example",
                    f"{INDENT}// @property('string')",
                    f"{INDENT}// id!: string;",
                    "}",
                ]
            )
        )
    return "\n\n".join(blocks) + "\n"


def _lifted_type_source(lifted: LiftedType) -> str:
    lines = [
        "/**",
        f" * {lifted.name}: generated from the object literal {_single_line(lifted.source)}",
        " * so that the service describes it to clients (an object literal is described as any).",
        " */",
        "@classType()",
        f"export class {lifted.name} {{",
    ]
    for index, field in enumerate(lifted.fields):
        if index:
            lines.append("")
        optional = ", true" if field.optional else ""
        lines.append(f"{INDENT}@property({_ts_string(field.type)}{optional})")
        lines.append(f"{INDENT}{field.name}{'?' if field.optional else '!'}: {field.type};")
    lines.append("}")
    return "\n".join(lines)


def _ts_string(text: str) -> str:
    """A single-quoted TypeScript string literal of ``text``."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


SERVICE_CONFIG_SOURCE = broker_options_source(
    "serviceOptions", "IMQServiceOptions", "DEFAULT_IMQ_SERVICE_OPTIONS"
)


def bootstrap_source(service: str) -> str:
    return "\n".join(
        [
            "import { serviceOptions } from './config.js';",
            f"import {{ {service} }} from './{service}.js';",
            "",
            f"// Connects to the Redis that {IMQ_REDIS_ENV} names ({IMQ_REDIS_DEFAULT} when unset; see",
            f"// config.ts), then serves calls arriving on the '{service}' queue until SIGTERM or SIGINT.",
            f"const service = new {service}(serviceOptions);",
            "",
            "await service.start();",
            "",
        ]
    )


TSCONFIG_SOURCE = """\
{
    "compilerOptions": {
        // @imqueue 3.x ships native ES modules and needs Node.js 22.12 or newer.
        // "nodenext" compiles src to ESM only when package.json has "type": "module".
        "target": "es2024",
        "lib": ["es2024", "esnext.decorators"],
        "module": "nodenext",
        "moduleResolution": "nodenext",
        // @imqueue 3.x uses standard (TC39) decorators: keep the legacy ones off.
        "experimentalDecorators": false,
        // REQUIRED: the JSDoc block on each exposed method is @imqueue's runtime type
        // source. Strip comments and generated clients lose every type and argument.
        "removeComments": false,
        "strict": true,
        "rootDir": "src",
        "outDir": "dist"
    },
    "include": ["src"]
}
"""


def render_service_markdown(data: Mapping[str, Any], written: str | None = None) -> str:
    """Markdown for a scaffold_service result, built only from that result; `written` says what
    was written where (the local server's path argument), else the reply says nothing was."""
    service = data["service"]
    parts = [
        f"# {service}: @imqueue service scaffold",
        written or "Nothing has been written to disk: create these files yourself, or use the CLI below.",
        "## Install",
        fenced(data["install"], "bash"),
        "## Files",
    ]
    for file in data["files"]:
        parts += [f"### {file['path']}", fenced(file["content"], file["language"])]
    literal = [note for note in data["notes"] if _OBJECT_LITERAL_NOTE.match(note)]
    other = [note for note in data["notes"] if not _OBJECT_LITERAL_NOTE.match(note)]
    if literal:
        parts += ["## Object-literal types", "\n".join(f"- {note}" for note in literal)]
    if other:
        parts += ["## Notes", "\n".join(f"- {note}" for note in other)]
    if data["types"]:
        parts += [
            "## Complex types",
            "Stubbed in src/types.ts, fields still to declare with @property(): "
            + ", ".join(f"`{name}`" for name in data["types"])
            + ".",
        ]
    if data.get("calls"):
        parts += ["## Services it calls", _calls_text(data)]
    parts += [
        "## Next steps",
        '- Keep `"removeComments": false`: the JSDoc blocks are what clients are typed from.\n'
        f"- `npm install`, `npm run build`, then `npm start` (`node dist/index.js`): the service listens on "
        f"the `{service}` queue of the Redis in `{IMQ_REDIS_ENV}` (host:port; `{IMQ_REDIS_DEFAULT}` when "
        "unset).\n"
        "- Get a typed client from the running service with scaffold_client (command) or "
        "generate_client (runs it).",
        "## Full project",
        data["cliAlternative"],
    ]
    return "\n\n".join(parts) + "\n"


# How each note of object_types.py begins; the others (descriptions, JSON crossing) begin otherwise.
_OBJECT_LITERAL_NOTE = re.compile(
    r"[\w$]+\(\)'s (?:parameter [\w$]+|return) "
    r"(?:had the object literal |has the type .*, with an object literal this scaffold cannot declare)"
)


def _calls_text(data: Mapping[str, Any]) -> str:
    lines = [
        f"{data['service']} holds a client of each, on that service's queue, started in `start()` and "
        f"destroyed in `destroy()`; each call times out after {data['callTimeoutMs']} ms (`callTimeout` in "
        "src/config.ts"
        + (
            ", the scaffold's default: pass call_timeout_ms to choose"
            if data["callTimeoutDefaulted"]
            else ", as asked"
        )
        + "). The clients are not in these files: they are generated from the running "
        "services, so they match them. Before `npm run build`, with each service running on the same "
        "Redis, call:",
    ]
    for each in data["calls"]:
        arguments = ", ".join(f"{key}: {value!r}" for key, value in each["generate"]["arguments"].items())
        lines.append(
            f"- generate_client({arguments}) -> `{each['clientFile']}` (namespace `{each['namespace']}`, "
            f"client `{each['namespace']}.{each['client']}`, used as `this.{each['field']}`); add redis: "
            "'host:port' when the broker is not localhost:6379."
        )
    return "\n".join(lines)


def fenced(content: str, language: str) -> str:
    """A code fence longer than any backtick run inside, so user text cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{content.rstrip()}\n{fence}"


# --- scaffold_client -----------------------------------------------------------------

CLIENT_DIRECTORY = "./src/clients"
CALLER_FILE = "src/caller.ts"


DEFAULT_CALL_TIMEOUT_MS = 30_000
"""The caller's callTimeout when none is asked for. @imqueue/rpc 3.x leaves callTimeout unset
(a call to an absent or hung service then waits forever); 30 s matches the generator's own
description timeout (DEFAULT_IMQ_CLIENT_OPTIONS.timeout)."""
MAX_CALL_TIMEOUT_MS = 3_600_000


def scaffold_client(
    service: str,
    methods: Iterable[Method | Mapping[str, Any]] | None = None,
    call_timeout_ms: int | None = None,
    project: str | None = None,
    declared_in: str | None = None,
) -> dict[str, Any]:
    """Name everything ``imq client generate`` will produce for ``service``, and a caller.

    The client itself is not fabricated: it is generated from the running service,
    so a copy written here could only drift from it. The caller sets ``callTimeout``
    (``call_timeout_ms``, DEFAULT_CALL_TIMEOUT_MS when None); ``files`` lists every file
    shown, the caller included. ``project``, the folder they go to, is refused when it
    cannot exist. ``declared_in``: the file that declares ``service`` itself as a service class
    (imq's template names it after the project, 'Greeter'), whose name is then taken as it is.
    """
    timeout = _call_timeout(call_timeout_ms)
    service_class = service if declared_in else normalize_service_name(service)
    parsed = coerce_methods(methods)
    refuse_unplaceable(project)
    namespace = service_class[0].lower() + service_class[1:]
    client_class = service_base_name(service_class) + CLIENT_SUFFIX
    caller = f"{kebab_case(service_class)}-caller"
    example = _file(
        CALLER_FILE, "typescript", client_example(service_class, namespace, client_class, parsed, timeout)
    )
    return {
        "service": service_class,
        "client": client_class,
        "namespace": namespace,
        "generateCommand": f"imq client generate {service_class} {CLIENT_DIRECTORY}",
        "output": f"{CLIENT_DIRECTORY}/{service_class}.ts",
        "generate": {
            "tool": "generate_client",
            "arguments": {"service": service_class, "path": _clients_folder(project)},
        },
        "example": example,
        "callTimeoutMs": timeout,
        "callTimeoutDefaulted": call_timeout_ms is None,
        **({"declaredIn": declared_in} if declared_in else {}),
        "files": [
            example,
            _file(
                "package.json",
                "json",
                package_json_source(caller, f"Calls {service_class} over @imqueue", "caller"),
            ),
            _file("tsconfig.json", "jsonc", TSCONFIG_SOURCE),
        ],
    }


def _clients_folder(project: str | None) -> str:
    return f"{project.rstrip('/')}/{CLIENTS_FOLDER}" if project else CLIENTS_FOLDER


def _call_timeout(call_timeout_ms: int | None) -> int:
    timeout = DEFAULT_CALL_TIMEOUT_MS if call_timeout_ms is None else call_timeout_ms
    if not 1 <= timeout <= MAX_CALL_TIMEOUT_MS:
        raise ScaffoldError(
            f"call_timeout_ms must be between 1 and {MAX_CALL_TIMEOUT_MS} milliseconds, got {timeout}."
        )
    return timeout


def client_example(
    service: str,
    namespace: str,
    client_class: str,
    methods: Sequence[Method],
    call_timeout_ms: int = DEFAULT_CALL_TIMEOUT_MS,
) -> str:
    calls = [_client_call(method, namespace) for method in methods] or [
        "// Each exposed method is a typed member of the client; describe() lists them.",
        "console.log(await client.describe());",
    ]
    options = broker_options_source(
        "clientOptions",
        "IMQClientOptions",
        "DEFAULT_IMQ_CLIENT_OPTIONS",
        export=False,
        extra=[
            "    // A call with no answer within this many milliseconds rejects with",
            "    // IMQ_RPC_CALL_TIMEOUT; unset, it would wait forever.",
            f"    callTimeout: {call_timeout_ms},",
        ],
    )
    imports, _, body = options.partition("\n\n")
    return "\n".join(
        [
            imports,
            f"import {{ {namespace} }} from './clients/{service}.js';",
            "",
            body.rstrip("\n"),
            "",
            "// Name the service's queue: by default a client calls its own class name minus 'Client'",
            f"// ('{client_class.removesuffix(CLIENT_SUFFIX)}'), where no service listens.",
            f"const client = new {namespace}.{client_class}(clientOptions, '{service}');",
            "",
            "await client.start();",
            "",
            "try {",
            *(INDENT + call for call in calls),
            "} finally {",
            f"{INDENT}await client.destroy();",
            "}",
            "",
        ]
    )


def _client_call(method: Method, namespace: str) -> str:
    arguments = ", ".join(
        _placeholder_argument(param.type, namespace) for param in method.params if not param.optional
    )
    call = f"await client.{method.name}({arguments})"
    return f"{call};" if method.returns in ("void", "undefined") else f"console.log({call});"


def _placeholder_argument(type_text: str, namespace: str) -> str:
    """An illustrative value of ``type_text``; complex types live in the client namespace."""
    literals = {"string": "'example'", "number": "1", "boolean": "true", "bigint": "1n"}
    if type_text in literals:
        return literals[type_text]
    if type_text.endswith("[]") or type_text.startswith(("Array<", "readonly ")):
        return "[]"
    names = complex_type_names(type_text)
    if len(names) == 1 and names[0] == type_text:
        return f"{{ /* {namespace}.{type_text} fields */ }} as {namespace}.{type_text}"
    return "undefined as any"


def _timeout_sentence(data: Mapping[str, Any]) -> str:
    timeout = data["callTimeoutMs"]
    if data["callTimeoutDefaulted"]:
        return (
            f"Each call times out after {timeout} ms (`callTimeout`): no timeout was asked for, so this "
            "is the scaffold's default (@imqueue/rpc leaves callTimeout unset, and a call to an absent "
            "service then waits forever). Pass call_timeout_ms to choose another."
        )
    return f"Each call times out after {timeout} ms (`callTimeout`, as asked)."


def render_client_markdown(data: Mapping[str, Any], written: str | None = None) -> str:
    """Markdown for a scaffold_client result, built only from that result (`written`: as for
    render_service_markdown)."""
    service = data["service"]
    return (
        "\n\n".join(
            [
                f"# Typed client for {service}",
                *([written] if written else []),
                "@imqueue generates the real client from the running service, which describes itself "
                "over the queue, so its types never drift from the implementation. "
                + (
                    "The client itself is not generated yet."
                    if written
                    else "Nothing has been generated or written yet."
                ),
                "## Generate it",
                f"Start the service first (and Redis): generation asks the `{service}` queue to describe "
                "itself and times out when nobody is listening. Then run:",
                fenced(data["generateCommand"], "bash"),
                f"- Output: `{data['output']}` (commit it: it is the reviewable contract).\n"
                f"- The argument is the service's class name because that is its queue name"
                + (
                    f" ({service} as {data['declaredIn']} declares it; imq's template names the class "
                    "after the project).\n"
                    if data.get("declaredIn")
                    else ".\n"
                )
                + f"- The module's only export is the namespace `{data['namespace']}`; the client class is "
                f"`{data['namespace']}.{data['client']}`, beside the service's complex types.\n"
                "- Add `-o` to overwrite an existing client without a prompt. The generate_client tool "
                "runs the command for you: generate_client("
                + ", ".join(f"{key}: {value!r}" for key, value in data["generate"]["arguments"].items())
                + ").\n"
                f"- imq reaches Redis on {IMQ_REDIS_DEFAULT} only. For a service on another broker, call "
                "generate_client with redis='host:port' (its IMQ_REDIS): it generates through your "
                "project's own @imqueue/rpc.",
                f"## Call it: {data['example']['path']}",
                "A caller that runs as written once the client is generated beside it (placeholder "
                "arguments: put real values in). It reaches the service over the Redis in "
                f"`{IMQ_REDIS_ENV}` (host:port; `{IMQ_REDIS_DEFAULT}` when unset), as the service does.",
                _timeout_sentence(data),
                fenced(data["example"]["content"], data["example"]["language"]),
                "## The caller's project",
                "ESM with the documented majors pinned: `npm install`, generate the client, then "
                "`npm run build && npm start`.",
                *(
                    part
                    for file in data["files"]
                    if file["path"] != data["example"]["path"]
                    for part in (f"### {file['path']}", fenced(file["content"], file["language"]))
                ),
            ]
        )
        + "\n"
    )

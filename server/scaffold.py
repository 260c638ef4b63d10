"""Offline scaffolding behind the scaffold_service and scaffold_client tools.

Pure logic: no MCP, no network, no clock. The MCP layer validates arguments into the
models below, calls one public function, and returns its dict as structuredContent
with the matching ``render_*_markdown`` text as content, so prose and data cannot
disagree.

Map of this module, top to bottom:

    ScaffoldError                 every user-facing failure; the message says what to fix
    normalize_service_name        "user-service" -> "UserService" (the class and queue name)
    Param, Method                 strict input models; names must be JavaScript identifiers
    complex_type_names            TypeScript type strings -> names that need @classType()
    scaffold_service              -> {service, install, files[], types[], cliAlternative}
    render_service_markdown       that dict as markdown
    scaffold_client               -> {service, client, namespace, generateCommand, output, example}
    render_client_markdown        that dict as markdown

Facts the generated code relies on (from the @imqueue 3.x reference): services are
native ES modules with standard (TC39) decorators; an exposed method's JSDoc block is
the only runtime type source, so ``removeComments`` must stay false; complex types are
classes carrying ``@classType()``; ``imq client generate <Class>`` writes
``<dir>/<Class>.ts`` whose only export is a namespace named after the service with a
lower-case first letter, holding ``<Base>Client``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

__all__ = [
    "SCAFFOLD_CLIENT_DESCRIPTION",
    "SCAFFOLD_SERVICE_DESCRIPTION",
    "Method",
    "Param",
    "ScaffoldError",
    "complex_type_names",
    "normalize_service_name",
    "render_client_markdown",
    "render_service_markdown",
    "scaffold_client",
    "scaffold_service",
]

SCAFFOLD_SERVICE_DESCRIPTION = (
    "READ-ONLY: returns the source of an @imqueue service as text and writes nothing to disk. "
    "You get an IMQService subclass with @expose()d, JSDoc-typed methods, a bootstrap that "
    "start()s it, a tsconfig that keeps comments (JSDoc is the runtime type source), and "
    "@classType() stubs for every non-primitive type. Omit methods for a starter template. "
    "To create a real, provider-wired project on disk, use create_service (imq service create)."
)

SCAFFOLD_CLIENT_DESCRIPTION = (
    "READ-ONLY: returns the imq client generate command and an illustrative usage snippet for an "
    "@imqueue service's typed client, and writes nothing. Real clients are generated from the "
    "running service, so their types never drift; this tool names the output file, the exported "
    "namespace and the client class. To actually generate the client, use generate_client "
    "(the service must be running)."
)


class ScaffoldError(ValueError):
    """Raised for input the scaffolders cannot turn into valid code.

    The message names the offending value and what is allowed instead, so the MCP
    layer can hand it to the agent unchanged as an isError result.
    """


# --- service names -------------------------------------------------------------------

SERVICE_SUFFIX = "Service"
CLIENT_SUFFIX = "Client"

_SERVICE_NAME_CHARACTERS = re.compile(r"[A-Za-z0-9 _-]+")
# One word of a spelled-out name: an acronym before a capitalised word (HTTP|Gateway),
# a capitalised or lower-case word, a trailing acronym, or a run of digits.
_NAME_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

_NAME_RULE = (
    "Use letters, digits, spaces, '-' or '_', starting with a letter, "
    "e.g. 'user', 'user-service' or 'UserService'."
)


def normalize_service_name(raw: str) -> str:
    """Return the service class name for any common spelling of it.

    ``user``, ``User``, ``user-service``, ``user_service``, ``userService`` and
    ``user service`` all become ``UserService``. The class name matters because it is
    also the queue name clients address and the name ``imq client generate`` takes.
    """
    words = _service_name_words(raw)
    while words and words[-1].lower() == SERVICE_SUFFIX.lower():
        words.pop()
    if not words:
        raise ScaffoldError(f"Service name {raw!r} has no word besides 'Service'. {_NAME_RULE}")
    name = "".join(word[0].upper() + word[1:] for word in words) + SERVICE_SUFFIX
    if name == "IMQService":
        # IMQService refuses to be constructed under its own name, even by a subclass.
        raise ScaffoldError("Service name 'IMQService' is the framework's base class; pick another name.")
    return name


def _service_name_words(raw: str) -> list[str]:
    text = raw.strip()
    if not text:
        raise ScaffoldError(f"Service name is empty. {_NAME_RULE}")
    if not _SERVICE_NAME_CHARACTERS.fullmatch(text):
        raise ScaffoldError(f"Service name {raw!r} contains characters that are not allowed. {_NAME_RULE}")
    if not text[0].isalpha():
        raise ScaffoldError(f"Service name {raw!r} must start with a letter. {_NAME_RULE}")
    return _NAME_WORD.findall(text)


def service_base_name(service_class: str) -> str:
    """``UserService`` -> ``User``: the part the generator keeps for ``<Base>Client``."""
    return service_class.removesuffix(SERVICE_SUFFIX)


def kebab_case(service_class: str) -> str:
    """``HTTPGatewayService`` -> ``http-gateway-service``: a project directory name."""
    return "-".join(word.lower() for word in _NAME_WORD.findall(service_class))


# --- input models --------------------------------------------------------------------

_JS_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_JS_RESERVED_WORDS = frozenset(
    "arguments await break case catch class const continue debugger default delete do else enum "
    "eval export extends false finally for function if implements import in instanceof interface "
    "let new null package private protected public return static super switch this throw true "
    "try typeof var void while with yield".split()
)
# Members of IMQService and IMQClient: an exposed method with one of these names would
# override the service's own lifecycle or collide with the generated client's.
_FRAMEWORK_MEMBER_NAMES = frozenset(
    "broadcast cache constructor describe destroy hostName id imq logger metricsServer name "
    "options publish queueName remoteCall serviceName start stop subscribe unsubscribe".split()
)
# TypeScript type syntax only. Excluding '*', '/', '@' and newlines keeps a type from
# closing or corrupting the JSDoc block it is written into.
_TYPE_CHARACTERS = re.compile(r"[A-Za-z0-9_$<>\[\]{}()|&,.?:;'\" =-]+")
_MAX_TYPE_LENGTH = 200


def _check_identifier(value: str, what: str) -> str:
    if not _JS_IDENTIFIER.fullmatch(value):
        raise ValueError(
            f"{what} {value!r} is not a JavaScript identifier: use letters, digits, '_' or '$', "
            "not starting with a digit (e.g. 'getUser')."
        )
    if value in _JS_RESERVED_WORDS:
        raise ValueError(f"{what} {value!r} is a reserved word in JavaScript; pick another name.")
    return value


def _check_type(value: str) -> str:
    text = " ".join(value.split())
    if not text:
        raise ValueError("A type is empty; give a TypeScript type such as 'string' or 'User[]'.")
    if len(text) > _MAX_TYPE_LENGTH or not _TYPE_CHARACTERS.fullmatch(text):
        raise ValueError(
            f"Type {value!r} is not a plain TypeScript type: use names, <>, [], {{}}, (), |, &, "
            f"quotes and ':' only, up to {_MAX_TYPE_LENGTH} characters."
        )
    if not _brackets_balanced(text):
        raise ValueError(f"Type {value!r} has unbalanced brackets.")
    return text


def _brackets_balanced(text: str) -> bool:
    closing = {")": "(", "]": "[", "}": "{", ">": "<"}
    stack: list[str] = []
    for index, char in enumerate(text):
        if char == ">" and index and text[index - 1] == "=":
            continue  # the arrow of a function type, not a closing bracket
        if char in "([{<":
            stack.append(char)
        elif char in closing:
            if not stack or stack.pop() != closing[char]:
                return False
    return not stack


class Param(BaseModel):
    """One parameter of an exposed method."""

    model_config = ConfigDict(extra="forbid")

    name: str
    type: str = "any"
    description: str | None = None
    optional: bool = False

    @field_validator("name")
    @classmethod
    def _name_is_identifier(cls, value: str) -> str:
        return _check_identifier(value, "Parameter name")

    @field_validator("type")
    @classmethod
    def _type_is_typescript(cls, value: str) -> str:
        return _check_type(value)


class Method(BaseModel):
    """One exposed method; ``returns`` is the resolved type, ``Promise<...>`` is added."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str | None = None
    params: list[Param] = []
    returns: str = "void"

    @field_validator("name")
    @classmethod
    def _name_is_identifier(cls, value: str) -> str:
        _check_identifier(value, "Method name")
        if value in _FRAMEWORK_MEMBER_NAMES:
            raise ValueError(
                f"Method name {value!r} is already a member of IMQService or IMQClient; "
                f"pick a more specific name (e.g. '{value}Job')."
            )
        return value

    @field_validator("returns")
    @classmethod
    def _returns_is_typescript(cls, value: str) -> str:
        return unwrap_promise(_check_type(value))

    @model_validator(mode="after")
    def _params_are_well_ordered(self) -> Method:
        names = [param.name for param in self.params]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"Method {self.name!r} repeats parameter {', '.join(duplicates)}.")
        seen_optional = False
        for param in self.params:
            if param.optional:
                seen_optional = True
            elif seen_optional:
                # TypeScript rejects it, and positional RPC arguments could not skip it.
                raise ValueError(
                    f"Method {self.name!r}: required parameter {param.name!r} follows an optional one; "
                    "move optional parameters last."
                )
        return self


def coerce_methods(methods: Iterable[Method | Mapping[str, Any]] | None) -> list[Method]:
    """Validate raw method dicts (or pass models through); duplicates are refused."""
    try:
        parsed = [m if isinstance(m, Method) else Method.model_validate(m) for m in methods or ()]
    except ValidationError as error:
        raise ScaffoldError(_validation_message(error)) from error
    names = [method.name for method in parsed]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ScaffoldError(f"Method {', '.join(duplicates)} is defined twice; method names must be unique.")
    return parsed


def _validation_message(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "method"
        message = str(item["msg"]).removeprefix("Value error, ")
        problems.append(f"{where}: {message}")
    return "Invalid methods: " + "; ".join(problems)


# --- types ---------------------------------------------------------------------------

# Types that need no @classType() declaration. Date is a built-in; note it crosses the
# queue as JSON, so it arrives as an ISO string.
PRIMITIVE_TYPES = frozenset(
    "any bigint boolean Date never null number object string symbol undefined unknown void".split()
)
# Built-in type operators and containers: looked through, never stubbed. Declaring a
# class named Map or Promise in types.ts would shadow the global.
_BUILT_IN_TYPES = frozenset(
    "Array ArrayBuffer BigInt Boolean Buffer Error Function Map NonNullable Number Object Omit "
    "Partial Pick Promise Readonly ReadonlyArray Record RegExp Required Set String Symbol "
    "Uint8Array".split()
)
_TYPE_KEYWORDS = frozenset("asserts extends false infer is keyof readonly true typeof unique".split())
_TYPE_NAME = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)*")
_STRING_LITERAL = re.compile(r"'[^']*'|\"[^\"]*\"")


def complex_type_names(type_text: str) -> list[str]:
    """Names in a TypeScript type that need a ``@classType()`` declaration, in order.

    Looks through unions, arrays, generics and ``readonly``: ``User[] | null`` and
    ``Record<string, Address>`` give ``User`` and ``Address``. String-literal types,
    object-literal keys and qualified names (``ns.Type``, declared elsewhere) are skipped.
    """
    text = _STRING_LITERAL.sub("''", type_text)
    names: list[str] = []
    for match in _TYPE_NAME.finditer(text):
        name = match.group()
        rest = text[match.end():].lstrip()
        if rest.startswith(":") or rest.startswith("?:"):
            continue  # a key inside an object-literal type
        if "." in name or name in PRIMITIVE_TYPES or name in _BUILT_IN_TYPES or name in _TYPE_KEYWORDS:
            continue
        if name not in names:
            names.append(name)
    return names


def unwrap_promise(type_text: str) -> str:
    """``Promise<User>`` -> ``User``, so a given return type is never wrapped twice."""
    if not (type_text.startswith("Promise<") and type_text.endswith(">")):
        return type_text
    inner = type_text[len("Promise<"):-1]
    return inner.strip() if _brackets_balanced(inner) else type_text


def _method_types(methods: Sequence[Method]) -> list[str]:
    names: list[str] = []
    for method in methods:
        for type_text in [*(param.type for param in method.params), method.returns]:
            names.extend(name for name in complex_type_names(type_text) if name not in names)
    return sorted(names)


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
    name: str, methods: Iterable[Method | Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """Build the source of an @imqueue service; see the module docstring for the shape.

    Omitting ``methods`` (or passing none) yields a starter template with one example
    method, because a service with no exposed method does not start.
    """
    service = normalize_service_name(name)
    parsed = coerce_methods(methods)
    types = _method_types(parsed)
    if service in types:
        raise ScaffoldError(f"Type {service!r} has the same name as the service class; rename the type.")
    files = [_file(f"src/{service}.ts", "typescript", service_source(service, parsed, types))]
    if types:
        files.append(_file("src/types.ts", "typescript", types_source(types)))
    files.append(_file("src/index.ts", "typescript", bootstrap_source(service)))
    files.append(_file("tsconfig.json", "jsonc", TSCONFIG_SOURCE))
    return {
        "service": service,
        "install": "npm install @imqueue/rpc && npm install --save-dev typescript @types/node",
        "files": files,
        "types": types,
        "cliAlternative": (
            f"imq service create {kebab_case(service)} ./{kebab_case(service)} scaffolds a complete, "
            "provider-wired project (VCS, CI, container registry, addon packages, tests); add --dry-run "
            "to preview it, or call the create_service tool, which dry-runs by default."
        ),
    }


def _file(path: str, language: str, content: str) -> dict[str, str]:
    return {"path": path, "language": language, "content": content}


def service_source(service: str, methods: Sequence[Method], types: Sequence[str]) -> str:
    lines = ["import { IMQService, expose } from '@imqueue/rpc';"]
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
    bodies = [_method_source(method, service) for method in methods] or [
        _method_source(STARTER_METHOD, service, STARTER_BODY)
    ]
    lines.append("\n\n".join(bodies))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _method_source(method: Method, service: str, body: str | None = None) -> str:
    signature = ", ".join(
        f"{param.name}{'?' if param.optional else ''}: {param.type}" for param in method.params
    )
    body = body or f"throw new Error('{service}.{method.name}() is not implemented yet');"
    lines = [
        *_jsdoc(method),
        "@expose()",
        f"public async {method.name}({signature}): Promise<{method.returns}> {{",
        f"{INDENT}{body}",
        "}",
    ]
    return "\n".join(INDENT + line for line in lines)


def _jsdoc(method: Method) -> list[str]:
    """The doc-block @imqueue reads at runtime: one @param per argument, then @return."""
    summary = method.description or f"TODO: describe what {method.name}() does."
    lines = ["/**", *(f" * {line}".rstrip() for line in _wrapped(_comment_safe(summary))), " *"]
    for param in method.params:
        name = f"[{param.name}]" if param.optional else param.name
        suffix = f" - {_single_line(param.description)}" if param.description else ""
        lines.append(f" * @param {{{param.type}}} {name}{suffix}")
    lines.append(f" * @return {{Promise<{method.returns}>}}")
    lines.append(" */")
    return lines


def _comment_safe(text: str) -> str:
    return text.replace("*/", "*\\/").strip()


def _wrapped(text: str) -> list[str]:
    """Wrap each paragraph line of a description so the doc-block stays readable."""
    return [wrapped for line in text.splitlines() for wrapped in textwrap.wrap(line, JSDOC_WIDTH) or [""]]


def _single_line(text: str) -> str:
    return " ".join(_comment_safe(text).split())


def types_source(types: Sequence[str]) -> str:
    blocks = ["import { classType, property } from '@imqueue/rpc';"]
    for type_name in types:
        blocks.append(
            "\n".join(
                [
                    "/**",
                    f" * {type_name}: crosses the queue as JSON. Declare every field it carries",
                    " * with @property('<TypeScript type>'), adding true as a second argument",
                    " * for an optional field; undeclared fields reach clients untyped.",
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


def bootstrap_source(service: str) -> str:
    return "\n".join(
        [
            f"import {{ {service} }} from './{service}.js';",
            "",
            "// Connects to Redis on localhost:6379 unless options say otherwise, then serves",
            f"// calls arriving on the '{service}' queue until SIGTERM or SIGINT.",
            f"const service = new {service}();",
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


def render_service_markdown(data: Mapping[str, Any]) -> str:
    """Markdown for a scaffold_service result, built only from that result."""
    service = data["service"]
    parts = [
        f"# {service}: @imqueue service scaffold",
        "Nothing has been written to disk: create these files yourself, or use the CLI below.",
        "## Install",
        _fenced(data["install"], "bash"),
        "## Files",
    ]
    for file in data["files"]:
        parts += [f"### {file['path']}", _fenced(file["content"], file["language"])]
    if data["types"]:
        parts += [
            "## Complex types",
            "Stubbed in src/types.ts, fields still to declare with @property(): "
            + ", ".join(f"`{name}`" for name in data["types"])
            + ".",
        ]
    parts += [
        "## Next steps",
        "- Keep `\"removeComments\": false`: the JSDoc blocks are what clients are typed from.\n"
        f"- Start Redis, build, and run `node dist/index.js`; the service listens on the `{service}` queue.\n"
        "- Get a typed client from the running service with scaffold_client (command) or "
        "generate_client (runs it).",
        "## Full project",
        data["cliAlternative"],
    ]
    return "\n\n".join(parts) + "\n"


def _fenced(content: str, language: str) -> str:
    """A code fence longer than any backtick run inside, so user text cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{content.rstrip()}\n{fence}"


# --- scaffold_client -----------------------------------------------------------------

CLIENT_DIRECTORY = "./src/clients"


def scaffold_client(
    service: str, methods: Iterable[Method | Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """Name everything ``imq client generate`` will produce for ``service``.

    The client itself is not fabricated: it is generated from the running service,
    so a copy written here could only drift from it.
    """
    service_class = normalize_service_name(service)
    parsed = coerce_methods(methods)
    namespace = service_class[0].lower() + service_class[1:]
    client_class = service_base_name(service_class) + CLIENT_SUFFIX
    return {
        "service": service_class,
        "client": client_class,
        "namespace": namespace,
        "generateCommand": f"imq client generate {service_class} {CLIENT_DIRECTORY}",
        "output": f"{CLIENT_DIRECTORY}/{service_class}.ts",
        "example": {
            "language": "typescript",
            "content": client_example(service_class, namespace, client_class, parsed),
        },
    }


def client_example(service: str, namespace: str, client_class: str, methods: Sequence[Method]) -> str:
    calls = [_client_call(method, namespace) for method in methods] or [
        "// Each exposed method is a typed member of the client; describe() lists them.",
        "console.log(await client.describe());",
    ]
    return "\n".join(
        [
            f"import {{ {namespace} }} from './clients/{service}.js';",
            "",
            f"const client = new {namespace}.{client_class}();",
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


def render_client_markdown(data: Mapping[str, Any]) -> str:
    """Markdown for a scaffold_client result, built only from that result."""
    service = data["service"]
    return "\n\n".join(
        [
            f"# Typed client for {service}",
            "@imqueue generates the real client from the running service, which describes itself "
            "over the queue, so its types never drift from the implementation. Nothing has been "
            "generated or written yet.",
            "## Generate it",
            f"Start the service first (and Redis): generation asks the `{service}` queue to describe "
            "itself and times out when nobody is listening. Then run:",
            _fenced(data["generateCommand"], "bash"),
            f"- Output: `{data['output']}` (commit it: it is the reviewable contract).\n"
            f"- The argument is the service's class name because that is its queue name.\n"
            f"- The module's only export is the namespace `{data['namespace']}`; the client class is "
            f"`{data['namespace']}.{data['client']}`, beside the service's complex types.\n"
            "- Add `-o` to overwrite an existing client without a prompt. The generate_client tool "
            "runs the command for you.",
            "## Use it (illustrative)",
            "An example, not generated code: method names and arguments come from the generated file.",
            _fenced(data["example"]["content"], data["example"]["language"]),
        ]
    ) + "\n"

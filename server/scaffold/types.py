"""What the scaffolders accept: service names, exposed methods and their TypeScript types.

Pure logic, like scaffold.py, which builds on it. Top to bottom:

    ScaffoldError                 every user-facing failure; the message says what to fix
    normalize_service_name        "user-service" -> "UserService" (the class and queue name)
    service_base_name, kebab_case the other spellings of that class name the output needs
    Param, Method                 strict input models; names must be JavaScript identifiers
    coerce_methods                raw method dicts -> Methods, or a ScaffoldError naming the fault
    complex_type_names            TypeScript type strings -> names that need @classType()
    method_types                  every such name across a list of methods, sorted
    json_crossing_notes           what of a method's types does not survive the queue's JSON
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

__all__ = [
    "CLIENT_SUFFIX",
    "MAX_METHODS",
    "MAX_PARAMS",
    "MAX_TYPES",
    "MAX_SERVICE_NAME",
    "PRIMITIVE_TYPES",
    "SERVICE_SUFFIX",
    "Method",
    "Param",
    "ScaffoldError",
    "coerce_methods",
    "complex_type_names",
    "json_crossing",
    "json_crossing_notes",
    "kebab_case",
    "method_types",
    "normalize_service_name",
    "service_base_name",
    "unwrap_promise",
]


class ScaffoldError(ValueError):
    """Raised for input the scaffolders cannot turn into valid code.

    The message names the offending value and what is allowed instead, so the MCP
    layer can hand it to the agent unchanged as an isError result.
    """


# --- service names -------------------------------------------------------------------

SERVICE_SUFFIX = "Service"
CLIENT_SUFFIX = "Client"

MAX_SERVICE_NAME = 214  # npm's longest package name; the name becomes a package and a folder
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
    A number after the suffix stays after it (``order-service-2`` -> ``OrderService2``,
    not ``OrderService2Service``), and the name of a generated client stands for its
    service (``InventoryClient`` -> ``InventoryService``, whose client it is).
    """
    words = _service_name_words(raw)
    number = words.pop() if len(words) > 2 and words[-1].isdigit() and _is_suffix(words[-2]) else ""
    suffixed = bool(words) and _is_suffix(words[-1])
    while words and _is_suffix(words[-1]):
        words.pop()
    if not words:
        raise ScaffoldError(f"Service name {raw!r} has no word besides 'Service'. {_NAME_RULE}")
    if not (suffixed or number) and len(words) > 1 and words[-1].lower() == CLIENT_SUFFIX.lower():
        words.pop()  # the generator names the client of XService XClient
    name = "".join(word[0].upper() + word[1:] for word in words) + SERVICE_SUFFIX + number
    if name == "IMQService":
        # IMQService refuses to be constructed under its own name, even by a subclass.
        raise ScaffoldError("Service name 'IMQService' is the framework's base class; pick another name.")
    return name


def _is_suffix(word: str) -> bool:
    return word.lower() == SERVICE_SUFFIX.lower()


def _service_name_words(raw: str) -> list[str]:
    text = raw.strip()
    if not text:
        raise ScaffoldError(f"Service name is empty. {_NAME_RULE}")
    if len(text) > MAX_SERVICE_NAME:
        raise ScaffoldError(
            f"Service name is {len(text):,} characters long; npm and imq take at most {MAX_SERVICE_NAME}."
        )
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
# The parameters the client generator appends to every method (imqMetadata?: IMQMetadata,
# imqDelay?: IMQDelay): a parameter of the same name would be declared twice in the client.
_GENERATED_PARAMETER_NAMES = frozenset({"imqMetadata", "imqDelay"})
# TypeScript type syntax only. Excluding '*', '/', '@' and newlines keeps a type from
# closing or corrupting the JSDoc block it is written into.
_TYPE_CHARACTERS = re.compile(r"[A-Za-z0-9_$<>\[\]{}()|&,.?:;'\" =-]+")
_MAX_TYPE_LENGTH = 200
# What one scaffold call takes (also each field's maxLength / maxItems in the tool's schema).
MAX_METHODS = 50
MAX_PARAMS = 20
MAX_TYPES = 250  # distinct complex types a scaffold stubs: each is a class in src/types.ts
MAX_IDENTIFIER = 100
MAX_DESCRIPTION = 1000


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
    bare = _STRING_LITERAL.sub("''", text)
    default = _DEFAULT_VALUE.search(bare)
    if default:
        # The client would declare the default too and send nothing for it, and the service,
        # counting its @param tags, would refuse the call (IMQ_RPC_INVALID_ARGS_COUNT).
        raise ValueError(
            f"Type {value!r} holds a default value ('='); a type cannot. For a parameter, give the "
            "type alone (the part before '=') with optional: true, and default it in the method body "
            "(e.g. limit ??= 10): a caller that leaves it out sends nothing for it."
        )
    qualified = _QUALIFIED_NAME.search(bare)
    if qualified:
        local = qualified["name"].rsplit(".", 1)[-1].strip()
        where = "import(...)" if qualified["space"] == ")" else f"the namespace {qualified['space']!r}"
        raise ValueError(
            f"Type {value!r} takes {local} from {where}, another module: the service would describe "
            "the type by that qualified name, and every client generated from the service would fail to "
            "compile (TS2503: the namespace is not declared there). Declare the type locally: use "
            f"{local!r}, which the scaffold stubs as a @classType() class in src/types.ts, where you "
            "declare its fields."
        )
    for generic in _GENERIC_USE.finditer(bare):
        name = generic.group(1)
        if name not in PRIMITIVE_TYPES and name not in _BUILT_IN_TYPES and name not in _TYPE_KEYWORDS:
            arguments = _type_arguments(bare, generic.end())
            concrete = "".join(word[0].upper() + word[1:] for word in _TYPE_NAME.findall(arguments))
            raise ValueError(
                f"Type {value!r} gives {name} type arguments, but the scaffold declares {name} as a "
                "plain @classType() class, and @imqueue describes a type by its name alone. Use a "
                f"concrete class instead (e.g. '{concrete}{name}' for {name}<{arguments}>) and "
                "declare its fields with @property() in src/types.ts."
            )
    return text


# '=' not part of an arrow '=>': a default value ('number = 10').
_DEFAULT_VALUE = re.compile(r"=(?!>)")
# 'ns.Type' (or 'import(...).Type'); never the '...' of a rest element ('[...string[]]').
_QUALIFIED_NAME = re.compile(
    r"(?P<space>[A-Za-z_$][A-Za-z0-9_$]*|\))(?P<name>(?:\s*\.\s*[A-Za-z_$][A-Za-z0-9_$]*)+)"
)
# A name followed by its type arguments: 'Page<User>'.
_GENERIC_USE = re.compile(r"([A-Za-z_$][A-Za-z0-9_$]*)\s*<")


def _type_arguments(text: str, start: int) -> str:
    """The text between the '<' just before ``start`` and its matching '>'."""
    depth = 1
    for index in range(start, len(text)):
        if text[index] == "<":
            depth += 1
        elif text[index] == ">" and text[index - 1] != "=":
            depth -= 1
            if not depth:
                return text[start:index].strip()
    return text[start:].strip()


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

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(max_length=MAX_IDENTIFIER)
    type: str = Field(default="any", max_length=_MAX_TYPE_LENGTH)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION)
    optional: bool = False

    @field_validator("name")
    @classmethod
    def _name_is_identifier(cls, value: str) -> str:
        _check_identifier(value, "Parameter name")
        if value in _GENERATED_PARAMETER_NAMES:
            raise ValueError(
                f"Parameter name {value!r} is one the generated client adds to every method itself "
                "(imqMetadata?: IMQMetadata, imqDelay?: IMQDelay), so the client would declare it twice; "
                f"pick another name (e.g. '{value.removeprefix('imq').lower()}')."
            )
        return value

    @field_validator("type")
    @classmethod
    def _type_is_typescript(cls, value: str) -> str:
        return _check_type(value)


class Method(BaseModel):
    """One exposed method; ``returns`` is the resolved type, ``Promise<...>`` is added."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(max_length=MAX_IDENTIFIER)
    description: str | None = Field(default=None, max_length=MAX_DESCRIPTION)
    params: list[Param] = Field(default=[], max_length=MAX_PARAMS)
    returns: str = Field(default="void", max_length=_MAX_TYPE_LENGTH)

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
    names: dict[str, None] = {}  # ordered, and a membership test per name in constant time
    for name in _type_names(_STRING_LITERAL.sub("''", type_text)):
        if "." in name or name in PRIMITIVE_TYPES or name in _BUILT_IN_TYPES or name in _TYPE_KEYWORDS:
            continue
        names[name] = None
    return list(names)


def _type_names(text: str) -> Iterable[str]:
    """Every name in a type (string literals already blanked), object-literal keys left out."""
    for match in _TYPE_NAME.finditer(text):
        rest = text[match.end() :].lstrip()
        if not (rest.startswith(":") or rest.startswith("?:")):
            yield match.group()


def unwrap_promise(type_text: str) -> str:
    """``Promise<User>`` -> ``User``, so a given return type is never wrapped twice."""
    if not (type_text.startswith("Promise<") and type_text.endswith(">")):
        return type_text
    inner = type_text[len("Promise<") : -1]
    return inner.strip() if _brackets_balanced(inner) else type_text


def method_types(methods: Sequence[Method]) -> list[str]:
    """Every name needing ``@classType()`` across the methods' parameters and returns, sorted."""
    names: set[str] = set()
    for method in methods:
        for type_text in [*(param.type for param in method.params), method.returns]:
            names.update(complex_type_names(type_text))
    return sorted(names)


# What the queue's JSON (JSON.stringify on the sending side) makes of a value of each type, and
# what to declare instead. A name here is looked for anywhere in a type.
_MAP = (
    "a Map arrives as {} (its entries are lost)",
    "Declare Record<string, T> (or [key, value][]) instead.",
)
_SET = ("a Set arrives as {} (its entries are lost)", "Declare T[] instead.")
_BIGINT = (
    "the call fails (TypeError: Do not know how to serialize a BigInt)",
    "Declare string (or number, where it fits) instead.",
)
_FUNCTION = (
    "a function arrives as null, or not at all inside an object",
    "Pass data the method acts on instead: a service cannot call back into its caller.",
)
_NOT_JSON = {
    "Date": (
        "a Date arrives as its ISO string (instanceof Date is false)",
        "Declare string (an ISO date) instead, and make a Date with new Date(value) where one is needed.",
    ),
    "Map": _MAP,
    "ReadonlyMap": _MAP,
    "WeakMap": _MAP,
    "Set": _SET,
    "ReadonlySet": _SET,
    "WeakSet": _SET,
    "RegExp": ("a RegExp arrives as {}", "Declare string (its source) instead."),
    "bigint": _BIGINT,
    "BigInt": _BIGINT,
    "Function": _FUNCTION,
}
_PROMISE_PARAMETER = (
    "a Promise arrives as {}",
    "Declare the type it resolves to instead, and await the value before the call.",
)


def json_crossing_notes(methods: Sequence[Method]) -> list[str]:
    """One note per type in the methods' parameters and returns that JSON cannot carry across
    the queue: what a value of it arrives as, and what to declare instead."""
    notes: list[str] = []
    for method in methods:
        uses = [(f"{method.name}()'s parameter {param.name}", param.type, True) for param in method.params]
        for where, type_text, parameter in [*uses, (f"{method.name}()'s return", method.returns, False)]:
            notes.extend(json_crossing(where, type_text, parameter))
    return notes


def json_crossing(where: str, type_text: str, parameter: bool = False) -> list[str]:
    """What JSON makes of each part of `type_text` that it cannot carry, said of `where` (a
    parameter, a return, a complex type's field), with what to declare instead; [] when it can."""
    return [
        f"{where} has the type {type_text}: {name} cannot cross the queue, which carries JSON, so "
        f"{arrives}. {instead}"
        for name, (arrives, instead) in _not_json(type_text, parameter)
    ]


def _not_json(type_text: str, parameter: bool) -> list[tuple[str, tuple[str, str]]]:
    text = _STRING_LITERAL.sub("''", type_text)
    found: list[tuple[str, tuple[str, str]]] = []
    for name in dict.fromkeys(_type_names(text)):
        if name in _NOT_JSON:
            found.append((name, _NOT_JSON[name]))
        elif name == "Promise" and parameter:
            found.append((name, _PROMISE_PARAMETER))
    if "=>" in text:
        found.append(("a function type", _FUNCTION))
    return found

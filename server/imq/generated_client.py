"""The client file `imq client generate` wrote, read back for generate_client's answer.

imq's stdout only says that a client was written. The agent needs the file itself: where it
is, what it contains, and which namespace and class to import. This module reads that file
after a successful run and adds it to the bridge's result, as text and as structured content
(schemas.GeneratedClient). No MCP imports; cli_bridge calls ``attach_generated_client``.

The generator (IMQClient.create in @imqueue/rpc) writes ``<dir>/<Service>.ts`` whose only
export is a namespace named after the service with a lower-case first letter, holding
``<Base>Client extends IMQClient``. The names are read from the file itself; the naming
rule is only the fallback for a file that does not spell them the usual way.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from imqueue_mcp.server.errors import ErrorCode
from imqueue_mcp.server.imq.runner import BridgeResult
from imqueue_mcp.server.scaffold.templates import fenced
from imqueue_mcp.server.scaffold.types import CLIENT_SUFFIX, json_crossing, service_base_name
from imqueue_mcp.server.user_files import FileTooLarge, read_text_capped

__all__ = [
    "MAX_CLIENT_BYTES",
    "GeneratedClientMissing",
    "attach_generated_client",
    "read_generated_client",
    "render_generated_client",
]

# A generated client is a few KB per exposed method; far beyond that is not a client file.
MAX_CLIENT_BYTES = 2 * 1024 * 1024

_NAMESPACE = re.compile(r"^\s*export\s+namespace\s+([A-Za-z_$][\w$]*)", re.MULTILINE)
_CLIENT_CLASS = re.compile(r"^\s*export\s+class\s+([A-Za-z_$][\w$]*)\s+extends\s+IMQClient\b", re.MULTILINE)
# What the file declares and imports, and the types its members and signatures use.
_DECLARED = re.compile(r"\b(?:interface|class|type|enum)\s+([A-Za-z_$][\w$]*)")
_IMPORTED = re.compile(r"\bimport\s*(?:type\s*)?\{([^}]*)\}", re.DOTALL)
_ANNOTATION = re.compile(r"(?:\)|[\w$?\]])\s*:\s*([^;,=){]+)")
_TYPE_ARGUMENTS = re.compile(r"<([^<>()]+)>")
_TYPE_NAME = re.compile(r"(?<![\w$.'\"])([A-Z][\w$]*)\b")
# TypeScript's and the generator's own names, which the file uses without declaring them.
_KNOWN_TYPES = frozenset(
    "Promise Array ReadonlyArray Record Map Set WeakMap WeakSet Date Partial Required Readonly Pick "
    "Omit Exclude Extract NonNullable ReturnType Parameters InstanceType Awaited Buffer Object String "
    "Number Boolean Function Error Symbol BigInt RegExp Uint8Array ArrayBuffer Iterable AsyncIterable "
    "IMQMetadata IMQDelay IMQClient".split()
)
UNREGISTERED_TYPES_URL = "https://imqueue.org/api/#complex-types"
# The generator's interfaces (one per complex type, a field a line) and the client's methods.
_INTERFACE = re.compile(r"\binterface\s+([A-Za-z_$][\w$]{0,200})[^{}]{0,400}\{([^{}]{0,20000})\}")
_FIELD = re.compile(r"^\s*([A-Za-z_$][\w$]*)\??\s*:\s*([^;\n]+);", re.MULTILINE)
_METHOD = re.compile(
    r"\bpublic\s+async\s+([A-Za-z_$][\w$]{0,200})\s*\(([^()]{0,4000})\)\s*:\s*Promise<([^{}\n]{1,2000})>\s*\{"
)
_OPENING, _CLOSING = "<([{", ">)]}"


class GeneratedClientMissing(Exception):
    """The run succeeded but the client file cannot be read; the message says where and why."""


def read_generated_client(file: Path, service: str) -> dict[str, Any]:
    """The generated file as {service, path, namespace, client, content}."""
    try:
        content = read_text_capped(file, MAX_CLIENT_BYTES, encoding="utf-8")
    except FileTooLarge as error:
        raise GeneratedClientMissing(
            f"{file} is more than a generated client ({MAX_CLIENT_BYTES} bytes at most); open it directly."
        ) from error
    except FileNotFoundError as error:
        raise GeneratedClientMissing(f"imq reported success, but {file} does not exist.") from error
    except (OSError, UnicodeDecodeError) as error:
        raise GeneratedClientMissing(f"{file} could not be read: {error}.") from error
    namespace = _NAMESPACE.search(content)
    client = _CLIENT_CLASS.search(content)
    undeclared = undeclared_types(content)
    not_json = not_json_members(content)
    return {
        "service": service,
        "path": str(file),
        "namespace": namespace.group(1) if namespace else service[:1].lower() + service[1:],
        "client": client.group(1) if client else service_base_name(service) + CLIENT_SUFFIX,
        "content": content,
        **({"undeclared": undeclared} if undeclared else {}),
        **({"notJson": not_json} if not_json else {}),
    }


def undeclared_types(content: str) -> list[str]:
    """The types the generated file uses in its signatures and members but neither declares nor
    imports: ones the service's description named and never described. The generator declares
    each @classType() class the running service registered; a class without the decorator, or
    one the service never loads as a value (only `import type`), is named and not declared."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", content, flags=re.DOTALL)  # doc blocks repeat the types
    known = set(_DECLARED.findall(code)) | _KNOWN_TYPES
    for names in _IMPORTED.findall(code):
        known.update(name.split(" as ")[-1].strip() for name in names.split(","))
    written = [*_ANNOTATION.findall(code), *_TYPE_ARGUMENTS.findall(code)]
    used = [name for text in written for name in _TYPE_NAME.findall(text)]
    return sorted(set(used) - known)


def not_json_members(content: str) -> list[str]:
    """What the client types with something JSON cannot carry (a Date field, a Map parameter),
    each said with what it arrives as and what the service should declare instead: the service's
    description names these types, but the queue carries JSON, so the caller gets a string (or an
    empty object) where its types promise more."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", content, flags=re.DOTALL)
    notes: list[str] = []
    for interface, body in _INTERFACE.findall(code):
        for field, type_text in _FIELD.findall(body):
            notes.extend(json_crossing(f"{interface}.{field}", type_text.strip()))
    for method, params, returns in _METHOD.findall(code):
        for param in _top_level_split(params):
            name, colon, type_text = param.partition(":")
            if colon and type_text.strip() not in ("IMQMetadata", "IMQDelay"):
                where = f"{method}()'s parameter {name.strip().rstrip('?')}"
                notes.extend(json_crossing(where, type_text.strip(), parameter=True))
        notes.extend(json_crossing(f"{method}()'s return", returns.strip()))
    return list(dict.fromkeys(notes))


def _top_level_split(params: str) -> list[str]:
    """A parameter list split at its own commas, not those inside a type's brackets."""
    parts, depth, start = [], 0, 0
    for at, char in enumerate(params):
        if char in _OPENING:
            depth += 1
        elif char in _CLOSING and not (char == ">" and params[at - 1 : at] == "="):
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(params[start:at])
            start = at + 1
    parts.append(params[start:])
    return [part.strip() for part in parts if part.strip()]


def attach_generated_client(result: BridgeResult, file: Path, service: str) -> BridgeResult:
    """A successful generate_client result, with the client file added as text and data."""
    try:
        generated = read_generated_client(file, service)
    except GeneratedClientMissing as error:
        return dataclasses.replace(
            result,
            text=f"{result.text}\n\n{error}",
            is_error=True,
            structured=None,
            error_code=ErrorCode.IMQ_FAILED,
            next_step="Check the path imq wrote to, then call generate_client again.",
        )
    return dataclasses.replace(
        result, text=f"{result.text}\n\n{render_generated_client(generated)}", structured=generated
    )


def render_generated_client(generated: dict[str, Any]) -> str:
    """The file as markdown: how to import and construct the client, then its content."""
    namespace, client, service = generated["namespace"], generated["client"], generated["service"]
    usage = f"Import the namespace `{namespace}` from it; the client class is `{namespace}.{client}`."
    default_queue = client.removesuffix(CLIENT_SUFFIX)
    if default_queue != service:
        # IMQClient's default queue is its own class name minus "Client": UserClient -> "User".
        usage = (
            f"Import the namespace `{namespace}` from it and construct `new {namespace}.{client}(options, "
            f"'{service}')`: without that second argument the client addresses the queue "
            f"'{default_queue}', where nothing listens."
        )
    warning = ""
    if generated.get("undeclared"):
        names = ", ".join(generated["undeclared"])
        warning = (
            f"\n\nWARNING: this client will not compile: it uses {names}, which it does not declare, "
            f"because the running service never registered them. Each class a method takes or returns "
            "needs @classType() (and @property('<type>') on each field), and the service must load the "
            "module that declares them as a value (import './types.js'; an `import type` is erased). "
            "An enum or a type alias is no class and is never registered: where a method or a "
            "@property() names one, write the union of its literal values instead ('new' | 'paid'). "
            f"Fix the service, build and restart it, then generate again. {UNREGISTERED_TYPES_URL}"
        )
    if generated.get("notJson"):
        warning += (
            "\n\nWARNING: this client compiles, but it types values the queue cannot deliver as typed: "
            + " ".join(generated["notJson"])
            + " Change the service's declaration (its @property() or method signature), build and "
            "restart it, then generate again."
        )
    return (
        f"Client file: {generated['path']}\n{usage}{warning}\n\n{fenced(generated['content'], 'typescript')}"
    )

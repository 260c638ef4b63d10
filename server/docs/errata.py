"""Known needs of the docs' code examples: what an example needs beyond what it shows.

A small, general table of rules, each detected from an example's code (never per page): a
generated client constructed without a queue name calls the queue named after its class minus
'Client' ('UserClient' -> 'User'), so against a service on another queue (a scaffolded
UserService listens on 'UserService') its calls time out; a client or service built with no
options uses the Redis at localhost:6379; ``@classType()`` and ``callTimeout`` are
@imqueue/rpc 3.x API (1.x has neither); a relative import without its `.js`, and a `@property()`
field with neither `!` nor an initializer, do not compile in the ES-module, strict project the
scaffolds write (TS2835, TS2564). get_doc and find_examples attach the notes to their
answers. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["code_blocks", "known_needs"]

# `new <namespace>.<Base>Client(` : a client imq generated (its module exports one namespace)
_GENERATED_CLIENT = re.compile(r"new\s+(?P<namespace>[a-z][\w$]*)\.(?P<base>[A-Z][\w$]*)Client\s*\(")
_NEW_SERVICE = re.compile(r"new\s+(?P<class>[A-Z][\w$]*Service)\s*\(")
_FENCE = re.compile(
    r"^(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<code>.*?)^(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL
)


def _arguments(code: str, start: int) -> list[str] | None:
    """The top-level arguments of the call whose '(' is just before ``start``; None if unclosed."""
    current: list[str] = []
    arguments: list[str] = []
    depth, quote = 0, ""
    for char in code[start:]:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"`":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                arguments.append("".join(current).strip())
                return [argument for argument in arguments if argument]
            depth -= 1
        elif char == "," and depth == 0:
            arguments.append("".join(current).strip())
            current = []
            continue
        current.append(char)
    return None


def _client_without_queue(code: str) -> list[str]:
    notes: list[str] = []
    for found in _GENERATED_CLIENT.finditer(code):
        arguments = _arguments(code, found.end())
        if arguments is None or len(arguments) >= 2:
            continue
        client = f"{found['namespace']}.{found['base']}Client"
        notes.append(
            f"new {client}(...) is given no queue name, so it calls the queue '{found['base']}' (its class "
            f"name minus 'Client'). Against a service listening on another queue (a service class "
            f"{found['base']}Service listens on '{found['base']}Service', as scaffold_service writes it) "
            f"every call times out: pass the service's queue name as the second argument, "
            f"new {client}(options, '<ServiceClass>')."
        )
    return notes


def _no_redis_options(code: str) -> list[str]:
    built = [
        f"{found['namespace']}.{found['base']}Client"
        for found in _GENERATED_CLIENT.finditer(code)
        if _arguments(code, found.end()) == []
    ]
    built += [found["class"] for found in _NEW_SERVICE.finditer(code) if _arguments(code, found.end()) == []]
    if not built:
        return []
    return [
        f"{', '.join(dict.fromkeys(built))} is built with no options, so it uses the Redis at "
        "localhost:6379. "
        "For another Redis pass options, e.g. { host, port } or { cluster: [{ host, port }] } (the scaffolds "
        "read IMQ_REDIS=host:port)."
    ]


def _rpc_3x_only(code: str) -> list[str]:
    used = [name for name, pattern in _RPC_3X_ONLY if re.search(pattern, code)]
    if not used:
        return []
    return [
        f"{' and '.join(used)} {'are' if len(used) > 1 else 'is'} @imqueue/rpc 3.x API (rpc 1.x has "
        "neither @classType() nor callTimeout): this example needs rpc 3.x (Node.js 22.12+, standard "
        "decorators)."
    ]


_RPC_3X_ONLY = (("@classType()", r"@classType\s*\("), ("callTimeout", r"\bcallTimeout\b"))

# `from './types'`, `import './setup'`, `import('./x')`: a relative specifier without an extension
_RELATIVE_IMPORT = re.compile(r"""(?:\bfrom|\bimport)\s*\(?\s*(['"])(\.{1,2}/[^'"\n]*?)\1""")
_EXTENSIONS = (".js", ".mjs", ".cjs", ".json", ".ts", ".mts", ".cts")
# `@property(...) name: Type` with neither `!` nor `?` nor an initializer after the name
_BARE_PROPERTY = re.compile(
    r"@property\([^\n]*\)\s*(?:(?:public|protected|private|readonly|declare)\s+)*(?P<name>[A-Za-z_$][\w$]*)\s*:[^=;\n]*;?\s*$",
    re.MULTILINE,
)


def _extensionless_import(code: str) -> list[str]:
    bare = [found[2] for found in _RELATIVE_IMPORT.finditer(code) if not found[2].endswith(_EXTENSIONS)]
    if not bare:
        return []
    shown = ", ".join(f"'{path}'" for path in dict.fromkeys(bare))
    return [
        f"{shown}: a relative import without its extension does not compile in an ES-module project "
        '("type": "module", module nodenext, as scaffold_service writes it: TS2835); write the '
        "compiled file's name, e.g. './types.js'."
    ]


def _bare_property(code: str) -> list[str]:
    names = [found["name"] for found in _BARE_PROPERTY.finditer(code)]
    if not names:
        return []
    return [
        f"@property() field{'s' if len(names) > 1 else ''} {', '.join(dict.fromkeys(names))} "
        "with neither '!' nor an initializer: under strict (the scaffolds' tsconfig) TypeScript refuses "
        "an unassigned field (TS2564); declare it as name!: Type."
    ]


RULES: tuple[Callable[[str], list[str]], ...] = (
    _client_without_queue,
    _no_redis_options,
    _rpc_3x_only,
    _extensionless_import,
    _bare_property,
)


def known_needs(code: str) -> list[str]:
    """What ``code`` needs beyond what it shows, one note each, in rule order, without repeats."""
    notes = [note for rule in RULES for note in rule(code)]
    return list(dict.fromkeys(notes))


def code_blocks(markdown: str) -> list[str]:
    """The fenced code blocks of a markdown text, in order."""
    return [found["code"] for found in _FENCE.finditer(markdown)]

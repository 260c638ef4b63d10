"""Object-literal types in scaffold_service's methods, lifted into exposed classes.

@imqueue describes an exposed method from its JSDoc, and a type there must be a primitive or
a class registered with ``@classType()``: an object literal such as ``{ sku: string; reserved:
number }`` is described as ``any``, and the client generated from the service loses the type.
So a method's top-level object-literal return or parameter type becomes a generated class
(``<Method>Result`` for a return, ``<Method><Param>`` for a parameter) with one
``@property('<type>')`` per field, and the method uses its name. An object literal this cannot
lift (nested in another type, or holding one, an index signature, a method) is left as
written, and the scaffold's notes say so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from imqueue_mcp.server.scaffold.types import Method, complex_type_names, unwrap_promise

__all__ = ["LiftedType", "ObjectField", "lift_object_types"]

_MEMBER = re.compile(
    r"(?:readonly\s+)?(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)\s*(?P<optional>\?)?\s*:\s*(?P<type>.+)"
)


@dataclass(frozen=True)
class ObjectField:
    name: str
    type: str
    optional: bool


@dataclass(frozen=True)
class LiftedType:
    name: str
    fields: tuple[ObjectField, ...]
    source: str  # the object literal as written

    def referenced(self) -> list[str]:
        """The complex type names its fields use, which need declarations too."""
        names: list[str] = []
        for field in self.fields:
            names.extend(name for name in complex_type_names(field.type) if name not in names)
        return names


def _split_top_level(text: str) -> list[str]:
    """``text`` split at the ';' and ',' outside brackets and quotes."""
    parts: list[str] = []
    current: list[str] = []
    depth, quote = 0, ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "<([{":
            depth += 1
        elif char in ">)]}":
            depth -= 1
        elif char in ";," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _is_whole_object_literal(text: str) -> bool:
    """True when ``text`` is one ``{ ... }`` whose opening brace closes at its very end."""
    if not (text.startswith("{") and text.endswith("}")):
        return False
    depth = 0
    for index, char in enumerate(text):
        depth += char in "<([{"
        depth -= char in ">)]}"
        if depth == 0 and index < len(text) - 1:
            return False
    return True


def _fields(literal: str) -> tuple[ObjectField, ...] | None:
    """The fields of a flat object literal, or None when it is not one this can declare."""
    fields: list[ObjectField] = []
    for member in _split_top_level(literal[1:-1]):
        found = _MEMBER.fullmatch(member)
        if not found or "{" in found["type"] or "=>" in found["type"] or "(" in found["name"]:
            return None
        if any(field.name == found["name"] for field in fields):
            return None
        fields.append(ObjectField(found["name"], found["type"].strip(), bool(found["optional"])))
    return tuple(fields) if fields else None


def _pascal(name: str) -> str:
    return name[:1].upper() + name[1:]


def lift_object_types(
    methods: Sequence[Method], taken: Sequence[str]
) -> tuple[list[Method], list[LiftedType], list[str]]:
    """The methods with each liftable object literal replaced by a generated class name, those
    classes, and one note per literal (lifted, or why not). ``taken``: names already in use."""
    used = set(taken)
    lifted: list[LiftedType] = []
    notes: list[str] = []
    result: list[Method] = []

    def lift(type_text: str, name: str, where: str) -> str:
        bare = unwrap_promise(type_text.strip())
        if "{" not in bare:
            return type_text
        fields = _fields(bare) if _is_whole_object_literal(bare) else None
        if fields is None:
            notes.append(
                f"{where} has the type {bare}, with an object literal this scaffold cannot declare as a "
                "class (only a whole, flat literal of named fields is lifted): @imqueue describes it as "
                "any and generated clients lose the type. Declare a @classType() class with a "
                "@property() per field in src/types.ts and use its name instead."
            )
            return type_text
        class_name, suffix = name, 2
        while class_name in used:
            class_name, suffix = f"{name}{suffix}", suffix + 1
        used.add(class_name)
        lifted.append(LiftedType(class_name, fields, bare))
        notes.append(
            f"{where} had the object literal {bare}: it is declared as the class {class_name} in "
            "src/types.ts (@classType(), a @property() per field) and used instead, so the service "
            "describes it and the generated client keeps the type."
        )
        return class_name

    for method in methods:
        params = [
            param.model_copy(
                update={
                    "type": lift(
                        param.type,
                        f"{_pascal(method.name)}{_pascal(param.name)}",
                        f"{method.name}()'s parameter {param.name}",
                    )
                }
            )
            for param in method.params
        ]
        returns = lift(method.returns, f"{_pascal(method.name)}Result", f"{method.name}()'s return")
        result.append(method.model_copy(update={"params": params, "returns": returns}))
    return result, lifted, notes

"""The -32602 answers to request params the SDK refuses, saying which param and what it takes.

The SDK validates a request's params against the spec's model (then the handler's), and
answers any refusal with a bare -32602 "Invalid request parameters" and empty data; a request
that comes before initialize gets the same bare answer. Neither tells a client what to fix.
`GuidedParams`, a server middleware around that validation and the dispatch, answers the same
code with one line that names each refused param and what it takes. Both transports (stdio.py,
http.py) append it to the server they serve, so it is innermost: it hears the SDK's refusal
before any middleware of the adapter's, which would read the validation error's own text.

    tools/call {"arguments": {}}           Invalid params for tools/call: name is required.
    tools/call "arguments": ["redis"]      ... arguments must be an object (got an array).
    logging/setLevel "level": "verbose"    ... level must be 'alert', ... or 'warning' (got 'verbose').
    completion/complete ref.type ref/foo   ... ref.type must be 'ref/prompt' or 'ref/resource' (got ...
    prompts/get "arguments": {"name": 5}   ... arguments.name must be a string (got 5).
    tools/list before initialize           Not initialized: ... send initialize, then ...

Pydantic reports a union field once per member, each under the member's name (a spec model,
`str`, `int`); the members whose literal field (a `type`) matched are the ones the client
meant, so only their problems are named, and when none matched, what the literal fields take.
No validation dump and no link to pydantic's docs reach the client: for an error type not
named here, the first line of pydantic's message at most.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import mcp_types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import BaseModel, ValidationError

# The SDK's answer to a request before initialize (server/runner.py), the one bare -32602 it raises itself.
SDK_NOT_INITIALIZED = "Invalid request parameters"
NOT_INITIALIZED = (
    "Not initialized: {method} came before the handshake; send initialize, then "
    "notifications/initialized, then {method} again."
)
GIVEN_CHARACTERS = 40  # a refused value is echoed when its repr is this short
TAKES = {  # what a value of the wrong type should have been, by pydantic's error type
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "list_type": "an array",
}
MEMBER_TYPES = frozenset({"str", "int", "float", "bool"})  # a union member that is no model
SPEC_MODELS = frozenset(
    name for name, value in vars(mcp_types).items() if inspect.isclass(value) and issubclass(value, BaseModel)
)
JSON_TYPES = ((str, "a string"), (int | float, "a number"), (list, "an array"), (dict, "an object"))


class GuidedParams:
    """Refused params and a request before initialize answered -32602 with what to fix."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except ValidationError as error:
            raise MCPError(code=INVALID_PARAMS, message=refused_params(ctx.method, error)) from None
        except MCPError as error:
            if error.code == INVALID_PARAMS and error.message == SDK_NOT_INITIALIZED:
                raise MCPError(
                    code=INVALID_PARAMS, message=NOT_INITIALIZED.format(method=ctx.method)
                ) from None
            raise


def refused_params(method: str, error: ValidationError) -> str:
    """One line: each refused param of `method` by its path (`ref.type`) and what it takes."""
    problems = error.errors(include_url=False)
    unions = _union_paths(problems)
    meant = _meant(problems, unions)
    fields: dict[str, list[Any]] = {}
    for problem in meant:
        fields.setdefault(_field(problem["loc"], unions), []).append(problem)
    said = "; ".join(_say(field, grouped) for field, grouped in fields.items())
    return f"Invalid params for {method}: {said}."


def _is_member(segment: Any) -> bool:
    return isinstance(segment, str) and (segment in SPEC_MODELS or segment in MEMBER_TYPES or "[" in segment)


def _union_paths(problems: Sequence[Any]) -> set[tuple[Any, ...]]:
    """The locations where pydantic reported two members or more: unions."""
    members: dict[tuple[Any, ...], set[str]] = {}
    for problem in problems:
        loc = tuple(problem["loc"])
        for index, segment in enumerate(loc):
            if _is_member(segment):
                members.setdefault(loc[:index], set()).add(segment)
    return {path for path, seen in members.items() if len(seen) > 1}


def _meant(problems: Sequence[Any], unions: set[tuple[Any, ...]]) -> list[Any]:
    """The problems of the union members the client meant: those whose literal field matched,
    or, when none did, the literal fields' own."""
    kept = list(problems)
    for path in sorted(unions, key=len):
        inside = [problem for problem in kept if _within(problem["loc"], path)]
        missed = {problem["loc"][len(path)] for problem in inside if problem["type"] == "literal_error"}
        meant = {problem["loc"][len(path)] for problem in inside} - missed
        kept = [
            problem
            for problem in kept
            if not _within(problem["loc"], path)
            or (problem["loc"][len(path)] in meant if meant else problem["type"] == "literal_error")
        ]
    return kept


def _within(loc: Sequence[Any], path: tuple[Any, ...]) -> bool:
    return len(loc) > len(path) and tuple(loc[: len(path)]) == path


def _field(loc: Sequence[Any], unions: set[tuple[Any, ...]]) -> str:
    """The param's path as the client wrote it: no union member names, no leading `params`."""
    names = [str(segment) for index, segment in enumerate(loc) if tuple(loc[:index]) not in unions]
    if names[:1] == ["params"]:
        names = names[1:]
    return ".".join(names) or "params"


def _say(field: str, problems: list[Any]) -> str:
    kinds = {problem["type"] for problem in problems}
    given = _given(problems[0].get("input"))
    if "missing" in kinds:
        return f"{field} is required"
    if kinds == {"literal_error"}:
        expected = " or ".join(dict.fromkeys(str(problem["ctx"]["expected"]) for problem in problems))
        return f"{field} must be {expected}{given}"
    if kinds <= TAKES.keys():
        takes = " or ".join(dict.fromkeys(TAKES[problem["type"]] for problem in problems))
        return f"{field} must be {takes}{given}"
    return f"{field}: {str(problems[0]['msg']).splitlines()[0]}"


def _given(value: Any) -> str:
    """What was sent instead: a short scalar as written, anything else by its JSON type."""
    if isinstance(value, str | int | float | bool) and len(repr(value)) <= GIVEN_CHARACTERS:
        return f" (got {value!r})"
    return next((f" (got {name})" for kind, name in JSON_TYPES if isinstance(value, kind)), "")

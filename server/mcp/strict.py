"""Strict tools: closed input schemas, unknown arguments refused by name, tidy schemas.

The SDK derives a tool's argument model from the function signature and leaves it open:
unknown arguments are dropped silently and the schema omits additionalProperties. That
hides an agent's mistake (a misspelt `limt` quietly becomes the default). `strict_tool`
rebuilds the argument model on `StrictArguments`, so the schema says
`additionalProperties: false` and a call with an unknown argument fails with a message
naming it and listing the accepted ones.

Arguments are held to their schema exactly: the argument model is pydantic-strict (an
integer is a JSON integer, not `true`, `"6"` or `6.0`; a boolean is `true` or `false`, not
`"true"` or `1`), and the SDK's habit of parsing a string argument as JSON first (`"[1]"` for
a list) is turned off (`ExactMetadata`). Whatever the schema does not say it takes is refused
with `invalid_arguments` naming the argument.

A published outputSchema also admits the guided error shape, `{error: {code, message,
suggestedAction}}` (errors.py), since an isError result carries that instead. It also tidies
the published schemas: optional arguments read as their plain type
instead of `anyOf [T, null]` with `default: null`, and pydantic's generated titles are
dropped, so what an agent reads is the contract and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import ToolAnnotations
from pydantic import ConfigDict, create_model, model_validator

from imqueue_mcp.server.tool_results import accepting_errors


class StrictArguments(ArgModelBase):
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _name_unknown_arguments(cls, data: Any) -> Any:
        if isinstance(data, dict):
            accepted = {field.alias or name for name, field in cls.model_fields.items()}
            unknown = sorted(str(key) for key in data if key not in accepted)
            if unknown:
                listing = ", ".join(sorted(accepted)) or "none"
                raise ValueError(
                    f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                    f"this tool accepts: {listing}"
                )
        return data


class ExactMetadata(FuncMetadata):
    """The SDK's metadata without its JSON pre-parse: a string argument stays a string, so a
    list or an object sent as JSON text is refused like any other value of the wrong type."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        return dict(data)


def strict_tool(
    fn: Callable[..., Any],
    *,
    name: str,
    title: str,
    description: str,
    annotations: ToolAnnotations,
) -> Tool:
    """Tool.from_function, with the argument model made strict and both schemas tidied."""
    tool = Tool.from_function(fn, name=name, title=title, description=description, annotations=annotations)
    loose = tool.fn_metadata.arg_model
    fields: dict[str, Any] = {
        field_name: (info.annotation, info) for field_name, info in loose.model_fields.items()
    }
    strict = create_model(f"{name}_arguments", __base__=StrictArguments, **fields)
    loose_metadata = tool.fn_metadata
    tool.fn_metadata = ExactMetadata(
        arg_model=strict,
        output_schema=loose_metadata.output_schema,
        output_model=loose_metadata.output_model,
        wrap_output=loose_metadata.wrap_output,
    )
    tool.parameters = tidy_schema(strict.model_json_schema(by_alias=True))
    if tool.fn_metadata.output_schema is not None:
        # An error result carries {error} instead (errors.py); results may carry explicit nulls
        # (an unknown fact), so only the titles go.
        tool.fn_metadata.output_schema = tidy_schema(
            accepting_errors(tool.fn_metadata.output_schema), collapse_optional=False
        )
    return tool


def tidy_schema(schema: Any, *, collapse_optional: bool = True) -> Any:
    """Drop generated titles; collapse `anyOf [T, null]` + `default: null` to plain T (inputs)."""
    if isinstance(schema, list):
        return [tidy_schema(item, collapse_optional=collapse_optional) for item in schema]
    if not isinstance(schema, dict):
        return schema
    # A string-valued "title" is pydantic's generated label; a property *named* title has a dict value.
    tidy = {
        key: tidy_schema(value, collapse_optional=collapse_optional)
        for key, value in schema.items()
        if key != "title" or not isinstance(value, str)
    }
    options = tidy.get("anyOf")
    if collapse_optional and isinstance(options, list) and "default" in tidy and tidy["default"] is None:
        kept = [option for option in options if option != {"type": "null"}]
        if len(kept) == 1 and len(kept) < len(options):
            del tidy["anyOf"], tidy["default"]
            tidy = {**kept[0], **tidy}
    return tidy

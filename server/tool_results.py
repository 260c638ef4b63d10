"""Tool results as the adapter sends them: text, structured content, and the guided error.

text_result(text)                 a plain text result
structured_result(data, text)     structuredContent and its text rendering
error_result(code, message)       the isError result of errors.py's table: what happened, the
                                  next step, and structuredContent.error {code, message,
                                  suggestedAction}
accepting_errors(schema)          an outputSchema that admits the result or {error}
refused_call(name, error)         a call the SDK refused before the tool ran: invalid_arguments
                                  naming each argument, or unknown_tool
"""

from __future__ import annotations

import functools
from copy import deepcopy
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, Field, ValidationError

from imqueue_mcp.server.errors import ACTIONS, MEANINGS, ErrorCode


def text_result(text: str, *, is_error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=is_error)


def structured_result(data: dict[str, Any], text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


class ToolErrorDetail(BaseModel):
    code: ErrorCode = Field(description="Stable error code (see the README's table)")
    message: str = Field(description="What happened")
    suggestedAction: str = Field(description="The next step to take")


class ToolErrorResult(BaseModel):
    """The structuredContent of every failed tool call."""

    error: ToolErrorDetail


def error_result(code: ErrorCode, message: str, suggested_action: str = "") -> CallToolResult:
    """The isError result: text that reads whole, and the same facts as structuredContent.error."""
    message = message.strip() or MEANINGS[code]
    action = suggested_action.strip() or ACTIONS[code]
    detail = ToolErrorDetail(code=code, message=message, suggestedAction=action)
    text = f"{message}\n\nNext step: {action}\n(error code: {code.value})"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=ToolErrorResult(error=detail).model_dump(mode="json"),
        is_error=True,
    )


def error_of(result: CallToolResult) -> dict[str, Any] | None:
    """structuredContent.error of a guided error result, else None."""
    structured = result.structured_content
    detail = structured.get("error") if result.is_error and isinstance(structured, dict) else None
    return detail if isinstance(detail, dict) else None


def accepting_errors(schema: dict[str, Any]) -> dict[str, Any]:
    """An outputSchema for "the result, or {error}", as one object schema.

    Its `properties` are the result's fields plus an optional `error`, so a client that reads
    `outputSchema.properties` sees the result's shape; `anyOf` then asks for either the result's
    required fields or `error`, so success and error results both conform.
    """
    success = deepcopy(schema)
    definitions = success.pop("$defs", {})
    failure = deepcopy(_error_schema())
    definitions.update(failure.pop("$defs", {}))
    merged: dict[str, Any] = {
        "type": "object",
        "properties": {**success.get("properties", {}), "error": failure["properties"]["error"]},
    }
    if "additionalProperties" in success:
        merged["additionalProperties"] = success["additionalProperties"]
    required = success.get("required", [])
    if required:
        merged["anyOf"] = [{"required": required}, {"required": ["error"]}]
    if definitions:
        merged["$defs"] = definitions
    return merged


@functools.cache
def _error_schema() -> dict[str, Any]:
    """ToolErrorResult's JSON schema, made once: every tool's outputSchema embeds it, and pydantic
    took 2-3 ms a tool to make it again at each server start."""
    return ToolErrorResult.model_json_schema(ref_template="#/$defs/{model}")


def refused_call(name: str, error: Exception) -> CallToolResult:
    """A call the SDK refused before the tool body ran (its ToolError): bad arguments or an unknown name."""
    cause = error.__cause__
    if isinstance(cause, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(part) for part in problem['loc']) or 'arguments'}: "
            f"{str(problem['msg']).removeprefix('Value error, ')}{_given(problem.get('input'))}"
            for problem in cause.errors()
        )
        return error_result(
            ErrorCode.INVALID_ARGUMENTS, f"{name} was not run: invalid arguments: {problems}."
        )
    if str(error).startswith("Unknown tool"):
        return error_result(ErrorCode.UNKNOWN_TOOL, f"There is no tool named {name!r} on this server.")
    return error_result(ErrorCode.INTERNAL_ERROR, str(error))


def _given(value: Any) -> str:
    """The refused value, echoed to the caller who sent it, when it is one short scalar."""
    if isinstance(value, str | int | float | bool) and len(repr(value)) <= 80:
        return f" (got {value!r})"
    return ""

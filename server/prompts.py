"""The one prompt, build_imqueue_service: the documented way to build an @imqueue service.

The service name goes through scaffold_types.normalize_service_name, so the prompt names the
same class scaffold_service would generate (user-service -> UserService); a name scaffold would
refuse is refused here as invalid params (-32602), with scaffold's message saying what is
allowed. The rendered workflow stays under 250 words (a test counts them).
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Message, UserMessage
from mcp.server.mcpserver.prompts import Prompt
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import Field

from .scaffold_types import ScaffoldError, normalize_service_name

PROMPT_NAME = "build_imqueue_service"
PROMPT_TITLE = "Build an @imqueue service"
PROMPT_DESCRIPTION = (
    "The documented workflow for building an @imqueue service: docs first, scaffolded code, "
    "typed @expose() methods, generated clients."
)
MAX_PURPOSE_CHARACTERS = 300

WORKFLOW = """\
Build an @imqueue service named {service}.{purpose}

Follow this workflow. The @imqueue docs are the authority, not memory or other frameworks.

1. Before writing code, call search_docs for every @imqueue API or pattern you will use, read \
the best hits with get_doc, and cite the URLs you relied on.
2. Start from scaffold_service (name "{service}", with the methods you plan). {full_project}
3. Expose each remote method with @expose() and a complete JSDoc block: a description, \
@param {{Type}} name for every parameter, @return {{Promise<Type>}}. Keep "removeComments": \
false in tsconfig.json; the JSDoc is the runtime type source.
4. Make every complex argument or return type a class decorated with @classType(), each field \
declared with @property().
5. Call list_packages before adding an @imqueue dependency; of a mutually exclusive pair \
(pg-prisma or pg-sequelize, opentelemetry or datadog), install exactly one.
6. Never hand-write a client: start the service, then generate the client from the running \
service with `imq client generate {service}`{client_tool}.

Finish by listing the files you wrote and the doc URLs you cited."""


# The hosted server has no CLI tools: there the prompt names the commands a person runs instead.
LOCAL_FULL_PROJECT = (
    "If the imq CLI is installed and the user wants a full project, use create_service instead: "
    "dry run first, apply only once the user agrees."
)
HOSTED_FULL_PROJECT = (
    "For a full project, the user runs `imq service create` locally (see local_install_guide for "
    "the local server that can run it)."
)


def render_workflow(name: str, purpose: str | None = None, hosted: bool = False) -> str:
    """The prompt's text for a service name; raises MCPError(-32602) for a name or purpose it refuses."""
    try:
        service = normalize_service_name(name)
    except ScaffoldError as error:
        raise MCPError(code=INVALID_PARAMS, message=str(error)) from None
    said = " ".join((purpose or "").split())
    if len(said) > MAX_PURPOSE_CHARACTERS:
        raise MCPError(
            code=INVALID_PARAMS,
            message=f"purpose is {len(said)} characters; say what the service does in at most "
            f"{MAX_PURPOSE_CHARACTERS} (a sentence or two).",
        )
    return WORKFLOW.format(
        service=service,
        purpose=f"\nWhat it does: {said}" if said else "",
        full_project=HOSTED_FULL_PROJECT if hosted else LOCAL_FULL_PROJECT,
        client_tool="" if hosted else " (the generate_client tool)",
    )


def service_prompts(hosted: bool = False) -> list[Prompt]:
    async def build_imqueue_service(
        name: Annotated[
            str, Field(description="The service name, e.g. 'user', 'user-service' or 'UserService'")
        ],
        purpose: Annotated[
            str | None, Field(description="What the service does, in a sentence or two")
        ] = None,
    ) -> list[Message]:
        return [UserMessage(render_workflow(name, purpose, hosted))]

    return [
        Prompt.from_function(
            build_imqueue_service, name=PROMPT_NAME, title=PROMPT_TITLE, description=PROMPT_DESCRIPTION
        )
    ]

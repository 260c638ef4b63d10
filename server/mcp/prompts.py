"""The prompts: workflows an agent (or its user) picks to start from.

    build_imqueue_service    author a service: docs first, scaffold, @expose() with JSDoc,
                             @classType()/@property() types, generated clients
                             (arguments: name, purpose)
    choose_imqueue_packages  pick packages for a need: list_packages, search_docs, exactly one
                             of an exclusive pair, versions from package_status
                             (arguments: need, using)

The service name goes through scaffold_types.normalize_service_name, so the prompt names the
same class scaffold_service would generate (user-service -> UserService); packages in `using`
go through catalogue.normalize_package and must be catalogued. A value a prompt refuses is
invalid params (-32602) with a message that starts with the argument's name and says what is
allowed. Each rendered workflow stays under 250 words (a test counts them).
"""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import Message, UserMessage
from mcp.server.mcpserver.prompts import Prompt
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import Field

from imqueue_mcp.server.catalogue.packages import CATALOGUE, CatalogueError, normalize_package
from imqueue_mcp.server.scaffold.types import ScaffoldError, normalize_service_name

PROMPT_NAME = "build_imqueue_service"
PROMPT_TITLE = "Build an @imqueue service"
PROMPT_DESCRIPTION = (
    "The documented workflow for building an @imqueue service: docs first, scaffolded code, "
    "typed @expose() methods, generated clients."
)
MAX_PURPOSE_CHARACTERS = 300

CHOOSE_NAME = "choose_imqueue_packages"
CHOOSE_TITLE = "Choose @imqueue packages"
CHOOSE_DESCRIPTION = (
    "Pick the @imqueue packages for a need, from the catalogue and the docs, respecting the "
    "mutually exclusive pairs and stating current versions."
)

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
        raise MCPError(code=INVALID_PARAMS, message=f"name: {error}") from None
    said = sentence("purpose", purpose, "what the service does")
    return WORKFLOW.format(
        service=service,
        purpose=f"\nWhat it does: {said}" if said else "",
        full_project=HOSTED_FULL_PROJECT if hosted else LOCAL_FULL_PROJECT,
        client_tool="" if hosted else " (the generate_client tool)",
    )


CHOOSE_WORKFLOW = """\
Choose the @imqueue packages for this need: {need}{using}

1. Call list_packages: every documented package with its summary, install command and pick rule.
2. Call search_docs with the need in plain words, and read the best hits with get_doc, to see \
which packages the docs use for it. Cite the URLs you relied on.
3. Of a mutually exclusive pair (pg-prisma or pg-sequelize, opentelemetry or datadog), choose \
exactly one: follow the pick rule list_packages gives, and keep the one already in use.
4. Prefer the fewest packages: @imqueue/rpc re-exports @imqueue/core, so do not add core beside it.
5. Call package_status for each package you choose, for its current version and Node.js floor.

Answer with one line per package: the package, why it fits the need, its install command and \
current version; then anything the need asks for that no @imqueue package covers."""


def sentence(argument: str, text: str | None, what: str) -> str:
    """A free-text argument with its whitespace folded; MCPError(-32602) naming it when too long."""
    said = " ".join((text or "").split())
    if len(said) > MAX_PURPOSE_CHARACTERS:
        raise MCPError(
            code=INVALID_PARAMS,
            message=f"{argument} is {len(said)} characters; say {what} in at most "
            f"{MAX_PURPOSE_CHARACTERS} (a sentence or two).",
        )
    return said


def catalogued_packages(using: str | None) -> list[str]:
    """'rpc, @imqueue/pg-prisma' -> ['@imqueue/rpc', '@imqueue/pg-prisma']; else -32602 naming `using`."""
    known = {entry.name for entry in CATALOGUE}
    packages: list[str] = []
    for item in (using or "").split(","):
        if not item.strip():
            continue
        try:
            package = normalize_package(item)
        except CatalogueError as error:
            raise MCPError(code=INVALID_PARAMS, message=f"using: {error}") from None
        if package not in known:
            raise MCPError(
                code=INVALID_PARAMS,
                message=f"using: {package} is not a documented @imqueue package; name packages from "
                "list_packages, separated by commas (e.g. 'rpc, pg-prisma').",
            )
        packages.append(package)
    return list(dict.fromkeys(packages))


def render_choice(need: str, using: str | None = None) -> str:
    """The choose_imqueue_packages text; raises MCPError(-32602) naming a refused argument."""
    said = sentence("need", need, "what the service needs")
    if not said:
        raise MCPError(
            code=INVALID_PARAMS,
            message="need is empty; say what the service must do, e.g. 'cache Postgres reads'.",
        )
    packages = catalogued_packages(using)
    return CHOOSE_WORKFLOW.format(
        need=said, using=f"\nAlready in the project: {', '.join(packages)}." if packages else ""
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

    async def choose_imqueue_packages(
        need: Annotated[
            str, Field(description="What the service must do, e.g. 'cache Postgres reads' or 'trace calls'")
        ],
        using: Annotated[
            str | None,
            Field(description="@imqueue packages the project has, comma-separated, e.g. 'rpc, pg-prisma'"),
        ] = None,
    ) -> list[Message]:
        return [UserMessage(render_choice(need, using))]

    return [
        Prompt.from_function(
            build_imqueue_service, name=PROMPT_NAME, title=PROMPT_TITLE, description=PROMPT_DESCRIPTION
        ),
        Prompt.from_function(
            choose_imqueue_packages, name=CHOOSE_NAME, title=CHOOSE_TITLE, description=CHOOSE_DESCRIPTION
        ),
    ]

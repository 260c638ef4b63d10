"""A scaffolded service that calls other services: their clients wired in (scaffold_service `calls`).

Pure logic, like templates.py. For each service called, the new service gets:

- the generated client's import (`./clients/<Service>.js`, the file generate_client writes into
  src/clients from the running service: never written here, so it cannot drift from it);
- a client instance on the class, addressed to the called service's queue (its class name: a
  client left to its default would call `<Base>`, where no service listens), made from
  `clientOptions` in config.ts: the service's own broker and a `callTimeout`;
- `start()` and `destroy()` that start the clients before the service takes calls and destroy
  them after it stops.

The property is `<base>Client` (`inventoryClient` for InventoryService): a plain `<base>` could be
`name` or `options`, members IMQService already has.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from imqueue_mcp.server.scaffold.types import (
    CLIENT_SUFFIX,
    Method,
    ScaffoldError,
    normalize_service_name,
    service_base_name,
)

CLIENTS_FOLDER = "src/clients"
MAX_CALLS = 10
INDENT = "    "


@dataclass(frozen=True)
class Called:
    """One service the new service calls, and every name its wiring uses."""

    service: str  # the class name, which is also its queue name
    namespace: str  # the generated module's only export
    client: str  # the client class inside the namespace
    field: str  # the property holding the client on the new service

    @property
    def client_file(self) -> str:
        return f"{CLIENTS_FOLDER}/{self.service}.ts"

    def as_dict(self, clients_folder: str) -> dict[str, Any]:
        return {
            "service": self.service,
            "queue": self.service,
            "namespace": self.namespace,
            "client": self.client,
            "field": self.field,
            "clientFile": self.client_file,
            "generate": {
                "tool": "generate_client",
                "arguments": {"service": self.service, "path": clients_folder},
            },
        }


def called_services(calls: Iterable[str] | None, service: str, methods: Sequence[Method]) -> list[Called]:
    """The services `service` calls, each once, in the order given; refuses itself and name clashes."""
    out: list[Called] = []
    for raw in calls or ():
        called = normalize_service_name(raw)
        if called == service:
            raise ScaffoldError(f"{service} cannot list itself in calls; name the services it calls.")
        if any(each.service == called for each in out):
            continue
        base = service_base_name(called)
        field = base[0].lower() + base[1:] + CLIENT_SUFFIX
        if any(method.name == field for method in methods):
            raise ScaffoldError(
                f"Method {field!r} has the name of the {called} client's property; rename the method."
            )
        out.append(Called(called, called[0].lower() + called[1:], base + CLIENT_SUFFIX, field))
    if len(out) > MAX_CALLS:
        raise ScaffoldError(f"calls names {len(out)} services; a scaffold wires at most {MAX_CALLS}.")
    return out


def client_imports(called: Sequence[Called]) -> list[str]:
    if not called:
        return []
    lines = [
        "import { clientOptions } from './config.js';",
        "// Generated from each running service by generate_client (imq client generate) into",
        f"// {CLIENTS_FOLDER}/: build once they are there.",
    ]
    return lines + [f"import {{ {each.namespace} }} from './clients/{each.service}.js';" for each in called]


def client_members(called: Sequence[Called]) -> list[str]:
    """The class members wiring the clients: fields, then start() and destroy()."""
    if not called:
        return []
    lines: list[str] = []
    for each in called:
        lines += [
            f"// {each.service}'s client, on its queue '{each.service}'; started and destroyed",
            "// with this service.",
            f"protected readonly {each.field} = new {each.namespace}.{each.client}(clientOptions, "
            f"'{each.service}');",
            "",
        ]
    lines += [
        "// The clients start before this service takes calls, and are destroyed after it stops.",
        "public override async start() {",
        *(f"{INDENT}await this.{each.field}.start();" for each in called),
        f"{INDENT}return super.start();",
        "}",
        "",
        "public override async destroy(): Promise<void> {",
        f"{INDENT}await super.destroy();",
        *(f"{INDENT}await this.{each.field}.destroy();" for each in called),
        "}",
    ]
    return [INDENT + line if line else "" for line in lines]


def client_options_source(call_timeout_ms: int) -> str:
    """config.ts's second export: the clients' options, on the service's own broker."""
    return "\n".join(
        [
            "",
            "// The clients of the services this one calls: the same broker as the service, and a",
            "// call with no answer within this many milliseconds rejects with IMQ_RPC_CALL_TIMEOUT",
            "// (unset, it would wait forever).",
            "export const clientOptions: Partial<IMQClientOptions> = {",
            f"{INDENT}...broker,",
            f"{INDENT}callTimeout: {call_timeout_ms},",
            "};",
            "",
        ]
    )


CLIENT_OPTIONS_IMPORT = "import type { IMQClientOptions } from '@imqueue/rpc';"

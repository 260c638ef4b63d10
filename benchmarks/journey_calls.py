"""Journey e: two services, one calling the other, written by the tools into their folders.

The task the two coding agents of issue 28 were given: "build an InventoryService and an
OrderService that calls it, with @logged methods and a call timeout, on the local stack". Here the
script does what they did, acting only on what the tools return:

1. scaffold_service InventoryService with a folder: first the default dry run (nothing may appear
   on disk), then dry_run false; the files on disk must be exactly the ones the reply lists.
2. @logged on its method, as the docs say: search_docs finds the decorator's package, find_examples
   (or search_docs) the rule that @expose() is the innermost decorator, listed last.
3. Its body (the agent's own code); install, build and start as package.json says, on the
   non-default Redis.
4. scaffold_service OrderService with calls [InventoryService] and call_timeout_ms, into its folder;
   its method body calls the client through the property the reply names.
5. generate_client for InventoryService with the arguments the reply gives, and the broker.
6. Build and start OrderService; scaffold_client for it into a third folder, generate its client
   as that reply says, build, run the caller: the answer must carry InventoryService's answer.
7. The call timeout, shown: InventoryService stopped, the caller's call comes back with
   IMQ_RPC_CALL_TIMEOUT within the timeout it set (plus start-up), never a hang.

A step that needs something no tool said records a hand fix (journey_kit.Journey.hand_fix).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .journey_kit import Journey, JourneyFailed, Project, wait_for_log
from .stack import stop_group

if TYPE_CHECKING:
    from .journeys import Stage

INVENTORY = "InventoryService"
ORDER = "OrderService"
RESERVE = {
    "name": "reserve",
    "description": "Reserves quantity items of a product; returns how many were reserved.",
    "params": [{"name": "sku", "type": "string"}, {"name": "quantity", "type": "number"}],
    "returns": "number",
}
PLACE = {
    "name": "placeOrder",
    "description": "Places an order for quantity items of a product, reserving them first.",
    "params": [{"name": "sku", "type": "string"}, {"name": "quantity", "type": "number"}],
    "returns": "string",
}
CALL_TIMEOUT_MS = 3000  # OrderService's calls to InventoryService
CALLER_TIMEOUT_MS = 15000  # the caller's calls to OrderService: longer, so the inner timeout shows
MARK = "reserved:"  # in OrderService's answer, made of InventoryService's


def files_on_disk(root: Path) -> set[str]:
    """The project's own files: what a scaffold may have written (not installs, builds or clients)."""
    skip = ("node_modules", "dist", ".npm")
    return {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and not set(path.relative_to(root).parts) & set(skip)
    }


async def scaffold_into(
    stage: Stage, tool: str, arguments: dict[str, Any], folder: Path, journey: Journey
) -> dict[str, Any]:
    """A scaffold tool with a target folder: the dry run first, then the write; checks both."""
    project = Project(folder, stage.workspace)
    if not stage.tools.has_argument(tool, "path"):
        journey.step(f"{tool}, its files into {folder.name}")
        journey.hand_fix(f"{tool} takes no folder to write into: copied its files by hand")
        answer = await stage.tools.call(tool, arguments)
        if answer.is_error:
            raise JourneyFailed(f"{tool} failed: {answer.text[:300]}")
        for file in answer.data["files"]:
            project.write(str(file["path"]), str(file["content"]))
        return answer.data
    journey.step(f"{tool} into {folder.name} (dry run)")
    dry = await stage.tools.call(tool, {**arguments, "path": str(folder)})
    if dry.is_error:
        raise JourneyFailed(f"{tool} (dry run) failed: {dry.text[:300]}")
    if files_on_disk(folder):
        raise JourneyFailed(f"{tool}'s dry run wrote {sorted(files_on_disk(folder))}")
    journey.step(f"{tool} into {folder.name} (write)")
    answer = await stage.tools.call(tool, {**arguments, "path": str(folder), "dry_run": False})
    if answer.is_error:
        raise JourneyFailed(f"{tool} failed: {answer.text[:300]}")
    listed = {str(each["path"]) for each in answer.data.get("written", {}).get("files", [])}
    if files_on_disk(folder) != listed:
        raise JourneyFailed(f"{tool} wrote {sorted(files_on_disk(folder))} but listed {sorted(listed)}")
    journey.notes.append(f"{folder.name}: {len(listed)} files written, as listed")
    return answer.data


async def logged_import(stage: Stage, journey: Journey) -> tuple[str, bool]:
    """The package @logged comes from, and whether the docs say @expose() goes last."""
    journey.step("look up @logged: its package, and the decorators' order")
    found = await stage.tools.call("search_docs", {"query": "logged decorator", "limit": 5})
    package = next(
        (
            str(hit.get("package"))
            for hit in found.data.get("results", [])
            if str(hit.get("title", "")).lower() == "logged" and hit.get("package")
        ),
        None,
    )
    if package is None:
        journey.hand_fix("search_docs named no package for the logged decorator: used @imqueue/rpc")
        package = "@imqueue/rpc"
    order = await stage.tools.call("find_examples", {"query": "@logged() with @expose() decorator order"})
    last = bool(re.search(r"@expose\(\)` must be the innermost decorator, listed last", order.text))
    if not last:
        journey.hand_fix("no example said where @expose() goes beside @logged(): put it last")
    return package, last


def add_logged(project: Project, source: str, package: str, method: str) -> None:
    """The agent's own edit, as the docs say: import logged, and @logged() above @expose()."""
    text = project.read(source)
    text = f"import {{ logged }} from '{package}';\n" + text
    text = text.replace(
        f"    @expose()\n    public async {method}(",
        f"    @logged()\n    @expose()\n    public async {method}(",
    )
    project.write(source, text)


def implement(project: Project, source: str, service: str, bodies: dict[str, str], journey: Journey) -> None:
    text = project.read(source)
    for method, body in bodies.items():
        placeholder = f"throw new Error('{service}.{method}() is not implemented yet');"
        if placeholder not in text:
            raise JourneyFailed(f"the scaffold's {service}.{method}() has no placeholder body")
        text = text.replace(placeholder, body)
    project.write(source, text)


def start(stage: Stage, project: Project, service: str, processes: list[Any]) -> Any:
    log = stage.workspace / f"{project.root.name}.log"
    process = project.start("start", log, IMQ_REDIS=stage.broker)
    processes.append(process)
    wait_for_log(process, log, f"{service}: reader channel connected")
    return process


def wire_by_hand(project: Project) -> dict[str, Any]:
    """What the agents of issue 28 wrote themselves: the client's import, a field on its queue,
    start() and destroy(), and client options with the call timeout."""
    source = f"src/{ORDER}.ts"
    text = project.read(source)
    text = (
        "import { clientOptions } from './config.js';\n"
        f"import {{ inventoryService }} from './clients/{INVENTORY}.js';\n" + text
    ).replace(
        f"export class {ORDER} extends IMQService {{\n",
        f"export class {ORDER} extends IMQService {{\n"
        "    protected readonly inventoryClient =\n"
        f"        new inventoryService.InventoryClient(clientOptions, '{INVENTORY}');\n"
        "    public override async start() { await this.inventoryClient.start(); return super.start(); }\n\n",
    )
    project.write(source, text)
    config = project.read("src/config.ts")
    project.write(
        "src/config.ts",
        "import type { IMQClientOptions } from '@imqueue/rpc';\n"
        + config
        + "export const clientOptions: Partial<IMQClientOptions> = "
        + f"{{ ...broker, callTimeout: {CALL_TIMEOUT_MS} }};\n",
    )
    return {
        "field": "inventoryClient",
        "generate": {"arguments": {"service": INVENTORY, "path": str(project.root / "src/clients")}},
    }


async def generate(stage: Stage, given: dict[str, Any], journey: Journey) -> None:
    """generate_client with the arguments a scaffold's reply gave, on the journey's broker."""
    journey.step(f"generate_client for {given['arguments']['service']}, as the reply says")
    answer = await stage.tools.call(
        "generate_client", {**given["arguments"], "redis": stage.broker, "overwrite": True}
    )
    if answer.is_error:
        raise JourneyFailed(f"generate_client failed: {answer.text[:400]}")


async def journey_two_services(stage: Stage, journey: Journey) -> None:
    from .journeys import build_step, install_step

    processes: list[Any] = []
    try:
        await _two_services(stage, journey, processes, install_step, build_step)
    finally:
        for process in processes:
            stop_group(process)


async def _two_services(
    stage: Stage, journey: Journey, processes: list[Any], install_step: Any, build_step: Any
) -> None:
    ws = stage.workspace
    inventory = Project(ws / "inventory-service", ws)
    await scaffold_into(
        stage, "scaffold_service", {"name": INVENTORY, "methods": [RESERVE]}, inventory.root, journey
    )
    package, _ = await logged_import(stage, journey)
    journey.step("@logged() and the method body (the agent's own code)")
    add_logged(inventory, f"src/{INVENTORY}.ts", package, "reserve")
    implement(inventory, f"src/{INVENTORY}.ts", INVENTORY, {"reserve": "return quantity;"}, journey)
    install_step(inventory, journey)
    build_step(inventory, journey)
    journey.step(f"start {INVENTORY} on the non-default Redis")
    inventory_process = start(stage, inventory, INVENTORY, processes)

    order = Project(ws / "order-service", ws)
    wiring = {"calls": [INVENTORY], "call_timeout_ms": CALL_TIMEOUT_MS}
    if not stage.tools.has_argument("scaffold_service", "calls"):
        wiring = {}
    data = await scaffold_into(
        stage, "scaffold_service", {"name": ORDER, "methods": [PLACE], **wiring}, order.root, journey
    )
    called = next((each for each in data.get("calls", []) if each.get("service") == INVENTORY), None)
    if called is None:
        journey.hand_fix("scaffold_service cannot wire in another service's client: wired it by hand")
        called = wire_by_hand(order)
    journey.step("@logged() and the method body, through the wired client")
    add_logged(order, f"src/{ORDER}.ts", package, "placeOrder")
    body = (
        f"const count = await this.{called['field']}.reserve(sku, quantity);\n"
        f"        return `{MARK}${{count}} of ${{sku}}`;"
    )
    implement(order, f"src/{ORDER}.ts", ORDER, {"placeOrder": body}, journey)
    install_step(order, journey)
    await generate(stage, called["generate"], journey)
    build_step(order, journey)
    journey.step(f"start {ORDER}")
    start(stage, order, ORDER, processes)

    caller = Project(ws / "order-caller", ws)
    client = await scaffold_into(
        stage,
        "scaffold_client",
        {"service": ORDER, "methods": [PLACE], "call_timeout_ms": CALLER_TIMEOUT_MS},
        caller.root,
        journey,
    )
    install_step(caller, journey)
    output = str(Path(str(client.get("output") or "src/clients/x")).parent)
    await generate(
        stage,
        client.get("generate") or {"arguments": {"service": ORDER, "path": str(caller.root / output)}},
        journey,
    )
    build_step(caller, journey)
    journey.step("run the caller: OrderService answers with InventoryService's answer")
    ran = caller.npm("start", timeout=60, IMQ_REDIS=stage.broker)
    if not re.search(rf"{MARK}\d+ of \w", ran.stdout + ran.stderr):
        raise JourneyFailed(f"no answer through both services: {(ran.stdout + ran.stderr).strip()[-400:]}")
    journey.notes.append("answered through both services")

    journey.step(f"stop {INVENTORY}: the call times out, as set, and does not hang")
    stop_group(inventory_process)
    started = time.monotonic()
    ran = caller.npm("start", timeout=60, IMQ_REDIS=stage.broker)
    seconds = time.monotonic() - started
    if "IMQ_RPC_CALL_TIMEOUT" not in ran.stdout + ran.stderr:
        raise JourneyFailed(
            f"no call timeout with InventoryService down: {(ran.stdout + ran.stderr).strip()[-400:]}"
        )
    journey.notes.append(
        f"with {INVENTORY} down the call timed out after {seconds:.1f} s (callTimeout {CALL_TIMEOUT_MS} ms)"
    )
    journey.passed = True

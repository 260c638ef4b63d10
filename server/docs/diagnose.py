"""What a pasted error code means for an @imqueue project, beside the ranked pages.

An agent pastes an error into search_docs. Where the docs quote that error, ranking finds the
page. Operating-system, npm and TypeScript codes (ECONNREFUSED, ENOTFOUND, ERESOLVE, TS1241, ...)
are not @imqueue's: the docs rarely quote them, yet what they mean in an @imqueue project is
fixed; so is what each of @imqueue/rpc's own codes (IMQ_RPC_NO_ACCESS, ...) says is wrong. A
service and its clients reach each other only through Redis (default localhost:6379, named by
IMQ_REDIS in the tutorial's bootstrap), a project created from imq's template declares its
dependencies as "*", @imqueue 3.x compiles standard decorators where 1.x and 2.x compiled
legacy ones, its packages are native ES modules (Node.js 22.12+), and its safe delivery moves
messages with LMOVE/BLMOVE (Redis 6.2+; a Redis that wants a password gets it from the queue's
options), a class extending IMQService or IMQClient inherits their members, @imqueue/core's
messages are JsonObjects, and a queue's Redis connections live from its start() to its
destroy(). This module reads such codes out of the query and says, in two or three sentences, what
failed and what to do, with the docs pages that hold the fix. It is a fixed table of codes,
never a table of queries, and it never changes the ranking.

A diagnosis is read by an agent, so it repeats nothing of the query but a host name, a port, an
@imqueue package name, a queue's class-like name or a base class's member name that parses as one
(`quoted_host`, `quoted_port`, `_NPM_NAME`, `_TIMED_OUT_CALL`, `_base_member`), and then marks it
as the user's text; the rest is this module's own words. A name that is an error code (ENOTFOUND
ETIMEDOUT) is no host.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass

ORIGIN = "https://imqueue.org"
PREREQUISITES = f"{ORIGIN}/get-started/#prerequisites"
BROKER_ADDRESS = f"{ORIGIN}/tutorial/user-service/"  # the bootstrap that reads IMQ_REDIS
CREATING_SERVICES = f"{ORIGIN}/cli/creating-services/#what-a-run-does-pipeline"
STANDARD_DECORATORS = f"{ORIGIN}/api/#standard-decorators-and-tsconfig"  # the 2.x -> 3.x migration
EXPOSE = f"{ORIGIN}/api/faq/#how-do-i-expose-a-service-method-so-it-can-be-called-remotely"
DOC_BLOCKS = f"{ORIGIN}/api/#the-importance-of-doc-blocks"
REMOVE_COMMENTS = f"{ORIGIN}/api/faq/#why-must-removecomments-be-false-in-a-project-that-uses-imqueue"
GENERATE_CLIENT = f"{ORIGIN}/api/faq/#how-do-i-generate-a-typed-client-for-a-running-service"
LATE_REPLY = f"{ORIGIN}/blog/silent-failures-nodejs-message-queue/#a-late-reply-is-not-a-missing-reply"
ES_MODULES = f"{ORIGIN}/api/#es-modules-and-node"  # 3.x packages are native ES modules, Node 22.12+
SAFE_DELIVERY = f"{ORIGIN}/api/core/latest/core.imqoptions.safedelivery/"
QUEUE_CREDENTIALS = f"{ORIGIN}/api/core/latest/core.imessagequeueauthconnection/"
CALL_TIMEOUT = f"{ORIGIN}/glossary/#calltimeout"
COMPLEX_TYPES = f"{ORIGIN}/api/#complex-types"
CLIENT_CONSTRUCTOR = f"{ORIGIN}/api/rpc/latest/rpc.imqclient._constructor_/"  # serviceName's default
QUEUE_SEND = f"{ORIGIN}/api/core/latest/core.redisqueue.send/"  # resolves once the write is dispatched
QUEUE_DESTROY = f"{ORIGIN}/api/core/latest/core.redisqueue.destroy/"
JSON_OBJECT = f"{ORIGIN}/api/core/latest/core.jsonobject/"
# @imqueue/rpc 3.x's call hooks, as IMQRPCOptions.d.ts declares them
HOOKS = {
    "IMQBeforeCall": ("(req?: IMQRPCRequest, res?: IMQRPCResponse): Promise<void>", "rpc.imqbeforecall"),
    "IMQAfterCall": ("(req: IMQRPCRequest, res?: IMQRPCResponse): Promise<void>", "rpc.imqaftercall"),
    "IMQWrapCall": (
        "(req: IMQRPCRequest, res: IMQRPCResponse, next: () => Promise<any>): Promise<any>",
        "rpc.imqwrapcall",
    ),
}
RPC_BASES = {  # the @imqueue/rpc classes a service and a generated client extend
    "IMQService": f"{ORIGIN}/api/rpc/latest/rpc.imqservice/",
    "IMQClient": f"{ORIGIN}/api/rpc/latest/rpc.imqclient/",
}
REDIS_DEFAULT_PORT = 6379

# Greedy, so that an IPv6 host as Node prints it (::1:6380) keeps its colons and the port is last.
_ADDRESS = r"(?P<host>[\w.:\[\]-]+):(?P<port>\d+)\b"
_HOST_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
_ERROR_CODE = re.compile(r"E[A-Z0-9_]{2,}")
MAX_HOST_NAME = 253  # RFC 1035, without the trailing dot


def quoted(text: str) -> str:
    """Text taken from the query, marked as the user's."""
    return f'"{text}" (from your query)'


def quoted_host(text: str | None) -> str | None:
    """`text` when it is a DNS name or an IP address (an error code is not); else None."""
    if not text or len(text) > MAX_HOST_NAME or _ERROR_CODE.fullmatch(text):
        return None
    bare = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        labels = text.removesuffix(".").split(".")
        if not all(_HOST_LABEL.fullmatch(label) for label in labels) or labels[-1].isdigit():
            return None
    return text


def quoted_port(text: str | None) -> int | None:
    """The port `text` names, when it is one (1-65535); else None."""
    if not text or not text.isdigit() or len(text) > 5:
        return None
    port = int(text)
    return port if 0 < port <= 65535 else None


@dataclass(frozen=True)
class Diagnosis:
    code: str
    explanation: str
    urls: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"code": self.code, "explanation": self.explanation, "urls": list(self.urls)}


BROKER_ADVICE = (
    "@imqueue services and their clients talk only through Redis (6.2 or newer), by default at "
    f"localhost:{REDIS_DEFAULT_PORT}: start Redis, or point the service and every client at yours "
    '(IMQ_REDIS="host:port" in the bootstrap the tutorial shows, or the host and port options).'
)


CACHING = f"{ORIGIN}/api/#caching"  # @cache() and its adapter


def _refused(match: re.Match[str]) -> Diagnosis:
    port = quoted_port(match["port"])
    host = quoted_host(match["host"]) if port is not None else None
    where = f" at {quoted(f'{host}:{port}')}" if host else f" on port {port}" if port is not None else ""
    if port is not None and port != REDIS_DEFAULT_PORT:
        what = f"no process listens on port {port}. If that is meant to be your Redis: "
    else:
        what = "no Redis is listening. "
    cache = ""
    if "RedisCache" in match.string:  # @cache()'s adapter, connecting on its own
        cache = (
            " The connection is @cache()'s (RedisCache): it reuses the service's own connection only "
            "when the service is given one broker as host and port; given a cluster (even of one) it "
            "opens its own at localhost:6379, whatever IMQ_REDIS says. Give a single broker as "
            "{ host, port } (scaffold_service's config.ts does), or pass the cache its connection."
        )
    return Diagnosis(
        "ECONNREFUSED",
        f"Nothing accepted a TCP connection{where}: {what}{BROKER_ADVICE}{cache}",
        (PREREQUISITES, BROKER_ADDRESS, *((CACHING,) if cache else ())),
    )


# A broker address whose port is no number, as @imqueue's logs print it ("host redis:NaN"): a URL
# (redis://host:port) or a bare host where host:port was read and split at its colon.
_NO_PORT = re.compile(r"\b[\w.-]+:NaN\b")


def _not_found(match: re.Match[str]) -> Diagnosis:
    name = quoted_host(match["name"])
    host = f"The host name {quoted(name)}" if name else "A host name"
    if _NO_PORT.search(match.string):
        return Diagnosis(
            "ENOTFOUND",
            f"{host} does not resolve, and the broker's port was read as no number (NaN): the address "
            "was not given as host:port. IMQ_REDIS (and the scaffolds' config, which splits it at its "
            "colon) takes host:port, e.g. 127.0.0.1:6379, not a URL such as redis://127.0.0.1:6379.",
            (BROKER_ADDRESS, PREREQUISITES),
        )
    return Diagnosis(
        "ENOTFOUND",
        f"{host} does not resolve (DNS). Check the Redis host the service and its clients "
        "are given (IMQ_REDIS or the host option); use an address this machine can resolve.",
        (BROKER_ADDRESS, PREREQUISITES),
    )


def _unreachable(match: re.Match[str]) -> Diagnosis:
    return Diagnosis(
        match["code"].upper(),
        "The connection to the broker never completed: a firewall, a wrong address or a Redis that is "
        "down on another host. Check that Redis answers at the address IMQ_REDIS (or the host and port "
        "options) names, from this machine.",
        (BROKER_ADDRESS, PREREQUISITES),
    )


IN_USE = Diagnosis(
    "EADDRINUSE",
    "Another process already listens on that port: stop it, or start this one on another port. "
    "(A second copy of the same service started by hand and by `imq ctl` is a common cause.)",
    (f"{ORIGIN}/cli/troubleshooting/#a-service-won-t-start-with-imq-ctl",),
)


PEER_CONFLICT = Diagnosis(
    "ERESOLVE",
    "npm found two packages whose peer-dependency ranges cannot both hold; the 'Found:' and "
    "'Could not resolve dependency:' lines name them. A project created from imq's template "
    'declares its dependencies as "*", so npm takes the newest TypeScript, outside the range '
    "typedoc accepts: pin typescript (and @types/node) in package.json to the versions the docs "
    "describe, then npm install. The create_service tool reports those pins and writes them with "
    "pin: true; imq service create --no-install skips the install so you can pin first.",
    (CREATING_SERVICES,),
)


DECORATOR_CODES = {"class": "TS1238", "parameter": "TS1239", "property": "TS1240", "method": "TS1241"}


def _decorator_signature(match: re.Match[str]) -> Diagnosis:
    return Diagnosis(
        match["code"] or DECORATOR_CODES[match["kind"]],
        "tsc cannot type a decorator call: the decorator is typed for one decorator protocol and "
        "tsconfig.json compiles the other. @imqueue 3.x (rpc 3, core 3) uses standard (TC39) "
        "decorators: remove experimentalDecorators and emitDecoratorMetadata from tsconfig.json, "
        'and compile with a target and lib as the migration guide shows ("es2024", '
        '"esnext.decorators"), removeComments false; a project still on @imqueue 1.x or 2.x needs '
        "experimentalDecorators instead. Two majors installed side by side give the same error: "
        "inspect_project reports which packages differ.",
        (STANDARD_DECORATORS,),
    )


# @imqueue/rpc's own codes (IMQRPCError.code), each as the framework raises it (rpc 3.x: IMQService
# on the service side, IMQClient's deadline on the client side). A method's own thrown code, and
# IMQ_RPC_CALL_ERROR (the method threw: the rejection carries its message), are the application's.
RPC_CODES = (
    Diagnosis(
        "IMQ_RPC_NO_METHOD",
        "The service has no method of that name: the client was generated from another version of "
        "the service, or the name is misspelt. Generate the client again from the running service "
        "(generate_client, or imq client generate) and call what it declares.",
        (GENERATE_CLIENT,),
    ),
    Diagnosis(
        "IMQ_RPC_NO_ACCESS",
        "The method exists on the service class but is not in its service description: only methods "
        "decorated with @expose() are callable remotely. Add @expose() to it, as the innermost "
        "decorator (listed last) when @lock, @cache or @logged are on the same method, and restart "
        "the service.",
        (EXPOSE,),
    ),
    Diagnosis(
        "IMQ_RPC_INVALID_ARGS_COUNT",
        "The call passed another number of arguments than the method's description lists, and the "
        "description is read from its doc block: every parameter needs a typed @param tag (an "
        "optional one marked optional), the project must compile with removeComments false, and "
        "@expose() must be the innermost decorator (after @lock, @cache or @logged it records their "
        "wrapper's ...args as the only argument). Then generate the client again.",
        (DOC_BLOCKS, REMOVE_COMMENTS),
    ),
    CALL_TIMED_OUT := Diagnosis(
        "IMQ_RPC_CALL_TIMEOUT",
        "The client gave up waiting: no reply came within its callTimeout. Either the service is not "
        "running or not reachable on the same Redis, or it answers later than the deadline (the "
        "deadline too tight for the method, or its workers busy): the service's log tells which.",
        (LATE_REPLY, CALL_TIMEOUT),
    ),
)


# rpc's own message: "Call to Order.getOrder() timed out after 3000 ms." names the queue called.
# Only a class-like name is repeated (quoted as the user's): letters and digits, a capital first.
_TIMED_OUT_CALL = re.compile(r"Call to (?P<queue>[A-Z][A-Za-z0-9]{0,63})\.[\w$]{1,100}\(\) timed out")


def _timed_out(match: re.Match[str]) -> Diagnosis:
    """IMQ_RPC_CALL_TIMEOUT; when the queue called is not a ...Service, the generated client's
    default queue is the likely cause: its class name minus 'Client' (OrderClient -> 'Order')."""
    called = _TIMED_OUT_CALL.search(match.string)
    queue = called["queue"] if called else ""
    if not queue or queue.endswith("Service"):
        return CALL_TIMED_OUT
    return Diagnosis(
        CALL_TIMED_OUT.code,
        f"{CALL_TIMED_OUT.explanation} The call went to the queue {quoted(queue)}: a generated client "
        "built without its second argument calls the queue named after its class minus 'Client' "
        f"({queue}Client -> {queue}), and a service class {queue}Service listens on "
        f"'{queue}Service' (as scaffold_service and imq write it). Pass the service's queue name: "
        f"new <namespace>.{queue}Client(options, '{queue}Service').",
        (CLIENT_CONSTRUCTOR, *CALL_TIMED_OUT.urls),
    )


def _old_redis(match: re.Match[str]) -> Diagnosis:
    return Diagnosis(
        f"ERR unknown command {match['command'].upper()}",
        "The Redis server is older than 6.2: it has no LMOVE or BLMOVE, which @imqueue/core 3.x uses "
        "to move each message when safeDelivery is on (and to take back a dead worker's messages). "
        "@imqueue needs Redis 6.2 or newer: upgrade the server (an older one serves only with "
        "safeDelivery off).",
        (PREREQUISITES, SAFE_DELIVERY),
    )


def _credentials(match: re.Match[str]) -> Diagnosis:
    sent = "sent none" if match["code"] == "NOAUTH" else "sent a user name and password it does not accept"
    return Diagnosis(
        match["code"],
        f"The Redis server requires a password (requirepass, or an ACL user) and the connection {sent}. "
        "Give the queue's password, and username for an ACL user, in the options of the service and "
        "of every client that reaches it (IMQOptions takes them; a cluster's entries use the top-level "
        "pair).",
        (QUEUE_CREDENTIALS,),
    )


_NPM_NAME = re.compile(r"@imqueue/[a-z0-9][a-z0-9._-]{0,200}")


def _missing_package(match: re.Match[str]) -> Diagnosis:
    package = match["package"]
    named = f"{quoted(package)} is" if _NPM_NAME.fullmatch(package) else "An @imqueue package is"
    install = f"npm install {package}" if _NPM_NAME.fullmatch(package) else "npm install it"
    return Diagnosis(
        match["code"] or "MODULE_NOT_FOUND",
        f"{named} not installed where this code runs: {install} in the project whose code imports it "
        "(its package.json should name it). @imqueue 3.x packages are ES modules for Node.js 22.12 or "
        'newer; TypeScript finds them with "module" and "moduleResolution" set to "nodenext".',
        (ES_MODULES,),
    )


PACKAGES = f"{ORIGIN}/status/#the-packages"  # each package, its version and install command
_RANGE = re.compile(r"[\^~]?\d{1,6}(?:\.(?:\d{1,6}|x|\*)){0,2}")


def _package_named(text: str | None) -> str | None:
    """An @imqueue package name as npm prints it in a URL (@imqueue%2fjob) or a spec, when it
    parses as one; else None."""
    if not text:
        return None
    name = re.sub("%2f", "/", text, flags=re.IGNORECASE)
    return name if _NPM_NAME.fullmatch(name) else None


def _not_in_registry(match: re.Match[str]) -> Diagnosis:
    package = _package_named(match["package"])
    named = f"has no package {quoted(package)}" if package else "has no package of that name"
    return Diagnosis(
        "E404",
        f"The npm registry this machine uses {named}. Check the name against list_packages (each "
        "@imqueue package with its install command), then the registry: `npm config get registry`; a "
        "company mirror may not carry every @imqueue package. Ask for it to be mirrored, or fetch the "
        "scope from the public registry: `npm config set @imqueue:registry https://registry.npmjs.org/`.",
        (PACKAGES,),
    )


def _no_matching_version(match: re.Match[str]) -> Diagnosis:
    package = _package_named(match["package"])
    wanted = match["range"] if match["range"] and _RANGE.fullmatch(match["range"]) else None
    what = f"{quoted(package)} exists" if package else "The package exists"
    within = f" but no version in {quoted(wanted)}" if wanted else " but no version in the range asked for"
    listing = f"npm view {package} versions" if package else "npm view <package> versions"
    return Diagnosis(
        "ETARGET",
        f"{what} in the npm registry this machine uses{within}. `{listing}` lists what it serves; "
        "package_status gives the version the docs describe. A registry mirror may lag behind the "
        "public one: ask for the release to be mirrored, or take a range it has and read the docs "
        "against that version (inspect_project and api_diff say what differs).",
        (PACKAGES,),
    )


def _module_kind(match: re.Match[str]) -> Diagnosis:
    return Diagnosis(
        match["code"] or match["tsc"] or "ESM",
        "CommonJS and ES modules are mixed. @imqueue 3.x packages are native ES modules (Node.js "
        "22.12 or newer): import them, never require() them, from a project that is ESM itself "
        '("type": "module" in package.json, tsconfig "module" and "moduleResolution" "nodenext", '
        "relative imports with their .js extension). 'Cannot use import statement outside a module' "
        "is the same mismatch seen from the other side: the file ran as CommonJS.",
        (ES_MODULES,),
    )


UNREGISTERED_TYPE = Diagnosis(
    "TS2304",
    "The generated client names a type it does not declare: the running service never registered "
    "it, so its description had the name and no fields. Each class a method takes or returns needs "
    "@classType() (and @property('<type>') on each field), and the service must load the module "
    "that declares them as a value (import './types.js'; an `import type` is erased). An enum or a "
    "type alias is no class and is never registered: where a method or a @property() names one, "
    "write the union of its literal values instead ('new' | 'paid'). Fix the service, build and "
    "restart it, then generate the client again (generate_client).",
    (COMPLEX_TYPES, GENERATE_CLIENT),
)


def _base_member(match: re.Match[str]) -> Diagnosis:
    base = match["base"]
    runs = "service" if base == "IMQService" else "client"
    if match["function"]:  # a method of the base class: an override (start() in the tutorials)
        return Diagnosis(
            "TS2416",
            f"{quoted(match['member'])} is a method of @imqueue/rpc's {base}, which the class extends: "
            "an override must keep the base method's parameters and return type (see the reference), "
            "and an override that extends it calls and returns super's (return super.start(...)). "
            "A method of yours that only shares the name: rename it.",
            (RPC_BASES[base],),
        )
    return Diagnosis(
        "TS2416",
        f"{quoted(match['member'])} is already a member of @imqueue/rpc's {base}, which the class "
        f"extends: a field of that name replaces the framework's own (tsc still writes the file, and "
        f"the {runs} then runs with it replaced). Rename yours.",
        (RPC_BASES[base],),
    )


def _json_payload(match: re.Match[str]) -> Diagnosis:
    if match["given"] == "string":  # send(name, JSON.stringify(job))
        return Diagnosis(
            match["code"],
            "@imqueue/core's send() takes the message object itself, a JsonObject, and serialises it: "
            "pass the object, not a JSON string of it (no JSON.stringify), and the 'message' handler "
            "receives the object back.",
            (JSON_OBJECT,),
        )
    return dataclasses.replace(JSON_PAYLOAD, code=match["code"])


def _hook_shape(match: re.Match[str]) -> Diagnosis:
    hook = match["hook"]
    signature, page = HOOKS[hook]
    return Diagnosis(
        match["code"],
        f"{hook} is a function type: {signature}. Write the hook async (an async function returns the "
        "Promise it wants, even one that returns nothing) and take its parameters as that type does; "
        "where one is optional (req?, res?), check it before use (if (!req || !res) return;), since "
        "tsc's strict mode will not read a property of what may be undefined.",
        (f"{ORIGIN}/api/rpc/latest/{page}/",),
    )


QUEUE_CONNECTION_GONE = Diagnosis(
    "TypeError",
    "A queue of @imqueue/core ran a Redis command after its connection was gone. start() opens a "
    "queue's connections and destroy() drops them; send() resolves as soon as its write is "
    "dispatched, before Redis answers, and a delayed send writes once more when that answer comes. "
    "So destroy() right after send() can pull the connection from under a write: await start() "
    "before the first send, and let the last writes settle before destroy() (or keep the queue "
    "for the life of the process).",
    (QUEUE_SEND, QUEUE_DESTROY),
)


JSON_PAYLOAD = Diagnosis(
    "TS2345",
    "@imqueue/core's send() takes, and its 'message' event hands over, a JsonObject: an object "
    "type with a string index signature, which an interface lacks. Declare the payload as a type "
    "alias (type Job = { ... }) rather than an interface, and keep the message handler's "
    "parameter a JsonObject, narrowing it inside (const job = data as Job); an interface needs "
    "data as unknown as Job, and a copy ({ ...job }) to send.",
    (JSON_OBJECT,),
)


UNINITIALIZED_FIELD = Diagnosis(
    "TS2564",
    "tsc's strict mode wants every class field assigned in the constructor. The fields of an "
    "@imqueue complex type (an @classType() class, each field under @property('<type>')) are filled "
    "from the call's data, not by a constructor: declare each one with the definite-assignment mark, "
    "name!: Type (an optional one as name?: Type).",
    (COMPLEX_TYPES,),
)


LEGACY_DECORATORS_COMPILER = Diagnosis(
    "TS1219",
    "tsc is compiling decorators the legacy way: a TypeScript older than 5.0, which knows only "
    "experimentalDecorators. @imqueue 3.x uses standard (TC39) decorators: use a current "
    "TypeScript with the tsconfig the migration guide shows (no experimentalDecorators); a "
    "project still on @imqueue 1.x or 2.x sets experimentalDecorators: true instead.",
    (STANDARD_DECORATORS,),
)


def _always(diagnosis: Diagnosis) -> Callable[[re.Match[str]], Diagnosis]:
    """A code whose diagnosis takes nothing from the query."""
    return lambda _match: diagnosis


_CODES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], Diagnosis]], ...] = (
    (re.compile(rf"\bECONNREFUSED\b(?:[^\n]*?\s{_ADDRESS})?"), _refused),
    (re.compile(r"\bENOTFOUND\b(?:\s+(?P<name>[\w.-]+))?"), _not_found),
    (re.compile(r"\b(?P<code>ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)\b"), _unreachable),
    (re.compile(r"\bEADDRINUSE\b"), _always(IN_USE)),
    (re.compile(r"\bERESOLVE\b"), _always(PEER_CONFLICT)),
    # npm's registry answers: no such package (E404), no version in the range (ETARGET)
    (
        re.compile(
            r"\bE404\b(?:[^\n]*\n){0,6}?[^\n]*?(?:GET \S*/|['\"])"
            r"(?P<package>@imqueue(?:/|%2[fF])[a-z0-9._-]{1,200})|\bE404\b"
        ),
        _not_in_registry,
    ),
    (
        re.compile(
            r"\bETARGET\b(?:[^\n]*\n){0,3}?[^\n]*?No matching version found for "
            r"(?P<package>@imqueue/[a-z0-9._-]{1,200})@(?P<range>[^\s'\"]{1,40}?)\.?(?:\s|$)"
            r"|\bETARGET\b"
        ),
        _no_matching_version,
    ),
    # TS1238-TS1241: "Unable to resolve signature of class / parameter / property / method
    # decorator when called as an expression", by its code or by its words when pasted without one
    (
        re.compile(
            r"\b(?P<code>TS12(?:38|39|40|41))\b|Unable to resolve signature of "
            r"(?P<kind>class|parameter|property|method) decorator"
        ),
        _decorator_signature,
    ),
    *(
        (
            re.compile(rf"\b{diagnosis.code}\b"),
            _timed_out if diagnosis is CALL_TIMED_OUT else _always(diagnosis),
        )
        for diagnosis in RPC_CODES
    ),
    # Redis's own replies: a server too old for core 3.x, and one that wants credentials
    (re.compile(r"\bERR unknown command [`'\"]?(?P<command>b?lmove)\b", re.IGNORECASE), _old_redis),
    (re.compile(r"\b(?P<code>NOAUTH|WRONGPASS)\b"), _credentials),
    # Node's and tsc's word for a package that is not installed, and the ESM / CommonJS mismatch
    (
        re.compile(
            r"(?:\b(?P<code>ERR_MODULE_NOT_FOUND|MODULE_NOT_FOUND|TS2307)\b[^\n]{0,80}?)?"
            r"Cannot find (?:module|package) ['\"](?P<package>@imqueue/[^'\"\s]{1,214})['\"]"
        ),
        _missing_package,
    ),
    (
        re.compile(
            r"\b(?P<code>ERR_REQUIRE_ESM|ERR_REQUIRE_ASYNC_MODULE)\b|require\(\) of ES Module"
            r"|Cannot use import statement outside a module|\b(?P<tsc>TS1309)\b"
            r"|\b(?:require|module|exports|__dirname|__filename) is not defined in ES module scope"
        ),
        _module_kind,
    ),
    # tsc on a generated client (src/clients/, or <Name>Service.ts) or on a caller importing from one
    (
        re.compile(
            r"(?:/clients/|\b[A-Z]\w*Service)[\w./-]*\.ts\(\d+,\d+\): error TS2304: Cannot find name"
            r"|error TS2694: Namespace '[^'\n]*(?:/clients/|Service\b)[^'\n]*' has no exported member"
        ),
        _always(UNREGISTERED_TYPE),
    ),
    (
        re.compile(r"\bTS2564\b|has no initializer and is not definitely assigned"),
        _always(UNINITIALIZED_FIELD),
    ),
    # a class's own member that shadows one of the @imqueue/rpc base class it extends
    (
        re.compile(
            r"Property '(?P<member>[\w$]{1,100})' in type '[\w$]{1,100}' is not assignable to the same "
            r"property in base type '(?P<base>IMQService|IMQClient)'\.?"
            r"(?P<function>\s{0,20}Type '\([^'\n]{0,300}\) =>)?"
        ),
        _base_member,
    ),
    # a call hook (beforeCall, afterCall, wrapCall) written as a plain function
    (
        re.compile(
            r"\b(?P<code>TS2322|TS2345)\b[^\n]{0,400}?is not assignable to (?:type|parameter of type) "
            r"'(?P<hook>IMQBeforeCall|IMQAfterCall|IMQWrapCall)\b"
        ),
        _hook_shape,
    ),
    # a JsonObject payload of @imqueue/core given an interface (or a handler taking one)
    (
        re.compile(
            r"\b(?P<code>TS2345|TS2322)\b(?:[^\n]{0,400}?Argument of type '(?P<given>[^'\n]{1,200})' is not "
            r"assignable to parameter of type 'JsonObject'|[^\n]{0,400}?\bJsonObject\b)"
        ),
        _json_payload,
    ),
    # thrown inside core's queue: the frame under the message is core's RedisQueue
    (
        re.compile(
            r"Cannot read properties of (?:undefined|null) \(reading '[\w$]{1,100}'\)"
            r"(?:\s{0,20}\n\s{0,20}at [^\n]{0,300}?|\s{1,20})"  # its first frame, or what a paste kept
            r"@imqueue/core\b[^\s]{0,80}?[/ ](?:Clustered)?RedisQueue\b"
        ),
        _always(QUEUE_CONNECTION_GONE),
    ),
    (
        re.compile(r"\bTS1219\b|Experimental support for decorators is a feature"),
        _always(LEGACY_DECORATORS_COMPILER),
    ),
)


def diagnose(query: str) -> list[Diagnosis]:
    """The diagnoses of every known code the query carries, in the order of the table."""
    found = []
    for pattern, explain in _CODES:
        match = pattern.search(query)
        if match is not None:
            found.append(explain(match))
    return found

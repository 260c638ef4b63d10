#!/usr/bin/env bash
# Installs what the fleet benchmark and its CI test (benchmarks/fleet.py, tests/test_fleet.py)
# and the deploy checks (tests/test_deploy.py) need outside pip: HAProxy from Debian (issue 20).
# Idempotent; run as root; quiet on success.
set -euo pipefail

command -v haproxy >/dev/null 2>&1 && exit 0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
{ apt-get update -q && apt-get install -y -q haproxy; } >"$log" 2>&1 \
    || { cat "$log" >&2; echo ".ci/install-fleet.sh: apt-get install haproxy failed" >&2; exit 1; }

#!/usr/bin/env bash
# Checks that the tests write nothing into $HOME (issue 12): every test runs imq, npm and the
# server with a temporary HOME / IMQ_CLI_HOME. Usage in .ci/run:
#   marker=$(bash .ci/home-check.sh before)   # right before the tests
#   bash .ci/home-check.sh after "$marker"    # right after them
# `after` lists what changed under $HOME since `before` and fails if anything did, except the
# caches that package clients keep there (npm's and pip's, written by the installs that tests
# of other tools may run): those are listed but do not fail the run.
set -euo pipefail
case "${1:-}" in
before)
    marker=$(mktemp -t imqueue-mcp-home-check.XXXXXX)
    sleep 1  # mtimes have a one-second granularity on some file systems
    echo "$marker"
    ;;
after)
    marker=${2:?usage: home-check.sh after MARKER}
    changed=$(find "$HOME" -xdev -newer "$marker" \( -type f -o -type l \) 2>/dev/null | sort || true)
    rm -f "$marker"
    caches="^$HOME/(\.npm|\.cache/pip|\.cache/node-gyp|\.node-gyp)/"
    unexpected=$(printf '%s\n' "$changed" | grep -Ev "$caches" | grep -v '^$' || true)
    cached=$(printf '%s\n' "$changed" | grep -E "$caches" | grep -c . || true)
    if [ -n "$unexpected" ]; then
        echo ".ci/home-check.sh: the tests wrote into \$HOME ($HOME):" >&2
        printf '%s\n' "$unexpected" | head -50 >&2
        exit 1
    fi
    if [ "$cached" -gt 0 ]; then
        echo ".ci/home-check.sh: \$HOME unchanged apart from $cached file(s) in package caches"
    fi
    ;;
*)
    echo "usage: home-check.sh before | after MARKER" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Installs node_modules with `npm ci` when it is missing or out of date with package-lock.json,
# and always when CI=true (a fresh clone). Otherwise does nothing. "Out of date": the lock file
# changed since this script last installed AND `npm ls` reports missing or invalid packages
# (so a teammate's `npm install X`, which updates both, does not cause a reinstall).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAMP="node_modules/.expbench-lock-sha256"
want="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [[ "${CI:-}" != "true" && -d node_modules ]]; then
  if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]]; then
    echo "npm-deps: node_modules matches package-lock.json"
    exit 0
  fi
  if npm ls --depth=0 >/dev/null 2>&1; then
    echo "$want" > "$STAMP"
    echo "npm-deps: node_modules satisfies package.json (npm ls)"
    exit 0
  fi
fi
echo "npm-deps: npm ci"
npm ci --no-audit --no-fund
echo "$want" > "$STAMP"

#!/usr/bin/env bash
# The proctored human baseline on a fresh Debian 12 machine (root): installs what is missing (as
# start.sh does), builds, then serves the proctored window of a task (docs/proctored.md) and stays
# in the foreground (Ctrl-C stops the window; the session folder and its container are kept).
# Usage: bash scripts/baseline.sh [TASK_ID] [OUT_DIR] [more `expbench baseline serve` options]
#   TASK_ID default sample/toycal/0; OUT_DIR default .cache/baseline/<task id with / as ->.
#   e.g. bash scripts/baseline.sh sample/toycal/0 /tmp/b1 --bind 0.0.0.0:8443
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TASK="${1:-sample/toycal/0}"
OUT="${2:-$ROOT/.cache/baseline/${TASK//\//-}}"
shift $(( $# > 2 ? 2 : $# ))

bash scripts/setup-apt.sh
bash scripts/npm-deps.sh
bash scripts/setup-docker.sh
bash sandbox/build-offline.sh
bash scripts/setup-vscode.sh
npm run build
exec node dist/cli.js baseline serve "$TASK" --out "$OUT" "$@"

#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine (root): installs what is missing, builds and packages
# the extension, installs the .vsix into a persistent code-server (.cache/code-server/), prepares
# the bundled sample task as a session, starts code-server on loopback opened on it, prints the
# local URL and stays in the foreground (Ctrl-C stops it).
# Env: PORT (default 8080), EXPBENCH_START_TASK (default sample/toycal/0),
#      EXPBENCH_START_DIR (session folder, default .cache/start/<task id with / as ->).
# An existing session folder is reused as it is (your work in it is never overwritten).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PORT="${PORT:-8080}"
TASK="${EXPBENCH_START_TASK:-sample/toycal/0}"
SESSION="${EXPBENCH_START_DIR:-$ROOT/.cache/start/${TASK//\//-}}"
STATE="$ROOT/.cache/code-server"
CS_ENTRY="$ROOT/.cache/tools/code-server/node_modules/code-server/out/node/entry.js"

say() { echo "== [start.sh] $*"; }

bash scripts/setup-apt.sh
bash scripts/npm-deps.sh
if [[ -f scripts/setup-docker.sh ]]; then bash scripts/setup-docker.sh; else say "scripts/setup-docker.sh missing: skipped"; fi
if [[ -f sandbox/build-offline.sh ]]; then bash sandbox/build-offline.sh; else say "sandbox/build-offline.sh missing: skipped"; fi
bash scripts/setup-vscode.sh

say "npm run package"
npm run package
VSIX="$ROOT/dist/expbench-workbench.vsix"

mkdir -p "$STATE/extensions" "$STATE/user-data/User" "$STATE/xdg-config" "$STATE/xdg-data"
export XDG_CONFIG_HOME="$STATE/xdg-config" XDG_DATA_HOME="$STATE/xdg-data"
unset PASSWORD HASHED_PASSWORD VSCODE_IPC_HOOK_CLI
say "installing $VSIX into $STATE/extensions"
node "$CS_ENTRY" --user-data-dir "$STATE/user-data" --extensions-dir "$STATE/extensions" --force --install-extension "$VSIX"

# User settings: add ours where the user has not set them (an existing settings.json is kept).
node -e '
  const fs = require("fs");
  const [file, dataset] = process.argv.slice(1);
  let s = {};
  try { s = JSON.parse(fs.readFileSync(file, "utf8")); } catch { if (fs.existsSync(file)) process.exit(0); }
  const ours = {
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "workbench.startupEditor": "none",
  };
  if (fs.existsSync(dataset)) ours["expbench.datasets"] = [dataset];
  fs.writeFileSync(file, JSON.stringify({ ...ours, ...s }, null, 2));
' "$STATE/user-data/User/settings.json" "$(cd "$ROOT/.." && pwd)/shared/data/exp-bench"

FOLDER=""
# The window opens the session's workspace (the solver's side), never the session root: its
# private/ part (manifest, answers, logs, results) stays out of the solver's view.
if [[ -f "$SESSION/workspace/.devcontainer/expbench-session.json" ]]; then
  say "reusing the prepared session $SESSION"
  FOLDER="$SESSION/workspace"
elif [[ -d "$SESSION" && -n "$(ls -A "$SESSION" 2>/dev/null)" ]]; then
  echo "$SESSION exists but is not a prepared session (no workspace/.devcontainer/expbench-session.json)." >&2
  echo "Move it away or set EXPBENCH_START_DIR to another folder; it is left as it is." >&2
  exit 1
elif [[ -f dist/cli.js ]] && node dist/cli.js prepare "$TASK" --out "$SESSION"; then
  FOLDER="$SESSION/workspace"
else
  say "could not prepare $TASK (see above): opening the sample dataset folder instead"
  rm -rf "$SESSION"
  FOLDER="$ROOT/samples/exp-bench"
fi

LOG="$STATE/code-server.log"
say "starting code-server on 127.0.0.1:$PORT (log $LOG)"
env -u PORT node "$CS_ENTRY" --auth none --bind-addr "127.0.0.1:$PORT" \
  --user-data-dir "$STATE/user-data" --extensions-dir "$STATE/extensions" \
  --disable-telemetry --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  "$FOLDER" >"$LOG" 2>&1 &
CS_PID=$!
trap 'kill "$CS_PID" 2>/dev/null; wait "$CS_PID" 2>/dev/null' EXIT
trap 'exit 130' INT TERM

ready=0
for _ in $(seq 1 300); do
  if ! kill -0 "$CS_PID" 2>/dev/null; then
    echo "code-server exited; last lines of $LOG:" >&2; tail -20 "$LOG" >&2; exit 1
  fi
  if node -e 'require("http").get(process.argv[1], (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on("error", () => process.exit(1))' \
      "http://127.0.0.1:$PORT/healthz"; then
    ready=1; break
  fi
  sleep 0.2
done
(( ready )) || { echo "code-server did not answer on 127.0.0.1:$PORT; see $LOG" >&2; exit 1; }

URL="http://127.0.0.1:$PORT/?folder=$(node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "$FOLDER")"
echo
echo "EXP-Bench Workbench is running in VS Code (code-server) at:"
echo "  $URL"
echo "(opened on $FOLDER; Ctrl-C stops it)"
wait "$CS_PID"

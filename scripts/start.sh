#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine (root): installs what is missing, builds and packages
# the extension, installs the .vsix into a persistent code-server (.cache/code-server/), prepares
# the bundled sample task as a session, starts code-server on loopback opened on it, prints the
# local URL and stays in the foreground (Ctrl-C stops it).
# What does not wait for something else runs at the same time (logs in .cache/start/logs/):
#   apt's build packages | the project's npm packages | code-server's npm downloads
#   then: code-server's native builds | apt's Docker + debootstrap, then the sandbox image (and
#   meanwhile apt's Chromium, which only the tests use) | npm run package
# The URL is printed once code-server answers; the sandbox image (needed only when the session runs
# something in its container) may still be building then: start.sh says when it is done.
# Workspace Trust stays on: the session opens through its session window file (docs/trust.md), in
# Restricted Mode until you trust it; an old "security.workspace.trust.enabled": false is replaced.
# Env: PORT (default 8080), EXPBENCH_START_TASK (default sample/toycal/0),
#      EXPBENCH_START_DIR (session folder, default .cache/start/<task id with / as ->),
#      CODE_SERVER_DIR (code-server's install, default .cache/tools/code-server),
#      EXPBENCH_IMAGE, EXPBENCH_BASE_REPO (the sandbox image's names, sandbox/build-offline.sh).
# An existing session folder is reused as it is (your work in it is never overwritten).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PORT="${PORT:-8080}"
TASK="${EXPBENCH_START_TASK:-sample/toycal/0}"
SESSION="${EXPBENCH_START_DIR:-$ROOT/.cache/start/${TASK//\//-}}"
STATE="$ROOT/.cache/code-server"
export CODE_SERVER_DIR="${CODE_SERVER_DIR:-$ROOT/.cache/tools/code-server}"
CS_ENTRY="$CODE_SERVER_DIR/node_modules/code-server/out/node/entry.js"
LOGS="$ROOT/.cache/start/logs"
START=$SECONDS

say() { echo "== [start.sh $((SECONDS - START))s] $*"; }

# Background steps: `run NAME CMD…` starts CMD with its output in $LOGS/NAME.log; `await NAME`
# waits for it and, when it failed, prints the end of its log and stops.
mkdir -p "$LOGS"
declare -A PIDS=()
run() {
  local name=$1; shift
  say "$name: started (log .cache/start/logs/$name.log)"
  ("$@") >"$LOGS/$name.log" 2>&1 &
  PIDS[$name]=$!
}
await() {
  local name=$1
  if wait "${PIDS[$name]}"; then say "$name: done"; return 0; fi
  echo "== [start.sh] $name failed; the end of $LOGS/$name.log:" >&2
  tail -n 30 "$LOGS/$name.log" >&2
  exit 1
}
image() {
  bash scripts/setup-apt.sh image
  # Chromium (the e2e tier's browser) is installed while the image builds; nothing here waits for it.
  bash scripts/setup-apt.sh browser >"$LOGS/apt-browser.log" 2>&1 &
  local browser=$!
  if [[ -f scripts/setup-docker.sh ]]; then bash scripts/setup-docker.sh; else echo "scripts/setup-docker.sh missing: skipped"; fi
  if [[ -f sandbox/build-offline.sh ]]; then bash sandbox/build-offline.sh; else echo "sandbox/build-offline.sh missing: skipped"; fi
  wait "$browser" || echo "apt's browser group failed (see .cache/start/logs/apt-browser.log): the window works; the e2e tier needs Chromium"
}
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

# 1. what needs only the network: Debian's build packages (the small group), and the npm registry
run apt bash scripts/setup-apt.sh build
run npm bash scripts/npm-deps.sh
run code-server-download bash scripts/setup-vscode.sh --download-only
await apt
# 2. what needs the build packages: code-server's native builds; then apt's other groups, Docker
#    and the image (debootstrap), which the URL does not wait for
run image image
await code-server-download
run code-server bash scripts/setup-vscode.sh
await npm
say "npm run package"
npm run package >"$LOGS/package.log" 2>&1 || { tail -n 30 "$LOGS/package.log" >&2; exit 1; }
VSIX="$ROOT/dist/expbench-workbench.vsix"
await code-server

mkdir -p "$STATE/extensions" "$STATE/user-data/User" "$STATE/xdg-config" "$STATE/xdg-data"
export XDG_CONFIG_HOME="$STATE/xdg-config" XDG_DATA_HOME="$STATE/xdg-data"
unset PASSWORD HASHED_PASSWORD VSCODE_IPC_HOOK_CLI
say "installing $VSIX into $STATE/extensions"
node "$CS_ENTRY" --user-data-dir "$STATE/user-data" --extensions-dir "$STATE/extensions" --force --install-extension "$VSIX" >"$LOGS/install-extension.log" 2>&1 \
  || { tail -n 30 "$LOGS/install-extension.log" >&2; exit 1; }

# User settings: ours where the user has not set them, Workspace Trust kept on (scripts/start-settings.cjs says what it replaced).
# The folder of start.sh's session is the window's sessions folder (expbench.sessionsDir, a user
# setting), so the Tasks, Results and Trajectories views list that session.
mkdir -p "$(dirname "$SESSION")"
node scripts/start-settings.cjs "$STATE/user-data/User/settings.json" "$(cd "$ROOT/.." && pwd)/shared/data/exp-bench" "${EXPBENCH_IMAGE:-}" "$(cd "$(dirname "$SESSION")" && pwd)"

OPEN=(folder "$ROOT/samples/exp-bench")
# The window opens the session's workspace (the solver's side), never the session root: its
# private/ part (manifest, answers, logs, results) stays out of the solver's view. It opens it
# through the session's window file, so that no trusted parent folder makes it trusted.
if [[ -f "$SESSION/workspace/.devcontainer/expbench-session.json" ]]; then
  say "reusing the prepared session $SESSION"
elif [[ -d "$SESSION" && -n "$(ls -A "$SESSION" 2>/dev/null)" ]]; then
  echo "$SESSION exists but is not a prepared session (no workspace/.devcontainer/expbench-session.json)." >&2
  echo "Move it away or set EXPBENCH_START_DIR to another folder; it is left as it is." >&2
  exit 1
elif ! node dist/cli.js prepare "$TASK" --out "$SESSION"; then
  say "could not prepare $TASK (see above): opening the sample dataset folder instead"
  rm -rf "$SESSION"
fi
if [[ -f "$SESSION/workspace/.devcontainer/expbench-session.json" ]]; then
  OPEN=(workspace "$(node dist/cli.js session window-file "$SESSION")")
fi

LOG="$STATE/code-server.log"
say "starting code-server on 127.0.0.1:$PORT (log $LOG)"
env -u PORT node "$CS_ENTRY" --auth none --bind-addr "127.0.0.1:$PORT" \
  --user-data-dir "$STATE/user-data" --extensions-dir "$STATE/extensions" \
  --disable-telemetry --disable-update-check --disable-getting-started-override \
  "${OPEN[1]}" >"$LOG" 2>&1 &
CS_PID=$!
# On exit (Ctrl-C included) the session's work container is stopped, never removed (its files are
# kept; the next run or terminal starts it again): scripts/stop-work-container.sh.
trap 'kill "$CS_PID" $(jobs -p) 2>/dev/null; wait "$CS_PID" 2>/dev/null; bash scripts/stop-work-container.sh "$SESSION" || true' EXIT
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

URL="http://127.0.0.1:$PORT/?${OPEN[0]}=$(node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "${OPEN[1]}")"
echo
echo "EXP-Bench Workbench is running in VS Code (code-server) at:"
echo "  $URL"
echo "(opened on ${OPEN[1]}, after $((SECONDS - START)) s; Ctrl-C stops it and the session's work container, whose files are kept)"
if [[ ${OPEN[0]} == workspace ]]; then
  # the session's window refuses the curator's desk (it shows ground truth): a window on the sample dataset folder opens it
  echo "The curator's desk (\"EXP-Bench: Show Curation Queue (Curator)\") opens in another window, e.g.:"
  echo "  http://127.0.0.1:$PORT/?folder=$(node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "$ROOT/samples/exp-bench")"
fi
# The sandbox image is needed only once the session runs something in its container (a run of
# reproduce_exp_bench.sh, the container terminal): on a fresh machine it is still being built
# when the window opens (debootstrap of a Debian root file system), and start.sh says when it is.
if [[ -n "${PIDS[image]:-}" ]] && kill -0 "${PIDS[image]}" 2>/dev/null; then
  say "the sandbox image is still being built (log .cache/start/logs/image.log); the task container can start once it is done"
fi
if wait "${PIDS[image]}"; then
  say "image: done: the task container can start"
else
  echo "== [start.sh] the sandbox image could not be built: the window works, its task container does not; the end of $LOGS/image.log:" >&2
  tail -n 30 "$LOGS/image.log" >&2
fi
wait "$CS_PID"

#!/usr/bin/env bash
# Installs code-server 4.100.3 (VS Code 1.100.3) offline-style into .cache/tools/code-server.
# Recipe and reasons: ../shared/docs/offline-vscode.md (npm registry only; no download from GitHub
# or Microsoft: install scripts are skipped and native modules rebuilt against Debian's packages).
# Idempotent: a marker file written last records a complete install; with it present nothing runs.
# Needs: node 20, npm, g++/make/python3, libkrb5-dev, ripgrep (scripts/setup-apt.sh).
# Prints the path of the entry script's folder on success. Env: CODE_SERVER_DIR overrides the folder.
# --download-only: only the npm downloads (no Debian package needed), into the staging folder, kept
# for the next run, which then only builds (scripts/start.sh runs the downloads while apt installs).
set -euo pipefail
DOWNLOAD_ONLY=0
for arg in "$@"; do
  case "$arg" in
    --download-only) DOWNLOAD_ONLY=1 ;;
    *) echo "setup-vscode: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

VERSION="4.100.3"
# Bump RECIPE when the steps below change, so existing installs are redone.
RECIPE="2"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${CODE_SERVER_DIR:-$ROOT/.cache/tools/code-server}"
MARKER="$DEST/.complete-$VERSION-r$RECIPE"
ENTRY="$DEST/node_modules/code-server/out/node/entry.js"

if [[ -f "$MARKER" && -f "$ENTRY" ]]; then
  echo "setup-vscode: code-server $VERSION already installed in $DEST"
  exit 0
fi

start=$SECONDS
# Build in a staging folder, then move into place: an interrupted run never leaves a half install
# that looks complete. The downloads are marked done in the staging folder (a later run reuses them).
STAGE="$DEST.partial"
DOWNLOADED="$STAGE/.downloaded-$VERSION-r$RECIPE"
VSCODE="$STAGE/node_modules/code-server/lib/vscode"
step() { echo "setup-vscode: [$((SECONDS - start))s] $*"; }

if [[ -f "$DOWNLOADED" ]]; then
  step "reusing the downloads in $STAGE"
else
  rm -rf "$STAGE"
  mkdir -p "$STAGE"
  cd "$STAGE"
  printf '{"name":"expbench-code-server-tool","private":true}\n' > package.json
  step "npm install --ignore-scripts code-server@$VERSION"
  npm install --no-audit --no-fund --ignore-scripts --loglevel=error "code-server@$VERSION"
  cd "$VSCODE"
  # The two installs are independent (extensions/ has its own package.json): they run at once.
  step "lib/vscode and lib/vscode/extensions: npm install --omit=dev --ignore-scripts (at the same time)"
  (cd extensions && npm install --no-audit --no-fund --omit=dev --ignore-scripts --loglevel=error) &
  ext=$!
  npm install --no-audit --no-fund --omit=dev --ignore-scripts --loglevel=error
  wait "$ext" || { echo "setup-vscode: npm install in lib/vscode/extensions failed" >&2; exit 1; }
  touch "$DOWNLOADED"
fi
if (( DOWNLOAD_ONLY )); then
  step "downloads done in $STAGE (--download-only)"
  exit 0
fi

RG="$(command -v rg || true)"
[[ -n "$RG" ]] || { echo "setup-vscode: ripgrep (rg) not found; run scripts/setup-apt.sh" >&2; exit 1; }
cd "$VSCODE"
step "lib/vscode: ripgrep from Debian ($RG)"
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$RG" node_modules/@vscode/ripgrep/bin/rg

# The native builds: code-server's own argon2 at the same time as lib/vscode's modules, each
# node-gyp build with as many compile jobs as there are cores (JOBS=max).
export JOBS=max
step "npm rebuild argon2 | lib/vscode: npm rebuild kerberos node-pty @parcel/watcher @vscode/spdlog native-watchdog @vscode/deviceid"
(cd "$STAGE" && npm rebuild --loglevel=error argon2) &
argon=$!
# node-pty's post-install runs `npx node-gyp configure`: let npx fetch node-gyp from the npm registry.
npm_config_yes=true npm rebuild --loglevel=error kerberos node-pty @parcel/watcher @vscode/spdlog native-watchdog @vscode/deviceid
ln -sfn node_modules node_modules.asar
wait "$argon" || { echo "setup-vscode: npm rebuild argon2 failed" >&2; exit 1; }

cd "$STAGE"

step "check: code-server --version"
XDG_CONFIG_HOME="$STAGE/.xdg-config" node "$STAGE/node_modules/code-server/out/node/entry.js" --version
rm -rf "$STAGE/.xdg-config"

cd "$ROOT"
rm -f "$DOWNLOADED"
rm -rf "$DEST"
mv "$STAGE" "$DEST"
date -u +%FT%TZ > "$MARKER"
step "code-server $VERSION installed in $DEST ($((SECONDS - start)) s)"

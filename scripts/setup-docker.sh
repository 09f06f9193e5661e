#!/usr/bin/env bash
# Makes a Docker engine answer on this machine, idempotently (see ../../shared/docs/docker-offline.md):
#   - when `docker info` already answers: prints the engine version and stops (a running engine is
#     never restarted or killed);
#   - when dockerd is missing: installs Debian's docker.io (engine, containerd, runc) with apt-get;
#   - starts `dockerd --iptables=false` in the background, logging to .cache/dockerd.log, and waits
#     (at most DOCKERD_WAIT_S seconds, default 60) until `docker info` answers.
# Needs root (apt-get, dockerd). Exit status 0 only when an engine answers at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOG="${DOCKERD_LOG:-$ROOT/.cache/dockerd.log}"
WAIT_S="${DOCKERD_WAIT_S:-60}"

say() { echo "[setup-docker] $*"; }
die() { echo "[setup-docker] error: $*" >&2; exit 1; }
engine_version() { docker version --format '{{.Server.Version}}' 2>/dev/null; }
answers() { docker info >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && answers; then
  say "engine already running: Docker $(engine_version)"
  exit 0
fi

as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else die "needs root to run: $*"; fi; }

if ! command -v dockerd >/dev/null 2>&1; then
  say "dockerd not found; installing Debian's docker.io"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
command -v dockerd >/dev/null 2>&1 || die "dockerd still missing after installing docker.io"
command -v docker >/dev/null 2>&1 || die "the docker client is missing (package docker.io or docker-cli)"

# A dockerd may be starting already (for example from a previous run of this script).
if ! pgrep -x dockerd >/dev/null 2>&1; then
  mkdir -p "$(dirname "$LOG")"
  say "starting dockerd --iptables=false (log: $LOG)"
  # setsid + nohup: the engine outlives this script and its terminal.
  as_root setsid nohup dockerd --iptables=false >>"$LOG" 2>&1 < /dev/null &
else
  say "a dockerd process exists; waiting for it to answer"
fi

for ((i = 0; i < WAIT_S * 2; i++)); do
  if answers; then
    say "engine running: Docker $(engine_version)"
    exit 0
  fi
  sleep 0.5
done
tail -n 20 "$LOG" >&2 2>/dev/null || true
die "no answer from the engine after ${WAIT_S}s (see $LOG)"

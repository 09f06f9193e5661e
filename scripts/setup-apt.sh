#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs on a fresh machine (run as root).
# Idempotent: when every package is already installed, apt-get is not called at all.
#   chromium          headless browser for the e2e tier (driven by playwright-core)
#   libkrb5-dev       headers for code-server's `kerberos` native module
#   ripgrep           `rg` for VS Code search (code-server's postinstall would download it)
#   docker.io         Docker engine for sandboxes and verification (started by setup-docker.sh)
#   debootstrap       offline base image for sandbox/build-offline.sh
#   git, build-essential, python3, pkg-config  real git and node-gyp rebuilds
#   acl               setfacl: default ACLs so folders the researcher-mode editor (root) creates stay writable by the container user
# Groups (arguments; none = all), so that scripts/start.sh starts what waits on each as soon as it is in:
#   build    what code-server's native builds and the project's git need (small: first)
#   image    the Docker engine and debootstrap (the sandbox image)
#   browser  Chromium (only the e2e tier and screenshots need it: nothing in start.sh waits on it)
# Two runs at once queue on dpkg's lock (apt-get waits for it) instead of failing.
set -euo pipefail

declare -A GROUP=(
  [build]="git build-essential python3 pkg-config libkrb5-dev ripgrep ca-certificates acl"
  [image]="docker.io debootstrap iproute2 iptables xz-utils"
  [browser]="chromium"
)
groups=("$@")
[[ ${#groups[@]} -gt 0 ]] || groups=(build image browser)
PACKAGES=()
for g in "${groups[@]}"; do
  [[ -n "${GROUP[$g]:-}" ]] || { echo "setup-apt: unknown group: $g (build, image, browser)" >&2; exit 2; }
  read -r -a more <<<"${GROUP[$g]}"
  PACKAGES+=("${more[@]}")
done

missing=()
for p in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup-apt: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup-apt: installing ${missing[*]}"
SUDO=""
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup-apt: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
LOCK=(-o DPkg::Lock::Timeout=900)
# One `apt-get update` per boot of the package lists: a later group reuses lists younger than an hour.
lists=/var/lib/apt/lists
if [[ -z "$(find "$lists" -maxdepth 1 -name '*Packages*' -mmin -60 -print -quit 2>/dev/null)" ]]; then
  $SUDO apt-get "${LOCK[@]}" update -q
fi
$SUDO apt-get "${LOCK[@]}" install -y -q --no-install-recommends "${missing[@]}"
echo "setup-apt: done"

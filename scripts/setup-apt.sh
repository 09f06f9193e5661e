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
set -euo pipefail

PACKAGES=(chromium libkrb5-dev ripgrep docker.io debootstrap git build-essential python3 pkg-config ca-certificates iproute2 iptables xz-utils acl)

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
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup-apt: done"

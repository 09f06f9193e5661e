#!/usr/bin/env bash
# Builds the EXP-Bench sandbox image (contract v1, see sandbox/README.md) with no image registry:
#   1. debootstrap a Debian root file system with the packages of sandbox/packages.txt, from the
#      mirror that apt on this machine is configured with (read from /etc/apt/sources.list.d/*);
#   2. `docker import` it as expbench/sandbox-base:<key>;
#   3. `docker build` sandbox/Dockerfile.offline FROM that image (user solver, /workspace, labels).
# Result: expbench/sandbox:1 (override with EXPBENCH_IMAGE). Skips when that image already carries
# the label expbench.contract=1 (use --force to rebuild the last step, --rebuild-rootfs to start over).
# The root file system tarball is cached under .cache/sandbox/ (keyed by packages, suite and mirror)
# and reused when present; a missing or unreadable cache is rebuilt, never required.
# Needs: root (debootstrap), a running Docker engine, Debian packages reachable.
# Environment: EXPBENCH_IMAGE (tag), EXPBENCH_BASE_REPO (the base image's name, default
# expbench/sandbox-base: another one builds from scratch, e.g. to time a fresh machine beside the
# usual images), EXPBENCH_MIRROR (mirror URI, instead of apt's), EXPBENCH_SUITE.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
IMAGE="${EXPBENCH_IMAGE:-expbench/sandbox:1}"
CONTRACT=1
CACHE="$ROOT/.cache/sandbox"
FORCE=0
REBUILD_ROOTFS=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    --rebuild-rootfs) FORCE=1; REBUILD_ROOTFS=1 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "build-offline.sh: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

say() { echo "[sandbox] $*"; }
die() { echo "[sandbox] error: $*" >&2; exit 1; }

docker info >/dev/null 2>&1 || die "no Docker engine answers; start one with: bash scripts/setup-docker.sh"

label_of() { docker image inspect --format "{{ index .Config.Labels \"expbench.contract\" }}" "$1" 2>/dev/null || true; }
if [[ $FORCE -eq 0 && "$(label_of "$IMAGE")" == "$CONTRACT" ]]; then
  say "$IMAGE already present with expbench.contract=$CONTRACT; nothing to do (--force rebuilds)"
  docker image inspect --format '[sandbox] image {{.Id}} size {{.Size}} bytes' "$IMAGE"
  exit 0
fi

# --- suite and mirror -----------------------------------------------------------------------------
SUITE="${EXPBENCH_SUITE:-}"
if [[ -z "$SUITE" && -r /etc/os-release ]]; then SUITE="$(. /etc/os-release; echo "${VERSION_CODENAME:-}")"; fi
SUITE="${SUITE:-bookworm}"

# Prints the URI of the first `deb` source that serves $SUITE, from deb822 (*.sources) and
# one-line (*.list, sources.list) files, the same files apt reads.
apt_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -r "$f" ]] || continue
    awk -v suite="$SUITE" '
      function flush() { if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && uri != "") { print uri; found = 1; exit } types = ""; suites = ""; uri = "" }
      /^[[:space:]]*$/ { flush(); next }
      /^[[:space:]]*#/ { next }
      tolower($1) == "types:" { $1 = ""; types = $0 }
      tolower($1) == "suites:" { $1 = ""; suites = $0 }
      tolower($1) == "uris:" { uri = $2 }
      END { if (!found) flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -r "$f" ]] || continue
    awk -v suite="$SUITE" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ } if ($(i + 1) == suite) { print $i; exit } }' "$f"
  done
}
MIRROR="${EXPBENCH_MIRROR:-$(apt_mirror | head -n 1)}"
[[ -n "$MIRROR" ]] || die "no apt source for suite '$SUITE' in /etc/apt/sources.list.d/ or /etc/apt/sources.list; set EXPBENCH_MIRROR=<Debian mirror URI>"

PACKAGES="$(grep -v '^[[:space:]]*#' "$HERE/packages.txt" | tr -s ' \t\n' '\n' | grep . | sort -u | paste -sd, -)"
KEY="$(printf '%s\n%s\n%s\nv1\n' "$SUITE" "$MIRROR" "$PACKAGES" | sha256sum | cut -c1-12)"
BASE="${EXPBENCH_BASE_REPO:-expbench/sandbox-base}:$KEY"
TARBALL="$CACHE/rootfs-$SUITE-$KEY.tar"
say "suite $SUITE, mirror $MIRROR, key $KEY"

# --- base image (debootstrap + import) -----------------------------------------------------------
import_tarball() { say "docker import $TARBALL -> $BASE"; docker import --message "expbench rootfs $KEY" "$TARBALL" "$BASE" >/dev/null; }

if [[ $REBUILD_ROOTFS -eq 1 ]]; then
  docker image rm "$BASE" >/dev/null 2>&1 || true
  rm -f "$TARBALL"
fi
if docker image inspect "$BASE" >/dev/null 2>&1; then
  say "base image $BASE present"
else
  if [[ -s "$TARBALL" ]] && import_tarball; then
    say "imported the cached root file system"
  else
    rm -f "$TARBALL"
    [[ $(id -u) -eq 0 ]] || die "debootstrap needs root (run as root or with sudo)"
    if ! command -v debootstrap >/dev/null 2>&1; then
      say "installing debootstrap"
      DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap >/dev/null
    fi
    mkdir -p "$CACHE"
    WORK="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
    trap 'rm -rf "$WORK" "$TARBALL.part"' EXIT
    say "debootstrap --variant=minbase $SUITE ($(tr ',' '\n' <<<"$PACKAGES" | wc -l) packages); this takes a few minutes"
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$WORK/rootfs" "$MIRROR" 2>&1 \
      | grep --line-buffered -E '^(I: (Retrieving|Validating|Installing|Configuring|Base system|Extracting) |E: |W: )' \
      | awk '/^I: (Retrieving|Validating|Extracting|Installing|Configuring) / { n[$2]++; if (n[$2] % 50 != 1) next } { print "[debootstrap] " $0; fflush() }'
    [[ ${PIPESTATUS[0]} -eq 0 ]] || die "debootstrap failed (mirror $MIRROR); see the lines above"
    rm -rf "$WORK/rootfs/var/cache/apt/archives/"*.deb "$WORK/rootfs/var/lib/apt/lists/"* "$WORK/rootfs/tmp/"*
    say "packing the root file system"
    tar --numeric-owner -C "$WORK/rootfs" -cf "$TARBALL.part" .
    mv "$TARBALL.part" "$TARBALL"
    rm -rf "$WORK"
    import_tarball
  fi
fi

# --- contract layer -------------------------------------------------------------------------------
say "docker build $IMAGE FROM $BASE"
DOCKER_BUILDKIT=0 docker build --quiet=false \
  --build-arg "BASE_IMAGE=$BASE" \
  --label "expbench.base=$BASE" \
  -f "$HERE/Dockerfile.offline" -t "$IMAGE" "$HERE" 2>&1 \
  | grep --line-buffered -v -E '^(DEPRECATED|            |Install the buildx)' | sed -u 's/^/[docker build] /'
[[ ${PIPESTATUS[0]} -eq 0 ]] || die "docker build of $IMAGE failed; see the lines above"
[[ "$(label_of "$IMAGE")" == "$CONTRACT" ]] || die "$IMAGE lacks the label expbench.contract=$CONTRACT"
docker image inspect --format '[sandbox] built {{.Id}} size {{.Size}} bytes' "$IMAGE"

#!/usr/bin/env bash
# Builds a paper's environment image (docs/curation.md, "Curation file": environment.debianPackages)
# on top of the sandbox image, with Debian's packages and no image registry:
#   FROM <base> (default expbench/sandbox:1, built by build-offline.sh), as root:
#   apt-get update && apt-get install --no-install-recommends <packages>; the lists are removed.
# The build runs with the host's network (`docker build --network host`) so apt reaches the mirror
# that the base's /etc/apt/sources.list names (debootstrap wrote it from this machine's apt sources);
# the containers made from the image still run with the network the verifier gives them (none).
# Cached: skips when <tag> exists and carries the same base image id and package list (labels
# expbench.env.base, expbench.env.packages); --force rebuilds.
# Usage: build-env.sh --tag TAG [--from BASE] [--force] PACKAGE...
#   e.g. build-env.sh --tag expbench/env-iclr2024-18439:1 python3-deprecation jupyter-nbconvert python3-ipykernel
# Needs: a running Docker engine, the base image, Debian packages reachable.
set -euo pipefail

TAG=""
FROM="expbench/sandbox:1"
FORCE=0
PACKAGES=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tag) TAG="${2:?--tag needs a value}"; shift 2 ;;
    --from) FROM="${2:?--from needs a value}"; shift 2 ;;
    --force) FORCE=1; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "build-env.sh: unknown option: $1" >&2; exit 2 ;;
    *) PACKAGES+=("$1"); shift ;;
  esac
done
say() { echo "[env] $*"; }
die() { echo "[env] error: $*" >&2; exit 1; }
[[ -n "$TAG" ]] || die "--tag is required"
[[ ${#PACKAGES[@]} -gt 0 ]] || die "no Debian package named"
for p in "${PACKAGES[@]}"; do [[ "$p" =~ ^[a-z0-9][a-z0-9+.-]+$ ]] || die "not a Debian package name: $p"; done

docker info >/dev/null 2>&1 || die "no Docker engine answers; start one with: bash scripts/setup-docker.sh"
BASE_ID="$(docker image inspect --format '{{.Id}}' "$FROM" 2>/dev/null)" || die "base image $FROM is missing; build it with: bash sandbox/build-offline.sh"
LIST="$(printf '%s\n' "${PACKAGES[@]}" | sort -u | paste -sd' ' -)"

label() { docker image inspect --format "{{ index .Config.Labels \"$2\" }}" "$1" 2>/dev/null || true; }
if [[ $FORCE -eq 0 && "$(label "$TAG" expbench.env.base)" == "$BASE_ID" && "$(label "$TAG" expbench.env.packages)" == "$LIST" ]]; then
  say "$TAG already present (FROM $FROM, packages: $LIST); nothing to do (--force rebuilds)"
  exit 0
fi

say "docker build $TAG FROM $FROM with: $LIST"
DOCKER_BUILDKIT=0 docker build --network host --quiet=false -t "$TAG" \
  --label "expbench.env.base=$BASE_ID" --label "expbench.env.packages=$LIST" - 2>&1 <<EOF | grep --line-buffered -v -E '^(DEPRECATED|            |Install the buildx)' | sed -u 's/^/[docker build] /'
FROM $FROM
USER root
RUN apt-get update -q \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $LIST \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
USER solver
WORKDIR /workspace
EOF
[[ ${PIPESTATUS[0]} -eq 0 ]] || die "docker build of $TAG failed; see the lines above"
docker image inspect --format '[env] built {{.Id}} size {{.Size}} bytes' "$TAG"

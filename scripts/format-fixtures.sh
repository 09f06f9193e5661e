#!/usr/bin/env bash
# Extracts each trajectory format's own test data from local bare clones of its repository into
# one folder per format, for test/unit/trajectory.fixtures.unit.test.ts
# (EXPBENCH_FORMAT_FIXTURES=<out>). Nothing extracted is committed: the folder is the caller's.
#
#   bash scripts/format-fixtures.sh MIRRORS OUT
#
# MIRRORS holds bare clones named <owner>+<name>/repo (or <owner>+<name>.git); a repository that
# is absent is reported and skipped. The files taken, per repository (paths at its HEAD):
#   UKGovernmentBEIS/inspect_ai   tests/**/*.eval, tests/{log,analysis,scorer}/**/*.json logs  → inspect/
#   meridianlabs-ai/ts-mono       apps/inspect/src/log_data/chunked/fixtures/logs/**           → inspect-chunked/
#   All-Hands-AI/OpenHands        tests/runtime/trajs/*.json, evaluation/**/examples/*.json*,
#                                 tests/unit/resolver/mock_output/output.jsonl                  → openhands/
#   OpenHands/software-agent-sdk  tests/**/fixtures/**/*.jsonl                                  → openhands-v1/
#   SWE-agent/SWE-agent           **/*.traj                                                     → swe/
#   SWE-agent/mini-swe-agent      tests/test_data/*.traj.json                                   → mini/
#   meridianlabs-ai/inspect_scout tests/sources/atif_source/fixtures/*.json                     → atif/
set -euo pipefail
MIRRORS=${1:?usage: format-fixtures.sh MIRRORS OUT}
OUT=${2:?usage: format-fixtures.sh MIRRORS OUT}
mkdir -p "$OUT"

gitdir() {
  local name=${1/\//+}
  for d in "$MIRRORS/$name/repo" "$MIRRORS/$name.git" "$MIRRORS/$name"; do
    if [ -d "$d" ] && git --git-dir="$d" rev-parse --verify -q HEAD >/dev/null; then echo "$d"; return 0; fi
  done
  return 1
}

# take REPO SUBFOLDER EXTENDED-REGEX: every file at HEAD whose path matches
take() {
  local repo=$1 sub=$2 re=$3 d n=0
  if ! d=$(gitdir "$repo"); then echo "format-fixtures: $repo: no clone under $MIRRORS, skipped" >&2; return 0; fi
  mkdir -p "$OUT/$sub"
  while IFS= read -r f; do
    # a snapshot may list a large file whose content it does not hold: said, and skipped
    if git --git-dir="$d" show "HEAD:$f" > "$OUT/$sub/$(echo "$f" | tr '/' '_')" 2>/dev/null; then n=$((n + 1));
    else rm -f "$OUT/$sub/$(echo "$f" | tr '/' '_')"; echo "format-fixtures: $repo: $f is listed but its content is absent from the clone, skipped" >&2; fi
  done < <(git --git-dir="$d" ls-tree -r --name-only HEAD | grep -E "$re" || true)
  echo "format-fixtures: $repo @ $(git --git-dir="$d" rev-parse --short HEAD): $n file(s) → $sub/"
}

take UKGovernmentBEIS/inspect_ai inspect '^tests/.*\.eval$|^tests/(log/test_eval_log|log/test_list_logs|analysis/test_logs)/.*\.json$'
take meridianlabs-ai/ts-mono inspect-chunked '^apps/inspect/src/log_data/chunked/fixtures/logs/.*\.eval$'
take All-Hands-AI/OpenHands openhands '^tests/runtime/trajs/.*\.json$|^evaluation/benchmarks/.*/examples/.*\.jsonl?$|^tests/unit/resolver/mock_output/output\.jsonl$'
take OpenHands/software-agent-sdk openhands-v1 '^tests/.*/fixtures/.*\.jsonl$'
take SWE-agent/SWE-agent swe '\.traj$'
take SWE-agent/mini-swe-agent mini '^tests/test_data/.*\.traj\.json$'
take meridianlabs-ai/inspect_scout atif '^tests/sources/atif_source/fixtures/.*\.json$'

#!/usr/bin/env bash
# Runs ALL tests on a fresh Debian 12 machine (root), from any state: installs what is missing,
# builds, then lint, typecheck and the three mocha tiers:
#   unit    plain Node (real git, real Docker, real Slurm) test/unit/**/*.unit.test.ts
#   vscode  inside code-server's real extension host    test/vscode/**/*.vscode.test.ts
#           (vscode-session: again, the window opened on a prepared session, for the tests that need one)
#   e2e     headless Chromium on the real workbench UI  test/e2e/**/*.e2e.test.ts
# Every step runs even when an earlier check or tier failed (setup failures stop the run).
# Each tier writes test-results/<tier>-summary.json (test/harness/summary-reporter.ts); the last
# line printed is "N passed, N failed, N skipped" summed over the tiers, where a failed check
# (lint, typecheck) or a tier that reported no summary counts as one failure. Exit 0 only when
# every step passed. Logs and screenshots: test-results/.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
START=$SECONDS
FAILED_STEPS=()
EXTRA_FAILURES=0   # failures not counted by mocha: setup, lint, typecheck, a tier that did not report
TIERS=(unit vscode vscode-session e2e)

say() { echo "== [test.sh $(( SECONDS - START ))s] $*"; }

# Prints per-tier counts and the closing "N passed, N failed, N skipped" line; exits.
finish() {
  local extra=$EXTRA_FAILURES
  node -e '
    const fs = require("fs");
    const [extra, ...tiers] = process.argv.slice(1);
    let passed = 0, failed = Number(extra), skipped = 0;
    for (const t of tiers) {
      const f = `test-results/${t}-summary.json`;
      if (!fs.existsSync(f)) { console.log(`   ${t} tier: no summary (did not run to the end)`); continue; }
      const s = JSON.parse(fs.readFileSync(f, "utf8"));
      console.log(`   ${t} tier: passes ${s.passes}, failures ${s.failures}, pending ${s.pending}`);
      passed += s.passes; failed += s.failures; skipped += s.pending;
    }
    console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  ' "$extra" "${TIERS[@]}"
  if (( ${#FAILED_STEPS[@]} > 0 )); then
    say "FAILED (${SECONDS}s): ${FAILED_STEPS[*]}"
    exit 1
  fi
  say "all steps passed ($(( SECONDS - START ))s)"
  exit 0
}

# Setup and build: a failure here stops the run (nothing after it could run meaningfully).
setup() {
  say "$*"
  if ! "$@"; then
    FAILED_STEPS+=("setup: $*")
    EXTRA_FAILURES=$(( EXTRA_FAILURES + 1 ))
    finish
  fi
}

# Checks and tiers: a failure is recorded and the run goes on.
check() {
  local name=$1; shift
  say "$name: $*"
  local t0=$SECONDS
  if "$@"; then say "$name: ok ($(( SECONDS - t0 ))s)"; return 0; fi
  FAILED_STEPS+=("$name")
  say "$name: FAILED ($(( SECONDS - t0 ))s)"
  return 1
}

# A mocha tier: its failures are counted from its summary; a failed run whose summary shows no
# failed test (crash, timeout, no test ran, no summary) counts as one more failure.
tier() {
  local name=$1; shift
  check "$name" "$@" && [[ -f "test-results/$name-summary.json" ]] && return 0
  if [[ ! -f "test-results/$name-summary.json" ]] || \
     node -e 'process.exit(require(process.argv[1]).failures > 0 ? 1 : 0)' "$ROOT/test-results/$name-summary.json"; then
    [[ " ${FAILED_STEPS[*]} " == *" $name "* ]] || FAILED_STEPS+=("$name")
    EXTRA_FAILURES=$(( EXTRA_FAILURES + 1 ))
    say "$name: did not report its failures (see test-results/$name/ and the log above)"
  fi
}

mkdir -p test-results
for t in "${TIERS[@]}"; do rm -f "test-results/$t-summary.json"; done

setup bash scripts/setup-apt.sh
setup bash scripts/npm-deps.sh
if [[ -f scripts/setup-docker.sh ]]; then setup bash scripts/setup-docker.sh; else say "scripts/setup-docker.sh missing: skipped"; fi
if [[ -f sandbox/build-offline.sh ]]; then setup bash sandbox/build-offline.sh; else say "sandbox/build-offline.sh missing: skipped"; fi
# A one-node Slurm with accounting for the Slurm placement's tests (unit tier). Status 3: Slurm cannot
# run on this machine at all (the reason is printed; the Slurm tests skip with it); any other failure stops.
setup_slurm() {
  bash scripts/setup-slurm.sh; local rc=$?
  (( rc == 3 )) && { say "setup-slurm: Slurm cannot run here (above): the Slurm tests skip, saying why"; return 0; }
  return "$rc"
}
setup setup_slurm
setup bash scripts/setup-vscode.sh
setup npm run build

check lint npm run lint || EXTRA_FAILURES=$(( EXTRA_FAILURES + 1 ))
check typecheck npm run typecheck || EXTRA_FAILURES=$(( EXTRA_FAILURES + 1 ))
tier unit npm run test:unit -- --reporter ./out/test/harness/summary-reporter.js \
  --reporter-option "summary=test-results/unit-summary.json,tier=unit" --fail-zero
tier vscode npm run test:vscode
# The same tier again with the window opened on a prepared session of the sample, for the tests that
# need the window's own session (they are skipped, with the reason, in the pass above).
tier vscode-session env EXPBENCH_VSCODE_RUN_NAME=vscode-session EXPBENCH_VSCODE_SESSION=sample/toycal/0 \
  EXPBENCH_VSCODE_GREP="in the window's own session" node out/test/harness/run-vscode-tests.js
tier e2e npm run test:e2e
finish

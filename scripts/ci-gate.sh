#!/usr/bin/env bash
# The CI gate, exactly as .ci/run applies it: NEW (a quick-preset run) against
# BASE (the committed baseline, reports/baselines/lavapipe-quick.json).
#
#   scripts/ci-gate.sh BASE.json NEW.json
#   exit 0: the gate passed; 1: it failed, one line per reason on stdout;
#   2: bad input (one line on stderr).
#   env: PEBENCH (default build/pebench); CI_GATE_MD: also write the whole
#        comparison there as markdown; PEBENCH_CI_THRESHOLD (default 1.5) and
#        PEBENCH_CI_VARIANT_THRESHOLD (default 0.25) override the thresholds.
#
# The rule (docs/compare-and-gate.md, "The gate on a shared CPU runner"): a
# case that was ok in BASE and fails, errors or vanishes in NEW fails it.
# Timing compares each sample's process CPU time, which on lavapipe is the
# device's own work, divided by the run's load factor (the median NEW/BASE
# ratio). A variant/impl whose cases' median ratio is past 1.25 fails it, and
# so does one case past 2.5x (and significant); every case needs 5 samples a
# side. The thresholds were measured on a shared 2-core machine under load.
set -euo pipefail
cd "$(dirname "$0")/.."
pebench=${PEBENCH:-build/pebench}
if [[ $# -ne 2 ]]; then
  echo "usage: scripts/ci-gate.sh BASE.json NEW.json" >&2
  exit 2
fi
[[ -x $pebench ]] || { echo "ci-gate: $pebench not found; build first (scripts/build.sh)" >&2; exit 2; }

rule=(--time cpu --normalize --min-samples 5
      --threshold "${PEBENCH_CI_THRESHOLD:-1.5}" --variant-threshold "${PEBENCH_CI_VARIANT_THRESHOLD:-0.25}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [[ -n ${CI_GATE_MD:-} ]]; then
  "$pebench" compare "$1" "$2" "${rule[@]}" --format md >"$CI_GATE_MD" 2>"$tmp/md.err" ||
    { cat "$tmp/md.err" >&2; exit 2; }
fi
status=0
"$pebench" compare "$1" "$2" "${rule[@]}" --gate --format json >"$tmp/compare.json" 2>"$tmp/err" || status=$?
case $status in
  0) echo "ci-gate: passed" ;;
  1) sed -n 's/^gate: //p' "$tmp/err" ;;  # compare prints each reason as "gate: REASON"
  *) cat "$tmp/err" >&2; exit 2 ;;
esac
exit "$status"

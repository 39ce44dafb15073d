#!/usr/bin/env bash
# The CI gate, exactly as .ci/run applies it: NEW (a quick-preset run) against
# BASE (the committed baseline, reports/baselines/lavapipe-quick.json).
#
#   scripts/ci-gate.sh BASE.json NEW.json
#   exit 0: the gate passed; 1: it failed, one line per reason on stdout;
#   2: bad input (one line on stderr).
#   env: PEBENCH (default build/pebench); CI_GATE_MD: also write the whole
#        comparison there as markdown; PEBENCH_CI_THRESHOLD (default 1.5) and
#        PEBENCH_CI_VARIANT_THRESHOLD (default 0.25) override the thresholds,
#        PEBENCH_CI_LOAD_NEIGHBOURS (default 12; 0: one load factor) the
#        cases each case's load factor comes from;
#        CI_GATE_CONFIRM=0 skips the confirming run; CI_GATE_CONFIRM_WITH=FILE
#        takes FILE, an earlier run of the same command, as the confirming run
#        (scripts/measure-gate.sh does).
#
# The rule (docs/compare-and-gate.md, "The gate on a shared CPU runner"): a
# case that was ok in BASE and fails, errors or vanishes in NEW fails it.
# Timing compares each sample's process CPU time, which on lavapipe is the
# device's own work, divided by the case's load factor (the median NEW/BASE
# ratio of the 12 cases of other variants nearest it in BASE time). A
# variant/impl whose cases' median ratio is past 1.25 fails it, and so does
# one case past 2.5x (and significant); every case needs 5 samples a side. When timing is all that fails, NEW's command runs once more (into
# NEW.confirm.json) and a timing reason counts only if that run shows it too.
# When NEW ran on another host CPU than BASE (host.cpu, host.cpu_id,
# host.logical_cores), lavapipe's times compare the CPUs: only correctness
# is gated, and a line says so (`--cross-host correctness`). So baselines
# for other CPUs sit next to BASE as BASE's name with a tag before .json
# (lavapipe-quick.TAG.json, made by scripts/make-baseline.sh on that CPU):
# the first of BASE and those that ran on NEW's host is the one gated
# against, and a line names it when it is not BASE.
set -euo pipefail
cd "$(dirname "$0")/.."
pebench=${PEBENCH:-build/pebench}
if [[ $# -ne 2 ]]; then
  echo "usage: scripts/ci-gate.sh BASE.json NEW.json" >&2
  exit 2
fi
base=$1 new=$2
[[ -x $pebench ]] || { echo "ci-gate: $pebench not found; build first (scripts/build.sh)" >&2; exit 2; }

# The first of BASE and its per-host siblings whose host CPU is NEW's (for
# reports of GPUs, BASE): compare's own test, its `cross_host`, decides.
same_host() {
  "$pebench" compare "$1" "$new" --format json 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if all(c.get("cross_host") is None for c in json.load(sys.stdin)["comparisons"]) else 1)' 2>/dev/null
}
if [[ -r $base ]] && ! same_host "$base"; then
  for candidate in "${base%.json}".*.json; do
    [[ -r $candidate && $candidate != "$new" ]] && same_host "$candidate" || continue
    echo "ci-gate: baseline $candidate, made on this host's CPU" >&2
    base=$candidate
    break
  done
fi

rule=(--time cpu --normalize --load-neighbours "${PEBENCH_CI_LOAD_NEIGHBOURS:-12}" --min-samples 5
      --cross-host correctness
      --threshold "${PEBENCH_CI_THRESHOLD:-1.5}" --variant-threshold "${PEBENCH_CI_VARIANT_THRESHOLD:-0.25}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

status=0
gate() {  # gate [--confirm FILE]: sets status; reasons in $tmp/err as "gate: ..."
  status=0
  "$pebench" compare "$base" "$new" "${rule[@]}" --gate --format json "$@" >"$tmp/compare.json" 2>"$tmp/err" ||
    status=$?
}

# NEW's own command line, writing to $1 instead (empty when NEW did not come from `pebench run`).
rerun_command() {
  python3 - "$new" "$1" <<'PY'
import json, sys
command = json.load(open(sys.argv[1])).get("command") or []
if len(command) < 2 or command[1] != "run":
    sys.exit(0)
args, skip = [], False
for a in command[1:]:
    if skip or a == "--out" or a.startswith("--out="):
        skip = a == "--out"
        continue
    args.append(a)
args += ["--out", sys.argv[2]] + ([] if "--quiet" in args else ["--quiet"])
print("\n".join(args))
PY
}

gate
confirm=()
if [[ $status == 1 && ${CI_GATE_CONFIRM:-1} != 0 ]] && ! grep '^gate: ' "$tmp/err" | grep -qv '^gate: slower: '; then
  # Only timing failed: a regression repeats, most noise on a shared machine does not.
  second=${CI_GATE_CONFIRM_WITH:-"${new%.json}.confirm.json"}
  command=()
  [[ -n ${CI_GATE_CONFIRM_WITH:-} ]] || mapfile -t command < <(rerun_command "$second")
  if [[ -n ${CI_GATE_CONFIRM_WITH:-} ]] || ((${#command[@]})); then
    echo "ci-gate: $(grep -c '^gate: ' "$tmp/err") timing reason(s); confirming with a second run ($second)" >&2
    if ((${#command[@]})); then
      "$pebench" "${command[@]}" >/dev/null 2>"$tmp/rerun.err" || true  # a case failing now shows in the gate
    fi
    confirm=(--confirm "$second")
    gate "${confirm[@]}"
  fi
fi

if [[ -n ${CI_GATE_MD:-} ]]; then
  "$pebench" compare "$base" "$new" "${rule[@]}" --gate ${confirm[@]+"${confirm[@]}"} --format md >"$CI_GATE_MD" \
    2>/dev/null || true
fi
case $status in
  0) echo "ci-gate: passed" ;;
  1) sed -n 's/^gate: //p' "$tmp/err" ;;  # compare prints each reason as "gate: REASON"
  *) cat "$tmp/err" >&2; exit 2 ;;
esac
sed -n 's/^note: /ci-gate: /p' "$tmp/err" >&2
exit "$status"

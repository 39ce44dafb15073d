#!/usr/bin/env bash
# Measures the CI gate (scripts/ci-gate.sh) on this machine. First the quick
# preset RUNS times per scenario, round-robin so that every scenario meets the
# same load; then each run is gated against BASE as CI gates it, where the
# confirming run (needed when only timing fails) is the scenario's next run
# instead of a fresh one (run i is confirmed by run i+1, the last by the
# first): the same procedure with half the runs. A scenario is "none"
# (unchanged code: every failed gate is a false one) or an --inject-slowdown
# spec (VARIANT[/IMPL]=FACTOR: caught when the gate fails, and "alone" when
# every reason names that variant, and impl if given).
#
#   scripts/measure-gate.sh
#   env: PEBENCH (default build/pebench), RUNS (default 10), BASE (default the
#        committed baseline), OUT (default build/gate-measure: every report,
#        gate output and a log line per run; runs already there are reused),
#        SCENARIOS (default "none abs.learned=1.5 attn.nope/flash=1.5 abs.learned=3"),
#        MODE=ab: measure scripts/ab-gate.sh instead (its own defaults:
#        SCENARIOS "none abs.learned=1.5 attn.nope/flash=1.5 abs.learned=1.2",
#        OUT build/gate-measure-ab; AB_ARGS narrows the preset; a gate whose
#        OUT/SCENARIO-I.gate.done exists is counted, not run again, so an
#        interrupted measurement goes on where it stopped)
#
# The quick preset takes a few minutes under load, so the default is hours:
# run it in the background and read OUT/log. docs/compare-and-gate.md has
# the counts it gave.
set -euo pipefail
cd "$(dirname "$0")/.."
# "slower: abs.learned " / "slower: attn.nope flash": how a reason about the target starts.
reason_prefix() {
  local target=${1%%=*}
  if [[ $target == */* ]]; then echo "slower: ${target%%/*} ${target#*/}"; else echo "slower: $target "; fi
}
# MODE=ab: the A/B gate instead (scripts/ab-gate.sh, both sides this build,
# the new side with the scenario's slowdown): RUNS gates per scenario, each
# with its own rounds (and confirming rounds where the first fail).
if [[ ${MODE:-} == ab ]]; then
  export PEBENCH=${PEBENCH:-build/pebench} PEBENCH_BASE=${PEBENCH_BASE:-${PEBENCH:-build/pebench}}
  runs=${RUNS:-10} out=${OUT:-build/gate-measure-ab}
  read -r -a scenarios <<<"${SCENARIOS:-none abs.learned=1.5 attn.nope/flash=1.5 abs.learned=1.2}"
  mkdir -p "$out"
  echo "measure-gate (A/B): per scenario, gates failed (and with only the target named) of $runs:" | tee -a "$out/log"
  for s in "${scenarios[@]}"; do
    failed=0 alone=0
    for ((i = 1; i <= runs; i++)); do
      inject=$s
      [[ $s == none ]] && inject=
      status=0 start=$SECONDS gate="$out/${s//\//_}-$i.gate"
      if [[ -f $gate.done ]]; then  # a gate an earlier call finished: its exit status
        status=$(cat "$gate.done")
      else
        AB_OUT="$out/${s//\//_}-$i" AB_INJECT=$inject scripts/ab-gate.sh >"$gate" 2>&1 || status=$?
        echo "$status" >"$gate.done"
        echo "gate $s $i: exit $status in $((SECONDS - start)) s$(grep -q 'confirming with' "$gate" && echo ', confirmed'), $(grep -c '^slower: ' "$gate" || true) reason(s)" |
          tee -a "$out/log"
      fi
      ((status == 1)) || continue
      failed=$((failed + 1))
      reasons=$(grep '^slower: ' "$gate" || true)  # not piped into grep -q (pipefail)
      if [[ $s != none && -n $reasons ]] && ! grep -qv "^$(reason_prefix "$s")" <<<"$reasons"; then
        alone=$((alone + 1))
      fi
    done
    echo "  $s: $failed failed ($alone alone)" | tee -a "$out/log"
  done
  exit 0
fi
export PEBENCH=${PEBENCH:-build/pebench}
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
runs=${RUNS:-10}
base=${BASE:-reports/baselines/lavapipe-quick.json}
out=${OUT:-build/gate-measure}
read -r -a scenarios <<<"${SCENARIOS:-none abs.learned=1.5 attn.nope/flash=1.5 abs.learned=3}"
[[ -x $PEBENCH ]] || { echo "measure-gate: $PEBENCH not found; build first" >&2; exit 2; }
((runs >= 2)) || { echo "measure-gate: RUNS=$runs: confirming needs at least 2" >&2; exit 2; }
mkdir -p "$out"

report() { echo "$out/${1//\//_}-$2.json"; }

for ((i = 1; i <= runs; i++)); do
  for s in "${scenarios[@]}"; do
    [[ -f $(report "$s" "$i") ]] && continue
    inject=()
    [[ $s == none ]] || inject=(--inject-slowdown "$s")
    load=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s)
    "$PEBENCH" run --preset quick --quiet --out "$(report "$s" "$i").tmp" ${inject[@]+"${inject[@]}"} >/dev/null 2>&1 ||
      true
    mv "$(report "$s" "$i").tmp" "$(report "$s" "$i")"
    echo "run $s $i: $(($(date +%s) - start)) s, load average $load at the start" | tee -a "$out/log"
  done
done

echo "measure-gate: per scenario, gates failed (and with only the target named) of $runs:" | tee -a "$out/log"
for s in "${scenarios[@]}"; do
  failed=0 alone=0 first=0
  for ((i = 1; i <= runs; i++)); do
    gate_out="${out}/$(basename "$(report "$s" "$i")" .json).gate"
    next=$(report "$s" $((i % runs + 1)))
    status=0
    CI_GATE_CONFIRM_WITH=$next scripts/ci-gate.sh "$base" "$(report "$s" "$i")" >"$gate_out" 2>"$gate_out.err" ||
      status=$?
    grep -q "confirming with a second run" "$gate_out.err" && first=$((first + 1))
    ((status == 1)) || continue
    failed=$((failed + 1))
    [[ $s != none ]] && ! grep -qv "^$(reason_prefix "$s")" "$gate_out" && alone=$((alone + 1))
  done
  echo "  $s: $failed failed ($alone alone); $first needed the confirming run" | tee -a "$out/log"
done

#!/usr/bin/env bash
# Measures the CI gate (scripts/ci-gate.sh) on this machine: runs the quick
# preset RUNS times per scenario, round-robin so that every scenario meets the
# same load, gates each run against BASE, and counts. A scenario is "none"
# (unchanged code: every gate is a false one) or an --inject-slowdown spec
# (VARIANT[/IMPL]=FACTOR: caught when the gate fails, and "alone" when every
# reason names that variant, and impl if given).
#
#   scripts/measure-gate.sh
#   env: PEBENCH (default build/pebench), RUNS (default 10), BASE (default the
#        committed baseline), OUT (default build/gate-measure: every report,
#        gate output and a log line per run), SCENARIOS (default
#        "none abs.learned=1.5 attn.nope/flash=1.5 abs.learned=3 attn.nope/flash=3")
#
# The quick preset takes a few minutes under load, so the default is hours:
# run it in the background and read OUT/log. docs/compare-and-gate.md has
# the counts it gave.
set -euo pipefail
cd "$(dirname "$0")/.."
export PEBENCH=${PEBENCH:-build/pebench}
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
runs=${RUNS:-10}
base=${BASE:-reports/baselines/lavapipe-quick.json}
out=${OUT:-build/gate-measure}
read -r -a scenarios <<<"${SCENARIOS:-none abs.learned=1.5 attn.nope/flash=1.5 abs.learned=3 attn.nope/flash=3}"
[[ -x $PEBENCH ]] || { echo "measure-gate: $PEBENCH not found; build first" >&2; exit 2; }
mkdir -p "$out"
: >"$out/log"

# "slower: abs.learned default" / "slower: attn.nope flash": how a reason about the target starts.
reason_prefix() {
  local target=${1%%=*}
  if [[ $target == */* ]]; then echo "slower: ${target%%/*} ${target#*/}"; else echo "slower: $target "; fi
}

for ((i = 1; i <= runs; i++)); do
  for s in "${scenarios[@]}"; do
    name="${s//\//_}-$i"
    inject=()
    [[ $s == none ]] || inject=(--inject-slowdown "$s")
    load=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s)
    "$PEBENCH" run --preset quick --quiet --out "$out/$name.json" ${inject[@]+"${inject[@]}"} >/dev/null 2>"$out/$name.err" || true
    secs=$(($(date +%s) - start))
    gate=0
    scripts/ci-gate.sh "$base" "$out/$name.json" >"$out/$name.gate" 2>&1 || gate=$?
    alone=-
    if [[ $s != none && $gate == 1 ]]; then
      alone=yes
      grep -qv "^$(reason_prefix "$s")" "$out/$name.gate" && alone=no
    fi
    echo "$s run=$i gate=$gate alone=$alone secs=$secs load=$load" | tee -a "$out/log"
  done
done

echo "measure-gate: per scenario, gates failed (and with only the target named) of $runs runs:"
for s in "${scenarios[@]}"; do
  failed=$(grep -c "^$s run=[0-9]* gate=1 " "$out/log" || true)
  alone=$(grep -c "^$s run=[0-9]* gate=1 alone=yes" "$out/log" || true)
  echo "  $s: $failed failed, $alone alone"
done

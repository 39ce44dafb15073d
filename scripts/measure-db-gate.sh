#!/usr/bin/env bash
# Measures `pebench db compare --gate` against the last HIST runs (the
# history gate) and `pebench compare --gate` against one baseline, on the
# same runs (issue 48). First HIST unchanged runs make the history; then
# RUNS runs per scenario, round-robin so that every scenario meets the same
# load. Each test run is gated
#   - against the history: `db compare NEW --runs HIST --gate` over a
#     database holding the HIST history runs (and nothing else), and
#   - against one baseline, each history run in turn (HIST gates per run):
#     `compare H_j NEW --gate`, the rule CI applies to a committed baseline.
# Both apply GATE_ARGS, by default CI's rule (scripts/ci-gate.sh: CPU time,
# each case divided by its load factor of the 12 nearest cases of other
# variants, 5 samples a side, a case past 2.5x or a variant/impl's median
# ratio past 1.25 fails), without --confirm and --cross-host (one host
# here). A scenario is "none" (unchanged code: every failed gate is a
# false one) or an --inject-slowdown spec (VARIANT[/IMPL]=FACTOR: a failed
# gate is a catch).
#
#   scripts/measure-db-gate.sh
#   env: PEBENCH (default build/pebench), HIST (default 5), RUNS (default 10),
#        OUT (default build/db-gate-measure: every report, gate output and a
#        log; runs already there are reused),
#        SCENARIOS (default "none abs.learned=1.5 abs.learned=3", as
#        scripts/measure-gate.sh), GATE_ARGS (default CI's rule, above),
#        RUN_ARGS (default a reduced quick run: 4 variants at seq 128, see below)
set -euo pipefail
cd "$(dirname "$0")/.."
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
P=${PEBENCH:-build/pebench}
hist=${HIST:-5} runs=${RUNS:-10} out=${OUT:-build/db-gate-measure}
read -r -a scenarios <<<"${SCENARIOS:-none abs.learned=1.5 abs.learned=3}"
read -r -a gate_args <<<"${GATE_ARGS:---time cpu --normalize --load-neighbours 12 --min-samples 5 --threshold 1.5 --variant-threshold 0.25}"
read -r -a run_args <<<"${RUN_ARGS:---preset quick --variant abs.learned,abs.sinusoidal,rope.apply,attn.nope --impl default,flash --seq 128 --no-peak}"
[[ -x $P ]] || { echo "measure-db-gate: $P not found; build first" >&2; exit 2; }
((hist >= 1 && runs >= 1)) || { echo "measure-db-gate: HIST=$hist RUNS=$runs: both must be at least 1" >&2; exit 2; }
mkdir -p "$out"

report() { echo "$out/${1//\//_}-$2.json"; }

# One run of scenario $1 into report $2 (kept when already there).
run_one() {
  local s=$1 path=$2 inject=() load start
  [[ -f $path ]] && return 0
  [[ $s == none ]] || inject=(--inject-slowdown "$s")
  load=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s)
  "$P" run "${run_args[@]}" --quiet --out "$path.tmp" ${inject[@]+"${inject[@]}"} >/dev/null 2>&1 || true
  mv "$path.tmp" "$path"
  echo "run $(basename "$path" .json): $(($(date +%s) - start)) s, load average $load at the start" | tee -a "$out/log"
}

for ((i = 1; i <= hist; i++)); do run_one none "$out/history-$i.json"; done
for ((i = 1; i <= runs; i++)); do
  for s in "${scenarios[@]}"; do run_one "$s" "$(report "$s" "$i")"; done
done

db="$out/history.db"
rm -f "$db" "$db-wal" "$db-shm"
for ((i = 1; i <= hist; i++)); do "$P" db ingest --db "$db" "$out/history-$i.json" >/dev/null; done

# 1 when `$@` gates (exit 1), 0 when it passes; any other exit stops the script.
gated() {
  local status=0
  "$@" >"$gate_out" 2>&1 || status=$?
  ((status <= 1)) || { echo "measure-db-gate: exit $status from: $*" >&2; cat "$gate_out" >&2; exit 2; }
  echo "$status"
}

echo "measure-db-gate: ${gate_args[*]}; per scenario, gates failed (history of $hist runs: of $runs; one baseline: of $((runs * hist)), each history run in turn):" |
  tee -a "$out/log"
for s in "${scenarios[@]}"; do
  by_history=0 by_one=0
  for ((i = 1; i <= runs; i++)); do
    new=$(report "$s" "$i")
    gate_out="${new%.json}.history.gate"
    by_history=$((by_history + $(gated "$P" db compare --db "$db" "$new" --runs "$hist" "${gate_args[@]}" --gate)))
    for ((j = 1; j <= hist; j++)); do
      gate_out="${new%.json}.base$j.gate"
      by_one=$((by_one + $(gated "$P" compare "$out/history-$j.json" "$new" "${gate_args[@]}" --gate)))
    done
  done
  echo "  $s: history $by_history of $runs; one baseline $by_one of $((runs * hist))" | tee -a "$out/log"
done

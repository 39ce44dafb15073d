#!/usr/bin/env bash
# gpu-check.sh [--smoke] OUTDIR — everything pebench can tell about a GPU, in
# one command, from a bundle (scripts/bundle.sh) with nothing installed:
#   devices --json, peak --json, the quick preset validated, a small awkward
#   sweep of every variant under the validation layer with --dump, the gpu
#   preset timed, --compile-only pipeline statistics, the PyTorch peer where
#   python3 has torch with CUDA (tools/peers/torch_peer.py), compare --over
#   and against the peer, and the HTML report.
# Every output lands under OUTDIR as at most 8 files (the rest packed into
# reports.tar.gz): summary.txt, gpu-check.log, gpu.json, quick.json,
# peer.json, report.html, reports.tar.gz, dumps.tar.gz.
# Exits 1 when a step failed or a case failed or erred, 2 on bad usage.
# --smoke: a seconds-long subset of each step (the bundle's test on lavapipe).
# Environment: PEBENCH_DEVICE (run's --device; default pebench's: the first
# discrete GPU), PEBENCH_GPU_CHECK_BUDGET_S (total seconds, default 420).
set -uo pipefail

smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
if [ $# -ne 1 ] || [ -z "$1" ] || [ "${1#-}" != "$1" ]; then
  echo "usage: gpu-check.sh [--smoke] OUTDIR" >&2
  exit 2
fi
out=$1
if [ -e "$out" ] && [ ! -d "$out" ]; then
  echo "gpu-check.sh: OUTDIR '$out' exists and is not a folder" >&2
  exit 2
fi
mkdir -p "$out" || { echo "gpu-check.sh: cannot create OUTDIR '$out'" >&2; exit 2; }
out=$(cd "$out" && pwd)

here=$(cd "$(dirname "$0")" && pwd)
if [ -x "$here/bin/pebench" ]; then  # a bundle
  pebench=$here/bin/pebench
  peers=$here/tools/peers
  numpy_check=$here/tools/numpy/check_dumps.py
  if [ -f "$here/env.sh" ]; then
    . "$here/env.sh"  # the bundle's libraries, layer and, where needed, driver manifest
  else
    export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export VK_LAYER_PATH="$here/layers"
  fi
else  # scripts/ of a checkout
  pebench=${PEBENCH:-$here/../build/pebench}
  peers=$here/../tools/peers
  numpy_check=$here/../tests/numpy/check_dumps.py
fi
if [ ! -x "$pebench" ]; then
  echo "gpu-check.sh: no pebench at $pebench (run it from a bundle, or build first)" >&2
  exit 2
fi

work=$out/work
rm -rf "$work" && mkdir -p "$work/dumps"
log=$out/gpu-check.log
: >"$log"
start=$(date +%s)
budget=${PEBENCH_GPU_CHECK_BUDGET_S:-420}
failures=()
device=()
if [ -n "${PEBENCH_DEVICE:-}" ]; then device=(--device "$PEBENCH_DEVICE"); fi

say() { echo "gpu-check: $*" | tee -a "$log" >&2; }

# step NAME SECONDS CMD...: runs CMD with its output in the log, stopped
# with SIGINT (pebench then writes its report and exits) after SECONDS, or
# the budget's rest, whichever is less; records a failure on a non-zero exit.
step() {
  local name=$1 limit=$2
  shift 2
  local left=$((budget - ($(date +%s) - start)))
  if ((left < 10)); then
    say "$name: not run, the ${budget}s budget is spent"
    failures+=("$name (not run: budget)")
    return 1
  fi
  ((limit > left)) && limit=$left
  local t0 rc
  t0=$(date +%s)
  say "$name: $* (at most ${limit}s)"
  timeout -s INT -k 20 "$limit" "$@" >>"$log" 2>&1
  rc=$?
  say "$name: exit $rc after $(($(date +%s) - t0))s"
  if ((rc != 0)); then failures+=("$name (exit $rc)"); fi
  return $rc
}

# The sweep of each step: the full one, or a seconds-long subset with --smoke.
if ((smoke)); then
  quick=(--variant 'attn.nope,attn.alibi,rope.apply,abs.sinusoidal' --seq 64 --heads 2 --dim 16 --dtype f32,f16
         --benchmark_min_time=0.001)
  awkward=(--variant 'attn.nope,attn.t5,rope.apply,abs.learned' --benchmark_min_time=0.001)
  gpu=(--variant 'attn.nope,attn.t5,rope.apply' --impl flash,default --seq 96 --heads 4 --kv-heads 2 --dim 32
       --dtype f32 --benchmark_min_time=0.001)
  kernels=(--variant 'attn.nope,rope.apply' --seq 64 --heads 2 --dim 16)
else
  quick=(--preset quick)
  awkward=()
  gpu=(--preset gpu)
  kernels=(--preset kernels)
fi

step devices 30 sh -c '"$0" devices --json >"$1"' "$pebench" "$work/devices.json"
step peak 60 sh -c '"$0" peak --json "$@" >"'"$work"'/peak.json"' "$pebench" "${device[@]}"
step quick 90 "$pebench" run "${device[@]}" "${quick[@]}" --out "$out/quick.json"
step gpu 300 "$pebench" run "${device[@]}" "${gpu[@]}" --out "$out/gpu.json"
if [ -s "$out/gpu.json" ]; then
  step overhead 20 sh -c '"$0" compare --over attn.nope "$1" >"$2"' "$pebench" "$out/gpu.json" "$work/overhead.txt"
fi
if [ -f "$peers/torch_peer.py" ] && command -v python3 >/dev/null &&
  python3 -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1; then
  if [ -s "$out/gpu.json" ] &&
    step peer 150 python3 "$peers/torch_peer.py" "$out/gpu.json" --out "$out/peer.json"; then
    step compare-peer 20 sh -c '"$0" compare "$1" "$2" >"$3"' "$pebench" "$out/gpu.json" "$out/peer.json" \
      "$work/compare-peer.txt"
  fi
else
  say "peer: not run (no python3 with torch and CUDA here, or no tools/peers/torch_peer.py)"
fi

# Awkward: odd lengths, N != M, GQA 3:1, a head dim no tile divides, both
# impls and dtypes, causal and not; the validation layer on; inputs and
# outputs dumped for NumPy.
step awkward 90 "$pebench" run "${device[@]}" "${awkward[@]}" --seq 77 --kv-seq 133 --heads 6 --kv-heads 2 \
  --dim 40 --causal 0,1 --dtype f32,f16 --validate=core,sync --no-peak --benchmark_min_time=0.001 \
  --dump "$work/dumps" --out "$work/awkward.json"
# The dumps against the independent float64 NumPy reference, here, where
# the machine's python3 has NumPy: the verdict travels even when the dumps
# are too large to (tests/numpy/check_dumps.py).
if [ -f "$numpy_check" ] && python3 -c 'import numpy' >/dev/null 2>&1; then
  step numpy 60 sh -c 'python3 "$0" "$1" >"$2" 2>&1' "$numpy_check" "$work/dumps" "$work/numpy-check.txt"
else
  say "numpy: not run (no python3 with NumPy here, or no check_dumps.py)"
fi
step compile 60 "$pebench" run "${device[@]}" "${kernels[@]}" --compile-only --out "$work/compile.json"


reports=()
for r in "$out/quick.json" "$out/gpu.json" "$work/awkward.json" "$out/peer.json"; do
  [ -s "$r" ] && reports+=("$r")
done
if ((${#reports[@]})); then
  step report 60 "$pebench" report "${reports[@]}" -o "$out/report.html"
fi

# What each report holds, by status, and every case that did not pass.
summarize() {
  local r=$1
  [ -s "$r" ] || { echo "$(basename "$r"): missing"; return; }
  if command -v python3 >/dev/null; then
    python3 - "$r" <<'EOF'
import collections, json, sys
path = sys.argv[1]
try:
    rep = json.load(open(path))
except Exception as e:
    print(f"{path.rsplit('/', 1)[-1]}: unreadable ({e})"); sys.exit(0)
res = rep.get("results", [])
count = collections.Counter(r.get("status") for r in res)
devs = ", ".join(d.get("name", "?") for d in rep.get("devices", []))
print(f"{path.rsplit('/', 1)[-1]}: {len(res)} cases on {devs}: " +
      ", ".join(f"{k} {v}" for k, v in sorted(count.items())))
for r in res:
    if r.get("status") in ("failed", "error"):
        print(f"  {r['status']}: {r.get('variant')}/{r.get('impl')}/{r.get('dtype')} "
              f"{r.get('params', {})}: {r.get('reason', '')[:300]}")
EOF
  else
    echo "$(basename "$r"): $(grep -o '"status": *"[a-z]*"' "$r" | sort | uniq -c | tr -s ' \n' ' ')"
  fi
}

bad_cases=0
{
  echo "gpu-check $(date -u +%FT%TZ), $(basename "$pebench") at $pebench, $((($(date +%s) - start)))s"
  for r in "$out/quick.json" "$out/gpu.json" "$work/awkward.json" "$out/peer.json" "$work/compile.json"; do
    summarize "$r"
  done
  [ -s "$work/overhead.txt" ] && { echo; echo "compare --over attn.nope (gpu preset):"; cat "$work/overhead.txt"; }
  [ -s "$work/compare-peer.txt" ] && { echo; echo "pebench against the peer:"; cat "$work/compare-peer.txt"; }
  [ -s "$work/numpy-check.txt" ] && { echo; echo "dumps against the NumPy reference:"; tail -n 40 "$work/numpy-check.txt"; }
  echo
  if ((${#failures[@]})); then echo "steps that failed: ${failures[*]}"; else echo "every step passed"; fi
} >"$out/summary.txt" 2>&1
for r in "$out/quick.json" "$out/gpu.json" "$work/awkward.json" "$out/peer.json"; do
  [ -s "$r" ] && grep -q '"status": *"\(failed\|error\)"' "$r" && bad_cases=1
done

# Pack: the dumps, at most PEBENCH_GPU_CHECK_DUMP_BYTES (default 15 MiB: a
# borrowed machine sends back files of 16 MiB at most); where they are over,
# the largest case folders are left out one by one, named in the summary.
# (The first H100 run packed 17.7 MB and lost them all: dumps-not-packed.)
dump_limit=${PEBENCH_GPU_CHECK_DUMP_BYTES:-15728640}
left_out=()
while :; do
  (cd "$work" && tar czf "$out/dumps.tar.gz" dumps) 2>>"$log"
  dump_bytes=$(wc -c <"$out/dumps.tar.gz" 2>/dev/null || echo 0)
  ((dump_bytes <= dump_limit)) && break
  largest=$(cd "$work/dumps" && du -s -- */ 2>/dev/null | sort -rn | head -1 | cut -f2)
  largest=${largest%/}
  if [ -z "$largest" ]; then
    rm -f "$out/dumps.tar.gz"; say "dumps: over $dump_limit bytes with no case left to drop; not packed"; break
  fi
  left_out+=("$largest")
  rm -rf "${work:?}/dumps/$largest"
done
if ((${#left_out[@]})); then
  say "dumps.tar.gz: ${#left_out[@]} case folder(s) left out to stay under $dump_limit bytes: ${left_out[*]}"
  { echo; echo "dumps.tar.gz leaves out (over $dump_limit bytes with them):"; printf '  %s\n' "${left_out[@]}"; } \
    >>"$out/summary.txt"
fi
cp "$work/devices.json" "$work/peak.json" "$out/" 2>/dev/null
(cd "$work" && tar czf "$out/reports.tar.gz" --exclude=dumps . -C "$out" devices.json peak.json) 2>>"$log"
rm -f "$out/devices.json" "$out/peak.json"
rm -rf "$work"

cat "$out/summary.txt"
if ((${#failures[@]} || bad_cases)); then exit 1; fi
exit 0

#!/usr/bin/env bash
# The short follow-up to gpu-check.sh on a borrowed GPU: what the first
# full run left open, each step under its own time limit (docs/gpus.md).
#
#   scripts/gpu-probe.sh BUNDLE OUTDIR
#
#   decode-tune.json   decode (N 1, M 8K/32K/64K, H 32, Hkv 8, D 128, f32
#                      and f16; nope, rope, alibi) with `run --tune`: each
#                      key-per-split choice's time (results[].tuning)
#   rope-2048.json     attn.nope and attn.rope flash, N = M = 2048, H 32,
#                      D 128 (issue 43's `compare --over` shape)
#   rope-forms.json    rope.apply at 8192 x 16 x 128: plain, YaRN with
#                      mscale, LongRoPE, M-RoPE (both layouts), xPos
#   dumps.tar.gz       the awkward sweep's dumps (within 15 MiB) and
#   numpy.txt          their check against the NumPy reference, run there
#   probe.log          each step's command, exit code and seconds
set -u
if [ $# -ne 2 ]; then
  echo "usage: $0 BUNDLE OUTDIR" >&2
  exit 2
fi
b=$(cd "$1" && pwd) || exit 2
out=$2
mkdir -p "$out/work/dumps" || exit 2
pb=$b/pebench.sh
log=$out/probe.log
: >"$log"
step() {
  local limit=$1 s=$SECONDS rc
  shift
  timeout -s INT -k 10 "$limit" "$@" >>"$log" 2>&1
  rc=$?
  echo "probe: rc=$rc after $((SECONDS - s))s: $*" | tee -a "$log"
}
common=(--no-peak --quiet)
# PEBENCH_PROBE_SMOKE=1: the same steps at toy sizes (lavapipe, tests).
kv=8192,32768,65536 n=2048 rs=8192 heads=32
if [ -n "${PEBENCH_PROBE_SMOKE:-}" ]; then kv=300,1000 n=64 rs=64 heads=8; common+=(--emulate desktop-gpu); fi
step 100 "$pb" run "${common[@]}" --variant attn.nope,attn.rope,attn.alibi --impl flash --seq 1 \
  --kv-seq "$kv" --heads "$heads" --kv-heads 8 --dim 128 --causal 1 --dtype f32,f16 --tune \
  --out "$out/decode-tune.json"
step 40 "$pb" run "${common[@]}" --variant attn.nope,attn.rope --impl flash --seq "$n" --heads "$heads" --dim 128 \
  --causal 0,1 --dtype f32,f16 --out "$out/rope-2048.json"
step 30 sh -c '"$0" compare --over attn.nope "$1" >"$2"' "$pb" "$out/rope-2048.json" "$out/work/rope-over.txt"
forms=()
for f in "" "--param scaling=yarn --param mscale=1 --param mscale_all_dim=0.707" "--param scaling=longrope" \
  "--param positions=mrope --param mrope_layout=chunked,interleaved" "--param xpos_scale_base=512"; do
  step 30 "$pb" run "${common[@]}" --variant rope.apply --seq "$rs" --heads 16 --dim 128 --dtype f32,f16 $f \
    --out "$out/work/form-${#forms[@]}.json"
  forms+=("$out/work/form-${#forms[@]}.json")
done
step 30 "$pb" run "${common[@]}" --seq 77 --kv-seq 133 --heads 6 --kv-heads 2 --dim 40 --causal 0,1 \
  --dtype f32,f16 --benchmark_min_time=0.001 --dump "$out/work/dumps" --out "$out/work/awkward.json"
if [ -f "$b/tools/numpy/check_dumps.py" ] && python3 -c 'import numpy' 2>/dev/null; then
  step 60 sh -c 'python3 "$0" "$1" >"$2" 2>&1' "$b/tools/numpy/check_dumps.py" "$out/work/dumps" "$out/numpy.txt"
fi
# The forms as one report (pebench merges nothing: python3 does).
python3 - "$out/rope-forms.json" "${forms[@]}" <<'EOF' 2>>"$log"
import json, sys
merged = None
for path in sys.argv[2:]:
    try:
        rep = json.load(open(path))
    except Exception:
        continue
    if merged is None:
        merged = rep
    else:
        merged["results"] += rep["results"]
if merged:
    json.dump(merged, open(sys.argv[1], "w"))
EOF
(cd "$out/work" && tar czf "$out/reports.tar.gz" rope-over.txt awkward.json) 2>>"$log"
limit=15728640
while :; do
  (cd "$out/work" && tar czf "$out/dumps.tar.gz" dumps) 2>>"$log"
  (($(wc -c <"$out/dumps.tar.gz") <= limit)) && break
  largest=$(cd "$out/work/dumps" && du -s -- */ | sort -rn | head -1 | cut -f2)
  [ -n "$largest" ] || break
  echo "probe: dumps: left out ${largest%/}" | tee -a "$log"
  rm -rf "$out/work/dumps/${largest%/}"
done
rm -rf "$out/work"
ls -la "$out"

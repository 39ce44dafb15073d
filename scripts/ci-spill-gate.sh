#!/usr/bin/env bash
# The spill gate, exactly as .ci/run uses it: every variant's pipelines
# (the `kernels` preset: attention at head dims 64, 128 and 256, MHA and GQA,
# prefill and decode, both dtypes) planned for a GPU and compiled by AMD's
# production shader compiler (ACO) on Mesa RADV's null navi21 device, which
# compiles but cannot execute. `compare --gate` against the committed
# baseline fails when a pipeline that spilled no registers there spills now,
# or a case stops compiling or disappears. No GPU needed. It also fails
# when a decode flash pipeline (N 1) runs fewer than 8 subgroups per SIMD
# (ACO's "Subgroups per SIMD": registers or shared memory bound occupancy;
# issue 45's goal for a memory-bound kernel).
#
#   scripts/ci-spill-gate.sh [BASE]   (default reports/baselines/navi21-kernels.json)
# Runs ${PEBENCH:-build/pebench}; exits 0 when the gate passes, 1 when it fails.
# To refresh the baseline after a deliberate change:
#   scripts/ci-spill-gate.sh && cp build/ci-navi21.json reports/baselines/navi21-kernels.json
set -euo pipefail
cd "$(dirname "$0")/.."
pebench=${PEBENCH:-build/pebench}
base=${1:-reports/baselines/navi21-kernels.json}
radv_icd=/usr/share/vulkan/icd.d/radeon_icd.x86_64.json
[ -f "$radv_icd" ] || { echo "ci-spill-gate: $radv_icd missing (Debian's mesa-vulkan-drivers)" >&2; exit 1; }
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
mkdir -p build
RADV_FORCE_FAMILY=navi21 VK_DRIVER_FILES=$radv_icd \
  "$pebench" run --compile-only --preset kernels --out build/ci-navi21.json --quiet > build/ci-navi21.txt
status=0
"$pebench" compare "$base" build/ci-navi21.json --gate --format md > build/ci-navi21-compare.md || status=$?
grep -v '^|' build/ci-navi21-compare.md || true
python3 - build/ci-navi21.json <<'PY' || status=1
import json, sys
low, seen = [], 0
for r in json.load(open(sys.argv[1]))["results"]:
    if r["impl"] != "flash" or r["params"].get("seq") != 1 or r["status"] != "compiled":
        continue
    for p in r.get("pipelines", []):
        if not p["shader"].startswith("attn_flash_"):
            continue
        seen += 1
        n = (p.get("stats") or {}).get("Subgroups per SIMD")
        if n is None or n < 8:
            low.append(f'{r["variant"]} {r["dtype"]} H {r["params"]["heads"]}/{r["params"]["kv_heads"]} '
                       f'D {r["params"]["dim"]}: {p["shader"]} {n} subgroups per SIMD')
print(f"ci-spill-gate: {seen} decode flash pipelines, {len(low)} below 8 subgroups per SIMD")
for line in low:
    print("  " + line)
sys.exit(1 if low or not seen else 0)
PY
exit "$status"

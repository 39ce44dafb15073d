#!/usr/bin/env bash
# Runs the aarch64 build (scripts/cross-arm64.sh) under qemu-user on Debian's
# arm64 lavapipe and checks that it validates a small rope and attention
# sweep: every case ok, on an aarch64 host, on llvmpipe. CI runs it.
#
#   scripts/arm64-smoke.sh [OUT.json]      (default build-arm64/smoke.json)
#   env: PEBENCH_ARM64 (default build-arm64/pebench)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${PEBENCH_ARM64:-build-arm64/pebench}
out=${1:-build-arm64/smoke.json}
[[ -x $bin ]] || { echo "arm64-smoke: $bin not found; build it with scripts/cross-arm64.sh" >&2; exit 2; }
icd=/usr/share/vulkan/icd.d/lvp_icd.aarch64.json
[[ -f $icd ]] || { echo "arm64-smoke: $icd missing (mesa-vulkan-drivers:arm64)" >&2; exit 2; }
arm64() { VK_DRIVER_FILES=$icd QEMU_LD_PREFIX=/ qemu-aarch64-static "$bin" "$@"; }

arm64 devices
# rope.apply, and attention in both impls with a relative encoding: small
# shapes, short timing (qemu translates llvmpipe's JIT code). f32 only:
# Debian 12's arm64 llvmpipe (LLVM 15) aborts the process compiling f16
# storage loads ("LLVM ERROR: Cannot select: v4f32 = fp_extend v4i16",
# docs/mobile.md), an LLVM bug that no case status can report.
arm64 run --variant 'rope.apply,attn.nope,attn.t5' --batch 1 --heads 2 --dim 32 --seq 64 \
  --dtype f32 --quiet --benchmark_min_time=0.001 --out "$out"

python3 - "$out" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
dev = r["devices"][0]
assert "aarch64" in r["host"]["os"], f"host is not aarch64: {r['host']['os']}"
assert "llvmpipe" in dev["name"], f"device is not llvmpipe: {dev['name']}"
res = r["results"]
bad = [x for x in res if x["status"] != "ok"]
variants = sorted({x["variant"] for x in res})
assert not bad, f"{len(bad)} of {len(res)} cases not ok, first: {bad[0]['id']} {bad[0]['status']}: {bad[0]['reason']}"
assert {"rope.apply", "attn.nope", "attn.t5"} <= set(variants), variants
print(f"arm64-smoke: {len(res)} cases ok on {dev['name']} ({r['host']['os']}): {', '.join(variants)}")
PY

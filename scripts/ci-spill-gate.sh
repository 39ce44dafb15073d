#!/usr/bin/env bash
# The spill gate, exactly as .ci/run uses it: every variant's pipelines
# (the `kernels` preset: attention at head dims 64, 128 and 256, MHA and GQA,
# prefill and decode, both dtypes) planned for a GPU and compiled by AMD's
# production shader compiler (ACO) on Mesa RADV's null navi21 device, which
# compiles but cannot execute. `compare --gate` against the committed
# baseline fails when a pipeline that spilled no registers there spills now,
# or a case stops compiling or disappears. No GPU needed.
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
exit "$status"

#!/usr/bin/env bash
# ci-validate-all.sh [OUTDIR] — issue 41's validation step: every variant,
# impl and dtype at an awkward small shape (N 37, M 70, H 6, Hkv 2, D 48, or
# the nearest each variant allows: a case a plan cannot run is `unsupported`
# and counted, not failed) under lavapipe's own plan, --emulate desktop-gpu
# and --emulate android-baseline-2022, with --validate=all (core checks,
# synchronization validation, GPU-assisted validation, best practices).
# Prints per plan the cases, their statuses, the layer's errors and the
# warning ids outside the allow-list, with each plan's wall and CPU time.
# Exits 1 when a case is neither ok nor unsupported/skipped (failed, erred,
# interrupted), the layer reported an error or a warning outside the
# allow-list (src/runtime/validation_allowlist.cc), or a plan wrote no
# report; 2 on bad usage. .ci/run runs the two GPU plans with
# core,sync,best-practices (step `validate`); the lavapipe plan and
# GPU-assisted validation cost too much per commit (docs/gpu-readiness.md,
# "The CI step's cost").
# Environment: PEBENCH (default build/pebench); CI_VALIDATE_PLANS (default
# "lavapipe desktop-gpu android-baseline-2022"); CI_VALIDATE_CHECKS
# (default all); CI_VALIDATE_GPU_AV_PLANS: where set, GPU-assisted
# validation runs only on the plans it names and the others get
# core,sync,best-practices (the cut measured in the docs).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/ci-validate}
if [ "${out#-}" != "$out" ]; then
  echo "usage: ci-validate-all.sh [OUTDIR]" >&2
  exit 2
fi
mkdir -p "$out" || { echo "ci-validate-all.sh: cannot create OUTDIR '$out'" >&2; exit 2; }
pebench=${PEBENCH:-build/pebench}
if [ ! -x "$pebench" ]; then
  echo "ci-validate-all.sh: no pebench binary at '$pebench' (PEBENCH)" >&2
  exit 2
fi
plans=${CI_VALIDATE_PLANS:-lavapipe desktop-gpu android-baseline-2022}
checks=${CI_VALIDATE_CHECKS:-all}

status=0
start=$SECONDS
for plan in $plans; do
  emulate=()
  [ "$plan" = lavapipe ] || emulate=(--emulate "$plan")
  plan_checks=$checks
  if [ -n "${CI_VALIDATE_GPU_AV_PLANS:-}" ] && [[ " $CI_VALIDATE_GPU_AV_PLANS " != *" $plan "* ]]; then
    plan_checks=core,sync,best-practices
  fi
  report=$out/$plan.json
  rm -f "$report"
  t0=$(date +%s%N)
  # /usr/bin/time's user+sys: the CPU the plan cost (2-core CI runners).
  /usr/bin/time -f "%U %S" -o "$out/$plan.time" \
    "$pebench" run --variant '*' --seq 37 --kv-seq 70 --heads 6 --kv-heads 2 --dim 48 --dtype f32,f16 \
    "${emulate[@]}" --validate="$plan_checks" --no-peak --quiet --benchmark_min_time=0.001 \
    --out "$report" >"$out/$plan.log" 2>&1
  rc=$?
  wall=$(( ($(date +%s%N) - t0) / 1000000000 ))
  cpu=$(awk '{printf "%.1f", $1 + $2}' "$out/$plan.time" 2>/dev/null || echo "?")
  if [ ! -s "$report" ]; then
    echo "ci-validate-all: $plan: no report (pebench exit $rc); see $out/$plan.log"
    tail -5 "$out/$plan.log"
    status=1
    continue
  fi
  python3 - "$report" "$plan" "$plan_checks" "$wall" "$cpu" <<'PY' || status=1
import json, sys
path, plan, checks, wall, cpu = sys.argv[1:]
rep = json.load(open(path))
cases = rep["results"]
by_status, bad, errors, outside = {}, [], 0, {}
for c in cases:
    by_status[c["status"]] = by_status.get(c["status"], 0) + 1
    v = c.get("vk_validation") or {}
    errors += v.get("errors", 0)
    for k, n in (v.get("warnings") or {}).items():
        outside[k] = outside.get(k, 0) + n
    # ok, or a case the plan cannot run; anything else (failed, error,
    # interrupted, timeout) fails the step.
    if c["status"] not in ("ok", "unsupported", "skipped") or v.get("errors", 0):
        bad.append(f'{c["variant"]} {c["impl"]} {c["params"].get("dtype", "")}: {c["status"]}: {c.get("reason", "")[:300]}')
statuses = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
print(f"ci-validate-all: {plan} (--validate={checks}): {len(cases)} cases ({statuses}), "
      f"{errors} layer error(s), {len(outside)} warning id(s) outside the allow-list; {float(wall):.0f} s wall, {cpu} s CPU")
for k, n in sorted(outside.items()):
    print(f"    {n} x {k} (outside the allow-list)")
for b in bad:
    print("    " + b)
sys.exit(1 if bad or outside or not cases else 0)
PY
done
echo "ci-validate-all: $((SECONDS - start)) s in all; $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status

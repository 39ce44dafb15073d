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
# report; 2 on bad usage. .ci/run (step `validate`) runs all three plans,
# GPU-assisted validation on the two GPU plans but for the cases
# CI_VALIDATE_GPU_AV_SKIP names (below), core,sync,best-practices on the rest:
# docs/gpu-readiness.md, "The CI step's cost", has what each part costs.
# Environment: PEBENCH (default build/pebench); CI_VALIDATE_PLANS (default
# "lavapipe desktop-gpu android-baseline-2022"); CI_VALIDATE_CHECKS
# (default all); CI_VALIDATE_GPU_AV_PLANS: where set, GPU-assisted
# validation runs only on the plans it names and the others get
# core,sync,best-practices; CI_VALIDATE_GPU_AV_SKIP: a --benchmark_filter
# regex of the cases GPU-assisted validation leaves out (default: the heavy
# ones below; "" for none), run with the other checks in a second report,
# OUTDIR/PLAN.no-gpu-av.json; CI_VALIDATE_GPU_AV_SMALL: the run options with
# which FIRE's flash cases run again under GPU-assisted validation alone
# (OUTDIR/PLAN.gpu-av-small.json; default below; "" for no such run).
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

# Cases GPU-assisted validation leaves out by default, a regex over the case
# names (`pebench run --benchmark_list_tests`): llvmpipe takes minutes to
# compile each one's instrumented pipelines, most of it LLVM's coroutine
# pass (docs/gpu-readiness.md, "Where GPU-assisted validation's time goes").
# They still run every other check. CI_VALIDATE_GPU_AV_SKIP overrides it
# ("" leaves out nothing).
# FIRE's flash runs under GPU-assisted validation all the same, with its MLP
# width (FIRE_WIDTH, unrolled per score) 4 instead of 32
# (CI_VALIDATE_GPU_AV_SMALL): the same index arithmetic, an eighth of the
# unrolled code, about 20 s a case. abs.conv_grouped has no such knob: at
# 8 taps instead of 128 it still took 70 s a case (its scalar path, 18
# channels a group at d_model 288, is what costs).
heavy='^(attn\.fire/flash|abs\.conv_grouped)/'
skip=${CI_VALIDATE_GPU_AV_SKIP-$heavy}
small_cases='^attn\.fire/flash/'
read -r -a small <<<"${CI_VALIDATE_GPU_AV_SMALL---param mlp_width=4}"

status=0
start=$SECONDS
# one_run PLAN CHECKS REPORT [pebench options...]: one pebench run of the
# sweep under the plan; its wall and CPU seconds in REPORT.time.
one_run() {
  local plan=$1 run_checks=$2 report=$3 emulate=()
  shift 3
  [ "$plan" = lavapipe ] || emulate=(--emulate "$plan")
  rm -f "$report"
  local t0=$(date +%s%N)
  # /usr/bin/time's user+sys: the CPU the plan cost (2-core CI runners).
  /usr/bin/time -f "%U %S" -o "$report.cpu" \
    "$pebench" run --variant '*' --seq 37 --kv-seq 70 --heads 6 --kv-heads 2 --dim 48 --dtype f32,f16 \
    "${emulate[@]}" --validate="$run_checks" --no-peak --quiet --benchmark_min_time=0.001 "$@" \
    --out "$report" >"${report%.json}.log" 2>&1
  local rc=$?
  echo "$(( ($(date +%s%N) - t0) / 1000000000 )) $(awk 'END {printf "%.1f", $1 + $2}' "$report.cpu" 2>/dev/null || echo 0) $rc" \
    >"$report.time"
}
for plan in $plans; do
  plan_checks=$checks
  if [ -n "${CI_VALIDATE_GPU_AV_PLANS:-}" ] && [[ " $CI_VALIDATE_GPU_AV_PLANS " != *" $plan "* ]]; then
    plan_checks=core,sync,best-practices
  fi
  reports=("$out/$plan.json")
  rm -f "$out/$plan".*.json
  if [ -n "$skip" ] && [[ ,$plan_checks, == *,all,* || ,$plan_checks, == *,gpu-av,* ]]; then
    # Three runs: every case but the heavy ones with the checks asked for;
    # the heavy ones with the rest of them; FIRE's flash made small, under
    # GPU-assisted validation.
    rest=$(tr ',' '\n' <<<"$plan_checks" | grep -vx 'gpu-av' | sed 's/^all$/core,sync,best-practices/' | paste -sd, -)
    one_run "$plan" "$plan_checks" "$out/$plan.json" --benchmark_filter="-$skip"
    if [ -n "$rest" ]; then
      reports+=("$out/$plan.no-gpu-av.json")
      one_run "$plan" "$rest" "$out/$plan.no-gpu-av.json" --benchmark_filter="$skip"
    fi
    if ((${#small[@]})); then
      reports+=("$out/$plan.gpu-av-small.json")
      one_run "$plan" gpu-av "$out/$plan.gpu-av-small.json" --benchmark_filter="$small_cases" "${small[@]}"
    fi
  else
    one_run "$plan" "$plan_checks" "$out/$plan.json"
  fi
  python3 - "$plan" "$plan_checks" "$skip" "${reports[@]}" <<'PY' || status=1
import json, os, sys
plan, checks, skip, paths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
cases, wall, cpu, missing, count = [], 0, 0.0, [], {}
for path in paths:
    w, c, rc = (open(path + ".time").read().split() + ["0", "0", "?"])[:3]
    wall, cpu = wall + int(w), cpu + float(c)
    # A run whose filter matches nothing exits 2 without a report (no heavy case in a plan).
    if not (os.path.exists(path) and os.path.getsize(path)):
        log = path[:-5] + ".log"
        last = open(log).read().strip().splitlines()[-1:] if os.path.exists(log) else []
        if not (rc == "2" and last and "matches no case" in last[0]):
            missing.append(f"{path}: no report (pebench exit {rc}): {last[0] if last else ''}")
        continue
    results = json.load(open(path))["results"]
    count[path.rsplit("/", 1)[-1][len(plan) + 1:-5]] = len(results)  # PLAN.SUFFIX.json -> SUFFIX
    cases += results
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
note = ""
if count.get("no-gpu-av"):
    note = f" ({count['no-gpu-av']} without GPU-assisted validation: {skip}"
    note += f"; {count['gpu-av-small']} of those again under it, made small)" if count.get("gpu-av-small") else ")"
print(f"ci-validate-all: {plan} (--validate={checks}): {len(cases)} cases ({statuses}){note}, "
      f"{errors} layer error(s), {len(outside)} warning id(s) outside the allow-list; {wall} s wall, {cpu:.1f} s CPU")
for k, n in sorted(outside.items()):
    print(f"    {n} x {k} (outside the allow-list)")
for b in bad + missing:
    print("    " + b)
sys.exit(1 if bad or outside or missing or not cases else 0)
PY
done
echo "ci-validate-all: $((SECONDS - start)) s in all; $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status

#!/usr/bin/env bash
# ci-validate-all.sh [OUTDIR] — issue 41's validation step: every variant,
# impl and dtype at an awkward small shape (N 37, M 70, H 6, Hkv 2, D 48, or
# the nearest each variant allows: a case a plan cannot run is `unsupported`
# and counted, not failed) under lavapipe's own plan, --emulate desktop-gpu
# and --emulate android-baseline-2022, with --validate=all (core checks,
# synchronization validation, GPU-assisted validation, best practices).
#
# The heavy cases: llvmpipe takes one to several minutes to compile each
# one's pipelines instrumented for GPU-assisted validation (LLVM's
# coroutine pass; docs/gpu-readiness.md, "Where GPU-assisted validation's
# time goes"), about an hour for all of them. Per commit they all run every
# other check; GPU-assisted validation takes them in turn within a time
# budget:
#   1. first the heavy cases whose shaders (with their #includes) or suite
#      source changed since CI_VALIDATE_SINCE (default HEAD~1, against the
#      working tree);
#   2. then a rotation over the rest that starts at a place set by the
#      commit's number (git rev-list --count HEAD), so successive commits
#      cover all of them in turn;
#   and, on the GPU plans, FIRE's flash once more at MLP width 4 (the same
#   index arithmetic, an eighth of the unrolled code) on every commit.
#   lavapipe's FIRE flash never runs under it (below).
# The runs go CI_VALIDATE_JOBS at a time (default: the CPU count): llvmpipe
# compiles a pipeline on one thread, so a 2-core runner compiles two.
#
# Prints per plan the cases, their statuses, the layer's errors and the
# warning ids outside the allow-list, with each plan's CPU time; then which
# heavy cases had GPU-assisted validation and which waited for a later
# commit. Exits 1 when a case is neither ok nor unsupported/skipped (failed,
# erred, interrupted), the layer reported an error or a warning outside the
# allow-list (src/runtime/validation_allowlist.cc), or a run wrote no report
# (a heavy case stopped at its time limit is reported, not failed); 2 on bad
# usage.
# Environment: PEBENCH (default build/pebench); CI_VALIDATE_PLANS (default
# "lavapipe desktop-gpu android-baseline-2022"); CI_VALIDATE_CHECKS
# (default all); CI_VALIDATE_GPU_AV_PLANS: where set, GPU-assisted
# validation runs only on the plans it names and the others get
# core,sync,best-practices; CI_VALIDATE_GPU_AV_SKIP: a --benchmark_filter
# regex of the heavy cases, for every plan (default: per plan, below; ""
# for none); CI_VALIDATE_GPU_AV_BUDGET: seconds of wall in which heavy
# cases may start under GPU-assisted validation (default 180; 0 for none,
# "all" for every one); CI_VALIDATE_GPU_AV_CASE_LIMIT: seconds one heavy
# case may take (default 600); CI_VALIDATE_GPU_AV_ROTATE_STEP: how far the
# rotation moves per commit (default 4); CI_VALIDATE_CHANGED_FILES: the
# changed files (paths from the source root, space-separated) instead of
# git's; CI_VALIDATE_COMMIT_NUMBER: the rotation's commit number instead of
# git's; CI_VALIDATE_GPU_AV_SMALL: the run options of FIRE's flash made
# small (default below; "" for no such run).
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
jobs=${CI_VALIDATE_JOBS:-$(nproc 2>/dev/null || echo 1)}
budget=${CI_VALIDATE_GPU_AV_BUDGET:-180}
case_limit=${CI_VALIDATE_GPU_AV_CASE_LIMIT:-600}
rotate_step=${CI_VALIDATE_GPU_AV_ROTATE_STEP:-4}
for pair in "CI_VALIDATE_JOBS=$jobs" "CI_VALIDATE_GPU_AV_CASE_LIMIT=$case_limit" \
  "CI_VALIDATE_GPU_AV_ROTATE_STEP=$rotate_step"; do
  [[ ${pair#*=} =~ ^[1-9][0-9]*$ ]] || { echo "ci-validate-all.sh: ${pair%%=*} '${pair#*=}' is not a positive integer" >&2; exit 2; }
done
[[ $budget =~ ^([0-9]+|all)$ ]] ||
  { echo "ci-validate-all.sh: CI_VALIDATE_GPU_AV_BUDGET '$budget' is not a number of seconds or 'all'" >&2; exit 2; }

# The heavy cases of each plan, a regex over the case names
# (`pebench run --benchmark_list_tests`); measured costs under GPU-assisted
# validation in docs/measurements/issue-41-validation.md.
# - Every plan: FIRE's flash (its per-score MLP, width 32, unrolled) and
#   abs.conv_grouped (at d_model 288, 18 channels a group: the scalar path).
# - lavapipe's plan: abs.conv_grouped and every flash kernel (its
#   CPU-shaped flash), 90 to 115 s a case.
# lavapipe's FIRE flash is never run under GPU-assisted validation: at MLP
# width 4 it still ran past 5 minutes. It gets the other checks; the GPU
# plans' FIRE flash runs GPU-assisted validation at width 4 on every commit
# and at width 32 in the rotation.
heavy_gpu='^(attn\.fire/flash|abs\.conv_grouped)/'
heavy_lavapipe='^(attn\.[^/]+/flash|abs\.conv_grouped)/'
never_lavapipe='^attn\.fire/flash/'
heavy_for() {  # heavy_for PLAN
  if [ -n "${CI_VALIDATE_GPU_AV_SKIP+set}" ]; then echo "$CI_VALIDATE_GPU_AV_SKIP"
  elif [ "$1" = lavapipe ]; then echo "$heavy_lavapipe"
  else echo "$heavy_gpu"; fi
}
small_cases='^attn\.fire/flash/'
read -r -a small <<<"${CI_VALIDATE_GPU_AV_SMALL---param mlp_width=4}"

start=$SECONDS
# one_run PLAN CHECKS REPORT [pebench options...]: one pebench run of the
# sweep under the plan; its wall and CPU seconds and exit status in
# REPORT.time. A run longer than CI_VALIDATE_RUN_LIMIT (set for the heavy
# cases) is stopped: exit 124.
one_run() {
  local plan=$1 run_checks=$2 report=$3 emulate=() limit=()
  shift 3
  [ "$plan" = lavapipe ] || emulate=(--emulate "$plan")
  [ -n "${CI_VALIDATE_RUN_LIMIT:-}" ] && limit=(timeout -k 10 "$CI_VALIDATE_RUN_LIMIT")
  rm -f "$report"
  local t0
  t0=$(date +%s%N)
  # /usr/bin/time's user+sys: the CPU the run cost (2-core CI runners).
  "${limit[@]}" /usr/bin/time -f "%U %S" -o "$report.cpu" \
    "$pebench" run --variant '*' --seq 37 --kv-seq 70 --heads 6 --kv-heads 2 --dim 48 --dtype f32,f16 \
    "${emulate[@]}" --validate="$run_checks" --no-peak --quiet --benchmark_min_time=0.001 "$@" \
    --out "$report" >"${report%.json}.log" 2>&1
  local rc=$?
  echo "$(( ($(date +%s%N) - t0) / 1000000000 )) $(awk 'END {printf "%.1f", $1 + $2}' "$report.cpu" 2>/dev/null || echo 0) $rc" \
    >"$report.time"
}
# queue ARGS...: one_run's arguments, run later by run_queue, JOBS at a time.
queued=()
queue() { local IFS=$'\x1f'; queued+=("$*"); }
lane_wait() {  # wait until fewer than JOBS runs are going
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
}
run_queue() {
  local job args
  for job in "${queued[@]}"; do
    IFS=$'\x1f' read -r -a args <<<"$job"
    lane_wait
    one_run "${args[@]}" </dev/null &
  done
  wait
  queued=()
}

# Phase 1: every plan's fixed runs. With GPU-assisted validation: every case
# but the heavy ones with the checks asked for; the heavy ones with the rest
# of them (PLAN.no-gpu-av.json, whose pipelines the selection below reads);
# FIRE's flash made small under GPU-assisted validation alone.
declare -A plan_checks plan_heavy
av_plans=()
for plan in $plans; do
  c=$checks
  if [ -n "${CI_VALIDATE_GPU_AV_PLANS:-}" ] && [[ " $CI_VALIDATE_GPU_AV_PLANS " != *" $plan "* ]]; then
    c=core,sync,best-practices
  fi
  plan_checks[$plan]=$c
  heavy=$(heavy_for "$plan")
  plan_heavy[$plan]=$heavy
  rm -f "$out/$plan".*
  if [ -n "$heavy" ] && [[ ,$c, == *,all,* || ,$c, == *,gpu-av,* ]]; then
    av_plans+=("$plan")
    rest=$(tr ',' '\n' <<<"$c" | grep -vx 'gpu-av' | sed 's/^all$/core,sync,best-practices/' | paste -sd, -)
    queue "$plan" "$c" "$out/$plan.json" --benchmark_filter="-$heavy"
    # With gpu-av alone there are no other checks: the heavy cases still run
    # (the core checks come with any --validate) for their pipelines.
    queue "$plan" "${rest:-core}" "$out/$plan.no-gpu-av.json" --benchmark_filter="$heavy"
    ((${#small[@]})) && [ "$plan" != lavapipe ] &&
      queue "$plan" gpu-av "$out/$plan.gpu-av-small.json" --benchmark_filter="$small_cases" "${small[@]}"
  else
    queue "$plan" "$c" "$out/$plan.json"
  fi
done
run_queue
phase1=$((SECONDS - start))

# Phase 2: the heavy cases under GPU-assisted validation, in the order the
# python below writes to OUTDIR/gpu-av-heavy.order (changed first, then the
# rotation), each in its own run, started while the budget lasts.
order=$out/gpu-av-heavy.order
rm -f "$order" "$out"/*.gpu-av-heavy-*
if ((${#av_plans[@]})) && [ "$budget" != 0 ]; then
  since=${CI_VALIDATE_SINCE-$(git rev-parse -q --verify HEAD~1 2>/dev/null)}
  if [ -n "${CI_VALIDATE_CHANGED_FILES+set}" ]; then
    changed=$(tr ' ' '\n' <<<"$CI_VALIDATE_CHANGED_FILES") since="CI_VALIDATE_CHANGED_FILES"
  else
    changed=$( { [ -n "$since" ] && git diff --name-only "$since" 2>/dev/null; git ls-files --others --exclude-standard 2>/dev/null; } | sort -u)
  fi
  commit_number=${CI_VALIDATE_COMMIT_NUMBER:-$(git rev-list --count HEAD 2>/dev/null || echo 0)}
  printf '%s\n' "$changed" >"$out/changed-files"
  python3 - "$out" "$commit_number" "$rotate_step" "$never_lavapipe" "${av_plans[@]}" >"$order" <<'PY' || { echo "ci-validate-all: cannot order the heavy cases" >&2; exit 1; }
import json, os, re, sys
out, number, step, never_lavapipe, plans = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5:]
changed = set(l.strip() for l in open(os.path.join(out, "changed-files")) if l.strip())

def shader_files(name, seen):
    """The .comp of pipeline NAME and every file it #includes (paths relative to shaders/)."""
    todo = [os.path.join(d, name + ".comp") for d in sorted(os.listdir("shaders")) if os.path.isfile(os.path.join("shaders", d, name + ".comp"))]
    while todo:
        f = todo.pop()
        if f in seen or not os.path.isfile(os.path.join("shaders", f)):
            continue
        seen.add(f)
        todo += re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(os.path.join("shaders", f)).read(), re.M)
    return seen

cases = []  # (plan, name, files)
for plan in plans:
    path = os.path.join(out, plan + ".no-gpu-av.json")
    if not (os.path.exists(path) and os.path.getsize(path)):
        continue  # no heavy case in this plan (or the run failed: the summary says so)
    for c in json.load(open(path))["results"]:
        if c["status"] != "ok":
            continue  # unsupported here, or failed already
        if plan == "lavapipe" and re.search(never_lavapipe, c["benchmark"]):
            continue
        files = set()
        for p in c.get("pipelines") or []:
            shader_files(p["shader"], files)
        family, _, short = c["variant"].partition(".")
        files = {"shaders/" + f for f in files}
        files |= {f"src/suites/{family}/{family}_{short}{ext}" for ext in (".cc", ".h")}
        cases.append((plan, c["benchmark"], files))
cases.sort(key=lambda c: (c[1], c[0]))
first = [c for c in cases if c[2] & changed]
rest = [c for c in cases if not c[2] & changed]
if rest:
    k = (number * step) % len(rest)
    rest = rest[k:] + rest[:k]
for why, group in (("changed", first), ("rotation", rest)):
    for plan, name, _ in group:
        print(f"{plan}\t{name}\t{why}")
PY
  phase2=$SECONDS i=0
  while IFS=$'\t' read -r plan name why; do
    i=$((i + 1))
    report=$out/$plan.gpu-av-heavy-$i.json
    lane_wait
    if [ "$budget" != all ] && ((SECONDS - phase2 >= budget)); then
      echo "$name $why" >"$report.waiting"
      continue
    fi
    CI_VALIDATE_RUN_LIMIT=$case_limit one_run "$plan" gpu-av "$report" \
      --benchmark_filter="^$(sed 's/[.[\*^$()+?{}|]/\\&/g' <<<"$name")\$" </dev/null &
    echo "$name $why" >"$report.case"
  done <"$order"
  wait
fi

status=0
for plan in $plans; do
  python3 - "$plan" "${plan_checks[$plan]}" "${plan_heavy[$plan]}" "$out" "$case_limit" <<'PY' || status=1
import glob, json, os, sys
plan, checks, heavy, out, limit = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
def suffix(path):  # PLAN.SUFFIX.json -> SUFFIX ("" for PLAN.json)
    return os.path.basename(path)[len(plan):-5].lstrip(".")
# Every run this plan made has its REPORT.time, with or without a report.
paths = [os.path.join(out, plan + ".json")] + sorted(
    p[:-5] for p in glob.glob(os.path.join(out, plan + ".*.json.time")) if suffix(p[:-5]).split("-")[0] in ("no", "gpu"))
cases, cpu, missing, count, stopped = [], 0.0, [], {}, []
for path in paths:
    if not os.path.exists(path + ".time"):
        continue  # a run this plan did not make
    w, c, rc = (open(path + ".time").read().split() + ["0", "0", "?"])[:3]
    cpu += float(c)
    kind = suffix(path)
    if not (os.path.exists(path) and os.path.getsize(path)):
        log = path[:-5] + ".log"
        last = open(log).read().strip().splitlines()[-1:] if os.path.exists(log) else []
        if rc in ("124", "137") and kind.startswith("gpu-av-heavy"):
            stopped.append(open(path + ".case").read().split()[0])
        # A run whose filter matches nothing exits 2 without a report (no heavy case in a plan).
        elif not (rc == "2" and last and "matches no case" in last[0]):
            missing.append(f"{path}: no report (pebench exit {rc}): {last[0] if last else ''}")
        continue
    results = json.load(open(path))["results"]
    kind = "gpu-av-heavy" if kind.startswith("gpu-av-heavy") else kind
    count[kind] = count.get(kind, 0) + len(results)
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
    note = f" ({count['no-gpu-av']} heavy, {heavy}: {count.get('gpu-av-heavy', 0)} of them again under GPU-assisted validation"
    note += f", FIRE's flash made small {count['gpu-av-small']}" if count.get("gpu-av-small") else ""
    note += ")"
print(f"ci-validate-all: {plan} (--validate={checks}): {len(cases)} case runs ({statuses}){note}, "
      f"{errors} layer error(s), {len(outside)} warning id(s) outside the allow-list; {cpu:.1f} s CPU")
for k, n in sorted(outside.items()):
    print(f"    {n} x {k} (outside the allow-list)")
for b in bad + missing:
    print("    " + b)
for name in stopped:
    print(f"    not finished in {limit} s under GPU-assisted validation (not a failure): {name}")
sys.exit(1 if bad or outside or missing or not cases else 0)
PY
done
if [ -s "$order" ]; then
  done_n=$(cat "$out"/*.gpu-av-heavy-*.json.case 2>/dev/null | wc -l)
  echo "ci-validate-all: heavy cases under GPU-assisted validation: $done_n of $(wc -l <"$order") started within the ${budget} s budget" \
    "($(grep -c $'\tchanged$' "$order") changed since ${since:-nothing}; the rotation starts at commit number $commit_number x $rotate_step)"
  for f in "$out"/*.gpu-av-heavy-*.json.case; do [ -e "$f" ] && sed 's/^\([^ ]*\) \(.*\)/    ran: \1 (\2)/' "$f"; done
  w=$(cat "$out"/*.gpu-av-heavy-*.json.waiting 2>/dev/null | wc -l)
  ((w)) && echo "    $w more wait for later commits ($(cat "$out"/*.gpu-av-heavy-*.json.waiting | grep -c ' changed$') of them changed)"
fi
echo "ci-validate-all: $((SECONDS - start)) s in all (fixed runs $phase1 s, $jobs at a time); $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status

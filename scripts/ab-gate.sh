#!/usr/bin/env bash
# The A/B timing gate: the baseline's own build measured beside this one on
# the same machine in the same minutes, so that a host with no committed
# baseline of its own still gates time (docs/compare-and-gate.md, "A/B").
#
#   scripts/ab-gate.sh [BASELINE.json]
#   exit 0: passed (or nothing to gate: the code is the base commit's);
#   1: a kernel got slower in this run and again in a confirming one, one
#   line per reason on stdout; 2: bad input or a build that failed.
#
# The base commit is BASELINE's `baseline.commit` (default baseline:
# reports/baselines/lavapipe-quick.json; env AB_BASE_COMMIT overrides). It is
# built into build-base/ (its own worktree and build folder, the pebench
# target only; reused when build-base/pebench.commit names the commit; its
# SPIR-V copied from this build where its shaders are this tree's). Then
# the quick preset runs AB_ROUNDS times (default 5) with each binary, one
# repetition a process, alternated A B B A A B ... so that load drifts fall
# on both sides alike, without validation (ci-gate.sh checks correctness).
# Each side's rounds are pooled into one report and compared with the rule
# of ci-gate.sh less the load factor (both sides met the same load): a
# variant/impl whose cases' median CPU-time ratio is past 1 +
# PEBENCH_AB_VARIANT_THRESHOLD (default 0.25), or one case past
# 1 + PEBENCH_AB_THRESHOLD (default 0.5), significant by the U test with 5
# samples a side. Where it fails, AB_CONFIRM_ROUNDS (default 5) more rounds
# run (of the variant/impl pairs the reasons name) and only the reasons that
# both show count. Base cases are rekeyed to
# the new build's parameters (scripts/rekey-baseline.py: a parameter added
# since keeps its default); cases only one side has are listed, not gated.
#
#   env: PEBENCH (default build/pebench), AB_OUT (default build/ab-gate),
#        AB_INJECT: an --inject-slowdown spec for the new side (tests and
#        scripts/measure-gate.sh), PEBENCH_BASE: a base binary to use as it
#        is (no build), AB_PRESET (default quick), AB_ARGS: more run options
#        for both sides (e.g. "--variant abs.*"), AB_CONFIRM_ALL=1: the
#        confirming rounds run the whole preset, not only what was flagged;
#        AB_INTERLEAVE: process (default: a round is one process a side) or
#        variant (one process a variant and side, the sides alternated
#        variant by variant; see chunk_filters).
set -euo pipefail
cd "$(dirname "$0")/.."
pebench=${PEBENCH:-build/pebench}
baseline=${1:-reports/baselines/lavapipe-quick.json}
out=${AB_OUT:-build/ab-gate}
rounds=${AB_ROUNDS:-5}
confirm_rounds=${AB_CONFIRM_ROUNDS:-5}
die() { echo "ab-gate: $*" >&2; exit 2; }
[[ -x $pebench ]] || die "$pebench not found; build first (scripts/build.sh)"
[[ $rounds =~ ^[0-9]+$ && $rounds -ge 5 ]] || die "AB_ROUNDS=$rounds: the U test needs at least 5 samples a side"
[[ $confirm_rounds == 0 || ($confirm_rounds =~ ^[0-9]+$ && $confirm_rounds -ge 5) ]] ||
  die "AB_CONFIRM_ROUNDS=$confirm_rounds: 0 (no confirming run) or at least 5"
interleave=${AB_INTERLEAVE:-process}
[[ $interleave == process || $interleave == variant ]] || die "AB_INTERLEAVE=$interleave: process or variant"
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
mkdir -p "$out"

base_bin=${PEBENCH_BASE:-}
if [[ -z $base_bin ]]; then
  commit=${AB_BASE_COMMIT:-}
  if [[ -z $commit ]]; then
    [[ -r $baseline ]] || die "$baseline: cannot read"
    commit=$(python3 -c 'import json, sys; print((json.load(open(sys.argv[1])).get("baseline") or {}).get("commit") or "")' \
      "$baseline") || die "$baseline: not a report"
    [[ -n $commit ]] || die "$baseline has no baseline.commit: record the commit its code is (scripts/make-baseline.sh does)"
  fi
  if ! full=$(git rev-parse --verify --quiet "$commit^{commit}"); then
    # A shallow clone: fetch the history once; a clone that cannot reach
    # the commit at all gates no time, and says so loudly (not a failure of
    # the change under test).
    if [[ $(git rev-parse --is-shallow-repository 2>/dev/null) == true ]]; then
      git fetch --quiet --unshallow >/dev/null 2>&1 || true
    fi
    full=$(git rev-parse --verify --quiet "$commit^{commit}") || {
      echo "ab-gate: TIMING NOT GATED: base commit $commit is not in this clone and could not be fetched"
      exit 0
    }
  fi
  if git diff --quiet "$full" HEAD -- src shaders cmake CMakeLists.txt third_party 2>/dev/null; then
    echo "ab-gate: passed: the code is the base commit's (${full:0:12}); nothing to time against"
    exit 0
  fi
  base_bin=build-base/build/pebench
  if [[ ! -x $base_bin || $(cat build-base/pebench.commit 2>/dev/null) != "$full" ]]; then
    start=$SECONDS
    rm -rf build-base
    git worktree prune
    git worktree add --detach --force build-base/src "$full" >/dev/null 2>&1 || die "git worktree add $full failed"
    # Where the base's shaders, and what makes SPIR-V of them, are this
    # tree's, its build copies the new build's SPIR-V instead of running
    # glslc (PEBENCH_SPIRV_FROM, cmake/Shaders.cmake): the same words, so
    # lavapipe also finds the base's pipelines in Mesa's shader cache.
    spirv_from=()
    new_spirv=$(dirname "$pebench")/generated/spirv
    if [[ -d $new_spirv ]] &&
      git diff --quiet "$full" -- shaders cmake/Shaders.cmake cmake/spirv_strip_debug.py 2>/dev/null &&
      [[ -z $(git ls-files --others --exclude-standard -- shaders) ]]; then
      spirv_from=("-DPEBENCH_SPIRV_FROM=$(cd "$new_spirv" && pwd)")
    fi
    # (A base that cannot take the copy, e.g. one that has no
    # PEBENCH_SPIRV_FROM yet or wants a file the copy lacks, builds its own.)
    configure_base() {
      cmake -S build-base/src -B build-base/build -DCMAKE_BUILD_TYPE=Release "$@" >build-base/configure.log 2>&1
    }
    configure_base ${spirv_from[@]+"${spirv_from[@]}"} ||
      { ((${#spirv_from[@]})) && spirv_from=() && rm -rf build-base/build && configure_base; } ||
      die "configuring the base commit failed (build-base/configure.log)"
    cmake --build build-base/build --target pebench -j"$(nproc)" >build-base/build.log 2>&1 ||
      die "building the base commit failed (build-base/build.log)"
    echo "$full" >build-base/pebench.commit
    echo "ab-gate: built the base commit ${full:0:12} in $((SECONDS - start)) s${spirv_from[*]:+ (the same shaders as this tree: SPIR-V copied, not compiled)}" >&2
  fi
fi
[[ -x $base_bin ]] || die "$base_bin: no base binary"

read -r -a extra <<<"${AB_ARGS:-}"
sel_filter=  # the confirming rounds' --benchmark_filter, where it narrows the preset
inject=()
[[ -z ${AB_INJECT:-} ]] || inject=(--inject-slowdown "$AB_INJECT")
# one_round SIDE BINARY FILE [FILTER]: one repetition of the preset (or the
# cases FILTER keeps) by BINARY into FILE. A variant the base build lacks
# matches no case in its own process (AB_INTERLEAVE=variant): no file.
one_round() {
  local side=$1 bin=$2 file=$3 filter=${4:-} more=()
  [[ $side == new ]] && more=(${inject[@]+"${inject[@]}"})
  [[ -n $filter ]] && more+=("--benchmark_filter=$filter")
  "$bin" run --preset "${AB_PRESET:-quick}" --benchmark_repetitions=1 --no-validate --no-peak --quiet \
    ${extra[@]+"${extra[@]}"} ${more[@]+"${more[@]}"} --out "$file.tmp" >/dev/null 2>"$file.err" || true
  if [[ ! -s $file.tmp ]]; then
    rm -f "$file.tmp"
    [[ $interleave == variant ]] && grep -q "matches no case" "$file.err" && return 0
    die "the $side binary wrote no report ($file.err: $(tail -n 1 "$file.err"))"
  fi
  mv "$file.tmp" "$file"
}
# chunk_filters: the --benchmark_filter of each process a round runs a side,
# one a line: AB_INTERLEAVE=process (default) one process for everything
# (the confirming rounds' filter, or none); =variant one process a variant,
# its impls named, so that the two builds run each variant seconds apart
# and a machine that changes speed for tens of seconds at a time slows both.
chunk_filters() {
  if [[ $interleave == process ]]; then
    echo "$sel_filter"
    return
  fi
  "$pebench" run --preset "${AB_PRESET:-quick}" ${extra[@]+"${extra[@]}"} ${sel_filter:+"--benchmark_filter=$sel_filter"} \
    --benchmark_list_tests 2>/dev/null | python3 -c '
import re, sys
impls = {}
for name in sys.stdin:
    parts = name.strip().split("/")
    if len(parts) >= 2 and parts[1] not in impls.setdefault(parts[0], []):
        impls[parts[0]].append(parts[1])
for variant, names in impls.items():
    print("^" + re.escape(variant) + "/(" + "|".join(map(re.escape, names)) + ")/")'
}
# merge OUT PARTS...: one round's report of a side from its processes' reports.
merge() {
  python3 - "$@" <<'PY'
import json, os, sys
out, parts = sys.argv[1], [p for p in sys.argv[2:] if os.path.exists(p)]
if not parts:
    sys.exit(f"ab-gate: no report for {out}")
merged = json.load(open(parts[0]))
for p in parts[1:]:
    merged["results"] += json.load(open(p))["results"]
with open(out + ".tmp", "w") as f:
    json.dump(merged, f)
os.replace(out + ".tmp", out)
PY
}
# run_rounds TAG FIRST N: N rounds, A B B A from round FIRST on (and from
# one process to the next within a round).
run_rounds() {
  local tag=$1 first=$2 n=$3 i k f filters=()
  mapfile -t filters < <(chunk_filters)
  ((${#filters[@]})) || die "the selection lists no case"
  mkdir -p "$out/parts"
  for ((i = first; i < first + n; i++)); do
    for k in "${!filters[@]}"; do
      f=${filters[$k]}
      if (((i + k) % 2)); then
        one_round base "$base_bin" "$out/parts/$tag-base-$i-$k.json" "$f"
        one_round new "$pebench" "$out/parts/$tag-new-$i-$k.json" "$f"
      else
        one_round new "$pebench" "$out/parts/$tag-new-$i-$k.json" "$f"
        one_round base "$base_bin" "$out/parts/$tag-base-$i-$k.json" "$f"
      fi
    done
    merge "$out/$tag-base-$i.json" "$out/parts/$tag-base-$i"-*.json || exit 2
    merge "$out/$tag-new-$i.json" "$out/parts/$tag-new-$i"-*.json || exit 2
  done
}
# pool OUT FILES...: one report of every case's samples from all FILES.
pool() {
  python3 - "$@" <<'PY'
import json, os, statistics, sys
out, files = sys.argv[1], sys.argv[2:]
runs = [json.load(open(f)) for f in files]
def key(r):
    return (r["variant"], r["impl"], r["dtype"], json.dumps(r["params"], sort_keys=True))
def stats(series):
    s = series["samples"]
    series.update(median=statistics.median(s), mean=statistics.fmean(s), min=min(s), max=max(s),
                  stddev=statistics.pstdev(s))
merged = dict(runs[0])
results = []
for first in runs[0]["results"]:
    same = [r for run in runs for r in run["results"] if key(r) == key(first)]
    r = json.loads(json.dumps(first))
    if all(x["status"] == "ok" for x in same) and len(same) == len(runs):
        for name in ("time_ns", "cpu_ns"):
            if all(isinstance(x.get(name), dict) and x[name].get("samples") for x in same):
                r[name]["samples"] = [v for x in same for v in x[name]["samples"]]
                if all(x[name].get("started_ns") for x in same):
                    r[name]["started_ns"] = [v for x in same for v in x[name]["started_ns"]]
                stats(r[name])
    results.append(r)
merged["results"] = results
merged["ab_pool"] = {"files": files}
with open(out + ".tmp", "w") as f:
    json.dump(merged, f)
os.replace(out + ".tmp", out)
PY
}
# pool_sides TAG: TAG-base.json and TAG-new.json from the rounds; the base
# side rekeyed to the new side's parameters, cases of one side only dropped
# from both (named on stderr).
pool_sides() {
  local tag=$1
  pool "$out/$tag-base.json" "$out/$tag"-base-*[0-9].json
  pool "$out/$tag-new.json" "$out/$tag"-new-*[0-9].json
  python3 scripts/rekey-baseline.py "$out/$tag-base.json" "$out/$tag-new.json" >/dev/null 2>&1 || true
  python3 - "$out/$tag-base.json" "$out/$tag-new.json" <<'PY'
import json, os, sys
def key(r):
    return (r["variant"], r["impl"], r["dtype"], json.dumps(r["params"], sort_keys=True))
reps = [json.load(open(p)) for p in sys.argv[1:]]
keys = [set(key(r) for r in rep["results"]) for rep in reps]
common = keys[0] & keys[1]
for side, rep, own in zip(("base", "new"), reps, keys):
    if own - common:
        print(f"ab-gate: {len(own - common)} case(s) only the {side} build runs, not timed: " +
              ", ".join(sorted(f"{k[0]}/{k[1]}/{k[2]}" for k in own - common)[:8]), file=sys.stderr)
for path, rep in zip(sys.argv[1:], reps):
    rep["results"] = [r for r in rep["results"] if key(r) in common]
    with open(path + ".tmp", "w") as f:
        json.dump(rep, f)
    os.replace(path + ".tmp", path)
PY
}
blank() { sed -E 's/[-+]?[0-9][0-9.e+%x-]*/#/g'; }
rule=(--time cpu --min-samples 5 --threshold "${PEBENCH_AB_THRESHOLD:-0.5}"
      --variant-threshold "${PEBENCH_AB_VARIANT_THRESHOLD:-0.25}")
# gate TAG: compare the pooled sides; reasons (numbers blanked) in $out/TAG.keys.
gate() {
  local tag=$1 status=0
  "$pebench" compare "$out/$tag-base.json" "$out/$tag-new.json" "${rule[@]}" --gate --format json \
    >"$out/$tag.json" 2>"$out/$tag.err" || status=$?
  ((status <= 1)) || { cat "$out/$tag.err" >&2; die "compare failed"; }
  "$pebench" compare "$out/$tag-base.json" "$out/$tag-new.json" "${rule[@]}" --format md >"$out/$tag.md" 2>/dev/null ||
    true
  sed -n 's/^gate: //p' "$out/$tag.err" >"$out/$tag.reasons"
  blank <"$out/$tag.reasons" | sort -u >"$out/$tag.keys"
  return "$status"
}

start=$SECONDS
rm -rf "$out"/ab-*.json "$out"/confirm-*.json "$out/parts"
run_rounds ab 1 "$rounds"
pool_sides ab
echo "ab-gate: $rounds rounds a side in $((SECONDS - start)) s (base: $base_bin)" >&2
if gate ab; then
  echo "ab-gate: passed"
  exit 0
fi
if ((confirm_rounds == 0)); then
  cat "$out/ab.reasons"
  exit 1
fi
# A regression repeats; most noise does not. Where every reason is a
# `slower:` one, the confirming rounds run only the variant/impl pairs they
# name (all of each pair's cases, so a variant's median is the same rule),
# picked by --benchmark_filter over the case names (VARIANT/IMPL/...): a
# catch costs a fraction of a second preset (AB_CONFIRM_ALL=1 runs the whole
# preset again). A --benchmark_filter of AB_ARGS gives way to it: what the
# reasons name was run, so it lies inside that filter.
if [[ ${AB_CONFIRM_ALL:-0} != 1 && -s $out/ab.reasons ]] && ! grep -qv '^slower: ' "$out/ab.reasons"; then
  pairs=$(awk '{sub(/:$/, "", $3); gsub(/\./, "\\.", $2); print $2 "/" $3}' "$out/ab.reasons" | sort -u | paste -sd'|' -)
  kept_args=() skip=0
  for a in ${extra[@]+"${extra[@]}"}; do
    if ((skip)); then skip=0; continue; fi
    case $a in
      --benchmark_filter) skip=1 ;;
      --benchmark_filter=*) ;;
      *) kept_args+=("$a") ;;
    esac
  done
  extra=(${kept_args[@]+"${kept_args[@]}"})
  sel_filter="^($pairs)/"
fi
echo "ab-gate: $(wc -l <"$out/ab.reasons") reason(s); confirming with $confirm_rounds more rounds a side${sel_filter:+ (--benchmark_filter=$sel_filter)}" >&2
run_rounds confirm $((rounds + 1)) "$confirm_rounds"
pool_sides confirm
gate confirm || true
kept=$(comm -12 "$out/ab.keys" "$out/confirm.keys")
if [[ -z $kept ]]; then
  echo "ab-gate: passed (the first rounds' $(wc -l <"$out/ab.reasons") reason(s) did not repeat)"
  exit 0
fi
while IFS= read -r line; do
  grep -qxF -- "$(blank <<<"$line")" <<<"$kept" && echo "$line"
done <"$out/ab.reasons"
exit 1
